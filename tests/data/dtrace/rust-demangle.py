#!/usr/bin/env python3
"""Folded stacks on stdin -> the same stacks, Rust legacy symbols demangled, on stdout.

Written for flamesite's test data (not taken from any collapser): FlameGraph's stackcollapse.pl
and stackcollapse-sample.awk print the Rust symbols that DTrace and macOS `sample` failed to
demangle as they are (`_$LT$std..fs..ReadDir$u20$as$u20$...$GT$::next::hc14f1750ca79129b`).
This finishes the job by the rules of Rust's legacy mangling, as rustc-demangle (src/legacy.rs)
undoes it:

- a symbol is Rust's when its last path element is its hash, `h` and 16 hex digits; the hash
  is dropped, as rustc-demangle's `{:#}` drops it;
- each path element loses the `_` that the mangler put before a leading `$` escape
  (`run::_$u7b$$u7b$closure$u7d$$u7d$` is `run::{{closure}}`);
- `..` is `::`, and `$SP$ $BP$ $RF$ $LT$ $GT$ $LP$ $RP$ $C$ $uXX$` are `@ * & < > ( ) ,` and
  the character of code point XX.

A frame is `module`symbol` (DTrace, `sample`) or a bare symbol; a profiler's `(.llvm.N)` note
after the hash, and blanks at the end (stackcollapse.pl cuts such a note at its `(`), are not
part of the name. Other frames are left as they are.

Lines whose count is 0 are dropped (stackcollapse-sample.awk prints every caller with its own
samples, most often none), equal stacks are added up, and the lines are sorted (byte order).
"""
import re
import sys

ESCAPES = {"SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ","}
HASH = re.compile(r"::h[0-9a-f]{16}$")
LLVM_NOTE = re.compile(r"\.?\s*\(\.llvm\.[0-9]+\)$")


def unescape(match):
    code = match.group(1)
    if code in ESCAPES:
        return ESCAPES[code]
    if code.startswith("u"):
        return chr(int(code[1:], 16))
    return match.group(0)


def demangle_symbol(symbol):
    name = LLVM_NOTE.sub("", symbol.rstrip()).rstrip()
    if not HASH.search(name):
        return symbol
    elements = []
    for element in HASH.sub("", name).split("::"):
        if element.startswith("_$"):
            element = element[1:]
        element = element.replace("..", "::")
        elements.append(re.sub(r"\$([A-Za-z0-9]+)\$", unescape, element))
    return "::".join(elements)


def demangle_frame(frame):
    if "`" in frame:
        module, symbol = frame.split("`", 1)
        return module + "`" + demangle_symbol(symbol)
    return demangle_symbol(frame)


counts = {}
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.strip():
        continue
    stack, count = line.rsplit(" ", 1)
    if int(count) == 0:
        continue
    stack = ";".join(demangle_frame(frame) for frame in stack.split(";"))
    counts[stack] = counts.get(stack, 0) + int(count)
out = sys.stdout.buffer
for stack in sorted(counts, key=lambda s: s.encode()):
    out.write(f"{stack} {counts[stack]}\n".encode())
