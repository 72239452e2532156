#!/usr/bin/env python3
"""Folded stacks of a V8 .cpuprofile, one sample counted once (or, with --time, weighed by
the microseconds until the next sample in time, the last one's until endTime), written
independently of flamesite's Rust decoder: walk each sampled node up to the root.
Frame name: functionName, or "(anonymous)" when empty, then " url:line" (line 1-based) when
the frame has a url; the "(root)" node is dropped. Output lines sorted, counts summed."""
import collections, json, sys

time = "--time" in sys.argv
profile = json.load(open([a for a in sys.argv[1:] if a != "--time"][0]))
nodes = {n["id"]: n for n in profile["nodes"]}
parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

def name(node):
    cf = node["callFrame"]
    s = cf["functionName"] or "(anonymous)"
    if cf.get("url"):
        s += " %s:%d" % (cf["url"], cf["lineNumber"] + 1)
    return s

weight = [1] * len(profile["samples"])
if time:
    at, t = [], profile["startTime"]
    for d in profile["timeDeltas"]:
        t += d
        at.append(t)
    order = sorted(range(len(at)), key=lambda i: at[i])
    ends = [at[j] for j in order[1:]] + [profile["endTime"]]
    for i, end in zip(order, ends):
        weight[i] = max(0, round(end - at[i]))

counts = collections.Counter()
for sample, w in zip(profile["samples"], weight):
    path, i = [], sample
    while i in nodes:
        if i in parent:  # not the root
            path.append(name(nodes[i]))
        i = parent.get(i)
    counts[";".join(reversed(path))] += w
for stack in sorted(counts):
    if counts[stack]:
        print(stack, counts[stack])
