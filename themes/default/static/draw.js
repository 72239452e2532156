// Drawing: frames onto a 2D canvas from typed-array chunk columns, one pass per visible depth.
// The canvas backing store is sized in device pixels (setupCanvas); coordinates here are CSS
// pixels. Frames narrower than MIN_PX are skipped and runs of sub-pixel frames painted once
// per pixel, so a row costs at most about one fillRect per pixel whatever the profile size.
// Labels are text on the canvas (never HTML), cut with an ellipsis to fit their box.

import { MIN_PX, pixelValue, rowY, rowsInRange, visibleDepths, xOf } from "./layout.js";
import { cssColor } from "./format.js";

export const FONT_PX = 12;
export const FONT = `${FONT_PX}px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace`;
export const MATCH_COLOR = "#e600e6";
const ELLIPSIS = "\u2026";
const LABEL_PAD = 3;
const FADED_ALPHA = 0.4;

/** Size a canvas for `cssW` × `cssH` CSS pixels at the device pixel ratio; returns its 2D context. */
export function setupCanvas(canvas, cssW, cssH, dpr) {
  const w = Math.max(1, Math.round(cssW * dpr));
  const h = Math.max(1, Math.round(cssH * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** Mix `0xRRGGBB` with grey, for frames that do not match a search. */
function dimColor(c) {
  const mix = (v) => Math.round(v * 0.25 + 0xd8 * 0.75);
  return `rgb(${mix((c >> 16) & 255)},${mix((c >> 8) & 255)},${mix(c & 255)})`;
}

/**
 * Per-graph drawing resources from names.json: CSS colours and dimmed colours, made on first
 * use (a graph may have 100k names and a view draws a few hundred), and a lazily filled cache
 * of label widths by name id.
 */
export class Palette {
  constructor(names) {
    this.names = names.names;
    this.colors = names.colors;
    this.cssCache = new Array(names.names.length);
    this.dimCache = new Array(names.names.length);
    this.widths = new Float32Array(names.names.length).fill(-1);
    this.charW = 0;
    // Diverging scale for differential graphs: blue (shrank) .. white .. red (grew).
    this.diff = [];
    for (let i = -10; i <= 10; i++) {
      const t = Math.abs(i) / 10;
      const far = Math.round(255 - 165 * t);
      this.diff.push(i < 0 ? `rgb(${far},${far},255)` : `rgb(255,${far},${far})`);
    }
  }

  css(n) {
    return this.cssCache[n] || (this.cssCache[n] = cssColor(this.colors[n]));
  }

  dim(n) {
    return this.dimCache[n] || (this.dimCache[n] = dimColor(this.colors[n]));
  }

  /** Label text for name id `n` that fits `avail` CSS pixels, or "" when nothing useful fits. */
  label(ctx, n, avail) {
    if (this.charW === 0) this.charW = ctx.measureText("M").width || FONT_PX * 0.6;
    let w = this.widths[n];
    if (w < 0) {
      w = ctx.measureText(this.names[n]).width;
      this.widths[n] = w;
    }
    const name = this.names[n];
    if (w <= avail) return name;
    let k = Math.floor((avail - this.charW) / this.charW);
    if (k < 2) return "";
    k = Math.min(k, name.length - 1);
    const code = name.charCodeAt(k - 1);
    if (code >= 0xd800 && code <= 0xdbff) k -= 1; // do not split a surrogate pair
    return name.slice(0, k) + ELLIPSIS;
  }

  diffColor(after, before, scale) {
    const b = before * scale;
    const m = Math.max(after, b);
    const r = m > 0 ? (after - b) / m : 0;
    return this.diff[Math.round(r * 10) + 10];
  }
}

/**
 * Draw the frames of a view. `scene`:
 *   view      the layout view (see layout.js)
 *   chunks    decoded chunks to draw from (each frame is in exactly one chunk)
 *   palette   a Palette for the graph's names.json
 *   zoomDepth depth of the zoomed frame (rows below it are its ancestors, drawn faded), 0 if none
 *   match     Uint8Array flag per name id when a search is active, else null
 *   diffScale total / total_before for a differential graph (colours by change), else 0
 *   bg, fg    background and label colours
 * Returns the number of rectangles painted.
 */
export function drawGraph(ctx, scene) {
  const { view, chunks, palette, zoomDepth, match, diffScale } = scene;
  ctx.save();
  ctx.fillStyle = scene.bg;
  ctx.fillRect(0, 0, view.width, view.height);
  ctx.font = FONT;
  ctx.textBaseline = "middle";
  const minValue = pixelValue(view) * MIN_PX;
  const scale = view.width / (view.x1 - view.x0);
  const [dlo, dhi] = visibleDepths(view);
  const h = view.rowH - 1;
  let painted = 0;
  for (let d = dlo; d < dhi; d++) {
    const y = rowY(view, d);
    ctx.globalAlpha = d < zoomDepth ? FADED_ALPHA : 1;
    for (const c of chunks) {
      if (d < c.depthLo || d >= c.depthHi) continue;
      const [i, j] = rowsInRange(c, d, view.x0, view.x1);
      const off = c.offset;
      const tot = c.total;
      const nm = c.name;
      let drawnTo = -Infinity; // right edge (whole pixels) already covered by a narrow frame
      for (let r = i; r < j; r++) {
        const t = tot[r];
        if (t < minValue || t <= 0) continue;
        let x = xOf(view, off[r]);
        let w = t * scale;
        if (w < 1) {
          if (x + w <= drawnTo) continue;
          drawnTo = Math.ceil(x + w);
        }
        if (x < 0) {
          w += x;
          x = 0;
        }
        if (x + w > view.width) w = view.width - x;
        const n = nm[r];
        const dimmed = match !== null && match[n] === 0;
        let fill;
        if (match !== null) fill = dimmed ? palette.dim(n) : MATCH_COLOR;
        else if (diffScale) fill = palette.diffColor(c.self[r], c.beforeSelf[r], diffScale);
        else fill = palette.css(n);
        ctx.fillStyle = fill;
        ctx.fillRect(x, y, w >= 3 ? w - 1 : w, h);
        painted += 1;
        if (w >= 3 * FONT_PX) {
          const text = palette.label(ctx, n, w - 2 * LABEL_PAD);
          if (text) {
            ctx.fillStyle = dimmed ? "#666" : scene.fg;
            ctx.fillText(text, x + LABEL_PAD, y + h / 2 + 0.5, w - 2 * LABEL_PAD);
          }
        }
      }
    }
  }
  ctx.restore();
  return painted;
}

/** Outline one frame (the hovered one) on the overlay canvas; clears it first. */
export function drawHover(ctx, view, rect) {
  ctx.clearRect(0, 0, view.width, view.height);
  if (!rect) return;
  const x = Math.max(0, rect.x);
  const w = Math.min(view.width, rect.x + rect.w) - x;
  ctx.strokeStyle = "#111";
  ctx.lineWidth = 1.5;
  ctx.strokeRect(x + 0.75, rect.y + 0.75, Math.max(1, w - 1.5), rect.h - 2.5);
}
