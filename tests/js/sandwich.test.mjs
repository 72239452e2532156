// The sandwich of a function (sandwich.js): its callees and callers merged from the chunks of a
// graph, checked against a reckoning from the folded stacks alone (no frame table, no chunks).

import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeSandwich, layoutTree, mergeSandwich, sandwichChunks, topNodes } from "../../themes/default/static/sandwich.js";
import { GraphError, decodeChunk, decodeSearch } from "../../themes/default/static/fetch.js";
import { elidedSpans } from "../../themes/default/static/layout.js";
import { buildGraph, byteOrder, parseFolded, rng } from "./helpers.mjs";

/**
 * From the stacks alone: for each stack that calls `fn`, from its first (outermost) `fn` on,
 * every prefix of what follows is a callees path (F;…;X) and every prefix of what precedes it,
 * read backwards, a callers path (F;caller;…;X). Returns Maps path -> { total, self }.
 */
function reckon(stacks, fn) {
  const callees = new Map();
  const callers = new Map();
  const bump = (m, key, v, self) => {
    const e = m.get(key) || { total: 0, self: 0 };
    e.total += v;
    if (self) e.self += v;
    m.set(key, e);
  };
  for (const [frames, count] of stacks) {
    const i = frames.indexOf(fn);
    if (i < 0) continue;
    for (let j = i; j < frames.length; j++) bump(callees, frames.slice(i, j + 1).join(";"), count, j === frames.length - 1);
    const up = frames.slice(0, i + 1).reverse();
    for (let j = 0; j < up.length; j++) bump(callers, up.slice(0, j + 1).join(";"), count, j === up.length - 1);
  }
  return { callees, callers };
}

/** The laid-out tree as Map path -> { total, self }, checking its layout on the way. */
function paths(c, names) {
  const byId = new Map();
  const out = new Map();
  for (let d = 0; d < c.depthHi; d++) {
    let end = -Infinity;
    for (let r = c.rowStart[d]; r < c.rowStart[d + 1]; r++) {
      assert.ok(c.offset[r] >= end, "frames of one depth do not overlap, in offset order");
      end = c.offset[r] + c.total[r];
      const parent = d === 0 ? null : byId.get(c.parent[r]);
      if (d > 0) {
        assert.ok(parent, "every node's parent is one depth up");
        assert.ok(c.offset[r] >= parent.offset && end <= parent.offset + parent.total - parent.self, "children fill their parent before its self");
      }
      const path = parent ? `${parent.path};${names[c.name[r]]}` : names[c.name[r]];
      const node = { path, offset: c.offset[r], total: c.total[r], self: c.self[r], kids: [] };
      if (parent) parent.kids.push(node);
      byId.set(c.id[r], node);
      assert.ok(!out.has(path), `one node per path (${path})`);
      out.set(path, { total: c.total[r], self: c.self[r] });
    }
  }
  for (const node of byId.values()) {
    const names = node.kids.map((k) => k.path.split(";").pop());
    assert.deepEqual(names, [...names].sort(byteOrder), "children ordered by name");
    let o = node.offset;
    for (const k of node.kids) {
      assert.equal(k.offset, o, "children side by side from the parent's offset");
      o += k.total;
    }
    assert.equal(node.total - node.self, o - node.offset, "a node's total is its self and its children");
  }
  return out;
}

const plain = (m) => new Map([...m].map(([k, v]) => [k, { total: v.total, self: v.self }]));

/** A profile with recursion, F at several depths, F as a stack's first frame, and many tiny frames. */
function stacks() {
  const r = rng(11);
  const lines = [
    "main;a;malloc;brk 50",
    "main;a;malloc 20",
    "main;b;malloc;mmap 30",
    "main;b;c;malloc;brk 5",
    "malloc;brk 7", // F as the first frame: its callers tree ends at F
    "main;rec;rec;malloc;malloc;brk 9", // F inside F: one call, counted once
    "main;rec;rec;leaf 40",
    "main;<script>&\"'ü;malloc 3",
    "other;x 100",
  ];
  for (let i = 0; i < 400; i++) lines.push(`main;tiny${i % 37};w${i};malloc;${i % 3 ? "brk" : "mmap"} ${1 + Math.floor(r() * 3)}`);
  return parseFolded(lines.join("\n"));
}

function decodeAll(g, entries = g.manifest.chunks) {
  return entries.map((c) => decodeChunk(g.files.get(c.file)));
}

for (const fn of ["malloc", "brk", "rec", "main", "<script>&\"'ü"]) {
  test(`the callees and callers of ${fn} are the stacks' paths from its outermost call`, () => {
    const st = stacks();
    const g = buildGraph(st, { rootWidth: 50, depthBlock: 3, offsetSplits: 3 });
    const id = g.names.names.indexOf(fn);
    const { callees, callers, calls } = mergeSandwich(decodeAll(g), id, g.manifest.frames);
    const want = reckon(st, fn);
    const ce = layoutTree(callees, g.names.names);
    const cr = layoutTree(callers, g.names.names);
    assert.deepEqual(plain(paths(ce, g.names.names)), plain(want.callees));
    assert.deepEqual(plain(paths(cr, g.names.names)), plain(want.callers));
    // Both roots are the function's total in the name table (a search for exactly it).
    assert.equal(ce.total[0], g.names.total[id]);
    assert.equal(cr.total[0], g.names.total[id]);
    const frames = g.table.name.filter((n, i) => n === id && i > 0);
    assert.ok(calls >= 1 && calls <= frames.length);
  });
}

test("the chunks over the function's search intervals are enough, and fewer than all for a narrow function", () => {
  const st = stacks();
  const g = buildGraph(st, { rootWidth: 50, depthBlock: 2, offsetSplits: 4 });
  for (const fn of ["malloc", "mmap", "leaf", "rec", "brk"]) {
    const id = g.names.names.indexOf(fn);
    const entry = g.manifest.search.find((s) => s.names[0] <= id && id < s.names[1]);
    const b = decodeSearch(g.files.get(entry.file));
    const iv = Array.from(b.iv.subarray(2 * b.start[id - b.nameLo], 2 * b.start[id - b.nameLo + 1]));
    const some = sandwichChunks(g.manifest, iv);
    assert.ok(some.length <= sandwichChunks(g.manifest, null).length);
    if (fn === "leaf") assert.ok(some.length < g.manifest.chunks.length, "a narrow function needs only some chunks");
    const n = g.names.names.length;
    const want = reckon(st, fn);
    const a = mergeSandwich(decodeAll(g, some), id, g.manifest.frames);
    assert.deepEqual(plain(paths(layoutTree(a.callees, g.names.names), g.names.names)), plain(want.callees), fn);
    assert.deepEqual(plain(paths(layoutTree(a.callers, g.names.names), g.names.names)), plain(want.callers), fn);
  }
});

test("topNodes lists the merged root's children widest first", () => {
  const st = stacks();
  const g = buildGraph(st, { rootWidth: 50 });
  const id = g.names.names.indexOf("malloc");
  const s = mergeSandwich(decodeAll(g), id, g.manifest.frames);
  const top = topNodes(s.callers, g.names.names, 3);
  const want = reckon(st, "malloc").callers;
  const expected = [...want].filter(([k]) => k.split(";").length === 2).map(([k, v]) => ({ name: k.split(";")[1], total: v.total, self: v.self }));
  expected.sort((a, b) => b.total - a.total || byteOrder(a.name, b.name));
  assert.deepEqual(top, expected.slice(0, 3));
});

test("a differential chunk's before and after values are merged too", () => {
  // Two one-depth chunks by hand: all -> {a -> F, b -> F -> x}, with before/after columns.
  const mk = (rows) => {
    const depths = [...new Set(rows.map((r) => r.d))].sort((x, y) => x - y);
    const lo = depths[0];
    const hi = depths[depths.length - 1] + 1;
    const rowStart = new Uint32Array(hi - lo + 1);
    for (const r of rows) rowStart[r.d - lo + 1] += 1;
    for (let i = 0; i < hi - lo; i++) rowStart[i + 1] += rowStart[i];
    const col = (k) => Float64Array.from(rows, (r) => r[k]);
    return {
      n: rows.length, depthLo: lo, depthHi: hi, rowStart, offset: col("o"), total: col("t"), self: col("s"),
      beforeTotal: col("bt"), beforeSelf: col("bs"), afterTotal: col("at"), afterSelf: col("as"),
      id: Uint32Array.from(rows, (r) => r.id), parent: Uint32Array.from(rows, (r) => r.p), name: Uint32Array.from(rows, (r) => r.n), diff: true,
    };
  };
  const c = mk([
    { d: 0, id: 0, p: 0xffffffff, n: 0, o: 0, t: 10, s: 0, bt: 8, bs: 0, at: 12, as: 0 },
    { d: 1, id: 1, p: 0, n: 1, o: 0, t: 4, s: 0, bt: 4, bs: 0, at: 2, as: 0 },
    { d: 1, id: 3, p: 0, n: 2, o: 4, t: 6, s: 0, bt: 4, bs: 0, at: 10, as: 0 },
    { d: 2, id: 2, p: 1, n: 3, o: 0, t: 4, s: 4, bt: 4, bs: 4, at: 2, as: 2 },
    { d: 2, id: 4, p: 3, n: 3, o: 4, t: 6, s: 1, bt: 4, bs: 1, at: 10, as: 3 },
    { d: 3, id: 5, p: 4, n: 4, o: 4, t: 5, s: 5, bt: 3, bs: 3, at: 7, as: 7 },
  ]);
  const names = ["all", "a", "b", "F", "x"];
  const s = mergeSandwich([c], 3, 6);
  const ce = layoutTree(s.callees, names);
  assert.deepEqual([ce.total[0], ce.beforeTotal[0], ce.afterTotal[0], ce.afterSelf[0]], [10, 8, 12, 5]);
  assert.deepEqual([ce.total[1], ce.beforeTotal[1], ce.afterTotal[1]], [5, 3, 7]);
  assert.equal(ce.parent[0], 0xffffffff, "the root has no parent, as in a chunk");
  // Selfs on each side: F's (4 + 1 before, 2 + 3 after) and x's under it (3 and 7).
  assert.deepEqual([ce.beforeSelf[0], ce.afterSelf[0], ce.beforeSelf[1], ce.afterSelf[1]], [5, 5, 3, 7]);
  const cr = layoutTree(s.callers, names);
  // Callers: F <- a (before 4, after 2), F <- b (before 4, after 10); each is where its stacks begin.
  assert.deepEqual(Array.from(cr.name), [3, 1, 2]);
  assert.deepEqual(Array.from(cr.beforeTotal), [8, 4, 4]);
  assert.deepEqual(Array.from(cr.afterTotal), [12, 2, 10]);
  assert.deepEqual(Array.from(cr.afterSelf), [0, 2, 10]);
});

/** The rows of a layout as Map path -> { depth, offset, total, self } (no check of a parent's sums: some children may be left out). */
function rowsByPath(c, names) {
  const byId = new Map();
  const out = new Map();
  for (let d = 0; d < c.depthHi; d++) {
    for (let r = c.rowStart[d]; r < c.rowStart[d + 1]; r++) {
      const up = d === 0 ? null : byId.get(c.parent[r]);
      if (d > 0) assert.ok(up, "a kept node's parent is kept, one depth up");
      const path = up ? `${up};${names[c.name[r]]}` : names[c.name[r]];
      byId.set(c.id[r], path);
      out.set(path, { depth: d, offset: c.offset[r], total: c.total[r], self: c.self[r] });
    }
  }
  return out;
}

const filter = (m, keep) => new Map([...m].filter(([, v]) => keep(v)));

test("a layout down to a threshold keeps exactly the whole layout's nodes at or above it, where it has them, and draws the same", () => {
  const st = stacks();
  const g = buildGraph(st, { rootWidth: 50, depthBlock: 3, offsetSplits: 3 });
  const names = g.names.names;
  for (const fn of ["malloc", "main", "brk"]) {
    const id = names.indexOf(fn);
    const whole = mergeSandwich(decodeAll(g), id, g.manifest.frames);
    for (const side of ["callees", "callers"]) {
      const full = layoutTree(whole[side], names);
      const all = rowsByPath(full, names);
      const T = full.total[0];
      for (const min of [T / 40, T / 300, 2]) {
        // A fresh merge each time: what a pruned layout expands on its own.
        const tree = mergeSandwich(decodeAll(g), id, g.manifest.frames)[side];
        const part = layoutTree(tree, names, { min });
        const want = filter(all, (v) => v.depth === 0 || (v.total > 0 && v.total >= min));
        assert.deepEqual(rowsByPath(part, names), want, `${fn} ${side} min ${min}`);
        if (want.size < all.size) assert.ok(part.n < full.n, "some nodes left out");
        // Nodes are made only as children of the kept ones (the work follows the view).
        for (let v = 1; v < tree.n; v++) assert.ok(tree.total[tree.parent[v]] >= min || tree.parent[v] === 0, "made below a kept node");
        // Drawn at half a pixel of at least `min`: the same frames and the same grey marks.
        for (const minTotal of [min, 3 * min]) {
          for (let d = 1; d < full.depthHi; d++) {
            assert.deepEqual(elidedSpans([part], d, 0, T, minTotal), elidedSpans([full], d, 0, T, minTotal), `${fn} ${side} grey marks at depth ${d}`);
          }
        }
      }
    }
  }
});

test("a zoomed layout adds the finer nodes over the zoomed extent, and refining in any order ends in the exact whole trees", () => {
  const st = stacks();
  const g = buildGraph(st, { rootWidth: 50, depthBlock: 3, offsetSplits: 3 });
  const names = g.names.names;
  const id = names.indexOf("malloc");
  const want = reckon(st, "malloc");
  for (const side of ["callees", "callers"]) {
    const all = rowsByPath(layoutTree(mergeSandwich(decodeAll(g), id, g.manifest.frames)[side], names), names);
    const tree = mergeSandwich(decodeAll(g), id, g.manifest.frames)[side];
    const T = tree.total[0];
    layoutTree(tree, names, { min: T / 10 });
    // Zoom, after that coarse layout, to the widest node two steps from the root.
    const z = [...all.values()].filter((v) => v.depth === 2).sort((a, b) => b.total - a.total)[0];
    assert.ok(z && z.total < T / 10, "a node to zoom to, below the coarse layout's threshold");
    const keep = { min: T / 10, lo: z.offset, hi: z.offset + z.total, zmin: 1 };
    const zoomed = layoutTree(tree, names, keep);
    const inside = (v) => v.offset < keep.hi && v.offset + v.total > keep.lo;
    assert.deepEqual(rowsByPath(zoomed, names), filter(all, (v) => v.depth === 0 || (v.total > 0 && (v.total >= keep.min || (v.total >= 1 && inside(v))))));
    // Then everything: the stacks' paths.
    assert.deepEqual(plain(paths(layoutTree(tree, names), names)), plain(want[side]));
  }
});

/** A sandwich file (docs/FORMAT.md "Sandwich files") from rows { o, t, s, p, n } per tree, u32 values. */
function sandwichFile(fn, calls, trees, { coded = false } = {}) {
  const n = trees[0].length + trees[1].length;
  const buf = new ArrayBuffer(32 + n * (3 * 4 + 8));
  const dv = new DataView(buf);
  [0x46, 0x53, 0x53, 0x57].forEach((b, i) => dv.setUint8(i, b));
  [1, 2 | (coded ? 4 : 0), fn, calls, trees[0].length, trees[1].length, 0].forEach((v, i) => dv.setUint32(4 + 4 * i, v, true));
  let at = 32;
  for (const rows of trees) {
    for (const k of ["o", "t", "s", "p", "n"]) {
      // Coded (FORMAT.md "Coded columns"): an offset as its gap after the sibling before or
      // from its parent's offset, a parent as its step from the row before, in byte planes.
      const col = rows.map((r, i) => {
        const p = r.p < 0 ? 0xffffffff : r.p;
        if (!coded) return k === "p" ? p : r[k];
        if (k === "p") return (p - (i > 0 ? (rows[i - 1].p < 0 ? 0xffffffff : rows[i - 1].p) : 0)) >>> 0;
        if (k !== "o") return r[k];
        if (i > 0 && rows[i - 1].p === r.p) return r.o - rows[i - 1].o - rows[i - 1].t;
        return r.p < 0 ? r.o : r.o - rows[r.p].o;
      });
      col.forEach((v, i) => {
        const one = new DataView(new ArrayBuffer(4));
        one.setUint32(0, v, true);
        for (let b = 0; b < 4; b++) dv.setUint8(coded ? at + b * rows.length + i : at + 4 * i + b, one.getUint8(b));
      });
      at += 4 * rows.length;
    }
  }
  return buf;
}

test("a build's sandwich file is read as trees the layout draws, and a damaged one is refused", () => {
  const names = ["all", "F", "a", "b", "x"];
  // Callers: F <- a (5), F <- b (3), F's self 1, and between them a caller of 1 the build
  // cut (the root's children are all kept in a real file; the reader does not rely on it);
  // callees: F -> x (4, of which a cut child of 1 is not in the file).
  const callers = [
    { o: 0, t: 10, s: 1, p: -1, n: 1 },
    { o: 0, t: 5, s: 5, p: 0, n: 2 },
    { o: 6, t: 3, s: 3, p: 0, n: 3 },
  ];
  const callees = [
    { o: 0, t: 10, s: 6, p: -1, n: 1 },
    { o: 0, t: 4, s: 3, p: 0, n: 4 },
  ];
  const w = decodeSandwich(sandwichFile(1, 7, [callers, callees]), 1, 4);
  assert.equal(w.calls, 7);
  assert.equal(w.callees.above, 2, "ceil(10 / 4) - 1: every node above 2 is there");
  // Cut at a pixel of a canvas 1 pixel wide (the least root_width a build takes), or of none.
  assert.equal(decodeSandwich(sandwichFile(1, 7, [callers, callees]), 1, 1).callees.above, 9, "ceil(10 / 1) - 1");
  assert.equal(decodeSandwich(sandwichFile(1, 7, [callers, callees]), 1, 0).callees.above, 9, "a width of 0 taken as 1");
  const c = layoutTree(w.callers, names, { min: 1 });
  assert.deepEqual([...c.name], [1, 2, 3]);
  assert.deepEqual([...c.offset], [0, 0, 6], "offsets as the file says: the cut node's place kept");
  assert.deepEqual(topNodes(w.callers, names), [
    { name: "a", total: 5, self: 5 },
    { name: "b", total: 3, self: 3 },
  ]);
  // x's cut child leaves a grey mark of its 1 sample where x's children go.
  const e = layoutTree(w.callees, names, { min: 1 });
  assert.deepEqual(elidedSpans([e], 2, 0, 10, 1), [0, 1]);
  const bad = (trees, fn = 1, why) => assert.throws(() => decodeSandwich(sandwichFile(fn, 7, trees), 1, 4), (err) => err instanceof GraphError && why.test(err.message));
  bad([callers, callees], 2, /not of 1/);
  bad([[callers[0], callers[2], callers[1]], callees], 1, /overlap/);
  bad([[callers[0], { ...callers[1], p: 2 }, callers[2]], callees], 1, /breadth first/);
  bad([[callers[0], { ...callers[1], t: 10 }, callers[2]], callees], 1, /outside its parent/);
  const cut = sandwichFile(1, 7, [callers, callees]).slice(0, 60);
  assert.throws(() => decodeSandwich(cut, 1, 4), /truncated/);
  // Coded columns read back as the plain ones: the gap after a (cut) sibling, and a first
  // child's offset from its parent's, of a deeper tree.
  const deep = [callers[0], { ...callers[1], s: 2 }, { ...callers[2], s: 2 }, { o: 1, t: 2, s: 2, p: 1, n: 4 }, { o: 6, t: 1, s: 1, p: 2, n: 4 }];
  const plain = decodeSandwich(sandwichFile(1, 7, [deep, callees]), 1, 4);
  const coded = decodeSandwich(sandwichFile(1, 7, [deep, callees], { coded: true }), 1, 4);
  for (const k of ["callers", "callees"]) {
    for (const col of ["offset", "total", "self", "parent", "name"]) assert.deepEqual([...coded[k][col]], [...plain[k][col]], `${k} ${col}`);
  }
  assert.deepEqual([...coded.callers.offset], [0, 0, 6, 1, 6]);
  const flagged = sandwichFile(1, 7, [callers, callees], { coded: true });
  new DataView(flagged).setUint32(8, 2 | 4 | 8, true);
  assert.throws(() => decodeSandwich(flagged, 1, 4), /flags 14/);
});
