// Layout: pure arithmetic between values, depths and pixels. The build laid every frame out
// already (depth, offset, total), so nothing here walks a tree: a view is a value range
// [x0, x1) across the canvas width and a window of depths, and a frame's rectangle follows
// from its own row of a chunk.
//
// A view: { x0, x1, width, height, rowH, depthCount, icicle, scrollTop, minHeight }, lengths
// in CSS pixels. The content box is depthCount * rowH high (at least minHeight); flame mode
// (icicle false) puts depth 0 at its bottom, icicle mode at its top. The canvas shows the part
// of it from scrollTop to scrollTop + height.

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
  if (chunk.diff) {
    f.beforeTotal = chunk.beforeTotal[row];
    f.beforeSelf = chunk.beforeSelf[row];
    f.afterTotal = chunk.afterTotal[row];
    f.afterSelf = chunk.afterSelf[row];
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
