#!/usr/bin/env python3
"""Tests of scripts/cycles.py (issue 46): each builds a small tree of files in a temporary
folder, checks it as scripts/cycles.py checks the project, and looks for what it must find: a
circle, a back-import, an import after a `#[cfg(test)]` that is not a test module, a
`super::super::` path, a bare JavaScript import. The last test checks the project itself.
Run by scripts/test.sh before scripts/cycles.py; prints only unittest's summary when all pass.
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# No scripts/__pycache__ left in the work tree.
sys.dont_write_bytecode = True
import cycles  # noqa: E402


class Tree(unittest.TestCase):
    """A temporary tree of files, and the check run over it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, files):
        for rel, text in files.items():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

    def check(self, files, exceptions=()):
        """(exit status, what it printed to stderr) of the check over `files`, with
        `exceptions` in place of the project's (which name files these trees do not have)."""
        self.write(files)
        err = io.StringIO()
        saved = cycles.EXCEPTIONS
        cycles.EXCEPTIONS = list(exceptions)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                status = cycles.main(self.root)
        finally:
            cycles.EXCEPTIONS = saved
        return status, err.getvalue()

    def imports(self, files):
        """File -> the files it imports, for files written into the tree."""
        self.write(files)
        found = cycles.rust_imports(cycles.rust_modules(self.root), self.root)
        return {f: {t for _, _, t in found[f]} for f in found}


class Circles(Tree):
    def test_a_circle_of_files_is_reported(self):
        status, err = self.check({
            "src/graph/a.rs": "use crate::graph::b::B;\npub struct A;\n",
            "src/graph/b.rs": "pub struct B(crate::graph::a::A);\n",
        })
        self.assertEqual(status, 1)
        self.assertIn("files that import one another in a circle: src/graph/a.rs, src/graph/b.rs",
                      err)

    def test_a_circle_of_folders_is_reported(self):
        # No file imports one that imports it back, but the folders do: store/a -> graph/b,
        # graph/c -> store/d.
        status, err = self.check({
            "src/store/a.rs": "use crate::graph::b;\n",
            "src/graph/b.rs": "",
            "src/graph/c.rs": "use crate::store::d;\n",
            "src/store/d.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertIn("folders that import one another in a circle: graph, store", err)

    def test_no_circle_no_breach_passes(self):
        status, err = self.check({
            "src/graph/a.rs": "use crate::graph::b::B;\n",
            "src/graph/b.rs": "pub struct B;\n",
            "src/ingest/mod.rs": "use crate::{graph::b, store};\n",
            "src/store/mod.rs": "",
            "src/derive/mod.rs": "use crate::ingest;\nuse crate::archive::run::Run;\n",
            "src/archive/run.rs": "",
            "src/site/mod.rs": "fn f() { crate::derive::g(); crate::output::h(); }\n",
            "src/output/mod.rs": "",
            "src/build/mod.rs": "use crate::site;\n",
        })
        self.assertEqual((status, err), (0, ""))


class PhaseOrder(Tree):
    def test_a_back_import_fails_with_status_1_and_is_named(self):
        # As the test command runs it: a process of its own, the tree's root as its argument.
        self.write({
            "src/ingest/x.rs": "//! Ingest.\n\nuse crate::derive::y;\n",
            "src/derive/y.rs": "",
        })
        run = subprocess.run([sys.executable, os.path.join(HERE, "cycles.py"), self.root],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("src/ingest/x.rs:3 imports crate::derive::y (src/derive/y.rs): ingest is in "
                      "the ingest phase", run.stderr)

    def test_a_later_phase_named_in_the_code_fails(self):
        status, err = self.check({
            "src/derive/a.rs": "fn f() {\n    crate::site::pages::render();\n}\n",
            "src/site/pages.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertIn("src/derive/a.rs:2 imports crate::site::pages (src/site/pages.rs): derive is "
                      "in the derive phase, which imports only its own phase, earlier ones and the "
                      "shared layers, and site is in the later publish phase", err)

    def test_the_publish_folder_is_a_publish_layer(self):
        status, err = self.check({
            "src/publish/mod.rs": "use crate::site::pages;\nuse crate::derive::Derived;\n",
            "src/site/pages.rs": "",
            "src/derive/mod.rs": "use crate::publish::Summary;\n",
        })
        self.assertEqual(status, 1)
        self.assertIn("src/derive/mod.rs:1 imports crate::publish (src/publish/mod.rs)", err)
        self.assertNotIn("src/publish/mod.rs:", err)

    def test_a_shared_layer_imports_no_phase(self):
        status, err = self.check({
            "src/store/a.rs": "use crate::ingest::Run;\n",
            "src/ingest/mod.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertIn("store is a shared layer, which imports only shared layers", err)

    def test_only_drivers_import_drivers(self):
        status, err = self.check({
            "src/site/a.rs": "use crate::build::Summary;\n",
            "src/build/mod.rs": "use crate::diff;\n",
            "src/diff.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertIn("src/site/a.rs:1 imports crate::build (src/build/mod.rs): build is a driver",
                      err)
        self.assertNotIn("src/build/mod.rs:", err)

    def test_a_new_folder_must_be_placed(self):
        status, err = self.check({
            "src/site/a.rs": "use crate::fleet::Client;\n",
            "src/fleet/mod.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertIn("fleet has no place in the phase order", err)

    def test_an_exception_lets_one_import_pass_and_must_stay_needed(self):
        files = {"src/ingest/cache.rs": "use crate::output::Published;\n", "src/output/mod.rs": ""}
        needed = ("src/ingest/cache.rs", "crate::output", "why")
        self.assertEqual(self.check(files, [needed]), (0, ""))
        status, err = self.check(files, [needed, ("src/ingest/scan.rs", "crate::output", "why")])
        self.assertEqual(status, 1)
        self.assertIn("src/ingest/scan.rs imports crate::output no longer, or in order", err)


class TestModules(Tree):
    def test_a_cfg_test_function_or_use_does_not_hide_what_follows(self):
        status, err = self.check({
            "src/ingest/x.rs": (
                "#[cfg(test)]\n"
                "use std::fmt;\n"
                "\n"
                "#[cfg(test)]\n"
                "pub(super) fn with_limit() -> u64 { 1 }\n"
                "\n"
                "use crate::derive::y;\n"
            ),
            "src/derive/y.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertIn("src/ingest/x.rs:7 imports crate::derive::y", err)

    def test_the_test_module_is_left_out_and_what_follows_it_is_read(self):
        status, err = self.check({
            "src/ingest/x.rs": (
                "#[cfg(test)]\n"
                "#[allow(clippy::all)]\n"
                "mod tests {\n"
                "    use super::*;\n"
                "    use crate::derive::y;\n"
                "    #[test]\n"
                "    fn braces() { let _ = (\"}}\", '}', r#\"}\"#); }\n"
                "}\n"
                "\n"
                "fn later() { crate::site::z(); }\n"
            ),
            "src/derive/y.rs": "",
            "src/site/z.rs": "",
        })
        self.assertEqual(status, 1)
        self.assertNotIn("crate::derive::y", err)
        self.assertIn("src/ingest/x.rs:10 imports crate::site", err)

    def test_comments_are_no_imports_and_attribute_strings_are(self):
        found = self.imports({
            "src/site/a.rs": (
                "/// See crate::graph::b, /* and */ crate::graph::c.\n"
                "#[serde(skip_serializing_if = \"crate::store::chunk::is_zero\")]\n"
                "struct A;\n"
            ),
            "src/graph/b.rs": "",
            "src/graph/c.rs": "",
            "src/store/chunk.rs": "",
        })
        self.assertEqual(found["src/site/a.rs"], {"src/store/chunk.rs"})


class Paths(Tree):
    def test_super_super_is_two_modules_up(self):
        found = self.imports({
            "src/ingest/mod.rs": "",
            "src/ingest/scan.rs": "",
            "src/ingest/decode/mod.rs": "",
            "src/ingest/decode/pprof.rs": "use super::super::scan::Stamp;\n",
            "src/ingest/decode/folded.rs": "fn f() { super::super::scan::stamp(); }\n",
            "src/ingest/decode/jfr.rs": "use super::pprof;\n",
        })
        self.assertEqual(found["src/ingest/decode/pprof.rs"], {"src/ingest/scan.rs"})
        self.assertEqual(found["src/ingest/decode/folded.rs"], {"src/ingest/scan.rs"})
        self.assertEqual(found["src/ingest/decode/jfr.rs"], {"src/ingest/decode/pprof.rs"})

    def test_a_circle_through_super_super_is_found(self):
        status, err = self.check({
            "src/ingest/scan.rs": "use crate::ingest::decode::pprof;\n",
            "src/ingest/decode/pprof.rs": "use super::super::scan::Stamp;\n",
        })
        self.assertEqual(status, 1)
        self.assertIn("circle: src/ingest/decode/pprof.rs, src/ingest/scan.rs", err)

    def test_self_and_nested_use_groups(self):
        found = self.imports({
            "src/site/mod.rs": ("use self::feed::Feed;\n"
                                "use crate::graph::{diff, frames::{self, Table}, lists::*};\n"),
            "src/site/feed.rs": "",
            "src/graph/mod.rs": "",
            "src/graph/diff.rs": "",
            "src/graph/frames.rs": "",
            "src/graph/lists.rs": "",
        })
        self.assertEqual(found["src/site/mod.rs"], {"src/site/feed.rs", "src/graph/diff.rs",
                                                    "src/graph/frames.rs", "src/graph/lists.rs"})


class JavaScript(Tree):
    STATIC = "themes/default/static/"

    def test_a_bare_import_makes_an_edge_and_its_circle_is_found(self):
        status, err = self.check({
            self.STATIC + "a.js": 'import "./b.js";\nexport const A = 1;\n',
            self.STATIC + "b.js": 'import { A } from "./a.js";\n',
        })
        self.assertEqual(status, 1)
        self.assertIn(f"circle: {self.STATIC}a.js, {self.STATIC}b.js", err)

    def test_every_kind_of_import(self):
        self.write({
            self.STATIC + "main.js": (
                'import "./side.js";\n'
                "import {\n  x,\n} from './named.js';\n"
                'export { y } from "./re.js";\n'
                'export * from "./all.js";\n'
                'const lazy = () => import("./lazy.js");\n'
                'import { z } from "./view/draw.js";\n'
            ),
            self.STATIC + "view/draw.js": 'import { w } from "../side.js";\n',
        })
        edges = cycles.js_edges(self.root)
        names = ("side.js", "named.js", "re.js", "all.js", "lazy.js", "view/draw.js")
        self.assertEqual(edges[self.STATIC + "main.js"], {self.STATIC + n for n in names})
        self.assertEqual(edges[self.STATIC + "view/draw.js"], {self.STATIC + "side.js"})


class Project(unittest.TestCase):
    def test_the_project_keeps_the_order_and_has_no_circle(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = cycles.main(cycles.ROOT)
        self.assertEqual(status, 0, err.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=0)
