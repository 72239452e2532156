// A function's history on a series page: type a name or a regex, see its self and total share
// of every run of the series (their first graph) over the dates; each point opens that run with
// the search applied. The data is precomputed by the build (src/derive/history.rs) in spans of
// consecutive runs: the index, each span's names, then only the buckets of the names that
// matched, span by span.

import { compileQuery } from "./search.js";
import { fragmentText, fragmentValue, nameHash } from "./format.js";
import { jsonOf } from "./unpack.js";

const SVG = "http://www.w3.org/2000/svg";

/**
 * Per run, the summed self and total shares of the matched names: `{ self, total }` arrays of
 * the run count. `points` maps a name to its [run, self, total] list. Self shares add up
 * exactly; total shares of several names count a frame under another matched frame twice, so
 * they are capped at 1 (the page says so).
 */
export function sumShares(runCount, matched, points) {
  const self = new Float64Array(runCount);
  const total = new Float64Array(runCount);
  for (const name of matched) {
    for (const [r, s, t] of points.get(name) || []) {
      self[r] += s;
      total[r] += t;
    }
  }
  for (let r = 0; r < runCount; r++) total[r] = Math.min(1, total[r]);
  return { self, total };
}

/** Bucket of `name` among `buckets` (FNV-1a 32 of its UTF-8 bytes, modulo). */
export function bucketOf(name, buckets) {
  return parseInt(nameHash(name), 16) % buckets;
}

/** The history's query in a series page's fragment (`#h=…`, escaped as a search is), or null. */
export function historyQuery(hash) {
  const m = /^#?(?:.*&)?h=([^&]*)/.exec(hash || "");
  return m ? fragmentText(m[1]) : null;
}

/** The fragment of a history query `q` ("" for none). */
export function historyFragment(q) {
  return q ? `#h=${fragmentValue(q)}` : "";
}

/**
 * What the status says of the names a query matched: how many, and the first `shown` of them,
 * those with the largest share in any run first (`points`: name -> [run, self, total] list).
 */
export function matchedWords(matched, points, shown = 8) {
  const peak = (n) => Math.max(0, ...(points.get(n) || []).map((p) => p[2]));
  const names = [...matched].sort((a, b) => peak(b) - peak(a) || (a < b ? -1 : a > b ? 1 : 0));
  const list = names.slice(0, shown).join(", ") + (names.length > shown ? `, and ${names.length - shown} more` : "");
  return `${names.length} function${names.length === 1 ? "" : "s"} matched: ${list}`;
}

function node(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

class HistoryView {
  constructor(section) {
    this.base = section.dataset.history;
    this.root = section.dataset.root;
    // What links to a page's folder end with: "" or "index.html" (`links` in site.toml).
    this.linkSuffix = section.dataset.index ?? "";
    this.input = document.getElementById("fs-history-q");
    this.status = document.getElementById("fs-history-status");
    this.plot = document.getElementById("fs-history-plot");
    this.index = null;
    this.names = new Map(); // span -> Promise of its names
    this.buckets = new Map(); // "span/k" -> Promise of its JSON
    this.seq = 0;
    this.busy = false;
    this.pending = false; // typed, not yet run
    this.input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.pending = true;
      this.timer = setTimeout(() => this.run(), 150);
    });
    // The query is in the link (`#h=…`), so a history can be shared and survives a reload.
    const fromLink = () => {
      const q = historyQuery(location.hash);
      if (q === null || q === this.input.value) return;
      this.input.value = q;
      this.run();
    };
    addEventListener("hashchange", fromLink);
    fromLink();
    window.flamesiteHistory = { idle: () => this.idle(), query: (q) => ((this.input.value = q), this.run()) };
  }

  /** A promise of what the plot shows once nothing is pending (for tests and scripts). */
  async idle() {
    while (this.busy || this.pending) await new Promise((r) => setTimeout(r, 10));
    return { query: this.input.value, status: this.status.textContent, points: this.plot.querySelectorAll("a").length };
  }

  /** A promise of the JSON of `rel` (relative to the history folder), fetched once. */
  file(cache, rel) {
    if (!cache.has(rel)) cache.set(rel, fetch(`${this.base}${rel}`).then((r) => (r.ok ? jsonOf(r) : Promise.reject(new Error(`${rel}: HTTP ${r.status}`)))));
    return cache.get(rel);
  }

  async run() {
    const seq = ++this.seq;
    const query = this.input.value;
    this.pending = false;
    this.busy = true;
    if (historyQuery(location.hash) !== (query || null)) history.replaceState(history.state, "", historyFragment(query) || location.pathname + location.search);
    try {
      if (!this.index) {
        const r = await fetch(`${this.base}names.json`);
        if (!r.ok) throw new Error(`names.json: HTTP ${r.status}`);
        this.index = await r.json();
      }
      if (seq !== this.seq) return;
      this.plot.replaceChildren();
      if (!query) {
        this.status.textContent = "";
        return;
      }
      const { re, error } = compileQuery(query, false);
      if (!re) {
        this.status.textContent = `Not a regular expression: ${error}`;
        return;
      }
      const spans = this.index.spans;
      const lists = await Promise.all(spans.map((_, s) => this.file(this.names, `${s}/names.json.gz`)));
      if (seq !== this.seq) return;
      const perSpan = lists.map((l) => l.names.filter((n) => re.test(n)));
      const matched = [...new Set(perSpan.flat())];
      if (matched.length === 0) {
        this.status.textContent = "No function of this series matches.";
        return;
      }
      const rels = perSpan.flatMap((names, s) => [...new Set(names.map((n) => bucketOf(n, spans[s].buckets)))].map((k) => `${s}/b/${k}.json.gz`));
      const files = await Promise.all(rels.map((rel) => this.file(this.buckets, rel)));
      if (seq !== this.seq) return;
      const points = new Map();
      for (const f of files) for (const [name, list] of Object.entries(f)) points.set(name, (points.get(name) || []).concat(list));
      const sums = sumShares(this.index.runs.length, matched, points);
      this.status.textContent = `${matchedWords(matched, points)}${matched.length > 1 ? " (total: an upper bound, frames of one inside another counted twice)" : ""}.`;
      this.draw(sums, query);
    } catch (e) {
      if (seq === this.seq) this.status.textContent = `The history could not be loaded: ${e.message}`;
    } finally {
      if (seq === this.seq) this.busy = false;
    }
  }

  draw({ self, total }, query) {
    const runs = this.index.runs;
    // As wide as its box in CSS pixels, so that its labels are drawn at their own size (a
    // viewBox of 720 scaled its 11 px labels to 6 px on a phone and 30 px on a wide screen).
    const w = Math.max(320, Math.round(this.plot.clientWidth || 720));
    const [h, left, right, top, bottom] = [200, 40, 12, 12, 28];
    const pw = w - left - right;
    const ph = h - top - bottom;
    const max = Math.max(0.0001, ...total, ...self);
    const x = (i) => (runs.length > 1 ? left + (pw * i) / (runs.length - 1) : left + pw / 2);
    const y = (v) => top + ph - (v / max) * ph;
    const svg = node("svg", { class: "fs-trend fs-history-svg", viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": `Self and total share of ${query} in each run` });
    svg.append(node("line", { class: "fs-axis", x1: left, y1: top + ph, x2: w - right, y2: top + ph }));
    svg.append(node("text", { class: "fs-axis-label", x: left - 4, y: top + 10, "text-anchor": "end" }, `${(max * 100).toFixed(max < 0.1 ? 2 : 1)}%`));
    svg.append(node("text", { class: "fs-axis-label", x: left - 4, y: top + ph, "text-anchor": "end" }, "0%"));
    svg.append(node("text", { class: "fs-axis-label", x: left, y: h - 8 }, runs[0].date.slice(0, 10)));
    svg.append(node("text", { class: "fs-axis-label", x: w - right, y: h - 8, "text-anchor": "end" }, runs[runs.length - 1].date.slice(0, 10)));
    for (const [values, cls] of [[total, "fs-history-total"], [self, "fs-history-self"]]) {
      svg.append(node("polyline", { class: cls, points: [...values].map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
    }
    const frag = `#q=${encodeURIComponent(query)}`;
    runs.forEach((run, i) => {
      // A point opens what changed at that run: its comparison with the run before (the
      // first run, or one of another kind, has none: its own page), searched.
      const to = typeof run.compare === "string" ? run.compare : run.url;
      const a = node("a", { href: `${this.root}${to}${this.linkSuffix}${frag}` });
      a.append(node("title", {}, `${run.date.slice(0, 10)} ${run.title}: self ${(self[i] * 100).toFixed(2)}%, total ${(total[i] * 100).toFixed(2)}%${to === run.url ? "" : " (opens its comparison with the run before)"}`));
      a.append(node("circle", { class: "fs-history-total", cx: x(i).toFixed(1), cy: y(total[i]).toFixed(1), r: 4 }));
      a.append(node("circle", { class: "fs-history-self", cx: x(i).toFixed(1), cy: y(self[i]).toFixed(1), r: 4 }));
      svg.append(a);
    });
    const legend = document.createElement("p");
    legend.className = "fs-muted fs-history-legend";
    legend.textContent = "Upper line: total share (the function and what it calls); lower line: self share. A point opens its run's comparison with the run before, searched for the function.";
    this.plot.replaceChildren(svg, legend);
  }
}

const section = typeof document !== "undefined" && document.getElementById("fs-history");
if (section) new HistoryView(section);
