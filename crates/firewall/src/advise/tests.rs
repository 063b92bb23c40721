//! Known answers for each rewrite, the traps, and the proof refusing a wrong rewrite.

use super::*;

fn filter(rules: &str) -> String {
    format!(
        "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n{rules}COMMIT\n"
    )
}

/// The advice on `filter(rules)` (must succeed).
fn advised(rules: &str) -> Advice {
    advise("f", &filter(rules)).unwrap()
}

/// A drop of each of 203.0.113.`hosts`.
fn drops(hosts: &[u8]) -> String {
    hosts
        .iter()
        .map(|h| format!("-A INPUT -s 203.0.113.{h}/32 -j DROP\n"))
        .collect()
}

fn rules_of(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("-A ")).collect()
}

#[test]
fn a_blocklist_becomes_one_set_and_service_ports_one_multiport_rule() {
    let a = advised(
        &(drops(&[1, 2, 3])
            + "-A INPUT -s 198.51.100.0/24 -j DROP\n\
             -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
             -A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n\
             -A INPUT -p tcp -m tcp --dport 443 -j ACCEPT\n"),
    );
    assert_eq!(
        rules_of(&a.text),
        [
            "-A INPUT -m set --match-set fwbench-advise-1 src -j DROP",
            "-A INPUT -p tcp -m multiport --dports 22,80,443 -j ACCEPT",
        ]
    );
    assert_eq!(
        a.ipset,
        "create fwbench-advise-1 hash:net family inet maxelem 65536\n\
         add fwbench-advise-1 203.0.113.1/32\nadd fwbench-advise-1 203.0.113.2/32\n\
         add fwbench-advise-1 203.0.113.3/32\nadd fwbench-advise-1 198.51.100.0/24\n"
    );
    assert_eq!((a.rules_before, a.rules_after), (7, 2));
    assert_eq!(a.changes.len(), 2);
    assert_eq!(a.changes[0].kind, ChangeKind::Merged);
    assert_eq!(a.changes[0].lines, [5, 6, 7, 8]);
    assert!(
        a.changes[0].reason.starts_with(
            "4 rules differing only in source address with the same verdict (DROP) became \
             one rule matching the ipset fwbench-advise-1 (4 entries)"
        ),
        "{}",
        a.changes[0].reason
    );
    assert!(a.probes > 7 * 3, "{}", a.probes);
    // The output is iptables-save text again: it reads back (the set match is then an
    // opaque rule of the model).
    iptables::parse("out", &a.text).unwrap();
}

#[test]
fn a_shadowing_accept_before_a_drop_run_stops_the_merge() {
    // Every drop after the /24 accept never matches: removed, not merged into a set
    // that would be consulted before the accept.
    let a = advised(&("-A INPUT -s 203.0.113.0/24 -j ACCEPT\n".to_owned() + &drops(&[1, 2, 3])));
    assert_eq!(rules_of(&a.text), ["-A INPUT -s 203.0.113.0/24 -j ACCEPT"]);
    assert!(a.changes.iter().all(|c| c.kind == ChangeKind::Shadowed));
    assert_eq!(a.changes.len(), 3);
    assert!(a.changes[0]
        .reason
        .starts_with("never matches: line 5 (`-A INPUT -s 203.0.113.0/24 -j ACCEPT`)"));
}

#[test]
fn a_rule_between_two_runs_is_crossed_only_when_it_commutes() {
    let run = |between: &str| {
        filter(&format!(
            "{}{between}\n{}",
            drops(&[1, 2, 3]),
            drops(&[4, 5, 6])
        ))
    };
    // Overlapping (tcp from 203.0.113.0/28 is accepted) with another verdict: two sets.
    let a = advise("f", &run("-A INPUT -s 203.0.113.0/28 -p tcp -j ACCEPT")).unwrap();
    assert_eq!(
        rules_of(&a.text),
        [
            "-A INPUT -m set --match-set fwbench-advise-1 src -j DROP",
            "-A INPUT -s 203.0.113.0/28 -p tcp -j ACCEPT",
            "-A INPUT -m set --match-set fwbench-advise-2 src -j DROP",
        ]
    );
    // No packet in common: the later run moves up across it, one set.
    let a = advise("f", &run("-A INPUT -s 198.51.100.0/24 -p tcp -j ACCEPT")).unwrap();
    assert_eq!(
        rules_of(&a.text),
        [
            "-A INPUT -m set --match-set fwbench-advise-1 src -j DROP",
            "-A INPUT -s 198.51.100.0/24 -p tcp -j ACCEPT",
        ]
    );
    assert!(a.changes[0]
        .reason
        .ends_with("later members moved up across 1 rule(s) they commute with"));
}

#[test]
fn logging_and_counting_rules_are_kept_and_not_crossed() {
    let a = advised(
        &(drops(&[1, 2, 3])
            + "-A INPUT -s 203.0.113.4/32 -j LOG --log-prefix \"bl: \"\n\
             -A INPUT -s 203.0.113.4/32\n\
             -A INPUT -s 203.0.113.4/32 -j DROP\n\
             -A INPUT -s 203.0.113.5/32 -j DROP\n\
             -A INPUT -s 203.0.113.6/32 -j DROP\n\
             -A INPUT -s 203.0.113.1/32 -j LOG --log-prefix \"never: \"\n"),
    );
    let r = rules_of(&a.text);
    // The drops of .5 and .6 have no packet in common with the log and counter rules
    // of .4: they join the first set. The drop of .4 may not cross them.
    assert_eq!(
        r[0],
        "-A INPUT -m set --match-set fwbench-advise-1 src -j DROP"
    );
    assert!(a
        .ipset
        .ends_with("add fwbench-advise-1 203.0.113.5/32\nadd fwbench-advise-1 203.0.113.6/32\n"));
    assert_eq!(
        r[1],
        "-A INPUT -s 203.0.113.4/32 -j LOG --log-prefix \"bl: \""
    );
    assert_eq!(r[2], "-A INPUT -s 203.0.113.4/32");
    assert_eq!(r[3], "-A INPUT -s 203.0.113.4/32 -j DROP");
    // A log rule no packet reaches is still the user's: kept.
    assert_eq!(
        r[4],
        "-A INPUT -s 203.0.113.1/32 -j LOG --log-prefix \"never: \""
    );
    assert_eq!(r.len(), 5);
}

#[test]
fn duplicates_and_shadowed_rules_are_named_with_their_lines() {
    let a = advised(
        "-A INPUT -p udp -m udp --dport 53 -j ACCEPT\n\
             -A INPUT -p udp -m udp --dport 53 -j ACCEPT\n\
             -A INPUT -p udp -m udp --dport 1:1024 -j DROP\n\
             -A INPUT -s 198.18.0.0/15 -p udp -m udp --dport 80 -j ACCEPT\n",
    );
    assert_eq!(a.changes[0].kind, ChangeKind::Duplicate);
    assert_eq!(a.changes[0].lines, [6]);
    assert!(a.changes[0].reason.starts_with("duplicate of line 5"));
    assert_eq!(a.changes[1].kind, ChangeKind::Shadowed);
    assert_eq!(a.changes[1].lines, [8]);
    assert_eq!(a.rules_after, 2);
}

#[test]
fn rules_it_cannot_read_stay_in_place_and_are_named() {
    let text = filter(
        "-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n\
         -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
         -A INPUT -m recent --name x --set\n\
         -A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n",
    );
    let a = advise("f", &text).unwrap();
    assert!(a.changes.is_empty(), "{:?}", a.changes);
    assert_eq!(a.text, "", "no safe rewrite: nothing is written");
    assert_eq!(
        a.kept,
        [
            (5, "stateful match `-m conntrack`".to_owned()),
            (7, "stateful match `-m recent`".to_owned())
        ]
    );
}

#[test]
fn hot_rules_move_earlier_only_across_rules_they_commute_with() {
    let a = advised(
        "[5:300] -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
             [0:0] -A INPUT -s 203.0.113.9/32 -p udp -j DROP\n\
             [900:54000] -A INPUT -p udp -m udp --dport 53 -j ACCEPT\n\
             [7000:420000] -A INPUT -p tcp -m tcp --dport 443 -j ACCEPT\n",
    );
    // 443 (tcp, accept) commutes with everything before it: first. 53 (udp accept)
    // overlaps the udp drop from 203.0.113.9: it stays behind it.
    assert_eq!(
        rules_of(&a.text),
        [
            "-A INPUT -p tcp -m multiport --dports 22,443 -j ACCEPT",
            "-A INPUT -s 203.0.113.9/32 -p udp -j DROP",
            "-A INPUT -p udp -m udp --dport 53 -j ACCEPT",
        ]
    );
}

#[test]
fn the_proof_refuses_a_rewrite_that_changes_a_fate() {
    let text = filter(
        "-A INPUT -s 203.0.113.0/24 -j ACCEPT\n\
         -A INPUT -s 203.0.113.7/32 -j DROP\n\
         -A INPUT -j LOG\n",
    );
    let (t, v6) = iptables::parse("f", &text).unwrap();
    // 2 policy probes, 5 for the /24 (inside, both ends, just outside each), 3 for .7.
    assert_eq!(check(&t, &t, v6).unwrap(), 10);
    // Swapping the overlapping accept and drop: 203.0.113.7 would be dropped.
    let mut wrong = t.clone();
    wrong[0].chains[0].rules.swap(0, 1);
    let e = check(&t, &wrong, v6).unwrap_err().to_string();
    assert_eq!(
        e,
        "refused: the rewrite would change the fate of proto 17 203.0.113.7:1024 → \
         198.19.0.1:5000 in fwb-in out fwb-out in chain filter INPUT (probe of line 6: \
         `-A INPUT -s 203.0.113.7/32 -j DROP`): ACCEPT before, DROP after"
    );
    // Dropping the log rule: a fate includes the log and counter rules passed.
    let mut wrong = t.clone();
    wrong[0].chains[0].rules.pop();
    assert!(check(&t, &wrong, v6)
        .unwrap_err()
        .to_string()
        .contains("after -A INPUT -j LOG"));
}

#[test]
fn ipv6_blocklists_and_refusals() {
    let a = advised(
        "-A INPUT -s 2001:db8::1/128 -j DROP\n\
             -A INPUT -s 2001:db8::2/128 -j DROP\n\
             -A INPUT -s 2001:db8::3/128 -j DROP\n",
    );
    assert!(a
        .ipset
        .starts_with("create fwbench-advise-1 hash:net family inet6"));
    let e = advise("f", "table inet x {\n}\n").unwrap_err();
    assert!(matches!(e, AdviseError::Unsupported(_)), "{e}");
    let e = advise("f", &filter("-A INPUT -s 198.19.0.1\0 -j DROP\n")).unwrap_err();
    assert!(
        e.to_string().starts_with("f:5: control character U+0000"),
        "{e}"
    );
}

#[test]
fn both_rulesets_as_nft() {
    let a = advised(
        "-A INPUT -s 203.0.113.1/32 -j DROP\n\
             -A INPUT -s 203.0.113.2/32 -j DROP\n\
             -A INPUT -s 198.51.100.0/24 -j DROP\n\
             -A INPUT -p udp -m udp --dport 5000:5010 -j ACCEPT\n\
             -A INPUT -j LOG --log-prefix \"in: \"\n",
    );
    let (before, after) = a.as_nft.unwrap();
    assert_eq!(
        after,
        "table ip advise-filter {\n\
         \tchain INPUT {\n\
         \t\ttype filter hook input priority filter; policy accept;\n\
         \t\tip saddr { 203.0.113.1, 203.0.113.2, 198.51.100.0/24 } counter drop\n\
         \t\tmeta l4proto 17 udp dport 5000-5010 counter accept\n\
         \t\tcounter log prefix \"in: \"\n\
         \t}\n\
         \tchain FORWARD {\n\
         \t\ttype filter hook forward priority filter; policy drop;\n\
         \t}\n\
         \tchain OUTPUT {\n\
         \t\ttype filter hook output priority filter; policy accept;\n\
         \t}\n\
         }\n"
    );
    assert!(
        before.contains("\t\tip saddr 203.0.113.2 counter drop\n"),
        "{before}"
    );
    let a = advised("-A INPUT -m conntrack --ctstate NEW -j ACCEPT\n");
    assert_eq!(
        a.as_nft.unwrap_err().to_string(),
        "line 5 (`-A INPUT -m conntrack --ctstate NEW -j ACCEPT`): stateful match \
         `-m conntrack`; nft output needs every rule understood"
    );
}

#[test]
fn an_option_without_a_value_keeps_the_rules_target() {
    let (t, _) = iptables::parse("f", &filter("-A INPUT -p tcp --syn -j DROP\n")).unwrap();
    let r = &t[0].chains[0].rules[0];
    assert_eq!(r.target, model::Target::Verdict("DROP".into()));
    assert_eq!(
        r.opaque.as_deref(),
        Some("option `--syn` the analysis does not model")
    );
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// The advice on nft's read-back of a fixture (`NAME.json`, `NAME.txt`), the file
/// called `source`.
fn advised_nft(name: &str, source: &str) -> Advice {
    let json = fixture(&format!("{name}.json"));
    advise_nft(source, &json, &fixture(&format!("{name}.txt"))).unwrap()
}

#[test]
fn an_nft_ruleset_is_rewritten_with_anonymous_sets() {
    // nft's own read-back of nft-advise.nft (`nft -j list ruleset`, `nft -a list ruleset`).
    let a = advised_nft("nft-advise", "nft-advise.nft");
    assert_eq!(a.format, ImportFormat::Nft);
    assert_eq!((a.rules_before, a.rules_after), (11, 5));
    assert_eq!(
        a.text,
        "table inet host {\n\
         \tchain input {\n\
         \t\ttype filter hook input priority filter; policy drop;\n\
         \t\tct state established,related accept\n\
         \t\tip saddr { 203.0.113.1, 203.0.113.2, 203.0.113.3, 198.51.100.0/24 } counter drop\n\
         \t\tmeta l4proto 6 tcp dport { 22, 80, 443 } counter accept\n\
         \t\tudp dport 5000 accept\n\
         \t\tlog prefix \"in: \" drop\n\
         \t}\n\
         }\n"
    );
    assert_eq!(a.changes[0].kind, ChangeKind::Duplicate);
    assert!(
        a.changes[0].reason.starts_with("duplicate of handle 9"),
        "{:?}",
        a.changes[0]
    );
    // The log before the drop is kept as it is: nothing rebuilds it.
    assert_eq!(
        a.kept,
        [
            (2, "stateful match `ct`".to_owned()),
            (
                12,
                "`log` with a verdict: kept as it is (a merge or move would lose it)".to_owned()
            )
        ]
    );
    // The original, handles dropped, for measuring with the same engine.
    let (orig, _) = a.as_nft.unwrap();
    assert!(
        orig.contains("\t\tip saddr 203.0.113.3 counter packets 0 bytes 0 drop\n"),
        "{orig}"
    );
    assert!(!orig.contains("handle"), "{orig}");
}

#[test]
fn an_inet_table_of_ipv4_rules_gets_a_note_not_a_rewrite() {
    // nft's read-back of an inet table whose rules all name IPv4 addresses.
    let a = advised_nft("nft-advise-v4only", "v4only.nft");
    assert_eq!(a.notes.len(), 1, "{:?}", a.notes);
    assert!(a.notes[0].starts_with("table inet t: no rule names an IPv6 address"));
    assert!(
        a.text.contains("table inet t {"),
        "the family is not changed: {}",
        a.text
    );
    // The proof ran for IPv6 probes too (an inet table sees both).
    let b = advised_nft("nft-advise", "nft-advise.nft");
    assert!(b.notes.is_empty(), "a ct rule may match anything: no note");
}

/// The INPUT chain of `rules` (iptables-save lines) rewritten for nft output, each
/// rule as nft text, the changes, and the proof's answer on the two rulesets.
fn as_nft(
    rules: &str,
) -> (
    Vec<String>,
    Vec<Change>,
    Result<usize, AdviseError>,
    Vec<Table>,
) {
    let (tables, v6) = iptables::parse("f", &filter(rules)).unwrap();
    let mut changes = vec![];
    let mut next = 1;
    let after: Vec<Table> = tables
        .iter()
        .map(|t| rewrite::rewrite(t, &mut next, &mut changes, true).0)
        .collect();
    let proof = check(&tables, &after, v6);
    let input = after[0].chain("INPUT").unwrap();
    let text = input
        .rules
        .iter()
        .map(|r| nft::rule(r, v6).unwrap())
        .collect();
    (text, changes, proof, tables)
}

#[test]
fn a_run_with_different_verdicts_becomes_one_verdict_map() {
    let (text, changes, proof, _) = as_nft(
        "-A INPUT -s 203.0.113.1/32 -j DROP\n\
         -A INPUT -s 203.0.113.2/32 -j ACCEPT\n\
         -A INPUT -s 198.51.100.0/24 -j RETURN\n\
         -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
         -A INPUT -p tcp -m tcp --dport 23 -j DROP\n\
         -A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n",
    );
    assert!(proof.is_ok(), "{proof:?}");
    assert_eq!(
        text,
        [
            "counter ip saddr vmap { 203.0.113.1 : drop, 203.0.113.2 : accept, \
             198.51.100.0/24 : return }",
            "meta l4proto 6 counter tcp dport vmap { 22 : accept, 80 : accept, 23 : drop }",
        ]
    );
    let kinds: Vec<ChangeKind> = changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            ChangeKind::Merged,
            ChangeKind::VerdictMap,
            ChangeKind::VerdictMap
        ]
    );
    assert_eq!(changes[1].lines, [5, 6, 7]);
    assert!(changes[1]
        .reason
        .starts_with("3 rules differing only in source address with different verdicts"));
    // iptables output has no verdict map: the same input advised as iptables-save.
    let a = advised(
        "-A INPUT -s 203.0.113.1/32 -j DROP\n\
             -A INPUT -s 203.0.113.2/32 -j ACCEPT\n",
    );
    assert!(a.changes.is_empty(), "{:?}", a.changes);
}

#[test]
fn a_rule_between_members_with_an_overlapping_match_stops_the_verdict_map() {
    let run = |between: &str| {
        as_nft(&format!(
            "-A INPUT -s 203.0.113.1/32 -j DROP\n\
             -A INPUT -s 203.0.113.2/32 -j ACCEPT\n\
             {between}\n\
             -A INPUT -s 203.0.113.3/32 -j ACCEPT\n\
             -A INPUT -s 192.0.2.7/32 -j DROP\n"
        ))
    };
    // tcp from 203.0.113.0/28 (so from .3) is dropped first: .3 stays after it.
    let (text, changes, proof, _) = run("-A INPUT -s 203.0.113.0/28 -p tcp -j DROP");
    assert!(proof.is_ok(), "{proof:?}");
    assert_eq!(
        text,
        [
            "counter ip saddr vmap { 203.0.113.1 : drop, 203.0.113.2 : accept, \
             192.0.2.7 : drop }",
            "meta l4proto 6 ip saddr 203.0.113.0/28 counter drop",
            "ip saddr 203.0.113.3 counter accept",
        ]
    );
    // Each rule goes into one map only (.3 alone is no run).
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].lines, [5, 6, 9]);
    // No packet in common: .3 moves up across it into the map.
    let (text, changes, proof, _) = run("-A INPUT -s 198.51.100.0/24 -p tcp -j DROP");
    assert!(proof.is_ok(), "{proof:?}");
    assert_eq!(
        text,
        [
            "counter ip saddr vmap { 203.0.113.1 : drop, 203.0.113.2 : accept, \
             203.0.113.3 : accept, 192.0.2.7 : drop }",
            "meta l4proto 6 ip saddr 198.51.100.0/24 counter drop",
        ]
    );
    assert!(changes[0]
        .reason
        .ends_with("later members moved up across 1 rule(s) they commute with"));
}

#[test]
fn overlapping_members_reject_and_logging_stay_out_of_verdict_maps() {
    for rules in [
        // The /32 accept must win over the /24 drop: the keys overlap, no map.
        "-A INPUT -s 203.0.113.1/32 -j ACCEPT\n\
         -A INPUT -s 203.0.113.0/24 -j DROP\n",
        // REJECT is no vmap verdict; a LOG rule is kept and not crossed.
        "-A INPUT -s 203.0.113.1/32 -j REJECT\n\
         -A INPUT -s 203.0.113.2/32 -j ACCEPT\n\
         -A INPUT -s 203.0.113.0/24 -j LOG\n\
         -A INPUT -s 203.0.113.3/32 -j DROP\n",
    ] {
        let (text, changes, _, _) = as_nft(rules);
        assert!(changes.is_empty(), "{rules}: {changes:?}");
        assert_eq!(text.len(), rules.lines().count(), "{rules}: {text:?}");
    }
}

#[test]
fn the_proof_reads_verdict_maps() {
    // The map as built agrees with the original; one entry's verdict changed does not.
    let (_, _, proof, before) = as_nft(
        "-A INPUT -s 203.0.113.1/32 -j DROP\n\
         -A INPUT -s 203.0.113.2/32 -j ACCEPT\n",
    );
    assert!(proof.is_ok(), "{proof:?}");
    let mut after = before.clone();
    let (t, _) = rewrite::rewrite(&before[0], &mut 1, &mut vec![], true);
    after[0] = t;
    let rule = &mut after[0].chains[0].rules[0];
    let model::Target::Map(_, entries) = &mut rule.target else {
        panic!("no map: {rule:?}");
    };
    entries[1].1 = model::Target::Verdict("DROP".into());
    let e = check(&before, &after, false).unwrap_err();
    assert!(e.to_string().ends_with("ACCEPT before, DROP after"), "{e}");
}

#[test]
fn named_sets_are_read_kept_and_hot_nft_rules_move_by_their_counters() {
    // nft's read-back of nft-named-sets.nft: @blocked (a /28 and an address) and
    // @ports as the file gives them, @banned dynamic (timeout); counters on most rules.
    let a = advised_nft("nft-named-sets", "nft-named-sets.nft");
    assert_eq!((a.rules_before, a.rules_after), (9, 8));
    assert_eq!(
        a.text,
        "table inet host {\n\
         \tset blocked {\n\
         \t\ttype ipv4_addr\n\
         \t\tflags interval\n\
         \t\telements = { 198.51.100.7, 203.0.113.0/28 }\n\
         \t}\n\
         \n\
         \tset banned {\n\
         \t\ttype ipv4_addr\n\
         \t\tflags dynamic,timeout\n\
         \t\ttimeout 1h\n\
         \t}\n\
         \n\
         \tset ports {\n\
         \t\ttype inet_service\n\
         \t\telements = { 22, 443 }\n\
         \t}\n\
         \n\
         \tchain input {\n\
         \t\ttype filter hook input priority filter; policy drop;\n\
         \t\tip saddr @blocked counter packets 10 bytes 600 drop\n\
         \t\tip saddr 198.51.100.9 counter packets 0 bytes 0 drop\n\
         \t\tip saddr @banned drop\n\
         \t\ttcp dport 8443 accept\n\
         \t\tudp dport 5000 counter packets 900 bytes 54000 accept\n\
         \t\ttcp dport @ports counter packets 5 bytes 300 accept\n\
         \t\tip saddr 192.0.2.1 tcp dport 8080 counter packets 1 bytes 60 drop\n\
         \t\tip saddr 192.0.2.2 counter packets 0 bytes 0 drop\n\
         \t}\n\
         }\n"
    );
    // 203.0.113.5 lies in @blocked's /28: shadowed, and the reason says it rests on
    // the set's elements. 198.51.100.9 is not in it: kept, not merged into the set.
    assert_eq!(a.changes[0].kind, ChangeKind::Shadowed);
    assert_eq!(a.changes[0].lines, [6]);
    assert!(
        a.changes[0].reason.contains(
            "takes every packet it would (with the elements the file gives @blocked: a \
             change to them at runtime is not covered)"
        ),
        "{}",
        a.changes[0].reason
    );
    // The hot udp rule (900 packets) moves above the counted tcp rules it shares no
    // packet with, and stops at the tcp rule without a counter (it may be the hotter).
    assert_eq!(a.changes[1].kind, ChangeKind::Moved);
    assert_eq!(a.changes[1].lines, [12]);
    assert!(a.changes[1]
        .reason
        .starts_with("900 packets: moved 2 place(s) earlier"));
    assert_eq!(a.changes.len(), 2, "{:?}", a.changes);
    assert_eq!(
        a.kept,
        [(
            8,
            "named set @banned: its elements change at runtime (flags dynamic or timeout)"
                .to_owned()
        )]
    );
    assert!(
        a.notes.iter().any(|n| n.starts_with(
            "named sets @blocked, @ports are taken with the elements the file gives them"
        )),
        "{:?}",
        a.notes
    );
    // The probes covered the set's members: more than the rules alone would give.
    assert!(a.probes > 40, "{}", a.probes);
}

#[test]
fn a_rewrite_that_ignores_a_named_sets_elements_is_refused() {
    // Dropping the rule matching @blocked: 203.0.113.1 (inside its /28) would pass.
    let json = fixture("nft-named-sets.json");
    let mut tables = nftjson::parse(&json, &fixture("nft-named-sets.txt")).unwrap();
    let before: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    tables[0].table.chains[0].rules.remove(0);
    let after: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    let e = check(&before, &after, false).unwrap_err().to_string();
    assert!(e.contains("198.51.100.7:1024 → 198.19.0.1:5000") && e.contains("(probe of line 5: `ip saddr @blocked counter packets 10 bytes 600 drop`): DROP before, ACCEPT after"), "{e}");
}

fn counted(chain: &str, index: usize, text: &str, packets: u64) -> Counted {
    Counted {
        chain: chain.into(),
        index,
        text: text.into(),
        packets,
    }
}

#[test]
fn the_counts_of_a_measured_run_move_hot_rules_like_the_files_own() {
    // The file has no counters; a run of it counted the rules (summed over trials,
    // with the counter prefix its iptables-save -c text had, and fwbench's own policy
    // rule after the user's).
    let text = filter(
        "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
         -A INPUT -p icmp -j ACCEPT\n\
         -A INPUT -p udp -m udp --dport 53 -j ACCEPT\n",
    );
    assert!(
        advise("f", &text).unwrap().changes.is_empty(),
        "no counters: no move"
    );
    let counts = [
        counted("INPUT", 1, "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT", 5),
        counted("INPUT", 2, "[0:0] -A INPUT -p icmp -j ACCEPT", 50),
        counted(
            "INPUT",
            3,
            "-A INPUT -p udp -m udp --dport 53 -j ACCEPT",
            600,
        ),
        counted(
            "INPUT",
            3,
            "-A INPUT -p udp -m udp --dport 53 -j ACCEPT",
            300,
        ),
        counted("INPUT", 4, ":INPUT ACCEPT (the chain's policy)", 1),
        counted("nat/PREROUTING", 1, "-A PREROUTING -j ACCEPT", 1),
    ];
    let a = advise_counted("f", &text, &counts).unwrap();
    // No packet in common (three protocols): the hottest first.
    assert_eq!(
        rules_of(&a.text),
        [
            "-A INPUT -p udp -m udp --dport 53 -j ACCEPT",
            "-A INPUT -p icmp -j ACCEPT",
            "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT",
        ]
    );
    assert!(
        a.changes[1]
            .reason
            .starts_with("900 packets: moved 2 place(s) earlier"),
        "{:?}",
        a.changes
    );
    // A run of another ruleset: refused, naming the rule.
    let mut wrong = counts.to_vec();
    wrong[3].text = "-A INPUT -p udp -m udp --dport 54 -j ACCEPT".into();
    let e = advise_counted("f", &text, &wrong).unwrap_err().to_string();
    assert_eq!(
        e,
        "f: the counted run's rule INPUT:3 is `-A INPUT -p udp -m udp --dport 54 -j ACCEPT`, \
         here it is `-A INPUT -p udp -m udp --dport 53 -j ACCEPT`: the run measured another \
         ruleset"
    );
    let e = advise_counted("f", &text, &counts[5..])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "f: none of the counted run's rules is a rule of this file"
    );
    // nft: the chain named plainly, or FAMILY/TABLE/CHAIN when the run imported
    // several tables; the counts replace the file's (the udp rule is no longer hot).
    let json = fixture("nft-named-sets.json");
    let listing = fixture("nft-named-sets.txt");
    let counts = [
        counted("inet/host/input", 5, "tcp dport 8443 accept", 50),
        counted(
            "input",
            6,
            "tcp dport @ports counter packets 5 bytes 300 accept",
            9000,
        ),
    ];
    let a = advise_nft_counted("nft-named-sets.nft", &json, &listing, &counts).unwrap();
    let moved: Vec<&Change> = a
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Moved)
        .collect();
    assert_eq!(moved.len(), 1, "{:?}", a.changes);
    assert_eq!(moved[0].lines, [10]);
    assert!(
        moved[0]
            .reason
            .starts_with("9000 packets: moved 1 place(s) earlier"),
        "{}",
        moved[0].reason
    );
}

#[test]
fn an_ipv4_trials_plain_chain_names_count_the_table_it_imported() {
    // `ip6 six` before `inet filter`, both with a chain `input`: an IPv4 trial
    // imports inet filter alone and names its chain plainly `input`.
    let json = fixture("nft-ip6-beside-inet.json");
    let listing = fixture("nft-ip6-beside-inet.txt");
    let imp =
        crate::import::import_nft_listing("f.nft", &json, &listing, crate::model::Ip::V4).unwrap();
    // The trial's counts as fwbench stores them (`verdicts.rules`).
    let counts: Vec<Counted> = imp
        .rule_list
        .iter()
        .zip([700, 900])
        .map(|(r, p)| counted(&r.user_chain, r.index, &r.text, p))
        .collect();
    assert_eq!(
        counts,
        [
            counted("input", 1, "tcp dport 22 accept", 700),
            counted("input", 2, "udp dport 5001 accept", 900)
        ]
    );
    let a = advise_nft_counted("f.nft", &json, &listing, &counts).unwrap();
    let packets = |table: &str| -> Vec<Option<u64>> {
        let t = a.rulesets.before.iter().find(|t| t.name == table).unwrap();
        t.chains[0].rules.iter().map(|r| r.packets).collect()
    };
    assert_eq!(packets("inet filter"), [Some(700), Some(900)]);
    assert_eq!(packets("ip6 six"), [None, None]);
    // A rule that reads the same in both tables: still the one the trial imported.
    let a = advise_nft_counted("f.nft", &json, &listing, &counts[..1]).unwrap();
    let packets = |table: &str| -> Vec<Option<u64>> {
        let t = a.rulesets.before.iter().find(|t| t.name == table).unwrap();
        t.chains[0].rules.iter().map(|r| r.packets).collect()
    };
    assert_eq!(packets("inet filter"), [Some(700), None]);
    assert_eq!(packets("ip6 six"), [None, None]);
    // Tables of one family each (`ip four`, `ip6 six`): a plain `input` is either
    // trial's. Placed by its text where only one table has it; refused where both do.
    let both = |s: &str| s.replace("inet filter", "ip four").replace("inet", "ip");
    let json = both(&json.replace(r#""name": "filter""#, r#""name": "four""#))
        .replace(r#""table": "filter""#, r#""table": "four""#);
    let listing = both(&listing);
    assert!(listing.contains("table ip four {"), "{listing}");
    let a = advise_nft_counted("f.nft", &json, &listing, &counts[1..]).unwrap();
    let four = a.rulesets.before.iter().find(|t| t.name == "ip four");
    assert_eq!(four.unwrap().chains[0].rules[1].packets, Some(900));
    let e = advise_nft_counted("f.nft", &json, &listing, &counts[..1])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "f.nft: the counted run's rule input:1 (`tcp dport 22 accept`) can be of table ip6 six \
         (an IPv6 trial's, which imports it alone) or table ip four (an IPv4 trial's, which \
         imports it alone): the stored counts do not say which IP version's trial counted \
         it; advise without --counters-from"
    );
}

/// nft's read-back of nft-advise-traps.nft (one table per trap), advised.
fn traps() -> Advice {
    advised_nft("nft-advise-traps", "nft-advise-traps.nft")
}

/// The changes of `a` in chain `chain` (`FAMILY TABLE CHAIN`).
fn changes_in<'a>(a: &'a Advice, chain: &str) -> Vec<&'a Change> {
    a.changes.iter().filter(|c| c.chain == chain).collect()
}

#[test]
fn an_ipv4_match_in_an_inet_table_never_matches_ipv6() {
    // `ip saddr != 192.0.2.0/24 tcp dport 22 drop` matches no IPv6 packet (nft puts
    // `meta nfproto ipv4` before it): the IPv6 drop after it is no shadowed rule.
    let a = traps();
    assert_eq!(changes_in(&a, "inet fam input"), [] as [&Change; 0]);
    let v6 = |s: &str| Packet {
        src: u128::from(s.parse::<std::net::Ipv6Addr>().unwrap()),
        proto: 6,
        dport: 22,
        ..base_packet(true)
    };
    let tables = nftjson::parse(
        &fixture("nft-advise-traps.json"),
        &fixture("nft-advise-traps.txt"),
    )
    .unwrap();
    let fam = &tables[0].table;
    assert_eq!(fam.name, "inet fam");
    let (ipv4_not, ipv6_drop) = (&fam.chains[0].rules[0], &fam.chains[0].rules[1]);
    assert_eq!(ipv4_not.matches(&v6("2001:db8::1")), Some(false));
    assert_eq!(ipv6_drop.matches(&v6("2001:db8::1")), Some(true));
    assert!(!ipv6_drop.covered_by(ipv4_not));
    // The IPv4 packets it does match (from outside 192.0.2.0/24).
    let v4 = Packet {
        proto: 6,
        dport: 22,
        ..base_packet(false)
    };
    assert_eq!(ipv4_not.matches(&v4), Some(true));
    // The proof's IPv6 probes see the IPv6 drop gone.
    let before: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    let mut after = before.clone();
    after[0].chains[0].rules.remove(1);
    let e = check(&before, &after, true).unwrap_err().to_string();
    assert!(e.ends_with("DROP before, policy ACCEPT after"), "{e}");
}

#[test]
fn a_log_or_a_named_counter_beside_a_verdict_is_never_merged_away() {
    // Four accepts differing only in the port; the second logs, the third counts
    // into the named counter `web`: merged into one rule, both would be lost.
    let a = traps();
    assert_eq!(changes_in(&a, "inet logs input"), [] as [&Change; 0]);
    for (handle, why) in [
        (
            4,
            "`log` with a verdict: kept as it is (a merge or move would lose it)",
        ),
        (
            5,
            "named counter \"web\" with a verdict: kept as it is (a merge or move would \
             lose it)",
        ),
    ] {
        assert!(
            a.kept.contains(&(handle, why.to_owned())),
            "{handle}: {:?}",
            a.kept
        );
    }
    // The proof counts the log as met: a ruleset without it is refused.
    let tables = nftjson::parse(
        &fixture("nft-advise-traps.json"),
        &fixture("nft-advise-traps.txt"),
    )
    .unwrap();
    let before: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    let mut after = before.clone();
    let rules = &mut after[1].chains[0].rules;
    assert_eq!(rules[1].text, "tcp dport 22 log prefix \"ssh: \" accept");
    rules[1] = Rule {
        line: 0,
        text: "tcp dport 22 accept".into(),
        conds: rules[0].conds.clone().map(|mut c| {
            c.insert(
                Field::Dport,
                model::Cond::new(false, Values::Ports(vec![(22, 22)])),
            );
            c
        }),
        opaque: None,
        target: model::Target::Verdict("ACCEPT".into()),
        comment: None,
        packets: None,
        rewrites: false,
    };
    let e = check(&before, &after, false).unwrap_err().to_string();
    assert!(
        e.contains("ACCEPT after tcp dport 22 log prefix \"ssh: \" accept before"),
        "{e}"
    );
}

#[test]
fn no_rule_is_removed_or_moved_across_one_that_rewrites_packets() {
    let a = traps();
    // `ip daddr 192.0.2.1 ip daddr set 198.51.100.1` sends packets to 192.0.2.1 on
    // to the accept of 198.51.100.1: that accept is no shadowed rule.
    assert_eq!(changes_in(&a, "inet rw input"), [] as [&Change; 0]);
    assert!(
        a.kept.contains(&(
            3,
            "statement `mangle` the analysis does not model".to_owned()
        )),
        "{:?}",
        a.kept
    );
    // The jump into `rewrite` sends packets to 192.0.2.1 on to the hot drop of
    // 198.51.100.1: the drop may not move above it, though their matches are
    // disjoint.
    assert_eq!(changes_in(&a, "inet hot input"), [] as [&Change; 0]);
    let tables = nftjson::parse(
        &fixture("nft-advise-traps.json"),
        &fixture("nft-advise-traps.txt"),
    )
    .unwrap();
    let hot = &tables[3].table;
    assert_eq!(hot.name, "inet hot");
    let (jump, drop) = (&hot.chains[0].rules[0], &hot.chains[0].rules[1]);
    assert!(jump.rewrites && !drop.rewrites);
    assert!(jump.disjoint(drop) && !drop.commutes_with(jump));
}

#[test]
fn an_address_set_holds_one_family() {
    // The IPv4 drops become one set; the IPv6 drop between them (no common packet)
    // stays a rule of its own: nft refuses a set of both families.
    let a = traps();
    let c = changes_in(&a, "inet mix input");
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(
        (c[0].kind, &c[0].lines[..]),
        (ChangeKind::Merged, &[2, 4, 5][..])
    );
    assert!(
        a.text.contains(
            "table inet mix {\n\
             \tchain input {\n\
             \t\ttype filter hook input priority filter; policy accept;\n\
             \t\tip saddr { 198.51.100.1, 203.0.113.1, 203.0.113.2 } counter drop\n\
             \t\tip6 saddr 2001:db8::1 drop\n\
             \t}\n"
        ),
        "{}",
        a.text
    );
}

#[test]
fn a_merged_rule_with_both_ports_writes_one_multiport_match_per_direction() {
    // iptables-restore refuses `-m multiport --sports … --dports …`.
    let a = advised(
        "-A INPUT -p tcp -m tcp --sport 1024:65535 --dport 80 -j ACCEPT\n\
         -A INPUT -p tcp -m tcp --sport 1024:65535 --dport 443 -j ACCEPT\n",
    );
    assert_eq!(
        rules_of(&a.text),
        ["-A INPUT -p tcp -m tcp --sport 1024:65535 -m multiport --dports 80,443 -j ACCEPT"]
    );
    // Both directions lists: two multiport matches.
    let (t, _) = iptables::parse(
        "f",
        &filter(
            "-A INPUT -p udp -m multiport --sports 53,123 -m multiport --dports 53,123 \
             -j ACCEPT\n",
        ),
    )
    .unwrap();
    let mut r = t[0].chains[0].rules[0].clone();
    r.line = 0;
    let (text, _) = iptables::render(
        &[Table {
            chains: vec![Chain {
                rules: vec![r],
                ..t[0].chains[0].clone()
            }],
            ..t[0].clone()
        }],
        false,
        &[],
    );
    assert_eq!(
        rules_of(&text),
        ["-A INPUT -p udp -m multiport --sports 53,123 -m multiport --dports 53,123 -j ACCEPT"]
    );
    // The output reads back as the same rule.
    let (back, _) = iptables::parse("out", &a.text).unwrap();
    let r = &back[0].chains[0].rules[0];
    assert_eq!(r.conds.as_ref().map(|c| c.len()), Some(3), "{r:?}");
}

#[test]
fn an_iptables_target_that_rewrites_addresses_is_crossed_by_no_removal() {
    // DNPT sends packets to 2001:db8:1::1 on to the accept of 2001:db8::1; a MARK
    // changes no address or port.
    let text = |between: &str| {
        format!(
            "*mangle\n:PREROUTING ACCEPT [0:0]\n\
             -A PREROUTING -d 2001:db8::1/128 -j DROP\n\
             -A PREROUTING {between}\n\
             -A PREROUTING -d 2001:db8::1/128 -j ACCEPT\nCOMMIT\n"
        )
    };
    let dnpt = "-d 2001:db8:1::/48 -j DNPT --src-pfx 2001:db8:1::/48 --dst-pfx 2001:db8::/48";
    let a = advise("f", &text(dnpt)).unwrap();
    assert!(a.changes.is_empty(), "{:?}", a.changes);
    let a = advise("f", &text("-d 2001:db8:1::/48 -j MARK --set-mark 1")).unwrap();
    assert_eq!(a.changes.len(), 1, "{:?}", a.changes);
    assert_eq!(a.changes[0].kind, ChangeKind::Shadowed);
}
