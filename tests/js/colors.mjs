// Colours the tests expect on the canvas, reckoned here and never imported from the page's
// modules, so that a slip in draw.js cannot make its own expected value:
// - a name's colour from docs/FORMAT.md ("Colours"), checked against the independent Python
//   reckoning's output, tests/data/colors/colors.txt (colors.test.mjs);
// - the search highlight from the theme's stylesheet (`--fs-match` in flamesite.css);
// - dimmed and faded colours from the page's rules, written out here as arithmetic.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "../..");

/** FNV-1a-32 of the UTF-8 bytes of `name` (docs/FORMAT.md, "Colours", step 1). */
export function fnv1a(name) {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(name)) h = Math.imul(h ^ b, 0x01000193) >>> 0; // exact mod 2^32
  return h;
}

/** The `hot` palette's colour of `name` as 0xRRGGBB: r = 205 + 50·v3, g = 230·v1, b = 55·v2, rounded down. */
export function hotColor(name) {
  const h = fnv1a(name);
  const [b1, b2, b3] = [h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff];
  // floor(base + k · byte / 255), in integers: no float rounding to share with the code.
  const ch = (base, k, byte) => base + Math.floor((k * byte) / 255);
  return (ch(205, 50, b3) << 16) | (ch(0, 230, b1) << 8) | ch(0, 55, b2);
}

/** 0xRRGGBB as [r, g, b]. */
export const rgbOf = (c) => [(c >> 16) & 255, (c >> 8) & 255, c & 255];

/** [r, g, b] as 0xRRGGBB. */
export const packRgb = ([r, g, b]) => (r << 16) | (g << 8) | b;

/**
 * A frame that a search does not match keeps a quarter of its colour and takes three
 * quarters of the grey #d8d8d8, each channel rounded to the nearest integer (halves up).
 */
export function dimmed(rgb) {
  return packRgb(rgbOf(rgb).map((c) => Math.floor((c + 3 * 0xd8) / 4 + 0.5)));
}

/** An ancestor of the zoomed frame keeps 40% of its colour over 60% of the background `bg`. */
export function faded(rgb, bg) {
  const b = rgbOf(bg);
  return packRgb(rgbOf(rgb).map((c, i) => Math.floor((c * 4 + b[i] * 6) / 10 + 0.5)));
}

/** The search highlight colour: `--fs-match` of the theme's stylesheet, as 0xRRGGBB. */
export function matchColor() {
  const css = fs.readFileSync(path.join(REPO, "themes/default/static/flamesite.css"), "utf8");
  const m = /--fs-match:\s*#([0-9a-f]{6})\s*;/i.exec(css);
  if (!m) throw new Error("flamesite.css declares no --fs-match: #rrggbb");
  return parseInt(m[1], 16);
}

/** The lines of tests/data/colors/colors.txt: [palette, name, colour]. */
export function reckonedColors() {
  const text = fs.readFileSync(path.join(REPO, "tests/data/colors/colors.txt"), "utf8");
  return text
    .split("\n")
    .filter((l) => l && !l.startsWith("example"))
    .map((l) => {
      const [palette, name, dec] = l.split("\t");
      return [palette, JSON.parse(name), Number(dec)];
    });
}

/**
 * The `self` and `total` palettes' colour of a frame whose self or total is `share` of the
 * graph (themes/default/README.md, "Colour modes"): t = √share, at most 1; each channel
 * round(low + (high − low) · t) from #f6e7bc to #c62828.
 */
export function shareColor(share) {
  const t = Math.min(1, Math.sqrt(Math.max(0, share)));
  const lo = rgbOf(0xf6e7bc);
  const hi = rgbOf(0xc62828);
  return packRgb(lo.map((l, i) => Math.floor(l + (hi[i] - l) * t + 0.5)));
}

/** floor(base + k · byte / 255) in integers. */
const chan = (base, k, byte) => base + Math.floor((k * byte) / 255);

/**
 * The `module` palette's colour of `name` (docs/FORMAT.md, "The module"): `hot` of its module,
 * reckoned here by scanning the text (not with the page's regexes).
 */
export function moduleColor(name) {
  let s = name;
  for (const end of [".abi0", ".abiinternal"]) if (s.endsWith(end)) s = s.slice(0, -end.length);
  // `.funcN` then any `.N`: peel digit groups off the end while they are digits, then `funcN`.
  const parts = s.split(".");
  let k = parts.length - 1;
  while (k > 0 && /^[0-9]+$/.test(parts[k])) k -= 1;
  if (k > 0 && /^func[0-9]+$/.test(parts[k])) s = parts.slice(0, k).join(".");
  let head = s;
  for (const c of ["(", "<"]) if (head.includes(c)) head = head.slice(0, head.indexOf(c));
  let cut = -1;
  for (const sep of ["::", ".", "/"]) cut = Math.max(cut, head.lastIndexOf(sep));
  return hotColor(cut > 0 ? s.slice(0, cut) : s);
}

/** The `lang` palette's colour of `name` (docs/FORMAT.md, "The kind"). */
export function langColor(name) {
  const h = fnv1a(name);
  const [b1, b2, b3] = [h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff];
  const pack = (r, g, b) => (r << 16) | (g << 8) | b;
  const green = pack(chan(50, 60, b1), chan(200, 55, b3), chan(50, 60, b2));
  if (name.endsWith("_[k]")) return pack(chan(220, 35, b3), chan(120, 50, b1), chan(0, 30, b2));
  if (name.endsWith("_[j]")) return green;
  if (name.endsWith("_[i]")) return pack(chan(40, 50, b1), chan(190, 40, b2), chan(200, 55, b3));
  const id = "[A-Za-z_$][\\w$]*";
  // Identifiers joined by `/` (as many as there are), the last capitalised, then a dot.
  const slash = name.match(new RegExp(`^${id}(/${id})+`));
  const slashJava = slash !== null && /^[A-Z]/.test(slash[0].split("/").pop()) && name[slash[0].length] === ".";
  const java = new RegExp(`^L${id}(/${id})*;`).test(name) || slashJava || /^[a-z][\w$]*(\.[a-z][\w$]*)+\.[A-Z][\w$]*\./.test(name);
  if (java) return green;
  if (name.includes("::") || /^operator[^\w$]/.test(name)) return pack(chan(205, 45, b1), chan(190, 45, b1), chan(40, 50, b2));
  return pack(chan(200, 55, b3), chan(40, 70, b1), chan(40, 40, b2));
}
