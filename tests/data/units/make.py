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


def fmt(v, unit):
    if v < 0:
        return "\u2212" + fmt(-v, unit)
    u = unit.lower()
    if u in TIME:
        ns = v * TIME[u]
        if ns < 1000:
            return f"{group(ns)} ns"
        for limit, div, name in [(10**6, 10**3, "µs"), (10**9, 10**6, "ms"), (60 * 10**9, 10**9, "s"),
                                 (3600 * 10**9, 60 * 10**9, "min")]:
            if ns < limit:
                return f"{sig3(as_double(Decimal(ns) / div))} {name}"
        return f"{sig3(as_double(Decimal(ns) / (3600 * 10**9)))} h"
    if u in ("bytes", "byte") or unit == "B":
        if v < 1024:
            return f"{group(v)} B"
        x, i = Decimal(v) / 1024, 0
        while x >= 1024 and i < 4:
            x, i = x / 1024, i + 1
        return f"{sig3(as_double(x))} {['KiB', 'MiB', 'GiB', 'TiB', 'PiB'][i]}"
    if v < 10000:
        number = group(v)
    else:
        x, i = Decimal(v) / 1000, 0
        while x >= 1000 and i < 4:
            x, i = x / 1000, i + 1
        number = f"{sig3(as_double(x))} {['k', 'M', 'G', 'T', 'P'][i]}"
    if u in ("", "count", "counts"):
        return number
    if u in ("samples", "sample"):
        return f"{number} {'sample' if v == 1 else 'samples'}"
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

print(json.dumps([{"value": v, "unit": u, "text": fmt(v, u)} for v, u in CASES], ensure_ascii=False, indent=1))
