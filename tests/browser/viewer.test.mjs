// The viewer on screens of every size and under the pointer: marks where frames too narrow to
// draw were left out, phones and small laptops (viewport and touch emulation). Real headless
// Chromium against a site built by the flamesite binary with this tree's theme; expected
// numbers come from the folded text (fixtures.mjs), never from the page's modules.
//
// FLAMESITE_SCREENSHOTS=DIR also writes screenshots of what the tests look at.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import { bigProfile, canvasRow, framesAtDepth, isRgb, parseFolded, rowTop, total, xOfValue } from "./fixtures.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const THEME = path.resolve(HERE, "../../themes/default");
const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const BIN = process.env.FLAMESITE_BIN;
if (!BIN) throw new Error("FLAMESITE_BIN is not set: point it at the flamesite binary (e.g. target/release/flamesite)");
if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (run.sh does) or set CHROMIUM_BIN`);

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
  out = path.join(tmp, "out");
  const cfg = path.join(tmp, "site.toml");
  fs.writeFileSync(cfg, `title = "Viewer"\ninput = ${JSON.stringify(path.join(tmp, "in"))}\noutput = ${JSON.stringify(out)}\ntheme_dir = ${JSON.stringify(THEME)}\n`);
  execFileSync(BIN, ["build", "--config", cfg], { stdio: ["ignore", "pipe", "pipe"] });
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
