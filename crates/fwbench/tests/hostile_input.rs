//! Hostile input files end in bounded time and memory with exit 2 (issue 38, point
//! 5): an `iptables-save` file of 200 001 user chains (200 000 took 92.5 s before,
//! quadratic, with no chain limit). The launcher flood is `launcher_output.rs`'s, the
//! 20 MB label and the ESC in a label `limits.rs`'s.

mod util;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use util::*;

/// An `iptables-save` file with `n` user chains (one reached by a jump).
fn many_chains(n: usize) -> String {
    let mut s =
        String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for i in 0..n {
        s += &format!(":C{i} - [0:0]\n");
    }
    s + "-A FORWARD -j C0\nCOMMIT\n"
}

/// `rules advise --import` of 200 001 user chains (3.3 MB): refused at the chain over
/// the limit, naming file and line, within 60 s and 2 GB of address space (a debug
/// build takes ~8 s and ~100 MB here).
#[test]
fn two_hundred_thousand_chains_are_read_in_bounded_time_and_refused_past_the_limit() {
    let d = TempDir::new();
    let f = d.write("chains.rules", many_chains(200_001));
    let t0 = Instant::now();
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -v 2000000 && exec \"$0\" \"$@\"", bin()])
        .args(["rules", "advise", "--import"])
        .arg(&f)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fwbench");
    while child.try_wait().expect("wait").is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("200 001 chains were not refused within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "chains.rules:200002: more than 200000 chains; fwbench imports at most 200000"
        ),
        "{err}"
    );
}
