#!/usr/bin/env bash
# Measure synthweb with wrk over keep-alive on fixed-size pages, and the server's CPU time
# (utime+stime from /proc/PID/stat) during the run. Usage:
#   tools/synthweb/bench/wrk.sh [PAGE_BYTES] [SECONDS] [CONNECTIONS] [WRK_THREADS] [single|rotate]
# Needs a release build (make synthweb) and wrk. Extra server flags: SYNTHWEB_ARGS="--cache-slots 0".
set -euo pipefail
BYTES=${1:-20480}; SECS=${2:-10}; CONNS=${3:-64}; THREADS=${4:-1}; MODE=${5:-single}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=${SYNTHWEB:-${CARGO_TARGET_DIR:-$ROOT/target}/release/synthweb}
OUT=$(mktemp)
"$BIN" --hosts 100 --page-bytes "$BYTES" --pages-per-host 200-200 --max-secs $((SECS + 30)) ${SYNTHWEB_ARGS:-} >"$OUT" &
SERVER=$!
for _ in $(seq 50); do [ -s "$OUT" ] && break; sleep 0.1; done
PORT=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['http_port'])" "$OUT")
HOST="h000000.synth.test:$PORT"
TICK=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$SERVER/stat"; }
# Warm the cache.
curl -s -o /dev/null -H "Host: $HOST" "http://127.0.0.1:$PORT/p/1"
C0=$(cpu)
if [ "$MODE" = rotate ]; then
  HOST=$HOST wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s "$ROOT/tools/synthweb/bench/pages.lua" "http://127.0.0.1:$PORT/" | tee "$OUT.wrk"
else
  wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -H "Host: $HOST" "http://127.0.0.1:$PORT/p/1" | tee "$OUT.wrk"
fi
C1=$(cpu)
REQS=$(awk '/requests in/ {print $1}' "$OUT.wrk")
python3 - "$C0" "$C1" "$TICK" "$SECS" "$REQS" <<'PY'
import sys
c0, c1, tick, secs, reqs = map(float, sys.argv[1:])
cpu = (c1 - c0) / tick
print(f"server CPU {cpu:.2f} s over {secs:.0f} s = {cpu/secs:.2f} cores; {cpu/reqs*1e6:.1f} us CPU per request; "
      f"=> {reqs/cpu:.0f} req/s per fully used core")
PY
kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null || true
rm -f "$OUT" "$OUT.wrk"
