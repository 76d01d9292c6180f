"""Fixtures of the Python package's tests: a synthweb server on loopback (the
workspace's test server, as tests/crawl_support/ starts it for the Rust tests), the
crawl options that point trawl at it, and the crawl log read back.

synthweb is found at $SYNTHWEB (set by `make pytest`), else next to the debug build.
Under CI=true a missing piece (synthweb, the package) fails; it never skips.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[3]


def synthweb_bin() -> Path:
    env = os.environ.get("SYNTHWEB")
    if env:
        return Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "synthweb"


class Synthweb:
    """A synthweb child serving `args` in `dir`; `hosts.txt` and `seeds.txt` there."""

    def __init__(self, dir: Path, args: List[str]) -> None:
        self.dir = dir
        dir.mkdir(parents=True, exist_ok=True)
        binary = synthweb_bin()
        if not binary.is_file():
            pytest.fail(
                f"synthweb not found at {binary}: build it (`cargo build -p synthweb`) "
                "or set SYNTHWEB=/path/to/synthweb"
            )
        self.proc = subprocess.Popen(
            [str(binary), "--port", "0", "--hosts-file", "hosts.txt", "--seeds", "seeds.txt", *args],
            cwd=dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        ready = json.loads(self.proc.stdout.readline())
        assert ready["ready"] is True, ready
        self.port: int = ready["http_port"]
        self.seeds = [
            line.strip()
            for line in (dir / "seeds.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")
        ]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synthweb]:
    """Three hosts of 20-40 pages (tests/crawl_support's ADD_WORLD)."""
    sw = Synthweb(
        tmp_path_factory.mktemp("web"),
        ["--hosts", "3", "--pages-per-host", "20-40", "--out-degree", "5-15"],
    )
    yield sw
    sw.stop()


def options(sw: Synthweb, **extra: Any) -> Dict[str, Any]:
    """The crawl options for `sw` (tests/crawl_support's crawl_args, in Python names)."""
    opts: Dict[str, Any] = dict(
        hosts_file=str(sw.dir / "hosts.txt"),
        allow_private_addresses=True,
        from_="ops@example.org",
        delay_ms=20,
        max_crawl_delay_secs=0,
        robots_retry_secs=1,
        max_retry_after_secs=1,
        timeout_ms=4000,
        seen_capacity=100_000,
        progress_secs=0,
        memory="128M",
    )
    opts.update(extra)
    return opts


def crawl_log(out: Path) -> List[Dict[str, Any]]:
    """Every crawl-log record of the crawl in `out`, in order."""
    text = (out / "crawl.log.jsonl").read_text()
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert records, f"empty crawl log in {out}"
    return records
