//! Publishing to object storage (S3 and S3-compatible stores, Google Cloud Storage, Azure Blob
//! Storage, local files), through the `object_store` crate.
//!
//! A bucket has no second tree to swap in: the published site is the only tree, and a build
//! changes it in place, in an order that never shows a reader a page whose files are missing.
//! The build's writes are kept aside (spooled to a local folder) until [`Staging::commit`],
//! which then uploads every new or changed file that is not a page (graph files, previews,
//! theme files), then the graphs' manifests, then the pages, then the indexes (`index.json`
//! files, the feed, the home page), and only then deletes what the site no longer has. While it does, the object
//! `.flamesite/dirty` says a publish is under way: a build that finds it (the last was killed,
//! or met a server that failed) does not trust its record of the site and writes every page
//! and file again where it differs, which repairs it.
//!
//! The bucket keeps the build's record beside the site, under `.flamesite/` (never a page's
//! path): the build state and the cache's entries (`.flamesite/cache/`, sums and records, no
//! graph files), so a machine with nothing but the binary and `site.toml` adds a run by reading
//! that record and the few run folders it needs, not the site. `.flamesite/lock`, made with a
//! conditional write, keeps two publishers from writing the same site at once. A site's record
//! also marks its prefix as its own: no site is published inside another's prefix, nor over a
//! prefix that holds another (whose objects the outer site's sweep would delete).

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;

use crate::error::{BucketError, OutputError, Warning};

use super::record::STATE_BUDGET;

/// Where the build's record lives in the bucket, beside the site.
pub const RECORD: &str = ".flamesite";

pub use crate::objects::{install_tls_provider, Bucket, Listed};
use crate::objects::CONCURRENCY;

/// The most bytes of a file of the published site downloaded to be read back (a manifest, a
/// name file, a chunk): what the readers of a graph folder take at most
/// (`store::chunk`'s budgets of a manifest and a name file).
pub const SITE_FILE_BUDGET: u64 = 1 << 30;

/// In which of the four publishing phases a file is uploaded: the files of graphs and the
/// theme, then the graphs' manifests, which name those files (a reader that opens a graph
/// reads its manifest first, then the files it names: a graph whose files are rewritten in
/// place keeps its old manifest until every new file is there, and the page refuses a file
/// that disagrees with the manifest it read), then pages, then the indexes that list pages.
fn phase(rel: &str) -> u8 {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if rel == "index.html" || name == "index.json" && !rel.contains("/g/") || rel == "feed.xml" || rel.ends_with("/feed.xml") {
        3
    } else if name.ends_with(".html") {
        2
    } else if name == "manifest.json" || name == crate::store::chunk::PACKED_MANIFEST {
        1
    } else {
        0
    }
}

/// A publish to a bucket under way: the changes a build makes, kept aside until
/// [`Staging::commit`] uploads them in order.
pub struct Staging {
    bucket: Arc<Bucket>,
    spool: PathBuf,
    /// Files written, with whether they may be left when the bucket already holds them.
    written: Mutex<Vec<(String, bool)>>,
    removed: Mutex<Vec<String>>,
    /// Paths of every file written, to tell the sweep what to keep.
    touched: Mutex<HashSet<String>>,
    /// The first segments of the paths the site writes (see [`Staging::set_ours`]).
    ours: Mutex<BTreeSet<String>>,
    /// The identity of the tree the bucket holds (0: no site yet, or one whose last publish
    /// was cut off).
    tree: u64,
    /// The identity of the tree once this publish is done: the same, or a new one.
    next_tree: u64,
    dirty: bool,
    /// Whether the bucket holds a site (then a file written may already be there).
    has_site: bool,
    /// Every object under the prefix, when [`Staging::new`] listed them (a publish whose tree
    /// is not known): the sweep of the commit deletes from it.
    listed: Option<Vec<(String, u64)>>,
}

/// The folders of the site (paths relative to its prefix) that another flamesite site's
/// record is in, among the objects `rels`: `A/B/.flamesite/…` is the record of a site at `A/B`.
/// The site's own record (`.flamesite/…`) is not another's.
fn nested_sites<'a>(rels: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for rel in rels {
        let parts: Vec<&str> = rel.split('/').collect();
        if let Some(i) = parts.iter().position(|p| *p == RECORD).filter(|i| *i > 0 && *i + 1 < parts.len()) {
            found.insert(parts[..i].join("/"));
        }
    }
    found
}

/// Refuses to publish to `bucket` when it is inside another flamesite site's prefix (a prefix
/// above it holds a site's record): a publish of that site sweeps its folders, and this site's
/// objects with them. A few listings, one per prefix above, before anything is written.
pub fn refuse_inside_another_site(bucket: &Bucket) -> Result<(), OutputError> {
    if let Some(outer) = bucket.sites_above(RECORD)?.first() {
        return Err(OutputError::Bucket(format!(
            "refusing to publish to {}: it is inside another flamesite site, {outer} (its record is {outer}/{RECORD}/), whose publishes would delete this one's objects; publish to a prefix outside {outer}, or move that site",
            bucket.url()
        )));
    }
    Ok(())
}

/// Whether `rel` is a path the site may write or remove: inside it, and not flamesite's record.
fn is_site_path(rel: &str) -> bool {
    crate::store::is_inside(rel) && !rel.starts_with(RECORD)
}

/// Where the tree's identity is kept.
const TREE: &str = ".flamesite/tree";
const LOCK: &str = ".flamesite/lock";
/// The marker of a publish under way (see the module's documentation).
pub const DIRTY: &str = ".flamesite/dirty";

impl Staging {
    /// Opens a publish to `bucket`, whose [`Lock`] the caller holds.
    pub fn new(bucket: Arc<Bucket>, _lock: &Lock) -> Result<Staging, OutputError> {
        let mut staging = Staging {
            bucket: bucket.clone(),
            spool: PathBuf::new(),
            written: Mutex::new(Vec::new()),
            removed: Mutex::new(Vec::new()),
            touched: Mutex::new(HashSet::new()),
            ours: Mutex::new(BTreeSet::new()),
            tree: 0,
            next_tree: 0,
            dirty: false,
            has_site: false,
            listed: None,
        };
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
        staging.spool = std::env::temp_dir().join(format!("flamesite-publish-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&staging.spool).map_err(OutputError::at(&staging.spool))?;
        staging.dirty = bucket.exists(DIRTY)?;
        let site = bucket.get_within("index.json", super::INDEX_BUDGET)?;
        staging.has_site = site.is_some() || staging.dirty;
        if site.as_ref().is_some_and(|b| super::recognise(b).is_none()) {
            return Err(OutputError::Bucket(format!("refusing to publish to {}: its index.json is not a flamesite site's; choose another prefix", bucket.url())));
        }
        // A tree is known only while its record is whole: a publish that was cut off leaves
        // the marker, and the next build then treats the bucket as unknown.
        staging.tree = match (bucket.get(TREE)?, staging.dirty) {
            (Some(b), false) => String::from_utf8_lossy(&b).trim().parse().unwrap_or(0),
            _ => 0,
        };
        // A new tree's identity: when this publish began.
        staging.next_tree = if staging.tree != 0 { staging.tree } else { nanos.max(1) };
        // A publish whose tree is not known (the first, or one after a publish was cut off)
        // rewrites the site and sweeps its folders: the prefix is listed now, before anything of
        // the site is written, and another site found inside it refuses the publish (a sweep
        // would delete its objects). The commit's sweep takes its objects from this listing.
        if staging.tree == 0 {
            let listed = bucket.list("")?;
            if let Some(inner) = nested_sites(listed.iter().map(|(rel, _)| rel.as_str())).first() {
                let (url, inner) = (bucket.url(), format!("{}/{inner}", bucket.url()));
                return Err(OutputError::Bucket(format!(
                    "refusing to publish to {url}: another flamesite site is inside it, {inner} (its record is {inner}/{RECORD}/), whose objects a publish here would delete; publish to a prefix that holds no other site, or move that site out of {url}"
                )));
            }
            staging.listed = Some(listed);
        }
        Ok(staging)
    }

    /// Whether the last publish to this bucket was cut off (it left [`DIRTY`]).
    pub fn was_cut_off(&self) -> bool {
        self.dirty
    }

    /// The identity of the tree the bucket holds, as the build state names trees: the bucket
    /// is both the published tree and the one the build changes.
    pub fn inodes(&self) -> (u64, u64) {
        (self.next_tree, self.tree)
    }

    /// The bucket the site is published to.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    /// Tells the sweep of a full publish which objects are the site's: those whose first
    /// segment is one of `ours`. A bucket is often shared, so nothing else is ever deleted.
    pub fn set_ours(&self, ours: impl IntoIterator<Item = String>) {
        *self.ours.lock().expect("no panic while holding it") = ours.into_iter().collect();
    }

    /// Where `rel` is in the spool (files this build wrote).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.spool.join(rel)
    }

    fn spooled(&self, rel: &str, bytes: &[u8], may_keep: bool) -> Result<(), OutputError> {
        if !is_site_path(rel) {
            return Err(OutputError::Bucket(format!("{}/{rel}: not a path of the site", self.bucket.url())));
        }
        let path = self.spool.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(OutputError::at(p))?;
        }
        std::fs::write(&path, bytes).map_err(OutputError::at(&path))?;
        self.touched.lock().expect("no panic while holding it").insert(rel.to_string());
        self.written.lock().expect("no panic while holding it").push((rel.to_string(), may_keep));
        Ok(())
    }

    /// Makes the file at `rel` hold `bytes` (left as it is when the bucket already has them).
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        self.spooled(rel, bytes, true)
    }

    /// Makes the file at `rel` hold `bytes`, known to differ from what it holds.
    pub fn replace(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        self.spooled(rel, bytes, false)
    }

    /// Removes the file or folder at `rel`: a path inside the site, as a folder's staging
    /// checks it. The paths to remove come from the build's state, which a damaged or tampered
    /// record can give as `/////robots.txt` or `../other-site`: such a one is refused (the
    /// build stops, exit 2, before anything is uploaded or deleted), never listed or deleted.
    pub fn remove(&self, rel: &str) -> Result<(), OutputError> {
        // A folder may be named with its final `/`.
        let path = rel.strip_suffix('/').unwrap_or(rel);
        if !is_site_path(path) {
            return Err(OutputError::Bucket(format!(
                "{}/{rel}: not a path inside the site; the build state may be damaged (remove the cache folder to build afresh)",
                self.bucket.url()
            )));
        }
        self.removed.lock().expect("no panic while holding it").push(rel.to_string());
        Ok(())
    }

    /// Uploads the changes in order (files, pages, indexes), then deletes what is to go; with
    /// `sweep`, every object of the site's folders that this build did not write goes too.
    /// Returns the identity of the tree the bucket now holds, which is the one the next build
    /// changes.
    pub fn commit(mut self, sweep: bool) -> Result<Option<u64>, OutputError> {
        let b = self.bucket.clone();
        b.put(DIRTY, b"a flamesite publish is under way; the next build checks every file\n".to_vec())?;
        self.dirty = true;
        let written = std::mem::take(&mut *self.written.lock().expect("no panic while holding it"));
        // The last write of a path wins.
        let mut last: std::collections::BTreeMap<String, bool> = Default::default();
        for (rel, may_keep) in written {
            last.insert(rel, may_keep);
        }
        // Files the bucket may already hold are compared first (a full publish over a site).
        let keepable: Vec<&String> = last.iter().filter(|(_, k)| **k && self.has_site).map(|(r, _)| r).collect();
        let same = self.same_in_bucket(&keepable)?;
        for p in 0..4 {
            let files: Vec<(String, PathBuf)> =
                last.keys().filter(|r| phase(r) == p && !same.contains(*r)).map(|r| (r.clone(), self.spool.join(r))).collect();
            b.upload(&files)?;
        }
        let removed = std::mem::take(&mut *self.removed.lock().expect("no panic while holding it"));
        let touched = std::mem::take(&mut *self.touched.lock().expect("no panic while holding it"));
        let ours = std::mem::take(&mut *self.ours.lock().expect("no panic while holding it"));
        let mut gone: BTreeSet<String> = BTreeSet::new();
        let mut consider = |rel: &String, removed_here: bool| {
            if rel.starts_with(".flamesite/") || touched.contains(rel) {
                return;
            }
            let first = rel.split('/').next().unwrap_or(rel);
            if removed_here || sweep && ours.contains(first) {
                gone.insert(rel.clone());
            }
        };
        // Another site inside this one's prefix (a flamesite before issue 45 let one be
        // published there) is never this one's: nothing under a folder that holds another
        // site's record goes, whatever the listing or the build state says.
        let mut nested = BTreeSet::new();
        if sweep && self.has_site {
            // A full publish over a site: every object of the site's folders it did not write
            // goes. (A bucket that held no site, and no cut-off publish, has none to go.)
            let under = |rel: &String, r: &String| rel == r || rel.starts_with(&format!("{}/", r.trim_end_matches('/')));
            let listed = match self.listed.take() {
                Some(listed) => listed,
                None => b.list("")?,
            };
            nested = nested_sites(listed.iter().map(|(rel, _)| rel.as_str()));
            for (rel, _) in &listed {
                consider(rel, removed.iter().any(|r| under(rel, r)));
            }
        } else {
            // Only what was removed is listed: the file itself, or the folder's objects.
            let mut above = BTreeSet::new();
            for r in &removed {
                let r = r.trim_end_matches('/');
                let inside = b.list(r)?;
                nested.extend(nested_sites(inside.iter().map(|(rel, _)| rel.as_str())));
                for (rel, _) in &inside {
                    consider(rel, true);
                }
                // Not a folder: a file, if it is there.
                if inside.is_empty() && b.exists(r)? {
                    consider(&r.to_string(), true);
                }
                // The folders above it, inside the site, may be another site's.
                let parts: Vec<&str> = r.split('/').collect();
                above.extend((1..parts.len()).map(|n| parts[..n].join("/")));
            }
            if !gone.is_empty() {
                let keys: Vec<Key> = above.iter().map(|rel| b.key(rel)).collect();
                let found: HashSet<Key> = b.with_record(keys, RECORD)?.into_iter().collect();
                nested.extend(above.into_iter().filter(|rel| found.contains(&b.key(rel))));
            }
        }
        gone.retain(|rel| !nested.iter().any(|n| rel.starts_with(&format!("{n}/"))));
        // A graph's manifest goes before the files it names, as it came after them: a reader
        // who opens a graph being deleted finds it gone, not a manifest of files gone.
        let (manifests, files): (Vec<String>, Vec<String>) = gone.into_iter().partition(|rel| phase(rel) == 1);
        b.delete_all(&manifests)?;
        b.delete_all(&files)?;
        if self.tree != self.next_tree {
            b.put(TREE, self.next_tree.to_string().into_bytes())?;
        }
        Ok(Some(self.next_tree))
    }

    /// Which of `rels` the bucket already holds with the bytes this build wrote.
    fn same_in_bucket(&self, rels: &[&String]) -> Result<HashSet<String>, OutputError> {
        let b = &self.bucket;
        let same = b.rt.block_on(async {
            futures::stream::iter(rels.iter().map(|rel| async move {
                let path = self.spool.join(rel.as_str());
                let ours = std::fs::read(&path).map_err(BucketError::local(path))?;
                // An object larger than this build's file is not the same: it is not read.
                let theirs = match b.fetch(rel, ours.len() as u64).await {
                    Err(BucketError::TooLarge { .. }) => None,
                    other => other?,
                };
                Ok::<_, BucketError>(theirs.is_some_and(|(theirs, _)| theirs == ours).then(|| rel.to_string()))
            }))
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<Option<String>>>()
            .await
        });
        Ok(same?.into_iter().flatten().collect())
    }

}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.spool);
    }
}

/// How long a publish lock lives without being renewed; its holder renews it every quarter of
/// that, so a lock left by a publisher that died (on any machine) is taken over after it.
const LEASE: std::time::Duration = std::time::Duration::from_secs(120);

/// The publish lock of a bucket, held (and renewed) while open.
pub struct Lock {
    bucket: Arc<Bucket>,
    /// Tells the renewing thread to stop.
    stop: Arc<(Mutex<bool>, std::sync::Condvar)>,
    renewer: Option<std::thread::JoinHandle<()>>,
    /// Set when a renewal failed: another build took the lock over.
    lost: Arc<std::sync::atomic::AtomicBool>,
}

/// Who holds a lock, as its object says.
struct Holder {
    token: String,
    host: String,
    pid: i32,
    since: String,
    renewed: Option<jiff::Timestamp>,
    /// The holder's boot, PID namespace and start time, when it recorded them (a flamesite
    /// before issue 45 did not).
    id: Option<Identity>,
}

/// What tells a process from every other on a host: the boot of the machine, the PID
/// namespace its pid is a number of (two containers on one CI runner have the same host name
/// and number their processes each from 1), and its start time (a pid is reused).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    /// `/proc/sys/kernel/random/boot_id`.
    boot: String,
    /// The device and inode of `/proc/self/ns/pid`, `DEV:INO`.
    pidns: String,
    /// Field 22 of `/proc/self/stat`: clock ticks from the boot to the process's start.
    start: u64,
}

impl Identity {
    /// This process's, or `None` when `/proc` does not say (not Linux, no `/proc`, or a
    /// `/proc` mounted for another PID namespace, whose `self` is not this pid): then no lock
    /// is ever taken for one of this machine's, and a holder is let go only by its lease.
    fn mine() -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?.trim().to_string();
        let ns = std::fs::metadata("/proc/self/ns/pid").ok()?;
        let (pid, start) = stat_of("self")?;
        (!boot.is_empty() && !boot.contains(char::is_whitespace) && pid == std::process::id()).then(|| Identity { boot, pidns: format!("{}:{}", ns.dev(), ns.ino()), start })
    }
}

/// The pid and start time (field 22) that `/proc/PROCESS/stat` gives.
fn stat_of(process: &str) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{process}/stat")).ok()?;
    let pid = stat.split(' ').next()?.parse().ok()?;
    // The command's name, field 2, is in parentheses and may hold spaces and `)`: the fields
    // after it are counted from the last `)`, field 3 first.
    let start = stat.rsplit_once(')')?.1.split_whitespace().nth(22 - 3)?.parse().ok()?;
    Some((pid, start))
}

impl Holder {
    fn parse(text: &str) -> Holder {
        let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string())).unwrap_or_default();
        let id = match (field("boot "), field("pidns "), field("start ").parse()) {
            (boot, pidns, Ok(start)) if !boot.is_empty() && !pidns.is_empty() => Some(Identity { boot, pidns, start }),
            _ => None,
        };
        Holder {
            token: field("token "),
            host: field("host "),
            pid: field("pid ").parse().unwrap_or(0),
            since: field("since "),
            renewed: field("renewed ").parse().ok(),
            id,
        }
    }

    /// Whether the lock is no longer held: not renewed within the lease, or held by a process
    /// that is gone and known to be of this machine, this boot and this PID namespace (a
    /// killed publish, taken over at once). A holder in another PID namespace on the same host
    /// (another container of one CI runner) has a pid that means nothing here, so it keeps the
    /// lock until its lease lapses.
    fn gone(&self, now: jiff::Timestamp, me: Option<&Identity>) -> bool {
        let expired = self.renewed.is_none_or(|r| now.duration_since(r).as_secs() > LEASE.as_secs() as i64);
        expired || self.here(me) && self.dead()
    }

    /// Whether the holder said it is a process of this machine, this boot and this PID
    /// namespace: then its pid names a process here.
    fn here(&self, me: Option<&Identity>) -> bool {
        let same = |id: &Identity, me: &Identity| id.boot == me.boot && id.pidns == me.pidns;
        self.host == host() && self.pid > 0 && matches!((&self.id, me), (Some(id), Some(me)) if same(id, me))
    }

    /// Whether the holder's process (of this PID namespace) is gone: no process has its pid, or
    /// the one that has it started at another time (the pid was reused).
    fn dead(&self) -> bool {
        match (stat_of(&self.pid.to_string()), &self.id) {
            (Some((_, start)), Some(id)) => start != id.start,
            // SAFETY: kill with signal 0 only asks whether the process exists.
            _ => (unsafe { libc::kill(self.pid, 0) }) != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH),
        }
    }

    /// Where the holder is, for the message that refuses the lock: after its pid.
    fn whereabouts(&self, me: Option<&Identity>) -> &'static str {
        match (&self.id, me) {
            _ if self.host != host() => "",
            (Some(id), Some(me)) if id.boot != me.boot => " of another boot of this machine",
            (Some(id), Some(me)) if id.pidns != me.pidns => " in another PID namespace of this host (another container?)",
            (Some(_), Some(_)) => "",
            (None, _) => " (a build that did not record its PID namespace: it may be in another container of this host)",
            (Some(_), None) => " (this build cannot tell its own PID namespace from /proc)",
        }
    }
}

impl Lock {
    /// Takes the bucket's publish lock with a conditional write: made when there is none, or
    /// taken over (a write conditional on the version read) when its holder is gone. Refused
    /// while another publisher holds it.
    pub fn take(bucket: Arc<Bucket>) -> Result<Lock, OutputError> {
        Lock::take_renewing(bucket, LEASE / 4)
    }

    /// [`Lock::take`], renewing the lock every `every`.
    fn take_renewing(bucket: Arc<Bucket>, every: std::time::Duration) -> Result<Lock, OutputError> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let token = format!("{}-{nanos}", std::process::id());
        let since = jiff::Timestamp::now();
        let me = Identity::mine();
        let id = me.as_ref().map_or_else(String::new, |i| format!("boot {}\npidns {}\nstart {}\n", i.boot, i.pidns, i.start));
        let body = move || format!("token {token}\nhost {}\npid {}\nsince {since}\nrenewed {}\n{id}", host(), std::process::id(), jiff::Timestamp::now()).into_bytes();
        let ours = Holder::parse(&String::from_utf8_lossy(&body())).token;
        let mut version = None;
        for _ in 0..3 {
            if let Some(v) = bucket.create_versioned(LOCK, body())? {
                version = Some(v);
                break;
            }
            let Some((held, v)) = bucket.get_versioned(LOCK)? else { continue };
            let holder = Holder::parse(&String::from_utf8_lossy(&held));
            if holder.token == ours {
                // Ours: the write went through, its answer was lost, and the retry was refused.
                version = Some(v);
                break;
            }
            if !holder.gone(jiff::Timestamp::now(), me.as_ref()) {
                return Err(OutputError::Bucket(format!(
                    "another flamesite build is publishing to {} (host {}, pid {}{}, since {}, renewed {}); wait for it to finish (a publisher that stopped lets go of it {} s after it last renewed it)",
                    bucket.url(),
                    holder.host,
                    holder.pid,
                    holder.whereabouts(me.as_ref()),
                    holder.since,
                    holder.renewed.map_or_else(|| "never".to_string(), |r| r.to_string()),
                    LEASE.as_secs()
                )));
            }
            if let Some(v) = bucket.update(LOCK, body(), v)? {
                version = Some(v);
                break;
            }
        }
        let Some(mut version) = version else {
            return Err(OutputError::Bucket(format!("{}/{LOCK}: could not take the publish lock: it changed hands while this build tried", bucket.url())));
        };
        let stop = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let renewer = {
            let (bucket, stop, lost) = (bucket.clone(), stop.clone(), lost.clone());
            std::thread::Builder::new()
                .name("flamesite-lock".into())
                .spawn(move || loop {
                    let (stopped, wake) = &*stop;
                    let guard = stopped.lock().expect("no panic while holding it");
                    let (guard, _) = wake.wait_timeout_while(guard, every, |s| !*s).expect("no panic while holding it");
                    if *guard {
                        return;
                    }
                    drop(guard);
                    match bucket.update(LOCK, body(), version.clone()) {
                        Ok(Some(v)) => version = v,
                        // A failed request is tried again at the next turn; a refused one
                        // means another build took the lock over.
                        Ok(None) => {
                            lost.store(true, std::sync::atomic::Ordering::SeqCst);
                            return;
                        }
                        Err(_) => {}
                    }
                })
                .ok()
        };
        Ok(Lock { bucket, stop, renewer, lost })
    }

    /// An error once another build has taken the lock over (this one stalled for longer than
    /// the lease): called before each step that writes the site or its record.
    pub fn held(&self) -> Result<(), OutputError> {
        if self.lost.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(OutputError::Bucket(format!(
                "the publish lock of {} was taken over by another build while this one stalled (over {} s); stopped before writing more",
                self.bucket.url(),
                LEASE.as_secs()
            )));
        }
        Ok(())
    }

    /// Ends a publish once the site and the build's record are uploaded: the marker of a
    /// publish under way goes.
    pub fn finish(&self) -> Result<(), OutputError> {
        self.held()?;
        Ok(self.bucket.delete(DIRTY)?)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let (stopped, wake) = &*self.stop;
        *stopped.lock().expect("no panic while holding it") = true;
        wake.notify_all();
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
        if !self.lost.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = self.bucket.delete(LOCK);
        }
    }
}

/// This machine's name, as the lock records it.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Brings the build state's file `name` in the local cache folder `dir` to the one the bucket
/// keeps (`.flamesite/cache/NAME.zst`), or to none. The header is pulled when a build opens,
/// the data only when the build needs it (not when nothing changed); the cache's entries are
/// read one by one when needed ([`Mirror::entry`]).
///
/// A state that does not unpack, or whose object or unpacked bytes are over
/// [`STATE_BUDGET`] (a zstd bomb of 218 kB unpacks to gigabytes), is no state: the build starts
/// afresh from the listings, with the warning returned. It is downloaded to a file and unpacked
/// to one as it streams, so a hostile one costs no memory and at most the budget of disk.
pub fn pull_state(bucket: &Bucket, dir: &Path, name: &str) -> Result<Option<Warning>, BucketError> {
    use std::io::{Read, Write};
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let key = format!("{RECORD}/cache/{name}.zst");
    let packed = dir.join(format!(".{name}.zst.{}.tmp", std::process::id()));
    let refused = |why: String| {
        let _ = std::fs::remove_file(&path);
        Ok(Some(Warning { path: format!("{}/{key}", bucket.url()), message: format!("{why}; the build state is not read: the build starts afresh from the published site") }))
    };
    let downloaded = bucket.rt.block_on(bucket.download_to(&key, &packed, STATE_BUDGET));
    match downloaded {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(BucketError::TooLarge { size, budget, .. }) => return refused(format!("is {size} bytes, more than the {budget} a build state may be")),
        Err(e) => return Err(e),
    }
    let unpacked = (|| {
        let decode = |e: std::io::Error| Some(format!("does not unpack ({e})"));
        let file = std::fs::File::open(&packed).map_err(BucketError::local(&packed))?;
        let mut decoder = match zstd::stream::read::Decoder::new(file) {
            Ok(d) => d,
            Err(e) => return Ok(decode(e)),
        };
        let mut out = std::fs::File::create(&path).map_err(BucketError::local(&path))?;
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        loop {
            let n = match decoder.read(&mut buf) {
                Ok(0) => return Ok(None),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Ok(decode(e)),
            };
            total += n as u64;
            if total > STATE_BUDGET {
                return Ok(Some(format!("unpacks to more than the {STATE_BUDGET} bytes a build state may be")));
            }
            out.write_all(&buf[..n]).map_err(BucketError::local(&path))?;
        }
    })();
    let _ = std::fs::remove_file(&packed);
    match unpacked {
        Ok(None) => Ok(None),
        Ok(Some(why)) => refused(why),
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            Err(e)
        }
    }
}

/// Brings the bucket's record (`.flamesite/cache/`) to the local cache folder's after a build:
/// the records of the entries it made are uploaded (never their graph files, which the site
/// holds), those it removed deleted (and when it pruned the cache to the entries it uses,
/// every other), and the state last.
pub fn push_record(bucket: &Bucket, dir: &Path, changes: &super::record::Changes) -> Result<(), BucketError> {
    let prefix = format!("{RECORD}/cache");
    let upload: Vec<(String, PathBuf)> = changes
        .made
        .iter()
        .map(|key| (format!("{prefix}/{key}/entry.json"), dir.join(key).join("entry.json")))
        .filter(|(_, path)| path.is_file())
        .collect();
    bucket.upload(&upload)?;
    let mut gone: BTreeSet<String> = changes.removed.iter().filter(|k| !dir.join(k).join("entry.json").is_file()).cloned().collect();
    if let Some(kept) = &changes.kept {
        for (rel, _) in bucket.list(&prefix)? {
            let key = rel[prefix.len() + 1..].split('/').next().unwrap_or("");
            if super::record::is_key(key) && !kept.contains(key) {
                gone.insert(key.to_string());
            }
        }
    }
    bucket.delete_all(&gone.iter().map(|k| format!("{prefix}/{k}/entry.json")).collect::<Vec<_>>())?;
    // The data before the header that names it, as on disk; compressed (a state is mostly
    // paths and names, and every build reads it).
    for name in [super::record::DATA, super::record::STATE] {
        let path = dir.join(name);
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let packed = zstd::encode_all(bytes.as_slice(), 9).map_err(BucketError::local(&path))?;
        bucket.put(&format!("{prefix}/{name}.zst"), packed)?;
    }
    Ok(())
}

/// Stores the entries `keys` of the local cache folder `dir` in the bucket's record with their
/// graph files (`.flamesite/cache/KEY/files/…`), the files before the record that names them:
/// what a shard of a build decoded, for the build that publishes.
pub fn push_entries(bucket: &Bucket, dir: &Path, keys: &[String]) -> Result<(), BucketError> {
    let mut files = Vec::new();
    let mut records = Vec::new();
    for key in keys.iter().filter(|k| super::record::is_key(k)) {
        let entry = dir.join(key);
        for e in walkdir::WalkDir::new(entry.join("files")).sort_by_file_name().into_iter().flatten().filter(|e| e.file_type().is_file()) {
            let rel = e.path().strip_prefix(&entry).expect("inside").to_string_lossy().into_owned();
            files.push((format!("{RECORD}/cache/{key}/{rel}"), e.path().to_path_buf()));
        }
        records.push((format!("{RECORD}/cache/{key}/entry.json"), entry.join("entry.json")));
    }
    bucket.upload(&files)?;
    bucket.upload(&records)
}

/// The published site in a bucket as the build reads it: a folder's files are downloaded, once,
/// into `mirror` when first asked for.
pub struct Mirror {
    bucket: Arc<Bucket>,
    dir: PathBuf,
    /// The files downloaded (or tried), and the folders downloaded whole (with a `/` after).
    fetched: Mutex<HashSet<String>>,
    /// Why reads back failed (the object's address and the server's error), in order: a file
    /// that did not come is missing from the folder, and a reader then finds no file there,
    /// so the build tells these, not the local path (see [`Mirror::failures`]).
    failed: Mutex<Vec<String>>,
}

impl Mirror {
    /// A mirror of `bucket` in the folder `dir` (made empty).
    pub fn new(bucket: Arc<Bucket>, dir: PathBuf) -> Mirror {
        let _ = std::fs::remove_dir_all(&dir);
        Mirror { bucket, dir, fetched: Mutex::new(HashSet::new()), failed: Mutex::new(Vec::new()) }
    }

    /// Where the site's folder `url` is on this machine, with the files `files` of it (relative
    /// to it) downloaded first when they were not, or when not known, every file a listing
    /// gives. A reader that needs some files of a folder (a history its runs' names) does not
    /// download the rest, and a later reader of the others downloads only those.
    pub fn folder(&self, url: &str, files: Option<&[String]>) -> PathBuf {
        let url = url.trim_end_matches('/');
        // A folder that cannot be read is one whose files are missing: the cache then finds no
        // file, and the profile is decoded again.
        match files {
            Some(files) => {
                let mut fetched = self.fetched.lock().expect("no panic while holding it");
                let new: Vec<String> = files.iter().map(|f| format!("{url}/{f}")).filter(|f| fetched.insert(f.clone())).collect();
                drop(fetched);
                if !new.is_empty() {
                    let got = self.bucket.download_files(&new, &self.dir, SITE_FILE_BUDGET);
                    self.note(got);
                }
            }
            None => {
                if self.fetched.lock().expect("no panic while holding it").insert(format!("{url}/")) {
                    let got = self.bucket.download(url, &self.dir, SITE_FILE_BUDGET, |_, _| true);
                    self.note(got.map(|_| ()));
                }
            }
        }
        self.dir.join(url)
    }
}

impl Mirror {
    /// The record of cache entry `key` the bucket keeps.
    pub fn entry(&self, key: &str) -> Option<Vec<u8>> {
        if !super::record::is_key(key) {
            return None;
        }
        let got = self.bucket.get_within(&format!("{RECORD}/cache/{key}/entry.json"), super::record::ENTRY_BUDGET);
        match got {
            Ok(bytes) => bytes,
            Err(e) => {
                self.note(Err(e));
                None
            }
        }
    }

    /// Keeps why a read back failed.
    fn note(&self, got: Result<(), BucketError>) {
        if let Err(e) = got {
            self.failed.lock().expect("no panic while holding it").push(e.to_string());
        }
    }

    /// Why reads back from the bucket failed so far, each naming the object and the server's
    /// error.
    pub fn failures(&self) -> Vec<String> {
        self.failed.lock().expect("no panic while holding it").clone()
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_come_after_the_files_they_use_and_indexes_last() {
        assert_eq!(phase("p/a/g/cpu/index.json"), 0);
        assert_eq!(phase("p/a/g/cpu/c/0-0.bin.gz"), 0);
        assert_eq!(phase("p/a/g/cpu/n/0.json.gz"), 0);
        assert_eq!(phase("static/main.js"), 0);
        assert_eq!(phase("p/a/g/cpu/manifest.json"), 1);
        assert_eq!(phase("p/a/g/cpu/manifest.json.gz"), 1);
        assert_eq!(phase("p/a/index.html"), 2);
        assert_eq!(phase("s/web/index.html"), 2);
        assert_eq!(phase("s/web/index.json"), 3);
        assert_eq!(phase("index.json"), 3);
        assert_eq!(phase("feed.xml"), 3);
        assert_eq!(phase("s/web/feed.xml"), 3);
        assert_eq!(phase("index.html"), 3);
    }

    #[test]
    fn a_removal_outside_the_site_is_refused_and_nothing_is_deleted() {
        let bucket = Arc::new(Bucket::in_memory());
        // A user's object at the prefix (and one beside it), and a page of the site.
        bucket.put("robots.txt", b"theirs".to_vec()).unwrap();
        bucket.put("p/old/index.html", b"a page".to_vec()).unwrap();
        let lock = Lock::take(bucket.clone()).unwrap();
        let staging = Staging::new(bucket.clone(), &lock).unwrap();
        // Paths a tampered record of the build state can give.
        for rel in ["/////robots.txt", "/robots.txt", "../robots.txt", "p/../robots.txt", "", "./robots.txt", ".flamesite/tree"] {
            let e = staging.remove(rel).unwrap_err().to_string();
            assert!(e.contains("not a path inside the site") && e.contains("remove the cache folder"), "{rel}: {e}");
        }
        // A run's folder, with or without its final `/`, is the site's.
        staging.remove("p/old/").unwrap();
        staging.commit(false).unwrap();
        assert_eq!(bucket.get("robots.txt").unwrap().as_deref(), Some(&b"theirs"[..]));
        assert!(bucket.get("p/old/index.html").unwrap().is_none());
    }

    #[test]
    fn objects_of_another_site_inside_this_ones_folders_are_never_deleted() {
        let bucket = Arc::new(Bucket::in_memory());
        // A site whose tree is known, and another site inside one of its folders (as a
        // flamesite before issue 45 let one be published there).
        bucket.put("index.json", br#"{"format":"flamesite-index","version":3,"series":[],"names":{}}"#.to_vec()).unwrap();
        bucket.put(TREE, b"7".to_vec()).unwrap();
        let inner = ["p/zz/index.html", "p/zz/p/a/index.html", "p/zz/.flamesite/tree", "p/zz/.flamesite/cache/state.zst"];
        for rel in inner.iter().chain(&["p/old/index.html", "p/stale/index.html"]) {
            bucket.put(rel, b"x".to_vec()).unwrap();
        }
        let lock = Lock::take(bucket.clone()).unwrap();
        // Removals the build state names: the other site's folder, and a folder inside it.
        let staging = Staging::new(bucket.clone(), &lock).unwrap();
        for rel in ["p/zz/", "p/zz/p/a/", "p/zz/index.html", "p/old/"] {
            staging.remove(rel).unwrap();
        }
        staging.commit(false).unwrap();
        lock.finish().unwrap();
        assert!(bucket.get("p/old/index.html").unwrap().is_none(), "the site's own removal is made");
        // A full publish, which sweeps the site's folders.
        let staging = Staging::new(bucket.clone(), &lock).unwrap();
        staging.set_ours(["p".to_string()]);
        staging.write("p/new/index.html", b"y").unwrap();
        staging.commit(true).unwrap();
        assert!(bucket.get("p/stale/index.html").unwrap().is_none(), "the sweep removes the site's stale objects");
        for rel in inner {
            assert!(bucket.get(rel).unwrap().is_some(), "{rel} of the site inside was deleted");
        }
    }

    /// The lock's `renewed` time, as its object says.
    fn renewed(bucket: &Bucket) -> Option<jiff::Timestamp> {
        bucket.get(LOCK).unwrap().and_then(|b| Holder::parse(&String::from_utf8_lossy(&b)).renewed)
    }

    /// Waits (up to 30 s, to fail) until `ready` holds.
    fn until(what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !ready() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_held_lock_is_renewed_so_a_long_publish_keeps_it() {
        let bucket = Arc::new(Bucket::in_memory());
        let lock = Lock::take_renewing(bucket.clone(), std::time::Duration::from_millis(20)).unwrap();
        let first = renewed(&bucket).expect("the lock says when it was renewed");
        // Renewed again, and again: its time moves on while the publish goes on.
        let mut seen = first;
        for turn in 0..2 {
            until(&format!("the lock was not renewed (turn {turn})"), || renewed(&bucket).is_some_and(|r| r > seen));
            seen = renewed(&bucket).unwrap();
        }
        assert!(lock.held().is_ok());
        // A second publisher is refused: the lock is fresh.
        assert!(Lock::take(bucket.clone()).is_err());
        drop(lock);
        assert!(bucket.get(LOCK).unwrap().is_none(), "let go of when dropped");
    }

    #[test]
    fn a_lock_whose_pid_now_names_another_process_is_taken_over_at_once() {
        let bucket = Arc::new(Bucket::in_memory());
        let me = Identity::mine().expect("/proc says who this process is");
        let held = |start: u64| {
            let now = jiff::Timestamp::now();
            format!("token other\nhost {}\npid {}\nsince {now}\nrenewed {now}\nboot {}\npidns {}\nstart {start}\n", host(), std::process::id(), me.boot, me.pidns)
        };
        // Held by a live process of this machine and namespace (this one): refused.
        bucket.put(LOCK, held(me.start).into_bytes()).unwrap();
        let err = Lock::take(bucket.clone()).err().expect("a live holder keeps its lock").to_string();
        assert!(err.contains(&format!("(host {}, pid {}, since", host(), std::process::id())), "{err}");
        // The same pid, but the holder started at another time: it is gone, its pid reused.
        bucket.put(LOCK, held(me.start + 1).into_bytes()).unwrap();
        let lock = Lock::take(bucket.clone()).expect("the lock of a process that is gone is taken over");
        assert!(lock.held().is_ok());
    }

    #[test]
    fn a_lock_taken_over_by_another_build_stops_this_one_at_its_next_step() {
        let bucket = Arc::new(Bucket::in_memory());
        let lock = Lock::take_renewing(bucket.clone(), std::time::Duration::from_millis(20)).unwrap();
        assert!(lock.held().is_ok());
        // Another build took it over (it found this one stalled past the lease).
        bucket.put(LOCK, b"token other\nhost elsewhere\npid 1\nsince x\nrenewed 2026-01-01T00:00:00Z\n".to_vec()).unwrap();
        until("the renewal did not notice the lock changed hands", || lock.held().is_err());
        let err = lock.held().unwrap_err().to_string();
        assert!(err.contains("taken over by another build"), "{err}");
        drop(lock);
        assert!(bucket.get(LOCK).unwrap().unwrap().starts_with(b"token other"), "the other build's lock stays");
    }
}
