//! Known answers for the testbed proof's plan and judgement.

use super::*;
use crate::advise::{advise, advise_nft};

fn filter(rules: &str) -> String {
    format!(
        "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n{rules}COMMIT\n"
    )
}

/// A blocklist of three documentation addresses and a /24, then udp 5000 accepted.
const BLOCKLIST: &str = "-A INPUT -s 203.0.113.1/32 -j DROP\n\
                         -A INPUT -s 203.0.113.2/32 -j DROP\n\
                         -A INPUT -s 203.0.113.3/32 -j DROP\n\
                         -A INPUT -s 198.51.100.0/24 -j DROP\n\
                         -A INPUT -p udp -m udp --dport 5000 -j ACCEPT\n";

fn plan_of(rules: &str, path: Path) -> Result<Plan, PlanError> {
    let a = advise("f", &filter(rules)).unwrap();
    plan(&a.rulesets, path, &["g0", "g1"])
}

/// Every address written in `text` (a token that reads as one or as a prefix).
fn addresses(text: &str) -> Vec<Net> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | ','))
        .filter_map(Net::parse)
        .collect()
}

#[test]
fn a_blocklist_is_sent_as_mapped_classes_with_the_models_answers() {
    let p = plan_of(BLOCKLIST, Path::Input).unwrap();
    assert_eq!(
        p.maps,
        [
            "IPv4 sources → 198.18.128.0/17",
            "IPv4 destinations → 198.19.128.0/17"
        ]
    );
    assert!(p.not_sent.is_empty(), "{:?}", p.not_sent);
    assert_eq!(p.rounds.len(), 1);
    let r = &p.rounds[0];
    assert_eq!(r.classes.len(), p.classes.len());
    // Each file only names addresses of the benchmark ranges.
    let bench = [Net::parse("198.18.0.0/15").unwrap()];
    for f in &r.files {
        for n in addresses(f) {
            assert!(
                bench[0].contains(false, n.range().0) && bench[0].contains(false, n.range().1),
                "{n} in {f}"
            );
        }
    }
    // The blocklisted source is dropped, the policy's udp 5000 packet delivered, the
    // default tcp packet dropped by the policy: in both rulesets.
    let class = |line: usize| p.classes.iter().find(|c| c.line == line).unwrap();
    assert_eq!(class(5).expect, [Expect::Dropped; 2]);
    assert_eq!(
        class(5).packet,
        "proto 17 203.0.113.1:1024 → 198.19.0.1:5000 in fwb-in out fwb-out"
    );
    let policy: Vec<&Class> = p.classes.iter().filter(|c| c.line == 0).collect();
    assert_eq!(policy.len(), 2);
    assert_eq!(policy[0].expect, [Expect::Delivered; 2], "udp 5000");
    assert_eq!(policy[1].expect, [Expect::Dropped; 2], "tcp 5000");
    // The sources are mapped in order, each blocklisted address its own class; the
    // probes' common destination one address.
    let src = |line: usize| class(line).src;
    assert!(
        src(5) < src(6) && src(6) < src(7),
        "{} {} {}",
        src(5),
        src(6),
        src(7)
    );
    assert!(p.classes.iter().all(|c| c.dst == p.classes[0].dst));
    // The observer: one counted rule per class, after every chain at the input hook.
    let obs = r.files[1].split("table inet advise-probes").nth(1).unwrap();
    assert!(obs.contains("type filter hook input priority 2000000000; policy accept;"));
    assert_eq!(obs.matches(" counter\n").count(), r.classes.len());
    let first = &p.classes[r.classes[0]];
    assert!(
        obs.contains(&format!(
            "meta l4proto 17 ip saddr {} ip daddr {} th sport 1024 th dport 5000 counter\n",
            first.src, first.dst
        )),
        "{obs}"
    );
    // The optimised file has the set (mapped), the original one rule per address.
    assert!(r.files[1].contains("ip saddr { "), "{}", r.files[1]);
    assert_eq!(
        r.files[0].matches("counter drop").count(),
        4,
        "{}",
        r.files[0]
    );
}

#[test]
fn the_forward_path_counts_at_the_forward_hook() {
    let p = plan_of(
        "-A FORWARD -s 203.0.113.1/32 -j DROP\n-A FORWARD -s 203.0.113.2/32 -j DROP\n\
         -A FORWARD -s 203.0.113.3/32 -j DROP\n-A INPUT -j ACCEPT\n",
        Path::Forward,
    )
    .unwrap();
    assert!(p.rounds[0].files[0].contains("type filter hook forward priority 2000000000"));
    // INPUT's accept-all is not on the forward path: the default packet meets
    // FORWARD's drop policy.
    let policy = p.classes.iter().find(|c| c.line == 0).unwrap();
    assert_eq!(policy.expect, [Expect::Dropped; 2]);
    // On the input path, INPUT accepts it.
    let p = plan_of(
        "-A INPUT -j ACCEPT\n-A INPUT -s 203.0.113.1/32 -j DROP\n",
        Path::Input,
    )
    .unwrap();
    assert_eq!(
        p.classes.iter().find(|c| c.line == 0).unwrap().expect,
        [Expect::Delivered; 2]
    );
}

/// Counters as the testbed would give them when every class meets the model's fate.
fn as_expected(p: &Plan) -> Vec<[Vec<u64>; 2]> {
    p.rounds
        .iter()
        .map(|r| {
            let one = |w: usize| {
                r.classes
                    .iter()
                    .map(|&k| u64::from(p.classes[k].expect[w] == Expect::Delivered) * 3)
                    .collect()
            };
            [one(0), one(1)]
        })
        .collect()
}

#[test]
fn the_judgement_names_the_rule_of_a_class_that_fares_differently() {
    let p = plan_of(BLOCKLIST, Path::Input).unwrap();
    let counts = as_expected(&p);
    let ok = judge(&p, &counts, 3).unwrap();
    // Delivered: udp 5000 from below every blocked prefix (the default source), from
    // between the /24 and .1, from above .3 (each gap of the map one class). Dropped:
    // .1, .2, .3, the /24, tcp 5000, udp 4999 and 5001, protocols 16 and 18.
    assert_eq!(
        (ok.classes, ok.delivered, ok.dropped, ok.either),
        (12, 3, 9, 0),
        "{ok:?}"
    );
    // The optimised ruleset lets 203.0.113.2 through: refused, naming its rule.
    let k = p.rounds[0]
        .classes
        .iter()
        .position(|&c| p.classes[c].line == 6)
        .unwrap();
    let mut bad = counts.clone();
    bad[0][1][k] = 2;
    let e = judge(&p, &bad, 3).unwrap_err().to_string();
    let c = &p.classes[p.rounds[0].classes[k]];
    assert_eq!(
        e,
        format!(
            "refused on the testbed: the probe of line 6 (`-A INPUT -s 203.0.113.2/32 -j DROP`), \
             proto 17 203.0.113.2:1024 → 198.19.0.1:5000 in fwb-in out fwb-out (sent as proto 17 \
             {}:1024 → {}:5000): the original ruleset dropped it (0 of 3 packets arrived), the \
             optimised delivered it (2 of 3); the model says dropped for both",
            c.src, c.dst
        )
    );
    // Both rulesets agree, but not with the model: refused too.
    let mut bad = counts;
    bad[0][0][k] = 1;
    bad[0][1][k] = 1;
    let e = judge(&p, &bad, 3).unwrap_err().to_string();
    assert!(e.contains("the original ruleset delivered it (1 of 3 packets arrived), the optimised delivered it (1 of 3); the model says dropped for both"), "{e}");
}

#[test]
fn rules_the_model_cannot_read_leave_the_class_to_the_two_rulesets() {
    // A LOG rule (non-terminal, read) and an nft ruleset with `ct state` (opaque).
    let a = advise_nft(
        "nft-advise.nft",
        &fixture("nft-advise.json"),
        &fixture("nft-advise.txt"),
    )
    .unwrap();
    let p = plan(&a.rulesets, Path::Input, &["g0"]).unwrap();
    // inet: an IPv4 and an IPv6 round.
    assert_eq!(
        p.rounds.iter().map(|r| r.v6).collect::<Vec<_>>(),
        [false, true]
    );
    // Every class may be accepted by the established,related rule: the model
    // cannot say; what the testbed shows must agree between the rulesets alone.
    assert!(p
        .classes
        .iter()
        .all(|c| c.expect == [Expect::Delivered; 2] || c.expect == [Expect::Either; 2]));
    assert!(p.rounds[0].files[0].contains("ct state established,related accept"));
    let counts = as_expected(&p);
    let ok = judge(&p, &counts, 3).unwrap();
    assert_eq!(ok.either, ok.classes - ok.delivered, "{ok:?}");
    let mut bad = counts;
    bad[0][1][0] = 3;
    bad[0][0][0] = 0;
    assert!(judge(&p, &bad, 3).is_err());
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn probes_the_testbed_cannot_send_are_named_with_why() {
    // A rule for interface eth1: its probe enters on eth1, the testbed's on g0.
    let p = plan_of(
        &(BLOCKLIST.to_owned() + "-A INPUT -i eth1 -p tcp -m tcp --dport 22 -j ACCEPT\n"),
        Path::Input,
    )
    .unwrap();
    assert_eq!(p.not_sent.len(), 1, "{:?}", p.not_sent);
    assert!(p.not_sent[0]
        .reason
        .starts_with("they match an interface (in eth1 out fwb-out)"));
    assert!(p.not_sent[0].probes >= 1);
    // A rule naming the testbed's own interface: refused.
    let e = plan_of("-A INPUT -i g0 -j ACCEPT\n", Path::Input).unwrap_err();
    assert!(matches!(e, PlanError::Untestable(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "line 5 (`-A INPUT -i g0 -j ACCEPT`) names interface g0, which the testbed's packets use"
    );
    // A ruleset the nft copy cannot give (a stateful match): refused with the line.
    let e = plan_of(
        "-A INPUT -m conntrack --ctstate NEW -j ACCEPT\n",
        Path::Input,
    )
    .unwrap_err();
    assert!(matches!(e, PlanError::Nft(_)), "{e:?}");
    let e = e.to_string();
    assert!(
        e.starts_with("line 5 (`-A INPUT -m conntrack --ctstate NEW -j ACCEPT`): stateful match"),
        "{e}"
    );
}
