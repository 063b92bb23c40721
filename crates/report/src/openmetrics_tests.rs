use super::*;

/// Known answers (GNU `date -d … +%s`): the epoch, a leap day, a time of today; and
/// what is not such a time.
#[test]
fn utc_times_read_as_milliseconds_since_the_epoch() {
    for (utc, ms) in [
        ("1970-01-01T00:00:00Z", 0),
        ("2000-02-29T00:00:00Z", 951_782_400_000),
        ("2000-03-01T00:00:00Z", 951_868_800_000),
        ("2026-11-28T13:28:10Z", 1_795_872_490_000),
        ("1969-12-31T23:59:59Z", -1000),
    ] {
        assert_eq!(epoch_ms(utc), Some(ms), "{utc}");
    }
    for bad in [
        "",
        "t1",
        "2026-11-28 13:28:10Z",
        "2026-11-28T13:28:10",
        "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2026-11-28T24:00:00Z",
        "2026-11-28T13:2a:10Z",
        "+026-11-28T13:28:10Z",
    ] {
        assert_eq!(epoch_ms(bad), None, "{bad:?}");
    }
}

/// Every metric the report aggregates has a family, once, whose name ends in its unit.
#[test]
fn every_metric_has_one_family_named_with_its_unit() {
    for (m, _) in METRICS {
        let n = FAMILIES.iter().filter(|f| f.metric == *m).count();
        assert_eq!(n, 1, "metric {m} has {n} families");
    }
    assert_eq!(FAMILIES.len(), METRICS.len());
    for f in FAMILIES {
        assert!(f.name.ends_with(&format!("_{}", f.unit)), "{}", f.name);
    }
}

#[test]
fn label_values_and_names_are_escaped_and_made_valid() {
    assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    for (key, name) in [
        ("packet.size.payload", "packet_size_payload"),
        ("tool.iptables-legacy", "tool_iptables_legacy"),
        ("1x", "p_1x"),
        ("__name__", "p___name__"),
    ] {
        assert_eq!(label_name(key), name);
    }
    let mut l = Labels::default();
    l.set("a.b", "1");
    l.set("a_b", "2");
    assert_eq!(l.text(), "{a_b=\"1\",a_b_2=\"2\"}");
}

/// Trials that ended within one second keep a sample each, 1 ms apart, in order.
#[test]
fn samples_of_one_second_are_spread_by_a_millisecond() {
    let p = distinct_times(&[(2000, 3.0), (1000, 1.0), (1000, 2.0), (1001, 4.0)]);
    assert_eq!(p, [(1000, 1.0), (1001, 2.0), (1002, 4.0), (2000, 3.0)]);
    assert_eq!(timestamp(1_795_872_490_001), "1795872490.001");
    assert_eq!(timestamp(1_795_872_490_000), "1795872490");
}
