#!/usr/bin/env python3
"""Writes vectors.json: values in units as people should read them, reckoned here from the
rules of src/units.rs's module comment with Python's exact decimals (not by running either
formatter), for the Rust test (src/units.rs) and the node test (tests/js/format.test.mjs).

Usage: python3 tests/data/units/make.py > tests/data/units/vectors.json"""
import json
from decimal import Decimal, ROUND_HALF_UP

TIME = {"nanoseconds": 1, "ns": 1, "microseconds": 10**3, "us": 10**3, "µs": 10**3,
        "milliseconds": 10**6, "ms": 10**6, "seconds": 10**9, "s": 10**9}


def sig3(x):
    """x a Decimal: 0, 1 or 2 decimals for x from 100, from 10, below; ties round up."""
    places = 0 if x >= 100 else 1 if x >= 10 else 2
    return str(x.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def as_double(x):
    # The formatters work on doubles: the quotient as a double, then its exact decimal.
    return Decimal(float(x))


def group(n):
    return f"{n:,}"


def exact(x):
    """x a Decimal (not negative): all its digits, thousands grouped, no trailing zeros."""
    whole, _, fraction = format(x, "f").partition(".")
    fraction = fraction.rstrip("0")
    return group(int(whole)) + (f".{fraction}" if fraction else "")


def fmt(v, unit, d=0):
    """v stands for v / 10^d (a graph of fractional counts keeps d decimal places)."""
    if v < 0:
        return "\u2212" + fmt(-v, unit, d)
    u = unit.lower()
    x = Decimal(v).scaleb(-d)
    if u in TIME:
        ns = x * TIME[u]
        if ns < 1000:
            return f"{group(int(ns.quantize(Decimal(1), rounding=ROUND_HALF_UP)))} ns"
        for limit, div, name in [(10**6, 10**3, "µs"), (10**9, 10**6, "ms"), (60 * 10**9, 10**9, "s"),
                                 (3600 * 10**9, 60 * 10**9, "min")]:
            if ns < limit:
                return f"{sig3(as_double(Decimal(ns) / div))} {name}"
        return f"{sig3(as_double(Decimal(ns) / (3600 * 10**9)))} h"
    if u in ("bytes", "byte") or unit == "B":
        if x < 1024:
            return f"{exact(x)} B"
        x, i = x / 1024, 0
        while x >= 1024 and i < 4:
            x, i = x / 1024, i + 1
        return f"{sig3(as_double(x))} {['KiB', 'MiB', 'GiB', 'TiB', 'PiB'][i]}"
    if x < 10000:
        number = exact(x)
    else:
        x, i = x / 1000, 0
        while x >= 1000 and i < 4:
            x, i = x / 1000, i + 1
        number = f"{sig3(as_double(x))} {['k', 'M', 'G', 'T', 'P'][i]}"
    if u in ("", "count", "counts"):
        return number
    if u in ("samples", "sample"):
        return f"{number} {'sample' if Decimal(v).scaleb(-d) == 1 else 'samples'}"
    return f"{number} {unit}"


CASES = [
    (0, "samples"), (1, "samples"), (2, "sample"), (999, "samples"), (9999, "samples"), (10000, "samples"),
    (12250, "samples"), (20355, "samples"), (999_499, "samples"), (1_234_567, "samples"), (5_000_000_000, "cycles"),
    (18_800, "count"), (42, "count"), (42, ""), (123_456, ""), (7, "objects"), (70_000, "objects"),
    (2**32 + 5, "samples"), (-1500, "samples"), (-20_355, "samples"),
    (0, "nanoseconds"), (999, "nanoseconds"), (1000, "ns"), (1500, "ns"), (999_999, "ns"), (1_000_000, "ns"),
    (2_500_000_000, "nanoseconds"), (59_990_000_000, "ns"), (60_000_000_000, "ns"), (750_000_000_000, "ns"),
    (3_599_000_000_000, "ns"), (3_600_000_000_000, "ns"), (120, "seconds"), (1, "s"), (1500, "microseconds"),
    (250, "us"), (20, "milliseconds"), (125, "ms"), (2**40, "nanoseconds"), (-1500, "ns"),
    (0, "bytes"), (512, "bytes"), (1023, "bytes"), (1024, "bytes"), (1536, "bytes"), (1_048_576, "B"),
    (5 * 2**30 + 2**29, "bytes"), (2**50, "bytes"), (-2048, "bytes"),
]

# Fractional counts (folded `main;f 31.23`): (value, unit, decimal places).
SCALED = [
    (3123, "samples", 2), (3120, "samples", 2), (100, "samples", 2), (5, "samples", 2), (0, "samples", 2),
    (123_456_789, "samples", 4), (12_345_678, "", 4), (99_999_999, "count", 4), (100_000_000, "count", 4),
    (-250, "samples", 2), (1_000_000_001, "samples", 9), (7, "objects", 1),
    (15, "ms", 1), (12_345, "ms", 3), (2_500_000_001, "ns", 3), (125, "bytes", 1), (20_481, "bytes", 1), (10_240, "bytes", 1),
]

vectors = [{"value": v, "unit": u, "text": fmt(v, u)} for v, u in CASES]
vectors += [{"value": v, "unit": u, "decimals": d, "text": fmt(v, u, d)} for v, u, d in SCALED]
print(json.dumps(vectors, ensure_ascii=False, indent=1))
