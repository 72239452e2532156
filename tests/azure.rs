//! Publishing to Azure Blob Storage, against Azurite (the Azure Storage emulator, which
//! `scripts/test.sh` installs from npm into tests/azure) on loopback: the container holds the
//! site a folder build writes, a run added is published, and a second publisher is refused.


use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

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
        let port = free_port();
        let child = Command::new(&bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string(), "--skipApiVersionCheck", "--silent", "--location"])
            .arg(data.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("azurite starts");
        wait_listening(port, "Azurite", 30);
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
