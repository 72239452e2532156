import { test } from "node:test";
import assert from "node:assert/strict";
import { matchedFirst, sortedIds } from "../../themes/default/static/table.js";

const names = { names: ["all", "b", "a", "c"], self: [0, 5, 1, 3], total: [9, 5, 9, 3] };

test("the table's order, and the order reversed by a second click on the sorted column", () => {
  assert.deepEqual([...sortedIds(names, "self")], [1, 3, 2]);
  assert.deepEqual([...sortedIds(names, "self", null, true)], [2, 3, 1]);
  assert.deepEqual([...sortedIds(names, "total")], [2, 1, 3]);
  assert.deepEqual([...sortedIds(names, "total", null, true)], [3, 1, 2]);
  assert.deepEqual([...sortedIds(names, "name")], [2, 1, 3]);
  assert.deepEqual([...sortedIds(names, "name", null, true)], [3, 1, 2]);
});

test("a search lists the functions it matched first, each part in the table's order", () => {
  const order = sortedIds(names, "self"); // b (5), c (3), a (1)
  assert.deepEqual([...matchedFirst(order, null)], [1, 3, 2]);
  assert.deepEqual([...matchedFirst(order, Uint8Array.from([0, 0, 1, 0]))], [2, 1, 3]);
  assert.deepEqual([...matchedFirst(order, Uint8Array.from([0, 0, 1, 1]))], [3, 2, 1]);
  assert.deepEqual([...matchedFirst(order, Uint8Array.from([0, 0, 0, 0]))], [1, 3, 2]);
});

test("a comparison's table sorts by the change of the share, largest growth first", () => {
  const diff = { names: ["all", "b", "a", "c"], self: [0, 5, 1, 3], selfBefore: [0, 5, 4, 1], total: [9, 5, 9, 3], totalBefore: [10, 5, 10, 1] };
  // Shares after of 9, before of 10: b 55.6% from 50%, a 11.1% from 40%, c 33.3% from 10%.
  assert.deepEqual([...sortedIds(diff, "self_change", { tb: 10, ta: 9 })], [3, 1, 2]);
});
