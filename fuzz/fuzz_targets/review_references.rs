//! libFuzzer's entry point for the `review_references` target; the body is `parley_fuzz::review_references`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parley_fuzz::review_references(data));
