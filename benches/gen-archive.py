#!/usr/bin/env python3
"""Writes an archive of N small synthetic profiles for benches/rebuild.sh: profile i is
gzipped folded stacks (about 200 distinct stacks, depth 4 to 24, over a pool of 3,000
function names), in series s(i mod SERIES), dated 2020-01-01 plus i * 7 minutes in its file
name. Deterministic: the same arguments give the same bytes (gzip without a time stamp).

MODE `independent` (the default, which the figures before 2026-11-25 used): every profile
draws its 200 stacks afresh, so two runs of a series share almost nothing and each
comparison is a union of two unrelated trees. MODE `series`: the runs of a series are
variations of one service, as nightly profiles are: each keeps about 95% of its series' 200
stacks with counts within ±20% of the series' own, and adds about 10 stacks of its own.

STACKS (default 200) is the number of distinct stacks a profile draws (a series' base has
that many; a `series` run adds a twentieth of it of its own).

Usage: gen-archive.py DIR N [SERIES (default 100)] [FIRST (default 0)] [MODE] [STACKS]"""
import datetime
import gzip
import os
import random
import sys

NAMES = [f"pkg{k % 40}::mod{k % 97}::func_{k}" for k in range(3000)]


def stacks(rnd, count):
    """`count` distinct random stacks with random counts: [(stack, count)]."""
    seen = set()
    out = []
    while len(out) < count:
        depth = rnd.randint(4, 24)
        stack = ";".join(["main"] + [NAMES[rnd.randrange(len(NAMES))] for _ in range(depth - 1)])
        if stack in seen:
            continue
        seen.add(stack)
        out.append((stack, rnd.randint(1, 1000)))
    return out


def profile(i, series, mode, count):
    rnd = random.Random(i)
    if mode == "independent":
        chosen = stacks(rnd, count)
    else:
        base = stacks(random.Random(f"series {i % series}"), count)
        chosen = [(s, max(1, round(c * rnd.uniform(0.8, 1.2)))) for s, c in base if rnd.random() < 0.95]
        have = {s for s, _ in chosen}
        chosen += [(s, c) for s, c in stacks(rnd, max(1, count // 20)) if s not in have]
    return "".join(f"{s} {c}\n" for s, c in chosen).encode()


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    series = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    first = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    mode = sys.argv[5] if len(sys.argv) > 5 else "independent"
    count = int(sys.argv[6]) if len(sys.argv) > 6 else 200
    if mode not in ("independent", "series"):
        sys.exit(f"unknown mode {mode!r}: independent or series")
    start = datetime.datetime(2020, 1, 1)
    for i in range(first, first + n):
        when = (start + datetime.timedelta(minutes=7 * i)).strftime("%Y%m%dT%H%M")
        folder = os.path.join(out, f"s{i % series:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"run-{when}.folded.gz"), "wb") as f:
            f.write(gzip.compress(profile(i, series, mode, count), compresslevel=6, mtime=0))


if __name__ == "__main__":
    main()
