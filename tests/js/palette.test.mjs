// The page's palettes (themes/default/static/palette.js) against the colours reckoned from
// docs/FORMAT.md by tests/data/colors/colors.py (colors.txt): the vectors the build's palettes
// (src/graph/color.rs) are tested against too, so a name has one colour on both sides.

import { test } from "node:test";
import assert from "node:assert/strict";
import { kindOf, moduleOf, nameColor } from "../../themes/default/static/palette.js";
import { reckonedColors } from "./colors.mjs";

test("every palette gives every colour of tests/data/colors/colors.txt", () => {
  const rows = reckonedColors();
  const count = {};
  for (const [palette, name, want] of rows) {
    const got = nameColor(name, palette);
    assert.equal(got, want, `${palette} ${JSON.stringify(name)}: #${got.toString(16)}, the spec gives #${want.toString(16)}`);
    count[palette] = (count[palette] || 0) + 1;
  }
  assert.deepEqual(Object.keys(count).sort(), ["blue", "hot", "lang", "module"]);
  assert.ok(count.lang >= 25 && count.module >= 15, JSON.stringify(count));
});

test("lang tells Java, C++, kernel and other code from the shape of the name", () => {
  const kinds = {
    "java/lang/String.hashCode": "java",
    "java.util.HashMap.get": "java",
    "Lfoo/Bar;.baz": "java",
    "Interpreter_[j]": "java",
    "std::vector<int>::push_back": "cpp",
    "foo::bar()": "cpp",
    "operator delete(void*)": "cpp",
    "do_syscall_64_[k]": "kernel",
    "std::mem::swap_[i]": "inlined",
    malloc: "other",
    "runtime.mallocgc": "other",
    "net/http.(*Client).Do": "other",
    "time.Time.Format": "other",
  };
  for (const [name, kind] of Object.entries(kinds)) assert.equal(kindOf(name), kind, name);
});

test("module: Go's ABI wrappers, closures and receivers stay in their package", () => {
  assert.equal(moduleOf("runtime.goexit.abi0"), "runtime");
  assert.equal(moduleOf("runtime.gcBgMarkWorker.func2"), "runtime");
  assert.equal(moduleOf("net/http.(*conn).serve.func1.2"), "net/http");
  assert.equal(moduleOf("main.main.func1.2"), "main"); // a closure inside a closure
  assert.equal(moduleOf("main.main.func3"), "main");
  assert.equal(moduleOf("std::vector<int>::push_back"), "std");
  assert.equal(moduleOf("::foo"), "::foo");
  assert.equal(nameColor("runtime.goexit.abi0", "module"), nameColor("runtime.mallocgc", "module"));
});
