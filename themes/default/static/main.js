// The viewer: wires the page's modules together. It holds the graph shown, the zoom and the
// frame pointed at, loads a graph and runs each render (plan the files, then paint). The
// toolbar is controls.js, the info line info.js, the pointer's and the canvas keys' hit testing
// pointer.js; the state and the URL are in state.js, fetch planning in plan.js, painting in
// paint.js, the search in query.js, the table in table.js and the script API in api.js. What the
// first view needs is imported here, each module directly, so the browser fetches them all at
// once (scripts.html preloads the same list); the rest (`later`) is loaded when first used, or
// once the first view is painted and the page is idle.

import { GraphSource, searchesRuns } from "./fetch.js";
import { frameInfo, frameStartingAt, rowY } from "./layout.js";
import { Palette } from "./draw.js";
import { nameHash } from "./format.js";
import { Tooltip } from "./ui.js";
import { UrlState, carryContext, isStateFragment, sameZoom } from "./state.js";
import { FetchPlan, zoomChunks } from "./plan.js";
import { Painter } from "./paint.js";
import { installApi } from "./api.js";
import { Controls } from "./controls.js";
import { InfoLine } from "./info.js";

/** A module loaded on first use: `get()` loads it (once; again after a failure), `m` is it once in. */
function lazy(load) {
  const l = {
    m: null,
    p: null,
    get: () =>
      (l.p ||= load().then(
        (m) => (l.m = m),
        (e) => {
          l.p = null;
          throw e;
        },
      )),
  };
  return l;
}

// The modules the first view does not need: the pointer's hit testing (pointer.js), the search
// (query.js, search.js), the table (table.js), keyboard moves between frames (nav.js), the
// downloads (export.js) and the sandwich (sandwichview.js, sandwich.js). Each loads when first
// used, and every one once the first view is painted and the page is idle, so that a later
// click or key does not wait for it.
const later = {
  pointer: lazy(() => import("./pointer.js")),
  query: lazy(() => import("./query.js")),
  search: lazy(() => import("./search.js")),
  table: lazy(() => import("./table.js")),
  nav: lazy(() => import("./nav.js")),
  exporter: lazy(() => import("./export.js")),
  sandwich: lazy(() => import("./sandwichview.js")),
  zoomPath: lazy(() => import("./zoompath.js")),
};
/**
 * The search until query.js is in: none, as query.js's emptySearch() says. The first search
 * (typed, or a link's) loads query.js, whose Search takes its place (see `applySearch`).
 */
const NO_SEARCH = {
  s: Object.freeze({ seq: 0, re: null, error: "", ids: null, flags: null, buckets: null, match: null, all: false, busy: false, value: 0, inZoom: 0, diff: null, ms: 0 }),
  reset() {},
  count() {},
};

// A graph's first picture waits up to this long (ms from the manifest's arrival) for every
// file of its view, rather than painting each part as it comes: on the first load a paint costs
// tens of ms (V8 runs the drawing code unoptimised), and the parts usually arrive together.
const FIRST_VIEW_WAIT = 300;
// Phones, and windows too small for the panels above the graph (flamesite.css has the same).
const SMALL_SCREEN = "(max-width: 40rem), (max-height: 30rem)";
const $ = (id) => document.getElementById(id);

class Viewer {
  constructor() {
    // The script runs: the notice for pages opened from disk goes (see viewer.html).
    $("fs-needs-http")?.remove();
    // On a small screen the "About this run" panel (notes, labels) starts closed, so that the
    // graph is above the fold (the stylesheet keeps it short until then).
    if (matchMedia(SMALL_SCREEN).matches) for (const d of document.querySelectorAll("details.fs-about[open]")) d.open = false;
    this.app = $("fs-app");
    this.scroll = $("fs-scroll");
    this.canvas = $("fs-canvas");
    this.input = $("fs-search");
    this.select = $("fs-graph");
    this.isDiffPage = !!$("fs-layout");
    this.diff = null; // diff.js, once a differential graph is shown
    this.graphs = [...this.select.options].map((o) => ({
      name: o.dataset.name,
      unit: o.dataset.unit,
      total: Number(o.dataset.total),
      data: o.value,
      // A comparison's: the runs' own graphs, whose search files its search reads.
      runs: o.dataset.before && o.dataset.after ? { before: o.dataset.before, after: o.dataset.after } : null,
    }));
    this.url = new UrlState(location, history, this.isDiffPage);
    // Links to the previous and next run, the comparisons and the runs compared carry the
    // search, the graph and the colours (state.js, carriedFragment).
    this.carried = [...document.querySelectorAll("a[data-carry]")];
    this.url.onWrite = (st) => this.carry(st);
    // Links to another run (previous, next) take the zoom by its frame's path, found once per
    // zoom: { zoom, path } (path null while it is being found, or when it cannot be).
    this.zoomPath = null;
    this.pathsPending = 0; // paths being found or followed (busy, see api.js)
    carryContext(this.carried, this.url.st);
    this.g = null; // the graph shown (see `loadGraph`)
    this.zoom = null; // { depth, offset, total, hash, info } — info once the frame is verified
    this.drawn = []; // the chunks on the canvas, for hit testing
    this.hover = null;
    this.focus = null; // the frame the keyboard is on (frameInfo), outlined while the canvas has the focus
    this.pointer = null; // { clientX, clientY } of the last pointer move over the canvas
    this.pointerType = ""; // of the last pointerdown on the canvas: "mouse", "touch", "pen"
    this.pointerInput = null; // the Pointer (pointer.js): hit testing, once its module is in
    this.notice = "";
    this.scheduled = false; // a render is requested for the next animation frame
    this.waiting = 0; // files the view on the canvas still waits for
    this.hidden = false; // the graph is hidden (table view)
    this.loadSeq = 0;
    this.typing = false; // keystrokes in the search box since it got the focus amend one history entry
    this.painter = new Painter({ app: this.app, scroll: this.scroll, spacer: $("fs-spacer"), canvas: this.canvas, overlay: $("fs-overlay") });
    this.search = NO_SEARCH; // a Search (query.js) from the first search on
    this.table = null; // the TablePanel (table.js), made when the table is first shown
    this.tooltip = new Tooltip($("fs-tooltip"));
    this.info = new InfoLine(this);
    this.controls = new Controls(this);
    this.sandwich = null; // the SandwichView (sandwichview.js), made when a sandwich is first opened
    this.modulesLoading = 0; // modules of `later` an action waits for (busy, see api.js)
    this.preloaded = false; // the modules of `later` are asked for (after the first paint)
    this.bind();
    this.controls.apply();
    this.loadGraph();
  }

  /**
   * Run `fn(module)` with module `l` of `later`: at once when it is in, else once it arrives
   * (the page is busy until then). A module that cannot be loaded is said in the error banner.
   */
  withModule(l, fn) {
    if (l.m) return fn(l.m);
    this.modulesLoading += 1;
    l.get().then(
      (m) => {
        this.modulesLoading -= 1;
        fn(m);
      },
      (e) => {
        this.modulesLoading -= 1;
        this.notice = `Part of the page script could not be loaded: ${e && e.message ? e.message : e}`;
        this.showStatus();
      },
    );
  }

  /** Once the first view is painted, ask for the modules of `later` while the page is idle. */
  preloadLater() {
    if (this.preloaded) return;
    this.preloaded = true;
    const go = () => {
      for (const l of Object.values(later)) l.get().catch(() => {}); // tried again when used
      // A run where a change point starts says so (changes.js).
      const starts = document.querySelector(".fs-changestart");
      if (starts) import("./changes.js").then((m) => m.showChangeStarts(starts)).catch(() => {});
      // Dates past the reader's clock are flagged (dates.js flags them as it loads).
      import("./dates.js").catch(() => {});
    };
    if (window.requestIdleCallback) requestIdleCallback(go, { timeout: 1000 });
    else setTimeout(go, 100);
  }

  /** The state the URL holds (format.js's shape). */
  get st() {
    return this.url.st;
  }

  // ---- events --------------------------------------------------------------------------------

  bind() {
    this.scroll.addEventListener("scroll", () => this.requestRender(), { passive: true });
    new ResizeObserver(() => this.requestRender()).observe(this.scroll);
    // A canvas whose backing store was dropped (context lost) is drawn again in full.
    this.canvas.addEventListener("contextrestored", () => {
      this.painter.invalidate();
      this.requestRender();
    });
    // The pointer's events go to pointer.js (loaded after the first paint, or by the first of them).
    const point = (fn) => (e) => this.withModule(later.pointer, () => fn(this.pointed(), e));
    this.canvas.addEventListener("mousemove", point((p, e) => p.onMove(e)));
    this.canvas.addEventListener("mouseleave", () => this.setHover(null));
    this.canvas.addEventListener("click", point((p, e) => p.onClick(e)));
    // Which pointer the next click comes from: a tap shows a frame, a second tap zooms.
    this.canvas.addEventListener("pointerdown", (e) => (this.pointerType = e.pointerType));
    this.canvas.addEventListener("keydown", (e) => {
      // The keys pointer.js handles keep their default (scrolling) off while it loads.
      if (!later.pointer.m && !e.ctrlKey && !e.metaKey && !e.altKey && ["Enter", " ", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) e.preventDefault();
      point((p) => p.onKey(e))(e);
    });
    // Focus from the keyboard (Tab) puts the keyboard on a frame; a mouse click's focus does not.
    this.canvas.addEventListener("focus", () => {
      later.nav.get().catch(() => {}); // the arrow keys' module, for the keys to come
      if (this.canvas.matches(":focus-visible")) this.withModule(later.pointer, () => this.setFocus(this.focus || this.pointed().startFrame()));
    });
    this.canvas.addEventListener("blur", () => {
      this.painter.outline(this.hover);
      if (!this.hover) this.info.show(this.keyboardFrame());
    });
    this.input.addEventListener("input", () => {
      this.st.query = this.input.value;
      // The first keystroke of a word is a history entry, the next ones amend it.
      this.url.write(this.typing);
      this.typing = true;
      this.applySearch();
      this.renderNow();
    });
    this.input.addEventListener("blur", () => (this.typing = false));
    // A comparison searches its runs' graphs: their name tables are asked for as the search
    // box is entered, not after the first key.
    this.input.addEventListener("focus", () => this.warmRuns());
    this.controls.bind();
    $("fs-png").addEventListener("click", () => this.withModule(later.exporter, (x) => x.exportPng(this)));
    $("fs-svg").addEventListener("click", () => this.withModule(later.exporter, (x) => x.exportSvg(this)));
    document.addEventListener("keydown", (e) => this.onKey(e));
    // Back and Forward between the entries of zooms and searches (popstate; hashchange for an
    // edited address). Both may come for one step: the second finds nothing changed.
    window.addEventListener("hashchange", () => this.onHashChange());
    window.addEventListener("popstate", () => this.onHashChange());
    // In-page anchors (the notes' footnotes, `#notes-…`) are followed without replacing the
    // fragment, which holds the zoom and the search.
    document.addEventListener("click", (e) => this.onAnchorClick(e));
  }

  onKey(e) {
    if (e.defaultPrevented) return;
    const t = e.target;
    const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
    if (e.key === "s" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey && !this.st.sandwich) {
      // The sandwich of the frame under the pointer, or of the keyboard's frame.
      const f = this.hover || this.keyboardFrame();
      if (f && !f.elided && f.depth > 0 && f.name !== undefined) {
        e.preventDefault();
        this.openSandwich(f.name);
      }
    } else if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "f") {
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
      if (this.st.sandwich) {
        // In the sandwich: out of its zooms first, then out of the sandwich.
        const zoomed = this.sandwich ? this.sandwich.panes.filter((p) => p.zoom) : [];
        if (zoomed.length) for (const p of zoomed) p.zoomTo({ depth: 0 });
        else this.closeSandwich();
        return;
      }
      this.setHover(null);
      this.resetZoom();
    }
  }

  // ---- the frame pointed at ------------------------------------------------------------------

  /** The Pointer (pointer.js), once its module is in. */
  pointed() {
    return (this.pointerInput ||= new later.pointer.m.Pointer(this, later.nav));
  }

  /** The keyboard's frame while the canvas has the keyboard focus, else null. */
  keyboardFrame() {
    return this.focus && document.activeElement === this.canvas ? this.focus : null;
  }

  /** Put the keyboard on frame `f`: outlined, said in the info line (an aria-live region), scrolled to. */
  setFocus(f) {
    this.focus = f;
    const v = this.painter.view;
    if (f && v) {
      const y = rowY(v, f.depth);
      if (y < 0 || y + v.rowH > v.height) {
        this.scroll.scrollTop = Math.max(0, v.scrollTop + (y < 0 ? y : y + v.rowH - v.height));
        this.requestRender();
      }
    }
    this.info.show(this.hover || f);
    this.painter.outline(this.hover || this.keyboardFrame());
  }

  /** Frame `f` is under the pointer (event `e`), or nothing (null): outlined, in the tooltip and the info line. */
  setHover(f, e, again = false) {
    const prev = this.hover;
    this.hover = f;
    if (e) this.pointer = { clientX: e.clientX, clientY: e.clientY };
    if (!f) {
      this.tooltip.hide();
      this.canvas.style.cursor = "";
    } else {
      const { name, facts } = this.info.describe(f);
      this.tooltip.show(e.clientX, e.clientY, name, facts);
      this.canvas.style.cursor = "pointer";
    }
    if (again || (prev !== f && (!prev || !f || prev.id !== f.id))) {
      const kb = this.keyboardFrame();
      this.info.show(f || kb);
      this.painter.outline(f || kb);
    }
  }

  /** A click on a link to an element of this page: scroll to it, keep the URL's state. */
  onAnchorClick(e) {
    if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    const a = e.target instanceof Element && e.target.closest("a[href]");
    if (!a || a.origin !== location.origin || a.pathname !== location.pathname || a.search !== location.search) return;
    if (!a.hash || isStateFragment(a.hash)) return;
    e.preventDefault();
    this.showAnchor(a.hash);
  }

  /** Scroll to the element an in-page anchor names, and move the focus there. */
  showAnchor(hash) {
    let id = hash.slice(1);
    try {
      id = decodeURIComponent(id);
    } catch {
      // not an escaped name: look it up as it is
    }
    const target = document.getElementById(id);
    if (!target) return;
    const details = target.closest("details");
    if (details) details.open = true;
    target.scrollIntoView({ block: "nearest" });
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
  }

  onHashChange() {
    const prev = this.st;
    const next = this.url.read();
    if (!next) {
      // An in-page anchor typed or followed some other way: show it, put the state back.
      this.showAnchor(location.hash);
      this.url.restore();
      return;
    }
    this.url.st = next;
    this.carry(next);
    if ((next.graph || null) !== (prev.graph || null) || next.layout !== prev.layout) {
      this.controls.apply();
      this.loadGraph();
      return;
    }
    const z = next.zoom;
    if (!sameZoom(z, prev.zoom)) this.setZoom(z ? { ...z, info: null } : null, false);
    if (next.zoomPath && !z && this.g && this.g.manifest) this.followPath(this.g, next.zoomPath);
    this.controls.apply();
    if (next.query !== prev.query || next.caseSensitive !== prev.caseSensitive) this.applySearch();
    if (next.measure !== prev.measure) this.painter.invalidate();
    if ((next.sandwich || null) !== (prev.sandwich || null)) this.applyMode();
    this.showTable();
    this.requestRender();
  }

  /** The palette in use: the link's (`p`), else the build's (the manifest's), else `hot`. */
  paletteName() {
    const m = this.g && this.g.manifest;
    return this.st.palette || (m && m.palette) || "hot";
  }

  /** Of a differential graph: { tb, ta, unit } (its two totals), else null. */
  diffTotals() {
    const m = this.g && this.g.manifest;
    if (!m || !m.differential || !this.diff) return null;
    const tb = m.diff ? m.diff.total_before : m.total_before;
    const ta = m.diff ? m.diff.total_after : m.total;
    return { tb, ta, unit: m.unit, decimals: m.decimals || 0, sides: this.diff.sidesOf(m.diff) };
  }

  /** Write the state to the URL: a zoom or a search is a new history entry (state.js). */
  updateUrl() {
    this.typing = false;
    this.url.write();
  }

  // ---- loading -------------------------------------------------------------------------------

  /**
   * The graph a link without `g` opens: the first with a value, so that a profile whose first
   * sample type adds up to 0 (a .NET profile's lock time) does not open on an empty canvas.
   */
  shownGraph() {
    return this.graphs.find((m) => m.total > 0) || this.graphs[0];
  }

  async loadGraph() {
    const seq = ++this.loadSeq;
    const meta = this.graphs.find((m) => m.name === this.st.graph) || this.shownGraph();
    if (!meta) return this.fail("this page lists no graph");
    this.select.selectedIndex = this.graphs.indexOf(meta);
    // A comparison's chunks hold all three layouts (graphs built before that have a folder
    // for each, which the source finds from the manifest).
    const layout = this.isDiffPage ? this.st.layout : this.st.layout === "left" ? "left" : null;
    const source = new GraphSource(new URL(meta.data, document.baseURI).href, undefined, layout);
    // The files the page preloads for its first view: asked for now, not after the manifest.
    source.early([...document.querySelectorAll('link[rel="preload"][as="fetch"]')].map((l) => l.href));
    this.g = {
      meta,
      source,
      manifest: null,
      names: null, // a NameTable, filled as the name files arrive
      palette: null,
      failed: "",
      requested: new Set(), // files asked for
      firstBy: 0, // when the first picture stops waiting for every file of its view
      firstTimer: 0,
      prefetch: undefined, // the rest of the names: undefined (not started), true (on the way), false (in)
      runs: null, // of a comparison, the runs' own graphs once a search reads them (runGraphs)
    };
    this.search.reset();
    this.drawn = [];
    if (this.pointerInput) this.pointerInput.reset();
    this.focus = null;
    this.notice = "";
    this.setHover(null);
    this.zoom = this.st.zoom ? { ...this.st.zoom, info: null } : null;
    this.painter.scrollTo(this.zoom ? this.zoom.depth : "root");
    this.controls.apply();
    this.showStatus();
    try {
      // The words of a differential graph (diff.js): asked for with the manifest on a
      // comparison's page, after it for a two-count graph on a run's page; a plain graph's
      // first paint does without.
      const words = this.isDiffPage && !this.diff ? import("./diff.js") : null;
      const manifest = await source.manifest();
      if (manifest.differential && !this.diff) this.diff = await (words || import("./diff.js"));
      if (seq !== this.loadSeq) return;
      this.g.manifest = manifest;
      this.g.firstBy = performance.now() + FIRST_VIEW_WAIT;
      // An empty name table, filled as the name files the drawn chunks need arrive.
      this.g.names = source.nameTable(manifest);
      this.g.palette = new Palette(this.g.names);
      if (meta.total === 0) {
        // Said, not left as a blank canvas.
        const others = this.graphs.some((m) => m.total > 0) ? " The graph menu lists the others." : "";
        this.notice = `The ${meta.name} graph is empty: its values add up to 0.${others}`;
        this.showStatus();
      }
      this.controls.showLegend();
      this.controls.apply(); // the Colours menu shows the build's palette when the link names none
      // The info line first: its text settles the layout, so the first view's size is final.
      this.info.show(null);
      this.applyMode();
      // A link from another run names its zoomed frame by its path: found while the first
      // view is drawn, then zoomed to.
      if (this.st.zoomPath && !this.st.zoom) this.followPath(this.g, this.st.zoomPath);
      this.render(); // asks for the first view's chunks and their name files
      this.showTable();
      this.applySearch();
    } catch (e) {
      if (seq !== this.loadSeq) return;
      this.fail(e.message);
    }
  }

  /**
   * Of a comparison whose graph option names the runs' own graphs: { before, after }, each
   * { source, load }, made on first use; null otherwise. `load()` is the promise, asked for
   * once, of the run's `{ manifest, names, scale }`: its manifest, its whole name table, and the
   * factor from its values to the comparison's (10^k when the comparison holds them in k more
   * decimal places).
   */
  runGraphs() {
    const g = this.g;
    if (!g || !g.meta.runs || !g.manifest) return null;
    if (!g.runs) {
      const run = (url) => {
        const source = new GraphSource(new URL(url, document.baseURI).href);
        let loaded = null;
        const load = () =>
          (loaded ||= source.manifest().then(async (rm) => {
            const names = source.nameTable(rm);
            await source.allNames(names);
            return { manifest: rm, names, scale: 10 ** ((g.manifest.decimals || 0) - (rm.decimals || 0)) };
          }));
        return { source, load };
      };
      g.runs = { before: run(g.meta.runs.before), after: run(g.meta.runs.after) };
    }
    return g.runs;
  }

  /**
   * Start fetching the runs' manifests and name tables a comparison's search reads (once the
   * first view is painted, or when the search box is entered); a promise of their arrival.
   */
  warmRuns() {
    const runs = searchesRuns(this.g && this.g.manifest) ? this.runGraphs() : null;
    if (!runs) return Promise.resolve();
    // A failure is said by the search that reads them.
    return Promise.all([runs.before, runs.after].map((r) => r.load().catch(() => {})));
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
    if (!this.hover) this.info.show(this.keyboardFrame());
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

  render() {
    this.scheduled = false;
    const g = this.g;
    if (!g || !g.manifest) return;
    if (this.sandwich) this.sandwich.render();
    const m = g.manifest;
    const z = this.zoom;
    const view = this.painter.computeView(m.depth, z ? z.offset : 0, z ? z.offset + z.total : m.total, this.st.icicle);
    this.hidden = !view;
    if (!view) {
      this.waiting = 0; // the graph is hidden (table view): nothing to wait for
      return;
    }
    // Nothing of this graph drawn yet: a file that arrives is looked at at once (the first
    // picture is drawn as soon as it is complete), not at the next animation frame.
    const first = this.painter.isFirst(g);
    const plan = new FetchPlan(g, () => {
      if (this.g !== g) return;
      this.showStatus();
      if (this.painter.isFirst(g)) this.render();
      else this.requestRender();
    });
    const ready = plan.chunks(view);
    if (this.zoom && !this.zoom.info && this.verifyZoom(plan) === false) {
      plan.start();
      return this.render();
    }
    if (ready.length === 0) plan.start(); // nothing to show: ask for it first (see below)
    this.drawn = ready;
    this.waiting = plan.waiting;
    // A blank canvas that still waits for every file it needs stays as it is until the first
    // view's files are in or its wait is over.
    const early = first && plan.waiting > 0 && performance.now() < g.firstBy;
    if (early && !g.firstTimer) g.firstTimer = setTimeout(() => this.requestRender(), g.firstBy - performance.now());
    const scene = {
      g,
      view,
      chunks: ready,
      waiting: plan.waiting,
      zoomDepth: this.zoom ? this.zoom.depth : 0,
      match: this.search.s.flags,
      diff: this.diffScene(),
      palette: this.paletteName(),
      share: null,
      early,
    };
    if (scene.palette === "self" || scene.palette === "total") scene.share = { by: scene.palette, total: m.total };
    // Names' colours: the name files' when the palette is the build's, else computed here.
    else g.palette.setScheme(scene.palette === m.palette ? null : scene.palette);
    const decision = this.painter.compare(scene);
    // Ask for the missing files after this frame when it shows something new, else now,
    // before drawing: a fetch() costs the main thread about a millisecond and a zoom can ask
    // for forty files, which held the zoomed picture of the chunks at hand back by tens of
    // milliseconds (docs/BENCHMARKS.md, "Figures behind the code"); the first view, with nothing to show yet,
    // must not make its chunks wait for a paint of the empty canvas.
    const showsNew = !decision.same && ready.length > 0;
    if (!showsNew) plan.start();
    this.painter.paint(scene, decision, this.hover || this.keyboardFrame());
    if (showsNew && plan.fetches.length) setTimeout(() => plan.start(), 0);
    this.showStatus();
    if (this.painter.settle(scene, decision)) {
      this.prefetchNames(g);
      this.preloadLater();
    }
  }

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

  /**
   * Once the first view is complete, fetch the rest of the name table while the page is idle
   * (of a comparison of two runs, the runs' name tables too): a first search reads every name
   * and would otherwise wait for all of them. Once per graph.
   */
  prefetchNames(g) {
    if (g.prefetch !== undefined || !g.names) return;
    // Of a comparison whose search reads its runs' graphs, their name tables too.
    const own = !g.names.complete();
    const runs = searchesRuns(g.manifest) && !!g.meta.runs;
    if (!own && !runs) return;
    g.prefetch = true; // busy until the files are in (see api.js busy())
    const done = () => (g.prefetch = false);
    const go = () => (this.g === g ? Promise.all([own && g.source.allNames(g.names), runs && this.warmRuns()]).then(done, done) : done());
    if (window.requestIdleCallback) requestIdleCallback(go, { timeout: 300 });
    else setTimeout(go, 50);
  }

  /**
   * Find the zoomed frame of a link in its chunks: the frame at the link's depth starting at
   * its offset, with its total and name hash. Returns true when found, false when it is not
   * there (the zoom is dropped with a notice), undefined while its chunks are on the way.
   */
  verifyZoom(plan) {
    const z = this.zoom;
    const ready = [];
    let pending = false;
    for (const c of zoomChunks(this.g.manifest, z)) {
      const got = plan.want(c);
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
    this.setZoom(null, false);
    this.url.restore(); // the link's entry corrected, not a new one
    return false;
  }

  /** The unit words of the graph shown: { total, unit, decimals, diff (differential: its totals) }. */
  graphUnit() {
    const m = this.g.manifest;
    return { total: m.total, unit: m.unit, decimals: m.decimals || 0, diff: this.diffTotals() };
  }

  // ---- sandwich ------------------------------------------------------------------------------

  /** Open the sandwich of function `name` (a history entry, as a zoom is). */
  openSandwich(name) {
    if (!name) return;
    this.st.sandwich = name;
    // From the table view, show the sandwich beside the table.
    if (this.st.view === "table") this.st.view = "both";
    this.setHover(null);
    this.updateUrl();
    this.controls.apply();
    this.applyMode();
    this.showTable();
  }

  closeSandwich() {
    if (!this.st.sandwich) return;
    this.st.sandwich = null;
    this.updateUrl();
    this.controls.apply();
    this.applyMode();
  }

  /** Show the graph or the sandwich, as the state says. */
  applyMode() {
    this.controls.apply();
    if (!this.g || !this.g.manifest) return;
    if (this.st.sandwich) {
      this.withModule(later.sandwich, (m) => {
        // Once the module is in: the state may have changed while it came.
        if (!this.st.sandwich || !this.g || !this.g.manifest) return;
        if (!this.sandwich) this.sandwich = new m.SandwichView(this, $("fs-sandwich"));
        this.sandwich.open(this.g, this.st.sandwich);
      });
    } else {
      if (this.sandwich) this.sandwich.hide();
      this.tooltip.hide();
      this.info.show(null);
      // The graph was hidden: its view is computed afresh.
      this.painter.invalidate();
    }
    this.requestRender();
  }

  /** A link's sandwich names a function the graph does not have: say so, show the graph. */
  sandwichMissing(name) {
    this.notice = `The function of this link's sandwich (${name}) is not in this graph; showing the whole graph.`;
    this.st.sandwich = null;
    this.url.restore(); // the link's entry corrected, not a new one
    this.applyMode();
    this.showStatus();
  }

  // ---- zoom ----------------------------------------------------------------------------------

  zoomTo(info) {
    this.focus = null;
    this.setZoom({ depth: info.depth, offset: info.offset, total: info.total, hash: nameHash(info.name), info }, true);
  }

  resetZoom() {
    this.focus = null;
    if (this.zoom) this.setZoom(null, true);
  }

  /** Zoom to a frame (`null`: the whole graph). `fromUser`: write the URL and scroll to it. */
  setZoom(z, fromUser) {
    this.zoom = z;
    this.st.zoom = z ? { depth: z.depth, offset: z.offset, total: z.total, hash: z.hash } : null;
    this.painter.scrollTo(z ? z.depth : "root");
    this.setHover(null);
    if (fromUser) this.updateUrl();
    this.controls.apply();
    if (z === null || z.info) this.afterZoom();
    this.requestRender();
  }

  afterZoom() {
    this.carry(this.st);
    this.search.count();
    this.info.show(this.hover || this.keyboardFrame());
    $("fs-reset").disabled = !this.zoom;
  }

  /**
   * Point the links that carry the context (state.js, carryContext) at state `st`; those to
   * another run with the zoomed frame's path, once zoompath.js has found it (they carry no
   * zoom until then).
   */
  carry(st) {
    const z = st.zoom;
    const mark = this.zoomPath && sameZoom(this.zoomPath.zoom, z) ? this.zoomPath : null;
    carryContext(this.carried, st, mark ? mark.path : null);
    const g = this.g;
    if (!z || mark || !g || !g.manifest || !g.names || !this.carried.some((a) => a.dataset.zoomPath !== undefined)) return;
    const wanted = { zoom: z, path: null };
    this.zoomPath = wanted;
    this.withModule(later.zoomPath, (m) => {
      this.pathsPending += 1;
      m.pathOf(g, z)
        .then((path) => {
          wanted.path = path;
          if (this.zoomPath === wanted && path) carryContext(this.carried, this.st, path);
        })
        .catch(() => {}) // the links then carry no zoom
        .finally(() => (this.pathsPending -= 1));
    });
  }

  /**
   * Zoom to the frame at the end of `path` (a link from another run, format.js `zp`), found
   * by zoompath.js; the link's history entry then holds the frame's own zoom (`z`). A path
   * this graph lacks shows the whole graph, with a notice.
   */
  followPath(g, path) {
    this.withModule(later.zoomPath, (m) => {
      this.pathsPending += 1;
      m.findPath(g, path)
        .then(
          (hit) => {
            if (this.g !== g) return;
            this.st.zoomPath = null;
            if (hit) {
              const info = frameInfo(hit.chunk, hit.row, g.names);
              this.setZoom({ depth: info.depth, offset: info.offset, total: info.total, hash: nameHash(info.name), info }, false);
            } else {
              this.notice = "The frame the other run was zoomed to is not in this graph; showing the whole graph.";
            }
            this.url.restore();
            this.carry(this.st);
          },
          (e) => {
            if (this.g !== g) return;
            this.st.zoomPath = null;
            this.notice = `The frame the other run was zoomed to could not be looked for: ${e && e.message ? e.message : e}`;
            this.url.restore();
          },
        )
        .finally(() => {
          this.pathsPending -= 1;
          this.showStatus();
          this.requestRender();
        });
    });
  }

  /** Show the graph left-heavy (children heaviest first), or by name again (zoompath.js). */
  toggleLeftHeavy() {
    this.withModule(later.zoomPath, (m) => m.toggleLeftHeavy(this));
  }

  // ---- export -------------------------------------------------------------------------------
  // The downloads are export.js's (lazy): `exportPng(app)`, `exportSvg(app)`.

  // ---- search and table ----------------------------------------------------------------------

  /**
   * A click on a row of the table: its function's exact alternative added to the search, or
   * taken out when it is there. Match case stays as the user set it, so a search typed later
   * is not made case-sensitive by the click.
   */
  toggleExact(id) {
    this.withModule(later.search, ({ toggleExact }) => {
      this.st.query = toggleExact(this.st.query, this.g.names.names[id]);
      this.controls.apply();
      this.updateUrl();
      this.applySearch();
      if (this.st.view === "table") {
        this.st.view = "both";
        this.controls.apply();
        this.updateUrl();
        this.requestRender();
      }
    });
  }

  applySearch() {
    if (this.search === NO_SEARCH) {
      if (!this.st.query) return; // nothing searched yet: query.js can wait
      this.withModule(later.query, ({ Search }) => {
        if (this.search === NO_SEARCH) {
          this.search = new Search(
            {
              graph: () => this.g,
              zoom: () => this.zoom,
              diffTotals: () => this.diffTotals(),
              runGraphs: () => this.runGraphs(),
              changed: (s) => {
                if (this.table) this.table.mark(s.flags);
                this.requestRender();
              },
              failed: () => this.showStatus(),
            },
            this.input,
            $("fs-matched"),
          );
        }
        this.search.run(this.st.query, this.st.caseSensitive);
      });
      return;
    }
    this.search.run(this.st.query, this.st.caseSensitive);
  }

  /** Fill the table, only once it is on screen: the graph view does not pay for it. */
  showTable() {
    const g = this.g;
    if (!g || !g.names || this.st.view === "graph") return;
    if (!this.table) {
      this.withModule(later.table, (m) => {
        if (!this.table) {
          this.table = new m.TablePanel($("fs-table"), $("fs-more"), {
            onPick: (id) => this.toggleExact(id),
            onSort: (key) => this.setSort(key),
            onSandwich: (id) => this.openSandwich(this.g.names.names[id]),
          });
        }
        this.showTable();
      });
      return;
    }
    this.table.show(g, this.st.sort, this.st.sortReversed, this.diffTotals(), this.search.s.flags, () => {
      if (this.g !== g) return;
      this.showStatus();
      if (g.names.complete()) this.showTable();
    });
  }

  /** A click on a column header: sort by it, or reverse the order when it is the sorted column. */
  setSort(key) {
    if (this.st.sort === key) this.st.sortReversed = !this.st.sortReversed;
    else {
      this.st.sort = key;
      this.st.sortReversed = false;
    }
    this.updateUrl();
    this.showTable();
  }
}

installApi(new Viewer());
