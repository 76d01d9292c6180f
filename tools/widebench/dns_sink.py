#!/usr/bin/env python3
"""A DNS server that never answers: the dead names' nameserver of tools/widebench.

Binds a UDP socket (and a TCP listener that accepts and holds connections), reads
every query, writes one line `EPOCH_SECONDS QTYPE QNAME` per query to the log, and
never replies, so a resolver asking it waits for its own timeout (no REFUSED, no
NXDOMAIN, no ICMP port-unreachable: the port is open). Bounded: it stops after
--max-secs, and it only binds the loopback address it is given.

    dns_sink.py --addr 127.0.0.2 --port 53 --log dead-queries.log --max-secs 3600
"""

import argparse
import ipaddress
import select
import socket
import sys
import time

QTYPES = {1: "A", 28: "AAAA", 5: "CNAME", 15: "MX", 16: "TXT", 33: "SRV", 65: "HTTPS"}


def qname(packet: bytes) -> tuple[str, str]:
    """The first question's name and type of a DNS query ("?" if malformed)."""
    labels, i = [], 12
    try:
        while i < len(packet):
            n = packet[i]
            if n == 0:
                qtype = int.from_bytes(packet[i + 1 : i + 3], "big")
                return ".".join(labels).lower(), QTYPES.get(qtype, str(qtype))
            if n & 0xC0:
                break
            labels.append(packet[i + 1 : i + 1 + n].decode("ascii", "replace"))
            i += 1 + n
    except IndexError:
        pass
    return "?", "?"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.2")
    ap.add_argument("--port", type=int, default=53)
    ap.add_argument("--log", required=True)
    ap.add_argument("--max-secs", type=float, default=3600)
    a = ap.parse_args()
    if not ipaddress.ip_address(a.addr).is_loopback:
        print("dns_sink: only loopback addresses", file=sys.stderr)
        return 2
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((a.addr, a.port))
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((a.addr, a.port))
    tcp.listen(128)
    held = []  # TCP connections kept open, unanswered (bounded below)
    end = time.monotonic() + a.max_secs
    with open(a.log, "a", buffering=1) as log:
        print(f"ready {a.addr}:{a.port}", flush=True)
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([udp, tcp], [], [], min(left, 1.0))
            for s in ready:
                if s is udp:
                    data, _ = udp.recvfrom(4096)
                    name, qtype = qname(data)
                    log.write(f"{time.time():.3f} {qtype} {name}\n")
                else:
                    conn, _ = tcp.accept()
                    held.append(conn)
                    if len(held) > 1000:
                        held.pop(0).close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
