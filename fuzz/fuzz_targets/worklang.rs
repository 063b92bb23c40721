#![no_main]
//! The workload language (crates/fwbench worklang) on any text.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fwbench::fuzzing::worklang(data));
