#!/usr/bin/env python3
"""Check that every repository path the docs name still exists.

Scans docs/*.md and README.md for backticked spans (and fenced code blocks) that hold
paths under src/, tools/, tests/, benches/, fuzz/ or examples/, and reports each that
does not exist. `a/{b,c}.rs` is expanded, `path.rs::item` is cut at `::`, and a path
with a placeholder (NNNN, *, <name>) is matched as a glob, `examples/x` may name
`examples/x.rs`; docs/synthweb.md's paths are read from tools/synthweb/ as well. A
backticked relative Rust file (`core/page.rs`, `shard.rs`) must end the path of some
file under those roots.

Usage: python3 tools/docpaths/check.py [--root DIR]   (exit 1 if a path is missing)
"""
import glob
import os
import re
import sys

ROOTS = ("src", "tools", "tests", "benches", "fuzz", "examples")
PATH = re.compile(r"(?<![\w/.-])(?:%s)/[\w./*<>{},-]*" % "|".join(ROOTS))
SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
RELATIVE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.rs)\b")
# Docs whose paths are relative to a tool's own crate.
BASES = {"synthweb.md": ("tools/synthweb",)}


def expand(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand(path[: m.start()] + alt + path[m.end():])
    return out


def exists(root, path):
    if re.search(r"NNNN|\*|<[^>]*>", path):
        pattern = re.sub(r"N{4,}|<[^>]*>", "*", path)
        return bool(glob.glob(os.path.join(root, pattern)))
    full = os.path.join(root, path)
    return os.path.exists(full) or (path.startswith("examples/") and os.path.exists(full + ".rs"))


def tracked(root):
    files = []
    for top in ROOTS:
        for d, _, names in os.walk(os.path.join(root, top)):
            if "/target" in d or "/.venv" in d:
                continue
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return files


def relative_ok(files, path):
    return any(f == path or f.endswith("/" + path) for f in files)


def paths_of(text):
    for span in SPAN.findall(FENCE.sub("", text)):
        yield from PATH.findall(span)
    for block in FENCE.findall(text):
        yield from PATH.findall(block)


def relatives_of(text):
    for span in SPAN.findall(FENCE.sub("", text)):
        for path in RELATIVE.findall(span):
            if not path.startswith(tuple(r + "/" for r in ROOTS)):
                yield path


def main(argv):
    root = argv[argv.index("--root") + 1] if "--root" in argv else "."
    files = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files.append(os.path.join(root, "README.md"))
    known = tracked(root)
    missing = 0
    checked = 0
    for name in files:
        with open(name, encoding="utf-8") as f:
            text = f.read()
        bases = ("",) + BASES.get(os.path.basename(name), ())
        for raw in sorted(set(paths_of(text))):
            raw = raw.split("::")[0].rstrip(".,:;)")
            for path in expand(raw):
                checked += 1
                if not any(exists(os.path.join(root, b), path) for b in bases):
                    missing += 1
                    print(f"{os.path.relpath(name, root)}: {path}")
        for path in sorted(set(relatives_of(text))):
            checked += 1
            if not relative_ok(known, path):
                missing += 1
                print(f"{os.path.relpath(name, root)}: {path} (no file ends so)")
    print(f"docpaths: {checked} paths checked, {missing} missing", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
