// The pure parts of comparisons in the page: colours, the words of a frame, and the values a
// search matched before and after. Expected values are reckoned by hand here.
import test from "node:test";
import assert from "node:assert/strict";
import { diffRgb, frameDelta, formatPoints, formatRelative, describeDiffFrame, legendText, matchedBeforeAfter, sideLabel, sidesOf } from "../../themes/default/static/diff.js";

test("diff colours go from grey through to red for growth and blue for shrinkage, as the build's previews", () => {
  // Grey (224,224,224) to red (220,38,30) and blue (38,96,220), rounded per channel.
  assert.equal(diffRgb(0, 1), 0xe0e0e0);
  assert.equal(diffRgb(1, 1), 0xdc261e);
  assert.equal(diffRgb(-5, 1), 0x2660dc, "beyond the scale is full colour");
  assert.equal(diffRgb(0.5, 1), (222 << 16) | (131 << 8) | 127);
  assert.equal(diffRgb(-0.25, 1), (178 << 16) | (192 << 8) | 223);
  assert.equal(diffRgb(3, 0), 0xe0e0e0, "no scale: no colour");
});

test("a change is measured in points of each run's own total, or in value", () => {
  // 10 of 100 before, 30 of 200 after: 10% to 15%.
  assert.ok(Math.abs(frameDelta(10, 30, 100, 200, "share") - 5) < 1e-9);
  assert.equal(frameDelta(10, 30, 100, 200, "abs"), 20);
  assert.equal(formatPoints(5), "+5.00 pp");
  assert.equal(formatPoints(-0.404), "−0.40 pp");
  assert.equal(formatPoints(-0.001), "+0.00 pp");
  assert.equal(formatRelative(10, 30), "+200%");
  assert.equal(formatRelative(40, 30), "−25%");
  assert.equal(formatRelative(0, 3), "new");
});

test("a frame's words say before, after, the change and that a path is gone", () => {
  const facts = describeDiffFrame({ beforeTotal: 10, afterTotal: 0, beforeSelf: 4, afterSelf: 0 }, { tb: 100, ta: 200, unit: "samples" });
  assert.equal(facts[0], "⊖ only in the earlier run");
  assert.equal(facts[1], "total 10 samples → 0 samples (10.00% → 0.00%)");
  assert.equal(facts[2], "change −10 samples, −10.00 pp of the total, −100%");
  assert.equal(facts[3], "self 4 samples → 0 samples (−4.00 pp)");
});

test("the words of a graph's two sides come from its manifest: runs, a CPI graph, two counts", () => {
  const gone = { beforeTotal: 10, afterTotal: 0, beforeSelf: 4, afterSelf: 0 };
  const added = { beforeTotal: 0, afterTotal: 3, beforeSelf: 0, afterSelf: 3 };
  const cpi = sidesOf({ sides: { before: "instructions", after: "cycles" } });
  assert.equal(describeDiffFrame(gone, { tb: 100, ta: 200, unit: "samples", sides: cpi })[0], "⊖ only in instructions");
  assert.equal(describeDiffFrame(added, { tb: 100, ta: 200, unit: "samples", sides: cpi })[0], "⊕ only in cycles");
  // A manifest written before `sides` (or with a broken one) is a comparison of two runs.
  assert.deepEqual(sidesOf({}), { before: "the earlier run", after: "this run" });
  assert.deepEqual(sidesOf({ sides: { before: 3 } }), { before: "the earlier run", after: "this run" });
  assert.equal(describeDiffFrame(added, { tb: 100, ta: 200, unit: "samples" })[0], "⊕ only in this run");
  assert.equal(sideLabel("the earlier run"), "Earlier run");
  assert.equal(sideLabel("this run"), "This run");
  assert.equal(sideLabel("cycles"), "Cycles");
  const legend = legendText({ scale_points: 2, scale_value: 5, sides: { before: "the first count", after: "the second count" } }, "share", "samples");
  assert.equal(legend, "Red grew, blue shrank from the first count to the second count: each frame by the change of its share of the total; full colour at 2.00 pp of the total, grey unchanged. ⊖ striped: only in the first count.");
});

test("matched values count a frame inside another matched frame once", () => {
  // Frames by id: 1 [1..4] f (5 before, 7 after), 3 [3..3] g inside it (2, 2), 6 [6..6] g (1, 0).
  const bucket = {
    diff: true, nameLo: 1, nameHi: 3, start: [0, 1, 3],
    id: [1, 3, 6], last: [4, 3, 6], before: [5, 2, 1], after: [7, 2, 0],
  };
  assert.deepEqual(matchedBeforeAfter([bucket], [1]), { before: 5, after: 7 });
  assert.deepEqual(matchedBeforeAfter([bucket], [2]), { before: 3, after: 2 });
  assert.deepEqual(matchedBeforeAfter([bucket], [1, 2]), { before: 6, after: 7 }, "g inside f once, the other g on its own");
});
