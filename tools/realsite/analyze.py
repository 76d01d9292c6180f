#!/usr/bin/env python3
"""The real-site benchmark's bookkeeping: reads nginx's access log of one crawl, judges
every request against the site's robots.txt (RFC 9309 matching, done here independently
of both crawlers), records one JSON line per crawl, and prints the Markdown summary.

  analyze.py selftest
  analyze.py record RESULTS_DIR key=value...   (tool site run log robots time [stats] rc)
  analyze.py summary RESULTS_DIR

`robots` is a comma-separated list of ADDRESS=ROBOTS_FILE: the log records the server
address each request came in on, and each address is one site.
"""
import json
import os
import re
import statistics
import sys

# The log format run.sh gives nginx: tab-separated, in this order.
LOG_FIELDS = ("addr", "status", "bytes", "ctype", "method", "uri", "agent")


# --- RFC 9309 ---------------------------------------------------------------------------

class Robots:
    """The rules of the group for `*` (our robots.txt files have only that group), and
    the RFC 9309 decision: the longest matching pattern (in octets) wins, `allow` wins
    a tie, `*` matches any run of characters, a final `$` anchors at the end, no match
    means allowed, and /robots.txt itself is always allowed."""

    def __init__(self, text):
        self.rules = []  # (length, allow, regex, pattern)
        groups, agents, rules, in_rules = [], [], [], False
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if ":" not in line:
                continue
            key, value = (s.strip() for s in line.split(":", 1))
            key = key.lower()
            if key == "user-agent":
                if in_rules:
                    groups.append((agents, rules))
                    agents, rules, in_rules = [], [], False
                agents.append(value.lower())
            elif key in ("allow", "disallow"):
                in_rules = True
                if value:
                    rules.append((key == "allow", value))
        groups.append((agents, rules))
        for agents, rules in groups:
            if "*" in agents:
                for allow, pat in rules:
                    self.rules.append((len(pat.encode()), allow, self._compile(pat), pat))

    @staticmethod
    def _compile(pat):
        anchored = pat.endswith("$")
        body = pat[:-1] if anchored else pat
        rx = ".*".join(re.escape(part) for part in body.split("*"))
        return re.compile(rx + (r"\Z" if anchored else ""), re.S)

    def decide(self, uri):
        """(allowed, the deciding pattern or None)."""
        if uri == "/robots.txt":
            return True, None
        best = None
        for length, allow, rx, pat in self.rules:
            if rx.match(uri):
                if best is None or length > best[0] or (length == best[0] and allow and not best[1]):
                    best = (length, allow, pat)
        if best is None:
            return True, None
        return best[1], best[2]


def selftest():
    r = Robots("User-agent: other\nDisallow: /\n\nUser-agent: *\n"
               "Disallow: /a/\nAllow: /a/b/\nDisallow: /*.zip$\nDisallow: /*?*\n"
               "Disallow: /t\nAllow: /t\nDisallow: /x/*/y.html$\n")
    cases = [("/", True), ("/a/", False), ("/a/c.html", False), ("/a/b/c.html", True),
             ("/f.zip", False), ("/f.zip.html", True), ("/p.html?q=1", False),
             ("/t/anything", True), ("/x/1/2/y.html", False), ("/x/1/y.html?z", False),
             ("/x/1/y.htmlz", True), ("/robots.txt", True), ("/b", True)]
    bad = [(u, want) for u, want in cases if r.decide(u)[0] != want]
    if bad:
        sys.exit(f"analyze: robots matcher self-test failed: {bad}")
    print(f"analyze: robots matcher self-test passed ({len(cases)} cases)")


# --- one crawl --------------------------------------------------------------------------

def parse_kv(args):
    out = {}
    for a in args:
        k, _, v = a.partition("=")
        out[k] = v
    return out


def parse_time(path):
    """/usr/bin/time -f 'wall=%e user=%U sys=%S maxrss_kb=%M' (last such line)."""
    vals = {}
    for line in open(path, errors="replace"):
        if line.startswith("wall="):
            vals = dict(kv.split("=", 1) for kv in line.split())
    return (float(vals.get("wall", "nan")), float(vals.get("user", "nan")) + float(vals.get("sys", "nan")),
            int(vals.get("maxrss_kb", "0")))


def load_robots(spec):
    """ADDRESS=FILE,... -> {address: Robots}"""
    robots = {}
    for item in spec.split(","):
        addr, _, path = item.partition("=")
        robots[addr] = Robots(open(path, errors="replace").read())
    return robots


def allowed(robots, url):
    """For http://ADDRESS/URI as `urls` lists them."""
    rest = url.split("://", 1)[1]
    addr, _, path = rest.partition("/")
    rb = robots.get(addr)
    return rb is None or rb.decide("/" + path)[0]


def peak_less_bits(path, bits_bytes):
    """From memsample.py's samples: peak RSS and peak of (RSS - resident presence bits).
    The bits are the mapping at least as large as stats.json's seen_file_bytes and at
    most 1.5 times it: the URL set's anonymous mapping, which the kernel merges with the
    adjacent, quarter-sized content-fingerprint set (the same presence-bit structure) into
    one VMA, so the figure is RSS less both presence-bit sets."""
    bits_kb = bits_bytes / 1024

    def is_bits(size):
        return bits_kb and bits_kb <= size <= 1.5 * bits_kb

    peak = peak_less = n = 0
    matched = False
    for line in open(path):
        s = json.loads(line)
        bits = sum(rss for size, rss in s["big"] if is_bits(size))
        matched = matched or any(is_bits(size) for size, _ in s["big"])
        peak = max(peak, s["rss_kb"])
        peak_less = max(peak_less, s["rss_kb"] - bits)
        n += 1
    return {"samples": n, "bits_mapping_found": matched, "peak_rss_kb": peak, "peak_rss_less_bits_kb": peak_less}


def record(results, a):
    robots = load_robots(a["robots"])
    html, r404, disallowed = set(), 0, []
    requests = nbytes = robots_fetches = 0
    status_counts = {}
    for line in open(a["log"], errors="replace"):
        f = line.rstrip("\n").split("\t")
        if len(f) != len(LOG_FIELDS):
            continue
        rec = dict(zip(LOG_FIELDS, f))
        requests += 1
        nbytes += int(rec["bytes"]) if rec["bytes"].isdigit() else 0
        status_counts[rec["status"]] = status_counts.get(rec["status"], 0) + 1
        uri, addr = rec["uri"], rec["addr"]
        if uri == "/robots.txt":
            robots_fetches += 1
            continue
        rb = robots.get(addr)
        if rb is not None:
            ok, pat = rb.decide(uri)
            if not ok:
                disallowed.append(f"http://{addr}{uri} ({pat})")
        if rec["status"] == "404":
            r404 += 1
        if rec["status"] == "200" and rec["ctype"].startswith("text/html"):
            html.add(f"http://{addr}{uri}")
    wall, cpu, rss_kb = parse_time(a["time"])
    out = {"tool": a["tool"], "site": a["site"], "run": int(a["run"]), "rc": int(a.get("rc", "0")),
           "wall_s": wall, "cpu_s": cpu, "peak_rss_kb": rss_kb, "html_pages": len(html),
           "requests": requests, "bytes": nbytes, "status_404": r404,
           "disallowed_fetches": len(disallowed), "disallowed_examples": disallowed[:5],
           "robots_fetches": robots_fetches, "statuses": status_counts, "robots": a["robots"]}
    stats_path = a.get("stats")
    if stats_path and os.path.exists(stats_path):
        s = json.load(open(stats_path))
        out["stats"] = {k: s[k] for k in ("pages", "bytes", "discovered", "duplicates", "queued",
                                          "elapsed_secs", "outcomes", "seen_file_bytes", "finish",
                                          "robots_fetches") if k in s}
        # Whatever memory figure the engine reports (e.g. RSS less the presence bits),
        # under its own name: this script does not guess it.
        out["stats_memory"] = {k: v for k, v in s.items() if "rss" in k.lower() or "resident" in k.lower()}
    mem_path = a.get("mem")
    if mem_path and os.path.exists(mem_path) and "stats" in out:
        out["sampled"] = peak_less_bits(mem_path, out["stats"].get("seen_file_bytes", 0))
    os.makedirs(os.path.join(results, "urls"), exist_ok=True)
    with open(os.path.join(results, "urls", f"{a['site']}-{a['tool']}-{a['run']}.txt"), "w") as f:
        f.write("".join(u + "\n" for u in sorted(html)))
    with open(os.path.join(results, "results.jsonl"), "a") as f:
        f.write(json.dumps(out) + "\n")
    print(f"analyze: {a['site']} {a['tool']} run {a['run']}: {len(html)} HTML pages, {requests} requests, "
          f"{r404} 404s, {len(disallowed)} disallowed, {wall:.1f} s, rc {out['rc']}", file=sys.stderr)


# --- the summary ------------------------------------------------------------------------

def urls(results, site, tool, run):
    p = os.path.join(results, "urls", f"{site}-{tool}-{run}.txt")
    return set(open(p).read().split()) if os.path.exists(p) else set()


def rss_less_bits(r):
    """MB, from the engine's own field if stats.json has one whose name says so."""
    for k, v in r.get("stats_memory", {}).items():
        lk = k.lower()
        if ("less" in lk or "without" in lk or "excl" in lk) and isinstance(v, (int, float)):
            return v / 1e6 if v > 1e5 else v  # bytes, or already MB
    s = r.get("sampled")
    if s and s["samples"] and s["bits_mapping_found"]:
        return s["peak_rss_less_bits_kb"] / 1024
    return None


def summary(results):
    rows = [json.loads(l) for l in open(os.path.join(results, "results.jsonl"))]
    sites = list(dict.fromkeys(r["site"] for r in rows))
    tools = list(dict.fromkeys(r["tool"] for r in rows))
    med = statistics.median
    out = []
    nruns = max(r["run"] for r in rows)
    out.append(f"Medians of {nruns} runs per crawler (runs interleaved); pages = distinct HTML pages "
               "(200, text/html) in nginx's access log; missed = HTML pages wget2 fetched in the same "
               "run, robots.txt allows, and this crawler did not fetch (median; run 1's list below).")
    out.append("")
    out.append("| site | crawler | pages | requests | 404s | disallowed fetches | wall s | pages/s | "
               "CPU µs/page | peak RSS MB | RSS less presence bits MB | missed vs wget2 |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    missed_lists, notes = [], []
    ratio_lines = []
    for site in sites:
        per = {}
        for tool in tools:
            rs = [r for r in rows if r["site"] == site and r["tool"] == tool]
            if not rs:
                continue
            pps = med([r["html_pages"] / r["wall_s"] if r["wall_s"] else 0 for r in rs])
            cpu = med([r["cpu_s"] / r["html_pages"] * 1e6 if r["html_pages"] else float("nan") for r in rs])
            rss = med([r["peak_rss_kb"] / 1024 for r in rs])
            less = [rss_less_bits(r) for r in rs]
            less_s = f"{med(less):.0f}" if all(x is not None for x in less) else "—"
            missed = "—"
            if tool != "wget2":
                counts = []
                for r in rs:
                    rules = load_robots(r["robots"])
                    w = {u for u in urls(results, site, "wget2", r["run"]) if allowed(rules, u)}
                    t = urls(results, site, tool, r["run"])
                    counts.append(len(w - t))
                    if r["run"] == 1:
                        missed_lists.append((site, tool, len(w - t), sorted(w - t), len(t - w)))
                missed = f"{med(counts):.0f}"
            per[tool] = (pps, cpu, rss)
            bad_rc = [r["run"] for r in rs if r["rc"] != 0]
            if bad_rc:
                notes.append(f"- {site} {tool}: non-zero exit (timeout 124) in runs {bad_rc}")
            out.append(f"| {site} | {tool} | {med([r['html_pages'] for r in rs]):.0f} | "
                       f"{med([r['requests'] for r in rs]):.0f} | {med([r['status_404'] for r in rs]):.0f} | "
                       f"{med([r['disallowed_fetches'] for r in rs]):.0f} | {med([r['wall_s'] for r in rs]):.1f} | "
                       f"{pps:.0f} | {cpu:.0f} | {rss:.0f} | {less_s} | {missed} |")
        if "wget2" in per:
            wp, wc, wr = per["wget2"]
            for tool, (p, c, rs_) in per.items():
                if tool == "wget2":
                    continue
                ratio_lines.append(f"- {site}: {tool} / wget2: pages/s {p / wp:.2f}×, CPU per page "
                                   f"{c / wc:.2f}×, peak RSS {rs_ / wr:.1f}×")
    out.append("")
    out.extend(ratio_lines)
    out.extend(notes)
    out.append("")
    for site, tool, n, lst, extra in missed_lists:
        shown = ", ".join(lst[:5]) + (" …" if n > 5 else "")
        out.append(f"- run 1, {site}, {tool}: missed {n} of the allowed pages wget2 fetched"
                   f"{': ' + shown if n else ''}; fetched {extra} HTML pages wget2 did not")
    dis = [(r["site"], r["tool"], r["run"], r["disallowed_examples"]) for r in rows
           if r["disallowed_fetches"] and r["run"] == 1]
    for site, tool, run, ex in dis[:6]:
        out.append(f"- disallowed fetches, {site} {tool} run {run}: {'; '.join(ex[:3])}")
    mem = {r["tool"]: r.get("stats_memory") for r in rows if "stats_memory" in r}
    if mem and not any(mem.values()):
        out.append("- stats.json of this build reports no RSS figure, so 'RSS less presence bits' is "
                   "sampled from /proc/PID/smaps at 4 Hz (memsample.py): the peak of total RSS minus the "
                   "resident part of the presence-bit mapping (seen_file_bytes "
                   f"{next((r['stats'].get('seen_file_bytes', 0) for r in rows if 'stats' in r), 0) / 1e6:.0f} MB "
                   "at this crawl's --seen-capacity); peak RSS is getrusage's, bits included.")
    text = "\n".join(out) + "\n"
    with open(os.path.join(results, "summary.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "selftest":
        selftest()
    elif cmd == "record":
        record(sys.argv[2], parse_kv(sys.argv[3:]))
    elif cmd == "summary":
        summary(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
