#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| flamesite_fuzz::packed(data));
