//! Unit tests of `trend`: the key, versions in order, host facts read generically.

use super::*;
use std::cmp::Ordering;

#[test]
fn keys_parse_and_bad_ones_say_what() {
    assert_eq!(By::parse("time").unwrap(), By::Time);
    assert_eq!(By::parse("tag:run").unwrap(), By::Tag("run".into()));
    assert_eq!(
        By::parse("fact:sysctl.net.core.rmem_max").unwrap(),
        By::Fact("sysctl.net.core.rmem_max".into())
    );
    for bad in ["", "kernal", "tag:", "fact:", "tag", "commit:x"] {
        let e = By::parse(bad).unwrap_err();
        assert!(e.starts_with("--by "), "{e}");
    }
}

#[test]
fn versions_and_numbers_sort_naturally() {
    let mut v = vec!["6.18.0", "6.9.1", "6.1", "10", "2", "run-11", "run-2"];
    v.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(v, ["2", "6.1", "6.9.1", "6.18.0", "10", "run-2", "run-11"]);
    // Numbers below zero in their order too (as text "-3" came after "-10").
    let mut v = vec!["-3", "2", "-10", "0"];
    v.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(v, ["-10", "-3", "0", "2"]);
    // A total order over a mix (whole and decimal, negative, text): every triple
    // transitive, whatever the input order.
    let mix = [
        "-10", "-3", "-3.5", "-3.2", "-3.", "-3.5.1", "-x", "-", "2", "2.5", "10", "a", "a-3",
        "-03", "", ".5", "+1", "+", "+x", " 3", "run-2", "run-11", "6.18", "6.9",
    ];
    for a in mix {
        assert_eq!(natural_cmp(a, a), Ordering::Equal, "{a}");
        for b in mix {
            assert_eq!(natural_cmp(a, b), natural_cmp(b, a).reverse(), "{a} {b}");
            for c in mix {
                if natural_cmp(a, b).is_le() && natural_cmp(b, c).is_le() {
                    assert!(natural_cmp(a, c).is_le(), "{a} <= {b} <= {c}");
                }
            }
        }
    }
    assert_eq!(natural_cmp("-10", "-3.5"), Ordering::Less);
    // Below zero, by value: -3.5 < -3.2 < -3; a leading + and spaces read as nothing.
    let mut v = vec!["-3", "-3.2", "-3.5", "+5", " 3", "2"];
    v.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(v, ["-3.5", "-3.2", "-3", "2", " 3", "+5"]);
}

#[test]
fn facts_are_read_from_whatever_the_host_records() {
    let mut r = RunRow::default();
    r.host.kernel = "6.18.0".into();
    r.host.cores = 2;
    r.host.fwbench_version = "0.1.0 (commit abc123+dirty, built 2026-11-28)".into();
    r.host.tools = vec![("nft".into(), "1.1.1".into())];
    r.host.sysctls = vec![("net.core.rmem_max".into(), "212992".into())];
    r.tags = vec![("run".into(), "11".into())];
    assert_eq!(By::Kernel.value(&r).as_deref(), Some("6.18.0"));
    assert_eq!(By::Commit.value(&r).as_deref(), Some("abc123+dirty"));
    assert_eq!(By::Tag("run".into()).value(&r).as_deref(), Some("11"));
    assert_eq!(By::Tag("other".into()).value(&r), None);
    let fact = |n: &str| By::Fact(n.into()).value(&r);
    assert_eq!(fact("cores").as_deref(), Some("2"));
    assert_eq!(fact("tool.nft").as_deref(), Some("1.1.1"));
    r.host.mitigations = vec![("spectre_v2".into(), "Mitigation: Retpolines".into())];
    let fact = |n: &str| By::Fact(n.into()).value(&r);
    assert_eq!(
        fact("mitigation.spectre_v2").as_deref(),
        Some("Mitigation: Retpolines")
    );
    // A fact's last part alone, where no other fact shares it.
    assert_eq!(fact("nft").as_deref(), Some("1.1.1"));
    assert_eq!(fact("net.core.rmem_max").as_deref(), Some("212992"));
    assert_eq!(fact("nothing"), None);
}
