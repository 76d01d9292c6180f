#!/usr/bin/env bash
# The CPU-per-page benchmark (issue 20): trawl --no-warc, trawl with WARC and wget2 crawl
# a generated static web served by nginx on loopback, inside a private network namespace,
# once with identity-coded pages (nginx `gzip off`) and once gzip-coded (`gzip on`, level
# 1, nginx's default), and a second site of 20 KB identity-coded pages crawled with four
# connections a host (issue 28); interleaved, RUNS times each; pages from nginx's access log, CPU
# (user+sys of the crawler's process tree) from /usr/bin/time. Then, unless PROFILE=0,
# one `perf record` profile of trawl per coding, WARC on and off, turned by ledger.py into
# the CPU-per-page ledger (stage, % of samples, µs per page).
#
#   tools/cpubench/run.sh                        # static site, both codings, 3 runs, ledger
#   RUNS=1 PROFILE=0 tools/cpubench/run.sh       # one quick round, no profile
#   CASES="static20-identity" tools/cpubench/run.sh     # only the cases named
#   DOCS=1 tools/cpubench/run.sh                 # also the OpenJDK 17 and Python 3.11 docs
#   BIN=/work/targets/x/release tools/cpubench/run.sh   # another trawl build
#   BIN_B=/work/targets/y/release tools/cpubench/run.sh # A/B: a second build, interleaved
#
# Sites (each host its own loopback address; robots.txt as gensite.py writes it):
#   static  127.0.0.31-50  20 hosts x 2,000 generated 10-30 KB pages (tools/realsite/gensite.py)
#   static20 127.0.0.31-50 20 hosts x 2,000 generated pages of 20 KB with 40 links an article
#                          (gensite.py --page-bytes 20480 --links 40; identity only)
#   javadoc 127.0.0.21     Debian openjdk-17-doc (identity only)      } with DOCS=1, robots
#   python  127.0.0.22     Debian python3.11-doc (identity only)      } as tools/realsite/
# Cases: static-identity, static-gzip, static20-identity (+ javadoc-identity,
# python-identity with DOCS=1); CASES="..." (a space-separated list) runs just those.
# Crawlers per case and run, in this order: trawl --no-warc, wget2, trawl with WARC,
# exactly as tools/realsite/run.sh runs them (trawl `crawl --scope seed-hosts
# --allow-private-addresses --delay-ms 0`, otherwise defaults, + TRAWL_ARGS; wget2
# `--recursive --level=inf --robots=on --max-threads=<hosts>` ...), except static20:
# trawl also gets `--per-host-connections 4` (before TRAWL_ARGS) and wget2
# `--max-threads=80` (hosts x 4), as issue 28's independent check crawled it.
#
# Env: RUNS (3), TIMEOUT (300 s a crawl), TRAWL_ARGS, BIN (dir with a release trawl;
# default: build into $CARGO_TARGET_DIR or ./target), BIN_B (optional: a second build's
# release dir, crawled as trawl.b / trawl-warc.b right after trawl / trawl-warc in every
# run, profiled too; the summary gives B's figures and B ÷ A), OUT (results dir), STATIC_DIR
# (/var/tmp/cpubench-static), STATIC_HOSTS (20), STATIC_PAGES (40000), DOCS (0),
# CODINGS ("identity gzip"), STATIC20 (1: add static20-identity), STATIC20_DIR
# (/var/tmp/cpubench-static20), STATIC20_PAGES (40000), CASES (overrides CODINGS, DOCS
# and STATIC20; only the sites it needs are generated), PROFILE (1), PERF_FREQ (999 Hz),
# PERF_CALLGRAPH (dwarf,16384), CALLGRIND (0; 1: with PROFILE=0, every trawl crawl runs
# under `valgrind --tool=callgrind` and records its user-space instructions a page, `ir_per_page`
# in results.jsonl: a figure the machine's load does not move, for A/B of small changes;
# pair it with TRAWL_ARGS="--max-pages 4000", as callgrind runs ~50x slower).
# Results: $OUT/results.jsonl, $OUT/summary.md (medians, ratios, the WARC path),
# $OUT/ledger.md,
# $OUT/logs/, $OUT/perf/*.data.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=${RUNS:-3}
TIMEOUT=${TIMEOUT:-300}
TRAWL_ARGS=${TRAWL_ARGS:-}
STATIC_HOSTS=${STATIC_HOSTS:-20}
STATIC_PAGES=${STATIC_PAGES:-40000}
STATIC_DIR=${STATIC_DIR:-/var/tmp/cpubench-static}
DOCS=${DOCS:-0}
CODINGS=${CODINGS:-identity gzip}
STATIC20=${STATIC20:-1}
STATIC20_DIR=${STATIC20_DIR:-/var/tmp/cpubench-static20}
STATIC20_PAGES=${STATIC20_PAGES:-40000}
STATIC20_FLAGS=(--page-bytes 20480 --links 40)
PROFILE=${PROFILE:-1}
CALLGRIND=${CALLGRIND:-0}
PERF_FREQ=${PERF_FREQ:-999}
PERF_CALLGRAPH=${PERF_CALLGRAPH:-dwarf,16384}
JAVADOC_ROOT=/usr/share/doc/openjdk-17-jre-headless/api
PYTHON_ROOT=/usr/share/doc/python3.11/html
CASES_LIST=${CASES:-}
CASES=()
if [ -n "${CPUBENCH_IN_NETNS:-}" ]; then
  read -r -a CASES <<<"$CPUBENCH_CASES"  # as decided outside the namespace
elif [ -n "$CASES_LIST" ]; then
  for c in $CASES_LIST; do
    case $c in
      static-identity|static-gzip|static20-identity|javadoc-identity|python-identity) CASES+=("$c") ;;
      *) echo "cpubench: unknown case $c" >&2; exit 2 ;;
    esac
  done
else
  for c in $CODINGS; do
    case $c in identity|gzip) CASES+=("static-$c") ;; *) echo "cpubench: unknown coding $c" >&2; exit 2 ;; esac
  done
  [ "$STATIC20" = 1 ] && CASES+=(static20-identity)
  [ "$DOCS" = 1 ] && CASES+=(javadoc-identity python-identity)
fi
# Which sites the cases need (the docs packages, the generated sites).
NEED_DOCS=0 NEED_STATIC=0 NEED_STATIC20=0
for c in "${CASES[@]}"; do
  case $c in
    javadoc-*|python-*) NEED_DOCS=1 ;;
    static20-*) NEED_STATIC20=1 ;;
    static-*) NEED_STATIC=1 ;;
  esac
done
[ "${#CASES[@]}" -gt 0 ] || { echo "cpubench: no cases" >&2; exit 2; }

# --- outside the namespace: packages, build, generated site, then re-enter isolated ---
if [ -z "${CPUBENCH_IN_NETNS:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "cpubench: run as root (unshare --net, nginx, perf)" >&2; exit 2; }
  pkgs=(nginx wget2 time iproute2)
  [ "$NEED_DOCS" = 1 ] && pkgs+=(openjdk-17-doc python3.11-doc)
  missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "cpubench: installing ${missing[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >&2
  fi
  if [ "$PROFILE" = 1 ]; then
    command -v perf >/dev/null || { echo "cpubench: no perf (PROFILE=0 to skip the ledger)" >&2; exit 2; }
  fi
  if [ -z "${BIN:-}" ]; then
    (cd "$ROOT" && cargo build --release -p trawl --bin trawl >&2)
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
  fi
  [ -x "$BIN/trawl" ] || { echo "cpubench: no trawl in $BIN" >&2; exit 2; }
  if [ -n "${BIN_B:-}" ]; then
    [ -x "$BIN_B/trawl" ] || { echo "cpubench: no trawl in $BIN_B" >&2; exit 2; }
    BIN_B=$(cd "$BIN_B" && pwd)
  fi
  # gen_site DIR HOSTS PAGES [FLAGS...]: generate a site unless its stamp (the generator's
  # sha1, its arguments) says it is already there.
  gen_site() {
    local dir=$1 hosts=$2 pages=$3 stamp
    shift 3
    stamp="gensite $(sha1sum "$ROOT/tools/realsite/gensite.py" | cut -c1-12)${*:+ $*} $hosts $pages"
    if [ "$(cat "$dir/STAMP" 2>/dev/null)" != "$stamp" ]; then
      echo "cpubench: generating $dir ($stamp)" >&2
      rm -rf "$dir"; mkdir -p "$dir"
      python3 "$ROOT/tools/realsite/gensite.py" "$@" "$dir" "$hosts" "$pages" 31
      echo "$stamp" >"$dir/STAMP"
    fi
  }
  [ "$NEED_STATIC" = 1 ] && gen_site "$STATIC_DIR" "$STATIC_HOSTS" "$STATIC_PAGES"
  [ "$NEED_STATIC20" = 1 ] && gen_site "$STATIC20_DIR" 20 "$STATIC20_PAGES" "${STATIC20_FLAGS[@]}"
  OUT=${OUT:-/tmp/cpubench-$(date -u +%Y%m%dT%H%M%SZ)}
  mkdir -p "$OUT"
  BIN=$(cd "$BIN" && pwd)
  BIN_B=${BIN_B:-}
  CPUBENCH_CASES="${CASES[*]}"
  export CPUBENCH_IN_NETNS=1 BIN BIN_B OUT TRAWL_ARGS CPUBENCH_CASES
  # A private network namespace with only its own loopback: no link in these pages can
  # reach the real web whatever a crawler does.
  exec unshare --net -- bash "$0"
fi

ip link set lo up
if [ "$(ip -o link show | wc -l)" != 1 ]; then
  echo "cpubench: the namespace has interfaces besides lo; refusing to crawl" >&2; exit 2
fi
WORK=$(mktemp -d /tmp/cpubench-work.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$OUT/logs"
NGINX_PID=
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill -TERM "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
cp "$ROOT/tools/realsite/robots-javadoc.txt" "$ROOT/tools/realsite/robots-python.txt" "$WORK/"
chmod 644 "$WORK"/robots-*.txt
# Read every served file once, so no crawl pays for a cold page cache.
dirs=()
[ "$NEED_STATIC" = 1 ] && dirs+=("$STATIC_DIR")
[ "$NEED_STATIC20" = 1 ] && dirs+=("$STATIC20_DIR")
[ "$NEED_DOCS" = 1 ] && dirs+=("$JAVADOC_ROOT" "$PYTHON_ROOT")
find -L "${dirs[@]}" -type f -print0 | xargs -0 cat >/dev/null
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "cpubench: cases ${CASES[*]}, $RUNS runs, timeout $TIMEOUT s, trawl $BIN/trawl (tree $COMMIT)," \
  "$(wget2 --version | head -1), $(nginx -v 2>&1), $(nproc) CPUs; results in $OUT" >&2
{
  echo "date=$(date -u +%FT%TZ) commit=$COMMIT bin=$BIN bin_b=$BIN_B trawl_args=$TRAWL_ARGS runs=$RUNS"
  echo "cpus=$(nproc) model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
} >"$OUT/machine.txt"

# case_info CASE -> ADDRS (space-separated), SERVERS (nginx server blocks), GZIP (on|off)
case_info() {
  ADDRS=; SERVERS=; GZIP=off
  case $1 in
    *-gzip) GZIP=on ;;
  esac
  case $1 in
    javadoc-*)
      ADDRS=127.0.0.21
      SERVERS="server { listen 127.0.0.21:80; root $JAVADOC_ROOT; location = /robots.txt { alias $WORK/robots-javadoc.txt; } }" ;;
    python-*)
      ADDRS=127.0.0.22
      SERVERS="server { listen 127.0.0.22:80; root $PYTHON_ROOT; location = /robots.txt { alias $WORK/robots-python.txt; } }" ;;
    static20-*)
      local i a
      for i in $(seq 0 19); do
        a=127.0.0.$((31 + i))
        ADDRS="$ADDRS $a"
        SERVERS="$SERVERS
  server { listen $a:80; root $STATIC20_DIR/$a; }"
      done
      ADDRS=${ADDRS# } ;;
    static-*)
      local i a
      for i in $(seq 0 $((STATIC_HOSTS - 1))); do
        a=127.0.0.$((31 + i))
        ADDRS="$ADDRS $a"
        SERVERS="$SERVERS
  server { listen $a:80; root $STATIC_DIR/$a; }"
      done
      ADDRS=${ADDRS# } ;;
  esac
}

# case_args CASE NHOSTS -> CASE_TRAWL (trawl's arguments for this case, before
# TRAWL_ARGS), WGET2_THREADS.
case_args() {
  CASE_TRAWL=(); WGET2_THREADS=$2
  case $1 in
    static20-*) CASE_TRAWL=(--per-host-connections 4); WGET2_THREADS=$(($2 * 4)) ;;
  esac
}

# start_nginx CASE LOG: one nginx for this crawl, its access log in LOG.
start_nginx() {
  local conf=$WORK/nginx.conf
  case_info "$1"
  mkdir -p "$WORK/tmp"
  : >"$2"; chmod 666 "$2"
  cat >"$conf" <<EOF
worker_processes auto;
user nobody nogroup;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  log_format cpubench '\$server_addr	\$status	\$body_bytes_sent	\$sent_http_content_type	\$request_method	\$request_uri	\$http_user_agent';
  access_log $2 cpubench;
  client_body_temp_path $WORK/tmp/body;
  proxy_temp_path $WORK/tmp/proxy;
  fastcgi_temp_path $WORK/tmp/fastcgi;
  uwsgi_temp_path $WORK/tmp/uwsgi;
  scgi_temp_path $WORK/tmp/scgi;
  sendfile on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  # identity: gzip off; gzip: text/html (always included) and the other text types at
  # nginx's default gzip_comp_level (1).
  gzip $GZIP;
  gzip_types text/css application/javascript text/plain application/xml;
  $SERVERS
}
EOF
  nginx -c "$conf" -g 'daemon off;' &
  NGINX_PID=$!
  local a ok
  for a in $ADDRS; do
    ok=
    for _ in $(seq 100); do
      if (exec 3<>"/dev/tcp/$a/80") 2>/dev/null; then ok=1; break; fi
      sleep 0.05
    done
    [ -n "$ok" ] || { echo "cpubench: nginx not listening on $a" >&2; cat "$WORK/nginx-error.log" >&2; exit 1; }
  done
}

# nginx_cpu: user+sys seconds of nginx's master and workers so far.
nginx_cpu() {
  local p t=0 tick
  tick=$(getconf CLK_TCK)
  for p in "$NGINX_PID" $(ps -o pid= --ppid "$NGINX_PID" 2>/dev/null); do
    [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  python3 -c "print($t / $tick)"
}

stop_nginx() {
  kill -QUIT "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=
}

# crawl CASE TOOL RUN [perf]: one crawl; with `perf`, under perf record (the ledger).
crawl() {
  local cs=$1 tool=$2 run=$3 prof=${4:-} tag="$1-$2-$3${4:+-perf}"
  local log=$OUT/logs/$tag.access.log dir=$WORK/out-$tag rc=0 load
  local pre=() vg=()
  if [ -n "$prof" ]; then
    mkdir -p "$OUT/perf"
    pre=(perf record -q -e cpu-clock -F "$PERF_FREQ" --call-graph "$PERF_CALLGRAPH" -o "$OUT/perf/$cs-$tool.data" --)
  elif [ "$CALLGRIND" = 1 ] && [ "$tool" != wget2 ]; then
    mkdir -p "$OUT/callgrind"
    vg=(valgrind -q --tool=callgrind --callgrind-out-file="$OUT/callgrind/$tag.cg" --)
  fi
  start_nginx "$cs" "$log"
  local a nhosts=0
  : >"$WORK/seeds.txt"
  for a in $ADDRS; do echo "http://$a/" >>"$WORK/seeds.txt"; nhosts=$((nhosts + 1)); done
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  case_args "$cs" "$nhosts"
  case $tool in
    trawl|trawl-warc|trawl.b|trawl-warc.b)
      local flags=() bin=$BIN
      case $tool in trawl|trawl.b) flags+=(--no-warc) ;; esac
      case $tool in *.b) bin=$BIN_B ;; esac
      "${pre[@]}" /usr/bin/time -f 'wall=%e user=%U sys=%S maxrss_kb=%M' -o "$WORK/time.txt" \
        timeout -k 30 "$TIMEOUT" "${vg[@]}" "$bin/trawl" crawl --seeds "$WORK/seeds.txt" --out "$dir" \
        --scope seed-hosts --allow-private-addresses --delay-ms 0 \
        --from cpubench@example.org --progress-secs 0 "${flags[@]}" "${CASE_TRAWL[@]}" $TRAWL_ARGS \
        2>"$OUT/logs/$tag.stderr" || rc=$?
      [ -f "$dir/stats.json" ] && cp "$dir/stats.json" "$OUT/logs/$tag.stats.json"
      ;;
    wget2)
      mkdir -p "$dir"
      "${pre[@]}" /usr/bin/time -f 'wall=%e user=%U sys=%S maxrss_kb=%M' -o "$WORK/time.txt" \
        timeout -k 30 "$TIMEOUT" wget2 --recursive --level=inf --robots=on \
        --max-threads="$WGET2_THREADS" --input-file="$WORK/seeds.txt" \
        --reject="gz,tgz,tar,zip,bz2,tbz,tbz2,xz,txz,7z,rar,zst,lz,lzma,z,cab,arj,lha,iso,dmg,img,exe,msi,dll,bin,apk,ipa,deb,rpm,jar,war,class,so,appimage,pkg,msix,gif,jpg,jpeg,jpe,png,bmp,tif,tiff,ico,webp,avif,heic,heif,svg,svgz,psd,xcf,raw,cr2,nef,jxl,mp3,wav,ogg,oga,opus,flac,aac,m4a,wma,mid,midi,aif,aiff,ra,ram,mp4,m4v,avi,mov,qt,wmv,flv,f4v,mkv,webm,mpg,mpeg,3gp,ogv,asf,rm,rmvb,vob,swf,woff,woff2,ttf,eot" \
        --filter-urls --ignore-tags=script \
        --delete-after --no-verbose --tries=1 --timeout=30 \
        --directory-prefix="$dir" -o "$OUT/logs/$tag.wget2.log" || rc=$?
      # wget2 exits 8 when some fetch got an HTTP error (the sites have broken links).
      [ "$rc" = 8 ] && rc=0
      ;;
  esac
  local ncpu
  ncpu=$(nginx_cpu)
  stop_nginx
  local warc_bytes=0
  [ -d "$dir" ] && warc_bytes=$(find "$dir" -name '*.warc*' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  local ir=
  [ -f "$OUT/callgrind/$tag.cg" ] && ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$OUT/callgrind/$tag.cg")
  python3 "$HERE/analyze.py" record "$OUT" case="$cs" tool="$tool" run="$run" rc="$rc" \
    log="$log" time="$WORK/time.txt" nginx_cpu="$ncpu" load="$load" warc_bytes="$warc_bytes" \
    profiled="${prof:-0}" ir="$ir"
  gzip -f "$log"
  rm -rf "$dir"
}

TOOLS=(trawl wget2 trawl-warc)
PROFILED=(trawl trawl-warc)
if [ -n "$BIN_B" ]; then
  TOOLS=(trawl trawl.b wget2 trawl-warc trawl-warc.b)
  PROFILED=(trawl trawl.b trawl-warc trawl-warc.b)
  echo "cpubench: build B $BIN_B/trawl (trawl.b, trawl-warc.b)" >&2
fi
: >"$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  for cs in "${CASES[@]}"; do
    for tool in "${TOOLS[@]}"; do
      echo "cpubench: run $run/$RUNS, $cs, $tool (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      crawl "$cs" "$tool" "$run"
    done
  done
done
python3 "$HERE/analyze.py" summary "$OUT" | tee "$OUT/summary.md"

if [ "$PROFILE" = 1 ]; then
  for cs in "${CASES[@]}"; do
    case $cs in static*) ;; *) continue ;; esac
    for tool in "${PROFILED[@]}"; do
      echo "cpubench: profile, $cs, $tool" >&2
      crawl "$cs" "$tool" 1 perf
    done
  done
  ledger_args=()
  for cs in "${CASES[@]}"; do
    case $cs in static*) ;; *) continue ;; esac
    for tool in "${PROFILED[@]}"; do
      ledger_args+=("$cs/$tool=$OUT/perf/$cs-$tool.data")
    done
  done
  python3 "$HERE/ledger.py" --results "$OUT/results.jsonl" --top 15 "${ledger_args[@]}" \
    | tee "$OUT/ledger.md"
fi
