"""trawl: a memory-bounded, polite web crawler, embedded in Python (docs/python.md)."""

import datetime
import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

VERSION: str
__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Option = Union[bool, int, float, str, "os.PathLike[str]", Sequence[Union[int, float, str]], None]

class Page:
    """One fetched response (any status), as the crawl log records it `fetched`."""

    @property
    def url(self) -> str:
        """The URL fetched."""
    @property
    def status(self) -> int:
        """The HTTP status code."""
    @property
    def headers(self) -> List[Tuple[str, str]]:
        """The header fields in order, as (name, value) pairs; values as Latin-1."""
    @property
    def body(self) -> bytes:
        """The body, decoded as the crawl decodes it (gzip, deflate, br)."""
    @property
    def links(self) -> List[str]:
        """The links found on the page (canonical URLs), before filters."""
    @property
    def fetched_at(self) -> datetime.datetime:
        """When the response was recorded (UTC, the crawl log's time)."""
    @property
    def ip(self) -> Optional[str]:
        """The server address the response came from, when known."""
    @property
    def content_type(self) -> Optional[str]:
        """The Content-Type header, when present."""

class PageStream(Iterator[Page]):
    """The pages of a crawl as they finish; iterating drives the crawl."""

    def __iter__(self) -> "PageStream": ...
    def __next__(self) -> Page: ...

class OutcomeStream(Iterator[Dict[str, Any]]):
    """The crawl-log records of a crawl as dicts (fields as in crawl.log.jsonl)."""

    def __iter__(self) -> "OutcomeStream": ...
    def __next__(self) -> Dict[str, Any]: ...

class Crawl:
    """A crawl of `seeds` into the directory `out`.

    The keyword options are `trawl crawl`'s flags with Python names (`delay_ms=500` is
    `--delay-ms 500`; `True` gives a switch, `warc=False` is `--no-warc`, a list
    repeats a flag, `from_=` is `--from`); an unknown one raises `TypeError` naming
    it, a bad value `ValueError`. An `out` holding an earlier crawl resumes it.

    `accept_link(from_url, url)` is asked about each new link that passed the
    filters, once per page for all its links; a falsy answer drops the link. An
    exception is logged (logger `trawl`, with its traceback), counted in
    `hook_errors`, and the link kept.

    Every method may be called from another thread. Used as a context manager, the
    crawl is stopped (final checkpoint) on leaving the block.
    """

    def __init__(
        self,
        seeds: Optional[Sequence[str]] = None,
        out: Optional[_Path] = None,
        accept_link: Optional[Callable[[str, str], object]] = None,
        **options: _Option,
    ) -> None: ...
    def run(self) -> Dict[str, Any]:
        """Runs the crawl to its end without holding the GIL; the final stats.
        Ctrl-C stops it cleanly (final checkpoint), then raises KeyboardInterrupt."""
    def pages(self) -> PageStream:
        """The fetched pages as they finish, starting the crawl. Bounded: while the
        consumer is behind, the crawl starts no new fetch."""
    def outcomes(self) -> OutcomeStream:
        """The crawl-log records as dicts, starting the crawl."""
    def stats(self) -> Dict[str, Any]:
        """The stats.json content as of now (`finish` is `running` while it runs),
        with `hook_errors`; `{"finish": "not-started", ...}` before the start."""
    def add(self, urls: Sequence[str]) -> int:
        """Hands URLs to the running crawl (as `trawl add`); how many."""
    def pause(self) -> None:
        """Starts no new fetch until resume(); fetches in flight finish."""
    def resume(self) -> None:
        """Ends a pause()."""
    def checkpoint(self) -> Optional[int]:
        """Writes a checkpoint; its epoch, or None if none committed within 10 s."""
    def stop(self) -> None:
        """Stops the crawl: no new fetch, a final checkpoint, then the end."""
    @property
    def out(self) -> str:
        """The output directory."""
    @property
    def resumed(self) -> bool:
        """Whether this crawl continues one found in `out`."""
    @property
    def hook_errors(self) -> int:
        """Exceptions raised by accept_link so far."""
    def __enter__(self) -> "Crawl": ...
    def __exit__(self, *exc: object) -> bool: ...
