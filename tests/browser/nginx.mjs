// A real static server for a built site: nginx (Debian's package, NGINX_BIN, default
// /usr/sbin/nginx), started by a test on 127.0.0.1 with a configuration of its own in a
// temporary folder, serving the site under a sub-path (default /perf/) with `alias`, the way a
// site is published next to other things on one host. The test reads nginx's access log to
// prove that no request of a walk through the site got a 4xx or 5xx.
//
// How nginx runs, as root and not: `master_process off`, so the one nginx process is the one
// this module spawns and it serves the files itself, with the rights of whoever runs the test.
// With a master process, a master started as root hands the work to workers running as the
// `user` directive's user (nobody by default), which cannot read a site in a mkdtemp folder
// (mode 0700, owned by root); naming that folder's owner there would need a user name, and
// running the workers as root (`user root`) is no better than one process. Started as
// someone else, nginx ignores `user` and cannot switch users anyway. So one configuration
// works for both, and SIGQUIT/SIGTERM reach the process that serves. The compiled-in paths
// that a non-root user cannot write (the pid file, the logs, the temp folders of
// /var/lib/nginx) all point into the temporary folder, and `-e` moves the error log there
// before the configuration is even read.

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { freePort } from "./server.mjs";

const NGINX = process.env.NGINX_BIN || "/usr/sbin/nginx";
const DEBIAN_MIME = "/etc/nginx/mime.types";
const READY = "/.nginx-ready"; // answered by nginx itself, never logged: the start-up probe
const START_MS = 10000;

// When Debian's mime.types is not there (NGINX_BIN from elsewhere): the types the site uses.
const TYPES = `types {
    text/html html;
    text/javascript js;
    text/css css;
    application/json json;
    image/png png;
    image/svg+xml svg;
    application/atom+xml xml;
    application/octet-stream bin;
  }`;

/** A string as an nginx configuration token, quoted. */
function q(s) {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

// A host that undoes the build's compression on the way: it sends the packed data files
// (`*.gz`) as they are stored with `Content-Encoding: gzip`, as Apache's `AddEncoding` or an
// object store's metadata do, so the browser hands the page the bytes inside, and it
// compresses everything else on the fly (`gzip on` for every type).
const ENCODING = `
      gzip on;
      gzip_types *;
      gzip_min_length 1;
      location ~ \\.gz$ {
        gzip off;
        types { }
        default_type application/octet-stream;
        add_header Content-Encoding gzip;
      }`;

function config({ dir, root, prefix, port, encoding }) {
  const f = (name) => q(path.join(dir, name));
  const bare = prefix.slice(0, -1); // "/perf"
  return `# Written by tests/browser/nginx.mjs for one test run.
daemon off;
master_process off;
pid ${f("nginx.pid")};
lock_file ${f("nginx.lock")};
error_log ${f("error.log")} warn;

events {
  worker_connections 256;
}

http {
  ${fs.existsSync(DEBIAN_MIME) ? `include ${q(DEBIAN_MIME)};` : TYPES}
  types_hash_max_size 4096;
  default_type application/octet-stream;
  charset utf-8;

  log_format flamesite escape=json '{"method":"$request_method","status":$status,"path":"$request_uri"}';
  access_log ${f("access.log")} flamesite;

  client_body_temp_path ${f("body")};
  proxy_temp_path ${f("proxy")};
  fastcgi_temp_path ${f("fastcgi")};
  uwsgi_temp_path ${f("uwsgi")};
  scgi_temp_path ${f("scgi")};

  # Redirects (a folder asked for without its slash) keep the host and port the browser used.
  absolute_redirect off;

  server {
    listen 127.0.0.1:${port};
    server_name localhost;

    location = ${READY} {
      access_log off;
      return 204;
    }
    location = ${q(bare)} {
      return 301 ${q(prefix)};
    }
    location ${q(prefix)} {
      alias ${q(root + "/")};
      index index.html;${encoding ? ENCODING : ""}
    }
    location / {
      return 404;
    }
  }
}
`;
}

/** Resolves when nginx answers the probe; rejects when it exits first or does not answer in time. */
function ready(child, port) {
  return new Promise((resolve, reject) => {
    const until = Date.now() + START_MS;
    let done = false;
    const finish = (err) => {
      if (done) return;
      done = true;
      child.off("exit", onExit);
      err ? reject(err) : resolve();
    };
    const onExit = (code, signal) => finish(Object.assign(new Error(`nginx exited (${signal || `status ${code}`})`), { exited: true }));
    child.on("exit", onExit);
    const probe = () => {
      if (done) return;
      const req = http.get({ host: "127.0.0.1", port, path: READY, timeout: 1000 }, (res) => {
        res.resume();
        if (res.statusCode === 204) finish();
        else finish(new Error(`something else answers on port ${port}: HTTP ${res.statusCode} for ${READY}`));
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", () => {
        if (Date.now() > until) finish(new Error(`nginx did not answer on 127.0.0.1:${port} within ${START_MS} ms`));
        else setTimeout(probe, 25);
      });
    };
    probe();
  });
}

function parseLog(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const { method, status, path: p } = JSON.parse(line);
    out.push({ method, status, path: p });
  }
  return out;
}

/**
 * Serve the folder `root` at http://127.0.0.1:PORT`prefix` with nginx (with `encoding`, as a
 * host that sends packed files with `Content-Encoding: gzip`: ENCODING). Resolves, once nginx
 * answers, to { url, close(), requests(), errorLog() }: requests() is the access log so far as
 * [{ method, status, path }] (path as requested, query included); close() stops nginx and
 * removes its temporary folder. Rejects with nginx's error log when it does not start.
 */
export async function startNginx(root, prefix = "/perf/", { encoding = false } = {}) {
  if (!fs.existsSync(NGINX)) {
    throw new Error(`${NGINX} is missing: install Debian's nginx package (run.sh --prepare does) or set NGINX_BIN`);
  }
  if (!/^\/(.*\/)?$/.test(prefix)) throw new Error(`the prefix must start and end with "/": ${prefix}`);
  root = path.resolve(root);
  if (/[$\s;{}]/.test(root + prefix)) throw new Error(`nginx.mjs does not quote $, spaces, ; or braces in paths: ${root} ${prefix}`);
  let lastError;
  // A port free a moment ago may be taken by the time nginx binds it: then try another.
  for (let attempt = 0; attempt < 5; attempt++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flamesite-nginx-"));
    const port = await freePort();
    const conf = path.join(dir, "nginx.conf");
    const errorFile = path.join(dir, "error.log");
    fs.writeFileSync(conf, config({ dir, root, prefix, port, encoding }));
    const child = spawn(NGINX, ["-p", `${dir}/`, "-c", conf, "-e", errorFile], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const spawnError = new Promise((_, reject) => child.once("error", reject));
    const errorLog = () => {
      let text = "";
      try {
        text = fs.readFileSync(errorFile, "utf8");
      } catch {}
      return (text + output).trim();
    };
    // A test process that dies must not leave nginx listening.
    const killOnExit = () => child.kill("SIGKILL");
    process.on("exit", killOnExit);
    try {
      await Promise.race([ready(child, port), spawnError]);
    } catch (e) {
      process.off("exit", killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await new Promise((r) => child.once("exit", r));
      }
      const log = errorLog();
      fs.rmSync(dir, { recursive: true, force: true });
      lastError = new Error(`nginx (${NGINX}) did not start: ${e.message}\n${log || "(its error log is empty)"}`);
      if (/Address already in use/.test(log)) continue; // the port was taken meanwhile
      throw lastError;
    }
    let closed = null;
    const close = () => {
      closed ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((r) => child.once("exit", r));
          child.kill("SIGQUIT"); // graceful: finish the requests in flight
          const t = setTimeout(() => child.kill("SIGTERM"), 3000);
          const k = setTimeout(() => child.kill("SIGKILL"), 6000);
          await exited;
          clearTimeout(t);
          clearTimeout(k);
        }
        process.off("exit", killOnExit);
        fs.rmSync(dir, { recursive: true, force: true });
      })();
      return closed;
    };
    const requests = () => {
      if (closed) throw new Error("requests() after close(): the access log is gone");
      return parseLog(fs.readFileSync(path.join(dir, "access.log"), "utf8"));
    };
    return { url: `http://127.0.0.1:${port}${prefix}`, port, close, requests, errorLog };
  }
  throw lastError;
}
