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

import { GraphError, addUp, joinPlanes } from "./fetch.js";

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
    // The first interval ending after the chunk's start; it intersects when it starts before
    // its end. (The intervals are in the default layout: a left-heavy view's entries keep it.)
    const at = c.nameOffset || c.offset;
    let lo = 0;
    let hi = iv.length / 2;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (iv[2 * mid + 1] > at[0]) hi = mid;
      else lo = mid + 1;
    }
    if (lo < iv.length / 2 && iv[2 * lo] < at[1]) out.push(c);
  }
  return out;
}


/** The before and after columns that a differential graph's growing column sets add. */
const DIFF_COLUMNS = [["bt", Float64Array], ["bs", Float64Array], ["at", Float64Array], ["as", Float64Array]];

/**
 * Gives object `o` its `columns` ([name, typed array type] pairs, and DIFF_COLUMNS when `diff`)
 * of `cap` entries each, holding the first `used` entries they had (none when new): how the
 * growing column sets below grow.
 */
function regrowColumns(o, columns, diff, cap, used) {
  for (const [key, T] of diff ? columns.concat(DIFF_COLUMNS) : columns) {
    const b = new T(cap);
    if (o[key]) b.set(o[key].subarray(0, used));
    o[key] = b;
  }
}

/** A LazyTree's columns, by node. */
const TREE_COLUMNS = [
  ["parent", Int32Array], ["name", Uint32Array], ["total", Float64Array], ["self", Float64Array],
  ["kid", Int32Array], ["kids", Int32Array], ["from", Int32Array], ["to", Int32Array],
];

/**
 * A merged tree, refined on demand: node 0 the root (named `fn`); a node's total, self and
 * before/after values are known when it is made, but its children only once it is expanded
 * (`expand`), which makes them all at once, in consecutive node indices, ordered by name
 * (byte order). A node narrower than what a view draws need never be expanded: its children
 * are narrower still. Columns grow: `parent`, `name`, `total`, `self` (of a differential graph
 * also `bt`, `bs`, `at`, `as`: before and after totals and selfs), `kid` (first child) and
 * `kids` (how many; -1 until expanded).
 *
 * What a node stands for is a run of `items` (calls or frames, see the two kinds below) in a
 * pool, [`from`, `to`): expanding it groups them by the name of the next frame along.
 */
class LazyTree {
  constructor(diff, size) {
    this.n = 1;
    this.diff = diff;
    this.cap = 0;
    this.grow(Math.max(16, size));
    this.parent[0] = -1;
    this.kids[0] = -1;
  }

  grow(cap) {
    regrowColumns(this, TREE_COLUMNS, this.diff, cap, this.n);
    this.cap = cap;
  }

  /** Make node `v`'s children from the groups `g` (Groups), in byte order of their names. */
  make(v, g, names) {
    const k = g.count;
    if (this.n + k > this.cap) this.grow(Math.max(2 * this.cap, this.n + k));
    const order = byName(g.names, k, names);
    const first = this.n;
    for (let i = 0; i < k; i++) {
      const b = order[i];
      const c = first + i;
      g.node[b] = c;
      this.parent[c] = v;
      this.name[c] = g.names[b];
      this.total[c] = g.total[b];
      this.self[c] = g.self[b];
      if (this.diff) {
        this.bt[c] = g.bt[b];
        this.bs[c] = g.bs[b];
        this.at[c] = g.at[b];
        this.as[c] = g.as[b];
      }
      this.kids[c] = -1;
    }
    this.n += k;
    this.kid[v] = first;
    this.kids[v] = k;
  }
}

/** Indices 0 .. k-1 ordered by the byte order of `names[ids[i]]`. */
function byName(ids, k, names) {
  if (k < 2) return ORDER[k];
  const idx = new Array(k);
  const keys = new Array(k);
  let ascii = true;
  for (let i = 0; i < k; i++) {
    idx[i] = i;
    const s = names[ids[i]] ?? "";
    keys[i] = s;
    if (ascii && !ASCII.test(s)) ascii = false;
  }
  // ASCII strings compare as their bytes do; others by their UTF-8 bytes.
  if (ascii) idx.sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
  else idx.sort((a, b) => byteOrder(keys[a], keys[b]));
  return idx;
}

const ORDER = [[], [0]];
const ASCII = /^[\x00-\x7f]*$/;

/** Groups' columns, by group. */
const GROUP_COLUMNS = [
  ["names", Int32Array], ["total", Float64Array], ["self", Float64Array],
  ["items", Int32Array], ["node", Int32Array], ["fill", Int32Array],
];

/**
 * Scratch space for grouping one node's items by name: per name id its group (-1 none), and
 * per group its name, sums and item count. Reset after each use by walking its groups.
 */
class Groups {
  constructor(nameCount, diff) {
    this.of = new Int32Array(nameCount).fill(-1);
    this.diff = diff;
    this.count = 0;
    this.size(64);
  }

  size(cap) {
    regrowColumns(this, GROUP_COLUMNS, this.diff, cap, this.count);
    this.cap = cap;
  }

  /** The group of name `n`, made empty when new. */
  of1(n) {
    let b = this.of[n];
    if (b >= 0) return b;
    b = this.count++;
    if (b === this.cap) this.size(2 * this.cap);
    this.of[n] = b;
    this.names[b] = n;
    this.total[b] = 0;
    this.self[b] = 0;
    this.items[b] = 0;
    if (this.diff) {
      this.bt[b] = 0;
      this.bs[b] = 0;
      this.at[b] = 0;
      this.as[b] = 0;
    }
    return b;
  }

  reset() {
    for (let b = 0; b < this.count; b++) this.of[this.names[b]] = -1;
    this.count = 0;
  }
}

/**
 * The frames of a graph's decoded chunks by frame id, filled chunk by chunk as they arrive:
 * name (-1: no chunk of it added yet), parent (-1: the root), and values (of a differential
 * graph also `bt`, `bs`, `at`, `as`: before and after totals and selfs). A sandwich reads it
 * in id order, which puts every frame after its ancestors (ids are depth-first).
 */
export class FrameIndex {
  constructor(frameCount, diff) {
    this.frames = frameCount;
    this.diff = diff;
    this.name = new Int32Array(frameCount).fill(-1);
    this.parent = new Int32Array(frameCount);
    this.total = new Float64Array(frameCount);
    this.self = new Float64Array(frameCount);
    if (diff) {
      this.bt = new Float64Array(frameCount);
      this.bs = new Float64Array(frameCount);
      this.at = new Float64Array(frameCount);
      this.as = new Float64Array(frameCount);
    }
    this.added = new WeakSet();
    this.nameCount = 0;
  }

  /** Put the frames of decoded chunk `c` in (once). */
  add(c) {
    if (this.added.has(c)) return;
    this.added.add(c);
    const { id, name, parent, total, self } = c;
    for (let r = 0; r < c.n; r++) {
      const f = id[r];
      if (f >= this.frames) continue;
      const n = name[r];
      this.name[f] = n;
      if (n >= this.nameCount) this.nameCount = n + 1;
      this.parent[f] = parent[r]; // 0xffffffff, the root's, is -1 here
      this.total[f] = total[r];
      this.self[f] = self[r];
    }
    if (this.diff && c.diff) {
      for (let r = 0; r < c.n; r++) {
        const f = id[r];
        if (f >= this.frames) continue;
        this.bt[f] = c.beforeTotal[r];
        this.bs[f] = c.beforeSelf[r];
        this.at[f] = c.afterTotal[r];
        this.as[f] = c.afterSelf[r];
      }
    }
  }
}

/**
 * The sandwich of name id `fn` from `source`: a FrameIndex, or decoded chunks (an index is made
 * of them) of a graph of `frameCount` frames. Every frame of the calls of `fn`, their subtrees
 * and their ancestors must be in it (the chunks over the function's search intervals hold
 * them: sandwichChunks); other frames may be. Returns { callees, callers, calls }: two
 * LazyTrees (node 0 the root, named `fn`; children made on demand by `expandNode`, or by
 * `layoutTree` for what it keeps) and the number of calls (outermost frames of `fn`). A frame
 * whose parent is missing is skipped; an ancestor missing ends a callers path.
 *
 * One pass over the frames in id order lists the calls and links the frames below them to
 * their parents. Expanding a callees node groups its frames' children by name; expanding a
 * callers node moves each of its calls one ancestor up and groups them by that ancestor's name
 * (the calls whose stacks begin there are its self). The work past that pass is in proportion
 * to the items of the nodes expanded, not to the whole trees: a view expands only the nodes it
 * draws.
 */
export function mergeSandwich(source, fn, frameCount = 0) {
  let x = source;
  if (Array.isArray(source)) {
    x = new FrameIndex(frameCount, source.some((c) => c.diff));
    for (const c of source) x.add(c);
  }
  const diff = x.diff;
  const { name: nameOf, parent: parentOf } = x;
  const N = x.frames;
  // Of a call or a frame below one, its place `k` in `f` (-1: neither), where its name, values
  // and children (a list through `head` and `next`, -1 ending it) are kept side by side.
  const slot = new Int32Array(N).fill(-1);
  const f = new Below(diff);
  const callK = [];
  const callUp = [];
  for (let id = 1; id < N; id++) {
    const n = nameOf[id];
    if (n < 0) continue;
    const p = parentOf[id];
    if (p < 0) continue;
    const sp = slot[p];
    let k;
    if (sp >= 0) {
      k = f.add(n, x, id);
      f.next[k] = f.head[sp];
      f.head[sp] = k;
    } else if (n === fn && nameOf[p] >= 0) {
      // An outermost call.
      k = f.add(n, x, id);
      callK.push(k);
      callUp.push(p);
    } else continue;
    slot[id] = k;
  }
  const C = callK.length;
  const m = { diff, nameOf, parentOf, f, groups: new Groups(Math.max(x.nameCount, fn + 1), diff) };
  // Callees: items are places in `f`; the root's are the calls.
  const callees = new LazyTree(diff, 1024);
  callees.kind = "callees";
  callees.items = Int32Array.from(callK);
  callees.m = m;
  // Callers: items are calls (0 .. C-1), each with its values and the ancestor its next step
  // reads (`up`).
  const callers = new LazyTree(diff, 1024);
  callers.kind = "callers";
  callers.items = Int32Array.from({ length: C }, (_, i) => i);
  callers.up = Int32Array.from(callUp);
  const pick = (col) => Float64Array.from(callK, (k) => col[k]);
  callers.value = { total: pick(f.total), bt: diff ? pick(f.bt) : null, at: diff ? pick(f.at) : null };
  callers.m = m;
  for (const t of [callees, callers]) {
    t.name[0] = fn;
    t.from[0] = 0;
    t.to[0] = C;
    for (const k of callK) {
      t.total[0] += f.total[k];
      if (diff) {
        t.bt[0] += f.bt[k];
        t.at[0] += f.at[k];
      }
    }
  }
  for (const k of callK) {
    callees.self[0] += f.self[k];
    if (diff) {
      callees.bs[0] += f.bs[k];
      callees.as[0] += f.as[k];
    }
  }
  return { callees, callers, calls: C };
}

/** Below's columns, by frame. */
const BELOW_COLUMNS = [["name", Int32Array], ["head", Int32Array], ["next", Int32Array], ["total", Float64Array], ["self", Float64Array]];

/** The calls of a function and the frames below them, in id order: names, values, children lists. */
class Below {
  constructor(diff) {
    this.n = 0;
    this.diff = diff;
    this.cap = 0;
    this.grow(1 << 14);
  }

  grow(cap) {
    regrowColumns(this, BELOW_COLUMNS, this.diff, cap, this.cap);
    this.cap = cap;
  }

  /** Frame `id` of FrameIndex `x`, named `n`, with no children yet: its place. */
  add(n, x, id) {
    const k = this.n++;
    if (k === this.cap) this.grow(2 * this.cap);
    this.name[k] = n;
    this.head[k] = -1;
    this.next[k] = -1;
    this.total[k] = x.total[id];
    this.self[k] = x.self[id];
    if (this.diff) {
      this.bt[k] = x.bt[id];
      this.bs[k] = x.bs[id];
      this.at[k] = x.at[id];
      this.as[k] = x.as[id];
    }
    return k;
  }
}

/**
 * Make the children of node `v` of a tree from mergeSandwich (nothing if it has them). Of a
 * callers node, this is also when its self (the calls whose stacks begin at it) is known.
 * `names`: the name table's names array (children are ordered by name).
 */
export function expandNode(t, v, names) {
  if (t.kids[v] >= 0 || t.kind === "fixed") return;
  if (t.kind === "callees") expandCallees(t, v, names);
  else expandCallers(t, v, names);
}

function expandCallees(t, v, names) {
  const { diff, f, groups: g } = t.m;
  const { head, next, name } = f;
  const a = t.from[v];
  const b = t.to[v];
  // Group the children of the node's frames by name, summing their values.
  let count = 0;
  let items = t.items;
  for (let i = a; i < b; i++) {
    for (let x = head[items[i]]; x >= 0; x = next[x]) {
      const k = g.of1(name[x]);
      g.total[k] += f.total[x];
      g.self[k] += f.self[x];
      if (diff) {
        g.bt[k] += f.bt[x];
        g.bs[k] += f.bs[x];
        g.at[k] += f.at[x];
        g.as[k] += f.as[x];
      }
      g.items[k] += 1;
      count += 1;
    }
  }
  t.make(v, g, names);
  // The children's frames, appended to the pool grouped by child.
  let end = t.poolEnd ?? items.length;
  if (end + count > items.length) {
    const grown = new Int32Array(Math.max(2 * items.length, end + count));
    grown.set(items.subarray(0, end));
    t.items = items = grown;
  }
  for (let k = 0; k < g.count; k++) {
    const c = g.node[k];
    t.from[c] = end;
    g.fill[k] = end;
    end += g.items[k];
    t.to[c] = end;
  }
  for (let i = a; i < b; i++) {
    for (let x = head[items[i]]; x >= 0; x = next[x]) items[g.fill[g.of[name[x]]]++] = x;
  }
  t.poolEnd = end;
  g.reset();
}

function expandCallers(t, v, names) {
  const { diff, nameOf, parentOf, groups: g } = t.m;
  const items = t.items;
  const up = t.up;
  const { total, bt, at } = t.value;
  const a = t.from[v];
  const b = t.to[v];
  // Each call one ancestor up: grouped by that ancestor's name, or ending here (its stack
  // begins at this node, or its next ancestor was not fetched).
  let self = 0;
  let bs = 0;
  let as = 0;
  for (let i = a; i < b; i++) {
    const call = items[i];
    const q = up[call];
    if (q <= 0 || nameOf[q] < 0) {
      self += total[call];
      if (diff) {
        bs += bt[call];
        as += at[call];
      }
      continue;
    }
    const k = g.of1(nameOf[q]);
    g.total[k] += total[call];
    if (diff) {
      g.bt[k] += bt[call];
      g.at[k] += at[call];
    }
    g.items[k] += 1;
  }
  t.self[v] = self;
  if (diff) {
    t.bs[v] = bs;
    t.as[v] = as;
  }
  t.make(v, g, names);
  // Reorder the node's calls in place by child (those ending here first), each moved up.
  if (!t.scratch || t.scratch.length < b - a) t.scratch = new Int32Array(Math.max(b - a, 2 * (t.scratch ? t.scratch.length : 1024)));
  const moved = t.scratch;
  moved.set(items.subarray(a, b));
  let fill = a;
  const count = b - a;
  for (let i = 0; i < count; i++) {
    const q = up[moved[i]];
    if (q <= 0 || nameOf[q] < 0) items[fill++] = moved[i];
  }
  for (let k = 0; k < g.count; k++) {
    const c = g.node[k];
    t.from[c] = fill;
    g.fill[k] = fill;
    fill += g.items[k];
    t.to[c] = fill;
  }
  for (let i = 0; i < count; i++) {
    const call = moved[i];
    const q = up[call];
    if (q <= 0 || nameOf[q] < 0) continue;
    items[g.fill[g.of[nameOf[q]]]++] = call;
    up[call] = parentOf[q];
  }
  g.reset();
}

/**
 * A precomputed sandwich file (`FSSW`, docs/FORMAT.md "Sandwich files") of name id `fn`:
 * `{ calls, callers, callees }`, each tree cut at a pixel of the manifest's `root_width`
 * (the build's) and shaped as mergeSandwich's trees, every node already expanded, with its
 * offset from the root (`offset`) and `above`: every node of a larger total is there (the
 * build keeps the nodes of at least a pixel of a `rootWidth` canvas, and all the root's
 * children). Throws
 * GraphError when the bytes do not follow the format.
 */
export function decodeSandwich(data, fn, rootWidth, file = "sandwich file") {
  let buf = data instanceof ArrayBuffer ? data : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const bad = (why) => new GraphError(file, why);
  if (buf.byteLength < 32) throw bad("is too short for a sandwich file");
  const dv = new DataView(buf);
  if (String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3)) !== "FSSW") throw bad("is not a sandwich file (magic)");
  const u = (at) => dv.getUint32(at, true);
  if (u(4) !== 1) throw bad(`version ${u(4)} is not supported (this page reads version 1)`);
  if (u(8) & ~(2 | 4)) throw bad(`has flags ${u(8)} this page does not know`);
  const w = u(8) & 2 ? 4 : 8;
  // Flag 4: coded columns (docs/FORMAT.md "Coded columns"), each tree's columns in byte
  // planes, offsets as gaps and parents as steps.
  const coded = (u(8) & 4) !== 0;
  if (u(12) !== fn) throw bad(`is the sandwich of name ${u(12)}, not of ${fn}`);
  const calls = u(16);
  const sizes = [u(20), u(24)];
  if (buf.byteLength !== 32 + (sizes[0] + sizes[1]) * (3 * w + 8)) throw bad(`is ${buf.byteLength} bytes, not what ${sizes[0]} + ${sizes[1]} nodes take (truncated or corrupt)`);
  if (coded) {
    // Each tree's five columns joined back from their planes (as chunks' are).
    buf = joinPlanes(buf, 32, sizes[0], [w, w, w, 4, 4]);
    buf = joinPlanes(buf, 32 + sizes[0] * (3 * w + 8), sizes[1], [w, w, w, 4, 4]);
  }
  let at = 32;
  const vals = (n) => {
    const a = w === 4 ? new Uint32Array(buf, at, n) : new Float64Array(buf, at, n);
    at += w * n;
    return Float64Array.from(a);
  };
  const u32s = (n) => {
    const a = new Uint32Array(buf, at, n);
    at += 4 * n;
    return a;
  };
  const tree = (n, kind) => {
    const offset = vals(n);
    const total = vals(n);
    const self = vals(n);
    const steps = Uint32Array.from(u32s(n));
    // Coded: parents are steps from the row before, added up (modulo 2^32).
    if (coded) addUp(steps);
    const parent = Int32Array.from(steps);
    const name = Uint32Array.from(u32s(n));
    if (coded) {
      // Each offset is a gap after the sibling before or from the parent's offset.
      for (let r = 0; r < n; r++) {
        const p = parent[r];
        if (r > 0 && p === parent[r - 1]) offset[r] += offset[r - 1] + total[r - 1];
        else if (p >= 0 && p < r) offset[r] += offset[p];
      }
    }
    // Rows are breadth first, children of a node together and by offset: check it, and find them.
    const kid = new Int32Array(n);
    const kids = new Int32Array(n);
    if (n < 1 || parent[0] !== -1 || name[0] !== fn) throw bad(`has no root named ${fn} in its ${kind}`);
    for (let r = 1; r < n; r++) {
      const p = parent[r];
      if (!(p >= 0 && p < r && p >= parent[r - 1])) throw bad(`rows of its ${kind} are not breadth first`);
      if (kids[p] === 0) kid[p] = r;
      else if (offset[r] < offset[r - 1] + total[r - 1]) throw bad(`nodes of its ${kind} overlap`);
      kids[p] += 1;
      if (offset[r] < offset[p] || offset[r] + total[r] > offset[p] + total[p] - self[p]) throw bad(`a node of its ${kind} is outside its parent`);
    }
    for (let r = 0; r < n; r++) if (kids[r] === 0) kid[r] = n;
    // Values are whole numbers: every node above cut − 1 is there.
    return { kind: "fixed", n, parent, name, total, self, offset, kid, kids, diff: false, above: Math.ceil(total[0] / Math.max(1, rootWidth)) - 1 };
  };
  return { calls, callers: tree(sizes[0], "callers"), callees: tree(sizes[1], "callees") };
}

/**
 * Lay a tree from mergeSandwich out as one decoded chunk (fetch.js decodeChunk's shape, values
 * as Float64Arrays), keeping only the nodes a view can draw: children ordered by name (byte
 * order), each child after the totals of all the ones before it (those left out too), a node's
 * self after its children, so a node's offset is the same whatever is left out. `names`: the
 * name table's names array, every name id of the tree in it.
 *
 * `keep` ({ min, lo, hi, zmin }, all optional): a node is kept when its total is at least
 * `min`, or at least `zmin` while it overlaps [lo, hi) (a zoomed view's extent); a node of
 * total 0 only when nothing is left out. The draw code leaves out frames under half a pixel
 * and marks in grey where a drawn frame's children are missing (layout.js elidedSpans, from
 * the drawn frames' totals and selfs alone), so a layout whose thresholds are at most the
 * view's half pixel draws exactly what the whole tree draws. Without `keep` every node is
 * kept. The kept nodes are expanded (expandNode) on the way: the work is in proportion to
 * them and their children. A row's id is the node's index in the tree (the same from one
 * layout of the tree to the next), its parent column the parent's index.
 */
export function layoutTree(tree, names, keep = {}) {
  const min = keep.min > 0 ? keep.min : 0;
  const zmin = keep.zmin > 0 ? keep.zmin : min;
  const lo = keep.lo ?? 0;
  const hi = keep.hi ?? Infinity;
  const all = !(min > 0) && !(zmin > 0);
  // Rows in breadth-first order over sorted children are rows by depth, then offset.
  let rows = new Int32Array(1024);
  let depthOf = new Int32Array(rows.length);
  let offsetOf = new Float64Array(rows.length);
  let tail = 1;
  rows[0] = 0;
  for (let h = 0; h < tail; h++) {
    const v = rows[h];
    expandNode(tree, v, names);
    const a = tree.kid[v];
    const b = a + tree.kids[v];
    let o = offsetOf[h];
    const d = depthOf[h] + 1;
    const total = tree.total;
    const fixed = tree.offset; // a cut tree's offsets: its children left out are not there to add up
    for (let c = a; c < b; c++) {
      const t = total[c];
      if (fixed) o = fixed[c];
      if (all || (t > 0 && (t >= min || (t >= zmin && o < hi && o + t > lo)))) {
        if (tail === rows.length) {
          const grow = (x, T) => {
            const y = new T(2 * x.length);
            y.set(x);
            return y;
          };
          rows = grow(rows, Int32Array);
          depthOf = grow(depthOf, Int32Array);
          offsetOf = grow(offsetOf, Float64Array);
        }
        rows[tail] = c;
        depthOf[tail] = d;
        offsetOf[tail] = o;
        tail += 1;
      }
      o += t;
    }
  }
  const m = tail;
  const depthHi = depthOf[m - 1] + 1;
  const rowStart = new Uint32Array(depthHi + 1);
  for (let h = 0; h < m; h++) rowStart[depthOf[h] + 1] += 1;
  for (let d = 0; d < depthHi; d++) rowStart[d + 1] += rowStart[d];
  const col = (src, T = Float64Array) => {
    const out = new T(m);
    for (let h = 0; h < m; h++) out[h] = src[rows[h]];
    return out;
  };
  const parentId = new Uint32Array(m);
  for (let h = 0; h < m; h++) parentId[h] = h === 0 ? 0xffffffff : tree.parent[rows[h]];
  const c = {
    n: m,
    depthLo: 0,
    depthHi,
    rowStart,
    offset: offsetOf.slice(0, m),
    total: col(tree.total),
    self: col(tree.self),
    beforeTotal: null,
    beforeSelf: null,
    afterTotal: null,
    afterSelf: null,
    id: rows.slice(0, m),
    parent: parentId,
    name: col(tree.name, Uint32Array),
    diff: !!tree.diff,
    keep: { min, zmin, lo, hi },
  };
  c.id = Uint32Array.from(c.id);
  if (tree.diff) {
    c.beforeTotal = col(tree.bt);
    c.beforeSelf = col(tree.bs);
    c.afterTotal = col(tree.at);
    c.afterSelf = col(tree.as);
  }
  return c;
}

/**
 * The root's children of a tree from mergeSandwich, widest first: [{ name, total, self }]
 * (for the panes' labels and the script API); `count` of them all with `limit` Infinity.
 */
export function topNodes(tree, names, limit = 20) {
  expandNode(tree, 0, names);
  const a = tree.kid[0];
  const out = [];
  for (let c = a; c < a + tree.kids[0]; c++) out.push(c);
  out.sort((x, y) => tree.total[y] - tree.total[x] || x - y);
  return out.slice(0, limit).map((c) => {
    expandNode(tree, c, names); // a callers node's self is known once it is expanded
    return { name: names[tree.name[c]], total: tree.total[c], self: tree.self[c] };
  });
}
