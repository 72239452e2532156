//! Ingest: one profile file in, one run's record and graph files out.
//!
//! [`scan`] lists the profile files, [`decode`] reads one (any compression, any supported
//! format) into frame tables, and the store encodes each table into its graph files. What a
//! run is made of depends only on its file, its sidecars and the configuration, so this is
//! the unit the [`cache`] keeps and what the build runs in parallel.

pub mod cache;
pub mod decode;
pub mod scan;
