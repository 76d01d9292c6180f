#!/usr/bin/env bash
# The wide-crawl benchmark (issue 19): trawl, then wget2, crawling thousands of hosts
# under politeness, on a synthweb with realistic page times, through the system
# resolver and a real DNS server, all inside a private network and mount namespace.
#
#   tools/widebench/run.sh CASE        # CASE: 1k 5k 20k 100k dead shared
#   HOSTS=2000 SKIP_WGET2=1 tools/widebench/run.sh 5k     # env vars override a case
#
# Needs release builds of trawl and synthweb ($CARGO_TARGET_DIR/release or
# ./target/release, or BIN=dir), root (for unshare -n -m, ports 53/80/443 and the bind
# mount over /etc/resolv.conf), /usr/sbin/dnsmasq, wget2, /usr/bin/time, python3, ip.
# Nothing leaves the namespace: its only interface is lo; synthweb listens on 0.0.0.0
# there (--bind-any, which it refuses anywhere else). Every process started here is
# stopped on exit; each crawler is bounded by TIMEOUT (default 10x the floor).
# Cases: 1k 5k 20k 100k dead shared 1m.
# Results: $WORK/report.json and the printed summary (docs/benchmarks.md, "Wide crawls").
set -euo pipefail
CASE=${1:-5k}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/widebench
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}

if [ -z "${WIDEBENCH_INNER:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "widebench: run as root (unshare -n -m)" >&2; exit 2; }
  for tool in "$BIN/trawl" "$BIN/synthweb" /usr/sbin/dnsmasq /usr/bin/time python3 ip unshare curl; do
    command -v "$tool" >/dev/null || { echo "widebench: missing $tool" >&2; exit 2; }
  done
  WORK=${WORK:-$(mktemp -d "/tmp/widebench-$CASE.XXXXXX")}
  mkdir -p "$WORK"
  export WORK BIN
  # A new network namespace (only lo, down until raised) and a private mount namespace
  # (the resolv.conf bind mount stays inside it).
  exec unshare --net --mount --propagation private -- env WIDEBENCH_INNER=1 bash "$0" "$@"
fi

# ---- inside the namespaces ------------------------------------------------------------
ip link set lo up
# Open files: 65,536 where allowed, else the hard limit (a container may cap it; each
# process needs about one descriptor per connection, 2,500 + a few hundred here).
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
log() { echo "widebench $CASE: $*" >&2; }
log "open files limit $(ulimit -n)"

# Case defaults; every one can be overridden from the environment.
case "$CASE" in
  1k) : "${HOSTS:=1000}" ;;
  5k) : "${HOSTS:=5000}" ;;
  20k) : "${HOSTS:=20000}" ;;
  100k) : "${HOSTS:=100000}" ;;
  dead) : "${HOSTS:=5000}" "${DEAD_SHARE:=5}" ;;
  shared) : "${HOSTS:=5000}" "${HOSTS_PER_ADDRESS:=20}" "${PER_IP:=2}" ;;
  # A million hosts known under the default --memory: every root links 200 other roots,
  # so the first 20,000 roots name nearly every host; the crawl stops at 30,000 pages
  # and stats.json tells the peak RSS with that many hosts queued.
  # synthweb's manifest of that mesh took 24 GB and was OOM-killed on a 23 GiB machine
  # (2026-12-06): the case refuses to start below 32 GiB. A million hosts on a smaller
  # machine: tools/widebench/hubs.sh (docs/benchmarks.md, "The hub web").
  1m) : "${HOSTS:=1000000}" "${CROSS_LINKS:=200}" "${SKIP_WGET2:=1}" \
        "${TRAWL_EXTRA:=--max-pages 30000}"
      mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
      if [ "$mem_kib" -lt $((32 * 1024 * 1024)) ]; then
        echo "widebench 1m: synthweb's manifest of this web needs more than 24 GB; this machine has $((mem_kib / 1024 / 1024)) GiB (use tools/widebench/hubs.sh)" >&2
        exit 2
      fi ;;
  *) echo "widebench: unknown case $CASE (1k 5k 20k 100k dead shared 1m)" >&2; exit 2 ;;
esac
HOSTS_PER_ADDRESS=${HOSTS_PER_ADDRESS:-1}
DEAD_SHARE=${DEAD_SHARE:-0}
PER_IP=${PER_IP:-0}               # 0: trawl's per-IP cap off (one host per address)
PAGES=${PAGES:-6}                 # pages per host, the root included
PAGE_BYTES=${PAGE_BYTES:-8192}
LATENCY_MS=${LATENCY_MS:-500}
BANDWIDTH=${BANDWIDTH:-16384}     # bytes/s per connection: 8 KB in 0.5 s
DELAY_MS=${DELAY_MS:-500}
CROSS_LINKS=${CROSS_LINKS:-3}
HTTPS_SHARE=${HTTPS_SHARE:-25}
SEED_STRIDE=${SEED_STRIDE:-50}   # 2% of the roots are seeds: root link depth 4 at 5k hosts
# trawl, all shards together (the issue's --concurrency 2500 a shard, 2 shards); set
# but empty (CONCURRENCY=) leaves --concurrency out: trawl's default, sized from --memory.
CONCURRENCY=${CONCURRENCY-5000}
SHARDS=${SHARDS:-2}
WGET_THREADS=${WGET_THREADS:-500}
SKIP_WGET2=${SKIP_WGET2:-0}
SEED=${SEED:-42}

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
TICK=$(getconf CLK_TCK)

# ---- the web ----------------------------------------------------------------------------
SW_FLAGS=(--seed "$SEED" --hosts "$HOSTS" --mesh --pages-per-host "$PAGES" --page-bytes "$PAGE_BYTES"
  --cross-links "$CROSS_LINKS" --https-share "$HTTPS_SHARE" --dead-share "$DEAD_SHARE"
  --seed-stride "$SEED_STRIDE" --bind-any --hosts-per-address "$HOSTS_PER_ADDRESS"
  --port 80 --tls --tls-port 443 --ca-out "$WORK/ca.pem"
  --latency-ms "$LATENCY_MS" --bandwidth "$BANDWIDTH" --max-connections 60000
  --hosts-file "$WORK/hosts.txt" --seeds "$WORK/seeds.txt" --log "$WORK/requests.jsonl"
  --manifest "$WORK/manifest.txt" --manifest-max-pages-per-host 100 --max-secs 7200)
log "work dir $WORK; synthweb ${SW_FLAGS[*]}"
"$BIN/synthweb" "${SW_FLAGS[@]}" >"$WORK/synthweb.json" 2>"$WORK/synthweb.err" &
SYNTHWEB=$!; PIDS+=("$SYNTHWEB")
for _ in $(seq 1200); do [ -s "$WORK/synthweb.json" ] && break; kill -0 "$SYNTHWEB" || break; sleep 0.5; done
[ -s "$WORK/synthweb.json" ] || { log "synthweb did not start:"; cat "$WORK/synthweb.err" >&2; exit 1; }

# ---- DNS: dnsmasq answers the live names; the dead names' domain goes to a sink -------------
awk 'NF >= 3 {print $2, $1}' "$WORK/hosts.txt" >"$WORK/dns-hosts"
python3 "$HERE/dns_sink.py" --addr 127.0.0.2 --port 53 --log "$WORK/dead-queries.log" \
  --max-secs 7200 >"$WORK/sink.out" 2>&1 &
SINK=$!; PIDS+=("$SINK")
/usr/sbin/dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --user=root \
  --listen-address=127.0.0.1 --bind-interfaces --port=53 --addn-hosts="$WORK/dns-hosts" \
  --local=/synth.test/ --server=/dead.test/127.0.0.2#53 --cache-size=10000 \
  --dns-forward-max="${DNS_FORWARD_MAX:-100000}" --log-queries --log-async=100 --log-facility="$WORK/dnsmasq.log" \
  --pid-file= 2>"$WORK/dnsmasq.err" &
DNSMASQ=$!; PIDS+=("$DNSMASQ")
# The system resolver path, as users run it: glibc reads /etc/resolv.conf (nsswitch:
# files, dns), here a bind mount visible only in this mount namespace.
printf 'nameserver 127.0.0.1\n' >"$WORK/resolv.conf"
mount --bind "$WORK/resolv.conf" /etc/resolv.conf
for _ in $(seq 50); do getent hosts "$(awk 'NR==1{print $1}' "$WORK/hosts.txt")" >/dev/null && break; sleep 0.2; done
getent hosts "$(awk 'NR==1{print $1}' "$WORK/hosts.txt")" >/dev/null || { log "dnsmasq does not answer"; cat "$WORK/dnsmasq.err" >&2; exit 1; }

read -r FLOOR BUSY < <(python3 "$HERE/analyze.py" --floor-only --manifest "$WORK/manifest.txt" \
  --pages "$PAGES" --page-bytes "$PAGE_BYTES" --latency-ms "$LATENCY_MS" --bandwidth "$BANDWIDTH" \
  --delay-ms "$DELAY_MS" --per-ip "$PER_IP" --hosts-per-address "$HOSTS_PER_ADDRESS" \
  --concurrency "${CONCURRENCY:-0}")
# 10x the floor, or 3x what the concurrency cap allows when that is longer (100k).
TIMEOUT=${TIMEOUT:-$(python3 -c "import math,sys; f,b=map(float,sys.argv[1:]); print(math.ceil(max(10*f, 3*b)) + 30)" "$FLOOR" "$BUSY")}
log "$(head -1 "$WORK/manifest.txt" | cut -c1-200)"
log "$(grep -c '^M ' "$WORK/manifest.txt") reachable pages; $(wc -l <"$WORK/seeds.txt") seeds; floor ${FLOOR}s; ${BUSY}s at ${CONCURRENCY:-default} in flight; timeout ${TIMEOUT}s"

declare -A CPU0 CPU1
snap() { # ARRAYNAME
  local -n a=$1
  a[synthweb]=$(cpu_ticks "$SYNTHWEB"); a[dnsmasq]=$(cpu_ticks "$DNSMASQ"); a[dns_sink]=$(cpu_ticks "$SINK")
}
PROCS="{}"
record_proc() { # AGENT TIMEFILE RC
  PROCS=$(python3 - "$PROCS" "$1" "$2" "$3" "$TICK" \
    "${CPU0[synthweb]}" "${CPU1[synthweb]}" "${CPU0[dnsmasq]}" "${CPU1[dnsmasq]}" \
    "${CPU0[dns_sink]}" "${CPU1[dns_sink]}" <<'PY'
import json, re, sys
procs, agent, tf, rc, tick = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
s0, s1, d0, d1, k0, k1 = map(float, sys.argv[6:12])
procs = json.loads(procs)
txt = open(tf).read()
def field(name):
    m = re.search(re.escape(name) + r": (.+)", txt)
    return m.group(1).strip() if m else "0"
wall = 0.0
for p in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
    wall = wall * 60 + float(p)
procs[agent] = {
    "wall_s": round(wall, 1), "rc": rc, "timed_out": rc == 124,
    "peak_rss_kb": int(field("Maximum resident set size (kbytes)")),
    "cpu_s": {agent: float(field("User time (seconds)")) + float(field("System time (seconds)")),
              "synthweb": (s1 - s0) / tick, "dnsmasq": (d1 - d0) / tick, "dns_sink": (k1 - k0) / tick},
}
print(json.dumps(procs))
PY
)
}

# ---- trawl --------------------------------------------------------------------------------
TRAWL_FLAGS=(crawl --seeds "$WORK/seeds.txt" --out "$WORK/trawl-out" --allow-private-addresses
  --ca-file "$WORK/ca.pem" --from bench@example.org --per-host-connections 1 --delay-ms "$DELAY_MS"
  --per-ip-connections "$PER_IP" --shards "$SHARDS"
  --checkpoint-secs 0 --progress-secs 10 --metrics-addr 127.0.0.1:9898)
[ -n "$CONCURRENCY" ] && TRAWL_FLAGS+=(--concurrency $(( CONCURRENCY / SHARDS )))
# Extra flags for trawl (word-split on purpose), e.g. TRAWL_EXTRA="--max-pages 30000".
# shellcheck disable=SC2206
TRAWL_FLAGS+=(${TRAWL_EXTRA:-})
log "trawl ${TRAWL_FLAGS[*]}"
snap CPU0
set +e
# WRAP: a command put before trawl for a diagnostic run (word-split), e.g.
# WRAP="perf record -F 999 -o $WORK/perf.data --": its CPU is then not trawl's alone.
# shellcheck disable=SC2206
WRAP_CMD=(${WRAP:-})
/usr/bin/time -v -o "$WORK/trawl.time" timeout "$TIMEOUT" "${WRAP_CMD[@]}" "$BIN/trawl" "${TRAWL_FLAGS[@]}" \
  >"$WORK/trawl.out" 2>"$WORK/trawl.err" &
TRAWL=$!; PIDS+=("$TRAWL")
# Scrape trawl's gauges once a second (bounded by the crawl's own timeout).
for _ in $(seq "$TIMEOUT"); do
  kill -0 "$TRAWL" 2>/dev/null || break
  { echo "# t=$(date +%s.%N)"; curl -s -m 1 http://127.0.0.1:9898/metrics | grep -E '^trawl_(hosts_ready_idle|requests_in_flight)' ; } >>"$WORK/metrics.txt" 2>/dev/null
  sleep 1
done
wait "$TRAWL"; RC=$?
set -e
snap CPU1
record_proc trawl "$WORK/trawl.time" "$RC"
# Where trawl's DNS queries end in the two query logs (wget2's follow).
sleep 1.5
DNS_SPLIT=$(wc -l <"$WORK/dnsmasq.log" 2>/dev/null || echo 0)
SINK_SPLIT=$(wc -l <"$WORK/dead-queries.log" 2>/dev/null || echo 0)
log "trawl exit $RC; $(tail -1 "$WORK/trawl.err" | cut -c1-200)"

# ---- wget2 --------------------------------------------------------------------------------
if [ "$SKIP_WGET2" != 1 ] && command -v wget2 >/dev/null; then
  WGET_FLAGS=(--recursive --level=inf --span-hosts --robots=on --wait="$(python3 -c "print($DELAY_MS/1000)")"
    --max-threads="$WGET_THREADS" --ca-certificate="$WORK/ca.pem" --delete-after --no-verbose
    --tries=1 --timeout=30 --directory-prefix="$WORK/wget2-out" --input-file="$WORK/seeds.txt"
    -o "$WORK/wget2.log")
  log "wget2 ${WGET_FLAGS[*]}"
  snap CPU0
  set +e
  /usr/bin/time -v -o "$WORK/wget2.time" timeout "$TIMEOUT" wget2 "${WGET_FLAGS[@]}" &
  WGET=$!; PIDS+=("$WGET")
  wait "$WGET"; RC=$?
  set -e
  snap CPU1
  record_proc wget2 "$WORK/wget2.time" "$RC"
  log "wget2 exit $RC"
  rm -rf "$WORK/wget2-out"
fi

# ---- figures ------------------------------------------------------------------------------
kill -TERM "$SYNTHWEB"; wait "$SYNTHWEB" || true   # flushes the request log
kill -TERM "$DNSMASQ" 2>/dev/null || true; sleep 0.3
python3 - "$WORK/run.json" "$PROCS" <<PY
import json, sys
json.dump({"case": "$CASE", "hosts": $HOSTS, "hosts_per_address": $HOSTS_PER_ADDRESS,
  "per_ip_connections": $PER_IP, "pages_per_host": $PAGES, "page_bytes": $PAGE_BYTES,
  "latency_ms": $LATENCY_MS, "bandwidth": $BANDWIDTH, "delay_ms": $DELAY_MS,
  "cross_links": $CROSS_LINKS, "https_share": $HTTPS_SHARE, "dead_share": $DEAD_SHARE,
  "seed_stride": $SEED_STRIDE, "concurrency": ${CONCURRENCY:-0}, "shards": $SHARDS,
  "wget_threads": $WGET_THREADS, "timeout_s": $TIMEOUT,
  "dns_log": "$WORK/dnsmasq.log", "sink_log": "$WORK/dead-queries.log",
  "dns_split_line": $DNS_SPLIT, "sink_split_line": $SINK_SPLIT,
  "metrics_file": "$WORK/metrics.txt", "procs": json.loads(sys.argv[2])},
  open(sys.argv[1], "w"), indent=1)
PY
python3 "$HERE/analyze.py" --manifest "$WORK/manifest.txt" --log "$WORK/requests.jsonl" \
  --run "$WORK/run.json" --out "$WORK/report.json" | tee "$WORK/summary.txt"
rm -rf "$WORK/trawl-out/warc"   # WARC written during the crawl (its cost is measured), not kept
