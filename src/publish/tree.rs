//! Bringing the staging tree to the new site: written whole when nothing says what it holds
//! (`rewrite`), else only what differs from what the state says it holds (`update`), with
//! the size of every file and run folder gathered for the state.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rayon::prelude::*;

use crate::archive::run::Archive;
use crate::error::BuildError;
use crate::ingest::cache::Cache;
use crate::archive::slug::PREVIEW;
use crate::output::Output;
use crate::site::pages::{Page, Site};

use super::graph_sets;
use super::state::{self, Tree, TreeDiff};

/// The sizes of the files and run folders a build wrote, gathered from its threads.
#[derive(Default)]
pub(crate) struct Sizes(std::sync::Mutex<BTreeMap<String, u64>>, std::sync::Mutex<BTreeSet<String>>);

impl Sizes {
    /// Page `rel` was rendered again with the bytes it has in the published site.
    fn same(&self, rel: &str) {
        self.1.lock().expect("no panic while holding it").insert(rel.to_string());
    }

    fn put(&self, rel: &str, len: usize) {
        self.put_u64(rel, len as u64);
    }

    fn put_u64(&self, rel: &str, len: u64) {
        self.0.lock().expect("no panic while holding it").insert(rel.to_string(), len);
    }

    /// The size of everything in `desired`: what was written, else what the published tree
    /// `live` holds the same, else what the staging tree (a folder) holds, else what the cache
    /// entry of a run folder records.
    /// Also returns the pages rendered with the bytes the published site has.
    pub(crate) fn complete(self, desired: &Tree, live: &Tree, staging: &dyn Output, cache: Option<&Cache>) -> (BTreeMap<String, u64>, BTreeSet<String>) {
        let same = self.1.into_inner().expect("no panic while holding it");
        let mut got = self.0.into_inner().expect("no panic while holding it");
        let on_disk = |rel: &str| staging.size(rel);
        for (path, hash) in &desired.pages {
            if !got.contains_key(path) {
                let len = live.bytes.get(path).filter(|_| live.pages.get(path) == Some(hash)).copied().or_else(|| on_disk(path)).unwrap_or(0);
                got.insert(path.clone(), len);
            }
        }
        for (url, key) in &desired.runs {
            if !got.contains_key(url) {
                let len = live.bytes.get(url).filter(|_| live.runs.get(url) == Some(key)).copied();
                let len = len.or_else(|| cache.and_then(|c| c.get(key)).map(|p| p.sums.iter().map(|s| s.len).sum()));
                got.insert(url.clone(), len.unwrap_or(0));
            }
        }
        (got, same)
    }
}

/// Brings a staging tree whose content is unknown to the new state: every page rendered and
/// written where it differs (and the static files `statics`), every run's graph files linked;
/// the commit then sweeps the rest.
pub(crate) fn rewrite(site: &Site, plan: &[Page], statics: &[(&str, &[u8])], archive: &Archive, staging: &dyn Output, cache: Option<&Cache>, sizes: &Sizes) -> Result<(usize, usize), BuildError> {
    for (rel, bytes) in statics {
        staging.write(rel, bytes)?;
        sizes.put(rel, bytes.len());
    }
    plan.par_iter().try_for_each(|page| -> Result<(), BuildError> {
        let bytes = site.render(page).map_err(BuildError::Theme)?;
        staging.write(&page.path, &bytes)?;
        sizes.put(&page.path, bytes.len());
        Ok(())
    })?;
    if let Some(cache) = cache {
        let sets: Vec<(&str, &str)> = graph_sets(archive).collect();
        sets.par_iter().try_for_each(|(url, key)| link_run(staging, cache, url, key, None).map(|n| sizes.put_u64(url, n)))?;
    }
    Ok((plan.len(), 0))
}

/// Brings the staging tree, known to be `live` changed by `next`, to the new state `desired`, touching
/// only what differs: a page whose hash is unchanged is left, one the published site already
/// has is linked from it, and only the others are rendered. The folders of the runs in
/// `redone` are written again too, and the static files (`statics`) that differ.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update(
    site: &Site,
    plan: &[Page],
    statics: &[(&str, &[u8])],
    desired: &Tree,
    staging: &dyn Output,
    cache: &Cache,
    live: &Tree,
    next: &TreeDiff,
    redone: &BTreeSet<String>,
    sizes: &Sizes,
) -> Result<(usize, usize), BuildError> {
    // The work is found by walking the sorted maps side by side: a lookup per page and run
    // was a large part of a rebuild at 100,000 runs, to find the few that differ
    // (docs/BENCHMARKS.md, "Figures behind the code").
    let pages = state::Work::between(&desired.pages, &live.pages, &next.pages);
    let linkable: HashMap<&str, bool> = pages.set.iter().copied().collect();
    let results: Vec<Result<(usize, usize), BuildError>> = plan
        .par_iter()
        .filter_map(|page| linkable.get(page.path.as_str()).map(|&published| (page, published)))
        .map(|(page, published)| {
            if published && staging.link_published(&page.path)? {
                Ok((0, 1))
            } else {
                // Its hash differs from the staging tree's, so its bytes do.
                let bytes = site.render(page).map_err(BuildError::Theme)?;
                replace(staging, sizes, &page.path, &bytes)?;
                Ok((1, 0))
            }
        })
        .collect();
    let mut counts = (0, 0);
    for r in results {
        let (a, b) = r?;
        counts.0 += a;
        counts.1 += b;
    }
    // The static files, whose bytes are known, as the pages.
    for (rel, bytes) in statics {
        match linkable.get(rel) {
            Some(&published) => {
                if !(published && staging.link_published(rel)?) {
                    replace(staging, sizes, rel, bytes)?;
                }
            }
            None => {}
        }
    }
    for path in pages.remove {
        staging.remove(path)?;
    }
    let runs = state::Work::between(&desired.runs, &live.runs, &next.runs);
    if !runs.set.is_empty() {
        // A run that moved to another folder is read from where it was published.
        let wanted: BTreeSet<&str> = runs.set.iter().map(|&(url, _)| desired.runs[url].as_str()).collect();
        for (url, key) in live.runs.iter().filter(|(_, k)| wanted.contains(k.as_str())) {
            cache.home(key, url);
        }
    }
    // A folder the tree holds nothing at (a new run) has nothing to remove first: in a bucket,
    // looking would be a listing.
    let holds = |url: &str| next.runs.get(url).map_or(live.runs.contains_key(url), |k| k.is_some());
    runs.set.par_iter().try_for_each(|&(url, _)| link_run(staging, cache, url, &desired.runs[url], Some(holds(url))).map(|n| sizes.put_u64(url, n)))?;
    if !redone.is_empty() {
        // Runs decoded again where they were: their folders are written again too.
        let set: BTreeSet<&str> = runs.set.iter().map(|&(url, _)| url).collect();
        let again: Vec<(&String, &String)> = desired.runs.iter().filter(|(url, key)| redone.contains(*key) && !set.contains(url.as_str())).collect();
        again.par_iter().try_for_each(|(url, key)| link_run(staging, cache, url, key, Some(true)).map(|n| sizes.put_u64(url, n)))?;
    }
    for url in runs.remove {
        staging.remove(&format!("{url}g"))?;
        staging.remove(&format!("{url}{PREVIEW}"))?;
    }
    Ok(counts)
}

/// Writes `bytes`, known to differ from the staging tree's file at `rel`, and counts them (as
/// bytes the published site already holds, when it does).
fn replace(staging: &dyn Output, sizes: &Sizes, rel: &str, bytes: &[u8]) -> Result<(), BuildError> {
    staging.replace(rel, bytes)?;
    sizes.put(rel, bytes.len());
    if staging.published_holds(rel, bytes) {
        sizes.same(rel);
    }
    Ok(())
}

/// Writes the graph files of run folder `url` (cache entry `key`) into the staging tree, which
/// `holds` a folder there (its old files are removed first), holds nothing there (the files
/// are written without a look at what is there: in a bucket, no read per file), or is not
/// known (`None`: each file is written where it differs).
fn link_run(staging: &dyn Output, cache: &Cache, url: &str, key: &str, holds: Option<bool>) -> Result<u64, BuildError> {
    // Where the files are when the entry's were let go: this folder of the published site.
    cache.home(key, url);
    let product = cache.get(key).ok_or_else(|| {
        BuildError::Cache(format!(
            "the build cache has lost the graphs of {url} (entry {key}); remove {} and build again",
            cache.dir().display()
        ))
    })?;
    if holds == Some(true) {
        staging.remove(&format!("{url}g"))?;
        staging.remove(&format!("{url}{PREVIEW}"))?;
    }
    // Copied, not linked: a file of the site edited in place must not change the cache. Each
    // is checked against the length and hash its entry recorded.
    for (rel, sum) in product.files.iter().zip(&product.sums) {
        let bytes = cache.read(key, rel, sum).map_err(|why| {
            cache.discard_damaged(key, why.clone());
            BuildError::Cache(format!("{why}; the entry of {url} (cache entry {key}) was removed: build again to make it anew"))
        })?;
        if holds == Some(false) {
            staging.replace(&format!("{url}{rel}"), &bytes)?;
        } else {
            staging.write(&format!("{url}{rel}"), &bytes)?;
        }
    }
    Ok(product.sums.iter().map(|s| s.len).sum())
}
