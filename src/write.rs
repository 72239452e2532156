//! Writing: the one place that touches the output folder.
//!
//! A build writes into a staging folder beside the output and, when everything is written,
//! swaps it with the output in one atomic `renameat2(RENAME_EXCHANGE)` (two renames where the
//! system has no exchange). A build that fails or is killed leaves the previous site as it
//! was; its staging folder is removed by the next build.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A folder being filled, to become the output folder on [`Staging::commit`].
pub struct Staging {
    dir: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staging {
    /// Prepares a staging folder for `target`, refusing to ever replace a folder that is not
    /// a flamesite output.
    pub fn new(target: &Path) -> Result<Staging, String> {
        let name = target
            .file_name()
            .ok_or_else(|| format!("output {} has no folder name", target.display()))?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        if target.exists() && !is_flamesite_output(target) {
            return Err(format!(
                "refusing to replace {}: it is not empty and has no flamesite index.json; remove it or choose another output folder",
                target.display()
            ));
        }
        // Leftovers of builds that were killed.
        let prefix = format!(".{name}.flamesite-");
        if let Ok(entries) = fs::read_dir(&parent) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = parent.join(format!("{prefix}{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Staging { dir, target: target.to_path_buf(), committed: false })
    }

    /// Where `rel` (a `/`-separated path) is inside the staging folder.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Writes `bytes` at `rel` (a `/`-separated path) inside the staging folder.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.dir.join(rel);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Puts the staging folder in the output's place and removes the previous output.
    pub fn commit(mut self) -> Result<(), String> {
        let err = |e: io::Error| format!("replacing {}: {e}", self.target.display());
        if self.target.exists() {
            if exchange(&self.dir, &self.target).is_err() {
                // No atomic exchange here: move the old site aside, then the new one in.
                let aside = self.dir.with_extension("old");
                fs::rename(&self.target, &aside).map_err(err)?;
                fs::rename(&self.dir, &self.target).map_err(err)?;
                let _ = fs::remove_dir_all(&aside);
                self.committed = true;
                return Ok(());
            }
            // `dir` now holds the previous site.
            let _ = fs::remove_dir_all(&self.dir);
        } else {
            fs::rename(&self.dir, &self.target).map_err(err)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

fn is_flamesite_output(dir: &Path) -> bool {
    let empty = fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false);
    empty
        || fs::read_to_string(dir.join("index.json"))
            .map(|s| s.contains("\"flamesite-index\""))
            .unwrap_or(false)
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

    #[test]
    fn commit_replaces_and_drop_keeps_the_old_site() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let s = Staging::new(&out).unwrap();
        s.write("index.json", b"{\"format\":\"flamesite-index\"}").unwrap();
        s.write("a/b.txt", b"one").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read(out.join("a/b.txt")).unwrap(), b"one");

        let s = Staging::new(&out).unwrap();
        s.write("a/b.txt", b"two").unwrap();
        drop(s); // a failed build
        assert_eq!(fs::read(out.join("a/b.txt")).unwrap(), b"one");

        let s = Staging::new(&out).unwrap();
        s.write("index.json", b"{\"format\":\"flamesite-index\"}").unwrap();
        s.write("c.txt", b"three").unwrap();
        s.commit().unwrap();
        assert!(!out.join("a/b.txt").exists(), "stale files do not survive");
        assert_eq!(fs::read(out.join("c.txt")).unwrap(), b"three");
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("public")]);
    }

    #[test]
    fn refuses_to_replace_a_folder_that_is_not_a_site() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("precious.txt"), b"x").unwrap();
        let err = Staging::new(dir.path()).err().unwrap();
        assert!(err.contains("refusing"), "{err}");
    }
}
