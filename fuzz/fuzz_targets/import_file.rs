//! libFuzzer's entry point for the `import_file` target; the body is `parley_fuzz::import_file`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parley_fuzz::import_file(data));
