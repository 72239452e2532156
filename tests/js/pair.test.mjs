// The pure parts of the series page's table of two runs (pair.js): the pair in the link, the
// join of two runs' function tables by name, and its orders. Expected values are worked out
// here by hand from the tables given.

import { test } from "node:test";
import assert from "node:assert/strict";
import { joinFunctions, pairFromHash, sharedGraph, sortRows, withPair } from "../../themes/default/static/pair.js";

test("the pair of runs is read from the link and written into it, other keys kept", () => {
  assert.deepEqual(pairFromHash("#pair=api/2026-11-13,api/2026-11-20"), ["api/2026-11-13", "api/2026-11-20"]);
  assert.deepEqual(pairFromHash("#h=malloc&pair=a,b"), ["a", "b"]);
  assert.deepEqual(pairFromHash("#pair=a%2Cb"), ["a", "b"], "an escaped comma");
  for (const bad of ["", "#", "#pair=", "#pair=a", "#pair=a,", "#pair=,b", "#pair=a,b,c", "#pair=%E0%A4%A", "#repair=a,b"]) assert.equal(pairFromHash(bad), null, bad);
  assert.equal(withPair("", "a/1", "a/2"), "#pair=a/1%2Ca/2");
  assert.equal(withPair("#h=malloc&pair=x,y", "a", "b"), "#h=malloc&pair=a%2Cb");
  assert.deepEqual(pairFromHash(withPair("#h=free", "p/q", "r")), ["p/q", "r"]);
});

test("two runs' tables join by name: a function of one run only has 0 in the other, shares of each run's own total", () => {
  // Run A: total 200; run B: total 400. The root's label (id 0) is not a function.
  const a = { names: ["all", "main", "malloc", "gone"], self: [0, 20, 60, 40], total: [200, 200, 100, 40], grand: 200 };
  const b = { names: ["all", "main", "new", "malloc"], self: [0, 40, 100, 160], total: [400, 400, 100, 200], grand: 400 };
  const rows = new Map(joinFunctions(a, b).map((r) => [r.name, r]));
  assert.deepEqual([...rows.keys()].sort(), ["gone", "main", "malloc", "new"]);
  // malloc: self 30% -> 40% (+10 pp), total 50% -> 50% (0 pp).
  assert.deepEqual({ ...rows.get("malloc") }, { name: "malloc", selfA: 60, selfB: 160, totalA: 100, totalB: 200, dSelf: 10, dTotal: 0 });
  // gone: 20% -> 0; new: 0 -> 25%.
  assert.deepEqual([rows.get("gone").dSelf, rows.get("gone").selfB, rows.get("new").dSelf, rows.get("new").selfA], [-20, 0, 25, 0]);
  // An empty run (total 0) has shares of 0, not NaN.
  const empty = joinFunctions({ names: ["all", "f"], self: [0, 0], total: [0, 0], grand: 0 }, a);
  assert.ok(empty.every((r) => Number.isFinite(r.dSelf) && Number.isFinite(r.dTotal)));
});

test("rows sort by the size of a change, growth and shrinkage alike, ties and names in order", () => {
  const rows = [
    { name: "b", dSelf: 1, dTotal: -9 },
    { name: "a", dSelf: -3, dTotal: 2 },
    { name: "c", dSelf: 3, dTotal: 0 },
    { name: "d", dSelf: 0, dTotal: 9 },
  ];
  assert.deepEqual(sortRows(rows, "self").map((r) => r.name), ["a", "c", "b", "d"]);
  assert.deepEqual(sortRows(rows, "total").map((r) => r.name), ["b", "d", "a", "c"]);
  assert.deepEqual(sortRows(rows, "name").map((r) => r.name), ["a", "b", "c", "d"]);
  assert.deepEqual(rows.map((r) => r.name), ["b", "a", "c", "d"], "the rows given are left as they are");
});

test("the graph two runs share is the later run's first one the earlier has, by name and unit", () => {
  const g = (name, unit) => ({ name, unit, data: `${name}/` });
  assert.deepEqual(sharedGraph({ graphs: [g("alloc", "bytes"), g("cpu", "ns")] }, { graphs: [g("cpu", "ns"), g("alloc", "bytes")] }), [g("cpu", "ns"), g("cpu", "ns")]);
  assert.equal(sharedGraph({ graphs: [g("samples", "samples")] }, { graphs: [g("samples", "count")] }), null, "same name, other unit");
  assert.equal(sharedGraph({}, { graphs: [g("cpu", "ns")] }), null);
});
