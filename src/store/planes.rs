//! Byte planes (docs/FORMAT.md "Coded columns"): a column of `n` values of `w` bytes stored as
//! `w` planes of `n` bytes, the first bytes of every value, then the second bytes, and so on.
//! Most values of a column are small or alike, so their high bytes are runs of zeros that
//! deflate takes almost for free, where in value order they break up every match; the same
//! idea as Parquet's byte-stream split or Blosc's shuffle. A plane split costs one pass over
//! the bytes each way.

/// Rewrites `bytes` (values of `w` bytes, in value order) as its `w` planes.
pub(crate) fn split(bytes: &mut [u8], w: usize) {
    debug_assert!(bytes.len().is_multiple_of(w));
    let n = bytes.len() / w;
    let values = bytes.to_vec();
    for (i, value) in values.chunks_exact(w).enumerate() {
        for (k, &byte) in value.iter().enumerate() {
            bytes[k * n + i] = byte;
        }
    }
}

/// The values of `w` bytes whose planes are `planes`, in value order.
pub(crate) fn join(planes: &[u8], w: usize) -> Vec<u8> {
    debug_assert!(planes.len().is_multiple_of(w));
    let n = planes.len() / w;
    let mut out = vec![0u8; planes.len()];
    for (k, plane) in planes.chunks_exact(n.max(1)).enumerate().take(w) {
        for (i, &byte) in plane.iter().enumerate() {
            out[i * w + k] = byte;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_hold_each_byte_position_together_and_join_back() {
        let mut b: Vec<u8> = [0x0403_0201u32, 0x0807_0605, 0x0c0b_0a09].iter().flat_map(|v| v.to_le_bytes()).collect();
        let original = b.clone();
        split(&mut b, 4);
        assert_eq!(b, [1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12]);
        assert_eq!(join(&b, 4), original);
        let mut empty: Vec<u8> = Vec::new();
        split(&mut empty, 8);
        assert!(join(&empty, 8).is_empty());
    }
}
