//! The numbers the writer and the reader of a graph's files agree on: the versions of the
//! manifest and of the binary files, their magics, and the flags that say how a chunk's or a
//! search bucket's columns are coded (docs/FORMAT.md).

/// Version of the graph format written for a plain graph. [`read_graph`](super::read_graph) reads versions 1
/// (values always f64) to [`DIFF_VERSION`].
pub const VERSION: u32 = 2;
/// Version written for a differential graph: its chunks carry each frame's values before and
/// after but not its widths, which follow from them (`graph::diff::widths`), its search files
/// each frame's values, and it comes in three layouts. Version 3 also wrote the widths;
/// version 4 had the same chunks as this one and search files of wider columns.
pub const DIFF_VERSION: u32 = 5;
/// Version of a differential graph's chunks that hold all three layouts: an offset column for
/// each (coded only). Its search buckets are of [`DIFF_VERSION`].
pub const LAYOUTS_VERSION: u32 = 6;
/// Version of every manifest written now: the graph's data files (chunks, name files, search
/// buckets, sandwiches) are gzip members named with `.gz` ([`gz`](crate::store::gz)), whose contents are those of
/// [`VERSION`] for a plain graph and for a differential one chunks of [`LAYOUTS_VERSION`] and
/// search buckets of [`DIFF_VERSION`], chunks and plain search buckets with coded columns
/// ([`CODED`]), parents given as rows of the chunk ([`PARENT_ROWS`]) and offsets from parents'
/// ([`FROM_PARENTS`]); its name files hold no colours (a reader reckons them from the names
/// and the palette); a comparison of two runs has no search buckets (its search reads its
/// runs' graphs: [`DiffSearch::Runs`](super::DiffSearch::Runs)), and each chunk of a plain graph has a file of its
/// frames' left-heavy offsets beside it ([`LeftRef`]), which version 11 had not; version 10 had
/// the same files with a comparison's search buckets. Version 9
/// had the same files with offsets as gaps after the frame before
/// at their depth only. Version 8 had the same
/// files with ids and parents as steps and each name's colour in its name file; version 7 a
/// differential graph's layouts in three folders, each with its own chunks of version 5;
/// version 6 the same files as 7, their columns not coded.
pub const MANIFEST_VERSION: u32 = 12;
/// The manifest packed (see [`gz`](crate::store::gz)), beside `manifest.json`: what the page reads.
pub const PACKED_MANIFEST: &str = "manifest.json.gz";
/// The first manifest version whose data files are packed.
pub(super) const PACKED_VERSION: u32 = 6;
/// The first differential version whose chunks leave the widths out.
pub(super) const NO_WIDTHS_VERSION: u32 = 4;
pub(super) const CHUNK_MAGIC: &[u8; 4] = b"FSCH";
pub(super) const SEARCH_MAGIC: &[u8; 4] = b"FSSI";

/// Flag of a chunk or search file whose columns are coded (docs/FORMAT.md "Coded columns"):
/// each in byte planes, with offsets, ids and parents as steps.
pub(super) const CODED: u32 = 4;
/// Flag of a coded chunk whose parents are given by their rows in the chunk, and whose ids
/// follow from their parents' (docs/FORMAT.md "Coded columns"): in a flame graph most frames
/// are a first child, whose id is its parent's plus one. It took a large part off what the ids
/// and parents of the large profile's first view take packed (docs/BENCHMARKS.md, "Figures
/// behind the code").
pub(super) const PARENT_ROWS: u32 = 8;
/// Flag of a chunk with [`PARENT_ROWS`] whose offsets are gaps from the sibling before in the
/// chunk, else from the parent's offset when the parent is a row of the chunk (docs/FORMAT.md
/// "Coded columns"): a first child starts where its parent does, so its gap is 0 where it was
/// the parent's distance from the frame before at its depth. It took a measurable part off the
/// nightly series of benches/footprint.sh (docs/BENCHMARKS.md, "Figures behind the code").
pub(super) const FROM_PARENTS: u32 = 16;
/// Flag of a differential chunk with [`FROM_PARENTS`] whose union offsets that follow neither
/// a sibling nor a parent in the chunk are told from the after and before layouts' offsets
/// (docs/FORMAT.md "Coded columns"): what is stored is the step, from the row before at its
/// depth, of the difference between the union offset and the sum of the other two in union
/// widths; such rows were a large part of a comparison's chunk bytes, numbers of the union's
/// 2^31 scale that do not pack (docs/BENCHMARKS.md, "Figures behind the code").
pub(super) const UNION_FROM_LAYOUTS: u32 = 32;
/// Magic of a file of left-heavy offsets ([`encode_left`](super::encode_chunk::encode_left)).
pub(super) const LEFT_MAGIC: &[u8; 4] = b"FSLH";
/// In a chunk with [`PARENT_ROWS`], the parent code of a row whose parent is not in the chunk.
pub(super) const OUTSIDE: u32 = u32::MAX;
