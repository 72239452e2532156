"""Complete events of a trace for stackcollapse-chrome-tracing.py: each B/E pair (an E closes
its thread's latest open B) becomes an X event, and the events are ordered by start, the
longer first at equal starts, so that the tool (which sorts by start alone, keeping file
order on ties) nests an event in the one that holds it."""
import json, sys
d = json.load(sys.stdin)
events = d["traceEvents"] if isinstance(d, dict) else d
out, open_ = [], {}
for seq, e in enumerate(events):
    e = dict(e, seq=seq)
    ph, key = e.get("ph"), (e.get("pid"), e.get("tid"))
    if e.get("name") in ("Profile", "ProfileChunk"):
        continue
    if ph == "X" and "dur" in e and "ts" in e:
        out.append(e)
    elif ph == "B" and "ts" in e:
        open_.setdefault(key, []).append(e)
    elif ph == "E" and "ts" in e and open_.get(key):
        b = open_[key].pop()
        out.append(dict(b, ph="X", dur=e["ts"] - b["ts"]))
# A B never ended ends at its thread's last timestamp (of its duration events), as flamesite
# reads it (docs/FORMAT.md); chrome://tracing draws such an event to the end of the trace.
last = {}
for e in events:
    if e.get("ph") in ("X", "B", "E") and "ts" in e and e.get("name") not in ("Profile", "ProfileChunk"):
        key = (e.get("pid"), e.get("tid"))
        end = float(e["ts"]) + (float(e["dur"]) if e.get("ph") == "X" and "dur" in e else 0.0)
        last[key] = max(last.get(key, end), end)
for key, stack in open_.items():
    for b in stack:
        out.append(dict(b, ph="X", dur=last[key] - float(b["ts"])))
out.sort(key=lambda e: (float(e["ts"]), -float(e["dur"]), e["seq"]))
json.dump({"traceEvents": out}, sys.stdout)
