//! The on-disk graph format, both ways: [`chunk`] writes a frame table as a manifest, name
//! files, depth chunks and search buckets (see `docs/FORMAT.md`) and reads them back;
//! [`fold`] prints a built graph as folded stacks through that reader; [`sandwich`] writes
//! the precomputed sandwiches of a graph's most called functions.

pub mod chunk;
pub mod columns;
pub mod fold;
pub mod gz;
mod planes;
pub mod sandwich;

/// Whether `rel` names a file inside a folder: relative, `/`-separated, no `.`, `..` or empty
/// component (the files a manifest or a cache entry lists, which are read as data).
pub fn is_inside(rel: &str) -> bool {
    !rel.is_empty() && !rel.starts_with('/') && !rel.contains('\\') && !rel.contains('\0') && rel.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}
