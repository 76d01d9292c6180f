#!/bin/sh
# `make demo`: start synthweb on loopback (a small world with the default, traps and
# hostile profiles), crawl it with trawl showing progress, judge the crawl with the
# referee (`synthweb check`) and print a summary. Everything stays on 127.0.0.1.
#
# PROFILE=debug uses the debug binaries (default: release, built by `make demo`).
# DEMO_DIR (default: $TARGET/demo) holds the server's files and the crawl output.
set -eu
. "$(dirname "$0")/synthweb_ready.sh"

TARGET=${CARGO_TARGET_DIR:-target}
PROFILE=${PROFILE:-release}
BIN=$TARGET/$PROFILE
DEMO_DIR=${DEMO_DIR:-$TARGET/demo}
DELAY_MS=${DELAY_MS:-10}
BUDGET=200

for b in trawl synthweb; do
    [ -x "$BIN/$b" ] || { echo "demo: $BIN/$b missing (run: cargo build --workspace --$PROFILE)" >&2; exit 2; }
done
rm -rf "$DEMO_DIR"
mkdir -p "$DEMO_DIR/web"
DEMO_DIR=$(cd "$DEMO_DIR" && pwd)
BIN=$(cd "$BIN" && pwd)
cd "$DEMO_DIR/web"

echo "== synthweb: 40 hosts, profiles default+traps+hostile, on 127.0.0.1"
"$BIN/synthweb" --hosts 40 --profile default,traps,hostile --pages-per-host 10-40 --out-degree 5-20 \
    --manifest-max-pages-per-host $BUDGET --port 0 --hosts-file hosts.txt \
    --seeds seeds.txt --log req.log --manifest manifest.txt >ready.json 2>server.err &
SW=$!
trap 'kill -TERM $SW 2>/dev/null || true' EXIT INT TERM
synthweb_wait_ready $SW demo
echo "   $(cat ready.json)"
echo "   manifest: $(grep -c '^M ' manifest.txt) URLs to fetch, $(grep -c '^F ' manifest.txt) forbidden"

echo "== trawl crawl (politeness ${DELAY_MS} ms, 1 connection per host)"
# Flags matching the manifest's policy (docs/architecture.md, "Testing against
# synthweb"); Retry-After capped at 1 s and 5 s deadlines keep the hostile hosts short.
# Bounded: SIGTERM after CRAWL_SECS (graceful stop: checkpoint, stats, exit 0).
timeout -s TERM "${CRAWL_SECS:-90}" "$BIN/trawl" crawl --seeds seeds.txt --hosts-file hosts.txt --out "$DEMO_DIR/crawl" \
    --allow-private-addresses --from demo@example.org --delay-ms "$DELAY_MS" \
    --per-host-connections 1 --max-crawl-delay-secs 0 --robots-retry-secs 1 \
    --max-retry-after-secs 1 --max-pages-per-host $BUDGET --max-hops 1000000 \
    --max-path-depth 1000000 --timeout-ms 5000 --seen-capacity 1000000 \
    --checkpoint-secs 5 --progress-secs 2 || {
    status=$?
    # 124: timeout sent SIGTERM; trawl stopped gracefully (the referee will tell).
    [ $status -eq 124 ] || exit $status
}

kill -TERM $SW
wait $SW 2>/dev/null || true
trap - EXIT INT TERM

echo "== referee: synthweb check --delay-ms $DELAY_MS --per-host-connections 1"
set +e
"$BIN/synthweb" check --log req.log --manifest manifest.txt --delay-ms "$DELAY_MS" \
    --per-host-connections 1 >referee.txt 2>&1
VERDICT=$?
set -e
cut -c1-200 referee.txt | head -20

echo "== summary ($DEMO_DIR/crawl)"
python3 - "$DEMO_DIR/crawl/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"   finish: {s['finish']}; {s['pages']} pages in {s['elapsed_secs']:.1f} s "
      f"({s['pages_per_sec']:.0f} pages/s, {s['mb_per_sec']:.1f} MB/s)")
print(f"   discovered {s['discovered']}, duplicates {s['duplicates']}, queued {s['queued']}, "
      f"checkpoints {s['checkpoints']}")
print("   outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(s['outcomes'].items()) if v))
print(f"   presence bits: {s['seen_file_bytes'] / 1048576:.1f} MiB, fill {s['seen_fill_ratio']:.5f}, "
      f"expected false-positive rate {s['seen_expected_fp']:.1e}")
PY
echo "   WARC: $(ls "$DEMO_DIR/crawl/warc" | wc -l) file(s), $(du -sh "$DEMO_DIR/crawl/warc" | cut -f1); log: $(wc -l <"$DEMO_DIR/crawl/crawl.log.jsonl") lines"
if [ $VERDICT -eq 0 ]; then echo "== referee verdict: PASS"; else echo "== referee verdict: FAIL ($VERDICT)"; fi
exit $VERDICT
