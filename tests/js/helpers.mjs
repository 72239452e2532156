// Test helpers: a small reference build in JS (folded stacks → frame table → chunk and search
// bucket files, byte for byte as docs/FORMAT.md describes), so the page modules are tested on
// buffers made independently of the Rust writer.

const enc = new TextEncoder();

/** Compare strings by their UTF-8 bytes, the order of FORMAT.md. */
export function byteOrder(a, b) {
  const x = enc.encode(a);
  const y = enc.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** Parse folded text ("a;b;c 42" per line) into [[frames], count]. */
export function parseFolded(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const m = /^(.*) (\d+)$/.exec(line.trim());
    if (m) out.push([m[1].split(";"), Number(m[2])]);
  }
  return out;
}

/** Merge stacks into a frame table laid out as FORMAT.md says. */
export function frameTable(stacks) {
  const root = { name: "all", kids: new Map(), self: 0 };
  for (const [frames, count] of stacks) {
    let node = root;
    for (const f of frames) {
      if (!node.kids.has(f)) node.kids.set(f, { name: f, kids: new Map(), self: 0 });
      node = node.kids.get(f);
    }
    node.self += count;
  }
  const nameSet = new Set();
  (function collect(n) {
    for (const k of n.kids.values()) {
      nameSet.add(k.name);
      collect(k);
    }
  })(root);
  const names = ["all", ...[...nameSet].sort(byteOrder)];
  const nameId = new Map(names.map((n, i) => [n, i]));
  const t = { names, name: [], depth: [], parent: [], offset: [], total: [], self: [] };
  const rowEnd = [];
  function totalOf(n) {
    if (n.total === undefined) n.total = n.self + [...n.kids.values()].reduce((s, k) => s + totalOf(k), 0);
    return n.total;
  }
  totalOf(root);
  (function lay(n, depth, parent, offset) {
    const id = t.name.length;
    t.name.push(depth === 0 ? 0 : nameId.get(n.name));
    t.depth.push(depth);
    t.parent.push(parent);
    t.offset.push(offset);
    t.total.push(n.total);
    t.self.push(n.self);
    let o = offset;
    for (const k of [...n.kids.values()].sort((a, b) => byteOrder(a.name, b.name))) {
      lay(k, depth + 1, id, o);
      o += k.total;
    }
    rowEnd[depth] = Math.max(rowEnd[depth] || 0, offset + n.total);
  })(root, 0, 0xffffffff, 0);
  return t;
}

const pad8 = (x) => (x + 7) & ~7;

/**
 * Bytes of a chunk file holding frame ids `ids` (any order) of table `t`; `values` "u32" or
 * "f64" (version 1 files always hold f64); `diff` the before columns (version 2) or the before
 * and after columns (version 4: { beforeTotal, beforeSelf, afterTotal, afterSelf }). `coded`,
 * when given, is each frame's width by id (`t.total` for a plain graph, a layout's widths for
 * a comparison): the columns are then coded as FORMAT.md "Coded columns" says (flag 4).
 * `layouts` (version 6, coded): `{ after: [offsets, widths], before: [offsets, widths] }` by
 * id, whose gaps follow the union's offsets. `fromParents` (with `parentRows`, flag 16): an
 * offset that follows no sibling in the chunk is its gap from its parent's when the parent is
 * in the chunk. `unionFromLayouts` (with `layouts` and `fromParents`, flag 32): a union offset
 * that follows neither a sibling nor its parent in the chunk is the step of its residual (the
 * offset less floor(before · 2^30 / TB) + floor(after · 2^30 / TA) of its before and after
 * offsets) from the row before's at its depth.
 */
export function chunkBytes(t, ids, depthLo, depthHi, { diff = null, version = 2, magic = "FSCH", values = "u32", coded = null, layouts = null, parentRows = false, fromParents = false, unionFromLayouts = false } = {}) {
  const narrow = version >= 2 && values === "u32";
  const w = narrow ? 4 : 8;
  const rows = [...ids].sort((a, b) => t.depth[a] - t.depth[b] || t.offset[a] - t.offset[b] || a - b);
  const n = rows.length;
  const m = depthHi - depthLo + 1;
  const a = pad8(24 + 4 * m);
  // Version 4 (a comparison): the before and after columns instead of the widths.
  const fcols = layouts ? 7 : diff ? 5 : 3;
  // With parentRows (docs/FORMAT.md "Coded columns"): each parent as the row it is in the chunk,
  // counted from the row of the parent before, or 0xFFFFFFFF and listed after the columns when
  // it is not in the chunk; each id from the row before's (same parent) or from its parent's.
  const outside = [];
  let parentCodes = null;
  let idCodes = null;
  if (parentRows) {
    const rowOf = new Map(rows.map((r, i) => [r, i]));
    let lastRow = 0;
    parentCodes = rows.map((r, i) => {
      const j = rowOf.get(t.parent[r]);
      if (j !== undefined && j < i && j >= lastRow) {
        const code = j - lastRow;
        lastRow = j;
        return code;
      }
      outside.push(t.parent[r] >>> 0);
      return 0xffffffff;
    });
    idCodes = rows.map((r, i) => (i > 0 && t.parent[rows[i - 1]] === t.parent[r] ? r - rows[i - 1] : r - t.parent[r]) >>> 0);
  }
  const buf = new ArrayBuffer(a + w * fcols * n + 12 * n + (parentRows ? 4 + 4 * outside.length : 0));
  const dv = new DataView(buf);
  for (let i = 0; i < 4; i++) dv.setUint8(i, magic.charCodeAt(i));
  dv.setUint32(4, version, true);
  dv.setUint32(8, (diff ? 1 : 0) | (narrow ? 2 : 0) | (coded ? 4 : 0) | (parentRows ? 8 : 0) | (fromParents ? 16 : 0) | (unionFromLayouts ? 32 : 0), true);
  dv.setUint32(12, n, true);
  dv.setUint32(16, depthLo, true);
  dv.setUint32(20, depthHi, true);
  for (let i = 0; i < m; i++) {
    const d = depthLo + i;
    dv.setUint32(24 + 4 * i, rows.filter((r) => t.depth[r] < d).length, true);
  }
  const byRow = (col) => rows.map((r) => col[r]);
  const cols = (diff && version >= 4 ? [t.offset, diff.beforeTotal, diff.beforeSelf, diff.afterTotal, diff.afterSelf] : [t.offset, t.total, t.self]).map(byRow);
  if (diff && version < 4) cols.push(byRow(diff.beforeTotal), byRow(diff.beforeSelf));
  const ints = [rows, byRow(t.parent), byRow(t.name)];
  if (coded) {
    // Offsets as gaps after the frame before at the same depth, ids and parents as steps.
    // With fromParents, a frame that follows no sibling and whose parent is in the chunk: the
    // gap from its parent's offset.
    const inChunk = new Set(rows);
    const gaps = (offset, width, residual = null) =>
      rows.map((r, i) => {
        const prev = i > 0 && t.depth[rows[i - 1]] === t.depth[r] ? rows[i - 1] : null;
        const sibling = prev !== null && t.parent[prev] === t.parent[r];
        if (fromParents && !sibling && inChunk.has(t.parent[r])) return offset[r] - offset[t.parent[r]];
        if (residual && !sibling) return prev !== null ? residual(r) - residual(prev) : residual(r);
        return prev !== null ? offset[r] - offset[prev] - width[prev] : offset[r];
      });
    // floor(v · 2^30 / T), by BigInt.
    const share = (v, T) => (T === 0 ? 0 : Number((BigInt(v) << 30n) / BigInt(T)));
    const residual = unionFromLayouts
      ? (r) => t.offset[r] - share(layouts.before[0][r], layouts.before[0][0] + layouts.before[1][0]) - share(layouts.after[0][r], layouts.after[0][0] + layouts.after[1][0])
      : null;
    cols[0] = gaps(t.offset, coded, residual);
    if (layouts) cols.splice(1, 0, gaps(...layouts.after), gaps(...layouts.before));
    for (const c of [0, 1]) ints[c] = ints[c].map((v, i) => (i > 0 ? (v - ints[c][i - 1]) >>> 0 : v));
    if (parentRows) [ints[0], ints[1]] = [idCodes, parentCodes];
  }
  // One value of `width` bytes at byte `at` of the file; with `coded`, byte k of value i of a
  // column of n values starting at `base` goes to base + k · n + i (its byte planes).
  const bytes = new Uint8Array(buf);
  const put = (base, i, width, v) => {
    const one = new DataView(new ArrayBuffer(width));
    if (width === 4) one.setUint32(0, v, true);
    else one.setFloat64(0, v, true);
    for (let k = 0; k < width; k++) bytes[coded ? base + k * n + i : base + i * width + k] = one.getUint8(k);
  };
  let at = a;
  for (const col of cols) {
    col.forEach((v, i) => put(at, i, w, narrow ? v >>> 0 : v));
    at += w * n;
  }
  for (const col of ints) {
    col.forEach((v, i) => put(at, i, 4, v));
    at += 4 * n;
  }
  if (parentRows) {
    // The parents outside the chunk: their count, then each as its step from the one before,
    // in byte planes.
    dv.setUint32(at, outside.length, true);
    const steps = outside.map((p, k) => (k > 0 ? p - outside[k - 1] : p) >>> 0);
    steps.forEach((v, k) => {
      for (let b = 0; b < 4; b++) bytes[at + 4 + b * steps.length + k] = (v >>> (8 * b)) & 255;
    });
  }
  return buf;
}

/**
 * Bytes of the file of left-heavy offsets (`FSLH`) of the chunk of frame ids `ids` of table
 * `t`, rows in the chunk's order: each frame's left-heavy offset (`left`, by id) less its
 * parent's (the root: its own), u32 in byte planes.
 */
export function leftBytes(t, ids, left) {
  const rows = [...ids].sort((a, b) => t.depth[a] - t.depth[b] || t.offset[a] - t.offset[b] || a - b);
  const n = rows.length;
  const buf = new ArrayBuffer(16 + 4 * n);
  const dv = new DataView(buf);
  for (let i = 0; i < 4; i++) dv.setUint8(i, "FSLH".charCodeAt(i));
  dv.setUint32(4, 1, true);
  dv.setUint32(8, 2, true);
  dv.setUint32(12, n, true);
  const bytes = new Uint8Array(buf);
  rows.forEach((r, i) => {
    const v = (r === 0 ? left[r] : left[r] - left[t.parent[r]]) >>> 0;
    for (let k = 0; k < 4; k++) bytes[16 + k * n + i] = (v >>> (8 * k)) & 255;
  });
  return buf;
}

/**
 * Each frame's left-heavy offset (children heaviest first, equal totals by id, which is name
 * order), by id, from table `t`.
 */
export function leftHeavyOffsets(t) {
  const left = new Array(t.name.length).fill(0);
  const kids = t.name.map(() => []);
  for (let i = 1; i < t.name.length; i++) kids[t.parent[i]].push(i);
  for (let p = 0; p < t.name.length; p++) {
    let o = left[p];
    for (const k of kids[p].sort((a, b) => t.total[b] - t.total[a] || a - b)) {
      left[k] = o;
      o += t.total[k];
    }
  }
  return left;
}

/** Per name id, the union of the extents of its frames as sorted disjoint intervals. */
export function nameIntervals(t) {
  const per = t.names.map(() => []);
  for (let i = 0; i < t.name.length; i++) if (t.total[i] > 0) per[t.name[i]].push([t.offset[i], t.offset[i] + t.total[i]]);
  return per.map((list) => {
    list.sort((a, b) => a[0] - b[0]);
    const out = [];
    for (const [s, e] of list) {
      if (out.length && s <= out[out.length - 1][1]) out[out.length - 1][1] = Math.max(out[out.length - 1][1], e);
      else out.push([s, e]);
    }
    return out;
  });
}

/** Bytes of a search bucket for names [lo, hi) given per-name interval lists; `values` as for chunkBytes. */
export function searchBytes(per, lo, hi, { version = 2, values = "u32", coded = false } = {}) {
  const narrow = version >= 2 && values === "u32";
  const w = narrow ? 4 : 8;
  const m = hi - lo + 1;
  const a = pad8(24 + 4 * m);
  let k = 0;
  for (let n = lo; n < hi; n++) k += per[n].length;
  const buf = new ArrayBuffer(a + 2 * w * k);
  const dv = new DataView(buf);
  "FSSI".split("").forEach((c, i) => dv.setUint8(i, c.charCodeAt(0)));
  dv.setUint32(4, version, true);
  dv.setUint32(8, lo, true);
  dv.setUint32(12, hi, true);
  dv.setUint32(16, k, true);
  dv.setUint32(20, (narrow ? 1 : 0) | (coded ? 4 : 0), true);
  let j = 0;
  let at = a;
  const gaps = [];
  const lengths = [];
  for (let n = lo; n < hi; n++) {
    dv.setUint32(24 + 4 * (n - lo), j, true);
    let end = 0;
    for (const [s, e] of per[n]) {
      gaps.push(s - end);
      lengths.push(e - s);
      end = e;
      if (narrow) {
        dv.setUint32(at, s, true);
        dv.setUint32(at + 4, e, true);
      } else {
        dv.setFloat64(at, s, true);
        dv.setFloat64(at + 8, e, true);
      }
      at += 2 * w;
      j += 1;
    }
  }
  dv.setUint32(24 + 4 * (hi - lo), j, true);
  if (coded) {
    // Gaps after the name's interval before, then lengths, each column in byte planes.
    const bytes = new Uint8Array(buf);
    [gaps, lengths].forEach((col, c) =>
      col.forEach((v, i) => {
        const one = new DataView(new ArrayBuffer(w));
        if (narrow) one.setUint32(0, v, true);
        else one.setFloat64(0, v, true);
        for (let b = 0; b < w; b++) bytes[a + c * w * k + b * k + i] = one.getUint8(b);
      }),
    );
  }
  return buf;
}

/**
 * A whole graph folder in memory, split as FORMAT.md "Width classes" says, with `depthBlock`
 * depths per chunk and fine chunks split into `offsetSplits` offset ranges; name ids renumbered
 * in order of first use (chunks in manifest order, rows in order) and the name table split
 * into files of `namesPerFile` ids. Returns { table, manifest, names, files: Map(file -> ArrayBuffer | object) }
 * where `names` is the whole name table (all four arrays) for the tests' convenience.
 */
export function buildGraph(stacks, { rootWidth = 1000, classFactor = 8, depthBlock = 4, offsetSplits = 2, bucketNames = 3, namesPerFile = 1000 } = {}) {
  const laid = frameTable(stacks);
  const T = laid.total[0];
  const W = rootWidth;
  const F = classFactor;
  let kmax = 1;
  while (W * F ** kmax < T) kmax += 1;
  const classOf = (tot) => {
    if (tot === 0) return kmax;
    if (tot * W >= T) return 0;
    let k = 1;
    while (tot * W * F ** k < T && k < kmax) k += 1;
    return k;
  };
  const depth = Math.max(...laid.depth) + 1;
  const groups = new Map();
  for (let i = 0; i < laid.name.length; i++) {
    const k = classOf(laid.total[i]);
    const block = Math.floor(laid.depth[i] / depthBlock);
    const part = k === 0 ? 0 : Math.min(offsetSplits - 1, Math.floor((laid.offset[i] / T) * offsetSplits));
    const key = `${k}/${block}/${part}`;
    if (!groups.has(key)) groups.set(key, { k, block, part, ids: [] });
    groups.get(key).ids.push(i);
  }
  const sorted = [...groups.values()].sort((a, b) => a.k - b.k || a.block - b.block || a.part - b.part);
  const rowOrder = (ids) => [...ids].sort((a, b) => laid.depth[a] - laid.depth[b] || laid.offset[a] - laid.offset[b] || a - b);
  // Name ids by first use.
  const newId = new Map();
  for (const g of sorted) for (const r of rowOrder(g.ids)) if (!newId.has(laid.name[r])) newId.set(laid.name[r], newId.size);
  const names = new Array(newId.size);
  for (const [old, id] of newId) names[id] = laid.names[old];
  const t = { ...laid, names, name: laid.name.map((n) => newId.get(n)) };
  const files = new Map();
  const chunks = [];
  const counters = new Map();
  for (const g of sorted) {
    const nth = counters.get(g.k) || 0;
    counters.set(g.k, nth + 1);
    const file = `c/${g.k}-${nth}.bin`;
    const lo = g.block * depthBlock;
    const hi = Math.min(depth, lo + depthBlock);
    const bytes = chunkBytes(t, g.ids, lo, hi);
    files.set(file, bytes);
    const offs = g.ids.map((i) => t.offset[i]);
    const ends = g.ids.map((i) => t.offset[i] + t.total[i]);
    chunks.push({
      file, class: g.k, depth: [lo, hi], offset: g.k === 0 ? [0, T] : [Math.min(...offs), Math.max(...ends)],
      frames: g.ids.length, max_total: Math.max(...g.ids.map((i) => t.total[i])),
      name_max: Math.max(...g.ids.map((i) => t.name[i])), bytes: bytes.byteLength,
    });
  }
  const per = nameIntervals(t);
  const search = [];
  for (let lo = 0, n = 0; lo < t.names.length; lo += bucketNames, n++) {
    const hi = Math.min(t.names.length, lo + bucketNames);
    const bytes = searchBytes(per, lo, hi);
    const file = `s/${n}.bin`;
    files.set(file, bytes);
    search.push({ file, names: [lo, hi], intervals: per.slice(lo, hi).reduce((s, l) => s + l.length, 0), bytes: bytes.byteLength });
  }
  const selfBy = t.names.map(() => 0);
  for (let i = 0; i < t.name.length; i++) selfBy[t.name[i]] += t.self[i];
  const table = {
    names: t.names,
    colors: t.names.map((_, i) => (i * 2654435761) & 0xffffff),
    self: selfBy,
    total: per.map((l) => l.reduce((s, [a, b]) => s + b - a, 0)),
  };
  const nameFiles = [];
  for (let lo = 0, k = 0; lo < t.names.length; lo += namesPerFile, k++) {
    const hi = Math.min(t.names.length, lo + namesPerFile);
    const file = `n/${k}.json`;
    const part = Object.fromEntries(Object.entries(table).map(([key, arr]) => [key, arr.slice(lo, hi)]));
    files.set(file, part);
    nameFiles.push({ file, names: [lo, hi], bytes: JSON.stringify(part).length });
  }
  const manifest = {
    format: "flamesite-graph", version: 2, values: "u32", graph: "samples", unit: "samples", differential: false,
    total: T, total_before: null, frames: t.name.length, depth, palette: "hot", root_width: W, class_factor: F,
    names: nameFiles, chunks, search,
  };
  files.set("manifest.json", manifest);
  return { table: t, manifest, names: table, files };
}

/** A fetch over an in-memory graph folder at `base`, counting requests per URL. */
export function memoryFetch(files, base) {
  const calls = [];
  const fn = async (url) => {
    calls.push(url);
    const file = url.slice(base.length);
    if (!files.has(file)) return new Response("", { status: 404, statusText: "Not Found" });
    const v = files.get(file);
    const body = typeof v === "string" ? v : v instanceof ArrayBuffer ? v.slice(0) : ArrayBuffer.isView(v) ? v.slice() : JSON.stringify(v);
    return new Response(body, { status: 200 });
  };
  fn.calls = calls;
  return fn;
}

/** Deterministic pseudo-random numbers (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A comparison of two sets of stacks (parseFolded's shape), as docs/FORMAT.md "Differential
 * graphs" lays out its union: every path of either is a frame, its `before` and `after` totals
 * from each set, its width `floor(before · 2^30 / TB) + floor(after · 2^30 / TA)` (exactly, in
 * BigInt), children in byte order of their names after their parent's offset. Frames are
 * numbered depth first; `last` is the id of a frame's last descendant. Returns { names, frames,
 * tb, ta } with `frames[id] = { id, name, depth, parent, lo, width, before, after, last,
 * beforeSelf, afterSelf, afterLo, beforeLo }`, the last two its offsets in the after and before
 * layouts (widths: its after and before values).
 */
export function diffTable(beforeStacks, afterStacks) {
  const root = { name: "all", kids: new Map(), before: 0, after: 0 };
  for (const [side, stacks] of [["before", beforeStacks], ["after", afterStacks]]) {
    for (const [frames, count] of stacks) {
      let node = root;
      node[side] += count;
      for (const f of frames) {
        if (!node.kids.has(f)) node.kids.set(f, { name: f, kids: new Map(), before: 0, after: 0 });
        node = node.kids.get(f);
        node[side] += count;
      }
    }
  }
  const tb = root.before;
  const ta = root.after;
  const share = (v, of) => (of === 0 ? 0 : Number((BigInt(v) << 30n) / BigInt(of)));
  const nameSet = new Set();
  const frames = [];
  (function lay(n, depth, parent, lo, afterLo, beforeLo) {
    const kids = [...n.kids.values()].sort((a, b) => byteOrder(a.name, b.name));
    const own = (side) => n[side] - kids.reduce((sum, k) => sum + k[side], 0);
    const f = { id: frames.length, name: n.name, depth, parent, lo, width: share(n.before, tb) + share(n.after, ta), before: n.before, after: n.after, last: 0 };
    Object.assign(f, { afterLo, beforeLo, beforeSelf: own("before"), afterSelf: own("after") });
    frames.push(f);
    if (depth > 0) nameSet.add(n.name);
    let [o, a, b] = [lo, afterLo, beforeLo];
    for (const k of kids) {
      lay(k, depth + 1, f.id, o, a, b);
      o += share(k.before, tb) + share(k.after, ta);
      a += k.after;
      b += k.before;
    }
    f.last = frames.length - 1;
  })(root, 0, 0xffffffff, 0, 0, 0);
  const names = ["all", ...[...nameSet].sort(byteOrder)];
  const id = new Map(names.map((n, i) => [n, i]));
  for (const f of frames) f.name = f.depth === 0 ? 0 : id.get(f.name);
  return { names, frames, tb, ta };
}

/** Per name id of a diffTable, its frames with no ancestor of the same name, in id order. */
export function topmostFrames(d) {
  const per = d.names.map(() => []);
  const open = d.names.map(() => 0);
  const path = [];
  for (const f of d.frames) {
    while (path.length > f.depth) open[path.pop().name] -= 1;
    if (open[f.name] === 0) per[f.name].push(f);
    open[f.name] += 1;
    path.push(f);
  }
  return per;
}

/**
 * Bytes of a differential search bucket for names [lo, hi) of per-name frame lists (diffTable's
 * frames): version 5 (offsets, then the id steps in u16 and span, before and after in bytes,
 * their big entries apart) or 4 (extents, before, after, id, last); `values` "u32" or "f64".
 */
export function diffSearchBytes(per, lo, hi, { version = 5, values = "u32" } = {}) {
  const w = values === "u32" ? 4 : 8;
  const m = hi - lo + 1;
  const list = per.slice(lo, hi).flat();
  const k = list.length;
  const steps = per.slice(lo, hi).flatMap((l) => l.map((f, j) => f.id - (j > 0 ? l[j - 1].id : 0)));
  const cols = [steps, list.map((f) => f.last - f.id), list.map((f) => f.before), list.map((f) => f.after)];
  const limits = [65535, 255, 255, 255];
  const big = cols.map((c, ci) => c.flatMap((v, i) => (v >= limits[ci] ? [[i, v]] : [])));
  const [ei, es, eb, ea] = big.map((b) => b.length);
  const a = pad8(24 + 4 * (version >= 5 ? m + 4 : m));
  const size = version >= 5 ? a + w * (k + eb + ea) + 4 * (2 * ei + 2 * es + eb + ea) + 5 * k : a + 4 * w * k + 8 * k;
  const buf = new ArrayBuffer(size);
  const dv = new DataView(buf);
  "FSSI".split("").forEach((c, i) => dv.setUint8(i, c.charCodeAt(0)));
  for (const [at, v] of [[4, version], [8, lo], [12, hi], [16, k], [20, (w === 4 ? 1 : 0) | 2]]) dv.setUint32(at, v, true);
  let j = 0;
  for (let n = lo; n <= hi; n++) {
    dv.setUint32(24 + 4 * (n - lo), j, true);
    if (n < hi) j += per[n].length;
  }
  let at = a;
  const value = (v) => {
    if (w === 4) dv.setUint32(at, v, true);
    else dv.setFloat64(at, v, true);
    at += w;
  };
  const u32 = (v) => {
    dv.setUint32(at, v, true);
    at += 4;
  };
  if (version < 5) {
    for (const f of list) (value(f.lo), value(f.lo + f.width));
    list.forEach((f) => value(f.before));
    list.forEach((f) => value(f.after));
    list.forEach((f) => u32(f.id));
    list.forEach((f) => u32(f.last));
    return buf;
  }
  big.forEach((b, c) => dv.setUint32(24 + 4 * (m + c), b.length, true));
  list.forEach((f) => value(f.lo));
  big[2].forEach(([, v]) => value(v));
  big[3].forEach(([, v]) => value(v));
  big[0].forEach(([, v]) => u32(v));
  big[1].forEach(([, v]) => u32(v));
  for (const b of big) b.forEach(([i]) => u32(i));
  for (const v of cols[0]) {
    dv.setUint16(at, Math.min(v, 65535), true);
    at += 2;
  }
  for (const c of cols.slice(1)) for (const v of c) dv.setUint8(at++, Math.min(v, 255));
  return buf;
}
