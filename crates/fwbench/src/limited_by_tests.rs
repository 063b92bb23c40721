//! Unit tests of `limited_by.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;

/// `--frame 65535 --fragment`: 45 IP fragments a datagram. The interfaces count
/// fragments, sender and sink datagrams; the judge compares fragments with
/// fragments (it used to read 5000 datagrams reassembled of 225 000 fragments at
/// the sink as the sink's loss) and says which it counts.
#[test]
fn fragments_are_compared_with_fragments() {
    let mut c = path(5000, 225_000, 225_000, 225_000, 5000);
    c.frames_per_datagram = 45;
    let (by, why) = judge(&c, 0.001);
    assert_eq!(by, LimitedBy::Nothing, "{why}");
    assert_eq!(
        why,
        "the offered rate got through: 5000 datagrams sent and received"
    );
    c.received = 4000;
    let (by, why) = judge(&c, 0.001);
    assert_eq!(by, LimitedBy::Sink, "{why}");
    assert_eq!(
        why,
        "the sink reassembled 4000 datagrams (180000 IP fragments) of the 225000 IP \
         fragments that reached it"
    );
    c.received = 4444;
    c.gateway_out = Some(200_000);
    c.sink_in = Some(200_000);
    let (by, why) = judge(&c, 0.001);
    assert_eq!(by, LimitedBy::Gateway, "{why}");
    assert_eq!(why, "the gateway forwarded 200000 of 225000 IP fragments");
}

fn path(sent: u64, g_in: u64, g_out: u64, s_in: u64, rx: u64) -> RateCounters {
    RateCounters {
        paced: true,
        scheduled: sent,
        sent,
        gateway_in: Some(g_in),
        gateway_out: Some(g_out),
        sink_in: Some(s_in),
        received: rx,
        ..Default::default()
    }
}

/// An unpaced flood (as fast as the sender can) that lost nothing on the way.
fn lossless_flood() -> RateCounters {
    RateCounters {
        paced: false,
        ..path(5000, 5000, 5000, 5000, 5000)
    }
}

/// [`lossless_flood`] with the sender's and the gateway's CPU busy these shares.
fn lossless_flood_at(sender_cpu: f64, gateway_cpu: f64) -> RateCounters {
    RateCounters {
        sender_cpu: Some(sender_cpu),
        gateway_cpu: Some(gateway_cpu),
        ..lossless_flood()
    }
}

#[test]
fn each_stage_names_its_role() {
    let cases = [
        (path(1000, 1000, 1000, 1000, 1000), LimitedBy::Nothing),
        (path(1000, 700, 700, 700, 700), LimitedBy::Gateway),
        (path(1000, 1000, 600, 600, 600), LimitedBy::Gateway),
        (path(1000, 1000, 1000, 500, 500), LimitedBy::Sink),
        (path(1000, 1000, 1000, 1000, 900), LimitedBy::Sink),
        // Two stages lose: the larger loss decides.
        (path(1000, 1000, 950, 950, 700), LimitedBy::Sink),
        (path(1000, 1000, 700, 700, 690), LimitedBy::Gateway),
    ];
    for (c, want) in cases {
        assert_eq!(limited_by(&c, 0.001).by, want, "{c:?}");
    }
}

/// Packets the gateway's ingress dropped on receipt (`rx_dropped`, its receive
/// backlog) are the gateway's loss even while its CPU shows room; the rest of what
/// did not reach it stays the sender's link's.
#[test]
fn the_gateways_receive_backlog_drops_are_the_gateways() {
    let mut c = path(1000, 700, 700, 700, 700);
    c.gateway_cpu = Some(0.3);
    c.sender_cpu = Some(1.0);
    c.gateway_in_dropped = Some(300);
    let l = limited_by(&c, 0.001);
    assert_eq!(l.by, LimitedBy::Gateway, "{l:?}");
    assert!(l.why.contains("dropped 300 of 1000"), "{}", l.why);
    // Only a few of the missing packets in the backlog's drops: the larger loss,
    // the link's, decides.
    c.gateway_in_dropped = Some(10);
    assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Sender);
    // More drops reported than packets missing (counters read apart): capped.
    c.gateway_in_dropped = Some(5000);
    let l = limited_by(&c, 0.001);
    assert!(l.why.contains("dropped 300 of 1000"), "{}", l.why);
}

#[test]
fn idle_cpus_move_the_blame() {
    // Lost before the gateway, whose CPU had room: the sender's link.
    let mut c = path(1000, 700, 700, 700, 700);
    c.gateway_cpu = Some(0.3);
    assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Sender);
    c.gateway_cpu = Some(0.99);
    assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Gateway);
    // The gateway's rules in its ingress driver (native XDP): lost in front of its
    // program (a veth's XDP ring, seen: 606 329 of 648 768 a flood through 2 000 rules
    // sent), the gateway's however idle its steered CPUs.
    c.gateway_cpu = Some(0.3);
    c.in_driver = true;
    let l = limited_by(&c, 0.001);
    assert_eq!(l.by, LimitedBy::Gateway, "{}", l.why);
    assert!(
        l.why.starts_with(
            "300 of 1000 packets sent did not reach the gateway (dropped in front of its \
             XDP program, which did not take them in time)"
        ),
        "{}",
        l.why
    );
    // Lost between gateway and sink, sink idle: the gateway's egress.
    let mut c = path(1000, 1000, 1000, 600, 600);
    c.sink_cpu = Some(0.2);
    assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Gateway);
}

#[test]
fn lossless_floods_and_late_senders_are_the_senders_limit() {
    let flood = lossless_flood();
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::Sender);
    assert!(l.why.contains("flood"), "{}", l.why);
    let mut late = path(4000, 4000, 4000, 4000, 4000);
    late.scheduled = 5000;
    let l = limited_by(&late, 0.001);
    assert_eq!(l.by, LimitedBy::Sender);
    assert!(l.why.contains("4000 of the 5000"), "{}", l.why);
}

#[test]
fn a_saturated_gateway_holding_back_an_idle_sender_is_the_gateway() {
    // Sender at 100 % of its CPU, gateway not dropping: the sender's limit.
    let mut flood = lossless_flood_at(0.99, 0.95);
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::Sender);
    assert!(l.why.contains("sender CPU 99 %"), "{}", l.why);
    assert_eq!(l.sender_cpu, Some(0.99));
    // Sender with room, gateway's softirq saturated: the gateway held it back.
    flood.sender_cpu = Some(0.4);
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::Gateway);
    assert!(l.why.contains("held it back"), "{}", l.why);
    assert!(l.why.contains("gateway softirq 95 %"), "{}", l.why);
    // Both with room: still the sender (its syscalls, its link).
    flood.gateway_cpu = Some(0.3);
    assert_eq!(limited_by(&flood, 0.001).by, LimitedBy::Sender);
    // A paced sender on schedule: nothing, whatever the CPUs.
    let mut ok = path(5000, 5000, 5000, 5000, 5000);
    ok.sender_cpu = Some(0.1);
    ok.gateway_cpu = Some(0.99);
    assert_eq!(limited_by(&ok, 0.001).by, LimitedBy::Nothing);
}

fn sample(metric: &str, value: f64) -> proto::MetricSample {
    proto::MetricSample {
        t_s: 0.0,
        metric: metric.into(),
        value,
    }
}

#[test]
fn role_cpus_from_samples() {
    let s = [
        ("client", 0, sample("proc.cpu", 190.0)),
        ("client", 0, sample("proc.cpu", 170.0)),
        ("server", 0, sample("proc.cpu", 30.0)),
        ("gateway", 0, sample("cpu0.softirq", 60.0)),
        ("gateway", 0, sample("cpu1.softirq", 98.0)),
        ("gateway", 0, sample("cpu1.softirq", 92.0)),
        // Another role's CPU figures are not the gateway's.
        ("client", 0, sample("cpu0.softirq", 100.0)),
    ];
    let refs: Vec<(&str, u32, &proto::MetricSample)> =
        s.iter().map(|(r, h, m)| (*r, *h, m)).collect();
    let c = role_cpus(&refs, &[2], &[1], 2, None);
    assert_eq!(c.sender, Some(0.9), "180 % over 2 threads");
    assert_eq!(c.sink, Some(0.3));
    assert_eq!(c.gateway, Some(0.95), "the busiest CPU");
    // Steered to CPU 0: only its softirq counts.
    assert_eq!(
        role_cpus(&refs, &[2], &[1], 2, Some(&[0])).gateway,
        Some(0.6)
    );
    // More threads than CPUs: the CPUs bound the share.
    assert_eq!(role_cpus(&refs, &[8], &[1], 2, None).sender, Some(0.9));
    // No samples: unknown.
    assert_eq!(role_cpus(&[], &[1], &[1], 2, None), RoleCpus::default());
    // Two sender hosts, one thread each: the busier host is the sender's figure
    // (not their mean: one saturated generator limits the trial).
    let two = [
        ("client", 0, sample("proc.cpu", 40.0)),
        ("client", 1, sample("proc.cpu", 96.0)),
    ];
    let refs: Vec<(&str, u32, &proto::MetricSample)> =
        two.iter().map(|(r, h, m)| (*r, *h, m)).collect();
    assert_eq!(role_cpus(&refs, &[1, 1], &[1], 2, None).sender, Some(0.96));
    assert_eq!(cpu_list("0,2-3"), Some(vec![0, 2, 3]));
    assert_eq!(cpu_list("x"), None);
}

fn refs<'a>(
    s: &'a [(&'static str, u32, proto::MetricSample)],
) -> Vec<(&'static str, u32, &'a proto::MetricSample)> {
    s.iter().map(|(r, h, m)| (*r, *h, m)).collect()
}

/// A 2-core machine: the gateway's softirq on CPU 0 (`softirq0` %), CPU 0
/// `idle0` % idle, CPU 1 60 % idle; the sender's user + system on CPU `at`.
fn two_cores(
    softirq0: f64,
    idle0: f64,
    at: usize,
) -> Vec<(&'static str, u32, proto::MetricSample)> {
    let mut s = vec![
        ("gateway", 0, sample("cpu0.softirq", softirq0)),
        ("gateway", 0, sample("cpu0.idle", idle0)),
        ("gateway", 0, sample("cpu1.softirq", 2.0)),
        ("gateway", 0, sample("cpu1.idle", 60.0)),
    ];
    for c in 0..2 {
        let user = if c == at { 45.0 } else { 1.0 };
        s.push(("client", 0, sample(&format!("cpu{c}.user"), user)));
        s.push(("client", 0, sample(&format!("cpu{c}.system"), user / 3.0)));
    }
    s
}

#[test]
fn shared_cpu_from_samples() {
    let here = SenderPlace::WithGateway { pinned: None };
    // Sender and softirq on CPU 0, saturated: shared.
    let s = two_cores(40.0, 1.0, 0);
    let got = shared_cpu(&refs(&s), here, 2, None).unwrap();
    assert_eq!(got.cpu, 0);
    assert!(
        (got.softirq - 0.4).abs() < 1e-9 && (got.busy - 0.99).abs() < 1e-9,
        "{got:?}"
    );
    // On another machine: never shared, whatever the figures.
    assert_eq!(shared_cpu(&refs(&s), SenderPlace::Elsewhere, 2, None), None);
    // The sender on CPU 1 (by its time there, or pinned there): not shared.
    assert_eq!(
        shared_cpu(&refs(&two_cores(40.0, 1.0, 1)), here, 2, None),
        None
    );
    // Pinned to CPU 1 with the gateway steered to CPU 0: not shared; not steered,
    // CPU 1 carries the gateway's work for what the sender sends (its 2 %).
    let pinned = SenderPlace::WithGateway { pinned: Some(&[1]) };
    assert_eq!(shared_cpu(&refs(&s), pinned, 2, Some(&[0])), None);
    assert_eq!(
        shared_cpu(&refs(&s), pinned, 2, None).map(|c| c.cpu),
        Some(1)
    );
    // Pinned to CPU 0: shared even without its user time sampled.
    let pinned = SenderPlace::WithGateway { pinned: Some(&[0]) };
    assert_eq!(
        shared_cpu(&refs(&two_cores(40.0, 1.0, 1)), pinned, 2, None).map(|c| c.cpu),
        Some(0)
    );
    // The gateway steered to CPU 0 (it may have its own time there): CPU 0 with
    // room is not shared; not steered, its softirq is the sender's CPU's work, room
    // or not (an unpinned sender moving between CPUs saturates none).
    let steered: Option<&[usize]> = Some(&[0]);
    let roomy = two_cores(40.0, 30.0, 0);
    assert_eq!(shared_cpu(&refs(&roomy), here, 2, steered), None);
    let got = shared_cpu(&refs(&roomy), here, 2, None).expect("not steered: shared");
    assert!(
        (got.cpu, (got.busy - 0.7).abs() < 1e-9) == (0, true),
        "{got:?}"
    );
    // Hardly any softirq on it: not shared when steered there; not steered, the
    // sender's CPU still carries the gateway's work (few rules: a small share),
    // and a CPU without any of it (or with less than another CPU) does not.
    let little = two_cores(3.0, 1.0, 0);
    assert_eq!(shared_cpu(&refs(&little), here, 2, steered), None);
    assert_eq!(
        shared_cpu(&refs(&little), here, 2, None).map(|c| c.cpu),
        Some(0)
    );
    assert_eq!(
        shared_cpu(&refs(&two_cores(0.0, 1.0, 0)), pinned, 2, None),
        None
    );
    // Pinned to CPU 0, not steered: CPU 0 carries the gateway's work even when
    // another CPU shows more softirq (the machine's other traffic).
    let busier_elsewhere = two_cores(1.0, 1.0, 0);
    assert_eq!(
        shared_cpu(&refs(&busier_elsewhere), pinned, 2, None).map(|c| c.cpu),
        Some(0)
    );
    assert_eq!(shared_cpu(&refs(&busier_elsewhere), here, 2, None), None);
    // The gateway steered to CPU 1: CPU 0's softirq is not its packet processing.
    assert_eq!(shared_cpu(&refs(&s), here, 2, Some(&[1])), None);
}

#[test]
fn a_sender_sharing_the_gateways_cpu_is_not_the_senders_limit() {
    let mut flood = lossless_flood_at(0.99, 0.4);
    // Separate CPUs, the sender busy: the sender.
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::Sender);
    assert_eq!(l.short(), "sender");
    assert!(l.warning().unwrap().contains("fwbench's sender limit"));
    // The same figures on a CPU shared with the gateway's softirq: shared-cpu, a
    // warning naming the CPU.
    flood.shared_cpu = Some(SharedCpu {
        cpu: 0,
        softirq: 0.4,
        busy: 0.99,
    });
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::SharedCpu);
    assert_eq!(l.shared_cpu, Some(0));
    assert!(
        l.why.starts_with("sender and gateway on CPU 0"),
        "{}",
        l.why
    );
    // On the trial's line: what the rate is, not a warning (said once per run).
    assert_eq!(
        l.short(),
        "sender and gateway together (shared CPU 0: the path on one core)"
    );
    assert!(l.warning().unwrap().contains("shared CPU 0"));
    assert!(l.warning().unwrap().contains("--pin-gateway"));
    // Native XDP on a veth runs in the sender's receive poll: said, and pinning, which
    // does not move it, not advised.
    let mut xdp = flood;
    xdp.in_driver = true;
    let l = limited_by(&xdp, 0.001);
    assert_eq!(l.by, LimitedBy::SharedCpu);
    assert!(
        l.why
            .contains("the gateway's XDP program in the receive poll"),
        "{}",
        l.why
    );
    let w = l.warning().unwrap();
    assert!(
        w.contains("pinning does not move") && !w.contains("--pin-gateway"),
        "{w}"
    );
    // The gateway's CPU saturated while the sender had room: the gateway, shared
    // CPU or not.
    flood.sender_cpu = Some(0.5);
    flood.gateway_cpu = Some(0.97);
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::Gateway);
    assert_eq!(l.warning(), None);
    // Losses at the gateway stay the gateway's.
    let mut lossy = path(5000, 5000, 3000, 3000, 3000);
    lossy.shared_cpu = flood.shared_cpu;
    assert_eq!(limited_by(&lossy, 0.001).by, LimitedBy::Gateway);
}

#[test]
fn stored_verdicts_old_and_new_are_readable() {
    let old: Limit =
        serde_json::from_str(r#"{"by":"sender","why":"w","sender_cpu":0.99}"#).unwrap();
    assert_eq!((old.by, old.shared_cpu), (LimitedBy::Sender, None));
    let j = r#"{"by":"shared-cpu","why":"w","shared_cpu":0}"#;
    let new: Limit = serde_json::from_str(j).unwrap();
    assert_eq!((new.by, new.shared_cpu), (LimitedBy::SharedCpu, Some(0)));
    assert_eq!(serde_json::to_string(&new).unwrap(), j);
}

#[test]
fn tolerance_and_missing_counters() {
    // 1 lost in 10 000 is within 0.1 %: the verdict counts it as none, and says it.
    let l = limited_by(&path(10_000, 10_000, 9_999, 9_999, 9_999), 0.001);
    assert_eq!(l.by, LimitedBy::Nothing);
    assert_eq!(
        l.why,
        "the offered rate got through: 10000 packets sent, 9999 received: 1 packet was \
         lost, within the 0.1 % a verdict counts as none"
    );
    // A flood that lost 9 of 10 000 on the way: not "none was lost".
    let flood = RateCounters {
        paced: false,
        ..path(10_000, 10_000, 9_991, 9_991, 9_991)
    };
    let l = limited_by(&flood, 0.001);
    assert_eq!(l.by, LimitedBy::Sender);
    assert!(
        l.why.ends_with("as fast as it could, and 9 packets were lost, within the 0.1 % a verdict counts as none"),
        "{}",
        l.why
    );
    // No gateway, no interface counter at the sink: only sent → received.
    let c = RateCounters {
        paced: true,
        scheduled: 100,
        sent: 100,
        received: 50,
        ..Default::default()
    };
    let l = limited_by(&c, 0.001);
    assert_eq!(l.by, LimitedBy::Sink);
    assert!(l.why.contains("50 of the 100"), "{}", l.why);
}

/// issue 37: a max-rate flood whose sink got 1.2 kpps of what the sender got out was
/// `ok`. Where what the gateway forwarded was mostly dropped before the sink's
/// interface (queued behind the flood on the gateway's CPU: receive livelock), it is
/// overloaded (its rate no capacity); a gateway forwarding at its limit into a sink
/// that takes it all is its maximum forwarding rate, however small a share; the
/// firewall's own drops, or a paced trial, are not overloaded either.
#[test]
fn a_flood_far_past_the_gateway_is_overloaded_and_a_firewalls_drops_are_not() {
    let flood = |c: RateCounters| RateCounters {
        paced: false,
        gateway_in_dropped: Some(c.sent - c.gateway_in.unwrap_or(0)),
        ..c
    };
    // 1 084 032 sent, 55 122 taken in (and accepted by the rules), 3 forwarded, 0
    // received: the 1 000-rule nft flood with the sink not steered off the gateway's CPU.
    let over = flood(path(1_084_032, 55_122, 3, 3, 0));
    let why = overload(&over).expect("overloaded");
    assert_eq!(
        why,
        "a flood at the maximum rate: the gateway took in 55122 of the 1084032 packets the \
         sender got out, its receive backlog dropping 1028910 on receipt, and delivered 0 of \
         them (0.00 % of those sent): what it took in was lost on its way to the sink, queued \
         behind the flood on one CPU (receive livelock), so this rate is not the gateway's \
         capacity (pin the sink to a CPU of its own, or `fwbench ndr` for the rate it \
         carries without loss)"
    );
    // Forwarded, then dropped before the sink's interface: the same.
    assert!(overload(&flood(path(2_561_088, 9_083, 9_083, 0, 0))).is_some());
    // A policer in the gateway: it takes (nearly) everything in and drops on purpose.
    assert_eq!(
        overload(&flood(path(1_000_000, 990_000, 5_000, 5_000, 5_000))),
        None
    );
    // Steered: 29 026 forwarded and received of 789 184 (3.7 %): its forwarding rate.
    assert_eq!(
        overload(&flood(path(789_184, 29_100, 29_026, 29_026, 29_026))),
        None
    );
    // Just above a tenth received: not overloaded whatever was lost on the way.
    assert_eq!(
        overload(&flood(path(100_000, 40_000, 40_000, 10_000, 10_000))),
        None
    );
    // A drop model: everything taken in, nothing forwarded — the firewall's drops.
    assert_eq!(overload(&flood(path(130_000, 130_000, 0, 0, 0))), None);
    // Paced (a search's step): its loss is the search's to judge.
    assert_eq!(overload(&path(1_084_032, 55_122, 3, 3, 0)), None);
    // Without the gateway's ingress counter: nothing to tell the two apart.
    let blind = RateCounters {
        gateway_in: None,
        ..over
    };
    assert_eq!(overload(&blind), None);
}

/// issue 37: a max-rate flood through 10 000 nft rules on a busy 2-core machine sent
/// 2 752 packets in 2 s, `ok`, "limited by sender and gateway together": the sender
/// had 19 % and the softirq 31 % of CPU 0, 100 % busy — the rest was other processes'.
#[test]
fn a_flood_on_a_cpu_others_took_is_disturbed() {
    let busy = |sender: f64, softirq: f64, paced: bool| RateCounters {
        paced,
        sender_cpu: Some(sender),
        gateway_cpu: Some(softirq),
        sink_cpu: Some(0.09),
        shared_cpu: Some(SharedCpu {
            cpu: 0,
            softirq,
            busy: 1.0,
        }),
        ..path(2752, 2752, 2752, 2752, 2752)
    };
    assert_eq!(
        disturbed(&busy(0.19, 0.31, false)).as_deref(),
        Some(
            "the machine's other load took 41 % of CPU 0, which the sender and the gateway's \
             packet processing shared (sender 19 %, its softirq 31 %): the rate is the share \
             they got, neither's limit (run on a quiet machine, or pin them apart)"
        )
    );
    // 100 − 19 − 31 − 9 = 41 % above: disturbed; 100 − 40 − 30 − 9 = 21 %: not.
    assert_eq!(disturbed(&busy(0.40, 0.30, false)), None);
    // The path's own CPU: a sender and a softirq that fill it are the shared-cpu rate.
    assert_eq!(disturbed(&busy(0.55, 0.40, false)), None);
    // Paced, or no shared CPU: nothing to say here.
    assert_eq!(disturbed(&busy(0.10, 0.20, true)), None);
    let apart = RateCounters {
        shared_cpu: None,
        ..busy(0.10, 0.20, false)
    };
    assert_eq!(disturbed(&apart), None);
}

/// Issue 37: `fwbench flow --rules 5000 --flows 2 --sources 2 -t 3 --event add:1@1500ms
/// --load 0.5` read "limited by gateway: the gateway forwarded 5560 of 7283 packets";
/// the gap was the marker flow the added rule drops on purpose. Those packets are the
/// experiment: taken out of the judged losses (where the firewall acts, past the
/// gateway's ingress), and said.
#[test]
fn the_markers_intended_drops_are_not_the_gateways_limit() {
    // Paced, everything through but the marker's 1 723 dropped by the rule.
    let mut c = path(7283, 7283, 5560, 5560, 5560);
    c.marker_dropped = 1723;
    let l = limited_by(&c, 0.001);
    assert_eq!(l.by, LimitedBy::Nothing, "{}", l.why);
    assert_eq!(
        l.why,
        "the offered rate got through: 7283 packets sent, 5560 received: all but the 1723 \
         marker packets the update's rule dropped, as intended"
    );
    // The gateway lost 509 more than the marker's: its limit, and the words say both.
    c.marker_dropped = 1214;
    let l = limited_by(&c, 0.001);
    assert_eq!(l.by, LimitedBy::Gateway, "{}", l.why);
    assert_eq!(
        l.why,
        "the gateway forwarded 5560 of 7283 packets (1214 of the 1723 missing there marker \
         packets dropped by the update's rule, as intended)"
    );
    // Input topology (no egress counter): the drop shows at the sink's count.
    let mut i = path(7283, 7283, 0, 7283, 5560);
    i.gateway_out = None;
    i.marker_dropped = 1723;
    assert_eq!(limited_by(&i, 0.001).by, LimitedBy::Nothing);
    // A loss before the gateway's ingress is never excused by the marker's drops.
    let mut s = path(7283, 5560, 5560, 5560, 5560);
    s.marker_dropped = 1723;
    s.gateway_cpu = Some(0.2);
    let l = limited_by(&s, 0.001);
    assert_eq!(l.by, LimitedBy::Sender, "{}", l.why);
    assert!(
        l.why.starts_with("1723 of 7283 packets sent did not reach"),
        "{}",
        l.why
    );
    // Without the marker's count the verdict is the old one (the gateway's).
    c.marker_dropped = 0;
    assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Gateway);
    // A lossless flood says the marker's drops too.
    let mut f = RateCounters {
        paced: false,
        ..path(5000, 5000, 4000, 4000, 4000)
    };
    f.marker_dropped = 1000;
    let l = limited_by(&f, 0.001);
    assert_eq!(l.by, LimitedBy::Sender, "{}", l.why);
    assert!(
        l.why
            .contains("none was lost but the 1000 marker packets the update's rule dropped"),
        "{}",
        l.why
    );
}

/// Issue 37: a `flow --event add:1@1500ms -t 3` whose sender was 118.7 ms behind its
/// schedule printed it without a flag. With events, more than the 50 ms before each
/// update is flagged; without, more than a tenth of the traffic phase.
#[test]
fn a_sender_behind_its_schedule_beyond_the_bound_is_late() {
    let (lag, three_s, before) = (118_700_000, 3_000_000_000, Some(50_000_000));
    assert_eq!(
        late_sender(lag, three_s, before).as_deref(),
        Some(
            "the sender fell behind its schedule by up to 118.7 ms, more than the 50 ms \
             before each update its figures are compared with: the background may not have \
             arrived on time, so the updates' stall and loss may be the sender's"
        )
    );
    // At the bound: not late; just past it: late.
    assert_eq!(late_sender(50_000_000, three_s, before), None);
    assert!(late_sender(50_000_001, three_s, before).is_some());
    // No events: 118.7 ms of 3 s is 4 %, within the tenth; 300.1 ms is not.
    assert_eq!(late_sender(lag, three_s, None), None);
    assert_eq!(late_sender(300_000_000, three_s, None), None);
    assert_eq!(
        late_sender(300_100_000, three_s, None).as_deref(),
        Some(
            "the sender fell behind its schedule by up to 300.1 ms, more than 10 % of the \
             trial's 3.0 s of traffic: the load was not offered on the schedule asked for"
        )
    );
    // An unpaced sender has no lag.
    assert_eq!(late_sender(0, 0, None), None);
    assert_eq!(late_sender(0, three_s, before), None);
}

/// A slow flow (100 pps for 1 s): 103 packets sent and received, each interface
/// counting 3 frames of its link's neighbour discovery (measured: 106 in at the
/// gateway and the sink, 3 sent back on each link). It read "limited by sink: the sink
/// counted 103 of the 106 packets that reached it" — fwbench's limit, on a trial that
/// lost nothing. Whether anything was lost is the sender's and the sink's counts; a
/// loss is placed beyond each link's own frames, never made of them.
#[test]
fn a_links_neighbour_discovery_is_no_loss() {
    let c = path(103, 106, 106, 106, 103);
    let (by, why) = judge(&c, 0.001);
    assert_eq!(by, LimitedBy::Nothing, "{why}");
    assert_eq!(
        why,
        "the offered rate got through: 103 packets sent and received"
    );
    // Measured on a testbed used before: one link's discovery one way only.
    assert_eq!(
        judge(&path(101, 102, 101, 101, 101), 0.001).0,
        LimitedBy::Nothing
    );
    let discovery = Back {
        client_link: 3,
        sink_link: 3,
    };
    // A gateway that dropped 2 of them: as counted, the sink's stage shows more (its
    // interface's 3 frames of its own); beyond them, the gateway's.
    let mut lost = path(103, 106, 104, 104, 101);
    assert_eq!(judge(&lost, 0.001).0, LimitedBy::Sink, "as counted");
    lost.back = discovery;
    let (by, why) = judge(&lost, 0.001);
    assert_eq!(by, LimitedBy::Gateway, "{why}");
    assert_eq!(why, "the gateway forwarded 104 of 106 packets");
    // A frame the gateway sent back unanswered invents no loss before it: with a
    // marker the update's rule dropped (50, as intended), nothing else was lost.
    let mut marked = path(1000, 1000, 950, 950, 950);
    marked.marker_dropped = 50;
    marked.back = Back {
        client_link: 5,
        sink_link: 0,
    };
    let (by, why) = judge(&marked, 0.001);
    assert_eq!(by, LimitedBy::Nothing, "{why}");
    // Where every stage's loss is within its link's own frames, it is placed as
    // counted: the sink lost 2 of the 3 its interface held beyond the gateway's.
    let mut small = path(1000, 1000, 1000, 1003, 998);
    small.back = Back {
        client_link: 0,
        sink_link: 5,
    };
    let (by, why) = judge(&small, 0.001);
    assert_eq!(by, LimitedBy::Sink, "{why}");
}

/// More sent back than a link's discovery (ICMP errors, another talker on it) is none
/// of it: nothing of that interface's is taken for its own frames.
#[test]
fn more_sent_back_than_discovery_is_none_of_it() {
    assert_eq!(own_frames(3), 3);
    assert_eq!(own_frames(OWN_FRAMES_MAX), OWN_FRAMES_MAX);
    assert_eq!(own_frames(OWN_FRAMES_MAX + 1), 0);
    assert_eq!(own_frames(500), 0);
}
