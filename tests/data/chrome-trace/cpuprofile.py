"""The .cpuprofile files of the CPU samples in a Chrome trace, as DevTools puts them together:
each profile (a `Profile` event and its `ProfileChunk` events, by pid and id) is the nodes,
samples and time deltas of its chunks in the order they come, its `startTime` the Profile
event's and its `endTime`, when no chunk gives one, the time of its last sample.

Usage: cpuprofile.py PREFIX < TRACE.json   writes PREFIX.<pid>.cpuprofile for each profile.
"""
import json, sys
trace = json.load(sys.stdin)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
profiles = {}
for e in events:
    if e.get("name") not in ("Profile", "ProfileChunk"):
        continue
    data = (e.get("args") or {}).get("data") or {}
    p = profiles.setdefault((e.get("pid"), e.get("id")), {"nodes": [], "samples": [], "timeDeltas": [], "startTime": None, "endTime": None})
    if e["name"] == "Profile":
        p["startTime"] = data.get("startTime", p["startTime"])
    else:
        chunk = data.get("cpuProfile") or {}
        p["nodes"] += chunk.get("nodes", [])
        p["samples"] += chunk.get("samples", [])
        p["timeDeltas"] += data.get("timeDeltas", [])
    if "endTime" in data:
        p["endTime"] = data["endTime"]
for (pid, _), p in sorted(profiles.items(), key=lambda kv: str(kv[0])):
    if not p["nodes"]:
        continue
    p["startTime"] = p["startTime"] or 0
    if p["endTime"] is None:
        p["endTime"] = p["startTime"] + sum(p["timeDeltas"])
    with open(f"{sys.argv[1]}.{pid}.cpuprofile", "w") as f:
        json.dump(p, f)
