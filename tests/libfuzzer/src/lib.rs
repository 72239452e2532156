//! What each fuzz target runs: the input handed to one reader of flamesite, which must return
//! a result (an error is fine) and never panic, hang or abort.

use std::path::PathBuf;
use std::sync::OnceLock;

use flamesite::config::Config;
use flamesite::ingest::decode::{collapse, cpuprofile, folded, gotext, jfr, pprof, speedscope, trace, Decoded};

fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(Config::default)
}

/// A decoder of the shape most of them have.
pub fn decoder(f: fn(&mut dyn std::io::BufRead, &Config) -> Result<Decoded, String>, data: &[u8]) {
    let _ = f(&mut &data[..], config());
}

pub fn folded(data: &[u8]) {
    let _ = folded::decode(&mut &data[..], &config().limits);
}

pub fn perf(data: &[u8]) {
    decoder(collapse::decode_perf, data)
}

pub fn dtrace(data: &[u8]) {
    decoder(collapse::decode_dtrace, data)
}

pub fn sample(data: &[u8]) {
    decoder(collapse::decode_sample, data)
}

pub fn vtune(data: &[u8]) {
    decoder(collapse::decode_vtune, data)
}

pub fn cpuprofile(data: &[u8]) {
    decoder(cpuprofile::decode, data)
}

pub fn speedscope(data: &[u8]) {
    decoder(speedscope::decode, data)
}

pub fn trace(data: &[u8]) {
    decoder(trace::decode, data)
}

pub fn gotext(data: &[u8]) {
    decoder(gotext::decode, data)
}

/// A whole file, read as the build reads one: its compression undone, layer by layer, then its
/// format.
pub fn packed(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!("flamesite-fuzz-packed-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("input");
    if std::fs::write(&path, data).is_ok() {
        let _ = flamesite::ingest::decode::decode_file(&path, config());
    }
}

pub fn pprof(data: &[u8]) {
    let _ = pprof::decode(&mut &data[..], &config().limits, &config().pprof);
}

pub fn jfr(data: &[u8]) {
    let _ = jfr::decode(&mut &data[..], &config().limits);
}

pub fn notes(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = flamesite::ingest::notes::render(text);
    }
}

/// A graph folder written from a small profile: (path in the folder, bytes) of each file.
fn base_graph() -> &'static Vec<(String, Vec<u8>)> {
    static GRAPH: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    GRAPH.get_or_init(|| {
        let text = b"main;a;b 3\nmain;a;c 5\nmain;d 7\nmain;d;a;b 2\nother 1\n";
        let decoded = folded::decode(&mut &text[..], &config().limits).expect("a folded profile");
        let files = std::sync::Mutex::new(Vec::new());
        let sink = |rel: &str, bytes: &[u8]| {
            files.lock().unwrap().push((rel.to_string(), bytes.to_vec()));
            Ok(())
        };
        let table = &decoded.graphs[0].table;
        flamesite::store::chunk::encode("samples", "samples", table, &config().chunks, config().palette, &sink).expect("encoded");
        let mut files = files.into_inner().unwrap();
        files.sort();
        files
    })
}

/// The chunk reader of `flamesite fold`: the input's first byte picks one file of a small
/// graph folder, the rest of it replaces that file's bytes, and the folder is read back.
pub fn chunks(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else { return };
    let graph = base_graph();
    let dir = scratch();
    let _ = std::fs::remove_dir_all(&dir);
    for (k, (rel, bytes)) in graph.iter().enumerate() {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, if k == which as usize % graph.len() { rest } else { &bytes[..] }).unwrap();
    }
    if let Ok((_, table)) = flamesite::store::chunk::read_graph(&dir) {
        let _ = flamesite::store::fold::folded_lines(&table);
    }
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("flamesite-fuzz-chunks-{}", std::process::id()))
}
