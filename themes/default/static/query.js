// The search as the page runs it: highlight the matched names at once, then the exact matched
// value from the search buckets; the "Matched …" line. Regex and interval arithmetic are in
// search.js; this module holds one search's progress and what the page says about it.

import { bucketsFor, compileQuery, matchNames, matchedValue } from "./search.js";
import { formatPercent, formatValue, groupDigits } from "./format.js";
import { DiffMatch, formatPoints, matchedDiff } from "./diff.js";
import { searchesRuns, unionWidth } from "./fetch.js";

/** A search that matched nothing yet. */
export function emptySearch(seq = 0) {
  return { seq, re: null, error: "", ids: null, flags: null, buckets: null, match: null, runs: null, all: false, busy: false, value: 0, inZoom: 0, diff: null, ms: 0 };
}

/**
 * The "Matched …" line of search `s` over a graph of manifest `m`: `zoom` ({ total } or null),
 * `d` the two totals of a differential graph ({ tb, ta }) or null.
 */
export function matchedText(s, m, zoom, d) {
  if (s.error) return `Not a regular expression: ${s.error}`;
  if (!s.re || !m) return "";
  if (s.busy) return "Matching…";
  const k = s.ids.length;
  let text;
  if (s.diff && d) {
    const pb = d.tb > 0 ? (100 * s.diff.before) / d.tb : 0;
    const pa = d.ta > 0 ? (100 * s.diff.after) / d.ta : 0;
    // "…; in the zoomed frame 900 samples → 1,200 samples, 45.00% → 60.00% of it"
    const z = zoom && s.diff.zoomed;
    const zoomed = z
      ? `; in the zoomed frame ${formatValue(z.before, m.unit, m.decimals)} → ${formatValue(z.after, m.unit, m.decimals)}, ${formatPercent(z.before, z.of.before)} → ${formatPercent(z.after, z.of.after)} of it`
      : "";
    text = `Matched ${formatValue(s.diff.before, m.unit, m.decimals)} → ${formatValue(s.diff.after, m.unit, m.decimals)} (${formatPercent(s.diff.before, d.tb)} → ${formatPercent(s.diff.after, d.ta)}, ${formatPoints(pa - pb)}${zoomed})`;
  } else {
    // "Matched 20.4 k samples (12.34% of total; 84.73% of the zoomed frame) in 104 functions"
    const zoomed = zoom && s.inZoom !== null ? `; ${formatPercent(s.inZoom, zoom.total)} of the zoomed frame` : "";
    text = `Matched ${formatValue(s.value, m.unit, m.decimals)} (${formatPercent(s.value, m.total)} of total${zoomed})`;
  }
  return `${text} in ${groupDigits(k)} ${k === 1 ? "function" : "functions"}`;
}

/**
 * What regex `re` matched in one run of a comparison: `run` is { source, load } of the run's
 * own graph (main.js runGraphs). Returns { ids, buckets, scale }: the run's matched name ids,
 * the search buckets that hold them, and the factor from the run's values to the comparison's.
 */
export async function matchedInRun(run, re) {
  const { manifest: rm, names, scale } = await run.load();
  if (rm.differential) throw new Error("a run's graph compared is not a plain graph");
  const { ids } = matchNames(names.names, re);
  const buckets = await Promise.all(bucketsFor(rm.search, ids).map((e) => run.source.bucket(e)));
  return { ids, buckets, scale };
}

export class Search {
  /**
   * `host`: what the search reads and tells — { graph(), zoom(), diffTotals(), changed(s) }:
   * `changed` runs when the highlight or the matched value changed (redraw, mark the table).
   * `input`: the search box; `line`: the "Matched" node.
   */
  constructor(host, input, line) {
    this.host = host;
    this.input = input;
    this.line = line;
    this.s = emptySearch();
  }

  /** Forget the search (a new graph). */
  reset() {
    this.s = emptySearch();
  }

  /**
   * Run `query`: highlight at once, then the exact matched value from the search buckets.
   * `t0` is when the search began: a search run again once the name files arrived keeps it,
   * so `ms` counts the time they took.
   */
  run(query, caseSensitive, t0 = performance.now()) {
    const g = this.host.graph();
    if (!g || !g.names) return;
    const s = emptySearch(this.s.seq + 1);
    this.s = s;
    const { re, error } = compileQuery(query, caseSensitive);
    const failed = (why) => {
      if (this.s !== s) return;
      s.busy = false;
      s.error = why;
      this.show();
      this.host.failed();
    };
    if (re && !g.names.complete()) {
      // A search reads every name: fetch the name files it lacks, then search.
      s.re = re;
      s.busy = true;
      this.show();
      g.source.allNames(g.names).then(
        () => this.s === s && this.run(query, caseSensitive, t0),
        () => failed("the name table could not be loaded"),
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
    this.host.changed(s);
    if (!s.ids || s.ids.length === 0) {
      s.buckets = [];
      this.show();
      return;
    }
    if (s.flags[0]) {
      // The root's label matches: everything is matched, no bucket needed.
      s.all = true;
      this.count();
      s.ms = performance.now() - t0;
      return;
    }
    s.busy = true;
    this.show();
    const runs = searchesRuns(g.manifest) ? this.host.runGraphs() : null;
    if (runs) {
      // A comparison of two runs: what matched in each, from its own graph's search files.
      Promise.all([runs.before, runs.after].map((r) => matchedInRun(r, re))).then(
        ([before, after]) => {
          if (this.s !== s) return;
          s.runs = { before, after };
          s.buckets = [];
          s.busy = false;
          this.count();
          s.ms = performance.now() - t0;
        },
        () => failed("the runs' search data could not be loaded"),
      );
      return;
    }
    if (searchesRuns(g.manifest)) return failed("this page does not say where the runs' graphs are");
    const entries = bucketsFor(g.manifest.search, s.ids);
    // A comparison's matched frames are gathered from each bucket as it arrives, while the
    // others load; the sum at the end is one pass.
    const m = g.manifest;
    const gather = m.differential && m.version >= 3 && Number.isInteger(m.frames) ? new DiffMatch(s.ids, m.frames) : null;
    s.match = gather;
    const fetched = (b) => {
      if (gather && this.s === s) gather.add(b);
      return b;
    };
    Promise.all(entries.map((e) => g.source.bucket(e).then(fetched))).then(
      (buckets) => {
        if (this.s !== s) return;
        s.buckets = buckets;
        s.busy = false;
        this.count();
        s.ms = performance.now() - t0;
      },
      () => failed("the search data could not be loaded"),
    );
  }

  /** The matched value of the whole graph and of the zoomed range (again after a zoom). */
  count() {
    const s = this.s;
    const g = this.host.graph();
    const z = this.host.zoom();
    const m = g && g.manifest;
    if (s.all && m) {
      s.value = m.total;
      s.inZoom = z ? z.total : s.value;
      return this.show();
    }
    if (!s.buckets || !s.ids || !m) return this.show();
    // The search intervals are in the default layout: a left-heavy zoom is clipped to the
    // zoomed frame's extent there, once its chunk has said where that is.
    const left = !!(z && m.layout === "left");
    const at = left ? (z.info && z.info.nameOffset !== undefined ? z.info.nameOffset : null) : z ? z.offset : -Infinity;
    const lo = at === null ? -Infinity : at;
    const hi = at === null ? Infinity : z ? at + z.total : Infinity;
    const d = this.host.diffTotals();
    if (d && s.runs) {
      // Each run's matched value, and in a zoom the part inside the zoomed frame's extent in
      // that run's own layout, once its chunk has said where that is.
      const info = z && z.info && z.info.beforeOffset !== undefined ? z.info : null;
      const side = (r, at, width) => {
        if (r.ids.length === 0) return { value: 0, inRange: 0 };
        const x = info ? matchedValue(r.buckets, r.ids, at / r.scale, (at + width) / r.scale) : matchedValue(r.buckets, r.ids);
        return { value: x.value * r.scale, inRange: x.inRange * r.scale };
      };
      const b = side(s.runs.before, info && info.beforeOffset, info && info.beforeTotal);
      const a = side(s.runs.after, info && info.afterOffset, info && info.afterTotal);
      const zoomed = info && { before: info.beforeTotal, after: info.afterTotal };
      s.diff = { before: b.value, after: a.value, zoomed: zoomed && { before: b.inRange, after: a.inRange, of: zoomed } };
      const layout = m.diff.layout;
      if (layout === "after" || layout === "before") {
        s.value = layout === "after" ? a.value : b.value;
        s.inZoom = null;
      } else {
        // The union's widths of the matched shares (docs/FORMAT.md, "Differential graphs").
        s.value = unionWidth(b.value, d.tb) + unionWidth(a.value, d.ta);
        s.inZoom = !z ? s.value : info ? unionWidth(b.inRange, d.tb) + unionWidth(a.inRange, d.ta) : null;
      }
    } else if (d && s.buckets.some((b) => b.diff)) {
      // A comparison's search files: the values before and after, and the union's widths.
      // The zoomed frame's own values, once its chunk has said them.
      const info = z && z.info && z.info.beforeTotal !== undefined ? z.info : null;
      const zoomed = info && { before: info.beforeTotal, after: info.afterTotal };
      const r = s.match ? s.match.sum(d.tb, d.ta, lo, hi, zoomed) : matchedDiff(s.buckets, s.ids, d.tb, d.ta, lo, hi, zoomed);
      s.value = r.value;
      s.inZoom = r.inRange;
      s.diff = { before: r.before, after: r.after, zoomed: zoomed && { before: r.beforeIn, after: r.afterIn, of: zoomed } };
      const layout = m.diff && m.diff.layout;
      if (layout === "after" || layout === "before") {
        // These layouts share the union's search files, whose extents are union widths; their
        // own widths are one run's values, which the frames' values give exactly.
        s.value = layout === "after" ? s.diff.after : s.diff.before;
        s.inZoom = null;
      }
    } else {
      const r = matchedValue(s.buckets, s.ids, lo, hi);
      s.value = r.value;
      s.inZoom = z && at === null ? null : r.inRange;
      s.diff = null;
    }
    this.show();
  }

  show() {
    const g = this.host.graph();
    this.line.classList.toggle("fs-bad", !!this.s.error);
    this.line.textContent = matchedText(this.s, g && g.manifest, this.host.zoom(), this.host.diffTotals());
  }
}
