//! flamesite turns a directory of compressed profiles into a static archive of interactive
//! flame graphs.
//!
//! The build runs in four phases ([`build`]), each handing the next plain data:
//!
//! ```text
//! ingest   scan the input folder, decode each changed profile (gzip/zstd; folded, pprof,
//!          perf…, cpuprofile, speedscope), merge its stacks into frame tables (graph) and
//!          write its graph files (store) into the cache
//! group    series, dates, previous and next runs (archive)
//! derive   comparisons of runs: differential graphs (graph::diff), regressions, a function's
//!          history per series (derive)
//! publish  plan every page with a hash of what it shows, render the changed ones with tera
//!          (site, themes/), link the graph files, swap the staging folder in (publish,
//!          through output)
//! ```
//!
//! Profiles are processed in parallel with rayon, and the output is the same bytes whatever the
//! thread count. [`store::fold`] reads a built graph back into folded stacks.
#![deny(missing_docs)]

/// Writes a line to standard error, as `eprintln!` does, without panicking when it cannot
/// be written (a reader that went away: `flamesite build 2>&1 | head -1`): the build's work
/// and exit status do not depend on who reads its messages.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod archive;
pub mod build;
pub mod cli;
pub mod config;
pub mod derive;
pub mod diff;
pub mod error;
pub mod graph;
pub mod ingest;
pub mod objects;
pub mod output;
pub mod publish;
pub mod serve;
pub mod site;
pub mod store;
pub mod units;
