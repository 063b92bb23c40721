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

/// First thing of a command that touches the host as root: restore what a killed
/// fwbench process left changed outside its namespaces (the host's conntrack
/// settings; a live holder's are left alone), remove its scratch directories and the
/// markers of network namespaces that are gone, as messages. Not root:
/// nothing to do.
pub fn at_start() -> Vec<String> {
    if crate::sys::euid() != 0 {
        return vec![];
    }
    // Made (0700) before anything else of fwbench's can make it with default modes.
    if let Err(e) = state::secure_dir(std::path::Path::new(state::DIR)) {
        return vec![e.to_string()];
    }
    let mut done = conntrack::recover();
    done.extend(state::remove_dead_scratch(&std::env::temp_dir()));
    done.extend(marker::forget_gone_namespaces());
    done
}
