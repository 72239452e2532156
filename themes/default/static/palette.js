// Names' colours on the page, by the rules of docs/FORMAT.md ("Colours"), which the build's
// name files follow too (src/graph/color.rs): so the page can show any palette whatever the
// build chose, and a name has the same colour in both. Both are tested against the same
// vectors, tests/data/colors/colors.txt. And the colour of a change in a differential graph,
// which the first paint draws with. Pure functions: node's test runner imports this file.

import { fnv1a32 } from "./format.js";

/** The palettes of names' colours (docs/FORMAT.md); the page adds `self` and `total`. */
export const NAME_PALETTES = ["hot", "module", "lang", "blue"];

/** floor(base + k · byte / 255), as the document's "rounded down" of base + k·v. */
const ch = (base, k, byte) => base + Math.floor((k * byte) / 255);
const rgb = (r, g, b) => (r << 16) | (g << 8) | b;

function hot(h) {
  return rgb(ch(205, 50, (h >>> 16) & 255), ch(0, 230, h & 255), ch(0, 55, (h >>> 8) & 255));
}

const GO_ABI = /\.(abi0|abiinternal)$/;
const GO_CLOSURE = /\.func[0-9]+(\.[0-9]+)*$/;

/**
 * The module of a name: without Go's ABI ending, then without its closure ending; then the part
 * up to the last `::`, `.` or `/` before the first `(` or `<` (all of it when there is none, or
 * when that separator is its first character).
 */
export function moduleOf(name) {
  const s = name.replace(GO_ABI, "").replace(GO_CLOSURE, "");
  let head = s;
  const paren = head.search(/[(<]/);
  if (paren >= 0) head = head.slice(0, paren);
  const cut = Math.max(head.lastIndexOf("::"), head.lastIndexOf("."), head.lastIndexOf("/"));
  return cut > 0 ? s.slice(0, cut) : s;
}

const ID = "[A-Za-z_$][A-Za-z0-9_$]*";
const JAVA = [
  new RegExp(`^L${ID}(?:/${ID})*;`), // a JVM descriptor: Lfoo/Bar;.baz
  new RegExp(`^${ID}(?:/${ID})*/[A-Z][A-Za-z0-9_$]*\\.`), // java/lang/String.hashCode
  new RegExp(`^[a-z][A-Za-z0-9_$]*(?:\\.[a-z][A-Za-z0-9_$]*)+\\.[A-Z][A-Za-z0-9_$]*\\.`), // java.util.HashMap.get
];
const OPERATOR = /^operator[^A-Za-z0-9_$]/;

/** The `lang` palette's kind of a name: "kernel", "java", "inlined", "cpp" or "other". */
export function kindOf(name) {
  if (name.endsWith("_[k]")) return "kernel";
  if (name.endsWith("_[j]")) return "java";
  if (name.endsWith("_[i]")) return "inlined";
  if (JAVA.some((re) => re.test(name))) return "java";
  if (name.includes("::") || OPERATOR.test(name)) return "cpp";
  return "other";
}

/** The colour (0xRRGGBB) of `name` in `palette` (one of NAME_PALETTES; anything else is `hot`). */
export function nameColor(name, palette) {
  if (palette === "module") return hot(fnv1a32(moduleOf(name)));
  const h = fnv1a32(name);
  const [b1, b2, b3] = [h & 255, (h >>> 8) & 255, (h >>> 16) & 255];
  if (palette === "blue") return rgb(ch(80, 60, b1), ch(80, 60, b1), ch(190, 55, b2));
  if (palette !== "lang") return hot(h);
  switch (kindOf(name)) {
    case "kernel":
      return rgb(ch(220, 35, b3), ch(120, 50, b1), ch(0, 30, b2));
    case "java":
      return rgb(ch(50, 60, b1), ch(200, 55, b3), ch(50, 60, b2));
    case "inlined":
      return rgb(ch(40, 50, b1), ch(190, 40, b2), ch(200, 55, b3));
    case "cpp":
      return rgb(ch(205, 45, b1), ch(190, 45, b1), ch(40, 50, b2));
    default:
      return rgb(ch(200, 55, b3), ch(40, 70, b1), ch(40, 40, b2));
  }
}

// The colour of a change in a differential graph (src/graph/diff.rs's `color`).

const NEUTRAL = [224, 224, 224];
const GREW = [220, 38, 30];
const SHRANK = [38, 96, 220];

/** 0xRRGGBB of a change `delta` on a scale where `scale` (> 0) is full colour. */
export function diffRgb(delta, scale) {
  const i = scale > 0 ? Math.min(1, Math.abs(delta) / scale) : 0;
  const to = delta > 0 ? GREW : SHRANK;
  const ch = (k) => Math.round(NEUTRAL[k] + (to[k] - NEUTRAL[k]) * i);
  return (ch(0) << 16) | (ch(1) << 8) | ch(2);
}

/** Share of `v` in `of`, 0 when `of` is 0. */
const share = (v, of) => (of > 0 ? v / of : 0);

/**
 * The change of a frame with totals `before` and `after`, in runs of totals `tb` and `ta`: in
 * percentage points of the share (`measure` "share") or in value ("abs").
 */
export function frameDelta(before, after, tb, ta, measure) {
  return measure === "abs" ? after - before : 100 * (share(after, ta) - share(before, tb));
}
