#!/usr/bin/env python3
"""Nightly runs of one service, for the footprint benchmark (benches/footprint.sh).

Reads a folded profile (`stack count` lines, plain text) and writes NIGHTS folded files,
gzipped, `OUT/YYYY-MM-DD.folded.gz` from 2026-11-01 on: night 1 is the profile itself, and each
later night starts from the night before, keeps about 95% of its stacks with each count moved
by up to ±20%, and adds about 2% stacks of its own (an existing stack with a new leaf
function), as a service's nightly profiles do. Deterministic: the same input and seed give the
same bytes (random.Random's stream, gzip with no time and no name).

Usage: gen-nightly.py PROFILE.folded OUT NIGHTS [SEED]
"""
import gzip
import os
import random
import sys


def main():
    src, out, nights = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    rng = random.Random(seed)
    stacks = []
    with open(src, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks.append((stack, int(count)))
    os.makedirs(out, exist_ok=True)
    for night in range(nights):
        if night > 0:
            kept = [(s, max(1, round(c * rng.uniform(0.8, 1.2)))) for s, c in stacks if rng.random() < 0.95]
            new = []
            for j in range(max(1, len(stacks) // 50)):
                s, c = stacks[rng.randrange(len(stacks))]
                new.append((f"{s};night{night}_fn{j % 97}", max(1, round(c * rng.uniform(0.5, 1.5)))))
            merged = {}
            for s, c in kept + new:
                merged[s] = merged.get(s, 0) + c
            stacks = sorted(merged.items())
        text = "".join(f"{s} {c}\n" for s, c in stacks).encode("utf-8", "surrogateescape")
        name = os.path.join(out, f"2026-11-{night + 1:02d}.folded.gz")
        with open(name, "wb") as f:
            with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
                g.write(text)


if __name__ == "__main__":
    main()
