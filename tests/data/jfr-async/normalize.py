#!/usr/bin/env python3
"""Pyroscope's collapsed graph (gzipped, on standard input) in flamesite's naming, for one value.

Usage: normalize.py COLUMN < NAME_..._expected_collapsed.txt.gz > NAME.GRAPH.folded
Each input line is `frame;frame;... [v0 v1 ...]`, root first; COLUMN picks the value (0: the
count or the time, 1: the second value of a two-valued profile). Pyroscope's renaming, undone
where flamesite names a frame otherwise:
- a frame carries its line (`App.fib:79`): flamesite's frames are methods, so it is dropped
  and the stacks it told apart are merged;
- a frame without a class is `.method` (`.unknown_Java`): flamesite names it `method`.
Pyroscope also numbers lambda classes and generated accessors away (`App$$Lambda_.run`), as
flamesite does (docs/FORMAT.md, "Names the JVM generates"), so those names are compared as
they are. Lines are sorted; zero values
are left out, as flamesite leaves out stacks of nothing.
"""
import collections
import gzip
import re
import sys

column = int(sys.argv[1])
sums = collections.Counter()
for line in gzip.open(sys.stdin.buffer, "rt", encoding="utf-8"):
    stack, values = line.rstrip("\n").rsplit(" [", 1)
    value = int(values.rstrip("]").split()[column])
    frames = [re.sub(r":\d+$", "", f) for f in stack.split(";")]
    frames = [f[1:] if f.startswith(".") else f for f in frames]
    sums[";".join(frames)] += value
for stack in sorted(sums):
    if sums[stack]:
        print(f"{stack} {sums[stack]}")
