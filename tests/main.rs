//! The integration tests, one module per subject, compiled into one test binary: linking one
//! binary instead of one per file is most of what a rebuild of the tests costs (docs/
//! BENCHMARKS.md, "The test command"). cargo-nextest still runs each test in a process of its
//! own (scripts/test.sh).

mod common;

mod archive;
mod azure;
mod bucket;
mod build;
mod compare;
mod formats_empty;
mod formats_foreign;
mod formats_jfr;
mod formats_pprof;
mod formats_text;
mod fuzz;
mod gcs;
mod incremental;
mod promises;
mod reliability;
mod serve;
mod serve_hostile;
