// The sandwich's lazy trees (sandwich.js expandNode), one node at a time, as the sandwich view
// opens them: each expansion groups the node's calls by the name of the next frame along, and
// every expansion starts its groups from nothing, whatever the one before left in them. (In a
// file of its own: a group that kept its count would send sandwich.test.mjs's whole-tree
// layouts into an endless loop, where no test could report.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { expandNode, mergeSandwich } from "../../themes/default/static/sandwich.js";
import { decodeChunk } from "../../themes/default/static/fetch.js";
import { buildGraph, parseFolded } from "./helpers.mjs";

const g = buildGraph(parseFolded("main;a;F;x;p 1\nmain;a;F;y 2\nmain;b;F;x;q 4\nother;F;y;p 8\n"), { rootWidth: 100 });
const names = g.names.names;
const chunks = g.manifest.chunks.map((c) => decodeChunk(g.files.get(c.file)));

/** Node `v`'s children once it is expanded: [name, total, self] each, and their node ids. */
function kids(t, v) {
  expandNode(t, v, names);
  const ids = [];
  for (let c = t.kid[v]; c < t.kid[v] + t.kids[v]; c++) ids.push(c);
  return { list: ids.map((c) => [names[t.name[c]], t.total[c], t.self[c]]), ids };
}

test("callees opened node by node: each node's children are its calls' next frames, summed by name", () => {
  const { callees } = mergeSandwich(chunks, names.indexOf("F"), g.manifest.frames);
  const root = kids(callees, 0);
  assert.deepEqual(root.list, [["x", 5, 0], ["y", 10, 2]]);
  const [x, y] = root.ids;
  const ofX = kids(callees, x);
  assert.deepEqual(ofX.list, [["p", 1, 1], ["q", 4, 4]], "x's children: its two calls' frames, in groups used before");
  const ofY = kids(callees, y);
  assert.deepEqual(ofY.list, [["p", 8, 8]]);
  for (const leaf of [...ofX.ids, ...ofY.ids]) assert.deepEqual(kids(callees, leaf).list, [], `${names[callees.name[leaf]]} calls nothing`);
});

test("callers opened node by node: each node's children are the callers one frame up, where its stacks begin its self", () => {
  const { callers } = mergeSandwich(chunks, names.indexOf("F"), g.manifest.frames);
  const root = kids(callers, 0);
  assert.deepEqual(root.list, [["a", 3, 0], ["b", 4, 0], ["other", 8, 0]]);
  const [a, b, other] = root.ids;
  assert.deepEqual(kids(callers, a).list, [["main", 3, 0]]);
  assert.deepEqual(kids(callers, b).list, [["main", 4, 0]]);
  assert.deepEqual(kids(callers, other).list, []);
  assert.equal(callers.self[other], 8, "other's stacks begin at it");
  const mains = [callers.kid[a], callers.kid[b]];
  for (const m of mains) assert.deepEqual(kids(callers, m).list, []);
  assert.deepEqual(mains.map((m) => callers.self[m]), [3, 4]);
});
