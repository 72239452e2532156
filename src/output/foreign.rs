//! What the output holds that the build did not write, and lacks of what the last build
//! wrote ([`super::Output::survey`]): in a folder, files and links put in the published site by
//! hand (named in warnings, never written or removed through) and what was removed by hand;
//! in a bucket, what its listing lacks of what its record says it holds.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::error::{shown, OutputError, Warning};
use crate::archive::slug::PREVIEW;

use super::record::Tree;
use super::staging::Staging;
use super::Survey;

/// The survey of a folder's published tree (at `output`, as the configuration names it) and
/// of its staging tree: [`foreign_files`] at their tops, [`foreign_inside`] in their folders.
pub(crate) fn survey_folder(staging: &Staging, output: &Path, ours: &BTreeSet<String>, live: Option<&Tree>, left: &[String]) -> Result<Survey, OutputError> {
    let mut warnings = foreign_files(output, ours, staging)?;
    let (inside, found, missing) = foreign_inside(output, live, left, staging)?;
    warnings.extend(inside);
    Ok(Survey { warnings, found, missing, ..Survey::default() })
}

/// The survey of a bucket's site: what its listing (`listed`) lacks of what the record
/// (`live`) says it holds.
pub(crate) fn survey_bucket(listed: &[(String, u64)], live: &Tree) -> Survey {
    let (pages_lacking, runs_lacking) = lacking(live, listed);
    Survey { pages_lacking, runs_lacking, ..Survey::default() }
}

/// What a build says of a file put in the published site by hand (at its top or inside its
/// folders), which the new site does not have.
const NOT_IN_THE_NEW_SITE: &str =
    "was not written by flamesite: the output folder is replaced whole, so it is not in the new site (put files to publish as they are in the static/ folder beside site.toml)";
/// What the build says of a symbolic link it finds in the published site where the site has a
/// folder (a series' folder moved elsewhere and linked back).
const LINK_IN_THE_NEW_SITE: &str = "is a symbolic link where the site has a folder: flamesite never writes or removes through links, so the new site has a folder in its place (what the link leads to is left as it is)";
/// What the build says as it removes such a link from the tree it writes.
pub const LINK_IN_THE_OLD_SITE: &str = "was a symbolic link (it was in the output folder before the last build): the link was removed, never what it leads to, and the site's folders written anew";
/// What the build after says as it removes that file from the tree it brings up to date.
const REMOVED_FROM_THE_OLD_SITE: &str = "was not written by flamesite (it was in the output folder before the last build): removed";

/// Files at the top of the output folder that flamesite does not write (a `CNAME`, a
/// `robots.txt` put there by hand rather than in the site's `static/` folder) are not in the
/// new site, since the output folder is replaced whole: each is named in a warning. In the
/// staging tree (the site before, where such a file went at the last build) they are removed,
/// each named in a warning first, so that they do not come back every other build.
fn foreign_files(output: &Path, ours: &BTreeSet<String>, staging: &Staging) -> Result<Vec<Warning>, OutputError> {
    let mut warnings = Vec::new();
    let mut ours: BTreeSet<&str> = ours.iter().map(String::as_str).collect();
    // The output's git repository goes with the output from build to build (Staging::commit).
    ours.insert(super::staging::GIT);
    // Names the build does not write, and links (where it writes a folder or a file, one put
    // by hand: never written through), each with whether it is a link of a name of the site.
    let foreign = |dir: &std::path::Path| -> Vec<(String, bool)> {
        entries(dir)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, link)| {
                let link = link && name != super::staging::GIT;
                let ours = ours.contains(name.as_str());
                (link || !ours).then_some((name, link && ours))
            })
            .collect()
    };
    for (name, link) in foreign(output) {
        warnings.push(Warning {
            path: shown(&output.join(&name)),
            message: if link { LINK_IN_THE_NEW_SITE } else { NOT_IN_THE_NEW_SITE }.into(),
        });
    }
    for (name, link) in foreign(&staging.path("")) {
        // A link goes alone, never what it leads to; one of the site's names is named (and the
        // tree written whole) by the build.
        if staging.remove_link(&name, link)? {
            if link {
                continue;
            }
        } else {
            staging.remove(&name)?;
        }
        warnings.push(Warning {
            path: shown(&staging.path(&name)),
            message: REMOVED_FROM_THE_OLD_SITE.into(),
        });
    }
    Ok(warnings)
}

/// Files and folders put by hand inside the site's folders (`p/api/notes.txt`), which the
/// top-level look of [`foreign_files`] does not see (issue 31, item 7). In the published
/// tree, described by the state as `live`, a folder is looked into only when it changed after
/// the build that wrote it had finished (`Tree::sealed`, the file system's time then; a folder
/// stamped in the same tick is looked into too, and holds nothing foreign when the build
/// wrote it): one `lstat` per folder of the site,
/// not a walk of its files; the graph folders inside a run's folder are not looked into (they
/// are a cache entry's files). Each entry found is named in a warning, as at the top, and
/// returned: the state keeps them, and the next build, which brings that tree up to date,
/// removes them first. `left`: those the last build found, removed here from the staging tree
/// (the tree they were found in), each named in a warning, so that they do not come back
/// every other build.
fn foreign_inside(output: &Path, live: Option<&Tree>, left: &[String], staging: &Staging) -> Result<(Vec<Warning>, Vec<String>, Vec<String>), OutputError> {
    let mut warnings = Vec::new();
    // Names the last build read from the output's folders; a state that says otherwise (one
    // climbing out, or naming the tree's top) is not acted on.
    let inside = crate::store::is_within;
    for rel in left.iter().filter(|r| r.contains('/') && inside(r)) {
        // A link (in the place of a folder of the site, or any other) goes alone, never what
        // it leads to; the build names it and writes the tree whole.
        if staging.remove_link(rel, true)? {
            continue;
        }
        if std::fs::symlink_metadata(staging.path(rel)).is_ok() {
            warnings.push(Warning {
                path: shown(&staging.path(rel)),
                message: REMOVED_FROM_THE_OLD_SITE.into(),
            });
            staging.remove(rel)?;
        }
    }
    let Some(live) = live.filter(|t| t.sealed != 0) else { return Ok((warnings, Vec::new(), Vec::new())) };
    let sealed = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(live.sealed);
    // Each folder of the tree but its top, with the names the build put in it.
    let mut expected: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for path in live.pages.keys().chain(live.runs.keys()) {
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            let (folder, rest) = (&path[..at + i], &path[at + i + 1..]);
            if let Some(name) = rest.split('/').next().filter(|n| !n.is_empty()) {
                expected.entry(folder).or_default().insert(name);
            }
            at += i + 1;
        }
    }
    for run in live.runs.keys() {
        expected.entry(run.trim_end_matches('/')).or_default().extend(["g", PREVIEW]);
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (folder, names) in expected.iter().filter(|(f, _)| inside(f)) {
        let dir = output.join(folder);
        let changed = std::fs::symlink_metadata(&dir).ok().filter(|m| m.is_dir()).and_then(|m| m.modified().ok()).is_some_and(|t| t >= sealed);
        if !changed {
            continue;
        }
        let Some(all) = entries(&dir) else { continue };
        // What the build put there and is gone (removed by hand), the top of the tree aside.
        // (A run's preview and graph folder aside: not every run or comparison has a preview,
        // and the graph folders are not looked into.)
        let present: BTreeSet<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        missing.extend(names.iter().filter(|n| !present.contains(**n) && **n != "g" && **n != PREVIEW).map(|n| format!("{folder}/{n}")));
        // What the build did not put there, and links where it put a folder or a file.
        for (name, link) in all.into_iter().filter(|(n, link)| *link || !names.contains(n.as_str())) {
            let rel = format!("{folder}/{name}");
            let ours = names.contains(name.as_str());
            warnings.push(Warning {
                path: shown(&output.join(&rel)),
                message: if ours && link { LINK_IN_THE_NEW_SITE } else { NOT_IN_THE_NEW_SITE }.into(),
            });
            found.push(rel);
        }
    }
    Ok((warnings, found, missing))
}

/// Said of a file or run folder of a bucket's site that is not there as the last build
/// published it.
pub const NOT_AS_PUBLISHED: &str = "not in the bucket as the last build published it (removed or changed by hand?)";

/// What the record of a bucket's site (`live`) says it holds and its listing (`listed`: every
/// object under the prefix with its size) lacks or holds at another size: pages and files by
/// path, run folders (of runs and comparisons) by the sum of the sizes of their graph files,
/// the objects under the folder that are not pages nor in a folder of another run inside it.
fn lacking(live: &Tree, listed: &[(String, u64)]) -> (Vec<String>, Vec<String>) {
    let sizes: HashMap<&str, u64> = listed.iter().map(|(rel, size)| (rel.as_str(), *size)).collect();
    // (A file whose size the record does not give is checked for being there.)
    let pages: Vec<String> = live.pages.keys().filter(|p| sizes.get(p.as_str()).is_none_or(|s| live.bytes.get(*p).is_some_and(|b| b != s))).cloned().collect();
    let mut runs: HashMap<&str, u64> = live.runs.keys().map(|u| (u.as_str(), 0)).collect();
    for (rel, size) in listed {
        if live.pages.contains_key(rel) {
            continue;
        }
        // The deepest run folder it is in.
        let mut at = rel.len();
        while let Some(i) = rel[..at].rfind('/') {
            if let Some(sum) = runs.get_mut(&rel[..=i]) {
                *sum += size;
                break;
            }
            at = i;
        }
    }
    // (A folder whose size the record does not give is not judged.)
    let mut runs: Vec<String> = runs.into_iter().filter(|(u, sum)| live.bytes.get(*u).is_some_and(|b| b != sum)).map(|(u, _)| u.to_string()).collect();
    runs.sort();
    (pages, runs)
}

/// The entries of the folder `dir` (`None` when it cannot be read), each with whether it is a
/// symbolic link, in name order.
fn entries(dir: &Path) -> Option<Vec<(String, bool)>> {
    let mut all: Vec<(String, bool)> =
        std::fs::read_dir(dir).ok()?.flatten().map(|e| (e.file_name().to_string_lossy().into_owned(), e.file_type().is_ok_and(|t| t.is_symlink()))).collect();
    all.sort();
    Some(all)
}

/// The bytes of every file under `dir`.
pub(crate) fn folder_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir).into_iter().flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of a page, a theme file, a run and a comparison inside the run's folder.
    fn live() -> Tree {
        let mut t = Tree::default();
        for (p, size) in [("index.html", 10), ("static/main.js", 20), ("p/a/1/index.html", 30), ("p/a/1/compare/index.html", 40)] {
            t.pages.insert(p.into(), 1);
            t.bytes.insert(p.into(), size);
        }
        t.pages.insert("CNAME".into(), 1);
        t.runs.insert("p/a/1/".into(), "run".into());
        t.runs.insert("p/a/1/compare/".into(), "comparison".into());
        t.runs.insert("p/a/2/".into(), "no size known".into());
        t.bytes.insert("p/a/1/".into(), 7);
        t.bytes.insert("p/a/1/compare/".into(), 5);
        t
    }

    fn listed(objects: &[(&str, u64)]) -> Vec<(String, u64)> {
        objects.iter().map(|(r, s)| (r.to_string(), *s)).collect()
    }

    #[test]
    fn a_bucket_that_holds_what_its_record_says_lacks_nothing() {
        let whole = [
            ("index.html", 10),
            ("static/main.js", 20),
            ("CNAME", 3),
            ("p/a/1/index.html", 30),
            ("p/a/1/g/cpu/manifest.json", 3),
            ("p/a/1/g/cpu/c/0-0.bin.gz", 4),
            ("p/a/1/compare/index.html", 40),
            ("p/a/1/compare/g/cpu/manifest.json", 5),
            ("robots.txt", 9),
        ];
        assert_eq!(lacking(&live(), &listed(&whole)), (vec![], vec![]));
        // A page gone, a file of another size, a graph file gone from the run (not the
        // comparison inside its folder); the file whose size the record lacks, when gone.
        let cut = [("static/main.js", 21), ("p/a/1/index.html", 30), ("p/a/1/g/cpu/c/0-0.bin.gz", 4), ("p/a/1/compare/index.html", 40), ("p/a/1/compare/g/cpu/manifest.json", 5)];
        let (pages, runs) = lacking(&live(), &listed(&cut));
        assert_eq!(pages, ["CNAME", "index.html", "static/main.js"]);
        assert_eq!(runs, ["p/a/1/"]);
    }
}

