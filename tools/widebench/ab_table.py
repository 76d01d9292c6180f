#!/usr/bin/env python3
"""The old/new table of tools/widebench/ab.sh: one row per run (WORK dirs named
CASE-N-BUILD), then the median per case and build (the mean of two runs), and the
new/old ratio of the wall times. Figures from report.json (wall time, floor, coverage,
robots.txt per origin), run.json (trawl's CPU, peak RSS) and trawl-out/stats.json (pages,
robots.txt fetches, peak RSS less the presence bits, and the width counters)."""
import json
import os
import re
import statistics
import sys
from collections import defaultdict


def load(p):
    try:
        return json.load(open(p))
    except (FileNotFoundError, ValueError):
        return {}


def row(work):
    name = os.path.basename(work.rstrip("/"))
    m = re.match(r"(.+)-(\d+)-(old|new)$", name)
    if not m:
        return None
    rep, run, st = load(f"{work}/report.json"), load(f"{work}/run.json"), load(f"{work}/trawl-out/stats.json")
    t = rep.get("crawlers", {}).get("trawl", {})
    proc = run.get("procs", {}).get("trawl", {})
    w = st.get("width", {})
    r = {
        "case": m.group(1), "n": int(m.group(2)), "build": m.group(3),
        "wall_s": t.get("wall_secs"), "x_floor": t.get("wall_over_floor"),
        "floor_s": rep.get("floor_secs"), "cpu_bound_s": rep.get("concurrency_bound_secs"),
        "timed_out": t.get("timed_out"),
        "coverage": t.get("pages_fetched_of_reachable"),
        "pages": st.get("pages"), "robots_fetches": st.get("robots_fetches"),
        "robots_per_origin_max": t.get("robots_per_origin", {}).get("max"),
        "cpu_s": round(proc.get("cpu_s", {}).get("trawl", 0), 1),
        "peak_rss_mib": round(proc.get("peak_rss_kb", 0) / 1024, 1),
        "rss_less_bits_mib": round(st.get("peak_rss_less_presence_bits_bytes", 0) / 2**20, 1) or None,
        "gap_median": t.get("gap_end_to_start_secs", {}).get("median"),
        "in_flight_median": t.get("in_flight_median"),
        "hosts_active": st.get("hosts_active"), "line_records": st.get("line_records"),
        "host_activations": st.get("host_activations"),
        "ready_idle_end": w.get("hosts_ready_idle"),
    }
    g = t.get("gauges")
    if isinstance(g, dict):
        r["ready_idle_peak_median"] = g.get("trawl_hosts_ready_idle") or g
    wg = rep.get("crawlers", {}).get("wget2")
    if wg:
        r["wget2"] = {"wall_s": wg.get("wall_secs"), "x_floor": wg.get("wall_over_floor"),
                      "coverage": wg.get("pages_fetched_of_reachable")}
    return r


def main():
    rows = [r for r in (row(d) for d in sys.argv[1:]) if r]
    rows.sort(key=lambda r: (r["case"], r["n"]))
    cols = ["case", "n", "build", "wall_s", "x_floor", "coverage", "robots_fetches", "cpu_s",
            "peak_rss_mib", "rss_less_bits_mib", "gap_median", "in_flight_median",
            "hosts_active", "line_records", "host_activations", "ready_idle_end"]
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c)) for c in cols) + " |")
        if "wget2" in r:
            print(f"|   wget2 in run {r['n']}: {r['wget2']} |")
    by = defaultdict(list)
    for r in rows:
        by[(r["case"], r["build"])].append(r)
    print()
    print("| case | runs old/new | wall old (median) | wall new (median) | new/old | x floor old / new | CPU s old / new | RSS less bits MiB old / new | robots.txt fetches old / new | pages old / new |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    med = lambda rs, k: (round(statistics.median([x[k] for x in rs if x.get(k) is not None]), 2)
                         if any(x.get(k) is not None for x in rs) else None)
    for case in sorted({c for c, _ in by}):
        o, n = by.get((case, "old"), []), by.get((case, "new"), [])
        wo, wn = med(o, "wall_s"), med(n, "wall_s")
        ratio = round(wn / wo, 3) if wo and wn else None
        print(f"| {case} | {len(o)}/{len(n)} | {wo} ({', '.join(str(x['wall_s']) for x in o)}) | "
              f"{wn} ({', '.join(str(x['wall_s']) for x in n)}) | {ratio} | {med(o, 'x_floor')} / {med(n, 'x_floor')} | "
              f"{med(o, 'cpu_s')} / {med(n, 'cpu_s')} | {med(o, 'rss_less_bits_mib')} / {med(n, 'rss_less_bits_mib')} | "
              f"{med(o, 'robots_fetches')} / {med(n, 'robots_fetches')} | {med(o, 'pages')} / {med(n, 'pages')} |")
    json.dump(rows, open(os.path.join(os.path.dirname(sys.argv[1].rstrip('/')), "ab.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
