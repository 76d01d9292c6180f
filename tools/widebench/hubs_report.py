#!/usr/bin/env python3
"""Figures of one hub-web run (tools/widebench/hubs.sh, issue 26), from files only.

trawl, from its crawl log (OUT/crawl.log.jsonl: one line per fetch; a robots.txt fetch
has hops ending in `P`; redirects are 3xx lines, retries of failed fetches carry
`retry:N`), its stats.json, /usr/bin/time -v and hubs.sh's trawl.run.json (start,
SIGINT and exit times, exit code):

- pages/s in each 60-s window from the start, the best window and the last 60 s before
  SIGINT, and their ratio (acceptance: last >= 0.7 x best); robots.txt fetches a window;
- robots.txt fetches per host: the maximum, hosts asking more than once, each fetch
  after a host's first split by what came before it: a success still fresh (synthweb
  sends no freshness headers, so RFC 9309's default applies, 24 h; must be 0), a
  success no longer fresh, a failure (a retry), a redirect (a hop);
- pages fetched per robots.txt fetched (acceptance >= 2.5 with 3 pages a leaf);
- hosts known (the leaves the fetched hub pages name, and the hubs) and finished (every
  page fetched, 200);
- peak RSS (/usr/bin/time) and peak RSS less the presence bits (stats.json's own peak
  sample, and time's peak less the bits resident at the end) (acceptance < MEMORY);
- exit code and seconds from SIGINT to exit (acceptance: 0 within 60 s).

wget2 (WGET2=1), from synthweb's request log (its User-Agent, after wget2.split):
the same windows, robots.txt per host and pages per robots.txt.
Prints a short table; writes everything as one JSON object to --out.
"""

import argparse
import calendar
import json
import re
from collections import Counter, defaultdict

HUB_PAGES, LEAF_PAGES, LEAVES_PER_PAGE = 10, 3, 100
FRESH_SECS = 86_400  # robots.txt freshness without Cache-Control/Expires (RFC 9309 2.4)
WINDOW = 60


def epoch(ts):
    """`2026-12-06T01:19:50.830350Z` to seconds since the epoch."""
    secs = calendar.timegm((int(ts[0:4]), int(ts[5:7]), int(ts[8:10]),
                            int(ts[11:13]), int(ts[14:16]), int(ts[17:19])))
    frac = ts[19:].rstrip("Z")
    return secs + (float(frac) if frac.startswith(".") else 0.0)


def host_and_path(url):
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    return host.split(":")[0].lower(), "/" + path


def host_number(host):
    m = re.match(r"h(\d+)\.synth\.test$", host)
    return int(m.group(1)) if m else None


def windows(times, start, stop):
    """Counts per 60-s window from start (windows ending before stop, 1 s of slack for
    the shell's whole-second timing), and the count in the last 60 s before stop."""
    n = int((stop - start + 1) // WINDOW)
    counts = [0] * n
    last = 0
    for t in times:
        i = int((t - start) // WINDOW)
        if 0 <= i < n:
            counts[i] += 1
        if stop - WINDOW <= t < stop:
            last += 1
    return counts, last


def rate_figures(page_times, robots_times, run):
    start, stop = run["start"], run["sigint"]
    pages, last = windows(page_times, start, stop)
    robots, robots_last = windows(robots_times, start, stop)
    best = max(pages) if pages else 0
    return {
        "windows_s": WINDOW,
        "pages_per_s": [round(c / WINDOW, 1) for c in pages],
        "robots_per_s": [round(c / WINDOW, 1) for c in robots],
        "best_pages_per_s": round(best / WINDOW, 1),
        "last_pages_per_s": round(last / WINDOW, 1),
        "last_robots_per_s": round(robots_last / WINDOW, 1),
        "last_over_best": round(last / best, 3) if best else None,
    }


def robots_figures(fetches):
    """fetches: host -> [(time, ok, redirect)] in time order."""
    kinds = Counter()
    per_host = Counter()
    for host, seq in fetches.items():
        seq.sort()
        per_host[host] = len(seq)
        for (t0, ok0, redir0), (t1, _, _) in zip(seq, seq[1:]):
            if redir0:
                kinds["after_redirect"] += 1
            elif not ok0:
                kinds["retry_after_failure"] += 1
            elif t1 - t0 < FRESH_SECS:
                kinds["refetch_while_fresh"] += 1
            else:
                kinds["refetch_after_expiry"] += 1
    return {
        "fetches": sum(per_host.values()),
        "hosts": len(per_host),
        "max_per_host": max(per_host.values(), default=0),
        "hosts_more_than_once": sum(1 for c in per_host.values() if c > 1),
        "refetch_while_fresh": kinds["refetch_while_fresh"],
        "refetch_after_expiry": kinds["refetch_after_expiry"],
        "retry_after_failure": kinds["retry_after_failure"],
        "after_redirect": kinds["after_redirect"],
        "per_host_histogram": dict(sorted(Counter(per_host.values()).items())[:20]),
    }


def host_figures(pages_ok, hubs):
    """pages_ok: host number -> set of paths fetched with 200."""
    named = set()
    for h, paths in pages_ok.items():
        if h < hubs:
            for p in paths:
                k = 0 if p == "/" else int(p.rsplit("/", 1)[-1]) if p.startswith("/p/") else None
                if k is not None and 0 <= k < HUB_PAGES:
                    named.add((h, k))
    finished_hubs = sum(1 for h, p in pages_ok.items() if h < hubs and len(p) >= HUB_PAGES)
    finished_leaves = sum(1 for h, p in pages_ok.items() if h >= hubs and len(p) >= LEAF_PAGES)
    return {
        "hubs": hubs,
        "leaves": hubs * HUB_PAGES * LEAVES_PER_PAGE,
        "leaves_known": len(named) * LEAVES_PER_PAGE,
        "hosts_fetched_from": len(pages_ok),
        "hubs_finished": finished_hubs,
        "leaves_finished": finished_leaves,
    }


def time_v(path):
    out = {}
    try:
        txt = open(path).read()
    except FileNotFoundError:
        return out
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", txt)
    if m:
        out["peak_rss_bytes"] = int(m.group(1)) * 1024
    for key, name in (("cpu_user_s", "User time (seconds)"), ("cpu_sys_s", "System time (seconds)")):
        m = re.search(re.escape(name) + r": ([\d.]+)", txt)
        if m:
            out[key] = float(m.group(1))
    return out


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KMGT]?)i?B?", text.strip(), re.I)
    if not m:
        return None
    return int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())


def trawl_report(work, hubs, memory):
    run = json.load(open(f"{work}/trawl.run.json"))
    page_times, robots_times = [], []
    robots = defaultdict(list)
    pages_ok = defaultdict(set)
    outcomes = Counter()
    pages = redirects = retries = 0
    with open(f"{work}/trawl-out/crawl.log.jsonl", errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            t = epoch(r["time"])
            host, path = host_and_path(r["url"])
            status, outcome = r.get("status"), r["outcome"]
            notes = r.get("annotations", [])
            outcomes[outcome] += 1
            retries += any(a.startswith("retry:") for a in notes)
            is_robots = r.get("hops", "").endswith("P") or path == "/robots.txt"
            redirect = status is not None and 300 <= status < 400
            redirects += redirect
            if is_robots:
                if outcome in ("robots", "filtered", "budget"):
                    continue  # a decision, not a fetch
                ok = outcome == "fetched" and status is not None and status < 500 and status != 429
                robots[host].append((t, ok and not redirect, redirect))
                robots_times.append(t)
            elif outcome == "fetched":
                pages += 1
                page_times.append(t)
                n = host_number(host)
                if status == 200 and n is not None:
                    pages_ok[n].add(path)
    stats = json.load(open(f"{work}/trawl-out/stats.json"))
    tv = time_v(f"{work}/trawl.time")
    bits = stats.get("presence_bits_resident_bytes", 0)
    mib = lambda b: round(b / 2**20, 1) if b is not None else None
    rb = robots_figures(robots)
    budget = parse_size(memory)
    rep = {
        "rates": rate_figures(page_times, robots_times, run),
        "pages_fetched": pages,
        "robots": rb,
        "pages_per_robots": round(pages / rb["fetches"], 2) if rb["fetches"] else None,
        "redirect_lines": redirects,
        "retry_lines": retries,
        "outcomes": dict(outcomes),
        "hosts": host_figures(pages_ok, hubs),
        "stats": {k: stats.get(k) for k in (
            "pages", "discovered", "queued", "hosts_active", "hosts_parked",
            "robots_fetches", "robots_cache_hosts", "robots_cache_bytes",
            "robots_cache_evictions", "frontier_ram_urls", "frontier_disk_urls", "finish")},
        "peak_rss_mib": mib(tv.get("peak_rss_bytes")),
        "presence_bits_mib": mib(bits),
        "peak_rss_less_bits_mib": mib(stats.get("peak_rss_less_presence_bits_bytes")),
        "time_peak_rss_less_end_bits_mib": mib(tv["peak_rss_bytes"] - bits) if "peak_rss_bytes" in tv else None,
        "cpu_s": round(tv.get("cpu_user_s", 0) + tv.get("cpu_sys_s", 0), 1),
        "exit_code": run["rc"],
        "killed": bool(run["killed"]),
        "ended_before_sigint": bool(run["ended_early"]),
        "sigint_to_exit_s": round(run["exit"] - run["sigint"], 1),
        "duration_s": run["duration_s"],
    }
    less_bits = rep["peak_rss_less_bits_mib"]
    rep["acceptance"] = {
        "last_ge_0.7_best": (rep["rates"]["last_over_best"] or 0) >= 0.7,
        "no_refetch_while_fresh": rb["refetch_while_fresh"] == 0,
        "pages_per_robots_ge_2.5": (rep["pages_per_robots"] or 0) >= 2.5,
        "peak_rss_less_bits_lt_memory": less_bits is not None and budget is not None
        and less_bits * 2**20 < budget,
        "exit_0_within_60s": run["rc"] == 0 and not run["killed"] and rep["sigint_to_exit_s"] <= 60,
    }
    return rep


def wget2_report(work, hubs):
    try:
        run = json.load(open(f"{work}/wget2.run.json"))
        split = float(open(f"{work}/wget2.split").read())
    except FileNotFoundError:
        return None
    page_times, robots_times = [], []
    robots = defaultdict(list)
    pages_ok = defaultdict(set)
    pages = 0
    with open(f"{work}/requests.jsonl", errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            t = r["t_us"] / 1e6
            if t < split or "wget" not in (r.get("user_agent") or "").lower():
                continue
            host = r["host"].split(":")[0].lower()
            path = r["target"]
            if path == "/robots.txt":
                robots[host].append((t, r["status"] < 500, 300 <= r["status"] < 400))
                robots_times.append(t)
            else:
                pages += 1
                page_times.append(t)
                n = host_number(host)
                if r["status"] == 200 and n is not None:
                    pages_ok[n].add(path)
    rb = robots_figures(robots)
    tv = time_v(f"{work}/wget2.time")
    return {
        "rates": rate_figures(page_times, robots_times, run),
        "pages_fetched": pages,
        "robots": rb,
        "pages_per_robots": round(pages / rb["fetches"], 2) if rb["fetches"] else None,
        "hosts": host_figures(pages_ok, hubs),
        "peak_rss_mib": round(tv["peak_rss_bytes"] / 2**20, 1) if "peak_rss_bytes" in tv else None,
        "exit_code": run["rc"],
        "sigint_to_exit_s": round(run["exit"] - run["sigint"], 1),
    }


def table(name, rep):
    r, rb, h = rep["rates"], rep["robots"], rep["hosts"]
    lines = [
        f"{name}: pages/s per {r['windows_s']} s: {' '.join(str(x) for x in r['pages_per_s'])}",
        f"  robots.txt/s per window:  {' '.join(str(x) for x in r['robots_per_s'])}",
        f"  best {r['best_pages_per_s']} pages/s, last 60 s {r['last_pages_per_s']} pages/s"
        f" (ratio {r['last_over_best']}); last 60 s robots.txt {r['last_robots_per_s']}/s",
        f"  pages {rep['pages_fetched']}, robots.txt {rb['fetches']} on {rb['hosts']} hosts:"
        f" {rep['pages_per_robots']} pages per robots.txt",
        f"  robots.txt a host: max {rb['max_per_host']}, {rb['hosts_more_than_once']} hosts more than once;"
        f" refetched while fresh {rb['refetch_while_fresh']}, after expiry {rb['refetch_after_expiry']},"
        f" retries after failure {rb['retry_after_failure']}, redirect hops {rb['after_redirect']}",
        f"  hosts: {h['leaves_known']} of {h['leaves']} leaves known, {h['leaves_finished']} finished;"
        f" {h['hubs_finished']} of {h['hubs']} hubs finished",
    ]
    if "peak_rss_less_bits_mib" in rep:
        lines.append(
            f"  peak RSS {rep['peak_rss_mib']} MiB, less presence bits {rep['peak_rss_less_bits_mib']} MiB"
            f" (bits {rep['presence_bits_mib']} MiB); CPU {rep['cpu_s']} s")
        lines.append(
            f"  exit {rep['exit_code']} {rep['sigint_to_exit_s']} s after SIGINT"
            f"{' (SIGKILLed)' if rep['killed'] else ''}{' (ended before SIGINT)' if rep['ended_before_sigint'] else ''}")
        lines.append("  acceptance: " + ", ".join(
            f"{k} {'PASS' if v else 'FAIL'}" for k, v in rep["acceptance"].items()))
    else:
        lines.append(f"  peak RSS {rep['peak_rss_mib']} MiB; exit {rep['exit_code']}"
                     f" {rep['sigint_to_exit_s']} s after SIGINT")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--hubs", type=int, required=True)
    ap.add_argument("--memory", default="512M")
    ap.add_argument("--concurrency", default="default")
    ap.add_argument("--out")
    a = ap.parse_args()
    rep = {"hubs": a.hubs, "memory": a.memory, "concurrency": a.concurrency,
           "trawl": trawl_report(a.work, a.hubs, a.memory)}
    try:
        rep["synthweb"] = [json.loads(l) for l in open(f"{a.work}/synthweb.json") if l.strip()][-1]
    except (FileNotFoundError, ValueError, IndexError):
        pass
    w = wget2_report(a.work, a.hubs)
    if w:
        rep["wget2"] = w
    if a.out:
        json.dump(rep, open(a.out, "w"), indent=1)
    print(f"hub web: {a.hubs} hubs, {a.hubs * 1000} leaves; --memory {a.memory}, concurrency {a.concurrency}")
    print(table("trawl", rep["trawl"]))
    if w:
        print(table("wget2", w))


if __name__ == "__main__":
    main()
