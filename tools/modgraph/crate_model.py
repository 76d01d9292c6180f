"""The crate model behind the module-graph lint (check.py): Rust sources tokenized
(comments, strings, raw strings and char literals are tokens of their own), modules
found by following `mod` declarations (`#[path]` honoured), `use` trees parsed, every
path in the code collected as a reference and resolved against the module it sits in.
No rule lives here: check.py reads the model and judges it.
"""

from __future__ import annotations

import bisect
import os
import re
from collections import defaultdict

# ---------------------------------------------------------------------------------
# Rules on paths outside the crate (applied in the `closed` regions).
# (what, path prefix, why). A path matches when its resolved segments start with the
# prefix. The clock (`Instant::now`, `SystemTime::now`, `.elapsed()`) is `is_clock`'s.

EXTERN_RULES: list[tuple[str, tuple, str]] = [
    ("logging", ("tracing",), "logging (diagnostics leave as actions)"),
    ("logging", ("log",), "logging (diagnostics leave as actions)"),
    ("logging", ("std", "io", "stdout"), "printing to stdout"),
    ("logging", ("std", "io", "stderr"), "printing to stderr"),
    ("logging", ("std", "io", "stdin"), "reading stdin"),
    ("file", ("std", "fs"), "file I/O (the core opens no file)"),
    ("file", ("std", "os", "unix", "fs"), "file I/O (the core opens no file)"),
    ("file", ("std", "os", "fd"), "file descriptors"),
    ("file", ("memmap2",), "a file mapping"),
    ("temp", ("tempfile",), "a temporary directory"),
    ("temp", ("std", "env", "temp_dir"), "a temporary directory"),
    ("env", ("std", "env"), "the process environment"),
    ("socket", ("std", "net"), "a socket"),
    ("socket", ("std", "os", "unix", "net"), "a socket"),
    ("socket", ("mio",), "the event loop (sockets live in net)"),
    ("socket", ("socket2",), "a socket"),
    ("socket", ("rustls",), "TLS (sockets live in net)"),
    ("socket", ("redis",), "Redis (the farm's bus)"),
    ("thread", ("std", "thread"), "threads and sleeping (the core never blocks)"),
    ("thread", ("std", "sync", "mpsc"), "a channel (actions leave through `out`)"),
    ("thread", ("crossbeam_channel",), "a channel (actions leave through `out`)"),
    ("process", ("std", "process"), "the process (exit, commands)"),
    ("process", ("signal_hook",), "signals"),
    ("process", ("libc",), "system calls"),
]
# Macros that print or log, by the path they resolve to (unbound names are std's).
PRINT_MACROS = {"println", "eprintln", "print", "eprint", "dbg"}
LOG_MACROS = {"info", "warn", "error", "debug", "trace", "event", "span", "log"}
# Names that are I/O whatever they resolve to (a path through an unparsed macro, say).
IO_NAMES = {
    "OpenOptions": "file I/O (the core opens no file)",
    "TcpStream": "a socket",
    "TcpListener": "a socket",
    "UdpSocket": "a socket",
    "UnixStream": "a socket",
    "tempdir": "a temporary directory",
    "tempfile": "a temporary directory",
}
CLOCK_TYPES = {"Instant", "SystemTime"}

# ---------------------------------------------------------------------------------
# Tokens.

ID, PUNCT, LIT, LIFE = "id", "p", "lit", "life"
TOKEN_RE = re.compile(
    r"""
     (?P<ws>\s+)
    |(?P<lc>//[^\n]*)
    |(?P<bc>/\*)
    |(?P<rstr>[bc]?r(?P<hashes>\#*)")
    |(?P<str>[bc]?"[^"\\]*(?:\\.[^"\\]*)*")
    |(?P<chr>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]*\}|.)|[^\\'\n])')
    |(?P<life>'[^\W\d]\w*)
    |(?P<rid>r\#[^\W\d]\w*)
    |(?P<id>[^\W\d]\w*)
    |(?P<num>\d\w*(?:\.\d\w*)?)
    |(?P<p>::|->|=>|\$crate|[^\s\w])
    """,
    re.X | re.S,
)


class Tokens:
    """A file's tokens: kinds, texts and offsets, in three lists (comments dropped)."""

    def __init__(self, text: str):
        self.kind: list[str] = []
        self.text: list[str] = []
        self.pos: list[int] = []
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        i, n = 0, len(text)
        kind, txt, pos = self.kind, self.text, self.pos
        match = TOKEN_RE.match
        while i < n:
            m = match(text, i)
            if m is None:  # a stray character (a backslash outside a string): skip it
                i += 1
                continue
            g = m.lastgroup
            if g in ("ws", "lc"):
                i = m.end()
                continue
            if g == "bc":
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth, j = depth + 1, j + 2
                    elif text.startswith("*/", j):
                        depth, j = depth - 1, j + 2
                    else:
                        j += 1
                i = j
                continue
            if g == "rstr":
                close = '"' + m.group("hashes")
                j = text.find(close, m.end())
                j = n if j < 0 else j + len(close)
                kind.append(LIT), txt.append(text[i:j]), pos.append(i)
                i = j
                continue
            t = m.group()
            if g in ("str", "chr", "num"):
                kind.append(LIT)
            elif g == "life":
                kind.append(LIFE)
            elif g == "rid":
                kind.append(ID)
                t = t[2:]
            elif g == "id":
                kind.append(ID)
            else:
                kind.append(PUNCT)
            txt.append(t)
            pos.append(i)
            i = m.end()

    def line(self, k: int) -> int:
        p = self.pos[k] if k < len(self.pos) else (self.pos[-1] if self.pos else 0)
        return bisect.bisect_right(self.newlines, p - 1) + 1 if p else 1


# ---------------------------------------------------------------------------------
# Modules and the references they hold.

PATH_HEADS = {"crate", "$crate", "self", "super"}


class Ref:
    """One path a module names: its segments as written (a leading "::" for a global
    path), where, and whether it sits in `#[cfg(test)]` code."""

    __slots__ = ("segs", "file", "line", "test", "kind", "glob")

    def __init__(self, segs, file, line, test, kind, glob=False):
        self.segs, self.file, self.line, self.test, self.kind, self.glob = segs, file, line, test, kind, glob


class Module:
    def __init__(self, crate: str, path: tuple, file: str, test: bool):
        self.crate, self.path, self.file, self.test = crate, path, file, test
        self.children: set[str] = set()
        self.bindings: dict[str, list[tuple]] = defaultdict(list)  # name -> [segs]
        self.globs: list[tuple] = []
        self.macros: list[str] = []  # the `macro_rules!` it defines
        self.refs: list[Ref] = []
        # (file, line, visibility, [segs]) of every `pub .. use`, for the re-export rule
        self.pub_uses: list[tuple[str, int, str, list[tuple]]] = []
        self.problems: list[str] = []  # found while reading (a module file not found)


def children_dir(file: str) -> str:
    base = os.path.basename(file)
    if base in ("lib.rs", "main.rs", "mod.rs"):
        return os.path.dirname(file)
    return file[: -len(".rs")]


def module_file(dir_of_children: str, name: str) -> str | None:
    for cand in (os.path.join(dir_of_children, name + ".rs"), os.path.join(dir_of_children, name, "mod.rs")):
        if os.path.exists(cand):
            return cand
    return None


def parse_use_tree(t: Tokens, i: int, end: int) -> list[tuple[tuple, str | None, bool]]:
    """The leaves of the use tree in tokens [i, end): (segments, bound name, is glob)."""
    out: list[tuple[tuple, str | None, bool]] = []
    text, kind = t.text, t.kind

    def tree(i: int, prefix: tuple) -> int:
        segs = list(prefix)
        if i < end and text[i] == "::":
            if not segs:
                segs.append("::")
            i += 1
        while i < end:
            s = text[i]
            if s == "{":
                i += 1
                while i < end and text[i] != "}":
                    i = tree(i, tuple(segs))
                    if i < end and text[i] == ",":
                        i += 1
                return i + 1
            if s == "*":
                out.append((tuple(segs), None, True))
                return i + 1
            if kind[i] == ID or s == "$crate":
                if s != "self" or not segs:  # `a::{self}` is `a`
                    segs.append(s)
                i += 1
                if i < end and text[i] == "::":
                    i += 1
                    continue
                name = segs[-1] if segs else s
                if i + 1 < end and text[i] == "as":
                    name = text[i + 1] if text[i + 1] != "_" else None
                    i += 2
                out.append((tuple(segs), name, False))
                return i
            # something a use tree cannot hold (a macro variable): skip to the next item
            while i < end and text[i] not in (",", "}"):
                i += 1
            return i
        return i

    while i < end:
        i = tree(i, ())
        if i < end and text[i] == ",":
            i += 1
    return out


def matching(t: Tokens, i: int, open_: str, close: str) -> int:
    """Index of the token closing the delimiter opened at i (or the last token)."""
    depth, n, text = 0, len(t.text), t.text
    while i < n:
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n - 1


def load(crate: str, root_file: str, rel) -> dict[tuple, Module]:
    """Every module reachable from the crate root file, with its references."""
    mods: dict[tuple, Module] = {}
    reading: set[str] = set()  # the files being read, outermost first (a #[path] loop)

    def visit(file: str, path: tuple, test: bool):
        real = os.path.realpath(file)
        if real in reading:
            mods[path[:-1]].problems.append(f"{rel(file)}: a `mod` loop (#[path]) reaches this file again")
            return
        reading.add(real)
        with open(file, encoding="utf-8") as f:
            t = Tokens(f.read())
        parse(t, file, path, test, children_dir(file))
        reading.discard(real)

    def parse(t: Tokens, file: str, base: tuple, base_test: bool, cdir: str):
        text, kind, n = t.text, t.kind, len(t.text)
        fname = rel(file)
        mods.setdefault(base, Module(crate, base, fname, base_test))
        # The delimiter stack: (char, module path, test, children dir).
        stack: list[tuple[str, tuple, bool, str]] = [("", base, base_test, cdir)]
        arm = -1  # stack depth at which an outer #[cfg(test)] waits for its item's `{`
        pending_test, pending_path = False, None
        i = 0
        while i < n:
            s, k = text[i], kind[i]
            _, cur, test, cur_dir = stack[-1]
            if s == "#" and i + 1 < n and text[i + 1] in ("[", "!"):
                inner = text[i + 1] == "!"
                a = i + 2 if inner else i + 1
                if a < n and text[a] == "[":
                    b = matching(t, a, "[", "]")
                    body = text[a + 1 : b]
                    if body == ["cfg", "(", "test", ")"]:
                        if inner:
                            stack[-1] = (stack[-1][0], cur, True, cur_dir)
                            if len(stack) == 1:
                                mods[base].test = True
                        else:
                            pending_test, arm = True, len(stack)
                    elif len(body) == 3 and body[0] == "path" and body[1] == "=" and kind[a + 3] == LIT:
                        pending_path = body[2].strip('"')
                    i = b + 1
                    continue
            if k == ID and s == "mod" and i + 2 < n and kind[i + 1] == ID and text[i + 2] in (";", "{"):
                name, mtest = text[i + 1], test or pending_test
                child = cur + (name,)
                mods.setdefault(cur, Module(crate, cur, fname, test)).children.add(name)
                if text[i + 2] == "{":
                    stack.append(("{", child, mtest, os.path.join(cur_dir, name)))
                    mods.setdefault(child, Module(crate, child, fname, mtest))
                    i += 3
                else:
                    if pending_path is not None:
                        f = os.path.normpath(os.path.join(os.path.dirname(file) if len(stack) == 1 else cur_dir, pending_path))
                        f = f if os.path.exists(f) else None
                    else:
                        f = module_file(cur_dir, name)
                    if f is None:
                        mods[cur].problems.append(f"{fname}:{t.line(i)}: module file for `mod {name};` not found")
                    else:
                        visit(f, child, mtest)
                    i += 3
                pending_test, pending_path, arm = False, None, -1
                continue
            if k == ID and s == "use" and i + 1 < n and text[i + 1] != "<":
                j = i + 1
                depth = 0
                while j < n and not (text[j] == ";" and depth == 0):
                    depth += text[j] == "{"
                    depth -= text[j] == "}"
                    j += 1
                vis = None
                if i > 0 and text[i - 1] == "pub":
                    vis = "pub"
                elif i > 0 and text[i - 1] == ")":
                    o = i - 1
                    while o > 0 and text[o] != "(":
                        o -= 1
                    if o > 0 and text[o - 1] == "pub":
                        vis = "pub(" + " ".join(text[o + 1 : i - 1]) + ")"
                m = mods.setdefault(cur, Module(crate, cur, fname, test))
                ln = t.line(i)
                utest = test or pending_test
                leaves = parse_use_tree(t, i + 1, j)
                for segs, name, glob in leaves:
                    if glob:
                        m.globs.append(segs)
                    elif name is not None:
                        m.bindings[name].append(segs)
                    m.refs.append(Ref(segs, fname, ln, utest, "use", glob))
                if vis is not None:
                    m.pub_uses.append((fname, ln, vis, [segs for segs, _, _ in leaves]))
                pending_test, pending_path, arm = False, None, -1
                i = j + 1
                continue
            if k == ID and s == "macro_rules" and i + 2 < n and text[i + 1] == "!" and kind[i + 2] == ID:
                mods.setdefault(cur, Module(crate, cur, fname, test)).macros.append(text[i + 2])
            if k == ID and s == "extern" and i + 3 < n and text[i + 1] == "crate":
                name = text[i + 2]
                alias = text[i + 4] if i + 4 < n and text[i + 3] == "as" else name
                m = mods.setdefault(cur, Module(crate, cur, fname, test))
                m.bindings[alias].append(("crate",) if name == "self" else ("::", name))
                i += 3
                continue
            if (
                k == ID
                and s == "type"
                and i + 3 < n
                and kind[i + 1] == ID
                and text[i + 2] == "="
            ):
                j = i + 3
                segs = []
                while j < n and (kind[j] == ID or text[j] in ("::", "$crate")):
                    if text[j] != "::":
                        segs.append(text[j])
                    j += 1
                if segs and j < n and text[j] == ";":
                    mods.setdefault(cur, Module(crate, cur, fname, test)).bindings[text[i + 1]].append(tuple(segs))
            # Delimiters, and the item an outer #[cfg(test)] stands on.
            if s in ("{", "(", "["):
                if s == "{" and arm == len(stack):
                    stack.append((s, cur, True, cur_dir))
                    arm, pending_test = -1, False
                else:
                    stack.append((s, cur, test, cur_dir))
            elif s in ("}", ")", "]"):
                if len(stack) > 1:
                    stack.pop()
                if arm > len(stack):
                    arm, pending_test = -1, False
            elif s in (";", ",") and arm == len(stack):
                arm, pending_test = -1, False
            m = mods.get(cur)
            if m is None:
                m = mods[cur] = Module(crate, cur, fname, test)
            scan_path(t, i, m, fname, test)
            i += 1

    visit(root_file, (), False)
    return mods


def scan_path(t: Tokens, i: int, m: Module, fname: str, test: bool) -> None:
    """Record the path that starts at token i, if one does: `[::] seg (:: seg |
    ::<generics>)*`, `<Type [as Trait]>::seg..`, or a macro call `name!`. The tokens
    after i are looked at again by the caller (a path inside generics is a path too)."""
    text, kind, n = t.text, t.kind, len(t.text)
    s = text[i]
    prev = text[i - 1] if i > 0 else ""
    if prev in ("::", ".", "$"):
        if s == "elapsed" and prev == "." and i + 2 < n and text[i + 1] == "(" and text[i + 2] == ")":
            # A method `.elapsed()` reads the clock (Instant's and SystemTime's).
            m.refs.append(Ref(("elapsed",), fname, t.line(i), test, "elapsed"))
        return
    if s == "<" and prev and kind[i - 1] not in (ID, LIT) and prev not in (")", "]", ">"):
        # A qualified path: <Type>::x or <Type as Trait>::x (the trait's path is
        # recorded on its own when the caller reaches it).
        depth, j = 0, i
        while j < n:
            if text[j] == "<":
                depth += 1
            elif text[j] == ">":
                depth -= 1
                if depth == 0:
                    break
            elif text[j] in (";", "{", "}"):
                return
            j += 1
        if not (j + 2 < n and text[j + 1] == "::" and kind[j + 2] == ID):
            return
        segs = []
        q = i + 1
        while q < j and (kind[q] == ID or text[q] in ("::", "$crate")) and text[q] != "as":
            if text[q] != "::" or not segs:
                segs.append(text[q])
            q += 1
        if not segs:
            return
        j += 1
    elif s == "::":
        if kind[i - 1] == ID or prev in (">", "$crate") or i + 1 >= n or kind[i + 1] != ID:
            return  # inside a path, not the start of a global one
        segs, j = ["::", text[i + 1]], i + 2
    elif kind[i] == ID or s == "$crate":
        segs, j = [s], i + 1
    else:
        return
    while j + 1 < n and text[j] == "::":
        if kind[j + 1] == ID:
            segs.append(text[j + 1])
            j += 2
        elif text[j + 1] == "<":  # turbofish: skip the generic arguments
            depth, q = 0, j + 1
            while q < n:
                if text[q] == "<":
                    depth += 1
                elif text[q] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                elif text[q] in (";", "{", "}"):
                    break
                q += 1
            j = q + 1
        else:
            break
    is_macro = j + 1 < n and text[j] == "!" and text[j + 1] in ("(", "[", "{")
    real = [x for x in segs if x != "::"]
    if len(real) >= 2 or is_macro or (real and real[0] in IO_NAMES):
        m.refs.append(Ref(tuple(segs), fname, t.line(i), test, "macro" if is_macro else "path"))


# ---------------------------------------------------------------------------------
# Resolution.


class Crate:
    def __init__(self, name: str, mods: dict[tuple, Module]):
        self.name, self.mods = name, mods
        self._canon: dict[tuple, tuple] = {}

    def lookup(self, mod: tuple, name: str, seen: frozenset) -> tuple[list[tuple], list[tuple]]:
        """What `name` means in module `mod`, as absolute paths ("crate", ..) or
        ("::", ..): what it surely names (a child, a `use`, a crate glob), and guesses
        (`name` under each outside glob: `use std::*;` makes `fs` maybe `std::fs`)."""
        key = (mod, name)
        if key in seen or len(seen) > 40:
            return [], []
        seen = seen | {key}
        m = self.mods.get(mod)
        if m is None:
            return [], []
        if name in m.children:
            return [("crate",) + mod + (name,)], []
        out: list[tuple] = []
        for segs in m.bindings.get(name, ()):
            out += self.resolve(mod, segs, seen)
        if out:
            return out, []
        guesses: list[tuple] = []
        for g in m.globs:
            for src in self.resolve(mod, g, seen):
                if src[0] == "crate" and src[1:] in self.mods:
                    sure, maybe = self.lookup(src[1:], name, seen)
                    out += sure
                    guesses += maybe
                elif src[0] == "::":
                    guesses.append(src + (name,))
        return out, guesses

    def resolve(self, mod: tuple, segs: tuple, seen: frozenset = frozenset()) -> list[tuple]:
        """Absolute readings of a path written in `mod`: ("crate", a, b..) for the
        crate's own, ("::", krate, ..) for an outside crate's. Several when a glob
        leaves the name open; [] when a `super` climbs above the crate root."""
        if not segs:
            return []
        head, rest = segs[0], segs[1:]
        if head in ("crate", "$crate"):
            return [("crate",) + rest]
        if head == "::":
            return [("::",) + rest]
        if head in ("self", "super"):
            cur = list(mod)
            k = 0
            while k < len(segs) and segs[k] in ("self", "super"):
                if segs[k] == "super":
                    if not cur:
                        return []
                    cur.pop()
                k += 1
            return [("crate",) + tuple(cur) + segs[k:]]
        sure, maybe = self.lookup(mod, head, seen)
        if sure:
            return [f + rest for f in sure]
        return [f + rest for f in maybe] + [("::",) + segs]

    def canonical(self, path: tuple, seen: frozenset = frozenset()) -> tuple:
        """A crate path followed through the re-exports and aliases it passes, as a
        reading: `warc::WarcDate` -> ("crate", "provenance", "date", "WarcDate"); an
        alias of an outside item ends outside: ("::", "std", "time", "Instant", ..)."""
        if not seen and path in self._canon:
            return self._canon[path]
        cur: tuple = ()
        out = ("crate",) + path
        for k, s in enumerate(path):
            if cur + (s,) in self.mods:
                cur = cur + (s,)
                continue
            m = self.mods.get(cur)
            if (cur, s) in seen or m is None or not (s in m.bindings or m.globs):
                break
            found = self.lookup(cur, s, frozenset())[0]
            crate_found = [f for f in found if f[0] == "crate"]
            if crate_found and crate_found[0][1:] != cur + (s,):
                out = self.canonical(crate_found[0][1:] + path[k + 1 :], seen | {(cur, s)})
            elif found and not crate_found:
                out = found[0] + path[k + 1 :]
            break
        if not seen:
            self._canon[path] = out
        return out


def under(path: tuple, prefix: tuple) -> bool:
    return path[: len(prefix)] == prefix


def dotted(path: tuple) -> str:
    return "::".join(path) if path else "crate"


def spell(segs: tuple) -> str:
    """A path as written: `crate::a::b`, `::std::fs`."""
    return "::" + "::".join(segs[1:]) if segs and segs[0] == "::" else "::".join(segs)


def parse_mod(s: str) -> tuple:
    return tuple(x for x in s.split("::") if x and x != "crate")


# ---------------------------------------------------------------------------------
# The checks.


