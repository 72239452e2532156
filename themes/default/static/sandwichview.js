// The sandwich view of a function: its callers (every path that calls it, merged; the function
// at the bottom, who calls it above) over its callees (everything it calls, merged; the function
// at the top), each in a canvas of its own with its own zoom. The trees are merged on the page
// (sandwich.js) from the chunks over the function's search intervals, as far as the view draws
// them: a pane lays its tree out down to half a pixel of its width (what the draw code shows),
// and again, finer, when a zoom or a wider pane needs more. Both are drawn, hit tested and
// navigated by the graph's own code (draw.js, layout.js, nav.js). Names only ever go into
// textContent and canvas text.

import { Painter } from "./paint.js";
import { MIN_PX, depthAtY, frameAt, frameInfo, pixelValue, rowY, valueAtX } from "./layout.js";
import { bucketIndex } from "./search.js";
import { layoutView, nameIntervals, searchesRuns } from "./fetch.js";
import { FrameIndex, decodeSandwich, layoutTree, mergeSandwich, sandwichChunks, topNodes } from "./sandwich.js";
import { formatPercent, formatValue, groupDigits } from "./format.js";
import { describeDiffFrame } from "./diff.js";
import { keyDirection, step } from "./nav.js";

/** What the tooltip and the info line say of a node of a sandwich pane. */
export function describeNode(f, side, s, g) {
  const F = s.name;
  const v = (x) => formatValue(x, g.unit, g.decimals);
  const shares = (x) => `${formatPercent(x, g.total)} of all, ${formatPercent(x, s.total)} of ${F}`;
  if (g.diff && f.afterTotal !== undefined) {
    const where = f.depth === 0 ? `every call of ${F}` : side === "callers" ? `${F} called through this path, ${f.depth} up` : `called under ${F}, ${f.depth} down`;
    return { name: f.name, facts: [where, ...describeDiffFrame(f, g.diff)] };
  }
  if (f.depth === 0) {
    return {
      name: f.name,
      facts: [`every call of it: total ${v(f.total)} (${formatPercent(f.total, g.total)} of all)`, side === "callers" ? `called first in its stack: ${v(f.self)}` : `self ${v(f.self)}`, `${groupDigits(s.calls)} ${s.calls === 1 ? "call" : "calls"} merged`],
    };
  }
  if (side === "callers") {
    return {
      name: f.name,
      facts: [`calls ${F} through this path: total ${v(f.total)} (${shares(f.total)})`, `stacks beginning here: ${v(f.self)}`, `${f.depth} up from ${F}`],
    };
  }
  return { name: f.name, facts: [`total ${v(f.total)} (${shares(f.total)})`, `self ${v(f.self)} (${formatPercent(f.self, g.total)})`, `${f.depth} down from ${F}`] };
}

/** One canvas of the sandwich: the callers or the callees tree, its zoom, hover and keyboard frame. */
/**
 * The intervals of the function named `name` in one run's own graph (`run`: { source, load },
 * main.js runGraphs), in the comparison's values; null when the run has no such function.
 */
async function runIntervals(run, name) {
  const { manifest: rm, names, scale } = await run.load();
  const n = names.names.indexOf(name, 1);
  if (n < 1) return null;
  const b = await run.source.bucket(rm.search[bucketIndex(rm.search, n)]);
  const iv = nameIntervals(b, n, null);
  return scale === 1 ? iv : Float64Array.from(iv, (v) => v * scale);
}

class Pane {
  constructor(sw, node) {
    this.sw = sw;
    this.side = node.dataset.side;
    this.icicle = this.side === "callees";
    this.scroll = node.querySelector(".fs-sw-scroll");
    this.canvas = node.querySelector(".fs-sw-canvas");
    this.facts = node.querySelector(".fs-sw-facts");
    this.painter = new Painter({
      app: sw.v.app,
      scroll: this.scroll,
      spacer: node.querySelector(".fs-sw-spacer"),
      canvas: this.canvas,
      overlay: node.querySelector(".fs-overlay"),
      mark: "flamesite:sandwich",
    });
    this.tree = null; // the merged tree (sandwich.js mergeSandwich), refined as views need
    this.chunk = null; // its nodes laid out down to what the view draws (sandwich.js layoutTree)
    this.layouts = 0;
    this.pg = null; // what the painter knows the picture by: { meta, palette }
    this.zoom = null; // frameInfo of the zoomed node, or null
    this.hover = null;
    this.focus = null;
    this.scroll.addEventListener("scroll", () => sw.v.requestRender(), { passive: true });
    new ResizeObserver(() => sw.v.requestRender()).observe(this.scroll);
    this.canvas.addEventListener("mousemove", (e) => this.setHover(this.hitAt(e), e));
    this.canvas.addEventListener("mouseleave", () => this.setHover(null));
    this.canvas.addEventListener("click", (e) => this.onClick(e));
    this.canvas.addEventListener("keydown", (e) => this.onKey(e));
    this.canvas.addEventListener("blur", () => {
      this.focus = null;
      this.painter.outline(this.hover);
    });
  }

  set(tree, g) {
    this.tree = tree;
    this.g = g;
    this.zoom = null;
    this.hover = null;
    this.focus = null;
    this.layout(this.scroll.clientWidth);
    this.painter.scrollTo("root");
  }

  /**
   * Lay the tree out for a pane `width` CSS pixels wide (0: not known yet, taken as 4096): every
   * node of at least a quarter pixel of the whole tree's view, and of the zoomed node's view
   * within it (half a pixel is what the draw code shows: the margin spares a layout on a small
   * resize).
   */
  layout(width) {
    const px = MIN_PX / 2 / (width > 0 ? width : 4096);
    const z = this.zoom;
    const min = this.tree.total[0] * px;
    const keep = z ? { min, lo: z.offset, hi: z.offset + z.total, zmin: z.total * px } : { min };
    this.chunk = layoutTree(this.tree, this.g.names.names, keep);
    this.layouts += 1;
    // What the painter knows the picture by: a new layout is a new picture.
    this.pg = { meta: { name: `${this.side}:${this.sw.data.name}:${this.layouts}` }, palette: this.g.palette };
  }

  /** Put a finer tree of the same function in (sandwich.js: the merged one for the build's), zoom kept. */
  swap(tree) {
    this.tree = tree;
    this.layout(this.scroll.clientWidth);
  }

  /** Whether the layout holds every node the view of a pane `width` pixels wide draws. */
  covers(width) {
    const k = this.chunk.keep;
    const z = this.zoom;
    const need = ((z ? z.total : this.tree.total[0]) * MIN_PX) / width;
    if (k.min <= need) return true;
    return !!z && k.lo <= z.offset && z.offset + z.total <= k.hi && k.zmin <= need;
  }

  render() {
    const v = this.sw.v;
    if (!this.chunk || !v.g || !v.g.manifest) return;
    const width = this.scroll.clientWidth;
    if (width > 0) {
      const z = this.zoom;
      // The build's sandwich has only the nodes above its `above`: merge the finer ones when
      // half a pixel is less.
      if (this.tree.kind === "fixed" && ((z ? z.total : this.tree.total[0]) * MIN_PX) / width <= this.tree.above) this.sw.refine();
      if (!this.covers(width)) this.layout(width);
    }
    const c = this.chunk;
    const m = v.g.manifest;
    const z = this.zoom;
    const view = this.painter.computeView(c.depthHi, z ? z.offset : 0, z ? z.offset + z.total : c.total[0], this.icicle);
    if (!view) return;
    const scene = {
      g: this.pg,
      view,
      chunks: [c],
      waiting: 0,
      zoomDepth: z ? z.depth : 0,
      match: v.search.s.flags,
      diff: v.diffScene(),
      palette: v.paletteName(),
      share: null,
      early: false,
    };
    if (scene.palette === "self" || scene.palette === "total") scene.share = { by: scene.palette, total: m.total };
    else v.g.palette.setScheme(scene.palette === m.palette ? null : scene.palette);
    const decision = this.painter.compare(scene);
    this.painter.paint(scene, decision, this.hover || this.focus);
    this.painter.settle(scene, decision);
  }

  hitAt(e) {
    const view = this.painter.view;
    if (!view || !this.chunk) return null;
    const r = this.canvas.getBoundingClientRect();
    const d = depthAtY(view, e.clientY - r.top);
    if (d < 0) return null;
    const hit = frameAt([this.chunk], d, valueAtX(view, e.clientX - r.left), pixelValue(view) * MIN_PX);
    return hit ? frameInfo(hit.chunk, hit.row, this.sw.v.g.names) : null;
  }

  setHover(f, e) {
    this.hover = f;
    this.sw.show(f, this, e);
    this.painter.outline(f || this.focus);
    this.canvas.style.cursor = f ? "pointer" : "";
  }

  onClick(e) {
    const f = this.hitAt(e);
    if (!f) return;
    this.zoomTo(f);
  }

  /** Zoom to node `f` (the root: the whole tree). */
  zoomTo(f) {
    this.zoom = f.depth === 0 ? null : f;
    this.painter.scrollTo(f.depth);
    this.sw.v.requestRender();
    this.sw.v.renderNow();
  }

  /** Arrow keys move between nodes, Enter zooms, s opens the sandwich of the node's function. */
  onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !this.chunk) return;
    const view = this.painter.view;
    const f = this.focus || this.hover || frameInfo(this.chunk, 0, this.sw.v.g.names);
    if (e.key === "s" && f.depth > 0) {
      e.preventDefault();
      this.sw.v.openSandwich(f.name);
      return;
    }
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      this.zoomTo(f);
      return;
    }
    const dir = keyDirection(e.key, this.icicle);
    if (!dir || !view) return;
    e.preventDefault();
    const hit = step([this.chunk], f, dir, pixelValue(view) * MIN_PX);
    if (!hit) return;
    const next = frameInfo(hit.chunk, hit.row, this.sw.v.g.names);
    if (next.offset + next.total <= view.x0 || next.offset >= view.x1) return;
    this.focus = next;
    const y = rowY(view, next.depth);
    if (y < 0 || y + view.rowH > view.height) {
      this.scroll.scrollTop = Math.max(0, view.scrollTop + (y < 0 ? y : y + view.rowH - view.height));
      this.sw.v.requestRender();
    }
    this.sw.show(next, this, null);
    this.painter.outline(next);
  }
}

/**
 * The sandwich section of the viewer. `v` is the viewer (main.js): its graph, search, palette,
 * tooltip and info line, and `openSandwich` / `closeSandwich`.
 */
export class SandwichView {
  constructor(v, root) {
    this.v = v;
    this.root = root;
    this.nameNode = root.querySelector("#fs-sw-name");
    this.status = root.querySelector("#fs-sw-status");
    this.panes = [...root.querySelectorAll(".fs-sw-pane")].map((n) => new Pane(this, n));
    this.data = null; // { g, name, id, total, calls, ms, phases, chunks, missing, source } of what is shown
    this.refining = false; // merging the finer nodes of a build's sandwich
    this.index = null; // { g, x }: the frame index of the graph shown (sandwich.js FrameIndex)
    this.key = null; // the graph and function shown or being loaded
    this.seq = 0;
    this.busy = false;
    this.error = "";
    root.querySelector("#fs-sw-close").addEventListener("click", () => v.closeSandwich());
  }

  pane(side) {
    return this.panes.find((p) => p.side === side);
  }

  /** Show the sandwich of function `name` of graph `g` (loading it unless it is the one shown). */
  open(g, name) {
    this.root.hidden = false;
    this.nameNode.textContent = name;
    const key = [g.source.base, name];
    if (this.key && this.key[0] === key[0] && this.key[1] === key[1]) return;
    this.key = key;
    this.load(g, name);
  }

  hide() {
    this.root.hidden = true;
    this.key = null;
    this.seq += 1; // a load on the way is dropped
    this.busy = false;
  }

  async load(g, name) {
    const seq = ++this.seq;
    const t0 = performance.now();
    this.busy = true;
    this.error = "";
    this.data = null;
    for (const p of this.panes) {
      p.chunk = null;
      p.tree = null;
      p.facts.textContent = "";
    }
    this.say("Loading…");
    const stale = () => seq !== this.seq || this.v.g !== g;
    try {
      const m = g.manifest;
      // Every name: to find the function's id, and to order the merged trees' children.
      await g.source.allNames(g.names);
      if (stale()) return;
      const id = g.names.names.indexOf(name, 1);
      if (id < 1) {
        this.busy = false;
        this.v.sandwichMissing(name);
        return;
      }
      // A sandwich the build made (of a function called from many places: the chunks over
      // it would be nearly all the graph's), else merged here from the chunks over it.
      const pre = (m.sandwiches || []).find((w) => w.name === id);
      const t1 = performance.now();
      let got;
      if (pre) {
        const w = await g.source.get(pre.file, "sandwich", (buf) => decodeSandwich(buf, id, m.root_width, pre.file), pre.bytes);
        got = { ...w, chunks: 0, missing: 0, fetched: performance.now() };
      } else {
        got = await this.merge(g, id, stale);
      }
      if (!got || stale()) return;
      const t3 = performance.now();
      this.data = { g, name, id, total: g.names.total[id], calls: got.calls, chunks: got.chunks, missing: got.missing, source: pre ? "precomputed" : "merged", ms: 0, phases: null };
      this.pane("callers").set(got.callers, g);
      this.pane("callees").set(got.callees, g);
      const t4 = performance.now();
      this.busy = false;
      this.say("");
      this.summary();
      this.v.requestRender();
      this.v.renderNow();
      // On screen: the time from the request to the canvases drawn, and its parts.
      const t5 = performance.now();
      this.data.ms = t5 - t0;
      this.data.phases = { names: t1 - t0, fetch: got.fetched - t1, merge: t3 - got.fetched, layout: t4 - t3, paint: t5 - t4 };
      this.v.showStatus();
    } catch (e) {
      if (stale()) return;
      this.busy = false;
      this.error = e && e.message ? e.message : String(e);
      this.say(`Could not load the sandwich: ${this.error}`);
      this.v.showStatus();
    }
  }

  /**
   * Merge the sandwich of name id `id` of graph `g` from the chunks over its search intervals
   * (where its frames, their callees and their callers are; a comparison's other layouts have
   * none of their own: every chunk): { callers, callees, calls, chunks, missing, fetched (when
   * the chunks were in) }, or null once `stale()`.
   */
  async merge(g, id, stale) {
    const m = g.manifest;
    let iv = null;
    let entries = null;
    const runs = searchesRuns(m) ? this.v.runGraphs() : null;
    if (runs) {
      // A comparison of two runs: the chunks over the function's intervals in each run's own
      // graph, by the chunks' extents in that run's layout.
      const name = g.names.names[id];
      const sides = await Promise.all(["before", "after"].map(async (side) => {
        const ivs = await runIntervals(runs[side], name);
        return ivs ? sandwichChunks(layoutView(m, side), ivs) : [];
      }));
      if (stale()) return null;
      const files = new Set(sides.flat().map((c) => c.file));
      entries = m.chunks.filter((c) => files.has(c.file));
    } else if (m.search.length && (!m.differential || (m.diff ? m.diff.layout === "union" : true))) {
      const b = await g.source.bucket(m.search[bucketIndex(m.search, id)]);
      if (stale()) return null;
      iv = nameIntervals(b, id, g.source.widths);
    }
    if (!entries) entries = sandwichChunks(m, iv);
    this.say(`Loading ${groupDigits(entries.length)} files…`);
    // Each chunk goes into the graph's frame index as it arrives (while the others load);
    // those already in, and the index, serve every later sandwich of the graph.
    const index = this.frameIndex(g);
    const got = await Promise.all(
      entries.map((e) =>
        g.source.chunk(e).then(
          (c) => (index.add(c), c),
          () => null,
        ),
      ),
    );
    if (stale()) return null;
    const fetched = performance.now();
    const chunks = got.filter(Boolean).length;
    return { ...mergeSandwich(index, id), chunks, missing: entries.length - chunks, fetched };
  }

  /**
   * A pane needs nodes finer than the build's sandwich has (a zoom, or a pane wider than the
   * build's canvas): merge it here from the chunks, and swap it in, zooms kept.
   */
  async refine() {
    const d = this.data;
    if (!d || d.source !== "precomputed" || this.refining) return;
    this.refining = true;
    this.busy = true;
    const seq = this.seq;
    const stale = () => seq !== this.seq || this.v.g !== d.g || this.data !== d;
    try {
      const got = await this.merge(d.g, d.id, stale);
      if (!got || stale()) return;
      d.source = "merged";
      d.chunks = got.chunks;
      d.missing = got.missing;
      this.pane("callers").swap(got.callers);
      this.pane("callees").swap(got.callees);
      this.busy = false;
      this.say("");
      this.summary();
      this.v.requestRender();
    } catch (e) {
      if (stale()) return;
      this.busy = false;
      this.error = e && e.message ? e.message : String(e);
      this.say(`Could not load the finer nodes: ${this.error}`);
      this.v.showStatus();
    } finally {
      this.refining = false;
    }
  }

  /** The frame index of graph `g` (sandwich.js FrameIndex), made on its first sandwich. */
  frameIndex(g) {
    if (!this.index || this.index.g !== g) this.index = { g, x: new FrameIndex(g.manifest.frames, !!g.manifest.differential) };
    return this.index.x;
  }

  say(text) {
    this.status.textContent = text;
  }

  /** The panes' labels: how many calls were merged, from how many callers, into how many callees. */
  summary() {
    const d = this.data;
    const facts = this.v.graphUnit();
    const v = (x) => formatValue(x, facts.unit, facts.decimals);
    const callers = this.pane("callers").chunk;
    const callees = this.pane("callees").chunk;
    // The roots are laid out, so their children are known: one per caller and callee.
    const paths = this.pane("callers").tree.kids[0];
    const called = this.pane("callees").tree.kids[0];
    // Of a comparison the widths are not values: its before and after values.
    const val = (c, col, before) => (c.diff ? `${v(before[0])} → ${v(col[0])}` : v(col[0]));
    const tot = (c) => val(c, c.afterTotal || c.total, c.beforeTotal);
    this.pane("callers").facts.textContent = `· ${groupDigits(d.calls)} ${d.calls === 1 ? "call" : "calls"}, total ${tot(callers)}, from ${groupDigits(paths)} ${paths === 1 ? "caller" : "callers"}`;
    // A recursive function: its calls inside itself are merged under its outermost ones, so
    // their self is in the tree below, not at the root, where the table adds every frame's.
    const rootSelf = (callees.afterSelf || callees.self)[0];
    const tableSelf = d.g.names.self ? d.g.names.self[d.id] : rootSelf;
    const recursion = tableSelf > rootSelf ? ` (the table's self, ${v(tableSelf)}, adds that of its calls inside itself, drawn below)` : "";
    this.pane("callees").facts.textContent = `· total ${tot(callees)}, self ${val(callees, callees.afterSelf || callees.self, callees.beforeSelf)}${recursion}, ${groupDigits(called)} ${called === 1 ? "callee" : "callees"}`;
    if (d.missing) this.say(`${d.missing} files could not be loaded: the trees miss their frames`);
  }

  render() {
    if (this.root.hidden || !this.data) return;
    for (const p of this.panes) p.render();
  }

  /** The tooltip and info line for node `f` of `pane` (null: the sandwich's summary). */
  show(f, pane, e) {
    const v = this.v;
    if (!f) {
      v.tooltip.hide();
      v.info.set(this.data ? `Sandwich of ${this.data.name}` : "", this.data ? [pane.facts.textContent.replace(/^· /, "")] : []);
      return;
    }
    const { name, facts } = describeNode(f, pane.side, this.data, v.graphUnit());
    if (e) v.tooltip.show(e.clientX, e.clientY, name, [...facts, "click: zoom · s: its sandwich"]);
    v.info.set(name, facts);
  }

  /** For `flamesite.state()`: the function, both trees' totals, their first nodes and zooms. */
  snapshot() {
    const d = this.data;
    if (!d) return this.key ? { name: this.key[1], loading: this.busy, error: this.error || null } : null;
    const tree = (p) => ({
      total: p.chunk.total[0],
      self: p.chunk.self[0],
      frames: p.chunk.n,
      depth: p.chunk.depthHi,
      top: topNodes(p.tree, d.g.names.names),
      zoom: p.zoom ? { name: p.zoom.name, depth: p.zoom.depth, total: p.zoom.total } : null,
      viewport: p.painter.view
        ? { width: p.painter.view.width, height: p.painter.view.height, rowHeight: p.painter.view.rowH, scrollTop: p.painter.view.scrollTop, x0: p.painter.view.x0, x1: p.painter.view.x1, icicle: p.icicle }
        : null,
      focus: p.focus ? { name: p.focus.name, depth: p.focus.depth, total: p.focus.total } : null,
    });
    return {
      name: d.name,
      total: d.total,
      calls: d.calls,
      chunks: d.chunks,
      source: d.source,
      ms: d.ms,
      phases: d.phases,
      loading: this.busy,
      error: this.error || null,
      callers: tree(this.pane("callers")),
      callees: tree(this.pane("callees")),
    };
  }
}
