#!/usr/bin/env bash
# The crawl benchmark (issue 7): trawl against wget2 and wrk on one synthweb in one run.
#
#   tools/crawlbench/run.sh            # defaults below; env vars override
#   HOSTS=2000 PAGES=20000 CONNS=64 RUNS=3 tools/crawlbench/run.sh
#
# Needs release builds of trawl and synthweb (`cargo build --release --bin trawl -p synthweb`
# into $CARGO_TARGET_DIR or ./target), wget2, wrk, /usr/bin/time, python3 and
# `unshare` (wget2 has no --resolve: it runs in a private mount namespace whose
# /etc/hosts maps synthweb's names to their 127.0.1.x addresses). Everything is on
# loopback and bounded: the server stops after $SERVER_SECS, each client after $TIMEOUT s.
#
# Per client and run it records wall time, user+sys CPU (getrusage of the child, via
# /usr/bin/time -v), peak RSS, pages (HTML 200 responses, robots.txt excluded) and bytes;
# then prints medians over the runs and the ratios the issue asks for. Raw results:
# $WORK/results.jsonl; summary: $WORK/summary.md.
set -euo pipefail
HOSTS=${HOSTS:-2000}
PAGES=${PAGES:-20000}
CONNS=${CONNS:-64}
RUNS=${RUNS:-3}
PAGE_BYTES=${PAGE_BYTES:-20480}
SHARDS=${SHARDS:-2}
# Presence bits sized to the crawl, as an operator sizes them (the default, 100M URLs,
# maps 600 MB of bits whose first touches cost more than a short benchmark's pages).
SEEN_CAPACITY=${SEEN_CAPACITY:-10000000}
WRK_SECS=${WRK_SECS:-10}
TIMEOUT=${TIMEOUT:-180}
SERVER_SECS=${SERVER_SECS:-3600}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}
WORK=${WORK:-$(mktemp -d /tmp/crawlbench.XXXXXX)}
mkdir -p "$WORK"
for tool in "$BIN/trawl" "$BIN/synthweb" wget2 wrk /usr/bin/time python3 unshare; do
  command -v "$tool" >/dev/null || { echo "crawlbench: missing $tool" >&2; exit 2; }
done

# --- the server -----------------------------------------------------------------------
"$BIN/synthweb" --hosts "$HOSTS" --bind-range 127.0.1.0/24 --port 0 \
  --page-bytes "$PAGE_BYTES" --hosts-file "$WORK/hosts.txt" --seeds "$WORK/seeds.txt" \
  --max-secs "$SERVER_SECS" >"$WORK/server.json" 2>"$WORK/server.err" &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$WORK/server.json" ] && break; sleep 0.1; done
PORT=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['http_port'])" "$WORK/server.json")
# /etc/hosts form for wget2: "address name".
awk 'NF >= 3 && $1 !~ /^#/ {print $2, $1}' "$WORK/hosts.txt" >"$WORK/etc-hosts"
echo "127.0.0.1 localhost" >>"$WORK/etc-hosts"
TICK=$(getconf CLK_TCK)
server_cpu() { awk '{print $14+$15}' "/proc/$SERVER/stat"; }
echo "crawlbench: synthweb pid $SERVER port $PORT, $HOSTS hosts on 127.0.1.0/24," \
  "$(wc -l <"$WORK/seeds.txt") seeds, pages $PAGE_BYTES B; work dir $WORK" >&2

RESULTS=$WORK/results.jsonl
: >"$RESULTS"

# record TOOL RUN WALL_START_NS TIMEFILE PAGES BYTES DISCOVERED SCPU0 SCPU1 [EXTRA_JSON]
record() {
  python3 - "$@" "$TICK" >>"$RESULTS" <<'PY'
import json, re, sys
tool, run, t0, tf, pages, nbytes, disc, s0, s1, extra, tick = sys.argv[1:12]
txt = open(tf).read()
def field(name):
    m = re.search(re.escape(name) + r": (.+)", txt)
    return m.group(1).strip() if m else "0"
def wall(s):
    parts = [float(p) for p in s.split(":")]
    v = 0.0
    for p in parts:
        v = v * 60 + p
    return v
r = {
    "tool": tool, "run": int(run),
    "wall_s": wall(field("Elapsed (wall clock) time (h:mm:ss or m:ss)")),
    "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
    "peak_rss_kb": int(field("Maximum resident set size (kbytes)")),
    "pages": int(pages), "bytes": int(nbytes), "discovered": int(disc),
    "server_cpu_s": (float(s1) - float(s0)) / float(tick),
}
r.update(json.loads(extra or "{}"))
print(json.dumps(r))
PY
}

# --- trawl ----------------------------------------------------------------------------
run_trawl() { # RUN WARC(0|1)
  local run=$1 warc=$2 out="$WORK/trawl-$1-$2" flags=()
  [ "$warc" = 0 ] && flags+=(--no-warc)
  rm -rf "$out"
  local s0; s0=$(server_cpu)
  /usr/bin/time -v -o "$WORK/time.txt" timeout "$TIMEOUT" "$BIN/trawl" crawl \
    --seeds "$WORK/seeds.txt" --hosts-file "$WORK/hosts.txt" --out "$out" \
    --allow-private-addresses --from bench@example.org \
    --delay-ms 0 --max-crawl-delay-secs 0 --max-pages "$PAGES" \
    --shards "$SHARDS" --concurrency $((CONNS / SHARDS)) --seen-capacity "$SEEN_CAPACITY" \
    --checkpoint-secs 0 --progress-secs 0 "${flags[@]}" 2>"$WORK/trawl.err" || {
      echo "crawlbench: trawl failed, see $WORK/trawl.err" >&2; tail -5 "$WORK/trawl.err" >&2; }
  local s1; s1=$(server_cpu)
  local extra
  extra=$(python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "stats.json")))
warc = 0
for d, _, fs in os.walk(os.path.join(out, "warc")):
    warc += sum(os.path.getsize(os.path.join(d, f)) for f in fs)
print(json.dumps({"stats_pages": s["pages"], "stats_bytes": s["bytes"],
  "stats_discovered": s["discovered"], "engine_secs": s["elapsed_secs"],
  "frontier_disk_bytes": s["frontier_disk_bytes"], "frontier_disk_urls": s["frontier_disk_urls"],
  "frontier_ram_bytes": s["frontier_ram_bytes"], "seen_file_bytes": s["seen_file_bytes"],
  "queued": s["queued"], "outcomes": s["outcomes"], "warc_bytes": warc}))
PY
)
  local p b d
  p=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['stats_pages'])" "$extra")
  b=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['stats_bytes'])" "$extra")
  d=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['stats_discovered'])" "$extra")
  local name=trawl; [ "$warc" = 1 ] && name=trawl-warc
  record "$name" "$run" 0 "$WORK/time.txt" "$p" "$b" "$d" "$s0" "$s1" "$extra"
  rm -rf "$out"
}

# --- wget2 ----------------------------------------------------------------------------
# Recursive, across hosts (-H), robots on (its default, stated anyway), the same number
# of connections (--max-threads), the page budget as a byte quota (pages x page size),
# downloads deleted after parsing (--delete-after) so it writes little, like --no-warc.
run_wget2() { # RUN
  local run=$1 dir="$WORK/wget2-$1"
  rm -rf "$dir"; mkdir -p "$dir"
  local s0; s0=$(server_cpu)
  unshare --user --map-root-user --mount sh -c '
    mount --bind "$1" /etc/hosts || exit 97
    shift
    exec "$@"' sh "$WORK/etc-hosts" \
    /usr/bin/time -v -o "$WORK/time.txt" timeout "$TIMEOUT" wget2 \
      --recursive --level=inf --span-hosts --robots=on --max-threads="$CONNS" \
      --quota=$((PAGES * PAGE_BYTES)) --delete-after --no-verbose --tries=1 \
      --timeout=30 --directory-prefix="$dir" --input-file="$WORK/seeds.txt" \
      --stats-site="csv:$WORK/wget2-site.csv" -o "$WORK/wget2.log" || true
  local s1; s1=$(server_cpu)
  local counts
  counts=$(python3 - "$WORK/wget2-site.csv" <<'PY'
import csv, sys
pages = nbytes = urls = 0
try:
    rows = list(csv.reader(open(sys.argv[1])))
except FileNotFoundError:
    rows = []
head = [h.strip() for h in rows[0]] if rows else []
def col(row, name):
    return row[head.index(name)] if name in head and head.index(name) < len(row) else ""
for row in rows[1:]:
    url = col(row, "URL")
    urls += 1
    if url.endswith("/robots.txt"):
        continue
    if col(row, "Status").strip() == "200":
        pages += 1
        try:
            nbytes += int(col(row, "Size") or 0)
        except ValueError:
            pass
print(pages, nbytes, urls)
PY
)
  read -r p b u <<<"$counts"
  record wget2 "$run" 0 "$WORK/time.txt" "$p" "$b" "$u" "$s0" "$s1" "{}"
  rm -rf "$dir"
}

# --- wrk ------------------------------------------------------------------------------
# The same pages (ordinary pages /p/1../p/19 that every host has, rotating over every
# host by the Host header) on keep-alive connections to the hosts' addresses: the
# server's ceiling on this machine. wrk asks for the same codings as the crawlers
# (trawl sends `gzip, deflate, br`, wget2 `gzip, deflate, bzip2, xz, lzma, br`; synthweb
# answers both with br), so the server
# compresses for it as it does for them: without it the ceiling would measure identity
# responses, a fraction of the server's cost per page.
cat >"$WORK/hosts.lua" <<LUA
local hosts, pages, n = $HOSTS, 19, 0
request = function()
  local h = n % hosts
  local k = math.floor(n / hosts) % pages + 1
  n = n + 1
  return wrk.format("GET", "/p/" .. k, { ["Host"] = string.format("h%06d.synth.test:$PORT", h),
    ["Accept-Encoding"] = "gzip, deflate, br" })
end
LUA
run_wrk() { # RUN
  local run=$1
  local s0; s0=$(server_cpu)
  /usr/bin/time -v -o "$WORK/time.txt" wrk -t1 -c"$CONNS" -d"${WRK_SECS}s" \
    -s "$WORK/hosts.lua" "http://127.0.1.1:$PORT/" >"$WORK/wrk.txt"
  local s1; s1=$(server_cpu)
  local reqs bytes
  reqs=$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")
  bytes=$(awk '/requests in/ {v=$5; sub(/,$/, "", v); print v}' "$WORK/wrk.txt")
  bytes=$(python3 -c "
import sys
v = sys.argv[1]
m = {'B':1,'KB':1<<10,'MB':1<<20,'GB':1<<30}
for u in ('GB','MB','KB','B'):
    if v.endswith(u):
        print(int(float(v[:-len(u)]) * m[u])); break
else:
    print(0)" "$bytes")
  record wrk "$run" 0 "$WORK/time.txt" "$reqs" "$bytes" 0 "$s0" "$s1" "{}"
}

# Warm synthweb's response cache a little so the first client is not penalised alone.
curl -s -o /dev/null -H "Host: h000000.synth.test:$PORT" "http://127.0.1.1:$PORT/p/1" || true

for run in $(seq "$RUNS"); do
  echo "crawlbench: run $run/$RUNS" >&2
  run_trawl "$run" 0
  run_wget2 "$run"
  run_wrk "$run"
  run_trawl "$run" 1
done

python3 - "$RESULTS" "$HOSTS" "$PAGES" "$CONNS" "$PAGE_BYTES" "$SHARDS" <<'PY' | tee "$WORK/summary.md"
import json, statistics, sys
path, hosts, pages, conns, pbytes, shards = sys.argv[1:]
rows = [json.loads(l) for l in open(path)]
by = {}
for r in rows:
    by.setdefault(r["tool"], []).append(r)
def med(tool, f):
    v = [f(r) for r in by.get(tool, [])]
    return statistics.median(v) if v else float("nan")
def pps(r): return r["pages"] / r["wall_s"] if r["wall_s"] else 0.0
def mbs(r): return r["bytes"] / r["wall_s"] / 1e6 if r["wall_s"] else 0.0
def cpu_us(r): return r["cpu_s"] / r["pages"] * 1e6 if r["pages"] else float("nan")
def rss_mb(r): return r["peak_rss_kb"] / 1024
def rss_per_url(r): return r["peak_rss_kb"] * 1024 / r["discovered"] if r["discovered"] else float("nan")
def srv_us(r): return r["server_cpu_s"] / r["pages"] * 1e6 if r["pages"] else float("nan")
print(f"{len(by.get('trawl', []))} runs; {hosts} hosts, page budget {pages}, {conns} connections, "
      f"{pbytes}-byte pages, trawl {shards} shards")
print()
print("| client | pages | wall s | pages/s | MB/s | CPU µs/page | peak RSS MB | RSS B/discovered URL | server CPU µs/page |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for tool in ("trawl", "trawl-warc", "wget2", "wrk"):
    if tool not in by:
        continue
    disc = "—" if tool == "wrk" else f"{med(tool, rss_per_url):.0f}"
    print(f"| {tool} | {med(tool, lambda r: r['pages']):.0f} | {med(tool, lambda r: r['wall_s']):.1f} | "
          f"{med(tool, pps):.0f} | {med(tool, mbs):.1f} | {med(tool, cpu_us):.0f} | {med(tool, rss_mb):.0f} | "
          f"{disc} | {med(tool, srv_us):.0f} |")
print()
t, w, k = med("trawl", pps), med("wget2", pps), med("wrk", pps)
tc, wc = med("trawl", cpu_us), med("wget2", cpu_us)
print(f"- trawl / wget2 pages/s: {t / w:.2f}x (goal >= 3x)" if w else "- wget2: no pages")
print(f"- trawl CPU per page / wget2's: {tc / wc:.2f} (goal <= 0.20)" if wc == wc and wc else "")
print(f"- trawl / wrk pages/s: {t / k:.2f} (goal >= 0.50)" if k else "")
print(f"- trawl with WARC / without, pages/s: {med('trawl-warc', pps) / t:.2f}" if t and 'trawl-warc' in by else "")
if "trawl" in by:
    r = by["trawl"]
    print(f"- trawl discovered URLs (median): {med('trawl', lambda r: r['discovered']):.0f}; "
          f"frontier disk bytes per spilled URL: "
          f"{med('trawl', lambda r: r['frontier_disk_bytes'] / r['frontier_disk_urls'] if r['frontier_disk_urls'] else 0):.1f}; "
          f"presence bits {r[0]['seen_file_bytes'] / 1e6:.0f} MB (resident once touched, counted in RSS)")
    print(f"- trawl outcomes (run 1): {json.dumps(r[0]['outcomes'])}")
if "trawl-warc" in by:
    print(f"- WARC bytes written (median): {med('trawl-warc', lambda r: r['warc_bytes']) / 1e6:.1f} MB")
PY
