#!/usr/bin/env bash
# kill -9 at a million known hosts, then resume (issue 26, "Resume"). The hub web of
# tools/widebench/hubs.sh (synthweb --hubs HUBS with its own name server, a private
# network and mount namespace): trawl crawls with --checkpoint-secs CHECKPOINT_SECS for
# RUN1 seconds (a million leaves are known within ~20 s at HUBS=1000), gets SIGKILL
# (not SIGINT: no final checkpoint), then `trawl crawl --out OUT --resume` on the same
# output directory, against the same synthweb and name server, for RUN2 seconds, then
# SIGINT (a final checkpoint). Before the resume the first run's crawl log, stats.json
# and checkpoint manifest are copied aside (the resume cuts the crawl log back to the
# checkpoint's position); after the second run the final checkpoint's queued URLs are
# listed (`trawl inspect --urls`). tools/widebench/hubs_resume_report.py then checks
# that nothing discovered in run 1 was lost, and that no host whose robots.txt rules
# were in the checkpoint had its robots.txt fetched again in run 2.
#
#   tools/widebench/hubs_resume.sh                  # HUBS=1000, RUN1=150, RUN2=120
#   HUBS=100 RUN1=90 RUN2=60 tools/widebench/hubs_resume.sh
#
# Variables: HUBS (1000), RUN1 (150 s), RUN2 (120 s), CHECKPOINT_SECS (60), MEMORY (512M),
# BIN (dir of trawl and synthweb), EXTRA (more trawl flags for run 1, word-split; run 2
# gets the recorded flags from start.json), WORK (output dir), STOP_WAIT (300 s),
# LATENCY_MS (0), SW_LOG (1: synthweb's request log, a server-side cross-check).
# Results: $WORK/report.json and $WORK/summary.txt. Needs root, /usr/bin/time, python3,
# ip, unshare.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/widebench
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}
if [ -z "${WIDEBENCH_INNER:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "hubs_resume: run as root (unshare -n -m)" >&2; exit 2; }
  for tool in "$BIN/trawl" "$BIN/synthweb" /usr/bin/time python3 ip unshare; do
    command -v "$tool" >/dev/null || { echo "hubs_resume: missing $tool" >&2; exit 2; }
  done
  WORK=${WORK:-$(mktemp -d /tmp/widebench-hubs-resume.XXXXXX)}
  mkdir -p "$WORK"; export WORK BIN
  exec unshare --net --mount --propagation private -- env WIDEBENCH_INNER=1 bash "$0" "$@"
fi

# ---- inside the namespaces ------------------------------------------------------------
ip link set lo up
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
HUBS=${HUBS:-1000}; RUN1=${RUN1:-150}; RUN2=${RUN2:-120}; CHECKPOINT_SECS=${CHECKPOINT_SECS:-60}
MEMORY=${MEMORY:-512M}; STOP_WAIT=${STOP_WAIT:-300}; LATENCY_MS=${LATENCY_MS:-0}; SW_LOG=${SW_LOG:-1}
log() { echo "hubs_resume: $*" >&2; }
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; sleep 0.5
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
now() { date +%s.%N; }

# ---- the web and its names (as hubs.sh) -------------------------------------------------
SW_MAX_SECS=$(( RUN1 + RUN2 + 2 * STOP_WAIT + 900 ))
SW_FLAGS=(--hubs "$HUBS" --bind-any --port 80 --dns 127.0.0.1:53 --seeds "$WORK/seeds.txt"
  --latency-ms "$LATENCY_MS" --max-connections 60000 --max-secs "$SW_MAX_SECS")
[ "$SW_LOG" = 1 ] && SW_FLAGS+=(--log "$WORK/requests.jsonl")
log "work dir $WORK; synthweb ${SW_FLAGS[*]}"
"$BIN/synthweb" "${SW_FLAGS[@]}" >"$WORK/synthweb.json" 2>"$WORK/synthweb.err" &
SYNTHWEB=$!; PIDS+=("$SYNTHWEB")
for _ in $(seq 200); do [ -s "$WORK/synthweb.json" ] && break; kill -0 "$SYNTHWEB" || break; sleep 0.1; done
[ -s "$WORK/synthweb.json" ] || { log "synthweb did not start"; cat "$WORK/synthweb.err" >&2; exit 1; }
echo "nameserver 127.0.0.1" >"$WORK/resolv.conf"
mount --bind "$WORK/resolv.conf" /etc/resolv.conf
N=$(( HUBS * 1001 - 1 )); W=${#N}; [ "$W" -lt 6 ] && W=6
LAST=$(printf 'h%0*d.synth.test' "$W" "$N")
getent hosts "$LAST" >/dev/null || { log "the name server does not answer $LAST"; exit 1; }
log "$(wc -l <"$WORK/seeds.txt") seeds (hubs), $(( HUBS * 1000 )) leaves"

OUT=$WORK/trawl-out
TRAWL_FLAGS=(crawl --seeds "$WORK/seeds.txt" --out "$OUT" --allow-private-addresses
  --from bench@example.org --per-host-connections 1 --delay-ms 500 --memory "$MEMORY"
  --progress-secs 10 --checkpoint-secs "$CHECKPOINT_SECS")
# shellcheck disable=SC2206
TRAWL_FLAGS+=(${EXTRA:-})

# run NAME SECS SIGNAL CMD...: CMD under /usr/bin/time for SECS seconds, then SIGNAL
# (KILL or INT) to the crawler itself (GNU time's child); after INT, SIGKILL if it has
# not exited STOP_WAIT seconds later. Writes NAME.run.json and samples RSS (NAME.rss).
run() {
  local name=$1 secs=$2 sig=$3; shift 3
  local t0 tsig texit rc killed=0 early=0 child=""
  t0=$(now)
  set +e
  /usr/bin/time -v -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local tp=$!; PIDS+=("$tp")
  for _ in $(seq 50); do child=$(pgrep -P "$tp" | head -1); [ -n "$child" ] && break; sleep 0.1; done
  local end=$(( ${t0%.*} + secs + 1 )) i=0
  while [ "$(date +%s)" -lt "$end" ]; do
    kill -0 "$tp" 2>/dev/null || { early=1; break; }
    if [ $(( i++ % 5 )) = 0 ] && [ -n "$child" ]; then
      echo "$(now) $(awk '/^VmRSS/ {print $2}' "/proc/$child/status" 2>/dev/null)" >>"$WORK/$name.rss"
    fi
    sleep 1
  done
  tsig=$(now)
  if [ "$early" = 0 ] && [ -n "$child" ]; then
    kill -"$sig" "$child" 2>/dev/null
    for _ in $(seq $(( STOP_WAIT * 10 ))); do kill -0 "$tp" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$tp" 2>/dev/null; then killed=1; kill -KILL "$child" 2>/dev/null; fi
  fi
  wait "$tp"; rc=$?
  texit=$(now)
  set -e
  cat >"$WORK/$name.run.json" <<JSON
{"start": $t0, "signal": "$sig", "signal_time": $tsig, "sigint": $tsig, "exit": $texit, "rc": $rc,
 "killed_after_stop_wait": $killed, "ended_early": $early, "duration_s": $secs}
JSON
  log "$name: SIG$sig at $(python3 -c "print(f'{$tsig - $t0:.1f}')") s; exit $rc $(python3 -c "print(f'{$texit - $tsig:.1f}')") s later (ended early $early)"
}

# ---- run 1: crawl, then kill -9 -----------------------------------------------------------
log "run 1: trawl ${TRAWL_FLAGS[*]} for ${RUN1}s, then SIGKILL"
run run1 "$RUN1" KILL "$BIN/trawl" "${TRAWL_FLAGS[@]}"
# What run 1 left, before the resume cuts the crawl log back to the checkpoint.
cp "$OUT/crawl.log.jsonl" "$WORK/run1.crawl.log.jsonl"
cp "$OUT/stats.json" "$WORK/run1.stats.json" 2>/dev/null || true
CP1=$(cat "$OUT/checkpoint/CURRENT" 2>/dev/null || true)
if [ -n "$CP1" ]; then
  cp "$OUT/checkpoint/$CP1/manifest.json" "$WORK/run1.manifest.json"
  stat -c '%Y.%y' "$OUT/checkpoint/$CP1/manifest.json" >"$WORK/run1.manifest.mtime"
  ls -la --time-style=full-iso "$OUT/checkpoint" >"$WORK/run1.checkpoint.ls"
  timeout 120 "$BIN/trawl" inspect --json --no-log --top 3 "$OUT" >"$WORK/run1.inspect.json" 2>"$WORK/run1.inspect.err" || log "inspect of run 1's checkpoint: exit $?"
fi
log "run 1 left checkpoint '${CP1:-none}'; crawl log $(wc -l <"$WORK/run1.crawl.log.jsonl") lines"
rm -rf "$OUT/warc"   # written during the crawl (its cost is measured), not kept
echo "$(now)" >"$WORK/run2.split"   # synthweb log lines after this are run 2's

# ---- run 2: resume, then SIGINT ------------------------------------------------------------
log "run 2: trawl crawl --out $OUT --resume for ${RUN2}s, then SIGINT"
run run2 "$RUN2" INT "$BIN/trawl" crawl --out "$OUT" --resume
rm -rf "$OUT/warc"
cp "$OUT/stats.json" "$WORK/run2.stats.json" 2>/dev/null || true
CP2=$(cat "$OUT/checkpoint/CURRENT" 2>/dev/null || true)
[ -n "$CP2" ] && cp "$OUT/checkpoint/$CP2/manifest.json" "$WORK/run2.manifest.json"
timeout 600 "$BIN/trawl" inspect --urls "$OUT" >"$WORK/final.queued.tsv" 2>"$WORK/final.inspect.err" || log "inspect --urls: exit $?"
log "final checkpoint '${CP2:-none}': $(wc -l <"$WORK/final.queued.tsv") URLs queued"

# ---- figures --------------------------------------------------------------------------------
kill -TERM "$SYNTHWEB"; wait "$SYNTHWEB" || true   # flushes the request log
python3 "$HERE/hubs_resume_report.py" --work "$WORK" --hubs "$HUBS" --out "$WORK/report.json" \
  | tee "$WORK/summary.txt"
