// Differential graphs (comparisons of two runs, and two-count folded profiles): the colour of a
// change, what a frame's tooltip says, and the values a search matched before and after. Pure
// functions: node's test runner checks them. The colour rule is src/graph/diff.rs's `color`.

import { formatValue, formatPercent } from "./format.js";

const NEUTRAL = [224, 224, 224];
const GREW = [220, 38, 30];
const SHRANK = [38, 96, 220];

/** 0xRRGGBB of a change `delta` on a scale where `scale` (> 0) is full colour. */
export function diffRgb(delta, scale) {
  const i = scale > 0 ? Math.min(1, Math.abs(delta) / scale) : 0;
  const to = delta > 0 ? GREW : SHRANK;
  const ch = (k) => Math.round(NEUTRAL[k] + (to[k] - NEUTRAL[k]) * i);
  return (ch(0) << 16) | (ch(1) << 8) | ch(2);
}

/** Share of `v` in `of`, 0 when `of` is 0. */
const share = (v, of) => (of > 0 ? v / of : 0);

/**
 * The change of a frame with totals `before` and `after`, in runs of totals `tb` and `ta`: in
 * percentage points of the share (`measure` "share") or in value ("abs").
 */
export function frameDelta(before, after, tb, ta, measure) {
  return measure === "abs" ? after - before : 100 * (share(after, ta) - share(before, tb));
}

/** `+1.23 pp` / `−0.40 pp` (U+2212), two decimals. */
export function formatPoints(p) {
  const r = Math.round(Math.abs(p) * 100) / 100;
  return `${p < 0 && r > 0 ? "−" : "+"}${r.toFixed(2)} pp`;
}

/** A signed value change: `+1.2 k samples`, `−300 B`, `±0 samples`. */
export function formatChange(d, unit, decimals = 0) {
  const sign = d > 0 ? "+" : d < 0 ? "−" : "±";
  return sign + formatValue(Math.abs(d), unit, decimals);
}

/** The relative change of `before` to `after`: `+12.5%`, `−100%`, or "new" when before is 0. */
export function formatRelative(before, after) {
  if (before === 0) return after === 0 ? "±0%" : "new";
  const r = ((after - before) / before) * 100;
  const t = Math.abs(r) >= 10 ? Math.abs(r).toFixed(0) : Math.abs(r).toFixed(1);
  return `${r > 0 ? "+" : r < 0 ? "−" : "±"}${t}%`;
}

/** What the two counts of a comparison of runs are (graphs written before `diff.sides`, too). */
const RUN_SIDES = { before: "the earlier run", after: "this run" };

/** The manifest `diff`'s words for its two counts: { before, after }, noun phrases. */
export function sidesOf(diff) {
  const s = diff && diff.sides;
  return s && typeof s.before === "string" && typeof s.after === "string" ? s : RUN_SIDES;
}

/** A side's words on a button: `the earlier run` → `Earlier run`, `cycles` → `Cycles`. */
export function sideLabel(phrase) {
  const p = phrase.replace(/^the /, "");
  return p.charAt(0).toUpperCase() + p.slice(1);
}

/**
 * What the tooltip and the info line say of a frame of a differential graph: before, after,
 * the change in value, in points of the total and relative. `f` has beforeTotal, afterTotal,
 * beforeSelf, afterSelf; `d` is the manifest's totals { tb, ta, unit, decimals, sides }.
 */
export function describeDiffFrame(f, d) {
  const { tb, ta, unit } = d;
  const places = d.decimals || 0;
  const sides = d.sides || RUN_SIDES;
  const facts = [];
  if (f.afterTotal === 0 && f.beforeTotal > 0) facts.push(`⊖ only in ${sides.before}`);
  else if (f.beforeTotal === 0 && f.afterTotal > 0) facts.push(`⊕ only in ${sides.after}`);
  facts.push(
    `total ${formatValue(f.beforeTotal, unit, places)} → ${formatValue(f.afterTotal, unit, places)} (${formatPercent(f.beforeTotal, tb)} → ${formatPercent(f.afterTotal, ta)})`,
    `change ${formatChange(f.afterTotal - f.beforeTotal, unit, places)}, ${formatPoints(frameDelta(f.beforeTotal, f.afterTotal, tb, ta, "share"))} of the total, ${formatRelative(f.beforeTotal, f.afterTotal)}`,
    `self ${formatValue(f.beforeSelf, unit, places)} → ${formatValue(f.afterSelf, unit, places)} (${formatPoints(frameDelta(f.beforeSelf, f.afterSelf, tb, ta, "share"))})`,
  );
  return facts;
}

/**
 * The values a search matched before and after, from differential search buckets: every
 * interval of a matched name is a frame with its values and its id range [id, last]; a frame
 * inside another matched frame is counted once, with it.
 */
export function matchedBeforeAfter(buckets, ids) {
  const want = new Set(ids);
  // The matched intervals as (bucket, index) pairs, then sorted by frame id through one native
  // sort of packed keys (id · 2^21 + position), which allocates no object per interval.
  const from = [];
  const at = [];
  for (const b of buckets) {
    if (!b.diff) continue;
    for (let n = b.nameLo; n < b.nameHi; n++) {
      if (!want.has(n)) continue;
      for (let j = b.start[n - b.nameLo]; j < b.start[n - b.nameLo + 1]; j++) {
        from.push(b);
        at.push(j);
      }
    }
  }
  const k = from.length;
  let order;
  if (k < 1 << 21) {
    const keys = new Float64Array(k);
    for (let i = 0; i < k; i++) keys[i] = from[i].id[at[i]] * 2097152 + i;
    keys.sort();
    order = Array.from(keys, (x) => x % 2097152);
  } else {
    order = [...Array(k).keys()].sort((x, y) => from[x].id[at[x]] - from[y].id[at[y]]);
  }
  let before = 0;
  let after = 0;
  let end = -1;
  for (const i of order) {
    const b = from[i];
    const j = at[i];
    if (b.id[j] <= end) continue;
    before += b.before[j];
    after += b.after[j];
    end = b.last[j];
  }
  return { before, after };
}

/** The legend's words for `measure` at the manifest's scales. */
export function legendText(diff, measure, unit, decimals = 0) {
  const full = measure === "abs" ? formatChange(diff.scale_value, unit, decimals).slice(1) : `${diff.scale_points.toFixed(2)} pp of the total`;
  const what = measure === "abs" ? "value" : "share of the total";
  const { before, after } = sidesOf(diff);
  return `Red grew, blue shrank from ${before} to ${after}: each frame by the change of its ${what}; full colour at ${full}, grey unchanged. ⊖ striped: only in ${before}.`;
}
