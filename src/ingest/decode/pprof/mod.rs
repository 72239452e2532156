//! pprof's `profile.proto`, as written by Go's `runtime/pprof`, `go tool pprof`, and the
//! many profilers that speak it (gzip-compressed or not; the caller undoes compression).
//!
//! Every sample type becomes a graph of its own, named by its type (`cpu`, `alloc_space`, …)
//! with its unit (`nanoseconds`, `bytes`, …); pprof's default sample type
//! (`default_sample_type`, else the last one) comes first. Frames:
//! - A sample lists its locations leaf first; a location lists its lines innermost first
//!   (the inlined callee, then the function it was inlined into, …). Each line is a frame of
//!   its own, and the stack is turned around to be root first.
//! - A frame is named by its function's `name`, or its `system_name` when the name is empty.
//!   Names are merged whole, never split, so a `;` inside a name is kept as it is.
//! - A location without lines (unsymbolised) is named by its address, `0x4b10e6`, followed by
//!   ` (file)` when its mapping has a file name. Lines whose `function_id` is 0 (no function)
//!   are left out; a location left with no line and no address is an error.
//! - A sample without locations is counted under one frame, `[unknown]`.
//! - A value of 0 adds nothing to a graph and is left out of it; a negative value is skipped
//!   with a warning.
//!
//! `time_nanos`, `duration_nanos`, `period` (with `period_type`), the comments, `doc_url`,
//! and the `drop_frames`/`keep_frames` regular expressions (shown, not applied) become the
//! profile's metadata.
//!
//! Per-sample labels (Go's `pprof.Do`/`pprof.Labels`, continuous profilers' thread, span or
//! endpoint tags):
//! - Each label key becomes a metadata entry `label KEY` listing its distinct values, strings
//!   sorted and then numbers in ascending order followed by their unit (`4096 bytes`), joined
//!   by `, ` and cut after [`MAX_LISTED_VALUES`] with `, … and N more`. A label with an empty
//!   key is ignored. A label with a string (`str`) is a string label, else a numeric one.
//! - With `[pprof] graph_by_label = "KEY"`, each sample type's graph of the whole profile is
//!   followed by one graph per value of KEY, named `TYPE KEY=VALUE` (`cpu thread=worker-1`),
//!   values in the order above, and, when some samples lack the label, `TYPE KEY=(none)` with
//!   those samples; the unit is the sample type's. A sample with several values of KEY counts
//!   in each of their graphs. The default sample type's graphs come first, then the next
//!   type's, and so on. A profile without the label gets no extra graph, and a label with
//!   more than [`MAX_LABEL_GRAPHS`] values is not split (with a warning).
//!
//! A protobuf has to be read whole, so the profile is held in memory: the reader stops at
//! `limits.max_profile_bytes`. Samples that expand to more than 32 frames per byte of the
//! profile over all sample types (at least 4 million) are refused: a few kilobytes of deeply
//! inlined locations counted in many sample types could otherwise fill the memory. Malformed
//! input (truncated or corrupt protobuf, wrong field types, string or id references to
//! nothing) is an error naming what is wrong.
//!
//! [`proto`] reads the protobuf (the messages of `profile.proto`, the samples and the string
//! table read where they are); [`graphs`] makes the graphs and the metadata from what it read;
//! this file reads the profile's bytes and hands them from one to the other.

use std::io::BufRead;

use prost::Message;

mod graphs;
mod proto;

pub use graphs::{MAX_LABEL_GRAPHS, MAX_LISTED_VALUES};
pub use proto::{is_applicable, Function, Label, Line, Location, Mapping, Profile, Sample, ValueType};

use super::{Decoded, FrameBudget};
use crate::config::{Limits, PprofConfig};
use graphs::convert;
use proto::{malformed, split_samples, Samples, Source, Strings};

/// Reads a whole profile from `reader` and merges every sample type into a graph (and, with
/// `options.graph_by_label`, into one graph per value of that label).
pub fn decode(reader: &mut dyn BufRead, limits: &Limits, options: &PprofConfig) -> Result<Decoded, String> {
    let bytes = read_whole(reader)?;
    let budget = FrameBudget::for_bytes(bytes.len() as u64);
    decode_within(&bytes, limits, options, budget)
}

/// Reads all of `reader` into memory (a pprof is decoded whole), asking for memory in a way
/// that can fail: a profile this machine cannot hold is this profile's error, and the build
/// goes on with the others, where `read_to_end` aborted the process (exit 134).
fn read_whole(reader: &mut dyn BufRead) -> Result<Vec<u8>, String> {
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        if buf.is_empty() {
            return Ok(bytes);
        }
        // Grows as a vector does (doubling), but says so when the memory is not there.
        bytes.try_reserve(buf.len()).map_err(|_| {
            format!(
                "pprof: not enough memory to hold the profile ({} bytes read; it is read whole); lower [limits] max_profile_bytes to refuse such files before reading them",
                bytes.len()
            )
        })?;
        bytes.extend_from_slice(buf);
        let n = buf.len();
        reader.consume(n);
    }
}

/// [`decode`] of the bytes of a profile, with a frame budget.
fn decode_within(bytes: &[u8], limits: &Limits, options: &PprofConfig, budget: FrameBudget) -> Result<Decoded, String> {
    // The samples are most of a profile: each is read when it is needed, into one `Sample`
    // reused for all, rather than decoded into a vector of its own (three allocations per
    // sample to make and to free). The rest of the profile is decoded whole.
    // The string table too is read where it is, a few bytes per string, not as a vector of
    // its own per string (24 bytes each, and prost's copy): a table of millions of empty
    // strings took many times its bytes (docs/BENCHMARKS.md, "Figures behind the code").
    match split_samples(bytes, limits.max_name_bytes)? {
        Some((head, samples, strings)) => {
            let profile = Profile::decode(head.as_slice()).map_err(malformed)?;
            drop(head);
            convert(&profile, Samples::Encoded(bytes, samples), Strings::new(Source::Ranges(bytes, strings)), limits, options, budget)
        }
        // A field cut short, or a group: prost reads the whole and says what is wrong.
        None => {
            let profile = Profile::decode(bytes).map_err(malformed)?;
            convert(&profile, Samples::Decoded(&profile.sample), Strings::new(Source::Table(&profile.string_table)), limits, options, budget)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::graphs::rfc3339;
    use super::proto::read_sample;
    use super::*;
    use crate::graph::frames::StackMerger;
    use crate::ingest::decode::{Graph, MIN_FRAME_BUDGET};

    /// A profile with strings interned on the fly.
    struct Builder {
        p: Profile,
    }

    impl Builder {
        fn new(types: &[(&str, &str)]) -> Self {
            let mut b = Builder { p: Profile { string_table: vec![Vec::new()], ..Default::default() } };
            for (t, u) in types {
                let vt = ValueType { r#type: b.s(t), unit: b.s(u) };
                b.p.sample_type.push(vt);
            }
            b
        }

        fn s(&mut self, s: &str) -> i64 {
            if let Some(i) = self.p.string_table.iter().position(|x| x == s.as_bytes()) {
                return i as i64;
            }
            self.p.string_table.push(s.as_bytes().to_vec());
            self.p.string_table.len() as i64 - 1
        }

        fn function(&mut self, id: u64, name: &str) {
            let name = self.s(name);
            self.p.function.push(Function { id, name, ..Default::default() });
        }

        /// A location whose lines are the given functions, innermost first.
        fn location(&mut self, id: u64, functions: &[u64]) {
            let line = functions.iter().map(|&f| Line { function_id: f, line: 1, column: 0 }).collect();
            self.p.location.push(Location { id, line, address: 0x1000 + id, ..Default::default() });
        }

        /// A sample, locations leaf first.
        fn sample(&mut self, locations: &[u64], values: &[i64]) {
            self.p.sample.push(Sample { location_id: locations.to_vec(), value: values.to_vec(), label: vec![] });
        }

        /// A string label.
        fn label(&mut self, key: &str, value: &str) -> Label {
            Label { key: self.s(key), str: self.s(value), ..Default::default() }
        }

        /// A numeric label with its unit ("" for none).
        fn num_label(&mut self, key: &str, num: i64, unit: &str) -> Label {
            Label { key: self.s(key), num, num_unit: self.s(unit), ..Default::default() }
        }

        /// A sample with labels, locations leaf first.
        fn labelled_sample(&mut self, locations: &[u64], values: &[i64], labels: &[Label]) {
            self.p.sample.push(Sample { location_id: locations.to_vec(), value: values.to_vec(), label: labels.to_vec() });
        }

        fn bytes(&self) -> Vec<u8> {
            self.p.encode_to_vec()
        }
    }

    fn by_label(b: &Builder, key: &str) -> Decoded {
        let options = PprofConfig { graph_by_label: Some(key.to_string()) };
        decode(&mut &b.bytes()[..], &Limits::default(), &options).unwrap()
    }

    fn names_and_units(d: &Decoded) -> Vec<(&str, &str)> {
        d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect()
    }

    fn decode_bytes(b: &[u8]) -> Result<Decoded, String> {
        decode(&mut &b[..], &Limits::default(), &PprofConfig::default())
    }

    fn folded(g: &Graph) -> Vec<String> {
        crate::store::fold::folded_lines(&g.table)
    }

    #[test]
    fn functions_without_ids_are_found_by_their_position() {
        // As the .NET profiler writes them: every function's id is 0 (omitted on the wire),
        // and lines name functions by their 1-based position in the list.
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(0, "Program.Main");
        b.function(0, "Worker.Run");
        b.function(0, "Hash.Compute");
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.location(3, &[3]);
        b.sample(&[3, 2, 1], &[5]);
        b.sample(&[2, 1], &[2]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), ["Program.Main;Worker.Run 2\n", "Program.Main;Worker.Run;Hash.Compute 5\n"]);
        // Mixed: a function without an id is found by its position, one with an id by its id,
        // and a stated id wins over a position; a function that is neither is still an error.
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(0, "A"); // position 1
        b.function(2, "B"); // id 2 (and position 2)
        b.function(1, "C"); // id 1, which A's position would have been
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.sample(&[2, 1], &[1]);
        assert_eq!(folded(&decode_bytes(&b.bytes()).unwrap().graphs[0]), ["C;B 1\n"]);
        b.location(3, &[4]);
        b.sample(&[3], &[1]);
        assert_eq!(decode_bytes(&b.bytes()).unwrap_err(), "pprof: location 3 refers to function 4, which does not exist");
    }

    #[test]
    fn a_function_without_a_name_is_named_by_its_system_name() {
        // As C and C++ profilers write them: `name` empty, the symbol in `system_name`.
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "main");
        let (name, system_name) = (b.s(""), b.s("_ZN3foo3barEv"));
        b.p.function.push(Function { id: 2, name, system_name, ..Default::default() });
        // A function with both keeps its name.
        let (name, system_name) = (b.s("baz"), b.s("_Z3bazv"));
        b.p.function.push(Function { id: 3, name, system_name, ..Default::default() });
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.location(3, &[3]);
        b.sample(&[2, 1], &[3]);
        b.sample(&[3, 2, 1], &[1]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), ["main;_ZN3foo3barEv 3\n", "main;_ZN3foo3barEv;baz 1\n"]);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    /// main calls work, into which square was inlined; work calls leaf.
    fn sample_profile() -> Builder {
        let mut b = Builder::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
        b.function(1, "main");
        b.function(2, "work");
        b.function(3, "square");
        b.function(4, "leaf;with;semicolons");
        b.location(10, &[1]);
        b.location(11, &[3, 2]); // square inlined into work
        b.location(12, &[4]);
        b.sample(&[11, 10], &[2, 20]);
        b.sample(&[12, 11, 10], &[1, 10]);
        b.sample(&[10], &[3, 0]);
        b
    }

    #[test]
    fn every_sample_type_is_a_graph_the_default_first_with_inlined_frames() {
        let b = sample_profile();
        assert!(is_applicable(&b.bytes()));
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(d.format, "pprof");
        let names: Vec<(&str, &str)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect();
        assert_eq!(names, [("cpu", "nanoseconds"), ("samples", "count")]);
        assert_eq!(folded(&d.graphs[0]), ["main;work;square 20\n", "main;work;square;leaf;with;semicolons 10\n"]);
        assert_eq!(
            folded(&d.graphs[1]),
            ["main 3\n", "main;work;square 2\n", "main;work;square;leaf;with;semicolons 1\n"]
        );
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn generated_classes_lose_their_numbers_and_two_of_one_name_are_one_frame() {
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "java.lang.Thread.run");
        b.function(2, "App$$Lambda$75.0x00007ff44c0c4208.run");
        b.function(3, "App$$Lambda$76.0x00007ff44c0c4640.run");
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.location(3, &[3]);
        b.sample(&[2, 1], &[3]);
        b.sample(&[3, 1], &[4]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), ["java.lang.Thread.run;App$$Lambda_.run 7\n"]);
        let t = &d.graphs[0].table;
        let at = t.names.iter().position(|n| n == "App$$Lambda_.run").unwrap() as u32;
        assert_eq!(t.raw.get(&at).map(String::as_str), Some("App$$Lambda$75.0x00007ff44c0c4208.run"));
        assert_eq!(t.raw.len(), 1);
    }

    #[test]
    fn default_sample_type_and_duplicate_names() {
        let mut b = Builder::new(&[("alloc_space", "bytes"), ("alloc_space", "bytes"), ("inuse", "bytes"), ("", "")]);
        b.function(1, "main");
        b.location(1, &[1]);
        b.sample(&[1], &[1, 2, 3, 4]);
        b.p.default_sample_type = b.s("alloc_space");
        let d = decode_bytes(&b.bytes()).unwrap();
        let names: Vec<(&str, &str)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect();
        assert_eq!(names, [("alloc_space", "bytes"), ("alloc_space-2", "bytes"), ("inuse", "bytes"), ("values", "count")]);
        assert_eq!(d.graphs[1].table.grand_total(), 2);
        // An unknown default falls back to the last.
        b.p.default_sample_type = b.s("nonesuch");
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(d.graphs[0].name, "values");
    }

    #[test]
    fn unsymbolised_locations_show_address_and_mapping_file() {
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "main");
        b.location(1, &[1]);
        let file = b.s("/usr/lib/libc.so.6");
        b.p.mapping.push(Mapping { id: 7, filename: file, ..Default::default() });
        b.p.location.push(Location { id: 2, mapping_id: 7, address: 0x7f3a2b1c, ..Default::default() });
        b.p.location.push(Location { id: 3, address: 0xdead, ..Default::default() });
        // A line without a function is left out, leaving the address.
        b.p.location.push(Location { id: 4, address: 0xbeef, line: vec![Line::default()], ..Default::default() });
        b.sample(&[2, 1], &[5]);
        b.sample(&[3, 1], &[6]);
        b.sample(&[4, 1], &[7]);
        b.sample(&[], &[8]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(
            folded(&d.graphs[0]),
            ["[unknown] 8\n", "main;0x7f3a2b1c (/usr/lib/libc.so.6) 5\n", "main;0xbeef 7\n", "main;0xdead 6\n"]
        );
    }

    #[test]
    fn negative_values_are_skipped_and_counted_and_bad_utf8_repaired() {
        let mut b = sample_profile();
        b.sample(&[10], &[-1, -5]);
        b.function(5, "x");
        b.p.string_table.last_mut().unwrap().push(0xff);
        b.location(13, &[5]);
        b.sample(&[13], &[1, 1]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(d.graphs[0].table.grand_total(), 31);
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
        assert!(d.warnings[0].contains("skipped 2 negative values"), "{}", d.warnings[0]);
        assert!(d.warnings[1].contains("1 string"), "{}", d.warnings[1]);
        assert!(d.graphs[0].table.names.iter().any(|n| n == "x\u{fffd}"));
    }

    #[test]
    fn metadata_is_kept() {
        let mut b = sample_profile();
        b.p.time_nanos = 1_795_305_612_004_271_667; // 2026-11-22T00:00:12Z
        b.p.duration_nanos = 2_000_000_000;
        b.p.period = 10_000_000;
        b.p.period_type = Some(ValueType { r#type: b.s("cpu"), unit: b.s("nanoseconds") });
        let c1 = b.s("first comment");
        let c2 = b.s("second");
        b.p.comment = vec![c1, c2];
        b.p.drop_frames = b.s("runtime\\..*");
        let d = decode_bytes(&b.bytes()).unwrap();
        let m = &d.metadata;
        assert_eq!(m["time"], "2026-11-22T00:00:12Z");
        assert_eq!(m["duration"], "2.00 s");
        assert_eq!(m["period"], "10.0 ms of cpu");
        assert_eq!(m["comments"], "first comment\nsecond");
        assert_eq!(m["drop_frames"], "runtime\\..*");
        assert!(!m.contains_key("keep_frames"));
    }

    #[test]
    fn labels_are_metadata_and_graph_by_label_makes_a_graph_per_value() {
        // sample_profile's three samples have no labels; three more have some.
        let mut b = sample_profile();
        let (w1, w2) = (b.label("thread", "worker-1"), b.label("thread", "worker-2"));
        let (big, small) = (b.num_label("bytes", 4096, "bytes"), b.num_label("bytes", 512, "bytes"));
        let (retries, no_key) = (b.num_label("retries", 3, ""), b.label("", "ignored"));
        b.labelled_sample(&[12, 11, 10], &[1, 5], &[w2.clone(), big]);
        b.labelled_sample(&[11, 10], &[4, 40], &[w1.clone(), small, retries, no_key]);
        // Two values of one key: the sample counts in both of their graphs.
        b.labelled_sample(&[11, 10], &[1, 1], &[w1, w2]);

        // Without graph_by_label: the graphs of the whole profile only, the labels as metadata.
        let plain = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(names_and_units(&plain), [("cpu", "nanoseconds"), ("samples", "count")]);
        assert_eq!(folded(&plain.graphs[0]), ["main;work;square 61\n", "main;work;square;leaf;with;semicolons 15\n"]);
        let m = &plain.metadata;
        assert_eq!(m["label thread"], "worker-1, worker-2");
        assert_eq!(m["label bytes"], "512 bytes, 4096 bytes", "numbers in numeric order, with their unit");
        assert_eq!(m["label retries"], "3");
        assert!(!m.contains_key("label "), "a label without a key is ignored: {m:?}");

        // By a string label: per sample type, the whole profile, each value, then (none).
        let d = by_label(&b, "thread");
        assert_eq!(
            names_and_units(&d),
            [
                ("cpu", "nanoseconds"),
                ("cpu thread=worker-1", "nanoseconds"),
                ("cpu thread=worker-2", "nanoseconds"),
                ("cpu thread=(none)", "nanoseconds"),
                ("samples", "count"),
                ("samples thread=worker-1", "count"),
                ("samples thread=worker-2", "count"),
                ("samples thread=(none)", "count"),
            ]
        );
        assert_eq!(folded(&d.graphs[0]), folded(&plain.graphs[0]), "the whole profile as before");
        assert_eq!(folded(&d.graphs[4]), folded(&plain.graphs[1]));
        assert_eq!(folded(&d.graphs[1]), ["main;work;square 41\n"]);
        assert_eq!(folded(&d.graphs[2]), ["main;work;square 1\n", "main;work;square;leaf;with;semicolons 5\n"]);
        assert_eq!(folded(&d.graphs[3]), ["main;work;square 20\n", "main;work;square;leaf;with;semicolons 10\n"]);
        assert_eq!(folded(&d.graphs[5]), ["main;work;square 5\n"]);
        assert_eq!(folded(&d.graphs[6]), ["main;work;square 1\n", "main;work;square;leaf;with;semicolons 1\n"]);
        assert_eq!(
            folded(&d.graphs[7]),
            ["main 3\n", "main;work;square 2\n", "main;work;square;leaf;with;semicolons 1\n"]
        );
        assert_eq!(d.metadata, plain.metadata);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);

        // By a numeric label: values in numeric order, named with their unit.
        let d = by_label(&b, "bytes");
        let names: Vec<&str> = d.graphs.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names[..4], ["cpu", "cpu bytes=512 bytes", "cpu bytes=4096 bytes", "cpu bytes=(none)"]);
        assert_eq!(folded(&d.graphs[1]), ["main;work;square 40\n"]);
        assert_eq!(folded(&d.graphs[2]), ["main;work;square;leaf;with;semicolons 5\n"]);
        assert_eq!(folded(&d.graphs[3]), ["main;work;square 21\n", "main;work;square;leaf;with;semicolons 10\n"]);

        // Every sample labelled: no (none) graph. A key no sample has: the graphs as before.
        let mut all = Builder::new(&[("samples", "count")]);
        all.function(1, "main");
        all.location(1, &[1]);
        let l = all.num_label("span", 7, "");
        all.labelled_sample(&[1], &[2], &[l]);
        let names: Vec<String> = by_label(&all, "span").graphs.into_iter().map(|g| g.name).collect();
        assert_eq!(names, ["samples", "samples span=7"]);
        assert_eq!(names_and_units(&by_label(&b, "nonesuch")), names_and_units(&plain));
    }

    #[test]
    fn many_label_values_are_cut_in_the_metadata_and_not_split_past_the_limit() {
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "main");
        b.location(1, &[1]);
        for i in 0..=MAX_LABEL_GRAPHS {
            let l = b.label("span", &format!("s{i:03}"));
            b.labelled_sample(&[1], &[1], &[l]);
        }
        let d = by_label(&b, "span");
        let more = MAX_LABEL_GRAPHS + 1 - MAX_LISTED_VALUES;
        let listed = &d.metadata["label span"];
        assert!(listed.starts_with("s000, s001, ") && listed.ends_with(&format!("s019, … and {more} more")), "{listed}");
        assert_eq!(d.graphs.len(), 1, "not split");
        assert!(d.warnings.iter().any(|w| w.contains("label \"span\" has 101 values, more than 100")), "{:?}", d.warnings);
        // One value fewer is split.
        b.p.sample.pop();
        assert_eq!(by_label(&b, "span").graphs.len(), 1 + MAX_LABEL_GRAPHS);
    }

    #[test]
    fn a_label_string_out_of_range_is_an_error() {
        let mut b = sample_profile();
        b.labelled_sample(&[10], &[1, 1], &[Label { key: 99, ..Default::default() }]);
        assert!(err(&b.bytes()).contains("string index 99 of a label of sample 4 out of range"));
    }

    #[test]
    fn time_formats() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000_000_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(rfc3339(i64::MAX), "2262-04-11T23:47:16Z");
        assert_eq!(rfc3339(i64::MIN), "1677-09-21T00:12:43Z");
    }

    fn err(bytes: &[u8]) -> String {
        match decode_bytes(bytes) {
            Ok(_) => panic!("decoded a malformed profile"),
            Err(e) => e,
        }
    }

    #[test]
    fn truncated_protobuf_never_panics_and_a_cut_field_is_an_error() {
        let bytes = sample_profile().bytes();
        // Where the top-level fields end, read from the protobuf wire format here: a prefix
        // ending anywhere else cuts a field and must be an error; one ending at a boundary is
        // a whole message that lacks what follows, and any result but a panic is right.
        let varint = |at: &mut usize| {
            let mut v = 0u64;
            for shift in (0..64).step_by(7) {
                let b = bytes[*at];
                *at += 1;
                v |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    break;
                }
            }
            v
        };
        let mut boundaries = vec![0];
        let mut at = 0;
        while at < bytes.len() {
            let tag = varint(&mut at);
            match tag & 7 {
                0 => drop(varint(&mut at)),
                1 => at += 8,
                2 => at += varint(&mut at) as usize,
                5 => at += 4,
                w => panic!("wire type {w}"),
            }
            boundaries.push(at);
        }
        assert_eq!(at, bytes.len());
        assert!(boundaries.len() > 10, "{boundaries:?}");
        let mut errors = 0;
        for n in 1..bytes.len() {
            let result = decode_bytes(&bytes[..n]);
            if !boundaries.contains(&n) {
                assert!(result.is_err(), "a prefix of {n} bytes cuts a field but decoded");
            }
            errors += usize::from(result.is_err());
        }
        assert!(errors >= bytes.len() - boundaries.len(), "{errors} errors of {} prefixes", bytes.len() - 1);
        let e = err(&bytes[..bytes.len() - 3]);
        assert!(e.starts_with("pprof: malformed protobuf"), "{e}");
    }

    #[test]
    fn wrong_wire_type_is_an_error() {
        let mut bytes = sample_profile().bytes();
        // Field 9 (time_nanos) as a length-delimited field instead of a varint.
        bytes.extend_from_slice(&[(9 << 3) | 2, 1, 0]);
        let e = err(&bytes);
        assert!(e.contains("malformed protobuf") && e.contains("wire type"), "{e}");
    }

    #[test]
    fn samples_read_apart_from_the_rest_give_the_same_graphs() {
        let plain = decode_bytes(&sample_profile().bytes()).unwrap();
        // Location ids far past the number of locations, and one that is u64::MAX.
        let mut b = sample_profile();
        let renumber = |id: u64| match id {
            10 => u64::MAX,
            11 => 1 << 40,
            id => id,
        };
        for l in &mut b.p.location {
            l.id = renumber(l.id);
        }
        for sample in &mut b.p.sample {
            sample.location_id.iter_mut().for_each(|id| *id = renumber(*id));
        }
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), folded(&plain.graphs[0]));
        assert_eq!(folded(&d.graphs[1]), folded(&plain.graphs[1]));
        b.sample(&[12, 1 << 41], &[1, 1]);
        assert_eq!(err(&b.bytes()), format!("pprof: location {} referred to by sample 4 does not exist", 1u64 << 41));
        // An unknown field that is a group (field 20: start 0xa3 0x01, a varint, end 0xa4 0x01), before the
        // samples: skipped, as prost skips it.
        let mut bytes = vec![0xa3, 0x01, 1 << 3, 5, 0xa4, 0x01];
        bytes.extend(sample_profile().bytes());
        let d = decode_bytes(&bytes).unwrap();
        assert_eq!(folded(&d.graphs[0]), folded(&plain.graphs[0]));
        assert_eq!(folded(&d.graphs[1]), folded(&plain.graphs[1]));
        // Field 2 (sample) as a varint, and a sample whose location list is cut short.
        let mut bytes = sample_profile().bytes();
        bytes.extend_from_slice(&[2 << 3, 1]);
        let e = err(&bytes);
        assert!(e.starts_with("pprof: malformed protobuf") && e.contains("wire type"), "{e}");
        let mut bytes = sample_profile().bytes();
        bytes.extend_from_slice(&[(2 << 3) | 2, 3, (1 << 3) | 2, 5, 10]);
        let e = err(&bytes);
        assert!(e.starts_with("pprof: malformed protobuf") && e.ends_with(": sample 4"), "{e}");
    }

    #[test]
    fn samples_read_without_prost_are_what_prost_reads() {
        // Packed, as prost writes them: negative values, a label, and then the same fields
        // one varint each (as some writers write them) appended, which adds to them.
        let labelled = Sample {
            location_id: vec![3, 1 << 40, 1],
            value: vec![-5, 0, i64::MAX],
            label: vec![Label { key: 1, str: 2, num: -7, num_unit: 3 }],
        };
        let mut bytes = labelled.encode_to_vec();
        bytes.extend_from_slice(&[0x08, 9, 0x10, 4, 0x08, 0x80, 0x01]);
        let want = Sample::decode(bytes.as_slice()).unwrap();
        assert_eq!(want.location_id, [3, 1 << 40, 1, 9, 128]);
        let mut read = Sample::default();
        assert!(read_sample(&bytes, &mut read));
        assert_eq!(read, want);
        // Cut anywhere: not read, or read as prost reads it.
        for n in 0..bytes.len() {
            let mut read = Sample::default();
            if read_sample(&bytes[..n], &mut read) {
                assert_eq!(Sample::decode(&bytes[..n]).as_ref(), Ok(&read), "cut at {n}");
            }
        }
        // Another field is left to prost.
        let mut other = bytes.clone();
        other.extend_from_slice(&[0x20, 1]);
        assert!(!read_sample(&other, &mut Sample::default()));
        assert_eq!(Sample::decode(other.as_slice()).unwrap(), want);
    }

    #[test]
    fn string_index_out_of_range_is_an_error() {
        let mut b = sample_profile();
        b.p.function[1].name = 57;
        let e = err(&b.bytes());
        let n = b.p.string_table.len();
        assert_eq!(e, format!("pprof: string index 57 of function 2 out of range (the table has {n})"));
        let mut b = sample_profile();
        b.p.sample_type[0].unit = -3;
        assert!(err(&b.bytes()).contains("string index -3 of sample type 1"));
    }

    #[test]
    fn references_to_nothing_are_errors() {
        let mut b = sample_profile();
        b.sample(&[10, 99], &[1, 1]);
        assert_eq!(err(&b.bytes()), "pprof: location 99 referred to by sample 4 does not exist");
        let mut b = sample_profile();
        b.location(14, &[42]);
        assert_eq!(err(&b.bytes()), "pprof: location 14 refers to function 42, which does not exist");
        let mut b = sample_profile();
        b.p.location.push(Location { id: 15, mapping_id: 3, address: 1, ..Default::default() });
        assert_eq!(err(&b.bytes()), "pprof: location 15 refers to mapping 3, which does not exist");
        let mut b = sample_profile();
        b.p.location.push(Location { id: 16, ..Default::default() });
        assert_eq!(err(&b.bytes()), "pprof: location 16 has no line and no address: nothing to show");
        let mut b = sample_profile();
        b.sample(&[10], &[1]);
        assert_eq!(err(&b.bytes()), "pprof: sample 4 has 1 values but the profile has 2 sample types");
        let b = Builder::new(&[]);
        let mut bytes = b.bytes();
        bytes.extend_from_slice(&[(9 << 3), 1]);
        assert_eq!(err(&bytes), "pprof: the profile has no sample types");
    }

    #[test]
    fn samples_of_one_stack_add_up_per_sample_type() {
        // The same location list three times (as label sets make it), with a negative and a
        // zero value among them, gives the graph of its sums; other stacks are untouched.
        let mut b = sample_profile();
        b.sample(&[12, 11, 10], &[4, 0]);
        b.sample(&[12, 11, 10], &[-7, 5]);
        let d = decode_bytes(&b.bytes()).unwrap();
        let cpu = folded(&d.graphs[0]);
        let samples = folded(&d.graphs[1]);
        assert_eq!(d.graphs[0].name, "cpu");
        assert!(cpu.contains(&"main;work;square;leaf;with;semicolons 15\n".to_string()), "{cpu:?}");
        assert!(samples.contains(&"main;work;square;leaf;with;semicolons 5\n".to_string()), "{samples:?}");
        assert!(samples.contains(&"main;work;square 2\n".to_string()), "{samples:?}");
        assert!(d.warnings.iter().any(|w| w.contains("skipped 1 negative value")), "{:?}", d.warnings);
    }

    #[test]
    fn each_graph_is_its_samples_stacks_merged_one_by_one() {
        // Samples drawn over a small call graph, with functions that share a name, an address
        // named like a function, a sample without locations and many zero values: each sample
        // type's table, column for column, is what merging each sample's stack with a value
        // for that type, one at a time, gives.
        let mut b = Builder::new(&[("a", "count"), ("b", "count"), ("c", "count")]);
        let functions = ["main", "work", "work", "b;c", "zeta", "alpha", "work", "0xabc", "[unknown]"];
        for (i, name) in functions.iter().enumerate() {
            b.function(i as u64 + 1, name);
        }
        let mut seed: u64 = 7;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for id in 1..=12 {
            let lines: Vec<u64> = (0..1 + next(3)).map(|_| 1 + next(functions.len() as u64)).collect();
            b.location(id, &lines);
        }
        b.p.location.push(Location { id: 13, address: 0xabc, ..Default::default() });
        for _ in 0..400 {
            let ids: Vec<u64> = (0..next(6)).map(|_| 1 + next(13)).collect();
            let values: Vec<i64> = (0..3).map(|_| if next(3) == 0 { 0 } else { next(1000) as i64 }).collect();
            b.sample(&ids, &values);
        }
        let d = decode_bytes(&b.bytes()).unwrap();
        let names = |l: &Location| -> Vec<String> {
            if l.line.is_empty() {
                return vec![format!("{:#x}", l.address)];
            }
            l.line.iter().rev().map(|line| functions[line.function_id as usize - 1].to_string()).collect()
        };
        for (t, type_name) in ["a", "b", "c"].iter().enumerate() {
            let mut m = StackMerger::new(false, 1000);
            for sample in &b.p.sample {
                if sample.value[t] == 0 {
                    continue;
                }
                let mut stack: Vec<String> = Vec::new();
                for id in sample.location_id.iter().rev() {
                    stack.extend(names(b.p.location.iter().find(|l| l.id == *id).unwrap()));
                }
                if stack.is_empty() {
                    stack.push("[unknown]".into());
                }
                let stack: Vec<&str> = stack.iter().map(|s| s.as_str()).collect();
                m.add_names(&stack, sample.value[t] as u64, 0).unwrap();
            }
            let graph = d.graphs.iter().find(|g| g.name == *type_name).unwrap();
            assert!(graph.table.len() > 50, "{}", graph.table.len());
            assert_eq!(graph.table, m.finish().unwrap(), "sample type {type_name}");
        }
    }

    #[test]
    fn sums_past_the_limits_are_errors() {
        // Samples of i64::MAX, i64::MAX and 2 on locations of functions `f` and `second`.
        let profile = |second: &str| {
            let mut b = Builder::new(&[("samples", "count")]);
            b.function(1, "f");
            b.function(2, second);
            b.location(1, &[1]);
            b.location(2, &[2]);
            b.sample(&[1], &[i64::MAX]);
            b.sample(&[1], &[i64::MAX]);
            b.sample(&[2], &[2]);
            b
        };
        // Two locations of functions with one name: one stack, whose sum overflows.
        assert_eq!(err(&profile("f").bytes()), "pprof: sample 3: the counts add up to more than 2^64 (overflow)");
        // Different stacks whose total overflows; a total too large for the chunk files.
        let mut b = profile("g");
        assert_eq!(err(&b.bytes()), "pprof: the counts add up to more than 2^64 (overflow)");
        b.p.sample.truncate(1);
        b.p.sample[0].value[0] = 1 << 53;
        assert_eq!(err(&b.bytes()), format!("pprof: the total {} is 2^53 or more and cannot be stored exactly", 1u64 << 53));
    }

    #[test]
    fn too_deep_stacks_are_errors() {
        let b = sample_profile();
        let limits = Limits { max_depth: 2, ..Limits::default() };
        let e = decode(&mut &b.bytes()[..], &limits, &PprofConfig::default()).unwrap_err();
        assert!(e.starts_with("pprof: sample 1:") && e.contains("deeper"), "{e}");
    }

    #[test]
    fn a_small_profile_that_expands_to_billions_of_frames_is_refused() {
        // 1000 sample types, one location with 1000 inlined lines, a sample that refers to it
        // 50 times: 50 million frames per sample type from a few kilobytes.
        let types: Vec<(String, String)> = (0..1000).map(|i| (format!("t{i}"), "count".to_string())).collect();
        let types: Vec<(&str, &str)> = types.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let mut b = Builder::new(&types);
        b.function(1, "f");
        b.location(1, &[1; 1000]);
        b.sample(&[1; 50], &[1; 1000]);
        let bytes = b.bytes();
        assert!(bytes.len() < 20_000, "{}", bytes.len());
        assert_eq!(FrameBudget::for_bytes(bytes.len() as u64).limit, MIN_FRAME_BUDGET);
        // The same check with a smaller budget, to keep the test quick.
        let e = decode_within(&bytes, &Limits::default(), &PprofConfig::default(), FrameBudget::with_limit(1_000_000)).unwrap_err();
        assert!(e.contains("more than 1000000 frames") && e.contains("refused as a likely bomb"), "{e}");
        // A real profile is far below its budget.
        let p = sample_profile().bytes();
        assert!(decode_bytes(&p).is_ok() && FrameBudget::for_bytes(p.len() as u64).limit >= MIN_FRAME_BUDGET);
    }

    #[test]
    fn sniffing_tells_profiles_from_text_and_other_binaries() {
        assert!(is_applicable(&sample_profile().bytes()));
        assert!(!is_applicable(b"main;f 1\n"));
        assert!(!is_applicable(b"\n\nmain;f 1\n"));
        assert!(!is_applicable(&[0x0a, 0x02, 0x08, 0x01, 0xfa, 0x01, 0x00]), "field 31 is not in Profile");
        assert!(!is_applicable(&[0x0a, 0x02, 0x08, 0x01, 0x48, 0x01, 0x49]), "field 9 with a wire type 1");
        assert!(!is_applicable(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]), "zstd magic");
        assert!(!is_applicable(b"\x7fELF\x02\x01\x01\x00"));
        // A sniff that ends inside a field still counts.
        let bytes = sample_profile().bytes();
        assert!(is_applicable(&bytes[..bytes.len() / 2]));
    }
}
