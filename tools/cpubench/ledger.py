#!/usr/bin/env python3
"""The CPU-per-page ledger (issue 20): where trawl's CPU goes, by stage, from `perf
record -g` profiles of whole crawls (tools/cpubench/run.sh records them).

  ledger.py [--results RESULTS.jsonl] [--top N] [--dump] LABEL=PERF.DATA ...
  ledger.py --selftest

LABEL is CASE/TOOL (e.g. static-identity/trawl-warc): with --results, the stage shares
are turned into µs per page with the median CPU per page of that case and crawler's
unprofiled crawls (falling back to the profiled crawl's own figure), and wget2's CPU per
page for the case is printed beside. Only samples of trawl's threads count (comm
`trawl*`). Each sample is charged to one stage by its call chain (leaf first):

- kernel samples by the kernel frames: network (tcp_, sock_, epoll, softirq, loopback)
  -> receive; file writes (vfs_write on a file, ext4, page cache, fsync) -> write;
  futex and scheduler -> hand-offs; page faults, mmap, munmap, madvise, brk -> the stage
  of the user code that faulted or asked (presence bits when trawl::seen did, the
  allocator when malloc did, ...); anything else -> kernel, other;
- user samples by the first frame, leaf upwards, that names a stage: malloc/free/realloc
  -> allocator; inflate (zlib-rs inflate, brotli, libdeflate decompress) and httparse ->
  decode; ISA-L (isal_*, igzip) -> WARC compress: igzip; libdeflate/zlib-rs compress -> WARC compress: libdeflate; sha1 -> digest; trawl::http ->
  decode; trawl::html -> scan; trawl::url -> canonicalize; trawl::seen -> presence bits;
  trawl::frontier -> frontier; trawl::warc -> WARC records (formatting, copies); the
  url, idna and percent_encoding crates -> canonicalize; crossbeam and std channels ->
  hand-offs;
  trawl::engine, ::net, ::host, ::robots, ::crawllog, ::checkpoint, mio -> engine and
  net (user-space event loop, scheduling); memcpy, memmove, memchr, core::, alloc::,
  std:: and generic code pass to their caller's stage; a copy whose caller the DWARF
  unwinder lost (glibc's memmove often) -> its own row; no stage found -> other.
"""
import json
import os
import re
import statistics
import subprocess
import sys

STAGES = [
    ("receive", "receive (kernel: sockets, epoll, loopback TCP)"),
    ("decode", "decode (HTTP head, chunked, inflate)"),
    ("scan", "scan (link extraction)"),
    ("canon", "canonicalize (URL)"),
    ("seen", "presence bits (seen)"),
    ("frontier", "frontier"),
    ("igzip", "WARC compress: igzip (ISA-L)"),
    ("compress", "WARC compress: libdeflate, zlib-rs (small records, stored, other levels)"),
    ("digest", "digest (SHA-1)"),
    ("records", "WARC records (format, copies)"),
    ("write", "write (file I/O, kernel)"),
    ("engine", "engine + net (event loop, scheduling, robots, logs)"),
    ("alloc", "allocator (malloc/free)"),
    ("handoff", "hand-offs (channels, futex, scheduler)"),
    ("kother", "kernel, other"),
    ("copy", "memcpy/memmove/memcmp, caller lost by the unwinder"),
    ("other", "other / unknown"),
]
LABELS = dict(STAGES)

TRAWL_MODULES = {
    "http": "decode", "html": "scan", "url": "canon", "seen": "seen",
    "frontier": "frontier", "warc": "records", "engine": "engine", "net": "engine",
    "host": "engine", "robots": "engine", "crawllog": "engine", "checkpoint": "engine",
    "recrawl": "engine", "sitemap": "engine", "provenance": "engine", "disk": "engine",
    "cli": "engine", "tls": "decode", "ascii": None,
}

K_FAULT = re.compile(r"page_fault|do_user_addr_fault|handle_mm_fault|__x64_sys_(mmap|munmap|madvise|brk|mprotect)"
                     r"|do_mmap|vm_mmap|__vm_munmap|do_madvise")
K_NET = re.compile(r"tcp_|sock_|inet_|ep_poll|epoll|__sys_recv|__sys_send|net_rx|netif_|loopback|"
                   r"ip_|__x64_sys_(recv|send|connect|accept|shutdown|socket|getsockopt|setsockopt)|skb")
K_FILE = re.compile(r"ext4_|xfs_|btrfs_|generic_perform_write|filemap_|iomap_|vfs_fsync|__x64_sys_(fsync|fdatasync|pwrite|openat|unlink|rename|ftruncate|fallocate)|"
                    r"do_sys_open|path_openat|shmem_write|vfs_write|writeback|file_write")
K_HANDOFF = re.compile(r"futex|schedule|sched_|__x64_sys_(sched_yield|nanosleep|clock_nanosleep)|"
                       r"try_to_wake_up|finish_task_switch|__x64_sys_(eventfd|write)$")

ALLOC = re.compile(r"^(malloc|free|realloc|calloc|cfree|__libc_(malloc|free|realloc|calloc)|_int_(malloc|free|realloc)|"
                   r"malloc_consolidate|tcache_|__rust_(alloc|dealloc|realloc|alloc_zeroed)|_?mi_|mi_|"
                   r"alloc::alloc::|unlink_chunk|sysmalloc|__GI___libc_(malloc|free))")
INFLATE = re.compile(r"zlib_rs::inflate|^inflate|brotli_decompressor::|libdeflate_.*decompress|"
                     r"decompress_|httparse::|flate2::.*(Decompress|decompress)")
DEFLATE = re.compile(r"libdeflate|^deflate_|zlib_rs::deflate|libdeflater::Compressor|^isal_deflate|^isal_|"
                     r"igzip|trawl::warc::igzip|"
                     r"compress_block|^build_(huffman|tree)|^(sort|heapify|make_canonical|compute_length)")
ISAL = re.compile(r"^isal_|igzip|^_?isal")
SHA1 = re.compile(r"sha1|Sha1|sha_?1|trawl::provenance::digest")
PASS = re.compile(r"^(__memcpy|__memmove|__memset|memcpy|memmove|memset|__memchr|memchr|__memrchr|"
                  r"__strlen|bcmp|__memcmp|memcmp|core::|alloc::|std::|hashbrown::|<core::|<alloc::|"
                  r"<std::|<hashbrown::|crc32|libdeflate_crc32|crc32fast)")
COPY = re.compile(r"^(__)?(memcpy|memmove|memset|mempcpy|memcmp|bcmp)")
URLCRATE = re.compile(r"^<?(url|idna|percent_encoding|form_urlencoded)::")
HANDOFF = re.compile(r"^<?(crossbeam_channel|crossbeam_utils|std::sync::mpmc|std::sync::mpsc|parking_lot)")
TRAWL = re.compile(r"^<?(?:&)?trawl::([a-z_0-9]+)")


def kernel_stage(kframes):
    names = [s for s, _ in kframes]
    if any(K_FAULT.search(n) for n in names):
        return "FAULT"
    if any(K_FILE.search(n) for n in names) and not any(K_NET.search(n) for n in names):
        return "write"
    if any(K_NET.search(n) for n in names):
        return "receive"
    if any(K_HANDOFF.search(n) for n in names):
        return "handoff"
    return "kother"


def user_stage(sym):
    """A stage this user-space frame names, or None to pass to its caller."""
    if not sym or sym.startswith("[unknown]"):
        return None
    if ALLOC.search(sym):
        return "alloc"
    if SHA1.search(sym):
        return "digest"
    if INFLATE.search(sym):
        return "decode"
    if DEFLATE.search(sym):
        return "igzip" if ISAL.search(sym) else "compress"
    m = TRAWL.match(sym)
    if m:
        return TRAWL_MODULES.get(m.group(1), "engine")
    if URLCRATE.match(sym):
        return "canon"
    if HANDOFF.match(sym):
        return "handoff"
    if sym.startswith("mio::") or sym.startswith("<mio::"):
        return "engine"
    if PASS.match(sym):
        return None
    return None


def classify(frames):
    """frames: [(sym, dso)] leaf first -> stage key."""
    kframes = [f for f in frames if f[1] == "[kernel.kallsyms]"]
    uframes = [f for f in frames if f[1] != "[kernel.kallsyms]"]
    ustage = None
    for sym, _ in uframes:
        ustage = user_stage(sym)
        if ustage:
            break
    if kframes and frames[0][1] == "[kernel.kallsyms]":
        k = kernel_stage(kframes)
        if k == "FAULT":
            return ustage or "kother"
        if k == "write" and ustage in ("seen",):
            return "seen"
        return k
    if not ustage and uframes and COPY.match(uframes[0][0]):
        return "copy"
    return ustage or "other"


FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\(([^()]*)\)\s*$")


def samples(perf_data):
    """Yields (comm, period, frames) from `perf script`."""
    cmd = ["perf", "script", "-i", perf_data, "--no-inline", "-F", "comm,tid,period,ip,sym,dso"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         errors="replace", bufsize=1 << 20)
    comm = None
    period = 0
    frames = []
    for line in p.stdout:
        if not line.strip():
            if comm is not None:
                yield comm, period, frames
            comm, frames = None, []
            continue
        if line[0] not in " \t":
            if comm is not None:
                yield comm, period, frames
            parts = line.split()
            # comm may contain spaces: the last two fields are tid and period.
            comm = " ".join(parts[:-2]) if len(parts) >= 3 else parts[0]
            try:
                period = int(parts[-1])
            except ValueError:
                period = 1
            frames = []
            continue
        m = FRAME.match(line)
        if m:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(2))
            sym = re.sub(r"::h[0-9a-f]{16}$", "", sym)
            frames.append((sym, m.group(3)))
    if comm is not None:
        yield comm, period, frames
    p.wait()


def caller_stage(frames):
    """For an allocator sample: the first stage above the allocator's own frames."""
    seen_alloc = False
    for sym, dso in frames:
        if dso == "[kernel.kallsyms]":
            continue
        st = user_stage(sym)
        if st == "alloc":
            seen_alloc = True
            continue
        if st and seen_alloc:
            return st
    return "other"


def analyse(perf_data, top):
    stage_w = {k: 0 for k, _ in STAGES}
    sym_w = {}
    comm_w = {}
    alloc_w = {}
    total = 0
    nsamples = 0
    for comm, period, frames in samples(perf_data):
        if not comm.startswith("trawl"):
            continue
        st = classify(frames) if frames else "other"
        stage_w[st] += period
        total += period
        nsamples += 1
        comm_w[comm] = comm_w.get(comm, 0) + period
        if st == "alloc":
            cs = caller_stage(frames)
            alloc_w[cs] = alloc_w.get(cs, 0) + period
        leaf = frames[0] if frames else ("[unknown]", "?")
        key = (leaf[0] if leaf[1] != "[kernel.kallsyms]" else leaf[0] + " [k]", st)
        sym_w[key] = sym_w.get(key, 0) + period
    tops = sorted(sym_w.items(), key=lambda kv: -kv[1])[:top]
    return total, nsamples, stage_w, tops, comm_w, alloc_w


def load_results(path):
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def cpu_per_page(rows, case, tool):
    """(median over unprofiled crawls, the profiled crawl's) CPU µs per page."""
    un = [r["cpu_us_per_page"] for r in rows if r["case"] == case and r["tool"] == tool
          and not r.get("profiled") and r.get("cpu_us_per_page")]
    pr = [r["cpu_us_per_page"] for r in rows if r["case"] == case and r["tool"] == tool
          and r.get("profiled") and r.get("cpu_us_per_page")]
    return (statistics.median(un) if un else None), (pr[-1] if pr else None)


def selftest():
    k = "[kernel.kallsyms]"
    t = "/x/trawl"
    cases = [
        ([("copy_user_generic", k), ("tcp_recvmsg", k), ("__x64_sys_recvfrom", k), ("recv", "libc"),
          ("trawl::net::conn::io::read", t)], "receive"),
        ([("clear_page_erms", k), ("do_anonymous_page", k), ("handle_mm_fault", k),
          ("asm_exc_page_fault", k), ("trawl::seen::set::Set::insert", t)], "seen"),
        ([("ext4_buffered_write_iter", k), ("vfs_write", k), ("write", "libc"),
          ("trawl::warc::writer::Writer::write", t)], "write"),
        ([("__memmove_avx_unaligned_erms", "libc"), ("trawl::html::scan::Scanner::next", t)], "scan"),
        ([("_int_malloc", "libc"), ("malloc", "libc"), ("trawl::url::canon::canonicalize", t)], "alloc"),
        ([("deflate_compress_fastest", t), ("libdeflate_deflate_compress", t),
          ("trawl::warc::compressed::compress", t)], "compress"),
        ([("isal_deflate_body_04", t), ("trawl::warc::igzip::Igzip::compress", t)], "igzip"),
        ([("trawl::provenance::digest::shani::lanes", t), ("trawl::warc::capture::x", t)], "digest"),
        ([("sha1::compress::compress", t), ("trawl::warc::record::digest", t)], "digest"),
        ([("zlib_rs::inflate::inflate_fast_help", t), ("trawl::http::decode::gzip::push", t)], "decode"),
        ([("<trawl::url::Url as core::fmt::Display>::fmt", t)], "canon"),
        ([("core::ptr::drop_in_place<trawl::warc::X>", t), ("trawl::frontier::queue::Q::push", t)], "frontier"),
        ([("futex_wait", k), ("__x64_sys_futex", k), ("syscall", "libc"), ("std::thread::park", t)], "handoff"),
        ([("[unknown]", "[unknown]")], "other"),
        ([("url::parser::Parser::parse_path", t), ("trawl::engine::core::x", t)], "canon"),
        ([("crossbeam_channel::flavors::array::Channel<T>::recv", t), ("trawl::engine::x", t)], "handoff"),
        ([("__memmove_avx512_unaligned_erms", "libc"), ("[unknown]", "[unknown]")], "copy"),
        ([("mi_theap_malloc_aligned", t), ("trawl::engine::core::page::x", t)], "alloc"),
    ]
    for frames, want in cases:
        got = classify(frames)
        assert got == want, (frames, got, want)
    print("ledger: selftest ok", file=sys.stderr)


def main(argv):
    if "--selftest" in argv:
        selftest()
        return
    results, top, dump, specs = None, 15, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--results":
            results = argv[i + 1]; i += 2; continue
        if a == "--top":
            top = int(argv[i + 1]); i += 2; continue
        if a == "--dump":
            dump = True; i += 1; continue
        label, _, path = a.partition("=")
        specs.append((label, path))
        i += 1
    if not specs:
        raise SystemExit(__doc__)
    rows = load_results(results)
    cols = []
    for label, path in specs:
        case, _, tool = label.partition("/")
        total, nsamples, stage_w, tops, comm_w, alloc_w = analyse(path, top)
        med, prof = cpu_per_page(rows, case, tool)
        us = med if med is not None else prof
        wget, _ = cpu_per_page(rows, case, "wget2")
        cols.append(dict(label=label, case=case, tool=tool, total=total, n=nsamples, stage_w=stage_w,
                         tops=tops, comm_w=comm_w, alloc_w=alloc_w, us=us, med=med, prof=prof, wget=wget))
    head = "| stage |" + "".join(f" {c['label']} % | µs/page |" for c in cols)
    print(head)
    print("|---|" + "---:|---:|" * len(cols))
    for key, name in STAGES:
        if all(c["stage_w"][key] == 0 for c in cols):
            continue
        cells = []
        for c in cols:
            share = c["stage_w"][key] / c["total"] if c["total"] else 0.0
            us = f"{share * c['us']:.1f}" if c["us"] is not None else "—"
            cells.append(f" {share * 100:.1f} | {us} |")
        print(f"| {name} |" + "".join(cells))
    print("| **total trawl** (CPU µs/page, median of the timed crawls) |"
          + "".join(f" 100 | **{c['us']:.0f}** |" if c["us"] is not None else " 100 | — |" for c in cols))
    print("| profiled crawl's own CPU µs/page (perf overhead included) |"
          + "".join(f" | {c['prof']:.0f} |" if c["prof"] is not None else " | — |" for c in cols))
    print("| wget2, same coding (CPU µs/page, median) |"
          + "".join(f" | {c['wget']:.0f} |" if c["wget"] is not None else " | — |" for c in cols))
    print("| perf samples in trawl's threads |" + "".join(f" {c['n']:,} | |" for c in cols))
    print()
    print("The allocator row by the stage that called malloc/free (µs per page):")
    print()
    for c in cols:
        if c["us"] is None or not c["total"]:
            continue
        parts = ", ".join(f"{LABELS[k].split(' (')[0]} {w / c['total'] * c['us']:.1f}" for k, w in
                          sorted(c["alloc_w"].items(), key=lambda kv: -kv[1]) if w / c["total"] * c["us"] >= 0.1)
        print(f"- {c['label']}: {parts}")
    print()
    for c in cols:
        threads = ", ".join(f"{k} {v / c['total'] * 100:.0f} %" for k, v in
                            sorted(c["comm_w"].items(), key=lambda kv: -kv[1]))
        print(f"Top {top} leaf symbols, {c['label']} (threads: {threads}):")
        print()
        print("| % | µs/page | symbol | stage |")
        print("|---:|---:|---|---|")
        for (sym, st), w in c["tops"]:
            share = w / c["total"] if c["total"] else 0
            us = f"{share * c['us']:.1f}" if c["us"] is not None else "—"
            s = sym if len(sym) <= 110 else sym[:107] + "..."
            print(f"| {share * 100:.1f} | {us} | `{s}` | {st} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
