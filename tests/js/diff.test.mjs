// The pure parts of comparisons in the page: colours, the words of a frame, and the values a
// search matched before and after. Expected values are reckoned by hand here, or counted from
// the stacks of the two runs.
import test from "node:test";
import assert from "node:assert/strict";
import { decodeSearch } from "../../themes/default/static/fetch.js";
import { diffSearchBytes, diffTable, rng, topmostFrames } from "./helpers.mjs";
import { bothLabel, diffRgb, frameDelta, formatPoints, formatRelative, describeDiffFrame, legendText, matchedDiff, sideLabel, sidesOf } from "../../themes/default/static/diff.js";

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

test("the two sides' words: a CPI graph's colours compare shares of two measures, and no widths button is a bare Both", () => {
  const cpi = { scale_points: 2, scale_value: 5, sides: { before: "instructions", after: "cycles" } };
  assert.equal(
    legendText(cpi, "share", "cycles"),
    "Red where a frame's share of cycles is larger than of instructions (more cycles per instruction than the whole graph: stalls), blue where smaller; full colour at 2.00 pp of the total, grey equal. ⊖ striped: only in instructions.",
  );
  assert.ok(!legendText(cpi, "share", "cycles").includes("grew"), "instructions do not grow into cycles");
  assert.equal(bothLabel(cpi), "Both counts");
  assert.equal(bothLabel(undefined), "Both runs", "a comparison of runs (graphs written before sides)");
  assert.equal(bothLabel({ sides: { before: "the first profile", after: "the second profile" } }), "Both profiles");
  assert.equal(bothLabel({ sides: { before: "the first count", after: "the second count" } }), "Both counts");
  assert.equal(sideLabel(sidesOf(undefined).before), "Earlier run");
});

test("matched values count a frame inside another matched frame once, however deep", () => {
  // Frames by id: 1 [1..4] f (5 before, 7 after), 3 [3..3] g inside it (2, 2), 6 [6..6] g (1, 0),
  // and 70 [70..70] g, past the first words of the id bitmap.
  const bucket = {
    diff: true, nameLo: 1, nameHi: 3, k: 4, start: [0, 1, 4],
    lo: [10, 14, 40, 90], width: [9, 2, 5, 1], id: [1, 3, 6, 70], span: [3, 0, 0, 0], before: [5, 2, 1, 4], after: [7, 2, 0, 8],
  };
  const got = (ids, lo, hi, zoomed) => matchedDiff([bucket], ids, 100, 100, lo, hi, zoomed);
  const all = (before, after, width) => ({ before, after, value: width, inRange: width, beforeIn: before, afterIn: after });
  assert.deepEqual(got([1]), all(5, 7, 9));
  assert.deepEqual(got([2]), all(7, 10, 8));
  assert.deepEqual(got([1, 2]), all(10, 15, 15), "g inside f once, the other gs on their own");
  assert.deepEqual(got([1, 2], 12, 42), { before: 10, after: 15, value: 15, inRange: 7 + 2, beforeIn: 0, afterIn: 0 }, "clipped to a range: 12..19 of f, 40..42 of g");
  assert.deepEqual(got([]), all(0, 0, 0));
  // Zoomed to f (10..19): g inside it is its part; zoomed to g inside f (14..16, 2 and 2),
  // f holds the zoom, so all of it is matched; zoomed to the g at 40 (1 and 0), f is beside it.
  assert.deepEqual(got([2], 10, 19, { before: 5, after: 7 }), { before: 7, after: 10, value: 8, inRange: 2, beforeIn: 2, afterIn: 2 });
  assert.deepEqual(got([1], 14, 16, { before: 2, after: 2 }), { before: 5, after: 7, value: 9, inRange: 2, beforeIn: 2, afterIn: 2 });
  assert.deepEqual(got([1, 2], 40, 45, { before: 1, after: 0 }), { before: 10, after: 15, value: 15, inRange: 5, beforeIn: 1, afterIn: 0 });
});

test("a frame too narrow to have a width is still counted once, by its id", () => {
  // Runs of 2^32 samples: a frame of 1 sample has no width (floor(2^30 / 2^32) = 0). Frame 2
  // (h, one sample) is the last descendant of frame 1 (f) and ends where f ends: an extent
  // would not say it is inside f, its id does.
  const T = 2 ** 32;
  const bucket = {
    diff: true, nameLo: 1, nameHi: 3, k: 2, start: [0, 1, 2],
    lo: [0, 2 ** 29], width: null, id: [1, 2], span: [1, 0], before: [T / 4, 1], after: [T / 4, 1],
  };
  assert.deepEqual(matchedDiff([bucket], [1, 2], T, T), { before: T / 4, after: T / 4, value: 2 ** 29, inRange: 2 ** 29, beforeIn: T / 4, afterIn: T / 4 });
  assert.deepEqual(matchedDiff([bucket], [2], T, T), { before: 1, after: 1, value: 0, inRange: 0, beforeIn: 1, afterIn: 1 });
});

test("matchedDiff of decoded search files equals the counts of the stacks that contain a match, before and after", () => {
  // Two runs of random stacks, deep enough that frames have hundreds of descendants and values
  // past a byte (the big entries of version 5's byte columns), over enough frames that the id
  // bitmap has many words.
  const r = rng(23);
  const fns = ["main", "run", "parse", "parse_expr", "eval", "malloc", "free", "std::vector<int>::push_back", "rec", "λ::閉包"];
  const run = (n) => {
    const stacks = [];
    for (let i = 0; i < n; i++) {
      const frames = ["main"];
      const depth = 1 + Math.floor(r() * 12);
      for (let d = 0; d < depth; d++) frames.push(fns[Math.floor(r() * fns.length)]);
      stacks.push([frames, 1 + Math.floor(r() * (r() < 0.1 ? 5000 : 60))]);
    }
    return stacks;
  };
  const before = run(500);
  const after = [...run(400), [["main", "rec", "rec", "rec", "added"], 300]];
  const d = diffTable(before, after);
  const per = topmostFrames(d);
  assert.ok(d.frames.length > 2000, `${d.frames.length} frames`);
  const spans = d.frames.map((f) => f.last - f.id);
  assert.ok(spans.some((v) => v >= 255) && d.frames.some((f) => f.before >= 255 && f.after >= 255), "big entries in every byte column");
  const stackCount = (stacks, re) => stacks.filter(([f]) => f.some((x) => re.test(x))).reduce((s, [, c]) => s + c, 0);
  // The union of the extents of every frame of a matched name (nested ones too), clipped.
  const extent = (ids, lo = -Infinity, hi = Infinity) => {
    const want = new Set(ids);
    const iv = d.frames.filter((f) => want.has(f.name)).map((f) => [Math.max(lo, f.lo), Math.min(hi, f.lo + f.width)]).filter(([a, b]) => b > a);
    iv.sort((x, y) => x[0] - y[0]);
    let sum = 0;
    let end = -Infinity;
    for (const [a, b] of iv) {
      if (b <= end) continue;
      sum += b - Math.max(a, end);
      end = b;
    }
    return sum;
  };
  const zoom = d.frames.find((f) => d.names[f.name] === "run" && f.depth === 2 && f.last - f.id > 100);
  // The stacks that pass through the zoomed frame: main;run;… (it is the child run of main).
  const through = (stacks) => stacks.filter(([f]) => f[0] === "main" && f[1] === "run");
  for (const [version, values] of [[5, "u32"], [5, "f64"], [4, "u32"]]) {
    const buckets = [];
    for (let lo = 0; lo < d.names.length; lo += 3) buckets.push(decodeSearch(diffSearchBytes(per, lo, Math.min(d.names.length, lo + 3), { version, values })));
    for (const q of ["parse", "^rec$", "malloc|free|added", "push_back", "e", "閉包", "^main$"]) {
      const re = new RegExp(q);
      const ids = d.names.flatMap((n, i) => (i > 0 && re.test(n) ? [i] : []));
      const got = matchedDiff(buckets, ids, d.tb, d.ta, zoom.lo, zoom.lo + zoom.width, { before: zoom.before, after: zoom.after });
      const what = `version ${version}, ${values}, /${q}/`;
      assert.equal(got.before, stackCount(before, re), `${what}: before`);
      assert.equal(got.after, stackCount(after, re), `${what}: after`);
      assert.equal(got.value, extent(ids), `${what}: the union's width`);
      assert.equal(got.inRange, extent(ids, zoom.lo, zoom.lo + zoom.width), `${what}: in the zoom`);
      // In the zoomed frame: the stacks through it with a match anywhere on them (a matched
      // caller of the zoomed frame matches all of it).
      assert.equal(got.beforeIn, stackCount(through(before), re), `${what}: before, in the zoomed frame`);
      assert.equal(got.afterIn, stackCount(through(after), re), `${what}: after, in the zoomed frame`);
    }
  }
});

test("the legend in values gives the full-colour change in the unit, without a sign", () => {
  const sides = { before: "the first count", after: "the second count" };
  assert.equal(
    legendText({ scale_points: 2, scale_value: 5, sides }, "abs", "samples"),
    "Red grew, blue shrank from the first count to the second count: each frame by the change of its value; full colour at 5 samples, grey unchanged. ⊖ striped: only in the first count.",
  );
  assert.match(legendText({ scale_points: 2, scale_value: 2500000, sides }, "abs", "nanoseconds"), /; full colour at 2\.50 ms, grey unchanged\./);
});
