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

/** A merged tree being built: flat arrays of nodes, children found by (parent, name). */
class Tree {
  constructor(nameCount, diff) {
    this.k = nameCount + 1;
    this.kids = new Map();
    this.parent = [-1];
    this.name = [0];
    this.total = [0];
    this.self = [0];
    this.diff = diff;
    if (diff) {
      this.bt = [0];
      this.bs = [0];
      this.at = [0];
      this.as = [0];
    }
  }

  child(p, n) {
    const key = p * this.k + n;
    let c = this.kids.get(key);
    if (c === undefined) {
      c = this.name.length;
      this.kids.set(key, c);
      this.parent.push(p);
      this.name.push(n);
      this.total.push(0);
      this.self.push(0);
      if (this.diff) {
        this.bt.push(0);
        this.bs.push(0);
        this.at.push(0);
        this.as.push(0);
      }
    }
    return c;
  }
}

/**
 * Merge the sandwich of name id `fn` from decoded chunks (`chunks`: every frame of the calls of
 * `fn`, their subtrees and their ancestors must be among them; other frames may be), of a graph
 * of `frameCount` frames and `nameCount` names. Returns { callees, callers, calls } where each
 * tree is { parent, name, total, self (and, of a differential graph, bt, bs, at, as: before and
 * after totals and selfs) } with node 0 the root (named `fn`), and `calls` the number of calls
 * (outermost frames of `fn`). A frame whose parent is missing from `chunks` is skipped.
 */
export function mergeSandwich(chunks, fn, frameCount, nameCount) {
  const diff = chunks.some((c) => c.diff);
  const callees = new Tree(nameCount, diff);
  const callers = new Tree(nameCount, diff);
  callees.name[0] = fn;
  callers.name[0] = fn;
  // Per frame id: its name and parent (-1: not seen), and its node in the callees tree (-1: not below a call).
  const nameOf = new Int32Array(frameCount).fill(-1);
  const parentOf = new Int32Array(frameCount).fill(-1);
  const node = new Int32Array(frameCount).fill(-1);
  let depthHi = 0;
  for (const c of chunks) depthHi = Math.max(depthHi, c.depthHi);
  let calls = 0;
  // Depth by depth, so that a frame's parent and ancestors are seen before it.
  for (let d = 0; d < depthHi; d++) {
    for (const c of chunks) {
      if (d < c.depthLo || d >= c.depthHi) continue;
      const [i, j] = depthRows(c, d);
      const ids = c.id;
      const par = c.parent;
      const nm = c.name;
      for (let r = i; r < j; r++) {
        const id = ids[r];
        const n = nm[r];
        const p = par[r] === 0xffffffff ? -1 : par[r];
        nameOf[id] = n;
        parentOf[id] = p;
        if (d === 0) continue; // the root, `all`
        const t = c.total[r];
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
          callees.total[at] += t;
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
  return { callees, callers, calls };
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
 * table's names array, every name id of the tree in it.
 */
export function layoutTree(tree, names) {
  const n = tree.name.length;
  const kids = Array.from({ length: n }, () => []);
  for (let i = 1; i < n; i++) kids[tree.parent[i]].push(i);
  const order = (a, b) => byteOrder(names[tree.name[a]] ?? "", names[tree.name[b]] ?? "") || a - b;
  const depth = new Int32Array(n);
  const offset = new Float64Array(n);
  const id = new Uint32Array(n); // node -> depth-first id
  let next = 0;
  let depthHi = 1;
  // Depth-first, iteratively: a tree may be deeper than the call stack allows recursion.
  const stack = [0];
  while (stack.length) {
    const v = stack.pop();
    id[v] = next++;
    if (depth[v] + 1 > depthHi) depthHi = depth[v] + 1;
    const ks = kids[v].sort(order);
    let o = offset[v];
    for (const k of ks) {
      depth[k] = depth[v] + 1;
      offset[k] = o;
      o += tree.total[k];
    }
    for (let i = ks.length - 1; i >= 0; i--) stack.push(ks[i]);
  }
  // Rows by depth, then offset (children were given increasing offsets in order).
  const rows = Array.from({ length: n }, (_, i) => i).sort((a, b) => depth[a] - depth[b] || offset[a] - offset[b] || id[a] - id[b]);
  const rowStart = new Uint32Array(depthHi + 1);
  for (let i = 0; i < n; i++) rowStart[depth[i] + 1] += 1;
  for (let d = 0; d < depthHi; d++) rowStart[d + 1] += rowStart[d];
  const col = (src) => Float64Array.from(rows, (v) => src[v]);
  const c = {
    n,
    depthLo: 0,
    depthHi,
    rowStart,
    offset: Float64Array.from(rows, (v) => offset[v]),
    total: col(tree.total),
    self: col(tree.self),
    beforeTotal: null,
    beforeSelf: null,
    afterTotal: null,
    afterSelf: null,
    id: Uint32Array.from(rows, (v) => id[v]),
    parent: Uint32Array.from(rows, (v) => (v === 0 ? 0xffffffff : id[tree.parent[v]])),
    name: Uint32Array.from(rows, (v) => tree.name[v]),
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
