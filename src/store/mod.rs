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

/// Whether `rel` names something inside a folder of this machine: relative, `/`-separated, no
/// `.`, `..` or empty component (a path the build writes or removes in the staging folder, a
/// name read back from its state or from a published listing).
pub fn is_within(rel: &str) -> bool {
    !rel.is_empty() && !rel.starts_with('/') && rel.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// Whether `rel` names a file inside a folder on any machine: [`is_within`], and no `\` or NUL
/// (the files a manifest or a cache entry lists, which are read as data wherever they go).
pub fn is_inside(rel: &str) -> bool {
    is_within(rel) && !rel.contains('\\') && !rel.contains('\0')
}
