import { test } from "node:test";
import assert from "node:assert/strict";
import { emptySearch, matchedText } from "../../themes/default/static/query.js";

test("the Matched line says which whole each percentage is of", () => {
  const m = { total: 163000, unit: "samples" };
  const s = { ...emptySearch(1), re: /x/, ids: new Array(104).fill(0), value: 20400, inZoom: 8473 };
  assert.equal(matchedText(s, m, null, null), "Matched 20.4 k samples (12.52% of total) in 104 functions");
  assert.equal(matchedText(s, m, { total: 10000 }, null), "Matched 20.4 k samples (12.52% of total; 84.73% of the zoomed frame) in 104 functions");
  assert.equal(matchedText({ ...s, ids: [3] }, { total: 100, unit: "count" }, null, null), "Matched 20.4 k (20400.00% of total) in 1 function");
  // Layouts whose matched value has no zoomed share leave it out.
  assert.equal(matchedText({ ...s, inZoom: null }, m, { total: 10000 }, null), "Matched 20.4 k samples (12.52% of total) in 104 functions");
  assert.equal(matchedText({ ...s, busy: true }, m, null, null), "Matching…");
  assert.equal(matchedText({ ...s, error: "bad" }, m, null, null), "Not a regular expression: bad");
  assert.equal(matchedText(emptySearch(), m, null, null), "");
});

test("on a comparison the Matched line says before and after, and in a zoomed frame its part of that frame", () => {
  const m = { total: 2 ** 31, unit: "samples" };
  const d = { tb: 10000, ta: 20000 };
  const s = { ...emptySearch(1), re: /x/, ids: [1, 2], diff: { before: 2000, after: 6000, zoomed: null } };
  assert.equal(matchedText(s, m, null, d), "Matched 2,000 samples → 6,000 samples (20.00% → 30.00%, +10.00 pp) in 2 functions");
  const zoomed = { before: 900, after: 1200, of: { before: 2000, after: 2000 } };
  assert.equal(
    matchedText({ ...s, diff: { ...s.diff, zoomed } }, m, { total: 5 }, d),
    "Matched 2,000 samples → 6,000 samples (20.00% → 30.00%, +10.00 pp; in the zoomed frame 900 samples → 1,200 samples, 45.00% → 60.00% of it) in 2 functions",
  );
  // The zoomed frame not known yet (a link's zoom before its chunk is in): the whole only.
  assert.equal(matchedText(s, m, { total: 5 }, d), "Matched 2,000 samples → 6,000 samples (20.00% → 30.00%, +10.00 pp) in 2 functions");
});
