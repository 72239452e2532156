//! flamesite turns a directory of compressed profiles into a static archive of interactive
//! flame graphs.
//!
//! The pipeline, one module per stage, in the order the data flows:
//!
//! ```text
//! config ─► scan ─► decode (gzip/zstd; folded, pprof, perf…, cpuprofile, speedscope)
//!        ─► frames (merge into a FrameTable)
//!        ─► color (name hash) ─► chunk (manifest, names, depth chunks, search buckets)
//!        ─► archive (series, dated runs) ─► pages (home, series, run pages, feeds)
//!        ─► render (tera, themes/) ─► write (staging folder, atomic swap)
//! ```
//!
//! [`site::build`] runs it for a whole site; each profile is independent until the index
//! pages, so profiles are processed in parallel with rayon, and the output is the same bytes
//! whatever the thread count. [`fold`] reads a built graph back into folded stacks.
#![deny(missing_docs)]

pub mod archive;
pub mod build;
pub mod cli;
pub mod config;
pub mod derive;
pub mod error;
pub mod graph;
pub mod ingest;
pub mod output;
pub mod serve;
pub mod site;
pub mod store;
pub mod units;
