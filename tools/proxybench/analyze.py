#!/usr/bin/env python3
"""Summary of tools/proxybench/run.sh: one line a crawl in results.jsonl, medians per case.

    python3 tools/proxybench/analyze.py --results WORK/results.jsonl [--markdown]

Per case (direct, squid, socks5, socks5h), medians over its runs: pages, wall seconds,
trawl's CPU per page (user+sys / stats.json pages, in µs), the proxy's own CPU per page,
their sum, and the ratios to the direct crawl: of medians, and paired per run (each
proxied crawl against the direct crawl of the same run, then the median of those).
"route ok" is the share of synthweb's requests that came from the case's egress address
(127.0.0.1 direct, 127.0.0.9 squid, 127.0.0.10 microsocks).
"""

import argparse
import json
import statistics

EGRESS = {"direct": "127.0.0.1", "squid": "127.0.0.9", "socks5": "127.0.0.10", "socks5h": "127.0.0.10"}
ORDER = ["direct", "squid", "socks5", "socks5h"]


def us(sec, pages):
    return sec / pages * 1e6 if pages else float("nan")


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--markdown", action="store_true", help="a Markdown table only")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.results) if l.strip()]
    rows = [r for r in rows if not r.get("wrap")]   # diagnostic runs (WRAP) are not timed
    cases = sorted({r["case"] for r in rows}, key=lambda c: ORDER.index(c) if c in ORDER else 99)
    by = {c: [r for r in rows if r["case"] == c] for c in cases}
    direct = {r["run"]: r for r in by.get("direct", [])}

    def trawl_us(r):
        return us(r["trawl_cpu_s"], r["pages"])

    def proxy_us(r):
        return us(r["proxy_cpu_s"], r["pages"])

    def total_us(r):
        return trawl_us(r) + proxy_us(r)

    out = []
    head = ("| case | runs | pages | server requests | server conns | route ok | wall s | trawl CPU µs/page | "
            "÷ direct (paired) | proxy CPU µs/page | trawl + proxy µs/page | ÷ direct (paired) | load |")
    out.append(head)
    out.append("|" + "---|" * 2 + "---:|" * 11)
    d_trawl = med([trawl_us(r) for r in by.get("direct", [])])
    for c in cases:
        rs = by[c]
        pages = sorted({r["pages"] for r in rs})
        reqs = sorted({r["server_requests"] for r in rs})
        conns = med([r.get("server_connections", float("nan")) for r in rs])
        ok = [r["server_requests_by_source"].get(EGRESS.get(c, "?"), 0) / r["server_requests"]
              for r in rs if r["server_requests"]]
        t = med([trawl_us(r) for r in rs])
        p = med([proxy_us(r) for r in rs])
        tot = med([total_us(r) for r in rs])
        paired_t = med([trawl_us(r) / trawl_us(direct[r["run"]]) for r in rs if r["run"] in direct])
        paired_tot = med([total_us(r) / trawl_us(direct[r["run"]]) for r in rs if r["run"] in direct])
        loads = [r["load1"] for r in rs]
        bad = [r["rc"] for r in rs if r["rc"] != 0]
        out.append(
            f"| {c}{' (rc ' + ','.join(map(str, bad)) + ')' if bad else ''} | {len(rs)} "
            f"| {'/'.join(f'{x:,}' for x in pages)} | {'/'.join(f'{x:,}' for x in reqs)} | {conns:,.0f} "
            f"| {min(ok) * 100 if ok else float('nan'):.0f} % "
            f"| {med([r['wall_s'] for r in rs]):.2f} | {t:.0f} "
            f"| {t / d_trawl:.2f} ({paired_t:.2f}) | {p:.0f} | {tot:.0f} "
            f"| {tot / d_trawl:.2f} ({paired_tot:.2f}) | {min(loads):.1f}-{max(loads):.1f} |")
    if not a.markdown:
        out.append("")
        out.append("per crawl (run: trawl µs/page + proxy µs/page, wall s, load):")
        for c in cases:
            cells = [f"{r['run']}: {trawl_us(r):.0f} + {proxy_us(r):.0f}, {r['wall_s']:.2f} s, {r['load1']:.1f}"
                     for r in sorted(by[c], key=lambda r: r["run"])]
            out.append(f"  {c}: " + "; ".join(cells))
    print("\n".join(out))


if __name__ == "__main__":
    main()
