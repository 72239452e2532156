// Boundary cases of the page's pure functions, each at the exact edge where a `<` written as
// `<=` (or the reverse) would change what a user sees (issue 30: these mutants survived).
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatPercent } from "../../themes/default/static/format.js";
import { formatRelative, matchedDiff } from "../../themes/default/static/diff.js";
import { MIN_PX, chunksAt, depthAtY, frameAt, neededChunks, rowsInRange } from "../../themes/default/static/layout.js";
import { bucketsFor } from "../../themes/default/static/search.js";
import { isPacked } from "../../themes/default/static/unpack.js";

test("formatPercent: exactly 0.01% is shown as such, 0 as 0.00%, a whole of 0 or less as 0%", () => {
  assert.equal(formatPercent(1, 10000), "0.01%");
  assert.equal(formatPercent(0.999, 10000), "<0.01%");
  assert.equal(formatPercent(0, 10000), "0.00%");
  assert.equal(formatPercent(5, 0), "0%");
  assert.equal(formatPercent(5, -1), "0%");
});

test("formatRelative: no change from nothing is ±0%, not new; 10% is rounded to a whole, 9.9% is not", () => {
  assert.equal(formatRelative(0, 0), "±0%");
  assert.equal(formatRelative(0, 1), "new");
  assert.equal(formatRelative(10, 11), "+10%");
  assert.equal(formatRelative(1000, 1099), "+9.9%");
  assert.equal(formatRelative(10, 9), "−10%");
  assert.equal(formatRelative(7, 7), "±0.0%");
});

// A view 1000 px wide over values [0, 1000): a pixel is worth 1, half a pixel 0.5.
const view = { x0: 0, x1: 1000, width: 1000, height: 400, rowH: 20, depthCount: 10, scrollTop: 0, icicle: true };
const entry = (over) => ({ file: "c/x.bin", class: 1, depth: [0, 2], offset: [0, 1000], max_total: 10, ...over });

test("neededChunks: a chunk whose widest frame is exactly half a pixel is fetched; one touching the view's edge is not", () => {
  assert.equal(MIN_PX, 0.5);
  const m = (c) => ({ chunks: [entry(c)] });
  assert.equal(neededChunks(m({ max_total: 0.5 }), view).length, 1, "exactly MIN_PX wide: drawn, so fetched");
  assert.equal(neededChunks(m({ max_total: 0.49 }), view).length, 0);
  assert.equal(neededChunks(m({ offset: [1000, 2000] }), { ...view }).length, 0, "starts where the view ends");
  assert.equal(neededChunks(m({ offset: [-50, 0] }), view).length, 0, "ends where the view starts");
  assert.equal(neededChunks(m({ offset: [999, 2000] }), view).length, 1);
  assert.equal(neededChunks(m({ depth: [20, 30] }), view).length, 0, "below the visible rows");
});

test("chunksAt: a chunk's ranges are half-open: its first value and depth are in it, its ends are not", () => {
  const m = { chunks: [entry({ depth: [2, 4], offset: [100, 200] })] };
  assert.equal(chunksAt(m, 2, 100).length, 1);
  assert.equal(chunksAt(m, 3, 199).length, 1);
  assert.equal(chunksAt(m, 3, 200).length, 0, "value at the chunk's end");
  assert.equal(chunksAt(m, 4, 150).length, 0, "depth at the chunk's end");
  assert.equal(chunksAt(m, 1, 150).length, 0);
  assert.equal(chunksAt({ chunks: [entry({ depth: [2, 4], offset: [100, 200], max_total: 0 })] }, 2, 150).length, 0, "only empty frames");
});

test("bucketsFor: a name equal to a bucket's upper bound is in the next bucket, which is fetched too", () => {
  const search = [{ file: "s/0", names: [0, 3] }, { file: "s/1", names: [3, 6] }, { file: "s/2", names: [6, 9] }];
  assert.deepEqual(bucketsFor(search, [2, 3]).map((b) => b.file), ["s/0", "s/1"]);
  assert.deepEqual(bucketsFor(search, [0, 1, 2]).map((b) => b.file), ["s/0"]);
  assert.deepEqual(bucketsFor(search, [5, 6, 8]).map((b) => b.file), ["s/1", "s/2"]);
});

test("frameAt: a frame exactly minTotal wide is hit, one narrower is not; a frame's end is not in it", () => {
  // One chunk, depth 0 only: frames [0, 4) and [4, 10).
  const chunk = { depthLo: 0, depthHi: 1, rowStart: [0, 2], offset: [0, 4], total: [4, 6], n: 2 };
  assert.equal(frameAt([chunk], 0, 1, 4)?.row, 0, "total equal to minTotal");
  assert.equal(frameAt([chunk], 0, 1, 5), null, "narrower than minTotal");
  assert.equal(frameAt([chunk], 0, 4)?.row, 1, "a frame's start is in it");
  assert.equal(frameAt([chunk], 0, 10), null, "the last frame's end is not");
  assert.equal(frameAt([chunk], 0, 3.999)?.row, 0);
});

test("isPacked: a file is a gzip member only when both bytes of the magic are there (docs/FORMAT.md, Packed files)", () => {
  assert.equal(isPacked(new Uint8Array([0x1f, 0x8b, 8, 0])), true);
  assert.equal(isPacked(new Uint8Array([0x1f, 0x00, 8, 0])), false);
  assert.equal(isPacked(new Uint8Array([0x1f])), false);
  assert.equal(isPacked(new TextEncoder().encode("FSCH")), false);
});

test("depthAtY: the pixel row just above a short graph's top row is empty space, not a row past the last", () => {
  // 3 rows of 10 px in a content area 50 px tall: flame rows 0..2 at y [40, 50), [30, 40),
  // [20, 30); icicle rows at [0, 10), [10, 20), [20, 30).
  const short = { x0: 0, x1: 100, width: 100, height: 50, rowH: 10, depthCount: 3, scrollTop: 0, minHeight: 50 };
  const flame = { ...short, icicle: false };
  assert.equal(depthAtY(flame, 20), 2);
  assert.equal(depthAtY(flame, 19.9), -1, "row 3's place: above the graph");
  assert.equal(depthAtY(flame, 10), -1);
  const icicle = { ...short, icicle: true };
  assert.equal(depthAtY(icicle, 29.9), 2);
  assert.equal(depthAtY(icicle, 30), -1, "row 3's place: below the graph");
});

test("matchedDiff: frame id 0, bit 0 of the first word of the id bitmap, is counted", () => {
  // One frame, the root (id 0, 100 wide, 50 before and 70 after), matched by name 1. (Here, not
  // in diff.test.mjs: a bitmap loop that stopped at 1 instead of 0 would hang that file.)
  const bucket = { diff: true, nameLo: 1, nameHi: 2, k: 1, start: [0, 1], lo: [0], width: [100], id: [0], span: [5], before: [50], after: [70] };
  assert.deepEqual(matchedDiff([bucket], [1], 100, 100), { before: 50, after: 70, value: 100, inRange: 100, beforeIn: 50, afterIn: 70 });
});

// Last in this file, on purpose: a binary search whose `lo < hi` became `lo <= hi` returns one
// row past the depth here, but hangs on other ranges, and a test that hangs keeps its whole
// file from reporting.
test("rowsInRange: a range past the last frame of a chunk's last depth ends at that depth's last row", () => {
  // One chunk, depth 0 only: frames [0, 4) and [4, 10).
  const chunk = { depthLo: 0, depthHi: 1, rowStart: [0, 2], offset: [0, 4], total: [4, 6], n: 2 };
  assert.deepEqual(rowsInRange(chunk, 0, 0, 10), [0, 2]);
  assert.deepEqual(rowsInRange(chunk, 0, 4, 20), [1, 2], "from the second frame's start on");
});
