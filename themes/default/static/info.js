// What the page says of a frame: its name and facts (format.js's words, or diff.js's for a
// differential graph), for the tooltip, the exports and the info line under the toolbar (an
// aria-live region), which says the hovered frame, else the zoomed one, else the whole graph.

import { describeElided, describeFrame, formatValue, groupDigits } from "./format.js";

const $ = (id) => document.getElementById(id);

export class InfoLine {
  /** `v`: the viewer (main.js), whose graph, zoom and differential totals are described. */
  constructor(v) {
    this.v = v;
    this.nameNode = $("fs-info-name");
    this.factNode = $("fs-info-facts");
  }

  /** Name and facts of a frame (or of a grey mark of frames too narrow to draw). */
  describe(f) {
    const v = this.v;
    const d = v.diffTotals();
    if (f.elided) return describeElided(f, this.graphFacts(), !!d);
    const said = d && f.afterTotal !== undefined ? { name: f.name, facts: [...v.diff.describeDiffFrame(f, d), `depth ${f.depth}`] } : describeFrame(f, this.graphFacts());
    // A name renamed by the build says what the profile called it.
    if (f.raw) said.facts.push(`in the profile: ${f.raw}`);
    return said;
  }

  graphFacts() {
    const v = this.v;
    const m = v.g.manifest;
    return { total: m.total, unit: m.unit, decimals: m.decimals || 0, zoomTotal: v.zoom ? v.zoom.total : 0, zoomDepth: v.zoom ? v.zoom.depth : 0 };
  }

  /** The info line: frame `f`, else the zoomed frame, else the whole graph. */
  show(f) {
    const v = this.v;
    if (v.st.sandwich && !f) return; // the sandwich's panes keep the info line
    const g = v.g;
    if (!g || !g.manifest) return this.set("", []);
    const m = g.manifest;
    const shown = f || (v.zoom && v.zoom.info);
    if (shown) {
      const { name, facts } = this.describe(shown);
      this.set((f ? "" : "Zoomed: ") + name, facts);
    } else {
      const d = v.diffTotals();
      const places = m.decimals || 0;
      const totals = d ? `total ${formatValue(d.tb, m.unit, places)} → ${formatValue(d.ta, m.unit, places)}` : `total ${formatValue(m.total, m.unit, places)}`;
      this.set(g.meta.name, [`${totals} · ${groupDigits(m.frames || 0)} frames · ${m.depth} levels · ${groupDigits(Math.max(0, g.names.count - 1))} functions`]);
    }
  }

  /** Put `name` and `facts` on the info line. */
  set(name, facts) {
    this.nameNode.textContent = name;
    this.factNode.textContent = facts.join(" · ");
  }
}
