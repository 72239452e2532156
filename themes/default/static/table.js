// The top table of functions: rows sorted by self, total or name (and, of a comparison, by
// before and change), filled only once the table is on screen and every name file is in.
// Text from the profile only ever goes into textContent.

import { formatPercent, formatValue, isCountUnit } from "./format.js";
import { formatPoints } from "./diff.js";
import { el } from "./ui.js";

const PAGE_ROWS = 200;

/**
 * Name ids (without the root, id 0) ordered for the table: by self or total descending, or
 * by name (UTF-16 order, which is byte order except for characters beyond U+FFFF).
 */
export function sortedIds(names, key, diff = null, reversed = false) {
  const ids = sortedIdsForward(names, key, diff);
  return reversed ? ids.reverse() : ids;
}

function sortedIdsForward(names, key, diff) {
  const n = names.names.length;
  const ids = new Uint32Array(Math.max(0, n - 1));
  for (let i = 1; i < n; i++) ids[i - 1] = i;
  if (key === "name") {
    const nm = names.names;
    return ids.sort((a, b) => (nm[a] < nm[b] ? -1 : nm[a] > nm[b] ? 1 : a - b));
  }
  let v = key === "total" ? names.total : names.self;
  if (key === "self_before" || key === "total_before") v = key === "self_before" ? names.selfBefore : names.totalBefore;
  if ((key === "self_change" || key === "total_change") && diff && names.selfBefore) {
    // By the change of the share, largest growth first.
    const [a, b] = key === "self_change" ? [names.self, names.selfBefore] : [names.total, names.totalBefore];
    const change = new Float64Array(n);
    for (let i = 1; i < n; i++) change[i] = points(b[i], a[i], diff);
    v = change;
  }
  if (!v) v = names.self;
  // Ties by name id, so the order is the same on every load.
  return ids.sort((a, b) => v[b] - v[a] || a - b);
}

/**
 * `order` (name ids) with the ids `match` flags first, each part in its order: a search puts
 * the functions it matched at the top of the table, and the others stay below it (a row click
 * adds its function to the search, so they must stay reachable).
 */
export function matchedFirst(order, match) {
  if (!match) return order;
  const out = new Uint32Array(order.length);
  let k = 0;
  for (const id of order) if (match[id]) out[k++] = id;
  for (const id of order) if (!match[id]) out[k++] = id;
  return out;
}

/** The change of a share from `before` (of total tb) to `after` (of ta), in points. */
function points(before, after, diff) {
  const share = (x, t) => (t > 0 ? x / t : 0);
  return 100 * (share(after, diff.ta) - share(before, diff.tb));
}

/**
 * The top table. `onPick(nameId)` runs when a row is clicked (or Enter is pressed on it),
 * `onSort(key)` when a column header is (the page reverses the order when it is the sorted one),
 * `onSandwich(nameId)` when a row's sandwich button is clicked (or `s` is pressed on the row).
 */
export class FunctionTable {
  constructor(table, moreButton, { onPick, onSort, onSandwich = () => {} }) {
    this.table = table;
    this.body = table.tBodies[0];
    this.more = moreButton;
    this.names = null;
    this.sorted = null; // name ids in the order of the sorted column
    this.order = null; // as shown: the matched ones first (matchedFirst)
    this.note = table.parentElement.querySelector(".fs-table-note");
    this.units = [...table.tHead.querySelectorAll(".fs-table-unit")];
    this.shown = 0;
    this.match = null;
    this.key = "self";
    this.diff = null; // of a comparison: { tb, ta }, the two totals
    this.unit = "";
    this.decimals = 0;
    this.total = 0;
    this.body.addEventListener("click", (e) => {
      const tr = e.target.closest("tr[data-id]");
      if (!tr) return;
      if (e.target.closest("button.fs-swbtn")) onSandwich(Number(tr.dataset.id));
      else onPick(Number(tr.dataset.id));
    });
    this.body.addEventListener("keydown", (e) => {
      const tr = e.target.closest("tr[data-id]");
      if (!tr || e.ctrlKey || e.metaKey || e.altKey) return;
      // Enter on the row's sandwich button is that button's click.
      if ((e.key === "Enter" || e.key === " ") && !e.target.closest("button")) {
        e.preventDefault();
        onPick(Number(tr.dataset.id));
      } else if (e.key === "s") {
        e.preventDefault();
        onSandwich(Number(tr.dataset.id));
      }
    });
    for (const b of table.querySelectorAll("button[data-sort]")) b.addEventListener("click", () => onSort(b.dataset.sort));
    moreButton.addEventListener("click", () => this.grow());
  }

  /**
   * Show the names of a graph (names.json) sorted by `key`, in `unit` with `decimals` places,
   * of grand total `total`.
   */
  show(names, key, unit, total, diff = null, reversed = false, decimals = 0) {
    this.diff = diff && names.selfBefore ? diff : null;
    this.names = names;
    this.unit = unit;
    this.decimals = decimals;
    this.total = total;
    this.key = key;
    this.sorted = sortedIds(names, key, this.diff, reversed);
    this.order = matchedFirst(this.sorted, this.match);
    // Counts (samples) are given once, in the header; times and bytes in every cell, each
    // scaled to its own value.
    this.bare = isCountUnit(unit);
    for (const u of this.units) u.textContent = this.bare && unit ? ` (${unit})` : "";
    for (const b of this.table.tHead.querySelectorAll("button[data-sort]")) {
      const sorted = b.dataset.sort === key;
      const ascending = (key === "name") !== reversed;
      b.closest("th").setAttribute("aria-sort", sorted ? (ascending ? "ascending" : "descending") : "none");
      b.classList.toggle("fs-on", sorted);
    }
    this.body.replaceChildren();
    this.shown = 0;
    this.grow();
  }

  grow() {
    if (!this.names) return;
    const frag = document.createDocumentFragment();
    const end = Math.min(this.order.length, this.shown + PAGE_ROWS);
    const nm = this.names;
    const value = (v) => formatValue(v, this.bare ? "" : this.unit, this.decimals);
    for (let i = this.shown; i < end; i++) {
      const id = this.order[i];
      const tr = el("tr");
      tr.dataset.id = String(id);
      tr.tabIndex = 0;
      const name = el("td", "fs-name", nm.names[id]);
      name.title = nm.names[id];
      const d = this.diff;
      if (d) {
        const change = (b, a) => {
          const p = points(b, a, d);
          const td = el("td", `fs-num ${p > 0 ? "fs-grew" : p < 0 ? "fs-shrank" : ""}`, formatPoints(p));
          // Its two values: a phone shows them under the change, in place of their own
          // columns, which it hides to leave the names room (flamesite.css).
          td.dataset.from = value(b);
          td.dataset.to = value(a);
          return td;
        };
        tr.append(
          name,
          el("td", "fs-num", value(nm.selfBefore[id])),
          el("td", "fs-num", value(nm.self[id])),
          change(nm.selfBefore[id], nm.self[id]),
          el("td", "fs-num", value(nm.totalBefore[id])),
          el("td", "fs-num", value(nm.total[id])),
          change(nm.totalBefore[id], nm.total[id]),
        );
      } else {
        tr.append(
          name,
          el("td", "fs-num", value(nm.self[id])),
          el("td", "fs-num", formatPercent(nm.self[id], this.total)),
          el("td", "fs-num", value(nm.total[id])),
          el("td", "fs-num", formatPercent(nm.total[id], this.total)),
        );
      }
      // The sandwich of the function: a button of its own, so a row click still searches.
      const sw = el("button", "fs-swbtn", "⇅");
      sw.type = "button";
      sw.title = "Sandwich: its callers and callees, merged (s)";
      sw.setAttribute("aria-label", `Sandwich of ${nm.names[id]}`);
      const cell = el("td", "fs-sw");
      cell.append(sw);
      tr.append(cell);
      if (this.match && this.match[id]) tr.classList.add("fs-match");
      frag.append(tr);
    }
    this.body.append(frag);
    this.shown = end;
    const left = this.order.length - end;
    this.more.hidden = left <= 0;
    this.more.textContent = `Show ${Math.min(PAGE_ROWS, left)} more of ${left}`;
  }

  /**
   * Mark the rows of matched names (flags per name id, or null), listed first; the note above
   * the table says how many there are.
   */
  mark(match) {
    this.match = match;
    let count = 0;
    if (match && this.names) for (let id = 1; id < this.names.names.length; id++) if (match[id]) count++;
    if (this.note) {
      this.note.hidden = !match;
      this.note.textContent = !match ? "" : count === 0 ? "The search matches no function." : `${count === 1 ? "1 function matches" : `${count} functions match`} the search: listed first, marked at the left.`;
    }
    if (!this.sorted) return;
    this.order = matchedFirst(this.sorted, match);
    // As many rows as were shown, the matched ones now at the top.
    const shown = this.shown;
    this.body.replaceChildren();
    this.shown = 0;
    while (this.shown < shown) this.grow();
    for (const tr of this.body.rows) tr.classList.toggle("fs-match", !!(match && match[Number(tr.dataset.id)]));
  }
}


/**
 * The table of the graph shown: fills it once it is on screen (the graph view does not pay for
 * it) and the name files are in, again when the sort changes.
 */
export class TablePanel {
  constructor(table, moreButton, handlers) {
    this.table = new FunctionTable(table, moreButton, handlers);
    this.shownFor = null; // the graph whose rows are in the table
    this.shownSort = null; // "key" or "key reversed"
    this.waiting = false; // name files on the way for it
  }

  /** Show graph `g` sorted by `sort`, its rows marked by `flags`; `arrived` runs when missing name files came. */
  show(g, sort, reversed, diff, flags, arrived) {
    const order = reversed ? `${sort} reversed` : sort;
    if (this.shownFor === g && this.shownSort === order) return;
    if (!g.names.complete()) {
      // The table lists every function: fetch the name files first.
      this.waiting = true;
      const done = () => {
        this.waiting = false;
        arrived();
      };
      g.source.allNames(g.names).then(done, done);
      return;
    }
    this.shownFor = g;
    this.shownSort = order;
    this.table.show(g.names, sort, g.manifest.unit, g.manifest.total, diff, reversed, g.manifest.decimals || 0);
    this.table.mark(flags);
  }

  mark(flags) {
    this.table.mark(flags);
  }
}
