// Makes a blob container in Azurite (the Azure Storage emulator) for tests/azure.rs: object_store
// writes blobs but does not make containers. One request signed with Shared Key, the scheme
// Azure documents, with Azurite's published development account and key.
// Usage: node make-container.mjs PORT CONTAINER
import crypto from "node:crypto";
import http from "node:http";
const [port, container] = process.argv.slice(2);
const account = "devstoreaccount1";
const key = Buffer.from("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", "base64");
const date = new Date().toUTCString();
const version = "2021-08-06";
const sts = ["PUT", "", "", "", "", "", "", "", "", "", "", "", `x-ms-date:${date}\nx-ms-version:${version}`, `/${account}/${account}/${container}\nrestype:container`].join("\n");
const sig = crypto.createHmac("sha256", key).update(sts, "utf8").digest("base64");
const req = http.request({ host: "127.0.0.1", port, method: "PUT", path: `/${account}/${container}?restype=container`, headers: { "x-ms-date": date, "x-ms-version": version, authorization: `SharedKey ${account}:${sig}`, "content-length": 0 } }, (res) => {
  let b = "";
  res.on("data", (d) => (b += d));
  res.on("end", () => { console.log(res.statusCode, b.slice(0, 200)); process.exit(res.statusCode === 201 || res.statusCode === 409 ? 0 : 1); });
});
req.end();
