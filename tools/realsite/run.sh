#!/usr/bin/env bash
# The real-site benchmark (issue 11): trawl and wget2 crawl real documentation sites and
# a generated static web, all served by nginx on loopback inside a private network
# namespace, interleaved, RUNS times each; medians from nginx's own access log.
#
#   tools/realsite/run.sh                    # all three sites: javadoc python static
#   RUNS=1 tools/realsite/run.sh javadoc     # one site, one run
#
# Sites (each on its own loopback address, each with a robots.txt using prefix, `*` and
# `$` rules, allow/disallow ties and longer-allow-wins cases):
#   javadoc  127.0.0.21  the OpenJDK 17 API docs (Debian openjdk-17-doc, 10,137 pages)
#   python   127.0.0.22  the Python 3.11 docs (Debian python3.11-doc, Sphinx, 530 pages)
#   static   127.0.0.31-50  20 hosts, ~38,500 generated 10-30 KB pages (gensite.py)
#
# Crawlers, per site and run, in this order: trawl --no-warc, wget2, trawl with WARC.
#   trawl: `crawl --scope seed-hosts --allow-private-addresses --delay-ms 0`, otherwise
#          defaults (1 connection per host, 2 shards, presence bits for 1e8 URLs).
#   wget2: `--recursive --level=inf --robots=on`, no --span-hosts (only the seeds' hosts),
#          as many threads as the site has hosts (the connections trawl uses), no page
#          requisites, and it skips what trawl never fetches: trawl's default refused
#          extensions (images, archives, media: --reject) and <script src>
#          (--ignore-tags=script; trawl follows <a>, <area>, <link>, frames, not scripts).
# Every crawl is bounded by TIMEOUT seconds (then SIGTERM, SIGKILL 30 s later); nginx is restarted per crawl so each crawl
# has its own access log, and is stopped on exit.
#
# Env: RUNS (3), TIMEOUT (600 s a crawl), TRAWL_ARGS (extra trawl flags), OUT (results dir), BIN (dir with a release
# trawl; default: build it into $CARGO_TARGET_DIR or ./target), STATIC_DIR (where the
# generated site is kept between runs), STATIC_HOSTS (20), STATIC_PAGES (38500),
# NGINX_GZIP (on: HTML, CSS, JS gzip-coded at level 1; off: every response identity-coded).
# Results: $OUT/results.jsonl (one line per crawl), $OUT/urls/*.txt (HTML pages each
# crawl fetched), $OUT/logs/ (access logs, crawler logs), $OUT/summary.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=${RUNS:-3}
TIMEOUT=${TIMEOUT:-600}
TRAWL_ARGS=${TRAWL_ARGS:-}   # extra trawl crawl flags, word-split (e.g. "--seen-capacity 1000000")
STATIC_HOSTS=${STATIC_HOSTS:-20}
STATIC_PAGES=${STATIC_PAGES:-38500}
STATIC_DIR=${STATIC_DIR:-/var/tmp/realsite-static}
NGINX_GZIP=${NGINX_GZIP:-on}
case $NGINX_GZIP in on|off) ;; *) echo "realsite: NGINX_GZIP is on or off" >&2; exit 2 ;; esac
JAVADOC_ROOT=/usr/share/doc/openjdk-17-jre-headless/api
PYTHON_ROOT=/usr/share/doc/python3.11/html
if [ "$#" -gt 0 ]; then SITES=("$@"); else SITES=(javadoc python static); fi
for s in "${SITES[@]}"; do
  case $s in javadoc|python|static) ;; *) echo "realsite: unknown site $s (javadoc python static)" >&2; exit 2 ;; esac
done

# --- outside the namespace: packages, build, generated site, then re-enter isolated ---
if [ -z "${REALSITE_IN_NETNS:-}" ]; then
  missing=()
  for p in nginx wget2 openjdk-17-doc python3.11-doc time iproute2 libisal-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "realsite: installing ${missing[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  fi
  if [ -z "${BIN:-}" ]; then
    (cd "$ROOT" && cargo build --release -p trawl >&2)
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
  fi
  [ -x "$BIN/trawl" ] || { echo "realsite: no trawl in $BIN" >&2; exit 2; }
  if [[ " ${SITES[*]} " == *" static "* ]]; then
    stamp="gensite $(sha1sum "$HERE/gensite.py" | cut -c1-12) $STATIC_HOSTS $STATIC_PAGES"
    if [ "$(cat "$STATIC_DIR/STAMP" 2>/dev/null)" != "$stamp" ]; then
      rm -rf "$STATIC_DIR"; mkdir -p "$STATIC_DIR"
      python3 "$HERE/gensite.py" "$STATIC_DIR" "$STATIC_HOSTS" "$STATIC_PAGES" 31
      echo "$stamp" >"$STATIC_DIR/STAMP"
    fi
  fi
  OUT=${OUT:-/tmp/realsite-$(date -u +%Y%m%dT%H%M%SZ)}
  mkdir -p "$OUT"
  export REALSITE_IN_NETNS=1 BIN OUT TRAWL_ARGS NGINX_GZIP
  # A private network namespace: only its own loopback, so none of these pages' links
  # to the real web can leave the machine whatever a crawler does.
  exec unshare --net -- bash "$0" "${SITES[@]}"
fi

ip link set lo up
if [ "$(ip -o link show | wc -l)" != 1 ]; then
  echo "realsite: the namespace has interfaces besides lo; refusing to crawl" >&2; exit 2
fi
python3 "$HERE/analyze.py" selftest >&2
WORK=$(mktemp -d /tmp/realsite-work.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$OUT/logs"
NGINX_PID=
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill -TERM "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
cp "$HERE/robots-javadoc.txt" "$HERE/robots-python.txt" "$WORK/"
chmod 644 "$WORK"/robots-*.txt
# The robots.txt each address serves, kept with the results (analyze.py judges by them).
mkdir -p "$OUT/robots"
cp "$HERE/robots-javadoc.txt" "$OUT/robots/127.0.0.21.txt"
cp "$HERE/robots-python.txt" "$OUT/robots/127.0.0.22.txt"
if [[ " ${SITES[*]} " == *" static "* ]]; then
  for i in $(seq 0 $((STATIC_HOSTS - 1))); do
    cp "$STATIC_DIR/127.0.0.$((31 + i))/robots.txt" "$OUT/robots/127.0.0.$((31 + i)).txt"
  done
fi
# Read every served file once, so the first crawl of run 1 does not pay for a cold
# page cache that the others do not.
for site in "${SITES[@]}"; do
  case $site in javadoc) d=$JAVADOC_ROOT ;; python) d=$PYTHON_ROOT ;; static) d=$STATIC_DIR ;; esac
  find -L "$d" -type f -print0 | xargs -0 cat >/dev/null
done
echo "realsite: sites ${SITES[*]}, $RUNS runs, timeout $TIMEOUT s, nginx gzip $NGINX_GZIP, trawl $BIN/trawl," \
  "$(wget2 --version | head -1), $(nginx -v 2>&1); results in $OUT" >&2

# site_info SITE -> sets ADDRS (space-separated), SERVERS (nginx server blocks), ROBOTS_MAP
site_info() {
  ADDRS=; SERVERS=; ROBOTS_MAP=
  case $1 in
    javadoc)
      ADDRS=127.0.0.21
      SERVERS="server { listen 127.0.0.21:80; root $JAVADOC_ROOT; location = /robots.txt { alias $WORK/robots-javadoc.txt; } }"
      ROBOTS_MAP=127.0.0.21=$OUT/robots/127.0.0.21.txt ;;
    python)
      ADDRS=127.0.0.22
      SERVERS="server { listen 127.0.0.22:80; root $PYTHON_ROOT; location = /robots.txt { alias $WORK/robots-python.txt; } }"
      ROBOTS_MAP=127.0.0.22=$OUT/robots/127.0.0.22.txt ;;
    static)
      local i a
      for i in $(seq 0 $((STATIC_HOSTS - 1))); do
        a=127.0.0.$((31 + i))
        ADDRS="$ADDRS $a"
        SERVERS="$SERVERS
  server { listen $a:80; root $STATIC_DIR/$a; }"
        ROBOTS_MAP="$ROBOTS_MAP,$a=$OUT/robots/$a.txt"
      done
      ADDRS=${ADDRS# }; ROBOTS_MAP=${ROBOTS_MAP#,} ;;
  esac
}

# start_nginx SITE LOG: one nginx for this crawl, its access log in LOG.
start_nginx() {
  local site=$1 log=$2 conf=$WORK/nginx.conf
  site_info "$site"
  mkdir -p "$WORK/tmp"
  : >"$log"; chmod 666 "$log"
  cat >"$conf" <<EOF
worker_processes auto;
user nobody nogroup;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  # One line a request: address (= site), status, bytes, type, method, URI, agent.
  log_format realsite '\$server_addr	\$status	\$body_bytes_sent	\$sent_http_content_type	\$request_method	\$request_uri	\$http_user_agent';
  access_log $log realsite;
  client_body_temp_path $WORK/tmp/body;
  proxy_temp_path $WORK/tmp/proxy;
  fastcgi_temp_path $WORK/tmp/fastcgi;
  uwsgi_temp_path $WORK/tmp/uwsgi;
  scgi_temp_path $WORK/tmp/scgi;
  sendfile on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  # As real sites do: compressed HTML, CSS and JavaScript (gzip level 1); NGINX_GZIP=off
  # serves everything identity-coded.
  gzip $NGINX_GZIP;
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
    [ -n "$ok" ] || { echo "realsite: nginx not listening on $a" >&2; cat "$WORK/nginx-error.log" >&2; exit 1; }
  done
}

stop_nginx() {
  kill -QUIT "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=
}

# crawl SITE TOOL RUN
crawl() {
  local site=$1 tool=$2 run=$3 tag="$1-$2-$3"
  local log=$OUT/logs/$tag.access.log dir=$WORK/out-$tag rc=0 stats= mem=
  start_nginx "$site" "$log"
  local a nhosts=0
  : >"$WORK/seeds.txt"
  for a in $ADDRS; do echo "http://$a/" >>"$WORK/seeds.txt"; nhosts=$((nhosts + 1)); done
  case $tool in
    trawl|trawl-warc)
      local flags=()
      [ "$tool" = trawl ] && flags+=(--no-warc)
      /usr/bin/time -f 'wall=%e user=%U sys=%S maxrss_kb=%M' -o "$WORK/time.txt" \
        timeout -k 30 "$TIMEOUT" "$BIN/trawl" crawl --seeds "$WORK/seeds.txt" --out "$dir" \
        --scope seed-hosts --allow-private-addresses --delay-ms 0 \
        --from realsite-bench@example.org --progress-secs 0 "${flags[@]}" $TRAWL_ARGS \
        2>"$OUT/logs/$tag.stderr" &
      local tpid=$!
      # RSS less the presence bits, sampled at 4 Hz (see memsample.py).
      python3 "$HERE/memsample.py" "$tpid" trawl 0.25 >"$OUT/logs/$tag.mem.jsonl" &
      local spid=$!
      wait "$tpid" || rc=$?
      wait "$spid" || true
      mem=$OUT/logs/$tag.mem.jsonl
      stats=$dir/stats.json
      [ -f "$stats" ] && cp "$stats" "$OUT/logs/$tag.stats.json"
      [ -f "$dir/crawl.log.jsonl" ] && gzip -c "$dir/crawl.log.jsonl" >"$OUT/logs/$tag.crawl.log.jsonl.gz"
      ;;
    wget2)
      mkdir -p "$dir"
      /usr/bin/time -f 'wall=%e user=%U sys=%S maxrss_kb=%M' -o "$WORK/time.txt" \
        timeout -k 30 "$TIMEOUT" wget2 --recursive --level=inf --robots=on \
        --max-threads="$nhosts" --input-file="$WORK/seeds.txt" \
        --reject="gz,tgz,tar,zip,bz2,tbz,tbz2,xz,txz,7z,rar,zst,lz,lzma,z,cab,arj,lha,iso,dmg,img,exe,msi,dll,bin,apk,ipa,deb,rpm,jar,war,class,so,appimage,pkg,msix,gif,jpg,jpeg,jpe,png,bmp,tif,tiff,ico,webp,avif,heic,heif,svg,svgz,psd,xcf,raw,cr2,nef,jxl,mp3,wav,ogg,oga,opus,flac,aac,m4a,wma,mid,midi,aif,aiff,ra,ram,mp4,m4v,avi,mov,qt,wmv,flv,f4v,mkv,webm,mpg,mpeg,3gp,ogv,asf,rm,rmvb,vob,swf,woff,woff2,ttf,eot" \
        --filter-urls --ignore-tags=script \
        --delete-after --no-verbose --tries=1 --timeout=30 \
        --directory-prefix="$dir" -o "$OUT/logs/$tag.wget2.log" || rc=$?
      # wget2 exits 8 when some fetch got an HTTP error (the sites have broken links).
      [ "$rc" = 8 ] && rc=0
      ;;
  esac
  stop_nginx
  python3 "$HERE/analyze.py" record "$OUT" tool="$tool" site="$site" run="$run" rc="$rc" \
    log="$log" robots="$ROBOTS_MAP" time="$WORK/time.txt" stats="$stats" mem="$mem"
  gzip -f "$log"
  rm -rf "$dir"
}

: >"$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  for site in "${SITES[@]}"; do
    for tool in trawl wget2 trawl-warc; do
      echo "realsite: run $run/$RUNS, $site, $tool" >&2
      crawl "$site" "$tool" "$run"
    done
  done
done
python3 "$HERE/analyze.py" summary "$OUT"
