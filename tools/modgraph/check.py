#!/usr/bin/env python3
"""The module graph of trawl's sources, and the rules it must keep (issues 21 and 27).

Reads every module of the library (`src/lib.rs`) and the binary (`src/main.rs`) by
following their `mod` declarations (`#[path]` honoured), tokenizes each file (comments,
strings, raw strings and char literals are tokens of their own, so they neither hide
nor trigger anything), parses its `use` trees (braces, `as`, `self`, `super`, `crate`,
globs), `extern crate .. as`, plain `type` aliases and every path in its code
(`crate::a::b`, `super::super::x`, `I::now`, `<T>::f`, macro calls), and resolves each
path against the module it sits in: `super`/`self` chains climb the module path, a first
segment bound by a `use`, a glob or a child `mod` is replaced by what it names, and a
crate path is also followed through the re-exports (`pub use`) it passes. Then checks:

1. **No cycles between siblings, at every level.** For a reference from module A to
   module B, let P be their lowest common ancestor; the edge is drawn between P's two
   children that hold A and B. A module and its own ancestors or descendants are one
   unit (a parent declares its children). Every level's graph must be acyclic.
2. **Closed regions** (`closed` in the rules table: the crawl core). Nothing there names
   a clock, logging, a file, a temporary directory, a socket, a thread, a process, a
   channel or the environment (the list: `EXTERN_RULES` in crate_model.py), however the path is
   spelled. `#[cfg(test)]` code is exempt from the clock rules only (a test starts its
   synthetic clock from some instant).
3. **Clock-free regions** (`clock_free`: the core and the frontier): no `Instant::now`,
   `SystemTime::now` or `.elapsed()` outside `#[cfg(test)]` code.
4. **Nevers** (`[[never]]` and `leaves` in the table): module arrows that must not exist,
   with any path form. A `[[allow]]` entry keeps a known exception a warning.
5. **Re-exports** (`[reexports]`): a `pub use` of another top-level module's item,
   except the library's public face, is reported (a warning, or an error with
   `mode = "error"`).

Usage: `python3 tools/modgraph/check.py [--root DIR] [--rules FILE] [--graph]`. Exits 1
and prints every violation when a rule is broken; warnings never fail. `--graph` prints
the top-level edges. The rules table defaults to `DIR/tools/modgraph/rules.toml`.
"""

from __future__ import annotations

import argparse
import bisect
import os
import re
import sys
import tomllib
from collections import defaultdict

from crate_model import *  # noqa: F401,F403 (the model: tokens, modules, references)
from crate_model import Crate, Module, Ref, Tokens  # noqa: F401


class Report:
    def __init__(self):
        self.problems: list[str] = []
        self.warnings: list[str] = []

    def problem(self, msg: str):
        if msg not in self.problems:
            self.problems.append(msg)

    def warn(self, msg: str):
        if msg not in self.warnings:
            self.warnings.append(msg)


def readings(c: Crate, mod: tuple, r: Ref) -> list[tuple]:
    """The readings of a reference: its resolutions, crate ones also canonicalized."""
    out = []
    segs = r.segs
    if r.kind == "macro" and len(segs) == 1 and not c.lookup(mod, segs[0], frozenset())[0]:
        return [("::", "std") + segs] if segs[0] in PRINT_MACROS else [("::",) + segs]
    for p in c.resolve(mod, segs):
        out.append(p)
        if p[0] == "crate":
            q = c.canonical(p[1:])
            if q != p:
                out.append(q)
    return out


def extern_violation(ext: tuple, kind: str) -> str | None:
    """Why naming the outside path `ext` breaks the closed region's rules, if it does."""
    for _, prefix, why in EXTERN_RULES:
        if under(ext, prefix):
            return why
    last = ext[-1] if ext else ""
    if kind == "macro" or len(ext) == 2:
        if last in PRINT_MACROS and (len(ext) == 1 or ext[0] in ("std", "core")):
            return "printing (diagnostics leave as actions)"
    if kind == "macro":
        if last in LOG_MACROS and (len(ext) == 1 or ext[0] in ("tracing", "log")):
            return "logging (diagnostics leave as actions)"
        if last == "include" and (len(ext) == 1 or ext[0] in ("std", "core")):
            return "include! (code the lint does not read)"
    for x in ext:
        if x in IO_NAMES:
            return IO_NAMES[x]
    if len(ext) >= 2 and ext[-2] == "File" and last in ("open", "create", "create_new", "options"):
        return "file I/O (the core opens no file)"
    return None


def is_clock(ext: tuple) -> bool:
    return len(ext) >= 2 and ext[-2] in CLOCK_TYPES and ext[-1] == "now"


def check_closed(c: Crate, rules: dict, rep: Report):
    closed = [parse_mod(x) for x in rules.get("closed", [])]
    clock_free = [parse_mod(x) for x in rules.get("clock_free", [])] + closed
    for r in closed + clock_free:
        if r not in c.mods:
            rep.problem(f"rules: closed or clock-free region {dotted(r)} is no module")
    macros: dict[str, list[tuple]] = defaultdict(list)
    for mp, m in c.mods.items():
        for name in m.macros:
            macros[name].append(mp)
    for mp, m in sorted(c.mods.items()):
        in_closed = any(under(mp, r) for r in closed)
        home = [r for r in clock_free if under(mp, r)]
        if not home:
            continue
        region = "closed" if in_closed else "clock-free"
        for r in m.refs:
            spelled = spell(r.segs)
            if r.kind == "macro" and r.segs[-1] in macros:
                if not any(under(d, h) for d in macros[r.segs[-1]] for h in home):
                    where = ", ".join(sorted(dotted(d) for d in macros[r.segs[-1]]))
                    rep.problem(f"{region}: {r.file}:{r.line}: a macro defined outside ({where}), unchecked here: {spelled}!")
                    continue
            if r.kind == "elapsed":
                if not r.test:
                    rep.problem(f"{region}: {r.file}:{r.line}: reads the clock: .elapsed() (time comes in as an input)")
                continue
            for p in readings(c, mp, r):
                if p[0] != "::":
                    continue
                ext = p[1:]
                if is_clock(ext):
                    if not r.test:
                        rep.problem(f"{region}: {r.file}:{r.line}: reads the clock: {spelled} (time comes in as an input)")
                    break
                why = extern_violation(ext, r.kind) if in_closed else None
                if why is not None:
                    rep.problem(f"closed: {r.file}:{r.line}: {why}: {spelled}")
                    break


def nevers(c: Crate, rules: dict) -> list[dict]:
    out = []
    for e in rules.get("never", []):
        out.append(
            {
                "from": parse_mod(e["from"]),
                "to": parse_mod(e["to"]),
                "except": [parse_mod(x) for x in e.get("except", [])],
                "why": e.get("why", ""),
            }
        )
    leaves = rules.get("leaves", {})
    for leaf in leaves.get("modules", []):
        for to in leaves.get("never", []):
            out.append({"from": parse_mod(leaf), "to": parse_mod(to), "except": [], "why": "a leaf"})
    return out


def check_nevers(c: Crate, rules: dict, rep: Report):
    allows = {(parse_mod(a["from"]), parse_mod(a["to"])): a.get("reason", "") for a in rules.get("allow", [])}
    table = nevers(c, rules)
    for e in table:
        for end in ("from", "to"):
            if e[end] not in c.mods:
                rep.problem(f"rules: never {dotted(e['from'])} -> {dotted(e['to'])}: no module {dotted(e[end])}")
        e["except_c"] = [q[1:] for q in map(c.canonical, e["except"]) if q[0] == "crate"]
    for a in allows:
        if not any((e["from"], e["to"]) == a for e in table):
            rep.problem(f"rules: allow {dotted(a[0])} -> {dotted(a[1])} is no never arrow")
    used: set = set()
    for mp, m in sorted(c.mods.items()):
        rules_here = [e for e in table if under(mp, e["from"])]
        if not rules_here:
            continue
        for r in m.refs:
            reads = [p[1:] for p in readings(c, mp, r) if p[0] == "crate"]
            if not reads:
                continue
            for e in rules_here:
                if any(under(p, x) for p in reads for x in e["except"] + e["except_c"]):
                    continue
                hit = [p for p in reads if under(p, e["to"]) and not under(p, e["from"])]
                if not hit:
                    continue
                key = (e["from"], e["to"])
                msg = f"{r.file}:{r.line} names {dotted(hit[0])} ({spell(r.segs)})"
                arrow = f"{dotted(e['from'])} -> {dotted(e['to'])}"
                if key in allows:
                    used.add(key)
                    rep.warn(f"known exception {arrow} ({allows[key]}): {msg}")
                else:
                    why = f" ({e['why']})" if e["why"] else ""
                    rep.problem(f"never {arrow}{why}: {msg}")
    for a, reason in allows.items():
        if a not in used:
            rep.warn(f"allowed exception {dotted(a[0])} -> {dotted(a[1])} no longer holds: remove it from the rules table")


def check_reexports(c: Crate, rules: dict, rep: Report):
    conf = rules.get("reexports", {})
    mode = conf.get("mode", "warn")
    face_files: set[str] = set()
    face_names: dict[str, list[tuple]] = defaultdict(list)
    for f in conf.get("public_face", []):
        if "names" in f:
            face_names[f["file"]] += [parse_mod(x) for x in f["names"]]
        else:
            face_files.add(f["file"])
    found = []
    for mp, m in sorted(c.mods.items()):
        top = mp[:1]
        for fname, ln, vis, leaves in m.pub_uses:
            if fname in face_files:
                continue
            foreign = []
            for segs in leaves:
                # Only what the statement spells: a path through a name it binds
                # elsewhere is that binding's own re-export.
                if segs[0] not in PATH_HEADS and segs[0] not in m.children:
                    continue
                for p in c.resolve(mp, segs):
                    if p[0] == "crate" and len(p) > 1 and p[1:2] != top:
                        if not any(under(p[1:], x) for x in face_names.get(fname, [])):
                            foreign.append(p[1:])
            if foreign:
                names = ", ".join(sorted({dotted(p) for p in foreign}))
                found.append(f"{fname}:{ln}: {vis} use re-exports {names} (another top-level module's)")
    for f in found:
        (rep.problem if mode == "error" else rep.warn)(f"re-export: {f}")
    return len(found)


def check_cycles(c: Crate, rep: Report, show_graph: bool):
    mods = c.mods
    edges: dict[tuple, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for mp, m in mods.items():
        for r in m.refs:
            for p in c.resolve(mp, r.segs):
                if p[0] != "crate":
                    continue
                named = p[1:]
                target = longest_module(mods, named)
                k = 0
                while k < min(len(mp), len(target)) and mp[k] == target[k]:
                    k += 1
                if k == len(mp) or k == len(target):
                    continue  # ancestor or descendant: one unit
                edges[mp[:k]][mp[k]][target[k]].append((r.file, r.line, dotted(named)))
    for level, g in sorted(edges.items()):
        for scc in sccs(g):
            if len(scc) < 2:
                continue
            where = "::".join(level) or f"crate root ({c.name})"
            lines = [f"cycle among the children of {where}: {' -> '.join(sorted(scc))}"]
            for a in sorted(scc):
                for b in sorted(scc):
                    if b in g.get(a, {}):
                        f, ln, named = g[a][b][0]
                        lines.append(f"    {a} -> {b}: {f}:{ln} names {named} ({len(g[a][b])} references)")
            rep.problem("\n".join(lines))
    if show_graph:
        for a, bs in sorted(edges.get((), {}).items()):
            print(f"{c.name}: {a} -> {', '.join(sorted(bs))}")


def longest_module(mods: dict[tuple, Module], path: tuple) -> tuple:
    for k in range(len(path), -1, -1):
        if path[:k] in mods:
            return path[:k]
    return ()


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".", help="the repository (holds src/)")
    ap.add_argument("--rules", default=None, help="the rules table (default ROOT/tools/modgraph/rules.toml)")
    ap.add_argument("--graph", action="store_true", help="print the top-level edges")
    args = ap.parse_args(argv)
    root = args.root
    rules_file = args.rules or os.path.join(root, "tools", "modgraph", "rules.toml")
    rep = Report()
    rules: dict = {}
    try:
        with open(rules_file, "rb") as f:
            rules = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        rep.problem(f"rules: cannot read the rules table {rules_file}: {e}")
    if rules and not rules.get("closed"):
        rep.problem(f"rules: {rules_file} names no closed region")
    rel = lambda p: os.path.relpath(p, root)  # noqa: E731
    reexports = 0
    for crate, rootfile in (("lib", "lib.rs"), ("bin", "main.rs")):
        path = os.path.join(root, "src", rootfile)
        if not os.path.exists(path):
            continue
        c = Crate(crate, load(crate, path, rel))
        for m in c.mods.values():
            for p in m.problems:
                rep.problem(f"modules: {p}")
        check_cycles(c, rep, args.graph)
        if crate == "lib":
            check_closed(c, rules, rep)
            check_nevers(c, rules, rep)
            reexports = check_reexports(c, rules, rep)
    for w in rep.warnings:
        print(f"warning: {w}")
    if reexports and rules.get("reexports", {}).get("mode", "warn") != "error":
        print(f"warning: {reexports} re-export(s) of another top-level module's items (rules.toml [reexports] mode = \"warn\")")
    for p in rep.problems:
        print(p)
    if rep.problems:
        print(f"modgraph: {len(rep.problems)} problem(s)")
        return 1
    print("modgraph: no import cycles at any level; the closed and clock-free regions hold; no never arrow outside the allow list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
