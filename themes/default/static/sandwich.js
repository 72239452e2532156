// The sandwich of a function F, as speedscope has it, and the paper's "merging around a
// function": every call of F merged into one tree of what it calls (callees, rooted at F), and
// every path that calls it merged into one tree of its callers (rooted at F, a caller above
// what it calls). Pure functions over decoded chunks (fetch.js): node's tests import this file.
//
// A call of F is a frame named F none of whose ancestors is named F (the outermost call): a
// call of F inside another (recursion) is part of the outer one's callees and is not counted
// again, so both trees have the root total the name table gives F (the union of its frames'
// extents, what a search for exactly F matches).
//
//   callees: each call's frame, with its whole subtree, is merged into the tree rooted at F:
//            a node is a path F → … → X below a call, its total and self the sums over the
//            frames on that path.
//   callers: each call adds its total to the path F ← parent ← … ← the stack's first frame,
//            merged from F upward: a node F ← … ← X is the value of the calls of F made
//            through that path; its self is the part whose stacks begin at X.
//
// The trees are laid out as one decoded chunk each (depth, offset, total, self, id, parent and
// name columns, rows by depth then offset; children ordered by name, a node's self after its
// children), so layout.js, draw.js and nav.js draw and hit-test them as any graph.

import { depthRows } from "./layout.js";

const enc = new TextEncoder();

/** Compare names by their UTF-8 bytes (the graph's order of children, docs/FORMAT.md). */
export function byteOrder(a, b) {
  if (a === b) return 0;
  // Code points compare as UTF-8 bytes do; UTF-16 units differ only past U+FFFF.
  if (/^[\x00-\x7f]*$/.test(a) && /^[\x00-\x7f]*$/.test(b)) return a < b ? -1 : 1;
  const x = enc.encode(a);
  const y = enc.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * The chunk entries a sandwich of a function needs: those intersecting one of its search
 * intervals (`iv`, flat [lo, hi, …], sorted and disjoint; its frames, their callees and their
 * ancestors all lie over them), holding frames wider than 0. Without intervals (`iv` null)
 * every chunk.
 */
export function sandwichChunks(manifest, iv) {
  const out = [];
  for (const c of manifest.chunks) {
    if (!(c.max_total > 0)) continue;
    if (iv === null) {
      out.push(c);
      continue;
    }
    // The first interval ending after the chunk's start; it intersects when it starts before its end.
    let lo = 0;
    let hi = iv.length / 2;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (iv[2 * mid + 1] > c.offset[0]) hi = mid;
      else lo = mid + 1;
    }
    if (lo < iv.length / 2 && iv[2 * lo] < c.offset[1]) out.push(c);
  }
  return out;
}

/**
 * A merged tree being built: nodes in typed arrays that grow, node 0 the root; a child is
 * found by (parent, name) in an open-addressing hash table (a Map keyed by parent · names +
 * name runs past V8's small integers and costs several times more per lookup).
 */
class Tree {
  constructor(diff) {
    this.n = 1;
    this.diff = diff;
    this.cap = 0;
    this.grow(1024);
    this.slots = new Int32Array(2048).fill(-1); // node index, -1 empty
    this.mask = 2047;
  }

  grow(cap) {
    const keep = (a, T) => {
      const b = new T(cap);
      if (a) b.set(a.subarray(0, this.n));
      return b;
    };
    this.parent = keep(this.parent, Int32Array);
    this.name = keep(this.name, Uint32Array);
    this.total = keep(this.total, Float64Array);
    this.self = keep(this.self, Float64Array);
    if (this.diff) {
      this.bt = keep(this.bt, Float64Array);
      this.bs = keep(this.bs, Float64Array);
      this.at = keep(this.at, Float64Array);
      this.as = keep(this.as, Float64Array);
    }
    if (this.cap === 0) this.parent[0] = -1;
    this.cap = cap;
  }

  child(p, n) {
    const mask = this.mask;
    const slots = this.slots;
    let h = (Math.imul(p, 0x9e3779b1) ^ Math.imul(n + 1, 0x85ebca77)) & mask;
    for (;;) {
      const c = slots[h];
      if (c < 0) break;
      if (this.parent[c] === p && this.name[c] === n) return c;
      h = (h + 1) & mask;
    }
    const c = this.n++;
    if (c === this.cap) this.grow(this.cap * 2);
    this.parent[c] = p;
    this.name[c] = n;
    slots[h] = c;
    if (2 * this.n > mask) this.rehash();
    return c;
  }

  rehash() {
    const size = 2 * (this.mask + 1);
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let c = 1; c < this.n; c++) {
      let h = (Math.imul(this.parent[c], 0x9e3779b1) ^ Math.imul(this.name[c] + 1, 0x85ebca77)) & mask;
      while (slots[h] >= 0) h = (h + 1) & mask;
      slots[h] = c;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/**
 * Merge the sandwich of name id `fn` from decoded chunks (`chunks`: every frame of the calls of
 * `fn`, their subtrees and their ancestors must be among them; other frames may be), of a graph
 * of `frameCount` frames. `iv`: the function's search intervals (flat [lo, hi, …], sorted,
 * disjoint), or null: only the rows over them are read (the others are neither its calls, nor
 * below them, nor their ancestors). Returns { callees, callers, calls } where each tree is
 * { n, parent, name, total, self (and, of a differential graph, bt, bs, at, as: before and
 * after totals and selfs) } with node 0 the root (named `fn`), and `calls` the number of calls
 * (outermost frames of `fn`). A frame whose parent is missing from `chunks` is skipped.
 */
export function mergeSandwich(chunks, fn, frameCount, iv = null) {
  const diff = chunks.some((c) => c.diff);
  const callees = new Tree(diff);
  const callers = new Tree(diff);
  callees.name[0] = fn;
  callers.name[0] = fn;
  // Per frame id: its name and parent (-1: not seen), and its node in the callees tree (-1: not below a call).
  const nameOf = new Int32Array(frameCount).fill(-1);
  const parentOf = new Int32Array(frameCount).fill(-1);
  const node = new Int32Array(frameCount).fill(-1);
  let depthHi = 0;
  for (const c of chunks) depthHi = Math.max(depthHi, c.depthHi);
  let calls = 0;
  const seg = [];
  // Depth by depth, so that a frame's parent and ancestors are seen before it.
  for (let d = 0; d < depthHi; d++) {
    for (const c of chunks) {
      if (d < c.depthLo || d >= c.depthHi) continue;
      const [i, j] = depthRows(c, d);
      if (i === j) continue;
      seg.length = 0;
      if (iv === null || d === 0) seg.push(i, j);
      else over(c, i, j, iv, seg);
      const ids = c.id;
      const par = c.parent;
      const nm = c.name;
      for (let s = 0; s < seg.length; s += 2) {
        for (let r = seg[s]; r < seg[s + 1]; r++) {
          const id = ids[r];
          const n = nm[r];
          const p = par[r] === 0xffffffff ? -1 : par[r];
          nameOf[id] = n;
          parentOf[id] = p;
          if (d === 0) continue; // the root, `all`
          let at = -1;
          const up = node[p];
          if (up >= 0) at = callees.child(up, n);
          else if (n === fn && nameOf[p] >= 0) {
            // An outermost call: the callees' root, and its path up the callers' tree.
            at = 0;
            calls += 1;
            let k = 0;
            add(callers, 0, c, r, false);
            for (let q = p; q > 0; q = parentOf[q]) {
              if (nameOf[q] < 0) break; // an ancestor not fetched: the path stops short
              k = callers.child(k, nameOf[q]);
              add(callers, k, c, r, false);
            }
            // The part of this call whose stacks begin at the last caller (or at F itself).
            add(callers, k, c, r, true);
          }
          if (at >= 0) {
            node[id] = at;
            callees.total[at] += c.total[r];
            callees.self[at] += c.self[r];
            if (diff) {
              callees.bt[at] += c.beforeTotal[r];
              callees.bs[at] += c.beforeSelf[r];
              callees.at[at] += c.afterTotal[r];
              callees.as[at] += c.afterSelf[r];
            }
          }
        }
      }
    }
  }
  return { callees, callers, calls };
}

/** First index in [lo, hi) of `iv`'s intervals ending after `v`. */
function intervalAfter(iv, lo, hi, v) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (iv[2 * mid + 1] > v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** First row in [lo, hi) of chunk `c` ending after `v` (rows of one depth, by offset). */
function rowAfter(c, lo, hi, v) {
  const off = c.offset;
  const tot = c.total;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (off[mid] + tot[mid] > v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The runs of rows [i, j) of one depth of `c` that intersect an interval of `iv`, into `out` as [from, to, …]. */
function over(c, i, j, iv, out) {
  const k = iv.length / 2;
  const off = c.offset;
  const tot = c.total;
  let q = intervalAfter(iv, 0, k, off[i]);
  let r = i;
  while (r < j && q < k) {
    const lo = iv[2 * q];
    const hi = iv[2 * q + 1];
    if (off[r] + tot[r] <= lo) {
      r = rowAfter(c, r, j, lo);
      continue;
    }
    if (off[r] >= hi) {
      q = intervalAfter(iv, q + 1, k, off[r]);
      continue;
    }
    // Rows from r on while they start before this interval's end.
    let e = r + 1;
    while (e < j && off[e] < hi) e += 1;
    if (out.length && out[out.length - 1] === r) out[out.length - 1] = e;
    else out.push(r, e);
    r = e;
  }
}

/** Add frame `r` of chunk `c` to node `k` of a callers tree: its total, or (`self`) to its self. */
function add(tree, k, c, r, self) {
  if (self) {
    tree.self[k] += c.total[r];
    if (tree.diff) {
      tree.bs[k] += c.beforeTotal[r];
      tree.as[k] += c.afterTotal[r];
    }
    return;
  }
  tree.total[k] += c.total[r];
  if (tree.diff) {
    tree.bt[k] += c.beforeTotal[r];
    tree.at[k] += c.afterTotal[r];
  }
}

/**
 * Lay a merged tree out as one decoded chunk (fetch.js decodeChunk's shape, values as
 * Float64Arrays): depth-first ids, children ordered by `names[name]` in byte order, each child
 * after the totals of the ones before it, a node's self after its children. `names`: the name
 * table's names array, every name id of the tree in it. Linear but for one sort of the tree's
 * distinct names and of each node's children by their rank.
 */
export function layoutTree(tree, names) {
  const n = tree.n;
  // Each name's rank among the tree's names, so children sort by an integer.
  const distinct = [...new Set(tree.name.subarray(0, n))];
  distinct.sort((a, b) => byteOrder(names[a] ?? "", names[b] ?? "") || a - b);
  const rank = new Map(distinct.map((x, i) => [x, i]));
  const rk = new Int32Array(n);
  for (let i = 0; i < n; i++) rk[i] = rank.get(tree.name[i]);
  // Children lists in one array (counting sort by parent), each sorted by rank.
  const first = new Int32Array(n + 1);
  for (let i = 1; i < n; i++) first[tree.parent[i] + 1] += 1;
  for (let i = 0; i < n; i++) first[i + 1] += first[i];
  const kids = new Int32Array(Math.max(0, n - 1));
  const fill = first.slice(0, n);
  for (let i = 1; i < n; i++) kids[fill[tree.parent[i]]++] = i;
  for (let v = 0; v < n; v++) {
    if (first[v + 1] - first[v] > 1) {
      const part = kids.subarray(first[v], first[v + 1]);
      part.sort((a, b) => rk[a] - rk[b]);
    }
  }
  // Rows in breadth-first order over sorted children are rows by depth, then offset.
  const rows = new Int32Array(n);
  const depth = new Int32Array(n);
  const offset = new Float64Array(n);
  rows[0] = 0;
  let tail = 1;
  for (let h = 0; h < tail; h++) {
    const v = rows[h];
    let o = offset[v];
    for (let k = first[v]; k < first[v + 1]; k++) {
      const c = kids[k];
      depth[c] = depth[v] + 1;
      offset[c] = o;
      o += tree.total[c];
      rows[tail++] = c;
    }
  }
  const depthHi = n ? depth[rows[n - 1]] + 1 : 0;
  // Depth-first ids: a child's is its parent's plus one plus the sizes of the siblings before it.
  const size = new Int32Array(n).fill(1);
  for (let h = n - 1; h > 0; h--) size[tree.parent[rows[h]]] += size[rows[h]];
  const id = new Uint32Array(n);
  for (let h = 0; h < n; h++) {
    const v = rows[h];
    let next = id[v] + 1;
    for (let k = first[v]; k < first[v + 1]; k++) {
      id[kids[k]] = next;
      next += size[kids[k]];
    }
  }
  const rowStart = new Uint32Array(depthHi + 1);
  for (let i = 0; i < n; i++) rowStart[depth[i] + 1] += 1;
  for (let d = 0; d < depthHi; d++) rowStart[d + 1] += rowStart[d];
  const col = (src, T = Float64Array) => {
    const out = new T(n);
    for (let h = 0; h < n; h++) out[h] = src[rows[h]];
    return out;
  };
  const parentId = new Uint32Array(n);
  for (let h = 0; h < n; h++) parentId[h] = h === 0 ? 0xffffffff : id[tree.parent[rows[h]]];
  const c = {
    n,
    depthLo: 0,
    depthHi,
    rowStart,
    offset: col(offset),
    total: col(tree.total),
    self: col(tree.self),
    beforeTotal: null,
    beforeSelf: null,
    afterTotal: null,
    afterSelf: null,
    id: col(id, Uint32Array),
    parent: parentId,
    name: col(tree.name, Uint32Array),
    diff: !!tree.diff,
  };
  if (tree.diff) {
    c.beforeTotal = col(tree.bt);
    c.beforeSelf = col(tree.bs);
    c.afterTotal = col(tree.at);
    c.afterSelf = col(tree.as);
  }
  return c;
}

/** The root's children of a laid-out tree, widest first: [{ name, total, self }] (for the script API). */
export function topNodes(chunk, names, limit = 20) {
  const [i, j] = depthRows(chunk, 1);
  const out = [];
  for (let r = i; r < j; r++) out.push({ name: names[chunk.name[r]], total: chunk.total[r], self: chunk.self[r] });
  out.sort((a, b) => b.total - a.total || byteOrder(a.name, b.name));
  return out.slice(0, limit);
}
