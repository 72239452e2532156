import { test } from "node:test";
import assert from "node:assert/strict";
import { keyDirection, step } from "../../themes/default/static/nav.js";
import { frameInfo } from "../../themes/default/static/layout.js";
import { decodeChunk } from "../../themes/default/static/fetch.js";
import { buildGraph, parseFolded } from "./helpers.mjs";

// main (60) with children a (50: b 30, c 20) and d (10); other (5). Children by name.
const stacks = parseFolded("main;a;b 30\nmain;a;c 20\nmain;d 10\nother 5\n");

function chunksOf(opts) {
  const g = buildGraph(stacks, opts);
  return g.manifest.chunks.map((c) => Object.assign(decodeChunk(g.files.get(c.file)), { entry: c }));
}

const name = (chunks, h) => (h ? h.chunk.name[h.row] : null);

test("arrow keys move to the parent, the first child and the neighbours at the same depth", () => {
  // Frames split over several chunks (depth blocks of 1, offsets split in 3) must not matter.
  for (const opts of [{}, { depthBlock: 1, offsetSplits: 3, rootWidth: 4 }]) {
    const g = buildGraph(stacks, opts);
    const chunks = g.manifest.chunks.map((c) => Object.assign(decodeChunk(g.files.get(c.file)), { entry: c }));
    const names = { names: g.table.names };
    const info = (h) => (h ? frameInfo(h.chunk, h.row, names) : null);
    const walk = (f, dir) => info(step(chunks, f, dir));
    const root = { depth: 0, offset: 0, total: 65 };
    const main = walk(root, "child");
    assert.equal(main.name, "main");
    assert.equal(walk(main, "parent").depth, 0);
    assert.equal(walk(main, "next").name, "other");
    assert.equal(walk(main, "prev"), null);
    const a = walk(main, "child");
    assert.equal(a.name, "a");
    assert.deepEqual([a.depth, a.offset, a.total], [2, 0, 50]);
    const d = walk(a, "next");
    assert.deepEqual([d.name, d.offset, d.total], ["d", 50, 10]);
    assert.equal(walk(d, "prev").name, "a");
    assert.equal(walk(d, "child"), null, "a leaf has no child");
    assert.equal(walk(walk(a, "child"), "next").name, "c");
    assert.equal(walk(walk(walk(a, "child"), "next"), "parent").name, "a");
    // Frames narrower than minTotal are not drawn, so the keys skip them.
    assert.equal(info(step(chunks, a, "next", 11)), null);
    assert.equal(info(step(chunks, main, "next", 6)), null);
  }
  assert.equal(name(chunksOf({}), null), null);
});

test("up and down follow the picture: children above in a flame graph, below in an icicle", () => {
  assert.equal(keyDirection("ArrowUp", false), "child");
  assert.equal(keyDirection("ArrowDown", false), "parent");
  assert.equal(keyDirection("ArrowUp", true), "parent");
  assert.equal(keyDirection("ArrowDown", true), "child");
  assert.equal(keyDirection("ArrowLeft", false), "prev");
  assert.equal(keyDirection("ArrowRight", true), "next");
  assert.equal(keyDirection("a", false), null);
});
