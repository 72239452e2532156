//! Micro-benchmarks of the pipeline's stages on the *small* reference profile (10k stacks,
//! about 34k boxes): parsing and merging folded text, laying out the frame table, and
//! splitting it into chunk files. Whole-process figures against other tools are in
//! docs/BENCHMARKS.md. Run with `cargo bench`.

use flamesite::store::{chunk, sandwich};
use flamesite::graph::color::Palette;
use flamesite::config::{ChunkConfig, Limits};
use flamesite::ingest::decode::folded;
use flamesite::graph::frames::{FrameTable, StackMerger};
use flamesite_synth::{generate, Size, SynthParams};

fn main() {
    divan::main();
}

fn small() -> Vec<u8> {
    let mut out = Vec::new();
    generate(&SynthParams::preset(Size::Small, 1), &mut out).unwrap();
    out
}

fn small_sorted() -> Vec<u8> {
    let text = small();
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    lines.sort_unstable();
    let mut out = lines.join(&b'\n');
    out.push(b'\n');
    out
}

fn table() -> FrameTable {
    folded::decode(&mut small().as_slice(), &Limits::default()).unwrap().graphs.remove(0).table
}

/// Text to frame table: line splitting, count parsing, interning, merging, layout.
#[divan::bench(sample_count = 20)]
fn parse_and_merge(b: divan::Bencher) {
    let text = small();
    b.counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| folded::decode(&mut divan::black_box(text.as_slice()), &Limits::default()).unwrap());
}

/// The same on sorted input (inferno-collapse's order), where the shared-prefix fast path applies.
#[divan::bench(sample_count = 20)]
fn parse_and_merge_sorted(b: divan::Bencher) {
    let text = small_sorted();
    b.counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| folded::decode(&mut divan::black_box(text.as_slice()), &Limits::default()).unwrap());
}

/// Merging alone: stacks already split from their counts.
#[divan::bench(sample_count = 20)]
fn merge_only(b: divan::Bencher) {
    let text = small();
    let stacks: Vec<(&[u8], u64)> = text
        .split(|&c| c == b'\n')
        .filter_map(|l| {
            let sp = l.iter().rposition(|&c| c == b' ')?;
            Some((&l[..sp], std::str::from_utf8(&l[sp + 1..]).ok()?.parse().ok()?))
        })
        .collect();
    b.bench(|| {
        let mut m = StackMerger::new(false, 1000);
        for (s, c) in &stacks {
            m.add(s, *c, 0).unwrap();
        }
        m.finish().unwrap()
    });
}

/// Frame table to chunk files, name files and search buckets (made, not written).
#[divan::bench(sample_count = 20)]
fn chunking(b: divan::Bencher) {
    let t = table();
    let config = ChunkConfig::default();
    b.counter(divan::counter::ItemsCount::new(t.len()))
        .bench(|| chunk::encode("samples", "samples", divan::black_box(&t), &config, Palette::Hot, &|_, _| Ok(())));
}

/// The precomputed sandwiches alone (part of `chunking` above): the most called functions'
/// callers and callees merged and cut, within the budget a build gives them.
#[divan::bench(sample_count = 20)]
fn sandwiches(b: divan::Bencher) {
    let t = table();
    let config = ChunkConfig::default();
    let m = chunk::encode("samples", "samples", &t, &config, Palette::Hot, &|_, _| Ok(())).unwrap();
    let budget = sandwich::budget(m.chunks.iter().map(|c| c.bytes).sum());
    // Name ids as the chunks number them do not change the work: the table's own.
    let ids: Vec<u32> = (0..t.names.len() as u32).collect();
    let self_of = chunk::self_by_name(&t);
    b.bench(|| sandwich::encode(divan::black_box(&t), &ids, &self_of, config.root_width, budget, chunk::Values::for_table(&t), &|_, _| Ok(())));
}
