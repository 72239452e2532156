//! The driver's side of ingest: which profiles changed since the last build (none: nothing is
//! done), their names, and the reading of only those, in parallel; and whether anything a page
//! shows changed at all.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::archive::slug;
use crate::error::{BuildError, FillError, IngestError, ProfileError, Warning};
use crate::ingest::{self, scan, How, RunRecord};
use crate::output::bucket;
use crate::publish::state::{self, SavedRun};
use crate::publish::{published_names, push_record};

use super::{Build, NamedRun};

impl Build<'_> {
    /// Whether every profile and sidecar has the stamps of the last build, which published
    /// the site that is there: then nothing is to be done, and only the state's small header
    /// was read.
    pub(super) fn nothing_changed(&mut self) -> bool {
        let Some(h) = &self.header else { return false };
        let sources = &self.scanned.sources;
        let same = h.live_ino == self.live_ino
            && self.live_ino != 0
            && h.statics == self.site_files_hash
            && self.scanned.problems.is_empty()
            && h.runs.len() == sources.len()
            && h.runs.iter().zip(sources).all(|(k, s)| k.source == s.rel && k.stamps == s.stamps);
        if same {
            self.summary.runs = h.runs.len();
            self.summary.graphs = h.runs.iter().map(|k| k.graphs).sum();
            self.summary.unchanged = h.runs.len();
            self.summary.nothing_changed = true;
        }
        same
    }

    /// Ingest: names every profile, keeps the record of each whose files did not change, and
    /// reads the others in parallel. Returns the runs in source order.
    pub(super) fn ingest(&mut self) -> Result<Vec<NamedRun>, BuildError> {
        let cache_dir = self.config.cache_folder();
        if let (Some((b, _)), Some(_)) = (&self.bucket, &self.header) {
            let refused = bucket::pull_state(b, &cache_dir, state::DATA).map_err(BuildError::bucket("reading the record of the published site"))?;
            self.summary.warnings.extend(refused);
        }
        let data = self.header.as_ref().map_or(Ok(None), |h| state::Data::load(&cache_dir, h));
        self.data = data.unwrap_or_else(|w| {
            self.summary.warnings.push(w);
            None
        }).unwrap_or_default();
        if self.data.names == slug::Record::default() {
            let bucket = self.bucket.as_ref().map(|(b, _)| b);
            // Each listing within the budget of an index (a FIFO, a link to /dev/zero or a
            // 6 GB object in its place is not read); one that cannot be read is named.
            let unread = std::cell::RefCell::new(Vec::new());
            let read = |rel: &str| {
                let got = match bucket {
                    Some(b) => b.get_within(rel, crate::output::INDEX_BUDGET).map_err(|e| {
                        // The error names the object first.
                        let object = format!("{}/{rel}", b.url());
                        let why = e.to_string();
                        let why = why.strip_prefix(&format!("{object}: ")).unwrap_or(&why).to_string();
                        (object, why)
                    }),
                    None => {
                        let path = self.config.output.join(rel);
                        match crate::store::read_regular(&path, crate::output::INDEX_BUDGET) {
                            Ok(bytes) => Ok(Some(bytes)),
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                            Err(e) => Err((path.display().to_string(), e.to_string())),
                        }
                    }
                };
                got.unwrap_or_else(|(path, why)| {
                    let message = format!("{why}; the published listing is not read: the names it records are given anew");
                    unread.borrow_mut().push(Warning { path, message });
                    None
                })
            };
            self.data.names = published_names(&read);
            self.summary.warnings.extend(unread.into_inner());
        }
        // Names read back are held to the rules of new ones (the listings are anyone's to edit).
        for (key, name) in self.data.names.retain_valid() {
            self.summary.warnings.push(Warning {
                path: key,
                message: format!("the record of published names gives it {name:?}, which is not a name flamesite gives; ignored, it is named anew"),
            });
        }
        // A new profile whose path would make a slug longer than any flamesite gives is not
        // built: its run's files would have paths no file system takes, and every build would
        // fail on them. One the record names keeps its name, which is short enough.
        let scan::Scan { sources, problems } = &mut self.scanned;
        sources.retain(|s| {
            let Some(len) = slug::natural_run_slug_too_long(scan::stem(&s.rel)).filter(|_| !self.data.names.runs.contains_key(&s.rel)) else { return true };
            problems.push((
                s.rel.clone(),
                format!(
                    "its path makes a URL name of {len} bytes (p/NAME/), longer than the {} bytes flamesite gives one, so that the site's paths stay within what file systems allow; not built: give it a shorter path",
                    slug::MAX_NATURAL_RUN_SLUG
                ),
            ));
            false
        });
        let summary = &mut self.summary;
        let sources = &self.scanned.sources;
        self.names = self.data.names.clone();
        let stems: Vec<(&str, &str)> = sources.iter().map(|s| (s.rel.as_str(), scan::stem(&s.rel))).collect();
        let (slugs, collisions) = slug::assign_runs(&stems, &mut self.names);
        for c in &collisions {
            summary.warnings.push(Warning {
                path: c.claimant.clone(),
                message: format!("its URL p/{}/ is already {}'s; published as p/{}/", c.natural, c.holder, c.given),
            });
        }
        // The last build's record of each source, by the source's index: both lists are sorted
        // by path, so they are matched in one walk (a map of 100,000 records, each keyed by a
        // copy of its path, was a measurable part of a rebuild: docs/BENCHMARKS.md, "Figures behind the code").
        // The records of sources that are gone are left over.
        let mut old_runs = std::mem::take(&mut self.data.runs).into_iter().peekable();
        let mut gone = Vec::new();
        let mut previous: Vec<Option<SavedRun>> = Vec::with_capacity(sources.len());
        for s in sources {
            while let Some(r) = old_runs.next_if(|r| r.record.source < s.rel) {
                gone.push(r);
            }
            previous.push(old_runs.next_if(|r| r.record.source == s.rel));
        }
        gone.extend(old_runs);
        // Whether every run is the one the last build published, with the same record.
        let mut same = gone.is_empty();
        // A run whose files have the stamps they had is not read again.
        // A build that rewrites the staging tree copies every run's files from the cache:
        // then an unchanged run's entry is checked first, and made again when broken.
        let staging_ino = self.staging.as_ref().map_or(0, |s| s.inodes().0);
        let rewrite = !(self.live_ino != 0 && self.data.live.ino == self.live_ino && self.data.next.as_ref().is_some_and(|n| n.ino == staging_ino));
        self.rewrite = rewrite;
        let cache = self.cache.as_ref();
        if let (true, Some(c)) = (rewrite, cache) {
            // Every file is to be written again: the published site's folders, as the state
            // last knew them, may hold what the entries recorded.
            for (url, key) in &self.data.live.runs {
                c.home(key, url);
            }
        }
        let unchanged: Vec<bool> = self.pool.install(|| {
            sources
                .par_iter()
                .zip(&previous)
                .zip(&slugs)
                .map(|((s, p), slug)| {
                    cache.is_some()
                        && p.as_ref().is_some_and(|p| {
                            p.record.stamps == s.stamps
                                && (!rewrite || cache.is_some_and(|c| c.verified_at(&p.record.key, Some(&slug::run_folder(slug))).is_some()))
                        })
                })
                .collect()
        });
        let ctx = ingest::Ctx { config: self.config, pattern: self.pattern.as_ref(), cache: self.cache.as_ref() };
        let todo: Vec<usize> = (0..sources.len()).filter(|&i| !unchanged[i]).collect();
        // Only the profiles read now are downloaded; one that cannot be is not read.
        let not_downloaded = self.remote.as_ref().map(|remote| remote.fetch(&todo.iter().map(|&i| &sources[i]).collect::<Vec<_>>())).unwrap_or_default();
        let bar = progress_bar(self.options.progress, todo.len());
        let staging = &self.staging;
        let mut outcomes: HashMap<usize, Result<ingest::Ingested, IngestError>> = self.pool.install(|| {
            todo.par_iter()
                .map(|&i| {
                    // Without a cache, a decoded profile's files go straight to its folder.
                    let url = slug::run_folder(&slugs[i]);
                    let sink = |rel: &str, bytes: &[u8]| match staging {
                        Some(s) => s.write(&format!("{url}{rel}"), bytes).map_err(|e| FillError::Write(e.to_string())),
                        None => Ok(()),
                    };
                    let r = match not_downloaded.get(&sources[i].rel) {
                        Some(why) => Err(IngestError::Profile(ProfileError::new(sources[i].rel.clone(), format!("not downloaded: {why}")))),
                        None => ingest::ingest(&ctx, &sources[i], &url, &sink),
                    };
                    bar.inc(1);
                    (i, r)
                })
                .collect()
        });
        bar.finish_and_clear();
        summary.skipped = self.scanned.problems.iter().map(|(path, reason)| ProfileError::new(path.clone(), reason.clone())).collect();
        let mut runs = Vec::new();
        for (i, slug) in slugs.into_iter().enumerate() {
            let (record, hash) = if unchanged[i] {
                let saved = previous[i].take().expect("an unchanged run has a record");
                summary.unchanged += 1;
                (saved.record, saved.hash)
            } else {
                let old = previous[i].take();
                let old_hash = old.as_ref().map(|r| r.hash);
                let old_key = old.map(|old| old.record.key);
                match outcomes.remove(&i).expect("every changed run was ingested") {
                    Ok(ingested) => {
                        match ingested.how {
                            How::Cached => summary.cached += 1,
                            How::Decoded => summary.decoded += 1,
                        }
                        // Decoded with the key it had: neither its entry nor the published
                        // site had its files as recorded.
                        let redone = ingested.how == How::Decoded && old_key.as_deref() == Some(ingested.record.key.as_str());
                        if redone {
                            self.redone.insert(ingested.record.key.clone());
                        }
                        if let Some(k) = old_key.filter(|_| !redone) {
                            self.unused.push(k);
                        }
                        let hash = record_hash(&ingested.record);
                        same &= old_hash == Some(hash) && !redone;
                        (ingested.record, hash)
                    }
                    Err(IngestError::Profile(e)) => {
                        // One that fails again is not on the site either time.
                        same &= old_hash.is_none();
                        self.unused.extend(old_key);
                        summary.skipped.push(e);
                        continue;
                    }
                    Err(IngestError::Write(why)) => return Err(BuildError::Write(why)),
                }
            };
            for w in &record.warnings {
                summary.warnings.push(Warning { path: record.source.clone(), message: w.clone() });
            }
            runs.push((record, hash, slug));
        }
        // Runs that are gone: their cache entries may go too.
        self.unused.extend(gone.into_iter().map(|r| r.record.key));
        self.same_runs = same;
        summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        summary.runs = runs.len();
        summary.graphs = runs.iter().map(|(r, _, _)| r.graphs.len()).sum();
        Ok(runs)
    }

    /// Whether anything a page shows changed (a profile may have been touched without a
    /// change, or one that fails may still fail); `None` when not, after saving the newer
    /// stamps, so that the next build need not read these files again. A dry run ends here.
    pub(super) fn anything_shown_changed(&mut self, runs: Vec<NamedRun>) -> Result<Option<Vec<NamedRun>>, BuildError> {
        if self.staging.is_none() {
            self.summary.built = runs.into_iter().map(|(r, _, _)| r).collect();
            return Ok(None);
        }
        let unchanged = self.same_runs
            && self.names == self.data.names
            && self.live_ino != 0
            && self.data.live.ino == self.live_ino
            && self.header.as_ref().is_some_and(|h| h.statics == self.site_files_hash);
        if !unchanged {
            return Ok(Some(runs));
        }
        let (Some(cache), Some(header)) = (&self.cache, self.header.take()) else { return Ok(Some(runs)) };
        self.summary.nothing_changed = true;
        let known = runs.iter().map(|(r, h, _)| state::Known { source: r.source.clone(), stamps: r.stamps, hash: *h, graphs: r.graphs.len() }).collect();
        let mut data = std::mem::take(&mut self.data);
        data.runs = runs.into_iter().map(|(record, hash, _)| SavedRun { record, hash }).collect();
        state::save(cache.dir(), state::Header { runs: known, ..header }, data).map_err(BuildError::Cache)?;
        push_record(self.bucket.as_ref(), self.cache.as_ref(), false)?;
        Ok(None)
    }

}

/// A hash of a run's record: equal hashes, records equal but for their files' stamps.
fn record_hash(record: &RunRecord) -> u64 {
    // Not its files' stamps, which no page shows: a profile written again with the same bytes
    // changes nothing on the site (its date, when taken from the file's time, is a field).
    let record = RunRecord { stamps: Default::default(), ..record.clone() };
    let json = serde_json::to_vec(&record).expect("a record serialises");
    let hash = blake3::hash(&json);
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("eight bytes"))
}

fn progress_bar(show: bool, len: usize) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    // indicatif draws only when stderr is a terminal.
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} building {pos}/{len} profiles [{bar:30}] {elapsed}")
            .unwrap()
            .progress_chars("=> "),
    );
    bar
}


