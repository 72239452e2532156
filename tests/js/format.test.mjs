import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import {
  defaultState, describeFrame, formatBytes, formatDuration, formatFragment, formatPercent, formatValue, isCountUnit,
  groupDigits, nameHash, parseFragment,
} from "../../themes/default/static/format.js";

test("values are formatted for people per unit, as the shared vectors say", () => {
  // The vectors are reckoned independently (tests/data/units/make.py); the pages' formatter
  // (src/units.rs) is tested against the same file.
  const vectors = JSON.parse(fs.readFileSync(new URL("../data/units/vectors.json", import.meta.url), "utf8"));
  assert.ok(vectors.length >= 40);
  for (const { value, unit, decimals, text } of vectors) assert.equal(formatValue(value, unit, decimals), text, `${value} ${unit} (${decimals ?? 0} places)`);
  assert.equal(groupDigits(1234567), "1,234,567");
  assert.equal(formatBytes(3 * 1024 ** 3), "3.00 GiB");
  assert.equal(formatDuration(100e6), "100 ms");
});

test("percentages have two decimals and say when they are tiny", () => {
  assert.equal(formatPercent(1, 3), "33.33%");
  assert.equal(formatPercent(5, 5), "100.00%");
  assert.equal(formatPercent(1, 1e6), "<0.01%");
  assert.equal(formatPercent(0, 10), "0.00%");
  assert.equal(formatPercent(3, 0), "0%");
});

test("nameHash is FNV-1a 32 over UTF-8, as FORMAT.md's colours use", () => {
  assert.equal(nameHash(""), "811c9dc5");
  assert.equal(nameHash("a"), "e40c292c");
  assert.equal(nameHash("foobar"), "bf9cf968");
  // Over the UTF-8 bytes (C3 A9), not the UTF-16 unit or Latin-1 (E9: 6c0b6c44), and without
  // normalising (e + U+0301 is other bytes); values from Python's FNV-1a over the bytes.
  assert.equal(nameHash("\u00e9"), "1e9de8c1");
  assert.equal(nameHash("e\u0301"), "fa9bc71f");
});

test("fragment state round-trips, defaults are left out", () => {
  assert.equal(formatFragment(defaultState()), "");
  assert.deepEqual(parseFragment(""), defaultState());
  assert.deepEqual(parseFragment("#"), defaultState());
  const st = {
    graph: "alloc_space",
    zoom: { depth: 12, offset: 345678, total: 999, hash: "0badcafe" },
    zoomPath: null,
    query: `^std::vector<int>::push_back$|a&b=c #x%y+z "q' <script>`,
    caseSensitive: true,
    view: "both",
    icicle: true,
    sort: "name",
    sortReversed: true,
    layout: "after",
    measure: "abs",
    palette: "total",
    sandwich: `operator new(unsigned long)&f=x#y%z+ü <script>`,
  };
  const frag = formatFragment(st);
  assert.match(frag, /^#g=alloc_space&z=12\.345678\.999\.0badcafe&q=/);
  assert.match(frag, /&s=name&r=1&l=after&d=abs&p=total&x=sandwich&f=operator%20new\(unsigned%20long\)%26f%3Dx%23y%25z%2B%C3%BC%20%3Cscript%3E$/);
  assert.ok(!/[ <>"#&](?![a-z]=)/.test(frag.slice(1).replace(/&(?=[a-z]=)/g, "")), frag);
  // A comparison's layouts are read on a comparison's page; a plain graph's page has its own.
  assert.deepEqual(parseFragment(frag, true), st);
  assert.equal(parseFragment(frag).layout, "union");
  const left = { ...defaultState(), layout: "left" };
  assert.equal(formatFragment(left), "#l=left");
  assert.deepEqual(parseFragment("#l=left"), left);
  assert.equal(parseFragment("#l=left", true).layout, "union");
  const st2 = { ...defaultState(), query: "main" };
  assert.equal(formatFragment(st2), "#q=main");
  assert.deepEqual(parseFragment("#q=main"), st2);
  // A comparison's page sorts its table by the change unless the link says otherwise.
  assert.equal(defaultState(true).sort, "self_change");
  assert.deepEqual(parseFragment("", true), defaultState(true));
  assert.equal(formatFragment(defaultState(true), true), "");
  assert.equal(formatFragment({ ...defaultState(true), sort: "self" }, true), "#s=self");
  assert.equal(parseFragment("#s=self", true).sort, "self");
  assert.equal(formatFragment({ ...defaultState(), sort: "self_change" }), "#s=self_change");
});

test("a bad or hostile fragment is ignored key by key", () => {
  const st = parseFragment("#z=1.2&v=evil&q=%E0%A4%A&s=nope&c=1&m=icicle&x=1&q2=3");
  assert.equal(st.zoom, null);
  assert.equal(st.view, "graph");
  assert.equal(st.query, "");
  assert.equal(st.sort, "self");
  assert.equal(st.caseSensitive, true);
  assert.equal(st.icicle, true);
  assert.equal(parseFragment("#z=1.2.0.0badcafe").zoom, null, "a zero-width zoom is refused");
  assert.equal(parseFragment("#q=a+b").query, "a b", "+ is a space, as in forms");
  assert.equal(parseFragment("#p=self").palette, "self");
  assert.equal(parseFragment("#p=rainbow").palette, null, "an unknown palette is the default (the build's)");
  assert.equal(parseFragment("#p=lang").palette, "lang");
  assert.equal(parseFragment("#x=sandwich&f=malloc").sandwich, "malloc");
  assert.equal(parseFragment("#f=malloc").sandwich, null, "a function without x=sandwich is no sandwich");
  assert.equal(parseFragment("#x=sandwich").sandwich, null, "a sandwich of no function is none");
  assert.equal(parseFragment("#x=sandwich&f=%E0%A4%A").sandwich, null, "a malformed escape is ignored");
  assert.equal(parseFragment("#p=module").palette, "module");
});

test("describeFrame gives the numbers of the info line", () => {
  const f = { name: "main", depth: 1, offset: 0, total: 500, self: 25 };
  const d = describeFrame(f, { total: 1000, unit: "samples", zoomTotal: 0 });
  assert.equal(d.name, "main");
  assert.deepEqual(d.facts, ["total 500 samples (50.00% of all)", "self 25 samples (2.50%)", "depth 1"]);
  const z = describeFrame(f, { total: 1000, unit: "nanoseconds", zoomTotal: 800 });
  assert.equal(z.facts[0], "total 500 ns (50.00% of all, 62.50% of zoom)");
  // An ancestor of the zoomed frame (below its depth) contains the zoom: no share of it above 100%.
  const a = describeFrame({ ...f, total: 900 }, { total: 1000, unit: "nanoseconds", zoomTotal: 800, zoomDepth: f.depth + 1 });
  assert.equal(a.facts[0], "total 900 ns (90.00% of all, contains the zoom)");
});

test("counts are given once in a table's header; times and bytes in every cell", () => {
  for (const u of ["samples", "count", "events", "", "cycles"]) assert.equal(isCountUnit(u), true, u);
  for (const u of ["nanoseconds", "ms", "seconds", "bytes", "B"]) assert.equal(isCountUnit(u), false, u);
});
