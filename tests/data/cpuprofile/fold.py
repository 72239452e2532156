#!/usr/bin/env python3
"""Folded stacks of a V8 .cpuprofile, one sample counted once, written independently of
flamesite's Rust decoder: walk each sampled node up to the root through a parent map.
Frame name: functionName, or "(anonymous)" when empty, then " url:line" (line 1-based) when
the frame has a url; the "(root)" node is dropped. Output lines sorted, counts summed."""
import collections, json, sys

profile = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in profile["nodes"]}
parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

def name(node):
    cf = node["callFrame"]
    s = cf["functionName"] or "(anonymous)"
    if cf.get("url"):
        s += " %s:%d" % (cf["url"], cf["lineNumber"] + 1)
    return s

counts = collections.Counter()
for sample in profile["samples"]:
    path, i = [], sample
    while i in nodes:
        if i in parent:  # not the root
            path.append(name(nodes[i]))
        i = parent.get(i)
    counts[";".join(reversed(path))] += 1
for stack in sorted(counts):
    print(stack, counts[stack])
