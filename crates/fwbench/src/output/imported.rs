//! Text of an imported ruleset's verdicts: the rule that took the traffic, what the
//! ruleset dropped, and every rule that counted a packet (chain, position, text).

use firewall::install::Verdicts;
use std::fmt::Write as _;

/// Lines under `verdicts` in a trial's text (empty for generated models).
pub fn hits_text(v: &Verdicts) -> String {
    let mut out = String::new();
    if v.rules.is_empty() {
        return out;
    }
    match &v.took {
        Some(t) => {
            let _ = writeln!(out, "  took by      {t}");
        }
        None => out += "  took by      no rule with a final verdict counted a packet\n",
    }
    if let Some(d) = &v.dropped {
        let _ = writeln!(out, "  dropped      {} packets by {}", d.packets, d.by);
    }
    let hit: Vec<_> = v.rules.iter().filter(|r| r.packets > 0).collect();
    let _ = writeln!(
        out,
        "  rule hits    {} of {} imported rules counted packets:",
        hit.len(),
        v.rules.len()
    );
    for r in hit {
        let _ = writeln!(
            out,
            "    {:>10}  {}:{}  {}",
            r.packets, r.chain, r.index, r.text
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use firewall::install::{Dropped, RuleHit};

    #[test]
    fn names_the_rule_and_the_drops() {
        let hit = |index, packets, text: &str| RuleHit {
            chain: "INPUT".into(),
            index,
            text: text.into(),
            packets,
            policy: false,
        };
        let v = Verdicts {
            rules: vec![hit(1, 0, "-A INPUT -i lo -j ACCEPT"), hit(2, 70, "policy")],
            took: Some("INPUT:2 (policy): 70 packets".into()),
            dropped: Some(Dropped {
                packets: 70,
                by: "the policy of chain INPUT".into(),
            }),
            ..Verdicts::default()
        };
        assert_eq!(
            hits_text(&v),
            "  took by      INPUT:2 (policy): 70 packets\n  dropped      70 packets by the \
             policy of chain INPUT\n  rule hits    1 of 2 imported rules counted packets:\n\
             \x20           70  INPUT:2  policy\n"
        );
        assert_eq!(hits_text(&Verdicts::default()), "");
    }
}
