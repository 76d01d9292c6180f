#!/usr/bin/env bash
# Re-crawl benchmark on a real site (issue 14): trawl (a first crawl with WARC, then
# `--recrawl` of it) beside wget2 (a first run with --timestamping, then the same again,
# which sends If-Modified-Since), the site served by nginx on loopback inside a private
# network namespace, so nothing leaves the machine. Figures come from nginx's own access
# log (requests, conditional requests, 304s, body bytes) and /usr/bin/time -v (wall
# time, peak RSS); one JSON line per run on stdout.
#
#   unshare -n bash tools/realsite/recrawl.sh target/release javadoc 3
#   unshare -n bash tools/realsite/recrawl.sh target/release python 3
#
# Needs nginx, wget2, openjdk-17-doc / python3.11-doc (tools/realsite/run.sh installs
# them). Each crawl is bounded by the site (no timeout needed: both are finite).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$1" && pwd); SITE=$2; ROUNDS=${3:-1}
[ "$(ip -o link show | wc -l)" = 1 ] || { echo "recrawl.sh: run it inside unshare -n" >&2; exit 2; }
W=/tmp/rsb-$SITE; rm -rf $W; mkdir -p $W/tmp; cd $W; chmod 755 $W
ip link set lo up
case $SITE in
  javadoc) ADDR=127.0.0.21; ROOT=/usr/share/doc/openjdk-17-jre-headless/api; ROBOTS=robots-javadoc.txt; HOST=docs.java.test; SEED=http://docs.java.test/index.html;;
  python) ADDR=127.0.0.22; ROOT=/usr/share/doc/python3.11/html; ROBOTS=robots-python.txt; HOST=docs.python.test; SEED=http://docs.python.test/;;
esac
cat > nginx.conf <<EOC
worker_processes 1;
user nobody nogroup;
pid $W/nginx.pid;
error_log $W/nginx-error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  log_format rs '\$status \$body_bytes_sent "\$http_if_none_match" "\$http_if_modified_since" \$request_uri';
  access_log $W/access.log rs;
  client_body_temp_path $W/tmp;
  keepalive_requests 1000000;
  gzip on; gzip_types text/css application/javascript text/plain application/xml;
  server { listen $ADDR:80; server_name $HOST; root $ROOT;
    location = /robots.txt { alias $HERE/$ROBOTS; } }
}
EOC
echo "$HOST $ADDR 80" > hosts.txt
nginx -c $W/nginx.conf -g 'daemon on;'; sleep 0.3
summ() { # name logfile timefile
  local req c304 bytes cond secs rss
  req=$(wc -l < $2); c304=$(awk '$1==304' $2 | wc -l); bytes=$(awk '{s+=$2} END {print s+0}' $2)
  cond=$(grep -vc '"-" "-"' $2 || true)
  secs=$(grep "Elapsed (wall" $3 | awk '{print $NF}'); rss=$(grep "Maximum resident" $3 | awk '{print $NF}')
  echo "{\"run\":\"$1\",\"requests\":$req,\"conditional\":$cond,\"not_modified\":$c304,\"body_bytes\":$bytes,\"wall\":\"$secs\",\"max_rss_kb\":$rss}"
}
rot() { mv access.log $1; kill -USR1 $(cat nginx.pid); sleep 0.3; }
for r in $(seq $ROUNDS); do
  rm -rf c1 c2 wg
  TA="crawl --hosts-file hosts.txt --allow-private-addresses --scope seed-hosts --delay-ms 0 --progress-secs 0"
  /usr/bin/time -v -o t1 $BIN/trawl $TA --seed $SEED --out c1 2>c1.err; rot a-trawl1.log; summ trawl-first a-trawl1.log t1
  /usr/bin/time -v -o t2 $BIN/trawl $TA --recrawl c1 --out c2 2>c2.err; rot a-trawl2.log; summ trawl-recrawl a-trawl2.log t2
  WG="--recursive --level=inf --robots=on --no-verbose --reject=jpg,jpeg,png,gif,zip,gz,tgz,pdf --ignore-tags=script --no-host-directories -P wg"
  /usr/bin/time -v -o t3 wget2 $WG --timestamping ${SEED/$HOST/$ADDR} >w1.err 2>&1 || true; rot a-wget1.log; summ wget2-first a-wget1.log t3
  /usr/bin/time -v -o t4 wget2 $WG --timestamping ${SEED/$HOST/$ADDR} >w2.err 2>&1 || true; rot a-wget2.log; summ wget2-N a-wget2.log t4
done
kill $(cat nginx.pid)
