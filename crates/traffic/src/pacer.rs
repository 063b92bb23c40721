//! Open-loop pacing: packet `k` is *intended* to leave at `start + k / rate`, whatever
//! happened to earlier packets. A sender that falls behind sends the overdue packets
//! at once (stamped with their intended times, so delays measured from them include
//! the lateness — no coordinated omission). Pure: time comes in as an argument.

/// Schedule of one sending thread.
#[derive(Debug, Clone)]
pub struct Pacer {
    start_ns: u64,
    /// Nanoseconds between packets; `None` = unpaced (as fast as possible).
    interval_ns: Option<f64>,
    /// Index of the next packet to send.
    next: u64,
}

impl Pacer {
    /// `pps`: packets per second of this thread; `None` for unpaced.
    pub fn new(start_ns: u64, pps: Option<f64>) -> Self {
        Pacer {
            start_ns,
            interval_ns: pps.filter(|p| *p > 0.0).map(|p| 1e9 / p),
            next: 0,
        }
    }

    pub fn is_paced(&self) -> bool {
        self.interval_ns.is_some()
    }

    /// Packets sent so far (= index of the next one).
    pub fn sent(&self) -> u64 {
        self.next
    }

    /// Intended send time of packet `k`.
    pub fn intended_ns(&self, k: u64) -> u64 {
        match self.interval_ns {
            Some(i) => self.start_ns.saturating_add((k as f64 * i) as u64),
            None => self.start_ns,
        }
    }

    /// The send time packet `k` is stamped with: its intended time when paced; `now_ns`
    /// (when it goes out) when unpaced.
    pub fn stamp_ns(&self, k: u64, now_ns: u64) -> u64 {
        if self.is_paced() {
            self.intended_ns(k)
        } else {
            now_ns
        }
    }

    /// How late the next packet is at `now_ns` (0 when unpaced or not yet due).
    pub fn lag_ns(&self, now_ns: u64) -> u64 {
        if !self.is_paced() {
            return 0;
        }
        now_ns.saturating_sub(self.intended_ns(self.next))
    }

    /// Packets due at `now_ns` and not yet sent (capped at `max`).
    pub fn due(&self, now_ns: u64, max: u64) -> u64 {
        match self.interval_ns {
            None => max,
            Some(i) => {
                if now_ns < self.start_ns {
                    return 0;
                }
                // Packet k is due once start + k·i ≤ now: k ≤ (now − start)/i.
                let scheduled = ((now_ns - self.start_ns) as f64 / i).floor() as u64 + 1;
                scheduled.saturating_sub(self.next).min(max)
            }
        }
    }

    /// Packets the schedule holds up to `now_ns` (sent or not).
    pub fn scheduled(&self, now_ns: u64) -> u64 {
        match self.interval_ns {
            None => self.next,
            Some(_) => self.next + self.due(now_ns, u64::MAX),
        }
    }

    /// Nanoseconds until the next packet is due (0 if it already is).
    pub fn wait_ns(&self, now_ns: u64) -> u64 {
        if !self.is_paced() {
            return 0;
        }
        self.intended_ns(self.next).saturating_sub(now_ns)
    }

    /// Record that `n` more packets went out.
    pub fn advance(&mut self, n: u64) {
        self.next += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulated time: a sender waking at the given instants (ns after start), sending
    /// everything due each time (batch cap 4). Each row: (now, due, sent after).
    #[test]
    fn schedule_table_at_1000_pps() {
        let mut p = Pacer::new(1_000, Some(1000.0)); // 1 ms apart, starting at t=1000
        let rows: &[(u64, u64, u64)] = &[
            (0, 0, 0),           // before the start
            (1_000, 1, 1),       // packet 0 is due exactly at the start
            (1_000_999, 0, 1),   // packet 1 is due at 1_001_000: not yet
            (1_001_000, 1, 2),   // now it is
            (2_001_000, 1, 3),   // packet 2 at start + 2 ms
            (10_000_000, 4, 7),  // far behind (packets 3..=9 due): capped at the batch of 4
            (10_000_000, 3, 10), // the rest of the backlog
            (10_001_001, 1, 11), // packet 10 at start + 10 ms
        ];
        for (now, want_due, want_sent) in rows.iter().copied() {
            let d = p.due(now, 4);
            assert_eq!(d, want_due, "due at {now}");
            p.advance(d);
            assert_eq!(p.sent(), want_sent, "sent after {now}");
        }
        assert_eq!(p.intended_ns(10), 10_001_000);
        assert_eq!(p.wait_ns(10_001_001), 999_999);
    }

    #[test]
    fn average_rate_is_exact_over_long_runs() {
        // 14 648.4375 pps (15 Mb/s of 128-byte payloads), woken every 250 µs for 10 s.
        let pps = 15e6 / (128.0 * 8.0);
        let mut p = Pacer::new(0, Some(pps));
        let mut now = 0;
        let mut last = 0;
        while now < 10_000_000_000 {
            let d = p.due(now, 64);
            p.advance(d);
            last = now;
            now += 250_000;
        }
        // Everything intended at or before the last wake-up went out, nothing more.
        let want = (last as f64 * pps / 1e9).floor() as u64 + 1;
        assert_eq!(p.sent(), want);
        assert!((p.sent() as f64 / 10.0 - pps).abs() / pps < 1e-4);
    }

    #[test]
    fn unpaced_is_always_due() {
        let mut p = Pacer::new(5, None);
        assert!(!p.is_paced());
        assert_eq!(p.due(0, 32), 32);
        p.advance(32);
        assert_eq!(p.wait_ns(0), 0);
        assert_eq!(p.scheduled(99), 32);
        // Stamped when sent, never late.
        assert_eq!(p.stamp_ns(40, 777), 777);
        assert_eq!(p.lag_ns(1_000_000), 0);
    }

    #[test]
    fn paced_packets_carry_their_intended_time_and_lateness_is_the_next_ones() {
        let mut p = Pacer::new(1_000, Some(1000.0)); // 1 ms apart from t=1000
        assert_eq!(p.stamp_ns(3, 99_999_999), 3_001_000);
        assert_eq!(p.lag_ns(500), 0, "before the start");
        assert_eq!(p.lag_ns(1_250), 250);
        p.advance(2); // packet 2 is next, intended at 2_001_000
        assert_eq!(p.lag_ns(2_001_000), 0);
        assert_eq!(p.lag_ns(2_501_000), 500_000);
    }

    #[test]
    fn scheduled_counts_the_backlog() {
        let mut p = Pacer::new(0, Some(1e6)); // 1 µs apart
        p.advance(3);
        assert_eq!(p.scheduled(9_999), 10);
        assert_eq!(p.due(9_999, u64::MAX), 7);
    }
}
