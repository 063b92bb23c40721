//! What this host is and does: its capabilities (`fwbench check`), its metadata
//! recorded with every run, the kernel counters sampled while traffic runs, and what
//! fwbench changed on it (crash markers, the journal of host settings, their directory).

pub mod check;
pub mod conncap;
pub mod conntrack;
pub mod info;
pub mod marker;
pub mod probe;
pub mod state;
