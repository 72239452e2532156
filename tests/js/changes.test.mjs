import { test } from "node:test";
import assert from "node:assert/strict";
import { eventWords, startingAt } from "../../themes/default/static/changes.js";

test("a run page takes the events that start at it, and nothing malformed", () => {
  const file = {
    changes: [],
    events: [
      { function: "json::parse", run: "api/2026-11-13", before: 0.07, after: 0.14, functions: 3, confirmed: true },
      { function: "cache::evict", run: "api/2026-11-21", before: 0.07, after: 0.02, functions: 1, confirmed: true },
      { function: 42, run: "api/2026-11-13" },
      null,
    ],
  };
  assert.deepEqual(startingAt(file, "api/2026-11-13").map((c) => c.function), ["json::parse"]);
  assert.deepEqual(startingAt(file, "api/2026-11-14"), []);
  assert.deepEqual(startingAt(undefined, "x"), []);
  assert.deepEqual(startingAt({ events: "no" }, "x"), []);
});

test("a file written before events were gives each change point as an event of one function", () => {
  const old = { changes: [{ function: "f", run: "a", before: 0.1, after: 0.2, confirmed: false }, { function: "g", run: "b", before: 0.1, after: 0.2 }] };
  const here = startingAt(old, "a");
  assert.deepEqual(here.map((e) => [e.function, e.functions, e.reshaped]), [["f", 1, false]]);
  assert.equal(eventWords(here[0]), " ▲ 10.00% → 20.00% (not yet confirmed)");
});

test("an event says how many other functions shifted with it, and which way its own went", () => {
  assert.equal(eventWords({ before: 0.14, after: 0.07, functions: 1, confirmed: true }), " ▼ 14.00% → 7.00%");
  assert.equal(eventWords({ before: 0, after: 0.2, functions: 2, confirmed: true }), " ▲ 0.00% → 20.00%, with 1 other function");
  assert.equal(eventWords({ before: 0, after: 0.2, functions: 481, confirmed: false }), " ▲ 0.00% → 20.00%, with 480 other functions (not yet confirmed)");
});
