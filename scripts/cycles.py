#!/usr/bin/env python3
"""Fails when the code's files import each other in a circle (issue 30, item 6).

Reads every Rust file under src/ and every page module under themes/default/static/, takes
the file each import names (Rust: `crate::a::b` and `super::x` paths, to the deepest module
that is a file, a file's unit tests left out; JavaScript: `import … from "./x.js"` and
`import("./x.js")`), and prints every set of files, and of src/'s folders, that reach one
another (Tarjan's strongly connected components). Exit status 1
when there is one, 0 otherwise. Run by scripts/test.sh before the tests.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rust_modules():
    """Module path (tuple of names, () for the crate root) -> file, for every file under src/."""
    mods = {}
    src = os.path.join(ROOT, "src")
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
            mods[("<bin>",) if rel == ["main"] else path] = os.path.join("src", *rel) + ".rs"
    return mods


PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\}", re.S)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def rust_edges(mods):
    edges = {f: set() for f in mods.values()}
    for path, file in mods.items():
        text = strip_comments(open(os.path.join(ROOT, file), encoding="utf-8").read())
        # A file's unit tests (its `#[cfg(test)] mod tests`, at its end) are not its structure,
        # and their `super::` is the file itself.
        text = text.split("#[cfg(test)]", 1)[0]
        here = path if path != ("<bin>",) else ()
        # super:: from a file `a/b.rs` (module a::b) and from `a/mod.rs` (module a) is the module
        # above: a, and the crate root.
        parent = here[:-1]
        refs = []
        for m in USE_GROUP.finditer(text):
            base = m.group(2).split("::")[1:] if m.group(2) else []
            for item in re.split(r"[,\s]+", m.group(3)):
                item = item.strip("{} ")
                if item and item != "self":
                    refs.append((m.group(1), base + item.split("::")))
                elif item == "self":
                    refs.append((m.group(1), base))
        for m in PATH.finditer(text):
            refs.append((m.group(1), m.group(2).split("::")[1:]))
        for root, names in refs:
            start = () if root == "crate" else parent
            full = start + tuple(names)
            # The deepest module of the path that is a file.
            target = None
            for k in range(len(full), -1, -1):
                if full[:k] in mods:
                    target = mods[full[:k]]
                    break
            if target and target != file:
                edges[file].add(target)
    return edges


def js_edges():
    static = os.path.join("themes", "default", "static")
    edges = {}
    for f in sorted(os.listdir(os.path.join(ROOT, static))):
        if not f.endswith(".js"):
            continue
        file = os.path.join(static, f)
        text = open(os.path.join(ROOT, file), encoding="utf-8").read()
        targets = re.findall(r"""(?:from\s+|import\s*\(\s*)["']\./([A-Za-z0-9_.-]+\.js)["']""", text)
        edges[file] = {os.path.join(static, t) for t in targets if t != f}
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
    top = lambda f: f.split("/")[1] if f.count("/") > 1 else f.split("/")[1][: -len(".rs")]
    out = {}
    for a, targets in edges.items():
        out.setdefault(top(a), set()).update(top(b) for b in targets if top(b) != top(a))
    return out


def main():
    mods = rust_modules()
    files = rust_edges(mods)
    found = [("files", c) for c in cycles(files) + cycles(js_edges())] + [("folders", c) for c in cycles(folders(files))]
    for what, comp in found:
        print(f"{what} that import one another in a circle: " + ", ".join(comp), file=sys.stderr)
    if not found:
        print(f"no import circles among {len(mods)} Rust files, their folders and the page's modules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
