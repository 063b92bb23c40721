//! RTT histograms (HdrHistogram, 3 significant digits, 1 ns .. 100 s asked, values up
//! to [`HELD_NS`] held as recorded). A value past that is counted in
//! [`RttHistogram::beyond`] and recorded as 100 s (the histogram's highest trackable
//! value); the longest one is kept, and stated as the maximum — so a maximum above
//! [`HELD_NS`] says that the mean, sd and top percentiles count clamped values.

use hdrhistogram::Histogram;
use proto::{Durations, RttSummary, SessionClientResults};

/// The sessions a client completed: how many, their bytes and their times (whole
/// session, connect, first byte, last byte), as its workers merge them.
#[derive(Debug, Default)]
pub struct SessionTimes {
    pub sessions: u64,
    pub bytes: u64,
    pub session: RttHistogram,
    pub connect: RttHistogram,
    pub ttfb: RttHistogram,
    pub ttlb: RttHistogram,
}

impl SessionTimes {
    /// One session of `bytes` done; the times in ns.
    pub fn record(&mut self, bytes: u64, session: u64, connect: u64, ttfb: u64, ttlb: u64) {
        self.sessions += 1;
        self.bytes += bytes;
        self.session.record(session);
        self.connect.record(connect);
        self.ttfb.record(ttfb);
        self.ttlb.record(ttlb);
    }

    pub fn merge(&mut self, o: &SessionTimes) {
        self.sessions += o.sessions;
        self.bytes += o.bytes;
        self.session.merge(&o.session);
        self.connect.merge(&o.connect);
        self.ttfb.merge(&o.ttfb);
        self.ttlb.merge(&o.ttlb);
    }

    /// Their count, bytes and distributions into the client's results.
    pub fn fill(&self, r: &mut SessionClientResults) {
        r.sessions = self.sessions;
        r.bytes = self.bytes;
        r.session = self.session.durations();
        r.connect = self.connect.durations();
        r.ttfb = self.ttfb.durations();
        r.ttlb = self.ttlb.durations();
    }
}

/// Highest trackable value asked of HdrHistogram, ns (100 s).
const HIGHEST_NS: u64 = 100_000_000_000;

/// The longest duration the histograms hold as recorded, ns: their counts array for a
/// highest trackable 100 s ends at 2³⁷ − 1 ns (≈ 137.4 s), at 3 significant digits as
/// at 2. A value past it is clamped to 100 s and counted in [`RttHistogram::beyond`];
/// a stated maximum above it is the longest such value, never one a histogram held.
pub const HELD_NS: u64 = (1 << 37) - 1;

#[derive(Debug, Clone)]
pub struct RttHistogram {
    h: Histogram<u64>,
    /// Values past [`HELD_NS`], recorded clamped.
    beyond: u64,
    /// The longest of them (0: none).
    longest: u64,
}

impl Default for RttHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl RttHistogram {
    pub fn new() -> Self {
        // INVARIANT: these bounds are valid constants (low ≥ 1, high ≥ 2·low, sigfig ≤ 5).
        let h = Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid bounds");
        RttHistogram::of(h)
    }

    /// Two significant digits instead of three (1 % resolution): about a tenth of the
    /// memory, for per-client histograms of many thousands of clients.
    pub fn compact() -> Self {
        // INVARIANT: these bounds are valid constants (low ≥ 1, high ≥ 2·low, sigfig ≤ 5).
        let h = Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("valid bounds");
        RttHistogram::of(h)
    }

    fn of(h: Histogram<u64>) -> Self {
        RttHistogram {
            h,
            beyond: 0,
            longest: 0,
        }
    }

    /// Record one round trip; a value past [`HELD_NS`] is clamped, and counted.
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    pub fn merge(&mut self, other: &RttHistogram) {
        // Same bounds on both sides, so adding cannot fail; ignore the impossible error.
        let _ = self.h.add(&other.h);
        self.beyond += other.beyond;
        self.longest = self.longest.max(other.longest);
    }

    /// Values recorded past [`HELD_NS`] (clamped to 100 s in the distribution).
    pub fn beyond(&self) -> u64 {
        self.beyond
    }

    /// The largest value: the histogram's, or the longest clamped one (then above
    /// [`HELD_NS`]).
    fn max_ns(&self) -> u64 {
        if self.beyond > 0 {
            self.longest.max(self.h.max())
        } else {
            self.h.max()
        }
    }

    /// The distribution as a [`Durations`] (with the standard deviation).
    pub fn durations(&self) -> Durations {
        if self.h.is_empty() {
            return Durations::default();
        }
        let n = self.h.len();
        // HdrHistogram's stdev is the population one; scale to the sample sd.
        let sd = if n > 1 {
            self.h.stdev() * (n as f64 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Durations {
            count: n,
            min_ns: self.h.min(),
            mean_ns: self.h.mean(),
            sd_ns: sd,
            p50_ns: self.h.value_at_quantile(0.50),
            p90_ns: self.h.value_at_quantile(0.90),
            p99_ns: self.h.value_at_quantile(0.99),
            max_ns: self.max_ns(),
        }
    }

    /// The recorded values as (value, count) per bucket, ascending (a histogram
    /// another process can rebuild with [`RttHistogram::record_n`]).
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// Record `count` values of `ns` (past [`HELD_NS`]: clamped and counted, as
    /// [`RttHistogram::record`]).
    pub fn record_n(&mut self, ns: u64, count: u64) {
        let ns = ns.max(1);
        if self.h.record_n(ns, count).is_err() {
            self.h.saturating_record_n(ns, count);
            self.beyond += count;
            self.longest = self.longest.max(ns);
        }
    }

    pub fn summary(&self) -> RttSummary {
        if self.h.is_empty() {
            return RttSummary::default();
        }
        RttSummary {
            count: self.h.len(),
            min_ns: self.h.min(),
            mean_ns: self.h.mean(),
            p50_ns: self.h.value_at_quantile(0.50),
            p90_ns: self.h.value_at_quantile(0.90),
            p99_ns: self.h.value_at_quantile(0.99),
            p999_ns: self.h.value_at_quantile(0.999),
            max_ns: self.max_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_data() {
        let mut h = RttHistogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        let near = |a: u64, b: u64| a.abs_diff(b) * 1000 <= b; // within 0.1 %
        assert!(near(s.p50_ns, 500_000), "{s:?}");
        assert!(near(s.p90_ns, 900_000), "{s:?}");
        assert!(near(s.p99_ns, 990_000), "{s:?}");
        assert!(near(s.max_ns, 1_000_000), "{s:?}");
        assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
    }

    #[test]
    fn buckets_rebuild_the_same_distribution() {
        let mut a = RttHistogram::new();
        for v in [5u64, 7_000, 7_001, 123_456_789, 123_456_789] {
            a.record(v);
        }
        let mut b = RttHistogram::new();
        for (v, n) in a.buckets() {
            b.record_n(v, n);
        }
        assert_eq!(a.summary(), b.summary());
        assert_eq!(a.buckets().iter().map(|(_, n)| n).sum::<u64>(), 5);
        assert!(RttHistogram::new().buckets().is_empty());
    }

    /// `fwbench http --size 64G` at ~400 MB/s takes ~170 s a download: past what the
    /// histograms hold, recorded as 100 s — its mean read 100 000 ms unflagged. Such
    /// values are counted, and the maximum states the longest (above [`HELD_NS`]), so
    /// the controller can tell a clamped distribution from a held one.
    #[test]
    fn values_past_the_histograms_range_are_counted_and_their_maximum_kept() {
        for mut h in [RttHistogram::new(), RttHistogram::compact()] {
            h.record(HELD_NS);
            assert_eq!(h.beyond(), 0);
            assert!(h.durations().max_ns <= HELD_NS, "{:?}", h.durations());
            h.record(HELD_NS + 1);
            assert_eq!(h.beyond(), 1);
            assert_eq!(h.durations().max_ns, HELD_NS + 1);
        }
        let mut a = SessionTimes::default();
        a.record(1 << 36, 170_000_000_000, 1_000, 2_000, 170_000_000_000);
        let mut b = SessionTimes::default();
        b.record(1 << 36, 130_000_000_000, 1_000, 2_000, 130_000_000_000);
        // 130 s is held as recorded; 170 s is not.
        assert_eq!(b.ttlb.beyond(), 0);
        assert!(b.ttlb.durations().max_ns <= HELD_NS);
        b.merge(&a);
        assert_eq!(
            (b.ttlb.beyond(), b.session.beyond(), b.ttfb.beyond()),
            (1, 1, 0)
        );
        let d = b.ttlb.durations();
        assert_eq!(d.max_ns, 170_000_000_000, "{d:?}");
        // The mean counts the clamped download as 100 s: the maximum says so.
        assert!(d.mean_ns < 120e9, "{d:?}");
        assert!(b.ttfb.durations().max_ns <= HELD_NS);
    }

    #[test]
    fn merge_and_empty() {
        assert_eq!(RttHistogram::new().summary(), RttSummary::default());
        let mut a = RttHistogram::new();
        let mut b = RttHistogram::new();
        a.record(10);
        b.record(1_000_000);
        a.merge(&b);
        assert_eq!(a.summary().count, 2);
        assert!(a.summary().max_ns >= 999_000);
    }
}
