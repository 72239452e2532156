// Mutation check of the page script's unit tests (issue 30): each mutant is one small change
// to a pure function of themes/default/static/ that a user would notice (a boundary, a
// decoding step); the node tests (tests/js) must fail on each. Runs on a copy of the two
// folders in a temporary directory, never on the tree itself.
//
//   node scripts/mutants.mjs        prints each mutant, killed or SURVIVED, and the score;
//                                   exits 1 when one survives or does not apply.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** [file in themes/default/static, text, replacement, what it breaks]. */
const MUTANTS = [
  ["format.js", "if (p > 0 && p < 0.01) return", "if (p > 0 && p <= 0.01) return", "formatPercent: exactly 0.01%"],
  ["format.js", "if (p > 0 && p < 0.01) return", "if (p >= 0 && p < 0.01) return", "formatPercent: 0 shown as <0.01%"],
  ["format.js", "if (!(whole > 0)) return", "if (!(whole >= 0)) return", "formatPercent: a whole of 0"],
  ["diff.js", 'return after === 0 ? "±0%" : "new";', 'return "new";', "formatRelative(0, 0)"],
  ["diff.js", "Math.abs(r) >= 10 ?", "Math.abs(r) > 10 ?", "formatRelative: exactly 10%"],
  ["layout.js", "c.max_total < minValue", "c.max_total <= minValue", "neededChunks: exactly half a pixel"],
  ["layout.js", "c.offset[0] >= view.x1", "c.offset[0] > view.x1", "neededChunks: a chunk starting at the view's end"],
  ["layout.js", "c.offset[1] <= view.x0", "c.offset[1] < view.x0", "neededChunks: a chunk ending at the view's start"],
  ["layout.js", "v < c.offset[1] && c.max_total > 0", "v <= c.offset[1] && c.max_total > 0", "chunksAt: a chunk's end value"],
  ["layout.js", "depth < c.depth[1] && c.offset[0]", "depth <= c.depth[1] && c.offset[0]", "chunksAt: a chunk's end depth"],
  ["layout.js", "c.offset[0] <= v && v < c.offset[1]", "c.offset[0] < v && v < c.offset[1]", "chunksAt: a chunk's first value"],
  ["search.js", "n < search[last].names[1]", "n <= search[last].names[1]", "bucketsFor: a name at a bucket's bound"],
  ["layout.js", "c.total[r] >= minTotal", "c.total[r] > minTotal", "frameAt: exactly minTotal"],
  ["layout.js", "c.offset[r] <= v && c.total[r] > 0 && c.total[r] >= minTotal", "c.offset[r] < v && c.total[r] > 0 && c.total[r] >= minTotal", "frameAt: a frame's start"],
  ["fetch.js", "else if (!first) offset[r] += offset[r - 1] + total[r - 1];", "else if (!first) offset[r] = offset[r - 1] + total[r - 1];", "decodeChunk: coded gaps"],
  ["fetch.js", "iv[2 * j] = end + gap[j];", "iv[2 * j] = gap[j];", "decodeSearch: coded gaps"],
  ["fetch.js", "addUp(parent);", "", "decodeChunk: coded parent steps"],
  ["fetch.js", 'const offset = offsets[layouts ? Math.max(0, ["union", "after", "before"].indexOf(widths.layout)) : 0];', "const offset = offsets[0];", "decodeChunk: a layout's own offsets"],
  ["sandwich.js", "else if (p >= 0 && p < r) offset[r] += offset[p];", "", "decodeSandwich: a first child's offset"],
  ["unpack.js", "bytes[0] === 0x1f && bytes[1] === 0x8b", "bytes[0] === 0x1f", "isPacked: both bytes of the gzip magic"],
  ["palette.js", "/\\.func[0-9]+(\\.[0-9]+)*$/", "/\\.func[0-9]+$/", "moduleOf: a Go closure inside a closure (func1.2)"],
  ["palette.js", "/^operator[^A-Za-z0-9_$]/", "/^operator/", "kindOf: a C++ operator against a name that starts with operator"],
  ["palette.js", 'name.includes("::") || OPERATOR.test(name)', 'name.includes("::")', "kindOf: a C++ operator without a namespace"],
  ["diff.js", "beforeIn += zoomed.before;", "beforeIn += vb;", "DiffMatch: the zoomed frame's before share"],
  ["diff.js", "afterIn += zoomed.after;", "afterIn += va;", "DiffMatch: the zoomed frame's after share"],
];

const work = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-mutants-"));
const copy = (rel) => fs.cpSync(path.join(ROOT, rel), path.join(work, rel), { recursive: true });
copy("themes/default/static");
copy("tests/js");
copy("tests/data/colors");
copy("tests/data/units");
const run = () => {
  try {
    execFileSync(process.execPath, ["--test"], { cwd: path.join(work, "tests/js"), stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
let killed = 0;
let bad = 0;
try {
  if (!run()) throw new Error("the tests fail on the unchanged code");
  for (const [file, from, to, what] of MUTANTS) {
    const p = path.join(work, "themes/default/static", file);
    const original = fs.readFileSync(p, "utf8");
    if (!original.includes(from)) {
      console.log(`NOT APPLIED  ${file}: ${what} (text not found)`);
      bad += 1;
      continue;
    }
    fs.writeFileSync(p, original.replace(from, to));
    const passed = run();
    fs.writeFileSync(p, original);
    console.log(`${passed ? "SURVIVED    " : "killed      "} ${file}: ${what}`);
    if (passed) bad += 1;
    else killed += 1;
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`${killed} of ${MUTANTS.length} mutants killed`);
process.exit(bad ? 1 : 0);
