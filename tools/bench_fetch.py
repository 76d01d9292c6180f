#!/usr/bin/env python3
"""Fetcher macro-benchmark: trawl's Fetcher vs wrk vs a hyper client, same run.

Starts synthweb (release build) with one host and a fixed page size, then for each
connection count runs, interleaved and repeated, three single-threaded clients over
keep-alive connections against it:

  wrk        -t1 -cN                       (the ceiling: no parsing beyond framing)
  trawl      examples/fetchload            (one Fetcher, one mio loop)
  hyper      tools/hyperload -t 1          (hyper http1 client conns, one tokio worker)

Every client asks for the identity representation; trawl checks status and length of
every response, hyperload and wrk count non-2xx responses. CPU per request = (user+sys of the client process) / requests,
from getrusage(RUSAGE_CHILDREN) deltas. Prints a markdown table of medians and ratios.

Usage: tools/bench_fetch.py [--secs 5] [--conns 64,512] [--runs 3] [--page-bytes 4096]
       [--synthweb PATH] [--fetchload PATH] [--hyperload PATH] [--server-threads 1]
Build first:
  cargo build --release -p synthweb -p hyperload && cargo build --release --example fetchload
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

HOST = "h000000.synth.test"


def rusage_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_client(cmd, parse):
    before = rusage_children()
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    cpu = rusage_children() - before
    requests, secs, errors = parse(proc.stdout)
    if proc.returncode != 0 or errors:
        sys.stderr.write(f"client failed: {cmd}\n{proc.stdout}\n{proc.stderr}\n")
    return {
        "rps": requests / secs if secs else 0.0,
        "cpu_us_per_req": cpu * 1e6 / requests if requests else float("inf"),
        "requests": requests,
        "errors": errors,
        "wall": wall,
    }


def parse_json_line(out):
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    j = json.loads(line)
    secs = j["secs"] if "secs" in j else j["seconds"]
    return j["requests"], secs, j["errors"] + j.get("non_2xx", 0)


def parse_wrk(out):
    m = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out)
    requests = int(m.group(1))
    secs = float(m.group(2)) / (1000.0 if m.group(3) == "ms" else 1.0)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    if errs:
        errors += sum(int(x) for x in errs.groups()[:3])
    return requests, secs, errors


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=float, default=5.0)
    ap.add_argument("--conns", default="64,512")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--page-bytes", type=int, default=4096)
    ap.add_argument("--port", type=int, default=18321)
    ap.add_argument("--server-threads", type=int, default=1)
    ap.add_argument("--synthweb", default=os.path.join(target, "release", "synthweb"))
    ap.add_argument("--fetchload", default=os.path.join(target, "release", "examples", "fetchload"))
    ap.add_argument("--hyperload", default=os.path.join(target, "release", "hyperload"))
    ap.add_argument("--json", help="also write raw results here")
    a = ap.parse_args()

    server = subprocess.Popen(
        [a.synthweb, "--hosts", "1", "--page-bytes", str(a.page_bytes), "--port", str(a.port),
         "--threads", str(a.server_threads), "--idle-timeout-secs", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    ready = json.loads(server.stdout.readline())
    assert ready.get("ready"), ready
    port = ready["http_port"]
    url = f"http://{HOST}:{port}/p/1"
    # The page length, to validate every response.
    probe = subprocess.run(["curl", "-s", "-H", f"Host: {HOST}:{port}", f"http://127.0.0.1:{port}/p/1"],
                           capture_output=True)
    expect = len(probe.stdout)
    assert expect > 0, "synthweb did not serve /p/1"

    results = {}
    try:
        for n in [int(c) for c in a.conns.split(",")]:
            clients = {
                "wrk": ([ "wrk", "-t1", f"-c{n}", f"-d{a.secs:g}s", "-H", f"Host: {HOST}:{port}",
                          f"http://127.0.0.1:{port}/p/1"], parse_wrk),
                "trawl": ([a.fetchload, "--url", url, "--resolve", f"{HOST}:{port}:127.0.0.1",
                           "--connections", str(n), "--secs", str(a.secs), "--expect-bytes", str(expect)],
                          parse_json_line),
                # One tokio thread, like trawl's one loop and wrk -t1.
                "hyper": ([a.hyperload, "-c", str(n), "-n", "0", "-d", str(a.secs), "-t", "1",
                           "--connect", f"127.0.0.1:{port}", url], parse_json_line),
            }
            for run in range(a.runs):
                for name, (cmd, parse) in clients.items():
                    r = run_client(cmd, parse)
                    results.setdefault((n, name), []).append(r)
                    print(f"# conns={n} run={run} {name}: {r['rps']:.0f} req/s, "
                          f"{r['cpu_us_per_req']:.2f} us/req, errors={r['errors']}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()

    print(f"page {expect} bytes, {a.secs}s per run, {a.runs} runs, synthweb --threads {a.server_threads}")
    print()
    print("| conns | client | req/s (median) | CPU µs/req (median) | trawl req/s ratio | trawl CPU ratio |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for n in sorted({k[0] for k in results}):
        med = {name: (statistics.median(r["rps"] for r in results[(n, name)]),
                      statistics.median(r["cpu_us_per_req"] for r in results[(n, name)]))
               for name in ("wrk", "trawl", "hyper")}
        t_rps, t_cpu = med["trawl"]
        for name in ("wrk", "trawl", "hyper"):
            rps, cpu = med[name]
            print(f"| {n} | {name} | {rps:.0f} | {cpu:.2f} | {t_rps / rps:.2f} | {cpu / t_cpu:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({f"{k[0]}/{k[1]}": v for k, v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
