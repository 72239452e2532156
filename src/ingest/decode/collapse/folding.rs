//! Running inferno's folders and reading what they write: a panic inside inferno (hostile
//! input) caught and kept off stderr, and the folded stacks handed to the folded reader.

use std::io::BufRead;
use std::panic::{catch_unwind, AssertUnwindSafe};

use inferno::collapse::Collapse;

use crate::config::Config;
use crate::ingest::decode::{calltree, folded, Decoded};

/// Keeps panics raised inside inferno's code off stderr. inferno 0.12.8 panics on some hostile
/// input (fuzzing found a frame name whose last 17 bytes start inside a UTF-8 character:
/// `collapse/common.rs:489`, then its thread pool's `unwrap`); [`fold`] catches the panic and
/// reports the file as malformed, so Rust's panic message and backtrace on stderr would only
/// bury that report. Panics anywhere else print as before.
pub(super) fn quiet_inferno_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_inferno = info.location().is_some_and(|l| {
                let file = l.file().replace('\\', "/");
                file.contains("/inferno-") && file.contains("/src/")
            });
            if !in_inferno {
                previous(info);
            }
        }));
    });
}

/// Runs inferno's folder over the whole stream, then reads its folded output, with the `_`
/// that inferno's demangling leaves before `{{closure}}` and the like dropped
/// ([`calltree::drop_escape_underscores`]). A panic inside the parser (hostile input it did
/// not expect) becomes an error, not a crash.
pub(super) fn fold(folder: &mut impl Collapse, reader: &mut dyn BufRead, config: &Config, format: &'static str) -> Result<Decoded, String> {
    let out = collapse(folder, reader, format)?;
    finish(out, config, format)
}

/// The folded stacks inferno's folder writes for the whole stream (see [`fold`]).
pub(super) fn collapse(folder: &mut impl Collapse, reader: &mut dyn BufRead, format: &'static str) -> Result<Vec<u8>, String> {
    quiet_inferno_panics();
    let mut out = Vec::new();
    let result = catch_unwind(AssertUnwindSafe(|| folder.collapse(&mut *reader, &mut out)));
    match result {
        Ok(Ok(())) => Ok(out),
        Ok(Err(e)) => Err(format!("{format}: {e}")),
        Err(_) => Err(format!("{format}: the input is malformed (inferno's {format} parser gave up)")),
    }
}

/// Reads folded stacks written by inferno (see [`fold`]).
pub(super) fn finish(mut out: Vec<u8>, config: &Config, format: &'static str) -> Result<Decoded, String> {
    calltree::drop_escape_underscores(&mut out);
    read_folded(&out, config, format)
}

/// Reads the folded stacks a folder wrote.
pub(super) fn read_folded(out: &[u8], config: &Config, format: &'static str) -> Result<Decoded, String> {
    if out.iter().all(u8::is_ascii_whitespace) {
        return Err(format!("{format}: no stacks found (is the file truncated, or were stacks not recorded?)"));
    }
    let mut decoded = folded::decode(&mut &out[..], &config.limits).map_err(|e| format!("{format}: {e}"))?;
    decoded.format = format;
    Ok(decoded)
}
