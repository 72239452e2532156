// Turning values into text for people, and the page state into a URL fragment and back.
// Pure functions only: no DOM, so node's test runner imports this file as it is.

const GROUP = /\B(?=(\d{3})+(?!\d))/g;

/** An integer with thousands separators, independent of the browser's locale. */
export function groupDigits(v) {
  const s = Math.round(v).toString();
  return s.replace(GROUP, ",");
}

/** Three significant digits: 0, 1 or 2 decimals from 100, from 10, below (toFixed rounds ties up). */
function sig3(v) {
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

const TIME_NS = { nanoseconds: 1, ns: 1, microseconds: 1e3, us: 1e3, "µs": 1e3, milliseconds: 1e6, ms: 1e6, seconds: 1e9, s: 1e9 };

/** Nanoseconds (not negative) as ns, µs, ms, s, min or h. */
export function formatDuration(ns) {
  if (ns < 1e3) return `${groupDigits(ns)} ns`;
  if (ns < 1e6) return `${sig3(ns / 1e3)} µs`;
  if (ns < 1e9) return `${sig3(ns / 1e6)} ms`;
  if (ns < 60e9) return `${sig3(ns / 1e9)} s`;
  if (ns < 3600e9) return `${sig3(ns / 60e9)} min`;
  return `${sig3(ns / 3600e9)} h`;
}

/** Bytes (not negative) with binary prefixes: B, KiB, MiB, GiB, TiB, PiB. */
export function formatBytes(b) {
  if (b < 1024) return `${groupDigits(b)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = b / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${sig3(v)} ${units[i]}`;
}

/** A count (not negative): exact below 10,000 ("9,999"), else three digits and k, M, G, T, P. */
function formatCount(v) {
  if (v < 10000) return groupDigits(v);
  const suffixes = ["k", "M", "G", "T", "P"];
  let x = v / 1000;
  let i = 0;
  while (x >= 1000 && i < suffixes.length - 1) {
    x /= 1000;
    i += 1;
  }
  return `${sig3(x)} ${suffixes[i]}`;
}

/** `v / 10^decimals` exactly, with thousands separators: 312345 and 2 are "3,123.45". */
function exactDecimal(v, decimals) {
  const one = 10 ** decimals;
  const whole = groupDigits(Math.floor(v / one));
  const fraction = String(v % one).padStart(decimals, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * A value in the graph's unit, for people: "1,234 samples", "20.4 k samples", "1.50 ms",
 * "2.00 MiB". `decimals` is the graph's decimal places (fractional counts, the manifest's
 * `decimals`): `v` then stands for v / 10^decimals, shown exactly below 10,000 ("31.23
 * samples"). The same rules as the pages' formatter (src/units.rs); both are tested against
 * tests/data/units/vectors.json.
 */
export function formatValue(v, unit, decimals = 0) {
  if (v < 0) return `\u2212${formatValue(-v, unit, decimals)}`;
  const one = 10 ** decimals;
  const u = (unit || "").toLowerCase();
  if (u in TIME_NS) return formatDuration((v * TIME_NS[u]) / one);
  const bytes = u === "bytes" || u === "byte" || unit === "B";
  if (bytes && v >= 1024 * one) return formatBytes(v / one);
  const n = v < 10000 * one ? exactDecimal(v, decimals) : formatCount(v / one);
  if (bytes) return `${n} B`;
  if (u === "" || u === "count" || u === "counts") return n;
  if (u === "samples" || u === "sample") return `${n} ${v === one ? "sample" : "samples"}`;
  return `${n} ${unit}`;
}

/**
 * True when values of `unit` are counts (samples, events, calls; not a time or bytes): a
 * table can then give the unit once in its header and the bare numbers in its cells.
 */
export function isCountUnit(unit) {
  const u = (unit || "").toLowerCase();
  return !(u in TIME_NS) && !(u === "bytes" || u === "byte" || unit === "B");
}

/** `part` of `whole` as a percentage string with two decimals ("12.34%"). */
export function formatPercent(part, whole) {
  if (!(whole > 0)) return "0%";
  const p = (100 * part) / whole;
  if (p > 0 && p < 0.01) return "<0.01%";
  return `${p.toFixed(2)}%`;
}

const ENC = new TextEncoder();

/** FNV-1a, 32 bits, over the UTF-8 bytes of `s` (the hash of docs/FORMAT.md "Colours"). */
export function fnv1a32(s) {
  let h = 0x811c9dc5;
  for (const b of ENC.encode(s)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** [`fnv1a32`] of `s` as 8 hex digits (a zoomed frame's name in a link). */
export function nameHash(s) {
  return fnv1a32(s).toString(16).padStart(8, "0");
}

// ---- URL fragment ---------------------------------------------------------------------------
//
// The fragment holds every piece of state a link must restore:
//   g  graph name (absent: the first graph)
//   z  zoomed frame as depth.offset.total.namehash (absent: the root). A rebuild of the same
//      input gives the same frame table, so depth and offset find the frame again; total and
//      the name's FNV-1a hash check that it is the same frame and not a changed input. Total
//      also gives the zoomed range before any chunk arrives, so a link fetches no more than
//      the view it shows.
//   zp a zoom by the frame's path, for a link from another run (whose offsets are not this
//      graph's): the FNV-1a hashes of the names from depth 1 down to the frame, dot-separated.
//      The page finds the frame by walking down that path and puts its `z` in its place.
//   q  search regex, c=1 case sensitive
//   v  view: graph | table | both (absent: graph)
//   m  icicle when the root is at the top
//   s  table sort: self | total | name (absent: self); of a comparison also self_before,
//      self_change, total_before, total_change (absent: self_change, largest growth first)
//   r  r=1: the table's order reversed (ascending values, names Z to A)
//   l  layout of a comparison: after | before (absent: union, widths from both runs); of a
//      plain graph: left (left-heavy: children heaviest first; absent: children by name)
//   d  colour of a comparison: abs for the change in value (absent: the change in share)
//   p  palette: hot | module | lang | blue, names' colours by that palette (docs/FORMAT.md);
//      self | total, frames coloured by their self or total share of the graph (absent: the
//      build's palette, the name files' colours)
//   x  x=sandwich: the sandwich of the function `f` (its callers over its callees, merged)
//      instead of the graph; f is the function's exact name, escaped like q (absent: the graph)

export const VIEWS = ["graph", "table", "both"];
export const SORTS = ["self", "total", "name", "self_before", "self_change", "total_before", "total_change"];
export const LAYOUTS = ["union", "after", "before"];
/** The layouts of a plain graph's page besides its default (children by name): left-heavy. */
export const PLAIN_LAYOUTS = ["union", "left"];
export const PALETTES = ["hot", "module", "lang", "blue", "self", "total"];

/** `s` as a value of a fragment's key: escaped, `/` and `:` left readable. */
export function fragmentValue(s) {
  return encodeURIComponent(s).replace(/%2F/g, "/").replace(/%3A/g, ":");
}

/** The text of a fragment's value (`+` is a space, as in forms); null when it is malformed. */
export function fragmentText(v) {
  try {
    return decodeURIComponent(v.replace(/\+/g, "%20"));
  } catch {
    return null;
  }
}

/** The table's order when the link gives none: of a comparison (`diff`), by the change. */
export function defaultSort(diff = false) {
  return diff ? "self_change" : "self";
}

/** The default state: what an empty fragment means (on a comparison's page when `diff`). */
export function defaultState(diff = false) {
  return { graph: null, zoom: null, zoomPath: null, query: "", caseSensitive: false, view: "graph", icicle: false, sort: defaultSort(diff), sortReversed: false, layout: "union", measure: "share", palette: null, sandwich: null };
}

/**
 * Parse `#k=v&...` (with or without the `#`) into a state; unknown or bad keys are ignored.
 * `diff`: the page is a comparison's, whose defaults differ (`defaultState`).
 */
export function parseFragment(hash, diff = false) {
  const st = defaultState(diff);
  const text = (hash || "").replace(/^#/, "");
  if (!text) return st;
  let mode = "";
  let fn = "";
  for (const part of text.split("&")) {
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq);
    const val = eq < 0 ? "" : fragmentText(part.slice(eq + 1));
    if (val === null) continue; // a malformed escape: ignore the key, keep the rest of the link working
    if (key === "g" && val) st.graph = val;
    else if (key === "q") st.query = val;
    else if (key === "c") st.caseSensitive = val === "1";
    else if (key === "v" && VIEWS.includes(val)) st.view = val;
    else if (key === "m") st.icicle = val === "icicle";
    else if (key === "s" && SORTS.includes(val)) st.sort = val;
    else if (key === "r") st.sortReversed = val === "1";
    else if (key === "l" && (diff ? LAYOUTS : PLAIN_LAYOUTS).includes(val)) st.layout = val;
    else if (key === "d" && val === "abs") st.measure = "abs";
    else if (key === "p" && PALETTES.includes(val)) st.palette = val;
    else if (key === "x") mode = val;
    else if (key === "f") fn = val;
    else if (key === "z") {
      const m = /^(\d+)\.(\d+)\.(\d+)\.([0-9a-f]{8})$/.exec(val);
      if (m && Number(m[3]) > 0) st.zoom = { depth: Number(m[1]), offset: Number(m[2]), total: Number(m[3]), hash: m[4] };
    } else if (key === "zp") {
      const path = val.split(".");
      if (path.length <= MAX_ZOOM_PATH && path.every((h) => /^[0-9a-f]{8}$/.test(h))) st.zoomPath = path;
    }
  }
  if (mode === "sandwich" && fn) st.sandwich = fn;
  if (st.zoom) st.zoomPath = null; // a zoom by its offsets says it all
  return st;
}

/** The deepest zoom path a link may give (a stack's depth is bounded at build time too). */
export const MAX_ZOOM_PATH = 10000;

/**
 * The fragment for a state, keys in a fixed order, defaults left out ("" for the default
 * state); `diff` as for parseFragment.
 */
export function formatFragment(st, diff = false) {
  const parts = [];
  if (st.graph) parts.push(`g=${fragmentValue(st.graph)}`);
  if (st.zoom) parts.push(`z=${st.zoom.depth}.${st.zoom.offset}.${st.zoom.total}.${st.zoom.hash}`);
  else if (st.zoomPath && st.zoomPath.length) parts.push(`zp=${st.zoomPath.join(".")}`);
  if (st.query) parts.push(`q=${fragmentValue(st.query)}`);
  if (st.caseSensitive) parts.push("c=1");
  if (st.view && st.view !== "graph") parts.push(`v=${st.view}`);
  if (st.icicle) parts.push("m=icicle");
  if (st.sort && st.sort !== defaultSort(diff)) parts.push(`s=${st.sort}`);
  if (st.sortReversed) parts.push("r=1");
  if (st.layout && st.layout !== "union") parts.push(`l=${st.layout}`);
  if (st.measure === "abs") parts.push("d=abs");
  if (st.palette) parts.push(`p=${st.palette}`);
  if (st.sandwich) parts.push(`x=sandwich&f=${fragmentValue(st.sandwich)}`);
  return parts.length ? "#" + parts.join("&") : "";
}

/**
 * What the info line and the tooltip say about a grey mark of frames too narrow to draw
 * (`f`: { depth, total, count }, `count` null while it is being counted, -1 when it could
 * not be): how many, their total and share. `g` as for describeFrame; `widths`: of a
 * differential graph, whose widths are not values (only the share of the width is said).
 */
export function describeElided(f, g, widths = false) {
  const n = f.count;
  const name = n === null || n < 0 ? "Frames too narrow to draw" : `${groupDigits(n)} ${n === 1 ? "frame" : "frames"} too narrow to draw`;
  const zoom = g.zoomTotal ? `, ${formatPercent(f.total, g.zoomTotal)} of zoom` : "";
  const facts = [widths ? `${formatPercent(f.total, g.total)} of the width${zoom}` : `total ${formatValue(f.total, g.unit)} (${formatPercent(f.total, g.total)} of all${zoom})`];
  if (n === null) facts.push("counting…");
  else if (n < 0) facts.push("their number could not be loaded");
  facts.push(`depth ${f.depth}`, "click to zoom to their caller");
  return { name, facts };
}

/**
 * What the info line and the tooltip say about a frame: its name and a list of facts.
 * `g`: { total, unit, decimals (absent: 0), zoomTotal (0 when not zoomed), zoomDepth, totalBefore (differential
 * graphs) }. A frame below the zoomed one (depth < zoomDepth) is one of its ancestors: it
 * contains the zoom, and a share of the zoom above 100% would say nothing.
 */
export function describeFrame(f, g) {
  let share = "";
  if (g.zoomTotal) share = f.depth < (g.zoomDepth || 0) ? ", contains the zoom" : `, ${formatPercent(f.total, g.zoomTotal)} of zoom`;
  const facts = [
    `total ${formatValue(f.total, g.unit, g.decimals)} (${formatPercent(f.total, g.total)} of all${share})`,
    `self ${formatValue(f.self, g.unit, g.decimals)} (${formatPercent(f.self, g.total)})`,
  ];
  if (f.beforeTotal !== undefined) {
    facts.push(`before: total ${formatValue(f.beforeTotal, g.unit, g.decimals)}, self ${formatValue(f.beforeSelf, g.unit, g.decimals)}`);
  }
  facts.push(`depth ${f.depth}`);
  return { name: f.name, facts };
}
