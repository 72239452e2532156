//! Errors and warnings of a build, as values.
//!
//! A profile's problem is a [`ProfileError`]: the profile's path (relative to the input
//! folder), added here once, and the reason, which the readers give as a sentence without the
//! path. A problem that stops the whole build (the configuration, the input or output folder,
//! the theme) is a [`BuildError`]. Warnings do not stop anything: they are collected as
//! [`Warning`]s and printed in the summary.

use std::fmt;
use std::path::PathBuf;

/// Why one profile could not be built; the build goes on without it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ProfileError {
    /// The profile's path, relative to the input folder (or the path the scan could not read).
    pub path: String,
    /// What went wrong, without the path.
    pub reason: String,
}

impl ProfileError {
    /// The error of the profile at `path`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> ProfileError {
        ProfileError { path: path.into(), reason: reason.into() }
    }
}

/// Why a profile was not ingested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IngestError {
    /// The profile cannot be built (not a profile, corrupt, …); the build goes on without it.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// Its files could not be written (a full disk, a read-only folder): the build stops, since
    /// going on would publish a site without a run that is there. The message names the path.
    #[error("{0}")]
    Write(String),
}

/// Why a cache entry (or a run's or a comparison's files, without a cache) was not made: what
/// a graph's sink (`store::columns::Sink`) and everything that writes through one return, so
/// that a file that could not be written (which stops the build) is told from a profile that
/// could not be made (which is skipped) by its type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    /// Making its content failed (the profile cannot be decoded).
    #[error("{0}")]
    Make(String),
    /// Writing it failed; the message names the path.
    #[error("{0}")]
    Write(String),
}

/// Every other failure on the way to a graph's files (decoding, merging, encoding) is one of
/// making it.
impl From<String> for FillError {
    fn from(why: String) -> FillError {
        FillError::Make(why)
    }
}

/// Something worth telling about a profile that was built anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The profile's path, relative to the input folder; or, for a warning about another
    /// file (the output folder's, site.toml), its absolute path.
    pub path: String,
    /// What happened, without the path.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Why a command of the command line failed: its `Display` is the sentence printed after
/// `error: `, and its kind gives the exit status ([`CommandError::exit_status`]).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The command line or `site.toml` asks for what flamesite does not do (`--shard` with
    /// `--no-cache`, a bucket to `serve`, no `site.toml`, …).
    #[error("{0}")]
    Usage(String),
    /// A build could not run (`build`, `check`, `serve`), with the typed reason.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// `init`, `diff`, `fold` or `serve` failed; the sentence names the file or the address.
    #[error("{0}")]
    Failed(String),
    /// Writing the command's result to standard output failed.
    #[error("standard output: {0}")]
    Stdout(std::io::Error),
}

impl From<String> for CommandError {
    fn from(sentence: String) -> CommandError {
        CommandError::Failed(sentence)
    }
}

impl CommandError {
    /// The process's exit status: 2 for every error (1 is a build that skipped a profile or a
    /// budget exceeded, which are not errors of the command).
    pub fn exit_status(&self) -> u8 {
        match self {
            CommandError::Usage(_) | CommandError::Build(_) | CommandError::Failed(_) | CommandError::Stdout(_) => 2,
        }
    }
}

/// Why a build could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// `site.toml` or the options are wrong.
    #[error("{0}")]
    Config(String),
    /// The input folder cannot be listed.
    #[error("input folder {}: {reason}", path.display())]
    Input {
        /// The folder.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The theme's templates do not load or a page does not render.
    #[error("theme: {0}")]
    Theme(String),
    /// Writing the output folder failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Reading or writing the cache folder or the build state failed.
    #[error("{0}")]
    Cache(String),
    /// A run's or a comparison's files could not be written (a full disk, …); the message
    /// names the path. Nothing was published.
    #[error("{0}")]
    Write(String),
    /// Object storage failed while the build was `doing` something (empty: opening it); the
    /// store's error, which names the object, is its source.
    #[error("{}{source}", if doing.is_empty() { String::new() } else { format!("{doing}: ") })]
    Bucket {
        /// What the build was doing: "reading the record of the published site", …
        doing: &'static str,
        /// The store's error.
        source: BucketError,
    },
}

impl BuildError {
    /// A failure of object storage while the build was `doing` something.
    pub fn bucket(doing: &'static str) -> impl FnOnce(BucketError) -> BuildError {
        move |source| BuildError::Bucket { doing, source }
    }
}

/// Why an operation on object storage failed (`output::bucket`). Messages name the object by
/// the bucket's address, never with credentials.
#[derive(Debug, thiserror::Error)]
pub enum BucketError {
    /// The address does not name a store flamesite reads or publishes to, or its client could
    /// not be made (`what` is `"input"` or `"output"`).
    #[error("{what} {url}: {reason}")]
    Open {
        /// Which of the build's places the address is.
        what: String,
        /// The address as given (without credentials: they come from the environment).
        url: String,
        /// Why.
        reason: String,
    },
    /// The store answered an operation on `object` with an error.
    #[error("{object}: {source}")]
    Store {
        /// The object's address.
        object: String,
        /// The store client's error.
        #[source]
        source: object_store::Error,
    },
    /// An object larger than what flamesite reads of such an object (its size from the GET's
    /// length, or counted as its body came): refused before or while it is read.
    #[error("{object}: is {size} bytes, more than the {budget} such an object may be; not read")]
    TooLarge {
        /// The object's address.
        object: String,
        /// Its size, or the bytes that had come when it passed the budget.
        size: u64,
        /// The most bytes read of it.
        budget: u64,
    },
    /// A listing or a caller named an object outside the site's prefix.
    #[error("{0}: not a path inside the site")]
    Outside(String),
    /// A local file on the way to or from the bucket (the spool, the cache) could not be read
    /// or written.
    #[error("{}: {source}", path.display())]
    Local {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

impl BucketError {
    /// The error of a local file operation on `path`, for `map_err`.
    pub fn local(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BucketError {
        let path = path.into();
        move |source| BucketError::Local { path, source }
    }
}

/// Why the output folder could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A file system operation on `path` failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// What was being read or written.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The output folder holds something that is not a flamesite site.
    #[error("refusing to replace {}: it is not empty and has no flamesite index.json (none, one flamesite did not write, or one cut short); remove it or choose another output folder", .0.display())]
    NotASite(PathBuf),
    /// Another build holds the output's lock.
    #[error("another flamesite build is writing {}; wait for it to finish", .0.display())]
    Locked(PathBuf),
    /// The bucket holds something this build will not overwrite, or its lock is held or
    /// changed hands (the message names the object).
    #[error("{0}")]
    Bucket(String),
    /// An operation on object storage failed.
    #[error(transparent)]
    Store(#[from] BucketError),
    /// The output path has no folder name.
    #[error("output {} has no folder name", .0.display())]
    NoName(PathBuf),
}

impl OutputError {
    /// The error of an operation on `path`, for `map_err`.
    pub fn at(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> OutputError {
        let path = path.into();
        move |source| OutputError::Io { path, source }
    }
}

/// A path outside the input folder as a warning shows it: absolute, since the command line
/// prints warnings' paths relative to the input folder (a relative output folder, `public`,
/// would otherwise read as `profiles/public/CNAME`).
pub fn shown(path: &std::path::Path) -> String {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}
