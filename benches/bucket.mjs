// Object storage benchmark for docs/BENCHMARKS.md ("Publishing to object storage"): what a
// publish to a bucket reads and writes, counted by a proxy in front of a real S3 server on
// loopback (s3s-fs), each build on a machine with no local state (its copy of the bucket's
// record is its own temporary folder).
//
// 1. RUNS small runs (folded profiles of 40 to 80 stacks, in 20 series, one per day) are
//    published to an empty bucket.
// 2. The same profiles are published again: nothing changed.
// 3. One run is added to one series and published.
//
// Printed for each: requests by method, bytes sent to the server and bytes received from it,
// wall time, the build's peak memory (by /usr/bin/time), and the archive's bytes (every object under the prefix, as the server stores
// them), so that the reads and writes of 2 and 3 can be read as fractions of the archive.
//
// Needs: target/release/flamesite (cargo build --release; or FLAMESITE_BIN), the tests' S3
// server as a program (cargo build --release --example s3-server; or FLAMESITE_S3_SERVER, a
// program taking PORT ROOT with the same keys) and node.
// Usage: node benches/bucket.mjs [RUNS (default 1000)]; BENCH_LOG=FILE appends a line per request.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, appendFileSync, readdirSync, statSync, rmSync, existsSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] ?? 1000);
const bin = process.env.FLAMESITE_BIN ?? join(root, "target/release/flamesite");
const server = process.env.FLAMESITE_S3_SERVER ?? join(root, "target/release/examples/s3-server");
for (const need of [bin, server]) {
  if (!existsSync(need)) {
    console.error(`missing: ${need} (see the header of benches/bucket.mjs)`);
    process.exit(1);
  }
}

const work = mkdtempSync(join(tmpdir(), "flamesite-bucket-"));
const store = join(work, "store");
mkdirSync(join(store, "bench"), { recursive: true });

// A deterministic generator (xorshift), so that every run of the benchmark has the same input.
let seed = 0x2545f491;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};
const names = Array.from({ length: 300 }, (_, i) => `fn_${i.toString(36)}_${["alloc", "parse", "lock", "io", "hash"][i % 5]}`);
function profile() {
  const lines = [];
  const stacks = 40 + Math.floor(next() * 40);
  for (let s = 0; s < stacks; s++) {
    const depth = 3 + Math.floor(next() * 12);
    const frames = ["main"];
    for (let d = 0; d < depth; d++) frames.push(names[Math.floor(next() * names.length)]);
    lines.push(`${frames.join(";")} ${1 + Math.floor(next() * 500)}`);
  }
  return gzipSync(lines.join("\n") + "\n");
}
const input = join(work, "profiles");
const series = 20;
const day = (n) => new Date(Date.UTC(2024, 0, 1) + n * 86400000).toISOString().slice(0, 10);
for (let i = 0; i < runs; i++) {
  const dir = join(input, `svc-${i % series}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${day(Math.floor(i / series))}.folded.gz`), profile());
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const s3Port = await freePort();
const s3 = spawn(server, [String(s3Port), store], { stdio: "ignore" });
for (let i = 0; ; i++) {
  const up = await new Promise((resolve) => {
    const c = net.connect(s3Port, "127.0.0.1", () => (c.end(), resolve(true))).on("error", () => resolve(false));
  });
  if (up) break;
  if (i > 400) throw new Error("the S3 server did not start");
  await new Promise((r) => setTimeout(r, 50));
}

// The counting proxy: every request is forwarded as it is; its method, the bytes of its body
// and of the answer's body are counted.
let counts;
const reset = () => (counts = { requests: {}, sent: 0, received: 0 });
reset();
// BENCH_LOG=FILE appends a line per request: the step, method, path, bytes sent and received.
const log = process.env.BENCH_LOG;
let step = "";
const proxy = http.createServer({ keepAlive: true }, (req, res) => {
  counts.requests[req.method] = (counts.requests[req.method] ?? 0) + 1;
  let sent = 0;
  let received = 0;
  const up = http.request({ host: "127.0.0.1", port: s3Port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.on("data", (b) => ((counts.received += b.length), (received += b.length)));
    if (log) answer.on("end", () => appendFileSync(log, `${step}\t${req.method}\t${decodeURIComponent(req.url)}\t${sent}\t${received}\n`));
    answer.pipe(res);
  });
  req.on("data", (b) => ((counts.sent += b.length), (sent += b.length)));
  req.pipe(up);
  up.on("error", () => res.destroy());
});
const proxyPort = await freePort();
await new Promise((r) => proxy.listen(proxyPort, "127.0.0.1", r));

function archiveBytes() {
  let total = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else total += statSync(p).size;
    }
  };
  walk(join(store, "bench", "site"));
  return total;
}

async function publish(label) {
  reset();
  step = label;
  const start = performance.now();
  // Peak memory by /usr/bin/time when there is one (its last line of standard error).
  const timed = existsSync("/usr/bin/time");
  const argv = ["build", "--input", input, "--output", "s3://bench/site"];
  const child = spawn(timed ? "/usr/bin/time" : bin, timed ? ["-f", "peak %M kB", bin, ...argv] : argv, {
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: "flamesite",
      AWS_SECRET_ACCESS_KEY: "flamesite-secret",
      AWS_REGION: "us-east-1",
      AWS_ENDPOINT: `http://127.0.0.1:${proxyPort}`,
      AWS_ALLOW_HTTP: "true",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (b) => (err += b));
  const code = await new Promise((r) => child.on("close", r));
  const seconds = (performance.now() - start) / 1000;
  if (code !== 0) throw new Error(`${label}: exit ${code}\n${err}`);
  const archive = archiveBytes();
  const pct = (n) => ((100 * n) / archive).toFixed(3);
  const reqs = Object.entries(counts.requests).map(([m, n]) => `${m} ${n}`).join(", ");
  console.log(
    `${label.padEnd(16)} ${seconds.toFixed(2).padStart(7)} s  requests: ${reqs}\n${"".padEnd(16)} written ${counts.sent} B (${pct(counts.sent)}% of the archive), read ${counts.received} B (${pct(counts.received)}%); archive ${archive} B`,
  );
  const lines = err.trim().split("\n");
  const peak = timed ? lines.pop() : "";
  console.log(`${"".padEnd(16)} ${lines.pop()}${peak ? `; ${peak}` : ""}`);
}

try {
  console.log(`${runs} runs in ${series} series`);
  await publish("first publish");
  await publish("nothing changed");
  writeFileSync(join(input, "svc-0", `${day(Math.ceil(runs / series) + 1)}.folded.gz`), profile());
  await publish("add one run");
} finally {
  proxy.close();
  s3.kill();
  if (process.env.BENCH_KEEP) console.log(`kept ${work} (BENCH_KEEP)`);
  else rmSync(work, { recursive: true, force: true });
}
