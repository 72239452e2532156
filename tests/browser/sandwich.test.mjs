// The sandwich of a function in real headless Chromium over HTTP: opened from the table, from a
// key on the graph and from a link; its callers' and callees' totals as the page shows them,
// reckoned here from the folded text alone (never from the page's modules); Back leaves it, a
// reload reopens it; a comparison's sandwich says its before and after values.
//
// FLAMESITE_SCREENSHOTS=DIR also writes screenshots of what the tests look at.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import { CHROMIUM_ARGS, HOSTILE, THEME, bigProfile, buildSite, byteCompare, frameCenter, parseFolded, testTools } from "./fixtures.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();
const ARGS = CHROMIUM_ARGS;

const BIG = bigProfile();
const STACKS = parseFolded(BIG);
// malloc called from 304 places: 4 wide callers, and 300 of 1 sample each under 10 callers x…
// (x0 … x9, 30 samples each), below what the build keeps of its sandwich.
const MANY = [
  ...Array.from({ length: 40 }, (_, i) => `main;hot${i % 4};malloc;brk 400`),
  ...Array.from({ length: 300 }, (_, i) => `main;w${i};x${i % 10};malloc 1`),
].join("\n");
const MANY_STACKS = parseFolded(MANY);
const LATER_STACKS = STACKS.flatMap(([frames, c], i) => (frames[1] !== "background::gc" ? [[frames, c]] : i % 5 === 0 ? [] : [[frames, i % 3 === 0 ? 2 * c : c]]));
const LATER = LATER_STACKS.map(([f, c]) => `${f.join(";")} ${c}`).join("\n") + "\n";

/**
 * The sandwich of `fn` from the stacks: for each stack that calls it, from its first `fn` on,
 * the frames after it (callees) and before it, read backwards (callers). Returns
 * { total, callers, callees } where each side is { name -> total } of the nodes one step
 * from `fn`, and `lay(side)`, those nodes in the page's order with their offsets.
 */
function reckon(stacks, fn) {
  let total = 0;
  const callers = new Map();
  const callees = new Map();
  const add = (m, k, v) => m.set(k, (m.get(k) || 0) + v);
  for (const [frames, c] of stacks) {
    const i = frames.indexOf(fn);
    if (i < 0) continue;
    total += c;
    if (i > 0) add(callers, frames[i - 1], c);
    if (i + 1 < frames.length) add(callees, frames[i + 1], c);
  }
  const lay = (m) => {
    let o = 0;
    return [...m.keys()].sort(byteCompare).map((name) => {
      const node = { name, offset: o, total: m.get(name) };
      o += node.total;
      return node;
    });
  };
  return { total, callers, callees, lay };
}

const widest = (m) => [...m].sort((a, b) => b[1] - a[1] || byteCompare(a[0], b[0]))[0];

let tmp;
let out;
let browser;
let site;
let depthRows;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-sandwich-"));
  fs.mkdirSync(path.join(tmp, "in", "svc"), { recursive: true });
  fs.writeFileSync(path.join(tmp, "in", "big.folded"), BIG);
  fs.writeFileSync(path.join(tmp, "in", "many.folded"), MANY + "\n");
  // A series of two runs, for a comparison's sandwich.
  for (const [name, date, lines] of [
    ["a", "2026-11-01", ["main;work;malloc 10", "main;other;malloc 30", "main;other 5"]],
    ["b", "2026-11-02", ["main;work;malloc 40", "main;other;malloc 20", "main;other 5"]],
  ]) {
    fs.writeFileSync(path.join(tmp, "in", "svc", `${name}.folded`), lines.join("\n") + "\n");
    fs.writeFileSync(path.join(tmp, "in", "svc", `${name}.toml`), `date = ${date}\n`);
  }
  // And two runs of the big profile, the later without every fifth gc stack and with every
  // third doubled, for a comparison's sandwich of narrow frames.
  fs.mkdirSync(path.join(tmp, "in", "bigsvc"), { recursive: true });
  for (const [name, date, text] of [["a", "2026-11-01", BIG], ["b", "2026-11-02", LATER]]) {
    fs.writeFileSync(path.join(tmp, "in", "bigsvc", `${name}.folded`), text);
    fs.writeFileSync(path.join(tmp, "in", "bigsvc", `${name}.toml`), `date = ${date}\n`);
  }
  // Chunks of 512 frames: the big profile's narrow frames in tens of chunks, of which a
  // sandwich reads only those over its function.
  out = buildSite(BIN, THEME, tmp, "Sandwich", "[chunks]\ntarget_frames = 512\n");
  depthRows = JSON.parse(fs.readFileSync(path.join(out, "p/big/g/samples/manifest.json"), "utf8")).depth;
  site = await serve(out, "/perf/");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (site) await site.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function openPage(url = "p/big/", phone = false) {
  const screen = phone ? { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true } : { viewport: { width: 1280, height: 900 } };
  const ctx = await browser.newContext({ ...screen, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${site.url}${url}`);
  await idle(page);
  const done = async () => {
    assert.deepEqual(problems, [], "no console errors or page errors");
    await ctx.close();
  };
  return { page, ctx, done };
}

const idle = (page) => page.evaluate(() => window.flamesite.idle());
/** A count of samples as people read it: exact below 10,000, else three digits and k. */
const fmt = (v) => {
  if (v >= 10000) {
    const k = v / 1000;
    return `${k >= 100 ? k.toFixed(0) : k >= 10 ? k.toFixed(1) : k.toFixed(2)} k samples`;
  }
  return `${v.toLocaleString("en-US")} ${v === 1 ? "sample" : "samples"}`;
};

async function shot(page, name) {
  const dir = process.env.FLAMESITE_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}

/** Hover the node one step from the function (`node` of reckon's `lay`) in pane `side`; returns the tooltip's text. */
async function hoverNode(page, st, side, node) {
  const pane = st.sandwich[side];
  const vp = pane.viewport;
  const box = await page.locator(`.fs-sw-pane[data-side=${side}] canvas.fs-sw-canvas`).boundingBox();
  const x = box.x + ((node.offset + node.total / 2 - vp.x0) / (vp.x1 - vp.x0)) * vp.width;
  const content = Math.max(pane.depth * vp.rowHeight, vp.height);
  const top = vp.icicle ? vp.rowHeight : content - 2 * vp.rowHeight;
  await page.mouse.move(x, box.y + top - vp.scrollTop + vp.rowHeight / 2);
  await page.waitForFunction(() => !document.getElementById("fs-tooltip").hidden);
  return page.locator("#fs-tooltip").textContent();
}

/** The sandwich's numbers against the reckoning: both roots, and the nodes one step from the function. */
function checkTotals(st, want) {
  const s = st.sandwich;
  assert.equal(s.total, want.total, "the function's total");
  assert.equal(s.callers.total, want.total, "callers' root");
  assert.equal(s.callees.total, want.total, "callees' root");
  const top = (m) => [...m].map(([name, total]) => ({ name, total })).sort((a, b) => b.total - a.total || byteCompare(a.name, b.name)).slice(0, 20);
  assert.deepEqual(s.callers.top.map(({ name, total }) => ({ name, total })), top(want.callers), "direct callers");
  assert.deepEqual(s.callees.top.map(({ name, total }) => ({ name, total })), top(want.callees), "direct callees");
}

describe("the sandwich of a function", () => {
  test("opens from the table's button: callers and callees totals as the stacks say; Back leaves it", async () => {
    const { page, done } = await openPage("p/big/#v=table");
    const want = reckon(STACKS, "malloc");
    assert.ok(want.callers.size > 3 && want.callees.size > 3, "the premise: malloc has several callers and callees");
    const row = page.locator("#fs-table tbody tr", { has: page.locator("td.fs-name", { hasText: /^malloc$/ }) });
    await row.locator("button.fs-swbtn").click();
    let st = await idle(page);
    assert.equal(st.mode, "sandwich");
    assert.equal(st.sandwich.name, "malloc");
    assert.equal(st.query, "", "the sandwich button does not search");
    assert.equal(st.view, "both", "the sandwich shows beside the table");
    assert.match(new URL(st.link).hash, /(^#|&)x=sandwich&f=malloc$/);
    checkTotals(st, want);
    assert.equal(await page.locator("#fs-sw-name").textContent(), "malloc");
    // The panes' labels say the total, in words.
    const label = await page.locator(".fs-sw-pane[data-side=callers] .fs-sw-facts").textContent();
    assert.ok(label.includes(`total ${fmt(want.total)}`), label);
    // malloc calls itself (through free): the callees' root has the self of its outermost
    // calls, and the label says why the table's (every frame's) is larger.
    let rootSelf = 0;
    let tableSelf = 0;
    for (const [frames, c] of STACKS) {
      if (frames[frames.length - 1] !== "malloc") continue;
      tableSelf += c;
      if (frames.indexOf("malloc") === frames.length - 1) rootSelf += c;
    }
    assert.ok(tableSelf > rootSelf, "the premise: some of malloc's self is in calls inside itself");
    const calleesLabel = await page.locator(".fs-sw-pane[data-side=callees] .fs-sw-facts").textContent();
    assert.ok(calleesLabel.includes(`self ${fmt(rootSelf)} (the table's self, ${fmt(tableSelf)}, adds that of its calls inside itself, drawn below)`), calleesLabel);
    // Hovering the widest caller and callee says their totals.
    const [caller, callerTotal] = widest(want.callers);
    const tipCaller = await hoverNode(page, st, "callers", want.lay(want.callers).find((n) => n.name === caller));
    assert.ok(tipCaller.startsWith(caller), tipCaller);
    assert.ok(tipCaller.includes(`calls malloc through this path: total ${fmt(callerTotal)}`), tipCaller);
    const [callee, calleeTotal] = widest(want.callees);
    const tipCallee = await hoverNode(page, st, "callees", want.lay(want.callees).find((n) => n.name === callee));
    assert.ok(tipCallee.startsWith(callee) && tipCallee.includes(`total ${fmt(calleeTotal)}`), tipCallee);
    assert.ok((await page.locator("#fs-info").textContent()).includes(`total ${fmt(calleeTotal)}`), "the info line says it too");
    await shot(page, "sandwich-table");

    // Back: the table as it was, no sandwich.
    await page.goBack();
    st = await idle(page);
    assert.equal(st.mode, "flame");
    assert.equal(st.sandwich, null);
    assert.equal(st.view, "table");
    assert.equal(await page.locator("#fs-sandwich").isVisible(), false);
    // Forward: the sandwich again.
    await page.goForward();
    st = await idle(page);
    assert.equal(st.sandwich && st.sandwich.name, "malloc");
    // The Graph view gives the sandwich the whole width.
    await page.click("#fs-views button[data-view=graph]");
    st = await idle(page);
    assert.equal(st.mode, "sandwich");
    await hoverNode(page, st, "callees", want.lay(want.callees).find((n) => n.name === callee));
    await shot(page, "sandwich");
    await done();
  });

  test("opens from a link with an escaped hostile name, reopens on reload, and Escape closes it", async () => {
    const want = reckon(STACKS, HOSTILE);
    const { page, done } = await openPage(`p/big/#x=sandwich&f=${encodeURIComponent(HOSTILE)}`);
    let st = await idle(page);
    assert.equal(st.mode, "sandwich");
    assert.equal(st.sandwich.name, HOSTILE);
    checkTotals(st, want);
    assert.equal(await page.locator("#fs-sw-name").textContent(), HOSTILE, "the name is text, not markup");
    assert.equal(await page.locator("#fs-sandwich script").count(), 0);
    assert.deepEqual(st.chunksLoaded.filter((u) => !/\/c\//.test(u)), []);
    await page.reload();
    st = await idle(page);
    assert.equal(st.sandwich && st.sandwich.name, HOSTILE, "a reload reopens it");
    checkTotals(st, want);
    await page.locator(".fs-sw-pane[data-side=callees] canvas.fs-sw-canvas").focus();
    await page.keyboard.press("Escape");
    st = await idle(page);
    assert.equal(st.mode, "flame");
    assert.ok(await page.locator("#fs-canvas").isVisible(), "the graph is back");
    assert.ok(!new URL(st.link).hash.includes("x=sandwich"));
    await done();
  });

  test("s on a frame of the graph opens its function's sandwich; recursion is counted once", async () => {
    const { page, done } = await openPage();
    const st0 = await idle(page);
    const p = await frameCenter(page, STACKS, ["main", "walk_tree", "visit"], st0, depthRows);
    await page.mouse.move(p.x, p.y);
    await page.keyboard.press("s");
    let st = await idle(page);
    assert.equal(st.sandwich && st.sandwich.name, "visit");
    const want = reckon(STACKS, "visit");
    checkTotals(st, want);
    // visit calls itself: the nested calls are callees of the outer call, not new calls.
    assert.ok(want.callees.has("visit"));
    assert.equal(st.sandwich.calls, 1, "one outermost call (main;walk_tree;visit)");
    // In a pane, a click zooms and Escape zooms out before it closes.
    const node = want.lay(want.callees).find((n) => n.name === "visit");
    await hoverNode(page, st, "callees", node);
    await page.mouse.down();
    await page.mouse.up();
    st = await idle(page);
    assert.deepEqual(st.sandwich.callees.zoom, { name: "visit", depth: 1, total: node.total });
    await shot(page, "sandwich-zoom");
    await page.keyboard.press("Escape");
    st = await idle(page);
    assert.equal(st.sandwich.callees.zoom, null);
    assert.equal(st.mode, "sandwich");
    await done();
  });

  test("a function called from many places is drawn from the build's sandwich, without chunks; a zoom below its cut merges the finer nodes", async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "p/many/g/samples/manifest.json"), "utf8"));
    const { page, done } = await openPage("p/many/");
    let st = await idle(page);
    const before = st.chunksLoaded.length;
    const want = reckon(MANY_STACKS, "malloc");
    assert.ok(manifest.sandwiches && manifest.sandwiches.length > 0, "the premise: the build made sandwiches");
    await page.evaluate(() => (location.hash = "x=sandwich&f=malloc"));
    st = await idle(page);
    assert.equal(st.sandwich.source, "precomputed", "malloc, called from 304 places, is one of them");
    assert.equal(st.sandwich.calls, 304);
    assert.equal(st.sandwich.chunks, 0);
    assert.equal(st.chunksLoaded.length, before, "no chunk fetched for it");
    const files = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname).filter((u) => /\/w\/\d+\.bin\.gz$/.test(u)));
    assert.equal(files.length, 1, "its one file");
    checkTotals(st, want);
    await shot(page, "sandwich-precomputed");
    // Zoom to the caller x0 (30 samples): its 30 callers w… of 1 sample each are under the
    // build's cut (a pixel of a root_width canvas at the root), drawn once zoomed: the page
    // merges them from the chunks.
    const cut = Math.ceil(want.total / manifest.root_width);
    assert.ok(cut > 1 && want.callers.get("x0") === 30, `the premise: nodes of 1 sample are cut (${cut})`);
    const shown = st.sandwich.callers.frames;
    await hoverNode(page, st, "callers", want.lay(want.callers).find((n) => n.name === "x0"));
    await page.mouse.down();
    await page.mouse.up();
    st = await idle(page);
    assert.deepEqual(st.sandwich.callers.zoom, { name: "x0", depth: 1, total: 30 });
    assert.equal(st.sandwich.source, "merged");
    assert.ok(st.sandwich.chunks > 0 && st.chunksLoaded.length > before, "chunks fetched for the finer nodes");
    assert.ok(st.sandwich.callers.frames >= shown + 30, `x0's 30 callers laid out (${st.sandwich.callers.frames} rows, ${shown} before)`);
    checkTotals(st, want);
    await shot(page, "sandwich-refined");
    await done();
  });

  test("a link to a function the graph does not have shows the graph with a notice", async () => {
    const { page, done } = await openPage("p/big/#x=sandwich&f=no_such_function");
    const st = await idle(page);
    assert.equal(st.mode, "flame");
    assert.ok(st.errors.some((e) => e.includes("no_such_function")), st.errors.join("; "));
    assert.ok(!new URL(st.link).hash.includes("x=sandwich"));
    await done();
  });

  test("on a comparison of two runs, a sandwich of narrow frames reads only the chunks over them, found from the runs' own search files", async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "p/bigsvc/b/compare/g/samples/manifest.json"), "utf8"));
    assert.equal(manifest.diff.search, "runs", "the premise: the comparison has no search files of its own");
    for (const [layout, stacks] of [["after", LATER_STACKS], ["before", STACKS]]) {
      const { page, done } = await openPage(`p/bigsvc/b/compare/#l=${layout}&x=sandwich&f=gc%3A%3Asweep_region_9`);
      const st = await idle(page);
      assert.equal(st.sandwich && st.sandwich.name, "gc::sweep_region_9");
      // In a run's own widths, the sandwich's totals are that run's values.
      checkTotals(st, reckon(stacks, "gc::sweep_region_9"));
      assert.ok(st.chunksLoaded.length < manifest.chunks.length / 2, `${st.chunksLoaded.length} of ${manifest.chunks.length} chunks read`);
      await done();
    }
  });

  test("on a comparison, the sandwich merges before and after values", async () => {
    const { page, done } = await openPage("p/svc/b/compare/#x=sandwich&f=malloc");
    const st = await idle(page);
    assert.equal(st.mode, "sandwich");
    assert.equal(st.sandwich.name, "malloc");
    // Before: work 10 and other 30 of 45; after: work 40 and other 20 of 65.
    const caller = st.sandwich.callers.top.map((n) => n.name);
    assert.deepEqual(caller.sort(), ["other", "work"]);
    const pane = st.sandwich.callers;
    const box = await page.locator(".fs-sw-pane[data-side=callers] canvas.fs-sw-canvas").boundingBox();
    const vp = pane.viewport;
    const content = Math.max(pane.depth * vp.rowHeight, vp.height);
    // The root, malloc, at the bottom of the callers' pane.
    await page.mouse.move(box.x + vp.width / 2, box.y + content - vp.rowHeight / 2 - vp.scrollTop);
    await page.waitForFunction(() => !document.getElementById("fs-tooltip").hidden);
    const tip = await page.locator("#fs-tooltip").textContent();
    assert.ok(tip.includes("total 40 samples → 60 samples"), tip);
    const label = await page.locator(".fs-sw-pane[data-side=callers] .fs-sw-facts").textContent();
    assert.ok(label.includes("total 40 samples → 60 samples"), `the label says values, not widths: ${label}`);
    await shot(page, "sandwich-diff");
    await done();
  });

  test("on a phone, a comparison's sandwich gives each of its panes a third of the screen", async () => {
    // Issue 28, item 3: the panes were about 100 px tall at 390 x 844 under the header and the
    // toolbar's rows; the toolbar folds now.
    const { page, done } = await openPage("p/svc/b/compare/#x=sandwich&f=malloc", true);
    const st = await idle(page);
    assert.equal(st.mode, "sandwich");
    const heights = await page.locator(".fs-sw-pane canvas.fs-sw-canvas").evaluateAll((cs) => cs.map((c) => c.getBoundingClientRect().height));
    assert.equal(heights.length, 2);
    for (const h of heights) assert.ok(h >= 844 / 3 - 60, `a pane's graph is ${h} px tall on an 844 px screen: ${heights}`);
    const bottom = await page.locator(".fs-sw-pane[data-side=callees]").evaluate((e) => e.getBoundingClientRect().bottom);
    assert.ok(bottom <= 844 + 1, `the callees' pane ends on the screen (${bottom})`);
    await done();
  });
});
