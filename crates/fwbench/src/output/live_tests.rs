//! Unit tests of `output::live`: intervals of each way of counting.
use super::*;
use crate::params::workload::PacketKind;

fn tick(t_s: f64, last: bool, sent: u64, recv: u64) -> Tick {
    let ns = (t_s * 1e9) as u64;
    Tick {
        t_s,
        last,
        roles: vec![
            (
                "server",
                Tally {
                    t_ns: ns,
                    count: recv,
                    bytes: recv * 18,
                    rtt_sum_ns: 0,
                },
            ),
            (
                "client",
                Tally {
                    t_ns: ns + 1000,
                    count: sent,
                    bytes: sent * 18,
                    rtt_sum_ns: 0,
                },
            ),
        ],
    }
}

#[test]
fn packet_intervals_are_differences_with_loss() {
    let mut iv = Intervals::new(&TrialKind::Packet(PacketKind::Flood, Default::default()));
    let a = iv.tick(&tick(1.0, false, 1000, 990)).unwrap();
    assert_eq!(
        (a.start_s, a.end_s, a.count, a.bytes),
        (0.0, 1.0, 990, 990 * 18)
    );
    assert_eq!((a.sent, a.lost), (Some(1000), Some(10)));
    assert!((a.loss_ratio.unwrap() - 0.01).abs() < 1e-12);
    assert!((a.per_s - 990.0).abs() < 1e-9 && (a.bits_per_s - 990.0 * 144.0).abs() < 1e-6);
    let b = iv.tick(&tick(2.0, false, 2000, 2000)).unwrap();
    // The 10 in flight at 1 s arrived in the second interval: lost −10 there.
    assert_eq!(
        (b.count, b.lost, b.loss_ratio),
        (1010, Some(-10), Some(0.0))
    );
    let c = iv.tick(&tick(2.5, true, 2500, 2490)).unwrap();
    assert!(c.last && (c.per_s - 980.0).abs() < 1e-6, "{c:?}");
    // A last tick right on the boundary adds nothing.
    assert!(iv.tick(&tick(2.5, true, 2500, 2490)).is_none());
    assert_eq!(iv.done.iter().map(|i| i.count).sum::<u64>(), 2490);
    assert!(a.text().contains("990 packets") && a.text().contains("lost 10 (1.00 %)"));
    assert_eq!(a.json()["type"], "interval");
}

#[test]
fn echo_intervals_have_mean_rtt() {
    let mut iv = Intervals::new(&TrialKind::Echo);
    let t = Tick {
        t_s: 1.0,
        last: false,
        roles: vec![(
            "client",
            Tally {
                t_ns: 1_000_000_000,
                count: 4,
                bytes: 256,
                rtt_sum_ns: 200_000,
            },
        )],
    };
    let i = iv.tick(&t).unwrap();
    assert_eq!((i.unit, i.count, i.rtt_mean_us), ("echoes", 4, Some(50.0)));
    assert_eq!(i.sent, None);
}
