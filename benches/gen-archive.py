#!/usr/bin/env python3
"""Writes an archive of N small synthetic profiles for benches/rebuild.sh: profile i is
gzipped folded stacks (200 distinct stacks, depth 4 to 24, over a pool of 3,000 function
names), in series s(i mod SERIES), dated 2020-01-01 plus i * 7 minutes in its file name.
Deterministic: the same N gives the same bytes (gzip without a time stamp).

Usage: gen-archive.py DIR N [SERIES (default 100)] [FIRST (default 0)]"""
import datetime
import gzip
import os
import random
import sys


def profile(i):
    rnd = random.Random(i)
    names = [f"pkg{k % 40}::mod{k % 97}::func_{k}" for k in range(3000)]
    stacks = set()
    lines = []
    while len(lines) < 200:
        depth = rnd.randint(4, 24)
        stack = ";".join(["main"] + [names[rnd.randrange(len(names))] for _ in range(depth - 1)])
        if stack in stacks:
            continue
        stacks.add(stack)
        lines.append(f"{stack} {rnd.randint(1, 1000)}\n")
    return "".join(lines).encode()


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    series = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    first = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    start = datetime.datetime(2020, 1, 1)
    for i in range(first, first + n):
        when = (start + datetime.timedelta(minutes=7 * i)).strftime("%Y%m%dT%H%M")
        folder = os.path.join(out, f"s{i % series:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"run-{when}.folded.gz"), "wb") as f:
            f.write(gzip.compress(profile(i), compresslevel=6, mtime=0))


if __name__ == "__main__":
    main()
