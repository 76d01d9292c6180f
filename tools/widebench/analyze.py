#!/usr/bin/env python3
"""Figures of one wide-crawl run (tools/widebench/run.sh), from files only.

Reads synthweb's manifest (reachable pages: its M lines; link depth: its header's
`depth` and `root_depth`) and request log (one JSON line per request, with start
`t_us` and end `end_us`), splits the log by crawler (User-Agent), and prints per
crawler: wall time against the floor, requests in flight, gaps between two requests
to one host, coverage, robots.txt fetches per host, CPU per page of every process,
peak RSS and bytes per host, DNS queries per name, and trawl's own gauges when its
Prometheus endpoint was scraped. Writes everything as one JSON object to --out too.
"""

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def read_manifest(path):
    header, must = {}, set()
    with open(path) as f:
        first = f.readline()
        for m in re.finditer(r"(\w+)=(\S+)", first):
            header[m.group(1)] = m.group(2)
        for line in f:
            if line.startswith("M "):
                must.add(line[2:].rstrip("\n"))
    return header, must


def canonical(rec):
    host = rec["host"]
    scheme = rec["scheme"]
    default = ":80" if scheme == "http" else ":443"
    if host.endswith(default):
        host = host[: -len(default)]
    return f"{scheme}://{host}{rec['target']}", host


def in_flight(intervals, tick_us):
    """Peak and median (over time, sampled every tick) of requests in progress."""
    if not intervals:
        return 0, 0
    events = []
    for s, e in intervals:
        events.append((s, 1))
        events.append((max(e, s), -1))
    events.sort()
    peak = cur = 0
    samples = []
    t0, t1 = events[0][0], events[-1][0]
    nxt = t0
    for t, d in events:
        while nxt < t:
            samples.append(cur)
            nxt += tick_us
        cur += d
        peak = max(peak, cur)
    while nxt <= t1:
        samples.append(cur)
        nxt += tick_us
    return peak, statistics.median(samples) if samples else 0


def dns_counts(path, pattern, first=0, end=None):
    """Queries per name from a dnsmasq --log-queries file or the sink's log, lines
    [first, end) only (the crawlers run one after the other)."""
    per = Counter()
    if not path:
        return per
    try:
        with open(path, errors="replace") as f:
            for i, line in enumerate(f):
                if i < first or (end is not None and i >= end):
                    continue
                m = pattern.search(line)
                if m:
                    per[m.group(1).lower()] += 1
    except FileNotFoundError:
        pass
    return per


def metrics(path):
    """Peaks and medians of trawl's gauges from scraped Prometheus text (if any)."""
    series = defaultdict(list)
    try:
        with open(path) as f:
            for line in f:
                for name in ("trawl_hosts_ready_idle", "trawl_requests_in_flight"):
                    if line.startswith(name) and not line.startswith(name + "_"):
                        try:
                            series[name].append(float(line.split()[-1]))
                        except ValueError:
                            pass
    except (FileNotFoundError, TypeError):
        pass
    return {
        k: {"peak": max(v), "median": statistics.median(v), "samples": len(v)}
        for k, v in series.items()
    }


def floors(root_depth, pages, page_bytes, latency_ms, bandwidth, delay_ms, per_ip, hpa):
    """(page time, floor, the brief's estimate), in seconds.

    Politeness as built: a host's fetches one at a time, each followed by the delay,
    robots.txt first (RFC 9309: no page before the rules). The last host found is
    root_depth hops from a seed; each host on the way is found only once the page
    linking it arrived, and must then fetch its robots.txt, rest one delay and fetch
    the root that links the next: a hop is robots + delay + page. The last host then
    needs robots.txt and its pages. (The first version of this floor counted
    robots.txt for the seed only, 2.5 s short at root depth 5.) With a per-IP cap, an
    address's hosts also share per_ip connections.
    """
    lat, bw, delay = latency_ms / 1000, bandwidth, delay_ms / 1000
    page_s = lat + page_bytes / bw
    robots_s = lat + 30 / bw
    floor = (root_depth * (robots_s + delay + page_s) + (robots_s + delay)
             + pages * page_s + (pages - 1) * delay)
    brief = (root_depth + pages) * (page_s + delay) + delay
    if per_ip:
        floor = max(floor, hpa * (pages * page_s + robots_s) / per_ip)
    return page_s, floor, brief


def busy_bound(hosts, pages, page_s, latency_ms, concurrency):
    """Least time to serve every host's pages and robots.txt with `concurrency`
    requests in flight (a crawler setting, not politeness; 0 = unbounded)."""
    if not concurrency:
        return 0.0
    return hosts * (pages * page_s + latency_ms / 1000) / concurrency


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--log")
    ap.add_argument("--run", help="run.json written by run.sh")
    ap.add_argument("--out")
    ap.add_argument("--floor-only", action="store_true",
                    help="print the floor in seconds (needs the page and politeness flags)")
    for flag in ("pages", "page-bytes", "latency-ms", "bandwidth", "delay-ms", "per-ip",
                 "hosts-per-address", "concurrency"):
        ap.add_argument("--" + flag, type=int, default=0)
    a = ap.parse_args()
    if a.floor_only:
        header = {}
        with open(a.manifest) as f:
            for m in re.finditer(r"(\w+)=(\S+)", f.readline()):
                header[m.group(1)] = m.group(2)
        page_s, floor, _ = floors(int(header.get("root_depth", 0)), a.pages, a.page_bytes,
                                  a.latency_ms, a.bandwidth, a.delay_ms, a.per_ip,
                                  a.hosts_per_address or 1)
        bound = busy_bound(int(header["hosts"]), a.pages, page_s, a.latency_ms, a.concurrency)
        print(f"{floor:.1f} {bound:.1f}")
        return 0
    run = json.load(open(a.run))
    header, must = read_manifest(a.manifest)
    hosts = int(header.get("hosts", run["hosts"]))
    depth = int(header.get("depth", 0))
    root_depth = int(header.get("root_depth", 0))

    delay = run["delay_ms"] / 1000
    page_s, floor, brief = floors(root_depth, run["pages_per_host"], run["page_bytes"],
                                  run["latency_ms"], run["bandwidth"], run["delay_ms"],
                                  run.get("per_ip_connections") or 0,
                                  run.get("hosts_per_address") or 1)
    hpa = run.get("hosts_per_address") or 1
    bound = busy_bound(hosts, run["pages_per_host"], page_s, run["latency_ms"],
                       run.get("concurrency") or 0)

    by_agent = defaultdict(list)
    with open(a.log) as f:
        for line in f:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            ua = (r.get("user_agent") or "").lower()
            agent = "trawl" if "trawl" in ua else "wget2" if "wget" in ua else "other"
            by_agent[agent].append(r)

    live_re = re.compile(r"query\[(?:A|AAAA)\] (\S+) from")
    dead_re = re.compile(r"^\S+ \S+ (\S+)$")
    dns_split, sink_split = run.get("dns_split_line"), run.get("sink_split_line")

    def dns_report(agent):
        first, end = (0, dns_split) if agent == "trawl" else (dns_split or 0, None)
        live = dns_counts(run.get("dns_log"), live_re, first, end)
        first, end = (0, sink_split) if agent == "trawl" else (sink_split or 0, None)
        dead = dns_counts(run.get("sink_log"), dead_re, first, end)
        return {
            "live_names_queried": len(live),
            "live_queries": sum(live.values()),
            "queries_per_live_name_median": statistics.median(live.values()) if live else None,
            "queries_per_live_name_max": max(live.values()) if live else None,
            "dead_names_queried": len(dead),
            "dead_queries": sum(dead.values()),
            "queries_per_dead_name_median": statistics.median(dead.values()) if dead else None,
            "queries_per_dead_name_max": max(dead.values()) if dead else None,
        }

    report = {
        "case": run["case"],
        "hosts": hosts,
        "hosts_per_address": hpa,
        "reachable_pages": len(must),
        "depth": depth,
        "root_depth": root_depth,
        "page_secs": round(page_s, 3),
        "floor_secs": round(floor, 1),
        "floor_brief_formula_secs": round(brief, 1),
        "concurrency_bound_secs": round(bound, 1),
        "crawlers": {},
    }
    for agent, recs in sorted(by_agent.items()):
        if agent == "other":
            continue
        proc = run.get("procs", {}).get(agent, {})
        fetched, robots = set(), Counter()
        per_host = defaultdict(list)
        per_addr = defaultdict(list)
        intervals = []
        for r in recs:
            url, host = canonical(r)
            if r["target"] == "/robots.txt":
                robots[(r["scheme"], host)] += 1
            elif 200 <= r["status"] < 300:
                fetched.add(url)
            per_host[host].append((r["t_us"], r["end_us"]))
            intervals.append((r["t_us"], r["end_us"]))
            # Less the referee's 5 ms end-stamp slack (synthweb stamps end_us after its
            # last write returns; the client may already have sent its next request).
            per_addr[r["local"].rsplit(":", 1)[0]].append((r["t_us"], r["end_us"] - 5_000))
        gaps, starts, overlaps = [], [], 0
        for ivs in per_host.values():
            ivs.sort()
            for (s0, e0), (s1, _) in zip(ivs, ivs[1:]):
                gaps.append((s1 - e0) / 1e6)
                overlaps += s1 < e0
                starts.append((s1 - s0) / 1e6)
        peak, median = in_flight(intervals, 100_000)
        # Requests in progress at once on one server address (shared hosting).
        addr_peak = max((in_flight(v, 10**9)[0] for v in per_addr.values()), default=0)
        span = (max(e for _, e in intervals) - min(s for s, _ in intervals)) / 1e6 if intervals else 0
        got = len(fetched & must)
        pages_done = max(got, 1)
        cpu = {k: round(v / pages_done * 1e6) for k, v in proc.get("cpu_s", {}).items()}
        c = {
            "wall_secs": proc.get("wall_s"),
            "log_span_secs": round(span, 1),
            "wall_over_floor": round(proc["wall_s"] / floor, 2) if proc.get("wall_s") else None,
            "timed_out": proc.get("timed_out"),
            "requests": len(recs),
            "pages_fetched_of_reachable": f"{got} of {len(must)}",
            "coverage": round(got / len(must), 4) if must else None,
            "in_flight_peak": peak,
            "in_flight_median": median,
            "in_flight_peak_per_address": addr_peak,
            "gap_end_to_start_secs": {
                "median": pct(gaps, 50), "p95": pct(gaps, 95), "max": max(gaps) if gaps else None,
                "min": min(gaps) if gaps else None},
            "gap_start_to_start_secs": {"median": pct(starts, 50), "p95": pct(starts, 95)},
            "overlapping_requests_to_a_host": overlaps,
            "robots_per_origin": {"median": pct(list(robots.values()), 50),
                                  "max": max(robots.values()) if robots else None,
                                  "origins": len(robots)},
            "cpu_us_per_page": cpu,
            "peak_rss_kb": proc.get("peak_rss_kb"),
            "rss_bytes_per_host": round(proc["peak_rss_kb"] * 1024 / hosts) if proc.get("peak_rss_kb") else None,
            "dns": dns_report(agent),
        }
        if agent == "trawl":
            c["gauges"] = metrics(run.get("metrics_file")) or "absent (no trawl_hosts_ready_idle / trawl_requests_in_flight)"
        report["crawlers"][agent] = c
    json.dump(report, open(a.out, "w"), indent=1)

    print(f"== widebench {report['case']}: {hosts} hosts ({hpa} per address), "
          f"{len(must)} reachable pages, link depth {depth} (roots {root_depth}), "
          f"page {page_s:.2f} s, delay {delay:.2f} s")
    print(f"floor {floor:.1f} s (brief's formula {brief:.1f} s); with "
          f"{run.get('concurrency')} in flight at most, the pages need {bound:.1f} s")
    for agent, c in report["crawlers"].items():
        g = c["gap_end_to_start_secs"]
        fmt = lambda x: "-" if x is None else f"{x:.3f}"
        print(f"-- {agent}: wall {c['wall_secs']} s ({c['wall_over_floor']}x floor"
              f"{', TIMED OUT' if c['timed_out'] else ''}), coverage {c['pages_fetched_of_reachable']}"
              f" ({c['coverage']}), {c['requests']} requests")
        print(f"   in flight: peak {c['in_flight_peak']}, median {c['in_flight_median']}; "
              f"peak on one address {c['in_flight_peak_per_address']}")
        print(f"   gap between two requests to a host (end to start): median {fmt(g['median'])}"
              f" p95 {fmt(g['p95'])} max {fmt(g['max'])} min {fmt(g['min'])} s")
        if c["overlapping_requests_to_a_host"]:
            print(f"   requests to a host started before its previous one ended: "
                  f"{c['overlapping_requests_to_a_host']}")
        print(f"   robots.txt per origin: median {c['robots_per_origin']['median']}, max "
              f"{c['robots_per_origin']['max']} ({c['robots_per_origin']['origins']} origins)")
        print(f"   CPU per page (us): {c['cpu_us_per_page']}")
        print(f"   peak RSS {c['peak_rss_kb']} KB = {c['rss_bytes_per_host']} B per host")
        if agent == "trawl":
            print(f"   gauges: {c['gauges']}")
        d = c["dns"]
        print(f"   DNS: {d['live_names_queried']} live names, {d['live_queries']} queries "
              f"(median {d['queries_per_live_name_median']}, max {d['queries_per_live_name_max']} per name); "
              f"{d['dead_names_queried']} dead names, {d['dead_queries']} queries "
              f"(median {d['queries_per_dead_name_median']}, max {d['queries_per_dead_name_max']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
