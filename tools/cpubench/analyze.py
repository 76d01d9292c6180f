#!/usr/bin/env python3
"""The CPU-per-page benchmark's bookkeeping (tools/cpubench/run.sh).

  analyze.py record RESULTS_DIR key=value...   (case tool run rc log time nginx_cpu load ...)
  analyze.py summary RESULTS_DIR

`record` reads one crawl's nginx access log (tab-separated: address, status, bytes,
content type, method, URI, agent) and /usr/bin/time's line, and appends one JSON line to
RESULTS_DIR/results.jsonl. `summary` prints the medians per case and crawler (profiled
crawls left out), issue 20's three ratios, and issue 28's WARC path: per case and build,
median(CPU µs/page, WARC on) - median(CPU µs/page, --no-warc), with the per-run paired
differences; with a build B, also B ÷ A of the WARC path, of no-WARC CPU and of the WARC
bytes a page.
"""
import json
import os
import re
import statistics
import sys

LOG_FIELDS = ("addr", "status", "bytes", "ctype", "method", "uri", "agent")


def parse_kv(args):
    out = {}
    for a in args:
        k, _, v = a.partition("=")
        out[k] = v
    return out


def parse_time(path):
    """/usr/bin/time -f 'wall=%e user=%U sys=%S maxrss_kb=%M' (the last such line)."""
    wall = cpu = rss = None
    with open(path) as f:
        for line in f:
            m = re.search(r"wall=([\d.]+) user=([\d.]+) sys=([\d.]+) maxrss_kb=(\d+)", line)
            if m:
                wall = float(m.group(1))
                cpu = float(m.group(2)) + float(m.group(3))
                rss = int(m.group(4))
    if wall is None:
        raise SystemExit(f"analyze: no time line in {path}")
    return wall, cpu, rss


def record(out_dir, a):
    pages = requests = html_bytes = 0
    with open(a["log"], errors="replace") as f:
        for line in f:
            row = dict(zip(LOG_FIELDS, line.rstrip("\n").split("\t")))
            requests += 1
            if row.get("status") == "200" and row.get("ctype", "").startswith("text/html"):
                pages += 1
                html_bytes += int(row.get("bytes", "0") or 0)
    wall, cpu, rss = parse_time(a["time"])
    r = {
        "case": a["case"], "tool": a["tool"], "run": int(a["run"]), "rc": int(a["rc"]),
        "profiled": a.get("profiled", "0") not in ("", "0"),
        "pages": pages, "requests": requests, "html_bytes_sent": html_bytes,
        "wall_s": wall, "cpu_s": cpu, "peak_rss_kb": rss,
        "pages_per_s": pages / wall if wall > 0 else 0.0,
        "cpu_us_per_page": cpu * 1e6 / pages if pages else None,
        "nginx_cpu_s": float(a.get("nginx_cpu") or 0),
        "nginx_cpu_us_per_page": float(a.get("nginx_cpu") or 0) * 1e6 / pages if pages else None,
        "warc_bytes": int(a.get("warc_bytes") or 0),
        "load": a.get("load", ""),
    }
    if a.get("ir"):
        # CALLGRIND=1: user-space instructions of the whole process (all threads).
        r["ir"] = int(a["ir"])
        r["ir_per_page"] = int(a["ir"]) / pages if pages else None
    with open(os.path.join(out_dir, "results.jsonl"), "a") as f:
        f.write(json.dumps(r) + "\n")
    print(f"  {r['case']} {r['tool']} run {r['run']}: {pages} pages, {wall:.2f} s, "
          f"{r['pages_per_s']:.0f} pages/s, {r['cpu_us_per_page'] or 0:.0f} us CPU/page, "
          f"nginx {r['nginx_cpu_us_per_page'] or 0:.0f} us/page, rc {r['rc']}"
          + (f", {r['ir_per_page']:,.0f} Ir/page" if r.get("ir_per_page") else ""), file=sys.stderr)


def load(out_dir):
    with open(os.path.join(out_dir, "results.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def medians(rows):
    """{(case, tool): {field: median}} over the unprofiled crawls."""
    groups = {}
    for r in rows:
        if not r.get("profiled"):
            groups.setdefault((r["case"], r["tool"]), []).append(r)
    out = {}
    for key, rs in groups.items():
        m = {f: med([r[f] for r in rs]) for f in
             ("pages", "requests", "html_bytes_sent", "wall_s", "cpu_s", "pages_per_s", "cpu_us_per_page",
              "nginx_cpu_us_per_page", "peak_rss_kb", "warc_bytes")}
        m["n"] = len(rs)
        m["rc"] = sorted({r["rc"] for r in rs})
        m["load"] = [r["load"].split()[0] for r in rs if r.get("load")]
        out[key] = m
    return out


def fmt(x, nd=0):
    if x is None:
        return "—"
    return f"{x:,.{nd}f}"


def by_run(rows, case):
    """The timed (not profiled) rows of a case: run -> tool -> row."""
    by = {}
    for r in rows:
        if r["case"] == case and not r.get("profiled"):
            by.setdefault(r["run"], {})[r["tool"]] = r
    return by


def paired(rows, case, num_tool, den_tool, field):
    """Per run: num_tool's field / den_tool's field in the same run; the median."""
    by = by_run(rows, case)
    xs = []
    for run in sorted(by):
        d = by[run]
        if num_tool in d and den_tool in d and d[num_tool][field] and d[den_tool][field]:
            xs.append(d[num_tool][field] / d[den_tool][field])
    return xs


def paired_diff(rows, case, a_tool, b_tool, field):
    """Per run: a_tool's field - b_tool's field in the same run."""
    by = by_run(rows, case)
    xs = []
    for run in sorted(by):
        d = by[run]
        if a_tool in d and b_tool in d and d[a_tool][field] is not None and d[b_tool][field] is not None:
            xs.append(d[a_tool][field] - d[b_tool][field])
    return xs


def warc_path(rows, m, cases):
    """Issue 28: the WARC path, WARC on minus --no-warc, in CPU µs a page."""
    def sub(a, b):
        return a - b if a is not None and b is not None else None

    def ratio(a, b):
        return a / b if a is not None and b else None

    def per_page(x):
        return x["warc_bytes"] / x["pages"] if x and x["pages"] else None

    print()
    print("Issue 28's WARC path = median(WARC) - median(no-WARC), CPU µs/page (per-run paired "
          "differences in brackets; goal on static20-identity: ≤ 60 and ≤ 0.5 of the old build's):")
    print()
    print("| case | build | no-WARC µs/page | WARC µs/page | WARC path µs/page | wget2 µs/page | "
          "WARC bytes/page | pages (no-WARC / WARC) |")
    print("|---|---|---:|---:|---|---:|---:|---|")
    wp = {}
    for c in cases:
        g = m.get((c, "wget2"))
        for sfx, build in (("", "A"), (".b", "B")):
            n, w = m.get((c, "trawl" + sfx)), m.get((c, "trawl-warc" + sfx))
            if not (n and w):
                continue
            d = sub(w["cpu_us_per_page"], n["cpu_us_per_page"])
            wp[(c, build)] = d
            xs = paired_diff(rows, c, "trawl-warc" + sfx, "trawl" + sfx, "cpu_us_per_page")
            print(f"| {c} | {build} | {fmt(n['cpu_us_per_page'])} | {fmt(w['cpu_us_per_page'])} | "
                  f"{fmt(d)} [{', '.join(f'{x:.0f}' for x in xs)}] | "
                  f"{fmt(g['cpu_us_per_page']) if g else '—'} | {fmt(per_page(w))} | "
                  f"{fmt(n['pages'])} / {fmt(w['pages'])} |")
    if any(k[1] == "B" for k in wp):
        print()
        print("Build B ÷ build A (goals: WARC path ≤ 0.5, no-WARC ≤ 0.75, WARC bytes/page ≤ 1.05):")
        print()
        print("| case | WARC path B ÷ A | no-WARC CPU B ÷ A | WARC bytes/page B ÷ A |")
        print("|---|---:|---:|---:|")
        for c in cases:
            if (c, "A") not in wp or (c, "B") not in wp:
                continue
            na, nb = m.get((c, "trawl")), m.get((c, "trawl.b"))
            wa, wb = m.get((c, "trawl-warc")), m.get((c, "trawl-warc.b"))
            print(f"| {c} | {fmt(ratio(wp[(c, 'B')], wp[(c, 'A')]), 2)} | "
                  f"{fmt(ratio(nb['cpu_us_per_page'], na['cpu_us_per_page']), 2)} | "
                  f"{fmt(ratio(per_page(wb), per_page(wa)), 3)} |")


def summary(out_dir):
    rows = load(out_dir)
    m = medians(rows)
    cases = []
    for r in rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    tools = ("trawl", "trawl.b", "trawl-warc", "trawl-warc.b", "wget2")
    names = {"trawl": "trawl --no-warc", "trawl-warc": "trawl (WARC)",
             "trawl.b": "trawl B --no-warc", "trawl-warc.b": "trawl B (WARC)"}
    print("| case | crawler | runs | HTML pages | requests | KB a page (as sent) | wall s | pages/s | CPU µs/page | "
          "nginx CPU µs/page | peak RSS MB | load (1 min) at start |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cases:
        for t in tools:
            x = m.get((c, t))
            if not x:
                continue
            name = names.get(t, t)
            rc = "" if x["rc"] == [0] else f" (rc {x['rc']})"
            print(f"| {c} | {name}{rc} | {x['n']} | {fmt(x['pages'])} | {fmt(x['requests'])} | "
                  f"{fmt(x['html_bytes_sent'] / 1024 / x['pages'] if x['pages'] else None, 1)} | {fmt(x['wall_s'], 2)} | {fmt(x['pages_per_s'])} | {fmt(x['cpu_us_per_page'])} | "
                  f"{fmt(x['nginx_cpu_us_per_page'])} | {fmt(x['peak_rss_kb'] / 1024 if x['peak_rss_kb'] else None)} | "
                  f"{' '.join(x['load'])} |")
    print()
    print("Issue 20's acceptance figures (medians; per-run paired ratios in brackets):")
    print()
    print("| case | build | (a) WARC pages/s ÷ no-WARC pages/s (goal ≥ 0.75) | (b) CPU µs/page, WARC on (goal ≤ 200) "
          "| (c) no-WARC CPU/page ÷ wget2's (goal ≤ 0.33) | WARC CPU/page ÷ wget2's |")
    print("|---|---|---|---|---|---|")

    def ratio(a, b):
        return a / b if a and b else None

    def pr(xs):
        return "[" + ", ".join(f"{x:.2f}" for x in xs) + "]"

    def mark(x, ok):
        return "" if x is None else (" ✓" if ok(x) else " ✗")

    for c in cases:
        for sfx, build in (("", "A"), (".b", "B")):
            tn, tw = "trawl" + sfx, "trawl-warc" + sfx
            w, n, g = m.get((c, tw)), m.get((c, tn)), m.get((c, "wget2"))
            if not (w and n):
                continue
            a = ratio(w["pages_per_s"], n["pages_per_s"])
            ap = paired(rows, c, tw, tn, "pages_per_s")
            b = w["cpu_us_per_page"]
            cc = ratio(n["cpu_us_per_page"], g["cpu_us_per_page"]) if g else None
            cp = paired(rows, c, tn, "wget2", "cpu_us_per_page") if g else []
            d = ratio(w["cpu_us_per_page"], g["cpu_us_per_page"]) if g else None
            print(f"| {c} | {build} | {fmt(a, 2)}{mark(a, lambda v: v >= 0.75)} {pr(ap)} | "
                  f"{fmt(b)}{mark(b, lambda v: v <= 200)} | "
                  f"{fmt(cc, 2)}{mark(cc, lambda v: v <= 1 / 3)} {pr(cp)} | {fmt(d, 2)} |")
    if any(r["tool"].endswith(".b") for r in rows):
        print()
        print("Build B ÷ build A (medians; per-run paired ratios in brackets):")
        print()
        print("| case | WARC | CPU µs/page A | B | B ÷ A | pages/s A | B | B ÷ A |")
        print("|---|---|---:|---:|---|---:|---:|---|")
        for c in cases:
            for t, warc in (("trawl", "off"), ("trawl-warc", "on")):
                x, y = m.get((c, t)), m.get((c, t + ".b"))
                if not (x and y):
                    continue
                cr = ratio(y["cpu_us_per_page"], x["cpu_us_per_page"])
                rr = ratio(y["pages_per_s"], x["pages_per_s"])
                print(f"| {c} | {warc} | {fmt(x['cpu_us_per_page'])} | {fmt(y['cpu_us_per_page'])} | "
                      f"{fmt(cr, 2)} {pr(paired(rows, c, t + '.b', t, 'cpu_us_per_page'))} | "
                      f"{fmt(x['pages_per_s'])} | {fmt(y['pages_per_s'])} | "
                      f"{fmt(rr, 2)} {pr(paired(rows, c, t + '.b', t, 'pages_per_s'))} |")
    warc_path(rows, m, cases)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cmd, out_dir = sys.argv[1], sys.argv[2]
    if cmd == "record":
        record(out_dir, parse_kv(sys.argv[3:]))
    elif cmd == "summary":
        summary(out_dir)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
