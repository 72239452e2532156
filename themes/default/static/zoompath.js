// A zoom that goes to another run: the zoomed frame named by its path of names (format.js
// `zp`), since the other run's offsets are its own. The page a link leaves gives the path of
// its zoomed frame; the page it opens walks down that path, one depth at a time, reading only
// the chunks over the frame above at that depth. Loaded when a page has such links and is
// zoomed, or opens with such a path, or switches between the layouts of a plain graph (by name,
// left-heavy): the first view does without it.

import { chunksAt, chunksIn, frameAt, framesStartingIn } from "./layout.js";
import { nameHash } from "./format.js";

/**
 * The path of name hashes, from depth 1 down to the zoomed frame `z` ({ depth, offset }), of
 * graph `g` ({ manifest, source, names }): each frame on it contains the zoom's offset. Its
 * chunks and the name files of its frames are fetched when they are not in yet. Null when one
 * of them cannot be had.
 */
export async function pathOf(g, z) {
  const path = [];
  for (let d = 1; d <= z.depth; d++) {
    const chunks = await Promise.all(chunksAt(g.manifest, d, z.offset).map((e) => g.source.chunk(e)));
    const hit = frameAt(chunks, d, z.offset);
    if (!hit) return null;
    const n = hit.chunk.name[hit.row];
    await g.source.nameFile(g.names, g.names.fileOf(n));
    path.push(nameHash(g.names.names[n]));
  }
  return path;
}

/**
 * The frame of graph `g` at the end of `path` (name hashes from depth 1): at each depth the
 * child of the frame found above (every frame at that depth inside its extent) whose name has
 * the path's hash; siblings' names differ, so there is at most one. Returns { chunk, row }, or
 * null when the graph has no such path.
 */
export async function findPath(g, path) {
  let lo = 0;
  let hi = g.manifest.total;
  let found = null;
  for (let d = 1; d <= path.length; d++) {
    const chunks = await Promise.all(chunksIn(g.manifest, d, lo, hi).map((e) => g.source.chunk(e)));
    const rows = [...framesStartingIn(chunks, d, lo, hi)];
    const files = new Set(rows.map((f) => g.names.fileOf(f.chunk.name[f.row])));
    await Promise.all([...files].map((i) => g.source.nameFile(g.names, i)));
    found = rows.find((f) => nameHash(g.names.names[f.chunk.name[f.row]]) === path[d - 1]) || null;
    if (!found) return null;
    lo = found.chunk.offset[found.row];
    hi = lo + found.chunk.total[found.row];
  }
  return found;
}

/**
 * Viewer `v` shows its graph left-heavy (children heaviest first), or by name again. The
 * offsets differ between the two, so its zoom goes over by its frame's path, as to another run.
 */
export function toggleLeftHeavy(v) {
  const g = v.g;
  const z = v.zoom;
  const to = v.st.layout === "left" ? "union" : "left";
  const go = (path) => {
    if (v.g !== g) return;
    v.st.layout = to;
    v.st.zoom = null;
    v.st.zoomPath = path && path.length ? path : null;
    v.updateUrl();
    v.loadGraph();
  };
  if (!z || !g || !g.manifest || !g.names) return go(null);
  v.pathsPending += 1;
  pathOf(g, z)
    .then(go, () => go(null))
    .finally(() => (v.pathsPending -= 1));
}
