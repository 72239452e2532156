// The script API, `window.flamesite` (documented in ../README.md): a snapshot of the page's
// state for tests and embedders, and a promise of it once nothing is loading or drawing.

import { visibleDepths } from "./layout.js";

/** True while a file or a module is loading, a paint is pending or a search is being counted. */
export function busy(v) {
  const g = v.g;
  if (!g) return true;
  if (g.failed) return false;
  return (
    !g.manifest || g.source.pending > 0 || g.prefetch || v.scheduled || v.search.s.busy || (v.table && v.table.waiting) || (v.zoom && !v.zoom.info && !v.hidden) || v.waiting > 0 ||
    (v.sandwich && v.sandwich.busy) || v.modulesLoading > 0 || v.pathsPending > 0
  );
}

/** The snapshot `flamesite.state()` returns: plain data, safe to keep. */
export function snapshot(v) {
  const g = v.g;
  const m = g && g.manifest;
  const z = v.zoom && v.zoom.info;
  const s = v.search.s;
  const view = v.painter.view;
  const st = v.url.st;
  const d = v.diffTotals();
  return {
    graph: g ? g.meta.name : null,
    // Of a differential graph, the values of the later run (its widths are not values).
    total: m ? (d ? d.ta : m.total) : null,
    totalBefore: d ? d.tb : null,
    unit: m ? m.unit : null,
    zoom: z ? { name: z.name, depth: z.depth, offset: z.offset, total: z.total, self: z.self } : null,
    focus: v.focus ? { name: v.focus.name, depth: v.focus.depth, offset: v.focus.offset, total: v.focus.total } : null,
    query: st.query,
    caseSensitive: st.caseSensitive,
    queryError: s.error || null,
    matched: {
      value: s.value,
      percent: m && m.total > 0 ? (100 * s.value) / m.total : 0,
      functions: s.ids ? s.ids.length : 0,
      inZoom: s.inZoom,
      before: s.diff ? s.diff.before : null,
      after: s.diff ? s.diff.after : null,
      // A comparison zoomed in: the values before and after matched in the zoomed frame.
      beforeInZoom: s.diff && s.diff.zoomed ? s.diff.zoomed.before : null,
      afterInZoom: s.diff && s.diff.zoomed ? s.diff.zoomed.after : null,
    },
    // Of a plain graph: "left" shown left-heavy, else null (children by name).
    layout: v.isDiffPage ? st.layout : st.layout === "left" ? "left" : null,
    measure: d ? st.measure : null,
    palette: d ? "diff" : v.paletteName(),
    view: st.view,
    icicle: st.icicle,
    // What the graph area shows: the graph root down (icicle) or up (flame), or a sandwich.
    mode: st.sandwich ? "sandwich" : st.icicle ? "icicle" : "flame",
    // (Its module on the way: what the sandwich says while its files load.)
    sandwich: st.sandwich ? (v.sandwich ? v.sandwich.snapshot() : { name: st.sandwich, loading: true, error: null }) : null,
    chunksLoaded: g ? [...g.source.loaded] : [],
    // (Of a comparison whose search reads its runs' graphs, their search files too.)
    searchLoaded: g ? [...g.source.bucketsLoaded, ...runSources(g).flatMap((r) => r.bucketsLoaded)] : [],
    namesLoaded: g ? [...g.source.namesLoaded] : [],
    errors: g ? [g.failed, ...[g.source, ...runSources(g)].flatMap((x) => x.errors.map((e) => e.message)), v.notice].filter(Boolean) : [],
    paints: v.painter.paints,
    paintMs: v.painter.paintMs,
    viewport: view
      ? { width: view.width, height: view.height, rowHeight: view.rowH, scrollTop: view.scrollTop, x0: view.x0, x1: view.x1, depths: visibleDepths(view) }
      : null,
    busy: busy(v),
    searchMs: s.ms,
    link: location.href,
  };
}

/** The sources of the runs' own graphs a comparison's search has read, if any. */
function runSources(g) {
  return g.runs ? [g.runs.before.source, g.runs.after.source] : [];
}

/** Install `window.flamesite` for viewer `v`. */
export function installApi(v) {
  // Idle once nothing is busy after a frame's rendering steps too: a change of the page's
  // text (the Matched line, wrapping the toolbar) resizes the graph's box at the next layout,
  // whose ResizeObserver then asks for a paint; checked before it, the snapshot would be of the
  // old size.
  const settled = (then) => requestAnimationFrame(() => setTimeout(then, 0));
  const idle = () =>
    new Promise((resolve) => {
      const check = () => (busy(v) ? setTimeout(check, 10) : settled(() => (busy(v) ? setTimeout(check, 10) : resolve(snapshot(v)))));
      check();
    });
  window.flamesite = Object.freeze({ version: 1, state: () => snapshot(v), idle });
}
