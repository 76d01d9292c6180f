#!/usr/bin/env bash
# The hub web (issue 26, "A million hosts"): a breadth crawl that knows a million hosts
# within minutes. synthweb's hub mode (HUBS hubs of 10 pages, each page naming 100 leaf
# hosts; a leaf is a robots.txt and 3 pages) with its own name server (answers computed
# from the name: no million-line hosts file to load), all inside a private network and
# mount namespace as tools/widebench/million.sh does. trawl crawls for DURATION seconds
# under politeness (one connection a host, 500 ms between fetches, WARC written), then
# gets SIGINT; the report (hubs_report.py) gives pages/s per minute, the last minute
# against the best, robots.txt fetches per host, pages per robots.txt, peak RSS, and the
# time from SIGINT to exit.
#
#   tools/widebench/hubs.sh                           # HUBS=1000 (a million leaves), 600 s
#   HUBS=100 DURATION=180 tools/widebench/hubs.sh     # 100,000 leaves, 3 minutes
#   WGET2=1 tools/widebench/hubs.sh                   # then wget2 for DURATION on the same web
#
# Variables: HUBS (1000), DURATION (600 s), MEMORY (512M), CONCURRENCY (empty: trawl's
# default, sized from --memory; else passed as --concurrency N, fetches a shard), BIN (dir of trawl and synthweb), EXTRA (more
# trawl flags, word-split), WORK (output dir), STOP_WAIT (300 s: SIGKILL after SIGINT
# past it), LATENCY_MS (0), SW_LOG (1: synthweb's request log, needed by WGET2),
# WGET2 (0), WGET_THREADS (500). Needs root, /usr/bin/time, python3, ip, unshare.
# Results: $WORK/report.json and the printed table (docs/benchmarks.md, "The hub web").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/widebench
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}
if [ -z "${WIDEBENCH_INNER:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "hubs: run as root (unshare -n -m)" >&2; exit 2; }
  for tool in "$BIN/trawl" "$BIN/synthweb" /usr/bin/time python3 ip unshare; do
    command -v "$tool" >/dev/null || { echo "hubs: missing $tool" >&2; exit 2; }
  done
  WORK=${WORK:-$(mktemp -d /tmp/widebench-hubs.XXXXXX)}
  mkdir -p "$WORK"; export WORK BIN
  exec unshare --net --mount --propagation private -- env WIDEBENCH_INNER=1 bash "$0" "$@"
fi

# ---- inside the namespaces ------------------------------------------------------------
ip link set lo up
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
HUBS=${HUBS:-1000}; DURATION=${DURATION:-600}; MEMORY=${MEMORY:-512M}
CONCURRENCY=${CONCURRENCY:-}; STOP_WAIT=${STOP_WAIT:-300}; LATENCY_MS=${LATENCY_MS:-0}
SW_LOG=${SW_LOG:-1}; WGET2=${WGET2:-0}; WGET_THREADS=${WGET_THREADS:-500}
log() { echo "hubs: $*" >&2; }
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; sleep 0.5
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
now() { date +%s.%N; }

# ---- the web and its names ------------------------------------------------------------------
SW_MAX_SECS=$(( (DURATION + STOP_WAIT) * 2 + 600 ))   # bound: both crawlers and their stops
SW_FLAGS=(--hubs "$HUBS" --bind-any --port 80 --dns 127.0.0.1:53 --seeds "$WORK/seeds.txt"
  --latency-ms "$LATENCY_MS" --max-connections 60000 --max-secs "$SW_MAX_SECS")
[ "$SW_LOG" = 1 ] && SW_FLAGS+=(--log "$WORK/requests.jsonl")
log "work dir $WORK; synthweb ${SW_FLAGS[*]}"
"$BIN/synthweb" "${SW_FLAGS[@]}" >"$WORK/synthweb.json" 2>"$WORK/synthweb.err" &
SYNTHWEB=$!; PIDS+=("$SYNTHWEB")
for _ in $(seq 200); do [ -s "$WORK/synthweb.json" ] && break; kill -0 "$SYNTHWEB" || break; sleep 0.1; done
[ -s "$WORK/synthweb.json" ] || { log "synthweb did not start"; cat "$WORK/synthweb.err" >&2; exit 1; }
# The system resolver path, as users run it: /etc/resolv.conf, a bind mount visible
# only in this mount namespace.
echo "nameserver 127.0.0.1" >"$WORK/resolv.conf"
mount --bind "$WORK/resolv.conf" /etc/resolv.conf
N=$(( HUBS * 1001 - 1 )); W=${#N}; [ "$W" -lt 6 ] && W=6   # synthweb's name width
LAST=$(printf 'h%0*d.synth.test' "$W" "$N")
getent hosts "$LAST" >/dev/null || { log "the name server does not answer $LAST"; exit 1; }
log "$(wc -l <"$WORK/seeds.txt") seeds (hubs), $(( HUBS * 1000 )) leaves; $LAST is $(getent hosts "$LAST" | awk '{print $1}')"

# ---- trawl ----------------------------------------------------------------------------------
TRAWL_FLAGS=(crawl --seeds "$WORK/seeds.txt" --out "$WORK/trawl-out" --allow-private-addresses
  --from bench@example.org --per-host-connections 1 --delay-ms 500 --memory "$MEMORY"
  --progress-secs 10)
# Empty CONCURRENCY leaves --concurrency out: trawl's default, sized from --memory.
[ -n "$CONCURRENCY" ] && TRAWL_FLAGS+=(--concurrency "$CONCURRENCY")
# shellcheck disable=SC2206
TRAWL_FLAGS+=(${EXTRA:-})
log "trawl ${TRAWL_FLAGS[*]} for ${DURATION}s, then SIGINT"

# Runs "$@" under /usr/bin/time for DURATION seconds, then SIGINT to the crawler (GNU
# time ignores SIGINT while it waits, so the signal goes to its child), SIGKILL if it has
# not exited STOP_WAIT seconds later. Writes NAME.run.json: start, SIGINT and exit times,
# exit code, whether it was killed. Samples the crawler's RSS every 5 s (NAME.rss).
run_crawler() { # NAME CMD...
  local name=$1; shift
  local t0 tint texit rc killed=0 early=0 child=""
  t0=$(now)
  set +e
  /usr/bin/time -v -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local tp=$!; PIDS+=("$tp")
  for _ in $(seq 50); do child=$(pgrep -P "$tp" | head -1); [ -n "$child" ] && break; sleep 0.1; done
  local end=$(( ${t0%.*} + DURATION + 1 )) i=0   # at least DURATION seconds
  while [ "$(date +%s)" -lt "$end" ]; do
    kill -0 "$tp" 2>/dev/null || { early=1; break; }
    if [ $(( i++ % 5 )) = 0 ] && [ -n "$child" ]; then
      echo "$(now) $(awk '/^VmRSS/ {print $2}' "/proc/$child/status" 2>/dev/null)" >>"$WORK/$name.rss"
    fi
    sleep 1
  done
  tint=$(now)
  if [ "$early" = 0 ]; then
    [ -n "$child" ] && kill -INT "$child" 2>/dev/null
    for _ in $(seq $(( STOP_WAIT * 10 ))); do kill -0 "$tp" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$tp" 2>/dev/null; then killed=1; kill -KILL "$child" 2>/dev/null; fi
  fi
  wait "$tp"; rc=$?
  texit=$(now)
  set -e
  cat >"$WORK/$name.run.json" <<JSON
{"start": $t0, "sigint": $tint, "exit": $texit, "rc": $rc, "killed": $killed, "ended_early": $early,
 "duration_s": $DURATION, "stop_wait_s": $STOP_WAIT}
JSON
  log "$name exit $rc $(python3 -c "print(f'{$texit - $tint:.1f}')") s after SIGINT (killed $killed, ended early $early)"
}
run_crawler trawl "$BIN/trawl" "${TRAWL_FLAGS[@]}"
rm -rf "$WORK/trawl-out/warc"   # written during the crawl (its cost is measured), not kept

# ---- wget2 ----------------------------------------------------------------------------------
if [ "$WGET2" = 1 ]; then
  [ "$SW_LOG" = 1 ] || { log "WGET2=1 needs SW_LOG=1 (its figures come from synthweb's log)"; exit 2; }
  echo "$(date +%s.%N)" >"$WORK/wget2.split"   # synthweb log lines after this are wget2's
  WGET_FLAGS=(--recursive --level=inf --span-hosts --robots=on --wait=0.5
    --max-threads="$WGET_THREADS" --delete-after --no-verbose --tries=1 --timeout=30
    --directory-prefix="$WORK/wget2-out" --input-file="$WORK/seeds.txt" -o "$WORK/wget2.log")
  log "wget2 ${WGET_FLAGS[*]} for ${DURATION}s, then SIGINT"
  run_crawler wget2 wget2 "${WGET_FLAGS[@]}"
  rm -rf "$WORK/wget2-out"
fi

# ---- figures --------------------------------------------------------------------------------
kill -TERM "$SYNTHWEB"; wait "$SYNTHWEB" || true   # flushes the request log
python3 "$HERE/hubs_report.py" --work "$WORK" --hubs "$HUBS" --memory "$MEMORY" \
  --concurrency "${CONCURRENCY:-default}" --out "$WORK/report.json" | tee "$WORK/summary.txt"
