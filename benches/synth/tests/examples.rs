//! The generator's output is a format: the benches compare runs on it, and the example
//! archive was made with it. These are the bytes committed in `examples/archive/`, made by
//! the generator when it was still `flamesite synth`, with the seeds and stack counts that the
//! README gives; the binary must make them again, flag for flag.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

fn example(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/archive").join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if rel.ends_with(".zst") {
        return zstd::decode_all(&bytes[..]).unwrap();
    }
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut text).unwrap();
    text
}

/// Runs `flamesite-synth ARGS -o DIR/NAME` and returns the file it wrote, gunzipped when
/// NAME ends in `.gz`.
fn synth(dir: &Path, name: &str, args: &[&str]) -> Vec<u8> {
    let out: PathBuf = dir.join(name);
    let o = Command::new(env!("CARGO_BIN_EXE_flamesite-synth")).args(args).arg("-o").arg(&out).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    if name.ends_with(".gz") {
        assert_eq!(&bytes[..2], b"\x1f\x8b", "a .gz name is gzipped");
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut text).unwrap();
        text
    } else {
        bytes
    }
}

#[test]
fn the_example_archive_is_made_again_from_the_seeds_the_readme_gives() {
    let dir = tempfile::tempdir().unwrap();
    // (file, seed, stacks), as README.md lists them.
    let mut cases = vec![
        ("api/2026-11-19.folded.gz", 11, 3000),
        ("api/2026-11-20.folded.gz", 12, 3200),
        ("worker/2026-11-18.folded.gz", 21, 2000),
        ("worker/2026-11-20.folded.zst", 22, 2500),
        ("batch/nightly.folded.gz", 31, 10000),
    ];
    let days: Vec<String> = (13..=18).map(|dd| format!("api/2026-11-{dd}.folded.gz")).collect();
    for (dd, file) in (13u64..=18).zip(&days) {
        cases.push((file.as_str(), 100 + dd, (1500 + (dd * 397) % 900) as usize));
    }
    for (file, seed, stacks) in cases {
        let args = ["--size", "small", "--seed", &seed.to_string(), "--stacks", &stacks.to_string()];
        let made = synth(dir.path(), "made.folded.gz", &args);
        assert!(made == example(file), "{file}: flamesite-synth {args:?} made other bytes");
        assert_eq!(made.iter().filter(|&&b| b == b'\n').count(), stacks, "{file}: one line per stack");
    }
}

#[test]
fn the_flags_choose_the_preset_the_seed_and_the_output() {
    let dir = tempfile::tempdir().unwrap();
    // Without -o the profile goes to standard output, and the defaults are small, seed 1.
    let o = Command::new(env!("CARGO_BIN_EXE_flamesite-synth")).args(["--stacks", "200"]).output().unwrap();
    assert!(o.status.success());
    assert_eq!(o.stdout, synth(dir.path(), "a.folded", &["--size", "small", "--seed", "1", "--stacks", "200"]));
    assert_eq!(o.stdout.iter().filter(|&&b| b == b'\n').count(), 200);
    // The small preset is 10,000 stacks, none deeper than 64 frames.
    let small = synth(dir.path(), "b.folded", &["--seed", "3"]);
    let text = String::from_utf8(small).unwrap();
    assert_eq!(text.lines().count(), 10_000);
    assert!(text.lines().all(|l| l.rsplit_once(' ').unwrap().0.split(';').count() <= 64));
    let o = Command::new(env!("CARGO_BIN_EXE_flamesite-synth")).args(["--size", "medium"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("small, large or huge"));
}
