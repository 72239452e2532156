import { test } from "node:test";
import assert from "node:assert/strict";
import {
  MIN_PX, chunksAt, contentHeight, depthAtY, frameAt, frameInfo, frameRect, frameStartingAt, neededChunks, pixelValue,
  rowY, rowsInRange, scrollForDepth, valueAtX, visibleDepths, xOf,
} from "../../themes/default/static/layout.js";
import { decodeChunk } from "../../themes/default/static/fetch.js";
import { buildGraph, rng } from "./helpers.mjs";

/** Stacks with a wide spine 70 deep, recursion, and many tiny leaves. */
function bigStacks() {
  const r = rng(7);
  const stacks = [];
  const spine = Array.from({ length: 70 }, (_, i) => `f${i}`);
  stacks.push([spine, 50000]);
  stacks.push([["main", "rec", "rec", "rec", "leaf"], 20000]);
  for (let i = 0; i < 3000; i++) stacks.push([["main", "tiny", `t${i}`], 1 + Math.floor(r() * 3)]);
  return stacks;
}

const view = (over = {}) => ({
  x0: 0, x1: 1000, width: 1000, height: 180, rowH: 18, depthCount: 50, icicle: false, scrollTop: 0, minHeight: 180, ...over,
});

test("rows stack from the bottom in flame mode and from the top in icicle mode", () => {
  const v = view({ scrollTop: contentHeight(view()) - 180 });
  assert.equal(rowY(v, 0), 162);
  assert.equal(rowY(v, 9), 0);
  assert.deepEqual(visibleDepths(v), [0, 10]);
  const ic = view({ icicle: true });
  assert.equal(rowY(ic, 0), 0);
  assert.deepEqual(visibleDepths(ic), [0, 10]);
  assert.deepEqual(visibleDepths({ ...ic, scrollTop: 9 }), [0, 11], "half rows count");
  for (const w of [v, ic, { ...v, scrollTop: 100 }, { ...ic, scrollTop: 333 }]) {
    for (let d = 0; d < 50; d++) {
      const y = rowY(w, d);
      if (y < 0 || y >= w.height) continue;
      assert.equal(depthAtY(w, y), d);
      assert.equal(depthAtY(w, y + 17.9), d);
    }
  }
  assert.equal(depthAtY(view({ depthCount: 3 }), 0), -1, "above a short flame graph is empty space");
});

test("scrollForDepth shows the root, or a zoomed depth with its callees", () => {
  const v = view();
  const max = contentHeight(v) - v.height;
  assert.equal(scrollForDepth(v, 0), max);
  assert.equal(scrollForDepth({ ...v, icicle: true }, 0), 0);
  const d = 30;
  const top = scrollForDepth(v, d);
  const [lo, hi] = visibleDepths({ ...v, scrollTop: top });
  assert.equal(lo, d - 2, "two faded ancestors stay in view");
  assert.ok(hi > d + 5);
  const it = scrollForDepth({ ...v, icicle: true }, d);
  assert.deepEqual(visibleDepths({ ...v, icicle: true, scrollTop: it })[0], d - 2);
});

test("x and value convert both ways", () => {
  const v = view({ x0: 200, x1: 400, width: 800 });
  assert.equal(xOf(v, 300), 400);
  assert.equal(valueAtX(v, 400), 300);
  assert.equal(pixelValue(v), 0.25);
  assert.deepEqual(frameRect(v, 0, 250, 50), { x: 200, y: rowY(v, 0), w: 200, h: 18 });
});

test("the root view needs only the class-0 chunks of its visible depths", () => {
  const g = buildGraph(bigStacks(), { rootWidth: 1000, depthBlock: 8, offsetSplits: 4 });
  const m = g.manifest;
  assert.ok(m.chunks.some((c) => c.class > 0), "the fixture has fine chunks");
  const v = view({ x0: 0, x1: m.total, width: 1000, height: 540, depthCount: m.depth, minHeight: 540 });
  v.scrollTop = scrollForDepth(v, 0);
  const [lo, hi] = visibleDepths(v);
  assert.deepEqual([lo, hi], [0, 30]);
  const got = neededChunks(m, v).map((c) => c.file);
  const want = m.chunks.filter((c) => c.class === 0 && c.depth[0] < hi && c.depth[1] > lo).map((c) => c.file);
  assert.deepEqual(got, want);
  // Scrolled up to the deepest rows: the deep class-0 chunks, not the shallow ones.
  const deep = { ...v, scrollTop: 0 };
  const [dlo] = visibleDepths(deep);
  assert.ok(neededChunks(m, deep).every((c) => c.depth[1] > dlo && c.class === 0));
});

test("a zoom adds only the fine chunks under the zoomed range that hold visible frames", () => {
  const g = buildGraph(bigStacks(), { rootWidth: 1000, depthBlock: 8, offsetSplits: 4 });
  const m = g.manifest;
  const t = g.table;
  const tiny = t.name.findIndex((n) => t.names[n] === "tiny");
  const v = view({ x0: t.offset[tiny], x1: t.offset[tiny] + t.total[tiny], width: 1000, height: 540, depthCount: m.depth, minHeight: 540 });
  v.scrollTop = scrollForDepth(v, 0);
  const need = neededChunks(m, v);
  const px = pixelValue(v) * MIN_PX;
  assert.ok(need.some((c) => c.class > 0), "fine chunks become visible");
  for (const c of need) {
    assert.ok(c.offset[0] < v.x1 && c.offset[1] > v.x0, `${c.file} intersects the zoom`);
    assert.ok(c.max_total >= px, `${c.file} holds a frame of half a pixel or more`);
  }
  // Every frame of at least half a pixel inside the view is in a needed chunk.
  const [lo, hi] = visibleDepths(v);
  const files = new Set(need.map((c) => c.file));
  for (let i = 0; i < t.name.length; i++) {
    if (t.depth[i] < lo || t.depth[i] >= hi || t.total[i] < px) continue;
    if (t.offset[i] >= v.x1 || t.offset[i] + t.total[i] <= v.x0) continue;
    const home = m.chunks.find((c) => decodeChunk(g.files.get(c.file)).id.includes(i));
    assert.ok(files.has(home.file), `frame ${i} (${t.names[t.name[i]]}) is fetched`);
  }
});

test("binary search finds the rows of a range and the frame under a point", () => {
  const g = buildGraph(bigStacks(), { rootWidth: 1000, depthBlock: 8, offsetSplits: 4 });
  const t = g.table;
  const chunks = g.manifest.chunks.map((c) => Object.assign(decodeChunk(g.files.get(c.file)), { entry: c }));
  const r = rng(3);
  for (let k = 0; k < 300; k++) {
    const d = Math.floor(r() * 4);
    const v = Math.floor(r() * t.total[0]);
    const want = t.name.findIndex((_, i) => t.depth[i] === d && t.offset[i] <= v && v < t.offset[i] + t.total[i]);
    const hit = frameAt(chunks, d, v);
    if (want < 0) assert.equal(hit, null);
    else {
      assert.equal(hit.chunk.id[hit.row], want);
      const info = frameInfo(hit.chunk, hit.row, g.names);
      assert.equal(info.depth, d);
      assert.equal(info.name, t.names[t.name[want]]);
      assert.equal(info.total, t.total[want]);
      assert.equal(info.self, t.self[want]);
      assert.deepEqual(frameStartingAt(chunks, d, t.offset[want]).row, hit.row);
    }
  }
  // Range: rows at depth 3 inside [x0, x1) are exactly the frames intersecting it.
  const x0 = t.total[0] * 0.6;
  const x1 = t.total[0] * 0.7;
  let seen = 0;
  for (const c of chunks) {
    const [i, j] = rowsInRange(c, 3, x0, x1);
    for (let q = i; q < j; q++) assert.ok(c.offset[q] < x1 && c.offset[q] + c.total[q] > x0);
    seen += j - i;
  }
  const expect = t.name.filter((_, i) => t.depth[i] === 3 && t.total[i] > 0 && t.offset[i] < x1 && t.offset[i] + t.total[i] > x0).length;
  assert.equal(seen, expect);
  assert.equal(frameAt(chunks, 2, 1, t.total[0]), null, "frames below minTotal are not hit");
});

test("chunksAt lists the chunks that may hold a point", () => {
  const g = buildGraph(bigStacks(), { rootWidth: 1000, depthBlock: 8, offsetSplits: 4 });
  const m = g.manifest;
  const at = chunksAt(m, 9, m.total - 1);
  assert.ok(at.length >= 1);
  for (const c of at) assert.ok(c.depth[0] <= 9 && 9 < c.depth[1] && c.offset[0] <= m.total - 1 && m.total - 1 < c.offset[1]);
});

test("frameInfo of a comparison's frame has its values on both sides", () => {
  const chunk = {
    depthLo: 0, depthHi: 1, rowStart: [0, 1], n: 1, id: [0], parent: [0xffffffff], name: [0], offset: [0], total: [10], self: [2],
    diff: true, beforeTotal: [4], beforeSelf: [1], afterTotal: [6], afterSelf: [3],
  };
  const f = frameInfo(chunk, 0, { names: ["all"] });
  assert.deepEqual(
    { name: f.name, depth: f.depth, total: f.total, self: f.self, beforeTotal: f.beforeTotal, beforeSelf: f.beforeSelf, afterTotal: f.afterTotal, afterSelf: f.afterSelf },
    { name: "all", depth: 0, total: 10, self: 2, beforeTotal: 4, beforeSelf: 1, afterTotal: 6, afterSelf: 3 },
  );
});
