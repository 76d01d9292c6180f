#!/usr/bin/env bash
# Old build against new build on tools/widebench/run.sh cases, back to back, one run at
# a time (issue 26, "No regression"): for each CASE, the runs in ORDER (default "old new
# new old": the second pair reversed), each in its own WORK dir under OUTDIR, then
# tools/widebench/ab_table.py prints the table.
#
#   OLD=/work/bins/old NEW=/work/bins/new tools/widebench/ab.sh 5k dead shared
#   ORDER="old new" CONCURRENCY=10000 tools/widebench/ab.sh 100k
#
# Variables: OLD, NEW (dirs of trawl and synthweb), ORDER, OUTDIR (/tmp/wb-ab), and every
# run.sh variable (SKIP_WGET2 defaults to 1 here; WGET2_RUN=N runs wget2 after trawl in
# the Nth run of each case, for reference).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${OLD:?dir of the old trawl and synthweb}" "${NEW:?dir of the new trawl and synthweb}"
ORDER=${ORDER:-old new new old}; OUTDIR=${OUTDIR:-/tmp/wb-ab}; export SKIP_WGET2=${SKIP_WGET2:-1}
mkdir -p "$OUTDIR"
for case in "$@"; do
  n=0
  for build in $ORDER; do
    n=$((n + 1))
    bin=$OLD; [ "$build" = new ] && bin=$NEW
    work=$OUTDIR/$case-$n-$build
    rm -rf "$work"; mkdir -p "$work"
    echo "ab: $(date +%T) $case run $n $build -> $work" >&2
    skip=$SKIP_WGET2; [ "$n" = "${WGET2_RUN:-0}" ] && skip=0   # wget2 after trawl in that run
    SKIP_WGET2=$skip BIN=$bin WORK=$work "$HERE/run.sh" "$case" >"$work/run.out" 2>"$work/run.err" || echo "ab: run.sh exit $?" >&2
    echo "ab: $(date +%T) $(grep -- '-- trawl' "$work/run.out" || tail -2 "$work/run.err")" >&2
  done
done
python3 "$HERE/ab_table.py" "$OUTDIR"/*/
