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

/// Something worth telling about a profile that was built anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The profile's path, relative to the input folder.
    pub path: String,
    /// What happened, without the path.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
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
    /// Writing the output folder (or the cache beside it) failed.
    #[error("{0}")]
    Output(String),
}

impl From<String> for BuildError {
    /// Messages of the output and staging code, which name their paths themselves.
    fn from(message: String) -> BuildError {
        BuildError::Output(message)
    }
}
