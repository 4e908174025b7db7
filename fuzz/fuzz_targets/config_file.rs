//! libFuzzer's entry point for the `config_file` target; the body is `parley_fuzz::config_file`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parley_fuzz::config_file(data));
