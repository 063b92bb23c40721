use super::*;

const MS: u64 = 1_000_000;

fn ops(text: &str) -> Vec<(u64, UpdateKind, u32, u32)> {
    parse("t.trace", text)
        .unwrap()
        .ops
        .iter()
        .map(|o| (o.at_ns, o.kind, o.k, o.line))
        .collect()
}

fn refused(text: &str) -> String {
    parse("t.trace", text).unwrap_err().to_string()
}

#[test]
fn a_trace_parses_with_comments_blank_lines_and_units() {
    let text = "# a churn\nformat 1\n\n0.5s add 1   # the marker's\n1.2s delete 1\n\
                1200ms add-elements 3\n  3s replace 100\n4s reload\n";
    // A reload beside a delete is refused (below); without them:
    assert_eq!(
        ops(&text
            .replace("1.2s delete 1\n", "")
            .replace("4s reload\n", "")),
        vec![
            (500 * MS, UpdateKind::Add, 1, 4),
            (1200 * MS, UpdateKind::AddElements, 3, 5),
            (3000 * MS, UpdateKind::Replace, 100, 6),
        ]
    );
    assert_eq!(
        ops("0s add 1\n0s add 2\n4s reload\n5s reload 3\n"),
        vec![
            (0, UpdateKind::Add, 1, 1),
            (0, UpdateKind::Add, 2, 2),
            (4000 * MS, UpdateKind::Reload, 1, 3),
            (5000 * MS, UpdateKind::Reload, 3, 4),
        ]
    );
    assert_eq!(
        ops("0s add-elements 1
1s reload-set
2s reload-set 2
"),
        vec![
            (0, UpdateKind::AddElements, 1, 1),
            (1000 * MS, UpdateKind::ReloadSet, 1, 2),
            (2000 * MS, UpdateKind::ReloadSet, 2, 3),
        ]
    );
    assert_eq!(
        ops("0.000000001s delete 100000\n86400s remove-elements 1\n"),
        vec![
            (1, UpdateKind::Delete, 100_000, 1),
            (86_400_000 * MS, UpdateKind::RemoveElements, 1, 2)
        ]
    );
}

#[test]
fn bad_traces_are_refused_with_where_and_what_was_expected() {
    for (text, says) in [
        (
            "0.5s add 1\n1.2 add 1\n",
            "t.trace:2:1: '1.2' is not a time: expected seconds or milliseconds with the \
             unit (0.5s, 250ms), from 0 to 86400s",
        ),
        (
            "  -1s add 1\n",
            "t.trace:1:3: '-1s' is not a time: expected seconds",
        ),
        (
            "1s add 1\n0.5s add 1\n",
            "t.trace:2:1: time 0.5s is before the previous operation's 1s (line 1): \
             expected times that do not decrease",
        ),
        (
            "1s swap 1\n",
            "t.trace:1:4: unknown operation 'swap': expected add, delete, replace, reload, reload-set, \
             add-elements or remove-elements",
        ),
        (
            "1s\n",
            "t.trace:1:3: missing operation after the time: expected add",
        ),
        (
            "1s add\n",
            "t.trace:1:7: missing K after 'add': expected the number of rules or elements \
             it changes, 1 to 100000",
        ),
        (
            "1s add 0\n",
            "t.trace:1:8: K '0': expected a whole number from 1 to 100000",
        ),
        (
            "1s replace 100001\n",
            "t.trace:1:12: K '100001': expected a whole number from 1 to 100000",
        ),
        (
            "1s add 1 2\n",
            "t.trace:1:10: unexpected '2': expected the end of the line or a # comment",
        ),
        (
            "format 2\n1s add 1\n",
            "t.trace:1:8: format '2': expected 1",
        ),
        (
            "1s add 1\nformat 1\n",
            "t.trace:2:1: 'format' after an operation: expected it as the first line",
        ),
        (
            "# nothing\n\n",
            "t.trace: no operations: expected at least one line TIME OP [K], e.g. 0.5s add 1",
        ),
        (
            "1s replace 5\n2s delete 1\n",
            "t.trace:2:4: delete after the replace on line 1: the rule set it rewrote no \
             longer holds what a delete takes out; expected deletions and removals before \
             every replace and reload",
        ),
        (
            "1s delete 1\n2s reload\n",
            "t.trace:2:4: reload (line 2) and delete (line 1) in one trace: a reload loads \
             the rule set in force again, the marker's drop rule in it, so its violations \
             mean something only beside additions; expected only reload and add operations \
             in a trace with reloads",
        ),
        (
            "1s reload\n2s replace 1\n",
            "t.trace:2:4: reload (line 1) and replace (line 2) in one trace",
        ),
        (
            "1s add 1\n2s reload-set\n",
            "t.trace:2:4: reload-set (line 2) and add (line 1) in one trace: a set's reload \
             loads the set in force again, the marker's drop element in it, so its violations \
             mean something only beside additions; expected only reload-set and add-elements \
             operations in a trace with reload-sets",
        ),
        (
            "1s reload-set\n2s reload\n",
            "t.trace:2:4: reload (line 2) and reload-set (line 1) in one trace",
        ),
        (
            "1s add-elements 3\n2s expire-elements 3\n",
            "t.trace:2:4: expire-elements is no trace operation: its elements are added at \
             the start of the traffic and expire by the kernel's timer",
        ),
        (
            "1.0000000001s add 1\n",
            "t.trace:1:1: '1.0000000001s' is not a time",
        ),
        ("86400.5s add 1\n", "t.trace:1:1: '86400.5s' is not a time"),
    ] {
        let e = refused(text);
        assert!(e.starts_with(says), "{text:?}:\n  got  {e}\n  want {says}");
    }
    let many = "1s add 1\n".repeat(proto::MAX_UPDATES as usize + 1);
    assert_eq!(
        refused(&many),
        "t.trace:10001:1: more than 10000 operations: expected at most 10000 in one trace"
    );
    assert_eq!(
        parse("t.trace", &"1s add 1\n".repeat(proto::MAX_UPDATES as usize))
            .unwrap()
            .operations,
        10_000
    );
}

#[test]
fn the_fingerprint_is_the_operations_not_their_writing() {
    let a = parse("a", "0.5s add 1\n3s replace 100\n").unwrap();
    let b = parse("b", "# same\n500ms   add 1 # x\n3000ms replace 100\n").unwrap();
    assert_eq!((a.operations, &a.fnv), (b.operations, &b.fnv));
    let c = parse("a", "0.5s add 1\n3s replace 101\n").unwrap();
    assert_ne!(a.fnv, c.fnv);
    // In the key: only the count and the fingerprint.
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        format!(r#"{{"operations":2,"fnv":"{}"}}"#, a.fnv)
    );
}

#[test]
fn a_file_is_read_once_and_a_missing_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.trace");
    std::fs::write(&f, "1s add 1\n").unwrap();
    let mut t = Trace::named(f.to_str().unwrap());
    assert!(!t.is_loaded());
    t.load().unwrap();
    assert_eq!(t.operations, 1);
    assert_eq!(t.file, f.to_str().unwrap());
    // A file too large is refused before it is read whole.
    let big = dir.path().join("big.trace");
    std::fs::write(&big, "#".repeat(MAX_BYTES as usize + 1)).unwrap();
    assert_eq!(
        Trace::named(big.to_str().unwrap())
            .load()
            .unwrap_err()
            .to_string(),
        format!(
            "{}: larger than 4 MiB: expected an event trace of at most 10000 operations",
            big.display()
        )
    );
    let mut gone = Trace::named("/nonexistent/t.trace");
    assert!(gone
        .load()
        .unwrap_err()
        .to_string()
        .starts_with("/nonexistent/t.trace: cannot read the event trace: "));
}

#[test]
fn times_are_written_back_as_read() {
    for (t, ns) in [
        ("0s", 0),
        ("0.5s", 500 * MS),
        ("12.034s", 12_034 * MS),
        ("1.000000001s", 1_000_000_001),
    ] {
        assert_eq!(parse_time(t), Some(ns), "{t}");
        assert_eq!(format_time(ns), t);
    }
    assert_eq!(parse_time("250ms"), Some(250 * MS));
    assert_eq!(parse_time("0.25ms"), Some(250_000));
    for bad in [
        "",
        "s",
        "1",
        "1.s",
        ".5s",
        "1e3s",
        "1 s",
        "+1s",
        "0.0000001ms",
    ] {
        assert_eq!(parse_time(bad), None, "{bad}");
    }
}
