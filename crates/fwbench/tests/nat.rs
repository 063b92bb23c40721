//! NAT models (issue 26) through a real gateway: every netfilter engine translates,
//! the server sees the translated source (source NAT) or the forwarded flow (destination
//! NAT), the NAT rule counts one first packet per flow; a wrong translation fails the
//! trial; the flowtable model says when the kernel has no flowtables. Privileged
//! (namespaces); run with `--include-ignored` as root.

mod util;

use serde_json::Value;
use std::process::Command;
use util::*;

/// The addresses the server saw, with their packets, sorted.
fn sources(r: &Value) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = r["nat"]["sources"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| (s["addr"].as_str().unwrap().to_owned(), u(&s["packets"])))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[root_test(serial, tb = "forward")]
fn nat_trials_pass_traffic_and_the_server_sees_the_translated_addresses() {
    let mut cases: Vec<(&str, &str, &str)> = vec![];
    for &e in NETFILTER_ENGINES {
        cases.push((e, "snat", "4"));
        cases.push((e, "dnat", "4"));
    }
    cases.extend([
        ("nft", "masquerade", "4"),
        ("iptables-legacy", "masquerade", "4"),
        ("nft", "snat", "6"),
        ("iptables-nft", "dnat", "6"),
        ("ipset-legacy", "masquerade", "6"),
    ]);
    for (engine, model, family) in cases {
        let v = trial_json(
            "flood",
            &tb.name,
            &[
                "--engine",
                engine,
                "--model",
                model,
                "--rules",
                "5",
                "--position",
                "middle",
                "-A",
                family,
                "--flows",
                "3",
                "--sources",
                "2",
                "--rate",
                "20kpps",
            ],
        );
        let ctx = format!("{engine} {model} IPv{family}: {v}");
        assert_eq!(v["status"], "ok", "{ctx}");
        let r = &v["result"];
        let received = u(&r["received"]);
        assert!(received > 5_000, "{ctx}");
        // Every packet the server got came from the expected (translated) source.
        let want: Vec<&str> = match (model, family) {
            ("dnat", "4") => vec!["198.18.1.1", "198.18.1.2"],
            ("dnat", _) => vec!["2001:2:0:1::c:1", "2001:2:0:1::c:2"],
            (_, "4") => vec!["198.19.0.1"],
            _ => vec!["2001:2:0:2::1"],
        };
        let seen = sources(r);
        assert_eq!(
            seen.iter().map(|(a, _)| a.as_str()).collect::<Vec<_>>(),
            want,
            "{ctx}"
        );
        assert_eq!(seen.iter().map(|(_, n)| n).sum::<u64>(), received, "{ctx}");
        // The NAT rule sees a flow's first packet only: one per flow; fillers none.
        assert_eq!(u(&v["verdicts"]["matched_packets"]), 3, "{ctx}");
        assert_eq!(u(&v["verdicts"]["filler_packets"]), 0, "{ctx}");
        assert_eq!(v["verdicts"]["ok"], true, "{ctx}");
    }
    // Source NAT to a chosen address of the client network (`--nat-to`).
    let v = trial_json(
        "flood",
        &tb.name,
        &[
            "--engine",
            "iptables-legacy",
            "--model",
            "snat",
            "--nat-to",
            "198.18.0.100",
            "--flows",
            "2",
            "--rate",
            "20kpps",
        ],
    );
    assert_eq!(v["status"], "ok", "{v}");
    let seen = sources(&v["result"]);
    assert_eq!(seen.len(), 1, "{v}");
    assert_eq!(seen[0].0, "198.18.0.100", "{v}");
    assert_eq!(u(&v["verdicts"]["matched_packets"]), 2, "{v}");
}

/// A test-owned nft table in the gateway that source-NATs the flood to another
/// address before fwbench's rule can (an earlier srcnat priority): the server sees a
/// source the model did not ask for, and the trial says so and fails.
#[root_test(serial, tb = "forward")]
fn a_wrong_translation_fails_the_trial_naming_the_source() {
    let table = "table ip fwbt_nat {\n chain c { type nat hook postrouting priority srcnat - 10; \
                 policy accept;\n udp dport 9000 snat ip to 198.19.0.9\n }\n}\n";
    let t = NftTable::load(&tb.gw(), "ip", "fwbt_nat", table);
    let o = fwbench(&trial_args(
        "flood",
        &tb.name,
        &["--engine", "nft", "--model", "snat", "--rate", "10kpps"],
    ));
    drop(t);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    assert_eq!(v["status"], "failed", "{v}");
    let e = v["error"].as_str().unwrap_or_default();
    assert!(
        e.starts_with("model snat: the server saw source 198.19.0.9 (")
            && e.ends_with("(expected only 198.19.0.1)"),
        "{e}"
    );
}

/// Sessions of plain forwarding leave their connections in TIME_WAIT on the server
/// (198.18.1.1:PORT → 198.19.0.2:21000); a dnat trial after them on the same testbed
/// reaches the server with the same addresses and, its client ports reused, some of the
/// same ports. Its NAT rule still counts one new flow per session: the reused port's
/// SYN is accepted as new (no per-destination timestamp offset in fwbench's
/// namespaces), not answered with the old connection's ACK, reset by the client and
/// tried again as a second new flow (4 of 24 dnat session trials of `scenarios/nat.toml`
/// counted 537 flows for 500 sessions, and failed).
#[root_test(serial, tb = "forward")]
fn a_dnat_session_trial_after_plain_forwarding_counts_one_new_flow_per_session() {
    // Plain forwarding: 30 000 sessions use most of the client's port range.
    let plain = trial_json("sessions", &tb.name, &["--count", "30000", "-t", "120"]);
    assert_eq!(plain["status"], "ok", "{plain}");
    let srv = format!("fwb-{}-srv", tb.name);
    let o = Command::new("ip")
        .args(["netns", "exec", &srv, "ss", "-tanH", "state", "time-wait"])
        .output()
        .expect("ss");
    let tw = String::from_utf8_lossy(&o.stdout).lines().count();
    assert!(tw > 10_000, "the server holds {tw} TIME_WAIT connections");
    for _ in 0..2 {
        let v = trial_json(
            "sessions",
            &tb.name,
            &[
                "--engine", "nft", "--model", "dnat", "--count", "1000", "-t", "60",
            ],
        );
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(u(&v["verdicts"]["matched_packets"]), 1000, "{v}");
    }
}

/// Whether this kernel has flowtables, asked independently of fwbench: nft creates
/// one on `lo` in a scratch namespace.
fn kernel_has_flowtables() -> bool {
    succeeds_with_input(
        Command::new("unshare")
            .args(["--net", "--", "nft", "-f", "-"])
            .stderr(std::process::Stdio::null()),
        "table inet t {\n flowtable f { hook ingress priority 0; devices = { lo }; }\n}\n",
    )
}

#[root_test(serial, tb = "forward")]
fn flowtable_says_unavailable_where_the_kernel_has_none_and_carries_traffic_where_it_has() {
    let o = fwbench(&trial_args(
        "flood",
        &tb.name,
        &[
            "--engine",
            "nft",
            "--model",
            "flowtable",
            "--rules",
            "3",
            "--rate",
            "10kpps",
        ],
    ));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    if kernel_has_flowtables() {
        assert_eq!(v["status"], "ok", "{v}");
        assert!(u(&v["result"]["received"]) > 5_000, "{v}");
        assert_eq!(v["verdicts"]["ok"], true, "{v}");
    } else {
        assert_eq!(v["status"], "unavailable", "{v}");
        let e = v["error"].as_str().unwrap_or_default();
        assert!(e.contains("flowtable unavailable in this kernel"), "{e}");
        assert!(e.contains("NF_FLOW_TABLE"), "{e}");
    }
    // Nothing of fwbench's (or of the probe's) is left in the gateway.
    let left = nft_ruleset(&tb.gw());
    assert!(!left.contains("fwbench"), "{left}");
}

#[test]
fn nat_models_are_refused_by_name_where_they_cannot_run() {
    for engine in ["xdp", "xdp-map", "tc-bpf"] {
        let o = fwbench(&["rules", "render", "--engine", engine, "--model", "snat"]);
        assert_refused(&o, &format!("engine {engine} cannot express NAT chains"));
    }
    let o = fwbench(&[
        "rules",
        "render",
        "--engine",
        "iptables-nft",
        "--model",
        "flowtable",
    ]);
    assert_refused(&o, "engine iptables-nft cannot express a flowtable");
    let o = fwbench(&[
        "rules", "render", "--engine", "nft", "--model", "dnat", "--chain", "input",
    ]);
    assert_refused(&o, "model dnat needs topology forward");
}
