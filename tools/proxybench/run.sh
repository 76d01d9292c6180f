#!/usr/bin/env bash
# The cost of a proxy (issue 29): one synthweb site crawled by a release trawl directly,
# through squid (absolute form for http://, CONNECT for https://), and through microsocks
# as socks5 (trawl resolves) and socks5h (the proxy resolves), RUNS times each,
# interleaved, all inside a private network and mount namespace (only lo). It reports per
# case, medians over the runs: pages, wall, trawl's CPU per page, the proxy's own CPU per
# page, and both against the direct crawl of the same run.
#
#   tools/proxybench/run.sh                     # 200 hosts x 50 pages of 4 KiB, RUNS=3
#   HOSTS=100 PAGES=20 RUNS=1 tools/proxybench/run.sh          # a quick look
#   CASES="direct squid" tools/proxybench/run.sh                # some cases only
#
# env: SITE (identity, or br) HOSTS (200) PAGES (50, a host's pages, the root included)
#      PAGE_BYTES (4096) HTTPS_SHARE (25, percent of hosts HTTPS-only) CROSS_LINKS (2) SEED (42)
#      RUNS (3) CASES ("direct squid socks5 socks5h") SHARDS (2) TIMEOUT (300 s a crawl)
#      TRAWL_EXTRA (more trawl flags, word-split; default --no-warc) BIN WORK
#      SW_EXTRA (more synthweb flags, word-split, e.g. "--bandwidth 16384": paced
#      responses reach trawl in pieces, as they do from a far server or a relaying proxy)
#      WRAP (a command put before trawl, word-split, {OUT} = the crawl's out dir, e.g.
#      WRAP='strace -f -c -o {OUT}.strace' for a diagnostic run; its CPU is not trawl's)
#
# SITE=identity (the default) is synthweb's mesh mode: every page links every page of
# its host and CROSS_LINKS other roots; fixed page size, Content-Length framing,
# identity-coded (mesh mode negotiates no content coding). Every host is a seed;
# HTTPS-only hosts (HTTPS_SHARE) are seeded and linked https://. SITE=br is synthweb's
# default profile at the same page size, brotli-coded: synthweb negotiates br with
# trawl's Accept-Encoding (gzip, deflate, br; trawl has no flag to offer gzip alone);
# links keep their page's scheme, so every k-th seed is made https:// (HTTPS_SHARE). synthweb listens on 0.0.0.0:80/443 inside the namespace, one address
# per host (--bind-any), and dnsmasq answers the names through a bind-mounted
# /etc/resolv.conf, which trawl, squid (dns_nameservers) and microsocks (glibc) all read.
#
# Egress tagging, as tests/proxy_support does: squid connects out from 127.0.0.9
# (tcp_outgoing_address), microsocks from 127.0.0.10 (-b), trawl directly from
# 127.0.0.1; synthweb's request log gives each request's source, so every crawl's
# requests are counted by the route that carried them (a proxied crawl with a request
# from 127.0.0.1 went around its proxy).
#
# CPU: trawl's is user+sys from /usr/bin/time -v; a server's (squid, microsocks,
# synthweb, dnsmasq) is utime+stime from /proc/PID/stat of it and its descendants, read
# right before and after each crawl (clock ticks, 10 ms). Pages are stats.json's
# `pages`. Needs root (unshare -n -m, ports 80/443/53), release builds of trawl and
# synthweb ($CARGO_TARGET_DIR/release or ./target/release, or BIN=dir), squid,
# microsocks, dnsmasq, /usr/bin/time, python3, ip. Every process started here is stopped
# on exit; each crawl is bounded by TIMEOUT.
# Results: $WORK/results.jsonl (one line a crawl) and $WORK/summary.txt (analyze.py).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/proxybench
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}

if [ -z "${PROXYBENCH_INNER:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "proxybench: run as root (unshare -n -m)" >&2; exit 2; }
  for tool in "$BIN/trawl" "$BIN/synthweb" /usr/sbin/squid /usr/bin/microsocks \
      /usr/sbin/dnsmasq /usr/bin/time python3 ip unshare getent; do
    command -v "$tool" >/dev/null || { echo "proxybench: missing $tool" >&2; exit 2; }
  done
  WORK=${WORK:-$(mktemp -d /tmp/proxybench.XXXXXX)}
  mkdir -p "$WORK"
  export WORK BIN
  exec unshare --net --mount --propagation private -- env PROXYBENCH_INNER=1 bash "$0" "$@"
fi

# ---- inside the namespaces ------------------------------------------------------------
HOSTS=${HOSTS:-200}
PAGES=${PAGES:-50}
PAGE_BYTES=${PAGE_BYTES:-4096}
SITE=${SITE:-identity}
HTTPS_SHARE=${HTTPS_SHARE:-25}
CROSS_LINKS=${CROSS_LINKS:-2}
SEED=${SEED:-42}
RUNS=${RUNS:-3}
CASES=${CASES:-direct squid socks5 socks5h}
SHARDS=${SHARDS:-2}
TIMEOUT=${TIMEOUT:-300}
TRAWL_EXTRA=${TRAWL_EXTRA---no-warc}
WRAP=${WRAP:-}
SW_EXTRA=${SW_EXTRA:-}
SQUID_PORT=3128
SOCKS_PORT=1080
SQUID_EGRESS=127.0.0.9
SOCKS_EGRESS=127.0.0.10

ip link set lo up
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
log() { echo "proxybench: $*" >&2; }
chmod 0755 "$WORK"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# utime+stime (ticks) of PID and every process below it (squid's helpers, if any).
cpu_tree() {
  python3 - "$1" <<'PY'
import os, sys
root = int(sys.argv[1])
stat = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            s = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        f = s[s.rindex(")") + 2:].split()
        stat[int(d)] = (int(f[1]), int(f[11]) + int(f[12]))   # ppid, utime + stime
kids = {}
for pid, (ppid, _) in stat.items():
    kids.setdefault(ppid, []).append(pid)
total, todo = 0, [root]
while todo:
    p = todo.pop()
    total += stat.get(p, (0, 0))[1]
    todo.extend(kids.get(p, []))
print(total)
PY
}
wait_port() { # PORT WHAT
  for _ in $(seq 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.2
  done
  log "$2 does not listen on 127.0.0.1:$1"; return 1
}

# ---- the web ----------------------------------------------------------------------------
SW_FLAGS=(--seed "$SEED" --hosts "$HOSTS" --page-bytes "$PAGE_BYTES" --seed-stride 1 --bind-any
  --port 80 --tls --tls-port 443 --ca-out "$WORK/ca.pem" --max-connections 60000
  --hosts-file "$WORK/hosts.txt" --seeds "$WORK/seeds.txt" --log "$WORK/requests.jsonl"
  --max-secs 7200)
SITE_FLAGS=()
case "$SITE" in
  identity) SW_FLAGS+=(--mesh --pages-per-host "$PAGES" --cross-links "$CROSS_LINKS"
              --https-share "$HTTPS_SHARE") ;;
  # The default profile has special hosts (robots.txt answered 5xx, retried after
  # minutes): the crawl stops at 80 % of the pages (--max-pages), long before.
  br) SW_FLAGS+=(--profile default --pages-per-host "$PAGES-$PAGES")
      SITE_FLAGS=(--max-pages $(( HOSTS * PAGES * 8 / 10 ))) ;;
  *) log "unknown SITE $SITE (identity br)"; exit 2 ;;
esac
# shellcheck disable=SC2206
SW_FLAGS+=($SW_EXTRA)
log "work dir $WORK; synthweb ${SW_FLAGS[*]}"
"$BIN/synthweb" "${SW_FLAGS[@]}" >"$WORK/synthweb.json" 2>"$WORK/synthweb.err" &
SYNTHWEB=$!; PIDS+=("$SYNTHWEB")
for _ in $(seq 600); do [ -s "$WORK/synthweb.json" ] && break; kill -0 "$SYNTHWEB" || break; sleep 0.2; done
[ -s "$WORK/synthweb.json" ] || { log "synthweb did not start:"; cat "$WORK/synthweb.err" >&2; exit 1; }
if [ "$SITE" = br ]; then
  # Outside mesh mode links keep their page's scheme: HTTPS_SHARE percent of the seeds
  # (every k-th) go https://, and their hosts are crawled over HTTPS.
  python3 - "$WORK/seeds.txt" "$HTTPS_SHARE" <<'PY'
import sys
path, share = sys.argv[1], int(sys.argv[2])
seeds = open(path).read().split()
k = round(100 / share) if share else 0
out = [s.replace("http://", "https://", 1) if k and i % k == k - 1 else s for i, s in enumerate(seeds)]
open(path, "w").write("".join(u + "\n" for u in out))
PY
fi

# ---- DNS, through the system resolver's files, private to this mount namespace ------------
awk 'NF >= 3 {print $2, $1}' "$WORK/hosts.txt" >"$WORK/dns-hosts"
/usr/sbin/dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --user=root \
  --listen-address=127.0.0.1 --bind-interfaces --port=53 --addn-hosts="$WORK/dns-hosts" \
  --local=/test/ --cache-size=10000 --pid-file= 2>"$WORK/dnsmasq.err" &
DNSMASQ=$!; PIDS+=("$DNSMASQ")
printf 'nameserver 127.0.0.1\n' >"$WORK/resolv.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$WORK/etc-hosts"
mount --bind "$WORK/resolv.conf" /etc/resolv.conf
mount --bind "$WORK/etc-hosts" /etc/hosts
mount -t tmpfs tmpfs /dev/shm   # squid's shared memory, private to the namespace
PROBE=$(awk 'NR==1{print $1}' "$WORK/hosts.txt")
for _ in $(seq 50); do getent hosts "$PROBE" >/dev/null && break; sleep 0.2; done
getent hosts "$PROBE" >/dev/null || { log "dnsmasq does not answer"; cat "$WORK/dnsmasq.err" >&2; exit 1; }

# ---- the proxies --------------------------------------------------------------------------
# squid: tests/proxy_support's config (no cache, CONNECT to any port, no pinger), its
# access log kept (writing it is part of a proxy's cost).
mkdir -p "$WORK/squid"
cat >"$WORK/squid/squid.conf" <<EOF
http_port 127.0.0.1:$SQUID_PORT
pid_filename $WORK/squid/squid.pid
cache_log $WORK/squid/cache.log
access_log stdio:$WORK/squid/access.log squid
cache_store_log none
cache deny all
cache_mem 0 MB
coredump_dir $WORK/squid
dns_nameservers 127.0.0.1
hosts_file none
shutdown_lifetime 0 seconds
pinger_enable off
visible_hostname proxybench-squid
tcp_outgoing_address $SQUID_EGRESS
max_filedescriptors 65536
forwarded_for delete
http_access allow localhost
http_access deny all
EOF
chown -R proxy:proxy "$WORK/squid"
/usr/sbin/squid -k parse -f "$WORK/squid/squid.conf" 2>"$WORK/squid/parse.err" \
  || { log "squid.conf does not parse:"; cat "$WORK/squid/parse.err" >&2; exit 1; }
SQUID=
if [[ " $CASES " == *" squid "* ]]; then
  /usr/sbin/squid -N -n proxybench -f "$WORK/squid/squid.conf" >"$WORK/squid/squid.out" 2>&1 &
  SQUID=$!; PIDS+=("$SQUID")
  wait_port "$SQUID_PORT" squid || { tail -20 "$WORK/squid/cache.log" >&2; exit 1; }
fi
SOCKS=
if [[ " $CASES " == *" socks5"* ]]; then
  /usr/bin/microsocks -i 127.0.0.1 -p "$SOCKS_PORT" -b "$SOCKS_EGRESS" >"$WORK/microsocks.log" 2>&1 &
  SOCKS=$!; PIDS+=("$SOCKS")
  wait_port "$SOCKS_PORT" microsocks
fi

route_of() { # CASE -> trawl's proxy flag value, empty for direct
  case "$1" in
    direct) echo "" ;;
    squid) echo "http://127.0.0.1:$SQUID_PORT" ;;
    socks5) echo "socks5://127.0.0.1:$SOCKS_PORT" ;;
    socks5h) echo "socks5h://127.0.0.1:$SOCKS_PORT" ;;
    *) log "unknown case $1 (direct squid socks5 socks5h)"; exit 2 ;;
  esac
}
proxy_pid_of() {
  case "$1" in squid) echo "$SQUID" ;; socks5|socks5h) echo "$SOCKS" ;; *) echo "" ;; esac
}
for c in $CASES; do route_of "$c" >/dev/null; done

# ---- the crawls, interleaved: run r starts at case r mod n -------------------------------------
read -r -a CASE_LIST <<<"$CASES"
N=${#CASE_LIST[@]}
TICK=$(getconf CLK_TCK)
: >"$WORK/results.jsonl"
log "$(wc -l <"$WORK/seeds.txt") seeds ($(grep -c '^https' "$WORK/seeds.txt" || true) https); cases $CASES; $RUNS runs"
for run in $(seq "$RUNS"); do
  for k in $(seq 0 $((N - 1))); do
    CASE=${CASE_LIST[$(( (run - 1 + k) % N ))]}
    ROUTE=$(route_of "$CASE")
    PPID_=$(proxy_pid_of "$CASE")
    OUT="$WORK/crawl-$CASE-$run"
    rm -rf "$OUT"
    FLAGS=(crawl --seeds "$WORK/seeds.txt" --out "$OUT" --allow-private-addresses
      --ca-file "$WORK/ca.pem" --from bench@example.org --delay-ms 0 --max-crawl-delay-secs 0
      --per-ip-connections 0
      --shards "$SHARDS" --checkpoint-secs 0 --progress-secs 0 --no-proxy-env)
    [ -n "$ROUTE" ] && FLAGS+=(--proxy "$ROUTE")
    FLAGS+=("${SITE_FLAGS[@]}")
    # shellcheck disable=SC2206
    FLAGS+=($TRAWL_EXTRA)
    MARK=$(wc -l <"$WORK/requests.jsonl")
    LOAD=$(cut -d' ' -f1 /proc/loadavg)
    P0=0; [ -n "$PPID_" ] && P0=$(cpu_tree "$PPID_")
    S0=$(cpu_tree "$SYNTHWEB"); D0=$(cpu_tree "$DNSMASQ")
    set +e
    # shellcheck disable=SC2206
    WRAPPED=(${WRAP//\{OUT\}/$OUT})
    /usr/bin/time -v -o "$OUT.time" timeout "$TIMEOUT" "${WRAPPED[@]}" "$BIN/trawl" "${FLAGS[@]}" \
      >"$OUT.stdout" 2>"$OUT.stderr"
    RC=$?
    set -e
    P1=0; [ -n "$PPID_" ] && P1=$(cpu_tree "$PPID_")
    S1=$(cpu_tree "$SYNTHWEB"); D1=$(cpu_tree "$DNSMASQ")
    sleep 1   # synthweb's request log is written when a response ends
    python3 - "$WORK/results.jsonl" "$CASE" "$run" "$RC" "$LOAD" "$OUT" "$TICK" \
      "$P0" "$P1" "$S0" "$S1" "$D0" "$D1" "$WORK/requests.jsonl" "$MARK" "${ROUTE:-direct}" "$WRAP" <<'PY'
import json, re, sys
(res, case, run, rc, load, out, tick, p0, p1, s0, s1, d0, d1, reqlog, mark, route, wrap) = sys.argv[1:18]
tick = float(tick)
txt = open(out + ".time").read()
def field(name):
    m = re.search(re.escape(name) + r": (.+)", txt)
    return m.group(1).strip() if m else "0"
wall = 0.0
for p in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
    wall = wall * 60 + float(p)
try:
    stats = json.load(open(out + "/stats.json"))
except (OSError, ValueError):
    stats = {}
peers, conns, n = {}, set(), 0
with open(reqlog) as f:
    for i, line in enumerate(f):
        if i < int(mark) or not line.strip():
            continue
        n += 1
        r = json.loads(line)
        ip = r["peer"].rsplit(":", 1)[0]
        peers[ip] = peers.get(ip, 0) + 1
        conns.add((r["local"], r["conn"]))
rec = {"case": case, "run": int(run), "route": route, "rc": int(rc), "load1": float(load),
       "pages": stats.get("pages", 0), "robots_fetches": stats.get("robots_fetches", 0),
       "wall_s": wall,
       "trawl_cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
       "proxy_cpu_s": (float(p1) - float(p0)) / tick,
       "synthweb_cpu_s": (float(s1) - float(s0)) / tick,
       "dnsmasq_cpu_s": (float(d1) - float(d0)) / tick,
       "peak_rss_kb": int(field("Maximum resident set size (kbytes)")),
       "server_requests": n, "server_connections": len(conns), "server_requests_by_source": peers}
if wrap:
    rec["wrap"] = wrap   # a diagnostic run (strace, perf): its CPU figures are not the crawl's
open(res, "a").write(json.dumps(rec) + "\n")
print(f"{case} run {run}: rc {rc}, {rec['pages']} pages, {wall:.2f} s, trawl {rec['trawl_cpu_s']:.2f} s CPU, "
      f"proxy {rec['proxy_cpu_s']:.2f} s, load {load}, sources {peers}", file=sys.stderr)
PY
    rm -rf "$OUT/warc"
  done
done

python3 "$HERE/analyze.py" --results "$WORK/results.jsonl" | tee "$WORK/summary.txt"
