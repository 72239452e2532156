//! The reader of a built graph folder: its manifest and name files, each file checked against
//! what the manifest says before it is read (a graph folder is read as data), its chunks
//! decoded ([`super::decode_chunk`]) into a [`FrameTable`], and that table checked to be a tree.

use std::path::Path;

use crate::graph::diff;
use crate::graph::frames::{Before, FrameTable, Layout, NO_PARENT};
use crate::store::gz;
use super::decode_chunk::decode_chunk;
use super::format::{LAYOUTS_VERSION, MANIFEST_VERSION, NO_WIDTHS_VERSION, PACKED_VERSION};
use super::manifest::{ChunkRef, Manifest, Names, MAX_STORED_DECIMALS};

/// Largest name file a reader unpacks: far more than `names_per_file` names of the longest
/// line a profile may have.
const MAX_NAME_FILE_BYTES: u64 = 1 << 30;

/// Largest `manifest.json` a reader takes: far more than the manifest of any graph.
const MAX_MANIFEST_BYTES: u64 = 1 << 30;

/// The bytes of the file at `path`, which must be a regular file of at most `limit` bytes
/// (exactly `exact` when given), reached without following a symbolic link at its last
/// component: a graph folder is read as data, so a manifest naming `/dev/zero`, a FIFO or a
/// link out of the folder is refused before anything is read (found by a hostile tester).
fn read_file(path: &Path, limit: u64, exact: Option<u64>) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let bad = |why: String| format!("{}: {why}", path.display());
    let (file, len) = crate::store::open_regular(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => bad("is a symbolic link, which a graph folder's files never are".into()),
        _ => bad(e.to_string()),
    })?;
    if len > limit || exact.is_some_and(|n| n != len) {
        let want = exact.map_or(format!("at most {limit}"), |n| n.to_string());
        return Err(bad(format!("is {len} bytes where the manifest says {want}; the graph is damaged")));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit).read_to_end(&mut bytes).map_err(|e| bad(e.to_string()))?;
    Ok(bytes)
}

/// `rel` from a manifest, when it names a file inside the graph folder: relative, without
/// `..` or empty components.
fn inside(dir: &Path, rel: &str) -> Result<std::path::PathBuf, String> {
    if !crate::store::is_inside(rel) {
        return Err(format!("{}: the manifest names {rel:?}, which is not a file inside the graph folder; the graph is damaged", dir.join("manifest.json").display()));
    }
    // Nor through a folder of the graph that is a link (`c` linked outside it): the file itself
    // is opened without following a link (`read_file`), its folders are looked at here.
    let mut folder = dir.to_path_buf();
    for part in rel.split('/').take(rel.split('/').count() - 1) {
        folder.push(part);
        if std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!("{}: is a symbolic link, which a graph folder's folders never are; the graph is damaged", folder.display()));
        }
    }
    Ok(dir.join(rel))
}

/// Reads the manifest at `path` (within [`MAX_MANIFEST_BYTES`], a regular file).
pub fn read_manifest(path: &Path) -> Result<Manifest, String> {
    serde_json::from_slice(&read_file(path, MAX_MANIFEST_BYTES, None)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads the name file at `path` (packed or not, within [`MAX_NAME_FILE_BYTES`]).
pub fn read_names(path: &Path) -> Result<Names, String> {
    let bytes = read_file(path, MAX_NAME_FILE_BYTES, None)?;
    let bytes = gz::unpack(bytes, MAX_NAME_FILE_BYTES).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The most bytes the chunk of `entry` can hold unpacked: its header and row index, and seven
/// columns of 8-byte values and three of u32 per frame.
fn chunk_limit(entry: &ChunkRef) -> u64 {
    let rows = entry.depth[1].saturating_sub(entry.depth[0]) as u64 + 1;
    32 + 4 * rows + 68 * entry.frames as u64
}

/// Reads a built graph folder back into a frame table, from its chunk files alone; a
/// differential graph in the layout its manifest names (the union from version 8 on).
pub fn read_graph(dir: &Path) -> Result<(Manifest, FrameTable), String> {
    read_graph_in(dir, None)
}

/// [`read_graph`], a differential graph of version 8 in `layout` when given (its chunks hold
/// every layout's offsets).
pub fn read_graph_in(dir: &Path, layout: Option<Layout>) -> Result<(Manifest, FrameTable), String> {
    let manifest = read_manifest(&dir.join("manifest.json"))?;
    if manifest.format != "flamesite-graph" || !(1..=MANIFEST_VERSION).contains(&manifest.version) {
        return Err(format!(
            "{}: format {} version {} is not flamesite-graph version 1 to {MANIFEST_VERSION}",
            dir.display(),
            manifest.format,
            manifest.version
        ));
    }
    if manifest.decimals > MAX_STORED_DECIMALS {
        return Err(format!(
            "{}: {} decimal places, more than a value can have ({MAX_STORED_DECIMALS}); it is damaged",
            dir.join("manifest.json").display(),
            manifest.decimals
        ));
    }
    // A chunk file, of the size its entry says, unpacked within `limit` bytes.
    let unpacked = |entry: &ChunkRef, limit: u64| {
        let path = inside(dir, &entry.file)?;
        gz::unpack(read_file(&path, entry.bytes, Some(entry.bytes))?, limit).map_err(|e| format!("{}: {e}", path.display()))
    };
    let mut all_names = Vec::new();
    let mut all_raw = std::collections::BTreeMap::new();
    for file in &manifest.names {
        let names = read_names(&inside(dir, &file.file)?)?;
        if file.names[0] as usize != all_names.len() || Some(names.names.len()) != file.names[1].checked_sub(file.names[0]).map(|n| n as usize) {
            return Err(format!("{}: name ids do not follow on", dir.join(&file.file).display()));
        }
        if !names.raw.is_empty() && names.raw.len() != names.names.len() {
            return Err(format!("{}: {} raw names for {} names; it is damaged", dir.join(&file.file).display(), names.raw.len(), names.names.len()));
        }
        for (j, raw) in names.raw.into_iter().enumerate() {
            if let Some(raw) = raw {
                all_raw.insert((all_names.len() + j) as u32, raw);
            }
        }
        all_names.extend(names.names);
    }
    // The manifest's count is checked against the chunk files before anything is allocated
    // for it: every frame takes at least a byte of a chunk, and 24 bytes of a chunk at least
    // a 1032nd of a byte of its gzip member (deflate's largest ratio).
    let frames_per_byte = if manifest.version >= PACKED_VERSION { 1032 / 24 } else { 1 };
    let mut chunk_bytes = 0u64;
    for chunk in &manifest.chunks {
        // What is on disk, as the manifest says it (a regular file of its size, not a link),
        // before anything is allocated for the frames it claims.
        let path = inside(dir, &chunk.file)?;
        let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_file() || meta.len() != chunk.bytes {
            return Err(format!("{}: is not a regular file of the {} bytes the manifest says; the graph is damaged", path.display(), chunk.bytes));
        }
        chunk_bytes = chunk_bytes.saturating_add(meta.len());
    }
    if manifest.frames > chunk_bytes.saturating_mul(frames_per_byte) {
        return Err(format!(
            "{}: the manifest claims {} frames but its {} chunk files hold {chunk_bytes} bytes; it is damaged",
            dir.join("manifest.json").display(),
            manifest.frames,
            manifest.chunks.len()
        ));
    }
    let n = manifest.frames as usize;
    let mut t = FrameTable {
        names: all_names,
        name: vec![u32::MAX; n],
        depth: vec![0; n],
        parent: vec![0; n],
        offset: vec![0; n],
        total: vec![0; n],
        self_: vec![0; n],
        before: manifest.differential.then(|| Before { total: vec![0; n], self_: vec![0; n] }),
        after: (manifest.differential && manifest.content_version() >= 3).then(|| Before { total: vec![0; n], self_: vec![0; n] }),
        layout: match (layout, manifest.diff.as_ref().map(|d| d.layout.as_str())) {
            (Some(l), _) if manifest.content_version() == LAYOUTS_VERSION => l,
            (_, Some("union")) => Layout::Union,
            (_, Some("before")) => Layout::Before,
            _ => Layout::After,
        },
        decimals: manifest.decimals,
        raw: all_raw,
    };
    let totals = manifest.diff.as_ref().map_or((0, 0), |d| (d.total_before, d.total_after));
    for chunk in &manifest.chunks {
        let bytes = unpacked(chunk, chunk_limit(chunk))?;
        decode_chunk(&bytes, &mut t, manifest.content_version(), totals).map_err(|e| format!("{}: {e}", dir.join(&chunk.file).display()))?;
    }
    if let Some(row) = t.name.iter().position(|&x| x == u32::MAX) {
        return Err(format!("{}: frame {row} is in no chunk", dir.display()));
    }
    if manifest.differential && manifest.content_version() >= NO_WIDTHS_VERSION {
        // The widths, from the values (the chunks leave them out).
        let (b, a) = (t.before.as_ref().expect("differential"), t.after.as_ref().expect("version 4 or later"));
        let (tb, ta) = (b.total[0], a.total[0]);
        for r in 0..t.len() {
            (t.total[r], t.self_[r]) = diff::widths(t.layout, (b.total[r], b.self_[r]), (a.total[r], a.self_[r]), tb, ta);
        }
    }
    // The tree the ids promise (docs/FORMAT.md): the root alone has no parent, and every other
    // frame's parent comes before it, one row up. A damaged chunk that breaks this would send
    // a reader walking up from a frame out of the table, or round in a cycle.
    for row in 0..t.len() {
        let (parent, depth) = (t.parent[row], t.depth[row]);
        let whole = if row == 0 {
            parent == NO_PARENT && depth == 0
        } else {
            parent != NO_PARENT && (parent as usize) < row && t.depth[parent as usize].checked_add(1) == Some(depth)
        };
        if !whole {
            return Err(format!("{}: frame {row} has parent {parent} at depth {depth}, which is not a tree in depth-first order; the graph is damaged", dir.display()));
        }
    }
    sort_names(&mut t);
    Ok((manifest, t))
}

/// Renumbers names into byte order (the root first), as a merge leaves them.
fn sort_names(t: &mut FrameTable) {
    let mut order: Vec<usize> = (1..t.names.len()).collect();
    order.sort_unstable_by(|&a, &b| t.names[a].cmp(&t.names[b]));
    order.insert(0, 0);
    let mut new_id = vec![0u32; t.names.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    t.names = order.iter().map(|&old| std::mem::take(&mut t.names[old])).collect();
    for x in &mut t.name {
        *x = new_id[*x as usize];
    }
    t.raw = std::mem::take(&mut t.raw).into_iter().map(|(old, raw)| (new_id[old as usize], raw)).collect();
}
