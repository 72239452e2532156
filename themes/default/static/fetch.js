// Fetching and decoding a graph's files (docs/FORMAT.md): manifest.json, name files
// `n/*.json`, frame chunks `c/*.bin` and search buckets `s/*.bin`. Binary files become typed-array views over
// the fetched ArrayBuffer, never one object per frame. Every file is fetched at most once for
// the life of the page; a failure is remembered too, with a message that says which file and why.

import { nameColor } from "./palette.js";
import { isPacked, unpack } from "./unpack.js";

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A file of the graph could not be fetched or is not what docs/FORMAT.md says. */
/**
 * Said of a file that disagrees with the manifest the page read: damaged, or of another build,
 * as happens while a site in a bucket is published (a graph's files are rewritten in place before its manifest), or
 * after a publish was cut off, until the next one repairs it.
 */
const REPUBLISHED = ": if the graph is being published again, or its last publish was cut off, reload the page in a while";

export class GraphError extends Error {
  constructor(file, why) {
    super(`${file}: ${why}`);
    this.name = "GraphError";
    this.file = file;
  }
}

/** The bytes as an ArrayBuffer whose start is 8-aligned, copying only when they are not. */
function alignedBuffer(data) {
  if (data instanceof ArrayBuffer) return data;
  if (ArrayBuffer.isView(data)) {
    if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) return data.buffer;
    return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  }
  throw new TypeError("expected an ArrayBuffer or a typed array");
}

// Typed views read the platform's byte order; the files are little-endian. On a big-endian
// machine (rare) copy each column through a DataView instead.
function f64s(buf, at, n) {
  if (LITTLE_ENDIAN) return new Float64Array(buf, at, n);
  const dv = new DataView(buf);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = dv.getFloat64(at + 8 * i, true);
  return out;
}
function u32s(buf, at, n) {
  if (LITTLE_ENDIAN) return new Uint32Array(buf, at, n);
  const dv = new DataView(buf);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = dv.getUint32(at + 4 * i, true);
  return out;
}

const pad8 = (x) => (x + 7) & ~7;

/** Flag of a chunk or search file whose columns are coded (docs/FORMAT.md "Coded columns"). */
const CODED = 4;
/** Flag of a coded chunk whose parents are rows of the chunk (parentsFromRows). */
const PARENT_ROWS = 8;

/**
 * A copy of `buf` whose columns, `widths[i]` bytes per value and `n` values each from byte
 * `at` on, are joined back from their byte planes (docs/FORMAT.md "Coded columns"); the bytes
 * before and after them are copied as they are.
 */
export function joinPlanes(buf, at, n, widths) {
  const out = new ArrayBuffer(buf.byteLength);
  new Uint8Array(out).set(new Uint8Array(buf, 0, at));
  for (const w of widths) {
    const src = new Uint8Array(buf, at, w * n);
    const dst = new Uint8Array(out, at, w * n);
    for (let k = 0; k < w; k++) {
      const plane = k * n;
      for (let i = 0; i < n; i++) dst[i * w + k] = src[plane + i];
    }
    at += w * n;
  }
  new Uint8Array(out, at).set(new Uint8Array(buf, at));
  return out;
}

/** Each entry of `col` (a Uint32Array of steps, the first from 0) replaced by the running sum, modulo 2^32. */
export function addUp(col) {
  for (let i = 1; i < col.length; i++) col[i] += col[i - 1];
}

/**
 * Flag of a chunk with PARENT_ROWS whose offsets are gaps from the sibling before in the chunk,
 * else from the parent's offset when the parent is a row of the chunk.
 */
const FROM_PARENTS = 16;
// Flag of a comparison's chunk whose union offsets that follow neither a sibling nor a parent
// in it are told from the after and before offsets (docs/FORMAT.md "Coded columns").
const UNION_FROM_LAYOUTS = 32;

/** In a chunk with PARENT_ROWS, the parent code of a row whose parent is not in the chunk. */
const OUTSIDE = 0xffffffff;

/**
 * The ids and parents of a chunk with PARENT_ROWS (docs/FORMAT.md "Coded columns"), in place:
 * a parent code is the step from the row of the parent before, or OUTSIDE, whose id is the
 * next of `listed` (steps from the one before); an id code is the step from the row before's
 * id when both rows have the same parent, else from the parent's id. Returns each row's
 * parent row in the chunk (an Int32Array, -1 where the parent is not in it).
 */
export function parentsFromRows(id, parent, listed, file = "chunk") {
  const rowOf = new Int32Array(id.length).fill(-1);
  let lastRow = 0;
  let next = 0;
  let lastOutside = 0;
  for (let i = 0; i < id.length; i++) {
    const code = parent[i];
    let p;
    if (code === OUTSIDE) {
      if (next >= listed.length) throw new GraphError(file, "has more rows with a parent outside it than it lists");
      lastOutside = (lastOutside + listed[next++]) >>> 0;
      p = lastOutside;
    } else {
      lastRow += code;
      if (lastRow >= i) throw new GraphError(file, `row ${i}'s parent is not a row before it`);
      p = id[lastRow];
      rowOf[i] = lastRow;
    }
    const from = i > 0 && parent[i - 1] === p ? id[i - 1] : p;
    id[i] = (from + id[i]) >>> 0;
    parent[i] = p;
  }
  if (next !== listed.length) throw new GraphError(file, `lists ${listed.length} parents outside it, and ${next} rows have one`);
  return rowOf;
}

/**
 * Versions of the graph format this page reads: 1 (f64 values), 2 (u32 or f64 values), 3 (a
 * comparison's chunks with widths), 4 (a comparison's chunks without them), 5 (a
 * comparison's search files in narrow columns) and 6 (a comparison's chunks with the offsets
 * of all three layouts).
 */
const VERSIONS = [1, 2, 3, 4, 5, 6];

/**
 * Versions of the manifest this page reads: those of the files, and 6 to 8, whose data files
 * are gzip members (unpacked as they arrive, unpack.js) holding version 2 (plain) or 5
 * (comparison) files, of 7 with coded columns (flag CODED); of 8 a comparison's chunks are of
 * version 6, every layout in one folder; of 9 chunks give parents as rows (PARENT_ROWS), of 10
 * offsets from them too (FROM_PARENTS); of 11 a comparison of two runs has no search files (its
 * search reads the runs' graphs: query.js) and its chunks tell union offsets from the other
 * layouts (UNION_FROM_LAYOUTS); of 12 each chunk of a plain graph has a file of its frames'
 * left-heavy offsets beside it (leftheavy.js).
 */
const MANIFEST_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

/** [version, field 8, field 12, field 16, field 20] of a chunk or search file. */
function header(buf, file, magic) {
  if (buf.byteLength < 24) throw new GraphError(file, `too short (${buf.byteLength} bytes) to be a ${magic} file`);
  const dv = new DataView(buf);
  const got = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
  if (got !== magic) throw new GraphError(file, `not a ${magic} file (bad magic)`);
  const version = dv.getUint32(4, true);
  if (!VERSIONS.includes(version)) throw new GraphError(file, `version ${version} is not supported (this page reads versions 1 to 6)`);
  return [version, dv.getUint32(8, true), dv.getUint32(12, true), dv.getUint32(16, true), dv.getUint32(20, true)];
}

/**
 * `floor(v · 2^30 / of)` exactly (0 when `of` is 0): value `v` of a run whose total is `of`
 * in the union layout's widths (src/graph/diff.rs `union_width`). A value of a total below 2^32
 * takes two exact steps of 15 bits in doubles; larger ones BigInt.
 */
export function unionWidth(v, of) {
  if (of === 0) return 0;
  if (v <= of && of < 4294967296) {
    // Each step divides a number below 2^47 by `of` with a quotient of at most 2^15, whose
    // double is within 2^-38 of it, nearer than any quotient by `of` (< 2^32) comes to the
    // next integer: the floors are exact.
    const a = v * 32768;
    const q1 = Math.floor(a / of);
    const b = (a - q1 * of) * 32768;
    return q1 * 32768 + Math.floor(b / of);
  }
  return Number((BigInt(v) << 30n) / BigInt(of));
}

/**
 * The widths of a comparison's chunk whose file leaves them out (version 4): each frame's
 * total and self in `layout` ("union", "after" or "before") of runs of totals `tb` and `ta`.
 */
function deriveWidths(c, layout, tb, ta) {
  if (layout === "after") return [c.afterTotal, c.afterSelf];
  if (layout === "before") return [c.beforeTotal, c.beforeSelf];
  const Arr = c.offset.constructor;
  const total = new Arr(c.n);
  const self = new Arr(c.n);
  for (let i = 0; i < c.n; i++) {
    total[i] = unionWidth(c.beforeTotal[i], tb) + unionWidth(c.afterTotal[i], ta);
    self[i] = unionWidth(c.beforeSelf[i], tb) + unionWidth(c.afterSelf[i], ta);
  }
  return [total, self];
}

/**
 * Decode a chunk file (`FSCH`). Returns typed-array columns (the value columns `offset`,
 * `total`, `self`, `beforeTotal` and `beforeSelf` are Uint32Arrays or Float64Arrays, as
 * the file stores them):
 * `{ n, depthLo, depthHi, rowStart, offset, total, self, beforeTotal, beforeSelf, id, parent, name, diff }`.
 * `widths` is the manifest's `{ layout, tb, ta }` of a comparison (version 4 chunks leave the
 * widths out; they follow from the values). Throws GraphError when the bytes do not follow the
 * format exactly.
 */
export function decodeChunk(data, file = "chunk", widths = null) {
  let buf = alignedBuffer(data);
  const [version, flags, n, depthLo, depthHi] = header(buf, file, "FSCH");
  if (
    flags & ~(1 | 2 | CODED | PARENT_ROWS | FROM_PARENTS | UNION_FROM_LAYOUTS) ||
    (flags & (CODED | PARENT_ROWS)) === PARENT_ROWS ||
    (flags & (PARENT_ROWS | FROM_PARENTS)) === FROM_PARENTS ||
    (flags & UNION_FROM_LAYOUTS && (!(flags & FROM_PARENTS) || !(flags & 1) || version !== 6))
  ) {
    throw new GraphError(file, `has flags ${flags} this page does not know`);
  }
  const diff = (flags & 1) !== 0;
  const coded = (flags & CODED) !== 0;
  const parentRows = (flags & PARENT_ROWS) !== 0;
  const w = version >= 2 && (flags & 2) !== 0 ? 4 : 8; // bytes per value
  if (depthHi < depthLo) throw new GraphError(file, `depth range ${depthLo}..${depthHi} is reversed`);
  const rows = depthHi - depthLo + 1;
  const a = pad8(24 + 4 * rows);
  // Version 3 (a comparison) adds the after columns to the differential ones; version 4 has
  // the before and after columns and not the widths; version 6 the offsets of the union, after
  // and before layouts before them.
  const withAfter = diff && version >= 3;
  const derived = diff && version >= 4;
  const layouts = diff && version >= 6;
  if (derived && !widths) throw new GraphError(file, "is a comparison's chunk, read without its manifest's layout and totals");
  const fcols = layouts ? 7 : derived ? 5 : withAfter ? 7 : diff ? 5 : 3;
  const columnsEnd = a + w * fcols * n + 12 * n;
  // With PARENT_ROWS, the parents outside the chunk follow: their count, then them.
  const outside = parentRows && buf.byteLength >= columnsEnd + 4 ? new DataView(buf).getUint32(columnsEnd, true) : 0;
  const expected = parentRows ? columnsEnd + 4 + 4 * outside : columnsEnd;
  if (buf.byteLength !== expected || outside > n) {
    throw new GraphError(file, `is ${buf.byteLength} bytes, expected ${expected} for ${n} frames (truncated or corrupt)`);
  }
  if (version === 6 && !(diff && coded)) throw new GraphError(file, "is a chunk of version 6 that is not a comparison's with coded columns");
  if (coded && !(diff ? version >= 5 : version === 2)) throw new GraphError(file, `is a chunk of version ${version} with coded columns`);
  if (coded) buf = joinPlanes(buf, a, n, [...Array(fcols).fill(w), 4, 4, 4]);
  const listed = parentRows ? joinPlanes(buf.slice(columnsEnd + 4), 0, outside, [4]) : null;
  const rowStart = u32s(buf, 24, rows);
  if (rowStart[0] !== 0 || rowStart[rows - 1] !== n) throw new GraphError(file, "row index does not cover the frames");
  for (let i = 1; i < rows; i++) {
    if (rowStart[i] < rowStart[i - 1]) throw new GraphError(file, "row index is not sorted");
  }
  let at = a;
  const col = () => {
    const c = w === 4 ? u32s(buf, at, n) : f64s(buf, at, n);
    at += w * n;
    return c;
  };
  // Of version 6, the offsets of the layout shown; the others are passed over.
  const offsets = [col(), ...(layouts ? [col(), col()] : [])];
  const offset = offsets[layouts ? Math.max(0, ["union", "after", "before"].indexOf(widths.layout)) : 0];
  let total = derived ? null : col();
  let self = derived ? null : col();
  const beforeTotal = diff ? col() : null;
  const beforeSelf = diff ? col() : null;
  // Of a graph laid out by its second count, the widths are that count.
  const afterTotal = withAfter ? col() : diff ? total : null;
  const afterSelf = withAfter ? col() : diff ? self : null;
  const id = u32s(buf, at, n);
  const parent = u32s(buf, at + 4 * n, n);
  const name = u32s(buf, at + 8 * n, n);
  const c = { n, depthLo, depthHi, rowStart, offset, total, self, beforeTotal, beforeSelf, afterTotal, afterSelf, id, parent, name, diff };
  if (derived) [c.total, c.self] = deriveWidths(c, widths.layout, widths.tb, widths.ta);
  if (coded) {
    // Ids and parents are steps from the row before (or, with PARENT_ROWS, parents are rows of
    // the chunk and ids follow from them: parentsFromRows).
    const rowOf = parentRows ? parentsFromRows(id, parent, new Uint32Array(listed), file) : null;
    if (!parentRows) {
      addUp(id);
      addUp(parent);
    }
    const fromParents = (flags & FROM_PARENTS) !== 0;
    if (layouts) {
      // The layout shown's offsets now; the others' stay coded until asked for (layoutOffsets).
      const shown = ["union", "after", "before"][offsets.indexOf(offset)];
      const fromLayouts = (flags & UNION_FROM_LAYOUTS) !== 0;
      c.layouts = { shown, coded: { union: offsets[0], after: offsets[1], before: offsets[2] }, done: {}, rowOf, fromParents, fromLayouts, tb: widths.tb, ta: widths.ta };
      layoutOffsets(c, shown);
    } else {
      addUpOffsets(offset, c.total, rowStart, parent, rowOf, fromParents);
    }
    // Shown left-heavy: placed (leftheavy.js) with its file of left-heavy offsets, by the rows of
    // its parents in it.
    if (widths && widths.layout === "left") c.rowOf = rowOf;
  }
  return c;
}

/**
 * Offsets from their coded form, in place: each is the gap from the end of the frame before it
 * at its depth (the first of a depth is itself), or with `fromParents` from its parent's offset
 * when it follows no sibling and its parent is a row of the chunk (`rowOf`; rows of lower
 * depths come first). `total` holds the widths of the same layout.
 */
function addUpOffsets(offset, total, rowStart, parent, rowOf, fromParents, told = null) {
  for (let d = 0; d + 1 < rowStart.length; d++) {
    for (let r = rowStart[d]; r < rowStart[d + 1]; r++) {
      const first = r === rowStart[d];
      const sibling = !first && parent[r - 1] === parent[r];
      if (fromParents && !sibling && rowOf[r] >= 0) offset[r] += offset[rowOf[r]];
      // The step of the residual (the offset less `told`) from the row before's; stored into
      // a Uint32Array, a sum is taken modulo 2^32, as the step was written.
      else if (told && !sibling) offset[r] = told[r] + offset[r] + (first ? 0 : offset[r - 1] - told[r - 1]);
      else if (!first) offset[r] += offset[r - 1] + total[r - 1];
    }
  }
}

/**
 * The offsets of a comparison's chunk `c` in `layout` ("union", "after" or "before"), whatever
 * layout it was decoded for: the shown one's are `c.offset`, the others' are added up from
 * their coded column the first time they are asked for. Null for a chunk without them (older
 * than version 6).
 */
export function layoutOffsets(c, layout) {
  const k = c.layouts;
  if (!k) return null;
  const offset = k.coded[layout];
  if (!k.done[layout]) {
    const total = layout === "after" ? c.afterTotal : layout === "before" ? c.beforeTotal : deriveWidths(c, "union", k.tb, k.ta)[0];
    let told = null;
    if (layout === "union" && k.fromLayouts) {
      // What the after and before offsets add up to in union widths.
      const b = layoutOffsets(c, "before");
      const a = layoutOffsets(c, "after");
      told = new Float64Array(c.n);
      for (let i = 0; i < c.n; i++) told[i] = unionWidth(b[i], k.tb) + unionWidth(a[i], k.ta);
    }
    addUpOffsets(offset, total, c.rowStart, c.parent, k.rowOf, k.fromParents, told);
    k.done[layout] = true;
  }
  return offset;
}

/** Whether graph `m` is a comparison of two runs whose search reads the runs' own graphs (version 11). */
export function searchesRuns(m) {
  return !!(m && m.diff && m.diff.search === "runs");
}

/**
 * The manifest of a comparison as `layout` ("union", "after" or "before") shows it, when its
 * chunks hold every layout (version 8): `total` the layout's root width, each chunk's `offset`
 * and `max_total` its own in that layout, `diff.layout` the layout. Any other manifest is
 * returned as it is.
 */
export function layoutView(m, layout) {
  if (!m.diff && layout === "left" && hasLeftHeavy(m)) {
    // A plain graph's left-heavy layout: each chunk's extent in it; `nameOffset` keeps the
    // default layout's, which search intervals and sandwiches are in.
    return { ...m, layout: "left", chunks: m.chunks.map((c) => ({ ...c, offset: c.left, nameOffset: c.offset })) };
  }
  if (!m.diff || !layout || layout === m.diff.layout || !(layout === "after" || layout === "before")) return m;
  if (!m.chunks.every((c) => c[layout] && Array.isArray(c[layout].offset))) return m;
  return {
    ...m,
    total: layout === "after" ? m.diff.total_after : m.diff.total_before,
    chunks: m.chunks.map((c) => ({ ...c, offset: c[layout].offset, max_total: c[layout].max_total })),
    diff: { ...m.diff, layout },
  };
}

/** What decodeChunk needs of a manifest to read its chunks: `{ layout, tb, ta }`, or null. */
export function chunkWidths(m) {
  if (m && !m.diff && m.layout === "left") return { layout: "left" };
  return m && m.diff ? { layout: m.diff.layout, tb: m.diff.total_before, ta: m.diff.total_after } : null;
}

/** Whether plain graph `m` can be shown left-heavy (its chunks hold those offsets: version 12). */
export function hasLeftHeavy(m) {
  return !!(m && !m.diff && m.chunks.length && m.chunks.every((c) => Array.isArray(c.left) && c.left.length === 2));
}

/**
 * Decode a search bucket (`FSSI`): `{ nameLo, nameHi, k, start, iv }` where the intervals of
 * name `nameLo + i` are `iv[2j] .. iv[2j+1]` for `start[i] <= j < start[i+1]`. A
 * differential bucket (version 3 and later) has instead one entry per frame (`diff` true):
 * `lo` (its offset in the union layout), `before`, `after` (its values), `id` and `span` (its
 * id and the number of its descendants), and `width`, its width in the union layout, when the
 * file has it (versions 3 and 4; version 5 leaves it to follow from the values, as in chunks).
 * Of version 5, `id` is null and `idStep` holds each id's step from the previous entry's of
 * its name (see idsOf).
 */
export function decodeSearch(data, file = "search bucket") {
  const buf = alignedBuffer(data);
  const [version, nameLo, nameHi, k, flags] = header(buf, file, "FSSI");
  const w = version >= 2 && (flags & 1) !== 0 ? 4 : 8; // bytes per value
  if (nameHi < nameLo) throw new GraphError(file, `name range ${nameLo}..${nameHi} is reversed`);
  const m = nameHi - nameLo + 1;
  const diff = version >= 3 && (flags & 2) !== 0;
  if (flags & ~(1 | 2 | CODED)) throw new GraphError(file, `has flags ${flags} this page does not know`);
  const coded = (flags & CODED) !== 0;
  if (coded && (diff || version !== 2)) throw new GraphError(file, `is a search bucket of version ${version} with coded columns`);
  // Version 5: the id steps are two bytes per entry and the span, before and after columns
  // one, and these are the numbers of their entries that did not fit, listed apart.
  const bytes = diff && version >= 5;
  const big = bytes && buf.byteLength >= 24 + 4 * (m + 4) ? Array.from(u32s(buf, 24 + 4 * m, 4)) : [0, 0, 0, 0];
  const a = pad8(24 + 4 * (bytes ? m + 4 : m));
  const [ei, es, eb, ea] = big;
  const expected = bytes ? a + w * (k + eb + ea) + 4 * (2 * ei + 2 * es + eb + ea) + 5 * k : a + 2 * w * k + (diff ? 2 * w * k + 8 * k : 0);
  if (buf.byteLength !== expected) {
    throw new GraphError(file, `is ${buf.byteLength} bytes, expected ${expected} for ${k} intervals (truncated or corrupt)`);
  }
  const start = u32s(buf, 24, m);
  if (start[0] !== 0 || start[m - 1] !== k) throw new GraphError(file, "interval index does not cover the intervals");
  const vals = (at, count) => (w === 4 ? u32s(buf, at, count) : f64s(buf, at, count));
  if (!diff && coded) {
    // Each interval's gap from the end of the one before it of its name, then every
    // interval's length, each column in byte planes.
    const cols = joinPlanes(buf, a, k, [w, w]);
    const at = (c) => (w === 4 ? u32s(cols, a + c * w * k, k) : f64s(cols, a + c * w * k, k));
    const [gap, length] = [at(0), at(1)];
    const iv = new (w === 4 ? Uint32Array : Float64Array)(2 * k);
    for (let i = 0; i + 1 < m; i++) {
      let end = 0;
      for (let j = start[i]; j < start[i + 1]; j++) {
        iv[2 * j] = end + gap[j];
        end = iv[2 * j + 1] = iv[2 * j] + length[j];
      }
    }
    return { nameLo, nameHi, k, start, iv, diff };
  }
  if (!diff) return { nameLo, nameHi, k, start, iv: vals(a, 2 * k), diff };
  if (!bytes) {
    // Versions 3 and 4: the extents [lo, hi), then before, after, id and last.
    const iv = vals(a, 2 * k);
    const id = u32s(buf, a + 4 * w * k, k);
    const last = u32s(buf, a + 4 * w * k + 4 * k, k);
    const lo = new iv.constructor(k);
    const width = new iv.constructor(k);
    const span = new Uint32Array(k);
    for (let j = 0; j < k; j++) {
      lo[j] = iv[2 * j];
      width[j] = iv[2 * j + 1] - iv[2 * j];
      span[j] = last[j] - id[j];
    }
    return { nameLo, nameHi, k, start, diff, iv, lo, width, before: vals(a + 2 * w * k, k), after: vals(a + 3 * w * k, k), id, span };
  }
  // Values (lo, then the big before and after values), u32 columns (the big id steps and
  // spans, the indices of the big entries of each column), the id steps (u16), then the
  // three byte columns.
  const lo = vals(a, k);
  const u32At = a + w * (k + eb + ea);
  let indexAt = u32At + 4 * (ei + es);
  const narrowAt = indexAt + 4 * (ei + es + eb + ea);
  const column = (narrow, count, Arr, bigValues) => {
    const out = new Arr(narrow);
    const at = u32s(buf, indexAt, count);
    indexAt += 4 * count;
    for (let e = 0; e < count; e++) {
      if (at[e] >= k) throw new GraphError(file, `entry ${at[e]} of a column is out of range (${k} entries)`);
      out[at[e]] = bigValues[e];
    }
    return out;
  };
  const Values = w === 4 ? Uint32Array : Float64Array;
  const byteColumn = (c) => new Uint8Array(buf, narrowAt + 2 * k + c * k, k);
  const steps = LITTLE_ENDIAN ? new Uint16Array(buf, narrowAt, k) : Uint16Array.from({ length: k }, (_, j) => new DataView(buf).getUint16(narrowAt + 2 * j, true));
  // Each id is the step from the one before it of the same name (from 0 for a name's first):
  // added up by the reader of a name's entries (`idsOf` for all of them), not here, where it
  // would cost every entry of every file a search fetches.
  const idStep = column(steps, ei, Uint32Array, u32s(buf, u32At, ei));
  const span = column(byteColumn(0), es, Uint32Array, u32s(buf, u32At + 4 * ei, es));
  const before = column(byteColumn(1), eb, Values, vals(a + w * k, eb));
  const after = column(byteColumn(2), ea, Values, vals(a + w * (k + eb), ea));
  return { nameLo, nameHi, k, start, diff, lo, width: null, before, after, id: null, idStep, span };
}

/** The ids of a differential bucket's entries (decodeSearch's `id`, or its steps added up). */
export function idsOf(b) {
  if (b.id) return b.id;
  const id = new Uint32Array(b.k);
  for (let i = 0; i < b.nameHi - b.nameLo; i++) {
    let sum = 0;
    for (let j = b.start[i]; j < b.start[i + 1]; j++) {
      sum += b.idStep[j];
      id[j] = sum;
    }
  }
  return id;
}

/**
 * The extents of name `n`'s frames in search bucket `b`, flat `[lo, hi, …]` in offset order.
 * `widths` is the manifest's `{ tb, ta }` (chunkWidths) for a comparison's bucket of version 5,
 * whose ends follow from its values as the union layout's widths do.
 */
export function nameIntervals(b, n, widths) {
  const a = b.start[n - b.nameLo];
  const z = b.start[n - b.nameLo + 1];
  if (b.iv) return b.iv.subarray(2 * a, 2 * z);
  const out = new b.lo.constructor(2 * (z - a));
  for (let j = a; j < z; j++) {
    const lo = b.lo[j];
    out[2 * (j - a)] = lo;
    out[2 * (j - a) + 1] = lo + unionWidth(b.before[j], widths.tb) + unionWidth(b.after[j], widths.ta);
  }
  return out;
}

/** The manifest's name files as `[{ file, names: [lo, hi], bytes }]`, in order, without gaps. */
export function nameFiles(m) {
  return Array.isArray(m.names) ? m.names : [];
}

/** Check a parsed manifest.json; returns it, or throws GraphError saying what is wrong. */
export function checkManifest(m, file = "manifest.json") {
  if (!m || m.format !== "flamesite-graph") throw new GraphError(file, "is not a flamesite graph manifest");
  if (!MANIFEST_VERSIONS.includes(m.version)) throw new GraphError(file, `version ${m.version} is not supported (this page reads versions 1 to ${MANIFEST_VERSIONS.length})`);
  for (const key of ["total", "depth", "root_width"]) {
    if (typeof m[key] !== "number") throw new GraphError(file, `has no number "${key}"`);
  }
  if (!Array.isArray(m.chunks) || !Array.isArray(m.search) || !Array.isArray(m.names)) {
    throw new GraphError(file, "has no chunk, name file or search list");
  }
  let next = 0;
  for (const n of m.names) {
    if (!n || typeof n.file !== "string" || !Array.isArray(n.names) || n.names[0] !== next || !(n.names[1] > n.names[0])) {
      throw new GraphError(file, "name files do not cover the name ids in order");
    }
    next = n.names[1];
  }
  return m;
}

/**
 * Check one parsed name file against its manifest entry `{ names: [lo, hi] }`. Its `colors`
 * are optional (written up to version 8; the page reckons them from the names otherwise), and
 * so is `raw` (the profile's own forms of renamed names, docs/FORMAT.md).
 */
export function checkNames(nm, entry, file = "name file") {
  const keys = ["names", "self", "total"];
  if (!nm || !keys.every((k) => Array.isArray(nm[k]))) throw new GraphError(file, "lacks one of names, self, total");
  const len = nm.names.length;
  if (nm.colors !== undefined) keys.push("colors");
  if (nm.raw !== undefined) keys.push("raw");
  if (!keys.every((k) => Array.isArray(nm[k]) && nm[k].length === len)) throw new GraphError(file, "arrays differ in length");
  if (entry && len !== entry.names[1] - entry.names[0]) {
    throw new GraphError(file, `has ${len} names, the manifest says ${entry.names[1] - entry.names[0]}`);
  }
  return nm;
}

/**
 * The name table of a graph, filled file by file as they arrive: `names`, `colors`, `self`,
 * `total` indexed by name id (a name not yet fetched is `undefined` / 0). Name ids are in
 * order of first use, so the root view needs only the first file or two. A name file without
 * colours (version 9) has them reckoned from its names in `palette`, the manifest's.
 */
export class NameTable {
  constructor(files, palette = "hot") {
    this.files = files;
    this.palette = palette;
    this.count = files.length ? files[files.length - 1].names[1] : 0;
    this.names = new Array(this.count);
    this.colors = new Uint32Array(this.count);
    this.self = new Float64Array(this.count);
    this.total = new Float64Array(this.count);
    // Of a differential graph: the earlier run's self and total per name.
    this.selfBefore = null;
    this.totalBefore = null;
    // The profile's own form of each renamed name (a class the JVM generated), by name id.
    this.raw = new Map();
    this.have = new Uint8Array(files.length);
    this.missing = files.length;
  }

  /** Index of the file holding name id `n`. */
  fileOf(n) {
    let lo = 0;
    let hi = this.files.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.files[mid].names[0] <= n) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  fill(i, nm) {
    if (this.have[i]) return;
    const lo = this.files[i].names[0];
    for (let j = 0; j < nm.names.length; j++) {
      this.names[lo + j] = String(nm.names[j]);
      this.colors[lo + j] = nm.colors ? nm.colors[j] : nameColor(this.names[lo + j], this.palette);
      this.self[lo + j] = nm.self[j];
      this.total[lo + j] = nm.total[j];
      if (nm.raw && typeof nm.raw[j] === "string") this.raw.set(lo + j, nm.raw[j]);
    }
    if (Array.isArray(nm.self_before) && Array.isArray(nm.total_before)) {
      this.selfBefore ??= new Float64Array(this.count);
      this.totalBefore ??= new Float64Array(this.count);
      for (let j = 0; j < nm.names.length; j++) {
        this.selfBefore[lo + j] = nm.self_before[j];
        this.totalBefore[lo + j] = nm.total_before[j];
      }
    }
    this.have[i] = 1;
    this.missing -= 1;
  }

  /** Indices of the files holding name ids up to `n` (inclusive) that have not arrived. */
  missingUpTo(n) {
    if (this.count === 0) return [];
    const last = this.fileOf(Math.min(n, this.count - 1));
    const out = [];
    for (let i = 0; i <= last; i++) if (!this.have[i]) out.push(i);
    return out;
  }

  /** True when every name id up to `n` (inclusive) has arrived. */
  hasUpTo(n) {
    return this.missingUpTo(n).length === 0;
  }

  complete() {
    return this.missing === 0;
  }
}

/**
 * One graph folder on the server. `base` is the folder's absolute URL ending in "/".
 * Files are fetched once; `loaded` lists the URLs of the chunks fetched so far, in order,
 * `bucketsLoaded` those of the search buckets; `errors` the failures, as GraphErrors.
 */
export class GraphSource {
  constructor(base, fetchFn = (u) => fetch(u), layout = null) {
    this.base = base;
    this.layout = layout; // of a comparison: the layout shown (see manifest)
    this.fetchFn = fetchFn;
    this.cache = new Map(); // url -> Promise
    this.done = new Map(); // url -> decoded value, once it arrived
    this.loaded = []; // chunk URLs, in the order they arrived
    this.bucketsLoaded = []; // search bucket URLs
    this.namesLoaded = []; // name file URLs
    this.errors = [];
    this.pending = 0;
    this.started = new Map(); // url -> Promise of the Response, for files asked for early
    this.widths = null; // what a comparison's chunks need of its manifest (chunkWidths)
    this.left = null; // shown left-heavy: leftheavy.js's Placer, loaded with the manifest
  }

  /**
   * Start fetching files of this graph now, before the manifest says what they are (the
   * page's preload list: its first view). `get` then takes over the response. Absolute URLs
   * outside this graph's folder are ignored.
   */
  early(urls) {
    for (const url of urls) {
      if (!url.startsWith(this.base) || this.started.has(url) || this.cache.has(url)) continue;
      const p = Promise.resolve().then(() => this.fetchFn(url));
      p.catch(() => {}); // reported by `get`, when the file is used
      this.started.set(url, p);
    }
  }

  url(file) {
    return new URL(file, this.base).href;
  }

  /**
   * The file `file` of the graph, decoded by `decode`; `bytes`, the size its manifest entry
   * gives, is checked against the file as it came packed (a host that unpacks it on the way
   * gives other bytes, which are checked by what they hold).
   */
  get(file, kind, decode, bytes = undefined) {
    const url = this.url(file);
    let p = this.cache.get(url);
    if (p) return p;
    this.pending += 1;
    p = (async () => {
      let res;
      try {
        const early = this.started.get(url);
        this.started.delete(url);
        res = await (early || this.fetchFn(url));
      } catch (e) {
        throw new GraphError(file, `could not be fetched (${e && e.message ? e.message : e})`);
      }
      if (!res.ok) throw new GraphError(file, `could not be fetched (HTTP ${res.status}${res.statusText ? " " + res.statusText : ""})`);
      let buf;
      try {
        buf = await res.arrayBuffer();
      } catch (e) {
        throw new GraphError(file, `could not be fetched (${e && e.message ? e.message : e})`);
      }
      if (typeof bytes === "number" && isPacked(new Uint8Array(buf, 0, Math.min(2, buf.byteLength))) && buf.byteLength !== bytes) {
        throw new GraphError(file, `is ${buf.byteLength} bytes where its manifest says ${bytes}, truncated or corrupt or of another build${REPUBLISHED}`);
      }
      try {
        buf = await unpack(buf);
      } catch {
        throw new GraphError(file, "is truncated or corrupt (its gzip data does not decompress)");
      }
      if (kind === "json" || kind === "names") {
        const text = new TextDecoder().decode(buf);
        try {
          return decode(JSON.parse(text));
        } catch (e) {
          if (e instanceof GraphError) throw e;
          throw new GraphError(file, `is not valid JSON (${e.message})`);
        }
      }
      return decode(buf);
    })().then(
      (v) => {
        this.pending -= 1;
        this.done.set(url, v);
        if (kind === "chunk") this.loaded.push(url);
        if (kind === "bucket") this.bucketsLoaded.push(url);
        if (kind === "names") this.namesLoaded.push(url);
        return v;
      },
      (e) => {
        this.pending -= 1;
        const err = e instanceof GraphError ? e : new GraphError(file, String(e && e.message ? e.message : e));
        this.errors.push(err);
        throw err;
      },
    );
    this.cache.set(url, p);
    return p;
  }

  /**
   * The graph's manifest (`manifest.json.gz`, or of a graph older than version 9, which has
   * none, `manifest.json`), of a comparison in `layout`: from the one folder of a version 8
   * graph (layoutView), or, of an older one, from the layout's own folder (its `diff.layouts`),
   * which this source then reads its files from.
   */
  manifest() {
    const packed = this.get("manifest.json.gz", "json", (m) => checkManifest(m, "manifest.json.gz")).catch((e) => {
      // A graph written before version 9 has only manifest.json: not a failure of the page.
      if (!(e instanceof GraphError && e.message.includes("HTTP 404"))) throw e;
      this.errors = this.errors.filter((x) => x !== e);
      return this.get("manifest.json", "json", (m) => checkManifest(m));
    });
    return packed.then((m) => {
      const folder = m.diff && m.diff.layout !== this.layout && m.diff.layouts ? m.diff.layouts[this.layout] : undefined;
      if (typeof folder === "string" && folder !== "") {
        this.base = new URL(folder, this.base).href;
        this.layout = null;
        return this.manifest();
      }
      const view = layoutView(m, this.layout);
      this.widths = chunkWidths(view);
      if (view.layout !== "left") return view;
      return import("./leftheavy.js").then((k) => {
        this.left = new k.Placer(this, view, READERS);
        return view;
      });
    });
  }

  /** An empty name table for the manifest; fill it with `namesUpTo` or `allNames`. */
  nameTable(manifest) {
    return new NameTable(nameFiles(manifest), manifest.palette);
  }

  /** Fetch name file `i` of `table` into it. */
  nameFile(table, i) {
    const entry = table.files[i];
    return this.get(entry.file, "names", (nm) => {
      table.fill(i, checkNames(nm, entry, entry.file));
      return true;
    }, entry.bytes);
  }

  /** Fetch the name files holding ids 0 ..= `n` (what a chunk with `name_max` n needs). */
  namesUpTo(table, n) {
    if (table.count === 0) return Promise.resolve([]);
    const last = table.fileOf(Math.min(n, table.count - 1));
    const all = [];
    for (let i = 0; i <= last; i++) all.push(this.nameFile(table, i));
    return Promise.all(all);
  }

  /** Fetch every name file (for a search over all names, or the table of functions). */
  allNames(table) {
    return this.namesUpTo(table, table.count - 1);
  }

  /**
   * The decoded chunk for a manifest entry; checks it against the entry. Shown left-heavy, once
   * it is placed (leftheavy.js).
   */
  chunk(entry) {
    return this.left ? this.left.chunk(entry) : this.decoded(entry);
  }

  decoded(entry) {
    return this.get(entry.file, "chunk", (buf) => {
      const c = decodeChunk(buf, entry.file, this.widths);
      if (c.depthLo !== entry.depth[0] || c.depthHi !== entry.depth[1] || c.n !== entry.frames) {
        throw new GraphError(entry.file, `does not match its manifest entry (depths or frame count differ)${REPUBLISHED}`);
      }
      c.entry = entry;
      return c;
    }, entry.bytes);
  }

  /** The decoded chunk if it has arrived (and is placed), else undefined (for drawing without waiting). */
  ready(entry) {
    const url = this.url(entry.file);
    return this.left ? this.left.placed.get(url) : this.done.get(url);
  }

  /** True when the entry was fetched and failed. */
  failed(entry) {
    const url = this.url(entry.file);
    if (this.left && this.left.failed.has(url)) return true;
    return this.cache.has(url) && !this.done.has(url) && this.errors.some((e) => e.file === entry.file);
  }

  bucket(entry) {
    return this.get(entry.file, "bucket", (buf) => {
      const b = decodeSearch(buf, entry.file);
      if (b.nameLo !== entry.names[0] || b.nameHi !== entry.names[1]) {
        throw new GraphError(entry.file, `does not match its manifest entry (name range differs)${REPUBLISHED}`);
      }
      return b;
    }, entry.bytes);
  }
}

/** What leftheavy.js reads its files with (it imports nothing, so that no module circle is made). */
export const READERS = { GraphError, alignedBuffer, joinPlanes, u32s, f64s };
