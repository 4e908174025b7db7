//! libFuzzer's entry point for the `git_diff` target; the body is `parley_fuzz::git_diff`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parley_fuzz::git_diff(data));
