// Readable everywhere (issue 44): what a reader sees on the archive's pages at a phone's and two
// desktops' widths, in light and dark, measured in the page as it is drawn. The comparison's
// table leaves the function names room on a phone; every chart's text is at least 10 CSS px
// whatever the chart's width; and every colour that carries meaning stands out from what is
// behind it as WCAG AA asks (4.5:1 for text, 3:1 for a chart's marks and a key's swatches),
// reckoned here with WCAG's relative luminance from the colours the browser computed.
//
// Needs FLAMESITE_BIN and Chromium (CHROMIUM_BIN, default /usr/bin/chromium); run through run.sh.
// FLAMESITE_SCREENSHOTS=DIR also writes screenshots of the pages it measures.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import { CHROMIUM_ARGS, THEME, TEMPLATE_FN, buildSite, testTools } from "./fixtures.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const WIDTHS = [
  { name: "390×844", ...PHONE },
  { name: "1366×768", viewport: { width: 1366, height: 768 } },
  { name: "1920×1080", viewport: { width: 1920, height: 1080 } },
];
const NIGHTS = 16;
const SHIFT = 8; // json::parse doubles from this night on (0-based): a change point, a regression, a budget exceeded
const night = (i) => `2026-11-${String(i + 1).padStart(2, "0")}`;
const LONG = "very_long_function_name_without_any_break_".repeat(3);

// ---- WCAG 2 contrast (https://www.w3.org/TR/WCAG21/#dfn-relative-luminance) ----

/** [r, g, b, a] of a computed CSS colour: `rgb(…)` or `rgba(…)`, channels 0–255, alpha 0–1. */
function parseColor(css) {
  const m = /^rgba?\(([^)]*)\)$/.exec(css.trim());
  if (!m) throw new Error(`not an rgb() colour: ${css}`);
  const v = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
  return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
}

/** `top` (with its alpha times `opacity`) drawn over the opaque `bottom`. */
function over(top, bottom, opacity = 1) {
  const a = top[3] * opacity;
  return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
}

/** WCAG's relative luminance of an sRGB colour. */
function luminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG's contrast ratio of two opaque colours: 1 to 21. */
function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The opaque colour behind an element: its background layers from the first opaque one
 * (walking up from the element) down to the element's own, composed as drawn. `layers` are
 * computed background-colors, innermost first.
 */
function effectiveBackground(layers) {
  let bg = [255, 255, 255, 1]; // the canvas, under a page that paints no background at all
  for (const c of [...layers].reverse()) bg = over(parseColor(c), bg);
  return bg;
}

// ---- What the page shows, collected in the page (plain data back to the test) ----

/**
 * What carries colour under `root`, each with its colour and its background layers up to the
 * first opaque one (one function, run in the page):
 * - `text`: every visible piece of text (elements with text of their own, and the generated
 *   `::after` text of the comparison's change cells), with the product of its and its
 *   ancestors' opacities; disabled controls (which WCAG exempts) and text hidden for screen
 *   readers only are left out;
 * - `marks`: a chart's marks (its points and lines) and a key's swatches (their outlines).
 */
function pageColours(root) {
  const bgLayers = (el) => {
    const out = [];
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      out.push(c);
      const a = /rgba\([^)]*,\s*([\d.]+)\)/.exec(c);
      if (!a || Number(a[1]) === 1) break;
    }
    return out;
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const label = (el) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""} "${el.textContent.trim().slice(0, 40)}"`;
  const out = [];
  for (const el of document.querySelectorAll(`${root} *`)) {
    if (el.closest("svg")) continue; // a chart's text: its size is measured elsewhere, its colour here too
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
    if (!own || !el.checkVisibility({ visibilityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || el.closest(".fs-sr")) continue;
    if (el.closest(":disabled")) continue;
    out.push({ what: label(el), color: getComputedStyle(el).color, opacity: opacity(el), layers: bgLayers(el), change: el.matches(".fs-grew .fs-num, td.fs-grew, .fs-shrank .fs-num, td.fs-shrank, .fs-regression, .fs-budget") });
    const after = getComputedStyle(el, "::after");
    if (el.matches("td.fs-num") && after.content && after.content !== "none" && after.display !== "none") {
      out.push({ what: `${label(el)}::after`, color: after.color, opacity: opacity(el), layers: bgLayers(el), change: false });
    }
  }
  // A chart's text and marks, against the chart's own background.
  for (const svg of document.querySelectorAll(`${root} svg.fs-trend`)) {
    if (!svg.checkVisibility()) continue;
    const layers = bgLayers(svg);
    for (const t of svg.querySelectorAll("text")) out.push({ what: `chart text "${t.textContent}"`, color: getComputedStyle(t).fill, opacity: opacity(t), layers, change: false });
  }
  const marks = [];
  for (const svg of document.querySelectorAll(`${root} svg.fs-trend, ${root} svg.fs-spark`)) {
    if (!svg.checkVisibility()) continue;
    const layers = bgLayers(svg);
    for (const c of svg.querySelectorAll("circle")) marks.push({ what: `${svg.getAttribute("class")} point ${c.getAttribute("class") || ""}`, color: getComputedStyle(c).fill, layers });
    for (const l of svg.querySelectorAll("polyline")) marks.push({ what: `${svg.getAttribute("class")} line ${l.getAttribute("class") || ""}`, color: getComputedStyle(l).stroke, layers });
  }
  for (const sw of document.querySelectorAll(`${root} .fs-legend-bar, ${root} .fs-share-bar`)) {
    if (!sw.checkVisibility()) continue;
    marks.push({ what: `swatch ${sw.className}`, color: getComputedStyle(sw).borderTopColor, layers: bgLayers(sw.parentElement) });
  }
  for (const k of document.querySelectorAll(`${root} .fs-palette-key > span`)) {
    if (!k.checkVisibility()) continue;
    marks.push({ what: `swatch of ${k.textContent}`, color: getComputedStyle(k, "::before").borderTopColor, layers: bgLayers(k) });
  }
  return { text: out, marks };
}

const hex = (c) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, "0")).join("")}`;

/** The ratios of `items` ({ what, color, opacity?, layers }), lowest first. */
function ratios(items) {
  return items
    .map((t) => {
      const bg = effectiveBackground(t.layers);
      const fg = over(parseColor(t.color), bg, t.opacity ?? 1);
      return { ...t, fg: hex(fg), bg: hex(bg), ratio: contrast(fg, bg) };
    })
    .sort((a, b) => a.ratio - b.ratio);
}

/**
 * Every text of the charts in the page: its computed font size times the scale the SVG is
 * drawn at (its screen matrix), and the height of its box on the screen, in CSS px.
 */
function chartText() {
  return [...document.querySelectorAll("svg text")]
    .filter((t) => t.checkVisibility())
    .map((t) => {
      const m = t.getScreenCTM();
      const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      return { text: t.textContent, chart: t.closest("svg.fs-trend, svg.fs-spark, svg")?.getAttribute("class"), px: parseFloat(getComputedStyle(t).fontSize) * scale, height: t.getBoundingClientRect().height };
    });
}

// ---- The site ----

let tmp;
let site;
let browser;
let shift; // the slug of the run where json::parse doubles

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-readable-"));
  const dir = path.join(tmp, "in", "svc");
  fs.mkdirSync(dir, { recursive: true });
  // 16 nights of a service: ten steady functions (each wobbling a little from night to night),
  // long names, and json::parse, which doubles from the ninth night on and stays there.
  for (let i = 0; i < NIGHTS; i++) {
    const wobble = (k) => 1 + 0.1 * Math.sin(7 * i + 3 * k);
    const lines = Array.from({ length: 10 }, (_, k) => `main;work::f${k} ${Math.round(300 * wobble(k))}`);
    lines.push(`main;json::parse ${Math.round((i >= SHIFT ? 600 : 300) * wobble(11))}`);
    lines.push(`main;${TEMPLATE_FN};${LONG} ${Math.round(200 * wobble(12))}`);
    lines.push(`main;${LONG}alloc ${Math.round(100 * wobble(13))}`);
    fs.writeFileSync(path.join(dir, `${night(i)}.folded`), lines.join("\n") + "\n");
  }
  const out = buildSite(BIN, THEME, tmp, "Readable", `[[budget]]\nfunction = "^json::parse$"\nmax_increase = "1pp"\n`);
  shift = fs.readdirSync(path.join(out, "p", "svc")).find((s) => s.startsWith(night(SHIFT)));
  assert.ok(shift, `the run of ${night(SHIFT)} is built`);
  site = await serve(out, "/readable/");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await site?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** `url` (relative to the site) in a window of `size` and colour scheme `scheme`, once it is idle. */
async function open(url, size, scheme = "light") {
  const ctx = await browser.newContext({ deviceScaleFactor: 1, colorScheme: scheme, ...size });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(site.url + url);
  await page.emulateMedia({ colorScheme: scheme });
  if (url.startsWith("p/")) await page.evaluate(() => window.flamesite.idle());
  if (url.startsWith("s/")) {
    await page.waitForFunction(() => !!window.flamesiteHistory);
    await page.evaluate(() => window.flamesiteHistory.idle());
  }
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return {
    page,
    done: async () => {
      assert.deepEqual(errors, [], `${url}: no errors`);
      await ctx.close();
    },
  };
}

async function shot(page, name, options = {}) {
  const dir = process.env.FLAMESITE_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), ...options });
}

/** The series page with a function's history drawn and the table of two runs filled. */
async function openSeries(size, scheme = "light") {
  const { page, done } = await open("s/svc/#h=json%3A%3Aparse", size, scheme);
  assert.ok((await page.locator("#fs-history-plot svg text").count()) > 0, "the history is drawn");
  await page.waitForFunction(() => document.querySelectorAll("#fs-pair-a option").length > 2);
  const runs = await page.locator("#fs-pair-a option").evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  const before = runs.find((v) => v.includes(night(SHIFT - 1)));
  const later = runs.find((v) => v.includes(night(SHIFT)));
  assert.ok(before && later, `the runs around the shift are offered: ${runs}`);
  await page.selectOption("#fs-pair-a", before);
  await page.selectOption("#fs-pair-b", later);
  await page.waitForSelector("#fs-pair-table:not([hidden]) tbody tr");
  return { page, done };
}

describe("the comparison's table", () => {
  test("on a phone gives the function names at least 40% of the table's visible width, and the numbers it hides stay on screen; a wide screen keeps every column", async () => {
    const { page, done } = await open(`p/svc/${shift}/compare/#v=table`, PHONE);
    await page.waitForSelector("#fs-table tbody tr");
    const m = await page.evaluate(() => {
      const t = document.getElementById("fs-table");
      const box = t.closest(".fs-tablebox");
      const name = t.tHead.rows[0].cells[0].getBoundingClientRect().width;
      const width = t.getBoundingClientRect().width;
      const visible = Math.min(width, box.clientWidth);
      const row = t.tBodies[0].rows[0];
      const changes = [...row.cells].filter((c) => c.classList.contains("fs-num") && c.getBoundingClientRect().width > 0);
      return {
        name, width, visible, cell: row.cells[0].getBoundingClientRect().width,
        shown: changes.map((c) => c.textContent + " " + getComputedStyle(c, "::after").content),
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      };
    });
    console.log(`# phone: function column ${m.name.toFixed(0)} of ${m.width.toFixed(0)} px of table (${m.visible.toFixed(0)} visible): ${((100 * m.name) / m.width).toFixed(1)}%`);
    assert.ok(m.name >= 0.4 * m.width, `the function column is ${m.name} of the table's ${m.width} px`);
    assert.ok(m.name >= 0.4 * m.visible, `the function column is ${m.name} of the ${m.visible} px on screen`);
    assert.equal(m.overflow, 0, "the page does not scroll sideways");
    // Each number the table shows on a phone says its two runs' values too ("10 → 30").
    assert.ok(m.shown.length >= 2, JSON.stringify(m.shown));
    for (const s of m.shown) assert.match(s, /^[+−±-]?[\d.,]+ pp ".+\s→\s.+"$/, s);
    await shot(page, "phone-compare-table");
    await done();

    // A wide screen shows every column, as before.
    const wide = await open(`p/svc/${shift}/compare/#v=table`, WIDTHS[2]);
    await wide.page.waitForSelector("#fs-table tbody tr");
    const widths = await wide.page.evaluate(() => [...document.getElementById("fs-table").tBodies[0].rows[0].cells].map((c) => c.getBoundingClientRect().width));
    assert.equal(widths.length, 8);
    assert.ok(widths.slice(0, 7).every((w) => w > 50), `every column has room: ${widths}`);
    await wide.done();
  });
});

describe("chart text", () => {
  test("is at least 10 px on the series page (its trend and a function's history) and the home page at 390, 1366 and 1920 px", async () => {
    const small = [];
    for (const size of WIDTHS) {
      const { page, done } = await openSeries(size);
      const text = await page.evaluate(chartText);
      assert.ok(text.filter((t) => t.chart === "fs-trend").length >= 4, `the trend's labels: ${JSON.stringify(text)}`);
      assert.ok(text.some((t) => /fs-history-svg/.test(t.chart)), `the history's labels: ${JSON.stringify(text)}`);
      console.log(`# ${size.name}: smallest chart text ${Math.min(...text.map((t) => t.px)).toFixed(2)} px (${text.length} labels)`);
      for (const t of text) {
        if (t.px < 10) small.push(`"${t.text}" of ${t.chart} is drawn at ${t.px.toFixed(2)} px at ${size.name}`);
        if (t.height < 10) small.push(`"${t.text}" of ${t.chart} is ${t.height.toFixed(2)} px tall at ${size.name}`);
      }
      await done();
      const home = await open("", size);
      for (const t of await home.page.evaluate(chartText)) if (t.px < 10) small.push(`home: "${t.text}" at ${t.px.toFixed(2)} px at ${size.name}`);
      await home.done();
    }
    assert.deepEqual(small, []);
  });
});

describe("colours that carry meaning", () => {
  for (const scheme of ["light", "dark"]) {
    test(`meet WCAG AA in ${scheme}: 4.5:1 for text, 3:1 for marks and swatches`, async () => {
      const pages = [
        { name: "comparison", open: () => open(`p/svc/${shift}/compare/#v=both`, WIDTHS[1], scheme), root: "body" },
        { name: "comparison on a phone", open: () => open(`p/svc/${shift}/compare/#v=table`, PHONE, scheme), root: "body" },
        { name: "series", open: () => openSeries(WIDTHS[1], scheme), root: "body" },
        { name: "run", open: () => open(`p/svc/${shift}/`, WIDTHS[1], scheme), root: "body" },
        { name: "home", open: () => open("", WIDTHS[1], scheme), root: "body" },
      ];
      const failures = [];
      const lowest = {};
      const changes = {};
      const premise = {};
      const SHOWN = {
        comparison: [".fs-changelist li.fs-noise .fs-num", ".fs-changelist.fs-grew .fs-num", "td.fs-grew", "td.fs-shrank", ".fs-budgets li", ".fs-legend-bar"],
        series: [".fs-regression", ".fs-budget", ".fs-changepoints li.fs-grew .fs-num", "svg.fs-trend circle", "#fs-history-plot circle", "#fs-pair-table td.fs-grew"],
      };
      for (const p of pages) {
        const { page, done } = await p.open();
        if (SHOWN[p.name]) premise[p.name] = await Promise.all(SHOWN[p.name].map(async (sel) => [sel, await page.locator(sel).count()]));
        if (p.name === "series") {
          // Every change's list of the other functions that shifted with it, opened.
          await page.evaluate(() => document.querySelectorAll(".fs-changepoints details").forEach((d) => (d.open = true)));
          if (scheme === "dark") await shot(page, "series-dark", { fullPage: true });
        }
        const colours = await page.evaluate(pageColours, p.root);
        const [text, marks] = [ratios(colours.text), ratios(colours.marks)];
        for (const t of text) {
          if (t.change) changes[p.name] = (changes[p.name] || 0) + 1;
          if (t.ratio < 4.5) failures.push(`${p.name}: text ${t.what} ${t.fg} (${t.color}, opacity ${t.opacity.toFixed(2)}) on ${t.bg}: ${t.ratio.toFixed(2)}:1`);
        }
        for (const t of marks) if (t.ratio < 3) failures.push(`${p.name}: mark ${t.what} ${t.fg} on ${t.bg}: ${t.ratio.toFixed(2)}:1`);
        lowest[p.name] = { text: text[0] && `${text[0].ratio.toFixed(2)} ${text[0].what}`, change: text.find((t) => t.change)?.ratio.toFixed(2), marks: marks[0] && `${marks[0].ratio.toFixed(2)} ${marks[0].what}`, count: [text.length, marks.length] };
        await done();
      }
      console.log(`# ${scheme}: ${JSON.stringify(lowest)}`);
      // The premise: the pages show the colours of a change (grew, shrank, a change within
      // noise, a regression, a budget) and the charts their marks.
      assert.ok(changes.comparison >= 4 && changes.series >= 4, `changes shown: ${JSON.stringify(changes)}`);
      for (const [name, what] of Object.entries(premise)) assert.ok(what.every(([, n]) => n > 0), `${name}: ${JSON.stringify(what)}`);
      assert.deepEqual(failures, []);
    });
  }
});
