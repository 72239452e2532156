// A small static file server for a built site, mounted under a sub-path (default /perf/) to
// prove the site's links are relative. Listens on 127.0.0.1, port 0 (the OS picks one).

import http from "node:http";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".bin": "application/octet-stream",
  ".gz": "application/gzip",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".xml": "application/atom+xml",
  ".md": "text/markdown; charset=utf-8",
};

/** A TCP port that was free a moment ago on 127.0.0.1 (a server started on it may still lose it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Serve `root` at http://127.0.0.1:PORT`prefix`; resolves to { url, close, requests }. */
export function serve(root, prefix = "/perf/") {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    requests.push(url.pathname);
    let p = decodeURIComponent(url.pathname);
    if (!p.startsWith(prefix)) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`not under ${prefix}`);
      return;
    }
    p = p.slice(prefix.length);
    const file = path.resolve(root, p);
    if (file !== path.resolve(root) && !file.startsWith(path.resolve(root) + path.sep)) {
      res.writeHead(403);
      res.end();
      return;
    }
    let target = file;
    try {
      if (fs.statSync(target).isDirectory()) {
        if (!url.pathname.endsWith("/")) {
          res.writeHead(301, { location: url.pathname + "/" });
          res.end();
          return;
        }
        target = path.join(target, "index.html");
      }
      const body = fs.readFileSync(target);
      res.writeHead(200, {
        "content-type": TYPES[path.extname(target)] || "application/octet-stream",
        "content-length": body.length,
        "cache-control": "no-store",
      });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    }
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}${prefix}`,
        requests,
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}
