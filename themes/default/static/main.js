// Interaction: the page's state (graph, zoom, search, view) and its URL fragment, pointer and
// keyboard handling, and the script API `window.flamesite` (see ../README.md). Drawing,
// layout, fetching and search arithmetic live in their own modules; this one wires them.

import { GraphSource } from "./fetch.js";
import {
  MIN_PX,
  depthAtY,
  frameAt,
  frameInfo,
  frameRect,
  frameStartingAt,
  neededChunks,
  pixelValue,
  scrollForDepth,
  valueAtX,
  visibleDepths,
} from "./layout.js";
import { Palette, drawGraph, drawHover, parseHex, setupCanvas } from "./draw.js";
import { bucketsFor, compileQuery, exactQuery, matchNames, matchedValue } from "./search.js";
import { describeFrame, formatFragment, formatPercent, formatValue, groupDigits, nameHash, parseFragment } from "./format.js";
import { FunctionTable, Tooltip, copyText } from "./ui.js";
import { describeDiffFrame, formatPoints, legendText, matchedBeforeAfter } from "./diff.js";

const ROW_H = 18;
// A graph's first picture waits up to this long (ms from the manifest's arrival) for every
// file of its view, rather than painting each part as it comes: on the first load a paint costs
// tens of ms (V8 runs the drawing code unoptimised), and the parts usually arrive together.
const FIRST_VIEW_WAIT = 300;
const $ = (id) => document.getElementById(id);

class Viewer {
  constructor() {
    this.app = $("fs-app");
    this.scroll = $("fs-scroll");
    this.canvas = $("fs-canvas");
    this.overlay = $("fs-overlay");
    this.spacer = $("fs-spacer");
    this.input = $("fs-search");
    this.select = $("fs-graph");
    this.isDiffPage = !!$("fs-layout");
    this.graphs = [...this.select.options].map((o) => ({
      name: o.dataset.name,
      unit: o.dataset.unit,
      total: Number(o.dataset.total),
      data: o.value,
    }));
    this.st = parseFragment(location.hash);
    this.g = null; // the graph shown: { meta, source, manifest, names, palette, failed }
    this.zoom = null; // { depth, offset, total, hash, info } — info once the frame is verified
    this.search = this.emptySearch();
    this.paints = 0;
    this.view = null;
    this.drawn = [];
    this.hover = null;
    this.notice = "";
    this.pendingScroll = "root";
    this.scheduled = false;
    this.waiting = 0;
    this.loadSeq = 0;
    this.table = new FunctionTable($("fs-table"), $("fs-more"), {
      onPick: (id) => this.searchExact(id),
      onSort: (key) => this.setSort(key),
    });
    this.tooltip = new Tooltip($("fs-tooltip"));
    this.bind();
    this.applyControls();
    this.loadGraph();
  }

  emptySearch() {
    return { seq: 0, re: null, error: "", ids: null, flags: null, buckets: null, all: false, busy: false, value: 0, inZoom: 0, ms: 0 };
  }

  // ---- events --------------------------------------------------------------------------------

  bind() {
    this.scroll.addEventListener("scroll", () => this.requestRender(), { passive: true });
    new ResizeObserver(() => this.requestRender()).observe(this.scroll);
    // A canvas whose backing store was dropped (context lost) is drawn again in full.
    this.canvas.addEventListener("contextrestored", () => {
      this.painted = null;
      this.requestRender();
    });
    this.canvas.addEventListener("mousemove", (e) => this.onMove(e));
    this.canvas.addEventListener("mouseleave", () => this.setHover(null));
    this.canvas.addEventListener("click", (e) => this.onClick(e));
    this.input.addEventListener("input", () => {
      this.st.query = this.input.value;
      this.updateUrl();
      this.applySearch();
      this.renderNow();
    });
    $("fs-case").addEventListener("click", () => {
      this.st.caseSensitive = !this.st.caseSensitive;
      this.applyControls();
      this.updateUrl();
      this.applySearch();
    });
    $("fs-reset").addEventListener("click", () => this.resetZoom());
    $("fs-icicle").addEventListener("click", () => {
      this.st.icicle = !this.st.icicle;
      this.pendingScroll = this.zoom ? this.zoom.depth : "root";
      this.applyControls();
      this.updateUrl();
      this.requestRender();
    });
    for (const b of document.querySelectorAll("#fs-diffmode button[data-measure]")) {
      b.addEventListener("click", () => {
        this.st.measure = b.dataset.measure;
        this.applyControls();
        this.updateUrl();
        this.painted = null;
        this.requestRender();
      });
    }
    for (const b of document.querySelectorAll("#fs-layout button[data-layout]")) {
      b.addEventListener("click", () => {
        if (this.st.layout === b.dataset.layout) return;
        this.st.layout = b.dataset.layout;
        // Offsets differ between layouts: the zoom does not carry over.
        this.st.zoom = null;
        this.updateUrl();
        this.loadGraph();
      });
    }
    for (const b of document.querySelectorAll("#fs-views button[data-view]")) {
      b.addEventListener("click", () => {
        this.st.view = b.dataset.view;
        this.applyControls();
        this.updateUrl();
        this.showTable();
        this.requestRender();
      });
    }
    this.select.addEventListener("change", () => {
      const meta = this.graphs[this.select.selectedIndex];
      this.st.graph = meta === this.graphs[0] ? null : meta.name;
      this.st.zoom = null;
      this.updateUrl();
      this.loadGraph();
    });
    $("fs-copy").addEventListener("click", async () => {
      const ok = await copyText(location.href);
      const s = $("fs-copied");
      s.textContent = ok ? "Link copied" : "Copy failed: the link is in the address bar";
      clearTimeout(this.copiedTimer);
      this.copiedTimer = setTimeout(() => (s.textContent = ""), 2500);
    });
    document.addEventListener("keydown", (e) => this.onKey(e));
    window.addEventListener("hashchange", () => this.onHashChange());
  }

  onKey(e) {
    const t = e.target;
    const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "f") {
      e.preventDefault();
      this.input.focus();
      this.input.select();
    } else if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      this.input.focus();
      this.input.select();
    } else if (e.key === "Escape") {
      // In the search box Escape clears the search (the browser does that); elsewhere it resets the zoom.
      if (t === this.input) {
        if (!this.input.value) this.input.blur();
        return;
      }
      this.setHover(null);
      this.resetZoom();
    }
  }

  onHashChange() {
    const next = parseFragment(location.hash);
    const prev = this.st;
    this.st = next;
    if ((next.graph || null) !== (prev.graph || null) || next.layout !== prev.layout) {
      this.applyControls();
      this.loadGraph();
      return;
    }
    const z = next.zoom;
    const same = (a, b) => (!a && !b) || (a && b && a.depth === b.depth && a.offset === b.offset && a.total === b.total && a.hash === b.hash);
    if (!same(z, prev.zoom)) this.setZoom(z ? { ...z, info: null } : null, false);
    this.applyControls();
    if (next.query !== prev.query || next.caseSensitive !== prev.caseSensitive) this.applySearch();
    if (next.measure !== prev.measure) this.painted = null;
    this.showTable();
    this.requestRender();
  }

  /** Make the controls show `this.st`. */
  applyControls() {
    this.app.dataset.view = this.st.view;
    for (const b of document.querySelectorAll("#fs-views button[data-view]")) {
      b.setAttribute("aria-pressed", String(b.dataset.view === this.st.view));
    }
    $("fs-case").setAttribute("aria-pressed", String(this.st.caseSensitive));
    $("fs-icicle").setAttribute("aria-pressed", String(this.st.icicle));
    for (const b of document.querySelectorAll("#fs-diffmode button[data-measure]")) {
      b.setAttribute("aria-pressed", String(b.dataset.measure === this.st.measure));
    }
    for (const b of document.querySelectorAll("#fs-layout button[data-layout]")) {
      b.setAttribute("aria-pressed", String(b.dataset.layout === this.st.layout));
    }
    this.showLegend();
    $("fs-reset").disabled = !this.zoom;
    if (this.input.value !== this.st.query) this.input.value = this.st.query;
  }

  /** The legend of a comparison's colours. */
  showLegend() {
    const node = $("fs-legend-text");
    const m = this.g && this.g.manifest;
    if (!node) return;
    node.textContent = m && m.diff ? legendText(m.diff, this.st.measure, m.unit) : "";
  }

  /** Of a differential graph: { tb, ta, unit } (its two totals), else null. */
  diffTotals() {
    const m = this.g && this.g.manifest;
    if (!m || !m.differential) return null;
    const tb = m.diff ? m.diff.total_before : m.total_before;
    const ta = m.diff ? m.diff.total_after : m.total;
    return { tb, ta, unit: m.unit };
  }

  updateUrl() {
    const frag = formatFragment(this.st);
    history.replaceState(history.state, "", frag || location.pathname + location.search);
  }

  // ---- loading -------------------------------------------------------------------------------

  async loadGraph() {
    const seq = ++this.loadSeq;
    const meta = this.graphs.find((m) => m.name === this.st.graph) || this.graphs[0];
    if (!meta) return this.fail("this page lists no graph");
    this.select.selectedIndex = this.graphs.indexOf(meta);
    // A comparison's other layouts are folders of its graph folder.
    const folder = this.st.layout === "union" || !this.isDiffPage ? "" : `${this.st.layout}/`;
    const source = new GraphSource(new URL(meta.data + folder, document.baseURI).href);
    // The files the page preloads for its first view: asked for now, not after the manifest.
    source.early([...document.querySelectorAll('link[rel="preload"][as="fetch"]')].map((l) => l.href));
    this.g = { meta, source, manifest: null, names: null, palette: null, failed: "", requested: new Set() };
    this.search = this.emptySearch();
    this.drawn = [];
    this.notice = "";
    this.setHover(null);
    this.zoom = this.st.zoom ? { ...this.st.zoom, info: null } : null;
    this.pendingScroll = this.zoom ? this.zoom.depth : "root";
    this.applyControls();
    this.showStatus();
    try {
      const manifest = await source.manifest();
      if (seq !== this.loadSeq) return;
      this.g.manifest = manifest;
      this.g.firstBy = performance.now() + FIRST_VIEW_WAIT;
      // An empty name table, filled as the name files the drawn chunks need arrive.
      this.g.names = source.nameTable(manifest);
      this.g.palette = new Palette(this.g.names);
      this.showLegend();
      // The info line first: its text settles the layout, so the first view's size is final.
      this.showInfo(null);
      this.render(); // asks for the first view's chunks and their name files
      this.showTable();
      this.applySearch();
    } catch (e) {
      if (seq !== this.loadSeq) return;
      this.fail(e.message);
    }
  }

  fail(message) {
    if (this.g) this.g.failed = message;
    this.showStatus();
  }

  /** The error banner, the loading note and the info line when nothing is hovered. */
  showStatus() {
    const box = $("fs-error");
    const msgs = [];
    if (this.g && this.g.failed) msgs.push(`Could not load this graph: ${this.g.failed}`);
    else if (this.g && this.g.source.errors.length) {
      const files = [...new Set(this.g.source.errors.map((e) => e.message))];
      msgs.push(`Part of this graph could not be loaded, so some frames are missing: ${files.join("; ")}`);
    }
    if (this.notice) msgs.push(this.notice);
    box.textContent = msgs.join(" — ");
    box.hidden = msgs.length === 0;
    const loading = !this.g || (!this.g.failed && (!this.g.manifest || this.waiting > 0));
    $("fs-loading").hidden = !loading;
    if (!this.hover) this.showInfo(null);
  }

  // ---- rendering -----------------------------------------------------------------------------

  requestRender() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => this.scheduled && this.render());
  }

  /**
   * Draw a requested render now, in the handler of a click or a keystroke, rather than at the
   * next animation frame: the frame that follows the input then shows it.
   */
  renderNow() {
    if (this.scheduled) this.render();
  }

  /** The view for the current size, zoom and scroll; sizes the canvases and the spacer. */
  computeView() {
    const m = this.g.manifest;
    const height = this.scroll.clientHeight;
    if (height === 0) return null;
    // Size the spacer before reading the width: with classic scrollbars a graph taller than
    // the box gets its scrollbar now, so the canvas is sized once, not twice (a 1920×1080
    // canvas reallocated and painted again on the resize).
    const contentH = Math.max(m.depth * ROW_H, height);
    if (this.spacer.style.height !== `${contentH}px`) this.spacer.style.height = `${contentH}px`;
    const width = this.scroll.clientWidth;
    if (width === 0) return null;
    const z = this.zoom;
    const view = {
      x0: z ? z.offset : 0,
      x1: z ? z.offset + z.total : m.total,
      width,
      height,
      rowH: ROW_H,
      depthCount: m.depth,
      icicle: this.st.icicle,
      scrollTop: 0,
      minHeight: height,
    };
    if (this.pendingScroll !== null) {
      this.scroll.scrollTop = scrollForDepth(view, this.pendingScroll === "root" ? 0 : this.pendingScroll);
      this.pendingScroll = null;
    }
    view.scrollTop = this.scroll.scrollTop;
    return view;
  }

  render() {
    this.scheduled = false;
    const g = this.g;
    if (!g || !g.manifest) return;
    const view = this.computeView();
    this.hidden = !view;
    if (!view) {
      this.waiting = 0; // the graph is hidden (table view): nothing to wait for
      return;
    }
    let waiting = 0;
    const ready = [];
    const fetches = []; // files to ask for, started below
    const startFetches = () => {
      for (const f of fetches.splice(0)) f();
    };
    // Nothing of this graph drawn yet: a file that arrives is looked at at once (the first
    // picture is drawn as soon as it is complete), not at the next animation frame.
    const isFirst = () => !this.painted || this.painted.g !== g;
    const first = isFirst();
    const again = () => {
      if (this.g !== g) return;
      this.showStatus();
      if (isFirst()) this.render();
      else this.requestRender();
    };
    // A chunk can be drawn once it and the name files up to its name_max have arrived.
    const want = (entry) => {
      const c = g.source.ready(entry);
      const names = this.wantNames(entry.name_max === undefined ? g.names.count - 1 : entry.name_max, again, fetches);
      if (c && names === "ready") return c;
      if (g.source.failed(entry) || names === "failed") return null;
      waiting += 1;
      if (!c && !g.requested.has(entry.file)) {
        g.requested.add(entry.file);
        fetches.push(() => g.source.chunk(entry).then(again, again));
      }
      return null;
    };
    for (const entry of neededChunks(g.manifest, view)) {
      const c = want(entry);
      if (c) ready.push(c);
    }
    if (this.zoom && !this.zoom.info) {
      if (this.verifyZoom(want) === false) {
        startFetches();
        return this.render();
      }
    }
    if (ready.length === 0) startFetches(); // nothing to show: ask for it first (see below)
    this.view = view;
    this.drawn = ready;
    this.waiting = waiting;
    const dpr = window.devicePixelRatio || 1;
    const css = getComputedStyle(this.app);
    const bg = css.getPropertyValue("--fs-canvas-bg");
    const fg = css.getPropertyValue("--fs-label").trim() || "#000";
    const zoomDepth = this.zoom ? this.zoom.depth : 0;
    // Redraw only when something drawn changed: a chunk or name file that arrives while the
    // view still waits for others, a resize or a scroll event that moves nothing, would
    // otherwise repaint the same picture (a full canvas, and a compositor upload, each time).
    const key = [g.meta.name, view.x0, view.x1, view.width, view.height, view.scrollTop, view.icicle, dpr, zoomDepth, bg, fg].join("|");
    const p = this.painted;
    // A blank canvas that still waits for every file it needs stays as it is: painting it
    // white costs the first view a full canvas to fill and upload before its chunks can show.
    const early = first && waiting > 0 && performance.now() < g.firstBy;
    if (early && !g.firstTimer) g.firstTimer = setTimeout(() => this.requestRender(), g.firstBy - performance.now());
    const same =
      (!p && ready.length === 0 && waiting > 0) ||
      early ||
      (p && p.g === g && p.key === key && p.match === this.search.flags && p.chunks.length === ready.length && p.chunks.every((c, i) => c === ready[i]));
    // Ask for the missing files after this frame when it shows something new, else now,
    // before drawing: a fetch() costs the main thread about a millisecond (1.2 ms on the
    // 2-core machine of benches/page.mjs) and a zoom can ask for forty files, which held the
    // zoomed picture of the chunks at hand back by 50 ms there; the first view, with nothing
    // to show yet, must not make its chunks wait for a paint of the empty canvas.
    const showsNew = !same && ready.length > 0;
    if (!showsNew) startFetches();
    if (!same) {
      const ctx = setupCanvas(this.canvas, view.width, view.height, dpr);
      const t0 = performance.now();
      g.palette.setBackground(parseHex(bg));
      drawGraph(ctx, {
        view,
        chunks: ready,
        palette: g.palette,
        zoomDepth,
        match: this.search.flags,
        diff: this.diffScene(),
        fg,
      });
      this.drawHoverOutline();
      this.paintMs = performance.now() - t0;
    }
    if (showsNew && fetches.length) setTimeout(startFetches, 0);
    this.showStatus();
    // A complete paint is marked once; the same picture, now complete because the chunks it
    // still waited for failed, counts as complete then.
    if (waiting === 0 && !(same && p.complete)) {
      this.paints += 1;
      performance.mark("flamesite:painted");
      this.prefetchNames(g);
    }
    if (!early && (!same || p)) this.painted = { g, key, match: this.search.flags, chunks: ready, complete: waiting === 0 };
  }

  /**
   * Once the first view is complete, fetch the rest of the name table while the page is idle:
   * a first search reads every name and would otherwise wait for all of them. Once per graph.
   */
  /** What drawGraph needs to colour a differential graph, else null. */
  diffScene() {
    const d = this.diffTotals();
    if (!d) return null;
    const m = this.g.manifest;
    const measure = this.st.measure;
    // A two-count profile of format version 2 has no scale: the largest change is the root's.
    let scale = m.diff ? (measure === "abs" ? m.diff.scale_value : m.diff.scale_points) : 0;
    if (!scale) scale = measure === "abs" ? Math.abs(d.ta - d.tb) || 1 : 100;
    return { tb: d.tb, ta: d.ta, measure, scale };
  }

  prefetchNames(g) {
    if (g.prefetch !== undefined || !g.names || g.names.complete()) return;
    g.prefetch = true; // busy until the files are in (see busy())
    const done = () => (g.prefetch = false);
    const go = () => (this.g === g ? g.source.allNames(g.names).then(done, done) : done());
    if (window.requestIdleCallback) requestIdleCallback(go, { timeout: 300 });
    else setTimeout(go, 50);
  }

  /**
   * Find the zoomed frame of a link in its chunks: the frame at the link's depth starting at
   * its offset, with its total and name hash. Returns true when found, false when it is not
   * there (the zoom is dropped with a notice), undefined while its chunks are on the way.
   */
  verifyZoom(want) {
    const z = this.zoom;
    const cands = this.g.manifest.chunks.filter(
      (c) => c.depth[0] <= z.depth && z.depth < c.depth[1] && c.offset[0] <= z.offset && z.offset < c.offset[1] && c.max_total >= z.total,
    );
    const ready = [];
    let pending = false;
    for (const c of cands) {
      const got = want(c);
      if (got) ready.push(got);
      else if (!this.g.source.failed(c)) pending = true;
    }
    const hit = frameStartingAt(ready, z.depth, z.offset);
    if (hit && hit.chunk.total[hit.row] === z.total) {
      const info = frameInfo(hit.chunk, hit.row, this.g.names);
      if (nameHash(info.name) === z.hash) {
        z.info = info;
        this.afterZoom();
        return true;
      }
    }
    if (pending) return undefined;
    this.notice = `The zoomed frame of this link (depth ${z.depth}, offset ${z.offset}) is not in this graph; showing the whole graph.`;
    this.setZoom(null, true);
    return false;
  }

  /**
   * Make sure the name files holding ids 0 ..= n are on their way: "ready", "waiting" (then
   * `then` runs when each arrives) or "failed". A fetch to start is pushed onto `fetches`.
   */
  wantNames(n, then, fetches) {
    const g = this.g;
    const t = g.names;
    if (t.count === 0) return "ready";
    const last = t.fileOf(Math.min(n, t.count - 1));
    let status = "ready";
    for (let i = 0; i <= last; i++) {
      if (t.have[i]) continue;
      const f = t.files[i];
      if (g.source.failed(f)) return "failed";
      status = "waiting";
      if (!g.requested.has(f.file)) {
        g.requested.add(f.file);
        fetches.push(() => g.source.nameFile(t, i).then(then, then));
      }
    }
    return status;
  }

  /**
   * The hovered frame's outline on the overlay canvas. The overlay is sized and cleared only
   * when it shows or showed an outline: an untouched one is transparent, and a full-size
   * canvas cleared on every paint is a 1920×1080 buffer to fill and upload for nothing.
   */
  drawHoverOutline() {
    const v = this.view;
    if (!v) return;
    const f = this.hover;
    if (!f && !this.outlined) return;
    const ctx = setupCanvas(this.overlay, v.width, v.height, window.devicePixelRatio || 1);
    drawHover(ctx, v, f ? frameRect(v, f.depth, f.offset, f.total) : null);
    this.outlined = !!f;
  }

  // ---- pointer -------------------------------------------------------------------------------

  hitAt(e) {
    const v = this.view;
    if (!v || !this.g || !this.g.names) return null;
    const r = this.canvas.getBoundingClientRect();
    const d = depthAtY(v, e.clientY - r.top);
    if (d < 0) return null;
    const hit = frameAt(this.drawn, d, valueAtX(v, e.clientX - r.left), pixelValue(v) * MIN_PX);
    return hit ? frameInfo(hit.chunk, hit.row, this.g.names) : null;
  }

  onMove(e) {
    const f = this.hitAt(e);
    this.setHover(f, e);
  }

  setHover(f, e) {
    const prev = this.hover;
    this.hover = f;
    if (!f) {
      this.tooltip.hide();
      this.canvas.style.cursor = "";
    } else {
      const { name, facts } = this.describe(f);
      this.tooltip.show(e.clientX, e.clientY, name, facts);
      this.canvas.style.cursor = "pointer";
    }
    if (prev !== f && (!prev || !f || prev.id !== f.id)) {
      this.showInfo(f);
      this.drawHoverOutline();
    }
  }

  /** Name and facts of a frame, for the tooltip and the info line. */
  describe(f) {
    const d = this.diffTotals();
    if (d && f.afterTotal !== undefined) return { name: f.name, facts: [...describeDiffFrame(f, d), `depth ${f.depth}`] };
    return describeFrame(f, this.graphFacts());
  }

  graphFacts() {
    const m = this.g.manifest;
    return { total: m.total, unit: m.unit, zoomTotal: this.zoom ? this.zoom.total : 0 };
  }

  /** The info line: the hovered frame, else the zoomed frame, else the whole graph. */
  showInfo(f) {
    const nameNode = $("fs-info-name");
    const factNode = $("fs-info-facts");
    const g = this.g;
    if (!g || !g.manifest) {
      nameNode.textContent = "";
      factNode.textContent = "";
      return;
    }
    const m = g.manifest;
    const shown = f || (this.zoom && this.zoom.info);
    if (shown) {
      const { name, facts } = this.describe(shown);
      nameNode.textContent = (f ? "" : "Zoomed: ") + name;
      factNode.textContent = facts.join(" · ");
    } else {
      nameNode.textContent = g.meta.name;
      const d = this.diffTotals();
      const totals = d ? `total ${formatValue(d.tb, m.unit)} → ${formatValue(d.ta, m.unit)}` : `total ${formatValue(m.total, m.unit)}`;
      factNode.textContent = `${totals} · ${groupDigits(m.frames || 0)} frames · ${m.depth} levels · ${groupDigits(Math.max(0, g.names.count - 1))} functions`;
    }
  }

  onClick(e) {
    const f = this.hitAt(e);
    if (!f) return;
    if (f.depth === 0) this.resetZoom();
    else this.zoomTo(f);
    this.renderNow();
  }

  // ---- zoom ----------------------------------------------------------------------------------

  zoomTo(info) {
    this.setZoom({ depth: info.depth, offset: info.offset, total: info.total, hash: nameHash(info.name), info }, true);
  }

  resetZoom() {
    if (this.zoom) this.setZoom(null, true);
  }

  /** Zoom to a frame (`null`: the whole graph). `fromUser`: write the URL and scroll to it. */
  setZoom(z, fromUser) {
    this.zoom = z;
    this.st.zoom = z ? { depth: z.depth, offset: z.offset, total: z.total, hash: z.hash } : null;
    this.pendingScroll = z ? z.depth : "root";
    this.setHover(null);
    if (fromUser) this.updateUrl();
    this.applyControls();
    if (z === null || z.info) this.afterZoom();
    this.requestRender();
  }

  afterZoom() {
    this.computeMatched();
    this.showInfo(this.hover);
    $("fs-reset").disabled = !this.zoom;
  }

  // ---- search --------------------------------------------------------------------------------

  searchExact(id) {
    this.st.query = exactQuery(this.g.names.names[id]);
    this.st.caseSensitive = true;
    this.applyControls();
    this.updateUrl();
    this.applySearch();
    if (this.st.view === "table") {
      this.st.view = "both";
      this.applyControls();
      this.updateUrl();
      this.requestRender();
    }
  }

  /**
   * Run `st.query`: highlight at once, then the exact matched value from the search buckets.
   * `t0` is when the search began: a search run again once the name files arrived keeps it,
   * so `searchMs` counts the time they took.
   */
  applySearch(t0 = performance.now()) {
    const g = this.g;
    if (!g || !g.names) return;
    const s = this.emptySearch();
    s.seq = this.search.seq + 1;
    this.search = s;
    const { re, error } = compileQuery(this.st.query, this.st.caseSensitive);
    if (re && !g.names.complete()) {
      // A search reads every name: fetch the name files it lacks, then search.
      s.re = re;
      s.busy = true;
      this.showMatched();
      g.source.allNames(g.names).then(
        () => this.search === s && this.applySearch(t0),
        () => {
          if (this.search !== s) return;
          s.busy = false;
          s.error = "the name table could not be loaded";
          this.showMatched();
          this.showStatus();
        },
      );
      return;
    }
    s.error = error || "";
    this.input.setCustomValidity(s.error ? `Not a regular expression: ${s.error}` : "");
    this.input.title = s.error ? `Not a regular expression: ${s.error}` : "Regular expression (/ or Ctrl-F)";
    if (re) {
      const { ids, flags } = matchNames(g.names.names, re);
      s.re = re;
      s.ids = ids;
      s.flags = flags;
    }
    this.table.mark(s.flags);
    this.requestRender();
    if (!s.ids || s.ids.length === 0) {
      s.buckets = [];
      this.showMatched();
      return;
    }
    if (s.flags[0]) {
      // The root's label matches: everything is matched, no bucket needed.
      s.all = true;
      this.computeMatched();
      s.ms = performance.now() - t0;
      return;
    }
    s.busy = true;
    this.showMatched();
    const entries = bucketsFor(g.manifest.search, s.ids);
    Promise.all(entries.map((e) => g.source.bucket(e))).then(
      (buckets) => {
        if (this.search !== s) return;
        s.buckets = buckets;
        s.busy = false;
        this.computeMatched();
        s.ms = performance.now() - t0;
      },
      () => {
        if (this.search !== s) return;
        s.busy = false;
        s.error = "the search data could not be loaded";
        this.showMatched();
        this.showStatus();
      },
    );
  }

  computeMatched() {
    const s = this.search;
    const z = this.zoom;
    if (s.all && this.g && this.g.manifest) {
      s.value = this.g.manifest.total;
      s.inZoom = z ? z.total : s.value;
      return this.showMatched();
    }
    if (!s.buckets || !s.ids || !this.g || !this.g.manifest) return this.showMatched();
    const r = matchedValue(s.buckets, s.ids, z ? z.offset : -Infinity, z ? z.offset + z.total : Infinity);
    s.value = r.value;
    s.inZoom = r.inRange;
    s.diff = this.diffTotals() && s.buckets.some((b) => b.diff) ? matchedBeforeAfter(s.buckets, s.ids) : null;
    const layout = this.g.manifest.diff && this.g.manifest.diff.layout;
    if (s.diff && (layout === "after" || layout === "before")) {
      // These layouts share the union's search files, whose intervals are union widths; their
      // own widths are one run's values, which the frames' values give exactly.
      s.value = layout === "after" ? s.diff.after : s.diff.before;
      s.inZoom = null;
    }
    this.showMatched();
  }

  showMatched() {
    const s = this.search;
    const node = $("fs-matched");
    const m = this.g && this.g.manifest;
    node.classList.toggle("fs-bad", !!s.error);
    if (s.error) node.textContent = `Not a regular expression: ${s.error}`;
    else if (!s.re || !m) node.textContent = "";
    else if (s.busy) node.textContent = "Matching…";
    else {
      const k = s.ids.length;
      const d = this.diffTotals();
      let text;
      if (s.diff && d) {
        const pb = d.tb > 0 ? (100 * s.diff.before) / d.tb : 0;
        const pa = d.ta > 0 ? (100 * s.diff.after) / d.ta : 0;
        text = `Matched ${formatValue(s.diff.before, m.unit)} → ${formatValue(s.diff.after, m.unit)} (${formatPercent(s.diff.before, d.tb)} → ${formatPercent(s.diff.after, d.ta)}, ${formatPoints(pa - pb)})`;
      } else {
        text = `Matched ${formatValue(s.value, m.unit)} (${formatPercent(s.value, m.total)})`;
        if (this.zoom) text += `, ${formatPercent(s.inZoom, this.zoom.total)} of zoom`;
      }
      node.textContent = `${text} in ${groupDigits(k)} ${k === 1 ? "function" : "functions"}`;
    }
  }

  // ---- table ---------------------------------------------------------------------------------

  /** Fill the table, only once it is on screen: the graph view does not pay for it. */
  showTable() {
    const g = this.g;
    if (!g || !g.names || this.st.view === "graph") return;
    if (this.tableFor === g && this.tableSort === this.st.sort) return;
    if (!g.names.complete()) {
      // The table lists every function: fetch the name files first.
      this.tableWaiting = true;
      const done = () => {
        this.tableWaiting = false;
        if (this.g === g) {
          this.showStatus();
          if (g.names.complete()) this.showTable();
        }
      };
      g.source.allNames(g.names).then(done, done);
      return;
    }
    this.tableFor = g;
    this.tableSort = this.st.sort;
    this.table.show(g.names, this.st.sort, g.manifest.unit, g.manifest.total, this.diffTotals());
    this.table.mark(this.search.flags);
  }

  setSort(key) {
    this.st.sort = key;
    this.updateUrl();
    this.showTable();
  }

  // ---- script API ----------------------------------------------------------------------------

  busy() {
    const g = this.g;
    if (!g) return true;
    if (g.failed) return false;
    return !g.manifest || g.source.pending > 0 || g.prefetch || this.scheduled || this.search.busy || this.tableWaiting || (this.zoom && !this.zoom.info && !this.hidden) || this.waiting > 0;
  }

  state() {
    const g = this.g;
    const m = g && g.manifest;
    const z = this.zoom && this.zoom.info;
    const s = this.search;
    const v = this.view;
    return {
      graph: g ? g.meta.name : null,
      // Of a differential graph, the values of the later run (its widths are not values).
      total: m ? (this.diffTotals() ? this.diffTotals().ta : m.total) : null,
      totalBefore: this.diffTotals() ? this.diffTotals().tb : null,
      unit: m ? m.unit : null,
      zoom: z ? { name: z.name, depth: z.depth, offset: z.offset, total: z.total, self: z.self } : null,
      query: this.st.query,
      caseSensitive: this.st.caseSensitive,
      queryError: s.error || null,
      matched: {
        value: s.value,
        percent: m && m.total > 0 ? (100 * s.value) / m.total : 0,
        functions: s.ids ? s.ids.length : 0,
        inZoom: s.inZoom,
        before: s.diff ? s.diff.before : null,
        after: s.diff ? s.diff.after : null,
      },
      layout: this.isDiffPage ? this.st.layout : null,
      measure: this.diffTotals() ? this.st.measure : null,
      view: this.st.view,
      icicle: this.st.icicle,
      chunksLoaded: g ? [...g.source.loaded] : [],
      searchLoaded: g ? [...g.source.bucketsLoaded] : [],
      namesLoaded: g ? [...g.source.namesLoaded] : [],
      errors: g ? [g.failed, ...g.source.errors.map((e) => e.message), this.notice].filter(Boolean) : [],
      paints: this.paints,
      paintMs: this.paintMs || 0,
      viewport: v
        ? { width: v.width, height: v.height, rowHeight: v.rowH, scrollTop: v.scrollTop, x0: v.x0, x1: v.x1, depths: visibleDepths(v) }
        : null,
      busy: this.busy(),
      searchMs: s.ms,
      link: location.href,
    };
  }

  /** A promise of the state once nothing is loading, drawing or searching. */
  idle() {
    return new Promise((resolve) => {
      const check = () => (this.busy() ? setTimeout(check, 10) : resolve(this.state()));
      check();
    });
  }
}

const viewer = new Viewer();
window.flamesite = Object.freeze({
  version: 1,
  state: () => viewer.state(),
  idle: () => viewer.idle(),
});
