// Elided frames: where frames too narrow to draw were left out, found from the chunk rows a
// view already has (layout.js elidedSpans), against the stacks themselves.

import { test } from "node:test";
import assert from "node:assert/strict";
import { elidedAt, elidedSpans, framesIn, neededChunks, pixelValue } from "../../themes/default/static/layout.js";
import { decodeChunk } from "../../themes/default/static/fetch.js";
import { buildGraph, parseFolded } from "./helpers.mjs";

// main [0, 1000): a 600 (self 600), 300 tiny children of 1 under main;many [600, 900), then
// b 80 and z 20 under main. Children by name: a, b, many, z; so main: a [0,600), b [600,680),
// many [680,980), z [980,1000). many's children t000..t299 are 1 each, self 0.
const lines = ["main;a 600", "main;b 80", "main;z 20"];
for (let i = 0; i < 300; i++) lines.push(`main;many;t${String(i).padStart(3, "0")} 1`);
const g = buildGraph(parseFolded(lines.join("\n")), { rootWidth: 100, depthBlock: 8 });
const all = g.manifest.chunks.map((c) => decodeChunk(g.files.get(c.file)));

test("the range under a parent that its drawn children leave is its elided children, total and count", () => {
  // 1000 px for 1000: every frame drawn; nothing elided.
  assert.deepEqual(elidedSpans(all, 3, 0, 1000, 0.5), []);
  // 100 px: a value of 10 per pixel, half a pixel is 5: t000..t299 (1 each) are elided under
  // many, as one range [680, 980); z (20) is drawn.
  const min = 5;
  assert.deepEqual(elidedSpans(all, 3, 0, 1000, min), [680, 980]);
  assert.deepEqual(framesIn(all, 3, 680, 980), { count: 300, sum: 300 });
  assert.deepEqual(elidedAt(all, 3, 700, 0, 1000, min), { lo: 680, hi: 980 });
  assert.equal(elidedAt(all, 3, 990, 0, 1000, min), null, "above z, nothing (z has no children)");
  // A finger's reach: the nearest mark within it, none beyond it, and a mark it is on first.
  assert.deepEqual(elidedAt(all, 3, 990, 0, 1000, min, 10), { lo: 680, hi: 980 }, "10 past the mark's end");
  assert.deepEqual(elidedAt(all, 3, 980, 0, 1000, min, 1), { lo: 680, hi: 980 }, "at its end (half-open), 0 away");
  assert.equal(elidedAt(all, 3, 990, 0, 1000, min, 9), null, "out of reach");
  assert.deepEqual(elidedAt(all, 3, 670, 0, 1000, min, 10), { lo: 680, hi: 980 }, "10 before its start");
  assert.deepEqual(elidedAt(all, 3, 700, 0, 1000, min, 1e9), { lo: 680, hi: 980 });
  // 40 per half pixel: b (80) drawn, z (20) elided beside it, but alone it is narrower than
  // half a pixel: no mark (a mark is drawn where elided frames add up to half a pixel).
  assert.deepEqual(elidedSpans(all, 2, 0, 1000, 40), []);
  // 350: a (600) drawn; b, many and z elided side by side, one run of 400.
  assert.deepEqual(elidedSpans(all, 2, 0, 1000, 350), [600, 1000]);
  assert.deepEqual(framesIn(all, 2, 600, 1000), { count: 3, sum: 400 });
  // Under an elided parent nothing is reported: the range below it already stands for it.
  assert.deepEqual(elidedSpans(all, 3, 0, 1000, 400), []);
});

test("only the view's chunks (class 0 at the root view) are needed to find the ranges", () => {
  const view = { x0: 0, x1: 1000, width: 100, height: 100, rowH: 18, depthCount: g.manifest.depth, icicle: false, scrollTop: 0, minHeight: 100 };
  const needed = new Set(neededChunks(g.manifest, view).map((c) => c.file));
  const first = all.filter((c, i) => needed.has(g.manifest.chunks[i].file));
  assert.ok(first.length < all.length, "the tiny frames are in chunks the view does not fetch");
  const min = pixelValue(view) * 0.5;
  assert.deepEqual(elidedSpans(first, 3, 0, 1000, min), [680, 980]);
  // A zoom on `many` (x0 680, x1 980) 1000 px wide: its 300 frames are 3.3 px wide, drawn.
  assert.deepEqual(elidedSpans(all, 3, 680, 980, 300 / 1000 / 2), []);
  // Cut by the view's edge: a parent partly in view still sees its children outside it.
  assert.deepEqual(elidedSpans(all, 3, 700, 1000, min), [680, 980]);
});

test("the canvas shows a grey mark where the tiny frames were, and nothing above it", async () => {
  const { Palette, paintFrames, pixel } = await import("../../themes/default/static/draw.js");
  const ROW = 10;
  const view = { x0: 0, x1: 1000, width: 100, height: 4 * ROW, rowH: ROW, depthCount: 4, icicle: false, scrollTop: 0, minHeight: 0 };
  const pix = new Uint32Array(100 * 4 * ROW);
  const names = { ...g.names, colors: g.names.names.map(() => 0x3366cc) };
  paintFrames(pix, 100, 4 * ROW, 1, { view, chunks: all, palette: new Palette(names), zoomDepth: 0, match: null, elided: 0x777777 });
  const at = (x, d) => pix[(3 - d) * ROW * 100 + 2 * 100 + x];
  // Depth 3 (top row): the mark over many's children, [680, 980) → px [68, 98), less its gap.
  for (const x of [68, 80, 96]) assert.equal(at(x, 3), pixel(0x777777), `x ${x}`);
  for (const x of [10, 60, 99]) assert.equal(at(x, 3), pixel(0xffffff), `x ${x} is background (a's self; z has no children)`);
  // Depth 2: the frames themselves.
  assert.equal(at(80, 2), pixel(0x3366cc));
});

test("parents and children from chunks of several classes are put in offset order, however many each chunk holds", () => {
  // Depth 0 holds the parents, depth 1 their children; each parent is 10 wide, self 0. A
  // fine chunk listed first holds [50, 60), [60, 70) and [70, 80), whose children leave
  // [55, 60) out; a coarse one holds [0, 10) and [10, 20), whose children leave [15, 20) out.
  const chunk = (rows) => {
    const at = (d) => rows.filter((r) => r[0] === d);
    const ordered = [...at(0), ...at(1)];
    return {
      depthLo: 0, depthHi: 2, rowStart: [0, at(0).length, rows.length], n: rows.length,
      offset: ordered.map((r) => r[1]), total: ordered.map((r) => r[2]), self: ordered.map((r) => r[3]),
    };
  };
  const fine = chunk([[0, 50, 10, 0], [0, 60, 10, 0], [0, 70, 10, 0], [1, 50, 5, 5], [1, 60, 10, 10], [1, 70, 10, 10]]);
  const coarse = chunk([[0, 0, 10, 0], [0, 10, 10, 0], [1, 0, 10, 10], [1, 10, 5, 5]]);
  for (const chunks of [[fine, coarse], [coarse, fine]]) assert.deepEqual(elidedSpans(chunks, 1, 0, 100, 1), [15, 20, 55, 60]);
});

test("a grey mark narrower than three pixels is drawn whole, with no gap taken off its end", async () => {
  const { Palette, paintFrames, pixel } = await import("../../themes/default/static/draw.js");
  // 100 px for 1000: b1..b5 (4 each, 0.4 px) are left out of main's children as [100, 120),
  // pixels 10 and 11; c is drawn from pixel 12.
  const gg = buildGraph(parseFolded("main;a 100\nmain;b1 4\nmain;b2 4\nmain;b3 4\nmain;b4 4\nmain;b5 4\nmain;c 880\n"), { rootWidth: 1000, depthBlock: 8 });
  const cs = gg.manifest.chunks.map((c) => decodeChunk(gg.files.get(c.file)));
  const ROW = 10;
  const view = { x0: 0, x1: 1000, width: 100, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
  const pix = new Uint32Array(100 * 3 * ROW);
  const names = { ...gg.names, colors: gg.names.names.map(() => 0x3366cc) };
  paintFrames(pix, 100, 3 * ROW, 1, { view, chunks: cs, palette: new Palette(names), zoomDepth: 0, match: null, elided: 0x777777 });
  const row2 = (x) => pix[2 * 100 + x];
  assert.deepEqual([9, 10, 11, 12].map(row2), [pixel(0xffffff), pixel(0x777777), pixel(0x777777), pixel(0x3366cc)]);
});
