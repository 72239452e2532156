// Mutation check of the page script's unit tests (issue 51). The mutants are not a list
// written by hand: they are made by rule from the source of every module of
// themes/default/static/ that a file of tests/js names, and the node tests must fail on each.
//
//   node scripts/mutants.mjs           the sample: the mutants whose id, read as a hex number,
//                                      is 0 modulo SAMPLE (below), about 1 in 20; 1 to 2 minutes
//   node scripts/mutants.mjs --all     every mutant (about 3,600: most of an hour or more)
//   node scripts/mutants.mjs --list    prints the sample's mutants (with --all: all), runs none
//   node scripts/mutants.mjs --id=ID   only the named mutants (the option repeats)
//   --jobs=N     test runs at a time (default 2), each on its own copy of the files
//   --timeout=S  seconds each test file of a mutant's run may take (default: 15 s more than 8
//                times what the slowest of them took on the unchanged code, at most 60 s)
//
// The rules, applied to the tokens of the code (a small lexer skips comments, string, template
// and regular expression literals, and `import ... from` statements), one change a mutant:
//   boundary     `<` ↔ `<=`, `>` ↔ `>=`
//   equality     `===` ↔ `!==`, `==` ↔ `!=`
//   logical      `&&` ↔ `||`
//   arithmetic   binary `+` → `-` and `-` → `+` (not next to a string or template literal)
//   compound     `+=` → `=`, `-=` → `=`
//   constant     an integer literal n → n + 1 (decimal or hex)
//   minmax       `Math.max` ↔ `Math.min`
//   statement    a line that is one whole statement, a call or an assignment (or `x++`), after
//                `;`, `{` or `}`, removed
// The list is the same for the same source, ordered by file, then position. A mutant's id is 8
// hex digits of a SHA-1 of its file, rule, change and the text of its line (and how many times
// that key came before in the file), so it stays put when other lines change.
//
// First the unchanged code: each test file alone, with V8's coverage (NODE_V8_COVERAGE); all
// must pass. A mutant runs the test files that call the function it is in (its innermost
// function, or the module's top level), with `node --test --test-reporter=tap`, in a copy of
// themes/default/static, tests/js, tests/data/colors and tests/data/units in a temporary
// directory (one per job), never on the tree itself. Outcomes:
//   killed       the runner reported a failing test (`not ok`, other than for a time limit);
//                the run stops there
//   SURVIVED     every test passed
//   TIMEOUT      a test file took longer than its limit and the runner stopped it (node's
//                --test-timeout, so that the other files still run and may fail), and no test
//                failed; not a kill
//   invalid      the mutated module does not parse (checked before, in one child process); not run
//   not called   no test file calls its function (code that only runs in a browser); not run
//   equivalent   listed with the reason in scripts/mutants-equivalent.txt (`ID reason` a line),
//                after a look at it: it cannot change what the page does; not run
//   ERROR        the runner failed without reporting a failing test
// Prints each mutant (id, file:line:column, rule, change, outcome; the old and new line of one
// that survives) and the score; the "not called" ones only with --all or --id. Exits 1 when a
// run mutant survives, times out or errs, or when the tests fail on the unchanged code.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const STATIC = "themes/default/static";
const TESTS = "tests/js";
const COPIED = [STATIC, TESTS, "tests/data/colors", "tests/data/units"];
const EQUIVALENT_FILE = path.join(ROOT, "scripts/mutants-equivalent.txt");
/** The default run takes the mutants whose id is 0 modulo this. */
const SAMPLE = 20;

// ---------------------------------------------------------------------------------------------
// The lexer: tokens of code, with the literals and comments that must not be mutated as one
// token each (comments dropped).

const PUNCTUATORS = [
  ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
  "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=",
  "&=", "|=", "^=", "**", "<<", ">>",
  "{", "}", "(", ")", "[", "]", ";", ",", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!",
  "~", "?", ":", "=", ".", "@", "#",
];
/** Words after which an expression starts (so `/` begins a regular expression, `-` is unary). */
const EXPRESSION_KEYWORDS = new Set([
  "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
  "else", "yield", "await", "const", "let", "var", "if", "while", "for", "switch", "export",
  "default", "extends",
]);
const ID_START = /[A-Za-z_$\u0080-\uffff]/;
const ID_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const NUMBER = /(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?/y;

/** Whether a token ends an operand (so what follows is a binary operator or a division). */
function endsOperand(t) {
  if (!t) return false;
  if (t.type === "id") return !EXPRESSION_KEYWORDS.has(t.value);
  if (t.type === "punct") return t.value === ")" || t.value === "]" || t.value === "}";
  return true;
}

/**
 * Tokens of `src` from `i`: { type: id|num|str|tmpl|regex|punct, value, start, end }. With
 * `untilBrace`, stops at the `}` that closes a template's `${` (returns its index as `end`).
 */
function lex(src, i = 0, untilBrace = false) {
  const tokens = [];
  let depth = 0;
  const fail = (what) => {
    throw new Error(`lexer: ${what} at offset ${i}`);
  };
  while (i < src.length) {
    const c = src[i];
    if (c === "\n" || c === " " || c === "\t" || c === "\r") {
      i += 1;
    } else if (src.startsWith("//", i)) {
      const e = src.indexOf("\n", i);
      i = e < 0 ? src.length : e;
    } else if (src.startsWith("/*", i)) {
      const e = src.indexOf("*/", i + 2);
      if (e < 0) fail("unterminated comment");
      i = e + 2;
    } else if (c === '"' || c === "'") {
      const start = i;
      i += 1;
      while (i < src.length && src[i] !== c) {
        if (src[i] === "\n") fail("newline in a string");
        i += src[i] === "\\" ? 2 : 1;
      }
      if (i >= src.length) fail("unterminated string");
      i += 1;
      tokens.push({ type: "str", value: src.slice(start, i), start, end: i });
    } else if (c === "`") {
      const start = i;
      i += 1;
      while (i < src.length && src[i] !== "`") {
        if (src[i] === "\\") i += 2;
        else if (src.startsWith("${", i)) i = lex(src, i + 2, true).end + 1;
        else i += 1;
      }
      if (i >= src.length) fail("unterminated template");
      i += 1;
      tokens.push({ type: "tmpl", value: src.slice(start, i), start, end: i });
    } else if (c === "/" && !endsOperand(tokens[tokens.length - 1])) {
      const start = i;
      i += 1;
      let inClass = false;
      while (i < src.length && (inClass || src[i] !== "/")) {
        if (src[i] === "\n") fail("newline in a regular expression");
        if (src[i] === "\\") i += 1;
        else if (src[i] === "[") inClass = true;
        else if (src[i] === "]") inClass = false;
        i += 1;
      }
      i += 1;
      while (i < src.length && ID_PART.test(src[i])) i += 1;
      tokens.push({ type: "regex", value: src.slice(start, i), start, end: i });
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(src);
      tokens.push({ type: "num", value: m[0], start: i, end: i + m[0].length });
      i += m[0].length;
    } else if (ID_START.test(c)) {
      const start = i;
      while (i < src.length && ID_PART.test(src[i])) i += 1;
      tokens.push({ type: "id", value: src.slice(start, i), start, end: i });
    } else {
      const p = PUNCTUATORS.find((q) => src.startsWith(q, i));
      if (!p) fail(`unexpected ${JSON.stringify(c)}`);
      if (untilBrace && p === "}" && depth === 0) return { tokens, end: i };
      if (p === "{" || p === "${") depth += 1;
      if (p === "}") depth -= 1;
      tokens.push({ type: "punct", value: p, start: i, end: i + p.length });
      i += p.length;
    }
  }
  if (untilBrace) fail("unterminated template expression");
  return { tokens, end: i };
}

// ---------------------------------------------------------------------------------------------
// The rules.

const SWAP = {
  boundary: { "<": "<=", "<=": "<", ">": ">=", ">=": ">" },
  equality: { "===": "!==", "!==": "===", "==": "!=", "!=": "==" },
  logical: { "&&": "||", "||": "&&" },
  compound: { "+=": "=", "-=": "=" },
};
const ASSIGNMENTS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??="]);
const NOT_A_STATEMENT_START = new Set([
  "const", "let", "var", "return", "if", "else", "for", "while", "do", "switch", "case", "default",
  "break", "continue", "throw", "function", "class", "import", "export", "try", "catch", "finally",
  "async", "await", "yield", "new", "delete", "typeof", "void",
]);

function isLiteralText(t) {
  return t && (t.type === "str" || t.type === "tmpl");
}

/** The mutants of one file: { file, rule, start, end, from, to }, in the order of position. */
function mutantsOf(file, src) {
  const { tokens } = lex(src);
  const out = [];
  const add = (rule, start, end, to) => out.push({ file, rule, start, end, from: src.slice(start, end), to });
  // `import ... from "..."` and `export ... from "..."`: nothing to mutate.
  const skip = new Set();
  for (let k = 0; k < tokens.length; k += 1) {
    const t = tokens[k];
    if (t.type === "id" && t.value === "import" && tokens[k + 1]?.value !== "(") {
      let j = k;
      while (j < tokens.length && tokens[j].value !== ";") skip.add(j++);
      skip.add(j);
    }
  }
  for (let k = 0; k < tokens.length; k += 1) {
    if (skip.has(k)) continue;
    const t = tokens[k];
    const prev = tokens[k - 1];
    const next = tokens[k + 1];
    if (t.type === "punct") {
      for (const rule of ["boundary", "equality", "logical", "compound"]) {
        const to = SWAP[rule][t.value];
        if (to !== undefined) add(rule, t.start, t.end, to);
      }
      if ((t.value === "+" || t.value === "-") && endsOperand(prev) && !isLiteralText(prev) && !isLiteralText(next)) {
        add("arithmetic", t.start, t.end, t.value === "+" ? "-" : "+");
      }
    } else if (t.type === "num") {
      if (/^[0-9]+$/.test(t.value)) add("constant", t.start, t.end, String(BigInt(t.value) + 1n));
      else if (/^0[xX][0-9a-fA-F]+$/.test(t.value)) {
        const hex = (BigInt(t.value) + 1n).toString(16);
        add("constant", t.start, t.end, `${t.value.slice(0, 2)}${/[A-F]/.test(t.value) ? hex.toUpperCase() : hex}`);
      }
    } else if (t.type === "id" && (t.value === "max" || t.value === "min") && prev?.value === "." && tokens[k - 2]?.value === "Math") {
      add("minmax", t.start, t.end, t.value === "max" ? "min" : "max");
    }
  }
  // Whole-line statements.
  const lineOf = lineIndex(src);
  let k = 0;
  while (k < tokens.length) {
    const line = lineOf(tokens[k].start);
    let j = k;
    while (j + 1 < tokens.length && lineOf(tokens[j + 1].start) === line) j += 1;
    if (isStatementLine(tokens, k, j, skip)) add("statement", tokens[k].start, tokens[j].end, "");
    k = j + 1;
  }
  out.sort((a, b) => a.start - b.start || a.end - b.end || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
  return out;
}

/** Whether tokens[first..last] (one line's) are one whole call or assignment statement. */
function isStatementLine(tokens, first, last, skip) {
  const head = tokens[first];
  const before = tokens[first - 1];
  if (skip.has(first) || tokens[last].value !== ";" || last === first) return false;
  if (before && !(before.type === "punct" && (before.value === ";" || before.value === "{" || before.value === "}"))) return false;
  if (head.type === "id" ? NOT_A_STATEMENT_START.has(head.value) : !(head.value === "++" || head.value === "--")) return false;
  let depth = 0;
  let assigns = false;
  for (let k = first; k < last; k += 1) {
    const v = tokens[k].type === "punct" ? tokens[k].value : "";
    if (v === "(" || v === "[" || v === "{") depth += 1;
    else if (v === ")" || v === "]" || v === "}") depth -= 1;
    if (depth < 0) return false;
    if (depth === 0 && (ASSIGNMENTS.has(v) || v === "++" || v === "--" || v === ";" || v === ",")) assigns ||= v !== ";" && v !== ",";
    if (depth === 0 && v === ";") return false;
  }
  if (depth !== 0) return false;
  return assigns || tokens[last - 1].value === ")";
}

function lineIndex(src) {
  const starts = [0];
  for (let i = 0; i < src.length; i += 1) if (src[i] === "\n") starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
}

/** Line (1-based), column, the line's text and a stable id for each mutant of one file. */
function describe(file, src, mutants) {
  const lineOf = lineIndex(src);
  const lines = src.split("\n");
  const seen = new Map();
  for (const m of mutants) {
    const l = lineOf(m.start);
    const text = lines[l];
    const lineStart = src.lastIndexOf("\n", m.start - 1) + 1;
    m.line = l + 1;
    m.column = m.start - lineStart + 1;
    m.text = text.trim();
    const key = [file, m.rule, m.from, m.to, m.text, m.column - (text.length - text.trimStart().length)].join("\0");
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    m.id = crypto.createHash("sha1").update(`${key}\0${n}`).digest("hex").slice(0, 8);
    m.mutated = src.slice(0, m.start) + m.to + src.slice(m.end);
    m.now = (text.slice(0, m.column - 1) + m.to + text.slice(m.column - 1 + m.end - m.start)).trim();
  }
  return mutants;
}

// ---------------------------------------------------------------------------------------------
// What to mutate: the modules of STATIC that the files of TESTS name.

function plan() {
  const testDir = path.join(ROOT, TESTS);
  const named = new Set();
  for (const f of fs.readdirSync(testDir).filter((f) => f.endsWith(".mjs"))) {
    for (const m of fs.readFileSync(path.join(testDir, f), "utf8").matchAll(/themes\/default\/static\/([A-Za-z0-9_-]+\.js)\b/g)) named.add(m[1]);
  }
  const modules = [...named].sort();
  const testFiles = fs.readdirSync(testDir).filter((f) => f.endsWith(".test.mjs")).sort();
  const mutants = [];
  for (const m of modules) {
    const src = fs.readFileSync(path.join(ROOT, STATIC, m), "utf8");
    mutants.push(...describe(m, src, mutantsOf(m, src)));
  }
  const ids = new Set();
  for (const m of mutants) {
    if (ids.has(m.id)) throw new Error(`two mutants with the id ${m.id}`);
    ids.add(m.id);
  }
  return { modules, testFiles, mutants };
}

/**
 * The functions of each module that one test file calls, from V8's coverage (NODE_V8_COVERAGE)
 * of its run in `dir`: module → [[start, end, count]] of every function (the module's top
 * level is one).
 */
function coverageOf(covDir, dir, modules) {
  const out = new Map(modules.map((m) => [m, []]));
  const byUrl = new Map(modules.map((m) => [pathToFileURL(path.join(dir, STATIC, m)).href, m]));
  for (const f of fs.readdirSync(covDir)) {
    for (const script of JSON.parse(fs.readFileSync(path.join(covDir, f), "utf8")).result) {
      const m = byUrl.get(script.url);
      if (m) for (const fn of script.functions) out.get(m).push([fn.ranges[0].startOffset, fn.ranges[0].endOffset, fn.ranges[0].count]);
    }
  }
  return out;
}

/** Whether the innermost function around `offset` was called (its count is not 0). */
function called(functions, offset) {
  let best = null;
  for (const f of functions) if (f[0] <= offset && offset < f[1] && (!best || f[1] - f[0] < best[1] - best[0] || (f[1] - f[0] === best[1] - best[0] && f[2] > best[2]))) best = f;
  return best !== null && best[2] > 0;
}

function readEquivalent() {
  const out = new Map();
  if (!fs.existsSync(EQUIVALENT_FILE)) return out;
  for (const raw of fs.readFileSync(EQUIVALENT_FILE, "utf8").split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^([0-9a-f]{8})\s+(.*)$/.exec(line);
    if (!m) throw new Error(`${EQUIVALENT_FILE}: not "ID reason": ${line}`);
    out.set(m[1], m[2]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing (in a child with --experimental-vm-modules: SourceTextModule parses a module without
// linking or running it) and running.

async function syntaxCheck() {
  const vm = await import("node:vm");
  const input = JSON.parse(fs.readFileSync(0, "utf8"));
  const result = input.map((src) => {
    try {
      new vm.SourceTextModule(src);
      return null;
    } catch (e) {
      return String(e.message ?? e);
    }
  });
  process.stdout.write(JSON.stringify(result));
}

function parseErrors(sources) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--experimental-vm-modules", "--no-warnings", fileURLToPath(import.meta.url), "--syntax-check"], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`syntax check exited ${code}`))));
    child.stdin.end(JSON.stringify(sources));
  });
}

/** Failure types of node's test runner that are no failed test: a time limit, and their echoes. */
const NOT_A_FAILURE = new Set(["testTimeoutFailure", "cancelledByParent", "subtestsFailed"]);

/**
 * Runs the test files in `dir` with node's test runner, each file stopped after `fileMs` (the
 * runner's --test-timeout, so that a file that hangs does not hide another's failure), the whole
 * run after the sum of those plus 15 s. Resolves to { outcome, ms, detail }: killed at the first
 * failing test reported (`not ok` of a failure type other than a time limit), else timeout when
 * a file or the run took too long, else survived (exit 0) or error.
 */
const running = new Set(); // process groups of the test runs under way, stopped on Ctrl-C
const tempDirs = [];
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const pid of running) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {}
    }
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}

function runTests(dir, files, fileMs, env = process.env) {
  return new Promise((resolve) => {
    const began = Date.now();
    const child = spawn(process.execPath, ["--test", "--test-concurrency=1", `--test-timeout=${fileMs}`, "--test-reporter=tap", ...files], {
      cwd: path.join(dir, TESTS),
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child.pid);
    let outcome = null;
    let detail = "";
    let pending = "";
    let tail = "";
    let failing = null; // the test of the last `not ok`, until its failure type is read
    let timedOut = null;
    const stop = (o, d) => {
      if (outcome) return;
      outcome = o;
      detail = d;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    };
    const timer = setTimeout(() => stop("timeout", `the run took over ${Math.round((fileMs * files.length + 15000) / 1000)} s`), fileMs * files.length + 15000);
    child.stdout.on("data", (d) => {
      pending += d;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines) {
        const m = /^\s*not ok \d+ - (.*)$/.exec(line);
        if (m) failing = /#\s*(TODO|SKIP)\b/i.test(line) ? null : m[1].replace(/\s+#.*$/, "");
        const t = /^\s*failureType: '?(\w+)'?/.exec(line);
        if (t && failing !== null) {
          if (!NOT_A_FAILURE.has(t[1])) stop("killed", `${failing}: ${t[1]}`);
          else if (t[1] === "testTimeoutFailure") timedOut ??= `${path.basename(failing)} took over ${Math.round(fileMs / 1000)} s`;
          failing = null;
        }
      }
    });
    child.stderr.on("data", (d) => (tail = (tail + d).slice(-400)));
    child.on("close", (code) => {
      running.delete(child.pid);
      clearTimeout(timer);
      if (!outcome) {
        if (timedOut) outcome = "timeout";
        else if (code === 0) outcome = "survived";
        else outcome = "error";
        detail = timedOut ?? (code === 0 ? "" : `exit ${code}: ${tail.trim().split("\n").pop() ?? ""}`);
      }
      resolve({ outcome, ms: Date.now() - began, detail });
    });
  });
}

/** Takes the items of `queue` with one worker per dir, `work(dir, item)` each. */
async function pool(dirs, items, work) {
  const queue = [...items];
  await Promise.all(dirs.map(async (dir) => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(dir, item);
  }));
}

// ---------------------------------------------------------------------------------------------

const LABEL = { killed: "killed", survived: "SURVIVED", timeout: "TIMEOUT", invalid: "invalid", error: "ERROR", equivalent: "equivalent", uncalled: "not called" };

function change(m) {
  return m.rule === "statement" ? `removed \`${m.from}\`` : `\`${m.from}\` → \`${m.to}\``;
}

function show(m, outcome, extra) {
  let s = `${m.id}  ${`${m.file}:${m.line}:${m.column}`.padEnd(18)} ${m.rule.padEnd(10)} ${change(m).padEnd(28)} ${LABEL[outcome]}`;
  if (extra) s += `  (${extra})`;
  if (outcome === "survived" || outcome === "timeout" || outcome === "error") s += `\n          was: ${m.text}\n          now: ${m.now}`;
  return s;
}

async function main(argv) {
  const all = argv.includes("--all");
  const list = argv.includes("--list");
  const only = argv.filter((a) => a.startsWith("--id=")).map((a) => a.slice(5));
  const jobs = Number(argv.find((a) => a.startsWith("--jobs="))?.slice(7) ?? 2);
  const fixedTimeout = argv.find((a) => a.startsWith("--timeout="));
  const timeoutMs = fixedTimeout ? 1000 * Number(fixedTimeout.slice(10)) : 60000;
  const unknown = argv.filter((a) => !/^--(all|list|id=[0-9a-f]{8}|jobs=[1-9][0-9]*|timeout=[1-9][0-9]*)$/.test(a));
  if (unknown.length) throw new Error(`unknown arguments: ${unknown.join(" ")} (see the top of scripts/mutants.mjs)`);

  const { modules, testFiles, mutants } = plan();
  const equivalent = readEquivalent();
  const known = new Set(mutants.map((m) => m.id));
  for (const id of only) if (!known.has(id)) throw new Error(`no mutant ${id}`);
  const chosen = only.length ? mutants.filter((m) => only.includes(m.id)) : all ? mutants : mutants.filter((m) => parseInt(m.id, 16) % SAMPLE === 0);
  console.log(`${mutants.length} mutants of ${modules.length} modules (${modules.join(", ")}); ${only.length ? "named" : all ? "all" : `the sample (id mod ${SAMPLE} = 0)`}: ${chosen.length}`);
  for (const id of equivalent.keys()) if (!known.has(id)) console.log(`note: ${id} in scripts/mutants-equivalent.txt is no mutant now`);
  if (list) {
    for (const m of chosen) console.log(`${m.id}  ${`${m.file}:${m.line}:${m.column}`.padEnd(18)} ${m.rule.padEnd(10)} ${change(m)}${equivalent.has(m.id) ? `  (equivalent: ${equivalent.get(m.id)})` : ""}${only.length ? `\n          was: ${m.text}\n          now: ${m.now}` : ""}`);
    return 0;
  }

  const began = Date.now();
  const workers = [];
  try {
    for (let w = 0; w < jobs; w += 1) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-mutants-"));
      workers.push(dir);
      tempDirs.push(dir);
      for (const rel of COPIED) fs.cpSync(path.join(ROOT, rel), path.join(dir, rel), { recursive: true });
    }
    // The unchanged code, each test file alone, with V8's coverage: it must pass, and it tells
    // which test files call the function around each mutant.
    const coverage = new Map();
    const baseMs = new Map();
    await pool(workers, testFiles, async (dir, f) => {
      const covDir = path.join(dir, "coverage", f);
      fs.mkdirSync(covDir, { recursive: true });
      const r = await runTests(dir, [f], timeoutMs, { ...process.env, NODE_V8_COVERAGE: covDir });
      if (r.outcome !== "survived") throw new Error(`${TESTS}/${f} fails on the unchanged code (${r.outcome}: ${r.detail})`);
      coverage.set(f, coverageOf(covDir, dir, modules));
      baseMs.set(f, r.ms);
    });
    // Each test file of a mutant's run may take 15 s more than 8 times what the slowest of them
    // took on the unchanged code (with coverage), at most 60 s; or --timeout. The test command
    // runs this beside a compilation or the Rust tests, whose load changes from one minute to
    // the next: at 5 s more than 4 times (10 s for elided.test.mjs), a mutant that a quiet
    // machine kills in 3.5 s timed out. Only a mutant that hangs waits for the limit.
    const limit = (tests) => (fixedTimeout ? timeoutMs : Math.min(60000, 15000 + 8 * Math.max(...tests.map((f) => baseMs.get(f)))));
    const callers = (m) => testFiles.filter((f) => called(coverage.get(f).get(m.file), m.start));
    console.log(`the unchanged code passes the ${testFiles.length} test files (${((Date.now() - began) / 1000).toFixed(0)} s, with coverage)`);

    const toRun = chosen.filter((m) => !equivalent.has(m.id));
    const errors = await parseErrors(toRun.map((m) => m.mutated));
    const invalid = new Map(toRun.map((m, i) => [m, errors[i]]).filter(([, e]) => e !== null));

    const results = new Array(chosen.length);
    let printed = 0;
    await pool(workers, chosen.map((m, i) => [m, i]), async (dir, [m, i]) => {
      let r;
      const tests = callers(m);
      if (equivalent.has(m.id)) r = { outcome: "equivalent", detail: equivalent.get(m.id) };
      else if (invalid.has(m)) r = { outcome: "invalid", detail: invalid.get(m) };
      else if (!tests.length) r = { outcome: "uncalled", detail: "no unit test calls this function: not run" };
      else {
        const p = path.join(dir, STATIC, m.file);
        const original = fs.readFileSync(p, "utf8");
        fs.writeFileSync(p, m.mutated);
        try {
          r = await runTests(dir, tests, limit(tests));
        } finally {
          fs.writeFileSync(p, original);
        }
        if (r.outcome === "killed") r.detail = `${r.detail.length > 70 ? `${r.detail.slice(0, 69)}…` : r.detail}, ${(r.ms / 1000).toFixed(1)} s`;
        else if (r.outcome === "survived") r.detail = `${tests.join(" ")}: ${(r.ms / 1000).toFixed(1)} s`;
      }
      results[i] = { m, outcome: r.outcome, line: show(m, r.outcome, r.detail) };
      while (printed < chosen.length && results[printed]) {
        if (results[printed].outcome !== "uncalled" || all || only.length) console.log(results[printed].line);
        printed += 1;
      }
    });

    const count = (o) => results.filter((r) => r.outcome === o).length;
    const failing = count("survived") + count("timeout") + count("error");
    const uncalled = modules.map((f) => [f, results.filter((r) => r.outcome === "uncalled" && r.m.file === f).length]).filter(([, n]) => n);
    console.log(`not run, in functions no unit test calls: ${uncalled.map(([f, n]) => `${f} ${n}`).join(", ") || "none"}`);
    console.log(`mutants: ${count("killed")} killed, ${count("survived")} survived, ${count("timeout")} timed out, ${count("invalid")} invalid, ${count("equivalent")} equivalent (listed in scripts/mutants-equivalent.txt, reasons above), ${count("uncalled")} not called by the unit tests${count("error") ? `, ${count("error")} errors` : ""}; ${((Date.now() - began) / 1000).toFixed(0)} s`);
    return failing ? 1 : 0;
  } finally {
    for (const dir of workers) fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--syntax-check")) await syntaxCheck();
else process.exitCode = await main(process.argv.slice(2));
