#!/usr/bin/env bash
# The farm benchmark (issue 13), on one synthweb and one redis-server, all on loopback:
#   A  standalone trawl (--shards 2)
#   B  a 1-node farm, same flags           -> CPU per page of B against A
#   C  a 3-node farm on this machine (--shards 1 each) -> wall time against B, Redis round
#      trips per 1,000 exchanged URLs
#   D  a 2-node farm with node 1 never started: node 0's links for node 1 stay in the
#      streams -> bytes of Redis memory (INFO used_memory) per URL in flight
# A and B alternate RUNS times; medians are reported. Everything is bounded: the server
# stops after SERVER_SECS, each crawl after TIMEOUT s.
#
#   tools/farmbench/run.sh                   # defaults below; env vars override
#
# Needs release builds of trawl and synthweb in $CARGO_TARGET_DIR/release (or BIN),
# redis-server, redis-cli, /usr/bin/time, python3.
set -euo pipefail
HOSTS=${HOSTS:-300}
PAGES=${PAGES:-30-60}
RUNS=${RUNS:-3}
TIMEOUT=${TIMEOUT:-300}
SERVER_SECS=${SERVER_SECS:-3600}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}
WORK=${WORK:-$(mktemp -d /tmp/farmbench.XXXXXX)}
mkdir -p "$WORK"
for tool in "$BIN/trawl" "$BIN/synthweb" redis-server redis-cli /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "farmbench: missing $tool" >&2; exit 2; }
done

"$BIN/synthweb" --hosts "$HOSTS" --bind-range 127.0.1.0/24 --port 0 --pages-per-host "$PAGES" \
  --hosts-file "$WORK/hosts.txt" --seeds "$WORK/seeds.txt" --max-secs "$SERVER_SECS" \
  >"$WORK/server.json" 2>"$WORK/server.err" &
SERVER=$!
RPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
REDIS=$!
trap 'kill -TERM $SERVER $REDIS 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$WORK/server.json" ] && break; sleep 0.1; done
for _ in $(seq 100); do [ "$(redis-cli -p "$RPORT" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
echo "farmbench: synthweb pid $SERVER, $HOSTS hosts, redis on $RPORT, work dir $WORK" >&2
RESULTS=$WORK/results.jsonl
: >"$RESULTS"

common=(crawl --seeds "$WORK/seeds.txt" --hosts-file "$WORK/hosts.txt" --allow-private-addresses
  --from bench@example.org --delay-ms 0 --progress-secs 0 --seen-capacity 10000000
  --max-crawl-delay-secs 0 --max-retry-after-secs 1 --robots-retry-secs 1 --timeout-ms 4000 --no-warc)

# crawl NAME RUN NODES SHARDS  -> one JSON line per node into $RESULTS
crawl() {
  local name=$1 run=$2 nodes=$3 shards=$4 farm=()
  local fname="bench-$name-$run"
  local pids=() i
  local t0; t0=$(date +%s.%N)
  for i in $(seq 0 $((nodes - 1))); do
    local out="$WORK/$fname-$i"
    rm -rf "$out"
    farm=()
    if [ "$name" != standalone ]; then
      farm=(--farm "redis://127.0.0.1:$RPORT" --farm-nodes "$nodes" --farm-node "$i" --farm-name "$fname")
    fi
    /usr/bin/time -v -o "$out.time" timeout "$TIMEOUT" "$BIN/trawl" "${common[@]}" \
      --shards "$shards" --out "$out" "${farm[@]}" 2>"$out.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "farmbench: a $name node failed" >&2; done
  local t1; t1=$(date +%s.%N)
  for i in $(seq 0 $((nodes - 1))); do
    python3 - "$name" "$run" "$i" "$WORK/$fname-$i" "$t0" "$t1" >>"$RESULTS" <<'PY'
import json, re, sys
name, run, node, out, t0, t1 = sys.argv[1:7]
txt = open(out + ".time").read()
def field(n):
    m = re.search(re.escape(n) + r": (.+)", txt)
    return float(m.group(1)) if m else 0.0
s = json.load(open(out + "/stats.json"))
f = s.get("farm") or {}
print(json.dumps({"config": name, "run": int(run), "node": int(node),
  "wall_s": float(t1) - float(t0), "cpu_s": field("User time (seconds)") + field("System time (seconds)"),
  "pages": s["pages"], "finish": s["finish"], "links_sent": f.get("links_sent", 0),
  "links_received": f.get("links_received", 0), "round_trips": f.get("redis_round_trips", 0),
  "batches_sent": f.get("batches_sent", 0), "redis_wait_s": f.get("redis_wait_secs", 0)}))
PY
    rm -rf "$WORK/$fname-$i"
  done
}

for run in $(seq 1 "$RUNS"); do
  crawl standalone "$run" 1 2
  crawl farm1 "$run" 1 2
  crawl farm3 "$run" 3 1
done

# D: Redis memory per URL in flight. Node 1 of 2 never runs; node 0 crawls its own
# partitions and its links for node 1 stay in the streams. Measured once node 0 has
# nothing queued and nothing waiting.
redis-cli -p "$RPORT" flushall >/dev/null
base=$(redis-cli -p "$RPORT" info memory | awk -F: '/^used_memory:/{print $2+0}')
out="$WORK/bench-mem-0"
timeout "$TIMEOUT" "$BIN/trawl" "${common[@]}" --shards 2 --out "$out" \
  --farm "redis://127.0.0.1:$RPORT" --farm-nodes 2 --farm-node 0 --farm-name mem 2>"$out.err" &
MEMNODE=$!
for _ in $(seq 600); do
  sleep 0.5
  st=$("$BIN/trawl" farm status --farm "redis://127.0.0.1:$RPORT" --farm-name mem 2>/dev/null || true)
  if python3 -c 'import json,sys; s=json.loads(sys.argv[1]); n=s["nodes"][0]["state"]; sys.exit(0 if n and n["outstanding"]==0 and n["spilled_urls"]==0 and n["pages"]>0 else 1)' "$st" 2>/dev/null; then
    break
  fi
done
sleep 1
used=$(redis-cli -p "$RPORT" info memory | awk -F: '/^used_memory:/{print $2+0}')
st=$("$BIN/trawl" farm status --farm "redis://127.0.0.1:$RPORT" --farm-name mem)
kill -TERM "$MEMNODE"; wait "$MEMNODE" || true
python3 - "$base" "$used" "$st" >>"$RESULTS" <<'PY'
import json, sys
base, used, st = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
n = st["nodes"][0]["state"]
print(json.dumps({"config": "memory", "used_memory_delta": used - base,
  "links_in_flight": n["links_sent"], "entries": st["stream_entries"],
  "bytes_per_url": (used - base) / max(1, n["links_sent"])}))
PY
rm -rf "$out"

python3 - "$RESULTS" <<'PY' | tee "$WORK/summary.md"
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def runs(cfg):
    by = {}
    for r in rows:
        if r["config"] == cfg:
            by.setdefault(r["run"], []).append(r)
    return list(by.values())
def agg(cfg):
    out = []
    for nodes in runs(cfg):
        pages = sum(n["pages"] for n in nodes)
        cpu = sum(n["cpu_s"] for n in nodes)
        out.append({"wall": max(n["wall_s"] for n in nodes), "cpu": cpu, "pages": pages,
            "cpu_ms_per_page": 1000 * cpu / max(1, pages),
            "sent": sum(n["links_sent"] for n in nodes),
            "rtt": sum(n["round_trips"] for n in nodes),
            "batches": sum(n["batches_sent"] for n in nodes),
            "finish": ",".join(n["finish"] for n in nodes)})
    return out
med = lambda xs: st.median(xs) if xs else float("nan")
a, b, c = agg("standalone"), agg("farm1"), agg("farm3")
print("| config | runs | pages | wall s | CPU s | CPU ms/page | links sent | Redis calls | finish |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name, x in (("standalone, 2 shards", a), ("farm of 1, 2 shards", b), ("farm of 3, 1 shard each", c)):
    print(f"| {name} | {len(x)} | {med([r['pages'] for r in x]):.0f} | {med([r['wall'] for r in x]):.2f} | "
          f"{med([r['cpu'] for r in x]):.2f} | {med([r['cpu_ms_per_page'] for r in x]):.3f} | "
          f"{med([r['sent'] for r in x]):.0f} | {med([r['rtt'] for r in x]):.0f} | {x[0]['finish'] if x else ''} |")
print()
print(f"CPU per page, farm of 1 / standalone: {med([r['cpu_ms_per_page'] for r in b]) / med([r['cpu_ms_per_page'] for r in a]):.3f}")
print(f"wall, farm of 3 / farm of 1: {med([r['wall'] for r in c]) / med([r['wall'] for r in b]):.3f}")
print(f"wall, farm of 3 / standalone: {med([r['wall'] for r in c]) / med([r['wall'] for r in a]):.3f}")
rt = [1000 * r["rtt"] / max(1, r["sent"]) for r in c]
print(f"Redis calls per 1,000 exchanged URLs (farm of 3, all calls incl. idle polls and heartbeats): {med(rt):.0f}")
print(f"links per stream entry (farm of 3): {med([r['sent'] / max(1, r['batches']) for r in c]):.1f}")
for r in rows:
    if r["config"] == "memory":
        print(f"Redis memory per URL in flight: {r['bytes_per_url']:.0f} B ({r['used_memory_delta']} B for {r['links_in_flight']} links in {r['entries']} entries)")
PY
