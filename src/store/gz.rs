//! Data files are published gzip-compressed, named with `.gz` after their own extension
//! (`c/0-0.bin.gz`): most static hosts (raw object storage, GitHub Pages for binary files,
//! nginx's default configuration) send a file as it is stored, so a file stored small is
//! served small everywhere. The page decompresses what it fetches itself, and takes the bytes
//! as they are when a host already undid the compression (one that sends `.gz` files with
//! `Content-Encoding: gzip`): a gzip member starts with bytes no flamesite file starts with.
//!
//! The member is written with no name and a zero time, so the same bytes in give the same
//! bytes out on every machine and thread.

use std::io::{Read, Write};

/// What the name of a compressed file ends with, after its own extension.
pub const SUFFIX: &str = ".gz";

/// The first two bytes of a gzip member.
const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The compression level: zlib's default, most of level 9's gain on these files in much less
/// time (docs/BENCHMARKS.md, "Footprint").
const LEVEL: u32 = 6;

/// Whether data files are packed; a dry run turns it off (see [`skip_packing`]).
static PACKING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// For a process that writes no data file (`flamesite check`, a dry run whose sink discards
/// every file): [`pack`] returns the bytes as they are. Packing was a large part of `check`'s
/// time on a large pprof profile (docs/BENCHMARKS.md, "Figures behind the code").
pub fn skip_packing() {
    PACKING.store(false, std::sync::atomic::Ordering::Relaxed);
}

/// `bytes` as one gzip member (as they are, in a process that called [`skip_packing`]).
pub fn pack(bytes: &[u8]) -> Vec<u8> {
    if !PACKING.load(std::sync::atomic::Ordering::Relaxed) {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len() / 3 + 64);
    let mut e = flate2::GzBuilder::new().mtime(0).write(&mut out, flate2::Compression::new(LEVEL));
    e.write_all(bytes).expect("writing to memory");
    e.finish().expect("writing to memory");
    out
}

/// True when `bytes` start as a gzip member does.
pub fn is_packed(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The bytes of a stored data file: decompressed when they are a gzip member, else as they
/// are (a file written before compression, or one a host already decompressed). A member
/// that would decompress to more than `limit` bytes is refused before it is: a damaged or
/// hostile graph folder cannot make its reader allocate more than its manifest promises.
pub fn unpack(bytes: Vec<u8>, limit: u64) -> Result<Vec<u8>, String> {
    if !is_packed(&bytes) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    let mut d = flate2::read::GzDecoder::new(&bytes[..]).take(limit.saturating_add(1));
    d.read_to_end(&mut out).map_err(|e| format!("is not a whole gzip member ({e})"))?;
    if out.len() as u64 > limit {
        return Err(format!("decompresses to more than the {limit} bytes its manifest allows"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_file_unpacks_to_its_bytes_and_a_plain_one_passes() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let packed = pack(&data);
        assert!(is_packed(&packed));
        assert!(packed.len() * 4 < data.len(), "{} bytes packed from {}", packed.len(), data.len());
        assert_eq!(unpack(packed.clone(), data.len() as u64).unwrap(), data);
        // A chunk as a host that undid the compression sends it: taken as it is.
        assert_eq!(unpack(b"FSCH....".to_vec(), 8).unwrap(), b"FSCH....");
        // The same bytes give the same member (no time, no name in its header).
        assert_eq!(pack(&data), packed);
    }

    #[test]
    fn a_member_larger_than_its_limit_or_cut_short_is_refused() {
        let zeros = pack(&vec![0u8; 1 << 20]);
        let err = unpack(zeros.clone(), 1000).unwrap_err();
        assert!(err.contains("more than the 1000 bytes"), "{err}");
        let cut = zeros[..zeros.len() / 2].to_vec();
        let err = unpack(cut, 2 << 20).unwrap_err();
        assert!(err.contains("not a whole gzip member"), "{err}");
    }
}
