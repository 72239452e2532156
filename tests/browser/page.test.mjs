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
  DEEP, HOSTILE, TEMPLATE_FN, bigProfile, frameCenter as frameAt, matchedByStacks, parseFolded, pathOffset, pathSelf, pathTotal, smallProfile, total,
} from "./fixtures.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const THEME = path.resolve(HERE, "../../themes/default");
const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium"; // Debian's chromium package
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const ROW_H = 18;
const HOSTILE_FILE = `<img src=x onerror=alert(1)>.folded`;

const BIN = process.env.FLAMESITE_BIN;
if (!BIN) throw new Error("FLAMESITE_BIN is not set: point it at the flamesite binary (e.g. target/release/flamesite)");
if (!fs.existsSync(BIN)) throw new Error(`FLAMESITE_BIN=${BIN} does not exist: build it first (cargo build --release)`);
if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (run.sh does) or set CHROMIUM_BIN`);

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
async function openPage(url, { allowErrors = false, app = true } = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1920, height: 1080 }, deviceScaleFactor: 1 });
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
    for (const f of ["index.html", "index.json", "p/big/index.html", "p/big/g/samples/manifest.json", "p/big/g/samples/n/0.json", "p/api/run1/index.html"]) {
      assert.ok(fs.existsSync(path.join(out, f)), `${f} is written`);
    }
    assert.ok(fs.readdirSync(path.join(out, "p/big/g/samples/c")).some((f) => f.endsWith(".bin")));
    assert.ok(fs.readdirSync(path.join(out, "p/big/g/samples/s")).some((f) => f.endsWith(".bin")));
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
    assert.deepEqual(early.sort(), [dataUrl() + "manifest.json", ...nameFiles, ...want].sort(), "before the first paint: nothing else");
    const html = await (await fetch(`${site.url}p/big/`)).text();
    const preloads = [...html.matchAll(/<link rel="preload" href="([^"]+)" as="fetch" crossorigin="anonymous">/g)].map((m) => new URL(m[1].replace(/&#x2F;/g, "/"), `${site.url}p/big/`).href);
    assert.deepEqual(preloads.sort(), [dataUrl() + "manifest.json", ...nameFiles, ...want].sort(), "the page preloads what its first view needs");
    // After the first paint, while idle: the other name files (a first search reads every
    // name), and still no fine chunk and no search bucket.
    assert.deepEqual([...st.namesLoaded].sort(), manifest.names.map((n) => dataUrl() + n.file).sort());
    assert.deepEqual(
      data.map((r) => r.name).sort(),
      [dataUrl() + "manifest.json", ...manifest.names.map((n) => dataUrl() + n.file), ...want].sort(),
      "nothing else of the graph is fetched: no fine chunk, no search bucket",
    );
    for (const r of data.filter((r) => !early.includes(r.name))) assert.ok(r.start > marks[0], `${r.name} after the first paint`);
    t.diagnostic(`first complete paint at ${marks[0].toFixed(0)} ms, ${data.reduce((s, r) => s + r.size, 0)} bytes of graph data, draw ${st.paintMs.toFixed(1)} ms`);
    await shot(page, "root");
    await done();
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
    await page.waitForTimeout(50);
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
    // The zoomed frame now spans the canvas: hovering anywhere on its row shows 100% of zoom.
    const box = await page.locator("#fs-canvas").boundingBox();
    const c = await frameCenter(page, p, st);
    await page.mouse.move(box.x + 5, c.y);
    const info = await page.locator("#fs-info").textContent();
    assert.ok(info.includes(`background::gc`) && info.includes("100.00% of zoom"), info);
    t.diagnostic(`zoomed paint drew in ${st.paintMs.toFixed(1)} ms`);
    await done();
  });

  test("clicking a faded ancestor zooms out to it, Escape and the reset button reset", async () => {
    const { page, done } = await openPage(`${site.url}p/big/`);
    let st = await state(page);
    const deep = ["main", "server::run", "server::handle_request"];
    let pt = await frameCenter(page, deep, st);
    await page.mouse.click(pt.x, pt.y);
    st = await idle(page);
    assert.equal(st.zoom.name, "server::handle_request");
    await shot(page, "zoom");
    // server::run is an ancestor, drawn faded across the whole width below the zoomed frame.
    pt = await frameCenter(page, ["main", "server::run"], st);
    const box = await page.locator("#fs-canvas").boundingBox();
    await page.mouse.click(box.x + box.width - 10, pt.y);
    st = await idle(page);
    assert.equal(st.zoom.name, "server::run");
    assert.equal(st.zoom.total, pathTotal(STACKS, ["main", "server::run"]));
    await page.mouse.move(5, 5);
    await page.keyboard.press("Escape");
    st = await idle(page);
    assert.equal(st.zoom, null);
    assert.equal(new URL(page.url()).hash, "");
    pt = await frameCenter(page, deep, st);
    await page.mouse.click(pt.x, pt.y);
    await idle(page);
    await page.click("#fs-reset");
    st = await idle(page);
    assert.equal(st.zoom, null);
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
    const names = manifest.names.flatMap((n) => JSON.parse(fs.readFileSync(path.join(tmp, "out/p/big/g/samples", n.file), "utf8")).names);
    const re = new RegExp(q, "i");
    const ids = names.flatMap((n, i) => (re.test(n) ? [i] : []));
    const buckets = manifest.search.filter((b) => ids.some((i) => b.names[0] <= i && i < b.names[1])).map((b) => dataUrl() + b.file);
    assert.deepEqual([...st.searchLoaded].sort(), buckets.sort());
    const text = await page.locator("#fs-matched").textContent();
    assert.ok(text.includes(`${countText(want)} samples (${pct(want, TOTAL)})`), text);
    t.diagnostic(`search with the bucket fetch took ${st.searchMs.toFixed(1)} ms`);
    await shot(page, "search");
    // The case toggle: "JSON" no longer matches json.
    await page.click("#fs-case");
    st = await idle(page);
    assert.equal(st.caseSensitive, true);
    assert.equal(st.matched.value, matchedByStacks(STACKS, new RegExp(q)));
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
    // Click the row of the C++ template function: an exact, escaped, case-sensitive search.
    await page.click("#fs-table button[data-sort=total]");
    await page.locator("#fs-table tbody tr", { hasText: TEMPLATE_FN }).first().click();
    const st = await idle(page);
    assert.equal(st.caseSensitive, true);
    assert.equal(new RegExp(st.query).test(TEMPLATE_FN), true);
    assert.equal(st.matched.value, totalOf(TEMPLATE_FN));
    assert.equal(st.matched.functions, 1);
    assert.equal(st.view, "both", "the graph comes back to show the matches");
    await done();
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

  test("a profile with several graphs switches between them, each in its unit", async () => {
    // The folded build has one graph per profile; make a second one (as pprof sample types
    // give) by copying the graph folder with another unit and listing it on the page.
    const multi = path.join(tmp, "out-multi");
    fs.cpSync(path.join(tmp, "out"), multi, { recursive: true });
    const g = path.join(multi, "p/big/g");
    fs.cpSync(path.join(g, "samples"), path.join(g, "alloc_space"), { recursive: true });
    const mf = path.join(g, "alloc_space/manifest.json");
    fs.writeFileSync(mf, JSON.stringify({ ...JSON.parse(fs.readFileSync(mf, "utf8")), graph: "alloc_space", unit: "bytes" }));
    const page = path.join(multi, "p/big/index.html");
    const html = fs.readFileSync(page, "utf8");
    const option = /<option value="g\/samples\/"[^>]*>[^<]*<\/option>/.exec(html.replace(/&#x2F;/g, "/"));
    assert.ok(option, "the profile page lists its graphs as options");
    const extra = option[0].replace(/samples/g, "alloc_space").replace(/data-unit="[^"]*"/, 'data-unit="bytes"');
    fs.writeFileSync(page, html.replace(/&#x2F;/g, "/").replace(option[0], option[0] + extra).replace(/<select id="fs-graph"([^>]*) disabled>/, '<select id="fs-graph"$1>'));
    const site5 = await serve(multi, "/perf/");
    try {
      const { page: p, done } = await openPage(`${site5.url}p/big/#g=alloc_space`);
      let st = await state(p);
      assert.equal(st.graph, "alloc_space");
      assert.equal(st.unit, "bytes");
      assert.ok(st.chunksLoaded.every((u) => u.includes("/g/alloc_space/")));
      assert.match(await p.locator("#fs-info").textContent(), /total 90\.4 KiB/);
      await p.selectOption("#fs-graph", { index: 0 });
      st = await idle(p);
      assert.equal(st.graph, "samples");
      assert.equal(st.unit, "samples");
      assert.equal(new URL(p.url()).hash, "");
      await done();
    } finally {
      await site5.close();
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
    const rgb = (x) => page.evaluate(([x, y]) => [...document.getElementById("fs-canvas").getContext("2d").getImageData(x, y, 1, 1).data].slice(0, 3), [Math.round(x), Math.round(y)]);
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
        assert.ok(info.includes("only in the earlier run") && info.includes("total 4 samples → 0 samples"), info);
        assert.ok(info.includes("−9.09 pp of the total"), info);
      }
    }
    // The table gives before, after and the change of each function.
    await page.locator('#fs-views button[data-view="both"]').click();
    st = await idle(page);
    const row = page.locator("#fs-table tbody tr", { hasText: "gone" });
    assert.deepEqual(await row.locator("td").allTextContents(), ["gone", "4 samples", "0 samples", "−9.09 pp", "4 samples", "0 samples", "−9.09 pp"]);
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
    assert.ok((await page.locator("#fs-legend-text").textContent()).includes("Red grew, blue shrank"));
    assert.deepEqual(problems, []);
    await done();
  });

  test("a hostile function name is drawn and listed as text; no script runs", async () => {
    const { page, problems, done } = await openPage(`${site.url}p/big/#v=both&q=${encodeURIComponent("<script>")}`);
    const st = await state(page);
    assert.equal(st.matched.value, pathTotal(STACKS, ["main", HOSTILE]));
    assert.equal(await page.locator("script").count(), 1, "only the page's own module script");
    assert.equal(await page.locator("body img, body iframe").count(), 0);
    const cell = page.locator("#fs-table td.fs-name", { hasText: "<script>" }).first();
    assert.equal(await cell.textContent(), HOSTILE);
    assert.equal(await cell.evaluate((e) => e.children.length), 0);
    assert.equal(await page.evaluate(() => typeof window.__pwned), "undefined");
    assert.deepEqual(problems, []);
    // The profile whose file name is markup.
    const slug = fs.readdirSync(path.join(tmp, "out", "p")).find((d) => d.includes("img"));
    await done();
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
      await page.locator("#fs-scroll").evaluate((e) => (e.scrollTop = 0));
      await page.waitForTimeout(50);
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
      // Without a manifest, the page says the graph could not be loaded.
      fs.rmSync(path.join(broken, "p/big/g/samples/manifest.json"));
      const m = await openPage(`${site4.url}p/big/`, { allowErrors: true });
      assert.match(await m.page.locator("#fs-error").textContent(), /Could not load this graph: manifest\.json: could not be fetched \(HTTP 404/);
      await m.done();
    } finally {
      await site4.close();
    }
  });
});
