//! Harness of the privileged traffic tests (`rawsock.rs`, `xsk.rs`): two network
//! namespaces joined by a veth pair, created here with unique names and removed on drop
//! (also when the test panics), and threads that run inside one of them.
//!
//! Addresses come only from the benchmarking ranges 198.18.0.0/15 and 2001:2::/48.
#![allow(dead_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::thread::{self, JoinHandle};

#[path = "../../../fwbench/tests/util/tool.rs"]
mod tool;
pub use tool::run_ok;

/// Runs `ip ARGS`, panicking with its stderr on failure; its stdout.
pub fn ip(args: &[&str]) -> String {
    let out = run_ok(&[&["ip"], args].concat());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One end of the pair: its namespace's name, its veth and that veth's addresses.
pub struct End<'a> {
    pub dev: &'a str,
    pub addrs: &'a [&'a str],
}

/// Namespaces `a` and `b` joined by a veth pair; removed on drop.
pub struct Testbed {
    pub a: String,
    pub b: String,
}

impl Testbed {
    /// `fwbt-{kind}-{pid}-{tag}-a` and `…-b` joined by `a.dev` — `b.dev`, each end with
    /// `queues` TX and RX queues and its addresses (IPv6 ones without duplicate address
    /// detection), the ends and both loopbacks up.
    pub fn veth(kind: &str, tag: &str, queues: u32, a: End, b: End) -> Testbed {
        let pid = std::process::id();
        let bed = Testbed {
            a: format!("fwbt-{kind}-{pid}-{tag}-a"),
            b: format!("fwbt-{kind}-{pid}-{tag}-b"),
        };
        // The guard exists before the first namespace, so a failure below still cleans up.
        ip(&["netns", "add", &bed.a]);
        ip(&["netns", "add", &bed.b]);
        let q = queues.to_string();
        let queues = ["numtxqueues", &q, "numrxqueues", &q];
        let link = [&["link", "add", a.dev, "netns", &bed.a][..], &queues];
        let peer = [
            &["type", "veth", "peer", "name", b.dev, "netns", &bed.b][..],
            &queues,
        ];
        ip(&[&link.concat()[..], &peer.concat()].concat());
        for (ns, end) in [(&bed.a, &a), (&bed.b, &b)] {
            for addr in end.addrs {
                let nodad: &[&str] = if addr.contains(':') { &["nodad"] } else { &[] };
                ip(&[&["-n", ns, "addr", "add", addr, "dev", end.dev][..], nodad].concat());
            }
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            ip(&["-n", ns, "link", "set", end.dev, "up"]);
        }
        bed
    }

    /// The MAC of `dev` in namespace `ns`, from `ip -o link show` (sysfs shows the
    /// namespace that mounted it, not ours).
    pub fn mac(ns: &str, dev: &str) -> String {
        let text = ip(&["-n", ns, "-o", "link", "show", dev]);
        let mut words = text.split_whitespace();
        words
            .by_ref()
            .find(|w| *w == "link/ether")
            .unwrap_or_else(|| panic!("no link/ether in {text:?}"));
        words.next().expect("a MAC after link/ether").to_string()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // Deleting a namespace destroys its end of the veth, and with it the pair.
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Run `f` on a new thread that has joined network namespace `ns`. `setns` changes the
/// namespace of the calling thread only (threads it spawns inherit it), so the rest of
/// the test process is unaffected.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    let path = format!("/run/netns/{ns}");
    thread::spawn(move || {
        let file = File::open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
        // SAFETY: `file` is an open namespace file; CLONE_NEWNET checks that it is a
        // network namespace. Only this thread's namespace changes.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns({path}): {}", io::Error::last_os_error());
        f()
    })
}
