#!/usr/bin/env python3
"""Figures and checks of tools/widebench/hubs_resume.sh (issue 26, "Resume"), from files.

Inputs in --work:
  run1.crawl.log.jsonl   run 1's whole crawl log as the kill -9 left it (copied before
                         the resume, which cuts the log back to the checkpoint);
  run1.manifest.json     the checkpoint current at the kill: its cut time (`unix_time`)
                         and the crawl-log bytes it covers (`positions.crawl_log_bytes`);
  trawl-out/crawl.log.jsonl  the log after run 2: run 1's first crawl_log_bytes bytes,
                         then run 2's lines;
  final.queued.tsv       `trawl inspect --urls` of the final checkpoint (SIGINT of run 2);
  run1/run2 .err .run.json .stats.json, run2.split, requests.jsonl (synthweb's log).

Three parts of the logs: A = run 1 before the cut (in the checkpoint), B = run 1 after
the cut (lost from the log by design; their URLs were queued at the cut and are fetched
again), C = run 2.

Checks:
- nothing lost: every URL run 1 discovered (the hub roots, which are the seeds, and the
  links of every page run 1 fetched with 200 in A or B: a hub page names its 9 sibling
  pages and its 100 leaf roots, a leaf page its 2 sibling pages; synthweb's hub mode,
  docs/synthweb.md) is, after the resume, in the crawl log (A or C) or queued in the
  final checkpoint. Also per host: every leaf host named in run 1 has a line in A or C
  or a URL queued at the end.
- robots.txt: a host whose last robots.txt fetch in A succeeded had its rules in the
  checkpoint (fresh 24 h: synthweb sends no freshness headers); any robots.txt fetch of
  it in C is a violation (expected 0). Hosts whose robots.txt was fetched only in B may
  be fetched again (expected, counted apart). Cross-checked against synthweb's request
  log (robots.txt requests after run2.split).
"""

import argparse
import calendar
import hashlib
import json
import re
from collections import Counter

HUB_PAGES, LEAF_PAGES, LEAVES_PER_PAGE = 10, 3, 100
HOST_RE = re.compile(r"https?://h(\d+)\.synth\.test(?::\d+)?(/\S*)$")


def epoch(ts):
    secs = calendar.timegm((int(ts[0:4]), int(ts[5:7]), int(ts[8:10]),
                            int(ts[11:13]), int(ts[14:16]), int(ts[17:19])))
    frac = ts[19:].rstrip("Z")
    return secs + (float(frac) if frac.startswith(".") else 0.0)


def page_index(path):
    """`/` -> 0, `/p/k` -> k, `/robots.txt` -> -1, anything else None."""
    if path == "/":
        return 0
    if path == "/robots.txt":
        return -1
    if path.startswith("/p/"):
        try:
            return int(path[3:])
        except ValueError:
            return None
    return None


class Part:
    """The lines of one part of a crawl log."""

    def __init__(self, name):
        self.name = name
        self.lines = 0
        self.pages = 0            # fetched, not robots.txt
        self.pages_200 = set()     # url keys (host * 16 + page) fetched with 200
        self.logged = set()        # url keys with any line (any outcome)
        self.hosts = set()         # host numbers with any line
        self.robots_last = {}      # host -> (time, ok) of its last robots.txt fetch
        self.robots_fetches = Counter()
        self.robots_times = []
        self.outcomes = Counter()
        self.first_t = self.last_t = None
        self.other = 0

    def add(self, r):
        self.lines += 1
        m = HOST_RE.match(r["url"])
        t = epoch(r["time"])
        self.first_t = t if self.first_t is None else min(self.first_t, t)
        self.last_t = t if self.last_t is None else max(self.last_t, t)
        outcome, status = r["outcome"], r.get("status")
        self.outcomes[outcome] += 1
        if not m:
            self.other += 1
            return
        host, path = int(m.group(1)), m.group(2)
        idx = page_index(path)
        is_robots = r.get("hops", "").endswith("P") or idx == -1
        self.hosts.add(host)
        if is_robots:
            if outcome in ("robots", "filtered", "budget"):
                return
            # A success or a 4xx (allow-all) is kept as rules; 3xx, 429, 5xx and
            # failures are retried (robots.md).
            ok = (outcome == "fetched" and status is not None and status < 500
                  and not 300 <= status < 400 and status != 429)
            self.robots_last[host] = (t, ok)
            self.robots_fetches[host] += 1
            self.robots_times.append(t)
            return
        if idx is None:
            self.other += 1
            return
        key = host * 16 + idx
        self.logged.add(key)
        if outcome == "fetched":
            self.pages += 1
            if status == 200:
                self.pages_200.add(key)

    def summary(self):
        return {"lines": self.lines, "pages_fetched": self.pages,
                "robots_fetches": sum(self.robots_fetches.values()),
                "robots_hosts": len(self.robots_fetches), "hosts_with_lines": len(self.hosts),
                "first_time": self.first_t, "last_time": self.last_t,
                "outcomes": dict(self.outcomes), "lines_not_a_synth_page": self.other}


def read_parts(path, cut, before, after, prefix_hash=None):
    """Reads a crawl log, lines starting before byte `cut` into `before`, the others into
    `after` (None: not kept). Returns the sha1 of the first `cut` bytes."""
    h = hashlib.sha1()
    off = 0
    with open(path, "rb") as f:
        for raw in f:
            if off < cut:
                h.update(raw[: max(0, cut - off)])
            part = before if off < cut else after
            off += len(raw)
            if part is None:
                continue
            try:
                r = json.loads(raw)
            except ValueError:
                continue
            part.add(r)
    return h.hexdigest(), off


def discovered(pages_200, hubs):
    """URL keys named by pages fetched with 200, with the hub roots (the seeds)."""
    out = {h * 16 for h in range(hubs)}
    leaves_named = set()
    for key in pages_200:
        host, idx = divmod(key, 16)
        if host < hubs:
            out.update(host * 16 + k for k in range(HUB_PAGES))
            if 0 <= idx < HUB_PAGES:
                base = hubs + 1000 * host + 100 * idx
                for j in range(LEAVES_PER_PAGE):
                    out.add((base + j) * 16)
                    leaves_named.add(base + j)
        else:
            out.update(host * 16 + k for k in range(LEAF_PAGES))
    return out, leaves_named


def queued_keys(path):
    keys, hosts, other = set(), set(), 0
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return None, None, None
    with f:
        for raw in f:
            url = raw.split(b"\t", 1)[0]
            m = re.match(rb"https?://h(\d+)\.synth\.test(?::\d+)?(/\S*)", url)
            if not m:
                other += 1
                continue
            host = int(m.group(1))
            idx = page_index(m.group(2).decode())
            hosts.add(host)
            if idx is None or idx < 0:
                other += 1
                continue
            keys.add(host * 16 + idx)
    return keys, hosts, other


def progress_lines(path):
    out = []
    try:
        for line in open(path, errors="replace"):
            if line.startswith("trawl: ") and " pages " in line and "known" in line:
                out.append(line.strip())
    except FileNotFoundError:
        pass
    return out


def known_from_progress(line):
    m = re.search(r"hosts (\d+) active / (\d+) known(?: \([^)]*\))?, line (\d+)", line or "")
    return {"hosts_active": int(m.group(1)), "hosts_known": int(m.group(2)),
            "line": int(m.group(3))} if m else None


def server_robots_after(path, split, hosts_of_interest):
    """robots.txt requests in synthweb's log after `split`: all, and of the hosts given."""
    n_all = n_int = 0
    hosts_int = set()
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return None
    with f:
        for raw in f:
            if b'"/robots.txt"' not in raw:
                continue
            r = json.loads(raw)
            if r["t_us"] / 1e6 < split or r["target"] != "/robots.txt":
                continue
            n_all += 1
            m = re.match(r"h(\d+)\.synth\.test", r["host"])
            if m and int(m.group(1)) in hosts_of_interest:
                n_int += 1
                hosts_int.add(int(m.group(1)))
    return {"robots_requests_after_split": n_all,
            "of_checkpointed_hosts": n_int, "checkpointed_hosts_asked": len(hosts_int)}


def load(path, default=None):
    try:
        return json.load(open(path))
    except (FileNotFoundError, ValueError):
        return default


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--hubs", type=int, required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    w, hubs = a.work, a.hubs
    man = load(f"{w}/run1.manifest.json")
    if man is None:
        raise SystemExit("no checkpoint was current at the kill (run1.manifest.json missing)")
    cut = man["positions"]["crawl_log_bytes"]
    cut_time = man["unix_time"]
    run1 = load(f"{w}/run1.run.json")
    run2 = load(f"{w}/run2.run.json")

    A, B, C = Part("A"), Part("B"), Part("C")
    h1, run1_bytes = read_parts(f"{w}/run1.crawl.log.jsonl", cut, A, B)
    h2, final_bytes = read_parts(f"{w}/trawl-out/crawl.log.jsonl", cut, None, C)
    prefix_same = h1 == h2

    # ---- nothing lost ---------------------------------------------------------------------
    run1_pages_200 = A.pages_200 | B.pages_200
    disc, leaves_named = discovered(run1_pages_200, hubs)
    qkeys, qhosts, qother = queued_keys(f"{w}/final.queued.tsv")
    qkeys = qkeys or set()
    qhosts = qhosts or set()
    in_log = A.logged | C.logged
    lost = [k for k in disc if k not in in_log and k not in qkeys]
    any_log = A.logged | B.logged | C.logged
    lost_either_log = [k for k in disc if k not in any_log and k not in qkeys]
    covered_by_log = sum(1 for k in disc if k in in_log)
    covered_by_queue_only = sum(1 for k in disc if k not in in_log and k in qkeys)
    hosts_lines = A.hosts | C.hosts
    leaves_lost = [h for h in leaves_named if h not in hosts_lines and h not in qhosts]
    # Pages fetched in A and again in C (a resume should not refetch what the checkpoint
    # holds as done) and pages of B fetched again in C (expected: queued at the cut).
    a_refetched = len(A.pages_200 & C.pages_200)
    b_refetched = len(B.pages_200 & C.pages_200)
    b_not_again = B.pages_200 - C.pages_200 - A.pages_200
    b_not_again_queued = sum(1 for k in b_not_again if k in qkeys)

    # ---- robots.txt -------------------------------------------------------------------------
    ckpt_ok = {h for h, (t, ok) in A.robots_last.items() if ok}
    ckpt_failed = {h for h, (t, ok) in A.robots_last.items() if not ok}
    violations = {h: C.robots_fetches[h] for h in ckpt_ok if C.robots_fetches.get(h)}
    failed_refetched = sum(1 for h in ckpt_failed if C.robots_fetches.get(h))
    b_only = {h for h in B.robots_last if h not in A.robots_last}
    b_only_refetched = sum(1 for h in b_only if C.robots_fetches.get(h))
    a_after_cut_time = sum(1 for h, (t, _) in A.robots_last.items() if t > cut_time + 1)
    server = server_robots_after(f"{w}/requests.jsonl",
                                 float(open(f"{w}/run2.split").read()), ckpt_ok)

    p1, p2 = progress_lines(f"{w}/run1.err"), progress_lines(f"{w}/run2.err")
    s1, s2 = load(f"{w}/run1.stats.json", {}), load(f"{w}/run2.stats.json", {})
    man2 = load(f"{w}/run2.manifest.json", {})
    keys = ("pages", "discovered", "queued", "hosts_known", "hosts_active", "hosts_in_table",
            "line_records", "host_activations", "robots_fetches", "robots_cache_hosts",
            "checkpoints", "checkpoint_last_secs", "checkpoint_max_secs", "elapsed_secs")
    rep = {
        "hubs": hubs,
        "run1": {**(run1 or {}), "log": A.summary() | {"bytes": run1_bytes},
                 "after_cut": B.summary(),
                 "last_progress": p1[-1] if p1 else None,
                 "at_kill": known_from_progress(p1[-1] if p1 else None),
                 "stats_json": {k: s1.get(k) for k in keys}},
        "checkpoint_at_kill": {
            "epoch": man.get("epoch"), "unix_time": cut_time,
            "secs_after_run1_start": round(cut_time - run1["start"], 1) if run1 else None,
            "secs_before_kill": round(run1["signal_time"] - cut_time, 1) if run1 else None,
            "crawl_log_bytes": cut, "queued_urls": man.get("queued_urls"),
            "counters": man.get("counters")},
        "run2": {**(run2 or {}), "log": C.summary(), "final_log_bytes": final_bytes,
                 "log_prefix_equals_run1_up_to_cut": prefix_same,
                 "last_progress": p2[-1] if p2 else None,
                 "stats_json": {k: s2.get(k) for k in keys},
                 "final_checkpoint": {"epoch": man2.get("epoch"), "queued_urls": man2.get("queued_urls")}},
        "lost_check": {
            "urls_discovered_in_run1": len(disc),
            "leaf_hosts_named_in_run1": len(leaves_named),
            "in_final_log": covered_by_log,
            "only_queued_at_end": covered_by_queue_only,
            "lost": len(lost), "lost_examples": [divmod(k, 16) for k in lost[:10]],
            "lost_counting_run1_after_cut_lines": len(lost_either_log),
            "leaf_hosts_lost": len(leaves_lost), "leaf_hosts_lost_examples": leaves_lost[:10],
            "final_queue_urls": len(qkeys), "final_queue_hosts": len(qhosts),
            "final_queue_other_lines": qother,
            "pages_of_A_fetched_again_in_C": a_refetched,
            "pages_of_B_fetched_again_in_C": b_refetched,
            "pages_of_B_not_fetched_again": len(b_not_again),
            "of_which_queued_at_end": b_not_again_queued,
        },
        "robots_check": {
            "hosts_rules_checkpointed": len(ckpt_ok),
            "hosts_last_fetch_failed_before_cut": len(ckpt_failed),
            "violations_hosts": len(violations),
            "violations_fetches": sum(violations.values()),
            "violations_examples": sorted(violations)[:10],
            "failed_before_cut_fetched_again": failed_refetched,
            "hosts_first_fetched_after_cut": len(b_only),
            "of_which_fetched_again_in_run2": b_only_refetched,
            "checkpointed_hosts_logged_after_cut_time": a_after_cut_time,
            "server_side": server,
            "run2_robots_fetches": sum(C.robots_fetches.values()),
            "run2_robots_hosts_more_than_once": sum(1 for c in C.robots_fetches.values() if c > 1),
        },
    }
    rep["acceptance"] = {
        "nothing_lost": len(lost) == 0 and len(leaves_lost) == 0 and prefix_same,
        "no_robots_refetch_of_checkpointed_hosts": len(violations) == 0
        and (server is None or server["of_checkpointed_hosts"] == 0),
    }
    if a.out:
        json.dump(rep, open(a.out, "w"), indent=1)
    r1, r2, ck, lc, rc = rep["run1"], rep["run2"], rep["checkpoint_at_kill"], rep["lost_check"], rep["robots_check"]
    print(f"hub web {hubs} hubs; run 1 killed (SIGKILL) {r1.get('signal_time', 0) - r1.get('start', 0):.0f} s in; "
          f"at the kill: {r1['at_kill']}")
    print(f"checkpoint current at the kill: cp {ck['epoch']} at +{ck['secs_after_run1_start']} s "
          f"({ck['secs_before_kill']} s before the kill), {ck['queued_urls']} URLs queued, log {cut} bytes")
    print(f"run 1: pages {A.pages + B.pages} ({A.pages} before the cut, {B.pages} after), robots.txt "
          f"{sum(A.robots_fetches.values()) + sum(B.robots_fetches.values())}")
    print(f"run 2: pages {C.pages}, robots.txt {rc['run2_robots_fetches']}; exit {r2.get('rc')} "
          f"{r2.get('exit', 0) - r2.get('signal_time', 0):.1f} s after SIGINT; final queue {lc['final_queue_urls']} URLs "
          f"on {lc['final_queue_hosts']} hosts; log prefix kept: {prefix_same}")
    print(f"nothing lost: {lc['urls_discovered_in_run1']} URLs discovered in run 1 ({lc['leaf_hosts_named_in_run1']} leaves): "
          f"{lc['in_final_log']} in the final log, {lc['only_queued_at_end']} queued at the end, {lc['lost']} lost; "
          f"leaf hosts lost {lc['leaf_hosts_lost']}; pages of A fetched again {lc['pages_of_A_fetched_again_in_C']}, "
          f"of B fetched again {lc['pages_of_B_fetched_again_in_C']} (not again {lc['pages_of_B_not_fetched_again']}, "
          f"{lc['of_which_queued_at_end']} of them queued)")
    print(f"robots.txt: {rc['hosts_rules_checkpointed']} hosts with rules in the checkpoint; fetched again in run 2: "
          f"{rc['violations_hosts']} hosts ({rc['violations_fetches']} fetches) = violations; server side "
          f"{rc['server_side']}; {rc['hosts_first_fetched_after_cut']} hosts fetched only after the cut, "
          f"{rc['of_which_fetched_again_in_run2']} of them again in run 2 (expected)")
    print("acceptance: " + ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in rep["acceptance"].items()))


if __name__ == "__main__":
    main()
