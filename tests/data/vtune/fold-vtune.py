#!/usr/bin/env python3
"""Folds a VTune top-down CSV export (`Function Stack,CPU Time:Self,Module`) into stacks.

Written for flamesite's test data, independently of inferno and flamesite (FlameGraph's
stackcollapse-vtune.pl cannot read this export: see README.md). Each row after the header is
one node of the call tree:

- its depth is the number of spaces before the function name (the root, `Total`, has none;
  a child is one space deeper than its parent);
- the name is in double quotes when it holds a comma (CSV quoting, `""` for a quote);
- then the node's own CPU time in seconds, then its module.

A node with own time is a stack: its ancestors' and its own `module`function`, from the root,
weighed by that time in milliseconds, rounded to the nearest whole one (graph counts are
whole; the script stops on a time of exactly half a millisecond rather than choose a
direction). Equal stacks are added up; lines are sorted (byte order). Usage:
    python3 fold-vtune.py vtune.csv > vtune.folded
"""
import sys
from decimal import ROUND_HALF_UP, Decimal


def split_row(row):
    depth = len(row) - len(row.lstrip(" "))
    rest = row[depth:]
    if rest.startswith('"'):
        i, parts = 1, []
        while True:
            j = rest.index('"', i)
            parts.append(rest[i:j])
            if rest[j + 1:j + 2] == '"':
                parts.append('"')
                i = j + 2
            else:
                rest = rest[j + 1:]
                break
        name = "".join(parts)
        if not rest.startswith(","):
            sys.exit(f"no comma after the quoted name: {row}")
        rest = rest[1:]
    else:
        name, rest = rest.split(",", 1)
    seconds, module = rest.split(",", 1)
    if "," in module or '"' in module:
        sys.exit(f"more than three fields: {row}")
    return depth, name, Decimal(seconds), module


rows = open(sys.argv[1], encoding="utf-8").read().splitlines()
if rows[0] != "Function Stack,CPU Time:Self,Module":
    sys.exit(f"unexpected header: {rows[0]}")
stack, counts = [], {}
for row in rows[1:]:
    if not row.strip():
        continue
    depth, name, seconds, module = split_row(row)
    if depth > len(stack):
        sys.exit(f"a level skipped: {row}")
    del stack[depth:]
    stack.append(f"{module}`{name}")
    milliseconds = seconds * 1000
    if milliseconds - int(milliseconds) == Decimal("0.5"):
        sys.exit(f"half a millisecond: {row}")
    whole = int(milliseconds.to_integral_value(rounding=ROUND_HALF_UP))
    if whole:
        key = ";".join(stack)
        counts[key] = counts.get(key, 0) + whole
out = sys.stdout.buffer
for key in sorted(counts, key=lambda s: s.encode()):
    out.write(f"{key} {counts[key]}\n".encode())
