// Export of the view (PNG, SVG), a page opened from disk, and dark mode, in real headless
// Chromium against a site built by the flamesite binary with this tree's theme. Expected
// numbers and colours come from the folded text (fixtures.mjs) and tests/js/colors.mjs,
// never from the page's modules.
//
// FLAMESITE_SCREENSHOTS=DIR also writes a screenshot of the dark page.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import { CHROMIUM_ARGS, HOSTILE, THEME, bigProfile, buildSite, canvasRow, frameCenter, framesAtDepth, hex, isRgb, matchedByStacks, parseFolded, pathSelf, pathTotal, rowTop, testTools, total, xOfValue } from "./fixtures.mjs";
import { dimmed, faded, hotColor, langColor, matchColor, moduleColor, rgbOf, shareColor } from "../js/colors.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();
const ARGS = CHROMIUM_ARGS;

const BIG = bigProfile();
const STACKS = parseFolded(BIG);
const TOTAL = total(STACKS);
// Three runs of a series `api` (in its folder, dated by their names), the first its baseline:
// their comparisons with the run before and the third's with the baseline.
const API = {
  "2026-11-19": "main;a;b 30\nmain;a;c 20\nmain;d 10\nother 5\n",
  "2026-11-20": "main;a;b 50\nmain;a;c 20\nmain;d 5\nother 5\n",
  "2026-11-21": "main;a;b 40\nmain;d 5\nother 5\n",
};

let tmp;
let out;
let browser;
let site;
let depthRows; // rows of the big graph (its manifest's depth)

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-export-"));
  fs.mkdirSync(path.join(tmp, "in"));
  fs.writeFileSync(path.join(tmp, "in", "big.folded"), BIG);
  fs.mkdirSync(path.join(tmp, "in", "api"));
  for (const [day, text] of Object.entries(API)) fs.writeFileSync(path.join(tmp, "in", "api", `${day}.folded`), text);
  out = buildSite(BIN, THEME, tmp, "Export", '[archive.baselines]\napi = "2026-11-19"\n');
  depthRows = JSON.parse(fs.readFileSync(path.join(out, "p/big/g/samples/manifest.json"), "utf8")).depth;
  site = await serve(out, "/perf/");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (site) await site.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * A page of the big profile over HTTP (fragment `hash`), or the page `at` (relative to the
 * site), idle; `done` checks it logged no error.
 */
async function openPage(hash = "", options = {}, at = "p/big/") {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, acceptDownloads: true, ...options });
  const page = await ctx.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  await page.goto(`${site.url}${at}${hash}`);
  await idle(page);
  const done = async () => {
    assert.deepEqual(problems, [], "no console errors, page errors or dialogs");
    await ctx.close();
  };
  return { page, done };
}

const idle = (page) => page.evaluate(() => window.flamesite.idle());
const state = (page) => page.evaluate(() => window.flamesite.state());

/** Click a download button; the file's name and bytes. */
async function downloadOf(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(await dl.path()) };
}

/**
 * An exported SVG's `bytes` written to `name` and opened as a file in a context of its own, as
 * a reader opens a download: { ctx, svgPage, problems } (the page errors its script raised).
 */
async function openSvgFile(bytes, name) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const svgPage = await ctx.newPage();
  const problems = [];
  svgPage.on("pageerror", (e) => problems.push(e.message));
  await svgPage.goto(pathToFileURL(file).href);
  return { ctx, svgPage, problems };
}

/** The SVG parsed by the page's DOMParser: { error, frames: [{ title, x, width, fill }], texts, scripts }. */
function parseSvg(page, text) {
  return page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const err = doc.querySelector("parsererror");
    return {
      error: err ? err.textContent : null,
      root: doc.documentElement.localName,
      width: Number(doc.documentElement.getAttribute("width")),
      scripts: doc.getElementsByTagName("script").length,
      frames: [...doc.querySelectorAll("g.fs-f")].map((g) => {
        const r = g.querySelector("rect");
        return { title: g.querySelector("title").textContent, x: Number(r.getAttribute("x")), y: Number(r.getAttribute("y")), width: Number(r.getAttribute("width")), fill: r.getAttribute("fill") };
      }),
      texts: [...doc.querySelectorAll("g.fs-f text")].map((t) => t.textContent),
      header: [...doc.querySelectorAll("text.fs-head")].map((t) => t.textContent),
      script: [...doc.getElementsByTagName("script")].map((t) => t.textContent).join(""),
    };
  }, text);
}

/** Relative luminance-like brightness (0–255) of [r, g, b]. */
const bright = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
/** WCAG relative luminance of [r, g, b], and the contrast ratio of two colours. */
const lum = (px) => {
  const [r, g, b] = px.map((c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);

describe("a page opened from disk", () => {
  test("says, without its script, that it must be served over HTTP and names flamesite serve; served, it does not", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(pathToFileURL(path.join(out, "p/big/index.html")).href);
    const notice = page.locator("#fs-needs-http");
    await notice.waitFor({ state: "visible" });
    const text = await notice.textContent();
    assert.ok(text.includes("flamesite serve"), text);
    // No "Loading…" beside it: nothing loads there.
    assert.equal(await page.locator("#fs-loading").isVisible(), false, "the Loading label is hidden beside the notice");
    assert.ok(text.includes("HTTP"), text);
    // The module script did not run there (the reason for the notice).
    assert.equal(await page.evaluate(() => typeof window.flamesite), "undefined");
    await ctx.close();

    const served = await openPage();
    assert.equal(await served.page.locator("#fs-needs-http").count(), 0, "the script removed the notice");
    await served.done();
  });
});

describe("export", () => {
  test("PNG: a header that says what it shows, over the canvas's picture pixel for pixel", async () => {
    const { page, done } = await openPage("#q=visit");
    const { name, bytes } = await downloadOf(page, "#fs-png");
    assert.match(name, /^big-samples\.png$/);
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "PNG signature");
    assert.equal(bytes.subarray(12, 16).toString("latin1"), "IHDR");
    const size = await page.evaluate(() => [document.getElementById("fs-canvas").width, document.getElementById("fs-canvas").height]);
    // Two lines of 18 px and 8 px of margin above the canvas (deviceScaleFactor 1).
    const top = 2 * 18 + 8;
    assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [size[0], size[1] + top], "the canvas's size and the header's");
    // Decoded by the browser: under the header, the canvas's picture (search colours included);
    // in the header, text: pixels darker than the background on the left of each line.
    const got = await page.evaluate(
      async ({ b64, top }) => {
        const img = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
        const c = new OffscreenCanvas(img.width, img.height);
        const x = c.getContext("2d");
        x.drawImage(img, 0, 0);
        const a = x.getImageData(0, top, img.width, img.height - top).data;
        const src = document.getElementById("fs-canvas");
        const b = src.getContext("2d").getImageData(0, 0, src.width, src.height).data;
        let diff = 0;
        for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > 2) diff += 1;
        const inked = (y0, y1) => {
          const d = x.getImageData(0, y0, 400, y1 - y0).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 300) n += 1;
          return n;
        };
        return { diff, n: a.length, line1: inked(4, 22), line2: inked(22, 40) };
      },
      { b64: bytes.toString("base64"), top },
    );
    assert.equal(got.diff, 0, JSON.stringify(got));
    assert.ok(got.line1 > 100 && got.line2 > 100, `text in both lines of the header: ${JSON.stringify(got)}`);
    await done();
  });

  test("SVG: well-formed, a titled rect per frame in view, hostile names escaped", async () => {
    const { page, done } = await openPage();
    const st = await state(page);
    const { name, bytes } = await downloadOf(page, "#fs-svg");
    assert.match(name, /^big-samples\.svg$/);
    const text = bytes.toString("utf8");
    assert.ok(text.includes("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;q&#39;"), "the hostile name escaped");
    const svg = await parseSvg(page, text);
    assert.equal(svg.error, null, "well-formed");
    assert.equal(svg.root, "svg");
    // One script, the file's own (zoom and search), whatever the names: no markup from a name.
    assert.equal(svg.scripts, 1);
    assert.equal(text.split("<script").length - 1, 1);
    assert.ok(!svg.script.includes(HOSTILE) && !svg.script.includes("alert(1)"), "no name in the script");
    assert.equal(svg.header.length, 2, svg.header.join("|"));
    assert.ok(svg.header[0].startsWith("samples: ") && svg.header[1] === "Colours: name", svg.header.join("|"));
    assert.equal(svg.width, st.viewport.width);
    const byName = new Map();
    for (const f of svg.frames) byName.set(f.title.split("\n")[0], f);
    // Every frame at least 2 px wide on the visible rows has its rect, title, width and colour.
    let checked = 0;
    for (let d = st.viewport.depths[0]; d < st.viewport.depths[1]; d++) {
      for (const f of framesAtDepth(STACKS, d)) {
        const w = xOfValue(st, f.offset + f.total) - xOfValue(st, f.offset);
        if (w < 2) continue;
        const y = rowTop(st, depthRows, d) - 1;
        const got = svg.frames.find((g) => g.title.split("\n")[0] === f.name && Math.abs(g.x - xOfValue(st, f.offset)) < 0.02 && Math.abs(g.y - y) < 0.02);
        assert.ok(got, `${f.path.join(";")} has a rect`);
        // As on the canvas: a frame 3 px or wider leaves a 1 px gap after it.
        const want = w >= 3 ? w - 1 : w;
        assert.ok(Math.abs(got.width - want) < 0.02, `${f.name}: width ${got.width}, want ${want}`);
        assert.equal(got.fill, hex(hotColor(f.name)), f.name);
        checked += 1;
      }
    }
    assert.ok(checked > 50, `${checked} frames checked`);
    const hostile = byName.get(HOSTILE);
    assert.ok(hostile, "the hostile name is a title, as text");
    assert.ok(hostile.title.includes(`${pathTotal(STACKS, ["main", HOSTILE]).toLocaleString("en-US")} samples`), hostile.title);
    // Its label, as text (cut with an ellipsis when the box is narrow).
    assert.ok(svg.texts.some((t) => t === HOSTILE || (t.length > 4 && t.endsWith("\u2026") && HOSTILE.startsWith(t.slice(0, -1)))), "its label, as text");
    await done();
  });

  test("SVG opened as a file: its header says what it shows; a click zooms, Search colours and counts the matches, Reset zoom goes back", async () => {
    const { page, done } = await openPage();
    const { bytes } = await downloadOf(page, "#fs-svg");
    await done();
    const { ctx, svgPage, problems } = await openSvgFile(bytes, "exported.svg");
    const head = await svgPage.locator("text.fs-head").allTextContents();
    assert.equal(head.length, 2, head.join("|"));
    assert.ok(head[0].startsWith("samples: ") && head[1] === "Colours: name", head.join("|"));
    // The header is drawn above the frames: its first line is near the top of the picture.
    const headBox = await svgPage.locator("text.fs-head").first().boundingBox();
    assert.ok(headBox.y < 20, JSON.stringify(headBox));
    const width = Number(await svgPage.locator("svg").getAttribute("width"));
    /** Each frame by the path of names to it: its rect's x, width and fill, and whether shown. */
    const frames = () =>
      svgPage.evaluate(() =>
        [...document.querySelectorAll("g.fs-f")].map((g) => {
          const r = g.querySelector("rect");
          return {
            name: g.querySelector("title").textContent.split("\n")[0],
            d: Number(g.dataset.d),
            o: Number(g.dataset.o),
            v: Number(g.dataset.v),
            x: Number(r.getAttribute("x")),
            w: Number(r.getAttribute("width")),
            fill: r.getAttribute("fill"),
            shown: getComputedStyle(g).display !== "none",
          };
        }),
      );
    const before = await frames();
    const walk = before.find((f) => f.name === "walk_tree" && f.d === 2);
    assert.ok(walk && walk.w > 20 && walk.w < width / 2, JSON.stringify(walk));
    // A click on walk_tree: it and its subtree fill the width; main (its ancestor) spans it;
    // frames beside it are hidden.
    const i = before.indexOf(walk);
    await svgPage.locator("g.fs-f").nth(i).locator("rect").click();
    const zoomed = await frames();
    assert.ok(Math.abs(zoomed[i].x) < 0.01 && Math.abs(zoomed[i].w - (width - 1)) < 0.02, JSON.stringify(zoomed[i]));
    const main = zoomed.find((f) => f.name === "main" && f.d === 1);
    assert.ok(main.shown && Math.abs(main.w - (width - 1)) < 0.02, JSON.stringify(main));
    const outside = zoomed.filter((f, k) => f.d >= 2 && !(before[k].x >= walk.x - 0.01 && before[k].x + before[k].w <= walk.x + walk.w + 1.01));
    assert.ok(outside.length > 5 && outside.every((f) => !f.shown), `${outside.filter((f) => f.shown).length} frames beside walk_tree still shown`);
    const inside = zoomed.filter((f, k) => f.d > 2 && f.shown);
    assert.ok(inside.length > 3, "walk_tree's subtree is shown");
    const scale = width / walk.v;
    for (const f of inside) {
      // Its frames at the zoom's scale: offset from walk_tree's, widths grown alike (less the
      // 1 px gap, as on the canvas).
      assert.ok(Math.abs(f.x - (f.o - walk.o) * scale) < 0.02, JSON.stringify(f));
      const w = f.v * scale;
      assert.ok(Math.abs(f.w - (w >= 3 ? w - 1 : w)) < 0.02, JSON.stringify(f));
    }
    // Search: the frames it matches in the highlight colour, and their share of the graph,
    // which is at most the exact share (frames too narrow to export are not in the file).
    svgPage.once("dialog", (d) => d.accept("^visit$"));
    await svgPage.click("#fs-find");
    const searched = await frames();
    const visits = searched.filter((f) => f.name === "visit");
    assert.ok(visits.length > 0 && visits.every((f) => f.fill === hex(matchColor())), JSON.stringify(visits.slice(0, 3)));
    assert.ok(searched.filter((f) => f.name !== "visit").every((f) => f.fill !== hex(matchColor())));
    const status = await svgPage.locator("#fs-status").textContent();
    const share = Number(/Matched in this file: ([\d.]+)%/.exec(status)[1]);
    const exact = (100 * matchedByStacks(STACKS, /^visit$/)) / TOTAL;
    assert.ok(share > 0 && share <= exact + 0.01 && share > exact - 1, `${share}% of the graph in the file, ${exact}% exact`);
    // Reset zoom: every frame where it was.
    await svgPage.click("#fs-unzoom");
    const back = await frames();
    back.forEach((f, k) => assert.ok(f.shown && Math.abs(f.x - before[k].x) < 0.02 && Math.abs(f.w - before[k].w) < 0.02, `${f.name}: ${JSON.stringify([f, before[k]])}`));
    assert.deepEqual(problems, []);
    await ctx.close();
  });

  test("Whole graph: the SVG and PNG hold every row, where the view's hold the rows on the canvas", async () => {
    // A short window: the graph's deepest rows are off the canvas.
    const { page, done } = await openPage("", { viewport: { width: 1000, height: 420 } });
    const st = await state(page);
    const deepest = Math.max(...STACKS.map(([p]) => p.length));
    assert.ok(st.viewport.depths[1] <= deepest, `some rows off the canvas: ${JSON.stringify(st.viewport.depths)} of ${deepest + 1}`);
    const depthsOf = (svg) => new Set([...svg.matchAll(/<g class="fs-f" data-d="(\d+)"/g)].map((m) => Number(m[1])));
    const view = (await downloadOf(page, "#fs-svg")).bytes.toString("utf8");
    assert.ok(!depthsOf(view).has(deepest), "the view's SVG: the rows on the canvas");
    await page.selectOption("#fs-export-what", "whole");
    const whole = (await downloadOf(page, "#fs-svg")).bytes.toString("utf8");
    const depths = depthsOf(whole);
    for (let d = 0; d <= deepest; d++) assert.ok(depths.has(d), `row ${d} in the whole graph's SVG`);
    const svg = await parseSvg(page, whole);
    assert.equal(svg.error, null);
    // Every frame of the deepest row that is 2 px wide or more, with its name.
    for (const f of framesAtDepth(STACKS, deepest)) {
      if (xOfValue(st, f.offset + f.total) - xOfValue(st, f.offset) < 2) continue;
      assert.ok(svg.frames.some((g) => g.title.split("\n")[0] === f.name && Math.abs(g.x - xOfValue(st, f.offset)) < 0.02), `${f.path.join(";")} in the whole graph`);
    }
    // The PNG of the whole graph: as tall as every row and the header, without the SVG's line
    // of controls (Reset zoom, Search), which do nothing in a picture.
    const png = (await downloadOf(page, "#fs-png")).bytes;
    assert.equal(png.subarray(12, 16).toString("latin1"), "IHDR");
    const height = Number(/<svg [^>]*height="(\d+)"/.exec(whole)[1]);
    assert.ok(height >= (deepest + 1) * 18, `${height} px for ${deepest + 1} rows`);
    const header = 2 * 18 + 8;
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [st.viewport.width, height - 18], "the SVG's height less its line of controls");
    // Pixel for pixel: the SVG's header lines, then its frames, drawn 18 px higher; the SVG's
    // line of controls, between them, has ink (its words), the PNG none of it.
    const got = await page.evaluate(
      async ({ b64, svg, header }) => {
        const pixels = async (img) => {
          const c = new OffscreenCanvas(img.width, img.height);
          const x = c.getContext("2d");
          x.drawImage(img, 0, 0);
          return { w: img.width, h: img.height, d: x.getImageData(0, 0, img.width, img.height).data };
        };
        const p = await pixels(await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob()));
        const img = new Image();
        img.src = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
        await img.decode();
        const s = await pixels(img);
        // The header's two lines end 4 px above the frames (the controls' glyphs reach there).
        let diff = 0;
        for (let y = 0; y < p.h; y++) {
          if (y >= header - 4 && y < header) continue;
          const sy = y < header ? y : y + 18;
          for (let i = 0; i < p.w * 4; i++) if (Math.abs(p.d[y * p.w * 4 + i] - s.d[sy * s.w * 4 + i]) > 2) diff += 1;
        }
        let ink = 0;
        for (let y = header; y < header + 18; y++) for (let x = 0; x < 300; x++) if (s.d[(y * s.w + x) * 4] < 128) ink += 1;
        return { diff, ink };
      },
      { b64: png.toString("base64"), svg: whole, header },
    );
    assert.equal(got.diff, 0, JSON.stringify(got));
    assert.ok(got.ink > 100, `the SVG's line of controls has words: ${JSON.stringify(got)}`);
    await done();
  });

  test("SVG of a zoom and a search: only the zoomed subtree, at the zoom's widths, in the search's colours", async () => {
    const { page, done } = await openPage();
    let st = await state(page);
    const zoomed = ["main", "walk_tree"];
    const c = await frameCenter(page, STACKS, zoomed, st, depthRows);
    await page.mouse.click(c.x, c.y);
    await page.fill("#fs-search", "^visit$");
    st = await idle(page);
    assert.equal(st.zoom.name, "walk_tree");
    const svg = await parseSvg(page, (await downloadOf(page, "#fs-svg")).bytes.toString("utf8"));
    assert.equal(svg.error, null);
    const inside = (p) => zoomed.every((n, i) => p[i] === n) || zoomed.slice(0, p.length).every((n, i) => p[i] === n);
    let checked = 0;
    for (const f of svg.frames) {
      const nm = f.title.split("\n")[0];
      assert.ok(nm === "all" || nm === "main" || nm === "walk_tree" || ["visit", "leaf_work", "hash_node"].includes(nm), `${nm} is not in the zoomed subtree`);
    }
    for (let d = 1; d < Math.min(st.viewport.depths[1], 16); d++) {
      for (const f of framesAtDepth(STACKS, d)) {
        if (!inside(f.path)) continue;
        const x0 = Math.max(0, xOfValue(st, f.offset));
        const x1 = Math.min(st.viewport.width, xOfValue(st, f.offset + f.total));
        if (x1 - x0 < 2) continue;
        const y = rowTop(st, depthRows, d) - 1;
        const got = svg.frames.find((g) => g.title.split("\n")[0] === f.name && Math.abs(g.x - x0) < 0.02 && Math.abs(g.y - y) < 0.02);
        assert.ok(got, `${f.path.join(";")} has a rect`);
        const wide = x1 - x0 >= 3 ? x1 - x0 - 1 : x1 - x0;
        assert.ok(Math.abs(got.width - wide) < 0.02, `${f.name}: ${got.width} vs ${wide}`);
        const want = f.name === "visit" ? matchColor() : d < zoomed.length ? faded(dimmed(hotColor(f.name)), 0xffffff) : dimmed(hotColor(f.name));
        assert.equal(got.fill, hex(want), `${f.path.join(";")} colour`);
        checked += 1;
      }
    }
    assert.ok(checked >= 10, `${checked} frames checked`);
    await done();
  });
});

describe("export: file names and the file's own search", () => {
  test("a run's files are named by its series, run and graph, a comparison's by its series and both runs, earlier first, and the zoomed frame", async () => {
    const run = await openPage("", {}, "p/api/2026-11-20/");
    assert.equal((await downloadOf(run.page, "#fs-png")).name, "api-2026-11-20-samples.png");
    assert.equal((await downloadOf(run.page, "#fs-svg")).name, "api-2026-11-20-samples.svg");
    // Zoomed to main;a: its name too.
    const stacks = parseFolded(API["2026-11-20"]);
    const rows = JSON.parse(fs.readFileSync(path.join(out, "p/api/2026-11-20/g/samples/manifest.json"), "utf8")).depth;
    const c = await frameCenter(run.page, stacks, ["main", "a"], await state(run.page), rows);
    await run.page.mouse.click(c.x, c.y);
    assert.equal((await idle(run.page)).zoom.name, "a");
    assert.equal((await downloadOf(run.page, "#fs-png")).name, "api-2026-11-20-samples-a.png");
    await run.done();
    const compared = [
      ["p/api/2026-11-20/compare/", "api-2026-11-19-vs-2026-11-20-samples"],
      ["p/api/2026-11-20/compare/#g=samples", "api-2026-11-19-vs-2026-11-20-samples"],
      // With the baseline: the page's last folder is the baseline's, the earlier run.
      ["p/api/2026-11-21/vs/api/2026-11-19/", "api-2026-11-19-vs-2026-11-21-samples"],
    ];
    for (const [at, name] of compared) {
      const cmp = await openPage("", {}, at);
      assert.equal((await downloadOf(cmp.page, "#fs-png")).name, `${name}.png`, at);
      assert.equal((await downloadOf(cmp.page, "#fs-svg")).name, `${name}.svg`, at);
      await cmp.done();
    }
  });

  test("an SVG exported under a search, opened as a file: its own search, cleared, leaves no frame in the highlight and every frame in its colour", async () => {
    const { page, done } = await openPage("#q=%5Evisit%24");
    assert.equal((await state(page)).query, "^visit$");
    const { bytes } = await downloadOf(page, "#fs-svg");
    await done();
    const { ctx, svgPage, problems } = await openSvgFile(bytes, "searched.svg");
    /** Each frame's name and fill, each label's ink, each grey mark's fill. */
    const look = () =>
      svgPage.evaluate(() => ({
        frames: [...document.querySelectorAll("g.fs-f")].map((g) => ({ name: g.querySelector("title").textContent.split("\n")[0], fill: g.querySelector("rect").getAttribute("fill") })),
        inks: [...new Set([...document.querySelectorAll("g.fs-f text")].map((t) => t.getAttribute("fill")))],
        marks: [...new Set([...document.querySelectorAll(".fs-elided")].map((r) => r.getAttribute("fill")))],
      }));
    const searched = await look();
    const match = hex(matchColor());
    assert.ok(searched.frames.some((f) => f.name === "visit" && f.fill === match), "exported in the page's search colours");
    assert.ok(searched.frames.some((f) => f.name === "main" && f.fill === hex(dimmed(hotColor("main")))));
    assert.ok(searched.marks.length > 0, "grey marks in the file");
    // Search, answered with nothing: the search cleared.
    const ask = async (answer) => {
      svgPage.once("dialog", (d) => d.accept(answer));
      await svgPage.click("#fs-find");
    };
    await ask("");
    const cleared = await look();
    assert.deepEqual(cleared.frames.filter((f) => f.fill === match), [], "no frame keeps the highlight");
    for (const f of cleared.frames) assert.equal(f.fill, hex(hotColor(f.name)), `${f.name}: its own colour`);
    assert.equal(cleared.inks.length, 1, `one ink for every label, none dimmed: ${cleared.inks}`);
    assert.ok(searched.inks.length > 1 && searched.inks.includes(cleared.inks[0]), `${searched.inks} → ${cleared.inks}`);
    assert.equal(cleared.marks.length, 1, `${cleared.marks}`);
    assert.ok(!searched.marks.includes(cleared.marks[0]), `the grey marks no longer dimmed: ${searched.marks} → ${cleared.marks}`);
    assert.equal(await svgPage.locator("#fs-status").textContent(), "Click a frame to zoom in.");
    // Another search: its matches in the highlight, visit in its own colour again.
    await ask("^walk_tree$");
    const other = await look();
    assert.ok(other.frames.some((f) => f.name === "walk_tree" && f.fill === match));
    for (const f of other.frames.filter((f) => f.name !== "walk_tree")) assert.equal(f.fill, hex(hotColor(f.name)), f.name);
    assert.deepEqual(problems, []);
    await ctx.close();
  });
});

describe("dark mode", () => {
  test("prefers-color-scheme dark: dark page and canvas, frames in their colours, labels readable on plain and faded frames", async () => {
    const { page, done } = await openPage("", { colorScheme: "dark" });
    const pageBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const rgb = (css) => css.match(/\d+/g).slice(0, 3).map(Number);
    assert.ok(bright(rgb(pageBg)) < 50, `page background ${pageBg}`);
    const toolbarBg = await page.evaluate(() => getComputedStyle(document.querySelector(".fs-toolbar")).backgroundColor);
    assert.ok(bright(rgb(toolbarBg)) < 60, `toolbar background ${toolbarBg}`);
    const fg = await page.evaluate(() => getComputedStyle(document.body).color);
    assert.ok(bright(rgb(fg)) > 180, `text colour ${fg}`);

    let st = await state(page);
    // The canvas's top pixel rows hold only the deep spine at their left (depth 20 and more):
    // their right end is background.
    assert.ok(st.viewport.depths[1] > 21, JSON.stringify(st.viewport));
    const row = await canvasRow(page, 2);
    const bgPx = row[st.viewport.width - 5];
    assert.ok(bgPx.every((c) => c < 50), `canvas background ${bgPx}`);
    const cssBg = await page.evaluate(() => getComputedStyle(document.getElementById("fs-app")).getPropertyValue("--fs-canvas-bg").trim());
    const bg = parseInt(cssBg.slice(1), 16);
    assert.ok(isRgb(bgPx, bg), `canvas background ${bgPx} is --fs-canvas-bg ${cssBg}`);

    /** Of depth d's row of a frame: pixels in the frame's colour, and label pixels contrasting with it. */
    const labelCheck = async (d, f, box) => {
      const x0 = Math.max(0, Math.ceil(xOfValue(st, f.offset)));
      const x1 = Math.min(st.viewport.width, Math.floor(xOfValue(st, f.offset + f.total)) - 2);
      let boxPx = 0;
      let ink = 0;
      for (let dy = 1; dy < 16; dy++) {
        const line = await canvasRow(page, rowTop(st, depthRows, d) + dy);
        for (let x = x0; x < x1; x++) {
          if (isRgb(line[x], box, 1)) boxPx += 1;
          else if (contrast(line[x], rgbOf(box)) >= 3) ink += 1;
        }
      }
      assert.ok(boxPx > (15 * (x1 - x0)) / 2, `${f.name}: ${boxPx} of ${15 * (x1 - x0)} pixels in ${hex(box)}`);
      assert.ok(ink >= 20, `${f.name}: ${ink} label pixels contrast 3:1 or more with ${hex(box)}`);
    };
    const main = framesAtDepth(STACKS, 1).find((f) => f.name === "main");
    await labelCheck(1, main, hotColor("main"));
    await shot(page, "dark");

    // Zoomed: "main" is a faded ancestor, mixed with the dark background; its label still reads.
    const c = await frameCenter(page, STACKS, ["main", "walk_tree"], st, depthRows);
    await page.mouse.click(c.x, c.y);
    await page.mouse.move(0, 0);
    st = await idle(page);
    assert.equal(st.zoom.name, "walk_tree");
    await labelCheck(1, { name: "main", offset: st.viewport.x0, total: st.viewport.x1 - st.viewport.x0 }, faded(hotColor("main"), bg));
    await shot(page, "dark-zoom");
    await done();
  });
});

describe("colour modes", () => {
  /** Every frame of depths 1 to 12 at least 6 px wide has colour `want(frame)` on the canvas. */
  async function framePixels(page, want) {
    const st = await state(page);
    let checked = 0;
    for (let d = 1; d <= 12; d++) {
      const row = await canvasRow(page, rowTop(st, depthRows, d));
      for (const f of framesAtDepth(STACKS, d)) {
        const x0 = xOfValue(st, f.offset);
        const x1 = xOfValue(st, f.offset + f.total);
        if (x1 - x0 < 6) continue;
        const x = Math.floor((x0 + x1) / 2);
        assert.ok(isRgb(row[x], want(f)), `${f.path.join(";")} is ${row[x]}, not ${hex(want(f))}`);
        checked += 1;
      }
    }
    assert.ok(checked > 20, `${checked} frames checked`);
  }

  test("a flame graph keeps its root in view when the toolbar wraps (a search's Matched line) and the graph box shrinks", async () => {
    // Wide enough for the toolbar and the share palette's scale on one line, until the
    // Matched line comes.
    const { page, done } = await openPage("#p=total", { viewport: { width: 1900, height: 800 } });
    const before = await state(page);
    assert.equal(before.viewport.depths[0], 0, "the root is in view");
    const h0 = (await page.locator(".fs-toolbar").boundingBox()).height;
    await page.fill("#fs-search", "^visit$");
    const st = await idle(page);
    assert.ok((await page.locator(".fs-toolbar").boundingBox()).height > h0, "the toolbar wrapped (this test's premise)");
    assert.ok(st.viewport.height < before.viewport.height, "the graph box shrank");
    assert.equal(st.viewport.depths[0], 0, `the root is still in view: ${JSON.stringify(st.viewport)}`);
    const row = await canvasRow(page, rowTop(st, depthRows, 0));
    assert.ok(isRgb(row[10], dimmed(shareColor(1))), `root pixel ${row[10]}`);
    await done();
  });

  test("a link's palette colours frames by total or self share; the menu switches it and the link keeps it", async () => {
    const { page, done } = await openPage("#p=total");
    assert.equal((await state(page)).palette, "total");
    assert.equal(await page.locator("#fs-palette").inputValue(), "total");
    await framePixels(page, (f) => shareColor(f.total / TOTAL));
    await shot(page, "palette-total");
    // Its scale beside the menu: pale to red, which share, and where a quarter is.
    assert.ok(await page.locator("#fs-share-key").isVisible());
    assert.equal(await page.locator("#fs-share-text").textContent(), "Total share: 0% → 100% (25% half way)");

    await page.selectOption("#fs-palette", "self");
    const st = await idle(page);
    assert.equal(st.palette, "self");
    assert.match(new URL(st.link).hash, /(^#|&)p=self(&|$)/);
    await framePixels(page, (f) => shareColor(pathSelf(STACKS, f.path) / TOTAL));

    await page.selectOption("#fs-palette", "hot");
    const hot = await idle(page);
    assert.equal(hot.palette, "hot");
    assert.equal(await page.locator("#fs-share-key").isVisible(), false, "no share scale for names' colours");
    assert.ok(!/[#&]p=/.test(new URL(hot.link).hash), hot.link);
    await framePixels(page, (f) => hotColor(f.name));

    // A search over a share palette: its matches highlighted, the other frames dimmed.
    await page.selectOption("#fs-palette", "total");
    await page.fill("#fs-search", "^visit$");
    await idle(page);
    await framePixels(page, (f) => (f.name === "visit" ? matchColor() : dimmed(shareColor(f.total / TOTAL))));
    await done();
  });

  test("module and lang palettes: chosen on the page, kept in the link, the spec's colours of every frame", async () => {
    const { page, done } = await openPage("#p=lang");
    let st = await state(page);
    assert.equal(st.palette, "lang");
    assert.equal(await page.locator("#fs-palette").inputValue(), "lang");
    assert.ok(await page.locator("#fs-palette-key").isVisible(), "the key of the kinds' colours shows");
    // C++ names (`::`, `operator new`) yellow, the others red: as docs/FORMAT.md reckons them.
    await framePixels(page, (f) => langColor(f.name));
    await shot(page, "palette-lang");

    await page.selectOption("#fs-palette", "module");
    st = await idle(page);
    assert.equal(st.palette, "module");
    assert.match(new URL(st.link).hash, /(^#|&)p=module(&|$)/);
    assert.ok(!(await page.locator("#fs-palette-key").isVisible()), "no kinds' key for modules");
    // One colour per module: `cache::get` and `cache::put` share `cache`'s, `db::*` share `db`'s.
    await framePixels(page, (f) => moduleColor(f.name));
    assert.equal(moduleColor("cache::get"), moduleColor("cache::put"));

    // The build's palette (hot) again: the link names none, the name files' colours.
    await page.selectOption("#fs-palette", "hot");
    st = await idle(page);
    assert.equal(st.palette, "hot");
    assert.ok(!/[#&]p=/.test(new URL(st.link).hash), st.link);
    await framePixels(page, (f) => hotColor(f.name));

    // Back in a link: lang, with a zoom's faded ancestors in lang colours too.
    await page.goto(`${site.url}p/big/#p=lang`);
    st = await idle(page);
    assert.equal(st.palette, "lang");
    const c = await frameCenter(page, STACKS, ["main", "walk_tree"], st, depthRows);
    await page.mouse.click(c.x, c.y);
    await page.mouse.move(0, 0);
    st = await idle(page);
    const row = await canvasRow(page, rowTop(st, depthRows, 1));
    assert.ok(isRgb(row[10], faded(langColor("main"), 0xffffff), 1), `faded main ${row[10]} vs ${hex(faded(langColor("main"), 0xffffff))}`);
    await done();
  });
});

async function shot(page, name) {
  const dir = process.env.FLAMESITE_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}
