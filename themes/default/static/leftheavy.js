// A plain graph shown left-heavy (children heaviest first; docs/FORMAT.md "Left-heavy
// offsets"): each chunk's frames placed at their left-heavy offsets, which the chunk gives as
// distances from their parents', once the chunks that hold the parents outside it are placed.
// Loaded by fetch.js only for that view, so the default view's first paint does not wait for it;
// it imports nothing (fetch.js hands it its error type), so no module circle is made.

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
 * Chunk `entry` of GraphSource `source` placed left-heavy: decoded, then the chunks that hold
 * the parents of its rows whose parents are outside it (a depth up, over their default offsets,
 * at least as wide) placed first (each such chunk is of lower depths, so this ends), then it.
 * `GraphError` is fetch.js's, for a chunk whose parents no chunk holds.
 */
export async function place(source, entry, GraphError) {
  const c = await source.decoded(entry);
  let rows = unplacedParents(c, source.leftOf);
  if (rows.length) {
    const want = new Set();
    for (const r of rows) {
      const d = c.depthLo + rowDepth(c, r) - 1;
      const x = c.offset[r];
      for (const e of source.view.chunks) {
        const at = e.nameOffset || e.offset;
        if (e !== entry && e.depth[0] <= d && d < e.depth[1] && at[0] <= x && x <= at[1] && e.max_total >= c.total[r]) want.add(e);
      }
    }
    await Promise.all([...want].map((e) => source.leftChunk(e)));
    rows = unplacedParents(c, source.leftOf);
    if (rows.length) throw new GraphError(entry.file, `frame ${c.id[rows[0]]}'s parent ${c.parent[rows[0]]} is in no chunk over it`);
  }
  if (c.leftRel) placeLeftHeavy(c, source.leftOf);
  source.placed.set(source.url(entry.file), c);
  return c;
}
