// Layout: pure arithmetic between values, depths and pixels. The build laid every frame out
// already (depth, offset, total), so nothing here walks a tree: a view is a value range
// [x0, x1) across the canvas width and a window of depths, and a frame's rectangle follows
// from its own row of a chunk.
//
// A view: { x0, x1, width, height, rowH, depthCount, icicle, scrollTop, minHeight }, lengths
// in CSS pixels. The content box is depthCount * rowH high (at least minHeight); flame mode
// (icicle false) puts depth 0 at its bottom, icicle mode at its top. The canvas shows the part
// of it from scrollTop to scrollTop + height.

import { layoutOffsets } from "./fetch.js";

/** Frames narrower than this many CSS pixels are neither drawn nor fetched. */
export const MIN_PX = 0.5;

export function contentHeight(view) {
  return Math.max(view.depthCount * view.rowH, view.minHeight || 0);
}

/** Value of one CSS pixel across the width. */
export function pixelValue(view) {
  return (view.x1 - view.x0) / Math.max(1, view.width);
}

/** Top of depth `d`'s row, in canvas pixels. */
export function rowY(view, d) {
  const y = view.icicle ? d * view.rowH : contentHeight(view) - (d + 1) * view.rowH;
  return y - view.scrollTop;
}

/** Depth under canvas pixel row `y`, or -1 outside the graph. */
export function depthAtY(view, y) {
  const cy = y + view.scrollTop;
  const ch = contentHeight(view);
  if (cy < 0 || cy >= ch) return -1;
  const d = view.icicle ? Math.floor(cy / view.rowH) : Math.floor((ch - cy) / view.rowH - 1e-9);
  return d >= 0 && d < view.depthCount ? d : -1;
}

/** Half-open range of depths [lo, hi) with at least a sliver of their row on the canvas. */
export function visibleDepths(view) {
  const ch = contentHeight(view);
  let lo;
  let hi;
  if (view.icicle) {
    lo = Math.floor(view.scrollTop / view.rowH);
    hi = Math.ceil((view.scrollTop + view.height) / view.rowH);
  } else {
    lo = Math.floor((ch - view.scrollTop - view.height) / view.rowH);
    hi = Math.ceil((ch - view.scrollTop) / view.rowH);
  }
  lo = Math.max(0, lo);
  hi = Math.min(view.depthCount, hi);
  return [lo, Math.max(lo, hi)];
}

/**
 * The scrollTop that puts depth `d` near the root end of the canvas, with `margin` rows of
 * ancestors beyond it, so the rows above (flame) or below (icicle) it, its callees, fill the
 * rest. Depth 0 gives the root view: scrolled to the bottom (flame) or the top (icicle).
 */
export function scrollForDepth(view, d, margin = 2) {
  const ch = contentHeight(view);
  const maxTop = Math.max(0, ch - view.height);
  const top = view.icicle
    ? d * view.rowH - margin * view.rowH
    : ch - (d + 1) * view.rowH + (1 + margin) * view.rowH - view.height;
  return Math.min(maxTop, Math.max(0, top));
}

/** Canvas x of value `v`. */
export function xOf(view, v) {
  return ((v - view.x0) / (view.x1 - view.x0)) * view.width;
}

/** Value under canvas x. */
export function valueAtX(view, x) {
  return view.x0 + (x / view.width) * (view.x1 - view.x0);
}

/**
 * The manifest's chunk entries a view needs: those covering a visible depth, intersecting the
 * value range, and holding at least one frame of at least `minPx` pixels (`max_total`).
 * At the root view this is class 0 only; a zoom adds the fine chunks under the zoomed range.
 */
export function neededChunks(manifest, view, minPx = MIN_PX) {
  const [dlo, dhi] = visibleDepths(view);
  const minValue = pixelValue(view) * minPx;
  const out = [];
  for (const c of manifest.chunks) {
    if (c.depth[0] >= dhi || c.depth[1] <= dlo) continue;
    if (c.offset[0] >= view.x1 || c.offset[1] <= view.x0) continue;
    if (c.max_total < minValue || c.max_total <= 0) continue;
    out.push(c);
  }
  return out;
}

/** The chunk entries that may hold a frame at `depth` whose extent contains value `v`. */
export function chunksAt(manifest, depth, v) {
  return manifest.chunks.filter(
    (c) => c.depth[0] <= depth && depth < c.depth[1] && c.offset[0] <= v && v < c.offset[1] && c.max_total > 0,
  );
}

/** The chunk entries that may hold frames at `depth` starting in the value range [lo, hi). */
export function chunksIn(manifest, depth, lo, hi) {
  return manifest.chunks.filter((c) => c.depth[0] <= depth && depth < c.depth[1] && c.offset[0] < hi && lo < c.offset[1] && c.max_total > 0);
}

/** Rows of `depth` in a decoded chunk: [first, end). Empty when the chunk lacks the depth. */
export function depthRows(chunk, depth) {
  if (depth < chunk.depthLo || depth >= chunk.depthHi) return [0, 0];
  const i = depth - chunk.depthLo;
  return [chunk.rowStart[i], chunk.rowStart[i + 1]];
}

/** First row in [lo, hi) whose extent ends after `v` (ends are sorted within a depth). */
function firstEndingAfter(chunk, lo, hi, v) {
  const off = chunk.offset;
  const tot = chunk.total;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (off[mid] + tot[mid] > v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** First row in [lo, hi) whose offset is at least `v`. */
function firstStartingAt(chunk, lo, hi, v) {
  const off = chunk.offset;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (off[mid] >= v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Rows of `depth` in `chunk` whose extents intersect [x0, x1), by binary search: [i, j). */
export function rowsInRange(chunk, depth, x0, x1) {
  const [lo, hi] = depthRows(chunk, depth);
  if (lo === hi) return [lo, lo];
  const i = firstEndingAfter(chunk, lo, hi, x0);
  const j = firstStartingAt(chunk, i, hi, x1);
  return [i, j];
}

/**
 * The frame at `depth` whose extent contains value `v`, among decoded chunks, ignoring frames
 * whose total is below `minTotal` (those are not drawn). Returns { chunk, row } or null.
 */
export function frameAt(chunks, depth, v, minTotal = 0) {
  for (const c of chunks) {
    const [lo, hi] = depthRows(c, depth);
    if (lo === hi) continue;
    const r = firstEndingAfter(c, lo, hi, v);
    if (r < hi && c.offset[r] <= v && c.total[r] > 0 && c.total[r] >= minTotal) return { chunk: c, row: r };
  }
  return null;
}

/** The frame at `depth` that starts exactly at `offset` (and is not empty). */
export function frameStartingAt(chunks, depth, offset) {
  for (const c of chunks) {
    const [lo, hi] = depthRows(c, depth);
    const r = firstEndingAfter(c, lo, hi, offset);
    if (r < hi && c.offset[r] === offset && c.total[r] > 0) return { chunk: c, row: r };
  }
  return null;
}

/** A plain object describing one frame, for the info line, tooltip, zoom and the script API. */
export function frameInfo(chunk, row, names) {
  const d = chunk.depthLo + depthOfRow(chunk, row);
  const n = chunk.name[row];
  const f = {
    id: chunk.id[row],
    parent: chunk.parent[row],
    nameId: n,
    name: names ? names.names[n] : undefined,
    depth: d,
    offset: chunk.offset[row],
    total: chunk.total[row],
    self: chunk.self[row],
  };
  // The profile's own form of a renamed name (docs/FORMAT.md, "Names the JVM generates").
  if (names && names.raw && names.raw.has(n)) f.raw = names.raw.get(n);
  // Shown left-heavy: where the frame is in the default layout, which search intervals are in.
  if (chunk.nameOffset) f.nameOffset = chunk.nameOffset[row];
  if (chunk.diff) {
    f.beforeTotal = chunk.beforeTotal[row];
    f.beforeSelf = chunk.beforeSelf[row];
    f.afterTotal = chunk.afterTotal[row];
    f.afterSelf = chunk.afterSelf[row];
    // Where the frame is in each run's own layout (a comparison whose search reads its runs'
    // graphs clips a zoomed search to these).
    const b = layoutOffsets(chunk, "before");
    if (b) {
      f.beforeOffset = b[row];
      f.afterOffset = layoutOffsets(chunk, "after")[row];
    }
  }
  return f;
}

/** Index of the depth (relative to depthLo) that holds `row`, by binary search on rowStart. */
function depthOfRow(chunk, row) {
  const rs = chunk.rowStart;
  let lo = 0;
  let hi = rs.length - 1;
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if (rs[mid] <= row) lo = mid;
    else hi = mid;
  }
  // Skip empty depths that start at the same row.
  while (lo + 1 < rs.length - 1 && rs[lo + 1] <= row) lo += 1;
  return lo;
}

/** Rectangle of a frame on the canvas: { x, y, w, h } in CSS pixels. */
export function frameRect(view, depth, offset, total) {
  return { x: xOf(view, offset), y: rowY(view, depth), w: (total / (view.x1 - view.x0)) * view.width, h: view.rowH };
}

/**
 * Where frames of depth `d` were left out of a view for being too narrow to draw (total below
 * `minTotal`): the value ranges inside a drawn parent's children that no drawn child covers,
 * as a flat array [lo, hi, lo, hi, ...] in offset order, each at least `minTotal` wide.
 *
 * A parent's children fill [offset, offset + total − self) (its self comes after them), so
 * what its drawn children leave of that range is exactly its children that are not drawn:
 * known from the chunk rows already at hand, without the fine chunks that hold them. A parent
 * that is itself not drawn has no range here: the gap one depth down already stands for it.
 * Only parents that reach into [x0, x1) are looked at; `chunks` are the view's decoded chunks.
 */
export function elidedSpans(chunks, d, x0, x1, minTotal) {
  if (d < 1) return [];
  let parents = [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of chunks) {
    if (d - 1 < c.depthLo || d - 1 >= c.depthHi) continue;
    const [i, j] = rowsInRange(c, d - 1, x0, x1);
    for (let r = i; r < j; r++) {
      const t = c.total[r];
      const end = c.offset[r] + t - c.self[r];
      if (t >= minTotal && t > 0 && end > c.offset[r]) {
        parents.push(c.offset[r], end);
        if (c.offset[r] < lo) lo = c.offset[r];
        if (end > hi) hi = end;
      }
    }
  }
  if (parents.length === 0) return [];
  // The children of every parent found, also those outside [x0, x1) of a parent cut by its edge.
  let kids = [];
  for (const c of chunks) {
    if (d < c.depthLo || d >= c.depthHi) continue;
    const [i, j] = rowsInRange(c, d, lo, hi);
    for (let r = i; r < j; r++) {
      const t = c.total[r];
      if (t >= minTotal && t > 0) kids.push(c.offset[r], c.offset[r] + t);
    }
  }
  // Chunks of several classes may hold a depth: put the ranges in offset order.
  parents = byStart(parents);
  kids = byStart(kids);
  const ps = parents;
  const ks = kids;
  const out = [];
  let k = 0;
  for (let p = 0; p < ps.length; p += 2) {
    const end = ps[p + 1];
    let at = ps[p];
    while (k < ks.length && ks[k + 1] <= at) k += 2;
    while (k < ks.length && ks[k] < end) {
      if (ks[k] - at >= minTotal) out.push(at, ks[k]);
      at = Math.max(at, ks[k + 1]);
      k += 2;
    }
    if (end - at >= minTotal) out.push(at, end);
  }
  return out;
}

/** Pairs [lo, hi] of a flat array, sorted by lo. */
function byStart(a) {
  let sorted = true;
  for (let k = 2; k < a.length && sorted; k += 2) sorted = a[k - 2] <= a[k];
  if (sorted) return a;
  const idx = [];
  for (let k = 0; k < a.length; k += 2) idx.push(k);
  idx.sort((p, q) => a[p] - a[q]);
  const out = new Array(a.length);
  idx.forEach((k, n) => {
    out[2 * n] = a[k];
    out[2 * n + 1] = a[k + 1];
  });
  return out;
}

/**
 * The elided range of depth `d` holding value `v` (see elidedSpans): { lo, hi }, or null. With
 * `reach` (a value, for a finger: a few pixels' worth), the nearest range within that distance
 * of `v` when none holds it, so that a mark a pixel wide can be tapped.
 */
export function elidedAt(chunks, d, v, x0, x1, minTotal, reach = 0) {
  const s = elidedSpans(chunks, d, x0, x1, minTotal);
  let best = null;
  let gap = Infinity;
  for (let k = 0; k < s.length; k += 2) {
    const away = v < s[k] ? s[k] - v : v >= s[k + 1] ? v - s[k + 1] : -1;
    if (away < 0) return { lo: s[k], hi: s[k + 1] };
    if (away <= reach && away < gap) {
      gap = away;
      best = { lo: s[k], hi: s[k + 1] };
    }
  }
  return best;
}

/** Frames of depth `d` (total above 0) starting in [lo, hi) among decoded chunks, as { chunk, row }. */
export function* framesStartingIn(chunks, d, lo, hi) {
  for (const c of chunks) {
    const [i, j] = rowsInRange(c, d, lo, hi);
    for (let r = i; r < j; r++) if (c.offset[r] >= lo && c.total[r] > 0) yield { chunk: c, row: r };
  }
}

/** Frames of depth `d` (total above 0) starting in [lo, hi) among decoded chunks: how many there are, and their sum. */
export function framesIn(chunks, d, lo, hi) {
  let count = 0;
  let sum = 0;
  for (const { chunk, row } of framesStartingIn(chunks, d, lo, hi)) {
    count += 1;
    sum += chunk.total[row];
  }
  return { count, sum };
}
