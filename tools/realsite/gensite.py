#!/usr/bin/env python3
"""Generates the `static` site of the real-site benchmark: HOSTS hosts (one directory
per loopback address, 127.0.0.31 upwards), about PAGES pages in all, each 10-30 KB,
linked the way a news or documentation site is linked.

Per host: a home page, sections with paginated listings (40 articles a listing page),
articles that link to related articles on the same host (relative, root-relative and
absolute forms), to articles on other hosts of the set (absolute URLs), to real sites
outside the set (out of scope: the crawl runs in a network namespace anyway), to pages
that do not exist (404s), to a private area robots.txt disallows (a few pages of which
an `Allow` line lets back in), to print views, downloads and query-string variants that
robots.txt disallows with `*` and `$` rules. Every article is reachable through the
listings, so a complete crawler reaches every page robots.txt allows.

Deterministic (fixed seed): the same arguments give the same bytes, so a generated site
is reused between benchmark runs (a stamp file records the arguments).

Usage: gensite.py [--page-bytes N] [--links N] [--dup-percent N] OUT_DIR HOSTS PAGES FIRST_OCTET

  --page-bytes N  every page about N bytes (the filler stops at the first paragraph
                  that reaches N) instead of 10-30 KB at random (10 KB for the about
                  and print pages)
  --links N       every article carries N `<a>` links in all: the 15 fixed ones (skip,
                  11 in the nav bar, 3 in the footer) and N-15 in the body: the body's
                  usual extras (other hosts, the real web, 404s, private, downloads,
                  query strings, #comments) drawn as without the flag, then related
                  articles on the same host (same three link forms) to make up the count
  --dup-percent N N articles in 100 (spread evenly, no random draw) get a byte-identical
                  copy, `copy-NAME` beside the article (same directory, so its relative
                  links still resolve), linked from the listing after the article: the
                  payloads a crawler writes as WARC revisit records (the site has that
                  many more pages than PAGES)
Without any flag the site is byte for byte what it was before the flags existed (no
extra draws from the random generator), so existing sites and their stamps stay valid.
"""
import os
import random
import sys

WORDS = (
    "crawler frontier robots politeness fetch page host link queue shard parser "
    "archive record header body status cache index section article report market "
    "river mountain garden library museum station harbour bridge council budget "
    "season festival orchestra theatre science climate energy transport health "
    "school museum election weather football history travel recipe review column "
    "the of and to in a is that for on with as was by at from this be are which"
).split()

SECTIONS = ["news", "science", "culture", "sport", "travel", "tech", "health",
            "business", "opinion", "food"]
EXTERNAL = ["https://www.example.org/story/{}", "https://en.wikipedia.org/wiki/Item_{}",
            "https://news.ycombinator.com/item?id={}", "http://www.gnu.org/page{}.html"]
PRIVATE_PAGES = 15       # per host, under /private/ (disallowed)
PUBLIC_PRIVATE = 3       # of which /private/public-N.html (allowed by a longer rule)
PER_LISTING = 40
FIXED_LINKS = 15         # in every page: skip + home + 10 sections in the header, 3 in the footer

ROBOTS = """# realsite benchmark, static site
User-agent: *
Disallow: /private/
Allow: /private/public-
Disallow: /*.zip$
Disallow: /*?*
Disallow: /*/print.html$
Disallow: /about.html
Allow: /about.html
"""


def filler(rng, nbytes):
    out, n = [], 0
    while n < nbytes:
        sent = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20)))
        para = "<p>" + sent.capitalize() + ".</p>\n"
        out.append(para)
        n += len(para)
    return "".join(out)


def page(title, host, nav_links, body_links, rng, size):
    head = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title>\n"
            f"<link rel=\"stylesheet\" href=\"/static/site.css\">\n"
            f"<link rel=\"icon\" href=\"/static/favicon.png\">\n"
            f"<script src=\"/static/site.js\"></script></head>\n<body>\n"
            f"<header><img src=\"/static/logo.png\" alt=\"logo\"><a href=\"#main\">skip</a> "
            + " ".join(f"<a href=\"{h}\">{t}</a>" for h, t in nav_links)
            + "</header>\n<main id=\"main\">\n<h1>" + title + "</h1>\n")
    links = "<ul>\n" + "".join(f"<li><a href=\"{h}\">{t}</a></li>\n" for h, t in body_links) + "</ul>\n"
    foot = (f"<footer><a href=\"mailto:desk@{host}\">contact</a> "
            f"<a href=\"javascript:void(0)\">top</a> <a href=\"/about.html\">about</a></footer>\n"
            "</main></body></html>\n")
    used = len(head) + len(links) + len(foot)
    return head + filler(rng, max(0, size - used)) + links + foot


def parse_args(argv):
    """Optional flags before the four positionals; returns (flags, positionals)."""
    flags = {"page_bytes": None, "links": None, "dup_percent": None}
    args = list(argv)
    while args and args[0].startswith("--"):
        name = args.pop(0)
        key = {"--page-bytes": "page_bytes", "--links": "links",
               "--dup-percent": "dup_percent"}.get(name)
        if key is None or not args:
            raise SystemExit(__doc__)
        flags[key] = int(args.pop(0))
    if len(args) != 4:
        raise SystemExit(__doc__)
    if flags["links"] is not None and flags["links"] <= FIXED_LINKS:
        raise SystemExit(f"gensite: --links must be more than {FIXED_LINKS} (the fixed links)")
    if flags["dup_percent"] is not None and not 0 <= flags["dup_percent"] <= 100:
        raise SystemExit("gensite: --dup-percent must be 0 to 100")
    return flags, args


def main():
    flags, (out, nhosts, total, first) = parse_args(sys.argv[1:])
    nhosts, total, first = int(nhosts), int(total), int(first)
    page_bytes, nlinks, dup = flags["page_bytes"], flags["links"], flags["dup_percent"] or 0

    def size(rng):
        """A page's size: --page-bytes, else 10-30 KB at random (one draw, as always)."""
        return page_bytes if page_bytes is not None else rng.randint(10240, 30720)

    def small():
        """The about and print pages: 10 KB, or --page-bytes."""
        return page_bytes if page_bytes is not None else 10240

    rng = random.Random(11)
    hosts = [f"127.0.0.{first + i}" for i in range(nhosts)]
    per_host = total // nhosts
    # Articles per host so that home + listings + articles + private + about = per_host.
    nsec = len(SECTIONS)
    articles = per_host - 2 - PRIVATE_PAGES - nsec  # minus print views (1 a section)
    while True:
        per_sec = -(-articles // nsec)
        listings = nsec * -(-per_sec // PER_LISTING)
        if 2 + articles + listings + PRIVATE_PAGES + nsec <= per_host:
            break
        articles -= 1
    def copy_of(i, p):
        """The path of article i's copy (--dup-percent), or None. Articles go round the
        sections, so i // nsec is the rank in its section: the k-th article of every
        section is copied when the running count of copies, k * dup / 100, steps up at k."""
        k = i // nsec
        if (k + 1) * dup // 100 == k * dup // 100:
            return None
        d, name = p.rsplit("/", 1)
        return f"{d}/copy-{name}"

    # Article paths per host: /SECTION/SLUG-ID.html
    arts = {}
    for h in hosts:
        lst = []
        for i in range(articles):
            sec = SECTIONS[i % nsec]
            slug = "-".join(rng.choice(WORDS) for _ in range(3))
            lst.append((sec, f"/{sec}/{slug}-{i}.html"))
        arts[h] = lst
    count = 0
    for hi, h in enumerate(hosts):
        root = os.path.join(out, h)
        for d in SECTIONS + ["private", "static"]:
            os.makedirs(os.path.join(root, d), exist_ok=True)
        with open(os.path.join(root, "robots.txt"), "w") as f:
            f.write(ROBOTS)
        with open(os.path.join(root, "static", "site.css"), "w") as f:
            f.write("body{font:16px serif;max-width:50em;margin:auto}\n")
        with open(os.path.join(root, "static", "site.js"), "w") as f:
            f.write("/* nothing */\n")
        with open(os.path.join(root, "static", "logo.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + bytes(64))
        with open(os.path.join(root, "static", "favicon.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + bytes(32))
        nav = [("/", "home")] + [(f"/{s}/", s) for s in SECTIONS]
        files = {}
        # Home: the sections, the newest articles, the other hosts' homes.
        body = [(p, p) for _, p in arts[h][:30]]
        body += [(f"http://{o}/", o) for o in hosts if o != h][:5]
        body += [(f"http://{h}/private/public-0.html", "public notes")]
        files["/index.html"] = page(f"{h} home", h, nav, body, rng, size(rng))
        files["/about.html"] = page(f"about {h}", h, nav, [("/", "home")], rng, small())
        by_sec = {s: [p for sec, p in arts[h] if sec == s] for s in SECTIONS}
        copies = {p: copy_of(i, p) for i, (_, p) in enumerate(arts[h])}
        for s in SECTIONS:
            items = by_sec[s]
            npages = -(-len(items) // PER_LISTING)
            for k in range(npages):
                chunk = items[k * PER_LISTING:(k + 1) * PER_LISTING]
                body = [(p.rsplit("/", 1)[1], p) for p in chunk]  # relative form
                if dup:  # each copy after its article
                    body = [link for p in chunk for link in
                            [(p.rsplit("/", 1)[1], p)]
                            + ([(copies[p].rsplit("/", 1)[1], copies[p])] if copies[p] else [])]
                if k + 1 < npages:
                    body.append((f"page-{k + 2}.html", "next"))
                if k > 0:
                    body.append(("index.html" if k == 1 else f"page-{k}.html", "previous"))
                body.append(("print.html", "print view"))
                name = "/index.html" if k == 0 else f"/page-{k + 1}.html"
                files[f"/{s}{name}"] = page(f"{s} ({k + 1})", h, nav, body, rng,
                                            size(rng))
            files[f"/{s}/print.html"] = page(f"{s} print", h, nav, [], rng, small())
        for j in range(PRIVATE_PAGES):
            name = f"/private/public-{j}.html" if j < PUBLIC_PRIVATE else f"/private/memo-{j}.html"
            files[name] = page(f"private {j}", h, nav, [("/private/public-0.html", "notes")],
                               rng, size(rng))
        for i, (sec, p) in enumerate(arts[h]):
            def related(n):  # same host, three link forms
                out = []
                for _ in range(n):
                    _, q = rng.choice(arts[h])
                    form = rng.random()
                    if form < 0.4 and q.split("/")[1] == sec:
                        out.append((q.rsplit("/", 1)[1], "related"))
                    elif form < 0.7:
                        out.append((q, "related"))
                    else:
                        out.append((f"http://{h}{q}", "related"))
                return out

            def extras():
                out = []
                for _ in range(rng.randint(1, 4)):  # other hosts of the set
                    o = hosts[rng.randrange(nhosts)]
                    _, q = rng.choice(arts[o])
                    out.append((f"http://{o}{q}", "elsewhere"))
                for _ in range(rng.randint(0, 2)):  # the real web, out of scope
                    out.append((rng.choice(EXTERNAL).format(rng.randint(1, 99999)), "external"))
                if rng.random() < 0.03:  # a broken link
                    out.append((f"/{sec}/gone-{rng.randint(1, 300)}.html", "archived story"))
                if rng.random() < 0.10:  # a private page (most disallowed)
                    if rng.random() < 0.3:
                        q = f"/private/public-{rng.randrange(PUBLIC_PRIVATE)}.html"
                    else:
                        q = f"/private/memo-{rng.randrange(PUBLIC_PRIVATE, PRIVATE_PAGES)}.html"
                    out.append((q, "memo"))
                if rng.random() < 0.05:
                    out.append((f"/downloads/data-{i}.zip", "data"))
                if rng.random() < 0.10:
                    out.append((f"{p}?ref=share&i={i}", "share"))
                out.append((f"{p}#comments", "comments"))
                return out

            if nlinks is None:  # the original order of draws: related first
                rel = related(rng.randint(8, 20))
                body = rel + extras()
            else:  # the extras first, then related articles up to --links in all
                ex = extras()
                body = related(max(0, nlinks - FIXED_LINKS - len(ex))) + ex
            files[p] = page(p.rsplit("/", 1)[1][:-5].replace("-", " "), h, nav, body, rng,
                            size(rng))
            if copies[p]:
                files[copies[p]] = files[p]
        for path, text in files.items():
            with open(os.path.join(root, path.lstrip("/")), "w") as f:
                f.write(text)
        count += len(files)
        print(f"gensite: {h}: {len(files)} pages", file=sys.stderr)
    print(f"gensite: {count} pages on {nhosts} hosts in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
