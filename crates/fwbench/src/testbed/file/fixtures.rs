//! Testbed files the unit tests of this module share: three hosts ([`GOOD`]) and
//! two hosts in the client and server roles ([`SPREAD`]).

use super::{parse, FileTestbed};

pub const GOOD: &str = r#"
topology = "forward"
cache_dir = "/tmp/fwb-cache"

[client]
launcher = ["ssh", "-i", "/k", "root@198.19.254.2"]
interface = "c0"
prefix = ["198.18.1.0/16", "2001:2:0:1::c:0/64"]
gateway_address = ["198.18.0.1", "2001:2:0:1::1"]

[gateway]
launcher = ["ip", "netns", "exec", "gw"]
interface = "g0"

[server]
launcher = "local"
address = "198.19.0.2"
"#;

/// Two generator hosts, each on its own gateway port, and two sink hosts.
pub const SPREAD: &str = r#"
cache_dir = "/tmp/fwb-cache"

[[client]]
launcher = ["ssh", "root@198.19.254.2"]
interface = "c0"
prefix = "198.18.1.0/24"
gateway_address = "198.18.0.1"
manage_addresses = true

[[client]]
launcher = ["ssh", "root@198.19.254.18"]
interface = "c0"
prefix = "198.18.200.10/24"
gateway_address = "198.18.200.1"
gateway_interface = "g2"

[gateway]
launcher = ["ssh", "root@198.19.254.6"]
interface = "g0"

[[server]]
launcher = ["ssh", "root@198.19.254.10"]
address = "198.19.0.2"

[[server]]
launcher = ["ssh", "root@198.19.254.22"]
address = "198.19.0.3"
"#;

/// A file's text parsed (it must parse).
pub fn parsed(file: &str, text: &str) -> FileTestbed {
    parse(file, text).unwrap_or_else(|e| panic!("{e}"))
}

/// The message of the error parsing `text` as `tb.toml` (it must fail).
pub fn err(text: &str) -> String {
    parse("tb.toml", text).expect_err("an error").to_string()
}
