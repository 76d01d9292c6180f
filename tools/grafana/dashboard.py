#!/usr/bin/env python3
"""Writes `tools/grafana/trawl.json`, the Grafana dashboard over trawl's Prometheus
metrics, from the panel list below (the JSON is generated: edit this file, then run
`python3 tools/grafana/dashboard.py`; `--check` exits 1 when the JSON is stale).

Each panel is a title, a description, a unit and its queries; the layout (rows, six
stats a line, two time series a line) and Grafana's boilerplate are made here, so the
queries are written once, through `rate()` / `increase()` helpers that put the range
selector where PromQL wants it. `docs/monitoring.md` says how to load the dashboard
and what each panel means; `tests/grafana_dashboard.rs` checks that every metric and
label value it queries is served on `/metrics`.
"""

import json
import os
import sys

SEL = 'instance=~"$instance"'
DS = {"type": "prometheus", "uid": "${datasource}"}


def m(name, labels=""):
    """A selector of `name` on the chosen nodes, with more `labels` if given."""
    return f"{name}{{{SEL}{',' + labels if labels else ''}}}"


def rate(name, labels=""):
    return f"rate({m(name, labels)}[$__rate_interval])"


def increase(name, labels=""):
    return f"increase({m(name, labels)}[$__rate_interval])"


def stat(title, description, unit, expr, legend):
    return {"kind": "stat", "title": title, "description": description, "unit": unit,
            "targets": [(expr, legend)]}


def series(title, description, unit, targets, stacked=False):
    return {"kind": "timeseries", "title": title, "description": description, "unit": unit,
            "targets": targets, "stacked": stacked}


N = " {{instance}}"

LAYOUT = [
    ("Overview", [
        stat("Pages fetched", "Pages fetched so far (responses of any status), all selected nodes.",
             "short", f"sum({m('trawl_pages_total')})", "pages"),
        stat("Queued URLs", "URLs admitted and not yet finished, all selected nodes.",
             "short", f"sum({m('trawl_queued_urls')})", "queued"),
        stat("Hosts active", "Hosts the frontiers know, all selected nodes.",
             "short", f"sum({m('trawl_hosts_active')})", "hosts"),
        stat("Paused for disk", "1 while a node's fetching is paused for lack of disk space on --out.",
             "short", f"max({m('trawl_paused')})", "paused"),
        stat("Elapsed", "Seconds since the longest-running selected node started crawling.",
             "s", f"max({m('trawl_elapsed_seconds')})", "elapsed"),
        stat("Checkpoints", "Checkpoints written by the running processes.",
             "short", f"sum({m('trawl_checkpoints_total')})", "checkpoints"),
    ]),
    ("Throughput", [
        series("Pages per second",
               "rate() of trawl_pages_total: responses of any status per second, per node.",
               "reqps", [(rate("trawl_pages_total"), "{{instance}}")]),
        series("Bytes per second",
               "rate() of trawl_bytes_total: bytes received on the wire per second, per node.",
               "Bps", [(rate("trawl_bytes_total"), "{{instance}}")]),
        series("Requests in flight",
               "Fetches running (pages and robots.txt), and requests waiting for a per-address "
               "connection slot (--per-ip-connections) or for DNS; the waiting ones hold no "
               "--concurrency slot.",
               "short", [(m("trawl_requests_in_flight"), "in flight" + N),
                         (m("trawl_requests_waiting_for_address"), "waiting for address" + N),
                         (m("trawl_requests_waiting_for_dns"), "waiting for DNS" + N)]),
        series("URLs discovered, duplicate pages",
               "URLs admitted to the frontier per second, and pages per second whose content "
               "fingerprint was seen before.",
               "ops", [(rate("trawl_discovered_urls_total"), "discovered" + N),
                       (rate("trawl_duplicate_pages_total"), "duplicate pages" + N)]),
    ]),
    ("Frontier and hosts", [
        series("Queued URLs (RAM and disk)",
               "Queued URLs by where the frontier holds them (it spills to disk to stay under "
               "--memory), and all URLs admitted and not yet finished.",
               "short", [(m("trawl_frontier_urls", 'where="ram"'), "RAM" + N),
                         (m("trawl_frontier_urls", 'where="disk"'), "disk" + N),
                         (m("trawl_queued_urls"), "queued (all)" + N)]),
        series("Frontier bytes (RAM and disk)", "Frontier size by where it is held.",
               "bytes", [(m("trawl_frontier_bytes", 'where="ram"'), "RAM" + N),
                         (m("trawl_frontier_bytes", 'where="disk"'), "disk" + N)]),
        series("Hosts active / ready but idle",
               "Hosts the frontiers know, and hosts ready (politeness delay passed, URLs "
               "queued) with no request running. Many ready-idle hosts: the crawl is held by "
               "--concurrency or connections, not by politeness.",
               "short", [(m("trawl_hosts_active"), "active" + N),
                         (m("trawl_hosts_ready_idle"), "ready, idle" + N)]),
        series("Hosts parked, budget refusals",
               "Hosts parked because they kept failing (increase over the interval), and URLs "
               "refused per second because their host's --max-pages-per-host was spent.",
               "short", [(increase("trawl_hosts_parked_total"), "hosts parked" + N),
                         (rate("trawl_urls_refused_budget_total"), "URLs refused (budget) /s" + N)]),
    ]),
    ("Outcomes and caps", [
        series("Outcomes by kind",
               "Crawl-log decisions per second by outcome (fetched, robots, filtered, "
               "connect-error, ...), all selected nodes, stacked.",
               "ops", [(f"sum by (outcome) ({rate('trawl_outcomes_total')})", "{{outcome}}")],
               stacked=True),
        series("Caps hit",
               "Pages whose links a cap cut, robots.txt bodies cut, sitemap files cut or "
               "refused, sitemap entries refused, over the interval: each is a crawl-log "
               "annotation (docs/monitoring.md, stats.json).",
               "short", [(f"sum by (cap) ({increase('trawl_pages_truncated_total')})", "pages: {{cap}}"),
                         (f"sum by (cap) ({increase('trawl_robots_truncated_total')})", "robots.txt: {{cap}}"),
                         ("sum by (result) (" + increase("trawl_sitemaps_total", 'result!="read"') + ")",
                          "sitemaps: {{result}}"),
                         (f"sum({increase('trawl_sitemap_urls_refused_total')})", "sitemap entries refused")]),
    ]),
    ("Resources", [
        series("Memory: RSS against the budget",
               "Resident memory without the presence bits against --memory, the budget it must "
               "stay under; the presence bits' resident pages are mapped outside the budget.",
               "bytes", [(m("trawl_resident_bytes", 'part="rest"'), "RSS less presence bits" + N),
                         (m("trawl_memory_budget_bytes"), "budget (--memory)" + N),
                         (m("trawl_resident_bytes", 'part="presence_bits"'), "presence bits" + N)]),
        series("Disk: free against the reserve",
               "Free space on the --out filesystem and the reserve kept (--disk-reserve): "
               "fetching pauses when free falls under the reserve. Also the presence-bit "
               "file's size.",
               "bytes", [(m("trawl_disk_bytes", 'kind="free"'), "free" + N),
                         (m("trawl_disk_bytes", 'kind="reserve"'), "reserve" + N),
                         (m("trawl_seen_file_bytes"), "presence-bit file" + N)]),
        series("Disk pauses",
               "1 while fetching is paused for disk space; the fraction of time paused; pauses "
               "over the interval.",
               "short", [(m("trawl_paused"), "paused" + N),
                         (rate("trawl_disk_paused_seconds_total"), "fraction paused" + N),
                         (increase("trawl_disk_pauses_total"), "pauses" + N)]),
        series("Checkpoint time",
               "Wall seconds the last checkpoint took, and the fraction of time spent "
               "checkpointing.",
               "short", [(m("trawl_checkpoint_last_seconds"), "last checkpoint (s)" + N),
                         (rate("trawl_checkpoint_seconds_total"), "fraction checkpointing" + N)]),
        series("Checkpoint bytes",
               "Bytes the last checkpoint wrote, and checkpoint bytes written per second.",
               "bytes", [(m("trawl_checkpoint_last_bytes"), "last checkpoint" + N),
                         (rate("trawl_checkpoint_written_bytes_total"), "written /s" + N)]),
        series("Presence bits",
               "Fraction of presence bits set, and the expected false-positive rate now (the "
               "chance a new URL is wrongly taken as seen).",
               "percentunit", [(m("trawl_seen_fill_ratio"), "fill ratio" + N),
                               (m("trawl_seen_false_positive_rate"), "false-positive rate" + N)]),
    ]),
    ("DNS and robots.txt", [
        series("DNS lookups by result",
               "DNS lookups per second by result (cache hit, succeeded, no such name, timeout, "
               "dead, server error, local limit; docs/dns.md), stacked.",
               "ops", [(f"sum by (result) ({rate('trawl_dns_lookups_total')})", "{{result}}")],
               stacked=True),
        series("DNS lookups now, queries",
               "Lookups on the network and waiting for a network slot; queries sent, "
               "retransmitted and retried over TCP per second; names remembered as dead.",
               "short", [(f"sum by (state) ({m('trawl_dns_lookups')})", "lookups {{state}}"),
                         (f"sum by (kind) ({rate('trawl_dns_queries_total')})", "queries {{kind}} /s"),
                         (f"sum({m('trawl_dns_dead_names')})", "dead names")]),
        series("robots.txt fetches and cache",
               "robots.txt fetches and cache evictions per second (fetches far above new hosts: "
               "the cache is too small, raise --memory), and hosts whose rules are cached.",
               "short", [(rate("trawl_robots_fetches_total"), "fetches /s" + N),
                         (rate("trawl_robots_cache_evictions_total"), "evictions /s" + N),
                         (m("trawl_robots_cache_hosts"), "hosts cached" + N)]),
        series("robots.txt cache bytes",
               "Bytes charged for cached robots.txt rules (budget: a quarter of --memory).",
               "bytes", [(m("trawl_robots_cache_bytes"), "{{instance}}")]),
    ]),
    ("Farm (empty outside a farm)", [
        series("Farm links sent / received",
               "Links per second sent to other nodes' partition streams and read from this "
               "node's, and received links the presence bits already knew.",
               "ops", [(rate("trawl_farm_links_sent_total"), "sent" + N),
                       (rate("trawl_farm_links_received_total"), "received" + N),
                       (rate("trawl_farm_links_known_total"), "received, known" + N)]),
        series("Farm backlog and Redis",
               "Received entries waiting for a checkpoint before they are acknowledged, "
               "outgoing links not yet sent, Redis errors per second and seconds waited on "
               "Redis per second.",
               "short", [(m("trawl_farm_unacked_entries"), "unacked entries" + N),
                         (m("trawl_farm_waiting_links"), "waiting links" + N),
                         (rate("trawl_farm_redis_errors_total"), "Redis errors /s" + N),
                         (rate("trawl_farm_redis_wait_seconds_total"), "Redis wait s/s" + N)]),
    ]),
]


def panel(spec, pid, grid):
    targets = [{"datasource": DS, "expr": e, "legendFormat": leg, "refId": chr(ord("A") + i)}
               for i, (e, leg) in enumerate(spec["targets"])]
    p = {"type": spec["kind"], "title": spec["title"], "description": spec["description"],
         "id": pid, "datasource": DS, "gridPos": grid}
    if spec["kind"] == "stat":
        p["fieldConfig"] = {"defaults": {"unit": spec["unit"]}, "overrides": []}
        p["targets"] = targets
        p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "value", "graphMode": "area", "textMode": "auto"}
    else:
        stacking = "normal" if spec["stacked"] else "none"
        p["fieldConfig"] = {"defaults": {"unit": spec["unit"], "custom": {
            "drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
            "stacking": {"mode": stacking, "group": "A"}}}, "overrides": []}
        p["targets"] = targets
        p["options"] = {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}}
    return p


def dashboard():
    panels, pid, y = [], 1, 0
    for row_title, specs in LAYOUT:
        panels.append({"type": "row", "title": row_title, "id": pid, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        pid, y = pid + 1, y + 1
        x = 0
        for spec in specs:
            w, h = (4, 4) if spec["kind"] == "stat" else (12, 8)
            if x + w > 24:
                x, y = 0, y + h
            panels.append(panel(spec, pid, {"h": h, "w": w, "x": x, "y": y}))
            pid, x = pid + 1, x + w
        y += 4 if specs[-1]["kind"] == "stat" else 8
    instance_query = "label_values(trawl_elapsed_seconds, instance)"
    return {
        "title": "trawl crawl",
        "uid": "trawl-crawl",
        "description": "A trawl crawl (one node or a farm) over its Prometheus metrics "
                       "(--metrics-addr). docs/monitoring.md says what each panel means.",
        "tags": ["trawl", "crawler"],
        "editable": True,
        "graphTooltip": 1,
        "refresh": "10s",
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "annotations": {"list": []},
        "links": [],
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource",
             "query": "prometheus", "current": {}, "hide": 0, "refresh": 1, "regex": "",
             "options": []},
            {"name": "instance", "label": "Node", "type": "query", "datasource": DS,
             "definition": instance_query,
             "query": {"query": instance_query, "refId": "instance"},
             "multi": True, "includeAll": True, "allValue": ".*", "current": {}, "hide": 0,
             "refresh": 2, "regex": "", "sort": 1, "options": []},
        ]},
        "panels": panels,
    }


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trawl.json")
    text = json.dumps(dashboard(), indent=2) + "\n"
    if "--check" in sys.argv:
        with open(out, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{out} is stale: run python3 tools/grafana/dashboard.py", file=sys.stderr)
                return 1
        return 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
