// Differential graphs (comparisons of two runs, and two-count folded profiles): what a frame's
// tooltip says, the legend, and the values a search matched before and after. Pure functions:
// node's test runner checks them. The colour of a change (src/graph/diff.rs's `color`) is in
// palette.js, re-exported here.

import { formatValue, formatPercent } from "./format.js";
import { idsOf, unionWidth } from "./fetch.js";

// The colour of a change is drawn with the first view (draw.js): it lives in palette.js, so that
// a plain graph's page does not load this module before its first paint.
import { diffRgb, frameDelta } from "./palette.js";
export { diffRgb, frameDelta };

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
 * The words of the widths that take both sides: `Both runs`, `Both profiles`, or `Both
 * counts` (two counts of one file, a CPI graph's instructions and cycles), never a bare
 * `Both`, which the view toggle (graph and table) is called.
 */
export function bothLabel(diff) {
  const { before } = sidesOf(diff);
  return / run$/.test(before) ? "Both runs" : / profile$/.test(before) ? "Both profiles" : "Both counts";
}

/**
 * Whether the sides are one thing at two times (`the earlier run` and `this run`, two
 * profiles, two counts of a file), so that a change "grew" from one to the other; a CPI
 * graph's sides (`instructions`, `cycles`) are two measures of the same time instead.
 */
function ordered({ before }) {
  return before.startsWith("the ");
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
 * What a search matched in a differential graph, gathered from its search buckets as they
 * arrive (`add`, while the others load) and summed at the end (`sum`). Every entry of a
 * matched name is a frame with its id and the number of its descendants; a frame inside
 * another matched frame is counted once, with it. Frames are taken in id order (depth first: a
 * frame before its descendants) from a bitmap of their ids, which needs no sort; matched frames
 * that are not inside one another are disjoint, so their widths add up to the union of their
 * extents.
 */
export class DiffMatch {
  /** `ids`: the matched name ids, ascending; `frames`: the graph's frame count (ids are below it). */
  constructor(ids, frames) {
    this.ids = ids;
    this.frames = frames;
    this.used = []; // the buckets added
    // Per frame id: a bit when it is matched, and where its entry is (bucket, index).
    this.bits = new Int32Array((frames + 31) >>> 5);
    this.which = new Uint16Array(frames);
    this.at = new Uint32Array(frames);
  }

  /** Take the matched names' entries of decoded bucket `b` (once; a plain bucket has none). */
  add(b) {
    if (!b.diff || this.used.includes(b)) return;
    if (this.used.length === 65535) throw new Error("more than 65,535 search buckets in one search");
    const u = this.used.push(b) - 1;
    const { ids, bits, which, at, frames } = this;
    // The first matched name in the bucket, by bisection.
    let i = 0;
    let k = ids.length;
    while (i < k) {
      const mid = (i + k) >>> 1;
      if (ids[mid] < b.nameLo) i = mid + 1;
      else k = mid;
    }
    // Ids, or (version 5) each id's step from the previous entry's of the same name.
    const idc = b.id;
    const step = b.idStep;
    for (; i < ids.length && ids[i] < b.nameHi; i++) {
      const n = ids[i] - b.nameLo;
      const z = b.start[n + 1];
      let id = 0;
      for (let j = b.start[n]; j < z; j++) {
        id = idc ? idc[j] : id + step[j];
        if (id >= frames) throw new Error(`a search entry names frame ${id}, past the graph's ${frames} frames`);
        bits[id >>> 5] |= 1 << (id & 31);
        which[id] = u;
        at[id] = j;
      }
    }
  }

  /**
   * `{ before, after, value, inRange, beforeIn, afterIn }`: the values before and after, the
   * width matched in the union layout (runs of totals `tb` and `ta`), the part of it in
   * [lo, hi) (a zoom), and the values before and after matched in the zoomed frame, whose own
   * values are `zoomed` ({ before, after }; without it, `beforeIn` and `afterIn` are those of
   * the frames inside the range only). In the union layout a frame's extent holds its
   * descendants' and no other's, so a matched frame is inside the zoomed one, holds it (all
   * of the zoom is matched), or is beside it.
   */
  sum(tb, ta, lo = -Infinity, hi = Infinity, zoomed = null) {
    const { bits, which, at, used } = this;
    const clip = lo !== -Infinity || hi !== Infinity;
    let before = 0;
    let after = 0;
    let value = 0;
    let inRange = 0;
    let beforeIn = 0;
    let afterIn = 0;
    let end = -1; // the last descendant of the last frame counted
    for (let w = 0; w < bits.length; w++) {
      if (w * 32 + 31 <= end) {
        // The whole word is inside that frame: go on after it.
        w = ((end + 1) >>> 5) - 1;
        continue;
      }
      let x = bits[w];
      while (x !== 0) {
        const bit = x & -x;
        x ^= bit;
        const id = w * 32 + 31 - Math.clz32(bit);
        if (id <= end) continue;
        const b = used[which[id]];
        const j = at[id];
        const vb = b.before[j];
        const va = b.after[j];
        before += vb;
        after += va;
        end = id + b.span[j];
        const width = b.width ? b.width[j] : unionWidth(vb, tb) + unionWidth(va, ta);
        value += width;
        if (clip) {
          const s = b.lo[j] > lo ? b.lo[j] : lo;
          const e = b.lo[j] + width < hi ? b.lo[j] + width : hi;
          if (e > s) inRange += e - s;
          if (b.lo[j] >= lo && b.lo[j] + width <= hi) {
            beforeIn += vb;
            afterIn += va;
          } else if (zoomed && b.lo[j] <= lo && b.lo[j] + width >= hi) {
            beforeIn += zoomed.before;
            afterIn += zoomed.after;
          }
        }
      }
    }
    return clip ? { before, after, value, inRange, beforeIn, afterIn } : { before, after, value, inRange: value, beforeIn: before, afterIn: after };
  }
}

/** DiffMatch at once: what name ids `ids` (ascending) matched in decoded buckets `buckets`. */
export function matchedDiff(buckets, ids, tb, ta, lo = -Infinity, hi = Infinity, zoomed = null) {
  let frames = 0;
  for (const b of buckets) if (b.diff) for (const id of idsOf(b)) frames = Math.max(frames, id + 1);
  const m = new DiffMatch(ids, frames);
  for (const b of buckets) m.add(b);
  return m.sum(tb, ta, lo, hi, zoomed);
}

/** The legend's words for `measure` at the manifest's scales. */
export function legendText(diff, measure, unit, decimals = 0) {
  const full = measure === "abs" ? formatChange(diff.scale_value, unit, decimals).slice(1) : `${diff.scale_points.toFixed(2)} pp of the total`;
  const what = measure === "abs" ? "value" : "share of the total";
  const sides = sidesOf(diff);
  const { before, after } = sides;
  if (!ordered(sides)) {
    // Two measures of the same samples: a frame is red where it takes a larger share of one
    // than of the other (for a CPI graph: more cycles per instruction than the whole graph).
    const cpi = before === "instructions" && after === "cycles" ? " (more cycles per instruction than the whole graph: stalls)" : "";
    return `Red where a frame's ${measure === "abs" ? "value" : "share"} of ${after} is larger than of ${before}${cpi}, blue where smaller; full colour at ${full}, grey equal. ⊖ striped: only in ${before}.`;
  }
  return `Red grew, blue shrank from ${before} to ${after}: each frame by the change of its ${what}; full colour at ${full}, grey unchanged. ⊖ striped: only in ${before}.`;
}
