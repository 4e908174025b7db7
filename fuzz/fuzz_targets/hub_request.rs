//! libFuzzer's entry point for the `hub_request` target; the body is `parley_fuzz::hub_request`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parley_fuzz::hub_request(data));
