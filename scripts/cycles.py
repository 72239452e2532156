#!/usr/bin/env python3
"""Fails when the code's imports break the order of the build's phases, or go in a circle
(issue 30, item 6; issue 46).

Reads every Rust file under src/ and every page module under themes/default/static/ and takes
the file each import names:
- Rust: `crate::`, `super::` (as many as written: `super::super::x` is two modules up) and
  `self::` paths, in `use` trees (`use crate::a::{b, c::{d, e}}`) and in the code (a serde
  attribute's string too), each to the deepest module that is a file. Comments and a file's
  `#[cfg(test)] mod … { … }` block, to its closing brace (its unit tests, whose `super::` is the
  file itself), are left out; a `#[cfg(test)]` on a function or a `use` cuts nothing.
- JavaScript: `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"` (for its
  side effects) and `import("./x.js")`.

Then it checks two things, and prints every breach; exit status 1 when there is one:
1. The phase order of ARCHITECTURE.md (ingest -> group -> derive -> publish): a Rust file
   imports only files of its own phase, of an earlier one, and of the shared layers below every
   phase; nothing but a driver imports a driver. RANKS below is the table, EXCEPTIONS the
   imports that break it today, each to be fixed. A breach names the file, the line, the module
   imported and the rule it breaks.
2. No circles: no set of files, and no set of src/'s folders, reach one another (Tarjan's
   strongly connected components), Rust and JavaScript each.

Run by scripts/test.sh before the tests, after scripts/cycles_test.py (its own tests).
`python3 scripts/cycles.py [ROOT]` checks another copy of the project.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The phase order. A file's layer is its folder under src/ (or its own name, for a file at the
# top of src/). A phase imports its own phase, earlier phases and the shared layers; a shared
# layer imports only shared layers (else a phase would reach a later one through it); nothing
# but a driver imports a driver. The ranks follow ARCHITECTURE.md's ingest -> group -> derive
# -> publish, and the imports the code has:
# - shared: error, units, config (site.toml), graph (frame tables, pure), store (the graph
#   format both ways) and archive. archive holds the group phase (archive::run::group) but is
#   above all the model every phase speaks: ingest makes its RunRecord and Stamps, dates a run
#   with archive::describe and names it with archive::slug (the one authority for URL names),
#   and config checks archive.pattern with it. It imports only graph, so as a shared layer it
#   still may not reach into a phase. objects is the object-store client both doors share
#   (profiles read from a bucket, a site published to one).
# - ingest: one run's profile to its graph files and record.
# - derive: products of several runs.
# - publish: site (pages, feeds, index.json, charts, theme), src/publish/ (split out of
#   build/) and output, the door to the published files that publish writes through.
# - driver: build, diff, serve, the command line and the crate's roots, which call the phases
#   in order and so may import anything.
SHARED, INGEST, DERIVE, PUBLISH, DRIVER = range(5)
RANK_NAMES = ["shared", "ingest", "derive", "publish", "driver"]
RANKS = {
    "error": SHARED,
    "units": SHARED,
    "config": SHARED,
    "graph": SHARED,
    "store": SHARED,
    "archive": SHARED,
    "objects": SHARED,
    "ingest": INGEST,
    "derive": DERIVE,
    "site": PUBLISH,
    "publish": PUBLISH,
    "output": PUBLISH,
    "build": DRIVER,
    "diff": DRIVER,
    "serve": DRIVER,
    "cli": DRIVER,
    "lib": DRIVER,
    "main": DRIVER,
}

# Imports that break the order today: (importing file, module imported, why). Each is a thing
# to fix, not a rule; one that is no longer needed fails the check too, so the list only shrinks.
EXCEPTIONS = [
    ("src/ingest/cache.rs", "crate::output",
     "the cache restores graph files from the published site (output::Published), where it "
     "should have a door of its own (ARCHITECTURE 1b)"),
    ("src/ingest/cache.rs", "crate::output::record",
     "the names of the cache's entries and of the build state are kept in output/record.rs, "
     "for the bucket's copy of the record; they belong to the cache's door"),
    ("src/derive/mod.rs", "crate::output",
     "with no cache, derive reads runs' graph files back from the staging tree "
     "(Source::Staging) instead of handing derive the graphs as data"),
]


def layer(file):
    """src/a/b.rs -> a, src/a.rs -> a."""
    parts = file.split("/")
    return parts[1] if len(parts) > 2 else parts[1][: -len(".rs")]


def rust_modules(root=None):
    """Module path (tuple of names, () for the crate root) -> file, for every file under src/."""
    root = ROOT if root is None else root
    mods = {}
    src = os.path.join(root, "src")
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3].split(os.sep)
            if rel in (["lib"], ["main"]):
                path = ()
            elif rel[-1] == "mod":
                path = tuple(rel[:-1])
            else:
                path = tuple(rel)
            # main.rs is a crate of its own that uses the library: give it its own key.
            mods[("<bin>",) if rel == ["main"] else path] = "/".join(["src", *rel]) + ".rs"
    return mods


def blank(chars, a, b):
    """Makes chars[a:b] spaces but its newlines, so offsets and lines stay where they were."""
    for k in range(a, b):
        if chars[k] != "\n":
            chars[k] = " "


# The opening of a raw string (r"…", r#"…"#, br"…"), not the r that ends a name.
RAW = re.compile(r'(?<![A-Za-z0-9_])b?r(#*)"')


def blank_rust(text):
    """(the text without its comments, the text without its comments and the insides of its
    strings and characters). A `crate::` in a doc comment is no import, but one in a string can
    be (serde's `skip_serializing_if = "crate::store::chunk::is_zero"`); a brace or a `use` in
    a string is not code, and would throw off the search for the end of the test module."""
    code, bare = list(text), list(text)
    n = len(text)

    def comment(a, b):
        blank(code, a, b)
        blank(bare, a, b)

    def literal(a, b):
        blank(bare, a, b)

    i = 0
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comment(i, j)
            i = j
        elif text.startswith("/*", i):
            # Rust's block comments nest.
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            comment(i, j)
            i = j
        elif c in "br" and RAW.match(text, i):
            # A raw string (r"…", r#"…"#): no escapes; it ends at a quote and as many #.
            m = RAW.match(text, i)
            hashes, start = m.group(1), m.end()
            end = text.find('"' + hashes, start)
            end = n if end < 0 else end
            literal(start, end)
            i = end + 1 + len(hashes)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            literal(i + 1, min(j, n))
            i = j + 1
        elif c == "'":
            # A character ('x', '\n', '\u{7b}', '{') or a lifetime or label ('a, 'outer:).
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3)
                j = n if j < 0 else j
                literal(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                literal(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(code), "".join(bare)


# `#[cfg(test)]`, maybe more attributes and a visibility, then `mod name {`.
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*"
                      r"(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def test_modules(bare):
    """The spans of each `#[cfg(test)] mod name { … }`, to its matching brace, in the text
    without comments and strings. A file's unit tests are not its structure (and their
    `super::` is the file itself); anything else under `#[cfg(test)]` (a helper function, a
    `use`) is not a test module, and what follows a test module is read too."""
    spans = []
    for m in TEST_MOD.finditer(bare):
        depth, j = 1, m.end()
        while j < len(bare) and depth:
            if bare[j] == "{":
                depth += 1
            elif bare[j] == "}":
                depth -= 1
            j += 1
        spans.append((m.start(), j))
    return spans


def without(text, spans):
    """The text with `spans` made spaces."""
    chars = list(text)
    for a, b in spans:
        blank(chars, a, b)
    return "".join(chars)


USE = re.compile(r"\buse\s+([^;]*);")
USE_TOKEN = re.compile(r"::|[{},*]|\bas\b|[A-Za-z_][A-Za-z0-9_]*")
PATH = re.compile(r"(?<![A-Za-z0-9_])(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def use_paths(tree, offset):
    """The paths a `use` tree names, each (list of names, offset of its last name):
    `crate::a::{b, c::{self, d}}` -> crate::a::b, crate::a::c, crate::a::c::d."""
    tokens = [(m.group(), offset + m.start()) for m in USE_TOKEN.finditer(tree)]
    pos = 0

    def parse(prefix, at):
        # One tree: names joined by ::, then a group, a glob or an alias, or nothing.
        nonlocal pos
        path, last, found = list(prefix), at, []
        while pos < len(tokens):
            tok, where = tokens[pos]
            if tok == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos][0] != "}":
                    if tokens[pos][0] == ",":
                        pos += 1
                        continue
                    found += parse(path, last)
                pos += 1
                return found
            if tok == "*":
                pos += 1
                return [(path, where)]
            if tok == "as":
                pos += 2
                break
            if tok in (",", "}"):
                break
            if tok != "::":
                if tok == "self" and path:
                    # `{self, …}` is the module the group is in.
                    last = where
                else:
                    path, last = path + [tok], where
            pos += 1
        return found + [(path, last)]

    out = []
    while pos < len(tokens):
        out += parse([], offset)
        pos += 1
    return out


def resolve(mods, here, names):
    """The module (one that is a file) a path names from module `here`, or None for a path of
    another crate. `crate` is the root; each leading `super` is one module up (from a/b.rs,
    module a::b, as from a/b/mod.rs: `super::super` is the root), `self` the module itself; the
    rest goes down to its deepest module that is a file."""
    if not names or names[0] not in ("crate", "super", "self"):
        return None
    base, rest = ((), names[1:]) if names[0] == "crate" else (here, names)
    while rest and rest[0] in ("super", "self"):
        if rest[0] == "super":
            base = base[:-1]
        rest = rest[1:]
    full = base + tuple(rest)
    for end in range(len(full), -1, -1):
        if full[:end] in mods:
            return full[:end]
    return None


def rust_imports(mods, root=None):
    """File -> [(line, module imported, its file)], the imports of every file under src/, each
    module once a line."""
    root = ROOT if root is None else root
    found = {}
    for here, file in mods.items():
        with open(os.path.join(root, file), encoding="utf-8") as f:
            code, bare = blank_rust(f.read())
        tests = test_modules(bare)
        code, bare = without(code, tests), without(bare, tests)
        # main.rs is the binary's root: its `crate::` is its own root.
        here = () if here == ("<bin>",) else here
        line = lambda at: code.count("\n", 0, at) + 1
        refs, uses = [], []
        for m in USE.finditer(bare):
            refs += use_paths(m.group(1), m.start(1))
            uses.append(m.span())
        # A path anywhere else (crate::a::f(), super::super::x::T, a serde attribute's
        # string); the `use`s, read above, are left out so their paths are not read twice.
        for m in PATH.finditer(without(code, uses)):
            refs.append(([m.group(1)] + m.group(2).split("::")[1:], m.end()))
        imports = []
        for names, at in refs:
            module = resolve(mods, here, names)
            if module is not None and mods[module] != file:
                imports.append((line(at), "::".join(("crate",) + module), mods[module]))
        found[file] = sorted(set(imports))
    return found


# `from "./x.js"` (an import's or an export's), `import("./x.js")` and `import "./x.js"`.
JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.\.?/[A-Za-z0-9_./-]+\.js)["']""")


def js_edges(root=None):
    """Page module -> the modules it imports (static, side-effect, re-export, dynamic)."""
    root = ROOT if root is None else root
    static = "themes/default/static"
    edges = {}
    for dirpath, _, files in os.walk(os.path.join(root, static)):
        for f in sorted(files):
            if not f.endswith(".js"):
                continue
            file = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            with open(os.path.join(root, file), encoding="utf-8") as fh:
                text = fh.read()
            targets = {os.path.normpath(os.path.join(os.path.dirname(file), t)).replace(os.sep, "/")
                       for t in JS_IMPORT.findall(text)}
            edges[file] = targets - {file}
    return edges


def cycles(edges):
    """The strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for v0 in sorted(edges):
        if v0 in index:
            continue
        work = [(v0, iter(sorted(edges.get(v0, ()))))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(edges.get(w, ())))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def folders(edges):
    """The same imports between src/'s folders (a file at its top is a folder of its own)."""
    out = {}
    for a, targets in edges.items():
        out.setdefault(layer(a), set()).update(layer(b) for b in targets if layer(b) != layer(a))
    return out


def out_of_order(a, b):
    """Why layer `a` may not import layer `b`, or None when it may."""
    if a == b:
        return None
    # A folder missing from RANKS is a layer to place in the table, not a free pass.
    for new in (a, b):
        if new not in RANKS:
            return f"{new} has no place in the phase order (RANKS, scripts/cycles.py)"
    ra, rb = RANKS[a], RANKS[b]
    if rb == DRIVER and ra != DRIVER:
        return f"{b} is a driver, and only drivers import drivers"
    if ra == SHARED and rb != SHARED:
        return (f"{a} is a shared layer, which imports only shared layers, and {b} is in the "
                f"{RANK_NAMES[rb]} phase")
    if rb > ra:
        return (f"{a} is in the {RANK_NAMES[ra]} phase, which imports only its own phase, earlier "
                f"ones and the shared layers, and {b} is in the later {RANK_NAMES[rb]} phase")
    return None


def order_breaches(imports, exceptions=None):
    """(the imports that break the phase order, as messages; the exceptions no longer needed)."""
    exceptions = EXCEPTIONS if exceptions is None else exceptions
    allowed = {(file, module) for file, module, _ in exceptions}
    used, out = set(), []
    for file, found in sorted(imports.items()):
        for line, module, target in found:
            why = out_of_order(layer(file), layer(target))
            if why is None:
                continue
            if (file, module) in allowed:
                used.add((file, module))
            else:
                out.append(f"{file}:{line} imports {module} ({target}): {why}")
    stale = [f"{file} imports {module} no longer, or in order: take it out of EXCEPTIONS"
             for file, module, _ in exceptions if (file, module) not in used]
    return out, stale


def main(root=None):
    root = ROOT if root is None else root
    mods = rust_modules(root)
    imports = rust_imports(mods, root)
    files = {f: {t for _, _, t in found} for f, found in imports.items()}
    breaches, stale = order_breaches(imports)
    found = [("files", c) for c in cycles(files) + cycles(js_edges(root))]
    found += [("folders", c) for c in cycles(folders(files))]
    for line in breaches + stale:
        print(f"phase order: {line}", file=sys.stderr)
    for what, comp in found:
        print(f"{what} that import one another in a circle: " + ", ".join(comp), file=sys.stderr)
    if breaches or stale or found:
        return 1
    print(f"phase order kept ({len(EXCEPTIONS)} exceptions) and no import circles among "
          f"{len(mods)} Rust files, their folders and the page's modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
