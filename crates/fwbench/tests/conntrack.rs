//! Conntrack workloads (issue 26) against the kernel's own counters: a full table's
//! admitted and dropped new flows, and the host-wide `nf_conntrack_max` restored
//! exactly — after the trial, and after a holder that was killed. Privileged
//! (namespaces, the host's conntrack settings); run with `--include-ignored` as root.
//!
//! `nf_conntrack_max` is global on this kernel: while a trial holds it at 5000 every
//! namespace of the host is limited to 5000 entries. The trials hold
//! `/run/fwbench/conntrack.lock` (so do other fwbench processes that change it) and
//! last a second.

mod util;

use std::process::Command;
use util::*;

const MAX: &str = "/proc/sys/net/netfilter/nf_conntrack_max";
const SAVED: &str = "/run/fwbench/conntrack-saved.json";
const LOCK: &str = "/run/fwbench/conntrack.lock";

fn host_max() -> u64 {
    std::fs::read_to_string(MAX)
        .expect("nf_conntrack_max")
        .trim()
        .parse()
        .unwrap()
}

/// The Done-when of issue 26: `nf_conntrack_max` = 5000 and 8000 offered new flows
/// through a stateful gateway (nft and iptables): admitted + dropped = offered, the
/// loss the traffic saw is the gateway's drop counter exactly, and the table holds
/// the admitted flows less those evicted early. The host's value comes back exactly.
#[root_test(
    serial,
    needs = "network namespaces and the host's conntrack settings",
    tb = "forward"
)]
fn a_full_table_drops_exactly_what_the_gateway_counts_and_the_max_comes_back() {
    for engine in ["nft", "iptables-nft"] {
        let before = host_max();
        let v = trial_json(
            "newflows",
            &tb.name,
            &[
                "-t", "2", "--flows", "8000", "--rate", "20kpps", "--ct-max", "5000", "--engine",
                engine, "--model", "stateful", "--rules", "10",
            ],
        );
        let r = &v["result"];
        let c = &r["conntrack"];
        let ctx = format!("{engine}: {c}");
        assert_eq!(v["status"], "ok", "{ctx}");
        assert_eq!(u(&c["offered"]), 8000, "{ctx}");
        assert_eq!(u(&c["max"]), 5000, "{ctx}");
        assert_eq!(c["scope"][0][1], "global", "{ctx}");
        // admitted + dropped = offered; what the traffic saw is what the sink counted.
        assert_eq!(u(&c["admitted"]) + u(&c["dropped"]), 8000, "{ctx}");
        assert_eq!(u(&c["admitted"]), u(&r["received"]), "{ctx}");
        assert_eq!(u(&c["dropped"]), u(&r["lost"]), "{ctx}");
        // ... and equals the gateway's statistics exactly: every lost flow was refused
        // by a full table (drop) or lost its insert race (insert_failed).
        assert_eq!(
            u(&c["dropped"]),
            u(&c["ct_drop"]) + u(&c["insert_failed"]),
            "{ctx}"
        );
        assert!(u(&c["ct_drop"]) > 0, "the table was full: {ctx}");
        assert_eq!(c["agree"], true, "{ctx}");
        // The table: at most the admitted flows less the unreplied ones evicted for
        // room — after a first drop the kernel's garbage collector may also evict
        // unreplied entries above 95 % of the maximum, uncounted (1 run in 5 here).
        assert_eq!(u(&c["entries_before"]), 0, "flushed at setup: {ctx}");
        assert!(
            u(&c["entries_after"]) + u(&c["early_drop"]) <= u(&c["admitted"]),
            "{ctx}"
        );
        assert!(u(&c["entries_after"]) <= 5000, "{ctx}");
        // The host's value is back, exactly, and nothing is left to restore.
        assert_eq!(host_max(), before, "{ctx}");
        assert!(!std::path::Path::new(SAVED).exists(), "{ctx}");
    }
}

/// A holder killed with the host's `nf_conntrack_max` changed (its saved values
/// written, as the gateway agent writes them before the change): the next cleanup
/// restores the value it saved, exactly.
#[root_test(needs = "the host's conntrack settings")]
fn a_killed_holders_max_is_restored_by_the_next_cleanup() {
    let _serial = serial();
    // A process that dies at once stands in for the killed holder.
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    // Under the lock, as a holder changes it: the value before is read there too (read
    // outside it, it could be another live holder's temporary value, which the cleanup
    // would then "restore" and leave behind).
    let script = format!(
        "b=$(cat {MAX}) && printf '{{\"pid\":{pid},\"start\":1,\"items\":[[\"{MAX}\",\"%s\"]]}}' \"$b\" > {SAVED} \
         && echo $((b + 1)) > {MAX} && echo \"$b\""
    );
    let o = Command::new("flock")
        .args([LOCK, "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before: u64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert_eq!(host_max(), before + 1);
    let o = fwbench(&["testbed", "cleanup-host"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(host_max(), before, "{out}");
    assert!(
        out.contains(&format!("restored {MAX} to {before}")),
        "{out}"
    );
    assert!(!std::path::Path::new(SAVED).exists());
}

/// Table fill: 50 000 idle entries put in the gateway's table before a flood through a
/// stateful rule set; the trial records them as the table's occupancy, and teardown
/// empties the table (the gateway namespace is fwbench's).
#[root_test(serial, tb = "forward")]
fn a_filled_table_is_the_trials_occupancy_and_is_emptied_after() {
    let v = trial_json(
        "flood",
        &tb.name,
        &[
            "--ct-fill",
            "50000",
            "--rate",
            "20kpps",
            "--engine",
            "nft",
            "--model",
            "stateful",
        ],
    );
    let c = &v["result"]["conntrack"];
    assert_eq!(v["status"], "ok", "{c}");
    assert_eq!(u(&c["filled"]), 50_000, "{c}");
    assert_eq!(u(&c["entries_before"]), 50_000, "{c}");
    // The flood's one flow is tracked among them: one new entry, offered and admitted
    // (flows, not packets), and the table's growth agrees.
    assert_eq!(u(&c["entries_after"]), 50_001, "{c}");
    assert_eq!((u(&c["offered"]), u(&c["admitted"])), (1, 1), "{c}");
    assert_eq!(c["entries_agree"], true, "{c}");
    assert_eq!(u(&v["result"]["lost"]), 0, "{c}");
    let ns = tb.gw();
    let count = in_ns(&ns, &["cat", "/proc/sys/net/netfilter/nf_conntrack_count"]);
    assert_eq!(count.trim(), "0", "the fill is flushed at teardown");
}

/// TCP new flows (issue 26 (a), the handshake path): each session is a new connection
/// through the stateful model, whose accept-new rule sees exactly its first packet (the
/// SYN) — established packets skip the fillers — for nft and iptables alike.
#[root_test(serial, tb = "forward")]
fn each_tcp_session_is_one_new_flow_through_the_stateful_model() {
    for engine in ["nft", "iptables-nft", "iptables-legacy"] {
        let v = trial_json(
            "sessions",
            &tb.name,
            &[
                "--engine", engine, "--model", "stateful", "--rules", "50", "-p", "2",
            ],
        );
        let r = &v["result"];
        let ctx = format!("{engine}: {}", v["verdicts"]);
        assert_eq!(v["status"], "ok", "{ctx}");
        let sessions = u(&r["sessions"]);
        assert!(sessions > 100, "{ctx}");
        assert_eq!(u(&r["failed"]), 0, "{ctx}");
        assert_eq!(u(&v["verdicts"]["matched_packets"]), sessions, "{ctx}");
        assert_eq!(u(&v["verdicts"]["filler_packets"]), 0, "{ctx}");
    }
}
