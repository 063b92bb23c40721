//! What this host is and does: its capabilities (`fwbench check`), its metadata
//! recorded with every run, and the kernel counters sampled while traffic runs.

pub mod check;
pub mod conncap;
pub mod conntrack;
pub mod info;
pub mod marker;
pub mod probe;
