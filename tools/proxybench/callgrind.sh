#!/usr/bin/env bash
# The direct path's instructions per request, two builds of examples/fetchload side by
# side (docs/fetcher.md's method): each binary under `valgrind --tool=callgrind`
# against one synthweb host (4 KiB pages, Content-Length, identity), 16 keep-alive
# connections, once for SHORT and once for LONG seconds; the marginal instructions per
# request are (Ir_long - Ir_short) / (requests_long - requests_short), which takes out
# the start-up (TLS roots, the loop's set-up). Rounds interleave the builds.
#
#   tools/proxybench/callgrind.sh BEFORE/fetchload AFTER/fetchload
#   # env: ROUNDS (2) SHORT (2) LONG (8) CONNS (16) PAGE_BYTES (4096) PORT (18331)
#   #      SYNTHWEB (release synthweb) WORK
#
# Build each: `cargo build --release --example fetchload` (one target dir per checkout).
# Prints one line a run and the marginal figure per build and round.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 FETCHLOAD [FETCHLOAD...]" >&2; exit 2; }
ROUNDS=${ROUNDS:-2}
SHORT=${SHORT:-2}
LONG=${LONG:-8}
CONNS=${CONNS:-16}
PAGE_BYTES=${PAGE_BYTES:-4096}
PORT=${PORT:-18331}
SYNTHWEB=${SYNTHWEB:-${CARGO_TARGET_DIR:-$ROOT/target}/release/synthweb}
WORK=${WORK:-$(mktemp -d /tmp/proxybench-callgrind.XXXXXX)}
mkdir -p "$WORK"
HOST=h000000.synth.test
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not installed" >&2; exit 2; }

"$SYNTHWEB" --hosts 1 --page-bytes "$PAGE_BYTES" --port "$PORT" --threads 1 \
  --idle-timeout-secs 600 --max-secs 3600 >"$WORK/synthweb.json" 2>"$WORK/synthweb.err" &
SW=$!
trap 'kill -TERM $SW 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$WORK/synthweb.json" ] && break; sleep 0.1; done
[ -s "$WORK/synthweb.json" ] || { cat "$WORK/synthweb.err" >&2; exit 1; }
EXPECT=$(curl -s -H "Host: $HOST:$PORT" "http://127.0.0.1:$PORT/p/1" | wc -c)
echo "page $EXPECT bytes; $CONNS connections; ${SHORT} s and ${LONG} s runs; $ROUNDS rounds; work $WORK"

run() { # BIN LABEL SECS -> "IR REQUESTS"
  local out="$WORK/$2-$3-$RANDOM.cg"
  local json
  json=$(valgrind --tool=callgrind --callgrind-out-file="$out" "$1" \
    --url "http://$HOST:$PORT/p/1" --resolve "$HOST:$PORT:127.0.0.1" \
    --connections "$CONNS" --secs "$3" --expect-bytes "$EXPECT" 2>>"$WORK/valgrind.err")
  local ir req
  ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$out")
  req=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["requests"])' "$json")
  echo "$ir $req"
}

for round in $(seq "$ROUNDS"); do
  i=0
  for bin in "$@"; do
    i=$((i + 1))
    read -r ir_s req_s < <(run "$bin" "b$i" "$SHORT")
    read -r ir_l req_l < <(run "$bin" "b$i" "$LONG")
    python3 - "$bin" "$round" "$ir_s" "$req_s" "$ir_l" "$req_l" <<'PY'
import sys
b, rnd, irs, rqs, irl, rql = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
print(f"round {rnd} {b}: short {irs:,} Ir / {rqs:,} requests, long {irl:,} Ir / {rql:,} requests: "
      f"{(irl - irs) / (rql - rqs):,.0f} instructions a request")
PY
  done
done
