//! Chunks: a laid-out [`FrameTable`](crate::graph::frames::FrameTable) split into the files the page fetches, and read back.
//!
//! One graph becomes a manifest, a name table, binary columnar chunk files (a contiguous
//! range of depths each, narrow frames split off into fine width classes tiled by offset)
//! and search buckets (each function's disjoint value intervals). The byte layout is
//! specified in `docs/FORMAT.md`; [`encode`] writes it and [`read_graph`] reads it back, which
//! is how `flamesite fold` proves that the chunks lose nothing.
//!
//! Its files, each with one concern: `format` holds the versions, magics and flags both sides
//! agree on; `manifest` the JSON types (the manifest, name files); `write` cuts a table into
//! files and makes the manifest, with `encode_chunk` making the bytes of a chunk and `search`
//! those of a search bucket; `read` reads a graph folder back, with `decode_chunk` reading one
//! chunk. None imports this file (it only re-exports them), so they import one another in one
//! direction: `write` and `read` down to the rest, all of them down to `format`.

mod decode_chunk;
mod encode_chunk;
mod format;
mod manifest;
mod read;
mod search;
mod write;

pub use format::{DIFF_VERSION, LAYOUTS_VERSION, MANIFEST_VERSION, PACKED_MANIFEST, VERSION};
pub(crate) use manifest::is_zero;
pub use manifest::{left_file, ChunkRef, DiffInfo, DiffSearch, Manifest, Names, NamesRef, SearchRef, Sides, Span, MAX_STORED_DECIMALS};
pub use read::{read_graph, read_graph_in, read_manifest, read_names};
pub use write::{encode, encode_comparison, encode_graph, encode_time_order};
pub use super::columns::{Sink, Values};
pub use crate::graph::frames::self_by_name;

// The unit tests below check the writer and the reader together (a graph written, then read
// back or damaged), so they stay here, unchanged; these are the names they take from
// `super::*` that this file does not otherwise have.
#[cfg(test)]
use std::path::Path;
#[cfg(test)]
use crate::config::ChunkConfig;
#[cfg(test)]
use crate::error::FillError;
#[cfg(test)]
use crate::graph::color::Palette;
#[cfg(test)]
use crate::graph::diff;
#[cfg(test)]
use crate::graph::frames::{FrameTable, Layout};
#[cfg(test)]
use super::gz;
#[cfg(test)]
use decode_chunk::uncode_chunk;
#[cfg(test)]
use format::CODED;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::frames::StackMerger;

    fn table(lines: &[(&str, u64)]) -> FrameTable {
        let mut m = StackMerger::new(false, 1000);
        for (s, c) in lines {
            m.add(s.as_bytes(), *c, 0).unwrap();
        }
        m.finish().unwrap()
    }

    #[test]
    fn narrow_frames_go_to_fine_classes() {
        let t = table(&[("main;big", 1000), ("main;tiny", 1), ("main;mid", 20)]);
        let config = ChunkConfig { root_width: 100, class_factor: 4, target_frames: 4096, search_intervals: 100, names_per_file: 2 };
        let m = encode("samples", "samples", &t, &config, Palette::Hot, &|_, _| Ok(())).unwrap();
        let classes: Vec<(u32, u32)> = m.chunks.iter().map(|c| (c.class, c.frames)).collect();
        // 1021 total on 100 px: mid (20) is >= 10.21 -> class 0; tiny (1): 1*100*4^2 >= 1021 -> class 2.
        assert_eq!(classes, vec![(0, 4), (2, 1)]);
        assert_eq!(m.chunks[1].max_total, 1);
        // The first view: the class-0 chunk and the name files of its names (all, main, big,
        // mid: ids 0..4, two per file), not the file of tiny (id 4, class 2 only).
        assert_eq!(m.first_view(60), vec!["n/0.json.gz", "n/1.json.gz", "c/0-0.bin.gz"]);
        assert_eq!(m.names.len(), 3);
        assert!(m.first_view(0).is_empty());
    }

    /// Writes `bytes` as the chunk file `file` of the graph in `dir`, with its size in the
    /// manifest (which a reader checks).
    fn rewrite_chunk(dir: &Path, file: &str, bytes: &[u8]) {
        std::fs::write(dir.join(file), bytes).unwrap();
        let path = dir.join("manifest.json");
        let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for c in m["chunks"].as_array_mut().unwrap() {
            if c["file"] == file {
                c["bytes"] = bytes.len().into();
            }
        }
        std::fs::write(&path, m.to_string()).unwrap();
    }

    /// A plain graph's chunk with its columns not coded (as version 6 wrote them).
    fn plain_chunk(b: &[u8]) -> Vec<u8> {
        let u = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(u(8) & CODED, CODED, "chunks are written coded");
        let at = (24 + 4 * (u(20) - u(16) + 1) as usize).div_ceil(8) * 8;
        uncode_chunk(b, u(4), u(8), at, Layout::After, (0, 0)).unwrap()
    }

    /// Writes the `samples` graph of `t` into `dir`, as a build does.
    fn encode_to(dir: &Path, t: &FrameTable, config: &ChunkConfig) -> Manifest {
        let write = |rel: &str, bytes: &[u8]| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).map_err(|e| FillError::Write(e.to_string()))
        };
        encode("samples", "samples", t, config, Palette::Hot, &write).unwrap()
    }

    #[test]
    fn chunks_round_trip_and_name_totals_do_not_double_count_recursion() {
        let t = table(&[("f;f;f", 3), ("f;g", 2), ("h", 5)]);
        let config = ChunkConfig { root_width: 2, class_factor: 2, target_frames: 1, search_intervals: 1, names_per_file: 1000 };
        let dir = tempfile::tempdir().unwrap();
        encode_to(dir.path(), &t, &config);
        let (m, back) = read_graph(dir.path()).unwrap();
        assert_eq!(back, t);
        assert_eq!(m.frames, t.len() as u64);
        assert_eq!(m.values, "u32");
        let packed = std::fs::read(dir.path().join("n/0.json.gz")).unwrap();
        assert!(gz::is_packed(&packed), "name files are published packed");
        let names: Names = serde_json::from_slice(&gz::unpack(packed, u64::MAX).unwrap()).unwrap();
        let f = names.names.iter().position(|n| n == "f").unwrap();
        assert_eq!(names.total[f], 5, "f;f;f counted once");
        assert_eq!(names.self_[f], 3);
    }

    #[test]
    fn a_renamed_name_keeps_its_own_form_through_the_files_and_a_comparison() {
        let t = table(&[("main;App$$Lambda$75.0x00007ff44c0c4208.run;work", 3), ("main;other", 2)]);
        let config = ChunkConfig { root_width: 2, class_factor: 2, target_frames: 1, search_intervals: 1, names_per_file: 2 };
        let dir = tempfile::tempdir().unwrap();
        encode_to(dir.path(), &t, &config);
        let (_, back) = read_graph(dir.path()).unwrap();
        assert_eq!(back, t);
        let at = back.names.iter().position(|n| n == "App$$Lambda_.run").unwrap() as u32;
        assert_eq!(back.raw.get(&at).map(String::as_str), Some("App$$Lambda$75.0x00007ff44c0c4208.run"));
        // Name files without a renamed name say nothing of it.
        let files: Vec<Names> = (0..3)
            .filter_map(|k| std::fs::read(dir.path().join(format!("n/{k}.json.gz"))).ok())
            .map(|p| serde_json::from_slice(&gz::unpack(p, u64::MAX).unwrap()).unwrap())
            .collect();
        assert_eq!(files.iter().filter(|f| !f.raw.is_empty()).count(), 1, "{files:?}");
        // A comparison with a run whose lambda had other numbers: one name, a raw form of either.
        let later = table(&[("main;App$$Lambda$9.0x00007ff000000000.run;work", 4)]);
        let union = diff::merge(&back, &later).unwrap();
        let at = union.names.iter().position(|n| n == "App$$Lambda_.run").unwrap() as u32;
        assert_eq!(union.raw.get(&at).map(String::as_str), Some("App$$Lambda$75.0x00007ff44c0c4208.run"), "the first by bytes");
    }

    #[test]
    fn coded_columns_read_back_exactly_with_gaps_in_every_layout_and_value_type() {
        // Parents' self leaves gaps between the frames of a depth (b ends at 2, d starts at 5),
        // and a comparison's layouts have gaps of their own (a path of one run only).
        let before = table(&[("a;b", 2), ("a", 3), ("c;d", 4), ("c", 1), ("e;f;g", 6)]);
        let after = table(&[("a;b", 7), ("c;d", 4), ("c;x", 2), ("e;f", 9), ("e;f;g", 1)]);
        let huge = table(&[("a;b", 5_000_000_007), ("a", 3), ("c;d", 4), ("c", 6_000_000_000)]);
        for config in [
            ChunkConfig { root_width: 4, class_factor: 2, target_frames: 2, search_intervals: 1, names_per_file: 2 },
            ChunkConfig { root_width: 1000, class_factor: 8, target_frames: 4096, search_intervals: 100, names_per_file: 1000 },
        ] {
            for t in [&before, &huge] {
                let dir = tempfile::tempdir().unwrap();
                encode_to(dir.path(), t, &config);
                assert_eq!(&read_graph(dir.path()).unwrap().1, t);
            }
            let union = diff::merge(&before, &after).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let write = |rel: &str, bytes: &[u8]| {
                let p = dir.path().join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).map_err(|e| FillError::Write(e.to_string()))
            };
            let m = encode_graph("samples", "samples", &union, &Sides::new("the earlier run", "this run"), &config, Palette::Hot, &write).unwrap();
            // A frame wide enough to be drawn at the root view of any layout is in a class-0
            // chunk: a fine chunk is narrow in every layout.
            let d = m.diff.as_ref().unwrap();
            for c in m.chunks.iter().filter(|c| c.class > 0) {
                let w = config.root_width as u64;
                let (a, b) = (c.after.as_ref().unwrap(), c.before.as_ref().unwrap());
                assert!(c.max_total * w < m.total && a.max_total * w < d.total_after && b.max_total * w < d.total_before, "{c:?}");
            }
            assert_eq!(m.chunks.iter().any(|c| c.class > 0), config.root_width == 4, "the small canvas has fine chunks");
            for layout in [Layout::Union, Layout::After, Layout::Before] {
                let mut expected = union.clone();
                diff::relayout(&mut expected, layout).unwrap();
                let (_, back) = read_graph_in(dir.path(), Some(layout)).unwrap();
                assert_eq!((&back.offset, &back.total, &back.parent), (&expected.offset, &expected.total, &expected.parent), "{layout:?}");
            }
            assert!(!dir.path().join("after").exists() && !dir.path().join("before").exists(), "one folder holds every layout");
        }
    }

    #[test]
    fn a_chunk_whose_parents_do_not_make_a_tree_is_refused_not_walked() {
        // Found by fuzzing the chunk reader: a frame whose parent was damaged to "none" (the
        // root's 0xFFFFFFFF) sent `fold` walking up out of the table; a parent pointing at
        // the frame itself, or below it, would send it round forever.
        let t = table(&[("main;work", 5), ("main;idle", 3)]);
        let config = ChunkConfig { root_width: 100, class_factor: 4, target_frames: 4096, search_intervals: 100, names_per_file: 1000 };
        for (row, parent) in [(1usize, u32::MAX), (2, 2), (1, 3), (0, 0)] {
            let dir = tempfile::tempdir().unwrap();
            encode_to(dir.path(), &t, &config);
            assert!(read_graph(dir.path()).is_ok());
            // One chunk of 4 frames (all, main, idle, work) in u32 values: header and row
            // index (24 + 4 * 4, padded to 40), three value columns, then ids, parents, names.
            let path = dir.path().join("c/0-0.bin.gz");
            let mut bytes = plain_chunk(&gz::unpack(std::fs::read(&path).unwrap(), u64::MAX).unwrap());
            let n = 4;
            let ids = 40 + 3 * 4 * n;
            let at = (0..n).find(|&i| u32::from_le_bytes(bytes[ids + 4 * i..ids + 4 * i + 4].try_into().unwrap()) as usize == row).unwrap();
            let p = ids + 4 * (n + at);
            bytes[p..p + 4].copy_from_slice(&parent.to_le_bytes());
            rewrite_chunk(dir.path(), "c/0-0.bin.gz", &gz::pack(&bytes));
            let e = read_graph(dir.path()).unwrap_err();
            assert!(e.contains(&format!("frame {row} has parent {parent}")) && e.contains("damaged"), "{e}");
        }
        // Found next: a manifest claiming more decimal places than a value has digits.
        let dir = tempfile::tempdir().unwrap();
        encode_to(dir.path(), &t, &config);
        let path = dir.path().join("manifest.json");
        let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        manifest["decimals"] = serde_json::json!(4_000_000_000u32);
        std::fs::write(&path, manifest.to_string()).unwrap();
        let e = read_graph(dir.path()).unwrap_err();
        assert!(e.contains("4000000000 decimal places") && e.contains("damaged"), "{e}");
    }

    #[test]
    fn totals_past_32_bits_are_stored_as_f64_and_read_back_exactly() {
        // Nanoseconds of CPU time pass 2^32 in a few seconds.
        let t = table(&[("main;work", 5_000_000_007), ("main;idle", 3)]);
        let config = ChunkConfig { root_width: 100, class_factor: 4, target_frames: 4096, search_intervals: 100, names_per_file: 1000 };
        let dir = tempfile::tempdir().unwrap();
        let files = std::sync::Mutex::new(Vec::new());
        let write = |rel: &str, bytes: &[u8]| {
            files.lock().unwrap().push((rel.to_string(), gz::unpack(bytes.to_vec(), u64::MAX).unwrap().len()));
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).map_err(|e| FillError::Write(e.to_string()))
        };
        let m = encode("cpu", "nanoseconds", &t, &config, Palette::Hot, &write).unwrap();
        assert_eq!(m.values, "f64");
        let (_, back) = read_graph(dir.path()).unwrap();
        assert_eq!(back, t);
        // The root-view chunk (all, main, work; depths 0..3): the header and row index (24 + 4 * 4,
        // padded to 40), then per frame three f64 columns and three u32 columns, then how many
        // parents are outside the chunk and those parents: one, the root's. Its left-heavy
        // offsets: a header of 16 bytes and an f64 per frame.
        let size = |name: &str| files.lock().unwrap().iter().find(|(f, _)| f == name).unwrap().1;
        assert_eq!(m.chunks[0].frames, 3);
        assert_eq!(size("c/0-0.bin.gz"), 40 + 3 * (3 * 8 + 3 * 4) + 4 + 4);
        assert_eq!(size(&left_file("c/0-0.bin.gz")), 16 + 3 * 8);
        // The same files as version 1 wrote them (f64 values, no `values` key) still read back.
        let path = dir.path().join("manifest.json");
        let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        json["version"] = 1.into();
        json.as_object_mut().unwrap().remove("values");
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        // Version 1 stored its files plain.
        for c in &m.chunks {
            let p = dir.path().join(&c.file);
            let mut bytes = plain_chunk(&gz::unpack(std::fs::read(&p).unwrap(), u64::MAX).unwrap());
            bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
            rewrite_chunk(dir.path(), &c.file, &bytes);
        }
        for f in &m.names {
            let p = dir.path().join(&f.file);
            std::fs::write(&p, gz::unpack(std::fs::read(&p).unwrap(), u64::MAX).unwrap()).unwrap();
        }
        let (m1, back) = read_graph(dir.path()).unwrap();
        assert_eq!((m1.version, m1.values.as_str()), (1, "f64"));
        assert_eq!(back, t);
    }
}
