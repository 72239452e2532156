import { test } from "node:test";
import assert from "node:assert/strict";
import { Palette, cssColor, dimRgb, drawGraph, mixRgb, paintFrames, parseHex, pixel } from "../../themes/default/static/draw.js";
import { decodeChunk } from "../../themes/default/static/fetch.js";
import { buildGraph, chunkBytes, diffTable, parseFolded } from "./helpers.mjs";
import { dimmed, faded, hotColor, matchColor, reckonedColors, rgbOf, shareColor } from "./colors.mjs";

// main;a 60, main;b 30, other 10 — at 100 px: main [0,90), a [0,60), b [60,90), other [90,100).
const g = buildGraph(parseFolded("main;a 60\nmain;b 30\nother 10\n"), { rootWidth: 100, depthBlock: 8 });
// The name file's colours as a build writes them: the `hot` palette of docs/FORMAT.md.
g.names.colors = g.names.names.map(hotColor);
const chunks = g.manifest.chunks.map((c) => decodeChunk(g.files.get(c.file)));
const id = (name) => g.names.names.indexOf(name);
const ROW = 10;

function paint({ dpr = 1, x0 = 0, x1 = 100, match = null, zoomDepth = 0, width = 100 } = {}) {
  const view = { x0, x1, width, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
  const W = width * dpr;
  const H = 3 * ROW * dpr;
  const pix = new Uint32Array(W * H);
  const palette = new Palette(g.names, 0xffffff);
  const out = paintFrames(pix, W, H, dpr, { view, chunks, palette, zoomDepth, match, diffScale: 0 });
  const at = (x, y) => pix[Math.floor(y * dpr) * W + Math.floor(x * dpr)];
  return { ...out, at, palette };
}

/** The pixel value of 0xRRGGBB in an RGBA8 buffer read as a little-endian Uint32: bytes r, g, b, 255. */
const px = (rgb) => {
  const [r, g, b] = rgbOf(rgb);
  return new Uint32Array(new Uint8Array([r, g, b, 255]).buffer)[0];
};

test("pixel and colour helpers", () => {
  assert.equal(pixel(0x112233), 0xff332211);
  assert.equal(parseHex("#fff"), 0xffffff);
  assert.equal(parseHex(" #0a0B0c "), 0x0a0b0c);
  assert.equal(parseHex("rgb(1,2,3)"), 0xffffff);
  assert.equal(mixRgb(0xff0000, 0x0000ff, 0.5), 0x800080);
  // Dimming keeps a quarter of each channel over three quarters of grey #d8d8d8 (the rule
  // reckoned in colors.mjs), for every channel value.
  assert.equal(dimRgb(0xe90730), 0xdca4ae);
  for (let c = 0; c < 256; c++) {
    for (const rgb of [c << 16, c << 8, c, (c << 16) | ((255 - c) << 8) | (c ^ 0x5a)]) assert.equal(dimRgb(rgb), dimmed(rgb), rgb.toString(16));
  }
});

test("frames land on their rows and columns, root at the bottom, with gaps", () => {
  const { at, painted, labels } = paint();
  const c = (name) => px(hotColor(name));
  const bg = px(0xffffff);
  // Row of depth d spans y in [30 - (d+1)*10, 30 - d*10), the last pixel row is the gap.
  assert.equal(at(50, 25), c("all"));
  assert.equal(at(30, 15), c("main"));
  assert.equal(at(95, 15), c("other"));
  assert.equal(at(30, 5), c("a"));
  assert.equal(at(75, 5), c("b"));
  assert.equal(at(30, 9), bg, "gap under a row");
  assert.equal(at(89, 15), bg, "gap after a frame");
  assert.equal(at(95, 5), bg, "nothing above other");
  assert.equal(painted, 5);
  // Labels for frames at least 36 px wide: all, main, a.
  const named = [];
  for (let k = 0; k < labels.length; k += 5) named.push(g.names.names[labels[k + 3]]);
  assert.deepEqual(named.sort(), ["a", "all", "main"]);
});

test("device pixels: the same picture at twice the resolution", () => {
  const one = paint();
  const two = paint({ dpr: 2 });
  for (const [x, y] of [[50, 25], [30, 15], [95, 15], [30, 5], [75, 5], [95, 5]]) assert.equal(two.at(x, y), one.at(x, y));
});

test("a zoom fills the width; ancestors are faded, a search dims the rest", () => {
  const z = paint({ x0: 60, x1: 90, zoomDepth: 2 });
  const bg = 0xffffff;
  assert.equal(z.at(50, 5), px(hotColor("b")), "b fills the width");
  assert.equal(z.at(99, 5), px(bg), "less the gap at its end");
  // 40% of main's colour over the background, give or take the rounding of a half.
  const fadedMain = [...new Uint8Array(new Uint32Array([z.at(50, 15)]).buffer)].slice(0, 3);
  const want = rgbOf(faded(hotColor("main"), bg));
  assert.ok(fadedMain.every((v, k) => Math.abs(v - want[k]) <= 1), `main is a faded ancestor: ${fadedMain} is not ${want}`);
  const match = new Uint8Array(g.names.names.length);
  match[id("a")] = 1;
  const s = paint({ match });
  assert.equal(s.at(30, 5), px(matchColor()), "a matches: the stylesheet's --fs-match");
  assert.equal(s.at(75, 5), px(dimmed(hotColor("b"))), "b is dimmed");
  assert.equal(s.at(30, 15), px(dimmed(hotColor("main"))), "main is dimmed");
  assert.equal(s.at(95, 15), px(dimmed(hotColor("other"))), "other is dimmed");
});

test("a comparison's frames are coloured by the change of their share or value, dimmed by a search, as the scene says", () => {
  // Before: a 60, b 30, gone 10 (100 in all); after: a 40, b 100, new 60 (200).
  const d = diffTable(parseFolded("a 60\nb 30\ngone 10\n"), parseFolded("a 40\nb 100\nnew 60\n"));
  const f = d.frames;
  const t = { names: d.names, name: f.map((x) => x.name), depth: f.map((x) => x.depth), parent: f.map((x) => x.parent), offset: f.map((x) => x.lo) };
  const leaf = (x, v) => (x.depth === 0 ? 0 : v);
  const diff = {
    beforeTotal: f.map((x) => x.before), afterTotal: f.map((x) => x.after),
    beforeSelf: f.map((x) => leaf(x, x.before)), afterSelf: f.map((x) => leaf(x, x.after)),
  };
  const cs = [decodeChunk(chunkBytes(t, f.map((x) => x.id), 0, 2, { diff, version: 4 }), "c/0-0.bin", { layout: "union", tb: 100, ta: 200 })];
  const names = { names: d.names, colors: new Uint32Array(d.names.length) };
  const palette = new Palette(names, 0xffffff);
  const view = { x0: 0, x1: 2 ** 31, width: 100, height: 2 * ROW, rowH: ROW, depthCount: 2, icicle: false, scrollTop: 0, minHeight: 0 };
  // docs/FORMAT.md: i = min(1, |change| / scale), each channel round(224 + (target − 224) · i).
  const rule = (change, scale) => {
    const i = Math.min(1, Math.abs(change) / scale);
    const to = change > 0 ? [220, 38, 30] : [38, 96, 220];
    const [r, g, b] = to.map((c) => Math.round(224 + (c - 224) * i));
    return (r << 16) | (g << 8) | b;
  };
  const pix = new Uint32Array(100 * 2 * ROW);
  const at = (x) => pix[5 * 100 + Math.floor((x.lo + x.width / 2) / 2 ** 31 * 100)];
  const byName = (n) => f.find((x) => d.names[x.name] === n);
  // The change in points of each run's total, or in value.
  for (const [measure, scale, change] of [["share", 50, (x) => 100 * (x.after / 200 - x.before / 100)], ["abs", 25, (x) => x.after - x.before]]) {
    for (const match of [null, new Uint8Array(d.names.length)]) {
      paintFrames(pix, 100, 2 * ROW, 1, { view, chunks: cs, palette, zoomDepth: 0, match, diff: { tb: 100, ta: 200, measure, scale } });
      for (const n of ["a", "b", "new"]) {
        const want = rule(change(byName(n)), scale);
        assert.equal(at(byName(n)), px(match ? dimmed(want) : want), `${n}, ${measure} at ${scale}${match ? ", dimmed by a search" : ""}`);
      }
    }
  }
});

test("frames under half a pixel are not painted, sub-pixel ones get a pixel", () => {
  const stacks = [[["big"], 10000]];
  for (let i = 0; i < 60; i++) stacks.push([["small", `s${i}`], 1]);
  const gg = buildGraph(stacks, { rootWidth: 100, depthBlock: 8 });
  const cs = gg.manifest.chunks.map((c) => decodeChunk(gg.files.get(c.file)));
  const view = { x0: 0, x1: gg.manifest.total, width: 100, height: 30, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0 };
  const pix = new Uint32Array(100 * 30);
  const out = paintFrames(pix, 100, 30, 1, { view, chunks: cs, palette: new Palette(gg.names), zoomDepth: 0, match: null, diffScale: 0 });
  assert.equal(out.painted, 3, "all, big, and small (0.6 px, one pixel); the 0.01 px s* are skipped");
});

test("labels: printable ASCII is measured by length in the monospaced font, anything else by measureText", () => {
  const measured = [];
  const ctx = { measureText: (t) => (measured.push(t), { width: t === "M" ? 7 : 7 * [...t].length + 3 }) };
  const names = { names: ["all", "std::vector<int>::push_back(int const&)", "größe", "tiny"], colors: new Uint32Array(4) };
  const p = new Palette(names);
  assert.equal(p.label(ctx, 1, 1000), names.names[1], "fits: the whole name");
  assert.equal(p.label(ctx, 1, 7 * 10), "std::vect\u2026", "cut with an ellipsis: 9 characters and the ellipsis in 10 widths");
  assert.equal(p.label(ctx, 3, 7 * 4), "tiny", "exactly as wide as the room");
  assert.equal(p.label(ctx, 2, 7 * 5 + 2), "gr\u00f6\u00df\u2026", "non-ASCII is measured (7 * 5 + 3 > room), then cut");
  assert.deepEqual(measured, ["M", "größe"], "one measureText for the character width, one for the non-ASCII name");
});

/**
 * A 2D context that records pixels: putImageData (with a dirty rectangle, in device pixels
 * whatever the transform, as a canvas does) and fillRect (through the transform: scale and
 * translation); and the labels, fillText's text at its point in device pixels and its colour.
 * It starts with the transform setupCanvas leaves: CSS pixels, `dpr` device pixels each.
 */
function recordingContext(W, H, dpr = 1) {
  const pix = new Uint32Array(W * H); // 0: never written
  const texts = [];
  let m = [dpr, 0, 0, dpr, 0, 0];
  const saved = [];
  const ctx = {
    canvas: { width: W, height: H },
    fillStyle: "",
    font: "",
    textBaseline: "",
    createImageData: (w, h) => ({ width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }),
    putImageData(img, dx, dy, sx, sy, sw, sh) {
      const src = new Uint32Array(img.data.buffer);
      for (let y = sy; y < sy + sh; y++) {
        for (let x = sx; x < sx + sw; x++) {
          const cx = dx + x;
          const cy = dy + y;
          if (cx >= 0 && cx < W && cy >= 0 && cy < H) pix[cy * W + cx] = src[y * img.width + x];
        }
      }
    },
    fillRect(x, y, w, h) {
      const v = pixel(parseHex(this.fillStyle));
      const [x0, y0, x1, y1] = [m[0] * x + m[4], m[3] * y + m[5], m[0] * (x + w) + m[4], m[3] * (y + h) + m[5]].map(Math.round);
      for (let yy = Math.max(0, y0); yy < Math.min(H, y1); yy++) pix.fill(v, yy * W + Math.max(0, x0), yy * W + Math.min(W, x1));
    },
    save() {
      saved.push(m);
    },
    restore() {
      m = saved.pop();
    },
    setTransform(a, b, c, d, e, f) {
      m = [a, b, c, d, e, f];
    },
    measureText: (t) => ({ width: 7 * t.length }),
    fillText(text, x, y) {
      texts.push([text, m[0] * x + m[4], m[3] * y + m[5], this.fillStyle]);
    },
  };
  return { ctx, pix, texts };
}

test("the canvas gets the same pixels, row by row, as paintFrames paints, covering all of it", () => {
  const bg = 0xf8f4f0;
  assert.equal(cssColor(bg), "#f8f4f0");
  const cases = [
    { dpr: 1, height: 3 * ROW, scrollTop: 0, icicle: false },
    { dpr: 2, height: 3 * ROW, scrollTop: 0, icicle: false },
    { dpr: 1.5, height: 5 * ROW + 3, scrollTop: 0, icicle: false, note: "content shorter than the canvas" },
    { dpr: 1, height: 2 * ROW - 4, scrollTop: 7, icicle: false, note: "rows cut at both edges" },
    { dpr: 1.25, height: 5 * ROW, scrollTop: 0, icicle: true, x0: 60, x1: 90, zoomDepth: 2 },
    { dpr: 1, height: 2 * ROW - 4, scrollTop: 7, icicle: true, note: "an icicle's first row cut at the top" },
  ];
  for (const k of cases) {
    const view = { x0: k.x0 ?? 0, x1: k.x1 ?? 100, width: 100, height: k.height, rowH: ROW, depthCount: 3, icicle: k.icicle, scrollTop: k.scrollTop, minHeight: k.height };
    const W = Math.round(100 * k.dpr);
    const H = Math.round(k.height * k.dpr);
    const scene = { view, chunks, palette: new Palette(g.names, bg), zoomDepth: k.zoomDepth ?? 0, match: null, diffScale: 0, fg: "#000" };
    const want = new Uint32Array(W * H);
    const out = paintFrames(want, W, H, k.dpr, scene);
    const { ctx, pix } = recordingContext(W, H, k.dpr);
    const painted = drawGraph(ctx, { ...scene, palette: new Palette(g.names, bg) });
    assert.equal(painted, out.painted, JSON.stringify(k));
    assert.ok(pix.every((v) => v !== 0), `every pixel written (${JSON.stringify(k)})`);
    assert.deepEqual(pix, want, JSON.stringify(k));
  }
});

test("the self and total palettes colour each frame by its share of the graph", () => {
  const view = { x0: 0, x1: 100, width: 100, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
  const pix = new Uint32Array(100 * 3 * ROW);
  const at = (x, y) => pix[y * 100 + x];
  for (const by of ["total", "self"]) {
    paintFrames(pix, 100, 3 * ROW, 1, { view, chunks, palette: new Palette(g.names), zoomDepth: 0, match: null, share: { by, total: 100 } });
    // all 100 (self 0), main 90 (self 0), other 10 (self 10), a 60 (self 60), b 30 (self 30).
    const want = by === "total" ? { all: 1, main: 0.9, other: 0.1, a: 0.6, b: 0.3 } : { all: 0, main: 0, other: 0.1, a: 0.6, b: 0.3 };
    assert.equal(at(50, 25), px(shareColor(want.all)), `${by}: all`);
    assert.equal(at(30, 15), px(shareColor(want.main)), `${by}: main`);
    assert.equal(at(95, 15), px(shareColor(want.other)), `${by}: other`);
    assert.equal(at(30, 5), px(shareColor(want.a)), `${by}: a`);
    assert.equal(at(75, 5), px(shareColor(want.b)), `${by}: b`);
  }
  // A search dims the others' share colours and highlights its matches.
  const match = new Uint8Array(g.names.names.length);
  match[id("a")] = 1;
  paintFrames(pix, 100, 3 * ROW, 1, { view, chunks, palette: new Palette(g.names), zoomDepth: 0, match, share: { by: "total", total: 100 } });
  assert.equal(at(30, 5), px(matchColor()));
  assert.equal(at(75, 5), px(dimmed(shareColor(0.3))));
});

test("a palette chosen on the page colours names by the spec's rules, not the name files'", () => {
  // Names from tests/data/colors/colors.txt, so their colours are the independent reckoning's.
  const want = new Map(reckonedColors().filter(([p]) => p === "lang").map(([, n, c]) => [n, c]));
  const [java, cpp, kernel] = ["java/lang/String.hashCode", "std::vector<int>::push_back", "do_syscall_64_[k]"];
  const gg = buildGraph(parseFolded(`${java} 50\n${cpp} 30\n${kernel} 20\n`), { rootWidth: 100, depthBlock: 8 });
  gg.names.colors = gg.names.names.map(hotColor);
  const cs = gg.manifest.chunks.map((c) => decodeChunk(gg.files.get(c.file)));
  const view = { x0: 0, x1: 100, width: 100, height: 2 * ROW, rowH: ROW, depthCount: 2, icicle: false, scrollTop: 0, minHeight: 0 };
  const pix = new Uint32Array(100 * 2 * ROW);
  const palette = new Palette(gg.names);
  // Children by name bytes: do_syscall_64_[k] [0,20), java/… [20,70), std::… [70,100).
  const cols = { [kernel]: 10, [java]: 45, [cpp]: 85 };
  paintFrames(pix, 100, 2 * ROW, 1, { view, chunks: cs, palette, zoomDepth: 0, match: null });
  for (const [n, x] of Object.entries(cols)) assert.equal(pix[5 * 100 + x], px(hotColor(n)), `name files: ${n}`);
  palette.setScheme("lang");
  paintFrames(pix, 100, 2 * ROW, 1, { view, chunks: cs, palette, zoomDepth: 0, match: null });
  for (const [n, x] of Object.entries(cols)) assert.equal(pix[5 * 100 + x], px(want.get(n)), `lang: ${n}`);
  palette.setScheme(null);
  paintFrames(pix, 100, 2 * ROW, 1, { view, chunks: cs, palette, zoomDepth: 0, match: null });
  for (const [n, x] of Object.entries(cols)) assert.equal(pix[5 * 100 + x], px(hotColor(n)), `back to the name files: ${n}`);
});

test("the canvas's labels: each frame wide enough, its name left in its box and centred in its row", () => {
  // all, main and a are at least 36 px wide (3 times the 12 px font); their rows' tops are
  // at 20, 10 and 0, 9 px tall above the 1 px gap: a label is 3 px in, at the row's middle.
  for (const dpr of [1, 2]) {
    const view = { x0: 0, x1: 100, width: 100, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
    const { ctx, texts } = recordingContext(100 * dpr, 3 * ROW * dpr, dpr);
    drawGraph(ctx, { view, chunks, palette: new Palette(g.names, 0xffffff), zoomDepth: 0, match: null, diffScale: 0, fg: "#123456" });
    const want = [["all", 3, 25], ["main", 3, 15], ["a", 3, 5]].map(([t, x, y]) => [t, x * dpr, y * dpr, "#123456"]);
    assert.deepEqual(texts.sort(), want.sort(), `dpr ${dpr}`);
  }
});

test("only the rows on the canvas are painted and labelled", () => {
  // An icicle two rows high over a graph of three: all, main and other, not a and b above.
  const view = { x0: 0, x1: 100, width: 100, height: 2 * ROW, rowH: ROW, depthCount: 3, icicle: true, scrollTop: 0, minHeight: 0 };
  const out = paintFrames(new Uint32Array(100 * 2 * ROW), 100, 2 * ROW, 1, { view, chunks, palette: new Palette(g.names), zoomDepth: 0, match: null, diffScale: 0 });
  assert.equal(out.painted, 3);
  const named = [];
  for (let k = 0; k < out.labels.length; k += 5) named.push(g.names.names[out.labels[k + 3]]);
  assert.deepEqual(named.sort(), ["all", "main"]);
});

test("a label cut just after the first half of a surrogate pair drops the whole character", () => {
  const ctx = { measureText: (t) => ({ width: t === "M" ? 7 : 7 * [...t].length + 3 }) };
  // "ab😀cd": the emoji is two UTF-16 units, [2] and [3]. Room for 3 units and the ellipsis.
  const p = new Palette({ names: ["all", "ab\u{1f600}cd"], colors: new Uint32Array(2) });
  assert.equal(p.label(ctx, 1, 7 * 4), "ab\u2026");
  assert.equal(p.label(ctx, 1, 7 * 5), "ab\u{1f600}\u2026", "room for the whole emoji");
});
