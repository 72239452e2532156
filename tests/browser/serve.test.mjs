// `flamesite serve` as a user lives with it: a run page open in headless Chromium reloads by
// itself after the user edits the run's notes, a template or site.toml, and shows the change.
//
// Needs FLAMESITE_BIN and Chromium (CHROMIUM_BIN, default /usr/bin/chromium); run through run.sh.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { freePort } from "./server.mjs";

const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium";
const BIN = process.env.FLAMESITE_BIN;
if (!BIN || !fs.existsSync(BIN)) throw new Error(`FLAMESITE_BIN=${BIN} is not the flamesite binary: build it first (cargo build --release)`);
if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (run.sh does) or set CHROMIUM_BIN`);

let tmp;
let server;
let browser;
let port;
let log = "";

async function waitForServer(url) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`flamesite serve did not answer at ${url}; its output:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-serve-"));
  fs.mkdirSync(path.join(tmp, "profiles/api"), { recursive: true });
  fs.writeFileSync(path.join(tmp, "profiles/api/2026-11-20.folded"), "main;serve;parse 30\nmain;serve;render 12\n");
  fs.writeFileSync(path.join(tmp, "profiles/api/2026-11-20.md"), "First notes.\n");
  fs.writeFileSync(path.join(tmp, "site.toml"), 'title = "Before"\n');
  port = await freePort();
  server = spawn(BIN, ["serve", "--port", String(port)], { cwd: tmp, stdio: ["ignore", "ignore", "pipe"] });
  server.stderr.on("data", (d) => (log += d));
  await waitForServer(`http://127.0.0.1:${port}/`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
});

after(async () => {
  await browser?.close();
  server?.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test("an open run page reloads after notes, templates or site.toml change", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/p/api/2026-11-20/`);
  await page.evaluate(() => window.flamesite.idle());
  assert.match(await page.textContent(".fs-notes"), /First notes/);
  // Give the page's poll a moment to learn the current build, as a user's page would have.
  await page.waitForTimeout(1500);

  const reloaded = () => page.waitForEvent("load", { timeout: 20_000 });
  let load = reloaded();
  fs.writeFileSync(path.join(tmp, "profiles/api/2026-11-20.md"), "Incident [INC-9](https://tracker.example.com/INC-9)\n");
  await load;
  assert.equal(await page.getAttribute(".fs-notes a", "href"), "https://tracker.example.com/INC-9");

  load = reloaded();
  fs.writeFileSync(path.join(tmp, "site.toml"), 'title = "After"\n');
  await load;
  assert.equal(await page.textContent(".fs-home"), "After");

  load = reloaded();
  fs.mkdirSync(path.join(tmp, "static"), { recursive: true });
  fs.writeFileSync(path.join(tmp, "static/flamesite.css"), ".fs-home { color: rgb(1, 2, 3); }\n");
  await load;
  assert.equal(await page.$eval(".fs-home", (e) => getComputedStyle(e).color), "rgb(1, 2, 3)");
  assert.deepEqual(errors, []);
});
