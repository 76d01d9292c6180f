"""The Python package against synthweb on loopback (issue 30's acceptance): pages
seen equal the crawl log's fetched records, bodies are what synthweb served, the
link hook and its failures, stop and resume, a slow consumer, SIGINT, controls."""

from __future__ import annotations

import datetime
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Set
from urllib.parse import urlsplit

import pytest

import trawl

from conftest import Synthweb, crawl_log, options


def fetched_urls(out: Path) -> Set[str]:
    return {r["url"] for r in crawl_log(out) if r["outcome"] == "fetched"}


def served(sw: Synthweb, url: str) -> bytes:
    """What synthweb serves for `url` with no content coding (every byte of its web
    is a function of host and path)."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    req = urllib.request.Request(
        f"http://127.0.0.1:{sw.port}{path}", headers={"Host": parts.netloc}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            body: bytes = resp.read()
            return body
    except urllib.error.HTTPError as e:
        return e.read()


def test_pages_are_the_fetched_records_with_their_bodies(web: Synthweb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    crawl = trawl.Crawl(seeds=web.seeds, out=str(out), **options(web))
    pages = []
    for page in crawl.pages():
        pages.append(page)
    stats = crawl.stats()
    assert stats["finish"] == "exhausted", stats
    # The set of pages seen equals the crawl log's fetched records, one for one.
    assert {p.url for p in pages} == fetched_urls(out)
    assert len(pages) == sum(1 for r in crawl_log(out) if r["outcome"] == "fetched")
    coded = 0
    html = [p for p in pages if p.status == 200 and (p.content_type or "").startswith("text/html")]
    assert len(html) >= 20
    for p in pages:
        assert isinstance(p.status, int)
        assert p.ip == "127.0.0.1"
        assert isinstance(p.fetched_at, datetime.datetime)
        assert p.fetched_at.tzinfo is not None
        assert abs((datetime.datetime.now(datetime.timezone.utc) - p.fetched_at).total_seconds()) < 600
        assert all(isinstance(n, str) and isinstance(v, str) for n, v in p.headers)
        coded += any(n.lower() == "content-encoding" for n, _ in p.headers)
    # Bodies are byte-identical to what synthweb served, decoded.
    for p in html:
        assert p.body == served(web, p.url), p.url
        assert all(link.startswith("http") for link in p.links)
    # (A nofollow page's links are not extracted; most pages have some.)
    assert sum(1 for p in html if p.links) >= len(html) // 2
    assert coded > 0, "no page came content-coded: decoding was not exercised"


def test_unknown_option_is_a_type_error_naming_it(web: Synthweb, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="no_such_flag"):
        trawl.Crawl(seeds=web.seeds, out=str(tmp_path / "c"), no_such_flag=1)
    with pytest.raises(TypeError, match="allow_private_addresses"):
        trawl.Crawl(seeds=web.seeds, out=str(tmp_path / "c"), allow_private_addresses="yes")
    with pytest.raises(ValueError, match="delay-ms"):
        trawl.Crawl(seeds=web.seeds, out=str(tmp_path / "c"), delay_ms="soon")
    with pytest.raises(ValueError, match="memory"):
        trawl.Crawl(seeds=web.seeds, out=str(tmp_path / "c"), memory="1K")


def test_run_releases_the_gil_and_warc_false_writes_none(web: Synthweb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    crawl = trawl.Crawl(seeds=web.seeds, out=out, warc=False, max_pages=40, **options(web))
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    stats = crawl.run()
    done.set()
    t.join()
    assert stats["finish"] == "budget", stats
    assert ticks > 50, "another Python thread did not run during run()"
    assert not list(out.glob("warc/*.warc.gz")), "warc=False wrote WARC files"


def test_accept_link_dropping_a_host_keeps_it_out(web: Synthweb, tmp_path: Path) -> None:
    seed_hosts = {urlsplit(s).hostname for s in web.seeds}
    hosts = [line.split()[0] for line in (web.dir / "hosts.txt").read_text().splitlines()]
    dropped = "h000002.synth.test"
    assert dropped in hosts
    seeds = [s for s in web.seeds if urlsplit(s).hostname != dropped]
    asked: List[str] = []

    def accept(from_url: str, url: str) -> bool:
        asked.append(url)
        return urlsplit(url).hostname != dropped

    out = tmp_path / "crawl"
    with trawl.Crawl(seeds=seeds, out=out, accept_link=accept, **options(web)) as crawl:
        stats = crawl.run()
    assert stats["finish"] == "exhausted"
    assert any(urlsplit(u).hostname == dropped for u in asked), "no link to the host was asked"
    assert seed_hosts, "no seeds"
    log = crawl_log(out)
    assert not [r["url"] for r in log if urlsplit(r["url"]).hostname == dropped]
    assert stats["hook_errors"] == 0


def test_an_exception_in_a_hook_is_counted_and_the_crawl_finishes(
    web: Synthweb, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    calls = 0

    def flaky(from_url: str, url: str) -> bool:
        nonlocal calls
        calls += 1
        if calls % 3 == 0:
            raise RuntimeError("hook failure on purpose")
        return True

    out = tmp_path / "crawl"
    caplog.set_level(logging.ERROR, logger="trawl")
    crawl = trawl.Crawl(seeds=web.seeds, out=out, accept_link=flaky, **options(web))
    stats = crawl.run()
    assert stats["finish"] == "exhausted"
    assert stats["hook_errors"] == crawl.hook_errors == calls // 3 > 0
    logged = [r for r in caplog.records if r.name == "trawl"]
    assert len(logged) == calls // 3
    assert logged[0].exc_info is not None and "on purpose" in str(logged[0].exc_info[1])
    # A link whose hook raised is kept: the crawl is the same as with no hook.
    plain = tmp_path / "plain"
    trawl.Crawl(seeds=web.seeds, out=plain, **options(web)).run()
    assert fetched_urls(out) == fetched_urls(plain)


def test_stop_from_another_thread_checkpoints_and_a_second_crawl_resumes(
    web: Synthweb, tmp_path: Path
) -> None:
    out = tmp_path / "crawl"
    first = trawl.Crawl(seeds=web.seeds, out=out, **options(web, delay_ms=100))
    assert not first.resumed
    stopper = threading.Thread(target=lambda: (time.sleep(1.5), first.stop()))
    stopper.start()
    stats = first.run()
    stopper.join()
    assert stats["finish"] == "stopped", stats
    assert stats["checkpoints"] >= 1
    assert (out / "checkpoint" / "CURRENT").is_file()
    before = fetched_urls(out)
    assert before

    second = trawl.Crawl(out=out, **options(web))
    assert second.resumed
    final = second.run()
    assert final["finish"] == "exhausted", final
    after = fetched_urls(out)
    assert after > before
    # The whole web, as one uninterrupted crawl sees it.
    whole = tmp_path / "whole"
    trawl.Crawl(seeds=web.seeds, out=whole, **options(web)).run()
    assert after == fetched_urls(whole)


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_slow_consumer_pauses_scheduling_within_memory(web: Synthweb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    memory = 128 << 20
    baseline = rss_bytes()
    crawl = trawl.Crawl(seeds=web.seeds, out=out, **options(web, delay_ms=0, timeout_ms=2000))
    peak = baseline
    n = 0
    paused_seen = False
    for page in crawl.pages():
        time.sleep(0.01)
        n += 1
        peak = max(peak, rss_bytes())
        if n == 30:
            # Far behind: the crawl holds back, it does not run ahead of the consumer.
            paused_seen = crawl.stats()["pages"] - n < 64 + 200
    assert paused_seen
    assert peak - baseline <= memory, (peak, baseline)
    log = crawl_log(out)
    # Fetches in flight never waited on the consumer: none timed out.
    assert not [r for r in log if r["outcome"] == "timeout"]
    assert n == len([r for r in log if r["outcome"] == "fetched"])


CHILD = """
import sys, trawl
sys.path.insert(0, {tests!r})
from conftest import options
class Web: pass
web = Web(); web.dir = __import__("pathlib").Path({dir!r})
c = trawl.Crawl(seeds={seeds!r}, out={out!r}, **options(web, delay_ms=200))
try:
    c.run()
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("ended", flush=True)
"""


EXIT_EARLY = """
import sys, trawl
sys.path.insert(0, {tests!r})
from conftest import options
class Web: pass
web = Web(); web.dir = __import__("pathlib").Path({dir!r})
c = trawl.Crawl(seeds={seeds!r}, out={out!r}, **options(web, delay_ms=200))
for n, page in enumerate(c.pages()):
    if n == 3:
        break
print("left", flush=True)
"""


def test_the_interpreter_exit_stops_a_crawl_left_running(web: Synthweb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    script = EXIT_EARLY.format(
        tests=str(Path(__file__).parent), dir=str(web.dir), seeds=web.seeds, out=str(out)
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import json

    stats = json.loads((out / "stats.json").read_text())
    assert stats["finish"] == "stopped", stats
    assert (out / "checkpoint" / "CURRENT").is_file()


def test_sigint_stops_the_crawl_cleanly(web: Synthweb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    script = CHILD.format(
        tests=str(Path(__file__).parent), dir=str(web.dir), seeds=web.seeds, out=str(out)
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not (out / "start.json").is_file():
        assert time.time() < deadline and child.poll() is None, "the crawl did not start"
        time.sleep(0.05)
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    stdout, _ = child.communicate(timeout=60)
    assert child.returncode == 3, stdout
    assert "interrupted" in stdout
    import json

    stats = json.loads((out / "stats.json").read_text())
    assert stats["finish"] == "stopped", stats
    assert (out / "checkpoint" / "CURRENT").is_file()


def test_controls_from_another_thread(web: Synthweb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    crawl = trawl.Crawl(seeds=web.seeds[:1], out=out, **options(web, delay_ms=50))
    assert crawl.stats()["finish"] == "not-started"
    crawl.pause()
    result: Dict[str, Any] = {}
    outcomes: List[Dict[str, Any]] = []

    def operate() -> None:
        while not (out / "start.json").is_file():
            time.sleep(0.02)
        time.sleep(0.5)
        result["paused"] = crawl.stats()
        crawl.resume()
        time.sleep(0.5)
        result["added"] = crawl.add([f"http://h000001.synth.test:{web.port}/"])
        result["epoch"] = crawl.checkpoint()
        result["live"] = crawl.stats()

    t = threading.Thread(target=operate)
    t.start()
    for record in crawl.outcomes():
        outcomes.append(record)
    t.join()
    assert result["paused"]["pages"] == 0 and result["paused"]["finish"] == "running"
    assert result["added"] == 1
    assert isinstance(result["epoch"], int) and result["epoch"] >= 1
    assert result["live"]["finish"] == "running"
    final = crawl.stats()
    assert final["finish"] == "exhausted"
    # The outcome stream is the crawl log, record for record (the shards' order: the
    # log interleaves their batches).
    log = crawl_log(out)
    key = lambda r: (r["url"], r["outcome"], r.get("status") or 0)  # noqa: E731
    assert sorted(map(key, outcomes)) == sorted(map(key, log))
    assert any(urlsplit(r["url"]).hostname == "h000001.synth.test" for r in log)
