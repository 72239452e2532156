#!/usr/bin/env python3
"""The expected graphs of a JFR recording, from the JDK's own reader: `jfr print --json`.

Usage: fold.py RECORDING PREFIX CPU_PERIOD_NS NATIVE_PERIOD_NS [GRAPH ...]
Writes PREFIX.<graph>.folded for each GRAPH named (by default every graph flamesite makes of
a JDK 17 recording: all but cpu_time, which JDK 25 records): frames root
first, each named `class.method` with the class name as the recording stores it (slashes),
values summed per stack, lines sorted. The periods are those of the settings the recording
was made with (make.sh passes them), so that flamesite's reading of the recording's
jdk.ActiveSetting events is checked too.
"""
import json
import re
import subprocess
import sys
from collections import defaultdict

# graph: (event type, what each event is worth)
GRAPHS = {
    "cpu": ("jdk.ExecutionSample", "period:cpu"),
    "cpu_time": ("jdk.CPUTimeSample", "span:samplingPeriod"),
    "native": ("jdk.NativeMethodSample", "period:native"),
    "alloc_in_new_tlab": ("jdk.ObjectAllocationInNewTLAB", "tlabSize"),
    "alloc_in_new_tlab_objects": ("jdk.ObjectAllocationInNewTLAB", "one"),
    "alloc_outside_tlab": ("jdk.ObjectAllocationOutsideTLAB", "allocationSize"),
    "alloc_outside_tlab_objects": ("jdk.ObjectAllocationOutsideTLAB", "one"),
    "alloc_sample": ("jdk.ObjectAllocationSample", "weight"),
    "alloc_sample_objects": ("jdk.ObjectAllocationSample", "one"),
    "lock": ("jdk.JavaMonitorEnter", "duration"),
    "lock_contentions": ("jdk.JavaMonitorEnter", "one"),
    "park": ("jdk.ThreadPark", "duration"),
    "park_contentions": ("jdk.ThreadPark", "one"),
}


def nanos(iso):
    """An ISO-8601 duration as `jfr print --json` writes it (PT0.415446396S, PT1M2.5S)."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?", iso)
    if not m:
        raise SystemExit(f"unexpected duration {iso!r}")
    h, mi, s, frac = m.groups()
    total = (int(h or 0) * 3600 + int(mi or 0) * 60 + int(s or 0)) * 10**9
    return total + int((frac or "").ljust(9, "0"))


def frame(f):
    method = f["method"]
    cls = method["type"]["name"] if method.get("type") else ""
    return f"{cls}.{method['name']}" if cls else method["name"]


def main():
    recording, prefix, cpu, native = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    only = sys.argv[5:] or [g for g in GRAPHS if g != "cpu_time"]
    periods = {"cpu": cpu, "native": native}
    for graph in only:
        event, worth = GRAPHS[graph]
        out = subprocess.run(
            ["jfr", "print", "--json", "--stack-depth", "1024", "--events", event, recording],
            check=True, capture_output=True, text=True,
        ).stdout
        sums = defaultdict(int)
        for e in json.loads(out)["recording"]["events"]:
            v = e["values"]
            trace = v.get("stackTrace")
            if trace and trace["truncated"]:
                raise SystemExit(f"{event}: a truncated stack; record with a larger stackdepth")
            # No stack, or one without frames (an allocation by the VM itself): one frame.
            stack = [frame(f) for f in reversed(trace["frames"])] if trace else []
            stack = stack or ["[unknown]"]
            if worth.startswith("period:"):
                value = periods[worth[7:]]
            elif worth == "duration":
                value = nanos(v["duration"])
            elif worth == "one":
                value = 1
            elif worth.startswith("span:"):
                value = nanos(v[worth[5:]])
            else:
                value = int(v[worth])
            sums[";".join(stack)] += value
        lines = sorted(f"{s} {n}\n" for s, n in sums.items() if n > 0)
        if not lines:
            raise SystemExit(f"{event}: no events; the fixture should have some")
        with open(f"{prefix}.{graph}.folded", "w", encoding="utf-8") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
