// `flamesite serve` as a user lives with it: a run page open in headless Chromium reloads by
// itself after the user edits the run's notes, a template, a static file or site.toml, and
// shows the change.
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
import { THEME, testTools } from "./fixtures.mjs";

const { bin: BIN, chromium: CHROMIUM } = testTools();

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

/**
 * Counts the page's polls of `/__flamesite/generation` (the documented way an open page learns
 * of a rebuild), per document. `learned()` resolves once the current document has asked
 * twice: it polls again only after it has read the first answer, so from then on it knows
 * the current build and reloads after the next one, with no guess at how long that takes.
 */
function watchPolls(page) {
  let polls = 0;
  let wake = () => {};
  page.on("framenavigated", (f) => {
    if (f === page.mainFrame()) polls = 0;
  });
  page.on("request", (r) => {
    if (r.frame() === page.mainFrame() && new URL(r.url()).pathname === "/__flamesite/generation") {
      polls += 1;
      wake();
    }
  });
  return {
    learned: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the page polled /__flamesite/generation ${polls} times in 20 s`)), 20_000);
        const check = () => {
          if (polls < 2) return;
          clearTimeout(timer);
          wake = () => {};
          resolve();
        };
        wake = check;
        check();
      }),
  };
}

test("an open run page reloads after notes, a template, a static file or site.toml change, and shows the change", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const polls = watchPolls(page);
  await page.goto(`http://127.0.0.1:${port}/p/api/2026-11-20/`);
  await page.evaluate(() => window.flamesite.idle());
  assert.match(await page.textContent(".fs-notes"), /First notes/);

  /** Make a change with `edit`, then wait for the page to reload and learn the new build. */
  const reloadsAfter = async (edit) => {
    await polls.learned();
    const load = page.waitForEvent("load", { timeout: 20_000 });
    edit();
    await load;
    await page.evaluate(() => window.flamesite.idle());
  };

  await reloadsAfter(() => fs.writeFileSync(path.join(tmp, "profiles/api/2026-11-20.md"), "Incident [INC-9](https://tracker.example.com/INC-9)\n"));
  assert.equal(await page.getAttribute(".fs-notes a", "href"), "https://tracker.example.com/INC-9");

  await reloadsAfter(() => fs.writeFileSync(path.join(tmp, "site.toml"), 'title = "After"\n'));
  assert.equal(await page.textContent(".fs-home"), "After");

  // A template: the theme's base.html, copied to theme/ beside site.toml (theme_dir) and edited.
  await reloadsAfter(() => {
    const base = fs.readFileSync(path.join(THEME, "templates/base.html"), "utf8");
    const edited = base.replace('<main class="fs-main">', '<main class="fs-main"><p id="fs-test-edit">Edited template</p>');
    assert.notEqual(edited, base);
    fs.mkdirSync(path.join(tmp, "theme/templates"), { recursive: true });
    fs.writeFileSync(path.join(tmp, "theme/templates/base.html"), edited);
  });
  assert.equal(await page.textContent("#fs-test-edit"), "Edited template");

  // A static file of the theme: the stylesheet, also overridden in theme/.
  await reloadsAfter(() => {
    fs.mkdirSync(path.join(tmp, "theme/static"), { recursive: true });
    const css = fs.readFileSync(path.join(THEME, "static/flamesite.css"), "utf8");
    fs.writeFileSync(path.join(tmp, "theme/static/flamesite.css"), `${css}\n.fs-home { color: rgb(1, 2, 3); }\n`);
  });
  assert.equal(await page.$eval(".fs-home", (e) => getComputedStyle(e).color), "rgb(1, 2, 3)");
  assert.equal(await page.textContent("#fs-test-edit"), "Edited template", "the template edit stays");

  // A file of the site's own static/ folder beside site.toml (published at the site's root):
  // added, then edited; each edit reloads the page and is served at once.
  const robots = () => page.evaluate(() => fetch("/robots.txt", { cache: "no-store" }).then((r) => (r.ok ? r.text() : `HTTP ${r.status}`)));
  assert.equal(await robots(), "HTTP 404");
  await reloadsAfter(() => {
    fs.mkdirSync(path.join(tmp, "static"), { recursive: true });
    fs.writeFileSync(path.join(tmp, "static/robots.txt"), "User-agent: *\nDisallow: /p/\n");
  });
  assert.equal(await robots(), "User-agent: *\nDisallow: /p/\n");
  await reloadsAfter(() => fs.writeFileSync(path.join(tmp, "static/robots.txt"), "User-agent: *\nAllow: /\n"));
  assert.equal(await robots(), "User-agent: *\nAllow: /\n");
  assert.deepEqual(errors, []);
});
