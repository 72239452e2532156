//! Opening a build: the theme, the site's own files, the worker threads, the profiles to read,
//! the output (a folder or a bucket, with its lock and its record) and the state the last build
//! left; and what is refused before anything is read or written.

use std::collections::{BTreeSet, HashMap};

use crate::archive::{slug, Pattern};
use crate::config::Config;
use crate::error::{shown, BuildError};
use crate::ingest::cache::{self, Cache};
use crate::ingest::scan;
use crate::output::{bucket, Output, Published};
use crate::publish::state;
use crate::site::theme::Theme;

use super::{Build, Options, Summary, MIRROR};

impl<'a> Build<'a> {
    /// Loads the theme and the state, scans the input folder and opens the staging tree.
    pub(super) fn open(config: &'a Config, options: &'a Options) -> Result<Build<'a>, BuildError> {
        if !options.dry_run {
            refuse_folders_inside_output(config)?;
            refuse_output_inside_static_dir(config)?;
        }
        let theme = Theme::load(config.theme_dir.as_deref()).map_err(BuildError::Theme)?;
        let site_files = match &config.static_dir {
            Some(dir) => crate::site::theme::site_files(dir).map_err(BuildError::Config)?,
            None => Vec::new(),
        };
        let site_files_hash = {
            let mut h = blake3::Hasher::new();
            for (rel, bytes) in &site_files {
                h.update(format!("{rel}\0{}\0", bytes.len()).as_bytes());
                h.update(bytes);
            }
            h.finalize().to_hex().to_string()
        };
        let pattern = config.archive.pattern.as_deref().map(Pattern::new).transpose().map_err(BuildError::Config)?;
        let fingerprint = fingerprint(config, &theme);
        let pool = worker_pool(options.threads)?;
        let (scanned, remote) = scan_input(config, &pool)?;
        let cache_dir = config.cache_folder();
        let open_cache = || open_cache(config);
        // A warning about the bucket's record of the build state, when it was not read.
        let mut pulled = None;
        let (staging, cache, bucket) = if !crate::config::is_url(&config.output) {
            let mut staging = if options.dry_run { None } else { Some(crate::output::staging::Staging::new(&config.output)?) };
            let cache = match (&staging, options.cache) {
                (Some(_), true) => Some(open_cache()?.publishing_to(Published::Folder(config.output.clone()))),
                _ => None,
            };
            // A build that changes the staging tree and does not save the state (it fails, is
            // killed, or runs without the cache) leaves the marker that tells the next build not
            // to trust what the state says that tree holds.
            let ours = cache.is_some() || cache_dir.is_dir() && cache::check_folder(&cache_dir).is_ok();
            if let (Some(s), true) = (&mut staging, ours) {
                s.mark_changes_in(cache_dir.join(state::DIRTY));
            }
            (staging.map(|s| Box::new(s) as Box<dyn Output>), cache, None)
        } else {
            // A bucket keeps the build's record beside the site; the cache folder holds a copy
            // of it while the build runs.
            if !options.cache {
                return Err(BuildError::Config("--no-cache: a site in object storage is published from the record it keeps beside it, which the cache folder holds while a build runs".into()));
            }
            let b = std::sync::Arc::new(bucket::Bucket::open(&config.output.to_string_lossy(), "output").map_err(BuildError::bucket(""))?);
            if options.dry_run {
                (None, None, None)
            } else {
                // A site inside another's prefix is refused before anything is written (its
                // lock included); one that holds another inside it, by Staging::new.
                bucket::refuse_inside_another_site(&b)?;
                let lock = bucket::Lock::take(b.clone())?;
                let cache = open_cache()?;
                pulled = bucket::pull_state(&b, &cache_dir, cache::STATE).map_err(BuildError::bucket("reading the record of the published site"))?;
                let staging = bucket::Staging::new(b.clone(), &lock)?;
                let mirror = bucket::Mirror::new(b.clone(), cache_dir.join(MIRROR));
                (Some(Box::new(staging) as Box<dyn Output>), Some(cache.publishing_to(Published::Bucket(mirror))), Some((b, lock)))
            }
        };
        let mut summary = Summary::default();
        let header = cache.as_ref().and_then(|c| state::Header::load(c.dir(), &fingerprint).unwrap_or_else(|w| {
            summary.warnings.push(w);
            None
        }));
        summary.warnings.extend(pulled);
        let live_ino = staging.as_ref().map_or(0, |s| s.inodes().1);
        Ok(Build {
            config,
            options,
            theme,
            pattern,
            fingerprint,
            pool,
            scanned,
            remote,
            staging,
            bucket,
            cache,
            live_ino,
            header,
            data: state::Data::default(),
            names: slug::Record::default(),
            same_runs: false,
            unused: Vec::new(),
            redone: BTreeSet::new(),
            changes: HashMap::new(),
            rewrite: true,
            site_files,
            site_files_hash,
            summary,
        })
    }

}

/// The worker threads of a build: `threads`, or one per core.
pub(crate) fn worker_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, BuildError> {
    rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build().map_err(|e| BuildError::Config(e.to_string()))
}

/// The build cache in its folder, made if missing; a folder that holds anything but the
/// cache's own files is refused.
pub(crate) fn open_cache(config: &Config) -> Result<Cache, BuildError> {
    let dir = config.cache_folder();
    std::fs::create_dir_all(&dir).map_err(|e| BuildError::Cache(format!("cache {}: {e}", dir.display())))?;
    cache::check_folder(&dir).map_err(BuildError::Config)?;
    Ok(Cache::new(&dir, config))
}

/// The profiles to build: the scan of the input folder, or the listing of the input bucket with
/// what downloads the profiles a build reads. The output and cache folders may be inside the
/// input (a site published under the profiles' prefix too): they are not profiles.
pub(crate) fn scan_input(config: &Config, pool: &rayon::ThreadPool) -> Result<(scan::Scan, Option<crate::ingest::remote::Remote>), BuildError> {
    let failed = |reason: String| BuildError::Input { path: config.input.clone(), reason };
    if !crate::config::is_url(&config.input) {
        let scanned = pool.install(|| scan::scan_except(&config.input, &[config.output.clone(), config.cache_folder()])).map_err(failed)?;
        return Ok((scanned, None));
    }
    let input = config.input.to_string_lossy().trim_end_matches('/').to_string();
    let output = config.output.to_string_lossy();
    let exclude: Vec<String> = output.strip_prefix(&format!("{input}/")).map(|o| o.trim_end_matches('/').to_string()).into_iter().collect();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("flamesite-input-{}-{nanos}", std::process::id()));
    let mut remote = crate::ingest::remote::Remote::open(&input, dir).map_err(|e| failed(e.to_string()))?;
    let scanned = remote.scan(&exclude).map_err(|e| failed(e.to_string()))?;
    Ok((scanned, Some(remote)))
}

/// Refuses a build whose output folder holds a folder the build reads or keeps (the input,
/// `static_dir`, `theme_dir`, the cache folder): the output is replaced whole by each build,
/// so such a folder would be swept away with the old site, or moved into the staging tree.
fn refuse_folders_inside_output(config: &Config) -> Result<(), BuildError> {
    // The output as published: through a link to the folder it leads to.
    let Ok(output) = std::fs::canonicalize(&config.output) else { return Ok(()) };
    let cache = config.cache_folder();
    let read = [("the input folder", Some(&config.input)), ("static_dir", config.static_dir.as_ref()), ("theme_dir", config.theme_dir.as_ref()), ("cache_dir", Some(&cache))];
    for (what, dir) in read {
        let Some(dir) = dir else { continue };
        let Ok(real) = std::fs::canonicalize(dir) else { continue };
        if real.starts_with(&output) {
            return Err(BuildError::Config(format!(
                "{what} {} is inside the output folder {}, which every build replaces whole: it would be lost with the old site; move it out of the output folder (or publish to another folder)",
                shown(dir),
                shown(&config.output)
            )));
        }
    }
    Ok(())
}

/// The output folder (with the staging folder beside it) or the cache folder inside
/// `static_dir`, whose files are copied into the site at every build (`static_dir = "."`): each
/// build copied the site into itself, its cache and staging folder included, growing without
/// end (issue 45, item 8). Refused before anything is read or written.
fn refuse_output_inside_static_dir(config: &Config) -> Result<(), BuildError> {
    let Some(dir) = &config.static_dir else { return Ok(()) };
    let Ok(real) = std::fs::canonicalize(dir) else { return Ok(()) };
    let mut written = vec![("the cache folder", "cache_dir", config.cache_folder())];
    if !crate::config::is_url(&config.output) {
        // (Its staging folder is beside it: inside too when it is.)
        written.insert(0, ("the output folder", "output", config.output.clone()));
    }
    for (what, key, path) in written {
        if real_path(&path).starts_with(&real) {
            return Err(BuildError::Config(format!(
                "{what} {} is inside static_dir {}, whose files are copied into the site at every build: the site would be copied into itself, again at each build; give static_dir a folder of its own (by default static/ beside site.toml), or set {key} outside it",
                shown(&path),
                shown(dir)
            )));
        }
    }
    Ok(())
}

/// `path` with its links resolved, as far as it exists: the nearest folder above it that
/// exists, resolved, with the rest of `path` after it.
fn real_path(path: &std::path::Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return absolute,
        }
    }
}

/// What every page and record depends on besides the runs: flamesite's version, every setting
/// that shapes a graph, a record or a page, and the theme's files (not `keep_going`, the output
/// folder or the cache folder, which change no byte of the site).
fn fingerprint(config: &Config, theme: &Theme) -> String {
    let mut h = blake3::Hasher::new();
    // The graph format too: a build that writes another format remakes every graph and
    // comparison, whatever theme it has.
    h.update(format!("flamesite {} graph format {}\n", env!("CARGO_PKG_VERSION"), crate::store::chunk::MANIFEST_VERSION).as_bytes());
    h.update(
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}\n{}\n{}\n{:?}\n",
            config.chunks,
            config.limits,
            config.perf,
            config.pprof,
            config.archive,
            config.changes,
            config.input.canonicalize().unwrap_or_else(|_| config.input.clone()),
            config.palette.as_str(),
            config.base_url,
            config.title,
            config.links,
        )
        .as_bytes(),
    );
    // The budgets: their marks are on the pages.
    h.update(crate::config::budgets_text(&config.budgets).as_bytes());
    for (name, text) in theme.templates() {
        h.update(format!("template {name} {}\n", text.len()).as_bytes());
        h.update(text.as_bytes());
    }
    for (name, bytes) in &theme.statics {
        h.update(format!("static {name} {}\n", bytes.len()).as_bytes());
        h.update(bytes);
    }
    h.finalize().to_hex().to_string()
}

