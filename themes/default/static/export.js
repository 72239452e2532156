// Export of the view on the canvas: as PNG (the canvas's own pixels) and as SVG, frame by frame,
// each box with a <title> tooltip (its name and numbers) so the file stays useful offline, as
// flamegraph.pl's SVG is. The SVG is built as text: every piece of a profile in it goes through
// `xmlText`. Pure apart from `download`, so node's test runner imports this file too.

import { MIN_PX, elidedSpans, pixelValue, rowY, rowsInRange, visibleDepths } from "./layout.js";
import { ELIDED_RGB, FONT, FONT_PX, cssColor, frameStyle, labelColors, unpixel } from "./draw.js";

const LABEL_PAD = 3;

/**
 * `s` as XML character data or an attribute value: `& < > " '` escaped, and characters XML 1.0
 * does not allow (control characters other than tab and newline, lone surrogates, U+FFFE and
 * U+FFFF) replaced by U+FFFD, so that any function name gives a well-formed file.
 */
export function xmlText(s) {
  return String(s)
    .replace(/[\u0000-\u0008\u000b-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/**
 * The frames of `scene` (draw.js's: view, chunks, palette, zoomDepth, match, diff, fg) on the
 * canvas's visible rows, as an SVG document of the canvas's CSS size: one <rect> per frame
 * drawn (as wide as on the canvas, at least MIN_PX), a <title> of `describe(chunk, row)` in
 * each frame's group, and the labels the canvas draws (`ctx` measures them: a 2D context with
 * the canvas font).
 */
export function svgOf(scene, describe, ctx, title = "flame graph") {
  const { view, chunks, palette } = scene;
  const fg = labelColors(scene.fg);
  const minValue = pixelValue(view) * MIN_PX;
  const scale = view.width / (view.x1 - view.x0);
  const [dlo, dhi] = visibleDepths(view);
  const h = view.rowH - 1;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${view.width}" height="${view.height}" viewBox="0 0 ${view.width} ${view.height}" font-family="${xmlText(FONT.replace(/^\S+\s/, ""))}" font-size="${FONT_PX}">`,
    `<title>${xmlText(title)}</title>`,
    `<rect width="100%" height="100%" fill="${cssColor(palette.bg)}"/>`,
  ];
  const round = (x) => Math.round(x * 100) / 100;
  const elided = scene.elided === undefined ? ELIDED_RGB : scene.elided;
  for (let d = dlo; d < dhi; d++) {
    const y = rowY(view, d);
    // The grey marks of frames too narrow to draw, as on the canvas: first, under the frames.
    const gone = elidedSpans(chunks, d, view.x0, view.x1, minValue);
    if (gone.length) {
      const fill = cssColor(unpixel(palette.make(elided, (d < scene.zoomDepth ? 2 : 0) | (scene.match !== null ? 1 : 0))));
      for (let k = 0; k < gone.length; k += 2) {
        let x0 = Math.round((gone[k] - view.x0) * scale);
        let x1 = Math.round((gone[k + 1] - view.x0) * scale);
        if (x1 - x0 >= 3) x1 -= 1;
        else if (x1 <= x0) x1 = x0 + 1;
        x0 = Math.max(0, x0);
        x1 = Math.min(view.width, x1);
        if (x1 <= x0) continue;
        out.push(`<rect class="fs-elided" x="${x0}" y="${round(y)}" width="${x1 - x0}" height="${h}" fill="${fill}"><title>frames too narrow to draw</title></rect>`);
      }
    }
    for (const c of chunks) {
      if (d < c.depthLo || d >= c.depthHi) continue;
      const [i, j] = rowsInRange(c, d, view.x0, view.x1);
      for (let r = i; r < j; r++) {
        const t = c.total[r];
        if (t < minValue || t <= 0) continue;
        const fx = (c.offset[r] - view.x0) * scale;
        const x0 = Math.max(0, fx);
        const x1 = Math.min(view.width, fx + t * scale);
        if (x1 <= x0) continue;
        const w = Math.max(x1 - x0 - (x1 - x0 >= 3 ? 1 : 0), MIN_PX);
        const { rgb, mode } = frameStyle(scene, c, r, d);
        out.push(`<g><title>${xmlText(describe(c, r))}</title><rect x="${round(x0)}" y="${round(y)}" width="${round(w)}" height="${h}" fill="${cssColor(rgb)}"/>`);
        if (x1 - x0 >= 3 * FONT_PX) {
          const text = palette.label(ctx, c.name[r], x1 - x0 - 2 * LABEL_PAD);
          if (text) out.push(`<text x="${round(x0 + LABEL_PAD)}" y="${round(y + h / 2 + 0.5)}" dominant-baseline="middle" fill="${fg[mode]}">${xmlText(text)}</text>`);
        }
        out.push("</g>");
      }
    }
  }
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** A file name from the parts of a view: letters, digits, `.`, `_` and `-` kept, runs of others one `-`. */
export function fileName(parts, ext) {
  const base = parts
    .filter(Boolean)
    .join("-")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 120);
  return `${base || "flamegraph"}.${ext}`;
}

/** Offer `blob` as a download named `name`. */
export function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}
