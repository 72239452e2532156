import { test } from "node:test";
import assert from "node:assert/strict";
import { sortedIds } from "../../themes/default/static/table.js";

const names = { names: ["all", "b", "a", "c"], self: [0, 5, 1, 3], total: [9, 5, 9, 3] };

test("the table's order, and the order reversed by a second click on the sorted column", () => {
  assert.deepEqual([...sortedIds(names, "self")], [1, 3, 2]);
  assert.deepEqual([...sortedIds(names, "self", null, true)], [2, 3, 1]);
  assert.deepEqual([...sortedIds(names, "total")], [2, 1, 3]);
  assert.deepEqual([...sortedIds(names, "total", null, true)], [3, 1, 2]);
  assert.deepEqual([...sortedIds(names, "name")], [2, 1, 3]);
  assert.deepEqual([...sortedIds(names, "name", null, true)], [3, 1, 2]);
});
