// A plain graph shown left-heavy (children heaviest first; docs/FORMAT.md "Left-heavy
// offsets"): each chunk's frames placed at their left-heavy offsets, which a file beside the
// chunk gives as distances from their parents', once the chunks that hold the parents outside
// it are placed.
// Loaded by fetch.js only for that view, so the default view's first paint does not wait for it;
// it imports nothing (fetch.js hands it its error type), so no module circle is made.

/**
 * Decode a file of a chunk's left-heavy offsets (`FSLH`, docs/FORMAT.md "Left-heavy offsets")
 * for a chunk of `n` rows: each row's distance from its parent's left-heavy offset, a
 * Uint32Array (modulo 2^32) or a Float64Array as the file stores them. `of` are fetch.js's
 * error type and column readers.
 */
export function decodeLeft(data, file, n, { GraphError, alignedBuffer, joinPlanes, u32s, f64s }) {
  const buf = alignedBuffer(data);
  if (buf.byteLength < 16) throw new GraphError(file, `too short (${buf.byteLength} bytes) to be a FSLH file`);
  const dv = new DataView(buf);
  const got = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
  if (got !== "FSLH") throw new GraphError(file, "not a FSLH file (bad magic)");
  const [version, flags, rows] = [dv.getUint32(4, true), dv.getUint32(8, true), dv.getUint32(12, true)];
  if (version !== 1 || (flags & ~2) !== 0) throw new GraphError(file, `version ${version} with flags ${flags} is not what this page reads (version 1)`);
  if (rows !== n) throw new GraphError(file, `has ${rows} rows where its chunk has ${n}`);
  const w = flags & 2 ? 4 : 8;
  if (buf.byteLength !== 16 + w * n) throw new GraphError(file, `is ${buf.byteLength} bytes, expected ${16 + w * n} for ${n} frames (truncated or corrupt)`);
  const joined = joinPlanes(buf, 16, n, [w]);
  return w === 4 ? u32s(joined, 16, n) : f64s(joined, 16, n);
}

/** The file of the left-heavy offsets of chunk file `c/K-N.bin.gz`: `l/K-N.bin.gz`. */
export function leftFile(chunk) {
  return chunk.startsWith("c/") ? `l/${chunk.slice(2)}` : `l/${chunk}`;
}

/** The depth, less the chunk's first, of row `r` of chunk `c` (its rowStart says). */
function rowDepth(c, r) {
  let lo = 0;
  let hi = c.rowStart.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (c.rowStart[mid] <= r) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The rows of chunk `c` (decoded left-heavy, not yet placed) whose parents are outside it and
 * not in `leftOf` (a Map from frame id to its left-heavy offset, of the chunks placed so far).
 */
export function unplacedParents(c, leftOf) {
  const rows = [];
  for (let r = 0; r < c.n; r++) {
    if (c.rowOf[r] < 0 && c.parent[r] !== 0xffffffff && !leftOf.has(c.parent[r])) rows.push(r);
  }
  return rows;
}

/**
 * Chunk `c` (a plain graph's, decoded left-heavy) placed: `offset` becomes each frame's
 * left-heavy offset, its distance from its parent's (`leftRel`) added to the parent's (a row of
 * the chunk, `rowOf`, or from `leftOf`, which every parent outside it must be in:
 * unplacedParents), and `nameOffset` keeps the default layout's; the rows of each depth are put
 * in order of their new offsets, as every reader of a chunk expects; each frame's offset goes
 * into `leftOf`.
 */
export function placeLeftHeavy(c, leftOf) {
  const left = c.leftRel;
  const rowOf = c.rowOf;
  for (let r = 0; r < c.n; r++) {
    if (rowOf[r] >= 0) left[r] += left[rowOf[r]];
    else if (c.parent[r] !== 0xffffffff) left[r] += leftOf.get(c.parent[r]);
  }
  for (let r = 0; r < c.n; r++) leftOf.set(c.id[r], left[r]);
  delete c.leftRel;
  delete c.rowOf;
  const order = new Uint32Array(c.n);
  for (let r = 0; r < c.n; r++) order[r] = r;
  for (let d = 0; d + 1 < c.rowStart.length; d++) {
    order.subarray(c.rowStart[d], c.rowStart[d + 1]).sort((a, b) => left[a] - left[b] || c.id[a] - c.id[b]);
  }
  const moved = (col) => {
    const out = new col.constructor(c.n);
    for (let r = 0; r < c.n; r++) out[r] = col[order[r]];
    return out;
  };
  c.nameOffset = moved(c.offset);
  c.offset = moved(left);
  for (const k of ["total", "self", "id", "parent", "name"]) c[k] = moved(c[k]);
}

/**
 * The chunks of a GraphSource `source` shown left-heavy (manifest `view`, layoutView's): each
 * placed once (`chunk`), after the chunks that hold the parents of its rows whose parents are
 * outside it (a depth up, over their default offsets, at least as wide; each such chunk is of
 * lower depths, so this ends). `of`: fetch.js's error type and column readers (decodeLeft).
 */
export class Placer {
  constructor(source, view, of) {
    this.source = source;
    this.view = view;
    this.of = of;
    this.leftOf = new Map(); // frame id -> left-heavy offset, of the chunks placed
    this.placing = new Map(); // url -> Promise of the chunk placed
    this.placed = new Map(); // url -> chunk placed
    this.failed = new Set(); // urls of chunks that could not be placed
  }

  chunk(entry) {
    const source = this.source;
    const url = source.url(entry.file);
    let p = this.placing.get(url);
    if (p) return p;
    source.pending += 1;
    p = this.place(entry).finally(() => (source.pending -= 1));
    p.catch((e) => {
      this.failed.add(url);
      if (e instanceof this.of.GraphError && !source.errors.includes(e)) source.errors.push(e);
    });
    this.placing.set(url, p);
    return p;
  }

  async place(entry) {
    const { source, of } = this;
    const { GraphError } = of;
    const file = leftFile(entry.file);
    const [c, rel] = await Promise.all([source.decoded(entry), source.get(file, "left", (buf) => decodeLeft(buf, file, entry.frames, of))]);
    if (rel.length !== c.n) throw new GraphError(file, `has ${rel.length} rows where its chunk has ${c.n}`);
    c.leftRel = rel;
    let rows = unplacedParents(c, this.leftOf);
    if (rows.length) {
      const want = new Set();
      for (const r of rows) {
        const d = c.depthLo + rowDepth(c, r) - 1;
        const x = c.offset[r];
        for (const e of this.view.chunks) {
          if (e !== entry && e.depth[0] <= d && d < e.depth[1] && e.nameOffset[0] <= x && x <= e.nameOffset[1] && e.max_total >= c.total[r]) want.add(e);
        }
      }
      await Promise.all([...want].map((e) => this.chunk(e)));
      rows = unplacedParents(c, this.leftOf);
      if (rows.length) throw new GraphError(entry.file, `frame ${c.id[rows[0]]}'s parent ${c.parent[rows[0]]} is in no chunk over it`);
    }
    placeLeftHeavy(c, this.leftOf);
    this.placed.set(source.url(entry.file), c);
    return c;
  }
}
