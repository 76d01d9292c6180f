#!/usr/bin/env bash
# A million hosts known under the default --memory (issue 19, "Memory per host"):
# synthweb's wide mode (every page links FANOUT random pages of random hosts, so a few
# thousand pages name nearly every host), names from dnsmasq, all inside a private
# network and mount namespace as tools/widebench/run.sh does. trawl stops after
# MAX_PAGES pages; its stats.json tells the peak RSS (less presence bits) with that
# many hosts queued, and the hosts the frontier and robots cache hold.
#
#   tools/widebench/million.sh          # HOSTS=1000000 FANOUT=1000 MAX_PAGES=4000
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}
if [ -z "${WIDEBENCH_INNER:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "million: run as root (unshare -n -m)" >&2; exit 2; }
  WORK=${WORK:-$(mktemp -d /tmp/widebench-million.XXXXXX)}
  mkdir -p "$WORK"; export WORK BIN
  exec unshare --net --mount --propagation private -- env WIDEBENCH_INNER=1 bash "$0" "$@"
fi
ip link set lo up
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
HOSTS=${HOSTS:-1000000}; FANOUT=${FANOUT:-1000}; MAX_PAGES=${MAX_PAGES:-4000}
STRIDE=${STRIDE:-1000}; MEMORY=${MEMORY:-512M}; TIMEOUT=${TIMEOUT:-600}
log() { echo "million: $*" >&2; }
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; sleep 0.5
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$BIN/synthweb" --hosts "$HOSTS" --fanout "$FANOUT" --page-bytes 2048 --seed-stride "$STRIDE" \
  --bind-any --port 80 --hosts-file "$WORK/hosts.txt" --seeds "$WORK/seeds.txt" \
  --max-connections 60000 --max-secs "$TIMEOUT" >"$WORK/synthweb.json" 2>"$WORK/synthweb.err" &
PIDS+=($!)
for _ in $(seq 600); do [ -s "$WORK/synthweb.json" ] && break; sleep 0.5; done
[ -s "$WORK/synthweb.json" ] || { log "synthweb did not start"; cat "$WORK/synthweb.err" >&2; exit 1; }
awk 'NF >= 3 {print $2, $1}' "$WORK/hosts.txt" >"$WORK/dns-hosts"
/usr/sbin/dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --user=root \
  --listen-address=127.0.0.1 --bind-interfaces --port=53 --addn-hosts="$WORK/dns-hosts" \
  --local=/synth.test/ --cache-size=10000 --pid-file= 2>"$WORK/dnsmasq.err" &
PIDS+=($!)
echo "nameserver 127.0.0.1" >"$WORK/resolv.conf"
mount --bind "$WORK/resolv.conf" /etc/resolv.conf
# dnsmasq reads a million names before it answers.
LAST=$(awk 'END {print $1}' "$WORK/hosts.txt")
for _ in $(seq 240); do getent hosts "$LAST" >/dev/null && break; sleep 0.5; done
getent hosts "$LAST" >/dev/null || { log "dnsmasq does not answer"; exit 1; }
log "$(wc -l <"$WORK/seeds.txt") seeds, $HOSTS hosts, fanout $FANOUT; trawl --memory $MEMORY --max-pages $MAX_PAGES"
/usr/bin/time -v -o "$WORK/trawl.time" timeout "$TIMEOUT" "$BIN/trawl" crawl \
  --seeds "$WORK/seeds.txt" --out "$WORK/trawl-out" --allow-private-addresses \
  --from bench@example.org --delay-ms 500 --memory "$MEMORY" --max-pages "$MAX_PAGES" \
  --checkpoint-secs 0 --progress-secs 5 --no-warc --shards 2 \
  >"$WORK/trawl.out" 2>"$WORK/trawl.err" || log "trawl exit $?"
python3 - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
s = json.load(open(f"{work}/trawl-out/stats.json"))
hwm = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(f"{work}/trawl.time").read())
mib = lambda b: round(b / 2**20, 1)
print(json.dumps({
    "pages": s["pages"], "discovered": s["discovered"], "queued": s["queued"],
    "frontier_hosts": s["hosts_active"], "frontier_ram_urls": s["frontier_ram_urls"],
    "frontier_disk_urls": s["frontier_disk_urls"], "frontier_ram_mib": mib(s["frontier_ram_bytes"]),
    "robots_cache_hosts": s["robots_cache_hosts"], "robots_fetches": s["robots_fetches"],
    "peak_rss_less_bits_mib": mib(s["peak_rss_less_presence_bits_bytes"]),
    "peak_rss_mib": mib(int(hwm.group(1)) * 1024) if hwm else None,
    "elapsed_secs": s["elapsed_secs"],
}, indent=1))
PY
