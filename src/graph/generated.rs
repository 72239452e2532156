//! Names of classes a JVM makes at run time, without the numbers that change from run to run.
//!
//! A lambda's class (`App$$Lambda$75/0x00007ff44c0c4208`), a method handle's form
//! (`java.lang.invoke.LambdaForm$MH/0x0000000800c0a400`), a reflection accessor
//! (`jdk.internal.reflect.GeneratedMethodAccessor31`) and a proxy (`jdk.proxy2.$Proxy12`) are
//! numbered in the order the JVM made them and carry the address it put them at: the same
//! function has another name in every run, and comparisons, histories and change points see it
//! vanish and reappear. Those numbers are replaced by one `_`, as Pyroscope names them
//! (`App$$Lambda_.run`, `GeneratedMethodAccessor_.invoke`), so the function has one name in
//! every run and every tool. The rules (docs/FORMAT.md, "Names the JVM generates"):
//!
//! - after `$$Lambda` and after `LambdaForm$` and its kind (`MH`, `DMH`, `BMH`, …), every
//!   following id: a `$`, `/`, `.` or `+` and then a decimal number or `0x` and hex digits
//!   (`$75`, `/0x00007ff44c0c4208`, `.0x…` as async-profiler writes it, `+0x…/1418334255` as
//!   the JDK's JFR writes it, `$613/672746064` as JDK 8 names it);
//! - the decimal number right after `GeneratedMethodAccessor`, `GeneratedConstructorAccessor`,
//!   `GeneratedSerializationConstructorAccessor` and `$Proxy`;
//! - any other hidden class's address: `/0x` or `.0x` and at least 8 hex digits after a
//!   class name.
//!
//! An id ends where a name's characters (letters, digits, `_`) do: `$$Lambda$75abc` is left as
//! it is. A name these rules change is changed once: the result has nothing left to replace.

/// The name with the run-time numbers of generated classes replaced by `_`, or `None` when it
/// has none (most names; checked with a few substring searches).
pub fn normalized(name: &str) -> Option<String> {
    if !(name.contains("Lambda") || name.contains("Generated") || name.contains("$Proxy") || name.contains("0x")) {
        return None;
    }
    let b = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    // Bytes of `name` copied to `out` so far.
    let mut copied = 0;
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        // A marker ending at `end`, and whether ids after it are separated (`$75`) or not (`31`).
        let marker = marker_at(b, i);
        if let Some((end, separated)) = marker {
            let after = if separated { skip_ids(b, end) } else { skip_number(b, end) };
            if after > end {
                out.push_str(&name[copied..end]);
                out.push('_');
                copied = after;
                changed = true;
                i = after;
                continue;
            }
            i = end;
            continue;
        }
        // Another hidden class's address: `/0x` or `.0x`, 8 hex digits or more, after a name.
        if (b[i] == b'/' || b[i] == b'.') && i > 0 && is_name_byte(b[i - 1]) && b[i + 1..].starts_with(b"0x") {
            let digits = hex_run(b, i + 3);
            if digits >= 8 && !b.get(i + 3 + digits).copied().is_some_and(is_name_byte) {
                out.push_str(&name[copied..i]);
                out.push('_');
                copied = i + 3 + digits;
                changed = true;
                i = copied;
                continue;
            }
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&name[copied..]);
    Some(out)
}

/// Letters, digits and `_`: the bytes an id must not be followed by.
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Number of hex digits from `at`.
fn hex_run(b: &[u8], at: usize) -> usize {
    b.get(at..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_hexdigit()).count())
}

/// Whether a marker starts at `i`: the index just past it, and whether its ids come with a
/// separator (`$$Lambda$75`) rather than straight after it (`GeneratedMethodAccessor31`).
fn marker_at(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let rest = &b[i..];
    if rest.starts_with(b"$$Lambda") {
        return Some((i + "$$Lambda".len(), true));
    }
    if rest.starts_with(b"LambdaForm$") {
        let kind = rest["LambdaForm$".len()..].iter().take_while(|c| c.is_ascii_uppercase()).count();
        return (kind > 0).then_some((i + "LambdaForm$".len() + kind, true));
    }
    for plain in ["GeneratedSerializationConstructorAccessor", "GeneratedConstructorAccessor", "GeneratedMethodAccessor", "$Proxy"] {
        if rest.starts_with(plain.as_bytes()) {
            return Some((i + plain.len(), false));
        }
    }
    None
}

/// Past every id from `at`: a `$`, `/`, `.` or `+`, then a decimal number or `0x` and hex
/// digits, not followed by a name's character.
fn skip_ids(b: &[u8], mut at: usize) -> usize {
    while let Some(&sep) = b.get(at) {
        if !matches!(sep, b'$' | b'/' | b'.' | b'+') {
            break;
        }
        let digits = if b[at + 1..].starts_with(b"0x") {
            let n = hex_run(b, at + 3);
            if n == 0 { 0 } else { n + 2 }
        } else {
            b[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count()
        };
        if digits == 0 || b.get(at + 1 + digits).copied().is_some_and(is_name_byte) {
            break;
        }
        at += 1 + digits;
    }
    at
}

/// Past a decimal number at `at` not followed by a name's character; `at` when there is none.
fn skip_number(b: &[u8], at: usize) -> usize {
    let digits = b.get(at..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    if digits == 0 || b.get(at + digits).copied().is_some_and(is_name_byte) { at } else { at + digits }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_classes_of_every_jdk_lose_their_numbers() {
        for (raw, want) in [
            // JDK 8: a number and the class's identity hash.
            ("com/mihoyo/data/abtest/service/ScheduleService$$Lambda$613/672746064.run", "com/mihoyo/data/abtest/service/ScheduleService$$Lambda_.run"),
            // JDK 9 to 20 as async-profiler writes them, and JDK 21 on (no number).
            ("App$$Lambda$75.0x00007ff44c0c4208.call", "App$$Lambda_.call"),
            ("App$$Lambda.0x00007ff32c0c6a50.run", "App$$Lambda_.run"),
            ("Lam$$Lambda/0x000001f8a1003c00.apply", "Lam$$Lambda_.apply"),
            // The JDK's JFR: `+` for the hidden class's `/`, then a hash.
            ("jdk.jfr.internal.PlatformRecorder$$Lambda$72+0x00007ffb60042338/1418334255.run", "jdk.jfr.internal.PlatformRecorder$$Lambda_.run"),
            ("Lam$$Lambda$88+0x00007f7940007c08/172032696.apply", "Lam$$Lambda_.apply"),
            // Method handles' forms, reflection's accessors and proxies.
            ("java.lang.invoke.LambdaForm$MH/0x0000000800c0a400.invoke", "java.lang.invoke.LambdaForm$MH_.invoke"),
            ("java.lang.invoke.LambdaForm$DMH/603742814.invokeStatic", "java.lang.invoke.LambdaForm$DMH_.invokeStatic"),
            ("jdk.internal.reflect.GeneratedMethodAccessor740.invoke", "jdk.internal.reflect.GeneratedMethodAccessor_.invoke"),
            ("sun/reflect/GeneratedSerializationConstructorAccessor12.newInstance", "sun/reflect/GeneratedSerializationConstructorAccessor_.newInstance"),
            ("jdk.proxy2.$Proxy12.handle", "jdk.proxy2.$Proxy_.handle"),
            // Another hidden class: its address.
            ("Foo$$InjectedInvoker/0x0000000801001800.invoke_MT", "Foo$$InjectedInvoker_.invoke_MT"),
            // In a signature, as JFR prints with its descriptors.
            ("void App$$Lambda$76.0x00007ff44c0c4640.run()", "void App$$Lambda_.run()"),
        ] {
            assert_eq!(normalized(raw).as_deref(), Some(want), "{raw}");
            assert_eq!(normalized(want), None, "{want} is changed once");
        }
    }

    #[test]
    fn other_names_are_left_alone() {
        for name in [
            "main",
            "runtime.mallocgc",
            "App.lambda$main$0",
            "App$$Lambda$75abc.run",
            "LambdaForm$.x",
            "GeneratedMethodAccessorImpl.invoke",
            "$Proxy",
            "memcpy+0x1a",
            "[unknown]",
            "0x00007f3a1b2c",
            "libc.so.6/0x1234.x",
            "github.com/acme/svc.(*Server).Handle",
            "std::vector<int>::push_back",
        ] {
            assert_eq!(normalized(name), None, "{name}");
        }
    }

    #[test]
    fn cut_names_do_not_read_past_their_end() {
        for name in ["x$$Lambda$", "x$$Lambda/0x", "x$$Lambda$7", "LambdaForm$MH/", "GeneratedMethodAccessor", "a/0x", "a.0x1"] {
            let _ = normalized(name);
        }
        assert_eq!(normalized("x$$Lambda$7").as_deref(), Some("x$$Lambda_"));
    }
}
