// Drawing: frames onto a canvas from typed-array chunk columns.
//
// Boxes are rasterised in JS into one Uint32Array of device pixels (paintFrames, pure, so
// node tests check pixels) and put on the canvas in one putImageData: one native fill per
// frame into a scanline per depth, then the scanline copied down its row. That costs about
// one pass over the canvas whatever the profile, where a fillRect and a fillStyle per frame
// cost tens of ms for the 10k+ frames of a large profile's root view. Frames narrower than
// MIN_PX are skipped; sub-pixel frames get at least one device pixel. Labels are then drawn
// as canvas text (never HTML), cut with an ellipsis to fit their box.

import { MIN_PX, elidedSpans, pixelValue, rowY, rowsInRange, visibleDepths, xOf } from "./layout.js";
import { diffRgb, frameDelta, nameColor } from "./palette.js";

export const FONT_PX = 12;
export const FONT = `${FONT_PX}px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace`;
export const MATCH_RGB = 0xe600e6;
const ELLIPSIS = "\u2026";
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const LABEL_PAD = 3;
const FADED_ALPHA = 0.4;
export const DIM_KEEP = 0.25; // how much of a frame's colour stays when a search dims it
export const DIM_GREY = 0xd8;
/** The grey of the marks where frames too narrow to draw were left out (`--fs-elided`). */
export const ELIDED_RGB = 0xb4b4b4;

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

/** `0xRRGGBB` as the pixel value of an RGBA8 buffer read as little-endian Uint32. */
export function pixel(rgb) {
  return (0xff000000 | ((rgb & 0xff) << 16) | (rgb & 0xff00) | ((rgb >> 16) & 0xff)) >>> 0;
}

/** Mix `0xRRGGBB` toward `toward` (also 0xRRGGBB), keeping `keep` of it. */
export function mixRgb(rgb, toward, keep) {
  const away = 1 - keep;
  const r = Math.round(((rgb >> 16) & 255) * keep + ((toward >> 16) & 255) * away);
  const g = Math.round(((rgb >> 8) & 255) * keep + ((toward >> 8) & 255) * away);
  const b = Math.round((rgb & 255) * keep + (toward & 255) * away);
  return (r << 16) | (g << 8) | b;
}

/**
 * `mixRgb(rgb, grey DIM_GREY, DIM_KEEP)` in integer arithmetic (a search dims thousands of
 * names on its first paint): each channel is round(c / 4 + 3 * DIM_GREY / 4).
 */
export function dimRgb(rgb) {
  const base = (3 * DIM_GREY) / 4; // an integer for DIM_GREY = 0xd8
  const r = (((rgb >> 16) & 255) + 2) >> 2;
  const g = (((rgb >> 8) & 255) + 2) >> 2;
  const b = ((rgb & 255) + 2) >> 2;
  return ((r + base) << 16) | ((g + base) << 8) | (b + base);
}

/** The share palettes' scale: from SHARE_LOW (a share of 0) to SHARE_HIGH (the whole graph). */
export const SHARE_LOW = 0xf6e7bc;
export const SHARE_HIGH = 0xc62828;

/**
 * The colour (0xRRGGBB) of a frame whose self or total is `share` of the graph's total, in the
 * `self` and `total` palettes: t = √share (clamped to [0, 1], so that a share of 1% is a tenth
 * of the way and small frames still differ), each channel round(low + (high − low) · t).
 */
export function shareRgb(share) {
  const t = share > 0 ? (share < 1 ? Math.sqrt(share) : 1) : 0;
  let rgb = 0;
  for (const sh of [16, 8, 0]) {
    const lo = (SHARE_LOW >> sh) & 255;
    const hi = (SHARE_HIGH >> sh) & 255;
    rgb |= Math.round(lo + (hi - lo) * t) << sh;
  }
  return rgb;
}

/** `#rgb` / `#rrggbb` as 0xRRGGBB; anything else is white. */
export function parseHex(css) {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec((css || "").trim());
  if (!m) return 0xffffff;
  const h = m[1].length === 3 ? m[1].replace(/./g, "$&$&") : m[1];
  return parseInt(h, 16);
}

/**
 * Per-graph drawing resources over a name table (fetch.js NameTable, or anything with
 * `names` and `colors` arrays indexed by name id): pixel colours by mode, made on first use,
 * and a lazily filled cache of label widths by name id.
 */
export class Palette {
  constructor(names, bg = 0xffffff) {
    this.names = names.names;
    this.colors = names.colors;
    this.scheme = null; // null: the name files' colours; else a palette of palette.js, computed here
    this.own = null; // of a scheme: 0x1RRGGBB per name id once computed, 0 before
    this.bg = bg;
    const n = this.names.length;
    // Modes: 0 plain, 1 dimmed by a search, 2 faded ancestor, 3 dimmed and faded. 0 = not made yet.
    this.cache = [0, 1, 2, 3].map(() => new Uint32Array(n));
    this.widths = new Float32Array(n).fill(-1);
    this.charW = 0;
    this.setBackground(bg);
  }

  setBackground(bg) {
    if (bg === this.bg && this.match) return;
    this.bg = bg;
    for (const c of this.cache) c.fill(0);
    this.match = [pixel(MATCH_RGB), pixel(MATCH_RGB), pixel(mixRgb(MATCH_RGB, bg, FADED_ALPHA)), pixel(mixRgb(MATCH_RGB, bg, FADED_ALPHA))];
  }

  /**
   * Colour names by `scheme`, a palette of palette.js (`hot`, `module`, `lang`, `blue`)
   * computed from the names on the page, or by the name files' colours (null).
   */
  setScheme(scheme) {
    if (scheme === this.scheme) return;
    this.scheme = scheme;
    this.own = scheme ? new Uint32Array(this.names.length) : null;
    for (const c of this.cache) c.fill(0);
  }

  /** The colour (0xRRGGBB) of name id `n` before any dimming or fading. */
  base(n) {
    if (this.own === null) return this.colors[n];
    let v = this.own[n];
    if (v === 0) {
      const name = this.names[n];
      if (name === undefined) return 0; // its name file is not in yet (nothing is drawn with it)
      v = 0x1000000 | nameColor(name, this.scheme);
      this.own[n] = v;
    }
    return v & 0xffffff;
  }

  /** Pixel colour of name `n` in `mode` (bit 0: dimmed, bit 1: faded). */
  color(n, mode) {
    const c = this.cache[mode];
    let v = c[n];
    if (v === 0) {
      v = this.make(this.base(n), mode);
      c[n] = v;
    }
    return v;
  }

  make(rgb, mode) {
    if (mode & 1) rgb = dimRgb(rgb);
    if (mode & 2) rgb = mixRgb(rgb, this.bg, FADED_ALPHA);
    return pixel(rgb);
  }


  /** Label text for name id `n` that fits `avail` CSS pixels, or "" when nothing useful fits. */
  label(ctx, n, avail) {
    if (this.charW === 0) this.charW = ctx.measureText("M").width || FONT_PX * 0.6;
    let w = this.widths[n];
    const name = this.names[n];
    if (w < 0) {
      // FONT is monospaced: printable ASCII is its length in character widths, with no
      // measureText (which shapes the text: a few ms per hundred long C++ names, paid on the
      // first paint); anything else is measured.
      w = PRINTABLE_ASCII.test(name) ? name.length * this.charW : ctx.measureText(name).width;
      this.widths[n] = w;
    }
    if (w <= avail) return name;
    let k = Math.floor((avail - this.charW) / this.charW);
    if (k < 2) return "";
    k = Math.min(k, name.length - 1);
    const code = name.charCodeAt(k - 1);
    if (code >= 0xd800 && code <= 0xdbff) k -= 1; // do not split a surrogate pair
    return name.slice(0, k) + ELLIPSIS;
  }
}

/**
 * Rasterise the frames of a view, one depth row at a time, at `dpr` device pixels per CSS pixel
 * across `W` device pixels. For each visible depth, `row(scan, top, bottom, next, any)` gets
 * the row's scanline (`W` pixels, background where no frame is), the device-pixel rows
 * [top, bottom) it fills, [bottom, next) the background gap below it, and whether any frame
 * was drawn. `scene`:
 *   view      the layout view (see layout.js)
 *   chunks    decoded chunks to draw from (each frame is in exactly one chunk)
 *   palette   a Palette
 *   zoomDepth depth of the zoomed frame (rows below it are its ancestors, drawn faded), 0 if none
 *   match     Uint8Array flag per name id when a search is active, else null
 *   diff      of a differential graph: { tb, ta, measure, scale } (totals before and after,
 *             "share" or "abs", the change drawn in full colour), else null
 *   share     the `self` or `total` palette: { by: "self" | "total", total (the graph's) },
 *             frames coloured by shareRgb of their self or total; null: the name files' colours
 *   elided    0xRRGGBB of the marks where frames too narrow to draw were left out (layout.js
 *             elidedSpans: the children of a drawn frame that no drawn child covers, where they
 *             add up to half a pixel or more), ELIDED_RGB when absent
 * Returns the frames wide enough for a label, as a flat array [x, y, w, nameId, mode, ...]
 * in CSS pixels, and the number of frames painted: { labels, painted }.
 */
function rasterise(W, dpr, scene, row) {
  const { view, chunks, palette, zoomDepth, match, diff } = scene;
  const share = scene.share || null;
  const bySelf = share !== null && share.by === "self";
  const elidedRgb = scene.elided === undefined ? ELIDED_RGB : scene.elided;
  const bgPix = pixel(palette.bg);
  const minValue = pixelValue(view) * MIN_PX;
  const scale = (view.width / (view.x1 - view.x0)) * dpr;
  const vx0 = view.x0;
  const [dlo, dhi] = visibleDepths(view);
  const scan = new Uint32Array(W);
  const gap = Math.max(1, Math.round(dpr)); // device pixels between boxes and between rows
  const minGapped = 3 * gap;
  const labelPx = 3 * FONT_PX * dpr; // device pixels a frame needs for a label
  const labels = [];
  let painted = 0;
  // The first paint of a page runs this loop before V8 has optimised it, so the loop body
  // keeps to plain arithmetic and array reads: no Math calls, no method call per frame unless
  // a colour is missing from the palette's cache, and one store for the common 1-pixel frame.
  for (let d = dlo; d < dhi; d++) {
    const faded = d < zoomDepth ? 2 : 0;
    const plain = palette.cache[faded];
    const dimmed = palette.cache[faded | 1];
    const matchPix = palette.match[faded];
    scan.fill(bgPix);
    let any = false;
    // Frames too narrow to draw, merged into grey marks: drawn first, so that a mark rounded
    // to a pixel its drawn neighbour also covers gives way to the frame.
    const gone = elidedSpans(chunks, d, view.x0, view.x1, minValue);
    if (gone.length) {
      const v = palette.make(elidedRgb, faded | (match !== null ? 1 : 0));
      for (let k = 0; k < gone.length; k += 2) {
        let x0 = Math.round((gone[k] - vx0) * scale);
        let x1 = Math.round((gone[k + 1] - vx0) * scale);
        if (x1 - x0 >= minGapped) x1 -= gap;
        else if (x1 <= x0) x1 = x0 + 1;
        if (x0 < 0) x0 = 0;
        if (x1 > W) x1 = W;
        if (x1 > x0) {
          scan.fill(v, x0, x1);
          any = true;
        }
      }
    }
    for (let k = 0; k < chunks.length; k++) {
      const c = chunks[k];
      if (d < c.depthLo || d >= c.depthHi) continue;
      const [i, j] = rowsInRange(c, d, view.x0, view.x1);
      const off = c.offset;
      const tot = c.total;
      const nm = c.name;
      for (let r = i; r < j; r++) {
        const t = tot[r];
        if (t < minValue || t <= 0) continue;
        const fx = (off[r] - vx0) * scale;
        const fw = t * scale;
        // Math.round(x) is floor(x + 0.5): `| 0` truncates, so step down for negatives. Far
        // off-canvas ends are clamped first, into int32 range.
        const a = fx < -1e9 ? -1e9 : fx + 0.5;
        let x0 = a | 0;
        if (x0 > a) x0 -= 1;
        const b = fx + fw > 1e9 ? 1e9 : fx + fw + 0.5;
        let x1 = b | 0;
        if (x1 > b) x1 -= 1;
        if (x1 - x0 >= minGapped) x1 -= gap;
        else if (x1 <= x0) x1 = x0 + 1;
        if (x0 < 0) x0 = 0;
        if (x1 > W) x1 = W;
        if (x1 <= x0) continue;
        const n = nm[r];
        let v;
        let mode = faded;
        let stripe = 0;
        if (match !== null && match[n] !== 0) v = matchPix;
        else if (diff) {
          const bt = c.beforeTotal[r];
          const at = c.afterTotal[r];
          if (match !== null) mode |= 1;
          v = palette.make(diffRgb(frameDelta(bt, at, diff.tb, diff.ta, diff.measure), diff.scale), mode);
          // Only the earlier run has it: striped, so that it reads as gone, not as shrunk.
          if (at === 0 && bt > 0) stripe = palette.make(0xf4f4f4, mode);
        } else if (share !== null) {
          if (match !== null) mode |= 1;
          v = palette.make(shareRgb((bySelf ? c.self[r] : t) / share.total), mode);
        } else if (match === null) {
          v = plain[n];
          if (v === 0) v = palette.color(n, mode);
        } else {
          mode |= 1;
          v = dimmed[n];
          if (v === 0) v = palette.color(n, mode);
        }
        // Most frames are a pixel or a few wide, where a store or a loop beats fill() (a
        // builtin call, ~0.5 µs).
        if (stripe !== 0) for (let x = x0; x < x1; x++) scan[x] = (x + d) & 4 ? stripe : v;
        else if (x1 - x0 === 1) scan[x0] = v;
        else if (x1 - x0 > 32) scan.fill(v, x0, x1);
        else for (let x = x0; x < x1; x++) scan[x] = v;
        any = true;
        painted += 1;
        if (fw >= labelPx) {
          const xs = fx / dpr;
          const la = xs > 0 ? xs : 0;
          const lb = xs + fw / dpr < view.width ? xs + fw / dpr : view.width;
          if (lb - la >= 3 * FONT_PX) labels.push(la, rowY(view, d), lb - la, n, mode);
        }
      }
    }
    const top = Math.round(rowY(view, d) * dpr);
    const next = Math.round((rowY(view, d) + view.rowH) * dpr);
    row(scan, top, next - gap, next, any);
  }
  return { labels, painted };
}

/**
 * Rasterise the frames of a view into `pix`, a Uint32Array of `W` × `H` device pixels
 * (`dpr` device pixels per CSS pixel); see rasterise for `scene` and the result.
 */
export function paintFrames(pix, W, H, dpr, scene) {
  pix.fill(pixel(scene.palette.bg));
  return rasterise(W, dpr, scene, (scan, top, bottom, next, any) => {
    if (!any) return;
    for (let y = Math.max(0, top); y < Math.min(H, bottom); y++) pix.set(scan, y * W);
  });
}

const strips = new WeakMap(); // canvas -> ImageData of one depth row, reused between paints

/**
 * Draw a view onto `ctx` (from setupCanvas): boxes, then labels. Returns frames painted.
 *
 * Boxes go onto the canvas one depth row at a time, through an ImageData one row high that is
 * reused: a canvas-sized ImageData would be 8 MB at 1920×1080 whose first write costs a page
 * fault per 4 kB (a measurable part of every page's first paint: docs/BENCHMARKS.md, "Figures behind the code") and a
 * full fill per paint. Canvas areas outside the visible rows are filled with the background.
 */
export function drawGraph(ctx, scene) {
  const canvas = ctx.canvas;
  const W = canvas.width;
  const H = canvas.height;
  const dpr = W / scene.view.width;
  const stripH = Math.ceil(scene.view.rowH * dpr) + 1;
  let img = strips.get(canvas);
  if (!img || img.width !== W || img.height !== stripH) {
    img = ctx.createImageData(W, stripH);
    strips.set(canvas, img);
  }
  const strip = new Uint32Array(img.data.buffer);
  const bgPix = pixel(scene.palette.bg);
  let covTop = H;
  let covEnd = 0;
  const { labels, painted } = rasterise(W, dpr, scene, (scan, top, bottom, next) => {
    if (next <= 0 || top >= H || next - top > stripH) return;
    for (let k = 0; k < bottom - top; k++) strip.set(scan, k * W);
    strip.fill(bgPix, (bottom - top) * W, (next - top) * W);
    ctx.putImageData(img, 0, top, 0, 0, W, next - top);
    covTop = Math.min(covTop, Math.max(0, top));
    covEnd = Math.max(covEnd, Math.min(H, next));
  });
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = cssColor(scene.palette.bg);
  if (covEnd <= covTop) ctx.fillRect(0, 0, W, H);
  else {
    if (covTop > 0) ctx.fillRect(0, 0, W, covTop);
    if (covEnd < H) ctx.fillRect(0, covEnd, W, H - covEnd);
  }
  ctx.restore();
  ctx.save();
  ctx.font = FONT;
  ctx.textBaseline = "middle";
  const h = scene.view.rowH - 1;
  const fg = labelColors(scene.fg);
  let style = "";
  for (let k = 0; k < labels.length; k += 5) {
    const [x, y, w, n, mode] = [labels[k], labels[k + 1], labels[k + 2], labels[k + 3], labels[k + 4]];
    const text = scene.palette.label(ctx, n, w - 2 * LABEL_PAD);
    if (!text) continue;
    const want = fg[mode];
    if (want !== style) ctx.fillStyle = style = want;
    // No maxWidth: `label` already cut the text to fit (widths of printable ASCII are exact in
    // the monospaced font, others measured), and a maxWidth makes the canvas measure every
    // label again (a fifth of the labels' time: docs/BENCHMARKS.md, "Figures behind the code").
    ctx.fillText(text, x + LABEL_PAD, y + h / 2 + 0.5);
  }
  ctx.restore();
  return painted;
}

/**
 * The label colours of the four modes (plain, dimmed, faded, dimmed and faded) from a scene's
 * `fg`: an array of four CSS colours (the stylesheet's `--fs-label*`), or one for plain labels.
 */
export function labelColors(fg) {
  return Array.isArray(fg) ? fg : [fg || "#000", "#666", "#777", "#999"];
}

/** A pixel value of `pixel` as 0xRRGGBB again. */
export function unpixel(p) {
  return ((p & 0xff) << 16) | (p & 0xff00) | ((p >>> 16) & 0xff);
}

/**
 * Colour (0xRRGGBB) and label mode of row `r` of chunk `c` at depth `d` in `scene`, as
 * `rasterise` paints it (which inlines this for speed): for exports that draw frame by frame.
 * Of a frame only the earlier run has, the stripe is left out (the SVG draws it plain).
 */
export function frameStyle(scene, c, r, d) {
  const { palette, zoomDepth, match, diff } = scene;
  const n = c.name[r];
  const faded = d < zoomDepth ? 2 : 0;
  if (match !== null && match[n] !== 0) return { rgb: unpixel(palette.match[faded]), mode: faded };
  const mode = faded | (match !== null ? 1 : 0);
  if (diff) {
    const rgb = diffRgb(frameDelta(c.beforeTotal[r], c.afterTotal[r], diff.tb, diff.ta, diff.measure), diff.scale);
    return { rgb: unpixel(palette.make(rgb, mode)), mode };
  }
  if (scene.share) {
    const v = scene.share.by === "self" ? c.self[r] : c.total[r];
    return { rgb: unpixel(palette.make(shareRgb(v / scene.share.total), mode)), mode };
  }
  return { rgb: unpixel(palette.color(n, mode)), mode };
}

/** `0xRRGGBB` as a CSS colour. */
export function cssColor(rgb) {
  return `#${(rgb & 0xffffff).toString(16).padStart(6, "0")}`;
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
