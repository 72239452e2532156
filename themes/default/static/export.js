// Export of the view on the canvas: as PNG (the canvas's own pixels) and as SVG, frame by frame,
// each box with a <title> tooltip (its name and numbers) so the file stays useful offline, as
// flamegraph.pl's SVG is. Both start with a header that says what they show (the graph and the
// page, the zoom, the search and its share, the colours). The SVG also zooms on a click and
// searches by itself, opened as a file, with a small script of its own (SVG_SCRIPT) that reads
// only the frames' numbers, titles and colours; the PNG of all rows, drawn from an SVG, leaves
// out the line of those controls and the script, which do nothing in a picture. The SVG is
// built as text: every piece of a profile in it goes through `xmlText`. Files are named by the
// series, the run (of a comparison, both runs), the graph and the zoomed frame. Pure apart from
// `download` and the page's side at the end (the header of the page's view, the frames of all
// rows, the downloads), so node's test runner imports this file too.

import { MIN_PX, elidedSpans, frameInfo, pixelValue, rowY, rowsInRange, visibleDepths } from "./layout.js";
import { ELIDED_RGB, FONT, FONT_PX, MATCH_RGB, SHARE_HIGH, SHARE_LOW, cssColor, frameStyle, labelColors, unpixel } from "./draw.js";
import { FetchPlan } from "./plan.js";

const LABEL_PAD = 3;
/** Height of one line of an export's header, CSS pixels. */
export const HEADER_LINE = 18;

/** Height of an export's header of `lines` lines. */
export function headerHeight(lines) {
  return lines.length ? lines.length * HEADER_LINE + 8 : 0;
}

/**
 * `header` ({ lines, scale, fg }) with its lines broken at spaces to fit `width` CSS pixels of
 * the monospaced font: the lines an export draws, and `scaleLine`, the drawn line the scale's
 * swatches start (the first of the header's second line), which is indented by them. A word
 * longer than a line is cut.
 */
export function wrapHeader(header, width) {
  const per = FONT_PX * 0.6;
  const lines = [];
  let scaleLine = -1;
  header.lines.forEach((line, i) => {
    const swatches = i === 1 && header.scale;
    if (swatches) scaleLine = lines.length;
    let room = Math.max(10, Math.floor((width - 12 - (swatches ? swatchesWidth(header.scale) : 0)) / per));
    let rest = line;
    while (rest.length > room) {
      let cut = rest.lastIndexOf(" ", room);
      if (cut <= 0) cut = room;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(cut).trimStart();
      room = Math.max(10, Math.floor((width - 12) / per));
    }
    lines.push(rest);
  });
  return { ...header, lines, scaleLine };
}

/** Width of a scale's swatches and the space after them. */
function swatchesWidth(scale) {
  return 18 * scale.length + 8;
}

/**
 * Where a wrapped header's pieces go, in CSS pixels, for the SVG and the PNG alike: its
 * lines' text (the first in bold; `y` is the middle of the line) and the scale's swatches
 * before the words of the line they start.
 */
function headerItems(header) {
  const texts = [];
  const swatches = [];
  header.lines.forEach((text, i) => {
    const y = 4 + (i + 0.5) * HEADER_LINE;
    let x = 6;
    if (i === header.scaleLine) {
      header.scale.forEach((rgb, k) => swatches.push({ x: x + 18 * k, y: y - 6, w: 18, h: 12, rgb }));
      x += swatchesWidth(header.scale);
    }
    texts.push({ x, y, text, bold: i === 0 });
  });
  return { texts, swatches };
}

/**
 * The SVG's own script: a click on a frame zooms to it (its ancestors across the width, what
 * is outside it hidden), "Reset zoom" and a click on the background go back, "Search" asks for
 * a regular expression and colours the frames it matches, saying their share of the graph. It
 * reads each frame's depth, offset and value (data attributes) and its name (the first line of
 * its <title>), and writes only attributes and textContent: a name never becomes markup. A
 * frame's colour and label ink without the page's search are the `data-fill` of its rect and
 * text when the file was exported under a search (else their `fill`): the file's own search,
 * cleared or not, colours the others in those, and the grey marks too.
 */
function svgScript() {
  const svg = document.documentElement;
  const W = Number(svg.getAttribute("width"));
  const X0 = Number(svg.dataset.x0), X1 = Number(svg.dataset.x1);
  const PX = Number(svg.dataset.fontPx) * 0.6, MATCH = svg.dataset.match;
  const base = (e) => e.dataset.fill || e.getAttribute("fill");
  const frames = [...document.querySelectorAll("g.fs-f")].map((g) => ({
    g, rect: g.querySelector("rect"), text: g.querySelector("text"),
    name: g.querySelector("title").textContent.split("\n")[0],
    d: Number(g.dataset.d), o: Number(g.dataset.o), v: Number(g.dataset.v),
    fill: base(g.querySelector("rect")),
    ink: g.querySelector("text") && base(g.querySelector("text")),
  }));
  const status = document.getElementById("fs-status");
  const fit = (name, w) => {
    const n = Math.floor((w - 6) / PX);
    return n < 3 ? "" : name.length <= n ? name : name.slice(0, n - 1) + "\u2026";
  };
  const place = (f, x, w) => {
    f.g.style.display = "";
    f.rect.setAttribute("x", x.toFixed(2));
    f.rect.setAttribute("width", Math.max(w >= 3 ? w - 1 : w, 0.5).toFixed(2));
    if (f.text) { f.text.setAttribute("x", (x + 3).toFixed(2)); f.text.textContent = fit(f.name, w); }
  };
  const zoom = (z) => {
    const [lo, hi, depth] = z ? [z.o, z.o + z.v, z.d] : [X0, X1, 0];
    const scale = W / (hi - lo);
    for (const f of frames) {
      if (z && f.d < depth) {
        if (f.o <= lo && f.o + f.v >= hi) place(f, 0, W); else f.g.style.display = "none";
      } else if (f.o + f.v <= lo || f.o >= hi) {
        f.g.style.display = "none";
      } else {
        const x0 = Math.max(0, (f.o - lo) * scale), x1 = Math.min(W, (f.o + f.v - lo) * scale);
        place(f, x0, x1 - x0);
      }
    }
    for (const e of document.querySelectorAll(".fs-elided")) e.style.display = z ? "none" : "";
    document.getElementById("fs-unzoom").style.opacity = z ? 1 : 0.4;
  };
  const search = (re) => {
    const spans = [];
    for (const f of frames) {
      const hit = re !== null && re.test(f.name);
      f.rect.setAttribute("fill", hit ? MATCH : f.fill);
      if (f.text) f.text.setAttribute("fill", hit ? "#000" : f.ink);
      if (hit) spans.push([f.o, f.o + f.v]);
    }
    for (const e of document.querySelectorAll(".fs-elided")) e.setAttribute("fill", base(e));
    spans.sort((a, b) => a[0] - b[0]);
    let covered = 0, end = -Infinity;
    for (const [a, b] of spans) { if (b > end) { covered += b - Math.max(a, end); end = b; } }
    const root = frames.find((f) => f.d === 0);
    const total = root ? root.v : X1 - X0;
    status.textContent = re === null ? "Click a frame to zoom in." : "Matched in this file: " + (100 * covered / total).toFixed(2) + "% of the graph (" + spans.length + " frames)";
  };
  for (const f of frames) f.g.addEventListener("click", (e) => { e.stopPropagation(); zoom(f); });
  document.getElementById("fs-bg").addEventListener("click", () => zoom(null));
  document.getElementById("fs-unzoom").addEventListener("click", () => zoom(null));
  document.getElementById("fs-find").addEventListener("click", () => {
    const q = prompt("Search functions (regular expression); empty clears the search");
    if (q === null) return;
    try { search(q === "" ? null : new RegExp(q)); } catch (err) { status.textContent = "Not a regular expression: " + err.message; }
  });
}

/** The script as the file carries it: the function, called. */
export const SVG_SCRIPT = `(${svgScript})();`;

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
 * the canvas font). Under a search, a frame's colour and label ink without it are in their
 * `data-fill`, for the file's own search. With a header, a line of the file's own controls
 * under it and their script, unless `controls` is false (a picture: the PNG of all rows).
 */
export function svgOf(scene, describe, ctx, title = "flame graph", header = { lines: [] }, { controls = true } = {}) {
  const { view, chunks, palette } = scene;
  const fg = labelColors(scene.fg);
  const minValue = pixelValue(view) * MIN_PX;
  const scale = view.width / (view.x1 - view.x0);
  const [dlo, dhi] = visibleDepths(view);
  const h = view.rowH - 1;
  header = wrapHeader(header, view.width);
  // Below the header's lines, one of the file's own: its controls and what a search found.
  controls = controls && header.lines.length > 0;
  const top = headerHeight(controls ? [...header.lines, ""] : header.lines);
  const height = view.height + top;
  const text = xmlText(header.fg || fg[0]);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${view.width}" height="${height}" viewBox="0 0 ${view.width} ${height}" font-family="${xmlText(FONT.replace(/^\S+\s/, ""))}" font-size="${FONT_PX}" data-x0="${view.x0}" data-x1="${view.x1}" data-font-px="${FONT_PX}" data-match="${cssColor(MATCH_RGB)}">`,
    `<title>${xmlText(title)}</title>`,
    `<rect id="fs-bg" width="100%" height="100%" fill="${cssColor(palette.bg)}"/>`,
  ];
  // The header: what the file shows (its title in bold, a comparison's or a share palette's
  // scale as swatches before the colours' words), then the file's controls.
  const items = headerItems(header);
  for (const w of items.swatches) out.push(`<rect class="fs-scale" x="${w.x}" y="${w.y}" width="${w.w}" height="${w.h}" fill="${cssColor(w.rgb)}"/>`);
  for (const t of items.texts) {
    out.push(`<text class="fs-head" x="${t.x}" y="${t.y}" dominant-baseline="middle" fill="${text}"${t.bold ? ' font-weight="bold"' : ""}>${xmlText(t.text)}</text>`);
  }
  if (controls) {
    const y = 4 + (header.lines.length + 0.5) * HEADER_LINE;
    const link = `dominant-baseline="middle" fill="${text}" text-decoration="underline" style="cursor:pointer"`;
    out.push(`<text id="fs-unzoom" x="6" y="${y}" ${link} opacity="0.4">Reset zoom</text>`);
    out.push(`<text id="fs-find" x="${6 + 12 * FONT_PX * 0.6}" y="${y}" ${link}>Search</text>`);
    out.push(`<text id="fs-status" x="${6 + 20 * FONT_PX * 0.6}" y="${y}" dominant-baseline="middle" fill="${text}">Click a frame to zoom in.</text>`);
  }
  out.push(`<g id="fs-frames" transform="translate(0 ${top})">`);
  const round = (x) => Math.round(x * 100) / 100;
  const elided = scene.elided === undefined ? ELIDED_RGB : scene.elided;
  const unsearched = { ...scene, match: null };
  for (let d = dlo; d < dhi; d++) {
    const y = rowY(view, d);
    // The grey marks of frames too narrow to draw, as on the canvas: first, under the frames.
    const gone = elidedSpans(chunks, d, view.x0, view.x1, minValue);
    if (gone.length) {
      const faded = d < scene.zoomDepth ? 2 : 0;
      const fill = cssColor(unpixel(palette.make(elided, faded | (scene.match !== null ? 1 : 0))));
      // Dimmed by a search: the mark's own grey as well, for the file's own search.
      const plain = cssColor(unpixel(palette.make(elided, faded)));
      const own = plain !== fill ? ` data-fill="${plain}"` : "";
      for (let k = 0; k < gone.length; k += 2) {
        let x0 = Math.round((gone[k] - view.x0) * scale);
        let x1 = Math.round((gone[k + 1] - view.x0) * scale);
        if (x1 - x0 >= 3) x1 -= 1;
        else if (x1 <= x0) x1 = x0 + 1;
        x0 = Math.max(0, x0);
        x1 = Math.min(view.width, x1);
        if (x1 <= x0) continue;
        out.push(`<rect class="fs-elided" x="${x0}" y="${round(y)}" width="${x1 - x0}" height="${h}" fill="${fill}"${own}><title>frames too narrow to draw</title></rect>`);
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
        // Its colour and label ink without the search, where they differ.
        const own = frameStyle(unsearched, c, r, d);
        const fill = own.rgb !== rgb ? ` data-fill="${cssColor(own.rgb)}"` : "";
        out.push(`<g class="fs-f" data-d="${d}" data-o="${c.offset[r]}" data-v="${t}"><title>${xmlText(describe(c, r))}</title><rect x="${round(x0)}" y="${round(y)}" width="${round(w)}" height="${h}" fill="${cssColor(rgb)}"${fill}/>`);
        if (x1 - x0 >= 3 * FONT_PX) {
          const text = palette.label(ctx, c.name[r], x1 - x0 - 2 * LABEL_PAD);
          const ink = own.mode !== mode ? ` data-fill="${fg[own.mode]}"` : "";
          if (text) out.push(`<text x="${round(x0 + LABEL_PAD)}" y="${round(y + h / 2 + 0.5)}" dominant-baseline="middle" fill="${fg[mode]}"${ink}>${xmlText(text)}</text>`);
        }
        out.push("</g>");
      }
    }
  }
  out.push("</g>");
  if (controls) out.push(`<script><![CDATA[${SVG_SCRIPT}]]></script>`);
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/**
 * The PNG's picture: `canvas` (device pixels, `dpr` per CSS pixel) under the header's lines,
 * on a new canvas made by `make(width, height)`.
 */
export function withHeader(canvas, dpr, header, bg, fg, make) {
  header = wrapHeader(header, canvas.width / dpr);
  const top = Math.round(headerHeight(header.lines) * dpr);
  const out = make(canvas.width, canvas.height + top);
  const x = out.getContext("2d");
  x.fillStyle = bg;
  x.fillRect(0, 0, out.width, top);
  x.textBaseline = "middle";
  const items = headerItems(header);
  for (const w of items.swatches) {
    x.fillStyle = cssColor(w.rgb);
    x.fillRect(w.x * dpr, w.y * dpr, w.w * dpr, w.h * dpr);
  }
  x.fillStyle = fg;
  for (const t of items.texts) {
    x.font = `${t.bold ? "bold " : ""}${FONT.replace(/^\d+px/, `${Math.round(FONT_PX * dpr)}px`)}`;
    x.fillText(t.text, t.x * dpr, t.y * dpr);
  }
  x.drawImage(canvas, 0, top);
  return out;
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

/**
 * A run's slug less the folder of its series, when the slug starts with it (of series `api`,
 * `api/2026-11-20` is `2026-11-20`; a run that is its series' only file, `api`, is nothing).
 * The folder is the series' name made URL-safe, as the build makes slugs.
 */
function runPart(slug, series) {
  const folder = series.replace(/[^A-Za-z0-9._-]/g, "_").toLowerCase();
  const lower = slug.toLowerCase();
  if (lower === folder) return "";
  return lower.startsWith(`${folder}/`) ? slug.slice(folder.length + 1) : slug;
}

/**
 * The first parts of an export's file name: the series and the run, of a comparison the series,
 * the earlier run, `vs` and the later run. `data` holds the viewer's `data-export-series`,
 * `data-export-run` and, on a comparison, `data-export-before` (a `dataset`), which
 * profile.html and compare.html give: runs by their slugs (`fileName` makes a `/` a `-`).
 * Without them (a theme's own viewer) the last folder of the page's `path`.
 */
export function pageParts(data, path) {
  const series = data.exportSeries;
  if (!series) return [path.replace(/\/(index\.html)?$/, "").split("/").pop().replace(/\.html$/, "")];
  const run = runPart(data.exportRun || "", series);
  return data.exportBefore ? [series, runPart(data.exportBefore, series), "vs", run] : [series, run];
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


// ---- the page's side: `app` is main.js's viewer -------------------------------------------------

const $ = (id) => document.getElementById(id);

/** An export's file name: the series and the run or runs, the graph, the zoomed frame. */
function exportName(app, ext) {
  const page = pageParts($("fs-app").dataset, location.pathname);
  return fileName([...page, app.g && app.g.meta.name, app.zoom && app.zoom.info && app.zoom.info.name], ext);
}

/**
 * What an export says above the graph: its title (the graph, the page), then the zoom, the
 * search with what it matched, and the colours, with a comparison's or a share palette's
 * scale as colour swatches (`scale`, low to high).
 */
export function exportHeader(app) {
  const m = app.g.manifest;
  const unit = app.g.meta.unit && app.g.meta.unit !== app.g.meta.name ? ` (${app.g.meta.unit})` : "";
  const parts = [];
  if (app.zoom && app.zoom.info) parts.push(`Zoomed to ${app.zoom.info.name}`);
  if (app.st.query) {
    const matched = $("fs-matched").textContent.trim();
    parts.push(`Search /${app.st.query}/${app.st.matchCase ? "" : "i"}${matched ? `: ${matched}` : ""}`);
  }
  let scale = null;
  if (m.diff && app.diff) {
    parts.push(`Colours: ${app.diff.legendText(m.diff, app.st.measure, m.unit, m.decimals || 0)}`);
    scale = [0x2660dc, 0xe0e0e0, 0xdc261e];
  } else {
    const palette = app.paletteName();
    const option = $("fs-palette") && [...$("fs-palette").options].find((o) => o.value === palette);
    let colours = option ? option.textContent : `Colours: ${palette}`;
    if (palette === "self" || palette === "total") {
      scale = [SHARE_LOW, SHARE_HIGH];
      colours += ": 0% → 100% of the total (25% half way)";
    }
    const key = $("fs-palette-key");
    if (key && !key.hidden) colours += ` (${[...key.children].map((k) => k.textContent).join(", ")})`;
    parts.push(colours);
  }
  const fg = getComputedStyle(document.documentElement).getPropertyValue("--fs-fg").trim() || "#1d1d1f";
  return { lines: [`${app.g.meta.name}${unit}: ${document.title}`, parts.join(" · ")], scale, fg };
}

/**
 * The scene to download: the canvas's, or with "All rows" chosen, the same zoom, search and
 * colours over every row of the graph, once the files of its rows are in.
 */
async function exportScene(app) {
  const s = app.painter.scene;
  if (!s || $("fs-export-what").value !== "whole") return s;
  const g = app.g;
  const view = { ...s.view, height: s.view.depthCount * s.view.rowH, minHeight: 0, scrollTop: 0 };
  for (;;) {
    if (app.g !== g) return null;
    let arrived;
    const some = new Promise((resolve) => (arrived = resolve));
    const plan = new FetchPlan(g, () => arrived());
    const chunks = plan.chunks(view);
    if (plan.waiting === 0) return { ...s, view, chunks };
    // Files another view asked for are on their way already: look again shortly.
    if (plan.fetches.length) plan.start();
    else setTimeout(arrived, 50);
    await some;
  }
}

/**
 * The SVG of the frames to download (the view's, or all rows'), each with its numbers in a
 * <title>; with `controls` false, without the file's own controls (for a picture).
 */
async function svgText(app, header, controls = true) {
  const s = await exportScene(app);
  if (!s || !app.g.names) return null;
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = FONT;
  const describe = (c, r) => {
    const { name, facts } = app.info.describe(frameInfo(c, r, app.g.names));
    return `${name}\n${facts.join(" · ")}`;
  };
  return svgOf(s, describe, ctx, `${app.g.meta.name}: ${document.title}`, header, { controls });
}

/** Download the view (zoom, search, colours) or all rows, under its header, as PNG. */
export async function exportPng(app) {
  if (!app.painter.view) return;
  const header = exportHeader(app);
  const save = (canvas) => canvas.toBlob((blob) => blob && download(blob, exportName(app, "png")), "image/png");
  if ($("fs-export-what").value === "whole") {
    // Every row, drawn by the browser from the SVG of the same frames, less its controls,
    // which do nothing in a picture.
    const text = await svgText(app, header, false);
    if (!text) return;
    const img = new Image();
    img.src = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
    await img.decode();
    const c = Object.assign(document.createElement("canvas"), { width: img.naturalWidth, height: img.naturalHeight });
    c.getContext("2d").drawImage(img, 0, 0);
    URL.revokeObjectURL(img.src);
    save(c);
    return;
  }
  const bg = app.painter.scene ? cssColor(app.painter.scene.palette.bg) : "#fff";
  const dpr = app.canvas.width / app.canvas.clientWidth || 1;
  const make = (w, h) => Object.assign(document.createElement("canvas"), { width: w, height: h });
  save(withHeader(app.canvas, dpr, header, bg, header.fg, make));
}

/** Download the view or all rows as SVG. */
export async function exportSvg(app) {
  const text = await svgText(app, exportHeader(app));
  if (text) download(new Blob([text], { type: "image/svg+xml" }), exportName(app, "svg"));
}
