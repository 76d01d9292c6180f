"""Tests of the module-graph lint (check.py) on small made-up crates.

Each test writes a crate tree into a temporary directory: a clean one (`CLEAN`) that
passes, with one file changed to hold a bypass, and asserts the exit status and that
the message names the file and the rule. Run by `make test`:
`python3 -m unittest discover -s tools/modgraph -p 'test_*.py'`.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402

CORE = "src/engine/core/page.rs"

# A crate shaped like trawl's: an engine with a closed core, its neighbours, and a
# binary. Every rule holds on it.
CLEAN = {
    "src/lib.rs": """
        //! A made-up crate.
        pub mod checkpoint;
        pub mod control;
        pub mod engine;
        pub mod farm;
        pub mod frontier;
        pub mod net;
        pub mod routing;
        pub mod warc;
        pub use engine::Shared;
    """,
    "src/main.rs": """
        mod cli;
        fn main() { cli::run() }
    """,
    "src/cli/mod.rs": """
        pub fn run() { println!("{}", trawl::engine::NAME); }
    """,
    "src/engine/mod.rs": """
        pub mod core;
        mod shard;
        pub struct Shared;
        pub const NAME: &str = "engine";
        use crate::net::Fetcher;
        fn log() { eprintln!("the engine may log"); let _ = std::time::Instant::now(); }
    """,
    "src/engine/shard.rs": """
        use super::core::Now;
        use crate::checkpoint::Saved;
        pub fn drive(_: Now) { std::thread::sleep(std::time::Duration::from_millis(1)); }
    """,
    "src/engine/helper.rs": """
        use crate::engine::Shared;
    """,
    "src/engine/core/mod.rs": """
        //! The closed core: `crate::engine::Shared` in a doc comment names nothing.
        mod page;
        #[cfg(test)]
        mod tests;
        use std::time::{Duration, Instant};
        use crate::control::OperatorRules;
        use crate::routing::HostKey;
        pub struct Now { pub at: Instant }
        pub struct Core { rules: OperatorRules, host: HostKey }
        impl Now {
            #[cfg(test)]
            pub fn started() -> Now { Now { at: Instant::now() } }
            pub fn plus(self, d: Duration) -> Now { Now { at: self.at + d } }
        }
    """,
    "src/engine/core/page.rs": """
        use super::{Core, Now};
        use crate::frontier::Queue;
        impl Core {
            pub fn on_page(&mut self, now: Now, q: &mut Queue) -> &'static str {
                let _c = 'x';
                let _life: &'static str = "a \\" string";
                if q.is_blocked() { return crate::control::BLOCKED_NOTE; }
                let _ = now;
                "ok"
            }
        }
    """,
    "src/engine/core/tests/mod.rs": """
        use super::*;
        mod clock;
        fn now() -> Now { Now { at: Instant::now() } }
    """,
    "src/engine/core/tests/clock.rs": """
        use std::time::SystemTime;
        fn wall() -> SystemTime { SystemTime::now() }
        fn core_again() -> super::super::Now { super::super::Now::started() }
        fn also() { let _ = crate::engine::core::Now::started(); }
    """,
    "src/net/mod.rs": """
        pub struct Fetcher;
        use std::net::TcpStream;
    """,
    "src/farm/mod.rs": """
        use crate::routing::HostKey;
        pub const OUTBOX_FILE: &str = "outbox";
    """,
    "src/checkpoint/mod.rs": """
        mod describe;
        pub struct Saved;
        use crate::frontier::Queue;
    """,
    "src/checkpoint/describe.rs": """
        use super::Saved;
    """,
    "src/control/mod.rs": """
        mod live;
        pub use live::OperatorRules;
        pub const BLOCKED_NOTE: &str = "blocked";
        pub const RULES_FILE: &str = "rules";
    """,
    "src/control/live.rs": """
        pub struct OperatorRules;
    """,
    "src/routing/mod.rs": """
        pub struct HostKey;
    """,
    "src/frontier/mod.rs": """
        use std::time::Instant;
        pub struct Queue;
        impl Queue { pub fn is_blocked(&self) -> bool { false } }
        pub fn next(now: Instant) -> Instant { now }
        #[cfg(test)]
        mod tests {
            use super::*;
            fn t() { next(Instant::now()); }
        }
    """,
    "src/warc/mod.rs": """
        pub mod writer;
        pub use writer::WarcWriter;
        pub struct WarcDate;
    """,
    "src/warc/writer.rs": """
        pub struct WarcWriter;
    """,
    "tools/modgraph/rules.toml": """
        closed = ["engine::core"]
        clock_free = ["frontier"]

        [[never]]
        from = "engine::core"
        to = "engine"
        why = "closed core"

        [[never]]
        from = "engine::core"
        to = "net"

        [[never]]
        from = "engine::core"
        to = "farm"

        [[never]]
        from = "engine::core"
        to = "checkpoint"

        [[never]]
        from = "engine::core"
        to = "control"
        except = ["control::OperatorRules", "control::BLOCKED_NOTE"]

        [[never]]
        from = "engine::core"
        to = "warc::writer"

        [[never]]
        from = "checkpoint"
        to = "farm"

        [[never]]
        from = "checkpoint"
        to = "control"

        [[never]]
        from = "farm"
        to = "engine"

        [leaves]
        modules = ["routing"]
        never = ["engine"]

        [reexports]
        mode = "warn"
        public_face = [{ file = "src/lib.rs" }]
    """,
}


def dedent(s: str) -> str:
    lines = s.strip("\n").rstrip().split("\n")
    pad = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    return "\n".join(l[pad:] for l in lines) + "\n"


class Tree:
    """A made-up crate in a temporary directory."""

    def __init__(self, changes: dict[str, str] | None = None):
        self.dir = tempfile.TemporaryDirectory(prefix="modgraph-test-")
        files = dict(CLEAN)
        files.update(changes or {})
        for path, text in files.items():
            if text is None:
                continue
            full = os.path.join(self.dir.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(dedent(text))

    def run(self) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check.main(["--root", self.dir.name])
        self.dir.cleanup()
        return rc, out.getvalue()


def run(changes: dict[str, str] | None = None) -> tuple[int, str]:
    return Tree(changes).run()


def with_core(code: str, file: str = CORE) -> dict[str, str]:
    """The clean tree with `code` appended to one of its files."""
    return {file: dedent(CLEAN[file]) + dedent(code)}


class Base(unittest.TestCase):
    def assertFails(self, changes: dict[str, str], rule: str, file: str = CORE):
        rc, out = run(changes)
        self.assertEqual(rc, 1, f"expected a failure naming {rule}; got:\n{out}")
        hits = [l for l in out.splitlines() if l.startswith(rule) and file in l]
        self.assertTrue(hits, f"no line of rule {rule!r} naming {file}; got:\n{out}")
        return out

    def assertPasses(self, changes: dict[str, str] | None = None) -> str:
        rc, out = run(changes)
        self.assertEqual(rc, 0, f"expected a pass; got:\n{out}")
        return out


class Clean(Base):
    def test_clean_tree_passes(self):
        out = self.assertPasses()
        self.assertIn("modgraph: no import cycles", out)
        self.assertNotIn("warning", out)

    def test_command_line(self):
        t = Tree()
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py")
        p = subprocess.run([sys.executable, script, "--root", t.dir.name, "--graph"], capture_output=True, text=True)
        t.dir.cleanup()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("lib: engine -> checkpoint, control, frontier, net, routing", p.stdout)


class EnginePaths(Base):
    """The core names nothing of `engine` outside `engine::core`, however written."""

    RULE = "never engine::core -> engine"

    def test_use_crate_engine(self):
        self.assertFails(with_core("use crate::engine::Shared;"), self.RULE)

    def test_inline_crate_engine_path(self):
        self.assertFails(with_core("fn f() { let _ = crate::engine::Shared; }"), self.RULE)

    def test_use_super_super(self):
        self.assertFails(with_core("use super::super::Shared;"), self.RULE)

    def test_inline_super_super(self):
        self.assertFails(with_core("fn f() -> super::super::Shared { super::super::Shared }"), self.RULE)

    def test_super_chain_from_a_test_module(self):
        code = "fn f() { let _ = super::super::super::Shared; }"
        self.assertFails(with_core(code, "src/engine/core/tests/clock.rs"), self.RULE, "src/engine/core/tests/clock.rs")

    def test_tests_may_not_import_the_engine(self):
        self.assertFails(
            with_core("use crate::engine::Shared;", "src/engine/core/tests/mod.rs"),
            self.RULE,
            "src/engine/core/tests/mod.rs",
        )

    def test_self_super_chain(self):
        self.assertFails(with_core("use self::super::super::Shared;"), self.RULE)

    def test_alias_of_the_parent(self):
        self.assertFails(with_core("use super::super as up;\nfn f() { let _ = up::Shared; }"), self.RULE)

    def test_alias_of_the_crate_root(self):
        self.assertFails(with_core("use crate::{self as root};\nfn f() { let _ = root::engine::Shared; }"), self.RULE)

    def test_grouped_and_nested_braces(self):
        for code in ("use crate::{engine::Shared};", "use crate::{routing::HostKey, engine::{self, Shared}};"):
            with self.subTest(code=code):
                self.assertFails(with_core(code), self.RULE)

    def test_glob_of_the_parent(self):
        self.assertFails(with_core("use super::*;", "src/engine/core/mod.rs"), self.RULE, "src/engine/core/mod.rs")

    def test_name_through_a_glob_of_the_crate_root(self):
        self.assertFails(with_core("use crate::*;\nfn f() { let _ = engine::Shared; }"), self.RULE)

    def test_extern_crate_self(self):
        self.assertFails(
            with_core("extern crate self as me;\nfn f() { let _ = me::engine::Shared; }"), self.RULE
        )

    def test_macro_dollar_crate(self):
        self.assertFails(with_core("macro_rules! m { () => { $crate::engine::Shared }; }"), self.RULE)

    def test_raw_identifier(self):
        self.assertFails(with_core("fn f() { let _ = crate::r#engine::Shared; }"), self.RULE)

    def test_path_attribute(self):
        # A file of the engine mounted into the core with #[path] is core code.
        code = '#[path = "../helper.rs"]\nmod helper;'
        self.assertFails(with_core(code, "src/engine/core/mod.rs"), self.RULE, "src/engine/helper.rs")

    def test_macro_defined_outside_the_core(self):
        changes = with_core("macro_rules! shared { () => { crate::engine::Shared } }", "src/engine/helper.rs")
        changes["src/engine/mod.rs"] = "#[macro_use]\nmod helper;\n" + dedent(CLEAN["src/engine/mod.rs"])
        changes.update(with_core("fn f() { let _ = shared!(); }"))
        self.assertFails(changes, "closed: " + CORE)

    def test_macro_defined_in_the_core_is_read(self):
        self.assertPasses(with_core("macro_rules! two { () => { 2 } }\nfn f() -> u8 { two!() }"))

    def test_path_attribute_loop(self):
        rc, out = run(with_core('#[path = "page.rs"]\nmod again;'))
        self.assertEqual(rc, 1, out)
        self.assertIn("a `mod` loop", out)

    def test_qualified_path(self):
        for code in (
            "fn f() { <crate::engine::Shared as Default>::default(); }",
            "fn f() { <u8 as crate::engine::Trait>::go(); }",
            "fn f() { let _ = Vec::<crate::engine::Shared>::new(); }",
            "fn f() { let _ = Vec::<[u8; 4]>::new(); let _ = crate::engine::Shared; }",
            "type T = crate::engine::Shared;",
        ):
            with self.subTest(code=code):
                self.assertFails(with_core(code), self.RULE)


class ForbiddenModules(Base):
    def test_net(self):
        self.assertFails(with_core("fn f(_: crate::net::Fetcher) {}"), "never engine::core -> net")

    def test_farm(self):
        self.assertFails(with_core("use crate::farm::OUTBOX_FILE;"), "never engine::core -> farm")

    def test_checkpoint(self):
        self.assertFails(with_core("use crate::checkpoint::Saved;"), "never engine::core -> checkpoint")

    def test_control_beyond_what_is_allowed(self):
        self.assertFails(with_core("const F: &str = crate::control::RULES_FILE;"), "never engine::core -> control")

    def test_control_allowed_items_pass(self):
        code = "use crate::control::{OperatorRules, BLOCKED_NOTE};\nfn f() { let _ = crate::control::OperatorRules; }"
        self.assertPasses(with_core(code))

    def test_warc_writer(self):
        self.assertFails(with_core("use crate::warc::writer::WarcWriter;"), "never engine::core -> warc::writer")

    def test_warc_writer_through_a_reexport(self):
        self.assertFails(with_core("fn f(_: crate::warc::WarcWriter) {}"), "never engine::core -> warc::writer")

    def test_other_warc_items_pass(self):
        self.assertPasses(with_core("use crate::warc::WarcDate;"))


class Files(Base):
    def test_std_fs_spellings(self):
        for code in (
            "use std::{fs, io};",
            "use std::{fs::File};",
            "use std::{io::{self, Read}, {fs::{File}}};",
            "use std::fs as f;",
            "fn f() { let _ = std::fs::read(\"x\"); }",
            "use std::io; fn f() { let _ = ::std::fs::read(\"x\"); }",
        ):
            with self.subTest(code=code):
                self.assertFails(with_core(code), "closed")

    def test_std_under_another_name(self):
        self.assertFails(with_core('extern crate std as s;\nfn f() { let _ = s::fs::read("x"); }'), "closed")

    def test_glob_of_std(self):
        self.assertFails(with_core('use std::*;\nfn f() { let _ = fs::read("x"); }'), "closed")

    def test_file_open_without_a_visible_import(self):
        self.assertFails(with_core("fn f() { let _ = File::open(\"x\"); }"), "closed")

    def test_tempfile(self):
        self.assertFails(with_core("fn f() { let _ = tempfile::tempdir(); }"), "closed")

    def test_tempfile_in_tests_too(self):
        f = "src/engine/core/tests/mod.rs"
        self.assertFails(with_core("fn t() { let _ = tempfile::tempdir(); }", f), "closed", f)


class Clock(Base):
    def test_instant_now_spellings(self):
        for code in (
            "fn f() { let _ = Instant::now(); }",
            "fn f() { let _ = std::time::Instant::now(); }",
            "use std::time;\nfn f() { let _ = time::Instant::now(); }",
            "use std::time::Instant as I;\nfn f() { let _ = I::now(); }",
            "type Clock = std::time::Instant;\nfn f() { let _ = Clock::now(); }",
            "use std::time::*;\nfn f() { let _ = Instant::now(); }",
            "fn f() { let _ = <std::time::Instant>::now(); }",
            "fn f() { let g = std::time::Instant::now; g(); }",
        ):
            with self.subTest(code=code):
                self.assertFails(with_core(code), "closed: " + CORE)

    def test_alias_declared_in_another_module(self):
        changes = with_core("pub type Clock = std::time::Instant;", "src/routing/mod.rs")
        changes.update(with_core("fn f() { let _ = crate::routing::Clock::now(); }"))
        self.assertFails(changes, "closed: " + CORE)

    def test_reexport_of_the_clock_type(self):
        changes = with_core("pub use std::time::Instant as Stamp;", "src/routing/mod.rs")
        changes.update(with_core("use crate::routing::Stamp;\nfn f() { let _ = Stamp::now(); }"))
        self.assertFails(changes, "closed: " + CORE)

    def test_alias_through_the_parents_glob(self):
        changes = with_core("use std::time::Instant as Clock;", "src/engine/core/mod.rs")
        changes.update(with_core("use super::*;\nfn f() { let _ = Clock::now(); }"))
        self.assertFails(changes, "closed")

    def test_system_time_now(self):
        self.assertFails(with_core("fn f() { let _ = std::time::SystemTime::now(); }"), "closed")

    def test_elapsed(self):
        self.assertFails(with_core("fn f(t: Now) { let _ = t.at.elapsed(); }"), "closed")

    def test_cfg_test_items_and_modules_may_read_the_clock(self):
        # The clean tree's core has both; a `#[cfg(test)] fn` too:
        self.assertPasses(with_core("#[cfg(test)]\nfn t() { let _ = std::time::Instant::now(); }"))

    def test_a_test_attribute_on_a_field_exempts_nothing_after_it(self):
        code = "struct S { #[cfg(test)] a: u8, b: u8 }\nfn real() { let _ = std::time::Instant::now(); }"
        self.assertFails(with_core(code), "closed")

    def test_a_tests_module_without_cfg_test_is_not_exempt(self):
        changes = with_core("mod tests;\n", "src/engine/core/mod.rs")
        changes["src/engine/core/mod.rs"] = changes["src/engine/core/mod.rs"].replace("#[cfg(test)]\nmod tests;\n", "")
        self.assertFails(changes, "closed", "src/engine/core/tests/mod.rs")

    def test_cfg_any_test_is_not_exempt(self):
        code = "#[cfg(any(test, feature = \"x\"))]\nfn t() { let _ = std::time::Instant::now(); }"
        self.assertFails(with_core(code), "closed")

    def test_frontier_is_clock_free(self):
        f = "src/frontier/mod.rs"
        out = self.assertFails(with_core("pub fn wake() -> Instant { Instant::now() }", f), "clock-free", f)
        self.assertIn("reads the clock", out)

    def test_frontier_tests_may_read_the_clock(self):
        self.assertPasses()  # CLEAN's frontier tests call Instant::now


class Printing(Base):
    def test_print_macros(self):
        for m in ("eprintln", "println", "eprint", "print", "dbg", "std::eprintln"):
            with self.subTest(macro=m):
                self.assertFails(with_core(f'fn f() {{ {m}!("x"); }}'), "closed")

    def test_print_macro_alias(self):
        self.assertFails(with_core('use std::eprintln as say;\nfn f() { say!("x"); }'), "closed")

    def test_logging(self):
        for code in (
            'fn f() { tracing::info!("x"); }',
            'use tracing::warn;\nfn f() { warn!("x"); }',
            'fn f() { log::debug!("x"); }',
            'fn f() { info!("x"); }',
            "fn f() { let _ = std::io::stderr(); }",
        ):
            with self.subTest(code=code):
                self.assertFails(with_core(code), "closed")


class Blocking(Base):
    def test_threads(self):
        for code in (
            "fn f() { std::thread::sleep(std::time::Duration::ZERO); }",
            "use std::thread;\nfn f() { thread::sleep(std::time::Duration::ZERO); }",
            "fn f() { std::thread::spawn(|| ()); }",
            "fn f() { let (_t, _r) = std::sync::mpsc::channel::<u8>(); }",
        ):
            with self.subTest(code=code):
                self.assertFails(with_core(code), "closed")

    def test_sockets(self):
        for code in ("use std::net::TcpStream;", "use mio::net::TcpStream;", "fn f(_: &std::net::UdpSocket) {}"):
            with self.subTest(code=code):
                self.assertFails(with_core(code), "closed")

    def test_process(self):
        self.assertFails(with_core("fn f() { std::process::exit(1); }"), "closed")

    def test_include(self):
        self.assertFails(with_core('include!("../helper.rs");'), "closed")


class CommentsAndStrings(Base):
    def test_comments_and_strings_trigger_nothing(self):
        code = r'''
            // use crate::engine::Shared; eprintln!("x"); Instant::now()
            /* outer /* nested crate::engine::Shared */ still a comment: std::fs::read */
            /// doc: `super::super::Shared`, `std::thread::sleep`
            fn f() -> usize {
                let a = "crate::engine::Shared; Instant::now()";
                let b = r#"a " quote, then crate::net::Fetcher and "# ;
                let c = br##"tempfile::tempdir() "# still"##;
                let d = b"std::process::exit";
                let e = '"';
                let g = "escaped \" crate::farm::OUTBOX_FILE \\";
                a.len() + b.len() + c.len() + d.len() + g.len() + e.len_utf8()
            }
        '''
        self.assertPasses(with_core(code))

    def test_comments_and_strings_hide_nothing(self):
        for code in (
            '/* a comment */ use crate::engine::Shared;',
            'fn f() { let _s = "a \\" b"; let _ = crate::engine::Shared; }',
            'fn f() { let _c = \'"\'; let _ = crate::engine::Shared; }',
            'fn f() { let _s = r#"x"#; let _ = crate::engine::Shared; }',
            "fn f<'a>(_: &'a str) { let _ = crate::engine::Shared; }",
        ):
            with self.subTest(code=code):
                self.assertFails(with_core(code), "never engine::core -> engine")


class Graph(Base):
    def test_cycle(self):
        changes = with_core("use crate::frontier::Queue;", "src/routing/mod.rs")
        changes.update(with_core("use crate::routing::HostKey;", "src/frontier/mod.rs"))
        rc, out = run(changes)
        self.assertEqual(rc, 1, out)
        self.assertIn("cycle among the children of crate root (lib): frontier -> routing", out)
        self.assertIn("src/routing/mod.rs", out)

    def test_never_arrow_by_a_super_chain(self):
        f = "src/checkpoint/describe.rs"
        out = self.assertFails(with_core("fn f() -> &'static str { super::super::farm::OUTBOX_FILE }", f), "never checkpoint -> farm", f)
        self.assertIn("names farm::OUTBOX_FILE", out)

    def test_never_arrow_farm_to_engine(self):
        f = "src/farm/mod.rs"
        self.assertFails(with_core("fn f(_: crate::engine::Shared) {}", f), "never farm -> engine", f)

    def test_leaf_to_engine(self):
        f = "src/routing/mod.rs"
        self.assertFails(with_core("pub const N: &str = crate::engine::NAME;", f), "never routing -> engine", f)

    def test_allowed_exception_warns_and_passes(self):
        f = "src/checkpoint/describe.rs"
        changes = with_core("fn f() -> &'static str { crate::control::RULES_FILE }", f)
        changes["tools/modgraph/rules.toml"] = CLEAN["tools/modgraph/rules.toml"] + dedent(
            """
            [[allow]]
            from = "checkpoint"
            to = "control"
            reason = "issue 27 point 5"
            """
        )
        out = self.assertPasses(changes)
        self.assertIn("warning: known exception checkpoint -> control (issue 27 point 5): src/checkpoint/describe.rs:2", out)

    def test_stale_allow_warns(self):
        changes = {
            "tools/modgraph/rules.toml": CLEAN["tools/modgraph/rules.toml"]
            + dedent(
                """
                [[allow]]
                from = "checkpoint"
                to = "farm"
                reason = "gone"
                """
            )
        }
        out = self.assertPasses(changes)
        self.assertIn("allowed exception checkpoint -> farm no longer holds", out)

    def test_a_missing_rules_table_fails(self):
        rc, out = run({"tools/modgraph/rules.toml": None})
        self.assertEqual(rc, 1, out)
        self.assertIn("rules: cannot read the rules table", out)

    def test_a_rule_naming_no_module_fails(self):
        rules = CLEAN["tools/modgraph/rules.toml"] + '\n[[never]]\nfrom = "nowhere"\nto = "engine"\n'
        rc, out = run({"tools/modgraph/rules.toml": rules})
        self.assertEqual(rc, 1, out)
        self.assertIn("rules: never nowhere -> engine: no module nowhere", out)


class Reexports(Base):
    def test_reexport_is_a_warning_with_a_count(self):
        f = "src/farm/mod.rs"
        changes = with_core("pub use crate::routing::HostKey as Key;\npub(crate) use super::warc::WarcDate;", f)
        out = self.assertPasses(changes)
        self.assertIn("warning: re-export: src/farm/mod.rs:3: pub use re-exports routing::HostKey", out)
        self.assertIn("warning: re-export: src/farm/mod.rs:4: pub(crate) use re-exports warc::WarcDate", out)
        self.assertIn("warning: 2 re-export(s)", out)

    def test_own_module_and_public_face_are_not_reported(self):
        # lib.rs re-exports engine::Shared (the public face); control re-exports its own.
        out = self.assertPasses()
        self.assertNotIn("re-export", out)

    def test_error_mode(self):
        f = "src/farm/mod.rs"
        changes = with_core("pub use crate::routing::HostKey;", f)
        changes["tools/modgraph/rules.toml"] = CLEAN["tools/modgraph/rules.toml"].replace('mode = "warn"', 'mode = "error"')
        self.assertFails(changes, "re-export: src/farm/mod.rs:3", f)

    def test_error_mode_spares_only_the_public_face(self):
        # lib.rs re-exports another module's item and passes; the same in a module fails.
        rules = CLEAN["tools/modgraph/rules.toml"].replace('mode = "warn"', 'mode = "error"')
        out = self.assertPasses({"tools/modgraph/rules.toml": rules})
        self.assertNotIn("re-export", out)
        f = "src/engine/mod.rs"
        changes = with_core("pub use crate::routing::HostKey;", f)
        changes["tools/modgraph/rules.toml"] = rules
        self.assertFails(changes, "re-export: src/engine/mod.rs", f)

    def test_the_repository_fails_on_a_reexport_outside_lib_rs(self):
        # issue 27 point 6: the tree's own table fails the lint, and names lib.rs alone.
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "rules.toml"), "rb") as f:
            conf = tomllib.load(f)["reexports"]
        self.assertEqual(conf["mode"], "error")
        self.assertEqual(conf["public_face"], [{"file": "src/lib.rs"}])


if __name__ == "__main__":
    unittest.main()
