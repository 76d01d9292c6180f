#!/usr/bin/env python3
"""The module import graph of trawl's sources, and the rules it must keep (issue 21).

Reads every module of the library (`src/lib.rs`) and the binary (`src/main.rs`) by
following their `mod` declarations, collects each module's references to other modules
of its crate (`use crate::..`, `use super::..`, paths such as `crate::engine::Shared`
in code, brace groups expanded), and checks:

1. **No cycles between siblings, at every level.** For a reference from module A to
   module B, let P be their lowest common ancestor; the edge is drawn between P's two
   children that hold A and B. A module and its own ancestors or descendants are one
   unit (a parent declares its children; a child naming its parent's items is not an
   edge). Every level's graph must be acyclic: no two siblings import each other and no
   cycle runs through a third.
2. **The crawl core is closed.** `engine::core` (and everything under it) names nothing
   of `engine` outside `engine::core`, nothing of `net` (the fetch vocabulary lives in
   `fetch`), and no `Instant::now`, `tracing`, or `std::fs`.

Usage: `python3 tools/modgraph/check.py [--graph]` from the repository root; exits 1 and
prints every violation when a rule is broken. `--graph` prints the top-level edges.
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict

SRC = "src"

# Rule 2: the closed core, and what it may not name.
CORE = ("engine", "core")
CORE_FORBIDDEN_PATHS = [("engine",), ("net",)]
# (pattern, why, applies to test modules too). A test must start its synthetic clock
# from some instant, so only the core's own code is held to "no Instant::now".
CORE_FORBIDDEN_TEXT = [
    (re.compile(r"\bInstant\s*::\s*now\b"), "Instant::now (time comes in as an input)", False),
    (re.compile(r"\btracing\s*::|\b(?:info|warn|error|debug|trace)!\s*\("), "logging (diagnostics leave as actions)", True),
    (re.compile(r"\bstd\s*::\s*fs\b|\bFile\s*::\s*(?:open|create)\b|\bOpenOptions\b"), "file I/O (the core opens no file)", True),
    (re.compile(r"\btempfile\b|\btempdir\b"), "a temporary directory", True),
    (re.compile(r"\bTcpStream\b|\bTcpListener\b|\bUdpSocket\b"), "a socket", True),
]


def strip(text: str) -> str:
    """The code with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.compile(r'b?r(#*)"').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"' or (c == "b" and text.startswith('b"', i) and (i == 0 or not text[i - 1].isalnum())):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'])'").match(text, i)
            if m:
                out.append("' '")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


class Module:
    def __init__(self, crate: str, path: tuple, file: str):
        self.crate, self.path, self.file = crate, path, file
        self.refs: list[tuple[tuple, int]] = []  # (absolute path named, line)
        self.code_lines: list[tuple[int, str]] = []


def module_file(dir_of_children: str, name: str) -> str | None:
    for cand in (os.path.join(dir_of_children, name + ".rs"), os.path.join(dir_of_children, name, "mod.rs")):
        if os.path.exists(cand):
            return cand
    return None


def children_dir(file: str) -> str:
    base = os.path.basename(file)
    if base in ("lib.rs", "main.rs", "mod.rs"):
        return os.path.dirname(file)
    return file[: -len(".rs")]


USE_RE = re.compile(r"\buse\s+((?:crate|super|self)\b[^;]*);")
PATH_RE = re.compile(r"(?<![\w:$])((?:crate|super|self)(?:\s*::\s*\w+)+)")
MOD_DECL_RE = re.compile(r"\bmod\s+(\w+)\s*;")
MOD_INLINE_RE = re.compile(r"\bmod\s+(\w+)\s*\{")


def expand_use(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def parse(s: str, prefix: str) -> list[str]:
        out, depth, start = [], 0, 0
        parts = []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for p in parts:
            if not p:
                continue
            b = p.find("{")
            if b >= 0:
                head = p[:b].rstrip(":")
                out += parse(p[b + 1 : p.rfind("}")], prefix + head + "::" if head else prefix)
            else:
                out.append(prefix + p)
        return out

    return parse(tree, "")


def resolve(mod_path: tuple, raw: str) -> tuple | None:
    segs = [s for s in re.split(r"\s*::\s*", raw) if s]
    if not segs:
        return None
    cur: list[str]
    if segs[0] == "crate":
        cur, segs = [], segs[1:]
    elif segs[0] in ("super", "self"):
        cur = list(mod_path)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                if not cur:
                    return None
                cur.pop()
            segs = segs[1:]
    else:
        return None
    return tuple(cur + [s for s in segs if s not in ("*", "self")])


def load(crate: str, root: str) -> dict[tuple, Module]:
    mods: dict[tuple, Module] = {}

    def visit(file: str, path: tuple):
        text = open(file, encoding="utf-8").read()
        code = strip(text)
        scan(file, code, path, children_dir(file))

    def scan(file: str, code: str, base: tuple, cdir: str):
        # Track inline `mod x { ... }` blocks so `super::` resolves from where it is.
        stack: list[tuple[tuple, int]] = [(base, -1)]
        depth = 0
        mods.setdefault(base, Module(crate, base, file))
        line = 1
        i, n = 0, len(code)
        pending_inline: list[tuple[int, str]] = []
        for m in MOD_INLINE_RE.finditer(code):
            pending_inline.append((m.end() - 1, m.group(1)))
        inline_at = {pos: name for pos, name in pending_inline}
        owner_at: list[tuple] = [()] * (n + 1)
        cur = base
        for i, ch in enumerate(code):
            owner_at[i] = cur
            if ch == "{":
                depth += 1
                if i in inline_at:
                    cur = cur + (inline_at[i],)
                    stack.append((cur, depth))
                    mods.setdefault(cur, Module(crate, cur, file))
            elif ch == "}":
                if len(stack) > 1 and stack[-1][1] == depth:
                    stack.pop()
                    cur = stack[-1][0]
                depth -= 1
        for m in MOD_DECL_RE.finditer(code):
            owner = owner_at[m.start()]
            sub = os.path.join(cdir, *owner[len(base):]) if owner != base else cdir
            f = module_file(sub, m.group(1))
            if f is None:
                print(f"warning: {file}: module file for `mod {m.group(1)};` not found", file=sys.stderr)
                continue
            visit(f, owner + (m.group(1),))
        seen_spans = []
        for m in USE_RE.finditer(code):
            owner = owner_at[m.start()]
            ln = code.count("\n", 0, m.start()) + 1
            for item in expand_use(m.group(1)):
                r = resolve(owner, item)
                if r is not None:
                    mods[owner].refs.append((r, ln))
            seen_spans.append((m.start(), m.end()))
        for m in PATH_RE.finditer(code):
            if any(a <= m.start() < b for a, b in seen_spans):
                continue
            owner = owner_at[m.start()]
            ln = code.count("\n", 0, m.start()) + 1
            r = resolve(owner, m.group(1))
            if r is not None:
                mods[owner].refs.append((r, ln))
        offset = 0
        for k, l in enumerate(code.split("\n"), 1):
            mods[owner_at[min(offset, n)] if n else base].code_lines.append((k, l))
            offset += len(l) + 1

    visit(root, ())
    return mods


def longest_module(mods: dict[tuple, Module], path: tuple) -> tuple:
    for k in range(len(path), -1, -1):
        if path[:k] in mods:
            return path[:k]
    return ()


def main() -> int:
    show_graph = "--graph" in sys.argv
    problems: list[str] = []
    for crate, root in (("lib", os.path.join(SRC, "lib.rs")), ("bin", os.path.join(SRC, "main.rs"))):
        mods = load(crate, root)
        # level (parent path) -> child -> child -> [(file, line, named)]
        edges: dict[tuple, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
        for mp, m in mods.items():
            for named, ln in m.refs:
                target = longest_module(mods, named)
                k = 0
                while k < min(len(mp), len(target)) and mp[k] == target[k]:
                    k += 1
                if k == len(mp) or k == len(target):
                    continue  # ancestor or descendant: one unit
                edges[mp[:k]][mp[k]][target[k]].append((m.file, ln, "::".join(named)))
                if mp[: len(CORE)] == CORE and crate == "lib":
                    for bad in CORE_FORBIDDEN_PATHS:
                        if target[: len(bad)] == bad and target[: len(CORE)] != CORE:
                            problems.append(
                                f"closed core: {m.file}:{ln} names {'::'.join(named)} ({'::'.join(bad)} is outside the core)"
                            )
        if crate == "lib":
            for mp, m in mods.items():
                if mp[: len(CORE)] != CORE:
                    continue
                in_tests = "tests" in mp
                for ln, l in m.code_lines:
                    for rx, why, in_tests_too in CORE_FORBIDDEN_TEXT:
                        if rx.search(l) and (in_tests_too or not in_tests):
                            problems.append(f"closed core: {m.file}:{ln}: {why}: {l.strip()}")
                            break
        for level, g in sorted(edges.items()):
            for scc in sccs(g):
                if len(scc) < 2:
                    continue
                where = "::".join(level) or f"crate root ({crate})"
                lines = [f"cycle among the children of {where}: {' -> '.join(sorted(scc))}"]
                for a in sorted(scc):
                    for b in sorted(scc):
                        if b in g.get(a, {}):
                            f, ln, named = g[a][b][0]
                            lines.append(f"    {a} -> {b}: {f}:{ln} names {named} ({len(g[a][b])} references)")
                problems.append("\n".join(lines))
        if show_graph:
            for a, bs in sorted(edges.get((), {}).items()):
                print(f"{crate}: {a} -> {', '.join(sorted(bs))}")
    for p in problems:
        print(p)
    if problems:
        print(f"modgraph: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("modgraph: no import cycles at any level; the crawl core is closed")
    return 0


def sccs(g: dict[str, dict[str, list]]) -> list[set[str]]:
    """Tarjan's strongly connected components."""
    index, low, on, stack, out = {}, {}, set(), [], []
    nodes = set(g) | {b for bs in g.values() for b in bs}
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
