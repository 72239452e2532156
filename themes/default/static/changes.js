// The change points that start at this run (the series' changes.json, docs/FORMAT.md), said
// under the run's links once its first view is painted. Function names only ever go into text.

import { fragmentValue } from "./format.js";
import { exactQuery } from "./search.js";

const percent = (share) => `${(100 * share).toFixed(2)}%`;

/** The change points of `list` (changes.json's `changes`) that start at run `slug`. */
export function startingAt(list, slug) {
  return (list || []).filter((c) => c && c.run === slug && typeof c.function === "string");
}

/**
 * Fill `el` (its data-changes, the file; data-run, this run's slug) and show it when any starts
 * here; `el.dataset.read` is set once the file has been read (or could not be).
 */
export async function showChangeStarts(el) {
  try {
    await fill(el);
  } finally {
    el.dataset.read = "1";
  }
}

async function fill(el) {
  const r = await fetch(el.dataset.changes);
  if (!r.ok) return;
  const here = startingAt((await r.json()).changes, el.dataset.run);
  if (here.length === 0) return;
  el.replaceChildren(`Change point${here.length > 1 ? "s" : ""} from this run: `);
  here.forEach((c, k) => {
    if (k > 0) el.append("; ");
    const a = document.createElement("a");
    a.className = "fs-fn";
    a.href = `#q=${fragmentValue(exactQuery(c.function))}`;
    a.textContent = c.function;
    el.append(a, ` ${c.after > c.before ? "▲" : "▼"} ${percent(c.before)} → ${percent(c.after)}${c.confirmed ? "" : " (not yet confirmed)"}`);
  });
  el.hidden = false;
  // On a phone the line keeps one line until tapped (not on a link: that follows it).
  el.addEventListener("click", (e) => {
    if (!e.target.closest("a")) el.classList.toggle("fs-open");
  });
}
