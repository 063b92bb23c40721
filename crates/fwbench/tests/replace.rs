//! Privileged: `replace` gateway events (the whole rule set replaced by itself plus K
//! drop rules) keep a verdict check that means something. A replacement restarts
//! every rule counter, and so does its undo: the check read the undone rule set's
//! fresh counters, saw every match rule idle and flagged every such trial "verdict
//! mismatch" (issue 37). Now it reads the last replacement's window, the events'
//! own rules apart; and the repeated replacements, which change nothing the marker
//! sees, say why they have no time to effect. Without root: ignored (skipped).

mod util;

use serde_json::Value;
use util::*;

/// A 2 s flow of 2 sources at 20 kpps through `engine` with 100 rules and `events`.
fn flow(tb: &str, engine: &str, events: &str) -> Value {
    let a = [
        &cmd!(
            "flow --testbed",
            tb,
            "--no-store --json -r 20kpps --flows 2 --sources 2 -t 2 --rules 100 --engine",
            engine
        )[..],
        &argv(events)[..],
    ];
    json_of(&a.concat())
}

/// The trial is `ok`, its verdict check holds and counted what it should: the
/// background took the match rule (in the counting window: the last replacement's,
/// from its commit to the end), no filler, no policy.
fn assert_verdicts_hold(v: &Value, ctx: &str) -> u64 {
    assert_eq!(v["status"], "ok", "{ctx}: {v}");
    let verdicts = &v["verdicts"];
    assert_eq!(verdicts["ok"], true, "{ctx}: {verdicts}");
    let matched = u(&verdicts["matched_packets"]);
    let received = u(&v["result"]["received"]);
    assert!(
        matched > received / 4 && matched <= received,
        "{ctx}: {matched} matched of {received} received: {verdicts}"
    );
    assert!(
        verdicts.get("filler_packets").is_none_or(|n| n == 0),
        "{ctx}: {verdicts}"
    );
    verdicts.get("event_packets").map_or(0, u)
}

#[root_test(tb = "forward")]
fn replacements_keep_a_meaningful_verdict_check_and_say_why_they_have_no_time_to_effect() {
    // A set engine's replacement collapses the events' rules into its fillers' set.
    let v = flow(&tb.name, "nft-set", "--event replace:2@800ms");
    assert!(assert_verdicts_hold(&v, "nft-set") > 0, "{}", v["verdicts"]);
    for engine in ["nft", "iptables-nft"] {
        // One replacement at 0.8 s: the marker's rule drops it to the end; its packets
        // are the events' in the verdicts.
        let v = flow(&tb.name, engine, "--event replace:2@800ms");
        let ctx = format!("{engine}, one replacement");
        assert!(
            assert_verdicts_hold(&v, &ctx) > 0,
            "{ctx}: {}",
            v["verdicts"]
        );
        let ups = v["result"]["events"]["updates"].as_array().unwrap();
        assert!(f(&ups[0]["time_to_effect_ms"]) >= 0.0, "{ctx}: {}", ups[0]);
        assert!(
            ups[0].get("no_time_to_effect").is_none(),
            "{ctx}: {}",
            ups[0]
        );
        // Three: the second takes the marker's rule out again (each replacement is the
        // installed rule set plus fresh rules); each says why it has no time to effect.
        let v = flow(
            &tb.name,
            engine,
            "--event replace:2@500ms --event-rate 4 --event-count 3",
        );
        let ctx = format!("{engine}, three replacements");
        assert_verdicts_hold(&v, &ctx);
        let ups = v["result"]["events"]["updates"].as_array().unwrap();
        assert_eq!(ups.len(), 3, "{ctx}");
        for (up, why) in ups.iter().zip([
            "update 1 of this event replaced the rule set again",
            "this replacement took update 0's rule for the marker out again",
            "the marker's rule went with update 1",
        ]) {
            assert!(up.get("time_to_effect_ms").is_none(), "{ctx}: {up}");
            let said = up["no_time_to_effect"].as_str().unwrap_or("");
            assert!(said.starts_with(why), "{ctx}: {up}");
            assert!(up.get("doubts").is_none(), "{ctx}: {up}");
        }
    }
}
