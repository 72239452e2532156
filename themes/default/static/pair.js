// Any two runs of a series, function by function, on the series page: the function tables of
// both runs (self and total of every function, from each run's own name files) side by side,
// with the change of each share, without a differential graph. The pair is in the link
// (`#pair=EARLIER,LATER`, the runs' slugs), so a table can be shared.

import { GraphSource } from "./fetch.js";
import { formatPercent, formatValue, fragmentText, fragmentValue } from "./format.js";
import { formatPoints } from "./diff.js";

/** Rows shown at most; the note under the table says how many there are. */
export const SHOWN = 100;

/** The two slugs of a series page's fragment (`#pair=a,b`, escaped), or null. */
export function pairFromHash(hash) {
  const m = /^#?(?:.*&)?pair=([^&]*)/.exec(hash || "");
  if (!m) return null;
  const text = fragmentText(m[1]);
  if (text === null) return null;
  const parts = text.split(",");
  return parts.length === 2 && parts[0] && parts[1] ? parts : null;
}

/** `hash` with its pair set to `a`, `b` (its other keys kept). */
export function withPair(hash, a, b) {
  const keep = (hash || "").replace(/^#/, "").split("&").filter((kv) => kv && !kv.startsWith("pair="));
  keep.push(`pair=${fragmentValue(`${a},${b}`)}`);
  return `#${keep.join("&")}`;
}

/**
 * One row per function of either run (the root's label left out): `{ name, selfA, selfB,
 * totalA, totalB }` in values, and `dSelf`, `dTotal`, the changes of its self and total shares
 * in points of each run's total. `a` and `b`: `{ names, self, total, grand }`, a run's name
 * table (a function's total counts its frames under frames of the same name once) and its
 * graph's total.
 */
export function joinFunctions(a, b) {
  const rows = new Map();
  const row = (name) => {
    let r = rows.get(name);
    if (!r) rows.set(name, (r = { name, selfA: 0, selfB: 0, totalA: 0, totalB: 0 }));
    return r;
  };
  for (let i = 1; i < a.names.length; i++) {
    const r = row(a.names[i]);
    r.selfA = a.self[i];
    r.totalA = a.total[i];
  }
  for (let i = 1; i < b.names.length; i++) {
    const r = row(b.names[i]);
    r.selfB = b.self[i];
    r.totalB = b.total[i];
  }
  const share = (v, grand) => (grand > 0 ? (100 * v) / grand : 0);
  const out = [...rows.values()];
  for (const r of out) {
    r.dSelf = share(r.selfB, b.grand) - share(r.selfA, a.grand);
    r.dTotal = share(r.totalB, b.grand) - share(r.totalA, a.grand);
  }
  return out;
}

/** Orders: by the largest change of self (growth or shrinkage), of total, or by name. */
export const ORDERS = ["self", "total", "name"];

/** `rows` sorted by `order`: a change's size, largest first, ties by name (UTF-16 order). */
export function sortRows(rows, order) {
  const byName = (x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
  const key = order === "total" ? (r) => Math.abs(r.dTotal) : (r) => Math.abs(r.dSelf);
  return [...rows].sort(order === "name" ? byName : (x, y) => key(y) - key(x) || byName(x, y));
}

/** The graph two runs (index.json profile entries) share: the later run's first one the earlier has. */
export function sharedGraph(a, b) {
  for (const g of b.graphs || []) {
    const other = (a.graphs || []).find((x) => x.name === g.name && x.unit === g.unit);
    if (other) return [other, g];
  }
  return null;
}

class PairView {
  constructor(section) {
    this.section = section;
    this.root = section.dataset.root;
    this.index = section.dataset.index ?? "";
    this.selects = [document.getElementById("fs-pair-a"), document.getElementById("fs-pair-b")];
    this.status = document.getElementById("fs-pair-status");
    this.table = document.getElementById("fs-pair-table");
    this.note = document.getElementById("fs-pair-note");
    this.order = "self";
    this.runs = null;
    this.rows = null;
    this.busy = false;
    this.seq = 0;
    this.sources = new Map(); // graph data URL -> { source, manifest, names }
    this.listing = fetch(section.dataset.listing).then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))));
    for (const s of this.selects) s.addEventListener("change", () => this.choose());
    for (const b of this.table.querySelectorAll("thead button[data-order]")) {
      b.addEventListener("click", () => {
        this.order = b.dataset.order;
        this.show();
      });
    }
    addEventListener("hashchange", () => this.fromLink());
    window.flamesitePair = { idle: () => this.idle() };
    this.start();
  }

  async start() {
    this.busy = true;
    try {
      const listing = await this.listing;
      // Oldest first in the menus' order of reading: newest at the top, as the page lists them.
      this.runs = [...listing.profiles].sort((x, y) => (x.date < y.date ? 1 : x.date > y.date ? -1 : 0));
      for (const s of this.selects) {
        s.textContent = "";
        s.append(new Option("Choose a run", ""));
        for (const r of this.runs) s.append(new Option(`${r.date.slice(0, 10)} ${r.title !== r.date.slice(0, 10) ? r.title : ""}`.trim(), r.slug));
        s.disabled = false;
      }
      this.busy = false;
      this.fromLink();
    } catch (e) {
      this.busy = false;
      this.status.textContent = `The series' list of runs could not be loaded (${e.message}).`;
    }
  }

  fromLink() {
    const pair = pairFromHash(location.hash);
    if (!pair || !this.runs) return;
    const [a, b] = pair;
    if (this.selects[0].value === a && this.selects[1].value === b && this.rows) return;
    this.selects[0].value = a;
    this.selects[1].value = b;
    this.load(a, b);
  }

  choose() {
    const [a, b] = this.selects.map((s) => s.value);
    if (!a || !b) return;
    history.replaceState(history.state, "", withPair(location.hash, a, b));
    this.load(a, b);
  }

  /** A run's graph at `data` (relative to the site root): its name table and total. */
  async tableOf(data) {
    let t = this.sources.get(data);
    if (!t) {
      const source = new GraphSource(new URL(`${this.root}${data}`, document.baseURI).href);
      t = (async () => {
        const m = await source.manifest();
        const names = source.nameTable(m);
        await source.allNames(names);
        return { names: names.names, self: names.self, total: names.total, grand: m.total, unit: m.unit, decimals: m.decimals || 0 };
      })();
      this.sources.set(data, t);
    }
    return t;
  }

  async load(slugA, slugB) {
    const seq = ++this.seq;
    const [a, b] = [slugA, slugB].map((s) => this.runs.find((r) => r.slug === s));
    this.rows = null;
    this.table.hidden = true;
    this.note.textContent = "";
    if (!a || !b) {
      this.status.textContent = `This series has no run ${!a ? slugA : slugB}.`;
      return;
    }
    const graphs = sharedGraph(a, b);
    if (!graphs) {
      this.status.textContent = "These two runs have no graph of the same name and unit.";
      return;
    }
    this.busy = true;
    this.status.textContent = "Loading…";
    try {
      const [ta, tb] = await Promise.all(graphs.map((g) => this.tableOf(g.data)));
      if (seq !== this.seq) return;
      this.rows = joinFunctions(ta, tb);
      this.tables = [ta, tb];
      this.pair = [a, b];
      this.graph = graphs[1];
      this.status.textContent = `${graphs[1].name}: ${formatValue(ta.grand, ta.unit, ta.decimals)} → ${formatValue(tb.grand, tb.unit, tb.decimals)}; shares of each run's total.`;
      this.show();
    } catch (e) {
      if (seq === this.seq) this.status.textContent = `The runs' function tables could not be loaded (${e.message}).`;
    } finally {
      if (seq === this.seq) this.busy = false;
    }
  }

  show() {
    if (!this.rows) return;
    const [ta, tb] = this.tables;
    const rows = sortRows(this.rows, this.order).slice(0, SHOWN);
    const body = this.table.tBodies[0];
    body.textContent = "";
    const cell = (text, cls, title) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      if (title) td.title = title;
      return td;
    };
    const value = (v, t) => formatValue(v, t.unit, t.decimals);
    for (const r of rows) {
      const tr = document.createElement("tr");
      tr.append(
        cell(r.name, "fs-name", r.name),
        cell(formatPercent(r.selfA, ta.grand), "fs-num", value(r.selfA, ta)),
        cell(formatPercent(r.selfB, tb.grand), "fs-num", value(r.selfB, tb)),
        cell(formatPoints(r.dSelf), `fs-num ${r.dSelf > 0 ? "fs-grew" : r.dSelf < 0 ? "fs-shrank" : ""}`.trim()),
        cell(formatPercent(r.totalA, ta.grand), "fs-num", value(r.totalA, ta)),
        cell(formatPercent(r.totalB, tb.grand), "fs-num", value(r.totalB, tb)),
        cell(formatPoints(r.dTotal), `fs-num ${r.dTotal > 0 ? "fs-grew" : r.dTotal < 0 ? "fs-shrank" : ""}`.trim()),
      );
      body.append(tr);
    }
    for (const th of this.table.querySelectorAll("thead th[data-order]")) th.setAttribute("aria-sort", th.dataset.order === this.order ? (this.order === "name" ? "ascending" : "descending") : "none");
    const [a, b] = this.pair;
    const head = this.table.querySelectorAll("thead .fs-pair-side");
    for (const [i, h] of [...head].entries()) h.textContent = (i % 2 === 0 ? a : b).date.slice(0, 10);
    const by = { self: "the largest change of self share", total: "the largest change of total share", name: "name" }[this.order];
    this.note.textContent = `${Math.min(SHOWN, this.rows.length)} of ${this.rows.length} functions, by ${by}.`;
    this.table.hidden = false;
  }

  /** What the table shows once nothing is loading (for tests and scripts). */
  async idle() {
    while (this.busy) await new Promise((r) => setTimeout(r, 10));
    return {
      pair: this.selects.map((s) => s.value),
      status: this.status.textContent,
      note: this.note.textContent,
      rows: [...this.table.tBodies[0].rows].map((tr) => [...tr.cells].map((c) => c.textContent)),
      hidden: this.table.hidden,
    };
  }
}

const section = typeof document === "undefined" ? null : document.getElementById("fs-pair");
if (section) new PairView(section);
