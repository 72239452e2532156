// The flame graph page in real headless Chromium, against a site built by the flamesite
// binary from fixture profiles generated here. Expected numbers come from the folded text
// (fixtures.mjs), never from the page's own modules.
//
// Needs FLAMESITE_BIN (the flamesite binary) and Chromium (CHROMIUM_BIN, default
// /usr/bin/chromium); run through run.sh.
// FLAMESITE_SCREENSHOTS=DIR also writes screenshots of the root view, a zoom and a search.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import zlib from "node:zlib";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import {
  CHROMIUM_ARGS, DEEP, HOSTILE, TEMPLATE_FN, THEME, assertSamePicture, bigProfile, canvasPicture, canvasRow, framesAtDepth, frameCenter as frameAt, hex, isRgb, matchedByStacks, parseFolded, pathOffset,
  pathSelf, pathTotal, rowTop, smallProfile, testTools, total, xOfValue,
} from "./fixtures.mjs";
import { dimmed, faded, hotColor, matchColor } from "../js/colors.mjs";
import { diffTable } from "../js/helpers.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { bin: BIN, chromium: CHROMIUM } = testTools();
const ARGS = CHROMIUM_ARGS;
const ROW_H = 18;
const HOSTILE_FILE = `<img src=x onerror=alert(1)>.folded`;
// The page script's modules that main.js loads when first used (or once idle after the first paint).
// (diff.js too, on a plain graph's page: only a differential graph needs it.)
const LAZY = ["query.js", "search.js", "table.js", "nav.js", "export.js", "sandwichview.js", "sandwich.js", "diff.js"];


const BIG = bigProfile();
const STACKS = parseFolded(BIG);
const TOTAL = total(STACKS);

const groupDigits = (v) => Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
// A count as tests/data/units/vectors.json says it: exact below 10,000, else three
// significant digits and k, M, G.
const countText = (v) => {
  if (v < 10000) return groupDigits(v);
  let x = v / 1000;
  let i = 0;
  while (x >= 1000 && i < 4) {
    x /= 1000;
    i += 1;
  }
  return `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)} ${"kMGTP"[i]}`;
};
// Bytes as tests/data/units/vectors.json says them: below 1024 exact, else three significant
// digits and binary prefixes.
const bytesText = (v) => {
  if (v < 1024) return `${groupDigits(v)} B`;
  let x = v / 1024;
  let i = 0;
  while (x >= 1024 && i < 4) {
    x /= 1024;
    i += 1;
  }
  return `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)} ${["KiB", "MiB", "GiB", "TiB", "PiB"][i]}`;
};
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const pct = (a, b) => `${((100 * a) / b).toFixed(2)}%`;

let tmp;
let browser;
let site; // the server of the main build
let manifest; // big profile's manifest.json
const dataUrl = () => `${site.url}p/big/g/samples/`;

/** Build `input` into `output` with this tree's theme (theme_dir), so the test checks these templates. */
function build(input, output, extra = "") {
  const cfg = path.join(path.dirname(output), `${path.basename(output)}.site.toml`);
  fs.writeFileSync(cfg, `title = "Test <site> & co"\ninput = ${JSON.stringify(input)}\noutput = ${JSON.stringify(output)}\ntheme_dir = ${JSON.stringify(THEME)}\n${extra}`);
  run(["build", "--config", cfg]);
}

/** Run the binary; on failure throw with its stderr as text. */
function run(args) {
  try {
    execFileSync(BIN, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  } catch (e) {
    throw new Error(`${BIN} ${args.join(" ")} failed (exit ${e.status}):\n${e.stderr}`);
  }
}

/** The big profile gzipped (slug `big`), the small ones plain: both input paths are used. */
function writeInputs(dir, big = BIG) {
  fs.mkdirSync(path.join(dir, "api"), { recursive: true });
  fs.writeFileSync(path.join(dir, "big.folded.gz"), zlib.gzipSync(big));
  fs.writeFileSync(path.join(dir, "api", "run1.folded"), smallProfile());
  fs.writeFileSync(path.join(dir, HOSTILE_FILE), smallProfile());
  fs.mkdirSync(path.join(dir, "diff"), { recursive: true });
  fs.writeFileSync(path.join(dir, "diff", "d.folded.gz"), zlib.gzipSync(DIFF));
}

// A differential profile (`stack before after`): a grew, b shrank, gone vanished.
const DIFF = "main;a 10 20\nmain;b 30 5\nmain;c 0 7\nmain;gone 4 0\n";

/** A fresh page that records console errors, page errors and dialogs. */
async function openPage(url, { allowErrors = false, app = true, viewport = { width: 1920, height: 1080 } } = {}) {
  const ctx = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  await page.goto(url);
  if (app) await idle(page);
  const done = async () => {
    if (!allowErrors) assert.deepEqual(problems, [], "no console errors, page errors or dialogs");
    await ctx.close();
  };
  return { page, problems, done };
}

const idle = (page) => page.evaluate(() => window.flamesite.idle());
/**
 * Idle after two animation frames: a layout change (the info line's text can change the
 * graph's height) reaches the resize observer, and the repaint it asks for, before the wait.
 */
const framesThenIdle = (page) =>
  page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))).then(() => idle(page));
const state = (page) => page.evaluate(() => window.flamesite.state());

/** Page coordinates of the middle of the frame at `p` (a stack prefix) of the big profile. */
const frameCenter = (page, p, st) => frameAt(page, STACKS, p, st, manifest.depth);

/** The manifest's chunks a view of values [x0, x1) over depths [lo, hi) at `width` px needs. */
function expectedChunks(x0, x1, lo, hi, width) {
  const min = ((x1 - x0) / width) * 0.5;
  return manifest.chunks
    .filter((c) => c.depth[0] < hi && c.depth[1] > lo && c.offset[0] < x1 && c.offset[1] > x0 && c.max_total >= min && c.max_total > 0)
    .map((c) => dataUrl() + c.file)
    .sort();
}

function visible(vp) {
  const content = Math.max(manifest.depth * ROW_H, vp.height);
  const lo = Math.max(0, Math.floor((content - vp.scrollTop - vp.height) / ROW_H));
  const hi = Math.min(manifest.depth, Math.ceil((content - vp.scrollTop) / ROW_H));
  return [lo, hi];
}

/** The canvas's background: `--fs-canvas-bg` of the page's stylesheet, as 0xRRGGBB. */
async function canvasBackground(page) {
  const css = (await page.locator("#fs-app").evaluate((e) => getComputedStyle(e).getPropertyValue("--fs-canvas-bg"))).trim();
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(css);
  assert.ok(m, `--fs-canvas-bg is ${css}`);
  return parseInt(m[1].length === 3 ? m[1].replace(/./g, "$&$&") : m[1], 16);
}

/**
 * On the canvas, every frame of depths 1 to 16 at least 6 px wide is in the highlight colour
 * when `re` matches its name, else in its own colour dimmed: each reckoned here (colors.mjs).
 */
async function searchPixels(page, st, re) {
  const seen = { matched: 0, dimmed: 0 };
  for (let d = 1; d <= 16; d++) {
    const row = await canvasRow(page, rowTop(st, manifest.depth, d));
    for (const f of framesAtDepth(STACKS, d)) {
      const x0 = xOfValue(st, f.offset);
      const x1 = xOfValue(st, f.offset + f.total);
      if (x1 - x0 < 6 || x1 < 0 || x0 > st.viewport.width) continue;
      const x = Math.floor((Math.max(0, x0) + Math.min(st.viewport.width, x1)) / 2);
      const hit = re.test(f.name);
      const want = hit ? matchColor() : dimmed(hotColor(f.name));
      assert.ok(isRgb(row[x], want), `${f.path.join(";")} (depth ${d}, x ${x}) is ${row[x]}, not ${hex(want)} (${hit ? "matched" : "dimmed"})`);
      seen[hit ? "matched" : "dimmed"] += 1;
    }
  }
  assert.ok(seen.matched > 0 && seen.dimmed > 0, JSON.stringify(seen));
  return seen;
}

async function shot(page, name) {
  const dir = process.env.FLAMESITE_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-browser-"));
  writeInputs(path.join(tmp, "in"));
  build(path.join(tmp, "in"), path.join(tmp, "out"));
  manifest = JSON.parse(fs.readFileSync(path.join(tmp, "out/p/big/g/samples/manifest.json"), "utf8"));
  site = await serve(path.join(tmp, "out"), "/perf/");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (site) await site.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the build", () => {
  test("the command line of the brief writes the documented files", () => {
    const out = path.join(tmp, "plain-out");
    run(["build", "--input", path.join(tmp, "in"), "--output", out]);
    for (const f of ["index.html", "index.json", "p/big/index.html", "p/big/g/samples/manifest.json", "p/big/g/samples/n/0.json.gz", "p/api/run1/index.html"]) {
      assert.ok(fs.existsSync(path.join(out, f)), `${f} is written`);
    }
    assert.ok(fs.readdirSync(path.join(out, "p/big/g/samples/c")).some((f) => f.endsWith(".bin.gz")));
    assert.ok(fs.readdirSync(path.join(out, "p/big/g/samples/s")).some((f) => f.endsWith(".bin.gz")));
  });

  test("the fixture has deep rows and sub-pixel frames in fine chunks", () => {
    assert.equal(manifest.total, TOTAL);
    assert.equal(manifest.depth, DEEP + 1);
    assert.ok(manifest.chunks.some((c) => c.class > 0), "fine chunks exist");
    assert.ok(manifest.chunks.filter((c) => c.class === 0).length > 1, "class 0 spans several depth chunks");
    assert.ok(manifest.names.length > 1, "the name table is in several files");
  });
});

describe("the page", () => {
  test("the home page lists the series with relative links, names as text, and leads to a run", async () => {
    const { page, done } = await openPage(site.url, { app: false });
    const links = await page.locator("main a").evaluateAll((as) => as.map((a) => [a.getAttribute("href"), a.textContent]));
    assert.ok(links.some(([h, t]) => h === "s/big/" && t === "big"), JSON.stringify(links));
    assert.ok(links.some(([h]) => h === "p/api/run1/"), "the newest run of a series is linked");
    assert.equal(await page.locator("img").count(), 0, "a profile's file name never becomes markup");
    assert.ok((await page.locator("main").textContent()).includes(HOSTILE_FILE.replace(/\.folded$/, "")));
    await page.click("a.fs-series-link >> text=api");
    await page.waitForURL(/\/s\/api\/$/);
    await page.click("a.fs-run[href$='p/api/run1/']");
    await page.waitForURL(/\/run1\/$/);
    await page.waitForFunction(() => !!window.flamesite);
    await idle(page);
    assert.equal(new URL(page.url()).pathname, "/perf/p/api/run1/");
    const st = await state(page);
    assert.equal(st.total, 65);
    assert.ok(st.paints >= 1);
    const home = await page.locator(".fs-home").getAttribute("href");
    assert.equal(home, "../../../index.html");
    await done();
  });

  test("first paint fetches the manifest, the first name files and only the class-0 chunks of the visible depths; the other name files follow", async (t) => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    const st = await state(page);
    assert.equal(st.total, TOTAL);
    assert.equal(st.unit, "samples");
    assert.equal(st.zoom, null);
    assert.ok(st.paints >= 1);
    const [lo, hi] = visible(st.viewport);
    assert.equal(lo, 0, "the root is at the bottom");
    assert.ok(hi < manifest.depth, "deep rows are below the fold");
    const first = manifest.chunks.filter((c) => c.class === 0 && c.depth[0] < hi);
    const want = first.map((c) => dataUrl() + c.file).sort();
    assert.deepEqual([...st.chunksLoaded].sort(), want);
    // The name files up to the largest name id of those chunks, no more.
    const nameMax = Math.max(...first.map((c) => c.name_max));
    const nameFiles = manifest.names.filter((n) => n.names[0] <= nameMax).map((n) => dataUrl() + n.file);
    assert.ok(nameFiles.length < manifest.names.length, "the fixture has name files the first view does not need");
    const marks = await page.evaluate(() => performance.getEntriesByName("flamesite:painted").map((m) => m.startTime));
    assert.ok(marks.length >= 1, "performance.mark('flamesite:painted')");
    const resources = await page.evaluate(() =>
      performance.getEntriesByType("resource").map((e) => ({ name: e.name, size: e.encodedBodySize, start: e.startTime })),
    );
    const data = resources.filter((r) => r.name.startsWith(dataUrl()));
    // The HTML preloads the manifest and the first view's files (the class-0 chunks of the
    // first 60 rows and their name files), so those start before any script runs.
    const early = data.filter((r) => r.start < marks[0]).map((r) => r.name);
    assert.deepEqual(early.sort(), [dataUrl() + "manifest.json.gz", ...nameFiles, ...want].sort(), "before the first paint: nothing else");
    const html = await (await fetch(`${site.url}p/big/`)).text();
    const preloads = [...html.matchAll(/<link rel="preload" href="([^"]+)" as="fetch" crossorigin="anonymous">/g)].map((m) => new URL(m[1].replace(/&#x2F;/g, "/"), `${site.url}p/big/`).href);
    assert.deepEqual(preloads.sort(), [dataUrl() + "manifest.json.gz", ...nameFiles, ...want].sort(), "the page preloads what its first view needs");
    // After the first paint, while idle: the other name files (a first search reads every
    // name), and still no fine chunk and no search bucket.
    assert.deepEqual([...st.namesLoaded].sort(), manifest.names.map((n) => dataUrl() + n.file).sort());
    assert.deepEqual(
      data.map((r) => r.name).sort(),
      [dataUrl() + "manifest.json.gz", ...manifest.names.map((n) => dataUrl() + n.file), ...want].sort(),
      "nothing else of the graph is fetched: no fine chunk, no search bucket",
    );
    for (const r of data.filter((r) => !early.includes(r.name))) assert.ok(r.start > marks[0], `${r.name} after the first paint`);
    t.diagnostic(`first complete paint at ${marks[0].toFixed(0)} ms, ${data.reduce((s, r) => s + r.size, 0)} bytes of graph data, draw ${st.paintMs.toFixed(1)} ms`);
    await shot(page, "root");
    await done();
  });

  test("the first paint loads only the modules it needs: the search, table, keys, downloads and sandwich come after it", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    const scripts = (await page.evaluate(() => {
      const painted = performance.getEntriesByName("flamesite:painted")[0].startTime;
      return performance.getEntriesByType("resource").filter((e) => /\/static\/[^/]+\.js$/.test(e.name)).map((e) => ({ file: e.name.replace(/.*\//, ""), before: e.startTime < painted }));
    }));
    const early = scripts.filter((s) => s.before).map((s) => s.file).sort();
    for (const f of LAZY) assert.ok(!early.includes(f), `${f} is not fetched before the first paint (fetched: ${early.join(", ")})`);
    // What the page preloads is what its first paint fetches: main.js's static imports.
    const html = await (await fetch(`${site.url}p/big/`)).text();
    const preloads = [...html.matchAll(/<link rel="modulepreload" href="[^"]*\/static\/([^"/]+\.js)">/g)].map((m) => m[1]);
    assert.deepEqual(early, [...preloads, "main.js"].sort(), "the scripts fetched before the first paint are main.js and the preloaded ones");
    for (const f of LAZY) assert.ok(!preloads.includes(f), `${f} is not preloaded`);
    // Once the first view is painted and the page is idle, the others are fetched, so a later
    // click or key does not wait for them.
    await page.waitForFunction(
      (lazy) => lazy.every((f) => performance.getEntriesByType("resource").some((e) => e.name.endsWith(`/static/${f}`))),
      LAZY,
    );
    await done();
  });

  test("a search, a key, a download, the table and a sandwich that wait for their module work once it arrives", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1920, height: 1080 }, deviceScaleFactor: 1, acceptDownloads: true });
    const page = await ctx.newPage();
    const problems = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    // Hold every lazily loaded module until the test lets it through.
    // Each module's request, once the page asks for it: release(file) waits for that request
    // (an event; the test's own timeout fails it if it never comes), then lets it through.
    const held = new Map();
    const asked = (file) => {
      if (!held.has(file)) {
        let arrived;
        held.set(file, { route: new Promise((r) => (arrived = r)), arrived });
      }
      return held.get(file);
    };
    await page.route(/\/static\/(query|search|table|nav|export|sandwich|sandwichview)\.js$/, (route) => asked(route.request().url().replace(/.*\//, "")).arrived(route));
    const release = async (file) => {
      await (await asked(file).route).continue();
    };
    await page.goto(`${site.url}p/big/`);
    await page.waitForFunction(() => performance.getEntriesByName("flamesite:painted").length > 0);
    // A search typed before query.js is in: matched once it arrives, busy until then.
    await page.fill("#fs-search", "leaf_work");
    assert.equal((await state(page)).busy, true, "busy while query.js is held");
    await release("query.js");
    await release("search.js");
    let st = await idle(page);
    assert.equal(st.query, "leaf_work");
    assert.equal(st.matched.value, matchedByStacks(STACKS, /leaf_work/i));
    assert.match(await page.locator("#fs-matched").textContent(), /^Matched .* in 1 function$/);
    // An arrow key on the graph before nav.js is in: the keyboard moves once it arrives.
    await page.focus("#fs-copy");
    await page.keyboard.press("Tab");
    st = await state(page);
    assert.equal(st.focus && st.focus.depth, 0, "Tab puts the keyboard on the root");
    await page.keyboard.press("ArrowUp");
    assert.equal((await state(page)).focus.depth, 0, "nothing moves while nav.js is held");
    await release("nav.js");
    await page.waitForFunction(() => window.flamesite.state().focus && window.flamesite.state().focus.depth === 1);
    st = await idle(page);
    assert.equal(st.focus.name, "main", "ArrowUp went to the root's child");
    assert.equal(await page.locator("#fs-info-name").textContent(), "main", "and the info line says it");
    // The PNG button before export.js is in: the download comes once it arrives.
    const download = page.waitForEvent("download");
    await page.click("#fs-png");
    await release("export.js");
    assert.equal((await download).suggestedFilename(), "big-samples.png");
    // The Table view before table.js is in: its rows come once it arrives, busy until then.
    await page.click("#fs-views button[data-view=table]");
    assert.equal((await state(page)).busy, true, "busy while table.js is held");
    await release("table.js");
    await idle(page);
    assert.ok((await page.locator("#fs-table tbody tr").count()) > 0, "the table has rows");
    const selfOf = new Map();
    for (const [f, c] of STACKS) selfOf.set(f[f.length - 1], (selfOf.get(f[f.length - 1]) || 0) + c);
    const topSelf = [...selfOf].sort((a, b) => b[1] - a[1])[0][0];
    const listed = await page.locator("#fs-table tbody tr td.fs-name").allTextContents();
    assert.equal(listed[0], "leaf_work", "the search's one match first");
    assert.equal(listed[1], topSelf, "then the others, sorted by self");
    // A link to a sandwich, opened while sandwichview.js is held: it opens once it arrives.
    await page.evaluate(() => (location.hash = "#x=sandwich&f=visit"));
    await page.waitForFunction(() => window.flamesite.state().mode === "sandwich");
    assert.deepEqual((await state(page)).sandwich, { name: "visit", loading: true, error: null });
    await release("sandwichview.js");
    await release("sandwich.js");
    st = await idle(page);
    assert.equal(st.sandwich.name, "visit");
    const visit = STACKS.filter(([f]) => f.includes("visit")).reduce((s, [, c]) => s + c, 0);
    assert.equal(st.sandwich.callers.total, visit, "the callers' root: every call of visit");
    assert.equal(st.sandwich.callees.total, visit, "the callees' root");
    assert.ok(st.sandwich.callers.viewport && st.sandwich.callees.viewport, "both panes are drawn");
    assert.ok(await page.locator("#fs-sandwich").isVisible());
    assert.deepEqual(problems, []);
    await ctx.close();
  });

  test("the canvas is sized in device pixels", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1200, height: 800 }, deviceScaleFactor: 2 });
    const page = await ctx.newPage();
    await page.goto(`${site.url}p/big/`);
    await page.waitForFunction(() => !!window.flamesite);
    const st = await idle(page);
    const size = await page.locator("#fs-canvas").evaluate((c) => [c.width, c.height, c.clientWidth, c.clientHeight]);
    assert.deepEqual(size, [2 * st.viewport.width, 2 * st.viewport.height, st.viewport.width, st.viewport.height]);
    await ctx.close();
  });

  test("scrolling to the deep rows fetches the deeper class-0 chunks", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    const before = (await state(page)).chunksLoaded.length;
    await page.locator("#fs-scroll").evaluate((e) => (e.scrollTop = 0));
    await page.waitForFunction(() => window.flamesite.state().viewport.scrollTop === 0);
    const st = await idle(page);
    const [lo, hi] = visible(st.viewport);
    assert.equal(hi, manifest.depth, "the deepest row is in view");
    assert.ok(st.chunksLoaded.length > before);
    const deep = manifest.chunks.filter((c) => c.class === 0 && c.depth[0] < hi && c.depth[1] > lo).map((c) => dataUrl() + c.file);
    for (const u of deep) assert.ok(st.chunksLoaded.includes(u), `${u} fetched`);
    for (const u of st.chunksLoaded) assert.ok(manifest.chunks.find((c) => dataUrl() + c.file === u).class === 0, `${u} is class 0`);
    await done();
  });

  test("hovering a frame shows its name and numbers in the info line and a tooltip", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    const st = await state(page);
    const p = ["main", HOSTILE];
    const { x, y } = await frameCenter(page, p, st);
    await page.mouse.move(x, y);
    const tot = pathTotal(STACKS, p);
    const info = await page.locator("#fs-info").textContent();
    assert.ok(info.includes(HOSTILE), info);
    assert.ok(info.includes(`total ${countText(tot)} samples (${pct(tot, TOTAL)} of all)`), info);
    assert.ok(info.includes(`self ${countText(pathSelf(STACKS, p))} samples`), info);
    const tip = page.locator("#fs-tooltip");
    assert.equal(await tip.isVisible(), true);
    assert.equal(await tip.locator(".fs-tip-name").textContent(), HOSTILE);
    await page.mouse.move(5, 5);
    assert.equal(await tip.isVisible(), false);
    await done();
  });

  test("a click zooms: the frame fills the width and only the fine chunks under it are fetched", async (t) => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    let st = await state(page);
    const first = new Set(st.chunksLoaded);
    const p = ["main", "background::gc"];
    const { x, y } = await frameCenter(page, p, st);
    await page.mouse.click(x, y);
    st = await idle(page);
    const tot = pathTotal(STACKS, p);
    assert.deepEqual(st.zoom, { name: "background::gc", depth: 2, offset: pathOffset(STACKS, p), total: tot, self: 0 });
    assert.equal(st.viewport.x0, pathOffset(STACKS, p));
    assert.equal(st.viewport.x1 - st.viewport.x0, tot);
    const [lo, hi] = visible(st.viewport);
    const want = expectedChunks(st.viewport.x0, st.viewport.x1, lo, hi, st.viewport.width);
    const added = st.chunksLoaded.filter((u) => !first.has(u)).sort();
    assert.ok(added.length > 0, "the zoom fetched fine chunks");
    assert.deepEqual(added, want.filter((u) => !first.has(u)), "exactly the chunks that became visible");
    for (const u of added) assert.ok(manifest.chunks.find((c) => dataUrl() + c.file === u).class > 0);
    assert.equal(await page.locator("#fs-reset").isEnabled(), true);
    assert.match(new URL(page.url()).hash, /z=2\.\d+\.\d+\.[0-9a-f]{8}/);
    // On the canvas, not only in the state: the zoomed frame's box spans the whole width at
    // its row (less the one-pixel gap at its end), and main, its parent, spans it faded.
    const row = await canvasRow(page, rowTop(st, manifest.depth, 2));
    assert.equal(row.length, st.viewport.width);
    const gc = hotColor("background::gc");
    const off = row.findIndex((px, i) => i < row.length - 1 && !isRgb(px, gc));
    assert.equal(off, -1, `background::gc fills its row: pixel ${off} is ${row[off]}, not ${hex(gc)}`);
    const bg = await canvasBackground(page);
    assert.ok(isRgb(row[row.length - 1], bg), "the gap after it");
    const fadedMain = faded(hotColor("main"), bg);
    const mainRow = await canvasRow(page, rowTop(st, manifest.depth, 1));
    assert.ok(mainRow.slice(0, -1).every((px) => isRgb(px, fadedMain, 1)), `main is faded across the width (${hex(fadedMain)}): ${mainRow[0]}`);
    // The zoomed frame now spans the canvas: hovering anywhere on its row shows 100% of zoom.
    const box = await page.locator("#fs-canvas").boundingBox();
    const c = await frameCenter(page, p, st);
    await page.mouse.move(box.x + 5, c.y);
    const info = await page.locator("#fs-info").textContent();
    assert.ok(info.includes(`background::gc`) && info.includes("100.00% of zoom"), info);
    t.diagnostic(`zoomed paint drew in ${st.paintMs.toFixed(1)} ms`);
    await done();
  });

  test("words: an ancestor of the zoom contains it, the Matched line names each whole, metadata goes through the value formatter", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    let st = await state(page);
    const p = ["main", "background::gc"];
    const { x, y } = await frameCenter(page, p, st);
    await page.mouse.click(x, y);
    st = await idle(page);
    // Hover main, the zoomed frame's parent: its share of the zoom would be over 100%.
    const m = await frameCenter(page, ["main"], st);
    await page.mouse.move(m.x, m.y);
    const info = await page.locator("#fs-info").textContent();
    assert.ok(info.includes(`main`) && info.includes(`(${pct(TOTAL, TOTAL)} of all, contains the zoom)`), info);
    assert.ok(!/% of zoom/.test(info), info);
    // The zoomed frame itself still gives its share of the zoom.
    const z = await frameCenter(page, p, st);
    await page.mouse.move(z.x, z.y);
    assert.ok((await page.locator("#fs-info").textContent()).includes("100.00% of zoom"));
    // A search in the zoom: the two percentages say what they are of.
    await page.fill("#fs-search", "finalize_1");
    st = await idle(page);
    const want = matchedByStacks(STACKS, /finalize_1/i);
    const tot = pathTotal(STACKS, p);
    const fns = new Set(STACKS.flatMap(([f]) => f.filter((n) => /finalize_1/i.test(n)))).size;
    assert.equal(
      await page.locator("#fs-matched").textContent(),
      `Matched ${countText(want)} samples (${pct(want, TOTAL)} of total; ${pct(want, tot)} of the zoomed frame) in ${fns} functions`,
    );
    await done();
    // A cpuprofile's duration (787,980 µs) in the run page's metadata, as the value formatter says it.
    const input = path.join(tmp, "in-cpu");
    fs.mkdirSync(input, { recursive: true });
    fs.copyFileSync(path.join(HERE, "../data/cpuprofile/node.cpuprofile"), path.join(input, "node.cpuprofile"));
    build(input, path.join(tmp, "out-cpu"));
    const html = fs.readFileSync(path.join(tmp, "out-cpu/p/node/index.html"), "utf8");
    assert.match(html, /<span class="fs-meta-item" title="duration">duration 788 ms<\/span>/);
  });

  test("the keyboard reaches every frame: Tab to the graph, arrows to parent, child and neighbour, Enter zooms; the info line is announced", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    // Every control has an accessible name; the canvas is focusable and no static image.
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll("#fs-app button, #fs-app input, #fs-app select, #fs-canvas")]
        .filter((e) => !e.hidden && !(e.getAttribute("aria-label") || e.textContent.trim() || e.labels?.length))
        .map((e) => e.outerHTML),
    );
    assert.deepEqual(unnamed, []);
    assert.equal(await page.getAttribute("#fs-canvas", "role"), null);
    assert.equal(await page.getAttribute("#fs-canvas", "tabindex"), "0");
    assert.equal(await page.getAttribute("#fs-info", "aria-live"), "polite");
    // Tab from the last toolbar control to the canvas: the keyboard starts on the root.
    await page.focus("#fs-copy");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.id), "fs-canvas");
    assert.equal(await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle), "solid", "focus is visible");
    let st = await state(page);
    assert.deepEqual(st.focus, { name: "all", depth: 0, offset: 0, total: TOTAL });
    const kids = (d, parent) => framesAtDepth(STACKS, d).filter((f) => f.path.slice(0, -1).join(";") === parent.join(";"));
    const at = (f) => ({ name: f.name, depth: f.path.length, offset: f.offset, total: f.total });
    // Up (children are above in a flame graph): main, then main's first child.
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    st = await state(page);
    const first = kids(2, ["main"])[0];
    assert.deepEqual(st.focus, at(first));
    assert.ok((await page.locator("#fs-info").textContent()).includes(first.name), "the info line says the focused frame");
    // The focused frame is outlined on the overlay: dark pixels along its box's top edge.
    const edge = await page.evaluate(({ y, x0, x1 }) => {
      const c = document.getElementById("fs-overlay");
      const d = c.getContext("2d").getImageData(0, y, c.width, 1).data;
      let n = 0;
      for (let x = Math.ceil(x0) + 2; x < Math.floor(x1) - 2; x++) if (d[4 * x + 3] > 128 && d[4 * x] < 64) n += 1;
      return { n, want: Math.floor(x1) - Math.ceil(x0) - 4 };
    }, { y: rowTop(st, manifest.depth, 2) - 1, x0: xOfValue(st, first.offset), x1: xOfValue(st, first.offset + first.total) });
    assert.equal(edge.n, edge.want, "the outline runs along the frame");
    // Right: the next sibling; Left: back; Down: the parent.
    await page.keyboard.press("ArrowRight");
    const second = kids(2, ["main"])[1];
    assert.deepEqual((await state(page)).focus, at(second));
    await page.keyboard.press("ArrowLeft");
    assert.deepEqual((await state(page)).focus, at(first));
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowDown");
    assert.equal((await state(page)).focus.name, "main");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowRight");
    // Enter zooms to the focused frame: on the canvas, it fills its row.
    await page.keyboard.press("Enter");
    st = await idle(page);
    const third = kids(2, ["main"])[1];
    assert.deepEqual(st.zoom && { name: st.zoom.name, depth: st.zoom.depth, offset: st.zoom.offset, total: st.zoom.total }, at(third));
    const row = await canvasRow(page, rowTop(st, manifest.depth, 2));
    const col = hotColor(third.name);
    assert.ok(row.slice(0, -1).every((px) => isRgb(px, col)), `${third.name} fills its row`);
    // Escape on the canvas resets the zoom.
    await page.keyboard.press("Escape");
    st = await idle(page);
    assert.equal(st.zoom, null);
    await done();
  });

  test("clicking a faded ancestor zooms out to it, Escape and the reset button reset", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    let st = await state(page);
    const root = await canvasPicture(page);
    /** The box of the frame at depth `d` spans the canvas's width (less its end gap) in `rgb`. */
    const spans = async (d, rgb, tol = 0) => {
      const row = await canvasRow(page, rowTop(st, manifest.depth, d));
      const off = row.findIndex((px, i) => i < row.length - 1 && !isRgb(px, rgb, tol));
      assert.equal(off, -1, `depth ${d}: pixel ${off} is ${row[off]}, not ${hex(rgb)}`);
    };
    const deep = ["main", "server::run", "server::handle_request"];
    let pt = await frameCenter(page, deep, st);
    await page.mouse.click(pt.x, pt.y);
    st = await idle(page);
    assert.equal(st.zoom.name, "server::handle_request");
    await spans(3, hotColor("server::handle_request"));
    const bg = await canvasBackground(page);
    await spans(2, faded(hotColor("server::run"), bg), 1);
    await shot(page, "zoom");
    // server::run is an ancestor, drawn faded across the whole width below the zoomed frame.
    pt = await frameCenter(page, ["main", "server::run"], st);
    const box = await page.locator("#fs-canvas").boundingBox();
    await page.mouse.click(box.x + box.width - 10, pt.y);
    st = await idle(page);
    assert.equal(st.zoom.name, "server::run");
    assert.equal(st.zoom.total, pathTotal(STACKS, ["main", "server::run"]));
    await spans(2, hotColor("server::run"));
    await spans(1, faded(hotColor("main"), bg), 1);
    await page.mouse.move(5, 5);
    await page.keyboard.press("Escape");
    st = await idle(page);
    assert.equal(st.zoom, null);
    assert.equal(new URL(page.url()).hash, "");
    assertSamePicture(await canvasPicture(page), root, "Escape: the canvas shows the whole graph again, as first drawn");
    pt = await frameCenter(page, deep, st);
    await page.mouse.click(pt.x, pt.y);
    await idle(page);
    await page.click("#fs-reset");
    st = await idle(page);
    assert.equal(st.zoom, null);
    assertSamePicture(await canvasPicture(page), root, "reset: the canvas shows the whole graph again, as first drawn");
    await done();
  });

  test("a regex search gives the exact matched percentage from the search buckets, no chunk fetched", async (t) => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    const chunksBefore = (await state(page)).chunksLoaded;
    await page.mouse.click(5, 300); // focus the page, not the search box
    await page.keyboard.press("/");
    assert.equal(await page.evaluate(() => document.activeElement.id), "fs-search", "/ focuses the search box");
    const q = "visit|level_1|JSON|gc::finalize_1";
    await page.keyboard.type(q);
    let st = await idle(page);
    const want = matchedByStacks(STACKS, new RegExp(q, "i"));
    assert.equal(st.query, q);
    assert.equal(st.matched.value, want);
    assert.ok(Math.abs(st.matched.percent - (100 * want) / TOTAL) < 1e-9);
    assert.deepEqual(st.chunksLoaded, chunksBefore, "search fetches no chunk");
    // Only the buckets holding the matched names' intervals, each once.
    const names = manifest.names.flatMap((n) => JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(tmp, "out/p/big/g/samples", n.file))).toString("utf8")).names);
    const re = new RegExp(q, "i");
    const ids = names.flatMap((n, i) => (re.test(n) ? [i] : []));
    const buckets = manifest.search.filter((b) => ids.some((i) => b.names[0] <= i && i < b.names[1])).map((b) => dataUrl() + b.file);
    assert.deepEqual([...st.searchLoaded].sort(), buckets.sort());
    const text = await page.locator("#fs-matched").textContent();
    assert.ok(text.includes(`${countText(want)} samples (${pct(want, TOTAL)} of total) in `), text);
    await searchPixels(page, st, new RegExp(q, "i"));
    t.diagnostic(`search with the bucket fetch took ${st.searchMs.toFixed(1)} ms`);
    await shot(page, "search");
    // The case toggle: "JSON" no longer matches json.
    await page.click("#fs-case");
    st = await idle(page);
    assert.equal(st.caseSensitive, true);
    assert.equal(st.matched.value, matchedByStacks(STACKS, new RegExp(q)));
    await searchPixels(page, st, new RegExp(q));
    // Ctrl-F focuses the search box too.
    await page.mouse.click(5, 300);
    await page.keyboard.press("Control+f");
    assert.equal(await page.evaluate(() => document.activeElement.id), "fs-search");
    // A bad regex says so and matches nothing.
    await page.fill("#fs-search", "visit(");
    st = await idle(page);
    assert.ok(st.queryError);
    assert.equal(st.matched.value, 0);
    assert.match(await page.locator("#fs-matched").textContent(), /Not a regular expression/);
    await done();
  });

  test("the top table sorts by self, total and name, and a click searches for exactly that function", async () => {
    const { page, done } = await openPage(`${site.url}p/big/#v=table`);
    assert.equal(await page.locator("#fs-table").isVisible(), true);
    assert.equal(await page.locator("#fs-canvas").isVisible(), false);
    const firstName = () => page.locator("#fs-table tbody tr").first().locator("td").first().textContent();
    // Self: the function with the largest self (sum over the stacks that end in it).
    const selfOf = new Map();
    for (const [f, c] of STACKS) selfOf.set(f[f.length - 1], (selfOf.get(f[f.length - 1]) || 0) + c);
    const topSelf = [...selfOf].sort((a, b) => b[1] - a[1])[0][0];
    assert.equal(await firstName(), topSelf);
    await page.click("#fs-table button[data-sort=total]");
    // Total: the stacks that contain the function (recursion counted once).
    const totals = new Map();
    for (const [f, c] of STACKS) for (const fn of new Set(f)) totals.set(fn, (totals.get(fn) || 0) + c);
    const totalOf = (fn) => totals.get(fn);
    const names = [...totals.keys()];
    const topTotal = [...names].sort((a, b) => totalOf(b) - totalOf(a))[0];
    assert.equal(await firstName(), topTotal);
    assert.match(new URL(page.url()).hash, /s=total/);
    await page.click("#fs-table button[data-sort=name]");
    assert.equal(await firstName(), [...names].sort()[0]);
    // Click the row of the C++ template function: its exact, escaped alternative is searched.
    await page.click("#fs-table button[data-sort=total]");
    const row = (fn) => page.locator("#fs-table tbody tr", { has: page.locator("td.fs-name", { hasText: new RegExp(`^${esc(fn)}$`) }) });
    await row(TEMPLATE_FN).click();
    let st = await idle(page);
    assert.equal(st.caseSensitive, false, "a row click leaves match case off");
    assert.equal(st.query, `^${esc(TEMPLATE_FN)}$`);
    assert.equal(st.matched.value, totalOf(TEMPLATE_FN));
    assert.equal(st.matched.functions, 1);
    assert.equal(st.view, "both", "the graph comes back to show the matches");
    await searchPixels(page, st, new RegExp(st.query));
    // A second row adds its function: both are matched, their stacks counted once.
    await row("memcpy").click();
    st = await idle(page);
    assert.equal(st.query, `^${esc(TEMPLATE_FN)}$|^memcpy$`);
    const both = new RegExp(`^(${esc(TEMPLATE_FN)}|memcpy)$`);
    assert.equal(st.matched.value, matchedByStacks(STACKS, both));
    assert.equal(st.matched.functions, 2);
    await searchPixels(page, st, both);
    assert.equal(await row("memcpy").evaluate((tr) => tr.classList.contains("fs-match")), true);
    // Clicking the first row again takes it out.
    await row(TEMPLATE_FN).click();
    st = await idle(page);
    assert.equal(st.query, "^memcpy$");
    assert.equal(st.matched.value, matchedByStacks(STACKS, /^memcpy$/));
    await searchPixels(page, st, /^memcpy$/);
    // A search typed after row clicks is not case-sensitive: upper case finds lower case names.
    await page.fill("#fs-search", "MEMCPY|MALLOC");
    st = await idle(page);
    assert.equal(st.caseSensitive, false);
    assert.equal(st.matched.functions, 2);
    assert.equal(st.matched.value, matchedByStacks(STACKS, /memcpy|malloc/i));
    await searchPixels(page, st, /memcpy|malloc/i);
    await done();
  });

  test("clicking the sorted column's header reverses the order, and the link keeps it", async () => {
    const { page, done } = await openPage(`${site.url}p/big/#v=table&s=total`);
    const names = () => page.locator("#fs-table tbody tr td.fs-name").allTextContents();
    const totals = new Map();
    for (const [f, c] of STACKS) for (const fn of new Set(f)) totals.set(fn, (totals.get(fn) || 0) + c);
    const byTotal = [...totals.keys()].sort((a, b) => totals.get(b) - totals.get(a));
    let shown = await names();
    assert.equal(totals.get(shown[0]), totals.get(byTotal[0]), "largest total first");
    assert.equal(await page.locator("#fs-table th:has(button[data-sort=total])").getAttribute("aria-sort"), "descending");
    await page.click("#fs-table button[data-sort=total]");
    shown = await names();
    const least = Math.min(...totals.values());
    assert.equal(totals.get(shown[0]), least, `smallest total first after a click: ${shown[0]}`);
    for (let i = 1; i < shown.length; i++) assert.ok(totals.get(shown[i - 1]) <= totals.get(shown[i]), `ascending at row ${i}`);
    assert.equal(await page.locator("#fs-table th:has(button[data-sort=total])").getAttribute("aria-sort"), "ascending");
    assert.match(new URL(page.url()).hash, /s=total&r=1/);
    // Again: back to descending. Another column starts in its own order.
    await page.click("#fs-table button[data-sort=total]");
    assert.equal(totals.get((await names())[0]), totals.get(byTotal[0]));
    await page.click("#fs-table button[data-sort=name]");
    await page.click("#fs-table button[data-sort=name]");
    const sortedNames = [...totals.keys()].sort();
    assert.equal((await names())[0], sortedNames[sortedNames.length - 1], "names Z to A");
    await done();
  });

  test("at 1920 px a zoomed search's long Matched line wraps in its own box: the toolbar's buttons stay on one row", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    let st = await state(page);
    const { x, y } = await frameCenter(page, ["main", "background::gc"], st);
    await page.mouse.click(x, y);
    await page.click("#fs-search");
    await page.keyboard.type(".");
    st = await idle(page);
    assert.equal(st.zoom.name, "background::gc");
    const matched = await page.textContent("#fs-matched");
    assert.match(matched, /^Matched .+ of the zoomed frame\) in [\d,]+ functions$/, "the long form of the Matched line (this test's premise)");
    // Every button and menu of the toolbar on one row: their tops within a few pixels.
    const tops = await page.evaluate(() =>
      [...document.querySelectorAll(".fs-toolbar button, .fs-toolbar select, .fs-toolbar input")].filter((e) => e.offsetParent).map((e) => e.getBoundingClientRect().top),
    );
    assert.ok(Math.max(...tops) - Math.min(...tops) < 12, `the controls' tops: ${tops.join(", ")}`);
    // And the whole Matched line is shown, not cut.
    const cut = await page.evaluate(() => {
      const m = document.getElementById("fs-matched");
      return m.scrollWidth > m.clientWidth + 1 || m.scrollHeight > m.clientHeight + 1;
    });
    assert.equal(cut, false, "the Matched line is shown whole");
    await done();
  });

  test("a zoom and a search are history entries: Back undoes them without leaving the page, Forward redoes them", async () => {
    // Wide enough that the zoomed search's Matched line keeps one line: the pictures compared
    // are then of one size (at 1920 px it takes two, and the canvas follows a frame later).
    const { page, done } = await openPage(`${site.url}p/big/`, { viewport: { width: 2200, height: 1080 } });
    let st = await state(page);
    const rootPicture = await canvasPicture(page);
    const start = page.url();
    const length0 = await page.evaluate(() => history.length);
    const p = ["main", "background::gc"];
    const { x, y } = await frameCenter(page, p, st);
    await page.mouse.click(x, y);
    st = await idle(page);
    assert.equal(st.zoom.name, "background::gc");
    const zoomPicture = await canvasPicture(page);
    // A search typed letter by letter is one entry, not one per letter.
    await page.click("#fs-search");
    await page.keyboard.type("memcpy");
    st = await idle(page);
    assert.equal(st.query, "memcpy");
    const searchPicture = await canvasPicture(page);
    assert.equal(await page.evaluate(() => history.length), length0 + 2, "the zoom and the search: two entries");
    // Back: the search is undone, the zoom stays.
    const settled = (pred) => page.waitForFunction(pred, null, { polling: 50 }).then(() => idle(page));
    await page.goBack();
    st = await settled(() => window.flamesite.state().query === "");
    assert.equal(st.zoom && st.zoom.name, "background::gc");
    assert.equal(await page.inputValue("#fs-search"), "");
    assertSamePicture(await canvasPicture(page), zoomPicture, "the zoomed picture without highlight");
    // Back again: the whole graph, still on this page.
    await page.goBack();
    st = await settled(() => window.flamesite.state().zoom === null);
    assert.equal(page.url(), start);
    assert.equal(st.viewport.x0, 0);
    assert.equal(st.viewport.x1, TOTAL);
    assertSamePicture(await canvasPicture(page), rootPicture, "the whole graph as first drawn");
    // Forward twice: the zoom, then the search, back again.
    await page.goForward();
    st = await settled(() => window.flamesite.state().zoom !== null);
    assert.equal(st.zoom.name, "background::gc");
    assertSamePicture(await canvasPicture(page), zoomPicture, "the canvas");
    await page.goForward();
    st = await settled(() => window.flamesite.state().query === "memcpy");
    assert.equal(st.matched.value, matchedByStacks(STACKS, /memcpy/i));
    assertSamePicture(await canvasPicture(page), searchPicture, "the canvas");
    await done();
  });

  test("a footnote link in the notes scrolls to the note and keeps the zoom and the search", async (t) => {
    const input = path.join(tmp, "in-notes");
    fs.mkdirSync(input, { recursive: true });
    fs.writeFileSync(path.join(input, "run.folded"), smallProfile());
    fs.writeFileSync(path.join(input, "run.md"), "Slower since the pool change.[^pool]\n\n[^pool]: The pool shrank from 8 to 4.\n");
    build(input, path.join(tmp, "out-notes"));
    const notesSite = await serve(path.join(tmp, "out-notes"), "/perf/");
    const small = parseFolded(smallProfile());
    const { page, done } = await openPage(`${notesSite.url}p/run/`);
    try {
      let st = await state(page);
      const { x, y } = await frameAt(page, small, ["main", "a"], st, 4);
      await page.mouse.click(x, y);
      await page.fill("#fs-search", "c");
      // The pointer off the graph, as it will be on the footnote: no hovered frame in either picture.
      await page.mouse.move(0, 0);
      st = await framesThenIdle(page);
      assert.equal(st.zoom.name, "a");
      const before = st.viewport;
      const hash = new URL(page.url()).hash;
      assert.match(hash, /z=2\.0\.50\.[0-9a-f]{8}&q=c/);
      const picture = await canvasPicture(page);
      const ref = page.locator(".fs-notes sup.footnote-reference a");
      assert.equal(await ref.count(), 1);
      const target = (await ref.getAttribute("href")).slice(1);
      await ref.click();
      await page.waitForFunction((id) => document.activeElement && document.activeElement.id === id, target);
      st = await framesThenIdle(page);
      assert.equal(st.zoom && st.zoom.name, "a", "the zoom stays");
      assert.equal(st.query, "c", "the search stays");
      assert.equal(new URL(page.url()).hash, hash, "the fragment still holds the state");
      // What sets the graph box's height, said when it differs (it was 34 px shorter once, in a
      // full run on a busy machine, and never again): the rows above it and the panel beside.
      const boxes = () =>
        page.evaluate(() =>
          [".fs-header", ".fs-runnav", ".fs-about", ".fs-toolbar", "#fs-info", "#fs-error", ".fs-graphbox"].map((sel) => {
            const e = document.querySelector(sel);
            const r = e && e.getBoundingClientRect();
            return `${sel} ${r ? `${Math.round(r.top)}+${Math.round(r.height)}` : "none"}`;
          }),
        );
      if (JSON.stringify(st.viewport) !== JSON.stringify(before)) t.diagnostic(`layout after the footnote: ${(await boxes()).join(", ")}; window ${await page.evaluate(() => `${innerWidth}x${innerHeight}, scrollY ${scrollY}`)}`);
      assert.deepEqual(st.viewport, before, "the graph's view is where it was");
      assertSamePicture(await canvasPicture(page), picture, "the canvas still shows the zoom and the highlight");
      // An anchor typed into the address bar is shown too, and the state put back.
      await page.evaluate((id) => (location.hash = `#${id}`), target);
      await page.waitForFunction((h) => location.hash === h, hash);
      st = await idle(page);
      assert.equal(st.zoom && st.zoom.name, "a");
      assert.equal(st.query, "c");
    } finally {
      await done();
      await notesSite.close();
    }
  });

  test("the permalink restores zoom, search and view, also after a rebuild of the same input", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    let st = await state(page);
    const p = ["main", "walk_tree", "visit", "visit"];
    const pt = await frameCenter(page, p, st);
    await page.mouse.click(pt.x, pt.y);
    await idle(page);
    await page.fill("#fs-search", "hash_node|leaf");
    await page.click("#fs-views button[data-view=both]");
    await page.click("#fs-icicle");
    st = await idle(page);
    const link = st.link;
    await page.mouse.move(0, 0);
    const picture = await canvasPicture(page);
    assert.equal(st.zoom.name, "visit");
    assert.equal(st.zoom.depth, 4);
    const check = async (url, expect) => {
      const again = await openPage(url);
      const s2 = await state(again.page);
      assert.deepEqual(s2.zoom, expect.zoom);
      assert.equal(s2.query, expect.query);
      assert.equal(s2.matched.value, expect.matched.value);
      assert.equal(s2.matched.inZoom, expect.matched.inZoom);
      assert.equal(s2.view, "both");
      assert.equal(s2.icicle, true);
      assert.equal(await again.page.locator("#fs-search").inputValue(), expect.query);
      // And the user sees the same picture: the zoomed, highlighted icicle, pixel for pixel.
      assert.deepEqual(s2.viewport, expect.viewport);
      assertSamePicture(await canvasPicture(again.page), picture, "the canvas shows the same picture");
      await again.done();
    };
    await check(link, st);
    // Editing the fragment by hand (or going back) applies it too.
    await page.evaluate(() => (location.hash = "#q=leaf_work&v=table"));
    await page.waitForFunction(() => window.flamesite.state().query === "leaf_work");
    const edited = await idle(page);
    assert.equal(edited.view, "table");
    assert.equal(edited.zoom, null);
    assert.equal(edited.matched.value, matchedByStacks(STACKS, /leaf_work/i));
    await page.evaluate((h) => (location.hash = h), new URL(link).hash);
    await page.waitForFunction(() => window.flamesite.state().zoom !== null);
    assert.equal((await idle(page)).zoom.name, "visit");
    // Copy link puts the same URL on the clipboard.
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.click("#fs-copy");
    await page.waitForFunction(() => document.getElementById("fs-copied").textContent !== "");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link);
    await done();
    // Rebuild the same input into a new folder and open the same fragment there.
    const in2 = path.join(tmp, "in-again");
    writeInputs(in2);
    build(in2, path.join(tmp, "out-again"));
    const site2 = await serve(path.join(tmp, "out-again"), "/other/prefix/");
    try {
      await check(`${site2.url}p/big/${new URL(link).hash}`, st);
    } finally {
      await site2.close();
    }
  });

  test("a link to a frame that is not in a changed graph shows the whole graph and says so", async () => {
    const in3 = path.join(tmp, "in-changed");
    writeInputs(in3, BIG.replaceAll("walk_tree", "walk_forest"));
    build(in3, path.join(tmp, "out-changed"));
    const site3 = await serve(path.join(tmp, "out-changed"), "/perf/");
    try {
      const { page, done } = await openPage(`${site.url}p/big/`);
      const st = await state(page);
      const pt = await frameCenter(page, ["main", "walk_tree"], st);
      await page.mouse.click(pt.x, pt.y);
      const hash = new URL((await idle(page)).link).hash;
      await done();
      const other = await openPage(`${site3.url}p/big/${hash}`);
      const s3 = await state(other.page);
      assert.equal(s3.zoom, null);
      assert.match(await other.page.locator("#fs-error").textContent(), /not in this graph/);
      await other.done();
    } finally {
      await site3.close();
    }
  });

  test("a real pprof heap profile's page switches between its four graphs with the selector; each is drawn in its unit and kept in the link", async () => {
    // Go's heap profile (tests/data/pprof, written by runtime/pprof) has four sample types;
    // the expected graphs are raw2folded.py's folded files of the same profile, not the build's.
    const data = path.resolve(HERE, "../data/pprof");
    const input = path.join(tmp, "in-heap");
    fs.mkdirSync(input, { recursive: true });
    fs.copyFileSync(path.join(data, "heap.pb.gz"), path.join(input, "heap.pb.gz"));
    build(input, path.join(tmp, "out-heap"));
    const types = fs.readFileSync(path.join(data, "heap.types"), "utf8").trim().split("\n").map((l) => l.split(/\s+/));
    const first = types.find((t) => t[2] === "default")[0];
    assert.equal(first, "inuse_space");
    const graphs = Object.fromEntries(
      types.map(([name, unit]) => {
        const stacks = parseFolded(fs.readFileSync(path.join(data, `heap.${name}.folded`), "utf8"));
        return [name, { unit, stacks, total: total(stacks) }];
      }),
    );
    const site6 = await serve(path.join(tmp, "out-heap"), "/perf/");
    try {
      const { page, done } = await openPage(`${site6.url}p/heap/`);
      const select = page.locator("#fs-graph");
      assert.equal(await select.isEnabled(), true, "the selector is enabled: the page has several graphs");
      const options = await select.locator("option").evaluateAll((os) => os.map((o) => o.dataset.name));
      assert.deepEqual(options, [first, ...types.map((t) => t[0]).filter((n) => n !== first)], "pprof's default sample type first, then the file's order");
      const fn = "main.allocSmall";
      const fnPath = ["runtime.main", "main.main", fn];
      /** What the user sees of graph `name`: the info line, and the canvas. */
      const seen = async (name) => {
        const st = await idle(page);
        const want = graphs[name];
        assert.equal(st.graph, name);
        assert.equal(await select.evaluate((s) => s.options[s.selectedIndex].dataset.name), name, "the selector shows the graph");
        const facts = await page.locator("#fs-info-facts").textContent();
        const totalText = want.unit === "bytes" ? bytesText(want.total) : countText(want.total);
        assert.ok(facts.startsWith(`total ${totalText} ·`), `${name}: ${facts} does not start with total ${totalText}`);
        // main.allocSmall's box at depth 3 is as wide as its share of this graph.
        const row = await canvasRow(page, rowTop(st, want.stacks.reduce((m, [f]) => Math.max(m, f.length + 1), 0), 3));
        const color = hotColor(fn);
        const width = row.filter((px) => isRgb(px, color)).length;
        const share = pathTotal(want.stacks, fnPath) / want.total;
        assert.ok(Math.abs(width - (share * st.viewport.width - 1)) <= 2, `${name}: ${fn} is ${width} px wide, not ${(share * 100).toFixed(1)}% of ${st.viewport.width} px`);
        const x = Math.floor(xOfValue(st, pathOffset(want.stacks, fnPath) + pathTotal(want.stacks, fnPath) / 2));
        assert.ok(isRgb(row[x], color), `${name}: the middle of ${fn} (x ${x}) is ${row[x]}, not ${hex(color)}`);
        return { picture: await canvasPicture(page), facts };
      };
      const pick = async (name) => {
        await select.selectOption({ index: options.indexOf(name) });
        await page.waitForFunction((n) => window.flamesite.state().graph === n, name);
        return seen(name);
      };
      const inuse = await seen(first);
      assert.equal(new URL(page.url()).hash, "");
      const objects = await pick("alloc_objects");
      assert.notEqual(objects.picture, inuse.picture, "the canvas shows another picture");
      assert.notEqual(objects.facts, inuse.facts);
      assert.equal(new URL(page.url()).hash, "#g=alloc_objects");
      // The link keeps the graph: reloading it shows the same graph, drawn the same.
      await page.reload();
      await page.waitForFunction(() => !!window.flamesite);
      assert.deepEqual(await seen("alloc_objects"), objects);
      // Every other graph, then back to the first, whose link has no `g`.
      for (const name of ["alloc_space", "inuse_objects"]) {
        const other = await pick(name);
        assert.equal(new URL(page.url()).hash, `#g=${name}`);
        assert.notEqual(other.picture, objects.picture);
      }
      assert.deepEqual(await pick(first), inuse);
      assert.equal(new URL(page.url()).hash, "");
      await done();
    } finally {
      await site6.close();
    }
  });

  test("dates no profile can have are flagged on the run, series and home pages: before 2000 by the build, in the future by the reader's clock", async () => {
    const input = path.join(tmp, "in-dates");
    fs.mkdirSync(path.join(input, "svc"), { recursive: true });
    // A pprof from a machine whose clock was never set (no date in its path), and a run whose
    // path dates it next century.
    fs.writeFileSync(path.join(input, "svc", "cpu.pb.gz"), zlib.gzipSync(pprofBytes({
      types: [["samples", "count"]],
      samples: [[["main", "work"], [5]]],
      timeNanos: 19 * 86400 * 1e9,
    })));
    fs.writeFileSync(path.join(input, "svc", "2099-06-01.folded"), "main;work 3\n");
    fs.writeFileSync(path.join(input, "svc", "2026-11-19.folded"), "main;work 4\n");
    build(input, path.join(tmp, "out-dates"));
    const site = await serve(path.join(tmp, "out-dates"), "/perf/");
    const flags = (page) => page.locator(".fs-dateflag").evaluateAll((fs) => fs.map((f) => [f.previousElementSibling?.getAttribute("datetime"), f.textContent]));
    try {
      const { page, done } = await openPage(`${site.url}p/svc/cpu/`);
      await idle(page);
      const old = await flags(page);
      assert.equal(old.length, 2, "the date in the page's head and in its facts");
      for (const [when, text] of old) {
        assert.match(when, /^1970-01-20/);
        assert.match(text, /before 2000/);
      }
      // The run dated next century, once the page is idle.
      await page.goto(`${site.url}p/svc/2099-06-01/`);
      await idle(page);
      await page.waitForFunction(() => document.querySelectorAll(".fs-dateflag").length > 0);
      assert.deepEqual((await flags(page)).map((f) => f[1]), ["in the future", "in the future"], "in the page's head and in its facts");
      // The series page flags both runs and not the plausible one; the home page its newest.
      await page.goto(`${site.url}s/svc/`);
      await page.waitForFunction(() => document.querySelectorAll("a.fs-run .fs-dateflag").length === 2);
      const listed = await page.locator("a.fs-run").evaluateAll((as) => as.map((a) => [a.querySelector("time").getAttribute("datetime").slice(0, 4), a.querySelector(".fs-dateflag")?.textContent || ""]));
      assert.deepEqual(listed.sort(), [["1970", "before 2000: a clock that was never set?"], ["2026", ""], ["2099", "in the future"]]);
      await page.goto(site.url);
      await page.waitForFunction(() => document.querySelectorAll(".fs-dateflag").length > 0);
      assert.deepEqual((await flags(page)).map((f) => [f[0].slice(0, 4), f[1]]), [["2099", "in the future"]]);
      await done();
    } finally {
      await site.close();
    }
  });

  test("a pprof whose default sample type adds up to 0 opens on the first graph with a value, and says the empty one is empty", async () => {
    // A .NET-shaped pprof (issue 28): sample types cpu and lock-time, lock-time last (pprof's
    // default when none is named, so the build lists it first) and 0 in every sample.
    const input = path.join(tmp, "in-empty");
    fs.mkdirSync(input, { recursive: true });
    fs.writeFileSync(path.join(input, "dotnet.pb.gz"), zlib.gzipSync(pprofBytes({
      types: [["cpu", "nanoseconds"], ["lock-time", "nanoseconds"]],
      samples: [[["Main", "Work"], [70, 0]], [["Main", "Idle"], [30, 0]]],
    })));
    build(input, path.join(tmp, "out-empty"));
    const site7 = await serve(path.join(tmp, "out-empty"), "/perf/");
    try {
      const { page, done } = await openPage(`${site7.url}p/dotnet/`);
      const select = page.locator("#fs-graph");
      const options = await select.locator("option").evaluateAll((os) => os.map((o) => [o.dataset.name, o.textContent]));
      assert.deepEqual(options.map((o) => o[0]), ["lock-time", "cpu"], "pprof's default sample type first");
      assert.match(options[0][1], /lock-time \(nanoseconds\) · empty/, "the menu says which graph is empty");
      assert.doesNotMatch(options[1][1], /empty/);
      assert.match(options[1][1], /^cpu \(nanoseconds\) · 100 ns$/, "the menu gives each graph's total");
      let st = await idle(page);
      assert.equal(st.graph, "cpu", "the page opens on the graph with a value");
      assert.equal(st.total, 100);
      assert.equal(await select.evaluate((s) => s.options[s.selectedIndex].dataset.name), "cpu");
      assert.equal(new URL(page.url()).hash, "", "the graph a link opens without g");
      assert.equal(await page.locator("#fs-error").isVisible(), false);
      // Its first view is the one preloaded.
      const preloads = await page.locator('link[rel="preload"][as="fetch"]').evaluateAll((ls) => ls.map((l) => l.getAttribute("href")));
      assert.ok(preloads.length > 1 && preloads.every((h) => h.includes("g/cpu/")), preloads.join(" "));
      // The empty graph, chosen, says so instead of showing a blank canvas.
      await select.selectOption({ index: 0 });
      await page.waitForFunction(() => window.flamesite.state().graph === "lock-time");
      st = await idle(page);
      assert.equal(new URL(page.url()).hash, "#g=lock-time");
      const error = page.locator("#fs-error");
      assert.equal(await error.isVisible(), true);
      assert.match(await error.textContent(), /The lock-time graph is empty: its values add up to 0\. The graph menu lists the others\./);
      await select.selectOption({ index: 1 });
      await page.waitForFunction(() => window.flamesite.state().graph === "cpu");
      await idle(page);
      assert.equal(await error.isVisible(), false, "the note goes with the empty graph");
      // The home page gives the series the total of the graph its run opens on, not 0.
      await page.goto(site7.url);
      const row = (await page.locator("tr.fs-series-row").innerText()).replace(/\s+/g, " ");
      assert.match(row, /100 ns/, row);
      assert.doesNotMatch(row, /\b0 ns/, row);
      await done();
    } finally {
      await site7.close();
    }
  });

  test("a lambda class renamed by the build says in its tooltip what the profile called it, as text", async () => {
    // Two runs' worth of one JVM's lambda names (docs/FORMAT.md, "Names the JVM generates"):
    // the graph holds them without the JVM's numbers; hovering says the profile's own form.
    const raw = ["App$$Lambda$75.0x00007ff44c0c4208.run", "Evil<img src=x onerror=window.__pwned=1>$$Lambda$3/0x00007ff44c0c4640.run"];
    const named = ["App$$Lambda_.run", "Evil<img src=x onerror=window.__pwned=1>$$Lambda_.run"];
    const lines = (names) => `main;${names[0]};work 30\nmain;${names[1]};work 20\nmain;other 10\n`;
    const input = path.join(tmp, "in-lambda");
    fs.mkdirSync(input, { recursive: true });
    fs.writeFileSync(path.join(input, "jvm.folded"), lines(raw));
    build(input, path.join(tmp, "out-lambda"));
    const site7 = await serve(path.join(tmp, "out-lambda"), "/perf/");
    try {
      const { page, done } = await openPage(`${site7.url}p/jvm/`);
      const st = await idle(page);
      const stacks = parseFolded(lines(named));
      for (const k of [0, 1]) {
        const { x, y } = await frameAt(page, stacks, ["main", named[k]], st, 4);
        await page.mouse.move(x, y);
        await page.waitForFunction(() => !document.getElementById("fs-tooltip").hidden);
        assert.equal(await page.locator("#fs-tooltip .fs-tip-name").textContent(), named[k]);
        const tip = await page.locator("#fs-tooltip > div").allTextContents();
        assert.equal(tip[tip.length - 1], `in the profile: ${raw[k]}`, tip.join(" | "));
        assert.ok((await page.locator("#fs-info-facts").textContent()).endsWith(`in the profile: ${raw[k]}`));
      }
      // The work under either is one function: a name that is not renamed says nothing more.
      const { x, y } = await frameAt(page, stacks, ["main", "other"], st, 4);
      await page.mouse.move(x, y);
      assert.ok(!(await page.locator("#fs-tooltip").textContent()).includes("in the profile"));
      assert.equal(await page.evaluate(() => typeof window.__pwned), "undefined", "the raw name is text");
      assert.equal(await page.locator("#fs-tooltip img, #fs-info-facts img").count(), 0);
      await done();
    } finally {
      await site7.close();
    }
  });

  test("a differential profile draws every path of both counts, coloured by the change of share, and says before and after", async () => {
    // DIFF: before 44 in all, after 32. Reckoned here from the folded text: each frame of depth
    // 2 is as wide as its share before plus its share after (the whole is 2), in name order.
    const rows = [
      ["a", 10, 20],
      ["b", 30, 5],
      ["c", 0, 7],
      ["gone", 4, 0],
    ];
    const [TB, TA] = [44, 32];
    const points = (b, a) => 100 * (a / TA - b / TB);
    const scale = Math.max(...rows.map(([, b, a]) => Math.abs(points(b, a))));
    // Grey 224 to red (220,38,30) or blue (38,96,220), by |change| / scale.
    const expected = (b, a) => {
      const d = points(b, a);
      const i = Math.min(1, Math.abs(d) / scale);
      const to = d > 0 ? [220, 38, 30] : [38, 96, 220];
      return to.map((t) => Math.round(224 + (t - 224) * i));
    };
    const { page, problems, done } = await openPage(`${site.url}p/diff/d/`);
    let st = await state(page);
    assert.equal(st.total, TA);
    assert.equal(st.totalBefore, TB);
    const box = await page.locator("#fs-canvas").boundingBox();
    const vp = st.viewport;
    const content = Math.max(3 * ROW_H, vp.height);
    const y = content - 3 * ROW_H - vp.scrollTop + ROW_H / 2; // depth 2
    const rgb = async (x) => (await canvasRow(page, y))[Math.round(x)];
    let left = 0;
    for (const [name, b, a] of rows) {
      const w = b / TB + a / TA;
      const x = ((left + w / 2) / 2) * vp.width;
      left += w;
      const got = await rgb(name === "gone" ? x - (x % 8) + 1 : x);
      const want = expected(b, a);
      assert.ok(got.every((v, k) => Math.abs(v - want[k]) <= 1), `${name}: ${got} is not ${want}`);
      if (name === "gone") {
        // Drawn although the later run lacks it, and hovering it says so.
        await page.mouse.move(box.x + x, box.y + y);
        const info = await page.locator("#fs-info").textContent();
        assert.ok(info.includes("only in the first count") && info.includes("total 4 samples → 0 samples"), info);
        assert.ok(info.includes("−9.09 pp of the total"), info);
      }
    }
    // The table gives before, after and the change of each function.
    await page.locator('#fs-views button[data-view="both"]').click();
    st = await idle(page);
    const row = page.locator("#fs-table tbody tr", { hasText: "gone" });
    assert.deepEqual(await row.locator("td:not(.fs-sw)").allTextContents(), ["gone", "4", "0", "−9.09 pp", "4", "0", "−9.09 pp"]);
    assert.deepEqual(await page.locator("#fs-table thead tr").first().locator("th").allTextContents(), ["Function", "Self (samples)", "Total (samples)", "Sandwich"], "samples, said once");
    assert.equal(await row.locator("td.fs-sw button").getAttribute("aria-label"), "Sandwich of gone");
    // Widths of the later run alone (flamegraph.pl's view): a [0, 20), b [20, 25), c [25, 32).
    await page.locator('#fs-layout button[data-layout="after"]').click();
    st = await idle(page);
    assert.equal(st.layout, "after");
    assert.ok(page.url().includes("l=after"), page.url());
    for (const [name, b, a, at] of [["a", 10, 20, 10], ["b", 30, 5, 22], ["c", 0, 7, 28]]) {
      const got = await rgb((at / TA) * st.viewport.width);
      const want = expected(b, a);
      assert.ok(got.every((v, k) => Math.abs(v - want[k]) <= 1), `after view, ${name}: ${got} is not ${want}`);
    }
    // A search in this layout (which reads the union's search files) matches the same values,
    // and its matched value is the later run's: b and gone, 30 + 4 before, 5 + 0 after.
    await page.fill("#fs-search", "^(b|gone)$");
    st = await idle(page);
    assert.deepEqual([st.matched.before, st.matched.after, st.matched.value], [34, 5, 5]);
    assert.ok((await page.locator("#fs-matched").textContent()).startsWith("Matched 34 samples → 5 samples"));
    assert.ok((await page.locator("#fs-legend-text").textContent()).includes("Red grew, blue shrank from the first count to the second count"));
    // The widths toggle names the two counts of this file, not two runs.
    assert.deepEqual(await page.locator("#fs-layout button").allTextContents(), ["Both counts", "Second count", "First count"]);
    // The table's columns say the same words.
    await page.locator('#fs-views button[data-view="table"]').click();
    assert.deepEqual(await page.locator("#fs-table thead tr").nth(1).locator("th").allTextContents(), ["First count", "Second count", "Change", "First count", "Second count", "Change"]);
    assert.deepEqual(problems, []);
    await done();
  });

  test("a search on a comparison says what it matched before and after, nested matches once, zoomed or not, from the search files alone", async () => {
    // The big profile against a variant of it: every 5th stack gone, every 7th doubled, and
    // stacks where malloc calls memcpy and memcpy calls malloc (nested matches of one search).
    const before = STACKS;
    const after = [];
    STACKS.forEach(([frames, c], i) => {
      if (i % 5 === 4) return;
      after.push([frames, i % 7 === 0 ? 2 * c : c]);
    });
    after.push([["main", "server::run", "server::handle_request", "handlers::health", "malloc", "memcpy", "malloc"], 900]);
    after.push([["main", "walk_tree", "visit", "memcpy", "cache::get"], 400]);
    const folded = (stacks) => stacks.map(([f, c]) => `${f.join(";")} ${c}`).join("\n") + "\n";
    const dir = path.join(tmp, "cmp");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "a.folded"), folded(before));
    fs.writeFileSync(path.join(dir, "b.folded"), folded(after));
    // Small search files, so that a search reads several and the frames' ids run past a word.
    const cfg = path.join(dir, "site.toml");
    fs.writeFileSync(cfg, `title = "cmp"\ntheme_dir = ${JSON.stringify(THEME)}\n[chunks]\nsearch_intervals = 40\n`);
    run(["diff", "--config", cfg, path.join(dir, "a.folded"), path.join(dir, "b.folded"), "-o", path.join(dir, "out")]);
    const cmpManifest = JSON.parse(fs.readFileSync(path.join(dir, "out/g/samples/manifest.json"), "utf8"));
    assert.ok(cmpManifest.search.length > 10, `${cmpManifest.search.length} search files`);
    // The union layout reckoned here from the stacks (docs/FORMAT.md "Differential graphs"):
    // what a search matched in its widths is the width of every matched frame not under another.
    const d = diffTable(before, after);
    const [TB, TA] = [d.tb, d.ta];
    const unionMatched = (re, zoom = null) => {
      const under = new Uint8Array(d.frames.length);
      let sum = 0;
      for (const f of d.frames) {
        const hit = f.depth > 0 && re.test(d.names[f.name]);
        under[f.id] = (f.depth > 0 && under[f.parent]) || hit ? 1 : 0;
        if (!hit || (f.depth > 0 && under[f.parent])) continue;
        const lo = zoom ? Math.max(f.lo, zoom.lo) : f.lo;
        const hi = zoom ? Math.min(f.lo + f.width, zoom.lo + zoom.width) : f.lo + f.width;
        if (hi > lo) sum += hi - lo;
      }
      return sum;
    };
    const cmpSite = await serve(path.join(dir, "out"), "/perf/");
    try {
      const { page, done } = await openPage(cmpSite.url);
      let st = await idle(page);
      assert.deepEqual([st.totalBefore, st.total], [TB, TA]);
      const chunks = st.chunksLoaded.length;
      const check = async (q, zoom) => {
        await page.fill("#fs-search", q);
        st = await idle(page);
        const re = new RegExp(q, "i");
        const [b, a] = [matchedByStacks(before, re), matchedByStacks(after, re)];
        assert.deepEqual([st.matched.before, st.matched.after], [b, a], `/${q}/: the values matched before and after`);
        const union = unionMatched(re);
        assert.equal(st.matched.value, union, `/${q}/: the width matched in the union`);
        assert.ok(Math.abs(st.matched.percent - (100 * union) / 2 ** 31) < 1e-9);
        assert.equal(st.matched.inZoom, zoom ? unionMatched(re, zoom) : union, `/${q}/: the part in the zoomed frame`);
        const text = await page.locator("#fs-matched").textContent();
        const words = `Matched ${countText(b)} samples → ${countText(a)} samples (${pct(b, TB)} → ${pct(a, TA)}, `;
        assert.ok(text.startsWith(words), `"${text}" says "${words}…"`);
        if (zoom) {
          // In the zoomed frame: the stacks through it with a match anywhere on them, as a
          // share of the frame's own value before and after.
          const through = (stacks) => stacks.filter(([f]) => pathIds.every((n, i) => f[i] === n));
          const [zb, za] = [pathTotal(before, pathIds), pathTotal(after, pathIds)];
          const [ib, ia] = [matchedByStacks(through(before), re), matchedByStacks(through(after), re)];
          assert.deepEqual([st.matched.beforeInZoom, st.matched.afterInZoom], [ib, ia], `/${q}/: matched in the zoomed frame`);
          const part = `; in the zoomed frame ${countText(ib)} samples → ${countText(ia)} samples, ${pct(ib, zb)} → ${pct(ia, za)} of it)`;
          assert.ok(text.includes(part), `"${text}" says "${part}"`);
        } else {
          assert.ok(!text.includes("zoomed"), text);
        }
      };
      for (const q of ["malloc|memcpy", "^visit$", "db::|cache::", "json"]) await check(q, null);
      assert.equal(st.chunksLoaded.length, chunks, "a search fetches no chunk");
      assert.ok(st.searchLoaded.length > 1 && st.searchLoaded.every((u) => /\/s\/\d+\.bin\.gz$/.test(u)), st.searchLoaded.join(" "));
      // Zoomed to server::handle_request: the part of the match in it.
      await page.fill("#fs-search", "");
      st = await idle(page);
      const pathIds = ["main", "server::run", "server::handle_request"];
      let z = d.frames[0];
      for (const name of pathIds) z = d.frames.find((f) => f.parent === z.id && d.names[f.name] === name);
      const box = await page.locator("#fs-canvas").boundingBox();
      const vp = st.viewport;
      const content = Math.max(cmpManifest.depth * vp.rowHeight, vp.height);
      const x = ((z.lo + z.width / 2) / 2 ** 31) * vp.width;
      await page.mouse.click(box.x + x, box.y + content - (z.depth + 1) * vp.rowHeight - vp.scrollTop + vp.rowHeight / 2);
      st = await idle(page);
      assert.equal(st.zoom && st.zoom.name, "server::handle_request");
      assert.deepEqual([st.zoom.offset, st.zoom.total], [z.lo, z.width]);
      for (const q of ["malloc|memcpy", "db::|cache::"]) await check(q, z);
      await done();
    } finally {
      await cmpSite.close();
    }
  });

  test("a comparison of two runs searches the runs' own files, in each run's decimal places, zoomed or not", async () => {
    // Whole counts, then hundredths: the comparison holds both in hundredths (3 is 300).
    const input = path.join(tmp, "in-runs");
    fs.mkdirSync(path.join(input, "app"), { recursive: true });
    fs.writeFileSync(path.join(input, "app", "2026-01-01.folded"), "main;a 3\nmain;b 1\n");
    fs.writeFileSync(path.join(input, "app", "2026-01-02.folded"), "main;a 2.25\nmain;c 0.5\n");
    const output = path.join(tmp, "out-runs");
    build(input, output);
    const graph = path.join(output, "p/app/2026-01-02/compare/g/samples");
    const manifest = JSON.parse(fs.readFileSync(path.join(graph, "manifest.json"), "utf8"));
    assert.deepEqual([manifest.search, manifest.diff.search], [[], "runs"], "no search files of its own");
    assert.ok(!fs.existsSync(path.join(graph, "s")));
    const site = await serve(output, "/perf/");
    try {
      const { page, done } = await openPage(`${site.url}p/app/2026-01-02/compare/`);
      let st = await idle(page);
      assert.deepEqual([st.totalBefore, st.total], [400, 275]);
      await page.fill("#fs-search", "^(b|c)$");
      st = await idle(page);
      assert.deepEqual([st.matched.before, st.matched.after], [100, 50]);
      const said = await page.locator("#fs-matched").textContent();
      assert.ok(said.startsWith("Matched 1 sample → 0.5 samples (25.00% → 18.18%"), said);
      const runs = st.searchLoaded.map((u) => new URL(u).pathname);
      assert.deepEqual(runs.map((u) => u.replace(/s\/\d+\.bin\.gz$/, "")).sort(), ["/perf/p/app/2026-01-01/g/samples/", "/perf/p/app/2026-01-02/g/samples/"]);
      // Zoomed to b, which only the earlier run has: in the union it follows a (3/4 and
      // 2.25/2.75 of the runs: 0.784 of the width) and is 1/8 wide; in the earlier run it is
      // [3, 4), in the later [2.25, 2.25). (Once the graph has taken the height the Matched
      // line left it: its line wraps the toolbar.)
      await page.waitForFunction(() => window.flamesite.state().viewport.height === document.getElementById("fs-scroll").clientHeight);
      st = await idle(page);
      const box = await page.locator("#fs-canvas").boundingBox();
      const vp = st.viewport;
      const content = Math.max(3 * vp.rowHeight, vp.height);
      await page.mouse.click(box.x + 0.85 * vp.width, box.y + content - 3 * vp.rowHeight - vp.scrollTop + vp.rowHeight / 2);
      st = await idle(page);
      assert.equal(st.zoom && st.zoom.name, "b");
      assert.deepEqual([st.matched.beforeInZoom, st.matched.afterInZoom], [100, 0]);
      await page.fill("#fs-search", "^(a|c)$");
      st = await idle(page);
      assert.deepEqual([st.matched.before, st.matched.after, st.matched.beforeInZoom, st.matched.afterInZoom], [300, 275, 0, 0]);
      // The later run's widths: its value.
      await page.locator('#fs-layout button[data-layout="after"]').click();
      st = await idle(page);
      assert.deepEqual([st.matched.before, st.matched.after, st.matched.value], [300, 275, 275]);
      await done();
    } finally {
      await site.close();
    }
  });

  test("markup in function names, titles, labels and notes is shown as text and never runs: hover, zoom, search, table, comparison, history", async () => {
    // Each payload sets window.__pwned to its own tag if it ever becomes HTML or script,
    // whether put in as an element, inside an attribute (both quotes) or in <title>.
    const PWN = {
      img: `<img src=x onerror="window.__pwned='img'">`,
      script: `<script>window.__pwned='script'</script>`,
      dq: `"><svg onload="window.__pwned='dq'">`,
      sq: `'><img src=x onerror=window.__pwned='sq'>`,
      iframe: `<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>`,
    };
    const names = Object.values(PWN);
    const folded = (k) => names.map((n, i) => `main;${n};work ${(names.length - i) * 10 * k}`).join("\n") + "\nmain;plain 7\n";
    const input = path.join(tmp, "in-pwn");
    fs.mkdirSync(path.join(input, "evil"), { recursive: true });
    const runs = [
      { file: "2026-11-20", title: `"><svg onload="window.__pwned='title-dq'">`, k: 1 },
      { file: "2026-11-21", title: `</title><img src=x onerror="window.__pwned='title'">`, k: 2 },
    ];
    const series = `'><svg onload="window.__pwned='series'">`;
    const label = `"><script>window.__pwned='label'</script>`;
    for (const r of runs) {
      fs.writeFileSync(path.join(input, "evil", `${r.file}.folded`), folded(r.k));
      fs.writeFileSync(path.join(input, "evil", `${r.file}.toml`), `series = ${JSON.stringify(series)}\ntitle = ${JSON.stringify(r.title)}\n[labels]\nhost = ${JSON.stringify(label)}\n`);
    }
    fs.writeFileSync(
      path.join(input, "evil", "2026-11-21.md"),
      [
        `Notes ${PWN.img} and ${PWN.script}.`,
        "",
        `[a link](javascript:window.__pwned='notes-js') <a href="#" onclick="window.__pwned='notes-click'">click</a> ${PWN.dq}`,
        "",
        `<iframe srcdoc="<script>parent.__pwned='notes-iframe'</script>"></iframe>`,
        "",
      ].join("\n"),
    );
    build(input, path.join(tmp, "out-pwn"));
    const index = JSON.parse(fs.readFileSync(path.join(tmp, "out-pwn/index.json"), "utf8"));
    const entry = index.series.find((x) => x.name === series);
    assert.ok(entry, JSON.stringify(index.series));
    const site7 = await serve(path.join(tmp, "out-pwn"), "/perf/");
    const STACKS7 = parseFolded(folded(2));
    // Nothing of it became markup: no element or handler of a payload, no script but the page's.
    const clean = async (page, where) => {
      // Any image or frame in the page has finished loading or failing, so an onerror or a
      // frame's script would have run by the next task.
      await page.waitForFunction(() => [...document.images].every((i) => i.complete) && [...document.querySelectorAll("iframe")].every((f) => f.contentDocument?.readyState === "complete"));
      assert.equal(await page.evaluate(() => typeof window.__pwned), "undefined", `${where}: a payload ran (${await page.evaluate(() => window.__pwned)})`);
      const injected = await page.evaluate(() =>
        [...document.querySelectorAll("img, iframe, svg[onload], [onerror], [onload], [onclick], a[href^='javascript']")].map((e) => e.outerHTML),
      );
      assert.deepEqual(injected, [], `${where}: injected elements`);
      const scripts = await page.evaluate(() => [...document.scripts].map((e) => e.src || e.textContent.slice(0, 60)));
      assert.ok(scripts.every((src) => /\/static\/[a-z]+\.js$/.test(src)), `${where}: scripts ${JSON.stringify(scripts)}`);
    };
    try {
      // The run page: title, labels and notes.
      const run = await openPage(new URL(entry.newest, site7.url).href);
      const { page } = run;
      await clean(page, "run page");
      assert.equal(await page.title(), `${runs[1].title} · ${series} · Test <site> & co`);
      assert.equal(await page.locator("h1.fs-crumb").textContent(), runs[1].title);
      assert.equal(await page.locator(".fs-crumb-series").textContent(), series);
      assert.equal(await page.locator(`a[rel="prev"]`).getAttribute("title"), runs[0].title, "the earlier run's title, whole, in an attribute");
      assert.ok((await page.locator(".fs-runmeta").textContent()).includes(label));
      const notes = await page.locator(".fs-notes").textContent();
      assert.ok(notes.includes("Notes") && notes.includes("a link") && notes.includes("click"), notes);
      // Hover each payload's frame: the tooltip and the info line give the name as text.
      let st = await state(page);
      const depth = 4; // rows: all, main, the payload, work
      for (const n of names) {
        const { x, y } = await frameAt(page, STACKS7, ["main", n], st, depth);
        await page.mouse.move(x, y);
        assert.equal(await page.locator("#fs-tooltip .fs-tip-name").textContent(), n);
        assert.equal(await page.locator("#fs-info-name").textContent(), n);
        assert.equal(await page.locator("#fs-tooltip .fs-tip-name").evaluate((e) => e.children.length), 0);
      }
      await clean(page, "run page, hovered");
      // Zoom to one: the info line says so, as text.
      const z = await frameAt(page, STACKS7, ["main", PWN.iframe], st, depth);
      await page.mouse.click(z.x, z.y);
      st = await idle(page);
      assert.equal(st.zoom.name, PWN.iframe);
      await page.mouse.move(5, 5);
      assert.equal(await page.locator("#fs-info-name").textContent(), `Zoomed: ${PWN.iframe}`);
      // Search them all and list them in the table: each row's name is exactly the payload.
      await page.keyboard.press("Escape");
      await page.fill("#fs-search", "onerror|script|svg|iframe");
      await page.click("#fs-views button[data-view=both]");
      st = await idle(page);
      assert.equal(st.matched.functions, names.length);
      const cells = page.locator("#fs-table td.fs-name");
      const listed = await cells.allTextContents();
      for (const n of names) assert.ok(listed.includes(n), `${n} listed: ${JSON.stringify(listed)}`);
      assert.deepEqual(await cells.evaluateAll((es) => es.filter((e) => e.children.length > 0).map((e) => e.innerHTML)), []);
      // With the search cleared, a click on a row searches for exactly that name (escaped into
      // a regex, shown in the box).
      await page.fill("#fs-search", "");
      await idle(page);
      await page.locator("#fs-table tbody tr", { hasText: "parent.__pwned" }).first().click();
      st = await idle(page);
      assert.equal(new RegExp(st.query).test(PWN.iframe), true);
      assert.equal(await page.locator("#fs-search").inputValue(), st.query);
      assert.equal(st.matched.value, pathTotal(STACKS7, ["main", PWN.iframe]));
      await clean(page, "run page, searched");
      // The permalink of that search opens the same, still as text.
      const again = await openPage(st.link);
      assert.equal((await state(again.page)).matched.value, st.matched.value);
      await clean(again.page, "permalink");
      await again.done();
      await run.done();

      // The comparison with the earlier run: the table of what changed lists the names as text.
      const cmp = await openPage(new URL("compare/", new URL(entry.newest, site7.url)).href);
      await cmp.page.fill("#fs-search", "onerror|script|svg|iframe");
      await cmp.page.click("#fs-views button[data-view=both]");
      await idle(cmp.page);
      const cmpListed = await cmp.page.locator("#fs-table td.fs-name").allTextContents();
      for (const n of names) assert.ok(cmpListed.includes(n), `${n} listed in the comparison: ${JSON.stringify(cmpListed)}`);
      await clean(cmp.page, "comparison");
      await cmp.done();

      // The series page: the runs' titles, and a function's history, whose points name the runs.
      const ser = await openPage(new URL(entry.url, site7.url).href, { app: false });
      await ser.page.fill("#fs-history-q", "onerror|iframe");
      const titles = ser.page.locator("#fs-history-plot svg title");
      await titles.first().waitFor({ state: "attached" });
      const tips = await titles.allTextContents();
      for (const r of runs) assert.ok(tips.some((t) => t.includes(r.title)), `${r.title} in ${JSON.stringify(tips)}`);
      assert.ok((await ser.page.locator("main").textContent()).includes(runs[0].title));
      await clean(ser.page, "series page");
      await ser.done();

      // The home page lists the series by its name, as text.
      const home = await openPage(site7.url, { app: false });
      assert.ok((await home.page.locator("main").textContent()).includes(series));
      await clean(home.page, "home page");
      await home.done();
    } finally {
      await site7.close();
    }
  });

  test("a profile whose file name is markup gets a page that shows it as text", async () => {
    const slug = fs.readdirSync(path.join(tmp, "out", "p")).find((d) => d.includes("img"));
    const evil = await openPage(`${site.url}p/${encodeURIComponent(slug)}/`);
    assert.equal(await evil.page.locator("body img").count(), 0);
    assert.ok((await evil.page.locator(".fs-meta").textContent()).includes(HOSTILE_FILE));
    assert.equal((await state(evil.page)).total, 65);
    await evil.done();
  });

  test("a missing or corrupt chunk shows a clear message in the page, not a blank canvas", async () => {
    const broken = path.join(tmp, "out-broken");
    fs.cpSync(path.join(tmp, "out"), broken, { recursive: true });
    const class0 = manifest.chunks.filter((c) => c.class === 0);
    const bad = class0[0].file; // needed by the first view: truncated
    const gone = class0[class0.length - 1].file; // the deepest rows: deleted
    fs.rmSync(path.join(broken, "p/big/g/samples", gone));
    const badPath = path.join(broken, "p/big/g/samples", bad);
    fs.writeFileSync(badPath, fs.readFileSync(badPath).subarray(0, 40));
    const site4 = await serve(broken, "/perf/");
    try {
      const { page, problems, done } = await openPage(`${site4.url}p/big/`, { allowErrors: true });
      let st = await state(page);
      const err = page.locator("#fs-error");
      assert.equal(await err.isVisible(), true);
      let text = await err.textContent();
      assert.ok(text.includes(bad) && /truncated or corrupt/.test(text), text);
      assert.equal(st.errors.length, 1);
      assert.ok(st.paints >= 1, "the page still paints what it has");
      // Scrolled to the top, the view needs the deepest rows. (Waiting for the view's scrollTop
      // to read 0 would race: the second message can make the graph's box shorter, and a
      // resize keeps the view's bottom where it was, which moves scrollTop off 0.)
      await page.locator("#fs-scroll").evaluate((e) => (e.scrollTop = 0));
      await page.waitForFunction(() => window.flamesite.state().errors.length === 2);
      st = await idle(page);
      text = await err.textContent();
      assert.ok(text.includes(gone) && /HTTP 404/.test(text), text);
      assert.equal(st.errors.length, 2);
      assert.ok(problems.every((p) => /Failed to load resource.*404/.test(p)), problems.join("\n"));
      await done();
      // A search needs every name file: a missing one is reported, the search says so.
      const lastNames = manifest.names[manifest.names.length - 1].file;
      fs.rmSync(path.join(broken, "p/big/g/samples", lastNames));
      const n = await openPage(`${site4.url}p/big/#q=visit`, { allowErrors: true });
      assert.match(await n.page.locator("#fs-matched").textContent(), /name table could not be loaded/);
      assert.ok((await n.page.locator("#fs-error").textContent()).includes(lastNames));
      await n.done();
      // Without a manifest (neither the packed one the page reads first nor manifest.json,
      // which it reads when the packed one is missing), the page says the graph could not be
      // loaded.
      fs.rmSync(path.join(broken, "p/big/g/samples/manifest.json.gz"));
      fs.rmSync(path.join(broken, "p/big/g/samples/manifest.json"));
      const m = await openPage(`${site4.url}p/big/`, { allowErrors: true });
      assert.match(await m.page.locator("#fs-error").textContent(), /Could not load this graph: manifest\.json: could not be fetched \(HTTP 404/);
      await m.done();
    } finally {
      await site4.close();
    }
  });
});

/**
 * A pprof profile (profile.proto: sample_type 1, sample 2, location 4, function 5, string_table
 * 6), written here field by field: `types` [[type, unit]], `samples` [[frames root first,
 * values]]. Each function has one location of the same id.
 */
function pprofBytes({ types, samples, timeNanos }) {
  const strings = [""];
  const str = (x) => (strings.includes(x) ? strings.indexOf(x) : strings.push(x) - 1);
  const varint = (n) => {
    const out = [];
    for (n = BigInt(n); n >= 0x80n; n >>= 7n) out.push(Number(n & 0x7fn) | 0x80);
    out.push(Number(n));
    return out;
  };
  const field = (no, bytes) => [...varint((no << 3) | 2), ...varint(bytes.length), ...bytes];
  const num = (no, n) => [...varint(no << 3), ...varint(n)];
  const packed = (no, ns) => field(no, ns.flatMap(varint));
  const body = [];
  for (const [type, unit] of types) body.push(...field(1, [...num(1, str(type)), ...num(2, str(unit))]));
  const ids = new Map();
  for (const [frames] of samples) for (const f of frames) if (!ids.has(f)) ids.set(f, ids.size + 1);
  for (const [frames, values] of samples) body.push(...field(2, [...packed(1, [...frames].reverse().map((f) => ids.get(f))), ...packed(2, values)]));
  for (const [name, id] of ids) {
    body.push(...field(4, [...num(1, id), ...field(4, num(1, id))]));
    body.push(...field(5, [...num(1, id), ...num(2, str(name))]));
  }
  for (const x of strings) body.push(...field(6, [...Buffer.from(x)]));
  if (timeNanos !== undefined) body.push(...num(9, timeNanos));
  return Buffer.from(body);
}
