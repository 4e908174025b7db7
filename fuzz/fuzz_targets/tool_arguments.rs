//! libFuzzer's entry point for the `tool_arguments` target; the body is `parley_fuzz::tool_arguments`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parley_fuzz::tool_arguments(data));
