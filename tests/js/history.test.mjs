import { test } from "node:test";
import assert from "node:assert/strict";
import { historyFragment, historyQuery, matchedWords, sumShares } from "../../themes/default/static/history.js";

test("the history's query goes into the series page's link and comes back out of it", () => {
  for (const q of ["malloc", "^std::vec::Vec<T>::push$", "a|b c", "100%", "ns/pkg.(*T).Method"]) {
    assert.equal(historyQuery(historyFragment(q)), q, q);
  }
  assert.equal(historyFragment(""), "");
  assert.equal(historyFragment("db::query"), "#h=db::query");
  assert.equal(historyQuery(""), null);
  assert.equal(historyQuery("#fs-history"), null, "an in-page anchor is not a query");
  assert.equal(historyQuery("#x=1&h=free"), "free");
  assert.equal(historyQuery("#ah=free"), null);
  assert.equal(historyQuery("#h=%E0%A4%A"), null, "a malformed escape is no query");
});

test("the status names the matched functions, the largest share in any run first", () => {
  const points = new Map([
    ["small", [[0, 0.01, 0.02]]],
    ["big", [[0, 0.1, 0.3], [1, 0.2, 0.5]]],
    ["mid", [[1, 0.05, 0.1]]],
  ]);
  assert.equal(matchedWords(["small", "big", "mid"], points), "3 functions matched: big, mid, small");
  assert.equal(matchedWords(["big"], points), "1 function matched: big");
  assert.equal(matchedWords(["small", "big", "mid"], points, 2), "3 functions matched: big, mid, and 1 more");
  // Ties by name, so every load says the same.
  assert.equal(matchedWords(["b", "a"], new Map()), "2 functions matched: a, b");
});

test("shares of several names add up per run, totals capped at the whole", () => {
  const points = new Map([["a", [[0, 0.5, 0.7]]], ["b", [[0, 0.25, 0.6], [1, 0.1, 0.1]]]]);
  const { self, total } = sumShares(2, ["a", "b"], points);
  assert.deepEqual([...self], [0.75, 0.1]);
  assert.deepEqual([...total], [1, 0.1]);
});
