// The change that starts at this run (the series' changes.json, docs/FORMAT.md), said in one
// line under the run's links once its first view is painted. Function names only ever go
// into text.

import { fragmentValue } from "./format.js";
import { exactQuery } from "./search.js";

const percent = (share) => `${(100 * share).toFixed(2)}%`;

/**
 * The events of `file` (changes.json) that start at run `slug`: its `events`, or, in a file
 * written before events were, each of its change points as an event of one function.
 */
export function startingAt(file, slug) {
  const events = Array.isArray(file?.events)
    ? file.events
    : (file?.changes || []).map((c) => c && { ...c, functions: 1, reshaped: false });
  return events.filter((e) => e && e.run === slug && typeof e.function === "string");
}

/** What the line says of event `e` after its function's name. */
export function eventWords(e) {
  const others = (e.functions || 1) - 1;
  return (
    ` ${e.after > e.before ? "▲" : "▼"} ${percent(e.before)} → ${percent(e.after)}` +
    (others > 0 ? `, with ${others} other function${others > 1 ? "s" : ""}` : "") +
    (e.confirmed ? "" : " (not yet confirmed)")
  );
}

/**
 * Fill `el` (its data-changes, the file; data-run, this run's slug) and show it when a change
 * starts here; `el.dataset.read` is set once the file has been read (or could not be).
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
  const here = startingAt(await r.json(), el.dataset.run);
  if (here.length === 0) return;
  el.replaceChildren();
  here.forEach((e, k) => {
    if (k > 0) el.append("; ");
    el.append(e.reshaped ? `The profile changed shape from this run (${Math.round(100 * e.moved)}% of it moved); most: ` : "Change from this run: ");
    const a = document.createElement("a");
    a.className = "fs-fn";
    a.href = `#q=${fragmentValue(exactQuery(e.function))}`;
    a.textContent = e.function;
    el.append(a, eventWords(e));
  });
  el.hidden = false;
  // On a phone the line keeps one line until tapped (not on a link: that follows it).
  el.addEventListener("click", (ev) => {
    if (!ev.target.closest("a")) el.classList.toggle("fs-open");
  });
}
