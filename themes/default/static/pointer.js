// From a pointer or a key on the canvas to the frame it means: hit testing (with a finger's
// reach for the grey marks of frames too narrow to draw), a tap that shows a frame and a second
// that zooms, a click that zooms, and the keyboard's moves between frames. What is then shown
// (outline, tooltip, info line) is the viewer's (main.js `setHover`, `setFocus`). Loaded once
// the first view is painted, or by the first event that needs it: the first view does without.

import { MIN_PX, chunksIn, depthAtY, elidedAt, frameAt, frameInfo, framesIn, pixelValue, valueAtX } from "./layout.js";

/** How far from a finger, in CSS pixels, a tap still finds a mark of frames too narrow to draw. */
const TOUCH_REACH = 10;
const ARROWS = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"];

export class Pointer {
  /** `v`: the viewer (main.js); `nav`: the lazy nav.js (arrow keys' moves). */
  constructor(v, nav) {
    this.v = v;
    this.nav = nav;
    this.lastElided = null; // the grey mark last hovered (elidedInfo), kept while its count loads
    this.tapped = null; // id of the frame a tap showed (a second tap on it zooms)
  }

  /** A new graph: nothing of the old one is kept. */
  reset() {
    this.lastElided = null;
    this.tapped = null;
  }

  /** The frame (frameInfo) or grey mark (elidedInfo) under a pointer event, else null. */
  hitAt(e) {
    const v = this.v;
    const view = v.painter.view;
    if (!view || !v.g || !v.g.names) return null;
    const r = v.canvas.getBoundingClientRect();
    const d = depthAtY(view, e.clientY - r.top);
    if (d < 0) return null;
    const x = valueAtX(view, e.clientX - r.left);
    const min = pixelValue(view) * MIN_PX;
    const hit = frameAt(v.drawn, d, x, min);
    if (hit) return frameInfo(hit.chunk, hit.row, v.g.names);
    // A finger reaches a grey mark (often a pixel or two wide) from TOUCH_REACH px away.
    const reach = v.pointerType === "touch" ? pixelValue(view) * TOUCH_REACH : 0;
    const gone = elidedAt(v.drawn, d, x, view.x0, view.x1, min, reach);
    return gone ? this.elidedInfo(d, gone.lo, gone.hi) : null;
  }

  /**
   * The grey mark of frames too narrow to draw at depth `d`, [lo, hi): { elided, id, depth,
   * offset, total, count }. Its total is known from the drawn frames; its count from the
   * chunks that hold those frames, fetched on the first hover (the view did not need them),
   * after which the tooltip and the info line say it.
   */
  elidedInfo(d, lo, hi) {
    const id = `elided:${d}:${lo}:${hi}`;
    if (this.lastElided && this.lastElided.id === id) return this.lastElided;
    const f = { elided: true, id, depth: d, offset: lo, total: hi - lo, self: 0, name: "", count: null };
    this.lastElided = f;
    const v = this.v;
    const g = v.g;
    const entries = chunksIn(g.manifest, d, lo, hi);
    const done = () => {
      f.count = framesIn(entries.map((c) => g.source.ready(c)), d, lo, hi).count;
      if (v.hover === f) v.setHover(f, v.pointer, true);
    };
    if (entries.every((c) => g.source.ready(c))) done();
    else {
      Promise.all(entries.map((c) => g.source.chunk(c))).then(done, () => {
        f.count = -1;
        if (v.hover === f) v.setHover(f, v.pointer, true);
        v.showStatus();
      });
    }
    return f;
  }

  onMove(e) {
    this.v.setHover(this.hitAt(e), e);
  }

  onClick(e) {
    const v = this.v;
    let f = this.hitAt(e);
    if (v.pointerType === "touch") {
      // No hover on a touch screen: the first tap on a frame shows it (outline, tooltip, info
      // line), a second tap on the same frame zooms to it.
      const again = f && this.tapped === f.id;
      this.tapped = f ? f.id : null;
      if (!again) {
        v.setHover(f, e);
        return;
      }
      this.tapped = null;
    }
    if (f && f.elided) {
      // A grey mark: zoom to the frame that called them, where they have more room.
      const p = frameAt(v.drawn, f.depth - 1, f.offset, pixelValue(v.painter.view) * MIN_PX);
      f = p ? frameInfo(p.chunk, p.row, v.g.names) : null;
    }
    if (!f) return;
    if (f.depth === 0) v.resetZoom();
    else v.zoomTo(f);
    v.renderNow();
  }

  /** Where the keyboard starts: the zoomed frame, else the root. */
  startFrame() {
    const v = this.v;
    if (v.zoom && v.zoom.info) return v.zoom.info;
    const view = v.painter.view;
    const hit = view && frameAt(v.drawn, 0, view.x0);
    return hit ? frameInfo(hit.chunk, hit.row, v.g.names) : null;
  }

  /** Arrow keys move between frames (parent, first child, neighbours); Enter zooms to the frame. */
  onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const v = this.v;
    const f = v.focus || this.startFrame();
    const view = v.painter.view;
    if (!f || !view) return;
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      if (f.depth === 0) v.resetZoom();
      else v.zoomTo(f);
      v.setFocus(f);
      v.renderNow();
      return;
    }
    if (!this.nav.m) {
      // An arrow key before nav.js is in (it is asked for when the canvas gets the focus):
      // handled once it arrives.
      if (!ARROWS.includes(e.key)) return;
      e.preventDefault();
      v.withModule(this.nav, () => this.onKey(e));
      return;
    }
    const { keyDirection, step } = this.nav.m;
    const dir = keyDirection(e.key, v.st.icicle);
    if (!dir) return;
    e.preventDefault();
    const hit = step(v.drawn, f, dir, pixelValue(view) * MIN_PX);
    if (!hit) return;
    const next = frameInfo(hit.chunk, hit.row, v.g.names);
    // Only frames on the canvas: not the neighbours outside a zoom.
    if (next.offset + next.total <= view.x0 || next.offset >= view.x1) return;
    v.setFocus(next);
  }
}
