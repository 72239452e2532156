// Fixture profiles for the browser tests, generated (deterministically) in JS as folded
// stacks, and the reference arithmetic the tests check the page against, computed from the
// folded text alone, independently of the build and of the page's modules; and how a test
// builds its site.

import { rng } from "../js/helpers.mjs";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** This tree's theme folder: every site of the browser tests is built with it. */
export const THEME = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../themes/default");
/** Chromium's flags for the tests: headless, and no background work to load the machine. */
export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/**
 * The flamesite binary (FLAMESITE_BIN) and Chromium (CHROMIUM_BIN, default Debian's
 * /usr/bin/chromium) that the browser tests run: `{ bin, chromium }`. Throws, naming what is
 * missing, so that a test file fails at once instead of skipping (run.sh finds or installs both).
 */
export function testTools() {
  const bin = process.env.FLAMESITE_BIN;
  const chromium = process.env.CHROMIUM_BIN || "/usr/bin/chromium";
  if (!bin) throw new Error("FLAMESITE_BIN is not set: point it at the flamesite binary (e.g. target/release/flamesite)");
  if (!fs.existsSync(bin)) throw new Error(`FLAMESITE_BIN=${bin} does not exist: build it first (cargo build --release)`);
  if (!fs.existsSync(chromium)) throw new Error(`${chromium} is missing: install Debian's chromium package (run.sh does) or set CHROMIUM_BIN`);
  return { bin, chromium };
}

export const HOSTILE = `<script>alert(1)</script>&"q'`;
export const TEMPLATE_FN = "std::vector<std::pair<int, std::string>>::emplace_back<int&, char const (&)[6]>(int&, char const (&)[6])";
export const DEEP = 72; // frames in the deepest stack (plus the root: 73 rows)

/**
 * A profile with a spine DEEP frames deep, recursion, a hostile name, C++ template names, a
 * realistic service mix and thousands of sub-pixel frames (class 1 and up at 3840 px).
 */
export function bigProfile() {
  const r = rng(42);
  const lines = [];
  const spine = ["main"];
  for (let i = 1; i < DEEP; i++) spine.push(`deep::level_${String(i).padStart(2, "0")}`);
  lines.push([spine, 9000]);
  lines.push([[...spine.slice(0, 40), "deep::side_branch", "memcpy"], 2500]);
  const rec = ["main", "walk_tree"];
  for (let i = 0; i < 12; i++) rec.push("visit");
  lines.push([[...rec, "leaf_work"], 7000]);
  lines.push([["main", "walk_tree", "visit", "visit", "hash_node"], 3000]);
  lines.push([["main", HOSTILE, "render_untrusted"], 6000]);
  lines.push([["main", TEMPLATE_FN, "operator new(unsigned long)", "malloc"], 5000]);
  lines.push([["main", TEMPLATE_FN, "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*)"], 4000]);
  const handlers = ["get_user", "list_orders", "post_payment", "search_items", "health"];
  const work = ["parse_json", "serialize_json", "db::query", "db::connect", "cache::get", "cache::put", "malloc", "free", "memcpy", "regex::exec"];
  for (let i = 0; i < 400; i++) {
    const h = handlers[Math.floor(r() * handlers.length)];
    const stack = ["main", "server::run", "server::handle_request", `handlers::${h}`];
    const depth = 1 + Math.floor(r() * 5);
    for (let d = 0; d < depth; d++) stack.push(work[Math.floor(r() * work.length)]);
    lines.push([stack, 20 + Math.floor(r() * 200)]);
  }
  // Thousands of sub-pixel frames: each far narrower than one pixel at the root view.
  for (let i = 0; i < 4000; i++) {
    lines.push([["main", "background::gc", `gc::sweep_region_${i}`, `gc::finalize_${i % 97}`], 1 + Math.floor(r() * 3)]);
  }
  return lines.map(([s, c]) => `${s.join(";")} ${c}`).join("\n") + "\n";
}

/** A small profile in a sub-folder (so its page is three folders below the root). */
export function smallProfile() {
  return ["main;a;b 30", "main;a;c 20", "main;d 10", "other 5"].join("\n") + "\n";
}

/** Parse folded text into [[frames], count]. */
export function parseFolded(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const m = /^(.*) (\d+)$/.exec(line);
    if (m) out.push([m[1].split(";"), Number(m[2])]);
  }
  return out;
}

/** Total of all stacks. */
export function total(stacks) {
  return stacks.reduce((s, [, c]) => s + c, 0);
}

/** Sum of the counts of stacks that contain at least one frame matched by `re`: the exact matched value. */
export function matchedByStacks(stacks, re) {
  let s = 0;
  for (const [frames, c] of stacks) if (frames.some((f) => re.test(f))) s += c;
  return s;
}

/** Total of the frame at `path` (a prefix of stacks): the sum of the stacks starting with it. */
export function pathTotal(stacks, path) {
  let s = 0;
  for (const [frames, c] of stacks) if (path.every((p, i) => frames[i] === p)) s += c;
  return s;
}

/** Self of the frame at `path`: the stacks that end exactly there. */
export function pathSelf(stacks, path) {
  let s = 0;
  for (const [frames, c] of stacks) if (frames.length === path.length && path.every((p, i) => frames[i] === p)) s += c;
  return s;
}

const enc = new TextEncoder();
/** Orders strings by their UTF-8 bytes, as the build orders names (a JS `<` orders UTF-16 units). */
export function byteCompare(a, b) {
  const x = enc.encode(a);
  const y = enc.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * Offset of the frame at `path`: its parent's offset plus the totals of its earlier siblings
 * (children sorted by name bytes, a frame's own self after its children). So it is the sum of
 * the stacks that branch off to a smaller name before reaching the end of the path.
 */
/**
 * Page coordinates of the middle of the visible part of the frame at `path` (a stack prefix)
 * of `stacks`, on the canvas of a flame graph page whose `state()` is `st` and whose graph
 * has `depthRows` rows.
 */
export async function frameCenter(page, stacks, path, st, depthRows) {
  const box = await page.locator("#fs-canvas").boundingBox();
  const vp = st.viewport;
  const off = pathOffset(stacks, path);
  const tot = pathTotal(stacks, path);
  const mid = Math.max(off, vp.x0) + (Math.min(off + tot, vp.x1) - Math.max(off, vp.x0)) / 2;
  const x = box.x + ((mid - vp.x0) / (vp.x1 - vp.x0)) * vp.width;
  const rowH = vp.rowHeight;
  const content = Math.max(depthRows * rowH, vp.height);
  const y = box.y + (st.icicle ? path.length * rowH : content - (path.length + 1) * rowH) - vp.scrollTop + rowH / 2;
  return { x, y };
}

export function pathOffset(stacks, path) {
  let s = 0;
  for (const [frames, c] of stacks) {
    for (let i = 0; i < path.length && i < frames.length; i++) {
      const d = byteCompare(frames[i], path[i]);
      if (d < 0) s += c;
      if (d !== 0) break;
    }
  }
  return s;
}

const layouts = new WeakMap(); // stacks -> frames by depth

/** The stacks merged into a tree: `{ kids: Map(name -> node), total }` from the root. */
function stackTree(stacks) {
  const root = { kids: new Map(), total: 0 };
  for (const [frames, c] of stacks) {
    let n = root;
    n.total += c;
    for (const f of frames) {
      if (!n.kids.has(f)) n.kids.set(f, { kids: new Map(), total: 0 });
      n = n.kids.get(f);
      n.total += c;
    }
  }
  return root;
}

/**
 * The frames of depth `d` (1: the first frame of a stack; 0 is the root) of `stacks`, in
 * layout order: [{ path, name, offset, total }], reckoned from the stacks alone: a frame's
 * children sorted by name bytes, each after the totals of the ones before it.
 */
export function framesAtDepth(stacks, d) {
  if (!layouts.has(stacks)) {
    const root = stackTree(stacks);
    const byDepth = [];
    const lay = (node, p, offset) => {
      let o = offset;
      for (const name of [...node.kids.keys()].sort(byteCompare)) {
        const k = node.kids.get(name);
        const path = [...p, name];
        (byDepth[path.length] ||= []).push({ path, name, offset: o, total: k.total });
        lay(k, path, o);
        o += k.total;
      }
    };
    lay(root, [], 0);
    layouts.set(stacks, byDepth);
  }
  return layouts.get(stacks)[d] || [];
}

/**
 * The left-heavy layout of `stacks`, reckoned from the stacks alone: every frame's children
 * ordered by their totals, heaviest first, equal totals by name bytes, each after the totals of
 * the ones before it. A Map from the path (names joined by ";") to { offset, total }.
 */
export function leftHeavy(stacks) {
  const root = stackTree(stacks);
  const out = new Map();
  const lay = (node, p, offset) => {
    let o = offset;
    const names = [...node.kids.keys()].sort((a, b) => node.kids.get(b).total - node.kids.get(a).total || byteCompare(a, b));
    for (const name of names) {
      const k = node.kids.get(name);
      const path = [...p, name];
      out.set(path.join(";"), { offset: o, total: k.total });
      lay(k, path, o);
      o += k.total;
    }
  };
  lay(root, [], 0);
  return out;
}

/**
 * The canvas's pixels ([r, g, b] each) of the CSS pixel row `y` of #fs-canvas, as it is on
 * screen (getImageData, device pixel ratio 1): what a user sees, not what the page reports.
 */
export function canvasRow(page, y) {
  return page.evaluate((y) => {
    const c = document.getElementById("fs-canvas");
    const d = c.getContext("2d").getImageData(0, y, c.width, 1).data;
    const out = [];
    for (let i = 0; i < d.length; i += 4) out.push([d[i], d[i + 1], d[i + 2]]);
    return out;
  }, Math.round(y));
}

/** All of the canvas's pixels as one string of hex, to tell two pictures apart. */
/**
 * Assert two canvasPicture strings are the same picture. On a mismatch the message says the
 * sizes, how many pixels differ and where the first one is, not a diff of two huge strings.
 */
export function assertSamePicture(actual, expected, what) {
  if (actual === expected) return;
  const [sa, pa] = actual.split(":");
  const [se, pe] = expected.split(":");
  let detail;
  if (sa !== se) detail = `canvas ${sa}, expected ${se}`;
  else {
    const w = Number(sa.split("x")[0]);
    let n = 0;
    let first = -1;
    for (let i = 0; i < pa.length; i += 6) {
      if (pa.slice(i, i + 6) !== pe.slice(i, i + 6)) {
        n += 1;
        if (first < 0) first = i / 6;
      }
    }
    detail = `${n} of ${pa.length / 6} pixels differ; the first at (${first % w}, ${Math.floor(first / w)}) is #${pa.slice(first * 6, first * 6 + 6)}, expected #${pe.slice(first * 6, first * 6 + 6)}`;
  }
  throw new Error(`${what}: ${detail}`);
}

export function canvasPicture(page) {
  return page.evaluate(() => {
    const c = document.getElementById("fs-canvas");
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let h = `${c.width}x${c.height}:`;
    for (let i = 0; i < d.length; i += 4) h += ((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]).toString(16).padStart(6, "0");
    return h;
  });
}

/**
 * Canvas y (CSS pixels) of the first pixel row of the box of depth `d`: one pixel below the
 * top of its row, above any label's glyphs.
 */
export function rowTop(st, depthRows, d) {
  const vp = st.viewport;
  const content = Math.max(depthRows * vp.rowHeight, vp.height);
  return (st.icicle ? d * vp.rowHeight : content - (d + 1) * vp.rowHeight) - vp.scrollTop + 1;
}

/** Canvas x (CSS pixels) of value `v` in the view of `st`. */
export function xOfValue(st, v) {
  const vp = st.viewport;
  return ((v - vp.x0) / (vp.x1 - vp.x0)) * vp.width;
}

/** Whether pixel [r, g, b] is 0xRRGGBB, each channel within `tol`. */
export function isRgb(px, rgb, tol = 0) {
  const want = [(rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255];
  return px.every((v, i) => Math.abs(v - want[i]) <= tol);
}

export const hex = (rgb) => `#${rgb.toString(16).padStart(6, "0")}`;

/**
 * Builds the profiles of `tmp/in` into `tmp/out` with the flamesite binary `bin` and the theme
 * folder `theme`, by a site.toml titled `title`; returns the output folder.
 */
export function buildSite(bin, theme, tmp, title, extra = "") {
  const out = path.join(tmp, "out");
  const cfg = path.join(tmp, "site.toml");
  fs.writeFileSync(cfg, `title = ${JSON.stringify(title)}\ninput = ${JSON.stringify(path.join(tmp, "in"))}\noutput = ${JSON.stringify(out)}\ntheme_dir = ${JSON.stringify(theme)}\n${extra}`);
  execFileSync(bin, ["build", "--config", cfg], { stdio: ["ignore", "pipe", "pipe"] });
  return out;
}
