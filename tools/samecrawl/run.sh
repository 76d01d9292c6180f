#!/bin/sh
# Same crawl, two builds (issue 21: "behaviour does not change"): one synthweb server on
# loopback, crawled to its end by build A and then by build B with the same flags; the
# two crawl logs' (URL, outcome, status) sets are compared and every difference listed.
# Which link found a URL, its referrer and its timing are not compared.
#
#   BIN_A=/work/targets/before/release BIN_B=target/release tools/samecrawl/run.sh
#
# Env: BIN_A, BIN_B (dirs with a release `trawl`; synthweb is taken from BIN_B),
# PROFILES (default,sitemaps,traps), HOSTS (30), OUT (/tmp/samecrawl), CRAWL_SECS (240).
# Exit 0 when the sets are equal, 1 when they differ, 2 on a setup failure.
set -eu
. "$(dirname "$0")/../synthweb_ready.sh"
BIN_A=${BIN_A:?BIN_A: a release dir of build A}
BIN_B=${BIN_B:?BIN_B: a release dir of build B}
PROFILES=${PROFILES:-default,sitemaps,traps}
HOSTS=${HOSTS:-30}
OUT=${OUT:-/tmp/samecrawl}
CRAWL_SECS=${CRAWL_SECS:-240}
BUDGET=200

rm -rf "$OUT"
mkdir -p "$OUT/web"
BIN_A=$(cd "$BIN_A" && pwd)
BIN_B=$(cd "$BIN_B" && pwd)
cd "$OUT/web"
"$BIN_B/synthweb" --hosts "$HOSTS" --profile "$PROFILES" --pages-per-host 10-40 \
    --out-degree 5-20 --manifest-max-pages-per-host $BUDGET --port 0 \
    --hosts-file hosts.txt --seeds seeds.txt --log req.log >ready.json 2>server.err &
SW=$!
trap 'kill -TERM $SW 2>/dev/null || true' EXIT INT TERM
synthweb_wait_ready $SW samecrawl

crawl() { # $1 bin dir, $2 output dir
    timeout -s TERM "$CRAWL_SECS" "$1/trawl" crawl --seeds seeds.txt --hosts-file hosts.txt \
        --out "$2" --allow-private-addresses --from ops@example.org --delay-ms 0 \
        --max-crawl-delay-secs 0 --robots-retry-secs 1 --max-retry-after-secs 1 \
        --max-pages-per-host $BUDGET --max-hops 1000000 --max-path-depth 1000000 \
        --timeout-ms 5000 --seen-capacity 1000000 --shards 2 >"$2.stdout" 2>"$2.stderr"
}
crawl "$BIN_A" "$OUT/a"
crawl "$BIN_B" "$OUT/b"

python3 - "$OUT/a/crawl.log.jsonl" "$OUT/b/crawl.log.jsonl" <<'EOF'
import json, sys
def load(p):
    s = set()
    with open(p) as f:
        for line in f:
            r = json.loads(line)
            s.add((r["url"], r["outcome"], r.get("status")))
    return s
a, b = load(sys.argv[1]), load(sys.argv[2])
print(f"A: {len(a)} (url, outcome, status); B: {len(b)}; equal: {a == b}")
for name, d in (("only A", sorted(a - b)), ("only B", sorted(b - a))):
    for x in d[:50]:
        print(f"  {name}: {x}")
    if len(d) > 50:
        print(f"  {name}: ... {len(d) - 50} more")
sys.exit(0 if a == b else 1)
EOF
