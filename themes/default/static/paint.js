// Painting: the view for the box's size, zoom and scroll, the canvas picture (drawn again only
// when something drawn changed) and the hovered frame's outline on the overlay canvas.

import { frameRect, scrollForDepth } from "./layout.js";
import { drawGraph, drawHover, parseHex, setupCanvas } from "./draw.js";

export const ROW_H = 18;

export class Painter {
  /** `mark`: the performance mark of each complete paint (`flamesite:painted` by default). */
  constructor({ app, scroll, spacer, canvas, overlay, mark = "flamesite:painted" }) {
    this.mark = mark;
    this.app = app;
    this.scroll = scroll;
    this.spacer = spacer;
    this.canvas = canvas;
    this.overlay = overlay;
    this.view = null; // the view last drawn
    this.scene = null; // the scene last drawn (drawGraph's), for the SVG export
    this.painted = null; // { g, key, match, chunks, complete } of the picture on the canvas
    this.outlined = false; // the overlay shows an outline
    this.paints = 0; // complete paints
    this.paintMs = 0;
    this.pendingScroll = "root"; // a depth to scroll to at the next view, "root", or null
    this.box = null; // { height, contentH, scrollTop } of the last view, to keep its bottom on a resize
  }

  /** Scroll to depth `d` ("root": the root view) when the next view is computed. */
  scrollTo(d) {
    this.pendingScroll = d;
  }

  /** Draw the whole picture again at the next paint (a context loss, a change of colours). */
  invalidate() {
    this.painted = null;
  }

  /** True when nothing of graph `g` has been drawn yet. */
  isFirst(g) {
    return !this.painted || this.painted.g !== g;
  }

  /**
   * The view for the current size, zoom ([x0, x1)), orientation and scroll; sizes the spacer.
   * Null when the box is hidden.
   */
  computeView(depthCount, x0, x1, icicle) {
    const height = this.scroll.clientHeight;
    if (height === 0) return null;
    // Size the spacer before reading the width: with classic scrollbars a graph taller than
    // the box gets its scrollbar now, so the canvas is sized once, not twice (a 1920×1080
    // canvas reallocated and painted again on the resize).
    const contentH = Math.max(depthCount * ROW_H, height);
    if (this.spacer.style.height !== `${contentH}px`) this.spacer.style.height = `${contentH}px`;
    const width = this.scroll.clientWidth;
    if (width === 0) return null;
    const view = { x0, x1, width, height, rowH: ROW_H, depthCount, icicle, scrollTop: 0, minHeight: height };
    if (this.pendingScroll !== null) {
      this.scroll.scrollTop = scrollForDepth(view, this.pendingScroll === "root" ? 0 : this.pendingScroll);
      this.pendingScroll = null;
    }
    else if (!icicle && this.box && this.box.height !== height) {
      // The box changed height (the toolbar wrapped when the Matched line appeared, the window
      // was resized): a flame graph keeps what is at its bottom, the root, in place.
      const gap = this.box.contentH - this.box.scrollTop - this.box.height;
      this.scroll.scrollTop = Math.max(0, contentH - height - gap);
    }
    view.scrollTop = this.scroll.scrollTop;
    this.box = { height, contentH, scrollTop: view.scrollTop };
    return view;
  }

  /**
   * Decide whether scene `s` needs a paint: { same, early, key, bg, fg }. `same`: the canvas
   * already shows it (or stays blank while the first view waits for its files: painting it
   * white costs the first view a full canvas to fill and upload before its chunks can show).
   * `s`: { g, view, chunks, waiting, zoomDepth, match, early }.
   */
  compare(s) {
    const dpr = window.devicePixelRatio || 1;
    const css = getComputedStyle(this.app);
    const bg = css.getPropertyValue("--fs-canvas-bg");
    // Label colours of plain, dimmed, faded, and dimmed and faded frames.
    const fg = ["--fs-label", "--fs-label-dim", "--fs-label-faded", "--fs-label-faded-dim"].map((k, i) => css.getPropertyValue(k).trim() || ["#000", "#666", "#777", "#999"][i]);
    const v = s.view;
    // Redraw only when something drawn changed: a chunk or name file that arrives while the
    // view still waits for others, a resize or a scroll event that moves nothing, would
    // otherwise repaint the same picture (a full canvas, and a compositor upload, each time).
    const elided = css.getPropertyValue("--fs-elided");
    const key = [s.g.meta.name, v.x0, v.x1, v.width, v.height, v.scrollTop, v.icicle, dpr, s.zoomDepth, s.palette || "", bg, elided, ...fg].join("|");
    const p = this.painted;
    const same =
      (!p && s.chunks.length === 0 && s.waiting > 0) ||
      s.early ||
      (p && p.g === s.g && p.key === key && p.match === s.match && p.chunks.length === s.chunks.length && p.chunks.every((c, i) => c === s.chunks[i]));
    return { same, key, bg, fg, dpr, elided: elided.trim() ? parseHex(elided) : undefined };
  }

  /** Paint scene `s` (see `compare`) with the decision `d` it made; marks a complete paint once. */
  paint(s, d, hover) {
    this.view = s.view;
    if (!d.same) {
      const ctx = setupCanvas(this.canvas, s.view.width, s.view.height, d.dpr);
      const t0 = performance.now();
      s.g.palette.setBackground(parseHex(d.bg));
      this.scene = { view: s.view, chunks: s.chunks, palette: s.g.palette, zoomDepth: s.zoomDepth, match: s.match, diff: s.diff, share: s.share, fg: d.fg, elided: d.elided };
      drawGraph(ctx, this.scene);
      this.outline(hover);
      this.paintMs = performance.now() - t0;
    }
  }

  /**
   * After a paint: count a complete one (every file of the view in, or failed) and remember
   * the picture. Returns true when this paint completed the view. The same picture, now
   * complete because the chunks it still waited for failed, counts as complete then.
   */
  settle(s, d) {
    const p = this.painted;
    let completed = false;
    if (s.waiting === 0 && !(d.same && p && p.complete)) {
      this.paints += 1;
      performance.mark(this.mark);
      completed = true;
    }
    if (!s.early && (!d.same || p)) this.painted = { g: s.g, key: d.key, match: s.match, chunks: s.chunks, complete: s.waiting === 0 };
    return completed;
  }

  /**
   * The hovered frame's outline on the overlay canvas. The overlay is sized and cleared only
   * when it shows or showed an outline: an untouched one is transparent, and a full-size
   * canvas cleared on every paint is a 1920×1080 buffer to fill and upload for nothing.
   */
  outline(f) {
    const v = this.view;
    if (!v) return;
    if (!f && !this.outlined) return;
    const ctx = setupCanvas(this.overlay, v.width, v.height, window.devicePixelRatio || 1);
    drawHover(ctx, v, f ? frameRect(v, f.depth, f.offset, f.total) : null);
    this.outlined = !!f;
  }
}
