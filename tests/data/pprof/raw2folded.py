#!/usr/bin/env python3
"""Converts the Go tool's text form of a pprof profile (`go tool pprof -raw`) to folded stacks.

Usage: raw2folded.py RAW_TEXT OUT_PREFIX

Writes, for each sample type of the profile, OUT_PREFIX.<type>.folded: one line per distinct
stack, `root;…;leaf value`, values summed over the samples with that stack, lines sorted,
stacks whose sum is 0 left out. Writes OUT_PREFIX.types: one line per sample type, in the
profile's order, `type unit`, followed by ` default` on the default one (the one the Go tool
marks [dflt], else the last, as pprof chooses).

This is the independent reference that flamesite's pprof decoder is tested against, so it
reads only the Go tool's text, never the protobuf. Frame names follow flamesite's rules:
a location's lines are printed by the tool innermost (inlined callee) first, and stacks leaf
first; folded stacks are root first. A location with no line is named by its address, plus
` (file)` when its mapping has a file name. Duplicate type names get `-2`, `-3`, … as
flamesite names them.
"""

import re
import sys
from collections import defaultdict

SAMPLE = re.compile(r"^\s*((?:-?\d+\s+)*-?\d+): ((?:\d+ ?)*)$")
LOCATION = re.compile(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(?:\[F\] )?(.*)$")
CONTINUATION = re.compile(r"^ {13}(\S.*)$")
LINE = re.compile(r"^(.*) (\S*):(-?\d+) s=(-?\d+)(?:\((.*)\))?$")
MAPPING = re.compile(r"^\s*(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (.*)$")


def frame_name(text):
    """The function name of one line of a location, as `name file:line s=N(system)`."""
    if text == "??":
        raise SystemExit("a line without a function: not expected in Go profiles")
    m = LINE.match(text)
    if not m:
        raise SystemExit(f"unreadable location line: {text!r}")
    name, system = m.group(1), m.group(5)
    return name if name else (system or "")


def main():
    raw_path, prefix = sys.argv[1], sys.argv[2]
    lines = open(raw_path, encoding="utf-8").read().split("\n")
    i = lines.index("Samples:")
    types = [t for t in lines[i + 1].split(" ") if t]
    samples = []
    j = i + 2
    while lines[j] != "Locations":
        m = SAMPLE.match(lines[j])
        if m:
            values = [int(v) for v in m.group(1).split()]
            ids = [int(v) for v in m.group(2).split()]
            samples.append((values, ids))
        j += 1
    locations = {}  # id -> (address, mapping id, [names innermost first])
    current = None
    j += 1
    while lines[j] != "Mappings":
        m = LOCATION.match(lines[j])
        c = CONTINUATION.match(lines[j])
        if m:
            current = int(m.group(1))
            rest = m.group(4).strip()
            names = [frame_name(rest)] if rest else []
            locations[current] = (m.group(2), m.group(3), names)
        elif c and current is not None:
            locations[current][2].append(frame_name(c.group(1)))
        j += 1
    mappings = {}
    for line in lines[j + 1 :]:
        m = MAPPING.match(line)
        if m:
            # "file buildid [bits]": Go's mapping files have no spaces.
            mappings[m.group(1)] = m.group(2).split(" ")[0]

    def frames(loc_id):
        address, mapping, names = locations[loc_id]
        if names:
            return list(reversed(names))  # outermost (caller) first
        file = mappings.get(mapping, "") if mapping else ""
        return [f"{address} ({file})" if file else address]

    parsed = []  # (type, unit, is default)
    for t in types:
        dflt = t.endswith("[dflt]")
        t = t[: -len("[dflt]")] if dflt else t
        name, unit = t.split("/", 1)
        parsed.append([name, unit, dflt])
    if not any(p[2] for p in parsed):
        parsed[-1][2] = True
    seen = set()
    for p in parsed:
        name, k = p[0], 1
        while name in seen:
            k += 1
            name = f"{p[0]}-{k}"
        seen.add(name)
        p[0] = name

    with open(f"{prefix}.types", "w", encoding="utf-8") as out:
        for name, unit, dflt in parsed:
            out.write(f"{name} {unit}{' default' if dflt else ''}\n")
    for k, (name, _, _) in enumerate(parsed):
        sums = defaultdict(int)
        for values, ids in samples:
            if values[k] <= 0:
                continue
            stack = []
            for loc in reversed(ids):  # samples list their locations leaf first
                stack.extend(frames(loc))
            sums[";".join(stack)] += values[k]
        out_lines = sorted(f"{s} {v}\n" for s, v in sums.items() if v > 0)
        with open(f"{prefix}.{name}.folded", "w", encoding="utf-8") as out:
            out.writelines(out_lines)


if __name__ == "__main__":
    main()
