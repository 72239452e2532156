//! Files people have that are no format flamesite reads, recognised by what they must contain,
//! so that each is refused by name, with the command that makes a file it reads, instead of
//! being misread. The folded reader accepts almost any text whose lines end in a number
//! (callgrind's `summary: 194045152`, Go's `heap profile: 1: 8 [2: 16] @ heap/1048576`), so these are
//! asked before it; a format that is read is always asked first.

/// A kind of file that is not read: what it is, and what to do instead.
#[derive(Debug, PartialEq, Eq)]
pub struct Foreign {
    /// What the file is, as a reader would name it ("Valgrind callgrind output").
    pub what: &'static str,
    /// The way to a file flamesite reads.
    pub instead: &'static str,
}

const LEGACY_PPROF: Foreign = Foreign {
    what: "a legacy pprof profile (Go's debug=1 heap, mutex or block text, or gperftools' format)",
    instead: "`go tool pprof -proto FILE > FILE.pb.gz` writes it as profile.proto, which flamesite reads",
};

/// What `sniff`, the decompressed start of a file, is when it is one of the kinds of file that
/// are not read; `None` for anything else.
pub fn recognise(sniff: &[u8]) -> Option<&'static Foreign> {
    // A compression still there after MAX_LAYERS are undone (super::Compression).
    if super::Compression::detect(sniff) != super::Compression::None {
        return Some(&Foreign {
            what: "a file compressed more than three times over",
            instead: "undo a layer or more (`gzip -d`, `xz -d`, …): flamesite undoes gzip, zstd, xz, bzip2 and LZ4, three layers deep",
        });
    }
    if sniff.starts_with(b"PERFILE2") {
        return Some(&Foreign {
            what: "perf.data, perf record's binary file",
            instead: "print it as text on the machine that recorded it (`perf script > FILE.perf.txt`: perf needs the binaries it sampled to name the frames), which flamesite reads",
        });
    }
    if sniff.starts_with(b"SIMPLEPERF") {
        return Some(&Foreign {
            what: "simpleperf's perf.data (Android)",
            instead: "print it as perf script text with simpleperf's `report_sample.py` (`report_sample.py -i perf.data > FILE.perf.txt`), which flamesite reads",
        });
    }
    if is_pstats(sniff) {
        return Some(&Foreign {
            what: "Python's cProfile/pstats data (callers and callees, no stacks)",
            instead: "record the program with py-spy (`py-spy record --format raw -o FILE.folded -- python …`) for folded stacks, which flamesite reads",
        });
    }
    if is_legacy_pprof_binary(sniff) {
        return Some(&LEGACY_PPROF);
    }
    if sniff.contains(&0) {
        return None;
    }
    let lines = first_lines(sniff);
    let first = lines.first().copied().unwrap_or_default();
    if first.starts_with(b"v8-version,") {
        return Some(&Foreign {
            what: "V8's --prof log",
            instead: "record with `node --cpu-prof` instead, which writes a .cpuprofile flamesite reads",
        });
    }
    if first == b"# callgrind format" || lines.iter().any(|l| l.starts_with(b"creator: callgrind")) {
        return Some(&Foreign { what: "Valgrind callgrind output", instead: "sample the program with perf instead (`perf record -g`, then `perf script`), whose text flamesite reads" });
    }
    // cachegrind: `desc:` lines, then `cmd:` and `events:` (no callgrind `creator:`).
    let has = |key: &[u8]| lines.iter().any(|l| l.starts_with(key));
    if has(b"events: ") && (has(b"desc: ") || has(b"cmd: ") || has(b"positions: ") || has(b"fn=")) {
        return Some(&Foreign { what: "Valgrind cachegrind or callgrind output", instead: "sample the program with perf instead (`perf record -g`, then `perf script`), whose text flamesite reads" });
    }
    // Go's debug=1 text profiles (`goroutine profile: total 6`, `heap profile: 1: 8 [2: 16] @
    // heap/1048576`) and gperftools' text ones (`--- contentionz 1 ---`, `--- threadz 1 ---`).
    let legacy_text = (first.ends_with(b"profile:") || first.windows(10).any(|w| w == b" profile: "))
        && first.split(|&b| b == b' ').next().is_some_and(|w| w.iter().all(u8::is_ascii_alphabetic))
        && (first.windows(8).any(|w| w == b": total ") || first.starts_with(b"heap profile:"));
    let gperftools_text = first.starts_with(b"--- ") && first.ends_with(b" ---") && lines.iter().skip(1).any(|l| l.windows(3).any(|w| w == b" @ ") || l.starts_with(b"--- Thread"));
    // (Go's count profiles, `goroutine profile: total 6`, are read: super::gotext.)
    if (legacy_text && !super::gotext::is_applicable(sniff)) || gperftools_text || first.starts_with(b"--- contention:") {
        return Some(&LEGACY_PPROF);
    }
    // JSON of profilers whose formats are not read.
    if first.starts_with(b"{") || first.starts_with(b"[") {
        let has_key = |key: &[u8]| sniff.windows(key.len()).any(|w| w == key);
        if has_key(b"\"meta\"") && has_key(b"\"threads\"") {
            return Some(&Foreign {
                what: "a Firefox profiler file (Gecko or processed profile, as Firefox and samply write)",
                instead: "on Linux, record with perf (`perf record -g`, then `perf script`), whose text flamesite reads",
            });
        }
    }
    None
}

/// The first non-blank lines of `sniff`, trimmed, at most 32 (the last may be cut).
fn first_lines(sniff: &[u8]) -> Vec<&[u8]> {
    sniff.split(|&b| b == b'\n').map(<[u8]>::trim_ascii).filter(|l| !l.is_empty()).take(32).collect()
}

/// Python's `marshal` of the pstats dict: a dict (`{`, with or without the reference flag)
/// whose first key is a tuple of three (file, line, function).
fn is_pstats(sniff: &[u8]) -> bool {
    matches!(sniff, [0x7B | 0xFB, 0x28 | 0xA8, 3, 0, 0, 0, ..] | [0x7B | 0xFB, 0x29 | 0xA9, 3, ..])
}

/// gperftools' (and Go's before 1.9) binary CPU profile: a header of words 0, 3 (header
/// words), 0 (version), the sampling period and 0, in 32- or 64-bit words of either order.
fn is_legacy_pprof_binary(sniff: &[u8]) -> bool {
    let words = |size: usize, big: bool| -> Option<Vec<u64>> {
        (0..5)
            .map(|i| {
                let b = sniff.get(i * size..(i + 1) * size)?;
                Some(b.iter().enumerate().fold(0u64, |v, (k, &byte)| v | (byte as u64) << (8 * if big { size - 1 - k } else { k })))
            })
            .collect()
    };
    [(4, false), (4, true), (8, false), (8, true)].into_iter().any(|(size, big)| words(size, big).is_some_and(|w| w[0] == 0 && w[1] == 3 && w[2] <= 1 && w[3] > 0 && w[4] == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_of_formats_that_are_read_are_not_foreign() {
        for text in [&b"a;b 1\n"[..], b"main;work 12\nmain 3\n", b"{\"nodes\":[]}", b"# mode: wall\nmain;f 1\n", b"heap;alloc 5\n"] {
            assert_eq!(recognise(text), None, "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn each_kind_is_named() {
        let what = |b: &[u8]| recognise(b).map(|f| f.what).unwrap_or("none");
        // Go's count profiles are read (super::gotext): not foreign.
        assert_eq!(recognise(b"threadcreate profile: total 7\n1 @ 0x44cb3 0x45045\n"), None);
        assert_eq!(recognise(b"goroutine profile: total 6\n"), None);
        assert!(what(b"heap profile: 13: 159568 [13: 159568] @ heap/1048576\n").contains("legacy pprof"));
        assert!(what(b"--- contentionz 1 ---\ncycles/second = 3201000000\n  19490304       27 @ 0xbccc97\n").contains("legacy pprof"));
        assert!(what(b"# callgrind format\nversion: 1\n").contains("callgrind"));
        assert!(what(b"desc: I1 cache: 32768 B\ncmd: ./p\nevents: Ir\n").contains("cachegrind"));
        assert!(what(b"PERFILE2h\0\0").contains("perf.data"));
        assert!(what(b"\xFD7zXZ\x00\x00").contains("three times"));
        assert!(what(b"\xfb\x29\x03\xfa\x04w.py").contains("pstats"));
        assert!(what(b"\0\0\0\0\x03\0\0\0\0\0\0\0\x10\x27\0\0\0\0\0\0").contains("legacy pprof"));
        assert!(what(b"{\"meta\": {\"version\": 24}, \"threads\": []}").contains("Firefox"));
        assert!(what(b"v8-version,11,3,244\n").contains("V8"));
    }
}
