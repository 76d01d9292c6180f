#!/usr/bin/env python3
"""Samples the resident memory of trawl while it crawls, so the benchmark can report
peak RSS less the presence bits when stats.json does not (yet) report that figure.

  memsample.py ROOT_PID NAME INTERVAL_S > samples.jsonl

Finds the process called NAME among ROOT_PID's descendants (run.sh starts
/usr/bin/time -> timeout -> trawl), then every INTERVAL_S reads its /proc/PID/smaps and
prints one JSON line: total RSS and the size and RSS of every mapping of 1 MiB or more
(the presence bits are one such mapping, anonymous by default; analyze.py picks the
mapping(s) whose size is the presence-bit size stats.json reports). Exits when the
process is gone. Reading smaps costs the kernel a page-table walk of the process, about
a millisecond here: at 4 Hz it is noise beside the crawl.
"""
import json
import os
import sys
import time


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        rest = st.rsplit(")", 1)[-1].split()
        if len(rest) > 1 and rest[1] == str(pid):
            out.append(int(d))
    return out


def find(root, name, deadline):
    while time.monotonic() < deadline:
        todo, seen = [root], set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            try:
                with open(f"/proc/{p}/comm") as f:
                    if f.read().strip() == name:
                        return p
            except OSError:
                pass
            todo.extend(children(p))
        if not os.path.exists(f"/proc/{root}"):
            return None
        time.sleep(0.02)
    return None


def sample(pid):
    total, big, size = 0, [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if line.startswith("Size:"):
                size = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
                total += rss
                if size is not None and size >= 1024:
                    big.append([size, rss])
    return {"t": time.monotonic(), "rss_kb": total, "big": big}


def main():
    root, name, interval = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    pid = find(root, name, time.monotonic() + 10)
    if pid is None:
        return
    while True:
        try:
            s = sample(pid)
        except (OSError, ValueError):
            break
        print(json.dumps(s), flush=True)
        time.sleep(interval)


if __name__ == "__main__":
    main()
