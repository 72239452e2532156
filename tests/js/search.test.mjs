import { test } from "node:test";
import assert from "node:assert/strict";
import {
  bucketIndex, bucketSortPairs, bucketsFor, compileQuery, escapeRegExp, exactQuery, matchNames, matchedValue, sweepUnion, unionLength,
} from "../../themes/default/static/search.js";
import { decodeSearch } from "../../themes/default/static/fetch.js";
import { buildGraph, parseFolded, rng } from "./helpers.mjs";

test("unionLength counts overlapping, nested and touching intervals once", () => {
  assert.equal(unionLength([], []), 0);
  assert.equal(unionLength([0], [10]), 10);
  assert.equal(unionLength([0, 2], [10, 5]), 10, "nested");
  assert.equal(unionLength([0, 5], [5, 10]), 10, "touching");
  assert.equal(unionLength([0, 20], [10, 30]), 20, "disjoint");
  assert.equal(unionLength([0, 5, 3], [6, 8, 4]), 8, "overlapping, unsorted");
  assert.equal(unionLength([0, 20], [10, 30], 5, 25), 10, "clipped");
  assert.equal(unionLength([0], [10], 20, 30), 0);
  assert.equal(sweepUnion([0, 2, 20], [10, 5, 30], 5, 25), 10);
});

test("unionLength agrees with a brute force count, spread out or clustered", () => {
  const r = rng(5);
  for (const shape of ["spread", "clustered", "equal starts"]) {
    for (let round = 0; round < 20; round++) {
      const n = 1 + Math.floor(r() * 300);
      const starts = [];
      const ends = [];
      for (let i = 0; i < n; i++) {
        let s = Math.floor(r() * 1000);
        if (shape === "clustered") s = i === 0 ? 1e12 : Math.floor(r() * 50);
        if (shape === "equal starts") s = 10 * Math.floor(r() * 3);
        starts.push(s);
        ends.push(s + 1 + Math.floor(r() * 40));
      }
      const covered = new Set();
      for (let i = 0; i < n; i++) for (let x = starts[i]; x < ends[i] && x < 2000; x++) covered.add(x);
      const far = shape === "clustered" ? ends[0] - starts[0] : 0; // the one interval beyond 2000
      assert.equal(unionLength(starts, ends), covered.size + far, `${shape} #${round}`);
      assert.equal(sweepUnion(starts, ends), covered.size + far);
      if (far === 0) {
        // u32 values take the packed native sort.
        assert.equal(unionLength(Uint32Array.from(starts), Uint32Array.from(ends)), covered.size, `${shape} #${round}, u32`);
        assert.equal(unionLength(Uint32Array.from(starts), Uint32Array.from(ends), 10, 30), [...covered].filter((x) => x >= 10 && x < 30).length);
      }
      assert.equal(unionLength(starts, ends, 10, 30), [...covered].filter((x) => x >= 10 && x < 30).length);
    }
  }
  // Adversarial: distinct starts all in one bucket, in reverse order. The bucket sort gives up
  // within its budget of moves (an insertion sort would be quadratic) and the union takes the
  // native sorts instead, with the same answer.
  const n = 20000;
  const starts = Float64Array.from({ length: n }, (_, i) => (i === 0 ? 1e15 : n - i));
  const ends = starts.map((s) => s + 1);
  assert.equal(bucketSortPairs(starts, ends), null);
  assert.equal(unionLength(starts, ends), n);
  const spread = Float64Array.from({ length: n }, (_, i) => 7 * i);
  assert.ok(bucketSortPairs(spread, spread.map((s) => s + 1)), "spread-out starts are bucket sorted");
});

test("escapeRegExp makes any function name match only itself", () => {
  const names = ['<script>alert(1)</script>&"q\'', "std::vector<int, std::allocator<int>>::push_back(int const&)", "a.b*c+d?e^f$g{h}i(j)k|l[m]n\\o/p", "x"];
  for (const n of names) {
    const { re } = compileQuery(exactQuery(n), true);
    assert.deepEqual(matchNames(names, re).ids, [names.indexOf(n)]);
    assert.equal(new RegExp(escapeRegExp(n)).test(n), true);
  }
});

test("compileQuery reports a bad regex instead of throwing, and honours case", () => {
  assert.deepEqual(compileQuery("", false), { re: null });
  assert.match(compileQuery("(", false).error, /Invalid regular expression|Unterminated/);
  const names = ["Main", "main", "domain"];
  assert.deepEqual(matchNames(names, compileQuery("^main", false).re).ids, [0, 1]);
  assert.deepEqual(matchNames(names, compileQuery("^main", true).re).ids, [1]);
});

test("bucketsFor picks each bucket holding a matched name once", () => {
  const search = [{ names: [0, 3] }, { names: [3, 6] }, { names: [6, 9] }];
  assert.equal(bucketIndex(search, 0), 0);
  assert.equal(bucketIndex(search, 5), 1);
  assert.equal(bucketIndex(search, 8), 2);
  assert.deepEqual(bucketsFor(search, [1, 2, 7, 8]), [search[0], search[2]]);
  assert.deepEqual(bucketsFor(search, []), []);
});

/** Sum of the counts of the stacks with at least one frame that the regex matches. */
function bruteMatched(stacks, re) {
  let s = 0;
  for (const [frames, count] of stacks) if (frames.some((f) => re.test(f))) s += count;
  return s;
}

test("matchedValue equals the counts of the stacks containing a match, nested matches once", () => {
  const r = rng(11);
  const fns = ["main", "run", "parse", "parse_expr", "eval", "malloc", "free", "std::vector<int>::push_back", "rec"];
  const stacks = [];
  for (let i = 0; i < 400; i++) {
    const depth = 1 + Math.floor(r() * 9);
    const frames = ["main"];
    for (let d = 0; d < depth; d++) frames.push(fns[Math.floor(r() * fns.length)]);
    stacks.push([frames, 1 + Math.floor(r() * 50)]);
  }
  stacks.push([["main", "rec", "rec", "rec", "rec"], 77]);
  const g = buildGraph(stacks, { bucketNames: 2 });
  const buckets = g.manifest.search.map((e) => decodeSearch(g.files.get(e.file)));
  for (const q of ["parse", "^rec$", "malloc|free", "push_back", "e", "^$", ".", "main"]) {
    const re = new RegExp(q);
    const { ids } = matchNames(g.names.names, re);
    const got = matchedValue(buckets, ids).value;
    // The root's label "all" is a name too: matching it matches everything.
    const want = re.test("all") ? g.manifest.total : bruteMatched(stacks, re);
    assert.equal(got, want, `query ${q}`);
  }
  // A single name's value is names.json's total for it.
  const rec = g.names.names.indexOf("rec");
  assert.equal(matchedValue(buckets, [rec]).value, g.names.total[rec]);
  // Clipped to a zoomed frame's extent.
  const t = g.table;
  const z = t.name.findIndex((n, i) => t.names[n] === "run" && t.depth[i] === 2);
  const lo = t.offset[z];
  const hi = lo + t.total[z];
  const res = matchedValue(buckets, matchNames(g.names.names, /parse/).ids, lo, hi);
  const under = stacks.filter(([f]) => f[1] === "run");
  assert.equal(hi - lo, under.reduce((s, [, c]) => s + c, 0));
  assert.equal(res.inRange, bruteMatched(under, /parse/));
  assert.equal(res.value, bruteMatched(stacks, /parse/));
});

test("a search matching every function of 20,000 gives the whole total, once", () => {
  const stacks = [];
  for (let i = 0; i < 20000; i++) stacks.push([["main", `mod${i % 50}::f${i}`, `leaf${i % 7}`], 1 + (i % 5)]);
  const g = buildGraph(stacks, { bucketNames: 4096, rootWidth: 3840 });
  const buckets = g.manifest.search.map((e) => decodeSearch(g.files.get(e.file)));
  const { ids } = matchNames(g.names.names, /f|leaf/);
  assert.equal(ids.length, 20000 + 7);
  // Every leaf is nested in its f: counted once. Its speed (100 ms on the large profile) is
  // measured in the browser by benches/page.mjs, not here.
  assert.equal(matchedValue(buckets, ids).value, g.manifest.total);
});

test("a table row's exact alternative is added to the search and taken out again", async () => {
  const { alternatives, toggleExact } = await import("../../themes/default/static/search.js");
  assert.deepEqual(alternatives(""), []);
  assert.deepEqual(alternatives("a|(b|c)|[|]|d\\|e"), ["a", "(b|c)", "[|]", "d\\|e"]);
  assert.deepEqual(alternatives("[\\]|]x|y"), ["[\\]|]x", "y"]);
  assert.equal(toggleExact("", "malloc"), "^malloc$");
  assert.equal(toggleExact("^malloc$", "free"), "^malloc$|^free$");
  assert.equal(toggleExact("^malloc$|^free$", "malloc"), "^free$");
  assert.equal(toggleExact("^free$", "free"), "");
  // A name with regex syntax is escaped, and finds itself again to be taken out.
  const t = "std::vector<int>::at(unsigned long) [clone .cold]|x";
  const q = toggleExact("db::.*", t);
  assert.equal(q, "db::.*|^std::vector<int>::at\\(unsigned long\\) \\[clone \\.cold\\]\\|x$");
  assert.equal(new RegExp(alternatives(q)[1]).test(t), true);
  assert.equal(toggleExact(q, t), "db::.*");
});
