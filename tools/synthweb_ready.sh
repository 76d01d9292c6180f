# Sourced by the tool scripts that start synthweb in the background (tools/demo.sh,
# tools/samecrawl/run.sh): waits until the server at PID has written its ready report
# to ready.json in the current directory (at most 60 s); if it exits or does not
# start, prints its stderr (server.err) and exits 2, naming WHO.
#
#   synthweb_wait_ready PID WHO
synthweb_wait_ready() {
    _i=0
    until [ -s ready.json ]; do
        _i=$((_i + 1))
        if [ $_i -gt 600 ] || ! kill -0 "$1" 2>/dev/null; then
            echo "$2: synthweb did not start:" >&2; cat server.err >&2; exit 2
        fi
        sleep 0.1
    done
}
