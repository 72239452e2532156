// The tests' own colour reckoning (colors.mjs) against the independent Python one
// (tests/data/colors/colors.txt), so the canvas tests that use it expect the spec's colours.

import { test } from "node:test";
import assert from "node:assert/strict";
import { dimmed, faded, hotColor, langColor, matchColor, moduleColor, reckonedColors } from "./colors.mjs";

test("hotColor gives every `hot` colour of tests/data/colors/colors.txt", () => {
  const hot = reckonedColors().filter(([p]) => p === "hot");
  assert.ok(hot.length >= 6);
  for (const [, name, want] of hot) assert.equal(hotColor(name), want, JSON.stringify(name));
  // `lang` and `module` give a name with no kind suffix, or a module, its `hot` colour.
  for (const [p, name, want] of reckonedColors()) if (p === "module" && name === "main") assert.equal(hotColor(name), want);
});

test("the dimming and fading rules, worked by hand", () => {
  // main is 0xe90730: (233 + 648) / 4 = 220.25, (7 + 648) / 4 = 163.75, (48 + 648) / 4 = 174.
  assert.equal(dimmed(0xe90730), 0xdca4ae);
  assert.equal(dimmed(0x000000), 0xa2a2a2);
  assert.equal(dimmed(0xffffff), 0xe2e2e2); // 255/4 + 162 = 225.75
  assert.equal(dimmed(0x020202), 0xa3a3a3); // 162.5 rounds up
  // 40% of 0xe90730 over white: 0.4·233 + 153 = 246.2, 0.4·7 + 153 = 155.8, 0.4·48 + 153 = 172.2.
  assert.equal(faded(0xe90730, 0xffffff), 0xf69cac);
  assert.equal(matchColor(), 0xe600e6);
});

test("moduleColor and langColor give every `module` and `lang` colour of colors.txt", () => {
  let n = 0;
  for (const [p, name, want] of reckonedColors()) {
    if (p === "module") assert.equal(moduleColor(name), want, `module ${JSON.stringify(name)}`);
    else if (p === "lang") assert.equal(langColor(name), want, `lang ${JSON.stringify(name)}`);
    else continue;
    n += 1;
  }
  assert.ok(n >= 40, `${n} colours`);
});
