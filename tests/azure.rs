//! Publishing to Azure Blob Storage, against Azurite (the Azure Storage emulator, which
//! `scripts/test.sh` installs from npm into tests/azure) on loopback: the container holds the
//! site a folder build writes, a run added is published, and a second publisher is refused.


use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use crate::common::*;
use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt};

const CONTAINER: &str = "profiles-site";

struct Azurite {
    child: Child,
    port: u16,
    _data: tempfile::TempDir,
}

impl Azurite {
    fn start() -> Azurite {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/azure");
        let bin = here.join("node_modules/.bin/azurite-blob");
        assert!(bin.is_file(), "Azurite is missing: {} (bash scripts/test.sh installs it: cd tests/azure && npm ci)", bin.display());
        let data = tempfile::tempdir().unwrap();
        // Azurite is a node program: under load (the browser tests beside these) it may take
        // long to start, and the port found free may be taken before it binds. It is given a
        // minute and a half, started again on another port if it exits, and its own output is
        // shown if it never listens.
        let log = data.path().join("azurite.log");
        let said = || std::fs::read_to_string(&log).unwrap_or_default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
        let mut tries = 0;
        let (child, port) = loop {
            tries += 1;
            let port = free_port();
            let out = std::fs::File::create(&log).unwrap();
            let mut child = Command::new(&bin)
                // Without telemetry: a test sends nothing to Microsoft, and an Azurite that
                // never listened (its start stuck, once) had been writing telemetry to retry.
                .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string(), "--skipApiVersionCheck", "--disableTelemetry", "--location"])
                .arg(data.path().join("store"))
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .spawn()
                .expect("azurite starts");
            let exited = loop {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    break None;
                }
                if let Some(status) = child.try_wait().unwrap() {
                    break Some(status);
                }
                if std::time::Instant::now() >= deadline {
                    // Not left running after the test, as a failed start once was.
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("Azurite did not listen on port {port} within 90 s; it said:\n{}", said());
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            };
            match exited {
                None => break (child, port),
                Some(status) => assert!(tries < 3, "Azurite exited ({status}) {tries} times; the last said:\n{}", said()),
            }
        };
        let made = Command::new("node").arg(here.join("make-container.mjs")).arg(port.to_string()).arg(CONTAINER).output().unwrap();
        assert!(made.status.success(), "making the container: {}{}", stdout(&made), stderr(&made));
        Azurite { child, port, _data: data }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn store(&self) -> (tokio::runtime::Runtime, impl ObjectStore) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // object_store finds the emulator's address only in the environment.
        // SAFETY: the one test of this binary sets it, on its own thread, before any thread of
        // its own reads the environment.
        unsafe { std::env::set_var("AZURITE_BLOB_STORAGE_URL", self.url()) };
        // The clients' TLS provider, as flamesite's Bucket::open sets it for its own.
        flamesite::output::bucket::install_tls_provider();
        let store = object_store::azure::MicrosoftAzureBuilder::new().with_use_emulator(true).with_container_name(CONTAINER).build().unwrap();
        (rt, store)
    }

    /// Every blob under `prefix` with its bytes, the record beside the site left out.
    fn site(&self, prefix: &str) -> BTreeMap<String, Vec<u8>> {
        let (rt, store) = self.store();
        rt.block_on(async {
            let listed: Vec<_> = store.list(Some(&object_store::path::Path::from(prefix))).try_collect().await.unwrap();
            let mut out = BTreeMap::new();
            for meta in listed {
                let rel = meta.location.as_ref().strip_prefix(&format!("{prefix}/")).unwrap().to_string();
                if !rel.starts_with(".flamesite/") {
                    out.insert(rel, store.get(&meta.location).await.unwrap().bytes().await.unwrap().to_vec());
                }
            }
            out
        })
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn publish(az: &Azurite, input: &Path, prefix: &str) -> Output {
    Command::new(bin())
        .args(["build", "--input", input.to_str().unwrap(), "--output", &format!("az://{CONTAINER}/{prefix}")])
        .current_dir(input.parent().unwrap())
        .env("AZURE_STORAGE_USE_EMULATOR", "true")
        .env("AZURITE_BLOB_STORAGE_URL", az.url())
        .output()
        .unwrap()
}

fn profiles(dir: &Path) -> PathBuf {
    let input = dir.join("profiles");
    for (i, day) in ["2026-11-01", "2026-11-02"].iter().enumerate() {
        write(&input.join(format!("api/{day}.folded.gz")), &gzip(awkward_profile(i as u64, 250).as_bytes()));
    }
    input
}

#[test]
fn a_container_holds_the_site_a_folder_gets_and_one_publisher_at_a_time() {
    let az = Azurite::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    let folder = dir.path().join("folder");
    let o = publish(&az, &input, "site");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(build(&input, &folder, &[]).status.success());
    assert_eq!(az.site("site").keys().collect::<Vec<_>>(), tree(&folder).keys().collect::<Vec<_>>());
    assert!(az.site("site") == tree(&folder), "the container holds what a folder build writes, byte for byte");
    let (rt, store) = az.store();
    let page = rt.block_on(store.get(&object_store::path::Path::from("site/index.html"))).unwrap();
    assert_eq!(page.attributes.get(&object_store::Attribute::ContentType).map(|v| v.as_ref()), Some("text/html; charset=utf-8"));
    // A run added: decoded alone, published.
    write(&input.join("api/2026-11-03.folded.gz"), &gzip(awkward_profile(9, 250).as_bytes()));
    let o = publish(&az, &input, "site");
    assert!(stderr(&o).contains("1 decoded, 0 from the cache, 2 unchanged"), "{}", stderr(&o));
    assert!(build(&input, &folder, &[]).status.success());
    assert!(az.site("site") == tree(&folder), "the added run is published as a folder build has it");
    // A lock held (renewed a moment ago) by a publisher elsewhere: refused, nothing written.
    let lock = format!("token 7-7\nhost elsewhere\npid 77\nsince 2026-11-26T00:00:00Z\nrenewed {}\n", jiff::Timestamp::now());
    rt.block_on(store.put(&object_store::path::Path::from("site/.flamesite/lock"), lock.into())).unwrap();
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(10, 250).as_bytes()));
    let o = publish(&az, &input, "site");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("another flamesite build is publishing to az://{CONTAINER}/site (host elsewhere")), "{}", stderr(&o));
    assert!(!az.site("site").keys().any(|k| k.contains("2026-11-04")));
}
