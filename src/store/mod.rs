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

/// Opens the file at `path` to be read as data: without following a symbolic link at its last
/// component (the error is then ELOOP) and without waiting for a writer (a FIFO opens at once,
/// and is refused here), as a regular file. Returns it with its size, which the caller checks
/// against its budget before reading anything.
pub fn open_regular(path: &std::path::Path) -> std::io::Result<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "is not a regular file"));
    }
    Ok((file, meta.len()))
}

/// The bytes of the regular file at `path` (see [`open_regular`]), of at most `budget` bytes:
/// a FIFO, a device (a link to `/dev/zero`), a symbolic link or a larger file is an error
/// before anything is read, and the read stops at the budget (a file that grows meanwhile).
/// The one way the build reads a record or a listing of its own whole; a missing file is the
/// system's `NotFound`. Callers name the path.
pub fn read_regular(path: &std::path::Path, budget: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, len) = open_regular(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a symbolic link, not a regular file"),
        _ => e,
    })?;
    let over = |len: u64| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("is {len} bytes, more than the {budget} such a file may be"));
    if len > budget {
        return Err(over(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(budget + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > budget {
        return Err(over(bytes.len() as u64));
    }
    Ok(bytes)
}
