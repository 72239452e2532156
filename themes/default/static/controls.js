// The toolbar: its buttons and menus change the state (the URL's, state.js) and ask the viewer
// to show it; `apply()` makes every control show the state, after a click, a link or Back.

import { hasLeftHeavy } from "./fetch.js";
import { copyText } from "./ui.js";

const $ = (id) => document.getElementById(id);
const each = (selector, fn) => document.querySelectorAll(selector).forEach(fn);

export class Controls {
  /** `v`: the viewer (main.js). */
  constructor(v) {
    this.v = v;
    this.copiedTimer = 0;
  }

  /** Wire the toolbar's controls to the viewer. */
  bind() {
    const v = this.v;
    const st = () => v.st;
    $("fs-case").addEventListener("click", () => {
      st().caseSensitive = !st().caseSensitive;
      this.apply();
      v.updateUrl();
      v.applySearch();
    });
    $("fs-reset").addEventListener("click", () => v.resetZoom());
    $("fs-icicle").addEventListener("click", () => {
      st().icicle = !st().icicle;
      v.painter.scrollTo(v.zoom ? v.zoom.depth : "root");
      this.apply();
      v.updateUrl();
      v.requestRender();
    });
    $("fs-left")?.addEventListener("click", () => v.toggleLeftHeavy());
    each("#fs-diffmode button[data-measure]", (b) =>
      b.addEventListener("click", () => {
        st().measure = b.dataset.measure;
        this.apply();
        v.updateUrl();
        v.painter.invalidate();
        v.requestRender();
      }),
    );
    each("#fs-layout button[data-layout]", (b) =>
      b.addEventListener("click", () => {
        if (st().layout === b.dataset.layout) return;
        st().layout = b.dataset.layout;
        // Offsets differ between layouts: the zoom does not carry over.
        st().zoom = null;
        v.updateUrl();
        v.loadGraph();
      }),
    );
    each("#fs-views button[data-view]", (b) =>
      b.addEventListener("click", () => {
        st().view = b.dataset.view;
        this.apply();
        v.updateUrl();
        v.showTable();
        v.requestRender();
      }),
    );
    v.select.addEventListener("change", () => {
      const meta = v.graphs[v.select.selectedIndex];
      st().graph = meta === v.shownGraph() ? null : meta.name;
      st().zoom = null;
      v.updateUrl();
      v.loadGraph();
    });
    $("fs-copy").addEventListener("click", async () => {
      const ok = await copyText(location.href);
      const s = $("fs-copied");
      s.textContent = ok ? "Link copied" : "Copy failed: the link is in the address bar";
      clearTimeout(this.copiedTimer);
      this.copiedTimer = setTimeout(() => (s.textContent = ""), 2500);
    });
    $("fs-palette")?.addEventListener("change", (e) => {
      // The build's palette is the default: a link names only another one.
      const m = v.g && v.g.manifest;
      st().palette = m && e.target.value === m.palette ? null : e.target.value;
      this.apply();
      v.updateUrl();
      v.requestRender();
    });
    // The toolbar's fold (phones): its other controls behind one button.
    $("fs-tools").addEventListener("click", () => {
      const open = document.querySelector(".fs-toolbar").classList.toggle("fs-toolbar-open");
      $("fs-tools").setAttribute("aria-expanded", String(open));
    });
    // A comparison's legend keeps one line on a phone until tapped.
    const legend = $("fs-legend");
    if (legend) legend.addEventListener("click", () => legend.classList.toggle("fs-open"));
  }

  /** Make the controls show the state. */
  apply() {
    const v = this.v;
    const st = v.st;
    v.app.dataset.view = st.view;
    v.app.dataset.mode = st.sandwich ? "sandwich" : "";
    // The downloads are of the graph's canvas, which the sandwich replaces.
    for (const id of ["fs-png", "fs-svg"]) $(id).disabled = !!st.sandwich;
    each("#fs-views button[data-view]", (b) => b.setAttribute("aria-pressed", String(b.dataset.view === st.view)));
    $("fs-case").setAttribute("aria-pressed", String(st.caseSensitive));
    const pal = $("fs-palette");
    const palette = v.paletteName();
    if (pal && pal.value !== palette) pal.value = palette;
    const key = $("fs-palette-key");
    if (key) key.hidden = palette !== "lang";
    // The share palettes' scale, and which share it is.
    const shares = $("fs-share-key");
    if (shares) {
      shares.hidden = palette !== "self" && palette !== "total";
      $("fs-share-text").textContent = `${palette === "self" ? "Self" : "Total"} share: 0% → 100% (25% half way)`;
    }
    $("fs-icicle").setAttribute("aria-pressed", String(st.icicle));
    const leftButton = $("fs-left");
    const m = v.g && v.g.manifest;
    if (leftButton) {
      leftButton.setAttribute("aria-pressed", String(st.layout === "left"));
      // A graph built before version 12 has no left-heavy offsets.
      leftButton.disabled = !!(m && !hasLeftHeavy(m) && m.layout !== "left");
    }
    each("#fs-diffmode button[data-measure]", (b) => b.setAttribute("aria-pressed", String(b.dataset.measure === st.measure)));
    const diff = v.diff;
    const sides = diff ? diff.sidesOf(m && m.diff) : {};
    each("#fs-layout button[data-layout]", (b) => {
      b.setAttribute("aria-pressed", String(b.dataset.layout === st.layout));
      // What the two counts are: two runs, or a CPI graph's instructions and cycles.
      const side = sides[b.dataset.layout];
      if (side) {
        b.textContent = diff.sideLabel(side);
        b.title = `Widths of ${side} alone`;
      } else if (diff) {
        b.textContent = diff.bothLabel(m && m.diff);
      }
    });
    // The table's columns of each side, in the same words as the widths' buttons.
    if (diff && sides.before) {
      each('.fs-difftable [data-sort$="_before"]', (b) => (b.textContent = diff.sideLabel(sides.before)));
      each('.fs-difftable [data-sort="self"], .fs-difftable [data-sort="total"]', (b) => (b.textContent = diff.sideLabel(sides.after)));
    }
    this.showLegend();
    $("fs-reset").disabled = !v.zoom;
    if (v.input.value !== st.query) v.input.value = st.query;
  }

  /** The legend of a comparison's colours. */
  showLegend() {
    const v = this.v;
    const node = $("fs-legend-text");
    const m = v.g && v.g.manifest;
    if (!node) return;
    node.textContent = m && m.diff && v.diff ? v.diff.legendText(m.diff, v.st.measure, m.unit, m.decimals || 0) : "";
  }
}
