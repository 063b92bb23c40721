#![no_main]
//! The control protocol's frame decoder (crates/proto codec) on any bytes.

#[path = "../checks/frame.rs"]
mod frame;

libfuzzer_sys::fuzz_target!(|data: &[u8]| frame::check(data));
