#![no_main]
//! The iptables-save importer (crates/firewall import) on any text.

#[path = "../checks/iptables.rs"]
mod iptables;

libfuzzer_sys::fuzz_target!(|data: &[u8]| iptables::check(data));
