#!/usr/bin/env python3
"""CPU per page of trawl driven from Python against the `trawl` binary (issue 30's
cost bound: iterating pages in Python with no work per page adds at most 15 µs of CPU
a page over the CLI, WARC off, 20-host site).

One synthweb of 20 hosts on loopback (`--mesh --page-bytes 20480`: pages of 20 KB,
identity-coded, every page linking its host's pages and two other roots, robots.txt
allowing all, as the static 20-host site of docs/benchmarks.md); in each round, interleaved, every case crawls
the whole web into a fresh directory with WARC off and no delay:

  cli        `trawl crawl` (the release binary), CPU from getrusage of the child
  py-run     `trawl.Crawl(...).run()` in a Python child: the engine embedded, no stream
  py-pages   `for page in crawl.pages(): pass`: every page handed to Python
  py-hook    as py-pages, with an `accept_link` that counts and says True (one call
             a new link, one GIL acquisition a page with new links)

A Python case's CPU is the child's `time.process_time()` across the crawl (every
thread of the process; the interpreter's start and the import are outside it). Pages
are stats.json's `pages`; the figure is CPU µs per page, median over the rounds, and
each Python case's excess over `cli` in the same round (median of the per-round
differences).

    make python                       # the release wheel in .venv
    cargo build --release -p trawl    # synthweb: the release build, else the debug one
    .venv/bin/python tools/pybench/run.py [--rounds 3] [--pages-per-host 200] [--bin DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys, time, trawl
opts = json.loads(sys.argv[1])
case = opts.pop("case")
asked = [0]
if case == "py-hook":
    def hook(from_url, url):
        asked[0] += 1
        return True
    opts["accept_link"] = hook
crawl = trawl.Crawl(**opts)
t0 = time.process_time()
if case == "py-run":
    stats = crawl.run()
else:
    for page in crawl.pages():
        pass
    stats = crawl.stats()
cpu = time.process_time() - t0
print(json.dumps({"cpu": cpu, "pages": stats["pages"], "finish": stats["finish"], "asked": asked[0]}))
"""


def crawl_flags(web: Path) -> Dict[str, object]:
    return {
        "hosts_file": str(web / "hosts.txt"),
        "allow_private_addresses": True,
        "from_": "bench@example.org",
        "delay_ms": 0,
        "max_crawl_delay_secs": 0,
        "max_retry_after_secs": 1,
        "warc": False,
        "progress_secs": 0,
        "checkpoint_secs": 0,
        "seen_capacity": 1_000_000,
    }


def cli_args(opts: Dict[str, object]) -> List[str]:
    args = []
    for key, value in opts.items():
        flag = "--" + key.rstrip("_").replace("_", "-")
        if key == "warc":
            args.append("--no-warc")
        elif value is True:
            args.append(flag)
        else:
            args.append(f"{flag}={value}")
    return args


def run_cli(binary: Path, seeds: List[str], out: Path, opts: Dict[str, object]) -> Tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [str(binary), "crawl", "--out", str(out), *cli_args(opts)]
    for s in seeds:
        cmd += ["--seed", s]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["finish"] == "exhausted", stats
    return cpu, int(stats["pages"])


def run_py(case: str, seeds: List[str], out: Path, opts: Dict[str, object]) -> Tuple[float, int]:
    payload = dict(opts, case=case, seeds=seeds, out=str(out))
    result = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(payload)],
        check=True,
        capture_output=True,
        text=True,
    )
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["finish"] == "exhausted", line
    if line["asked"]:
        print(f"  accept_link asked about {line['asked']} links", flush=True)
    return float(line["cpu"]), int(line["pages"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pages-per-host", type=int, default=200)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    ap.add_argument("--bin", type=Path, default=target / "release", help="dir of the release trawl")
    ap.add_argument("--synthweb", type=Path, default=None,
                    help="synthweb binary (default: the release one, else the debug one, "
                    "which the dev profile optimises too)")
    args = ap.parse_args()
    synthweb = args.synthweb or next(
        (p for p in (args.bin / "synthweb", target / "debug" / "synthweb") if p.is_file()),
        args.bin / "synthweb",
    )

    cases = ["cli", "py-run", "py-pages", "py-hook"]
    with tempfile.TemporaryDirectory(prefix="pybench-") as tmp:
        web = Path(tmp) / "web"
        web.mkdir()
        n = args.pages_per_host
        server = subprocess.Popen(
            [str(synthweb), "--port", "0", "--hosts-file", "hosts.txt", "--seeds",
             "seeds.txt", "--hosts", str(args.hosts), "--pages-per-host", f"{n}-{n}",
             "--mesh", "--page-bytes", "20480"],
            cwd=web, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )
        try:
            assert server.stdout is not None
            assert json.loads(server.stdout.readline())["ready"] is True
            seeds = [l.strip() for l in (web / "seeds.txt").read_text().splitlines() if l.strip()]
            opts = crawl_flags(web)
            results: Dict[str, List[Tuple[float, int]]] = {c: [] for c in cases}
            for r in range(args.rounds):
                for case in cases:
                    out = Path(tmp) / f"{case}-{r}"
                    if case == "cli":
                        cpu, pages = run_cli(args.bin / "trawl", seeds, out, opts)
                    else:
                        cpu, pages = run_py(case, seeds, out, opts)
                    results[case].append((cpu, pages))
                    print(f"round {r + 1} {case:9} {pages:6} pages {cpu:7.3f} s CPU "
                          f"{cpu / pages * 1e6:7.1f} µs/page", flush=True)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(10)

    print()
    print("| case | pages | CPU µs/page (median) | over cli, µs/page (median of per-round differences) |")
    print("|---|---:|---:|---:|")
    per_page = {c: [cpu / pages * 1e6 for cpu, pages in results[c]] for c in cases}
    for c in cases:
        pages = results[c][0][1]
        excess = "" if c == "cli" else "%+.1f" % statistics.median(
            p - q for p, q in zip(per_page[c], per_page["cli"])
        )
        print(f"| {c} | {pages:,} | {statistics.median(per_page[c]):.1f} | {excess} |")


if __name__ == "__main__":
    main()
