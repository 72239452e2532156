//! Writing: the one place that touches the output folder.
//!
//! A build never writes into the published site. It brings a second tree beside it,
//! `.NAME.flamesite-next` (NAME being the output folder's name), to the new state and then
//! swaps the two in one atomic `renameat2(RENAME_EXCHANGE)` (two renames where the system has
//! no exchange), so a build that fails or is killed leaves the previous site as it was.
//!
//! The second tree is kept after the swap (it then holds the previous site) and is the start
//! of the next build. When the build state says what that tree holds, the build touches only
//! the files that differ ([`Staging::replace`], [`Staging::link_published`],
//! [`Staging::remove`]) and commits without a walk; otherwise it writes every file where its
//! bytes differ ([`Staging::write`], [`Staging::link`], which leave a right file alone) and the
//! commit sweeps every file it did not write. Files are replaced by unlinking and creating,
//! never written in place, because the two trees share files as hard links (graph files come
//! from the cache's new entries or the published site as checked copies, never links). A lock file keeps two builds from writing the
//! same output at once. An output folder that is a symbolic link is published through: the
//! folder it leads to is swapped, the link stays. A link found *inside* the staging tree (put in
//! the place of one of the site's folders) is removed, never written or removed through
//! ([`Staging::unlinked`]), and the build then writes the tree whole. A build that changed the staging folder and
//! failed removes it ([`Staging`]'s `Drop`), and its first change leaves the state's dirty
//! marker ([`Staging::mark_changes_in`]), so a half-changed tree is never trusted.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::OutputError;

/// A folder being brought to the new site's state, to become the output folder on
/// [`Staging::commit`].
pub struct Staging {
    dir: PathBuf,
    target: PathBuf,
    /// The output folder as the configuration names it (through a link, when it is one).
    given: PathBuf,
    /// Every file this build wrote or kept, relative to `dir`, by [`path_key`]: a first build
    /// touches every file of the site, and their paths kept as strings grew with the archive.
    touched: Mutex<HashSet<u128>>,
    /// Made before the first change to the staging folder (see [`Staging::mark_changes_in`]).
    marker: Option<PathBuf>,
    /// Whether this build changed the staging folder (then a failed build removes it).
    changed: std::sync::OnceLock<Result<(), String>>,
    committed: bool,
    /// Folders of the staging tree (by [`path_key`]) seen to be folders, not links.
    folders: Mutex<HashSet<u128>>,
    /// Folders of the published tree seen to be folders, not links.
    published_folders: Mutex<HashSet<u128>>,
    /// Symbolic links met in the staging tree where the site has a folder, removed (the link,
    /// never what it leads to).
    unlinked: Mutex<Vec<String>>,
    /// Holds the build lock while open.
    _lock: fs::File,
}

impl Staging {
    /// Prepares the staging folder for `target`, refusing to ever replace a folder that is not
    /// a flamesite output, or to write while another build writes the same output.
    ///
    /// When `target` is a symbolic link, the site is published through it: the folder it leads
    /// to is the one replaced, and the staging folder is made beside that folder, so the link
    /// stays a link.
    pub fn new(target: &Path) -> Result<Staging, OutputError> {
        let given = target.to_path_buf();
        let target = &resolve_links(target)?;
        let name = target.file_name().ok_or_else(|| OutputError::NoName(target.to_path_buf()))?.to_os_string();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(OutputError::at(&parent))?;
        if target.exists() && !is_flamesite_output(target) {
            return Err(OutputError::NotASite(target.to_path_buf()));
        }
        // `.NAME.flamesite-next`, `.NAME.flamesite-lock`, within a file name's length.
        let sibling = |suffix: &str| crate::archive::slug::sibling_name(&name, suffix);
        let prefix = sibling(".flamesite-").to_string_lossy().into_owned();
        let lock_path = parent.join(sibling(".flamesite-lock"));
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(OutputError::at(&lock_path))?;
        if !try_lock(&lock) {
            return Err(OutputError::Locked(target.to_path_buf()));
        }
        let dir = parent.join(sibling(".flamesite-next"));
        recover_swap(target, &dir, &aside_of(&dir))?;
        // Leftovers of older versions' staging folders.
        if let Ok(entries) = fs::read_dir(&parent) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&prefix) && e.path() != dir && e.path() != lock_path {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
        }
        // Never a link: the staging folder is written into and swapped.
        if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            let _ = fs::remove_file(&dir);
            fs::create_dir_all(&dir).map_err(OutputError::at(&dir))?;
        }
        Ok(Staging {
            dir,
            target: target.to_path_buf(),
            given,
            touched: Mutex::new(HashSet::new()),
            marker: None,
            changed: std::sync::OnceLock::new(),
            committed: false,
            folders: Mutex::new(HashSet::new()),
            published_folders: Mutex::new(HashSet::new()),
            unlinked: Mutex::new(Vec::new()),
            _lock: lock,
        })
    }

    /// Makes the file `marker` before this build first changes the staging folder, so that a
    /// build that fails or is killed half-way leaves a mark saying the folder is no longer the
    /// tree the build state describes; the next build then rewrites it whole. Whoever saves
    /// the state removes the marker.
    pub fn mark_changes_in(&mut self, marker: PathBuf) {
        self.marker = Some(marker);
    }

    /// Called before every change to the staging folder.
    fn changing(&self) -> Result<(), OutputError> {
        let r = self.changed.get_or_init(|| match &self.marker {
            Some(m) => fs::write(m, b"a build is changing the staging folder\n").map_err(|e| format!("{}: {e}", m.display())),
            None => Ok(()),
        });
        r.clone().map_err(|e| OutputError::Io { path: self.marker.clone().unwrap_or_default(), source: io::Error::other(e) })
    }

    /// The output folder as the configuration names it (through a link, when it is one).
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// Where `rel` (a `/`-separated path) is inside the staging folder.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn touch(&self, rel: &str) -> Result<(), OutputError> {
        self.changing()?;
        let key = path_key(rel);
        self.touched.lock().expect("no panic while holding it").insert(key);
        Ok(())
    }

    /// Makes the file at `rel` (a `/`-separated path) hold `bytes`; writes only if it differs.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        self.put(rel, bytes, true)
    }

    /// Makes the file at `rel` hold `bytes`, known to differ from what it holds: no comparison.
    pub fn replace(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        self.put(rel, bytes, false)
    }

    fn put(&self, rel: &str, bytes: &[u8], compare: bool) -> Result<(), OutputError> {
        self.retrying(rel, || self.put_once(rel, bytes, compare))
    }

    /// Runs `change` of the file at `rel`; when a folder on its way was made read-only (the
    /// previous site, `chmod`ed while it was published), makes the folders from the staging
    /// folder down to it writable again and runs it once more.
    fn retrying(&self, rel: &str, change: impl Fn() -> Result<(), OutputError>) -> Result<(), OutputError> {
        // Every change stays inside the staging folder: a path comes from the build's plan or
        // from its state in the cache folder, which can be damaged or tampered with, and a
        // page path climbing out (`../../x`) would write or remove outside it.
        if !crate::store::is_within(rel) {
            return Err(OutputError::Io {
                path: self.dir.join(rel),
                source: io::Error::new(io::ErrorKind::InvalidInput, "not a path inside the site; the build state may be damaged (remove the cache folder to build afresh)"),
            });
        }
        self.unlink_on_the_way(rel)?;
        match change() {
            Err(OutputError::Io { source, .. }) if source.kind() == io::ErrorKind::PermissionDenied => {
                let mut folder = self.dir.clone();
                for part in Path::new(rel).parent().into_iter().flat_map(|p| p.components()) {
                    let _ = let_owner_write(&folder);
                    folder.push(part);
                }
                let _ = let_owner_write(&folder);
                change()
            }
            other => other,
        }
    }

    /// Nothing is ever written or removed through a symbolic link: one put in the place of a
    /// folder of the site (a series' folder moved to another disk and linked back, issue 45)
    /// would have had pages written into the folder it leads to, and a removed run delete a
    /// user's files there. A link met on the way to `rel` is removed (the link itself, never
    /// what it leads to), so that the write makes a real folder, and named in
    /// [`Staging::unlinked`]: the tree then lacks what the build state says it holds there.
    /// Each folder is looked at once per build.
    fn unlink_on_the_way(&self, rel: &str) -> Result<(), OutputError> {
        for folder in folders_above(rel) {
            let key = path_key(folder);
            if self.folders.lock().expect("no panic while holding it").contains(&key) {
                continue;
            }
            let path = self.dir.join(folder);
            match fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {
                    self.folders.lock().expect("no panic while holding it").insert(key);
                }
                Ok(m) if m.file_type().is_symlink() => {
                    self.changing()?;
                    match fs::remove_file(&path) {
                        // Another thread removed it first.
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(OutputError::Io { path, source: e }),
                        Ok(()) => self.unlinked.lock().expect("no panic while holding it").push(folder.to_string()),
                    }
                    return Ok(());
                }
                // Not there (the write makes it), or a file, which the write meets.
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// Removes the symbolic link at `rel` (the link, never what it leads to), naming it in
    /// [`Staging::unlinked`] when `ours` (the site has a folder or file there); `false` when
    /// there is no link there.
    pub fn remove_link(&self, rel: &str, ours: bool) -> Result<bool, OutputError> {
        if !crate::store::is_within(rel) || !fs::symlink_metadata(self.dir.join(rel)).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(false);
        }
        self.changing()?;
        let path = self.dir.join(rel);
        fs::remove_file(&path).map_err(OutputError::at(&path))?;
        if ours {
            self.unlinked.lock().expect("no panic while holding it").push(rel.to_string());
        }
        Ok(true)
    }

    /// The symbolic links this build removed from the staging tree where the site has a
    /// folder (see [`Staging::unlink_on_the_way`]), sorted. When there are any, the tree is
    /// no longer what the build state says it holds, and must be written whole.
    pub fn unlinked(&self) -> Vec<String> {
        let mut links = self.unlinked.lock().expect("no panic while holding it").clone();
        links.sort();
        links
    }

    /// Whether the way to `rel` in the published tree is through folders only: a file of the
    /// published site is read or linked from only then, never from where a link leads.
    fn published_way_clear(&self, rel: &str) -> bool {
        for folder in folders_above(rel) {
            let key = path_key(folder);
            if self.published_folders.lock().expect("no panic while holding it").contains(&key) {
                continue;
            }
            if !fs::symlink_metadata(self.target.join(folder)).is_ok_and(|m| m.is_dir()) {
                return false;
            }
            self.published_folders.lock().expect("no panic while holding it").insert(key);
        }
        true
    }

    fn put_once(&self, rel: &str, bytes: &[u8], compare: bool) -> Result<(), OutputError> {
        self.touch(rel)?;
        let path = self.dir.join(rel);
        if let Ok(meta) = fs::symlink_metadata(&path) {
            let same = || meta.is_file() && meta.len() == bytes.len() as u64 && fs::read(&path).is_ok_and(|old| old == bytes);
            if compare && same() {
                return Ok(());
            }
            remove(&path, &meta).map_err(OutputError::at(&path))?;
        } else if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(OutputError::at(&p))?;
        }
        fs::write(&path, bytes).map_err(OutputError::at(&path))
    }

    /// Makes the file at `rel` the file `from` (a hard link, or a copy where links are not
    /// possible); nothing is done when it already is.
    pub fn link(&self, rel: &str, from: &Path) -> Result<(), OutputError> {
        self.retrying(rel, || self.link_once(rel, from))
    }

    fn link_once(&self, rel: &str, from: &Path) -> Result<(), OutputError> {
        self.touch(rel)?;
        let path = self.dir.join(rel);
        let source = fs::metadata(from).map_err(OutputError::at(&from))?;
        if let Ok(meta) = fs::symlink_metadata(&path) {
            if meta.is_file() && meta.ino() == source.ino() && meta.dev() == source.dev() {
                return Ok(());
            }
            remove(&path, &meta).map_err(OutputError::at(&path))?;
        }
        link_or_copy(from, &path)
    }

    /// The file system's time now, as it stamps what is written beside the output
    /// (nanoseconds since 1970; 0 when it cannot be read): the lock file is touched and its
    /// time read back. Files are stamped with a clock that can lag the system's by a tick (and
    /// on a network file system it is the server's), so a time to compare stamps with comes
    /// from the file system itself.
    pub fn clock(&self) -> u64 {
        use std::os::fd::AsRawFd;
        let now = [libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW }; 2];
        // SAFETY: the descriptor is the lock file's, open for as long as `self`; `now` is the
        // two timestamps futimens reads.
        if unsafe { libc::futimens(self._lock.as_raw_fd(), now.as_ptr()) } != 0 {
            return 0;
        }
        let stamp = self._lock.metadata().ok().and_then(|m| m.modified().ok());
        stamp.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as u64)
    }

    /// Inodes of the staging folder and of the output folder (0 when it does not exist yet),
    /// which tell the two trees apart across swaps.
    pub fn inodes(&self) -> (u64, u64) {
        let id = |p: &Path| fs::metadata(p).map(|m| identity(&m)).unwrap_or(0);
        (id(&self.dir), id(&self.target))
    }

    /// Whether the published site's file at `rel` holds `bytes`.
    pub fn published_holds(&self, rel: &str, bytes: &[u8]) -> bool {
        if !crate::store::is_within(rel) || !self.published_way_clear(rel) {
            return false;
        }
        let path = self.target.join(rel);
        fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) && fs::read(&path).is_ok_and(|old| old == bytes)
    }

    /// Makes the file at `rel` the published site's file at `rel` (which is known to hold the
    /// right bytes), without reading it. `false`, with nothing done, when the published file is
    /// not there as a file (removed by hand) or is reached through a symbolic link (put in the
    /// place of a folder of the site): the caller writes the file's bytes instead.
    pub fn link_published(&self, rel: &str) -> Result<bool, OutputError> {
        // Not a file (gone, removed by hand, or a link): the caller writes the bytes.
        if !crate::store::is_within(rel) || !self.published_way_clear(rel) || !fs::symlink_metadata(self.target.join(rel)).is_ok_and(|m| m.is_file()) {
            return Ok(false);
        }
        self.link(rel, &self.target.join(rel)).map(|()| true)
    }

    /// Removes the file or folder at `rel`, and the folders it leaves empty.
    pub fn remove(&self, rel: &str) -> Result<(), OutputError> {
        self.retrying(rel, || self.remove_once(rel))
    }

    fn remove_once(&self, rel: &str) -> Result<(), OutputError> {
        self.changing()?;
        let path = self.dir.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(meta) => remove(&path, &meta).map_err(OutputError::at(&path))?,
            Err(_) => return Ok(()),
        }
        let mut folder = path.parent();
        while let Some(f) = folder {
            if f == self.dir || fs::remove_dir(f).is_err() {
                break;
            }
            folder = f.parent();
        }
        Ok(())
    }

    /// Puts the staging folder in the output's place and keeps the previous output as the
    /// next build's staging folder. With `sweep`, first removes every file this build did not
    /// write (a walk of the whole tree); without, the caller has removed what must go.
    ///
    /// With `mirror`, the staging folder is then made anew as a copy of the new site in hard
    /// links, so that the next build has a known tree to update; its inode is returned.
    pub fn commit(mut self, sweep: bool, mirror: bool) -> Result<Option<u64>, OutputError> {
        self.changing()?;
        let touched = std::mem::take(&mut *self.touched.lock().expect("no panic while holding it"));
        if sweep {
            sweep_untouched(&self.dir, &touched)?;
        }
        drop(touched);
        carry_git(&self.target, &self.dir)?;
        // Every file of the new site is on disk before it is swapped in, and the swap is on
        // disk before the build state says so (as git and cargo fsync before their renames):
        // after a power loss the output is the old site or the new one, never a site of empty
        // files.
        sync_file_system(&self.dir)?;
        swap(&self.dir, &self.target)?;
        sync_folder(self.target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")))?;
        if !mirror {
            self.committed = true;
            return Ok(None);
        }
        let _ = fs::remove_dir_all(&self.dir);
        // Not the output's git repository: it has one place, the output (see `carry_git`).
        let walk = walkdir::WalkDir::new(&self.target).sort_by_file_name().into_iter();
        for e in walk.filter_entry(|e| !(e.depth() == 1 && e.file_name() == GIT)) {
            let e = e.map_err(|e| OutputError::Io { path: e.path().unwrap_or(&self.target).to_path_buf(), source: e.into() })?;
            let to = self.dir.join(e.path().strip_prefix(&self.target).expect("inside the target"));
            if e.file_type().is_dir() {
                fs::create_dir_all(&to).map_err(OutputError::at(&to))?;
            } else {
                link_or_copy(e.path(), &to)?;
            }
        }
        let id = identity(&fs::metadata(&self.dir).map_err(OutputError::at(&self.dir))?);
        self.committed = true;
        Ok(Some(id))
    }
}

impl Drop for Staging {
    /// A build that changed the staging folder and failed (a full disk, a page that does not
    /// render) removes it: what it holds is half one site and half another, and on a full disk
    /// the space it takes is what the next build needs. The next build makes it anew.
    fn drop(&mut self) {
        if !self.committed && self.changed.get().is_some() {
            // The output's git repository, moved in just before a swap that then failed, goes
            // back first.
            let _ = carry_git(&self.dir, &self.target);
            if fs::symlink_metadata(self.dir.join(GIT)).is_err() {
                let _ = fs::remove_dir_all(&self.dir);
            }
        }
    }
}

/// The identity of a tree's folder, by which the build state knows a tree: its inode and,
/// where the file system keeps it, its birth time. The inode alone is not enough: a staging
/// folder deleted by hand and made again by the next build can get the same inode number,
/// and the state then took the new, empty folder for the tree it knew (a site published
/// without its pages).
fn identity(meta: &fs::Metadata) -> u64 {
    let born = meta.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as u64);
    let mut h = blake3::Hasher::new();
    h.update(&meta.ino().to_le_bytes());
    h.update(&meta.dev().to_le_bytes());
    h.update(&born.to_le_bytes());
    // Never 0, which means no tree.
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("eight bytes")).max(1)
}

/// `path` with its last component's symbolic links followed (a link to a link, relative or
/// absolute), so that the folder replaced is the one the link leads to. A link to a folder that
/// does not exist yet gives that folder's path.
fn resolve_links(path: &Path) -> Result<PathBuf, OutputError> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(OutputError::at(&p))?;
                p = match p.parent() {
                    Some(parent) => parent.join(to),
                    None => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(OutputError::Io { path: path.to_path_buf(), source: io::Error::other("too many levels of symbolic links") })
}

/// The folders on the way to `rel`, from the top: `a`, `a/b` for `a/b/c`.
fn folders_above(rel: &str) -> impl Iterator<Item = &str> {
    rel.match_indices('/').map(move |(i, _)| &rel[..i])
}

/// A file's `/`-separated path as a 128-bit key (BLAKE3's first 16 bytes): two paths of one
/// build share a key with a chance far below that of a disk error.
fn path_key(rel: &str) -> u128 {
    let hash = blake3::hash(rel.as_bytes());
    u128::from_le_bytes(hash.as_bytes()[..16].try_into().expect("16 bytes"))
}

/// Removes every file under `dir` not in `touched`, then the folders left empty. Each goes as
/// the walk meets it (a folder after its contents), so that nothing of the size of the tree is
/// listed in memory.
fn sweep_untouched(dir: &Path, touched: &HashSet<u128>) -> Result<(), OutputError> {
    let walk = walkdir::WalkDir::new(dir).min_depth(1).contents_first(true).into_iter();
    // The output's git repository (a gh-pages checkout), carried from tree to tree.
    for e in walk.filter_entry(|e| !(e.depth() == 1 && e.file_name() == GIT)).flatten() {
        if e.file_type().is_dir() {
            // Only empty folders go; contents come first, so emptied ones are empty by now.
            let _ = fs::remove_dir(e.path());
            continue;
        }
        let rel = e.path().strip_prefix(dir).unwrap();
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if !touched.contains(&path_key(&rel)) {
            let removed = fs::remove_file(e.path()).or_else(|err| match (err.kind(), e.path().parent()) {
                // In a folder of the previous site made read-only.
                (io::ErrorKind::PermissionDenied, Some(folder)) => let_owner_write(folder).and_then(|()| fs::remove_file(e.path())),
                _ => Err(err),
            });
            removed.map_err(OutputError::at(e.path()))?;
        }
    }
    Ok(())
}

/// Puts `dir` in `target`'s place; `dir` then holds the previous site.
fn swap(dir: &Path, target: &Path) -> Result<(), OutputError> {
    let err = |source: io::Error| OutputError::Io { path: target.to_path_buf(), source };
    if target.exists() {
        if exchange(dir, target).is_err() {
            // No atomic exchange here (NFS, FUSE, vfat): move the old site aside, then the new
            // one in, then the old one to the staging folder's place. A build killed between
            // two of these leaves the old site aside; the next one puts it back
            // (`recover_swap`).
            let aside = aside_of(dir);
            let _ = fs::remove_dir_all(&aside);
            fs::rename(target, &aside).map_err(err)?;
            fs::rename(dir, target).map_err(err)?;
            fs::rename(&aside, dir).map_err(err)?;
        }
    } else {
        fs::rename(dir, target).map_err(err)?;
    }
    Ok(())
}

/// Where the swap without an atomic exchange puts the old site for a moment: beside the
/// staging folder `dir` (`.NAME.flamesite-next` → `.NAME.flamesite-old`).
fn aside_of(dir: &Path) -> PathBuf {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dir.with_file_name(format!("{}-old", name.strip_suffix("-next").unwrap_or(&name)))
}

/// After a build killed in the middle of a swap without an atomic exchange (see [`swap`]),
/// puts things back, under the build lock: with no output folder, the old site that was moved
/// aside goes back to its place (the staging folder still holds the unpublished new site, which
/// the next build, not knowing it, writes again); with no staging folder, the old site aside is
/// the previous tree and becomes the staging folder. Older versions put it at `.NAME.old`.
fn recover_swap(target: &Path, dir: &Path, aside: &Path) -> Result<(), OutputError> {
    let legacy = dir.with_extension("old");
    for aside in [aside, legacy.as_path()] {
        if !fs::symlink_metadata(aside).is_ok_and(|m| m.is_dir()) || !is_flamesite_output(aside) {
            continue;
        }
        if fs::symlink_metadata(target).is_err() {
            fs::rename(aside, target).map_err(OutputError::at(target))?;
        } else if fs::symlink_metadata(dir).is_err() {
            fs::rename(aside, dir).map_err(OutputError::at(dir))?;
        } else {
            fs::remove_dir_all(aside).map_err(OutputError::at(aside))?;
        }
    }
    Ok(())
}

/// Flushes to disk every file written on the file system that holds `dir` (`syncfs`: one call
/// for the thousands of files a build writes, where an `fsync` each took a journal commit
/// each).
#[cfg(target_os = "linux")]
fn sync_file_system(dir: &Path) -> Result<(), OutputError> {
    use std::os::fd::AsRawFd;
    let f = fs::File::open(dir).map_err(OutputError::at(dir))?;
    // SAFETY: syncfs on a file descriptor we own.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(OutputError::Io { path: dir.to_path_buf(), source: io::Error::last_os_error() });
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn sync_file_system(_dir: &Path) -> Result<(), OutputError> {
    // SAFETY: sync has no arguments.
    unsafe { libc::sync() };
    Ok(())
}

/// Makes a rename in folder `dir` durable (`fsync` of the folder).
fn sync_folder(dir: &Path) -> Result<(), OutputError> {
    fs::File::open(dir).and_then(|f| f.sync_all()).map_err(OutputError::at(dir))
}

/// Makes `to` (which must not exist) the file `from`: a hard link, or a copy where links are
/// not possible (another file system); creates `to`'s folders.
pub fn link_or_copy(from: &Path, to: &Path) -> Result<(), OutputError> {
    if let Some(p) = to.parent() {
        fs::create_dir_all(p).map_err(OutputError::at(&p))?;
    }
    if fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    fs::copy(from, to).map(|_| ()).map_err(OutputError::at(to))
}

/// The name of a git repository's folder at the top of the output (a `gh-pages` checkout).
pub const GIT: &str = ".git";

/// Moves the output's git repository (`target/.git`, a `gh-pages` checkout) into the new site
/// `dir` before the swap, so that it stays the output's, and `git add -A && git commit` there
/// publishes the new site. When the new site already has one (a build killed after moving it,
/// before the swap), the output has none, and nothing moves.
fn carry_git(target: &Path, dir: &Path) -> Result<(), OutputError> {
    let (from, to) = (target.join(GIT), dir.join(GIT));
    if fs::symlink_metadata(&from).is_err() || fs::symlink_metadata(&to).is_ok() {
        return Ok(());
    }
    fs::rename(&from, &to).map_err(OutputError::at(&from))
}

/// Adds the owner's write (and search) permission to folder `dir`.
fn let_owner_write(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(dir)?.permissions().mode();
    if mode & 0o300 == 0o300 {
        return Ok(());
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(mode | 0o300))
}

fn remove(path: &Path, meta: &fs::Metadata) -> io::Result<()> {
    if meta.is_dir() {
        // A folder of the previous site made read-only: its contents can go only once it is
        // writable again (and its subfolders).
        if fs::remove_dir_all(path).is_ok() {
            return Ok(());
        }
        for e in walkdir::WalkDir::new(path).into_iter().flatten().filter(|e| e.file_type().is_dir()) {
            let _ = let_owner_write(e.path());
        }
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

/// Takes an exclusive lock on `file` without waiting; false when another process holds it.
fn try_lock(file: &fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor we own; the lock is released when the file closes.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether `dir` may be replaced by a site: it is empty, or its `index.json` is a whole one
/// flamesite wrote (`output::recognise`; read as a regular file within a budget, so a FIFO or
/// a link to `/dev/zero` in its place is not waited on).
fn is_flamesite_output(dir: &Path) -> bool {
    // Empty, or a git checkout with nothing else yet (a new `gh-pages` branch).
    let empty = fs::read_dir(dir).map(|mut d| d.all(|e| e.is_ok_and(|e| e.file_name() == GIT))).unwrap_or(false);
    empty || super::read_index(dir).ok().flatten().is_some_and(|b| super::recognise(&b).is_some())
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let ca = CString::new(a.as_os_str().as_bytes())?;
    let cb = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both are valid NUL-terminated paths; renameat2 does not keep the pointers.
    let rc = unsafe {
        libc::renameat2(libc::AT_FDCWD, ca.as_ptr(), libc::AT_FDCWD, cb.as_ptr(), libc::RENAME_EXCHANGE)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest index.json of a site `flamesite build` made.
    const SITE_INDEX: &[u8] = br#"{"format":"flamesite-index","version":3,"series":[],"names":{}}"#;

    #[test]
    fn only_a_whole_index_flamesite_wrote_makes_a_folder_a_site() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("notes.txt"), b"a user's file").unwrap();
        let refused = |what: &str| {
            let e = Staging::new(&out).err().unwrap_or_else(|| panic!("{what}: replaced")).to_string();
            assert!(e.contains("refusing to replace") && e.contains("no flamesite index.json"), "{what}: {e}");
            assert!(out.join("notes.txt").is_file(), "{what}");
        };
        // A user's file that quotes the format, and a site's index cut short.
        fs::write(out.join("index.json"), br#"{"doc": "ours says "format":"flamesite-index""}"#).unwrap();
        refused("a quote");
        fs::write(out.join("index.json"), &SITE_INDEX[..40]).unwrap();
        refused("cut short");
        // A FIFO is not read (it would block), nor a link to an endless file.
        fs::remove_file(out.join("index.json")).unwrap();
        let fifo = std::ffi::CString::new(out.join("index.json").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        refused("a FIFO");
        fs::remove_file(out.join("index.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", out.join("index.json")).unwrap();
        refused("a link to /dev/zero");
        // A whole one is a site.
        fs::remove_file(out.join("index.json")).unwrap();
        fs::write(out.join("index.json"), SITE_INDEX).unwrap();
        assert!(Staging::new(&out).is_ok());
        assert_eq!(crate::output::recognise(SITE_INDEX), Some(crate::output::SiteKind::Archive));
        assert_eq!(crate::output::recognise(br#"{"format":"flamesite-index","version":3,"series":[],"comparison":{}}"#), Some(crate::output::SiteKind::Comparison));
    }

    #[test]
    fn paths_that_climb_out_of_the_site_are_neither_written_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, b"a user's file").unwrap();
        let s = Staging::new(&out).unwrap();
        for rel in ["../victim.txt", "a/../../victim.txt", "/tmp/x", "./x", ""] {
            let e = s.remove(rel).unwrap_err().to_string();
            assert!(e.contains("not a path inside the site"), "{rel}: {e}");
            assert!(s.write(rel, b"over").is_err(), "{rel}");
        }
        assert_eq!(fs::read(&victim).unwrap(), b"a user's file");
        s.write("a/b.txt", b"fine").unwrap();
        s.remove("a/b.txt").unwrap();
    }

    #[test]
    fn commit_replaces_and_drop_keeps_the_old_site() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let s = Staging::new(&out).unwrap();
        s.write("index.json", SITE_INDEX).unwrap();
        s.write("a/b.txt", b"one").unwrap();
        s.commit(true, false).unwrap();
        assert_eq!(fs::read(out.join("a/b.txt")).unwrap(), b"one");

        let s = Staging::new(&out).unwrap();
        assert!(Staging::new(&out).err().unwrap().to_string().contains("another flamesite build"));
        s.write("a/b.txt", b"two").unwrap();
        drop(s); // a failed build
        assert_eq!(fs::read(out.join("a/b.txt")).unwrap(), b"one");

        let s = Staging::new(&out).unwrap();
        s.write("index.json", SITE_INDEX).unwrap();
        s.write("c.txt", b"three").unwrap();
        s.commit(true, false).unwrap();
        assert!(!out.join("a/b.txt").exists() && !out.join("a").exists(), "stale files do not survive");
        assert_eq!(fs::read(out.join("c.txt")).unwrap(), b"three");
        let mut names: Vec<_> =
            fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, [".public.flamesite-lock", ".public.flamesite-next", "public"]);
        // The previous site is kept beside it, as the start of the next build.
        assert_eq!(fs::read(dir.path().join(".public.flamesite-next/a/b.txt")).unwrap(), b"one");
    }

    #[test]
    fn unchanged_files_are_not_rewritten_and_shared_files_never_written_in_place() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let shared = dir.path().join("cache-file");
        fs::write(&shared, b"graph").unwrap();
        for round in 0..3 {
            let s = Staging::new(&out).unwrap();
            s.write("index.json", SITE_INDEX).unwrap();
            s.write("page.html", format!("round {}", round.min(1)).as_bytes()).unwrap();
            s.link("g/data.bin", &shared).unwrap();
            s.commit(true, false).unwrap();
        }
        let ino = |p: &Path| fs::metadata(p).unwrap().ino();
        assert_eq!(ino(&out.join("g/data.bin")), ino(&shared));
        assert_eq!(fs::read(out.join("page.html")).unwrap(), b"round 1");
        // A page that changes is replaced, not written through a link it shares.
        let s = Staging::new(&out).unwrap();
        s.write("index.json", SITE_INDEX).unwrap();
        s.write("g/data.bin", b"other").unwrap();
        s.commit(true, false).unwrap();
        assert_eq!(fs::read(&shared).unwrap(), b"graph");
        assert_eq!(fs::read(out.join("g/data.bin")).unwrap(), b"other");
    }

    #[test]
    fn refuses_to_replace_a_folder_that_is_not_a_site() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("precious.txt"), b"x").unwrap();
        let err = Staging::new(dir.path()).err().unwrap().to_string();
        assert!(err.contains("refusing"), "{err}");
    }
}
