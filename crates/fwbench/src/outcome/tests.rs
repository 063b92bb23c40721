//! Unit tests of `outcome`: the stored form keeps its keys and their order; a late
//! sender is flagged. [`packet_step`] is the planted packet trial the searches' tests
//! run on too.

use super::*;
use crate::workloads::{echo, packet};

fn stored(figures: Option<Figures>) -> String {
    let o = Outcome {
        figures,
        ..Outcome::started("t0".into())
    };
    serde_json::to_string(&o).unwrap()
}

/// Every stored trial has `summary` (echo's figures, else null); the other families'
/// figures follow it under their own key, before `gateway` — byte for byte as before
/// the figures said their own key (old results files read the same).
#[test]
fn stored_form_keys_each_family_as_before() {
    let head =
        r#"{"status":"ok","error":null,"started_at":"t0","finished_at":"t0","placement":[],"#;
    assert_eq!(
        stored(None),
        format!(r#"{head}"summary":null,"gateway":null}}"#)
    );

    let ping = packet::ping::PingSummary {
        sent: 3,
        received: 2,
        lost: 1,
        invalid: 0,
        rtt: proto::RttSummary::default(),
        elapsed_s: 1.5,
        finished: true,
        events: None,
    };
    let text = stored(Some(Figures::Ping(ping.clone())));
    let figures = serde_json::to_string(&ping).unwrap();
    assert_eq!(
        text,
        format!(r#"{head}"summary":null,"ping":{figures},"gateway":null}}"#)
    );

    let c = proto::EchoClientResults {
        clients: vec![],
        rtt: proto::RttSummary::default(),
        elapsed_ns: 1_000_000_000,
        events: None,
    };
    let e = echo::summarise(&c, &proto::EchoServerResults { clients: vec![] });
    let text = stored(Some(Figures::Echo(e.clone())));
    let figures = serde_json::to_string(&e).unwrap();
    assert_eq!(
        text,
        format!(r#"{head}"summary":{figures},"gateway":null}}"#)
    );
}

/// A packet trial as stored, `ok`: `offered` pps for `elapsed_s`, `sent` and
/// `received` packets, the sender at most `max_lag_ns` behind its schedule.
pub(crate) fn packet_step(
    offered: f64,
    sent: u64,
    received: u64,
    elapsed_s: f64,
    max_lag_ns: u64,
) -> Outcome {
    let j = serde_json::json!({
        "status": "ok", "error": null, "started_at": "t0", "finished_at": "t1",
        "packet": {
            "counted_at": "sink", "elapsed_s": elapsed_s, "payload": 18, "frame": 64,
            "offered_pps": offered, "sent": sent, "sent_pps": sent as f64 / elapsed_s,
            "received": received, "received_pps": received as f64 / elapsed_s,
            "lost": sent - received,
            "loss_ratio": (sent - received) as f64 / sent.max(1) as f64,
            "received_bps": 0.0, "received_l2_bps": 0.0, "duplicates": 0,
            "reordered": 0, "unstamped": 0,
            "owd": proto::RttSummary::default(), "jitter_ns": 0.0,
            "send_errors": 0, "max_lag_ns": max_lag_ns,
            "kernel": proto::UdpKernelCounters::default(),
            "sink_interfaces": [], "flows": []
        }
    });
    Outcome::from_stored_step(&j).unwrap()
}

/// Issue 37: `flow --rules 5000 --flows 2 -t 3 --event add:1@1500ms --load 0.5` printed
/// "sender behind its schedule by up to 118.7 ms" and stayed `ok`. Its update's
/// figures rest on the background arriving on time: beyond the 50 ms before the
/// update the trial is flagged, the reason named; without events, a tenth of the
/// traffic phase is the bound.
#[test]
fn a_sender_late_beyond_its_bound_flags_the_trial() {
    let flow = |lag_ns: u64, update: bool| {
        let mut o = packet_step(10_000.0, 30_000, 30_000, 3.0, lag_ns);
        if let (true, Some(Figures::Packet(s))) = (update, o.figures.as_mut()) {
            s.events = Some(Box::new(crate::workloads::events::planted_summary(5000)));
        }
        o.judge_witness();
        o
    };
    let late = flow(118_700_000, true);
    assert_eq!(late.status, Status::Flagged);
    assert_eq!(late.doubts.len(), 1, "{:?}", late.doubts);
    assert_eq!(late.doubts[0].kind, results::DoubtKind::LimitedByFwbench);
    let why = late.error.as_deref().unwrap();
    assert!(
        why.starts_with(
            "limited by fwbench: the sender fell behind its schedule by up to 118.7 ms, more \
             than the 50 ms before each update"
        ),
        "{why}"
    );
    // In the stored form (what `--json` prints) too.
    let j = serde_json::to_value(&late).unwrap();
    assert_eq!(j["status"], "flagged");
    assert_eq!(j["doubts"][0]["kind"], "limited_by_fwbench");
    // On time for its update: ok.
    assert_eq!(flow(20_000_000, true).status, Status::Ok);
    // No events: 118.7 ms of 3 s is within the tenth; 400 ms is not.
    assert_eq!(flow(118_700_000, false).status, Status::Ok);
    let plain = flow(400_000_000, false);
    assert_eq!(plain.status, Status::Flagged);
    assert!(
        plain
            .error
            .as_deref()
            .unwrap()
            .contains("more than 10 % of the trial's 3.0 s"),
        "{:?}",
        plain.error
    );
}

/// `fwbench newflows` at its default of one flow sent one datagram in 0.45 ms and
/// stated "2235 new flows/s admitted", `ok`: one packet times no rate. Two do.
#[test]
fn a_single_packet_times_no_rate() {
    let mut one = packet_step(2_235.0, 1, 1, 0.000_45, 0);
    one.judge_witness();
    assert_eq!(one.status, Status::Flagged);
    assert_eq!(one.doubts[0].kind, results::DoubtKind::TooFew);
    assert!(
        one.error
            .as_deref()
            .unwrap()
            .contains("1 packet(s) sent: no rate can be timed from fewer than two"),
        "{:?}",
        one.error
    );
    let mut two = packet_step(2_000.0, 2, 2, 0.001, 0);
    two.judge_witness();
    assert_eq!(two.status, Status::Ok, "{:?}", two.doubts);
}

/// A trial whose update failed did not measure the event it was asked to: it is
/// flagged with the update's error, never `ok` (an expiry add that ended inside the
/// baseline used to leave its trial `ok`, counted only in the findings).
#[test]
fn a_trial_whose_update_failed_is_flagged_with_the_error() {
    let with = |error: Option<&str>| {
        let mut o = packet_step(10_000.0, 30_000, 30_000, 3.0, 0);
        if let Some(Figures::Packet(s)) = o.figures.as_mut() {
            let mut e = crate::workloads::events::planted_summary(5000);
            e.updates[0].row.error = error.map(str::to_string);
            s.events = Some(Box::new(e));
        }
        o.judge_witness();
        o
    };
    assert_eq!(with(None).status, Status::Ok);
    let failed = with(Some("the add ended inside the baseline"));
    assert_eq!(failed.status, Status::Flagged);
    assert_eq!(failed.doubts.len(), 1, "{:?}", failed.doubts);
    assert_eq!(failed.doubts[0].kind, results::DoubtKind::UpdateFailed);
    assert_eq!(
        failed.error.as_deref(),
        Some("update failed: update 0 of event 0 (add 1): the add ended inside the baseline")
    );
    let j = serde_json::to_value(&failed).unwrap();
    assert_eq!(j["doubts"][0]["kind"], "update_failed");
}

/// A flow at a rate above what the path forwards, in a trial its queues outlast: no
/// loss, the offered rate received, and the delay rising evenly through the trial (as
/// measured here: 4 125 pps through 20 000 nft rules for 1 s, from 0.7 to 350 ms at
/// the 99th percentile). The trial is flagged, saying how little the path may forward;
/// it stays `ok` where the delays stand (its 90th percentile at three-quarters of the
/// range, judged over 0.5 s, where the range alone would flag it), with updates (whose
/// stalls are the experiment's), for a flood (no rate to hold) and without the limit's
/// counters (nothing to tell a paced trial by), and where the sender's lateness
/// reached half the growth (the growth may be its own; beyond a tenth of the trial it
/// is flagged as the sender's).
#[test]
fn a_queue_filling_through_a_trial_flags_the_rate_it_received() {
    use crate::limited_by::{Limit, LimitedBy, RateCounters};
    let flow = |owd_us: [f64; 5],
                elapsed_s: f64,
                sent: u64,
                paced: Option<bool>,
                update: bool,
                lag_ns: u64| {
        let mut o = packet_step(4125.0, sent, sent, elapsed_s, lag_ns);
        if let Some(Figures::Packet(s)) = o.figures.as_mut() {
            s.owd = crate::limited_by::owd_us(sent, owd_us);
            s.limited_by = paced.map(|paced| {
                Box::new(Limit {
                    by: LimitedBy::Nothing,
                    why: "the offered rate got through".into(),
                    sender_cpu: None,
                    gateway_cpu: None,
                    sink_cpu: None,
                    shared_cpu: None,
                    in_driver: false,
                    counters: Some(RateCounters {
                        paced,
                        scheduled: (4125.0 * elapsed_s) as u64,
                        sent,
                        received: sent,
                        ..Default::default()
                    }),
                })
            });
            if update {
                s.events = Some(Box::new(crate::workloads::events::planted_summary(5000)));
            }
        }
        o.judge_witness();
        o
    };
    let rising = [743.9, 180_092.9, 318_767.1, 349_962.2, 353_632.3];
    let queued = flow(rising, 1.0, 4125, Some(true), false, 0);
    assert_eq!(queued.status, Status::Flagged);
    assert_eq!(queued.doubts.len(), 1, "{:?}", queued.doubts);
    assert_eq!(queued.doubts[0].kind, results::DoubtKind::QueueGrowing);
    assert_eq!(
        queued.error.as_deref(),
        Some(
            "queue growing: the one-way delay rose evenly through the trial, from 0.7 ms to \
             350.0 ms (99th percentile; median 180.1 ms): a queue on the path filled, and the \
             rate received counts what it held — the path forwards as little as 3057 pps, \
             25.9 % below the 4125 pps received over the 1-s trial (a longer trial, -t, tells)"
        )
    );
    let j = serde_json::to_value(&queued).unwrap();
    assert_eq!(j["doubts"][0]["kind"], "queue_growing");
    // Evenly spread within a millisecond: no queue worth the name (under 2 %).
    let jitter = [289.8, 700.0, 1100.0, 1180.0, 1196.0];
    assert_eq!(
        flow(jitter, 1.0, 4125, Some(true), false, 0).status,
        Status::Ok
    );
    let standing = [171.3, 6144.0, 10_985.5, 14_377.0, 18_317.3];
    assert_eq!(
        flow(standing, 0.5, 2062, Some(true), false, 0).status,
        Status::Ok
    );
    assert_eq!(
        flow(rising, 1.0, 4125, Some(true), true, 0).status,
        Status::Ok
    );
    // A sender late by half the growth or more: its lateness may be the growth (within
    // a tenth of a 2-s trial: nothing said; beyond a tenth of a 1-s one, the sender is
    // named, not the path); late by a little, the path's.
    assert_eq!(
        flow(rising, 2.0, 8250, Some(true), false, 180_000_000).status,
        Status::Ok
    );
    let late = flow(rising, 1.0, 4125, Some(true), false, 300_000_000);
    assert_eq!(late.doubts.len(), 1, "{:?}", late.doubts);
    assert_eq!(late.doubts[0].kind, results::DoubtKind::LimitedByFwbench);
    let a_little = flow(rising, 1.0, 4125, Some(true), false, 10_000_000);
    assert_eq!(a_little.doubts[0].kind, results::DoubtKind::QueueGrowing);
    assert_eq!(
        flow(rising, 1.0, 4125, Some(false), false, 0).status,
        Status::Ok
    );
    assert_eq!(flow(rising, 1.0, 4125, None, false, 0).status, Status::Ok);
}

/// A connection trial's client as it reports: `sessions` completed, `failed` (of them
/// `corrupt`) with `errors`, over 1 s.
fn conn_client(
    mode: proto::ConnMode,
    sessions: u64,
    failed: u64,
    corrupt: u64,
    errors: &[(&str, u64)],
) -> proto::SessionClientResults {
    let timed = proto::Durations {
        count: sessions,
        mean_ns: 100_000.0,
        max_ns: 200_000,
        ..Default::default()
    };
    proto::SessionClientResults {
        mode,
        parallel: 1,
        sessions,
        failed,
        errors: errors.iter().map(|(e, n)| (e.to_string(), *n)).collect(),
        elapsed_ns: 1_000_000_000,
        bytes: sessions * 512,
        corrupt,
        session: timed,
        connect: timed,
        ttfb: timed,
        ttlb: timed,
        overhead: None,
        session_us: vec![],
        hold: None,
        external: None,
        events: None,
    }
}

/// The connection trial of `c`, judged as the trial driver judges it.
fn judged_conn(c: proto::SessionClientResults) -> Outcome {
    let s = crate::workloads::conn::combine(c, proto::TcpServerResults::default(), None);
    let mut o = Outcome {
        figures: Some(Figures::Conn(Box::new(s))),
        ..Outcome::started("t0".into())
    };
    o.judge_witness();
    o
}

/// A proxy whose upstream is unreachable: every session ends with a FIN and no body
/// ("corrupt body: short"), and the client gives up after 100 — it stayed `ok` with
/// 0 sessions/s and 0 goodput, averaged into its configuration's mean. None completed:
/// flagged, saying how many of how many and why.
#[test]
fn a_connection_trial_without_a_completed_session_is_flagged() {
    let short = "corrupt body: end of stream before the full length";
    let o = judged_conn(conn_client(
        proto::ConnMode::Bulk,
        0,
        100,
        100,
        &[(short, 100)],
    ));
    assert_eq!(o.status, Status::Flagged, "{:?}", o.doubts);
    let only = crate::search::only_doubt(&o.doubts);
    assert_eq!(only.kind, results::DoubtKind::EmptyWindow);
    assert_eq!(
        only.why,
        format!(
            "none of 100 sessions completed, 100 of them with a corrupt body (100 × \
             {short}): no rate or time was measured"
        )
    );
    assert!(o
        .error
        .as_deref()
        .unwrap()
        .starts_with("empty window: none of 100"));
}

/// Some sessions failed: the rates and times count only those that completed — flagged
/// with how many of how many and the errors; a trial where all completed stays `ok`.
#[test]
fn a_connection_trial_with_failed_sessions_is_flagged() {
    let errors = [
        ("read: timed out after 5000 ms", 9),
        ("corrupt body: a byte differs from the pattern", 3),
    ];
    let o = judged_conn(conn_client(proto::ConnMode::Sessions, 2988, 12, 3, &errors));
    assert_eq!(o.status, Status::Flagged, "{:?}", o.doubts);
    let only = crate::search::only_doubt(&o.doubts);
    assert_eq!(only.kind, results::DoubtKind::UnexpectedLoss);
    assert!(
        only.why.starts_with(
            "12 of 3000 sessions failed, 3 of them with a corrupt body (9 × read: timed out \
             after 5000 ms; 3 × corrupt body: a byte differs from the pattern): sessions/s, \
             goodput and the session times count only the 2988 that completed"
        ),
        "{}",
        only.why
    );
    let clean = judged_conn(conn_client(proto::ConnMode::Http, 10, 0, 0, &[]));
    assert_eq!(clean.status, Status::Ok, "{:?}", clean.doubts);
    // Held connections: what stopped the opening is their figure, not a doubt.
    let mut held = conn_client(proto::ConnMode::Hold, 40, 1, 0, &[("connect: refused", 1)]);
    held.session = proto::Durations::default();
    assert_eq!(judged_conn(held).status, Status::Ok);
}

/// With gateway events the sessions are the background: those an update blocked are
/// the measurement (the events' windows count them), not a doubt; corrupt ones are.
#[test]
fn sessions_an_update_blocked_are_no_doubt_but_corrupt_ones_are() {
    let events: crate::workloads::events::EventsSummary = serde_json::from_value(
        serde_json::json!({"bin_ns": 1_000_000, "marker_src": null, "updates": [],
                           "bins_lost": 5, "unbinned_lost": 0}),
    )
    .unwrap();
    let with_events = |corrupt: u64| {
        let c = conn_client(proto::ConnMode::Sessions, 995, 5, corrupt, &[("x", 5)]);
        let mut s = crate::workloads::conn::combine(c, proto::TcpServerResults::default(), None);
        s.events = Some(Box::new(events.clone()));
        s.doubts()
    };
    assert_eq!(with_events(0), vec![]);
    let d = with_events(1);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].kind, results::DoubtKind::UnexpectedLoss);
}

/// A download longer than the duration histograms hold (`fwbench http --size 64G` at
/// ~400 MB/s, ~170 s): its mean counts it as 100 s — flagged, never a measurement.
#[test]
fn a_duration_past_the_histograms_flags_the_trial() {
    let mut c = conn_client(proto::ConnMode::Http, 1, 0, 0, &[]);
    c.ttlb.max_ns = 170_000_000_000;
    c.session.max_ns = 170_100_000_000;
    c.ttlb.mean_ns = 1e11;
    let o = judged_conn(c.clone());
    assert_eq!(o.status, Status::Flagged);
    let only = crate::search::only_doubt(&o.doubts);
    assert_eq!(only.kind, results::DoubtKind::LimitedByFwbench);
    assert_eq!(
        only.why,
        "durations past the 137.4 s fwbench's histograms hold (the longest: session 170.1 s, \
         last byte 170.0 s) were counted as 100 s: their mean, sd and top percentiles \
         understate them"
    );
    // The longest the histograms hold is no doubt.
    c.ttlb.max_ns = traffic::hist::HELD_NS;
    c.session.max_ns = traffic::hist::HELD_NS;
    assert_eq!(judged_conn(c.clone()).status, Status::Ok);
    // Bulk's zero-byte sessions, whose mean is the overhead split's: likewise.
    c.mode = proto::ConnMode::Bulk;
    c.overhead = Some(proto::Durations {
        count: 10,
        mean_ns: 1e10,
        max_ns: 200_000_000_000,
        ..Default::default()
    });
    let o = judged_conn(c);
    assert!(
        crate::search::only_doubt(&o.doubts)
            .why
            .contains("(the longest: zero-byte session 200.0 s)"),
        "{:?}",
        o.doubts
    );
}
