// The bundled example archive (examples/archive, the README's first command) as a newcomer
// first sees it: the home page's newest run of `api` and the run where its deploy starts show
// their flame graph at common screen sizes, whatever the change line says; its series page
// shows a handful of changes. Real headless Chromium against the built example served by nginx.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startNginx } from "./nginx.mjs";
import { CHROMIUM_ARGS, testTools } from "./fixtures.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SIZES = [
  { name: "1920×1080", viewport: { width: 1920, height: 1080 } },
  { name: "1366×768", viewport: { width: 1366, height: 768 } },
  { name: "390×844", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let tmp;
let site;
let browser;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-example-"));
  const output = path.join(tmp, "out");
  // The repository's own site.toml, as `cargo run --release -- serve` builds it.
  execFileSync(BIN, ["build", "--config", path.join(REPO, "site.toml"), "--output", output], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  site = await startNginx(output, "/example/");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await site?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The page at `url` of the example in a window of `size`, once its change line was read. */
async function openRun(url, size) {
  const ctx = await browser.newContext({ deviceScaleFactor: 1, ...size });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(site.url + url);
  await page.evaluate(() => window.flamesite.idle());
  await page.locator(".fs-changestart[data-read]").waitFor({ state: "attached" });
  // The layout settles after the line is shown.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return { page, errors, done: () => ctx.close() };
}

describe("the bundled example, as a newcomer first opens it", () => {
  test("the home page's newest api run and the run of its deploy show their flame graph at every size", async () => {
    const home = await browser.newPage();
    await home.goto(site.url);
    const newest = await home.locator("a", { hasText: /2026-11-20/ }).first().getAttribute("href");
    await home.close();
    assert.match(newest, /p\/api\/2026-11-20\//);
    for (const url of ["p/api/2026-11-20/", "p/api/2026-11-19/"]) {
      for (const size of SIZES) {
        const { page, errors, done } = await openRun(url, size);
        const box = await page.locator("#fs-canvas").boundingBox();
        const height = size.viewport.height;
        assert.ok(box && box.height >= height / 4, `${url} at ${size.name}: the graph is ${box?.height} px tall`);
        assert.ok(box.y < height * 0.6, `${url} at ${size.name}: the graph starts at ${box.y} px, below most of the screen`);
        const line = page.locator(".fs-changestart");
        if (await line.isVisible()) {
          const lb = await line.boundingBox();
          assert.ok(lb.height <= 100, `${url} at ${size.name}: the change line is ${lb.height} px tall`);
        }
        assert.deepEqual(errors, []);
        await done();
      }
    }
  });

  test("the deploy is one change of shape on its run and on the series page", async () => {
    const { page, done } = await openRun("p/api/2026-11-19/", SIZES[1]);
    const line = page.locator(".fs-changestart");
    await line.waitFor({ state: "visible" });
    assert.match(await line.textContent(), /^The profile changed shape from this run \(\d+% of it moved\); most: .+ ▲ \d+\.\d\d% → \d+\.\d\d%, with \d+ other functions/);
    await done();
    const series = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    await series.goto(site.url + "s/api/");
    const shown = series.locator(".fs-changepoints > ul > li");
    const count = await shown.count();
    assert.ok(count >= 1 && count <= 5, `${count} changes shown`);
    assert.match(await shown.first().textContent(), /^The profile changed shape/);
    // Its functions are behind a list the reader opens, closed at first.
    const members = shown.first().locator("details.fs-members");
    assert.equal(await members.getAttribute("open"), null);
    const trend = await series.locator(".fs-trendbox").boundingBox();
    assert.ok(trend.y < 768, `the trend is on the first screen (${trend.y} px)`);
    await series.close();
  });
});
