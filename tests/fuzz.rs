//! Fuzzing on stable Rust (issue 12): every decoder and the chunk reader of `flamesite fold`
//! are fed inputs made by mutating real files (tests/data, and graph folders written from them)
//! and must return a result, never panic, hang or abort.
//!
//! There is no coverage guidance here: that is `scripts/libfuzz.sh` (libFuzzer on a nightly
//! compiler, tests/libfuzzer), which the test command runs briefly. Here each input is a
//! seed mutated 1 to 8 times (bit flips, byte and chunk insertions, deletions and copies,
//! "interesting" numbers, digits and JSON/protobuf tokens, splices of two seeds), from a
//! seeded generator, so a run is reproducible from its seed.
//!
//! In the suite each target runs a fixed number of inputs from a fixed seed (a few seconds in
//! all). `scripts/fuzz.sh SECONDS` runs each target for that long with a new seed
//! (`FLAMESITE_FUZZ_SECONDS`, `FLAMESITE_FUZZ_SEED`, `FLAMESITE_FUZZ_TARGET`). An input that
//! panics, or takes more than `FLAMESITE_FUZZ_HANG_SECONDS` (default 10 s), is written to
//! `target/fuzz-found/` and fails the run, with the target and file named.

use std::io::BufRead;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flamesite::config::Config;
use flamesite::ingest::decode::{collapse, cpuprofile, folded, gotext, jfr, pprof, speedscope, trace};

/// A target: takes bytes, returns whether they were accepted (ignored: only panics, hangs and
/// aborts are failures).
type Target = fn(&[u8], &Fuzz) -> bool;

/// Shared state of a run: the graph folders the chunk target mutates.
struct Fuzz {
    config: Config,
    graphs: Vec<Vec<(String, Vec<u8>)>>,
    scratch: PathBuf,
}

fn decoder(f: fn(&mut dyn BufRead, &Config) -> Result<flamesite::ingest::decode::Decoded, String>) -> impl Fn(&[u8], &Fuzz) -> bool {
    move |b, z| f(&mut &b[..], &z.config).is_ok()
}

const TARGETS: &[(&str, Target)] = &[
    ("folded", |b, z| folded::decode(&mut &b[..], &z.config.limits).is_ok()),
    ("perf", |b, z| decoder(collapse::decode_perf)(b, z)),
    ("dtrace", |b, z| decoder(collapse::decode_dtrace)(b, z)),
    ("sample", |b, z| decoder(collapse::decode_sample)(b, z)),
    ("vtune", |b, z| decoder(collapse::decode_vtune)(b, z)),
    ("cpuprofile", |b, z| decoder(cpuprofile::decode)(b, z)),
    ("speedscope", |b, z| decoder(speedscope::decode)(b, z)),
    ("trace", |b, z| decoder(trace::decode)(b, z)),
    ("gotext", |b, z| decoder(gotext::decode)(b, z)),
    ("packed", packed),
    ("pprof", |b, z| pprof::decode(&mut &b[..], &z.config.limits, &z.config.pprof).is_ok()),
    ("jfr", |b, z| jfr::decode(&mut &b[..], &z.config.limits).is_ok()),
    ("chunks", chunks),
];

/// The packed target: the bytes are a whole file, read as the build reads one (its compression
/// undone, layer by layer, then its format), so that the decompressors are fed hostile input.
/// Only compressed inputs are read (the others are the decoders' targets).
fn packed(b: &[u8], z: &Fuzz) -> bool {
    use flamesite::ingest::decode::Compression;
    if Compression::detect(b) == Compression::None {
        return false;
    }
    std::fs::create_dir_all(&z.scratch).unwrap();
    let path = z.scratch.join("packed-input");
    std::fs::write(&path, b).unwrap();
    flamesite::ingest::decode::decode_file(&path, &z.config).is_ok()
}

/// The chunk target: the bytes are the whole of one file of a graph folder (which one, and
/// which graph, is taken from the first two bytes); the folder is read back as `fold` does,
/// and folded.
fn chunks(b: &[u8], z: &Fuzz) -> bool {
    let (Some(&g), Some(&f)) = (b.first(), b.get(1)) else { return false };
    let graph = &z.graphs[g as usize % z.graphs.len()];
    let which = f as usize % graph.len();
    let _ = std::fs::remove_dir_all(&z.scratch);
    for (k, (rel, bytes)) in graph.iter().enumerate() {
        let path = z.scratch.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, if k == which { &b[2..] } else { &bytes[..] }).unwrap();
    }
    match flamesite::store::chunk::read_graph(&z.scratch) {
        Ok((_, table)) => {
            let _ = flamesite::store::fold::folded_lines(&table);
            true
        }
        Err(_) => false,
    }
}

/// A small, seeded generator (xorshift64*): no dependency, same numbers everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"0", b"-1", b"1e308", b"NaN", b"18446744073709551615", b"4294967295", b"9007199254740993", b"\"", b"\\", b"\\u0000",
    b"{", b"}", b"[", b"]", b",", b":", b"null", b"true", b";", b"\n", b" ", b"\t", b"\r\n", b"\xff", b"\xe9",
    b"\"children\":[1]", b"\"parent\":1", b"\"frame\":0", b"\"type\":\"O\"", b"\"type\":\"C\"", b"[[0,0,0]]",
    b"\x08\x01", b"\x0a\x00", b"\x12\x02\x08\x01", b"\xff\xff\xff\xff\x0f", b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(8) {
        let len = input.len();
        match rng.below(10) {
            0 if len > 0 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                input[at] = rng.next() as u8;
            }
            2 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(64));
                input.drain(at..at + n);
            }
            3 => {
                let at = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                input.splice(at..at, t.iter().copied());
            }
            4 if len > 0 => {
                // Copy a chunk of the input elsewhere in it (deepens nesting, repeats records).
                let a = rng.below(len);
                let n = 1 + rng.below((len - a).min(4096));
                let chunk = input[a..a + n].to_vec();
                let at = rng.below(len + 1);
                input.splice(at..at, chunk);
            }
            5 if len > 0 => {
                // Replace a digit run with another number.
                let at = rng.below(len);
                if let Some(start) = input[at..].iter().position(u8::is_ascii_digit).map(|p| p + at) {
                    let end = input[start..].iter().position(|b| !b.is_ascii_digit()).map_or(input.len(), |p| p + start);
                    let n = [0u64, 1, 2, 255, 65536, u32::MAX as u64, u64::MAX, rng.next() % 100][rng.below(8)];
                    input.splice(start..end, n.to_string().into_bytes());
                }
            }
            6 => {
                // Splice: the start of this input and the end of another seed.
                let other = &seeds[rng.below(seeds.len())];
                let at = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            7 if len > 0 => {
                let at = rng.below(len);
                input.truncate(at);
            }
            8 if len > 4 => {
                // A little-endian word set to an interesting value (chunk headers, counts).
                let at = rng.below(len - 4);
                let v = [0u32, 1, u32::MAX, 0x8000_0000, (rng.next() % 4096) as u32][rng.below(5)];
                input[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                let at = rng.below(len + 1);
                let b = rng.next() as u8;
                input.insert(at, b);
            }
        }
    }
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Every file under tests/data (the profiles, and the other files there as odd inputs).
fn seeds() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    let mut todo = vec![data()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .iter()
        .map(|p| {
            let b = std::fs::read(p).unwrap();
            // gzip fixtures as the decoders see them: decompressed.
            if b.starts_with(&[0x1f, 0x8b]) {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&b[..]), &mut out).unwrap();
                out
            } else {
                b
            }
        })
        .chain(BUILT_IN.iter().map(|s| s.as_bytes().to_vec()))
        .collect()
}

/// Seeds of the formats tests/data has no file of, written for this harness after the formats'
/// descriptions (DTrace's `ustack()` aggregation output, macOS `sample`'s call graph, a VTune
/// CSV export), and a differential folded profile.
const BUILT_IN: &[&str] = &[
    "CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s\n\n\n              libc.so.1`_sleep+0x8\n              prog`work+0x1c\n              prog`main+0x40\n               17\n\n              prog`main+0x40\n                3\n",
    "Analysis of sampling prog (pid 4242) every 1 millisecond\nProcess:         prog [4242]\n\nCall graph:\n    25 Thread_1   DispatchQueue_1: com.apple.main-thread  (serial)\n    + 25 start  (in libdyld.dylib) + 1  [0x7fff6c1b3cc9]\n    +   20 main  (in prog) + 10  [0x100000f4a]\n    +   ! 20 work  (in prog) + 4  [0x100000f10]\n    +   5 idle  (in prog) + 2  [0x100000f20]\n\nTotal number in stack (recursive counted multiple times):\n",
    "Function Stack,CPU Time:Self,Module\nTotal,0.0,\n main,1.5,prog\n  work,2.0,prog\n  parse,0.25,prog\n",
    "main;work 3 5\nmain;idle 2 0\n",
];

/// Graph folders written from the fixtures that decode, as (relative path, bytes) lists.
fn graph_folders(seeds: &[Vec<u8>], config: &Config) -> Vec<Vec<(String, Vec<u8>)>> {
    let mut graphs = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for seed in seeds {
        let path = dir.path().join("seed");
        std::fs::write(&path, seed).unwrap();
        let Ok(decoded) = flamesite::ingest::decode::decode_file(&path, config) else { continue };
        for g in decoded.graphs.iter().take(2) {
            let files = Mutex::new(Vec::new());
            let sink = |rel: &str, bytes: &[u8]| {
                files.lock().unwrap().push((rel.to_string(), bytes.to_vec()));
                Ok(())
            };
            flamesite::store::chunk::encode_graph(&g.name, &g.unit, &g.table, &flamesite::store::chunk::Sides::new("the first count", "the second count"), &config.chunks, config.palette, &sink).unwrap();
            let mut files = files.into_inner().unwrap();
            files.sort();
            graphs.push(files);
        }
    }
    assert!(graphs.len() >= 5, "only {} graphs from tests/data", graphs.len());
    graphs
}

/// Runs `target` on mutated seeds until `budget` (inputs or time) is spent; returns the inputs
/// run and how many were accepted.
fn run(name: &str, target: Target, fuzz: &Fuzz, seeds: &[Vec<u8>], seed: u64, budget: Budget) -> (u64, u64) {
    let mut rng = Rng(seed | 1);
    let start = Instant::now();
    let (mut runs, mut accepted) = (0u64, 0u64);
    // The input being run, for the watchdog to save if it hangs.
    let current: Arc<Mutex<(Vec<u8>, Instant)>> = Arc::new(Mutex::new((Vec::new(), Instant::now())));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hang = Duration::from_secs(std::env::var("FLAMESITE_FUZZ_HANG_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10));
    let watchdog = {
        let (current, done, name) = (current.clone(), done.clone(), name.to_string());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let (input, since) = current.lock().unwrap().clone();
                if since.elapsed() > hang && !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let path = save(&name, "hang", &input);
                    eprintln!("fuzz {name}: an input ran for more than {hang:?}: {}", path.display());
                    std::process::abort();
                }
            }
        })
    };
    let chunks = name == "chunks";
    loop {
        match budget {
            Budget::Inputs(n) if runs >= n => break,
            Budget::Time(d) if start.elapsed() >= d => break,
            _ => {}
        }
        let mut input = if chunks {
            // Which graph and file, then that file's bytes.
            let g = rng.below(fuzz.graphs.len());
            let f = rng.below(fuzz.graphs[g].len());
            let mut b = vec![g as u8, f as u8];
            b.extend_from_slice(&fuzz.graphs[g][f].1);
            b
        } else {
            seeds[rng.below(seeds.len())].clone()
        };
        if chunks {
            let mut body = input.split_off(2);
            mutate(&mut rng, seeds, &mut body);
            input.extend(body);
        } else {
            mutate(&mut rng, seeds, &mut input);
        }
        *current.lock().unwrap() = (input.clone(), Instant::now());
        match std::panic::catch_unwind(AssertUnwindSafe(|| target(&input, fuzz))) {
            Ok(ok) => accepted += ok as u64,
            Err(e) => {
                done.store(true, std::sync::atomic::Ordering::Relaxed);
                let path = save(name, "panic", &input);
                let why = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                panic!("fuzz {name} (seed {seed}, input {runs}): panicked ({why}); the input is {}", path.display());
            }
        }
        runs += 1;
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    watchdog.join().unwrap();
    (runs, accepted)
}

#[derive(Clone, Copy)]
enum Budget {
    Inputs(u64),
    Time(Duration),
}

fn save(name: &str, what: &str, input: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../fuzz-found");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-{what}-{}", blake3::hash(input).to_hex()));
    std::fs::write(&path, input).unwrap();
    path.canonicalize().unwrap_or(path)
}

fn setup() -> (Fuzz, Vec<Vec<u8>>) {
    let config = Config::default();
    let seeds = seeds();
    let graphs = graph_folders(&seeds, &config);
    let scratch = tempfile::tempdir().unwrap().keep();
    (Fuzz { config, graphs, scratch }, seeds)
}

/// Each target, 400 inputs from seed 1 (2,000 for the fast text decoders is not needed: the
/// long runs are scripts/fuzz.sh's). Fails naming the target and the saved input.
#[test]
fn every_decoder_and_the_chunk_reader_survive_mutated_inputs() {
    let (fuzz, seeds) = setup();
    let seconds: Option<u64> = std::env::var("FLAMESITE_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok());
    let seed: u64 = std::env::var("FLAMESITE_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let only = std::env::var("FLAMESITE_FUZZ_TARGET").ok();
    let mut ran = 0;
    for &(name, target) in TARGETS {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let budget = seconds.map_or(Budget::Inputs(400), |s| Budget::Time(Duration::from_secs(s)));
        // The seeds the target reads (its format's), else all of them.
        let own: Vec<Vec<u8>> = seeds.iter().filter(|s| target(s, &fuzz)).cloned().collect();
        assert!(name == "chunks" || !own.is_empty(), "fuzz {name}: no seed is accepted");
        let pool = if own.is_empty() { &seeds } else { &own };
        let budget = match budget {
            Budget::Inputs(n) if name == "chunks" => Budget::Inputs(n / 4),
            b => b,
        };
        let start = Instant::now();
        let (runs, accepted) = run(name, target, &fuzz, pool, seed, budget);
        eprintln!("fuzz {name}: {runs} inputs in {:.1} s (seed {seed}), {accepted} accepted", start.elapsed().as_secs_f64());
        assert!(runs > 0);
        ran += 1;
    }
    assert!(ran > 0, "no target named {only:?}");
    let _ = std::fs::remove_dir_all(&fuzz.scratch);
}

/// What each coverage-guided fuzz target runs (tests/libfuzzer/src/lib.rs), called here on the
/// stable compiler.
#[path = "libfuzzer/src/lib.rs"]
mod libfuzz;

/// The regression test of fuzzing: every input that the coverage-guided campaigns kept
/// (`tests/libfuzzer/corpus/TARGET/`, grown and minimised by `scripts/libfuzz.sh`) and every
/// past finding (`tests/libfuzzer/findings/TARGET-*`, each fixed since) goes through its target
/// again, which must return: no panic, no abort, and no input taking over 10 s.
#[test]
fn every_fuzzing_corpus_input_and_past_finding_runs_through_its_target_again() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/libfuzzer");
    let targets: &[(&str, fn(&[u8]))] = &[
        ("folded", libfuzz::folded),
        ("perf", libfuzz::perf),
        ("dtrace", libfuzz::dtrace),
        ("sample", libfuzz::sample),
        ("vtune", libfuzz::vtune),
        ("cpuprofile", libfuzz::cpuprofile),
        ("speedscope", libfuzz::speedscope),
        ("trace", libfuzz::trace),
        ("gotext", libfuzz::gotext),
        ("packed", libfuzz::packed),
        ("pprof", libfuzz::pprof),
        ("jfr", libfuzz::jfr),
        ("chunks", libfuzz::chunks),
        ("notes", libfuzz::notes),
    ];
    let files = |dir: &Path, prefix: &str| -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_file() && p.file_name().unwrap().to_string_lossy().starts_with(prefix)).collect())
            .unwrap_or_default();
        out.sort();
        out
    };
    let findings = files(&root.join("findings"), "");
    for f in &findings {
        let name = f.file_name().unwrap().to_string_lossy();
        assert!(targets.iter().any(|(t, _)| name.starts_with(&format!("{t}-"))), "{}: a finding is named TARGET-…", f.display());
    }
    for &(name, target) in targets {
        let corpus = files(&root.join("corpus").join(name), "");
        assert!(!corpus.is_empty(), "the fuzzing corpus of {name} is empty: tests/libfuzzer/corpus/{name} (scripts/libfuzz.sh grows it)");
        let past = files(&root.join("findings"), &format!("{name}-"));
        let start = Instant::now();
        for input in corpus.iter().chain(&past) {
            let bytes = std::fs::read(input).unwrap();
            let took = Instant::now();
            if let Err(e) = std::panic::catch_unwind(AssertUnwindSafe(|| target(&bytes))) {
                let why = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                panic!("fuzz {name}: {} panicked: {why}", input.display());
            }
            assert!(took.elapsed() < Duration::from_secs(10), "fuzz {name}: {} took {:?}", input.display(), took.elapsed());
        }
        eprintln!("fuzz {name}: {} corpus inputs and {} past findings replayed in {:.1} s", corpus.len(), past.len(), start.elapsed().as_secs_f64());
    }
}
