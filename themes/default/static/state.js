// The page's state as the URL fragment holds it, and its place in the browser's history.
// A zoom, a search or a sandwich is a history entry (Back undoes it); other changes (view, sort, icicle,
// colours) replace the current entry. In-page anchors (`#fn-1` of a footnote in the notes)
// are not state: following one must not replace the zoom and search. Pure functions, and one
// class over `location` and `history` passed in, so node's test runner imports this file too.

import { defaultState, formatFragment, parseFragment } from "./format.js";

/** Keys a state fragment can hold (format.js, `parseFragment`). */
const STATE_KEYS = new Set(["g", "z", "zp", "q", "c", "v", "m", "s", "r", "l", "d", "p", "x", "f"]);

/** True when `hash` is the viewer's state (empty, or `k=v` pairs with a key of ours), not an in-page anchor. */
export function isStateFragment(hash) {
  const text = (hash || "").replace(/^#/, "");
  if (!text) return true;
  return text.split("&").some((part) => {
    const eq = part.indexOf("=");
    return eq > 0 && STATE_KEYS.has(part.slice(0, eq));
  });
}

/** Two zooms (`{ depth, offset, total, hash }` or null) name the same frame. */
export function sameZoom(a, b) {
  if (!a || !b) return !a && !b;
  return a.depth === b.depth && a.offset === b.offset && a.total === b.total && a.hash === b.hash;
}

/**
 * How a change of state from `prev` to `next` enters history: "push" when the zoom, the
 * sandwich or the search (query, match case) changed, "replace" otherwise. `typing`: the search changed by a
 * keystroke that follows another keystroke, which amends the entry the first one pushed
 * (typing a word is one step back, not one per letter).
 */
export function historyStep(prev, next, typing = false) {
  if (!sameZoom(prev.zoom, next.zoom)) return "push";
  if ((prev.sandwich || null) !== (next.sandwich || null)) return "push";
  if (prev.query !== next.query || prev.caseSensitive !== next.caseSensitive) return typing ? "replace" : "push";
  return "replace";
}

/**
 * The fragment a link to another page of the same series carries from state `st`: the graph,
 * the search (and its case), the colours and the sandwich, so that following a function from
 * run to run, or into a comparison, keeps it in view. Not the table's order or the view. The
 * zoom only where its offsets hold on the other page (docs/FORMAT.md: a comparison's after and
 * before layouts are its runs' own graphs): `zoom` is `{ to: "after" }` for a link from a run
 * to a comparison of it with an earlier run (opened in that layout, zoomed alike), or
 * `{ from: "after" }` / `{ from: "before" }` for a link from a comparison to that run, which
 * carries the zoom when the comparison shows that layout, or `{ path }` for a link to another
 * run (previous, next), whose offsets are its own: the zoomed frame's path of name hashes
 * (format.js `zp`), which that page walks down.
 */
export function carriedFragment(st, zoom = null) {
  const carried = { ...defaultState(), graph: st.graph, query: st.query, caseSensitive: st.caseSensitive, palette: st.palette, sandwich: st.sandwich };
  // A run's left-heavy view goes to the other runs' pages left-heavy (a comparison ignores it),
  // and its zoom, whose offsets are of that layout, only by its path.
  const left = st.layout === "left";
  if (left) carried.layout = "left";
  if (st.zoom && zoom && zoom.to && !left) Object.assign(carried, { zoom: st.zoom, layout: zoom.to });
  if (st.zoom && zoom && zoom.from && st.layout === zoom.from) carried.zoom = st.zoom;
  if (st.zoom && zoom && zoom.path) carried.zoomPath = zoom.path;
  return formatFragment(carried);
}

/**
 * Each link of `links` (anchors) pointed at its own page with the fragment `carriedFragment`
 * of `st`, the zoom where its `data-zoom-to` or `data-zoom-from` says it holds, or by `path`
 * (the zoomed frame's, null while it is not known) where it has `data-zoom-path`.
 */
export function carryContext(links, st, path = null) {
  for (const a of links) {
    if (a.dataset.page === undefined) a.dataset.page = (a.getAttribute("href") || "").replace(/#.*$/, "");
    const zoom = a.dataset.zoomTo ? { to: a.dataset.zoomTo } : a.dataset.zoomFrom ? { from: a.dataset.zoomFrom } : a.dataset.zoomPath !== undefined && path ? { path } : null;
    a.setAttribute("href", a.dataset.page + carriedFragment(st, zoom));
  }
}

/**
 * The state (`st`, format.js's shape) and the URL: written on each change, read on Back and
 * Forward. `diff`: the page is a comparison's, whose defaults differ (format.js).
 */
export class UrlState {
  constructor(loc, hist, diff = false) {
    this.loc = loc;
    this.hist = hist;
    this.diff = diff;
    this.onWrite = null; // (st) => void, after each write of the URL (links that carry the context)
    this.st = parseFragment(isStateFragment(loc.hash) ? loc.hash : "", diff);
    this.written = { ...this.st }; // the state the current history entry holds
  }

  /** Write `st` to the URL: a new history entry or the current one, as `historyStep` says. */
  write(typing = false) {
    const step = historyStep(this.written, this.st, typing);
    const frag = formatFragment(this.st, this.diff) || this.loc.pathname + this.loc.search;
    if (step === "push" && formatFragment(this.st, this.diff) !== formatFragment(this.written, this.diff)) this.hist.pushState(null, "", frag);
    else this.hist.replaceState(this.hist.state, "", frag);
    this.written = { ...this.st };
    if (this.onWrite) this.onWrite(this.st);
  }

  /** Put the state back in the URL (after an in-page anchor took its place), in the same entry. */
  restore() {
    this.written = { ...this.st };
    this.hist.replaceState(this.hist.state, "", formatFragment(this.st, this.diff) || this.loc.pathname + this.loc.search);
  }

  /** After Back, Forward or an edited address: the state of the URL, or null when it is an in-page anchor. */
  read() {
    if (!isStateFragment(this.loc.hash)) return null;
    const st = parseFragment(this.loc.hash, this.diff);
    this.written = { ...st };
    return st;
  }
}
