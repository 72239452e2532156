// The viewer on screens of every size and under the pointer: marks where frames too narrow to
// draw were left out, phones and small laptops (viewport and touch emulation). Real headless
// Chromium against a site built by the flamesite binary with this tree's theme; expected
// numbers come from the folded text (fixtures.mjs), never from the page's modules.
//
// FLAMESITE_SCREENSHOTS=DIR also writes screenshots of what the tests look at.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import { nameHash } from "../../themes/default/static/format.js";
import { CHROMIUM_ARGS, TEMPLATE_FN, THEME, bigProfile, buildSite, canvasRow, frameCenter, framesAtDepth, isRgb, leftHeavy, matchedByStacks, parseFolded, pathOffset, pathTotal, rowTop, testTools, total, xOfValue } from "./fixtures.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();
const ARGS = CHROMIUM_ARGS;

const BIG = bigProfile();
const STACKS = parseFolded(BIG);
const TOTAL = total(STACKS);
const CSS = fs.readFileSync(path.join(THEME, "static/flamesite.css"), "utf8");
/** The light theme's grey of the marks, from the stylesheet (not from the page's script). */
const ELIDED = parseInt(/--fs-elided:\s*#([0-9a-f]{6})/i.exec(CSS)[1], 16);

let tmp;
let out;
let browser;
let site;
let depthRows;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-viewer-"));
  fs.mkdirSync(path.join(tmp, "in"));
  fs.writeFileSync(path.join(tmp, "in", "big.folded"), BIG);
  // Notes long enough to push the graph down when they sit above it.
  const para = "The connection pool change went out with this build; the p99 of the checkout path went down. ";
  fs.writeFileSync(path.join(tmp, "in", "big.md"), `# Notes\n\n${para.repeat(4)}\n\n- one\n- two\n- three\n\n${para.repeat(3)}\n`);
  // A mark of frames too narrow to draw about a pixel wide on a phone (thin's 300 children of
  // 1, in 100,301), with nothing beside it one row up (wide has no children).
  const thin = Array.from({ length: 300 }, (_, i) => `main;thin;t${String(i).padStart(3, "0")} 1`);
  fs.writeFileSync(path.join(tmp, "in", "narrow.folded"), [...thin, "main;wide 100000"].join("\n") + "\n");
  // A series of two runs, for its comparison page: long names, which must wrap, not overflow.
  fs.mkdirSync(path.join(tmp, "in", "svc"));
  const long = `${TEMPLATE_FN};${"very_long_function_name_without_any_break_".repeat(4)}`;
  for (const [name, date, n] of [["a", "2026-11-01", 10], ["b", "2026-11-02", 30]]) {
    fs.writeFileSync(path.join(tmp, "in", "svc", `${name}.folded`), `main;${long} ${n}\nmain;other ${40 - n}\n`);
    fs.writeFileSync(path.join(tmp, "in", "svc", `${name}.toml`), `date = ${date}\n`);
  }
  // A series whose comparison has a change that sampling explains (w: 20 → 22 of ~1,000) and
  // one it does not (z: 10 → 300).
  fs.mkdirSync(path.join(tmp, "in", "noisy"));
  for (const [name, date, text] of [["a", "2026-11-01", "main;x 500\nmain;y 500\nmain;z 10\nmain;w 20\n"], ["b", "2026-11-02", "main;x 520\nmain;y 480\nmain;z 300\nmain;w 22\n"]]) {
    fs.writeFileSync(path.join(tmp, "in", "noisy", `${name}.folded`), text);
    fs.writeFileSync(path.join(tmp, "in", "noisy", `${name}.toml`), `date = ${date}\n`);
  }
  // A series of 16 nights whose json::parse doubles from the ninth on: a change point.
  fs.mkdirSync(path.join(tmp, "in", "shift"));
  for (let night = 0; night < 16; night++) {
    const wobble = (k) => 1 + 0.1 * Math.sin(7 * night + 3 * k);
    const lines = Array.from({ length: 10 }, (_, k) => `main;work::f${k} ${Math.round(300 * wobble(k))}`);
    lines.push(`main;json::parse ${Math.round((night >= 8 ? 600 : 300) * wobble(11))}`);
    fs.writeFileSync(path.join(tmp, "in", "shift", `2026-11-${String(night + 1).padStart(2, "0")}.folded`), lines.join("\n") + "\n");
  }
  // Two runs of a speedscope profile whose function a ran, then b, then a again.
  fs.mkdirSync(path.join(tmp, "in", "timed"));
  for (const [name, date, w] of [["a", "2026-11-01", [3, 1, 2]], ["b", "2026-11-02", [4, 1, 1]]]) {
    const doc = {
      $schema: "https://www.speedscope.app/file-format-schema.json",
      shared: { frames: [{ name: "main" }, { name: "a" }, { name: "b" }] },
      profiles: [{ type: "sampled", name: "cpu", unit: "none", startValue: 0, endValue: 6, samples: [[0, 1], [0, 2], [0, 1]], weights: w }],
    };
    fs.writeFileSync(path.join(tmp, "in", "timed", `${name}.speedscope.json`), JSON.stringify(doc));
    fs.writeFileSync(path.join(tmp, "in", "timed", `${name}.toml`), `date = ${date}\n`);
  }
  out = buildSite(BIN, THEME, tmp, "Viewer");
  depthRows = JSON.parse(fs.readFileSync(path.join(out, "p/big/g/samples/manifest.json"), "utf8")).depth;
  site = await serve(out, "/perf/");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (site) await site.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A page over HTTP (`url` relative to the site), idle; `done` checks it logged no error. */
async function openPage(url = "p/big/", options = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, ...options });
  const page = await ctx.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${site.url}${url}`);
  if (url.startsWith("p/")) await idle(page);
  const done = async () => {
    assert.deepEqual(problems, [], "no console errors or page errors");
    await ctx.close();
  };
  return { page, ctx, done };
}

const idle = (page) => page.evaluate(() => window.flamesite.idle());
/**
 * Idle after two animation frames: a layout change reaches the resize observer, and the repaint
 * it asks for, before the wait (an event, not a time).
 */
const framesThenIdle = (page) =>
  page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))).then(() => idle(page));
const state = (page) => page.evaluate(() => window.flamesite.state());

async function shot(page, name, options = {}) {
  const dir = process.env.FLAMESITE_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), ...options });
}

describe("frames too narrow to draw", () => {
  test("leave a grey mark under their caller; hovering it says how many there are and their total", async () => {
    const { page, done } = await openPage();
    let st = await state(page);
    // background::gc's 4000 children (gc::sweep_region_*) are each far below half a pixel.
    const gc = framesAtDepth(STACKS, 2).find((f) => f.path.join(";") === "main;background::gc");
    const kids = framesAtDepth(STACKS, 3).filter((f) => f.path[0] === "main" && f.path[1] === "background::gc");
    const pxPerValue = st.viewport.width / (st.viewport.x1 - st.viewport.x0);
    assert.ok(kids.every((f) => f.total * pxPerValue < 0.5), "the premise: every child is too narrow to draw");
    const sum = kids.reduce((s, f) => s + f.total, 0);
    assert.equal(sum, gc.total, "gc has no self: its children fill it");
    const x0 = xOfValue(st, gc.offset);
    const x1 = xOfValue(st, gc.offset + gc.total);
    assert.ok(x1 - x0 > 40, `gc is ${x1 - x0} px wide`);

    // The mark: grey across gc's width at depth 3; nothing at depth 4 (its own callees are
    // part of the mark below them).
    const row3 = await canvasRow(page, rowTop(st, depthRows, 3));
    for (const x of [Math.ceil(x0) + 1, Math.round((x0 + x1) / 2), Math.floor(x1) - 3]) assert.ok(isRgb(row3[x], ELIDED), `depth 3 x ${x}: ${row3[x]}`);
    const row4 = await canvasRow(page, rowTop(st, depthRows, 4));
    const bg = row4[Math.round((x0 + x1) / 2)];
    assert.ok(isRgb(bg, 0xffffff), `depth 4 above the mark is background: ${bg}`);

    // The SVG download has the same mark: a grey rect across gc's width at depth 3.
    const [dl] = await Promise.all([page.waitForEvent("download"), page.click("#fs-svg")]);
    const marks = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, "image/svg+xml");
      return [...doc.querySelectorAll("rect.fs-elided")].map((r) => ({ x: Number(r.getAttribute("x")), y: Number(r.getAttribute("y")), w: Number(r.getAttribute("width")), fill: r.getAttribute("fill") }));
    }, fs.readFileSync(await dl.path(), "utf8"));
    const y3 = rowTop(st, depthRows, 3) - 1;
    const mark = marks.find((m) => Math.abs(m.y - y3) < 0.02 && m.x <= x0 + 1 && m.x + m.w >= x1 - 2);
    assert.ok(mark, `a mark over gc's width at depth 3 among ${JSON.stringify(marks.slice(0, 5))}`);
    assert.equal(mark.fill, `#${ELIDED.toString(16).padStart(6, "0")}`);

    // Hover: the count (fetched from the chunks that hold them) and the total.
    const box = await page.locator("#fs-canvas").boundingBox();
    const y = box.y + rowTop(st, depthRows, 3) + 6;
    await page.mouse.move(box.x + (x0 + x1) / 2, y);
    await idle(page);
    await page.waitForFunction(() => !document.getElementById("fs-tooltip").textContent.includes("counting"));
    const tip = await page.locator("#fs-tooltip").textContent();
    assert.ok(tip.includes(`${kids.length.toLocaleString("en-US")} frames too narrow to draw`), tip);
    assert.ok(tip.includes(`(${((100 * sum) / TOTAL).toFixed(2)}% of all`), tip);
    assert.ok(tip.includes(`total ${sum.toLocaleString("en-US")} samples`), tip);
    const info = await page.locator("#fs-info").textContent();
    assert.ok(info.includes(`${kids.length.toLocaleString("en-US")} frames too narrow to draw`), info);
    await shot(page, "elided-hover");

    // A click zooms to their caller, where they have room: drawn, no longer a mark.
    await page.mouse.click(box.x + (x0 + x1) / 2, y);
    st = await idle(page);
    assert.equal(st.zoom && st.zoom.name, "background::gc");
    await done();
  });
});

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true };

/** How far the page reaches past the window's right edge, in CSS px (0: no sideways scroll). */
const overflowX = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe("phone (390×844, touch)", () => {
  test("the graph is above the fold with the notes closed; Both puts the table under a full-width graph", async () => {
    const { page, done } = await openPage("p/big/", PHONE);
    assert.equal(await page.evaluate(() => document.querySelector("details.fs-about").open), false, "the notes start closed");
    const canvas = await page.locator("#fs-canvas").boundingBox();
    assert.ok(canvas.y < 844 / 3 && canvas.height > 500, `the graph starts in the top third of the screen: ${JSON.stringify(canvas)}`);
    // The toolbar is one line: the graph's menu, the search and the fold, whose button shows
    // the other controls (and hides them again).
    const toolbar = await page.locator(".fs-toolbar").boundingBox();
    assert.ok(toolbar.height < 50, `one line of controls: ${JSON.stringify(toolbar)}`);
    assert.equal(await page.locator('#fs-views button[data-view="table"]').isVisible(), false);
    await page.locator("#fs-tools").tap();
    assert.equal(await page.locator("#fs-tools").getAttribute("aria-expanded"), "true");
    for (const sel of ['#fs-views button[data-view="table"]', "#fs-icicle", "#fs-palette", "#fs-svg", "#fs-copy"]) assert.ok(await page.locator(sel).isVisible(), `${sel} behind the fold`);
    await page.locator("#fs-tools").tap();
    assert.equal(await page.locator("#fs-icicle").isVisible(), false);
    // The graph took the room back: it is drawn to the box's height (once the box's resize
    // has been seen, two frames on).
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const st0 = await idle(page);
    const box = await page.locator("#fs-scroll").boundingBox();
    assert.ok(Math.abs(st0.viewport.height - box.height) <= 1, `${st0.viewport.height} of ${box.height}`);
    assert.ok(canvas.width >= 370, `the graph is the screen's width: ${canvas.width}`);
    assert.equal(await overflowX(page), 0, "nothing pushes the page sideways");
    await shot(page, "phone");

    // The notes still open on request.
    await page.locator("details.fs-about summary").tap();
    assert.ok(await page.locator(".fs-notes").isVisible());
    await page.locator("details.fs-about summary").tap();

    // Table view, a row tapped: the page switches to Both; the graph keeps the full width
    // and the table is under it.
    await page.locator("#fs-tools").tap();
    await page.locator('#fs-views button[data-view="table"]').tap();
    await idle(page);
    await page.locator("#fs-table tbody tr").first().tap();
    const st = await idle(page);
    assert.equal(st.view, "both");
    assert.ok(st.viewport && st.viewport.width >= 370, `the graph in Both: ${JSON.stringify(st.viewport)}`);
    assert.ok(st.viewport.height >= 150, `and some height: ${st.viewport.height}`);
    const graph = await page.locator(".fs-graphbox").boundingBox();
    const table = await page.locator(".fs-tablebox").boundingBox();
    assert.ok(table.y >= graph.y + graph.height - 1, `the table is under the graph: ${JSON.stringify({ graph, table })}`);
    assert.ok(table.y + table.height <= 844 + 1, "and on the screen");
    assert.equal(await overflowX(page), 0, "nothing pushes the page sideways");
    await shot(page, "phone-both");
    await done();
  });

  test("a tap shows a frame's numbers, a second tap on it zooms", async () => {
    const { page, done } = await openPage("p/big/", PHONE);
    let st = await state(page);
    const path1 = ["main", "walk_tree"];
    const c = await frameCenter(page, STACKS, path1, st, depthRows);
    await page.touchscreen.tap(c.x, c.y);
    st = await idle(page);
    assert.equal(st.zoom, null, "the first tap does not zoom");
    assert.equal(await page.locator("#fs-info-name").textContent(), "walk_tree", "it shows the frame");
    const tip = await page.locator("#fs-tooltip").textContent();
    assert.ok(tip.startsWith("walk_tree"), tip);
    await shot(page, "phone-tap");
    // A tap on another frame shows that one instead.
    const m = await frameCenter(page, STACKS, ["main"], st, depthRows);
    await page.touchscreen.tap(m.x, m.y);
    st = await idle(page);
    assert.equal(st.zoom, null);
    assert.equal(await page.locator("#fs-info-name").textContent(), "main");
    // Back on walk_tree: shown; then the second tap on it zooms.
    await page.touchscreen.tap(c.x, c.y);
    st = await idle(page);
    assert.equal(st.zoom, null);
    await page.touchscreen.tap(c.x, c.y);
    st = await idle(page);
    assert.equal(st.zoom && st.zoom.name, "walk_tree");
    await done();
  });

  test("a mark of frames too narrow to draw, a pixel wide, is found by a finger beside it", async () => {
    const { page, done } = await openPage("p/narrow/", PHONE);
    const st = await state(page);
    const rows = JSON.parse(fs.readFileSync(path.join(out, "p/narrow/g/samples/manifest.json"), "utf8")).depth;
    const box = await page.locator("#fs-canvas").boundingBox();
    const y = box.y + rowTop(st, rows, 3) + 6;
    // The premise: thin's children make a mark of about a pixel at the left, nothing after it.
    const thinEnd = xOfValue(st, 300);
    assert.ok(thinEnd > 0.5 && thinEnd < 2, `the mark is ${thinEnd} px wide`);
    // A tap 6 px to its right, where nothing is drawn: the mark's numbers.
    await page.touchscreen.tap(box.x + 6, y);
    await idle(page);
    await page.waitForFunction(() => /too narrow to draw/.test(document.getElementById("fs-info").textContent) && !/counting/.test(document.getElementById("fs-info").textContent));
    assert.match(await page.locator("#fs-info").textContent(), /300 frames too narrow to draw/);
    // 30 px away, out of a finger's reach: nothing.
    await page.touchscreen.tap(box.x + 30, y);
    await idle(page);
    assert.doesNotMatch(await page.locator("#fs-info").textContent(), /too narrow/);
    await done();
  });

  test("the home page and a comparison page do not overflow sideways", async () => {
    const home = await openPage("", PHONE);
    assert.equal(await overflowX(home.page), 0, "home");
    // Its table scrolls in its own box when it is wider than the screen.
    const box = await home.page.evaluate(() => {
      const t = document.querySelector(".fs-series").closest(".fs-scrollx");
      return t ? { client: t.clientWidth, scroll: t.scrollWidth, overflow: getComputedStyle(t).overflowX } : null;
    });
    assert.ok(box && box.overflow === "auto" && box.client <= 390, JSON.stringify(box));
    await shot(home.page, "phone-home", { fullPage: true });
    const compare = await home.page.evaluate(() => {
      const a = [...document.querySelectorAll("a.fs-series-link")].find((x) => x.textContent === "svc");
      return a && a.href;
    });
    assert.ok(compare, "the svc series is listed");
    await home.done();

    const run = await openPage("p/svc/b/", PHONE);
    const href = await run.page.evaluate(() => document.querySelector("a.fs-compare") && document.querySelector("a.fs-compare").getAttribute("href"));
    assert.ok(href, "the newest run links its comparison");
    await run.page.goto(new URL(href, run.page.url()).href);
    await idle(run.page);
    assert.equal(await overflowX(run.page), 0, "comparison");
    // Its graph starts in the top third too: the toolbar folded, the legend on one line
    // until tapped.
    const canvas = await run.page.locator("#fs-canvas").boundingBox();
    assert.ok(canvas.y < 844 / 3, `the comparison's graph starts at ${canvas.y}`);
    const legend = run.page.locator("#fs-legend");
    const h1 = (await legend.boundingBox()).height;
    await legend.tap();
    assert.ok((await legend.boundingBox()).height > h1 + 10, "the legend opens whole when tapped");
    await shot(run.page, "phone-compare", { fullPage: true });
    await run.done();
  });
});

describe("the comparison's table of functions on a phone", () => {
  test("names keep a column, headers are whole, rows are sorted by the change, and a search lists its matches first", async () => {
    // svc: a has the long leaf 10 of 40 samples and `other` 30; b the other way round.
    const leaf = "very_long_function_name_without_any_break_".repeat(4);
    const { page, done } = await openPage("p/svc/b/compare/#v=table", PHONE);
    await page.waitForSelector("#fs-table tbody tr");
    const names = () => page.locator("#fs-table tbody td.fs-name").allTextContents();
    // Sorted by the change of the self share, largest growth first: leaf +50 pp, other -50 pp.
    let shown = await names();
    assert.equal(shown[0], leaf);
    assert.equal(shown[shown.length - 1], "other");
    assert.equal(await page.evaluate(() => location.hash), "#v=table", "the default order is not written in the link");
    const change = page.locator("#fs-table th:has(button[data-sort=self_change])");
    assert.equal(await change.getAttribute("aria-sort"), "descending");
    // The function column keeps room for a name, the headers are not cut, the counts are bare
    // numbers under a header that gives the unit, and the page does not scroll sideways.
    const layout = await page.evaluate(() => {
      const t = document.querySelector("#fs-table");
      const cut = [...t.querySelectorAll("th button")].filter((b) => b.scrollWidth > b.clientWidth + 1 || b.getBoundingClientRect().width > b.closest("th").getBoundingClientRect().width + 1);
      const row = t.tBodies[0].rows[0];
      return { name: row.cells[0].getBoundingClientRect().width, cut: cut.map((b) => b.textContent), cells: [...row.cells].slice(1, 7).map((c) => c.textContent), heads: [...t.tHead.rows[0].cells].map((c) => c.textContent) };
    });
    assert.ok(layout.name >= 100, `the function column is ${layout.name} px wide`);
    assert.deepEqual(layout.cut, [], "no header is cut");
    assert.deepEqual(layout.cells, ["10", "30", "+50.00 pp", "10", "30", "+50.00 pp"]);
    assert.deepEqual(layout.heads.slice(0, 3), ["Function", "Self (samples)", "Total (samples)"]);
    assert.equal(await overflowX(page), 0);
    await shot(page, "phone-compare-table");
    // A search: its one matched function first, marked, and the note says so.
    await page.fill("#fs-search", "^other$");
    await idle(page);
    shown = await names();
    assert.equal(shown[0], "other");
    assert.equal(shown.length, 4, "the others stay below it: main, the template function and the leaf");
    assert.equal(await page.locator("#fs-table tbody tr").first().evaluate((tr) => tr.classList.contains("fs-match")), true);
    assert.match(await page.locator("#fs-table-note").textContent(), /^1 function matches the search: listed first/);
    // Cleared, the table is in the order of its column again, without the note.
    await page.fill("#fs-search", "");
    await idle(page);
    assert.equal((await names())[0], leaf);
    assert.equal(await page.locator("#fs-table-note").isHidden(), true);
    await done();
  });
});

describe("a comparison's lists and sampling noise", () => {
  test("changes within sampling noise are marked, and the reader can hide them", async () => {
    const { page, done } = await openPage("p/noisy/b/compare/");
    const item = (fn) => page.locator(".fs-changelist li", { has: page.locator("a.fs-fn", { hasText: new RegExp(`^${fn}$`) }) });
    assert.equal(await item("w").isVisible(), true);
    assert.match(await item("w").textContent(), /within sampling noise/);
    assert.doesNotMatch(await item("z").textContent(), /within/);
    await page.locator(".fs-hide-noise").check();
    assert.equal(await item("w").isHidden(), true, "hidden once asked");
    assert.equal(await item("z").isVisible(), true, "what stands out stays");
    await page.locator(".fs-hide-noise").uncheck();
    assert.equal(await item("w").isVisible(), true);
    await done();
  });
});

describe("change points", () => {
  test("the run where one starts says so once its graph is drawn, and its link searches for the function", async () => {
    const { page, done } = await openPage("p/shift/2026-11-09/");
    const line = page.locator(".fs-changestart");
    await line.waitFor({ state: "visible" });
    assert.match(await line.textContent(), /^Change from this run: json::parse ▲ \d+\.\d\d% → \d+\.\d\d%$/);
    await line.locator("a.fs-fn").click();
    const st = await idle(page);
    assert.equal(st.query, "^json::parse$");
    await done();
    // The series page lists it; its link opens that run searched for the function.
    const series = await openPage("s/shift/");
    const item = series.page.locator(".fs-changepoints > ul > li");
    assert.equal(await item.count(), 1);
    assert.match(await item.textContent(), /^json::parse ▲ \d+\.\d\d% → \d+\.\d\d% from 2026-11-09$/);
    await item.locator("a.fs-fn").click();
    await series.page.waitForURL(/p\/shift\/2026-11-09\/#q=/);
    assert.equal((await idle(series.page)).query, "^json::parse$");
    await series.done();
    // A run where none starts says nothing.
    const other = await openPage("p/shift/2026-11-12/");
    await other.page.locator(".fs-changestart[data-read]").waitFor({ state: "attached" });
    assert.equal(await other.page.locator(".fs-changestart").isHidden(), true);
    await other.done();
  });
});

describe("the left-heavy view", () => {
  /** Page coordinates of the middle of the frame at depth `d` over [offset, offset + total). */
  async function at(page, st, d, offset, tot) {
    const box = await page.locator("#fs-canvas").boundingBox();
    const vp = st.viewport;
    const mid = Math.max(offset, vp.x0) + (Math.min(offset + tot, vp.x1) - Math.max(offset, vp.x0)) / 2;
    const content = Math.max(depthRows * vp.rowHeight, vp.height);
    return { x: box.x + ((mid - vp.x0) / (vp.x1 - vp.x0)) * vp.width, y: box.y + content - (d + 1) * vp.rowHeight - vp.scrollTop + vp.rowHeight / 2 };
  }

  test("orders every frame's children heaviest first; zoom, search, links and the sandwich follow", async () => {
    const left = leftHeavy(STACKS);
    const { page, done } = await openPage();
    await page.click("#fs-left");
    let st = await idle(page);
    assert.equal(st.layout, "left");
    assert.match(new URL(page.url()).hash, /(^#|&)l=left(&|$)/);
    assert.equal(await page.getAttribute("#fs-left", "aria-pressed"), "true");

    // main's heaviest child is server::run, which by name comes after deep::, background:: and
    // the others: left-heavy, it starts where main does; a click on it zooms to it.
    const kids = [...left.keys()].filter((k) => k.split(";").length === 2);
    const heaviest = kids.reduce((a, b) => (left.get(b).total > left.get(a).total ? b : a));
    assert.equal(heaviest, "main;server::run", "the premise");
    assert.ok(pathOffset(STACKS, ["main", "server::run"]) > 0, "the premise: not first by name");
    // Four levels down, the heaviest handler is first under handle_request.
    const handlers = [...left.keys()].filter((k) => k.startsWith("main;server::run;server::handle_request;") && k.split(";").length === 4);
    const top = handlers.reduce((a, b) => (left.get(b).total > left.get(a).total ? b : a));
    const second = handlers.find((k) => left.get(k).offset === left.get(top).offset + left.get(top).total);
    assert.ok(second, "a second handler follows the heaviest");
    const path = second.split(";");
    const want = left.get(second);
    let p = await at(page, st, path.length, want.offset, want.total);
    await page.mouse.click(p.x, p.y);
    st = await idle(page);
    assert.deepEqual([st.zoom.name, st.zoom.depth, st.zoom.offset, st.zoom.total], [path[path.length - 1], path.length, want.offset, want.total]);
    assert.match(new URL(page.url()).hash, new RegExp(`z=${path.length}\\.${want.offset}\\.${want.total}\\.`));

    // A search counts the same whatever the layout: all of the graph, and inside the zoom.
    await page.fill("#fs-search", "malloc");
    st = await idle(page);
    const re = /malloc/;
    const under = STACKS.filter(([frames]) => path.every((f, i) => frames[i] === f));
    assert.equal(st.matched.value, matchedByStacks(STACKS, re));
    assert.equal(st.matched.inZoom, matchedByStacks(under, re));

    // The link opens the same view.
    const link = page.url();
    await page.goto("about:blank");
    await page.goto(link);
    st = await idle(page);
    assert.equal(st.layout, "left");
    assert.deepEqual([st.zoom.name, st.zoom.offset], [path[path.length - 1], want.offset]);
    assert.equal(st.matched.inZoom, matchedByStacks(under, re));
    await shot(page, "left-heavy-zoomed");

    // Back to children by name: the zoom goes over by its path, at that layout's offset.
    await page.click("#fs-left");
    st = await idle(page);
    assert.equal(st.layout, null);
    assert.deepEqual([st.zoom.name, st.zoom.depth, st.zoom.offset, st.zoom.total], [path[path.length - 1], path.length, pathOffset(STACKS, path), pathTotal(STACKS, path)]);
    assert.doesNotMatch(new URL(page.url()).hash, /l=left/);
    assert.equal(st.matched.inZoom, matchedByStacks(under, re));

    // Frames too narrow for the root view (gc's 4,000 children and theirs, in finer chunks whose
    // parents are in coarser ones) are placed too: a link by path zooms to one at its offset.
    const gcKids = [...left.keys()].filter((k) => k.startsWith("main;background::gc;") && k.split(";").length === 3);
    gcKids.sort((a, b) => left.get(a).offset - left.get(b).offset);
    const mid = gcKids[Math.floor(gcKids.length / 2)];
    const deep = [...left.keys()].find((k) => k.startsWith(`${mid};`)).split(";");
    const there = left.get(deep.join(";"));
    assert.ok(there.offset !== pathOffset(STACKS, deep), "the premise: it moved");
    await page.goto("about:blank");
    await page.goto(`${site.url}p/big/#l=left&zp=${deep.map(nameHash).join(".")}`);
    st = await idle(page);
    assert.deepEqual([st.zoom.name, st.zoom.depth, st.zoom.offset, st.zoom.total], [deep[deep.length - 1], deep.length, there.offset, there.total]);
    assert.deepEqual(st.errors, []);

    // A sandwich merged from the chunks, left-heavy: the same function, the same total.
    await page.goto(`${site.url}p/big/#l=left&x=sandwich&f=regex%3A%3Aexec`);
    st = await idle(page);
    assert.equal(st.sandwich.error, null);
    assert.equal(st.sandwich.total, matchedByStacks(STACKS, /^regex::exec$/));
    await done();
  });
});

describe("the time-order view", () => {
  test("a profile that keeps time has a graph of its stacks in the order they ran, which comparisons leave out", async () => {
    const { page, done } = await openPage("p/timed/b/");
    const options = await page.$$eval("#fs-graph option", (os) => os.map((o) => o.dataset.name));
    assert.deepEqual(options, ["cpu", "cpu (time order)"]);
    // The flame graph merges a's two runs into one frame of 5; in time order a ran for 4, b
    // for 1, then a again for 1: two frames of a at depth 2, the second at offset 5.
    await page.goto(`${site.url}p/timed/b/#g=${encodeURIComponent("cpu (time order)")}`);
    let st = await idle(page);
    assert.equal(st.graph, "cpu (time order)");
    assert.equal(st.total, 6);
    const box = await page.locator("#fs-canvas").boundingBox();
    const vp = st.viewport;
    // Depth 2 of a graph of 3 rows (the root at the bottom): its row's middle.
    const y = box.y + Math.max(3 * vp.rowHeight, vp.height) - 3 * vp.rowHeight - vp.scrollTop + vp.rowHeight / 2;
    await page.mouse.click(box.x + (5.5 / 6) * vp.width, y);
    st = await idle(page);
    assert.deepEqual([st.zoom.name, st.zoom.depth, st.zoom.offset, st.zoom.total], ["a", 2, 5, 1]);
    await page.goto("about:blank");
    await page.goto(`${site.url}p/timed/b/#g=${encodeURIComponent("cpu (time order)")}&z=2.0.4.${nameHash("a")}`);
    st = await idle(page);
    assert.deepEqual([st.zoom.name, st.zoom.offset, st.zoom.total], ["a", 0, 4]);
    // The listing says which graph is in time order; the comparison has the flame graph only.
    const listing = JSON.parse(fs.readFileSync(path.join(out, "s/timed/index.json"), "utf8"));
    const run = listing.profiles.find((r) => r.slug === "timed/b");
    assert.deepEqual(run.graphs.map((g) => [g.name, g.order || null]), [["cpu", null], ["cpu (time order)", "time"]]);
    await page.goto(`${site.url}p/timed/b/compare/`);
    await idle(page);
    assert.deepEqual(await page.$$eval("#fs-graph option", (os) => os.map((o) => o.dataset.name)), ["cpu"]);
    await done();
  });
});

describe("small laptop (1366×768)", () => {
  test("with the notes open beside the graph, the graph keeps the window's height", async () => {
    const { page, done } = await openPage("p/big/", { viewport: { width: 1366, height: 768 }, deviceScaleFactor: 1 });
    assert.equal(await page.evaluate(() => document.querySelector("details.fs-about").open), true, "the notes are open");
    const notes = await page.locator(".fs-notes").boundingBox();
    const canvas = await page.locator("#fs-canvas").boundingBox();
    assert.ok(notes.x >= canvas.x + canvas.width - 1, `the notes are beside the graph: ${JSON.stringify({ notes, canvas })}`);
    assert.ok(canvas.width >= 900, `the graph is ${canvas.width} px wide`);
    const st = await state(page);
    const levels = st.viewport.depths[1] - st.viewport.depths[0];
    // Before: 24 levels with the notes above the graph (issue 14). The window less the header,
    // the run links, the toolbar and the info line leaves room for about 32 rows of 18 px.
    assert.ok(levels >= 30, `${levels} levels shown: ${JSON.stringify(st.viewport)}`);
    await shot(page, "laptop-notes");
    // Closed, the panel is a line above the graph, which takes the whole width.
    await page.locator("details.fs-about summary").click();
    // The graph takes the freed width when its resize observer fires, after the click's task:
    // two animation frames later (the observer's callbacks run before the next paint), then idle.
    const st2 = await framesThenIdle(page);
    assert.ok(st2.viewport.width >= 1340, `closed: the graph is ${st2.viewport.width} px wide`);
    await done();
  });

  test("Both puts the table under the full-width graph, where the function names have room", async () => {
    const { page, done } = await openPage("p/big/#v=both", { viewport: { width: 1366, height: 768 }, deviceScaleFactor: 1 });
    await page.locator("details.fs-about summary").click();
    const st = await framesThenIdle(page);
    assert.equal(st.view, "both");
    const canvas = await page.locator("#fs-canvas").boundingBox();
    const table = await page.locator("#fs-table").boundingBox();
    assert.ok(table.y >= canvas.y + canvas.height - 1, `the table is under the graph: ${JSON.stringify({ canvas, table })}`);
    assert.ok(st.viewport.width >= 1340, `the graph keeps the window's width: ${st.viewport.width} px`);
    // Side by side (before), the name column was about 80 px: "sched_c…".
    const name = await page.locator("#fs-table tbody tr td.fs-name").first().boundingBox();
    assert.ok(name.width >= 400, `the function name column is ${name.width} px wide`);
    await shot(page, "laptop-both");
    await done();
  });
});
