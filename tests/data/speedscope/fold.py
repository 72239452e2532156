#!/usr/bin/env python3
"""Folded stacks of each profile of a speedscope file, written independently of flamesite's
Rust decoder, for the tests. Frame name: "name file:line" ("name file", "name"). Weights of a
time unit are scaled to the largest of the unit, ms, µs, ns in which all are whole numbers.
Evented profiles: the open stack gets the time until the next event. Output: for each
profile, a line "# name unit" and then its stacks, sorted, with summed weights."""
import collections, json, sys

data = json.load(open(sys.argv[1]))

def frame_name(f):
    name = f["name"]
    if f.get("file"):
        name += " " + f["file"] + (":%d" % f["line"] if f.get("line") is not None else "")
    return name.replace(";", ":")

names = [frame_name(f) for f in data["shared"]["frames"]]
SCALES = {"seconds": [("seconds", 1), ("milliseconds", 1e3), ("microseconds", 1e6), ("nanoseconds", 1e9)],
          "milliseconds": [("milliseconds", 1), ("microseconds", 1e3), ("nanoseconds", 1e6)],
          "microseconds": [("microseconds", 1), ("nanoseconds", 1e3)]}

for p in data["profiles"]:
    if p["type"] == "sampled":
        pairs = list(zip(p["samples"], p["weights"]))
    else:
        pairs, open_, last = [], [], None
        for e in p["events"]:
            if last is not None and e["at"] > last and open_:
                pairs.append((list(open_), e["at"] - last))
            last = e["at"]
            if e["type"] == "O":
                open_.append(e["frame"])
            else:
                assert open_.pop() == e["frame"]
    unit, factor = p["unit"], 1
    for u, f in SCALES.get(p["unit"], []):
        unit, factor = u, f
        if all(abs(w * f - round(w * f)) <= 1e-6 * max(1, abs(w * f)) for _, w in pairs):
            break
    if unit == "none":
        unit = "samples"
    sums = collections.Counter()
    for stack, w in pairs:
        sums[";".join(names[i] for i in stack)] += round(w * factor)
    print("#", p["name"], unit)
    for stack in sorted(sums):
        if stack and sums[stack]:
            print(stack, sums[stack])
