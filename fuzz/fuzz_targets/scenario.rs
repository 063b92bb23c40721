#![no_main]
//! The scenario parser (crates/fwbench plan::scenario) on any text.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fwbench::fuzzing::scenario(data));
