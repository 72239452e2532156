//! The object-store client that both doors share: profiles read from a bucket
//! (`ingest::remote`) and a site published to one (`output::bucket`). S3 and S3-compatible
//! stores, Google Cloud Storage, Azure Blob Storage and local files, through the
//! `object_store` crate: every read within a budget, listings asked again when their answer
//! is cut off, and errors that name the object by its address, never with credentials.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use object_store::list::PaginatedListStore;
use object_store::path::Path as Key;
use object_store::{Attribute, Attributes, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::BucketError;

/// Uploads and deletes under way at once.
pub(crate) const CONCURRENCY: usize = 16;

/// How many times a listing is asked for when its answer is cut off. object_store retries a
/// request that fails and a download whose body is cut off, but not a listing's body: one
/// connection dropped half-way through the answer failed the whole publish, which lists the
/// site to check it. A listing only reads, so it is asked again.
const LIST_ATTEMPTS: u32 = 5;

/// A listing made by `list`, asked for again (up to [`LIST_ATTEMPTS`] times in all, after
/// 200 ms, then twice as long each time) while its answer is cut off on its way.
async fn listing<T, F, Fut>(mut list: F) -> Result<T, object_store::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, object_store::Error>>,
{
    let mut attempt = 1;
    loop {
        match list().await {
            Err(e) if cut_off(&e) && attempt < LIST_ATTEMPTS => {
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// Whether `e` is a listing's answer cut off on its way, after its head came (the connection
/// reset, dropped or timed out while its body was read): worth asking again. A request that
/// failed is not (object_store has retried it already, for as long as its retry settings let
/// it: a server down is not asked five times as long), nor an answer the server gave (an HTTP
/// status, an XML it wrote). object_store's error types for this are private to it; its
/// message for a body cut off is the same in its S3, GCS and Azure clients ("Error getting
/// list response body"), and the transport error below it says how it failed.
fn cut_off(e: &object_store::Error) -> bool {
    use object_store::client::{HttpError, HttpErrorKind};
    if !e.to_string().contains("list response body") {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(http) = err.downcast_ref::<HttpError>() {
            return matches!(http.kind(), HttpErrorKind::Request | HttpErrorKind::Timeout | HttpErrorKind::Interrupted);
        }
        source = err.source();
    }
    false
}

/// A site's place in object storage: a store and a prefix in it.
pub struct Bucket {
    store: Box<dyn ObjectStore>,
    /// The same store's page-by-page listing, where it has one (S3, GCS, Azure): the input's
    /// listing goes through it, so that one key object_store cannot address fails only itself.
    paged: Option<Arc<dyn PaginatedListStore>>,
    root: Key,
    url: String,
    pub(crate) rt: tokio::runtime::Runtime,
}

/// An object as a listing gives it.
pub struct Listed {
    /// Its path relative to the prefix listed under the bucket's root.
    pub rel: String,
    /// Size in bytes.
    pub size: u64,
    /// Last-modified time, nanoseconds since the epoch.
    pub modified: i64,
    /// A hash of its ETag.
    pub tag: u64,
    /// Its key, as listed: what reads it.
    pub key: Key,
}

/// Makes ring the process's TLS provider, which the clients' rustls uses (Cargo.toml says why):
/// before the first client is made, by [`Bucket::open`] and by any other code that makes an
/// object_store client; a later call finds it set and changes nothing.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Bucket {
    /// Opens the store that `url` names, with credentials, region and endpoint as the service's
    /// own tools read them from the environment (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`,
    /// `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, …). `what` it is (`"input"`,
    /// `"output"`) begins its errors.
    pub fn open(url: &str, what: &str) -> Result<Bucket, BucketError> {
        let bad = |e: &dyn std::fmt::Display| BucketError::Open { what: what.to_string(), url: url.to_string(), reason: e.to_string() };
        install_tls_provider();
        let parsed = url::Url::parse(url).map_err(|e| bad(&e))?;
        let (scheme, path) = object_store::ObjectStoreScheme::parse(&parsed).map_err(|e| bad(&e))?;
        use object_store::ObjectStoreScheme as S;
        fn both<T: ObjectStore + PaginatedListStore + Clone>(store: T) -> (Box<dyn ObjectStore>, Option<Arc<dyn PaginatedListStore>>) {
            (Box::new(store.clone()), Some(Arc::new(store)))
        }
        let (store, paged) = match scheme {
            S::AmazonS3 => both(object_store::aws::AmazonS3Builder::from_env().with_url(url).build().map_err(|e| bad(&e))?),
            S::GoogleCloudStorage => both(object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url).build().map_err(|e| bad(&e))?),
            S::MicrosoftAzure => both(object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url).build().map_err(|e| bad(&e))?),
            S::Local => (Box::new(object_store::local::LocalFileSystem::new()) as Box<dyn ObjectStore>, None),
            other => return Err(bad(&format!("{other:?} is not a store flamesite publishes to (s3://, gs://, az://, file://)"))),
        };
        let root = Key::parse(path).map_err(|e| bad(&e))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("flamesite-bucket")
            .build()
            .map_err(|e| bad(&e))?;
        // Credentials never appear in messages: only the scheme, host and path.
        let shown = format!("{}://{}{}", parsed.scheme(), parsed.host_str().unwrap_or(""), parsed.path());
        Ok(Bucket { store, paged, root, url: shown.trim_end_matches('/').to_string(), rt })
    }

    /// A bucket in memory, for the unit tests.
    #[cfg(test)]
    pub(crate) fn in_memory() -> Bucket {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        Bucket { store: Box::new(object_store::memory::InMemory::new()), paged: None, root: Key::parse("site").unwrap(), url: "memory://site".into(), rt }
    }

    /// The bucket's address as messages give it.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub(crate) fn key(&self, rel: &str) -> Key {
        let mut key = self.root.clone();
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            // The part as it is, as the site's links name it: object_store's own conversion
            // percent-encodes `~`, `[`, `#`, `%` and others, which put a site file named so (one
            // of `static/`) under another key than its links. A part it cannot take as it is (a
            // control character, `.` or `..`) is encoded: no link of the site names one.
            key = match object_store::path::PathPart::parse(part) {
                Ok(p) => key.clone().join(p),
                Err(_) => key.clone().join(part),
            };
        }
        key
    }

    fn err(&self, rel: &str, source: object_store::Error) -> BucketError {
        BucketError::Store { object: format!("{}/{rel}", self.url), source }
    }

    fn too_large(&self, rel: &str, size: u64, budget: u64) -> BucketError {
        BucketError::TooLarge { object: format!("{}/{rel}", self.url), size, budget }
    }

    /// The object at `rel`, when there is one, as a GET answers it: refused when its length
    /// (the GET's `Content-Length`) is over `budget`, before its body is read.
    async fn open_object(&self, rel: &str, budget: u64) -> Result<Option<object_store::GetResult>, BucketError> {
        match self.store.get(&self.key(rel)).await {
            Ok(r) if r.meta.size > budget => Err(self.too_large(rel, r.meta.size, budget)),
            Ok(r) => Ok(Some(r)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(rel, e)),
        }
    }

    /// The object at `rel` with its version, or `None` when there is none: the one read of
    /// an object whole that every other goes through. One larger than `budget` is an error
    /// ([`BucketError::TooLarge`]) before its body is read, and its body is read within it (a
    /// server whose length was wrong), so a hostile object costs no more memory than that.
    pub(crate) async fn fetch(&self, rel: &str, budget: u64) -> Result<Option<(Vec<u8>, object_store::UpdateVersion)>, BucketError> {
        let Some(r) = self.open_object(rel, budget).await? else { return Ok(None) };
        let version = object_store::UpdateVersion { e_tag: r.meta.e_tag.clone(), version: r.meta.version.clone() };
        let mut bytes = Vec::with_capacity(r.meta.size as usize);
        let mut body = r.into_stream();
        while let Some(piece) = body.next().await {
            let piece = piece.map_err(|e| self.err(rel, e))?;
            if (bytes.len() + piece.len()) as u64 > budget {
                return Err(self.too_large(rel, (bytes.len() + piece.len()) as u64, budget));
            }
            bytes.extend_from_slice(&piece);
        }
        Ok(Some((bytes, version)))
    }

    /// Downloads the object at `rel` into the file `path` as its body comes (nothing of it is
    /// held in memory), within `budget` bytes as [`Bucket::fetch`] reads: false when there is
    /// none. The file is removed when the download fails.
    pub(crate) async fn download_to(&self, rel: &str, path: &Path, budget: u64) -> Result<bool, BucketError> {
        let Some(r) = self.open_object(rel, budget).await? else { return Ok(false) };
        self.body_to_file(rel, r, path, budget).await.map(|()| true)
    }

    /// Writes the body of the object `rel` that `r` answers into the file `path` as it comes,
    /// within `budget` bytes; the file is removed when that fails.
    async fn body_to_file(&self, rel: &str, r: object_store::GetResult, path: &Path, budget: u64) -> Result<(), BucketError> {
        use std::io::Write;
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(BucketError::local(p))?;
        }
        let mut file = std::fs::File::create(path).map_err(BucketError::local(path))?;
        let mut body = r.into_stream();
        let mut got = 0u64;
        let copied = async {
            while let Some(piece) = body.next().await {
                let piece = piece.map_err(|e| self.err(rel, e))?;
                got += piece.len() as u64;
                if got > budget {
                    return Err(self.too_large(rel, got, budget));
                }
                file.write_all(&piece).map_err(BucketError::local(path))?;
            }
            Ok(())
        }
        .await;
        if copied.is_err() {
            let _ = std::fs::remove_file(path);
        }
        copied
    }

    /// The object at `rel`, or `None` when there is none; one larger than `budget` is an error.
    pub fn get_within(&self, rel: &str, budget: u64) -> Result<Option<Vec<u8>>, BucketError> {
        Ok(self.rt.block_on(self.fetch(rel, budget))?.map(|(bytes, _)| bytes))
    }

    /// A small object of the record (the lock, the tree's identity: a few lines, within
    /// [`SMALL_OBJECT_BUDGET`]), or `None` when there is none.
    pub fn get(&self, rel: &str) -> Result<Option<Vec<u8>>, BucketError> {
        self.get_within(rel, SMALL_OBJECT_BUDGET)
    }

    /// A small object of the record with its version, or `None` when there is none.
    pub fn get_versioned(&self, rel: &str) -> Result<Option<(Vec<u8>, object_store::UpdateVersion)>, BucketError> {
        self.rt.block_on(self.fetch(rel, SMALL_OBJECT_BUDGET))
    }

    /// Every object under the folder `prefix` with its size, last-modified time (nanoseconds
    /// since the epoch) and a hash of its ETag, sorted by path.
    pub fn list_meta(&self, prefix: &str) -> Result<Vec<Listed>, BucketError> {
        let key = self.key(prefix);
        let mut out: Vec<Listed> = self
            .rt
            .block_on(listing(|| self.store.list(Some(&key)).map_ok(|meta| self.listed(meta)).try_collect()))
            .map_err(|e| self.err(prefix, e))?;
        out.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok(out)
    }

    fn listed(&self, meta: object_store::ObjectMeta) -> Listed {
        let rel: Vec<String> = meta.location.prefix_match(&self.root).map(|parts| parts.map(|p| p.as_ref().to_string()).collect()).unwrap_or_default();
        let tag = blake3::hash(meta.e_tag.as_deref().unwrap_or("").as_bytes());
        Listed {
            rel: rel.join("/"),
            size: meta.size,
            modified: meta.last_modified.timestamp_nanos_opt().unwrap_or(0),
            tag: u64::from_le_bytes(tag.as_bytes()[..8].try_into().expect("eight bytes")),
            key: meta.location,
        }
    }

    /// Every object under the root, as [`Bucket::list_meta`] gives them, and the keys it cannot
    /// read, each with why. Any UTF-8 is a key to S3, but object_store addresses no key with a
    /// control character (a newline), a part that is `.` or `..`, or an empty part (`a//b`), and
    /// fails the whole page of a listing that holds one: the page is listed again in smaller
    /// pages until that key is alone, which is then passed over, so that one such object does
    /// not fail the build.
    pub fn list_readable(&self) -> Result<(Vec<Listed>, Vec<(String, String)>), BucketError> {
        use object_store::list::PaginatedListOptions;
        use object_store::path::Error as PathError;
        let Some(paged) = &self.paged else { return Ok((self.list_meta("")?, Vec::new())) };
        let prefix = (!self.root.as_ref().is_empty()).then(|| format!("{}/", self.root));
        let (mut objects, mut unreadable) = (Vec::new(), Vec::<(String, String)>::new());
        // Where the next page starts (a page token, or after a key), and its size (None: the
        // store's own, 1000 for S3).
        let (mut token, mut after, mut size): (Option<String>, Option<String>, Option<usize>) = (None, None, None);
        self.rt.block_on(async {
            loop {
                let opts = PaginatedListOptions { page_token: token.clone(), offset: after.clone(), max_keys: size, ..Default::default() };
                match listing(|| paged.list_paginated(prefix.as_deref(), opts.clone())).await {
                    Ok(page) => {
                        objects.extend(page.result.objects.into_iter().map(|m| self.listed(m)));
                        match page.page_token {
                            Some(t) => (token, after) = (Some(t), None),
                            None => return Ok(()),
                        }
                    }
                    Err(object_store::Error::InvalidPath { source: PathError::BadSegment { .. } | PathError::EmptySegment { .. } }) if size != Some(1) => {
                        size = Some(size.map_or(500, |n| n / 2).max(1));
                    }
                    Err(object_store::Error::InvalidPath { source }) => {
                        let (PathError::BadSegment { path: key, .. } | PathError::EmptySegment { path: key }) = &source else {
                            return Err(self.err("", object_store::Error::InvalidPath { source }));
                        };
                        let rel = prefix.as_deref().and_then(|p| key.strip_prefix(p)).unwrap_or(key).to_string();
                        if unreadable.last().is_some_and(|(r, _)| *r == rel) {
                            // A store that does not list from a key on: it would be listed again and again.
                            return Err(self.err(&rel, object_store::Error::InvalidPath { source }));
                        }
                        let why = if key.split('/').any(|p| p == "." || p == "..") {
                            "its key has a part `.` or `..`"
                        } else if key.chars().any(|c| c.is_ascii_control()) {
                            "its key holds a control character"
                        } else {
                            "its key has an empty part (`//`, or `/` at its start or end)"
                        };
                        unreadable.push((rel, format!("{why}, which the object storage client flamesite uses cannot read; skipped: rename the object to build it")));
                        (token, after, size) = (None, Some(key.clone()), None);
                    }
                    Err(e) => return Err(self.err("", e)),
                }
            }
        })?;
        objects.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok((objects, unreadable))
    }

    /// Downloads each object of `objects` (its key as listed) to its file, several at once:
    /// for each, whether it was, or why not (one that is gone since it was listed, a file name
    /// the local file system refuses).
    pub fn download_each(&self, objects: &[(Key, PathBuf)]) -> Vec<Result<(), String>> {
        self.rt.block_on(async {
            futures::stream::iter(objects.iter().map(|(key, path)| async move {
                let r = self.store.get(key).await.map_err(|e| match e {
                    object_store::Error::NotFound { .. } => "listed, but gone when read".to_string(),
                    e => e.to_string(),
                })?;
                // Streamed to its file: nothing of a profile is held in memory here (its size is
                // bounded by `[limits]` as it is decoded).
                let rel = key.as_ref().strip_prefix(self.root.as_ref()).map_or(key.as_ref(), |r| r.trim_start_matches('/'));
                self.body_to_file(rel, r, path, u64::MAX).await.map_err(|e| e.to_string())
            }))
            .buffered(CONCURRENCY)
            .collect()
            .await
        })
    }

    /// Whether there is an object at `rel`.
    pub fn exists(&self, rel: &str) -> Result<bool, BucketError> {
        self.rt.block_on(async {
            match self.store.head(&self.key(rel)).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(self.err(rel, e)),
            }
        })
    }

    /// The address of the store's key `key` (of any prefix, not only the site's), as messages
    /// give it.
    fn address(&self, key: &Key) -> String {
        let base = self.url.strip_suffix(self.root.as_ref()).unwrap_or(&self.url).trim_end_matches('/');
        if key.as_ref().is_empty() { base.to_string() } else { format!("{base}/{key}") }
    }

    /// Which of the store's prefixes `prefixes` hold a flamesite site's record (an object under
    /// `PREFIX/RECORD/`, `record` being its folder's name): one listing of each record's folder, one level deep, several at
    /// once.
    pub(crate) fn with_record(&self, prefixes: Vec<Key>, record: &str) -> Result<Vec<Key>, BucketError> {
        self.rt.block_on(async {
            let found = futures::stream::iter(prefixes.into_iter().map(|prefix| async move {
                let record = prefix.clone().join(record);
                match listing(|| self.store.list_with_delimiter(Some(&record))).await {
                    Ok(l) => Ok((!l.objects.is_empty() || !l.common_prefixes.is_empty()).then_some(prefix)),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(source) => Err(BucketError::Store { object: format!("{}/", self.address(&record)), source }),
                }
            }))
            .buffered(CONCURRENCY)
            .try_collect::<Vec<Option<Key>>>()
            .await?;
            Ok(found.into_iter().flatten().collect())
        })
    }

    /// The addresses of the prefixes above this one (its parent first, the store's root last)
    /// that hold a flamesite site's record: the sites this one would be inside.
    pub fn sites_above(&self, record: &str) -> Result<Vec<String>, BucketError> {
        let parts: Vec<object_store::path::PathPart<'_>> = self.root.parts().collect();
        let above: Vec<Key> = (0..parts.len()).rev().map(|n| parts[..n].iter().cloned().collect()).collect();
        Ok(self.with_record(above, record)?.iter().map(|k| self.address(k)).collect())
    }

    /// Every object under the folder `prefix` (`""`: all), as paths relative to the site with
    /// their sizes, sorted.
    pub fn list(&self, prefix: &str) -> Result<Vec<(String, u64)>, BucketError> {
        Ok(self.list_meta(prefix)?.into_iter().map(|o| (o.rel, o.size)).collect())
    }

    /// Writes `bytes` at `rel`, with the Content-Type its name calls for.
    pub fn put(&self, rel: &str, bytes: Vec<u8>) -> Result<(), BucketError> {
        self.rt.block_on(self.put_async(rel, bytes))
    }

    async fn put_async(&self, rel: &str, bytes: Vec<u8>) -> Result<(), BucketError> {
        let opts = PutOptions { attributes: attributes(rel), ..PutOptions::default() };
        self.store.put_opts(&self.key(rel), PutPayload::from(bytes), opts).await.map(|_| ()).map_err(|e| self.err(rel, e))
    }

    /// Writes `bytes` at `rel` only if no object is there: its version, or `None` when one is.
    pub fn create_versioned(&self, rel: &str, bytes: Vec<u8>) -> Result<Option<object_store::UpdateVersion>, BucketError> {
        self.put_if(rel, bytes, PutMode::Create)
    }

    /// Writes `bytes` at `rel` only if the object there is still at `version`: its new
    /// version, or `None` when it changed.
    pub fn update(&self, rel: &str, bytes: Vec<u8>, version: object_store::UpdateVersion) -> Result<Option<object_store::UpdateVersion>, BucketError> {
        self.put_if(rel, bytes, PutMode::Update(version))
    }

    /// A conditional write: the new version, or `None` when the condition did not hold.
    fn put_if(&self, rel: &str, bytes: Vec<u8>, mode: PutMode) -> Result<Option<object_store::UpdateVersion>, BucketError> {
        let opts = PutOptions { mode, attributes: attributes(rel), ..PutOptions::default() };
        self.rt.block_on(async {
            match self.store.put_opts(&self.key(rel), PutPayload::from(bytes), opts).await {
                Ok(r) => Ok(Some(object_store::UpdateVersion { e_tag: r.e_tag, version: r.version })),
                Err(object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. } | object_store::Error::AlreadyExists { .. }) => Ok(None),
                Err(e) => Err(self.err(rel, e)),
            }
        })
    }

    /// Deletes the object at `rel` (nothing when there is none).
    pub fn delete(&self, rel: &str) -> Result<(), BucketError> {
        self.rt.block_on(self.delete_async(rel))
    }

    async fn delete_async(&self, rel: &str) -> Result<(), BucketError> {
        match self.store.delete(&self.key(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(rel, e)),
        }
    }

    /// Uploads every `(rel, local file)` of `files`, several at once.
    pub fn upload(&self, files: &[(String, PathBuf)]) -> Result<(), BucketError> {
        self.rt.block_on(async {
            futures::stream::iter(files.iter().map(|(rel, path)| async move {
                let bytes = std::fs::read(path).map_err(BucketError::local(path))?;
                self.put_async(rel, bytes).await
            }))
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await
            .map(|_| ())
        })
    }

    /// Deletes every object of `rels`, several at once.
    pub fn delete_all(&self, rels: &[String]) -> Result<(), BucketError> {
        self.rt.block_on(async {
            futures::stream::iter(rels.iter().map(|rel| self.delete_async(rel))).buffer_unordered(CONCURRENCY).try_collect::<Vec<()>>().await.map(|_| ())
        })
    }

    /// Downloads every object under the folder `prefix` into `dir` (at the same relative
    /// paths), several at once, each within `budget` bytes; returns how many.
    pub fn download(&self, prefix: &str, dir: &Path, budget: u64, only: impl Fn(&str, u64) -> bool) -> Result<usize, BucketError> {
        let listed: Vec<String> = self.list(prefix)?.into_iter().filter(|(rel, size)| only(rel, *size)).map(|(rel, _)| rel).collect();
        self.download_files(&listed, dir, budget)?;
        Ok(listed.len())
    }

    /// Downloads the objects `rels` into `dir` (at the same relative paths), several at once,
    /// each streamed to its file within `budget` bytes; one that is missing is skipped.
    pub fn download_files(&self, rels: &[String], dir: &Path, budget: u64) -> Result<(), BucketError> {
        self.rt.block_on(async {
            futures::stream::iter(rels.iter().map(|rel| async move {
                if !crate::store::is_inside(rel) {
                    return Err(BucketError::Outside(format!("{}/{rel}", self.url)));
                }
                self.download_to(rel, &dir.join(rel), budget).await.map(|_| ())
            }))
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await
            .map(|_| ())
        })
    }
}

/// The most bytes of a small object of the record read (the lock, the tree's identity: a line
/// or five).
const SMALL_OBJECT_BUDGET: u64 = 1 << 20;

/// revalidate it. No file of the site is named by its content yet (a run's graph files keep
/// their URL when its profile is rebuilt), so none can be cached as immutable without a reader
/// mixing an old chunk with a new manifest; a revalidation is one round trip answered by 304.
fn attributes(rel: &str) -> Attributes {
    let mut a = Attributes::new();
    a.insert(Attribute::ContentType, content_type(rel).into());
    a.insert(Attribute::CacheControl, "no-cache".into());
    a
}

/// The Content-Type of the site's file `rel`.
pub fn content_type(rel: &str) -> &'static str {
    match Path::new(rel).extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        // Packed data files (src/store/gz.rs), as GitHub Pages and most hosts label them.
        "gz" => "application/gzip",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "xml" => "application/atom+xml",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
