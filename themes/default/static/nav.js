// Keyboard navigation between frames: from a frame ({ depth, offset, total }) to its parent,
// its first child, or its neighbour at the same depth, among the decoded chunks on the
// canvas, skipping frames narrower than `minTotal` (not drawn). Pure: node's tests import it.

import { depthRows, frameAt } from "./layout.js";

/** The frame at `depth` whose extent contains `v` ({ chunk, row }), or null. */
function at(chunks, depth, v, minTotal) {
  return depth < 0 ? null : frameAt(chunks, depth, v, minTotal);
}

/** The drawn frames of `depth` as { chunk, row }, by offset. */
function rowsOf(chunks, depth, minTotal) {
  const out = [];
  for (const c of chunks) {
    const [lo, hi] = depthRows(c, depth);
    for (let r = lo; r < hi; r++) if (c.total[r] > 0 && c.total[r] >= minTotal) out.push({ chunk: c, row: r });
  }
  out.sort((a, b) => a.chunk.offset[a.row] - b.chunk.offset[b.row]);
  // Chunks of several classes may hold the same frame: keep one per offset.
  return out.filter((h, i) => i === 0 || out[i - 1].chunk.offset[out[i - 1].row] !== h.chunk.offset[h.row]);
}

/**
 * The frame a key moves to from `f`: "parent", "child" (the first drawn child, leftmost),
 * "next" or "prev" (the neighbour at the same depth). Returns { chunk, row } or null.
 */
export function step(chunks, f, dir, minTotal = 0) {
  if (dir === "parent") return at(chunks, f.depth - 1, f.offset, minTotal);
  if (dir === "child") {
    const end = f.offset + f.total;
    return rowsOf(chunks, f.depth + 1, minTotal).find((h) => h.chunk.offset[h.row] >= f.offset && h.chunk.offset[h.row] < end) || null;
  }
  const rows = rowsOf(chunks, f.depth, minTotal);
  const i = rows.findIndex((h) => h.chunk.offset[h.row] === f.offset);
  if (i < 0) return null;
  const j = dir === "next" ? i + 1 : i - 1;
  return j >= 0 && j < rows.length ? rows[j] : null;
}

/** The arrow key's direction on screen: in a flame graph children are above, in an icicle below. */
export function keyDirection(key, icicle) {
  if (key === "ArrowLeft") return "prev";
  if (key === "ArrowRight") return "next";
  if (key === "ArrowUp") return icicle ? "parent" : "child";
  if (key === "ArrowDown") return icicle ? "child" : "parent";
  return null;
}
