//! Unit tests of `events.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;

fn bins(received: &[u32], lost: &[u32], first: (u32, u64), highest: (u32, u64)) -> FlowBins {
    FlowBins {
        width_ns: BIN_NS,
        origin_ns: 1_000_000_000_000,
        received: received.to_vec(),
        lost: lost.to_vec(),
        owd_sum_us: received.iter().map(|&n| u64::from(n) * 40).collect(),
        owd_max_us: received.iter().map(|_| 40).collect(),
        first: Some(first),
        highest: Some(highest),
        first_owd_us: 0,
        highest_owd_us: 0,
        longest_gap: None,
    }
}

#[test]
fn time_to_effect_stall_and_loss_from_the_bins() {
    // Marker: 10 packets per ms, received up to seq 49 (tx T0 + 4.9 ms), then lost.
    let marker = bins(
        &[10, 10, 10, 10, 10, 0, 0, 0],
        &[0, 0, 0, 0, 0, 10, 10, 10],
        (0, T0),
        (49, T0 + 4_900_000),
    );
    // Background: 2 ms without a packet at 5..7 ms.
    let bg = bins(
        &[10, 10, 10, 10, 10, 0, 0, 10],
        &[0, 0, 0, 0, 0, 10, 10, 0],
        (0, T0),
        (79, T0 + 7_900_000),
    );
    let row = UpdateRow {
        method: UpdateMethod::Batch,
        installed: 1000,
        commit_ns: 1_500_000,
        ..row(UpdateKind::Add, T0 + 4_000_000)
    };
    let at = flow_effect_stamp(row.kind, &marker).map(|t| (t, BIN_NS));
    let background = [Background::flow(&bg)];
    let u = effect(
        row,
        at,
        &background,
        Unit::Packets,
        &Base::default(),
        traffic_end(&background),
        0,
    );
    // First lost marker packet: seq 50 at 5.0 ms; the commit started at 4.0 ms.
    assert!((u.time_to_effect_ms.unwrap() - 1.0).abs() < 1e-9, "{u:?}");
    assert_eq!(u.stall_ms, Some(2.0));
    assert_eq!(u.lost, Some(20));
    assert_eq!(u.owd_max_us, 40);
    // Nothing lost before the update: all 20 are its; 10 packets a ms offered.
    assert_eq!(u.baseline_loss, Some(0.0));
    assert_eq!(u.lost_beyond_baseline, Some(20));
    assert!((u.blocked_ms.unwrap() - 2.0).abs() < 1e-9, "{u:?}");
    assert!(u.holds(), "{u:?}");
    assert_eq!(
        text(&one(Unit::Packets, u), "nft"),
        "\n  adding 1 rule to 1000 with nft by batch took 1.50 ms, took effect after 1.0 ms; \
         forwarding stalled 2 ms; 20 packets lost, effectively blocked 2.0 ms; one-way \
         delay up to 0.04 ms in its window"
    );
}

#[test]
fn a_deletion_takes_effect_at_the_first_packet_through() {
    let m = bins(
        &[0, 0, 10],
        &[10, 10, 0],
        (20, T0 + 2_000_000),
        (29, T0 + 2_900_000),
    );
    assert_eq!(
        flow_effect_stamp(UpdateKind::Delete, &m),
        Some(T0 + 2_000_000)
    );
    // Nothing lost after the highest: no drop took effect.
    assert_eq!(flow_effect_stamp(UpdateKind::Add, &m), None);
}

/// Elements expiring together: the marker passed until its element's add (seq 0–9),
/// was dropped until the element expired (10–29), then passed again — the effect is
/// the first packet after that run, plus its bin's mean one-way delay (40 µs), and the
/// packets the element dropped are the run's; a shorter run lost at the start does not
/// date it (seen in a real run: −3 s, withheld as impossible). A marker that never
/// passed before the add is dated by its first packet, as a deletion is.
#[test]
fn an_expiry_takes_effect_at_the_first_packet_after_the_run_its_element_dropped() {
    let mut m = bins(
        &[10, 0, 0, 10],
        &[0, 10, 10, 0],
        (0, T0),
        (39, T0 + 3_900_000),
    );
    m.longest_gap = Some((9, T0 + 900_000, 30, T0 + 3_000_000));
    assert_eq!(
        flow_effect_stamp(UpdateKind::ExpireElements, &m),
        Some(T0 + 3_000_000 + 40_000)
    );
    // The general rule (the first packet, if some before it were lost) sees none.
    assert_eq!(flow_effect_stamp(UpdateKind::RemoveElements, &m), None);
    let u = on_steady(
        10,
        &[0; 10],
        row(UpdateKind::ExpireElements, T0 + 2_990_000),
        Some((T0 + 3_040_000, BIN_NS)),
    );
    assert!(u.time_to_effect_ms.is_some(), "{u:?}");
    assert_eq!(marker_dropped(&[u], &[(40, &m)]), Some(20));
    // Its first 5 packets lost at the start (a neighbour not resolved yet): the
    // longer run is still the element's.
    m.first = Some((5, T0 + 500_000));
    assert_eq!(
        flow_effect_stamp(UpdateKind::ExpireElements, &m),
        Some(T0 + 3_000_000 + 40_000)
    );
    m.first = Some((10, T0 + 1_000_000));
    m.longest_gap = None;
    assert_eq!(
        flow_effect_stamp(UpdateKind::ExpireElements, &m),
        Some(T0 + 1_000_000)
    );
}

/// The first bin's send time of the planted backgrounds, ns since the epoch.
const T0: u64 = 1_000_000_000_000;

/// One flow update's effect against a [`steady`] background from [`T0`] of `per_ms`
/// packets a ms, losing `lost[i]` of bin i, without a quiet window.
fn on_steady(per_ms: u32, lost: &[u32], r: UpdateRow, at: Option<(u64, u64)>) -> UpdateEffect {
    plain(r, at, &[Background::flow(&steady(T0, per_ms, lost))])
}

/// One flow update's effect against `background`, without a quiet window.
fn plain(r: UpdateRow, at: Option<(u64, u64)>, background: &[Background]) -> UpdateEffect {
    effect(
        r,
        at,
        background,
        Unit::Packets,
        &Base::default(),
        traffic_end(background),
        0,
    )
}

/// One flow update's effect against `background` and `base`, the marker not dated.
fn undated(r: UpdateRow, background: &[Background], base: &Base, end: Option<u64>) -> UpdateEffect {
    effect(r, None, background, Unit::Packets, base, end, 0)
}

/// The summary of one update `u` with a background in `unit`s.
fn one(unit: Unit, u: UpdateEffect) -> EventsSummary {
    EventsSummary {
        unit,
        updates: vec![u],
        ..planted_summary(0)
    }
}

/// The planted marker update's row (into 100 rules), as a `kind` by method per-rule
/// started at `start` and committed in 2 ms.
fn row(kind: UpdateKind, start: u64) -> UpdateRow {
    UpdateRow {
        kind,
        method: UpdateMethod::PerRule,
        start_unix_ns: start,
        commit_ns: 2_000_000,
        ..planted_summary(100).updates.remove(0).row
    }
}

/// Transactions: the marker's first failure after its last completed one dates a
/// drop (plus half the round trip); the background's longest latency in the
/// window is the stall; its failures there are the loss.
#[test]
fn a_request_response_marker_and_background_from_their_transactions() {
    let t0 = 1_700_000_000_000_000_000u64;
    let ms = 1_000_000;
    let mut marker = ::traffic::bins::Txns::new(BIN_NS, t0);
    let mut bg = ::traffic::bins::Txns::new(BIN_NS, t0);
    // Marker: a cycle every 0.1 ms (round trip 80 µs) until 12.3 ms, then lost.
    for i in 0..200u64 {
        let at = t0 + i * ms / 10;
        if at < t0 + 12 * ms + 300_000 {
            marker.done(at, 80_000);
        } else {
            marker.failed(at);
        }
    }
    // Background: one every 0.5 ms (round trip 60 µs), one of 4.5 ms at 11 ms and
    // two lost at 13 ms.
    for i in 0..40u64 {
        bg.done(t0 + i * ms / 2, 60_000);
    }
    bg.done(t0 + 11 * ms + 100_000, 4_500_000);
    bg.failed(t0 + 13 * ms);
    bg.failed(t0 + 13 * ms + 100_000);
    let streams = TxnStreams {
        marker_source: None,
        marker: marker.finish(),
        background: bg.finish(),
        background_streams: 3,
    };
    let start = t0 + 10 * ms;
    let at = txn_effect_stamp(UpdateKind::Add, &streams.marker);
    // The first lost cycle started at 12.3 ms; half of 80 µs later it was there.
    assert_eq!(at, Some(t0 + 12 * ms + 300_000 + 40_000));
    let background = [Background::txns(&streams.background)];
    let end = traffic_end(&background);
    let u = effect(
        row(UpdateKind::Add, start),
        at.map(|t| (t, BIN_NS)),
        &background,
        Unit::Echoes,
        &Base::default(),
        end,
        0,
    );
    assert!((u.time_to_effect_ms.unwrap() - 2.34).abs() < 1e-9, "{u:?}");
    assert_eq!(u.stall_ms, Some(4.5));
    assert_eq!(u.owd_max_us, 4_500);
    assert_eq!(u.lost, Some(2));
    // A deletion: nothing of the marker got through before, so no effect is dated.
    assert_eq!(txn_effect_stamp(UpdateKind::Delete, &streams.marker), None);
    assert_eq!(
        text(&one(Unit::Echoes, u), "nft"),
        "\n  adding 1 rule to 100 with nft by per-rule took 2.00 ms, took effect after 2.3 ms; \
         the longest background round trip was 4.50 ms; 2 echoes lost or unsent, effectively \
         blocked 1.0 ms"
    );
}

/// A background of `per_ms` packets a ms from `t0` for `ms` bins, losing `lost[i]`
/// of bin i (the rest received).
fn steady(t0: u64, per_ms: u32, lost: &[u32]) -> FlowBins {
    let rx: Vec<u32> = lost.iter().map(|l| per_ms - l).collect();
    let n = lost.len() as u64;
    bins(
        &rx,
        lost,
        (0, t0),
        ((n * u64::from(per_ms)) as u32 - 1, t0 + n * 1_000_000),
    )
}

/// The README's tour at 20 000 rules: the sender was seconds behind, nothing of
/// the background reached the update's window. No stall or loss figure, flagged
/// with why — never "stalled 0 ms; 0 packets lost".
#[test]
fn a_window_without_background_has_no_stall_figure_and_says_why() {
    // Background only in the first 10 ms; the update starts 2 s later.
    let r = row(UpdateKind::Add, T0 + 2_000_000_000);
    let u = on_steady(10, &[0; 10], r, None);
    assert_eq!(u.stall_ms, None);
    assert_eq!(u.doubts[0].kind, DoubtKind::EmptyWindow, "{u:?}");
    let s = one(Unit::Packets, u);
    let t = text(&s, "nft");
    assert!(
        t.contains("no background packets in its window: no stall figure"),
        "{t}"
    );
    assert!(t.contains("[flagged: empty window: "), "{t}");
    assert!(!t.contains("stalled 0 ms"), "{t}");
    assert_eq!(s.doubts()[0].kind, DoubtKind::EmptyWindow);
    // The commit also ended after the traffic: said too (a reload's "none passed"
    // rests on it).
    let kinds: Vec<DoubtKind> = s.updates[0].doubts.iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DoubtKind::EmptyWindow, DoubtKind::Unobserved]);
}

/// A gateway that lost 95 % of the background before the update: its stall is
/// flagged "overloaded", and only loss beyond the window before counts.
#[test]
fn an_overloaded_gateway_flags_the_update_and_credits_only_loss_beyond_it() {
    // 20 packets a ms, 19 of them lost in every bin, for 400 ms.
    let r = row(UpdateKind::Add, T0 + 100_000_000);
    let u = on_steady(20, &[19; 400], r, None);
    assert_eq!(u.doubts.len(), 1, "{u:?}");
    assert_eq!(u.doubts[0].kind, DoubtKind::Overloaded);
    assert!(u.doubts[0].why.contains("lost 95.0 %"), "{:?}", u.doubts);
    assert!((u.baseline_loss.unwrap() - 0.95).abs() < 1e-9);
    // The same loss rate throughout: nothing beyond it.
    assert_eq!(u.lost_beyond_baseline, Some(0));
    assert!(!u.holds());
}

/// A time to effect dated before the commit began cannot be: withheld by the
/// summary's judgement (after every clock correction), with why.
#[test]
fn a_negative_time_to_effect_is_withheld_with_why() {
    let r = row(UpdateKind::Add, T0 + 100_000_000);
    // The marker's affected packet dated 50.04 ms before the commit's start; the
    // stamps date to within 4.2 ms.
    let at = Some((T0 + 100_000_000 - 50_040_000, 4_200_000));
    let u = on_steady(10, &[0; 400], r.clone(), at);
    assert!(u.time_to_effect_ms.unwrap() < 0.0);
    let mut s = one(Unit::Packets, u);
    s.judge();
    let u = &s.updates[0];
    assert_eq!(u.time_to_effect_ms, None);
    assert_eq!(u.doubts[0].kind, DoubtKind::Impossible);
    assert!(
        u.doubts[0]
            .why
            .contains("-50.04 ms, beyond the stamps' resolution of 4.2 ms"),
        "{:?}",
        u.doubts
    );
    assert!(!text(&s, "nft").contains("took effect"));
    // −0.34 ms is within the resolution: the change acted at once (0), no doubt.
    let at = Some((T0 + 100_000_000 - 340_000, 4_200_000));
    let mut s = one(Unit::Packets, on_steady(10, &[0; 400], r, at));
    s.judge();
    assert_eq!(s.updates[0].time_to_effect_ms, Some(0.0));
    assert!(s.updates[0].holds(), "{:?}", s.updates[0].doubts);
    assert_eq!(s.updates[0].effect_resolution_ms, Some(4.2));
}

/// A batch of 64 over 2 flows at 10 kpps each (0.1 ms apart): 3.2 ms plus a bin.
#[test]
fn the_stamps_resolution_is_a_bin_and_a_send_batch() {
    let m = bins(&[10; 10], &[0; 10], (0, T0), (99, T0 + 9_900_000));
    assert_eq!(flow_resolution(&m, 64, 2), 1_000_000 + 32 * 100_000);
    assert_eq!(flow_resolution(&m, 1, 1), 1_100_000);
}

/// A commit that ended after the traffic: its effect was not observed.
#[test]
fn a_commit_that_outlives_the_traffic_says_so() {
    // Starts at 90 ms, commits for 30 ms: the traffic ended at 100 ms.
    let r = UpdateRow {
        commit_ns: 30_000_000,
        ..row(UpdateKind::Add, T0 + 90_000_000)
    };
    let u = on_steady(10, &[0; 100], r, None);
    assert!(
        u.doubts
            .iter()
            .any(|d| d.kind == DoubtKind::Unobserved && d.why.contains("20.0 ms after")),
        "{u:?}"
    );
}

/// Issue 37: a commit that outlived the traffic, its marker dated anyway (packets in
/// flight when the traffic stopped look lost after the last one received — 2 254.6 ms
/// stored for iptables-legacy at 20 000 rules): the time to effect is withheld
/// everywhere — the figure, the terminal, the JSON and the store's row — with why.
#[test]
fn an_unobserved_update_stores_no_time_to_effect() {
    let r = UpdateRow {
        commit_ns: 30_000_000,
        ..row(UpdateKind::Add, T0 + 90_000_000)
    };
    // The marker's stamps say 5 ms after the start: within the traffic, before the
    // commit returned.
    let u = on_steady(10, &[0; 100], r, Some((T0 + 95_000_000, BIN_NS)));
    assert!(
        u.doubts.iter().any(|d| d.kind == DoubtKind::Unobserved),
        "{u:?}"
    );
    assert_eq!(u.time_to_effect_ms, None, "{:?}", u.doubts);
    assert_eq!(u.effect_resolution_ms, None, "{:?}", u.doubts);
    let mut s = one(Unit::Packets, u);
    say_why_no_effect(&mut s.updates, Unit::Packets);
    s.judge();
    assert_eq!(s.updates[0].no_time_to_effect, None, "the doubt says why");
    let rows = records(&s);
    assert_eq!(rows[0].time_to_effect_ms, None, "{:?}", rows[0]);
    assert!(
        rows[0]
            .doubts
            .as_deref()
            .unwrap_or("")
            .contains("not observed"),
        "{:?}",
        rows[0]
    );
    let json = serde_json::to_value(&s).unwrap();
    assert!(
        json["updates"][0].get("time_to_effect_ms").is_none(),
        "{json}"
    );
    let t = text(&s, "nft");
    assert!(t.contains("time to effect withheld"), "{t}");
    assert!(!t.contains("took effect after"), "{t}");
}

/// Issue 37: the marker's packets the update's rule dropped, as intended, counted from
/// its flows' sequence numbers — after the highest received for a drop, before the first
/// for a deletion — only for an update whose effect on the marker was dated.
#[test]
fn the_markers_intended_drops_are_counted_from_its_sequence() {
    // Received up to seq 49 of 80 sent: 30 dropped by the rule.
    let m = bins(&[10; 5], &[0; 5], (0, T0), (49, T0 + 4_900_000));
    let mut u = plain(
        row(UpdateKind::Add, T0 + 4_000_000),
        Some((T0 + 5_000_000, BIN_NS)),
        &[],
    );
    assert!(u.time_to_effect_ms.is_some());
    assert_eq!(
        marker_dropped(std::slice::from_ref(&u), &[(80, &m), (80, &m)]),
        Some(60)
    );
    // Its effect not dated (or withheld): nothing is excused.
    u.time_to_effect_ms = None;
    assert_eq!(marker_dropped(std::slice::from_ref(&u), &[(80, &m)]), None);
    // A deletion: the 20 before the first received.
    let d = bins(
        &[0, 0, 10],
        &[10, 10, 0],
        (20, T0 + 2_000_000),
        (29, T0 + 2_900_000),
    );
    let u = plain(
        row(UpdateKind::Delete, T0 + 1_000_000),
        Some((T0 + 2_000_000, BIN_NS)),
        &[],
    );
    assert_eq!(
        marker_dropped(std::slice::from_ref(&u), &[(30, &d)]),
        Some(20)
    );
}

/// A churn replay's first replacement holds the marker's rule until the next one puts
/// the rule set back without it (kube-proxy.trace: about 1 000 marker packets lost in
/// 90 ms, no time to effect, and the trial read "loss 0.32 %, limited by gateway"): the
/// marker's losses sent between the first's start and the second's commit were the
/// rule's, as intended; one lost outside that span is not excused.
#[test]
fn a_replacements_marker_drops_until_the_next_replacement_are_intended() {
    // 10 a ms; 30 lost at 3..6 ms (the rule), 4 lost at 12 ms (not the rule's).
    let mut lost = [0u32; 16];
    lost[3..6].copy_from_slice(&[10, 10, 10]);
    lost[12] = 4;
    let received: Vec<u32> = lost.iter().map(|&l| 10 - l).collect();
    let m = bins(&received, &lost, (0, T0), (159, T0 + 15_900_000));
    let first = UpdateRow {
        marker: true,
        ..row(UpdateKind::Replace, T0 + 3_000_000)
    };
    let second = UpdateRow {
        event: 1,
        marker: false,
        ..row(UpdateKind::Replace, T0 + 4_500_000)
    };
    let mut updates: Vec<UpdateEffect> = [first, second]
        .into_iter()
        .map(|r| plain(r, None, &[]))
        .collect();
    say_why_no_effect(&mut updates, Unit::Packets);
    assert!(updates[0].time_to_effect_ms.is_none(), "{:?}", updates[0]);
    assert_eq!(marker_dropped(&updates, &[(160, &m)]), Some(30));
    // The second replacement failed: nothing took the rule out, nothing is excused
    // without a dated effect.
    updates[1].row.error = Some("exit 1".into());
    assert_eq!(marker_dropped(&updates, &[(160, &m)]), None);
}

/// Overlapping windows (`--event-rate 10`): the trial's loss around its updates
/// counts each bin once (the sum over windows counted 707 where the union held 408).
#[test]
fn overlapping_windows_count_their_loss_once() {
    let mut lost = vec![0u32; 1000];
    lost[200] = 5;
    let bg = steady(T0, 10, &lost);
    let background = [Background::flow(&bg)];
    // Two updates 100 ms apart: both windows (50 ms before, 250 after) hold bin 200.
    let rows = [
        row(UpdateKind::Add, T0 + 100_000_000),
        row(UpdateKind::Add, T0 + 200_000_000),
    ];
    let per_window: u64 = rows
        .iter()
        .filter_map(|r| undated(r.clone(), &background, &Base::default(), None).lost)
        .sum();
    assert_eq!(per_window, 10);
    assert_eq!(lost_around(&rows, &background), 5);
    // A bin outside every window is not counted.
    assert_eq!(lost_around(&rows[..0], &background), 0);
}

/// Three updates 100 ms apart (`--event-rate 10`) over a background of 100 packets a
/// ms losing 1 of each bin (the quiet window's 1 %), and all of the bins at 600..605,
/// 700..705, 800..805, 840..850, 900..910 and 1000..1010 ms: 45 bins × 99 packets
/// beyond the baseline. Windows 550..852, 650..952 and 750..1052 ms.
fn three_fast() -> (FlowBins, [UpdateRow; 3]) {
    let ms = 1_000_000u64;
    let dark = [
        (600, 605),
        (700, 705),
        (800, 805),
        (840, 850),
        (900, 910),
        (1000, 1010),
    ];
    let bg = steady_with_dark(T0, 1200, 100, 1, &dark);
    let at = |i: u32, start_ms: u64| UpdateRow {
        index: i,
        ..row(UpdateKind::Add, T0 + start_ms * ms)
    };
    (bg, [at(0, 600), at(1, 700), at(2, 800)])
}

/// Each update's loss beyond the baseline in no earlier update's window: the first is
/// credited with all of its window's (what no earlier window holds: equal to its
/// `lost_beyond_baseline`), the later ones only with their windows' bins past the
/// earlier windows' end — and their sum is the union's loss beyond the baseline, each
/// lost packet once, where the per-update figures count the shared bins two or three
/// times. Rows given out of order are placed by their start; an update that failed or
/// never ran has no window and claims nothing.
#[test]
fn overlapping_windows_credit_each_lost_packet_once() {
    let (bg, rows) = three_fast();
    let background = [Background::flow(&bg)];
    let base = Base {
        quiet: quiet_window(&rows, &background),
        ..Base::default()
    };
    let q = base.quiet.clone().unwrap();
    assert_eq!((q.received, q.lost), (49_500, 500));
    let end = traffic_end(&background);
    let of = |rows: Vec<UpdateRow>| {
        let us = effects(rows, &background, Unit::Packets, &base, end, |_| None);
        let by_index = |i: u32| {
            us.iter()
                .find(|u| u.row.index == i && u.row.error.is_none())
        };
        let figures = |i| by_index(i).map(|u| (u.lost_beyond_baseline, u.lost_once));
        (figures(0), figures(1), figures(2), us)
    };
    let (a, b, c, us) = of(rows.to_vec());
    // 25, 30 and 35 dark bins in the three windows; 25, 10 and 10 in no earlier one.
    assert_eq!(a, Some((Some(2475), Some(2475))));
    assert_eq!(b, Some((Some(2970), Some(990))));
    assert_eq!(c, Some((Some(3465), Some(990))));
    assert!(us.iter().all(|u| u.holds()), "{us:?}");
    // The sum is the union's loss (550..1052 ms) beyond the quiet window's rate.
    let once: u64 = us.iter().filter_map(|u| u.lost_once).sum();
    let union = lost_around(&rows, &background);
    assert_eq!(union, 502 + 4455);
    assert_eq!(once, (union as f64 - q.loss * 502.0 * 100.0).round() as u64);
    assert_eq!(once, 45 * 99);
    // Out of order, beside a failed update (a window of it would hold 900..910) and one
    // that never ran: the same shares.
    let failed = UpdateRow {
        index: 3,
        error: Some("exit 1".into()),
        ..row(UpdateKind::Add, T0 + 660_000_000)
    };
    let never = UpdateRow {
        index: 4,
        ..row(UpdateKind::Add, 0)
    };
    let mixed = vec![
        rows[2].clone(),
        failed,
        rows[0].clone(),
        never,
        rows[1].clone(),
    ];
    let (a2, b2, c2, us) = of(mixed);
    assert_eq!((a2, b2, c2), (a, b, c));
    assert_eq!(us[1].lost_once, None);
    assert_eq!(us[3].lost_once, None);
    // At the same start, the one reported first holds the shared bins.
    let twin = UpdateRow {
        index: 1,
        ..rows[0].clone()
    };
    let (a3, b3, _, _) = of(vec![rows[0].clone(), twin.clone()]);
    assert_eq!(a3, Some((Some(2475), Some(2475))));
    assert_eq!(b3, Some((Some(2475), Some(0))));
    let (a4, b4, _, _) = of(vec![twin, rows[0].clone()]);
    assert_eq!(
        (a4, b4),
        (Some((Some(2475), Some(0))), Some((Some(2475), Some(2475))))
    );
}

/// Where no earlier window reaches into an update's, its loss counted once is its
/// loss beyond the baseline exactly — against the quiet window and against the 50 ms
/// before it (no quiet window) alike, over uneven losses; against the 50 ms before
/// it, a later window's share is that baseline's rate per bin over the bins from the
/// one holding the earlier window's end.
#[test]
fn a_window_apart_counts_its_loss_once_as_it_is_credited() {
    let ms = 1_000_000u64;
    // Uneven: 1 of 40 lost in every third bin, and 0 to 10 more in each bin of
    // 700..760 and 1300..1340 ms.
    let lost: Vec<u32> = (0..2000u32)
        .map(|i| {
            let burst = (700..760).contains(&i) || (1300..1340).contains(&i);
            u32::from(i % 3 == 0) + if burst { i % 11 } else { 0 }
        })
        .collect();
    let bg = steady(T0, 40, &lost);
    let background = [Background::flow(&bg)];
    let rows = [
        row(UpdateKind::Add, T0 + 700 * ms),
        UpdateRow {
            index: 1,
            ..row(UpdateKind::Add, T0 + 1300 * ms)
        },
    ];
    let quiet = Base {
        quiet: quiet_window(&rows, &background),
        ..Base::default()
    };
    for base in [&quiet, &Base::default()] {
        let us = effects(
            rows.to_vec(),
            &background,
            Unit::Packets,
            base,
            None,
            |_| None,
        );
        for u in &us {
            assert!(u.lost_beyond_baseline.is_some_and(|n| n > 0), "{u:?}");
            assert_eq!(u.lost_once, u.lost_beyond_baseline, "{u:?}");
        }
    }
    // Against the 50 ms before each (no quiet window): the second, 100 ms after the
    // first, keeps the bins past the first window's end (852 ms: 101 of its 303 bins,
    // from the one holding it), less 1 a bin, its baseline's rate.
    let (bg, fast) = three_fast();
    let background = [Background::flow(&bg)];
    let us = effects(
        fast[..2].to_vec(),
        &background,
        Unit::Packets,
        &Base::default(),
        None,
        |_| None,
    );
    assert_eq!(us[1].baseline, Some(BaselineKind::BeforeUpdate));
    assert_eq!(us[0].lost_once, us[0].lost_beyond_baseline);
    assert_eq!(us[1].lost_beyond_baseline, Some(302 + 2970 - 303));
    assert_eq!(us[1].lost_once, Some(100 + 990 - 101));
}

/// The loss counted once reaches the JSON, the store's row and the text's line over
/// the updates: a flow trial's updates as the gateway reports them.
#[test]
fn the_loss_counted_once_is_stored_and_said() {
    let p = crate::plan::build::test_params(
        crate::params::workload::Workload::Flow,
        &[
            ("rate", "200kpps"),
            ("flows", "2"),
            ("engine", "nft"),
            ("duration", "2s"),
            ("event", "add:1@0.6s"),
        ],
    );
    let (bg, rows) = three_fast();
    let sink = UdpSinkResults {
        flows: vec![proto::FlowRx {
            flow: 1,
            received: 1,
            bins: Some(Box::new(bg)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let src = UdpSourceResults {
        sent_per_flow: vec![0, 120_000],
        ..Default::default()
    };
    // A fourth update, 1 s later, apart: the line over the updates is said from four.
    let late = UpdateRow {
        index: 3,
        ..row(UpdateKind::Add, T0 + 1_100_000_000)
    };
    let gateway = GatewayResults {
        updates: rows.iter().cloned().chain([late]).collect(),
        ..Default::default()
    };
    let sources = ["198.18.0.1".parse().unwrap(), "198.18.0.2".parse().unwrap()];
    let s = summarise_flows(&p, &sources, &src, &sink, Some(&gateway)).unwrap();
    let once: Vec<Option<u64>> = s.updates.iter().map(|u| u.lost_once).collect();
    // The fourth's window (1050..1352 ms) starts where the third's ended: 1000..1010
    // is the third's; the fourth lost only the baseline's 1 a bin.
    assert_eq!(
        once,
        [Some(2475), Some(990), Some(990), Some(0)],
        "{:?}",
        s.updates
    );
    let stored: Vec<Option<u64>> = records(&s).iter().map(|r| r.lost_once).collect();
    assert_eq!(stored, once);
    let json = serde_json::to_value(&s.updates[1]).unwrap();
    assert_eq!(json["lost_once"], 990, "{json}");
    assert_eq!(json["lost_beyond_baseline"], 2970, "{json}");
    let back: UpdateEffect = serde_json::from_value(json).unwrap();
    assert_eq!(back, s.updates[1]);
    let t = text(&s, "nft");
    assert!(
        t.contains(
            "4 updates: commit mean 2.00 ms, max 2.00 ms; 5105 background packets lost \
                    around them (4455 beyond the baseline, each counted once)"
        ),
        "{t}"
    );
    // Results stored before it was counted read no figure, never 0.
    let mut old = serde_json::to_value(&s.updates[1]).unwrap();
    old.as_object_mut().unwrap().remove("lost_once");
    let old: UpdateEffect = serde_json::from_value(old).unwrap();
    assert_eq!(old.lost_once, None);
    let t = text(
        &EventsSummary {
            updates: vec![old.clone(), old.clone(), old.clone(), old],
            ..s
        },
        "nft",
    );
    assert!(!t.contains("each counted once"), "{t}");
}

/// An update that ran without a time to effect says why, without a doubt: the
/// repeated replacements of one event (the trial stays `ok`).
#[test]
fn an_update_without_a_time_to_effect_says_why_without_a_doubt() {
    let bg = steady(T0, 10, &[0; 1000]);
    let background = [Background::flow(&bg)];
    let end = traffic_end(&background);
    let at = |i: u32, marker: bool, kind: UpdateKind| {
        let r = UpdateRow {
            index: i,
            marker,
            ..row(kind, T0 + 100_000_000 * u64::from(i + 1))
        };
        undated(r, &background, &Base::default(), end)
    };
    let mut ups = vec![
        at(0, true, UpdateKind::Replace),
        at(1, false, UpdateKind::Replace),
        at(2, false, UpdateKind::Replace),
    ];
    say_why_no_effect(&mut ups, Unit::Packets);
    let why: Vec<&str> = ups
        .iter()
        .map(|u| u.no_time_to_effect.as_deref().unwrap_or(""))
        .collect();
    assert!(
        why[0].starts_with("update 1 of this event replaced the rule set again"),
        "{why:?}"
    );
    assert!(
        why[1].starts_with("this replacement took update 0's rule"),
        "{why:?}"
    );
    assert!(
        why[2].starts_with("the marker's rule went with update 1"),
        "{why:?}"
    );
    assert!(ups.iter().all(UpdateEffect::holds));
    // A trace: its first replacement (the marker's) dated by loss near the end (an
    // overloaded gateway; seen: 9.1 s after a 0.6-s commit), though a later
    // replacement took the marker's rule out again: withheld, with why.
    let dated = |event: u32, marker: bool, at: Option<(u64, u64)>| {
        let r = UpdateRow {
            event,
            marker,
            ..row(UpdateKind::Replace, T0 + 100_000_000 * u64::from(event + 1))
        };
        effect(r, at, &background, Unit::Packets, &Base::default(), end, 0)
    };
    let mut trace = vec![
        dated(0, true, Some((T0 + 900_000_000, 1_000_000))),
        dated(1, false, None),
    ];
    assert!(trace[0].time_to_effect_ms.is_some(), "dated before");
    say_why_no_effect(&mut trace, Unit::Packets);
    assert_eq!(trace[0].time_to_effect_ms, None);
    let why = trace[0].no_time_to_effect.as_deref().unwrap_or("");
    assert!(
        why.starts_with("a later replacement put the installed rule set back"),
        "{why}"
    );
    let mut s = one(Unit::Packets, ups[2].clone());
    s.updates.insert(0, ups[0].clone());
    let t = text(&s, "nft");
    assert!(
        t.contains("(no time to effect: the marker's rule went with update 1"),
        "{t}"
    );
    // A single replacement, a repeated addition, an update that took effect or
    // failed.
    let mut ups = vec![
        at(0, true, UpdateKind::Replace),
        at(1, false, UpdateKind::Add),
    ];
    ups[1].row.event = 1;
    let mut done = at(0, true, UpdateKind::Add);
    done.time_to_effect_ms = Some(1.0);
    let mut failed = at(0, true, UpdateKind::Add);
    failed.row.error = Some("x".into());
    ups.extend([done, failed]);
    say_why_no_effect(&mut ups, Unit::Packets);
    assert!(ups[0]
        .no_time_to_effect
        .as_deref()
        .is_some_and(|w| w.starts_with("no marker packets changed fate")));
    assert!(ups[1]
        .no_time_to_effect
        .as_deref()
        .is_some_and(|w| w.starts_with("only update 0")));
    assert_eq!(
        (&ups[2].no_time_to_effect, &ups[3].no_time_to_effect),
        (&None, &None)
    );
    // Without a marker stream, a first replacement says so, repeated or not.
    let mut ups = vec![
        at(0, false, UpdateKind::Replace),
        at(1, false, UpdateKind::Replace),
    ];
    say_why_no_effect(&mut ups, Unit::Packets);
    assert!(ups[0]
        .no_time_to_effect
        .as_deref()
        .is_some_and(|w| w.starts_with("this trial has no marker stream")));
}

/// `n` bins of `per_ms` a ms from `t0`, each losing `lost_per_bin`, and all of
/// `per_ms` lost in the bins of `dark` (ms, from and to).
fn steady_with_dark(
    t0: u64,
    n: usize,
    per_ms: u32,
    lost_per_bin: u32,
    dark: &[(usize, usize)],
) -> FlowBins {
    let lost: Vec<u32> = (0..n)
        .map(|i| {
            if dark.iter().any(|&(a, b)| (a..b).contains(&i)) {
                per_ms
            } else {
                lost_per_bin
            }
        })
        .collect();
    steady(t0, per_ms, &lost)
}

/// The trial's quiet window is the 500 ms before its first update; an update is
/// credited with the loss beyond that window's rate, and its blocked time is that
/// loss over the window's offered rate.
#[test]
fn the_quiet_window_before_the_first_update_is_every_updates_baseline() {
    let ms = 1_000_000u64;
    // 20 packets a ms for 1 s, 1 of them lost in every bin (5 %), and all 20 lost
    // at 600..605 ms.
    let bg = steady_with_dark(T0, 1000, 20, 1, &[(600, 605)]);
    let background = [Background::flow(&bg)];
    let rows = [row(UpdateKind::Add, T0 + 600 * ms)];
    let q = quiet_window(&rows, &background).unwrap();
    assert_eq!((q.from_ms, q.ms), (-500.0, 500.0));
    assert_eq!((q.received, q.lost), (9_500, 500));
    assert!((q.loss - 0.05).abs() < 1e-12, "{q:?}");
    assert!((q.offered_per_s - 20_000.0).abs() < 1e-6, "{q:?}");
    let base = Base {
        quiet: Some(q),
        queue: None,
        suggest_load: false,
        unreceived: 0,
    };
    let end = traffic_end(&background);
    let u = undated(rows[0].clone(), &background, &base, end);
    // The window (550..852 ms; bins to 851) offered 302 × 20 = 6 040 packets and
    // lost 302 + 5 × 19 = 397; 5 % of 6 040 = 302 were the baseline's.
    assert_eq!(u.lost, Some(397));
    assert_eq!(u.lost_beyond_baseline, Some(95));
    assert_eq!(u.baseline, Some(BaselineKind::Quiet));
    assert!((u.blocked_ms.unwrap() - 4.75).abs() < 1e-9, "{u:?}");
    assert_eq!(u.stall_ms, Some(5.0));
    // 5 % before the update is above the overload line: the check stays.
    assert_eq!(u.doubts[0].kind, DoubtKind::Overloaded, "{u:?}");
    let s = EventsSummary {
        quiet: base.quiet.clone(),
        ..one(Unit::Packets, u)
    };
    let t = text(&s, "nft");
    assert!(
        t.contains("baseline: the 500 ms before the first update lost 5.00 % of the background packets (500 of 10000)"),
        "{t}"
    );
    assert!(
        t.contains("397 packets lost (95 beyond the baseline)"),
        "{t}"
    );
}

/// An overloaded gateway's background goes dark before the update as long as after
/// it (the README's tour at 20 000 rules and 20 kpps once read "stalled 462 ms"): that
/// gap is not the update's, so no stall figure; a longer gap after it still is one.
#[test]
fn a_gap_no_longer_than_the_overloads_before_the_update_is_no_stall() {
    let ms = 1_000_000u64;
    let rows = [row(UpdateKind::Add, T0 + 600 * ms)];
    let base = Base::default();
    let at = |dark: &[(usize, usize)]| {
        let bg = steady_with_dark(T0, 1000, 20, 0, dark);
        let background = [Background::flow(&bg)];
        let end = traffic_end(&background);
        undated(rows[0].clone(), &background, &base, end)
    };
    // 8 ms dark before the update (at 560 ms), 8 ms after it.
    let u = at(&[(560, 568), (600, 608)]);
    assert!(
        u.doubts.iter().any(|d| d.kind == DoubtKind::Overloaded),
        "{u:?}"
    );
    assert_eq!(u.stall_ms, None, "{u:?}");
    let t = text(&one(Unit::Packets, u), "nft");
    assert!(
        t.contains("the gateway could not carry the background before the update: no stall figure (320 packets lost in its window, 0 beyond the baseline)"),
        "{t}"
    );
    assert!(!t.contains("stalled"), "{t}");
    // 8 ms before, 30 ms after: the update's own gap is measured, and still flagged.
    let u = at(&[(560, 568), (600, 630)]);
    assert_eq!(u.stall_ms, Some(30.0), "{u:?}");
    assert!(
        u.doubts.iter().any(|d| d.kind == DoubtKind::Overloaded),
        "{u:?}"
    );
}

/// A quiet window that lost past the overload's share flags every update though the
/// 50 ms before it were clean (rules-under-load, iptables-legacy at 20 001 rules: 32 %
/// of the quiet window lost, and the update's 42-ms stall and 2 748 lost read "0
/// packets lost" beyond it, `ok`). A stall no longer than the quiet window's longest
/// dark run is withheld; a longer one stays, flagged.
#[test]
fn a_quiet_window_that_lost_past_the_overload_flags_the_update() {
    let ms = 1_000_000u64;
    let rows = [row(UpdateKind::Add, T0 + 600 * ms)];
    let at = |dark: &[(usize, usize)]| {
        let bg = steady_with_dark(T0, 1000, 20, 0, dark);
        let background = [Background::flow(&bg)];
        let base = Base {
            quiet: quiet_window(&rows, &background),
            ..Base::default()
        };
        let end = traffic_end(&background);
        (undated(rows[0].clone(), &background, &base, end), base)
    };
    // Dark 200..360 ms (160 of the quiet 500 ms: 32 %), clean from 360 ms, dark again
    // 600..640 ms after the update.
    let (u, base) = at(&[(200, 360), (600, 640)]);
    let q = base.quiet.as_ref().unwrap();
    assert!((q.loss - 0.32).abs() < 1e-12, "{q:?}");
    assert_eq!(q.dark_ms, 160.0, "{q:?}");
    // The window's loss (40 ms × 20 of 302 ms × 20) is below the baseline's 32 %:
    // nothing beyond it.
    assert_eq!(u.lost_beyond_baseline, Some(0), "{u:?}");
    let over: Vec<&str> = u
        .doubts
        .iter()
        .filter(|d| d.kind == DoubtKind::Overloaded)
        .map(|d| d.why.as_str())
        .collect();
    assert_eq!(
        over,
        [
            "the gateway lost 32.0 % of the background packets in the trial's quiet window \
          (the 500 ms before the first update, the baseline of every update's loss): it \
          could not carry the load before it"
        ],
        "{u:?}"
    );
    // 40 ms dark after the update, 160 before: no stall figure.
    assert_eq!(u.stall_ms, None, "{u:?}");
    assert!(!u.holds());
    // A dark run after the update longer than the quiet window's stays, flagged.
    let (u, _) = at(&[(200, 260), (300, 340), (600, 680)]);
    assert_eq!(u.stall_ms, Some(80.0), "{u:?}");
    assert!(u.doubts.iter().any(|d| d.kind == DoubtKind::Overloaded));
    // A clean quiet window flags nothing.
    let (u, base) = at(&[(600, 640)]);
    assert_eq!(
        base.quiet.as_ref().map(|q| (q.loss, q.dark_ms)),
        Some((0.0, 0.0))
    );
    assert!(u.holds(), "{u:?}");
    assert_eq!(u.stall_ms, Some(40.0));
    // The background as a whole, bin by bin: one flow dark while another receives is no
    // dark run of the gateway's (dark only where both are).
    let a = steady_with_dark(T0, 1000, 20, 0, &[(200, 360)]);
    let b = steady_with_dark(T0, 1000, 20, 0, &[(300, 320)]);
    let q = quiet_window(&rows, &[Background::flow(&a), Background::flow(&b)]).unwrap();
    assert_eq!(q.dark_ms, 20.0, "{q:?}");
    // An earlier overload check (the 50 ms before the update, its gaps 8 ms) does not
    // spare a stall within the quiet window's longer gaps; the doubt is said once.
    let (u, _) = at(&[(200, 360), (560, 568), (600, 640)]);
    assert_eq!(u.stall_ms, None, "{u:?}");
    let over = u.doubts.iter().filter(|d| d.kind == DoubtKind::Overloaded);
    assert_eq!(over.count(), 1, "{u:?}");
}

/// At a high event rate the 50 ms before an update hold the previous update's
/// tail: against them the second update is credited nothing; against the trial's
/// quiet window, with what it lost (and the tail before it flags it).
#[test]
fn a_previous_updates_tail_is_not_the_next_updates_baseline() {
    let ms = 1_000_000u64;
    // Clean for 500 ms; update 0 at 500 ms loses 500..520, update 1 at 530 ms
    // loses 530..540.
    let bg = steady_with_dark(T0, 1000, 20, 0, &[(500, 520), (530, 540)]);
    let background = [Background::flow(&bg)];
    let rows = [
        row(UpdateKind::Add, T0 + 500 * ms),
        UpdateRow {
            index: 1,
            ..row(UpdateKind::Add, T0 + 530 * ms)
        },
    ];
    let end = traffic_end(&background);
    let before = plain(rows[1].clone(), None, &background);
    assert_eq!(before.baseline, Some(BaselineKind::BeforeUpdate));
    assert_eq!(before.lost_beyond_baseline, Some(0), "{before:?}");
    let base = Base {
        quiet: quiet_window(&rows, &background),
        queue: None,
        suggest_load: false,
        unreceived: 0,
    };
    assert_eq!(base.quiet.as_ref().map(|q| q.loss), Some(0.0));
    let u = undated(rows[1].clone(), &background, &base, end);
    assert_eq!(u.baseline, Some(BaselineKind::Quiet));
    // Its window (480..782 ms) holds both dark runs: 30 ms × 20.
    assert_eq!(u.lost_beyond_baseline, Some(600), "{u:?}");
    assert!(u.doubts.iter().any(|d| d.kind == DoubtKind::Overloaded));
}

/// A trial whose first update comes before 50 ms of background has no quiet
/// window: each update is judged against the 50 ms before it, and says so.
#[test]
fn without_a_quiet_window_the_bins_before_the_update_are_the_baseline() {
    let bg = steady(T0, 10, &[0; 400]);
    let background = [Background::flow(&bg)];
    let rows = [row(UpdateKind::Add, T0 + 30_000_000)];
    assert_eq!(quiet_window(&rows, &background), None);
    // No update ran: no window at all.
    assert_eq!(quiet_window(&[row(UpdateKind::Add, 0)], &background), None);
    let base = Base::default();
    let u = undated(rows[0].clone(), &background, &base, None);
    assert_eq!(u.baseline, Some(BaselineKind::BeforeUpdate));
}

/// An overloaded background of a flood or flow without `--load` is told the flag.
#[test]
fn an_overloaded_flow_without_load_is_told_to_use_it() {
    let bg = steady(T0, 20, &[19; 400]);
    let background = [Background::flow(&bg)];
    let r = row(UpdateKind::Add, T0 + 100_000_000);
    let base = Base {
        quiet: None,
        queue: None,
        suggest_load: true,
        unreceived: 0,
    };
    let u = undated(r, &background, &base, None);
    assert!(
        u.doubts[0].why.ends_with(
            "(offer the background at a share of what it forwards at this size: --load 0.5)"
        ),
        "{:?}",
        u.doubts
    );
    let p = crate::plan::build::test_params(
        crate::params::workload::Workload::Flow,
        &[("rate", "20kpps"), ("engine", "nft"), ("event", "add:1@1s")],
    );
    assert!(Base::of(&p, &[], &background).suggest_load);
    let p = crate::plan::build::test_params(
        crate::params::workload::Workload::Flow,
        &[
            ("engine", "nft"),
            ("event", "add:1@1s"),
            ("event_load", "0.5"),
        ],
    );
    assert!(!Base::of(&p, &[], &background).suggest_load);
}

/// An unpaced flood through 5 000 nft rules: the background's flows received
/// nothing, so they have no bins and no window holds them. Overloaded, no stall
/// figure — never "stalled 0 ms; 0 packets lost".
#[test]
fn a_background_that_received_nothing_is_overloaded_without_a_stall_figure() {
    let r = row(UpdateKind::Add, 1_000_000_000_000);
    let base = Base {
        quiet: None,
        queue: None,
        suggest_load: true,
        unreceived: 381_312,
    };
    let u = effect(r, None, &[], Unit::Packets, &base, None, 0);
    assert_eq!(u.stall_ms, None);
    assert_eq!(u.doubts.len(), 1, "{u:?}");
    assert_eq!(u.doubts[0].kind, DoubtKind::Overloaded);
    assert!(
        u.doubts[0]
            .why
            .starts_with("the gateway forwarded none of 381312 background packets"),
        "{:?}",
        u.doubts
    );
    assert!(u.doubts[0].why.ends_with("--load 0.5)"), "{:?}", u.doubts);
    let t = text(&one(Unit::Packets, u), "nft");
    assert!(
        t.contains("the background received no packets at all: no stall figure"),
        "{t}"
    );
    assert!(!t.contains("stalled 0 ms"), "{t}");
}

/// `--load`: the share, the capacity and how it was found head the events' text.
#[test]
fn the_load_and_its_capacity_are_said() {
    use crate::params::events::{Capacity, CapacitySearch, Load};
    let search = CapacitySearch {
        loss: 0.0,
        step_s: 1.0,
        trials: 9,
        converged: true,
        fail_pps: Some(16_347.0),
        limited_by_sender: false,
        doubts: vec![],
        fail_by_fwbench: None,
    };
    let load = Load {
        fraction: 0.5,
        of: None,
        capacity: Some(Capacity {
            pps: 14_012.0,
            background_pps: 7_006.0,
            search: Some(search),
        }),
    };
    assert_eq!(
        load_text(&load).as_deref(),
        Some(
            "background at 50 % of 14012 pps (what the gateway forwarded without loss, \
             found by 9 floods of 1 s): 7006 pps"
        )
    );
    // A search whose unpaced flood passed found the sender's limit: said.
    let mut sender = load.clone();
    if let Some(f) = sender.capacity.as_mut().and_then(|c| c.search.as_mut()) {
        f.limited_by_sender = true;
    }
    assert!(load_text(&sender)
        .is_some_and(|t| t.contains("1 s (even an unpaced flood passed: the sender's limit")));
    let stated = Load {
        fraction: 0.25,
        of: Some(proto::Rate::Pps(40_000.0)),
        capacity: Some(Capacity {
            pps: 40_000.0,
            background_pps: 10_000.0,
            search: None,
        }),
    };
    assert_eq!(
        load_text(&stated).as_deref(),
        Some("background at 25 % of 40000 pps (as stated): 10000 pps")
    );
    // Before the trial ran: nothing to say.
    assert_eq!(
        load_text(&Load {
            capacity: None,
            ..stated
        }),
        None
    );
}

/// A trial at `fraction` of a capacity of 41 000 pps its search found as `search`.
fn at_searched_load(search: crate::params::events::CapacitySearch) -> EventsSummary {
    use crate::params::events::{Capacity, Load};
    EventsSummary {
        load: Some(Load {
            fraction: 0.5,
            of: None,
            capacity: Some(Capacity {
                pps: 41_000.0,
                background_pps: 20_500.0,
                search: Some(search),
            }),
        }),
        ..planted_summary(100)
    }
}

/// A clean capacity search: converged, not the sender's, without doubts.
fn clean_search() -> crate::params::events::CapacitySearch {
    crate::params::events::CapacitySearch {
        loss: 0.0,
        step_s: 1.0,
        trials: 9,
        converged: true,
        fail_pps: Some(45_000.0),
        limited_by_sender: false,
        doubts: vec![],
        fail_by_fwbench: None,
    }
}

/// The events trial's doubts from `s`'s load only (the planted update has none).
fn load_doubts(s: &EventsSummary) -> Vec<Doubt> {
    let d = s.doubts();
    assert!(
        d.iter()
            .all(|d| d.why.starts_with("the background's load: ")),
        "{d:?}"
    );
    d
}

/// `--load` with a capacity its search found clean: the trial is not flagged by it;
/// a stated capacity (`--load 0.5@40kpps`) never is.
#[test]
fn a_load_of_a_clean_or_stated_capacity_flags_nothing() {
    assert_eq!(load_doubts(&at_searched_load(clean_search())), vec![]);
    let mut stated = at_searched_load(clean_search());
    if let Some(l) = stated.load.as_mut() {
        l.of = Some(proto::Rate::Pps(40_000.0));
        if let Some(c) = l.capacity.as_mut() {
            c.search = None;
        }
    }
    assert_eq!(load_doubts(&stated), vec![]);
    assert_eq!(planted_summary(100).doubts(), vec![]);
}

/// A capacity search whose unpaced flood passed found fwbench's sender's rate, or
/// whose lowest failing rate failed by fwbench: the capacity is a lower bound, the
/// background at most the share asked of the gateway's (which the updates' own witness
/// checks it carried) — the trial is not flagged for it; its line says "at least",
/// and "did not converge" beside it where the search did not (then flagged).
#[test]
fn a_load_of_fwbenchs_limit_is_said_as_a_lower_bound_not_flagged() {
    let s = at_searched_load(crate::params::events::CapacitySearch {
        fail_pps: None,
        limited_by_sender: true,
        ..clean_search()
    });
    assert_eq!(load_doubts(&s), vec![]);
    let t = load_text(s.load.as_ref().unwrap()).unwrap();
    assert!(
        t.contains(
            "the sender's limit, not the gateway's; the gateway's capacity is at least this"
        ),
        "{t}"
    );
    assert!(!t.contains("flagged"), "{t}");
    let sink = "the lowest failing rate, 45000 pps, failed by fwbench's own sink";
    let s = at_searched_load(crate::params::events::CapacitySearch {
        fail_by_fwbench: Some(sink.into()),
        ..clean_search()
    });
    assert_eq!(load_doubts(&s), vec![]);
    let t = load_text(s.load.as_ref().unwrap()).unwrap();
    assert!(
        t.contains(&format!(
            "(fwbench's limit, not the gateway's: the gateway's capacity is at least this \
             ({sink}))"
        )),
        "{t}"
    );
    // Not settled beside it: both said, and flagged.
    let s = at_searched_load(crate::params::events::CapacitySearch {
        fail_by_fwbench: Some(sink.into()),
        converged: false,
        ..clean_search()
    });
    assert_eq!(load_doubts(&s)[0].kind, DoubtKind::NotConverged);
    let t = load_text(s.load.as_ref().unwrap()).unwrap();
    assert!(
        t.contains("at least this (the lowest failing rate, 45000 pps, failed by fwbench's own sink); the search did not converge)"),
        "{t}"
    );
}

/// A capacity search that did not converge: flagged `NotConverged`, with its why.
#[test]
fn a_load_of_an_unsettled_capacity_is_flagged_not_converged() {
    let why = "out of trials: 10 search steps (--max-trials) left 41000 to 45000 pps";
    let s = at_searched_load(crate::params::events::CapacitySearch {
        converged: false,
        doubts: vec![Doubt::new(DoubtKind::NotConverged, why)],
        ..clean_search()
    });
    let d = load_doubts(&s);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].kind, DoubtKind::NotConverged);
    assert_eq!(
        d[0].why,
        format!(
            "the background's load: 50 % of 41000 pps, a capacity its search did not settle \
             (not converged): {why}"
        )
    );
    // Without a why carried (a bracket wider than asked that no doubt words): still
    // flagged.
    let bare = at_searched_load(crate::params::events::CapacitySearch {
        converged: false,
        ..clean_search()
    });
    assert_eq!(load_doubts(&bare)[0].kind, DoubtKind::NotConverged);
}

/// A converged capacity search whose answer carries doubts (a sender behind at the
/// capacity; a deciding step flagged): flagged by the first one's kind beyond
/// fwbench's limit (a mismatch beside a late sender is the mismatch), the others
/// counted; the text line says them all.
#[test]
fn a_load_of_a_flagged_capacity_carries_its_first_doubt() {
    let behind = Doubt::new(
        DoubtKind::LimitedByFwbench,
        "the sender fell behind its schedule at 41000 pps, at or below the rate found",
    );
    let mismatch = Doubt::new(
        DoubtKind::VerdictMismatch,
        "the step at 41000 pps that carries the capacity was flagged",
    );
    let s = at_searched_load(crate::params::events::CapacitySearch {
        doubts: vec![behind, mismatch],
        ..clean_search()
    });
    let d = load_doubts(&s);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].kind, DoubtKind::VerdictMismatch);
    assert_eq!(
        d[0].why,
        "the background's load: 50 % of 41000 pps, a capacity from a search whose answer \
         is flagged (verdict mismatch): the step at 41000 pps that carries the capacity was \
         flagged (and 1 more of its search's doubts: limited by fwbench)"
    );
    // fwbench's limit alone (a sender behind at the capacity) is its kind.
    let behind_only = at_searched_load(crate::params::events::CapacitySearch {
        doubts: vec![s
            .load
            .as_ref()
            .unwrap()
            .capacity
            .as_ref()
            .unwrap()
            .search
            .as_ref()
            .unwrap()
            .doubts[0]
            .clone()],
        ..clean_search()
    });
    assert_eq!(
        load_doubts(&behind_only)[0].kind,
        DoubtKind::LimitedByFwbench
    );
    let t = load_text(s.load.as_ref().unwrap()).unwrap();
    assert!(
        t.ends_with(
            "20500 pps [its search flagged: limited by fwbench: the sender fell behind its \
             schedule at 41000 pps, at or below the rate found; verdict mismatch: the step \
             at 41000 pps that carries the capacity was flagged]"
        ),
        "{t}"
    );
}

/// Issue 39: each reload is credited with the marker's packets that passed from its
/// start to the next update's start — the rule set before and after drops them all —
/// with the window from the first to the last; a reload that let none through is 0,
/// and flagged too coarse when the marker's packets were further apart than its
/// commit lasted. The marker's other packets were dropped as intended; the text says
/// it per reload and in sum; the store row keeps both figures.
#[test]
fn a_reloads_violations_are_the_marker_packets_that_passed_it() {
    // The marker: 10 packets a ms sent for 100 ms (seq 0 … 999); 15 passed in bins
    // 50–52, 2 in bin 80.
    let mut received = vec![0u32; 100];
    received[50..53].copy_from_slice(&[5, 5, 5]);
    received[80] = 2;
    let marker = FlowBins {
        first: Some((500, T0 + 50_000_000)),
        highest: Some((801, T0 + 80_100_000)),
        ..bins(&received, &[0; 100], (0, 0), (0, 0))
    };
    let reload = |start_ms: u64, index: u32| UpdateRow {
        index,
        method: UpdateMethod::FlushLoad,
        marker: index == 0,
        ..row(UpdateKind::Reload, T0 + start_ms * 1_000_000)
    };
    let mut updates: Vec<UpdateEffect> = [(49, 0), (79, 1), (90, 2)]
        .into_iter()
        .map(|(ms, i)| plain(reload(ms, i), None, &[]))
        .collect();
    say_why_no_effect(&mut updates, Unit::Packets);
    count_violations(&mut updates, &[&marker], Some(100_000));
    let v: Vec<&Violations> = updates
        .iter()
        .map(|u| u.violations.as_ref().unwrap())
        .collect();
    assert_eq!((v[0].passed, v[0].window_ms), (15, Some(3.0)));
    // The window starts with bin 50's arrival (its 40-µs one-way delay after its send
    // time), 1.04 ms after the reload's start at 49 ms.
    assert_eq!(v[0].from_ms, Some(1.04));
    assert_eq!((v[1].passed, v[1].window_ms), (2, Some(1.0)));
    assert_eq!((v[2].passed, v[2].window_ms), (0, None));
    assert!(updates.iter().all(|u| u.time_to_effect_ms.is_none()));
    assert!(updates.iter().all(|u| u.doubts.is_empty()), "{updates:?}");
    // 1 000 sent, 17 passed: 983 dropped as intended.
    assert_eq!(marker_dropped(&updates, &[(1000, &marker)]), Some(983));
    let s = EventsSummary {
        updates: updates.clone(),
        ..one(Unit::Packets, updates[0].clone())
    };
    let t = text(&s, "nft");
    assert!(
        t.contains("reloading 100 rules with nft by flush-load took 2.00 ms, let 15 must-drop packets through in 3.0 ms (marker every 0.100 ms)"),
        "{t}"
    );
    assert!(t.contains("let no must-drop packets through"), "{t}");
    assert_eq!(
        violations_line(&s),
        ", 3 reloads let 17 must-drop packets through"
    );
    let rows = records(&s);
    assert_eq!(
        (rows[0].violations, rows[0].violation_window_ms),
        (Some(15), Some(3.0))
    );
    assert_eq!(rows[0].violation_from_ms, Some(1.04));
    // A marker 5 ms apart cannot see a 2-ms gap: the reload that saw none is flagged.
    let mut sparse = vec![plain(reload(90, 2), None, &[])];
    count_violations(&mut sparse, &[&marker], Some(5_000_000));
    assert_eq!(sparse[0].violations.as_ref().unwrap().passed, 0);
    assert_eq!(sparse[0].doubts[0].kind, DoubtKind::TooCoarse);
    // Two marker flows (flows 0 and 2 of four from two sources): both count, the
    // window spans both.
    let mut second = marker.clone();
    second.received = vec![0; 100];
    second.received[47] = 4;
    second.owd_sum_us[47] = 4 * 40;
    let mut two = vec![plain(reload(46, 0), None, &[])];
    count_violations(&mut two, &[&marker, &second], Some(100_000));
    let v = two[0].violations.as_ref().unwrap();
    assert_eq!((v.passed, v.window_ms), (21, Some(34.0)));
    // A marker none of whose packets was received (no bins): none passed; one that sent
    // nothing: no figure.
    let mut atomic = vec![plain(reload(49, 0), None, &[])];
    count_violations(&mut atomic, &[], Some(50_000));
    assert_eq!(atomic[0].violations.as_ref().unwrap().passed, 0);
    let mut silent = vec![plain(reload(49, 0), None, &[])];
    count_violations(&mut silent, &[], None);
    assert!(silent[0].violations.is_none());
    // A packet sent just before the next reload but queued until after its start (a
    // 2-ms one-way delay) passed in that reload's gap: it is the next reload's.
    let mut queued = marker.clone();
    queued.owd_sum_us[80] = 2 * 2000;
    let mut two = [(49, 0), (79, 1)]
        .into_iter()
        .map(|(ms, i)| plain(reload(ms, i), None, &[]))
        .collect::<Vec<_>>();
    two[1].row.start_unix_ns = T0 + 81_000_000;
    count_violations(&mut two, &[&queued], Some(100_000));
    let v: Vec<u64> = two
        .iter()
        .map(|u| u.violations.as_ref().unwrap().passed)
        .collect();
    assert_eq!(v, [15, 2], "by arrival, not by send time");
    // A reload that outlived the traffic (flagged unobserved): what passed before the
    // end is counted, with the flag; that none passed is no figure.
    let unobserved = |start_ms| {
        let mut u = plain(reload(start_ms, 2), None, &[]);
        u.doubts.push(Doubt::new(
            DoubtKind::Unobserved,
            String::from("ended late"),
        ));
        vec![u]
    };
    let mut late = unobserved(79);
    count_violations(&mut late, &[&marker], Some(100_000));
    assert_eq!(late[0].violations.as_ref().map(|v| v.passed), Some(2));
    let mut after = unobserved(90);
    count_violations(&mut after, &[&marker], Some(100_000));
    assert!(after[0].violations.is_none(), "{after:?}");
    // A set's reload is counted as a reload.
    let mut set = vec![plain(
        UpdateRow {
            kind: UpdateKind::ReloadSet,
            ..reload(49, 0)
        },
        None,
        &[],
    )];
    count_violations(&mut set, &[&marker], Some(100_000));
    assert_eq!(set[0].violations.as_ref().map(|v| v.passed), Some(17));
    // Not a reload: no violations counted.
    let mut add = vec![plain(row(UpdateKind::Add, T0), None, &[])];
    count_violations(&mut add, &[&marker], Some(100_000));
    assert!(add[0].violations.is_none());
}

/// A trace's (or any trial's) updates that ran, two or more: p50 / p99 / max of their
/// commits and times to effect (nearest rank), in the JSON and the text.
#[test]
fn the_spread_of_a_trials_updates_is_nearest_rank() {
    let q = Quantiles::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
    assert_eq!((q.n, q.p50, q.p99, q.max), (4, 2.0, 4.0, 4.0));
    let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
    let q = Quantiles::of(&hundred).unwrap();
    assert_eq!((q.p50, q.p99, q.max), (50.0, 99.0, 100.0));
    assert_eq!(Quantiles::of(&[]), None);
    let mut s = planted_summary(10);
    assert_eq!(spread(&s.updates), None, "one update: no spread");
    let u0 = s.updates[0].clone();
    for (i, commit) in [5.0, 2.0, 8.0].into_iter().enumerate() {
        let mut u = u0.clone();
        u.row.event = i as u32 + 1;
        u.row.marker = false;
        u.commit_ms = commit;
        u.time_to_effect_ms = None;
        s.updates.push(u);
    }
    // One that failed is not counted.
    let mut failed = u0.clone();
    failed.row.error = Some("nft: error".into());
    failed.commit_ms = 100.0;
    s.updates.push(failed);
    s.judge();
    let sp = s.spread.clone().unwrap();
    assert_eq!(sp.updates, 4);
    assert_eq!(
        (sp.commit_ms.p50, sp.commit_ms.p99, sp.commit_ms.max),
        (2.0, 8.0, 8.0)
    );
    let tte = sp.time_to_effect_ms.clone().unwrap();
    assert_eq!((tte.n, tte.p50, tte.max), (1, 3.0, 3.0));
    let t = text(&s, "nft");
    assert!(
        t.contains(
            "commit latency of 4 updates: p50 2.00 ms, p99 8.00 ms, max 8.00 ms; time to \
             effect (1 update with the marker): p50 3.00 ms, p99 3.00 ms, max 3.00 ms"
        ),
        "{t}"
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["spread"]["commit_ms"]["p99"], 8.0);
}

/// A trace's operations after the first carry no marker: each says so in its words
/// (not "this trial has no marker stream").
#[test]
fn a_traces_later_operations_say_only_the_first_carries_the_marker() {
    let mut s = planted_summary(10);
    let mut later = s.updates[0].clone();
    later.row.event = 1;
    later.row.marker = false;
    later.time_to_effect_ms = None;
    s.updates.push(later);
    say_why_no_effect(&mut s.updates, Unit::Packets);
    let why = s.updates[1].no_time_to_effect.as_deref().unwrap();
    assert!(
        why.starts_with("only the schedule's first update (a trace's first operation)"),
        "{why}"
    );
}

/// A background of 20 packets a ms from [`T0`] for `delay_us.len()` ms, bin i's
/// packets `delay_us[i]` µs on their way.
fn delayed(delay_us: &[u64]) -> FlowBins {
    let mut b = steady(T0, 20, &vec![0; delay_us.len()]);
    b.owd_sum_us = delay_us.iter().map(|d| d * 20).collect();
    b.owd_max_us = delay_us.iter().map(|&d| d as u32).collect();
    b
}

/// Measured at 20 000 nft rules and 4 kpps (`--sources 2`, `add:1@1s`): the
/// background's delay rose from 10.3 to 158.1 ms in the second before the update,
/// and nothing was lost yet — the trial was `ok`, the update "stalled 0 ms; 0 packets
/// lost". A queue that fills before the first update's window is an overload: every
/// update is flagged, saying how much it held. Not: a flat background with a spike, a
/// stall's hump, a step to a queue that then stands, a hump on a gentle rise, a growth
/// within a trial's share or below the floor, a span too short, a sender whose own
/// lateness is the growth.
#[test]
fn a_queue_filling_before_the_first_update_is_an_overload() {
    let ms = 1_000_000u64;
    let rows = [row(UpdateKind::Add, T0 + 1000 * ms)];
    let of = |delay_us: &[u64]| queue_before(&rows, &[Background::flow(&delayed(delay_us))]);
    // 0.3 ms rising evenly by 0.15 ms a ms up to the update, and back at 0.3 ms after
    // it; read up to its window (950 ms: the update's own stall is not the queue's).
    let rising: Vec<u64> = (0..1500)
        .map(|i| if i < 1000 { 300 + i * 150 } else { 300 })
        .collect();
    let bg = delayed(&rising);
    let q = of(&rising).expect("a queue");
    assert_eq!(q.span_ms, 950.0, "{q:?}");
    assert!((q.growth_ms - 142.5).abs() < 0.5, "{q:?}");
    assert!((q.share() - 142.5 / 1092.5).abs() < 1e-3, "{q:?}");
    // First tenth: bins 0–94 (mean 47); last: 855–949 (mean 902).
    assert!(
        (q.from_ms - 7.35).abs() < 1e-6 && (q.to_ms - 135.6).abs() < 1e-6,
        "{q:?}"
    );
    assert!(!q.senders(10 * ms) && q.senders(72 * ms), "{q:?}");
    let base = Base {
        queue: Some(q),
        ..Base::default()
    };
    let u = effect(
        rows[0].clone(),
        None,
        &[Background::flow(&bg)],
        Unit::Packets,
        &base,
        None,
        0,
    );
    let d = u.doubts.iter().find(|d| d.kind == DoubtKind::Overloaded);
    let expected = format!(
        "the background's one-way delay grew evenly by {:.1} ms over the 950 ms before the \
         first update: a queue filled, holding about 13.0 % of what was offered — the \
         gateway could not carry the load before it",
        q.to_ms - q.from_ms
    );
    assert_eq!(format!("{:.1}", q.to_ms), "135.6");
    assert!(
        d.is_some_and(|d| d.why.starts_with(&expected)),
        "{:?}",
        u.doubts
    );
    // Flat at 0.3 ms with one 25-ms spike near the end: no queue.
    let mut spiked = vec![300; 1000];
    spiked[940] = 25_000;
    assert_eq!(of(&spiked), None);
    // A stall's hump: 300 ms at 600 ms, drained by 800 ms, flat again after.
    let hump: Vec<u64> = (0..1000u64)
        .map(|i| match i {
            600..=799 => 300 + (800 - i) * 1500,
            _ => 300,
        })
        .collect();
    assert_eq!(of(&hump), None);
    // A step to 100 ms at 300 ms that then stands: the middle is at the top.
    let step: Vec<u64> = (0..1000)
        .map(|i| if i < 300 { 300 } else { 100_300 })
        .collect();
    assert_eq!(of(&step), None);
    // A gentle rise of 20 ms with a 400-ms hump at 620–700 ms: the fit grows by about
    // 60 ms, the last tenth only 18 ms above the first.
    let humped: Vec<u64> = (0..1000u64)
        .map(|i| {
            let hump = if (620..700).contains(&i) {
                400_000 - (i - 620) * 5_000
            } else {
                0
            };
            300 + i * 20 + hump
        })
        .collect();
    assert_eq!(of(&humped), None);
    // 15 ms over the span holds 1.6 % of it: within what a trial's queue may hold.
    let gentle: Vec<u64> = (0..1000).map(|i| 300 + i * 15).collect();
    assert_eq!(of(&gentle), None);
    // 4.8 ms over 220 ms holds 2.1 % but is a noisy machine's, not a queue (the floor).
    let slow: Vec<u64> = (0..220).map(|i| 300 + i * 4_800 / 220).collect();
    let at_270 = [row(UpdateKind::Add, T0 + 270 * ms)];
    assert_eq!(
        queue_before(&at_270, &[Background::flow(&delayed(&slow))]),
        None
    );
    // Too short a span before the update's window to tell.
    let early = [row(UpdateKind::Add, T0 + 240 * ms)];
    assert_eq!(queue_before(&early, &[Background::flow(&bg)]), None);
}

/// Every flow the marker's (one client address, the default): no background, so no
/// stall or loss figure — it read "forwarding stalled 0 ms; 0 packets lost".
#[test]
fn a_trial_without_background_flows_states_no_stall() {
    let r = row(UpdateKind::Add, T0 + 2_000_000_000);
    let u = plain(r, Some((T0 + 2_001_000_000, 10_000)), &[]);
    assert_eq!(u.stall_ms, None, "{u:?}");
    assert!(u.doubts.is_empty(), "{:?}", u.doubts);
    let s = EventsSummary {
        background_streams: 0,
        ..one(Unit::Packets, u)
    };
    let t = text(&s, "nft");
    assert!(
        t.contains(
            "no background flows to disturb (every flow is from the marker's client \
             address; --sources 2 --flows 2 adds one): no stall or loss figure"
        ),
        "{t}"
    );
    assert!(!t.contains("stalled 0 ms"), "{t}");
}

/// The marker's packets the update's rule dropped are said beside the loss they are
/// part of (rules-under-load's flows lost a third of their packets so, by design), and
/// nothing is said where the rule dropped none or it was not counted.
#[test]
fn the_markers_intended_drops_are_said_beside_the_loss() {
    let with = |marker_dropped| EventsSummary {
        marker_dropped,
        ..planted_summary(0)
    };
    assert_eq!(
        intended_loss(&with(Some(1214))),
        " (1214 of them the marker's, dropped by the update's rule as intended)"
    );
    assert_eq!(intended_loss(&with(Some(0))), "");
    assert_eq!(intended_loss(&with(None)), "");
}

/// An update that failed, or never ran (the traffic phase ended first), has no window:
/// no stall or loss figure in the JSON or the store — they read "stall_ms": 0, "lost":
/// 0, an empty window's sums, or the sums of the window of one that failed.
#[test]
fn an_update_that_failed_or_never_ran_has_no_stall_or_loss_figure() {
    let mut lost = vec![0u32; 400];
    lost[100..110].copy_from_slice(&[10; 10]);
    let bg = steady(T0, 10, &lost);
    let background = [Background::flow(&bg)];
    let never = UpdateRow {
        start_unix_ns: 0,
        commit_ns: 0,
        error: Some("not run: the traffic phase ended first".into()),
        ..row(UpdateKind::Add, 0)
    };
    let failed = UpdateRow {
        error: Some("nft: Error: Could not process rule".into()),
        ..row(UpdateKind::Add, T0 + 100_000_000)
    };
    for r in [never, failed] {
        let u = plain(r, None, &background);
        assert_eq!((u.stall_ms, u.lost), (None, None), "{u:?}");
        let json = serde_json::to_value(&u).unwrap();
        assert!(json["stall_ms"].is_null(), "{json}");
        assert!(json["lost"].is_null(), "{json}");
        assert_eq!(serde_json::from_value::<UpdateEffect>(json).unwrap(), u);
        let rows = records(&one(Unit::Packets, u));
        assert_eq!(rows[0].stall_ms, None);
        assert!(rows[0].error.is_some());
    }
    // One that ran keeps both; a result stored before (a number) still reads.
    let ran = plain(row(UpdateKind::Add, T0 + 100_000_000), None, &background);
    assert_eq!((ran.stall_ms, ran.lost), (Some(10.0), Some(100)), "{ran:?}");
    let mut old = serde_json::to_value(&ran).unwrap();
    old["lost"] = serde_json::json!(7);
    assert_eq!(
        serde_json::from_value::<UpdateEffect>(old).unwrap().lost,
        Some(7)
    );
}

/// A reload trial whose marker had one packet received in the whole trial: one packet
/// dates no spacing (it read 0, so the reloads that let none through were never
/// flagged too coarse and read "let no must-drop packets through (marker every 0.000
/// ms)"). Its spacing is then what its flow sent over the trial; where that is not
/// known either, it is unknown — flagged too coarse, with why, never 0.
#[test]
fn one_marker_packet_received_dates_no_spacing() {
    let p = crate::plan::build::test_params(
        crate::params::workload::Workload::Flow,
        &[
            ("rate", "100pps"),
            ("engine", "nft"),
            ("duration", "2s"),
            ("event", "reload:1@1s"),
        ],
    );
    // The marker: a packet every 10 ms; only seq 5 (sent at 50 ms) was received.
    let mut received = vec![0u32; 2000];
    received[50] = 1;
    let marker = FlowBins {
        first: Some((5, T0 + 50_000_000)),
        highest: Some((5, T0 + 50_000_000)),
        ..bins(&received, &vec![0; 2000], (0, 0), (0, 0))
    };
    let sink = UdpSinkResults {
        flows: vec![proto::FlowRx {
            flow: 0,
            received: 1,
            bins: Some(Box::new(marker)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let reload = |start_ms: u64, index: u32| UpdateRow {
        index,
        method: UpdateMethod::FlushLoad,
        marker: index == 0,
        ..row(UpdateKind::Reload, T0 + start_ms * 1_000_000)
    };
    let gateway = GatewayResults {
        updates: vec![reload(49, 0), reload(500, 1)],
        ..Default::default()
    };
    let source = "198.18.0.1".parse().unwrap();
    let summarise = |sent: Vec<u64>| {
        let src = UdpSourceResults {
            sent_per_flow: sent,
            ..Default::default()
        };
        summarise_flows(&p, &[source], &src, &sink, Some(&gateway)).unwrap()
    };
    // 200 sent over 2 s: 10 ms apart, more than the 2-ms reload that let none through.
    let s = summarise(vec![200]);
    let v: Vec<(u64, f64)> = s
        .updates
        .iter()
        .map(|u| {
            u.violations
                .as_ref()
                .map(|v| (v.passed, v.probe_gap_ms))
                .unwrap()
        })
        .collect();
    assert_eq!(v, [(1, 10.0), (0, 10.0)], "{:?}", s.updates);
    assert!(s.updates[0].doubts.is_empty(), "{:?}", s.updates[0].doubts);
    assert_eq!(s.updates[1].doubts[0].kind, DoubtKind::TooCoarse);
    assert!(
        s.updates[1].doubts[0]
            .why
            .starts_with("the marker's packets were 10.000 ms apart"),
        "{:?}",
        s.updates[1].doubts
    );
    let t = text(&s, "nft");
    assert!(!t.contains("every 0.000 ms"), "{t}");
    assert!(t.contains("(marker every 10.000 ms)"), "{t}");
    // Its sender's count not known: the spacing is unknown, not 0.
    let s = summarise(vec![]);
    let gap = s.updates[1].violations.as_ref().unwrap().probe_gap_ms;
    assert!(gap.is_nan(), "{gap}");
    assert_eq!(s.updates[1].doubts[0].kind, DoubtKind::TooCoarse);
    assert!(
        s.updates[1].doubts[0]
            .why
            .starts_with("the marker's spacing is unknown"),
        "{:?}",
        s.updates[1].doubts
    );
    let t = text(&s, "nft");
    assert!(
        t.contains("let no must-drop packets through (the marker's spacing unknown)"),
        "{t}"
    );
    let json = serde_json::to_value(&s.updates[1]).unwrap();
    assert!(json["violations"].get("probe_gap_ms").is_none(), "{json}");
    let back: UpdateEffect = serde_json::from_value(json).unwrap();
    assert!(back.violations.unwrap().probe_gap_ms.is_nan());
}
