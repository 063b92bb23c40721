//! Live intervals (`-i/--interval`, `--json-stream`): a 3-s flood with `-i 1` gives
//! three intervals whose packets add up to the trial's total, except what the sink
//! counted after the last interval (the definition: the last interval ends when the
//! traffic phase ends; packets still in flight then, and those sent until the source
//! is stopped, are in the total only). Privileged (namespaces); run with
//! `--include-ignored` as root.

mod util;

use serde_json::Value;
use util::*;

#[test]
fn bad_intervals_exit_2() {
    for i in ["0.01", "-1", "nan"] {
        let o = fwbench(&["flood", "-t", "1", "--no-store", "-i", i]);
        assert_eq!(o.status.code(), Some(2), "-i {i}: {}", stderr(&o));
    }
}

#[test]
#[ignore = "needs root: network namespaces (run with --include-ignored as root)"]
fn flood_intervals_add_up_to_the_total() {
    let o = fwbench(&argv(
        "flood -t 3 -i 1 --rate 20kpps --no-store --json-stream",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (intervals, end): (Vec<&Value>, Vec<&Value>) =
        lines.iter().partition(|v| v["type"] == "interval");
    assert_eq!(end.len(), 1, "one end object");
    let end = end[0];
    assert_eq!(intervals.len(), 3, "{lines:?}");
    let mut prev_end = 0.0;
    for (k, i) in intervals.iter().enumerate() {
        // Contiguous ranges of about a second each, at about the offered rate.
        assert!((f(&i["start_s"]) - prev_end).abs() < 1e-9, "{i}");
        prev_end = f(&i["end_s"]);
        let len = f(&i["end_s"]) - f(&i["start_s"]);
        assert!((0.8..1.3).contains(&len), "interval {k}: {i}");
        let per_s = f(&i["per_s"]);
        assert!((10_000.0..30_000.0).contains(&per_s), "interval {k}: {i}");
        assert_eq!(i["last"], k == 2, "{i}");
        assert_eq!(u(&i["bytes"]), u(&i["count"]) * 18, "{i}");
        assert!(u(&i["sent"]) > 0);
    }
    let sum: u64 = intervals.iter().map(|i| u(&i["count"])).sum();
    let total = u(&end["total"]);
    assert_eq!(u(&end["interval_sum"]), sum);
    assert_eq!(total, u(&end["trial"]["result"]["received"]), "{end}");
    // What arrived after the last interval: never negative, at most 0.2 s of traffic.
    let after = end["after_last_interval"].as_i64().unwrap();
    assert_eq!(after, total as i64 - sum as i64);
    assert!((0..=4_000).contains(&after), "{end}");
    let sent: u64 = intervals.iter().map(|i| u(&i["sent"])).sum();
    assert!(sent <= u(&end["trial"]["result"]["sent"]));

    // The same as text: three lines, then the sum line, then the trial's text.
    let o = fwbench(&argv("flood -t 3 -i 1 --rate 20kpps --no-store"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    for l in &lines[..3] {
        assert!(
            l.starts_with('[') && l.contains(" packets ") && l.contains("sent "),
            "{out}"
        );
    }
    assert!(lines[2].ends_with("(end)"), "{out}");
    assert!(lines[3].contains("in 3 interval(s); trial total "), "{out}");
}
