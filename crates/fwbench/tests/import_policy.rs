//! An imported DROP policy drops on every path, as on the host: after a `RETURN` in
//! the base chain, after a `goto` into a chain that returns, after a `jump` into one
//! that returns, and at the end of the chain — on iptables-legacy, iptables-nft and
//! nft (issue 37 §5: fwbench installed the policy as `policy accept` and a last
//! counted drop rule, which a `RETURN` skipped: 100 % received). Privileged
//! (namespaces); run with `--include-ignored` as root.

mod util;

use serde_json::Value;
use std::process::Command;
use util::*;

/// `iptables-save` files whose INPUT policy is DROP and whose UDP packets leave INPUT
/// by each path that ends in the policy.
const IPTABLES: [(&str, &str); 4] = [
    (
        "return",
        "*filter\n:INPUT DROP [0:0]\n-A INPUT -p udp -j RETURN\nCOMMIT\n",
    ),
    (
        "goto-return",
        "*filter\n:INPUT DROP [0:0]\n:svc - [0:0]\n-A INPUT -p udp -g svc\n\
         -A svc -p udp -j RETURN\nCOMMIT\n",
    ),
    (
        "jump-return",
        "*filter\n:INPUT DROP [0:0]\n:svc - [0:0]\n-A INPUT -p udp -j svc\n\
         -A svc -p udp -j RETURN\nCOMMIT\n",
    ),
    (
        "end-of-chain",
        "*filter\n:INPUT DROP [0:0]\n-A INPUT -p tcp -j ACCEPT\nCOMMIT\n",
    ),
];

/// nft files with a base chain of `policy drop` and the same paths.
const NFT: [(&str, &str); 4] = [
    (
        "return",
        "table inet t {\n chain input {\n  type filter hook input priority 0; policy drop;\n  \
         meta l4proto udp return\n }\n}\n",
    ),
    (
        "goto-return",
        "table inet t {\n chain input {\n  type filter hook input priority 0; policy drop;\n  \
         meta l4proto udp goto svc\n }\n chain svc {\n  meta l4proto udp return\n }\n}\n",
    ),
    (
        "jump-return",
        "table inet t {\n chain input {\n  type filter hook input priority 0; policy drop;\n  \
         meta l4proto udp jump svc\n }\n chain svc {\n  meta l4proto udp return\n }\n}\n",
    ),
    (
        "end-of-chain",
        "table inet t {\n chain input {\n  type filter hook input priority 0; policy drop;\n  \
         meta l4proto tcp accept\n }\n}\n",
    ),
];

/// A 1 s flood at 5 kpps into the gateway (topology input) with `file` imported.
fn flood(tb: &str, engine: &str, file: &str) -> Value {
    trial_value(
        "flood",
        tb,
        &[
            "-t", "1", "-r", "5kpps", "--dport", "5000", "--engine", engine, "--import", file,
        ],
    )
}

/// Every packet the flood sent was dropped, and counted as the policy's drop.
fn assert_policy_dropped_all(v: &Value, chain: &str, ctx: &str) {
    assert_eq!(v["status"], "dropped", "{ctx}: {v}");
    let r = &v["result"];
    let sent = u(&r["sent"]);
    assert!(sent > 1000, "{ctx}: {v}");
    assert_eq!(u(&r["received"]), 0, "{ctx}: {v}");
    // Every one counted as the policy's drop, and said so.
    let verdicts = &v["verdicts"];
    let counted = (
        u(&verdicts["policy_drops"]),
        u(&verdicts["dropped"]["packets"]),
        verdicts["dropped"]["by"].as_str().unwrap_or(""),
    );
    let want = format!("the policy of chain {chain}");
    assert_eq!(counted, (sent, sent, want.as_str()), "{ctx}: {verdicts}");
}

#[root_test(tb = "input")]
fn a_drop_policy_drops_after_return_goto_and_jump_on_every_engine() {
    let dir = TempDir::new();
    for (name, text) in IPTABLES {
        let file = dir.write(&format!("{name}.rules"), text);
        let file = file.to_str().unwrap();
        for engine in ["iptables-legacy", "iptables-nft"] {
            let v = flood(&tb.name, engine, file);
            assert_policy_dropped_all(&v, "INPUT", &format!("{name} on {engine}"));
        }
        // The same file as nft writes it (scripts/setup.sh installs the translator,
        // as for import_corpus).
        let o = Command::new("iptables-restore-translate")
            .args(["-f", file])
            .output()
            .unwrap_or_else(|e| panic!("iptables-restore-translate: {e}"));
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let nft = dir.write(&format!("{name}.translated.nft"), stdout(&o));
        let v = flood(&tb.name, "nft", nft.to_str().unwrap());
        assert_policy_dropped_all(&v, "INPUT", &format!("{name} translated, on nft"));
    }
    for (name, text) in NFT {
        let file = dir.write(&format!("{name}.nft"), text);
        let v = flood(&tb.name, "nft", file.to_str().unwrap());
        assert_policy_dropped_all(&v, "input", &format!("{name}.nft on nft"));
    }
}

/// A control character in an nft file is refused before anything runs — outside a
/// string (nft would refuse it too, echoing the raw byte to the terminal) and inside
/// one (nft would take it; `nft list ruleset` never writes one) — with its line and
/// column, exit 2, by `rules render` and by a trial alike.
#[root_test(tb = "input")]
fn control_characters_in_an_nft_file_are_refused_with_line_and_column() {
    let dir = TempDir::new();
    for (name, text, want) in [
        (
            "junk.nft",
            "table inet t {\n chain input {\n  udp dport 1 \u{1}accept\n }\n}\n",
            "junk.nft:3: control character U+0001 at column 15",
        ),
        (
            "escape.nft",
            "table inet t {\n chain input {\n  udp dport 1 accept comment \"\u{1b}[2J\"\n }\n}\n",
            "escape.nft:3: control character U+001B at column 31",
        ),
        (
            "crlf.nft",
            "table inet t {\r\n}\r\n",
            "crlf.nft:1: control character U+000D at column 15",
        ),
    ] {
        let file = dir.write(name, text);
        let o = fwbench(&cmd!("rules render --engine nft --import", &file));
        assert_refused(&o, want);
        let o = fwbench(&cmd!(
            "flood --testbed",
            &tb.name,
            "--no-store -t 1 --engine nft --import",
            &file
        ));
        assert_refused(&o, want);
    }
}
