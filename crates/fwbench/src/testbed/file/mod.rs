//! A testbed described by a file: client, gateway and server on hosts reached through
//! any launcher (`ssh …`, `local`, `ip netns exec NS`), with the interfaces and
//! addresses the traffic uses there.
//!
//! ```toml
//! topology = "forward"                 # forward (default), direct, input
//! cache_dir = "~/.cache/fwbench"       # where remote hosts keep the fwbench binary
//! timeout = "30s"                      # how long reaching a host may take (default 30 s)
//!
//! [client]
//! launcher = ["ssh", "-i", "/root/.ssh/lab", "root@192.0.2.10"]
//! interface = "enp1s0"                 # egress toward the gateway
//! prefix = "198.18.1.0/16"             # client i sends from 198.18.1.i …
//! # addresses = ["198.18.1.1", "198.18.1.2"]   # … or exactly these
//! gateway_address = "198.18.0.1"       # the clients' next hop
//! manage_addresses = false             # true: fwbench adds the client addresses
//!
//! [gateway]
//! launcher = ["ssh", "root@192.0.2.11"]
//! interface = "enp1s0"                 # ingress for the test traffic
//!
//! [server]
//! launcher = "local"
//! address = "198.19.0.2"               # or ["198.19.0.2", "2001:2:0:2::2"]
//! ```
//!
//! Two-port tester mode: `move_interface = true` on [client] and [server] moves each
//! role's `interface` into a namespace of its own for the run ([`crate::testbed::ports`];
//! [server] then also takes `gateway_address` and `manage_addresses`). A gateway with
//! no agent is `gateway = "external"` instead of a [gateway] table (engine none only).
//!
//! Owns: parsing (every error a [`TestbedFileError`] naming `file:line:col` and the
//! field; unknown keys are refused) and [`FileTestbed`], the
//! [`Testbed`](crate::testbed::Testbed) of such a file. Must not: re-address a host's
//! interface unless `manage_addresses = true`, or build anything (the hosts exist
//! already).
//!
//! Its parts: [`raw`] (the syntax, as serde reads it), [`values`] (one value checked,
//! with the bounds on lengths), [`parse`] (tables and the checks across them),
//! [`spec`] (the parsed types), [`hosts`] (running things on the hosts), [`testbed`]
//! (the seam), [`error`].

pub mod error;
#[cfg(test)]
mod fixtures;
pub mod hosts;
pub mod parse;
pub mod raw;
pub mod spec;
pub mod testbed;
pub mod values;

pub use error::TestbedFileError;
pub use parse::parse;
pub use spec::{
    role_label, ClientAddrs, ClientHost, FileTestbed, HostSpec, RoleHostRef, ServerHost,
};

use crate::error::usage;
use anyhow::Result;
use std::path::Path;

/// Whether a `--testbed` value names a testbed file rather than a local testbed.
pub fn is_file(value: &str) -> bool {
    value.ends_with(".toml") || value.contains('/') || Path::new(value).is_file()
}

/// Most hosts one role may have in a testbed file (each runs an agent and holds an SSH
/// connection for the run).
pub const MAX_ROLE_HOSTS: usize = 64;

/// Read and parse a testbed file (bad input → a usage error, exit 2).
pub fn load(path: &Path) -> Result<FileTestbed> {
    let file = path.display().to_string();
    let text = crate::limits::read_user_file(path, "testbed file").map_err(usage)?;
    parse(&file, &text).map_err(|e| usage(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_or_name() {
        assert!(is_file("lab.toml"));
        assert!(is_file("./lab"));
        assert!(!is_file("fwbench"));
    }
}
