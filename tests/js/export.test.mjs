import { test } from "node:test";
import assert from "node:assert/strict";
import { SVG_SCRIPT, fileName, headerHeight, pageParts, svgOf, xmlText } from "../../themes/default/static/export.js";
import { Palette } from "../../themes/default/static/draw.js";
import { decodeChunk } from "../../themes/default/static/fetch.js";
import { buildGraph, parseFolded } from "./helpers.mjs";
import { dimmed, faded, hotColor, matchColor } from "./colors.mjs";

const HOSTILE = `<script>alert("x")</script>&'`;
// main [0,90), its children by name bytes: HOSTILE [0,30), a [30,90); other [90,100).
const g = buildGraph(parseFolded(`main;a 60\nmain;${HOSTILE} 30\nother 10\n`), { rootWidth: 100, depthBlock: 8 });
g.names.colors = g.names.names.map(hotColor);
const chunks = g.manifest.chunks.map((c) => decodeChunk(g.files.get(c.file)));
const ROW = 10;
const ctx = { measureText: (s) => ({ width: 7 * s.length }) }; // a monospaced font, 7 px a character
const hex = (rgb) => `#${rgb.toString(16).padStart(6, "0")}`;

/** The SVG of a view, and its frames: [{ title, x, y, width, fill }], read back with regexes. */
function exported({ x0 = 0, x1 = 100, zoomDepth = 0, match = null, width = 1000, header = undefined, options = undefined } = {}) {
  const view = { x0, x1, width, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
  const scene = { view, chunks, palette: new Palette(g.names, 0xffffff), zoomDepth, match, diff: null, fg: ["#111", "#666", "#777", "#999"] };
  const svg = svgOf(scene, (c, r) => `${g.names.names[c.name[r]]}\n${c.total[r]} samples`, ctx, "flame graph", header, options);
  // Each frame's group: its rect's colour and, exported under a search, its colour without it
  // (`base`), and its label's ink and ink without the search.
  const frames = [...svg.matchAll(/<g class="fs-f" data-d="\d+" data-o="\d+" data-v="\d+"><title>([^<]*)<\/title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="\d+" fill="(#[0-9a-f]{6})"(?: data-fill="(#[0-9a-f]{6})")?\/>(?:\n<text [^>]* fill="(#[0-9a-f]{3})"(?: data-fill="(#[0-9a-f]{3})")?>)?/g)].map((m) => ({
    title: m[1],
    x: Number(m[2]),
    y: Number(m[3]),
    width: Number(m[4]),
    fill: m[5],
    base: m[6] || null,
    ink: m[7] || null,
    baseInk: m[8] || null,
  }));
  return { svg, frames };
}

test("xmlText escapes markup and replaces characters XML does not allow", () => {
  assert.equal(xmlText(`<a href="x">&'</a>`), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  assert.equal(xmlText("a\u0001b\tc\nd\ufffe"), "a\ufffdb\tc\nd\ufffd");
  assert.equal(xmlText("x\ud800y\udc00z\ud83d\ude00"), "x\ufffdy\ufffdz\ud83d\ude00");
});

test("the SVG has one rect per frame in view, with its title, colour and width", () => {
  const { svg, frames } = exported();
  assert.deepEqual(
    frames.map((f) => f.title.split("\n")[0]),
    ["all", "main", "other", `&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;`, "a"],
  );
  assert.ok(!svg.includes("<script"), "no markup from a name");
  const main = frames[1];
  assert.equal(main.fill, hex(hotColor("main")));
  assert.equal(main.x, 0);
  assert.equal(main.width, 899, "900 px less the 1 px gap");
  assert.equal(main.y, 10);
  assert.ok(svg.includes(`>main</text>`), "label");
  assert.ok(svg.includes(`&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</text>`), "escaped label");
});

test("a zoomed view exports the zoomed subtree at the canvas's widths, ancestors faded", () => {
  // Zoom to main;a: [30, 90) fills 1000 px.
  const { frames } = exported({ x0: 30, x1: 90, zoomDepth: 2 });
  const names = frames.map((f) => f.title.split("\n")[0]);
  assert.deepEqual(names, ["all", "main", "a"], "nothing outside the zoom");
  assert.equal(frames[2].x, 0);
  assert.equal(frames[2].width, 999);
  assert.equal(frames[1].width, 999, "an ancestor as wide as the canvas, not as its whole");
  assert.equal(frames[1].fill, hex(faded(hotColor("main"), 0xffffff)));
});

test("a search's colours: matched in the highlight, the others dimmed", () => {
  const match = new Uint8Array(g.names.names.length);
  match[g.names.names.indexOf("a")] = 1;
  const { frames } = exported({ match });
  const by = Object.fromEntries(frames.map((f) => [f.title.split("\n")[0], f.fill]));
  assert.equal(by.a, hex(matchColor()));
  assert.equal(by.main, hex(dimmed(hotColor("main"))));
});

test("exported under a search, each frame says its colour and label ink without it, for the file's own search", () => {
  const match = new Uint8Array(g.names.names.length);
  match[g.names.names.indexOf("a")] = 1;
  const { svg, frames } = exported({ match });
  const by = Object.fromEntries(frames.map((f) => [f.title.split("\n")[0], f]));
  // Matched: the highlight, and its own colour; its label's ink is the same either way.
  assert.deepEqual([by.a.fill, by.a.base, by.a.ink, by.a.baseInk], [hex(matchColor()), hex(hotColor("a")), "#111", null]);
  // Not matched: dimmed, and its own colour; dimmed ink, and the plain ink.
  assert.deepEqual([by.main.fill, by.main.base, by.main.ink, by.main.baseInk], [hex(dimmed(hotColor("main"))), hex(hotColor("main")), "#666", "#111"]);
  assert.equal(by.other.base, hex(hotColor("other")));
  // No highlight colour is a frame's own.
  assert.ok(frames.every((f) => f.base !== hex(matchColor())));
  // Without a search, nothing to restore: no data-fill.
  const plain = exported();
  assert.ok(!plain.svg.includes("data-fill"), "no data-fill without a search");
  assert.equal(plain.frames.find((f) => f.title.startsWith("main\n")).ink, "#111");
  assert.ok(svg.includes(`data-match="${hex(matchColor())}"`), "the file's own highlight colour");
});

test("exported under a search and a zoom, a grey mark says its grey without the search", () => {
  // 100 px for 1000: b1, b2 and b3 (2 each) are too narrow to draw: a mark at depth 2.
  const gg = buildGraph(parseFolded("main;a 6\nmain;b1 2\nmain;b2 2\nmain;b3 2\nmain;c 988\n"), { rootWidth: 1000, depthBlock: 8 });
  const cs = gg.manifest.chunks.map((c) => decodeChunk(gg.files.get(c.file)));
  const mark = (zoomDepth, match) => {
    const view = { x0: 0, x1: 1000, width: 100, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
    const scene = { view, chunks: cs, palette: new Palette(gg.names, 0xffffff), zoomDepth, match, diff: null, fg: "#000", elided: 0x888888 };
    const svg = svgOf(scene, (c, r) => gg.names.names[c.name[r]], ctx, "flame graph");
    return /<rect class="fs-elided" [^>]* fill="(#[0-9a-f]{6})"(?: data-fill="(#[0-9a-f]{6})")?>/.exec(svg).slice(1);
  };
  const match = new Uint8Array(gg.names.names.length);
  match[gg.names.names.indexOf("c")] = 1;
  assert.deepEqual(mark(0, null), [hex(0x888888), undefined], "no search: its grey, nothing to restore");
  assert.deepEqual(mark(0, match), [hex(dimmed(0x888888)), hex(0x888888)]);
  // Zoomed below the mark's row: faded (an ancestor's row), dimmed or not; zoomed at its row, not.
  assert.deepEqual(mark(3, match), [hex(faded(dimmed(0x888888), 0xffffff)), hex(faded(0x888888, 0xffffff))]);
  assert.deepEqual(mark(2, match), [hex(dimmed(0x888888)), hex(0x888888)]);
});

test("without its controls (a picture), a header holds its own lines only, and no script", () => {
  const header = { lines: ["cpu: the page", "Colours: name"], fg: "#222" };
  const { svg, frames } = exported({ header, options: { controls: false } });
  for (const id of ["fs-unzoom", "fs-find", "fs-status"]) assert.ok(!svg.includes(`id="${id}"`), id);
  assert.ok(!svg.includes("<script") && !svg.includes("Click a frame"), "no script, no words of controls");
  assert.deepEqual([...svg.matchAll(/<text class="fs-head" [^>]*>([^<]*)</g)].map((m) => m[1]), header.lines);
  // Two lines of 18 px and 8 px of margin, no line of controls under them.
  const top = headerHeight(header.lines);
  assert.equal(top, 2 * 18 + 8);
  assert.ok(svg.includes(`height="${3 * ROW + top}"`) && svg.includes(`<g id="fs-frames" transform="translate(0 ${top})">`));
  assert.equal(frames.length, 5);
  // With them (the default, and asked for): the line of controls and the script, under one line
  // of header as under two.
  for (const options of [undefined, { controls: true }]) {
    const one = exported({ header: { lines: ["cpu: the page"] }, options }).svg;
    assert.ok(one.includes('id="fs-unzoom"') && one.includes('id="fs-find"') && one.includes("<script"));
    assert.ok(one.includes(`<g id="fs-frames" transform="translate(0 ${headerHeight(["", ""])})">`));
  }
  // Without a header there are none either way.
  assert.ok(!exported({ options: { controls: true } }).svg.includes("<script"));
});

test("file names: the series and the run, of a comparison both runs, earlier first", () => {
  const name = (data, graph = "cpu", zoom = undefined) => fileName([...pageParts(data, "/site/p/x/"), graph, zoom], "png");
  assert.equal(name({ exportSeries: "api", exportRun: "api/2026-11-20" }), "api-2026-11-20-cpu.png");
  assert.equal(name({ exportSeries: "api", exportRun: "api/2026-11-20", exportBefore: "api/2026-11-19" }, "samples"), "api-2026-11-19-vs-2026-11-20-samples.png");
  assert.equal(name({ exportSeries: "api", exportRun: "api/2026-11-20" }, "cpu", "serve_http"), "api-2026-11-20-cpu-serve_http.png", "and the zoomed frame");
  // The series' folder is its name made URL-safe, compared without case; a run outside it keeps
  // its whole slug; a run that is its series' only file is named by the series alone.
  assert.deepEqual(pageParts({ exportSeries: "My API", exportRun: "my_api/2026-11-20" }, "/"), ["My API", "2026-11-20"]);
  assert.deepEqual(pageParts({ exportSeries: "api", exportRun: "team/api/2026-11-20" }, "/"), ["api", "team/api/2026-11-20"]);
  assert.deepEqual(pageParts({ exportSeries: "api", exportRun: "apiary/x" }, "/"), ["api", "apiary/x"]);
  assert.deepEqual(pageParts({ exportSeries: "big", exportRun: "big" }, "/"), ["big", ""]);
  assert.equal(name({ exportSeries: "big", exportRun: "big" }, "samples"), "big-samples.png");
  // `flamesite diff`: the runs by their files' names.
  assert.equal(name({ exportSeries: "diff", exportRun: "new.pb.gz", exportBefore: "old.pb.gz" }, "cpu"), "diff-old.pb.gz-vs-new.pb.gz-cpu.png");
  // A page whose viewer does not say (a theme's own): the last folder of its address.
  assert.deepEqual(pageParts({}, "/perf/p/api/2026-11-20/"), ["2026-11-20"]);
  assert.deepEqual(pageParts({}, "/perf/p/api/2026-11-20/index.html"), ["2026-11-20"]);
  assert.deepEqual(pageParts({}, "/perf/p/api/run.html"), ["run"]);
});

test("file names keep only safe characters", () => {
  assert.equal(fileName(["big", "samples", "<img src=x>"], "svg"), "big-samples-img-src-x.svg");
  assert.equal(fileName(["", null], "png"), "flamegraph.png");
});

test("with a header: its lines escaped above the frames, the frames' numbers, and the one script of the file", () => {
  const header = { lines: [`cpu: ${HOSTILE}`, `Search /${HOSTILE}/: 30%`], scale: [0x2660dc, 0xdc261e], fg: "#222" };
  const { svg, frames } = exported({ header });
  // Its two lines, and a line of the file's own controls (Reset zoom, Search).
  const top = headerHeight([...header.lines, ""]);
  assert.equal(top, 3 * 18 + 8);
  assert.ok(svg.includes(">Reset zoom</text>") && svg.includes(">Search</text>"));
  // Lines 18 px apart from 4 px down, each at its middle: the two lines at 13 and 31, the
  // controls' line under them at 49.
  assert.deepEqual([...svg.matchAll(/<text class="fs-head" x="[\d.]+" y="([\d.]+)"/g)].map((m) => Number(m[1])), [13, 31]);
  assert.deepEqual([...svg.matchAll(/<text id="fs-(?:unzoom|find|status)" x="[\d.]+" y="([\d.]+)"/g)].map((m) => Number(m[1])), [49, 49, 49]);
  assert.ok(svg.includes(`height="${3 * ROW + top}"`), "as tall as the graph and its header");
  assert.ok(svg.includes(`<g id="fs-frames" transform="translate(0 ${top})">`), "the frames under the header");
  assert.ok(svg.includes(`>cpu: &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</text>`), "the title line, escaped");
  assert.equal(svg.match(/<rect class="fs-scale"/g).length, 2, "the scale's swatches");
  // The only script is the file's own, whatever the names: no name is in it.
  assert.equal(svg.split("<script").length - 1, 1);
  assert.ok(svg.includes(`<script><![CDATA[${SVG_SCRIPT}]]></script>`));
  assert.ok(!SVG_SCRIPT.includes("]]>") && !SVG_SCRIPT.includes("innerHTML"), "the script cannot end its CDATA or write markup");
  // What the script zooms and searches by: each frame's depth, offset and value.
  assert.deepEqual(
    [...svg.matchAll(/<g class="fs-f" data-d="(\d+)" data-o="(\d+)" data-v="(\d+)">/g)].map((m) => m.slice(1).map(Number)),
    [[0, 0, 100], [1, 0, 90], [1, 90, 10], [2, 0, 30], [2, 30, 60]],
  );
  assert.equal(frames.length, 5);
  // Without a header (the default), no script and no offset.
  const plain = exported().svg;
  assert.ok(!plain.includes("<script") && plain.includes('transform="translate(0 0)"'));
});

test("a mark of frames too narrow to draw that rounds to no width is still a pixel wide", () => {
  // 100 px for 1000: b1, b2 and b3 (2 each, a fifth of a pixel) are left out of main's
  // children as [6, 12), 0.6 px to 1.2 px, which rounds to nothing at pixel 1.
  const gg = buildGraph(parseFolded("main;a 6\nmain;b1 2\nmain;b2 2\nmain;b3 2\nmain;c 988\n"), { rootWidth: 1000, depthBlock: 8 });
  const cs = gg.manifest.chunks.map((c) => decodeChunk(gg.files.get(c.file)));
  const view = { x0: 0, x1: 1000, width: 100, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
  const scene = { view, chunks: cs, palette: new Palette(gg.names, 0xffffff), zoomDepth: 0, match: null, diff: null, fg: "#000" };
  const svg = svgOf(scene, (c, r) => gg.names.names[c.name[r]], ctx, "flame graph");
  const marks = [...svg.matchAll(/<rect class="fs-elided" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"/g)].map((m) => m.slice(1).map(Number));
  assert.deepEqual(marks, [[1, 0, 1]]);
});

test("a label is cut to its own frame's width, wherever the frame is", () => {
  // 200 px for 100: a [0, 50) 100 px, then the long name [50, 100) from x 100, 100 px less its
  // 1 px gap: room for 93 px less 3 px each side, 12 characters of 7 px and the ellipsis.
  const long = "averyveryverylongname";
  const gg = buildGraph(parseFolded(`main;a 50\nmain;${long} 50\n`), { rootWidth: 100, depthBlock: 8 });
  const cs = gg.manifest.chunks.map((c) => decodeChunk(gg.files.get(c.file)));
  const view = { x0: 0, x1: 100, width: 200, height: 3 * ROW, rowH: ROW, depthCount: 3, icicle: false, scrollTop: 0, minHeight: 0 };
  const scene = { view, chunks: cs, palette: new Palette(gg.names, 0xffffff), zoomDepth: 0, match: null, diff: null, fg: "#000" };
  const svg = svgOf(scene, (c, r) => gg.names.names[c.name[r]], ctx, "flame graph");
  assert.ok(svg.includes(">averyveryver\u2026</text>"), "cut");
  assert.ok(!svg.includes(`>${long}</text>`), "not whole");
  assert.ok(svg.includes(">main</text>") && svg.includes(">a</text>"));
});
