//! Unit tests of `output`: a trial's text and line, and the run table, around the
//! figures' own lines (`workloads::Summary`).

use super::*;
use crate::params::workload::Workload;
use crate::plan::build::test_params;
use crate::workloads::packet::ping::PingSummary;
use crate::workloads::Figures;

fn ping() -> (TrialParams, Outcome) {
    let p = test_params(Workload::Ping, &[("count", "3"), ("interval", "1ms")]);
    let s = PingSummary {
        sent: 3,
        received: 2,
        lost: 1,
        invalid: 0,
        rtt: proto::RttSummary {
            count: 2,
            min_ns: 10_000,
            mean_ns: 15_000.0,
            p50_ns: 12_000,
            p90_ns: 20_000,
            p99_ns: 20_000,
            p999_ns: 20_000,
            max_ns: 20_000,
        },
        elapsed_s: 0.5,
        finished: true,
        events: None,
    };
    let o = Outcome {
        figures: Some(Figures::Ping(s)),
        ..Outcome::started("t0".into())
    };
    (p, o)
}

/// The frame (parameter line, placement) around the family's own lines, and the
/// trial line: status, then the figures' line.
#[test]
fn trial_text_frames_the_figures_lines() {
    let (p, mut o) = ping();
    assert_eq!(
        trial_text(&p, &o),
        "ping forward IPv4 size=payload:8 count=3 interval=1000µs t=5s\n\
         \x20 probes       3 sent, 2 replies, 1 lost, 0 invalid over 0.50 s\n\
         \x20 RTT µs       min 10.0  avg 15.00  p50 12.0  p90 20.0  p99 20.0  max 20.0\n\
         \x20 placement    \n"
    );
    assert_eq!(
        outcome_line(&o),
        "ok: 2/3 replies, RTT min 10.0 avg 15.0 p50 12.0 p99 20.0 max 20.0 µs, 1 lost"
    );
    o.status = Status::Failed;
    o.error = Some("no reflector".into());
    assert_eq!(outcome_line(&o), "failed: no reflector");
    assert_eq!(
        trial_text(&p, &o),
        "ping forward IPv4 size=payload:8 count=3 interval=1000µs t=5s\nfailed: no reflector\n"
    );
}

/// A ping's row in the packet table: no rate (it sends one probe at a time), its
/// figures' cells.
#[test]
fn run_table_rows_take_the_figures_cells() {
    let (p, o) = ping();
    let t = PlannedTrial {
        key: "k".into(),
        rep: 1,
        params: p,
    };
    let table = summary_table("run", &[(t, o)]);
    let row = table
        .lines()
        .find(|l| l.starts_with('1'))
        .expect("a row for the trial");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "1",
            "ping",
            "forward",
            "none",
            "-",
            "0",
            "IPv4",
            "payload:8",
            "-",
            "1",
            "6",
            "4",
            "33.3333",
            "12.0",
            "-",
            "ok"
        ],
        "{table}"
    );
}

/// `fwbench workload`'s table: a command's times are its runs that succeeded; one that
/// never succeeded has none ("-"), not its time to fail.
#[test]
fn a_workloads_times_are_its_commands_that_succeeded() {
    let ran = |argv: &[&str], d: f64, exit: i32| crate::worklang::Ran {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        start_s: 0.0,
        duration_s: d,
        exit: Some(exit),
        error: None,
    };
    let text = workload_text(
        "w.wl",
        1.0,
        &[
            ran(&["true"], 0.002, 0),
            ran(&["true"], 0.004, 0),
            ran(&["true"], 0.9, 1),
            ran(&["sh", "-c", "exit 3"], 0.003, 3),
        ],
    );
    let line = |cmd: &str| text.lines().find(|l| l.ends_with(cmd)).unwrap().to_string();
    let words = |l: String| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        words(line("  true"))[..5],
        ["3", "0.0030", "0.0040", "0.0040", "1"]
    );
    assert_eq!(
        words(line("sh -c 'exit 3'"))[..5],
        ["1", "-", "-", "-", "1"]
    );
}

/// An envelope's row in the run table: the rules column is the rule count it ran at,
/// not its answer (0.5 updates/s read "0" there, as if no rule stood); its rate is on
/// its line below the table, with its unit.
#[test]
fn an_envelopes_row_keeps_its_rule_count() {
    use crate::outcome::search::{EnvelopeReport, SearchSummary};
    let p = crate::plan::build::test_envelope();
    let r = EnvelopeReport {
        update: "add:1 (batch)".into(),
        installed: 1000,
        targets: p.search_params().unwrap().envelope.clone().unwrap(),
        precision: 0.1,
        rate: Some(0.5),
        fail_rate: Some(0.55),
        ceiling_held: false,
        converged: true,
        trials: 7,
        points: vec![],
        doubts: vec![],
    };
    let o = Outcome::started("t0".into()).with_search(SearchSummary::Envelope(r));
    let t = PlannedTrial {
        key: "k".into(),
        rep: 1,
        params: p,
    };
    let table = summary_table("run", &[(t, o)]);
    let header = table.lines().find(|l| l.starts_with('#')).unwrap();
    let row = table.lines().find(|l| l.starts_with('1')).unwrap();
    // The cell under "rules" (right-aligned: it ends where its header does).
    let end = header.find("rules").unwrap() + "rules".len();
    assert_eq!(
        row[..end].split_whitespace().last(),
        Some("1000"),
        "{table}"
    );
    // No loss bound: an envelope judges latency and effect ("≤0.000" read as one).
    assert!(!row.contains('≤'), "{table}");
    assert!(
        table.contains("envelope of add:1 (batch) at 1000 rules: 0.50 updates/s (0.55 did not)"),
        "{table}"
    );
}
