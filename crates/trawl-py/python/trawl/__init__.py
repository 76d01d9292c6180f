"""trawl: a memory-bounded, polite web crawler, embedded in Python.

The crawl runs in this process, in Rust threads; Python sees its pages, its crawl-log
records and its figures, and decides which links to follow. See docs/python.md.

    import trawl

    with trawl.Crawl(seeds=["https://example.org/"], out="crawl", delay_ms=1000) as c:
        for page in c.pages():
            print(page.status, page.url, len(page.body))
"""

from trawl._trawl import VERSION, Crawl, OutcomeStream, Page, PageStream

__version__ = VERSION

__all__ = ["Crawl", "Page", "PageStream", "OutcomeStream", "VERSION", "__version__"]
