//! What every binary file of a graph is written with: the type its values are stored as, the
//! sink its files go to, and the columns appended little-endian. Chunks (`super::chunk`) and
//! sandwich files (`super::sandwich`) both write through these.

use crate::error::FillError;
use crate::graph::frames::FrameTable;

/// Where the files of a graph go: a path relative to the graph folder and its bytes. Called
/// from several threads at once, each file once; `manifest.json` comes last. A file it could
/// not write is a [`FillError::Write`], which the encoders pass on as it is.
pub type Sink<'a> = &'a (dyn Fn(&str, &[u8]) -> Result<(), FillError> + Sync);

/// How values are stored in the binary files of one graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Little-endian u32: every total (and before total) fits.
    U32,
    /// Little-endian f64, exact up to 2^53.
    F64,
}

impl Values {
    /// The type a table's values are stored as: `u32` when its totals fit.
    pub fn for_table(table: &FrameTable) -> Values {
        let max = table
            .grand_total()
            .max(table.before.as_ref().map_or(0, |b| b.total[0]))
            .max(table.after.as_ref().map_or(0, |a| a.total[0]));
        if max <= u32::MAX as u64 {
            Values::U32
        } else {
            Values::F64
        }
    }

    pub(crate) fn width(self) -> usize {
        match self {
            Values::U32 => 4,
            Values::F64 => 8,
        }
    }

    pub(crate) fn get(self, b: &[u8], at: usize) -> Option<u64> {
        match self {
            Values::U32 => b.get(at..at + 4).map(|s| u32::from_le_bytes(s.try_into().unwrap()) as u64),
            Values::F64 => b.get(at..at + 8).map(|s| f64::from_le_bytes(s.try_into().unwrap()) as u64),
        }
    }
}

/// Appends one little-endian u32 (a header field).
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Pads with zero bytes to a multiple of 8, where value columns start (docs/FORMAT.md).
pub(crate) fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// Appends a column of values: the bytes are reserved once and filled in place (a push per
/// value, with its capacity check, was a large part of encoding a graph).
pub(crate) fn put_column(out: &mut Vec<u8>, values: Values, column: impl ExactSizeIterator<Item = u64>) {
    let w = values.width();
    let start = out.len();
    out.resize(start + w * column.len(), 0);
    let dst = &mut out[start..];
    match values {
        Values::U32 => dst.chunks_exact_mut(4).zip(column).for_each(|(d, v)| d.copy_from_slice(&(v as u32).to_le_bytes())),
        // Through i64, so that a wrapped negative step (see `encode_chunk`) is stored as the
        // negative number it stands for; other values are below 2^53 and unchanged.
        Values::F64 => dst.chunks_exact_mut(8).zip(column).for_each(|(d, v)| d.copy_from_slice(&(v as i64 as f64).to_le_bytes())),
    }
}

/// Appends a column of u32, as [`put_column`] does.
pub(crate) fn put_u32_column(out: &mut Vec<u8>, column: impl ExactSizeIterator<Item = u32>) {
    let start = out.len();
    out.resize(start + 4 * column.len(), 0);
    out[start..].chunks_exact_mut(4).zip(column).for_each(|(d, v)| d.copy_from_slice(&v.to_le_bytes()));
}

