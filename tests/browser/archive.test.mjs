// The archive (home → series and its pages → run → previous run → back → comparison) in
// real headless Chromium, served by a real static server: nginx from Debian's package
// (nginx.mjs), on 127.0.0.1 under the sub-path /perf/. The site is built by $FLAMESITE_BIN
// from fixture series generated here, with the sidecar files (`NAME.toml` metadata, `NAME.md`
// notes) that date and describe each run.
// Expected numbers come from the folded text (fixtures.mjs), never from the page's modules.
//
// Needs FLAMESITE_BIN, Chromium (CHROMIUM_BIN, default /usr/bin/chromium) and nginx
// (NGINX_BIN, default /usr/sbin/nginx); run through run.sh, whose --prepare installs them.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import zlib from "node:zlib";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { startNginx } from "./nginx.mjs";
import { CHROMIUM_ARGS, frameCenter, matchedByStacks, parseFolded, pathOffset, pathTotal, testTools, total } from "./fixtures.mjs";
import { nameHash } from "../../themes/default/static/format.js";
import { rng } from "../js/helpers.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();
const ARGS = CHROMIUM_ARGS;
const PREFIX = "/perf/";
const PER_PAGE = 3; // runs per page of a series


/** A run of a service: the same shape every time, other counts per seed, and a frame of its own. */
function runProfile(seed, marker) {
  const r = rng(seed);
  const lines = [[["main", "server::run", "server::handle_request", "router::dispatch"], 200 + seed]];
  const handlers = ["get_user", "list_orders", "post_payment", "search_items"];
  const work = ["parse_json", "serialize_json", "db::query", "db::connect", "cache::get", "cache::put", "malloc", "memcpy"];
  for (let i = 0; i < 150; i++) {
    const stack = ["main", "server::run", "server::handle_request", `handlers::${handlers[Math.floor(r() * handlers.length)]}`];
    const depth = 1 + Math.floor(r() * 4);
    for (let d = 0; d < depth; d++) stack.push(work[Math.floor(r() * work.length)]);
    lines.push([stack, 10 + Math.floor(r() * 90)]);
  }
  for (let i = 0; i < 40; i++) lines.push([["main", "background::gc", `gc::sweep_${i % 7}`], 5 + Math.floor(r() * 40)]);
  lines.push([["main", `marker::${marker}`], 7 + seed]);
  return lines.map(([s, c]) => `${s.join(";")} ${c}`).join("\n") + "\n";
}

// The runs, with dates out of the order of their file names, so that only the dates can put
// them in order. `file` is the profile; its sidecars are `name`.toml and `name`.md.
const RUNS = [
  { series: "api", name: "run-1", file: "run-1.folded.gz", date: "2026-11-02T09:30:00Z", seed: 1, notes: "Deployed the connection pool change; p99 went down." },
  { series: "api", name: "run-2", file: "run-2.folded", date: "2026-10-01", seed: 2 },
  { series: "api", name: "run-3", file: "run-3.folded", date: "2026-11-20T08:00:00Z", seed: 3 },
  { series: "api", name: "run-4", file: "run-4.folded", date: "2026-10-15", seed: 4 },
  { series: "worker", name: "run-1", file: "run-1.folded", date: "2026-10-03", seed: 11 },
  { series: "worker", name: "run-2", file: "run-2.folded", date: "2026-11-05T12:00:00Z", seed: 12 },
  { series: "worker", name: "run-3", file: "run-3.folded", date: "2026-11-18", seed: 13 },
];
// Added before the rebuild: a new series and a new (newest) run of an existing one.
const MORE = [
  { series: "batch", name: "nightly-1", file: "nightly-1.folded", date: "2026-11-21", seed: 21 },
  { series: "api", name: "run-5", file: "run-5.folded", date: "2026-11-25T10:00:00Z", seed: 5 },
];
for (const r of [...RUNS, ...MORE]) {
  r.text = runProfile(r.seed, `${r.series}_${r.name.replace("-", "_")}`);
  r.stacks = parseFolded(r.text);
  r.total = total(r.stacks);
  r.slug = `${r.series}/${r.name}`;
  r.title = `${r.series} ${r.name}`;
}
const run = (series, name) => RUNS.find((r) => r.series === series && r.name === name);
const SERIES = ["api", "worker"];

function writeRun(dir, r) {
  const folder = path.join(dir, r.series);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, r.file), r.file.endsWith(".gz") ? zlib.gzipSync(r.text) : r.text);
  // A TOML date-time or a TOML local date, both unquoted.
  const toml = [`series = ${JSON.stringify(r.series)}`, `date = ${r.date}`, `title = ${JSON.stringify(r.title)}`, `labels = { host = "ci-${r.seed % 3}", branch = "main" }`];
  fs.writeFileSync(path.join(folder, `${r.name}.toml`), toml.join("\n") + "\n");
  if (r.notes) fs.writeFileSync(path.join(folder, `${r.name}.md`), `# Notes\n\n${r.notes}\n`);
}

/**
 * `$FLAMESITE_BIN build --config SITE.toml` of `input` into `output`, with `base_url` the
 * address nginx serves it at (the absolute URLs of the feeds); on failure throw with stderr.
 */
function build(input, output, baseUrl) {
  const cfg = path.join(path.dirname(output), "site.toml");
  // Three runs a page, so that api's four runs take two pages of its series.
  fs.writeFileSync(cfg, `title = "Perf archive"\ninput = ${JSON.stringify(input)}\noutput = ${JSON.stringify(output)}\nbase_url = ${JSON.stringify(baseUrl)}\n\n[archive]\nper_page = ${PER_PAGE}\n`);
  try {
    execFileSync(BIN, ["build", "--config", cfg], { cwd: path.dirname(output), stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  } catch (e) {
    throw new Error(`${BIN} build --config ${cfg} failed (exit ${e.status}):\n${e.stderr}`);
  }
}

let tmp;
let input;
let output;
let site; // nginx serving `output` under /perf/
let browser;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-archive-"));
  input = path.join(tmp, "in");
  output = path.join(tmp, "out");
  for (const r of RUNS) writeRun(input, r);
  // nginx first: its address is the site's base_url. Until the build, it serves a 404.
  site = await startNginx(output, PREFIX);
  build(input, output, site.url);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (site) await site.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * A fresh page that records what a person would see go wrong: console errors, page errors,
 * dialogs, requests that failed or got a 4xx/5xx, and every page (main frame) it showed.
 */
async function openPage(url) {
  const ctx = await browser.newContext({ viewport: { width: 1600, height: 1000 }, deviceScaleFactor: 1 });
  ctx.setDefaultTimeout(10000); // a link that is not there fails in seconds, not half a minute
  const page = await ctx.newPage();
  const problems = [];
  const pages = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  // A request the browser cancelled because the page it was for was left (a module the page
  // imports once it is idle, still on its way when the test follows a link) is nothing a person
  // sees; any other failure is, and so is a cancelled request of the page still shown.
  const issuedOn = new Map(); // request -> pages shown when it was made
  page.on("request", (r) => issuedOn.set(r, pages.length));
  const cancelled = [];
  page.on("requestfailed", (r) => {
    const text = `request failed: ${r.url()} (${r.failure()?.errorText})`;
    if (r.failure()?.errorText === "net::ERR_ABORTED") cancelled.push([issuedOn.get(r), text]);
    else problems.push(text);
  });
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  page.on("framenavigated", (f) => f === page.mainFrame() && pages.push(f.url()));
  await page.goto(url);
  const done = async () => {
    for (const [shown, text] of cancelled) if (shown === undefined || shown >= pages.length) problems.push(text);
    assert.deepEqual(problems, [], "no console error, page error, dialog or failed request");
    for (const u of pages) assert.ok(new URL(u).pathname.startsWith(PREFIX), `${u} is under ${PREFIX}`);
    await ctx.close();
  };
  return { page, problems, pages, done };
}

/** Wait for the flame graph page's script and for it to settle; its state. */
async function graphIdle(page) {
  await page.waitForFunction(() => !!window.flamesite);
  return page.evaluate(() => window.flamesite.idle());
}
const state = (page) => page.evaluate(() => window.flamesite.state());

/** Path of the current page relative to the site root ("s/api/", "p/api/run-1/"). */
const where = (page) => {
  const p = new URL(page.url()).pathname;
  assert.ok(p.startsWith(PREFIX), `${page.url()} is under ${PREFIX}`);
  return p.slice(PREFIX.length);
};

/** Where a link goes, relative to the site root of `base` (no fragment). */
async function target(locator, base = site.url) {
  assert.equal(await locator.count(), 1, `one ${locator} on ${locator.page().url()}`);
  const href = await locator.evaluate((a) => a.href);
  const u = new URL(href);
  assert.equal(u.origin + u.pathname.slice(0, PREFIX.length), base, `${href} stays under ${base}`);
  return u.pathname.slice(PREFIX.length);
}

/** Click and wait for the next page of the same tab to load. */
async function follow(page, locator) {
  const from = page.url();
  await locator.click();
  await page.waitForURL((u) => u.href !== from);
  await page.waitForLoadState("load");
}

/** nginx saw no 4xx or 5xx and nothing outside the sub-path (from entry `since` of its log on). */
function assertLogClean(since) {
  const log = site.requests().slice(since);
  assert.ok(log.length > 0, "nginx logged the requests");
  const bad = log.filter((e) => e.status >= 400 || !e.path.startsWith(PREFIX));
  assert.deepEqual(bad, [], "nginx's access log: no 4xx/5xx, every request under /perf/");
}

describe("nginx serves the built site under /perf/", () => {
  test("home, a run page and its graph load through nginx with the right types; nothing outside the sub-path", async () => {
    // An nginx of its own, so that this test's deliberate 404 stays out of the archive's log.
    const own = await startNginx(output, PREFIX);
    try {
      const { page, done } = await openPage(own.url);
      assert.ok((await page.locator("main a").count()) > 0, "the home page has links");
      // A run's page, as a link from outside the site (a feed, a chat) opens it.
      const r = run("api", "run-1");
      const want = `${own.url}p/${r.slug}/`;
      await page.goto(want);
      assert.equal(page.url(), want);
      const st = await graphIdle(page);
      assert.equal(st.total, r.total, "the graph of api/run-1.folded.gz is drawn");
      assert.ok(st.paints >= 1 && st.chunksLoaded.length > 0);
      assert.ok(st.chunksLoaded.every((u) => u.startsWith(`${want}g/`)), "chunks come from under the run's page");
      await done();
      const log = own.requests();
      assert.deepEqual(log.filter((e) => e.status >= 400), [], "no 4xx/5xx in nginx's access log");
      for (const p of ["", `p/${r.slug}/`, "static/main.js", `p/${r.slug}/g/samples/manifest.json.gz`]) {
        assert.ok(log.some((e) => e.path === `${PREFIX}${p}` && e.status === 200), `nginx served ${PREFIX}${p}: ${JSON.stringify(log)}`);
      }
      // What a static host has to get right: the types, the folder redirects, the sub-path.
      const get = (p) => fetch(new URL(p, own.url), { redirect: "manual" });
      const type = async (p) => (await get(p)).headers.get("content-type");
      assert.match(await type(`${PREFIX}p/${r.slug}/`), /^text\/html/);
      assert.match(await type(`${PREFIX}static/main.js`), /^(text|application)\/javascript/, "module scripts need a JavaScript type");
      assert.match(await type(`${PREFIX}static/flamesite.css`), /^text\/css/);
      assert.match(await type(`${PREFIX}p/${r.slug}/g/samples/manifest.json`), /^application\/json/);
      const folder = await get(`${PREFIX}p/${r.slug}`);
      assert.equal(folder.status, 301);
      assert.equal(folder.headers.get("location"), `${PREFIX}p/${r.slug}/`);
      assert.equal((await get("/index.html")).status, 404, "nothing is served outside /perf/");
      // nginx writes a log line after it answers, and the page may still be fetching: wait for
      // the last line, then look at these two requests among the others.
      // (Looked at again each time the log may have grown; the test's timeout ends a wait for a
      // line that never comes.)
      let mine = [];
      for (;;) {
        mine = own.requests().filter((e) => e.path === `${PREFIX}p/${r.slug}` || e.path === "/index.html").map((e) => [e.status, e.path]);
        if (mine.length >= 2) break;
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.deepEqual(mine, [[301, `${PREFIX}p/${r.slug}`], [404, "/index.html"]], "the access log has them too");
    } finally {
      await own.close();
    }
  });
  test("a host that sends the packed data files with Content-Encoding: gzip serves the same graphs, searches and history", async () => {
    // The other kind of host: the browser undoes the compression before the page sees the
    // bytes. The default nginx of the other tests sends the files as they are stored.
    const own = await startNginx(output, PREFIX, { encoding: true });
    try {
      const r = run("api", "run-1");
      const manifest = JSON.parse(fs.readFileSync(path.join(output, `p/${r.slug}/g/samples/manifest.json`), "utf8"));
      const chunk = `${PREFIX}p/${r.slug}/g/samples/${manifest.chunks[0].file}`;
      assert.match(chunk, /\.bin\.gz$/, "chunks are published packed");
      const raw = await fetch(new URL(chunk, own.url), { headers: { "accept-encoding": "gzip" } });
      assert.equal(raw.headers.get("content-encoding"), "gzip", "this host says the chunk is gzip-encoded");
      const plain = await fetch(new URL(chunk, site.url));
      assert.equal(plain.headers.get("content-encoding"), null, "the archive's nginx sends it as stored");
      const stored = new Uint8Array(await plain.arrayBuffer());
      assert.deepEqual([stored[0], stored[1]], [0x1f, 0x8b], "and what it stores is a gzip member");

      const { page, done } = await openPage(`${own.url}p/${r.slug}/`);
      let st = await graphIdle(page);
      assert.equal(st.total, r.total, "the graph is drawn");
      await page.fill("#fs-search", "db::query");
      st = await graphIdle(page);
      assert.equal(st.matched.value, matchedByStacks(r.stacks, /db::query/i), "the exact matched value");
      // What the browser fetched: every .gz file came encoded, its decoded body larger.
      const sizes = await page.evaluate(() =>
        performance.getEntriesByType("resource").filter((e) => e.name.endsWith(".gz")).map((e) => [e.name, e.encodedBodySize, e.decodedBodySize]),
      );
      assert.ok(sizes.length > 0 && sizes.every(([, enc, dec]) => enc > 0 && dec > enc), `the page's data came gzip-encoded: ${JSON.stringify(sizes)}`);

      // The comparison with the previous run, searched.
      const r4 = run("api", "run-4");
      await page.goto(`${own.url}p/${r.slug}/compare/#q=db%3A%3Aquery`);
      st = await graphIdle(page);
      assert.deepEqual([st.matched.before, st.matched.after], [matchedByStacks(r4.stacks, /db::query/i), matchedByStacks(r.stacks, /db::query/i)]);

      // The series' history of a function.
      await page.goto(`${own.url}s/api/`);
      await page.waitForFunction(() => !!window.flamesiteHistory);
      await page.fill("#fs-history-q", "marker::api_run_3");
      const h = await page.evaluate(() => window.flamesiteHistory.idle());
      assert.match(h.status, /^1 function matched/);
      assert.equal(h.points, RUNS.filter((x) => x.series === "api").length);
      await done();
      assert.deepEqual(own.requests().filter((e) => e.status >= 400), [], "no 4xx/5xx in nginx's access log");
    } finally {
      await own.close();
    }
  });
});

describe("the archive under nginx", () => {
  test("home → series → a run by its date → the previous run → back, without an error", async () => {
    const logStart = site.requests().length;
    const { page, done } = await openPage(site.url);
    assert.equal(where(page), "");

    // Home: one row per series, with its count, sparkline, and a link to its newest run.
    const table = page.locator("table.fs-series");
    assert.equal(await table.count(), 1, "the home page has table.fs-series");
    const rows = table.locator("tr.fs-series-row");
    assert.deepEqual((await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.series))).sort(), SERIES);
    for (const s of SERIES) {
      const row = table.locator(`tr.fs-series-row[data-series="${s}"]`);
      const runs = RUNS.filter((r) => r.series === s);
      assert.equal((await row.locator("td.fs-count").textContent()).trim(), String(runs.length), `${s}: number of runs`);
      assert.equal(await row.locator("svg.fs-spark").count(), 1, `${s}: a sparkline`);
      assert.equal(await target(row.locator("a.fs-series-link")), `s/${s}/`);
      const newest = [...runs].sort((a, b) => (a.date < b.date ? 1 : -1))[0];
      assert.equal(await target(row.locator("a.fs-newest")), `p/${newest.slug}/`, `${s}: the newest run is ${newest.slug}`);
    }

    // Series page: its runs, newest first, each with its date, PER_PAGE a page.
    await follow(page, table.locator('tr.fs-series-row[data-series="api"] a.fs-series-link'));
    assert.equal(where(page), "s/api/");
    assert.match(await page.locator("h1.fs-title").textContent(), /\bapi\b/);
    const api = RUNS.filter((r) => r.series === "api").sort((a, b) => (a.date < b.date ? 1 : -1));
    const listed = () =>
      page.locator("a.fs-run").evaluateAll((as) => as.map((a) => [new URL(a.href).pathname, a.querySelector("time")?.getAttribute("datetime")?.slice(0, 10)]));
    const expect = (runs) => runs.map((r) => [`${PREFIX}p/${r.slug}/`, r.date.slice(0, 10)]);
    assert.deepEqual(await listed(), expect(api.slice(0, PER_PAGE)), "the newest runs first, each an a.fs-run with a <time datetime> of its date");
    const headings = await page.locator("section.fs-group > h2").allTextContents();
    assert.deepEqual(headings.map((h) => h.trim()), api.slice(0, PER_PAGE).map((r) => r.date.slice(0, 10)), "a section per day, under its date");
    const trend = await page.locator("svg.fs-trend a").evaluateAll((as) => as.map((a) => new URL(a.getAttribute("href") ?? a.getAttribute("xlink:href"), location.href).pathname));
    assert.deepEqual([...trend].sort(), api.slice(0, PER_PAGE).map((r) => `${PREFIX}p/${r.slug}/`).sort(), "the trend's points link to the runs");
    // The older runs are one page further, and that page leads back.
    assert.equal(await page.locator("nav.fs-pager a[rel~=prev]").count(), 0, "no newer page than the first");
    assert.equal(await target(page.locator("nav.fs-pager a[rel~=next]")), "s/api/page/2/");
    await follow(page, page.locator("nav.fs-pager a[rel~=next]"));
    assert.equal(where(page), "s/api/page/2/");
    assert.deepEqual(await listed(), expect(api.slice(PER_PAGE)), "page 2 has the oldest run");
    assert.equal(await page.locator("nav.fs-pager a[rel~=next]").count(), 0, "no older page than the last");
    assert.match(await target(page.locator("nav.fs-pager a[rel~=prev]")), /^s\/api\/(index\.html)?$/);
    await follow(page, page.locator("nav.fs-pager a[rel~=prev]"));
    assert.match(where(page), /^s\/api\/(index\.html)?$/);

    // The run of 2 November: api/run-1 (a .folded.gz).
    const r1 = run("api", "run-1");
    await follow(page, page.locator("a.fs-run", { has: page.locator('time[datetime^="2026-11-02"]') }));
    assert.equal(where(page), `p/${r1.slug}/`);
    let st = await graphIdle(page);
    assert.equal(st.total, r1.total, "api/run-1's graph is drawn");
    assert.ok(st.paints >= 1 && st.chunksLoaded.length > 0, "the graph drew its frames");
    const nav = page.locator("nav.fs-runnav");
    assert.equal(await target(nav.locator("a.fs-series-link")), "s/api/");
    assert.equal(await target(nav.locator("a[rel~=prev]")), `p/${run("api", "run-4").slug}/`, "prev: the older run, by date (15 October)");
    assert.equal(await target(nav.locator("a[rel~=next]")), `p/${run("api", "run-3").slug}/`, "next: the newer run, by date (20 November)");
    assert.equal(await nav.locator("a.fs-compare").count(), 1, "a link to compare with the previous run");
    const notes = page.locator("div.fs-notes");
    assert.match(await notes.textContent(), /connection pool change/, "the notes of NAME.md");
    assert.ok(await notes.isVisible(), "the notes are shown, not folded away");
    const meta = await page.locator("dl.fs-runmeta").textContent();
    assert.match(meta, /2026-11-02/, "the run's date in its metadata");
    assert.match(meta, /ci-1/, "its labels in its metadata");
    // A search puts the view in the URL fragment: going back must bring it back.
    await page.fill("#fs-search", "db::query");
    st = await graphIdle(page);
    const matched = matchedByStacks(r1.stacks, /db::query/i);
    assert.equal(st.matched.value, matched);
    const here = page.url();
    assert.match(new URL(here).hash, /q=db/);

    // The links to the other runs and the comparison now carry the search (issue 27, item 5).
    for (const link of ["a[rel~=prev]", "a[rel~=next]", "a.fs-compare"]) {
      assert.equal(new URL(await nav.locator(link).getAttribute("href"), page.url()).hash, "#q=db::query", link);
    }
    // The previous (older) run, then back.
    const r4 = run("api", "run-4");
    await follow(page, nav.locator("a[rel~=prev]"));
    assert.equal(where(page), `p/${r4.slug}/`);
    st = await graphIdle(page);
    assert.equal(st.total, r4.total, "api/run-4's graph is drawn");
    assert.equal(st.query, "db::query", "the other run opens with the search");
    assert.equal(st.matched.value, matchedByStacks(r4.stacks, /db::query/i), "matched in run-4's own stacks");
    assert.ok(await page.locator("nav.fs-runnav a[rel~=next]").count(), "run-4 links to its newer run");
    await page.goBack();
    await page.waitForURL(here);
    st = await graphIdle(page);
    assert.equal(page.url(), here, "back lands on run-1 with its fragment");
    assert.equal(st.total, r1.total);
    assert.equal(st.query, "db::query");
    assert.equal(st.matched.value, matched);
    assert.equal(await page.locator("#fs-search").inputValue(), "db::query");

    // The comparison with the previous run opens searched, and links to both runs with the
    // search it has then.
    assert.match(await target(nav.locator("a.fs-compare")), new RegExp(`^p/${r1.slug}/`));
    await follow(page, nav.locator("a.fs-compare"));
    st = await graphIdle(page);
    assert.equal(st.query, "db::query");
    assert.deepEqual([st.matched.before, st.matched.after], [matchedByStacks(r4.stacks, /db::query/i), matched]);
    await page.fill("#fs-search", "malloc");
    await graphIdle(page);
    const compared = await page.locator("main a[data-carry]").evaluateAll((as) => as.map((a) => new URL(a.href).pathname + new URL(a.href).hash));
    for (const r of [r1, r4]) assert.ok(compared.includes(`${PREFIX}p/${r.slug}/#q=malloc`), `the comparison links to ${r.slug}, searched: ${compared}`);

    await done();
    const walked = site.requests().slice(logStart);
    assert.ok(walked.some((e) => e.path === `${PREFIX}s/api/`), "nginx served the series page");
    assertLogClean(logStart);
  });

  test("a function's history on the series page plots its share in every run and opens the run searched", async () => {
    const { page, done } = await openPage(`${site.url}s/api/`);
    await page.waitForFunction(() => !!window.flamesiteHistory);
    // Only run-3 has its marker frame: a share of (7 + 3) / its total, 0 elsewhere.
    const r3 = run("api", "run-3");
    await page.fill("#fs-history-q", "marker::api_run_3");
    const h = await page.evaluate(() => window.flamesiteHistory.idle());
    assert.equal(h.points, RUNS.filter((r) => r.series === "api").length, "a point per run of the series");
    assert.equal(h.status, "1 function matched: marker::api_run_3.", "the status names what matched");
    // The query is in the link: reloaded, the page plots it again.
    assert.equal(new URL(page.url()).hash, "#h=marker::api_run_3");
    await page.reload();
    await page.waitForFunction(() => !!window.flamesiteHistory);
    const again = await page.evaluate(() => window.flamesiteHistory.idle());
    assert.deepEqual(again, h);
    assert.equal(await page.locator("#fs-history-q").inputValue(), "marker::api_run_3");
    // Several matches are named, those with the largest share first.
    await page.fill("#fs-history-q", "^marker::api_run_[13]$");
    const two = await page.evaluate(() => window.flamesiteHistory.idle());
    assert.match(two.status, /^2 functions matched: marker::api_run_[13], marker::api_run_[13] \(total: an upper bound/);
    await page.fill("#fs-history-q", "marker::api_run_3");
    await page.evaluate(() => window.flamesiteHistory.idle());
    const titles = await page.locator("#fs-history-plot a title").allTextContents();
    const share = (100 * 10) / r3.total;
    const withShare = titles.filter((t) => !t.includes("self 0.00%"));
    assert.deepEqual(withShare, [`${r3.date.slice(0, 10)} ${r3.title}: self ${share.toFixed(2)}%, total ${share.toFixed(2)}% (opens its comparison with the run before)`]);
    // Its labels are drawn at their own size whatever the window (issue 28, item 5): 11 px tall
    // text is 11 to 15 px on the screen, on a desktop and on a phone.
    const labelHeight = async (p) => p.evaluate(() => document.querySelector("#fs-history-plot .fs-axis-label").getBoundingClientRect().height);
    const wide = await labelHeight(page);
    assert.ok(wide >= 10 && wide <= 16, `label ${wide} px tall at 1600 px`);
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    const small = await phone.newPage();
    await small.goto(`${site.url}s/api/#h=marker::api_run_3`);
    await small.waitForFunction(() => !!window.flamesiteHistory);
    await small.evaluate(() => window.flamesiteHistory.idle());
    const narrow = await labelHeight(small);
    assert.ok(narrow >= 10 && narrow <= 16, `label ${narrow} px tall at 390 px`);
    await phone.close();
    // Its point opens run-3's comparison with the run before, searched: the marker went from
    // nothing to 10 samples.
    const point = page.locator("#fs-history-plot a", { has: page.locator("title", { hasText: r3.title }) });
    await point.locator("circle").first().click();
    await page.waitForURL(new RegExp(`p/${r3.slug}/compare/#q=`));
    const st = await graphIdle(page);
    assert.equal(st.query, "marker::api_run_3");
    assert.deepEqual([st.matched.before, st.matched.after], [0, 10]);
    // The first run has no comparison: its point opens the run itself.
    const oldest = RUNS.filter((r) => r.series === "api").sort((a, b) => a.date.localeCompare(b.date))[0];
    const first = run("api", oldest.name);
    await page.goBack();
    await page.waitForFunction(() => !!window.flamesiteHistory);
    await page.evaluate(() => window.flamesiteHistory.idle());
    const firstHref = await page.locator("#fs-history-plot a", { has: page.locator("title", { hasText: first.title }) }).first().getAttribute("href");
    assert.match(firstHref, new RegExp(`p/${first.slug}/(index\\.html)?#q=`));
    await done();
  });

  test("any two runs of a series, function by function: the series page's table from a link, its menus and the run page's link", async () => {
    const logStart = site.requests().length;
    const [r2, r3, r4] = [run("api", "run-2"), run("api", "run-3"), run("api", "run-4")];
    const { page, done } = await openPage(`${site.url}s/api/#pair=${r2.slug},${r3.slug}`);
    await page.waitForFunction(() => !!window.flamesitePair);
    let st = await page.evaluate(() => window.flamesitePair.idle());
    assert.deepEqual(st.pair, [r2.slug, r3.slug]);
    // Every function of either run, each share reckoned here from the stacks: self, the stacks
    // that end in it; total, the stacks through it; of each run's own total.
    const share = (v, t) => (100 * v) / t;
    const self = (stacks, f) => stacks.filter(([fr]) => fr[fr.length - 1] === f).reduce((s, [, c]) => s + c, 0);
    const through = (stacks, f) => stacks.filter(([fr]) => fr.includes(f)).reduce((s, [, c]) => s + c, 0);
    const names = new Set([r2, r3].flatMap((r) => r.stacks.flatMap(([fr]) => fr)));
    const want = [...names].map((f) => ({
      f,
      dSelf: share(self(r3.stacks, f), r3.total) - share(self(r2.stacks, f), r2.total),
      cells: [share(self(r2.stacks, f), r2.total), share(self(r3.stacks, f), r3.total), share(through(r2.stacks, f), r2.total), share(through(r3.stacks, f), r3.total)],
    }));
    assert.equal(st.note, `${Math.min(100, names.size)} of ${names.size} functions, by the largest change of self share.`);
    const points = (cell) => Number(cell.replace("−", "-").replace(" pp", ""));
    for (const row of st.rows) {
      const w = want.find((x) => x.f === row[0]);
      assert.ok(w, `${row[0]} is a function of the runs`);
      assert.deepEqual([row[1], row[2], row[4], row[5]], w.cells.map((v) => `${v.toFixed(2)}%`), row[0]);
      assert.ok(Math.abs(points(row[3]) - w.dSelf) < 0.006, `${row[0]}: ${row[3]} is ${w.dSelf}`);
    }
    // Largest change of self share first: the first row is the function that changed most.
    const most = Math.max(...want.map((w) => Math.abs(w.dSelf)));
    assert.ok(Math.abs(Math.abs(points(st.rows[0][3])) - most) < 0.006, `${st.rows[0]} changed most (${most})`);
    // A function of one run only: 0.00% in the other.
    const marker = st.rows.find((r) => r[0] === "marker::api_run_2");
    assert.deepEqual([marker[2], marker[5]], ["0.00%", "0.00%"]);
    // The menus choose another pair, which the link then holds.
    await page.selectOption("#fs-pair-b", r4.slug);
    st = await page.evaluate(() => window.flamesitePair.idle());
    assert.deepEqual(st.pair, [r2.slug, r4.slug]);
    assert.equal(new URL(page.url()).hash, `#pair=${r2.slug.replace(",", "%2C")}%2C${r4.slug}`);
    assert.ok(st.rows.some((r) => r[0] === "marker::api_run_4" && r[1] === "0.00%"), "run-4's own frame, which run-2 lacks");
    // A run's page links to the table of it and the run before it (run-1 comes before run-3 by date).
    await page.goto(`${site.url}p/${r3.slug}/`);
    const link = page.locator("a.fs-pair-link");
    assert.equal(await link.textContent(), "Compare with any run");
    await link.click();
    await page.waitForFunction(() => !!window.flamesitePair);
    st = await page.evaluate(() => window.flamesitePair.idle());
    assert.deepEqual(st.pair, [run("api", "run-1").slug, r3.slug]);
    assert.ok(st.rows.length > 10 && !st.hidden, st.status);
    await done();
    assertLogClean(logStart);
  });

  test("the feeds are served: the whole archive's and each series'", async () => {
    const logStart = site.requests().length;
    for (const p of ["feed.xml", "s/api/feed.xml", "s/worker/feed.xml"]) {
      const res = await fetch(site.url + p);
      assert.equal(res.status, 200, `${p} is served`);
      const text = await res.text();
      assert.match(text, /^<\?xml|<feed|<rss/, `${p} is a feed`);
    }
    // Each entry links to its run's page, which nginx serves.
    const entries = async (p) => {
      const text = await (await fetch(site.url + p)).text();
      return [...text.matchAll(/<entry>[\s\S]*?<\/entry>/g)].map(([e]) => {
        const href = /<link rel="alternate"[^>]* href="([^"]*)"/.exec(e)?.[1];
        assert.ok(href, `an entry of ${p} has a link: ${e}`);
        return new URL(href.replaceAll("&amp;", "&"), site.url + p).href;
      });
    };
    const pageOf = (r) => `${site.url}p/${r.slug}/`;
    const all = await entries("feed.xml");
    assert.deepEqual([...all].map((u) => u.replace(/index\.html$/, "")).sort(), RUNS.map(pageOf).sort(), "feed.xml has one entry per run");
    for (const u of all) assert.equal((await fetch(u)).status, 200, `${u} is served`);
    const api = await entries("s/api/feed.xml");
    assert.deepEqual([...api].map((u) => u.replace(/index\.html$/, "")).sort(), RUNS.filter((r) => r.series === "api").map(pageOf).sort(), "a series' feed has its runs only");
    assertLogClean(logStart);
  });

  test("link previews say in words which series, which run and what changed, on every page", async () => {
    // The og:image of each page, served by nginx, drawn on a canvas: the header above the graph
    // (132 px) has text, dark on the light background. A run with a run before it unfurls as
    // its comparison with that run (which states what grew most); a series' first run with its
    // own graph; the series and home pages with their newest run's.
    const r = run("api", "run-1");
    const first = run("api", "run-2");
    const { page, done } = await openPage(`${site.url}p/${r.slug}/`);
    const card = async (pageUrl) => {
      await page.goto(pageUrl);
      const image = await page.getAttribute('meta[property="og:image"]', "content");
      assert.ok(image && image.startsWith(site.url), `${pageUrl}: og:image ${image}`);
      assert.equal(await page.getAttribute('meta[name="twitter:card"]', "content"), "summary_large_image", pageUrl);
      const alt = await page.getAttribute('meta[property="og:image:alt"]', "content");
      const drawn = await page.evaluate(async (src) => {
        const img = new Image();
        img.src = src;
        await img.decode();
        const c = document.createElement("canvas");
        [c.width, c.height] = [img.width, img.height];
        const ctx = c.getContext("2d");
        ctx.drawImage(img, 0, 0);
        const d = ctx.getImageData(0, 0, c.width, 132).data;
        let dark = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] < 0x90 && d[i + 1] < 0x90 && d[i + 2] < 0x90) dark += 1;
        return { size: [img.width, img.height], dark, rows: Array.from(d.subarray(0, 4 * c.width * 132).filter((_, i) => i % 4 === 0)).join(",") };
      }, image);
      assert.deepEqual(drawn.size, [1200, 630], pageUrl);
      assert.ok(drawn.dark > 1000, `${pageUrl}: ${drawn.dark} dark pixels in its preview's header`);
      return { image, alt, ...drawn };
    };
    const runCard = await card(`${site.url}p/${r.slug}/`);
    const cmpCard = await card(`${site.url}p/${r.slug}/compare/`);
    assert.equal(runCard.image, cmpCard.image, "a run unfurls as what changed since the run before");
    assert.match(runCard.alt, /^Differential flame graph of api run-1 · api against the run before, api run-4$/);
    const firstCard = await card(`${site.url}p/${first.slug}/`);
    assert.equal(firstCard.image, `${site.url}p/${first.slug}/preview.png`, "a series' first run unfurls as its own graph");
    assert.match(firstCard.alt, /^Flame graph of api run-2 · api$/);
    assert.notEqual(firstCard.rows, cmpCard.rows, "each says its own words");
    // The series and home pages: their newest run's card.
    const newest = JSON.parse(fs.readFileSync(path.join(output, "s/api/index.json"), "utf8"))
      .profiles.sort((a, b) => (a.date < b.date ? 1 : -1))[0];
    const newestCard = await card(`${site.url}${newest.url}`);
    const seriesCard = await card(`${site.url}s/api/`);
    assert.equal(seriesCard.image, newestCard.image, "the series page shows its newest run's");
    await card(site.url);
    await done();
  });

  test("a zoom goes along from a run into its comparison, in that run's own widths, and back to it", async () => {
    const logStart = site.requests().length;
    const r = run("api", "run-3");
    const { page, done } = await openPage(`${site.url}p/${r.slug}/`);
    let st = await graphIdle(page);
    const manifest = JSON.parse(fs.readFileSync(path.join(output, "p", r.slug, "g/samples/manifest.json"), "utf8"));
    const frame = ["main", "server::run", "server::handle_request"];
    const pt = await frameCenter(page, r.stacks, frame, st, manifest.depth);
    await page.mouse.click(pt.x, pt.y);
    st = await graphIdle(page);
    const zoomed = st.zoom;
    assert.deepEqual([zoomed.name, zoomed.offset, zoomed.total], ["server::handle_request", pathOffset(r.stacks, frame), pathTotal(r.stacks, frame)]);
    // "Compare with the previous run": the comparison in this run's widths, zoomed alike.
    await page.locator("a.fs-compare:not(.fs-vs-baseline)").click();
    await page.waitForURL(/compare\/.*l=after/);
    st = await graphIdle(page);
    assert.equal(st.layout, "after");
    assert.deepEqual(st.zoom, zoomed, "the same frame, where this run's own graph has it");
    assert.deepEqual(st.errors, []);
    // Back to this run from there keeps it; the earlier run's widths are another run's, whose
    // link does not take the zoom.
    assert.ok(!new URL(await page.locator("a.fs-before").getAttribute("href"), page.url()).hash.includes("z="));
    await page.locator("a.fs-after").click();
    await page.waitForURL(new RegExp(`p/${r.slug}/(index\\.html)?#`));
    st = await graphIdle(page);
    assert.deepEqual(st.zoom, zoomed);

    // The previous run (run-1, by date) opens zoomed to the same frame, found by its path of
    // names in run-1's own graph, where it lies elsewhere (issue 27, item 5); and its next run
    // link brings the zoom back to run-3.
    const r1 = run("api", "run-1");
    const prev = page.locator("nav.fs-runnav a[rel~=prev]");
    const byPath = frame.map(nameHash).join(".");
    // With colours by module, which go along too.
    await page.selectOption("#fs-palette", "module");
    st = await graphIdle(page);
    assert.equal(st.palette, "module");
    assert.equal(new URL(await prev.getAttribute("href"), page.url()).hash, `#zp=${byPath}&p=module`, "the previous run's link names the zoomed frame by its path");
    await prev.click();
    await page.waitForURL(new RegExp(`p/${r1.slug}/`));
    st = await graphIdle(page);
    assert.equal(st.palette, "module", "run-1 opens with the colours");
    const there = [pathOffset(r1.stacks, frame), pathTotal(r1.stacks, frame)];
    assert.notEqual(there[0], zoomed.offset, "the frame is elsewhere in run-1, so its offset could not have been carried");
    assert.deepEqual([st.zoom.name, st.zoom.depth, st.zoom.offset, st.zoom.total], ["server::handle_request", 3, ...there]);
    assert.deepEqual(st.errors, []);
    assert.equal(new URL(page.url()).hash, `#z=3.${there[0]}.${there[1]}.${nameHash("server::handle_request")}&p=module`, "the entry holds run-1's own zoom");
    await page.locator("nav.fs-runnav a[rel~=next]").click();
    await page.waitForURL(new RegExp(`p/${r.slug}/`));
    st = await graphIdle(page);
    assert.deepEqual(st.zoom, zoomed, "and back to run-3's frame by the next run's link");
    assert.equal(st.palette, "module");
    // A path the other run lacks (run-3's own marker frame, in run-4): the whole graph, said,
    // the rest of the link kept.
    const r4 = run("api", "run-4");
    await page.goto(`${site.url}p/${r4.slug}/#zp=${["main", "marker::api_run_3"].map(nameHash).join(".")}&q=db::query`);
    st = await graphIdle(page);
    assert.equal(st.zoom, null);
    assert.equal(st.query, "db::query");
    assert.ok(st.errors.some((e) => e.includes("The frame the other run was zoomed to is not in this graph")), st.errors.join("\n"));
    assert.equal(new URL(page.url()).hash, "#q=db::query");
    await done();
    assertLogClean(logStart);
  });

  test("a permalink (zoom, search) opens the same view after more profiles are added and the site is rebuilt", async () => {
    const logStart = site.requests().length;
    const r = run("api", "run-3");
    const { page, done } = await openPage(`${site.url}p/${r.slug}/`);
    let st = await graphIdle(page);
    assert.equal(st.total, r.total);
    const manifest = JSON.parse(fs.readFileSync(path.join(output, "p", r.slug, "g/samples/manifest.json"), "utf8"));
    const frame = ["main", "server::run", "server::handle_request"];
    const pt = await frameCenter(page, r.stacks, frame, st, manifest.depth);
    await page.mouse.click(pt.x, pt.y);
    st = await graphIdle(page);
    assert.deepEqual(st.zoom, { name: "server::handle_request", depth: 3, offset: pathOffset(r.stacks, frame), total: pathTotal(r.stacks, frame), self: 0 });
    const query = "cache::get|parse_json";
    await page.fill("#fs-search", query);
    st = await graphIdle(page);
    const matched = matchedByStacks(r.stacks, new RegExp(query, "i"));
    assert.equal(st.matched.value, matched);
    assert.ok(Math.abs(st.matched.percent - (100 * matched) / r.total) < 1e-9);
    await page.waitForFunction(() => /[#&]z=/.test(location.hash) && /[#&]q=/.test(location.hash));
    const link = page.url();
    assert.equal(link, st.link, "the address bar holds the permalink");
    const matchedText = await page.locator("#fs-matched").textContent();
    await done();

    // The same for a comparison: run-3 against run-1, the run before it by date. Widths are
    // each run's share added, so a frame's place is reckoned from both runs' stacks.
    const r1 = run("api", "run-1");
    const cmp = await openPage(`${site.url}p/${r.slug}/compare/`);
    let c1 = await graphIdle(cmp.page);
    assert.deepEqual([c1.totalBefore, c1.total], [r1.total, r.total]);
    const frac = (f) => (f(r1.stacks) / r1.total + f(r.stacks) / r.total) / 2;
    const mid = frac((st) => pathOffset(st, frame)) + frac((st) => pathTotal(st, frame)) / 2;
    const box = await cmp.page.locator("#fs-canvas").boundingBox();
    const vp = c1.viewport;
    const content = Math.max(manifest.depth * vp.rowHeight, vp.height);
    await cmp.page.mouse.click(box.x + mid * vp.width, box.y + content - (frame.length + 1) * vp.rowHeight - vp.scrollTop + vp.rowHeight / 2);
    await cmp.page.fill("#fs-search", query);
    c1 = await graphIdle(cmp.page);
    assert.equal(c1.zoom && c1.zoom.name, "server::handle_request");
    assert.deepEqual([c1.matched.before, c1.matched.after], [matchedByStacks(r1.stacks, new RegExp(query, "i")), matched]);
    // In the zoomed frame: the stacks through it that match, in each run. Both from the runs'
    // own search files; the comparison has none of its own.
    const through = (stacks) => stacks.filter(([f]) => frame.every((n, i) => f[i] === n));
    const re = new RegExp(query, "i");
    assert.deepEqual([c1.matched.beforeInZoom, c1.matched.afterInZoom], [matchedByStacks(through(r1.stacks), re), matchedByStacks(through(r.stacks), re)]);
    const read = [...new Set(c1.searchLoaded.map((u) => new URL(u).pathname.replace(/s\/\d+\.bin\.gz$/, "")))].sort();
    assert.deepEqual(read, [`${PREFIX}p/${r1.slug}/g/samples/`, `${PREFIX}p/${r.slug}/g/samples/`], c1.searchLoaded.join(" "));
    await cmp.page.waitForFunction(() => /[#&]z=/.test(location.hash) && /[#&]q=/.test(location.hash));
    const cmpLink = cmp.page.url();
    const cmpText = await cmp.page.locator("#fs-matched").textContent();
    await cmp.done();

    // More profiles: a new series, and a new run of api (the newest, so run-3 gets a newer one).
    for (const m of MORE) writeRun(input, m);
    build(input, output, site.url);
    const again = await openPage(link);
    const s2 = await graphIdle(again.page);
    assert.equal(again.page.url(), link);
    assert.equal(s2.total, r.total);
    assert.deepEqual(s2.zoom, st.zoom, "the same frame is zoomed");
    assert.equal(s2.query, query);
    assert.equal(await again.page.locator("#fs-search").inputValue(), query);
    assert.equal(s2.matched.value, st.matched.value);
    assert.equal(s2.matched.percent, st.matched.percent);
    assert.equal(s2.matched.inZoom, st.matched.inZoom);
    assert.equal(await again.page.locator("#fs-matched").textContent(), matchedText, "the same matched share is shown");
    // The rebuilt site has the new run as run-3's newer neighbour, and the new series at home.
    assert.equal(await target(again.page.locator("nav.fs-runnav a[rel~=next]")), `p/${MORE[1].slug}/`);
    await again.page.goto(site.url);
    assert.equal(await again.page.locator('tr.fs-series-row[data-series="batch"]').count(), 1, "the new series is on the home page");
    await again.done();
    const cmp2 = await openPage(cmpLink);
    const c2 = await graphIdle(cmp2.page);
    assert.equal(cmp2.page.url(), cmpLink);
    assert.deepEqual(c2.zoom, c1.zoom, "the same frame of the comparison is zoomed");
    assert.deepEqual(c2.matched, c1.matched);
    assert.equal(await cmp2.page.locator("#fs-matched").textContent(), cmpText);
    await cmp2.done();
    assertLogClean(logStart);
  });
});
