import { test } from "node:test";
import assert from "node:assert/strict";
import { startingAt } from "../../themes/default/static/changes.js";

test("a run page takes the change points that start at it, and nothing malformed", () => {
  const list = [
    { function: "json::parse", run: "api/2026-11-13", before: 0.07, after: 0.14, confirmed: true },
    { function: "cache::evict", run: "api/2026-11-21", before: 0.07, after: 0.02, confirmed: true },
    { function: 42, run: "api/2026-11-13" },
    null,
  ];
  assert.deepEqual(startingAt(list, "api/2026-11-13").map((c) => c.function), ["json::parse"]);
  assert.deepEqual(startingAt(list, "api/2026-11-14"), []);
  assert.deepEqual(startingAt(undefined, "x"), []);
});
