import { test } from "node:test";
import { gzipSync } from "node:zlib";
import assert from "node:assert/strict";
import { GraphError, GraphSource, NameTable, checkManifest, checkNames, chunkWidths, decodeChunk, decodeSearch, idsOf, layoutOffsets, layoutView, nameIntervals, unionWidth, READERS } from "../../themes/default/static/fetch.js";
import { decodeLeft as decodeLeftWith, leftFile, placeLeftHeavy, unplacedParents } from "../../themes/default/static/leftheavy.js";

const decodeLeft = (data, file, n) => decodeLeftWith(data, file, n, READERS);
import { buildGraph, chunkBytes, diffSearchBytes, diffTable, frameTable, leftBytes, leftHeavyOffsets, memoryFetch, parseFolded, rng, searchBytes } from "./helpers.mjs";
import { hotColor, langColor } from "./colors.mjs";

const FOLDED = "main;a;b 5\nmain;a 2\nmain;c 3\nother 1\n";

for (const [version, values, Column] of [[2, "u32", Uint32Array], [2, "f64", Float64Array], [1, "f64", Float64Array]]) {
  test(`decodeChunk reads the columns FORMAT.md describes (version ${version}, ${values} values)`, () => {
    const t = frameTable(parseFolded(FOLDED));
    const ids = t.name.map((_, i) => i);
    const bytes = chunkBytes(t, ids, 0, 4, { version, values });
    // Header and row index (24 + 4 * 5, padded to 48), then 3 value columns and 3 u32 ones.
    assert.equal(bytes.byteLength, 48 + t.name.length * (3 * Column.BYTES_PER_ELEMENT + 12));
    const c = decodeChunk(bytes);
    assert.ok(c.offset instanceof Column && c.total instanceof Column && c.self instanceof Column);
    assert.deepEqual([...c.offset.slice(1, 3)], [0, 10]);
    assert.deepEqual([...c.total.slice(1, 3)], [10, 1]);
    assert.deepEqual([...c.name.slice(1, 3)].map((n) => t.names[n]), ["main", "other"]);
  });
}

// Gaps between the frames of a depth: main's self (4) lies between c and y at depth 2.
const GAPPED = FOLDED + "main 4\nother;z 1\nother;y;w 2\n";
const columns = (c) => Object.fromEntries(["offset", "total", "self", "beforeTotal", "beforeSelf", "afterTotal", "afterSelf", "id", "parent", "name", "rowStart"].map((k) => [k, c[k] && [...c[k]]]));

for (const values of ["u32", "f64"]) {
  test(`decodeChunk reads coded columns (flag 4) as the plain ones, gaps and steps added up (${values} values)`, () => {
    const t = frameTable(parseFolded(GAPPED));
    const ids = t.name.map((_, i) => i);
    const plain = decodeChunk(chunkBytes(t, ids, 0, 4, { values }));
    const bytes = chunkBytes(t, ids, 0, 4, { values, coded: t.total });
    assert.equal(new DataView(bytes).getUint32(8, true) & 4, 4);
    assert.notDeepEqual(new Uint8Array(bytes), new Uint8Array(chunkBytes(t, ids, 0, 4, { values })));
    const c = decodeChunk(bytes);
    assert.deepEqual(columns(c), columns(plain));
    const y = [...c.name].indexOf(t.names.indexOf("y"));
    assert.equal(c.offset[y], 14, "y starts where other does, 4 after c ends");
    // A part of a graph: frames of depths 1 and 2 only, of two parents.
    const some = ids.filter((i) => t.depth[i] >= 1 && t.depth[i] <= 2);
    assert.deepEqual(columns(decodeChunk(chunkBytes(t, some, 1, 3, { values, coded: t.total }))), columns(decodeChunk(chunkBytes(t, some, 1, 3, { values }))));
  });
}

for (const values of ["u32", "f64"]) {
  for (const fromParents of [false, true]) {
    const what = fromParents ? "flags 8 and 16, offsets from their parents'" : "flag 8";
    test(`decodeChunk reads parents given as rows of the chunk (${what}), ids from their parents' (${values} values)`, () => {
      const t = frameTable(parseFolded(GAPPED));
      const ids = t.name.map((_, i) => i);
      const coded = { values, coded: t.total, parentRows: true, fromParents };
      const whole = chunkBytes(t, ids, 0, 4, coded);
      assert.equal(new DataView(whole).getUint32(8, true) & 28, fromParents ? 28 : 12);
      assert.deepEqual(columns(decodeChunk(whole)), columns(decodeChunk(chunkBytes(t, ids, 0, 4, { values }))));
      // Depths 1 and 2 only: the parents of depth 1 are not in the chunk, and listed.
      const some = ids.filter((i) => t.depth[i] >= 1 && t.depth[i] <= 2);
      assert.deepEqual(columns(decodeChunk(chunkBytes(t, some, 1, 3, coded))), columns(decodeChunk(chunkBytes(t, some, 1, 3, { values }))));
      // Narrow frames without their siblings (a fine chunk): ids cannot all follow a sibling.
      const narrow = ids.filter((i) => t.total[i] <= 2);
      const lo = Math.min(...narrow.map((i) => t.depth[i]));
      const hi = Math.max(...narrow.map((i) => t.depth[i])) + 1;
      assert.deepEqual(columns(decodeChunk(chunkBytes(t, narrow, lo, hi, coded))), columns(decodeChunk(chunkBytes(t, narrow, lo, hi, { values }))));
    });
  }
}

test("offsets from parents (flag 16): a first child's gap is 0, and more of the column is 0 than without", () => {
  const t = frameTable(parseFolded(GAPPED));
  const ids = t.name.map((_, i) => i);
  // The offset column in byte planes: its low plane holds each row's gap below 256.
  const gaps = (fromParents) => {
    const b = new Uint8Array(chunkBytes(t, ids, 0, 4, { coded: t.total, parentRows: true, fromParents }));
    return [...b.slice(48, 48 + ids.length)];
  };
  const rows = [...ids].sort((a, b) => t.depth[a] - t.depth[b] || t.offset[a] - t.offset[b] || a - b);
  const y = rows.indexOf(t.name.indexOf(t.names.indexOf("y")));
  assert.ok(y > 0);
  assert.equal(gaps(false)[y], 4, "without: y's gap is main's self after c");
  assert.equal(gaps(true)[y], 0, "with: y starts where its parent other does");
  const zeros = (g) => g.filter((v) => v === 0).length;
  assert.ok(zeros(gaps(true)) > zeros(gaps(false)));
});

/** Up to 30 random folded lines of `random` (rng): stacks 1 to 6 deep over four names. */
function randomFolded(random) {
  const lines = [];
  for (let k = 0; k < 1 + Math.floor(random() * 30); k++) {
    const depth = 1 + Math.floor(random() * 6);
    lines.push(`${Array.from({ length: depth }, () => "abcd"[Math.floor(random() * 4)]).join(";")} ${1 + Math.floor(random() * 9)}`);
  }
  return lines;
}

test("parents as rows: random graphs and random parts of them read back as written", () => {
  const random = rng(11);
  for (let round = 0; round < 40; round++) {
    const lines = randomFolded(random);
    const t = frameTable(parseFolded(lines.join("\n") + "\n"));
    const all = t.name.map((_, i) => i);
    const part = all.filter(() => random() < 0.6);
    if (part.length === 0) continue;
    const lo = Math.min(...part.map((i) => t.depth[i]));
    const hi = Math.max(...part.map((i) => t.depth[i])) + 1;
    const want = columns(decodeChunk(chunkBytes(t, part, lo, hi)));
    assert.deepEqual(columns(decodeChunk(chunkBytes(t, part, lo, hi, { coded: t.total, parentRows: true }))), want, lines.join(" / "));
    assert.deepEqual(columns(decodeChunk(chunkBytes(t, part, lo, hi, { coded: t.total, parentRows: true, fromParents: true }))), want, lines.join(" / "));
  }
});

test("left-heavy offsets: random graphs and parts of them are placed in that layout, rows in its order", () => {
  const random = rng(12);
  for (let round = 0; round < 40; round++) {
    const lines = randomFolded(random);
    const t = frameTable(parseFolded(lines.join("\n") + "\n"));
    const left = leftHeavyOffsets(t);
    const part = t.name.map((_, i) => i).filter(() => random() < 0.6);
    if (part.length === 0) continue;
    const lo = Math.min(...part.map((i) => t.depth[i]));
    const hi = Math.max(...part.map((i) => t.depth[i])) + 1;
    const bytes = () => chunkBytes(t, part, lo, hi, { coded: t.total, parentRows: true, fromParents: true });
    // Read left-heavy: placed, with its file of left-heavy offsets, once the left-heavy offsets
    // of the parents outside the chunk are known; then each frame at its left-heavy offset, the
    // default one kept beside it, and the rows of each depth in order of the new offsets.
    const c = decodeChunk(bytes(), "chunk", { layout: "left" });
    c.leftRel = decodeLeft(leftBytes(t, part, left), "left", c.n);
    assert.throws(() => decodeLeft(leftBytes(t, part, left), "l/0-0.bin.gz", c.n + 1), /l\/0-0\.bin\.gz: has \d+ rows where its chunk has/);
    assert.throws(() => decodeLeft(leftBytes(t, part, left).slice(0, 16 + 4 * c.n - 1), "x", c.n), /truncated or corrupt/);
    assert.equal(leftFile("c/2-17.bin.gz"), "l/2-17.bin.gz");
    const inside = new Set(part);
    const outside = part.filter((i) => i !== 0 && !inside.has(t.parent[i]));
    assert.deepEqual(unplacedParents(c, new Map()).map((r) => c.id[r]).sort((a, b) => a - b), outside.sort((a, b) => a - b));
    const leftOf = new Map(t.name.map((_, i) => i).filter((i) => !inside.has(i)).map((i) => [i, left[i]]));
    assert.deepEqual(unplacedParents(c, leftOf), []);
    placeLeftHeavy(c, leftOf);
    for (const i of part) assert.equal(leftOf.get(i), left[i], "placed frames go into the map");
    for (let r = 0; r < c.n; r++) {
      const id = c.id[r];
      assert.deepEqual([c.offset[r], c.nameOffset[r], c.total[r], c.self[r], c.parent[r] >>> 0, c.name[r]], [left[id], t.offset[id], t.total[id], t.self[id], t.parent[id] >>> 0, t.name[id]], lines.join(" / "));
    }
    for (let d = 0; d + 1 < c.rowStart.length; d++) {
      for (let r = c.rowStart[d] + 1; r < c.rowStart[d + 1]; r++) assert.ok(c.offset[r - 1] <= c.offset[r], lines.join(" / "));
    }
  }
});

test("parents as rows: a parent that is not a row before, or a list that does not match, is refused", () => {
  const t = frameTable(parseFolded(GAPPED));
  const ids = t.name.map((_, i) => i);
  const good = chunkBytes(t, ids, 0, 4, { coded: t.total, parentRows: true });
  const n = ids.length;
  const a = 24 + 4 * 5 + 4; // header, row index of 5 entries, padded to 8
  const parents = a + 3 * 4 * n + 4 * n; // the parent column, in byte planes
  // Row 2's parent made row 5 (not before it): its code's low byte.
  const ahead = good.slice(0);
  new Uint8Array(ahead)[parents + 2] = 5;
  assert.throws(() => decodeChunk(ahead, "c/0-0.bin.gz"), /c\/0-0\.bin\.gz: row 2's parent is not a row before it/);
  // One more parent listed than rows that need one.
  const more = new Uint8Array(good.byteLength + 4);
  more.set(new Uint8Array(good));
  const end = a + 3 * 4 * n + 12 * n;
  new DataView(more.buffer).setUint32(end, new DataView(good).getUint32(end, true) + 1, true);
  assert.throws(() => decodeChunk(more.buffer, "c/0-0.bin.gz"), /lists 2 parents outside it, and 1 rows have one/);
  // Cut short.
  assert.throws(() => decodeChunk(good.slice(0, good.byteLength - 2), "c/0-0.bin.gz"), /truncated or corrupt/);
});

test("decodeChunk reads a comparison's coded chunk, its gaps after the layout's widths", () => {
  const t = frameTable(parseFolded(GAPPED));
  const ids = t.name.map((_, i) => i);
  // The after layout: widths are the after values (the table's own), before ones differ.
  const diff = { beforeTotal: t.total.map((v) => v * 3 + 1), beforeSelf: t.self.map((v) => v * 2), afterTotal: t.total, afterSelf: t.self };
  const widths = { layout: "after", tb: diff.beforeTotal[0], ta: diff.afterTotal[0] };
  const plain = decodeChunk(chunkBytes(t, ids, 0, 4, { diff, version: 5 }), "c", widths);
  const c = decodeChunk(chunkBytes(t, ids, 0, 4, { diff, version: 5, coded: t.total }), "c", widths);
  assert.deepEqual(columns(c), columns(plain));
  assert.deepEqual(columns(decodeChunk(chunkBytes(t, ids, 0, 4, { diff, version: 5, coded: t.total, parentRows: true }), "c", widths)), columns(plain));
  assert.deepEqual([...c.offset], ids.map((i) => t.offset[c.id[i]]));
});

/**
 * A comparison of version 8 in memory: one chunk per depth of every frame of diffTable `d`
 * (version 6, coded, with the three layouts' offsets), and its manifest. `entries` are the
 * chunks' manifest entries.
 */
function layoutsGraph(d) {
  const f = d.frames;
  const t = { depth: f.map((x) => x.depth), offset: f.map((x) => x.lo), total: f.map((x) => x.width), parent: f.map((x) => x.parent), name: f.map((x) => x.name) };
  const diff = { beforeTotal: f.map((x) => x.before), beforeSelf: f.map((x) => x.beforeSelf), afterTotal: f.map((x) => x.after), afterSelf: f.map((x) => x.afterSelf) };
  const layouts = { after: [f.map((x) => x.afterLo), diff.afterTotal], before: [f.map((x) => x.beforeLo), diff.beforeTotal] };
  const files = new Map();
  const chunks = [];
  const depth = Math.max(...t.depth) + 1;
  for (let k = 0; k < depth; k++) {
    const ids = f.filter((x) => x.depth === k).map((x) => x.id);
    const file = `c/0-${k}.bin`;
    files.set(file, chunkBytes(t, ids, k, k + 1, { diff, version: 6, coded: t.total, layouts }));
    const span = (lo, w) => ({ offset: [Math.min(...ids.map((i) => lo[i])), Math.max(...ids.map((i) => lo[i] + w[i]))], max_total: Math.max(...ids.map((i) => w[i])) });
    chunks.push({ file, class: 0, depth: [k, k + 1], frames: ids.length, name_max: d.names.length - 1, bytes: 0, ...span(t.offset, t.total), after: span(...layouts.after), before: span(...layouts.before) });
  }
  const manifest = {
    format: "flamesite-graph", version: 8, values: "u32", graph: "samples", unit: "samples", differential: true, total: 2 ** 31, total_before: d.tb, frames: f.length, depth,
    palette: "hot", root_width: 100, class_factor: 8, names: [], chunks, search: [], diff: { layout: "union", total_before: d.tb, total_after: d.ta, scale_points: 1, scale_value: 1 },
  };
  files.set("manifest.json", manifest);
  return { manifest, files, t };
}

test("a comparison's chunk of every depth, offsets from parents in each of its three layouts, reads back exactly", () => {
  const d = diffTable(parseFolded("main;a;x 30\nmain;a 5\nmain;b 20\ngone;g 7\nkeep 3\n"), parseFolded("main;a;x 10\nmain;b 40\nmain;b;y 6\nnew;n 9\nkeep 3\nmain 4\n"));
  const f = d.frames;
  const t = { depth: f.map((x) => x.depth), offset: f.map((x) => x.lo), total: f.map((x) => x.width), parent: f.map((x) => x.parent), name: f.map((x) => x.name) };
  const diff = { beforeTotal: f.map((x) => x.before), beforeSelf: f.map((x) => x.beforeSelf), afterTotal: f.map((x) => x.after), afterSelf: f.map((x) => x.afterSelf) };
  const layouts = { after: [f.map((x) => x.afterLo), diff.afterTotal], before: [f.map((x) => x.beforeLo), diff.beforeTotal] };
  const depth = Math.max(...t.depth) + 1;
  const ids = f.map((x) => x.id);
  const bytes = chunkBytes(t, ids, 0, depth, { diff, version: 6, coded: t.total, layouts, parentRows: true, fromParents: true });
  for (const layout of ["union", "after", "before"]) {
    const c = decodeChunk(bytes, "c/0-0.bin", { layout, tb: d.tb, ta: d.ta });
    const got = [...c.id].map((id, i) => [id, c.offset[i], c.total[i], c.parent[i]]).sort((a, b) => a[0] - b[0]);
    const want = f.map((x) => ({ union: [x.id, x.lo, x.width], after: [x.id, x.afterLo, x.after], before: [x.id, x.beforeLo, x.before] })[layout].concat([x.parent >>> 0]));
    assert.deepEqual(got, want, layout);
  }
});

test("a comparison's chunks whose union offsets are told from the other layouts read back exactly, whichever layout is decoded first", () => {
  // One chunk per depth: every row below the root has its parent in another chunk, so every
  // first row of a parent's children holds a residual's step (negative ones too: the floors of
  // many narrow frames add up).
  const lines = (k) => Array.from({ length: 40 }, (_, i) => `main;w${i % 7};x${i} ${1 + ((i * k) % 13)}`).join("\n");
  const d = diffTable(parseFolded(`${lines(3)}\ngone;g 7\n`), parseFolded(`${lines(5)}\nnew;n 9\n`));
  const f = d.frames;
  const t = { depth: f.map((x) => x.depth), offset: f.map((x) => x.lo), total: f.map((x) => x.width), parent: f.map((x) => x.parent), name: f.map((x) => x.name) };
  const diff = { beforeTotal: f.map((x) => x.before), beforeSelf: f.map((x) => x.beforeSelf), afterTotal: f.map((x) => x.after), afterSelf: f.map((x) => x.afterSelf) };
  const layouts = { after: [f.map((x) => x.afterLo), diff.afterTotal], before: [f.map((x) => x.beforeLo), diff.beforeTotal] };
  const want = (layout, x) => ({ union: x.lo, after: x.afterLo, before: x.beforeLo })[layout];
  for (let k = 0; k <= Math.max(...t.depth); k++) {
    const ids = f.filter((x) => x.depth === k).map((x) => x.id);
    const bytes = chunkBytes(t, ids, k, k + 1, { diff, version: 6, coded: t.total, layouts, parentRows: true, fromParents: true, unionFromLayouts: true });
    assert.equal(new DataView(bytes).getUint32(8, true) & 32, 32);
    for (const shown of ["union", "after", "before"]) {
      const c = decodeChunk(bytes, `c/0-${k}.bin`, { layout: shown, tb: d.tb, ta: d.ta });
      for (const layout of ["union", "after", "before"]) {
        const got = layoutOffsets(c, layout);
        assert.deepEqual([...c.id].map((id, i) => [id, got[i]]), [...c.id].map((id) => [id, want(layout, f[id])]), `depth ${k}, decoded for ${shown}, offsets in ${layout}`);
      }
    }
  }
  // The premise: union offsets that the other two do not give exactly (the floors add up).
  const told = f.filter((x) => x.lo !== unionWidth(x.beforeLo, d.tb) + unionWidth(x.afterLo, d.ta));
  assert.ok(told.length > 20, `${told.length} union offsets differ from what the other layouts give`);
  // The flag is refused on a plain chunk.
  const plain = chunkBytes({ ...t, self: t.total }, f.map((x) => x.id), 0, Math.max(...t.depth) + 1, { coded: t.total, parentRows: true, fromParents: true });
  new DataView(plain).setUint32(8, new DataView(plain).getUint32(8, true) | 32, true);
  assert.throws(() => decodeChunk(plain, "c/p.bin"), /flags \d+ this page does not know/);
});

test("a comparison's chunk of version 6 holds every layout: each reads back its own offsets and widths", async () => {
  // Paths of one run only, and selfs: gaps differ from one layout to the next.
  const d = diffTable(parseFolded("main;a;x 30\nmain;a 5\nmain;b 20\ngone;g 7\nkeep 3\n"), parseFolded("main;a;x 10\nmain;b 40\nmain;b;y 6\nnew;n 9\nkeep 3\nmain 4\n"));
  const { manifest, files } = layoutsGraph(d);
  for (const layout of ["union", "after", "before"]) {
    const view = layoutView(manifest, layout);
    assert.equal(view.total, { union: 2 ** 31, after: d.ta, before: d.tb }[layout]);
    const frames = [];
    for (const e of view.chunks) {
      const c = decodeChunk(files.get(e.file), e.file, chunkWidths(view));
      for (let i = 0; i < c.n; i++) frames.push([c.id[i], c.offset[i], c.total[i]]);
      // The manifest entry's span is where the chunk's frames lie in this layout.
      assert.deepEqual(e.offset, [Math.min(...c.offset), Math.max(...[...c.offset].map((o, i) => o + c.total[i]))], `${layout} ${e.file}`);
    }
    frames.sort((a, b) => a[0] - b[0]);
    const want = d.frames.map((x) => ({ union: [x.id, x.lo, x.width], after: [x.id, x.afterLo, x.after], before: [x.id, x.beforeLo, x.before] })[layout]);
    assert.deepEqual(frames, want, layout);
  }
  const gone = d.frames.find((x) => d.names[x.name] === "gone");
  assert.equal(gone.after, 0, "a path the later run lacks is 0 wide after");
  const keep = d.frames.find((x) => d.names[x.name] === "keep");
  assert.deepEqual([keep.afterLo, keep.beforeLo], [0, 7], "keep follows gone before, and nothing after");
  // Read through a source, the layout asked for is the one drawn.
  const base = "http://x/compare/g/samples/";
  const src = new GraphSource(base, memoryFetch(files, base), "before");
  const m = await src.manifest();
  assert.equal(m.total, d.tb);
  assert.equal(m.diff.layout, "before");
  const c = await src.chunk(m.chunks[1]);
  assert.deepEqual([...c.offset], [...c.id].map((id) => d.frames[id].beforeLo));
});

test("a source of an older comparison reads the layout from its own folder", async () => {
  const g = buildGraph(parseFolded(FOLDED));
  const base = "http://x/compare/g/samples/";
  const files = new Map();
  const union = { ...g.manifest, diff: { layout: "union", layouts: { after: "after/", before: "before/" }, total_before: 1, total_after: 1, scale_points: 1, scale_value: 1 } };
  files.set("manifest.json", union);
  files.set("after/manifest.json", { ...g.manifest, diff: { ...union.diff, layout: "after", layouts: { union: "../", before: "../before/" } } });
  for (const [file, v] of g.files) if (file !== "manifest.json") files.set(`after/${file}`, v);
  const f = memoryFetch(files, base);
  const src = new GraphSource(base, f, "after");
  const m = await src.manifest();
  assert.equal(m.diff.layout, "after");
  assert.equal(src.base, base + "after/");
  // An older graph has no manifest.json.gz (version 9): manifest.json is read after it.
  assert.deepEqual(f.calls, [base + "manifest.json.gz", base + "manifest.json", base + "after/manifest.json.gz", base + "after/manifest.json"]);
  assert.deepEqual(src.errors, []);
});

test("decodeChunk and decodeSearch refuse flags they do not know and coded files of old versions", () => {
  const t = frameTable(parseFolded(GAPPED));
  const bytes = chunkBytes(t, [0, 1, 5], 0, 2, { coded: t.total });
  new DataView(bytes).setUint32(8, 2 | 4 | 32, true);
  assert.throws(() => decodeChunk(bytes, "c/0-0.bin.gz"), /c\/0-0\.bin\.gz: has flags 38 this page does not know/);
  // Parents as rows (8) only in coded columns (4), offsets from parents (16) only with them.
  new DataView(bytes).setUint32(8, 2 | 8, true);
  assert.throws(() => decodeChunk(bytes, "c/0-0.bin.gz"), /has flags 10 this page does not know/);
  new DataView(bytes).setUint32(8, 2 | 4 | 16, true);
  assert.throws(() => decodeChunk(bytes, "c/0-0.bin.gz"), /has flags 22 this page does not know/);
  assert.throws(() => decodeChunk(chunkBytes(t, [0, 1, 5], 0, 2, { version: 1, coded: t.total })), /version 1 with coded columns/);
  const per = [[], [[0, 5], [9, 12]], [[3, 4]]];
  const s = searchBytes(per, 0, 3, { coded: true });
  new DataView(s).setUint32(20, 1 | 4 | 16, true);
  assert.throws(() => decodeSearch(s, "s/0.bin.gz"), /s\/0\.bin\.gz: has flags 21/);
});

for (const values of ["u32", "f64"]) {
  test(`decodeSearch reads a coded bucket's gaps and lengths as the intervals (${values} values)`, () => {
    const per = [[], [[0, 5], [9, 12], [20, 21]], [[3, 4]], [], [[7, 30]]];
    const plain = decodeSearch(searchBytes(per, 0, 5, { values }));
    const c = decodeSearch(searchBytes(per, 0, 5, { values, coded: true }));
    assert.deepEqual([...c.iv], [...plain.iv]);
    assert.deepEqual([...c.iv], [0, 5, 9, 12, 20, 21, 3, 4, 7, 30]);
    assert.deepEqual([...nameIntervals(c, 1, null)], [0, 5, 9, 12, 20, 21]);
  });
}

test("decodeChunk reads the columns FORMAT.md describes", () => {
  const t = frameTable(parseFolded(FOLDED));
  const ids = t.name.map((_, i) => i);
  const c = decodeChunk(chunkBytes(t, ids, 0, 4));
  assert.equal(c.n, t.name.length);
  assert.equal(c.depthLo, 0);
  assert.equal(c.depthHi, 4);
  assert.deepEqual([...c.rowStart], [0, 1, 3, 5, 6]);
  assert.ok(c.offset instanceof Uint32Array && c.id instanceof Uint32Array);
  // depth 1: main [0,10) then other [10,11)
  assert.deepEqual([...c.offset.slice(1, 3)], [0, 10]);
  assert.deepEqual([...c.total.slice(1, 3)], [10, 1]);
  assert.deepEqual([...c.name.slice(1, 3)].map((n) => t.names[n]), ["main", "other"]);
  assert.equal(c.parent[0], 0xffffffff);
  assert.equal(c.diff, false);
  assert.equal(c.beforeTotal, null);
});

test("decodeChunk reads the differential columns when flag bit 0 is set", () => {
  const t = frameTable(parseFolded(FOLDED));
  const ids = t.name.map((_, i) => i);
  const diff = { beforeTotal: t.total.map((v) => v * 2), beforeSelf: t.self.map((v) => v + 1) };
  const c = decodeChunk(chunkBytes(t, ids, 0, 4, { diff }));
  assert.equal(c.diff, true);
  assert.equal(c.beforeTotal[0], 22);
  assert.equal(c.beforeSelf[0], 1);
  assert.equal(c.name[1], t.names.indexOf("main"));
});

test("unionWidth is floor(v · 2^30 / of) exactly, as BigInt reckons it", () => {
  const exact = (v, of) => (of === 0 ? 0 : Number((BigInt(v) << 30n) / BigInt(of)));
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor((seed / 2147483648) * n);
  };
  const cases = [[0, 0], [0, 7], [7, 7], [1, 3], [2, 3], [4294967295, 4294967295], [1, 4294967295], [4294967294, 4294967295], [3, 2 ** 40], [2 ** 40 - 1, 2 ** 40], [2 ** 52, 2 ** 53 - 1]];
  // v · 2^30 one less than a multiple of `of`: the quotient is 1/of below an integer, which
  // one division in doubles rounds up to it (Python: v = -pow(2**30, -1, of) % of).
  cases.push([4294967291, 4294967295], [3435973832, 4294967291], [3460881921, 4000000007], [320088464, 3000000019], [1952257872, 2147483659]);
  for (let i = 0; i < 20000; i++) {
    const of = 1 + rand(i % 2 ? 4294967295 : 1000);
    cases.push([rand(of + 1), of]);
  }
  for (const [v, of] of cases) assert.equal(unionWidth(v, of), exact(v, of), `${v} of ${of}`);
});

test("decodeChunk of a comparison (version 4) computes the widths from the values, per layout", () => {
  const t = frameTable(parseFolded(FOLDED));
  const ids = t.name.map((_, i) => i);
  const diff = { beforeTotal: t.total.map((v) => v * 3), beforeSelf: t.self.map((v) => v * 3), afterTotal: t.total, afterSelf: t.self };
  const bytes = chunkBytes(t, ids, 0, 4, { diff, version: 4 });
  const [tb, ta] = [diff.beforeTotal[0], diff.afterTotal[0]];
  const u = decodeChunk(bytes, "c/0-0.bin", { layout: "union", tb, ta });
  const w = (v, of) => Math.floor((v * 2 ** 30) / of); // exact here: small values
  for (let i = 0; i < u.n; i++) {
    const r = u.id[i];
    assert.equal(u.total[i], w(diff.beforeTotal[r], tb) + w(diff.afterTotal[r], ta), `total of frame ${r}`);
    assert.equal(u.self[i], w(diff.beforeSelf[r], tb) + w(diff.afterSelf[r], ta), `self of frame ${r}`);
    assert.equal(u.afterTotal[i], t.total[r]);
  }
  assert.equal(u.total[0], 2 ** 31, "the root: each run one whole");
  const after = decodeChunk(bytes, "c/0-0.bin", { layout: "after", tb, ta });
  assert.deepEqual([...after.total], [...after.afterTotal]);
  const before = decodeChunk(bytes, "c/0-0.bin", { layout: "before", tb, ta });
  assert.deepEqual([...before.self], [...before.beforeSelf]);
  assert.throws(() => decodeChunk(bytes, "c/0-0.bin"), /c\/0-0\.bin: is a comparison's chunk, read without its manifest/);
});

test("decodeChunk accepts an unaligned view by copying it", () => {
  const t = frameTable(parseFolded(FOLDED));
  const bytes = new Uint8Array(chunkBytes(t, [0, 1, 5], 0, 2));
  const big = new Uint8Array(bytes.length + 3);
  big.set(bytes, 3);
  const c = decodeChunk(big.subarray(3));
  assert.equal(c.n, 3);
  assert.equal(c.total[0], 11);
});

test("decodeChunk refuses bad magic, versions, truncation and bad row indexes", () => {
  const t = frameTable(parseFolded(FOLDED));
  const good = chunkBytes(t, [0, 1, 5], 0, 2);
  assert.throws(() => decodeChunk(chunkBytes(t, [0], 0, 1, { magic: "XXXX" }), "c/0-0.bin"), /c\/0-0\.bin: not a FSCH file/);
  assert.throws(() => decodeChunk(chunkBytes(t, [0], 0, 1, { version: 7 })), /version 7 is not supported/);
  assert.throws(() => decodeChunk(good.slice(0, good.byteLength - 4)), /truncated or corrupt/);
  assert.throws(() => decodeChunk(new ArrayBuffer(10)), GraphError);
  const bad = good.slice(0);
  new DataView(bad).setUint32(28, 9, true); // row_start[1] beyond n
  assert.throws(() => decodeChunk(bad), /row index/);
});

test("decodeSearch reads interval lists per name", () => {
  const per = [[[0, 11]], [[0, 7]], [[0, 5], [8, 9]], []];
  const b = decodeSearch(searchBytes(per, 1, 4));
  assert.equal(b.nameLo, 1);
  assert.equal(b.nameHi, 4);
  assert.equal(b.k, 3);
  assert.deepEqual([...b.start], [0, 1, 3, 3]);
  assert.deepEqual([...b.iv], [0, 7, 0, 5, 8, 9]);
  for (const [version, values, w] of [[2, "f64", 8], [1, "u32", 8]]) {
    const wide = decodeSearch(searchBytes(per, 1, 4, { version, values }));
    assert.ok(wide.iv instanceof Float64Array, `version ${version}, ${values}: ${w}-byte values`);
    assert.deepEqual([...wide.iv], [0, 7, 0, 5, 8, 9]);
  }
  assert.ok(b.iv instanceof Uint32Array);
  const bytes = searchBytes(per, 0, 2);
  assert.throws(() => decodeSearch(bytes.slice(0, bytes.byteLength - 8), "s/0.bin"), /s\/0\.bin: is \d+ bytes, expected/);
});

test("a comparison's search file (version 5) reads back every frame's offset, id, span and values, big ones too", () => {
  // Name 1: frames 1 (300 descendants, 1000 → 7), 400 and 70,000 (a step past two bytes);
  // name 2: frame 65,536 (its first: a step from 0 past two bytes; 0 → 254).
  const f = (id, last, lo, width, before, after) => ({ id, last, lo, width, before, after });
  const per = [[], [f(1, 301, 0, 60, 1000, 7), f(400, 400, 70, 5, 3, 255), f(70000, 70000, 90, 1, 1, 1)], [f(65536, 65536, 0, 1, 0, 254)]];
  for (const values of ["u32", "f64"]) {
    const bytes = diffSearchBytes(per, 1, 3, { values });
    const b = decodeSearch(bytes, "s/0.bin");
    assert.equal(b.diff, true);
    assert.deepEqual([b.nameLo, b.nameHi, b.k, [...b.start]], [1, 3, 4, [0, 3, 4]]);
    assert.deepEqual([...b.lo], [0, 70, 90, 0]);
    assert.deepEqual([...idsOf(b)], [1, 400, 70000, 65536], "ids from their steps, big ones too");
    assert.deepEqual([...b.span], [300, 0, 0, 0], "300 descendants: a big entry");
    assert.deepEqual([...b.before], [1000, 3, 1, 0]);
    assert.deepEqual([...b.after], [7, 255, 1, 254], "255 is big, 254 fits in its byte");
    assert.equal(b.width, null, "widths follow from the values");
    assert.ok(b.before instanceof (values === "u32" ? Uint32Array : Float64Array));
    // Its extents in the union layout of runs of 2^30 and 2^31 samples: 1000 + 3, 3 + 127, 1 + 0.
    assert.deepEqual([...nameIntervals(b, 1, { tb: 2 ** 30, ta: 2 ** 31 })], [0, 1003, 70, 200, 90, 91]);
    assert.throws(() => decodeSearch(bytes.slice(0, bytes.byteLength - 1), "s/0.bin"), /s\/0\.bin: is \d+ bytes, expected/);
    assert.throws(() => decodeSearch(bytes.slice(0, 30), "s/0.bin"), /s\/0\.bin: is 30 bytes, expected/);
  }
  // A big entry's index past the entries: refused, not written out of place.
  const bytes = diffSearchBytes(per, 1, 3);
  const dv = new DataView(bytes);
  const k = 4;
  // After the header, start[3] and the four counts (56 bytes): the values (k offsets, a big
  // before, a big after), the two big id steps and the big span, then the id steps' indices.
  const indexAt = 56 + 4 * (k + 2) + 4 * 3;
  assert.equal(dv.getUint32(indexAt + 4, true), 3, "the second big id step is entry 3");
  dv.setUint32(indexAt + 4, 4, true);
  assert.throws(() => decodeSearch(bytes, "s/0.bin"), /s\/0\.bin: entry 4 of a column is out of range/);
  // Version 4 files (extents, then before, after, id and last) read back alike, their widths kept.
  const old = decodeSearch(diffSearchBytes(per, 1, 3, { version: 4 }));
  assert.deepEqual([[...old.lo], [...old.width], [...old.span], [...old.before], [...old.after], [...idsOf(old)]], [[0, 70, 90, 0], [60, 5, 1, 1], [300, 0, 0, 0], [1000, 3, 1, 0], [7, 255, 1, 254], [1, 400, 70000, 65536]]);
  assert.deepEqual([...nameIntervals(old, 1, null)], [0, 60, 70, 75, 90, 91]);
});

test("checkManifest and checkNames refuse what they do not know", () => {
  const { manifest, files } = buildGraph(parseFolded(FOLDED), { namesPerFile: 2 });
  assert.equal(checkManifest(manifest), manifest);
  for (let v = 1; v <= 12; v++) assert.equal(checkManifest({ ...manifest, version: v }).version, v, `version ${v}`);
  assert.throws(() => checkManifest({ ...manifest, version: 13 }), /version 13 is not supported \(this page reads versions 1 to 12\)/);
  assert.throws(() => checkManifest({ format: "x" }), /not a flamesite graph manifest/);
  assert.throws(() => checkManifest({ ...manifest, names: [manifest.names[1]] }), /do not cover the name ids/);
  // A name file's entry without its file, or no entry at all: the manifest's fault, said as such.
  const [first, ...rest] = manifest.names;
  const { file: _, ...noFile } = first;
  const refused = (names) => assert.throws(() => checkManifest({ ...manifest, names }), (e) => e instanceof GraphError && /do not cover the name ids/.test(e.message));
  refused([noFile, ...rest]);
  refused([{ ...first, file: 7 }, ...rest]);
  refused([null, ...rest]);
  const entry = manifest.names[0];
  const nm = files.get(entry.file);
  assert.equal(checkNames(nm, entry), nm);
  assert.throws(() => checkNames({ ...nm, self: [1] }, entry), /differ in length/);
  assert.throws(() => checkNames({ ...nm, colors: [1] }, entry), /differ in length/);
  assert.throws(() => checkNames({ ...nm, names: undefined }, entry), /lacks one of names, self, total/);
  // Version 9 name files have no colours.
  const { colors, ...plain } = nm;
  assert.equal(checkNames(plain, entry), plain);
  assert.throws(() => checkNames(nm, { names: [0, 9] }, "n/0.json"), /n\/0\.json: has 2 names, the manifest says 9/);
});

test("name ids follow first use, so the root view's chunks need the first name file", () => {
  const { manifest, names } = buildGraph(parseFolded(FOLDED), { rootWidth: 4, depthBlock: 1, namesPerFile: 3 });
  assert.equal(names.names[0], "all");
  const class0 = manifest.chunks.filter((c) => c.class === 0);
  assert.ok(Math.max(...class0.map((c) => c.name_max)) < Math.max(...manifest.chunks.map((c) => c.name_max)));
  const t = new NameTable(manifest.names);
  assert.equal(t.count, names.names.length);
  assert.equal(t.fileOf(0), 0);
  assert.equal(t.fileOf(3), 1);
  assert.equal(t.fileOf(t.count - 1), manifest.names.length - 1);
  assert.equal(t.hasUpTo(0), false);
});

test("a name file without colours has them reckoned from its names in the manifest's palette", () => {
  const files = [{ file: "n/0.json.gz", names: [0, 3] }, { file: "n/1.json.gz", names: [3, 4] }];
  const names = ["all", "std::vector<int>::push_back", "copy_user_enhanced_fast_string_[k]", "java.util.HashMap.get"];
  for (const [palette, colour] of [["hot", hotColor], ["lang", langColor]]) {
    const t = new NameTable(files, palette);
    t.fill(0, { names: names.slice(0, 3), self: [0, 1, 2], total: [9, 1, 2] });
    // A file that has them (version 8 and before) keeps its own.
    t.fill(1, { names: names.slice(3), colors: [0x123456], self: [3], total: [3] });
    assert.deepEqual([...t.colors], [...names.slice(0, 3).map(colour), 0x123456], palette);
  }
  assert.notEqual(hotColor(names[1]), langColor(names[1]));
});

test("a name file's raw forms reach the frames they name, and a raw list of another length is refused", () => {
  const files = [{ file: "n/0.json.gz", names: [0, 3] }];
  const nm = { names: ["all", "App$$Lambda_.run", "main"], self: [0, 1, 2], total: [3, 1, 2], raw: [null, "App$$Lambda$75.0x00007ff44c0c4208.run", null] };
  assert.equal(checkNames(nm, files[0]), nm);
  assert.throws(() => checkNames({ ...nm, raw: [null] }, files[0]), /differ in length/);
  const t = new NameTable(files);
  t.fill(0, nm);
  assert.deepEqual([...t.raw], [[1, "App$$Lambda$75.0x00007ff44c0c4208.run"]]);
  // A file without them (every file before they were written) leaves the map empty.
  const old = new NameTable(files);
  old.fill(0, { names: nm.names, self: nm.self, total: nm.total });
  assert.equal(old.raw.size, 0);
});

test("GraphSource fetches each file once, lists loaded chunks, and reports failures by file", async () => {
  const g = buildGraph(parseFolded(FOLDED), { rootWidth: 4, depthBlock: 1, namesPerFile: 4 });
  const base = "http://x/perf/p/a/g/samples/";
  g.files.delete(g.manifest.chunks[1].file);
  const corrupt = g.manifest.chunks[2];
  g.files.set(corrupt.file, new ArrayBuffer(40));
  const f = memoryFetch(g.files, base);
  const src = new GraphSource(base, f);
  const m = await src.manifest();
  await src.manifest();
  const nt = src.nameTable(m);
  await src.namesUpTo(nt, 0);
  assert.equal(nt.names[0], "all");
  assert.equal(nt.hasUpTo(0), true);
  assert.equal(nt.complete(), m.names.length === 1);
  await src.allNames(nt);
  assert.equal(nt.complete(), true);
  assert.deepEqual(src.namesLoaded, m.names.map((n) => base + n.file));
  const c0 = await src.chunk(m.chunks[0]);
  const again = await src.chunk(m.chunks[0]);
  assert.equal(c0, again);
  assert.equal(src.ready(m.chunks[0]), c0);
  assert.equal(f.calls.filter((u) => u.endsWith(m.chunks[0].file)).length, 1);
  assert.deepEqual(src.loaded, [base + m.chunks[0].file]);
  await assert.rejects(src.chunk(m.chunks[1]), new RegExp(`${m.chunks[1].file}: could not be fetched \\(HTTP 404 Not Found\\)`));
  await assert.rejects(src.chunk(corrupt), /c\/0-2\.bin: not a FSCH file/);
  assert.equal(src.failed(m.chunks[1]), true);
  assert.equal(src.failed(m.chunks[0]), false);
  assert.equal(src.errors.length, 2);
  assert.equal(src.pending, 0);
  const b = await src.bucket(m.search[0]);
  assert.equal(b.nameLo, 0);
  assert.deepEqual(src.bucketsLoaded, [base + m.search[0].file]);
});

test("GraphSource unpacks gzip-packed files and takes files a host already unpacked as they are", async () => {
  const g = buildGraph(parseFolded(FOLDED), { rootWidth: 4, depthBlock: 1, namesPerFile: 4 });
  const base = "http://x/g/";
  const plain = new GraphSource(base, memoryFetch(g.files, base));
  const packed = new Map();
  for (const [file, v] of g.files) {
    if (file !== "manifest.json") packed.set(file, new Uint8Array(gzipSync(v instanceof ArrayBuffer ? new Uint8Array(v) : typeof v === "string" ? v : JSON.stringify(v))));
  }
  // manifest.json stays as it is; version 9 puts it packed beside it, which the page reads.
  // Its entries give the packed files' sizes, as the build's do.
  const manifest = structuredClone(g.files.get("manifest.json"));
  for (const e of [...manifest.chunks, ...manifest.names, ...manifest.search]) e.bytes = packed.get(e.file).length;
  packed.set("manifest.json", manifest).set("manifest.json.gz", new Uint8Array(gzipSync(JSON.stringify(manifest))));
  const f = memoryFetch(packed, base);
  const src = new GraphSource(base, f);
  const m = await src.manifest();
  assert.deepEqual(f.calls, [base + "manifest.json.gz"]);
  const [nt, ntPlain] = [src.nameTable(m), plain.nameTable(await plain.manifest())];
  await src.allNames(nt);
  await plain.allNames(ntPlain);
  assert.deepEqual(nt.names, ntPlain.names);
  assert.deepEqual([...nt.total], [...ntPlain.total]);
  for (const e of m.chunks) {
    const [a, b] = [await src.chunk(e), await plain.chunk(e)];
    assert.deepEqual([...a.offset, ...a.total, ...a.name], [...b.offset, ...b.total, ...b.name]);
  }
  const [ba, bb] = [await src.bucket(m.search[0]), await plain.bucket(m.search[0])];
  assert.deepEqual([...ba.iv], [...bb.iv]);
  // A member cut short is an error that names the file, not a hang or a wrong graph.
  const cut = packed.get(m.chunks[0].file);
  packed.set(m.chunks[0].file, cut.slice(0, cut.length - 9));
  const broken = new GraphSource(base, memoryFetch(packed, base));
  await broken.manifest();
  // By its size, where the manifest gives it; by its gzip data where it does not.
  await assert.rejects(broken.chunk(m.chunks[0]), new RegExp(`${m.chunks[0].file}: is ${cut.length - 9} bytes where its manifest says ${cut.length}`));
  const unsized = new GraphSource(base, memoryFetch(packed, base));
  await unsized.manifest();
  await assert.rejects(unsized.chunk({ ...m.chunks[0], bytes: undefined }), new RegExp(`${m.chunks[0].file}: is truncated or corrupt \\(its gzip data does not decompress\\)`));
});

test("GraphSource checks a chunk against its manifest entry", async () => {
  const g = buildGraph(parseFolded(FOLDED));
  const base = "http://x/g/";
  const src = new GraphSource(base, memoryFetch(g.files, base));
  const e = { ...g.manifest.chunks[0], frames: g.manifest.chunks[0].frames + 1 };
  await assert.rejects(src.chunk(e), /does not match its manifest entry \(depths or frame count differ\): if the graph is being published again/);
});

test("GraphSource refuses a packed file whose size is not its manifest entry's, and takes an unpacked one by what it holds", async () => {
  const g = buildGraph(parseFolded(FOLDED));
  const base = "http://x/g/";
  const entry = g.manifest.chunks[0];
  const chunk = g.files.get(entry.file);
  const packed = new Map(g.files).set(entry.file, new Uint8Array(gzipSync(chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : chunk)));
  const size = packed.get(entry.file).length;
  // As a bucket publish cut off half-way leaves it: the file of a newer build, of another size.
  const src = new GraphSource(base, memoryFetch(packed, base));
  await assert.rejects(src.chunk({ ...entry, bytes: size + 1 }), new RegExp(`${entry.file}: is ${size} bytes where its manifest says ${size + 1}, truncated or corrupt or of another build: if the graph is being published again, or its last publish was cut off, reload`));
  assert.equal(src.failed({ ...entry, bytes: size + 1 }), true);
  // The size it has: read.
  const ok = new GraphSource(base, memoryFetch(packed, base));
  assert.equal((await ok.chunk({ ...entry, bytes: size })).n, entry.frames);
  // A host that unpacked it on the way: its size is not the packed one, and it is read.
  const unpacked = new GraphSource(base, memoryFetch(g.files, base));
  assert.equal((await unpacked.chunk({ ...entry, bytes: size })).n, entry.frames);
});

test("layoutView: a plain graph with left-heavy offsets is shown left-heavy only when asked", () => {
  const m = { format: "flamesite-graph", total: 10, chunks: [{ file: "c/0.bin", offset: [0, 10], left: [2, 12] }] };
  for (const layout of [null, undefined, "", "union", "after", "before"]) assert.equal(layoutView(m, layout), m, String(layout));
  const left = layoutView(m, "left");
  assert.equal(left.layout, "left");
  assert.deepEqual(left.chunks[0].offset, [2, 12]);
  assert.deepEqual(left.chunks[0].nameOffset, [0, 10], "the default layout's, for search intervals");
  const noLeft = { ...m, chunks: [{ file: "c/0.bin", offset: [0, 10] }] };
  assert.equal(layoutView(noLeft, "left"), noLeft, "no left-heavy offsets: as it is");
});
