#!/usr/bin/env python3
"""The colours of a few names in every palette, reckoned from docs/FORMAT.md ("Colours") alone.

This is an independent reckoning: it was written from the document, not from src/color.rs,
and it uses exact integer arithmetic where the document says "rounded down" (floor of
base + k * byte / 255), so that it cannot share a rounding slip with the Rust code. Its
output is pasted as literals into the tests of src/color.rs; run it again only to add names.

Usage: python3 colors.py   (prints "palette<TAB>name<TAB>decimal<TAB>0xRRGGBB", one a line)
"""

import json
import re


def fnv1a32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) % 2**32
    return h


def bytes3(name: str):
    """The three hash bytes that the document's fractions are made of: v = byte / 255."""
    h = fnv1a32(name.encode("utf-8"))
    return h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF


def channel(base: int, k: int, byte: int) -> int:
    """floor(base + k * byte / 255), exactly."""
    return base + (k * byte) // 255


def pack(r: int, g: int, b: int) -> int:
    return r * 65536 + g * 256 + b


def hot(name: str) -> int:
    x1, x2, x3 = bytes3(name)
    return pack(channel(205, 50, x3), channel(0, 230, x1), channel(0, 55, x2))


def module_of(name: str) -> str:
    """Without Go's ABI ending, then its closure ending; then up to its last '::', '.' or '/'
    before the first '(' or '<'; all of it when there is none (or it is the first character)."""
    name = re.sub(r"\.(abi0|abiinternal)$", "", name)
    name = re.sub(r"\.func[0-9]+(\.[0-9]+)*$", "", name)
    cut = len(name)
    for c in "(<":
        i = name.find(c)
        if i != -1:
            cut = min(cut, i)
    head = name[:cut]
    last = max(head.rfind("::"), head.rfind("."), head.rfind("/"))
    return name if last <= 0 else name[:last]


IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
JAVA = [
    re.compile(rf"L{IDENT}(/{IDENT})*;"),  # a JVM descriptor: Lfoo/Bar;
    re.compile(rf"{IDENT}(/{IDENT})*/[A-Z][A-Za-z0-9_$]*\."),  # java/lang/String.
    re.compile(rf"[a-z][A-Za-z0-9_$]*(\.[a-z][A-Za-z0-9_$]*)+\.[A-Z][A-Za-z0-9_$]*\."),  # java.util.HashMap.
]


def kind(name: str) -> str:
    """The first rule of the document's list that holds."""
    if name.endswith("_[k]"):
        return "kernel"
    if name.endswith("_[j]"):
        return "java"
    if name.endswith("_[i]"):
        return "inlined"
    if any(r.match(name) for r in JAVA):
        return "java"
    if "::" in name or re.match(r"operator[^A-Za-z0-9_$]", name):
        return "cpp"
    return "other"


def lang(name: str) -> int:
    x1, x2, x3 = bytes3(name)
    k = kind(name)
    if k == "kernel":
        return pack(channel(220, 35, x3), channel(120, 50, x1), channel(0, 30, x2))
    if k == "java":
        return pack(channel(50, 60, x1), channel(200, 55, x3), channel(50, 60, x2))
    if k == "inlined":
        return pack(channel(40, 50, x1), channel(190, 40, x2), channel(200, 55, x3))
    if k == "cpp":
        return pack(channel(205, 45, x1), channel(190, 45, x1), channel(40, 50, x2))
    return pack(channel(200, 55, x3), channel(40, 70, x1), channel(40, 40, x2))


def blue(name: str) -> int:
    x1, x2, _ = bytes3(name)
    return pack(channel(80, 60, x1), channel(80, 60, x1), channel(190, 55, x2))


PALETTES = {
    "hot": hot,
    "module": lambda n: hot(module_of(n)),
    "lang": lang,
    "blue": blue,
}

NAMES = {
    "hot": ["all", "main", "malloc", "", "größe::λ_閉包", "<script>alert('x')</script>"],
    "module": [
        "std::vec::Vec<T>::push",
        "std::vec::Vec<T>::pop",
        "java.util.HashMap.get",
        "java.util.TreeMap.get",
        "net/http.(*Client).Do",
        "operator new(unsigned long)",
        "main",
        # Go: an ABI wrapper, a closure and a method are in their package.
        "runtime.goexit.abi0",
        "runtime.mallocgc",
        "runtime.gcBgMarkWorker.func2",
        "runtime.(*mheap).alloc",
        "syscall.Syscall6.abiinternal",
        "net/http.(*conn).serve.func1.2",
        "net/http.(*Client).Do",
        "runtime",
        ".abi0",
        # Java: the class is the module.
        "java/lang/String.hashCode",
        "java/lang/String.equals",
    ],
    "lang": [
        "do_syscall_64_[k]",
        "Foo::bar_[j]",
        "std::mem::swap_[i]",
        "main",
        "x_[k]_",
        # Java by shape
        "java/lang/String.hashCode",
        "java/util/HashMap$Node.getKey",
        "java.util.HashMap.get",
        "com.example.App$Handler.run",
        "java.lang.Object.<init>",
        "Lfoo/Bar;.baz",
        "Ljava/lang/Thread;::run",
        "java/lang/String.hashCode_[i]",
        # C++ (and other `::` names)
        "std::vector<int>::push_back",
        "foo::bar()",
        "operator new(unsigned long)",
        "operator<<",
        # other: C, Go, Python; not Java, not C++
        "malloc",
        "runtime.mallocgc",
        "net/http.(*Client).Do",
        "time.Time.Format",
        "main.Foo.func1",
        "github.com/foo/bar.Baz",
        "encoding/json.Marshal",
        "operatorNew",
        "Loop",
        "process_request (app/server.py:42)",
    ],
    "blue": ["all", "main", "malloc", "free"],
}

if __name__ == "__main__":
    for palette, names in NAMES.items():
        for name in names:
            c = PALETTES[palette](name)
            print(f"{palette}\t{json.dumps(name, ensure_ascii=False)}\t{c}\t{c:#08x}")
    # The example of docs/FORMAT.md's name file: `all`, `main`, `malloc` in the default palette.
    print("example\t" + json.dumps([hot(n) for n in ["all", "main", "malloc"]]))
