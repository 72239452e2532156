import { test } from "node:test";
import assert from "node:assert/strict";
import { UrlState, carriedFragment, carryContext, historyStep, isStateFragment, sameZoom } from "../../themes/default/static/state.js";
import { defaultState, formatFragment, parseFragment } from "../../themes/default/static/format.js";

test("a fragment is the viewer's state or an in-page anchor", () => {
  for (const h of ["", "#", "#q=main", "#z=1.2.3.0badcafe&q=x", "#m=icicle", "#s=total&r=1", "#v=both", "#x=sandwich&f=malloc"]) assert.equal(isStateFragment(h), true, h);
  for (const h of ["#notes-1", "#fn-pool", "#notes-a=b", "#y=1", "#top"]) assert.equal(isStateFragment(h), false, h);
});

test("a zoom or a search is a history entry; typing amends it; other changes replace", () => {
  const a = defaultState();
  const z = { depth: 1, offset: 0, total: 5, hash: "0badcafe" };
  assert.equal(sameZoom(null, null), true);
  assert.equal(sameZoom(z, { ...z }), true);
  assert.equal(sameZoom(z, { ...z, total: 6 }), false);
  assert.equal(historyStep(a, { ...a, zoom: z }), "push");
  assert.equal(historyStep({ ...a, zoom: z }, a), "push");
  assert.equal(historyStep(a, { ...a, query: "m" }), "push");
  assert.equal(historyStep({ ...a, query: "m" }, { ...a, query: "ma" }, true), "replace");
  assert.equal(historyStep(a, { ...a, caseSensitive: true }), "push");
  assert.equal(historyStep(a, { ...a, sandwich: "malloc" }), "push", "opening a sandwich");
  assert.equal(historyStep({ ...a, sandwich: "malloc" }, { ...a, sandwich: "free" }), "push", "another function's");
  assert.equal(historyStep({ ...a, sandwich: "malloc" }, a), "push", "leaving it");
  for (const k of [{ view: "both" }, { icicle: true }, { sort: "name" }, { sortReversed: true }, { measure: "abs" }, { palette: "self" }]) {
    assert.equal(historyStep(a, { ...a, ...k }), "replace", JSON.stringify(k));
  }
});

test("UrlState pushes a zoom and a search, replaces the rest, and ignores in-page anchors", () => {
  const loc = { hash: "#v=both", pathname: "/p/run/", search: "" };
  const calls = [];
  const hist = {
    state: null,
    pushState: (_, __, u) => calls.push(["push", u]) && (loc.hash = u.startsWith("#") ? u : ""),
    replaceState: (_, __, u) => calls.push(["replace", u]) && (loc.hash = u.startsWith("#") ? u : ""),
  };
  const u = new UrlState(loc, hist);
  assert.equal(u.st.view, "both");
  u.st.query = "m";
  u.write();
  u.st.query = "ma";
  u.write(true);
  u.st.icicle = true;
  u.write();
  u.st.zoom = { depth: 1, offset: 0, total: 5, hash: "0badcafe" };
  u.write();
  assert.deepEqual(calls, [
    ["push", "#q=m&v=both"],
    ["replace", "#q=ma&v=both"],
    ["replace", "#q=ma&v=both&m=icicle"],
    ["push", "#z=1.0.5.0badcafe&q=ma&v=both&m=icicle"],
  ]);
  loc.hash = "#notes-1";
  assert.equal(u.read(), null);
  u.restore();
  assert.equal(loc.hash, "#z=1.0.5.0badcafe&q=ma&v=both&m=icicle");
  loc.hash = "#q=x";
  assert.equal(u.read().query, "x");
  assert.equal(new UrlState({ hash: "#notes-1", pathname: "/", search: "" }, hist).st.zoom, null);
});

test("a link to another run carries the graph, the search, its case, the colours and the sandwich, not the zoom or the view", () => {
  const st = { ...defaultState(), graph: "cpu", query: "db::query", caseSensitive: true, palette: "module", zoom: { depth: 3, offset: 10, total: 5, hash: "0badcafe" }, view: "table", sort: "total", icicle: true };
  assert.equal(carriedFragment(st), "#g=cpu&q=db::query&c=1&p=module");
  assert.equal(carriedFragment(defaultState()), "");
  assert.equal(carriedFragment({ ...defaultState(), sandwich: "malloc" }), "#x=sandwich&f=malloc");
  // The links keep their own page and take the fragment; again and again.
  const a = { dataset: {}, attrs: { href: "../b/#q=old" }, getAttribute(k) { return this.attrs[k]; }, setAttribute(k, v) { this.attrs[k] = v; } };
  carryContext([a], st);
  assert.equal(a.attrs.href, "../b/#g=cpu&q=db::query&c=1&p=module");
  carryContext([a], defaultState());
  assert.equal(a.attrs.href, "../b/");
});

test("the zoom goes along where its offsets hold: from a run into its comparison's own layout, and back from that layout", () => {
  const zoom = { depth: 3, offset: 10, total: 5, hash: "0badcafe" };
  const run = { ...defaultState(), query: "malloc", zoom };
  // From a run page to its comparison with an earlier run: the comparison in this run's widths.
  assert.equal(carriedFragment(run, { to: "after" }), "#z=3.10.5.0badcafe&q=malloc&l=after");
  assert.equal(carriedFragment({ ...run, zoom: null }, { to: "after" }), "#q=malloc", "no zoom, no layout forced");
  // From a comparison to one of its runs: only when it shows that run's widths.
  const cmp = { ...run, layout: "before" };
  assert.equal(carriedFragment(cmp, { from: "before" }), "#z=3.10.5.0badcafe&q=malloc");
  assert.equal(carriedFragment(cmp, { from: "after" }), "#q=malloc");
  assert.equal(carriedFragment({ ...run, layout: "union" }, { from: "after" }), "#q=malloc", "the union's offsets are no run's");
  // Links say which, by their data attributes.
  const link = (data) => ({ dataset: { ...data }, attrs: { href: "../c/" }, getAttribute(k) { return this.attrs[k]; }, setAttribute(k, v) { this.attrs[k] = v; } });
  const [to, from, plain] = [link({ zoomTo: "after" }), link({ zoomFrom: "before" }), link({})];
  carryContext([to, from, plain], cmp);
  assert.deepEqual([to.attrs.href, from.attrs.href, plain.attrs.href], ["../c/#z=3.10.5.0badcafe&q=malloc&l=after", "../c/#z=3.10.5.0badcafe&q=malloc", "../c/#q=malloc"]);
});

test("a link to another run carries the zoom by its frame's path, once the path is known, and the other page reads it", () => {
  const zoom = { depth: 3, offset: 10, total: 5, hash: "0badcafe" };
  const run = { ...defaultState(), query: "malloc", zoom };
  const path = ["0000abcd", "12345678", "0badcafe"];
  assert.equal(carriedFragment(run, { path }), "#zp=0000abcd.12345678.0badcafe&q=malloc");
  assert.equal(carriedFragment({ ...run, zoom: null }, { path }), "#q=malloc", "no zoom, no path");
  const link = (data) => ({ dataset: { ...data }, attrs: { href: "../r2/" }, getAttribute(k) { return this.attrs[k]; }, setAttribute(k, v) { this.attrs[k] = v; } });
  const [byPath, plain] = [link({ zoomPath: "" }), link({})];
  carryContext([byPath, plain], run, null);
  assert.deepEqual([byPath.attrs.href, plain.attrs.href], ["../r2/#q=malloc", "../r2/#q=malloc"], "the path not known yet: no zoom");
  carryContext([byPath, plain], run, path);
  assert.deepEqual([byPath.attrs.href, plain.attrs.href], ["../r2/#zp=0000abcd.12345678.0badcafe&q=malloc", "../r2/#q=malloc"]);
  // The page it opens: the path, not a zoom; a zoom by offsets wins over a path; a malformed
  // path is ignored, the rest of the link kept.
  assert.ok(isStateFragment("#zp=0000abcd"));
  const read = parseFragment("#zp=0000abcd.12345678.0badcafe&q=malloc");
  assert.deepEqual([read.zoom, read.zoomPath, read.query], [null, path, "malloc"]);
  assert.deepEqual(parseFragment("#z=3.10.5.0badcafe&zp=0000abcd").zoomPath, null);
  assert.deepEqual([parseFragment("#zp=0000abcd.xyz&q=a").zoomPath, parseFragment("#zp=0000abcd.xyz&q=a").query], [null, "a"]);
  assert.equal(formatFragment(read), "#zp=0000abcd.12345678.0badcafe&q=malloc", "it round-trips");
});
