//! Fine time bins for gateway events (issue 25). [`Bins`]: one flow at the sink —
//! received and lost packets and one-way delay per bin of *send* time, and the
//! sequence numbers and stamps that date a change in the flow's fate (the time to
//! effect). [`Txns`]: a request–response stream at its client (echo cycles, pings,
//! sessions) — completed and failed transactions and their latency per bin of
//! *start* time, and the start stamps that date a change in the stream's fate.
//!
//! Owns: placing each packet in its bin and each lost one at its interpolated send
//! time; the invariant that the bins' losses add up to the flow's loss once
//! [`Bins::close`] has been told how many packets were sent; the same for
//! transactions (every one recorded is in one bin, done or failed).
//! Must not: read clocks or sockets (stamps are passed in; unit-tested without I/O).

use proto::{FlowBins, TxnBins, TxnStreams};
use std::net::IpAddr;

/// Most bins one flow keeps (120 s of 1-ms bins); later stamps go to the last one.
pub const MAX_BINS: usize = 120_000;
/// Margin before the first packet's stamp where bin 0 starts (late packets, and the
/// loss before the first packet).
const MARGIN_BINS: u64 = 1_000;

/// Accumulates a flow's bins; feed packets in arrival order.
#[derive(Debug, Clone)]
pub struct Bins {
    b: FlowBins,
}

impl Bins {
    /// Bins `width_ns` wide (clamped to 1 µs … 1 ms).
    pub fn new(width_ns: u64) -> Bins {
        Bins {
            b: FlowBins {
                width_ns: width_ns.clamp(1_000, 1_000_000),
                ..FlowBins::default()
            },
        }
    }

    fn index(&mut self, tx_ns: u64) -> usize {
        let b = &mut self.b;
        let i = (tx_ns.saturating_sub(b.origin_ns) / b.width_ns) as usize;
        let i = i.min(MAX_BINS - 1);
        if i >= b.received.len() {
            b.received.resize(i + 1, 0);
            b.lost.resize(i + 1, 0);
            b.owd_sum_us.resize(i + 1, 0);
            b.owd_max_us.resize(i + 1, 0);
        }
        i
    }

    /// A packet with a new highest sequence number `seq` (`gap` packets missing just
    /// below it; `prev` the previous highest with its stamp), or the first packet.
    pub fn on_new_highest(&mut self, seq: u32, tx_ns: u64, owd_ns: u64, prev: Option<(u32, u64)>) {
        if self.b.first.is_none() {
            let w = self.b.width_ns;
            self.b.origin_ns = (tx_ns / w).saturating_sub(MARGIN_BINS) * w;
            self.b.first = Some((seq, tx_ns));
            self.b.first_owd_us = owd_ns / 1_000;
            // Everything before the first packet was lost (sequence numbers start at 0).
            if seq > 0 {
                let i = self.index(tx_ns);
                self.b.lost[i] += seq;
            }
        }
        if let Some((p, ptx)) = prev {
            let gap = seq.wrapping_sub(p).wrapping_sub(1);
            if gap > 0 {
                for k in 1..=u64::from(gap) {
                    let at = ptx + (tx_ns.saturating_sub(ptx)) * k / (u64::from(gap) + 1);
                    let i = self.index(at);
                    self.b.lost[i] += 1;
                }
                let longest = self
                    .b
                    .longest_gap
                    .map(|(a, _, b, _)| b.wrapping_sub(a))
                    .unwrap_or(0);
                if gap + 1 > longest {
                    self.b.longest_gap = Some((p, ptx, seq, tx_ns));
                }
            }
        }
        self.b.highest = Some((seq, tx_ns));
        self.b.highest_owd_us = owd_ns / 1_000;
        self.received(tx_ns, owd_ns);
    }

    /// A distinct packet below the highest: it was counted lost; take that back
    /// (from its own bin, else the nearest bin holding a loss).
    pub fn on_late(&mut self, tx_ns: u64, owd_ns: u64) {
        let i = self.index(tx_ns);
        let lost = &mut self.b.lost;
        let near = (0..lost.len())
            .flat_map(|d| [i.checked_sub(d), Some(i + d)])
            .flatten()
            .find(|&j| lost.get(j).is_some_and(|&n| n > 0));
        if let Some(j) = near {
            lost[j] -= 1;
        }
        self.received(tx_ns, owd_ns);
    }

    fn received(&mut self, tx_ns: u64, owd_ns: u64) {
        let i = self.index(tx_ns);
        let us = owd_ns / 1_000;
        self.b.received[i] += 1;
        self.b.owd_sum_us[i] += us;
        self.b.owd_max_us[i] = self.b.owd_max_us[i].max(us.min(u64::from(u32::MAX)) as u32);
    }

    /// The bins so far.
    pub fn finish(self) -> FlowBins {
        self.b
    }
}

/// Place the packets sent after the highest received (`sent` in all) as lost, one
/// every mean send interval after it, so the bins' losses add up to `sent` minus
/// the packets received.
pub fn close(b: &mut FlowBins, sent: u64) {
    let Some((h, htx)) = b.highest else {
        return;
    };
    let tail = sent.saturating_sub(u64::from(h) + 1);
    if tail == 0 || b.width_ns == 0 {
        return;
    }
    let interval = match b.first {
        Some((f, ftx)) if h > f => htx.saturating_sub(ftx) / u64::from(h - f),
        _ => b.width_ns,
    };
    let mut acc = Bins {
        b: std::mem::take(b),
    };
    for k in 1..=tail {
        let i = acc.index(htx + interval * k);
        acc.b.lost[i] += 1;
    }
    *b = acc.b;
}

/// Sum of the bins' losses.
pub fn lost(b: &FlowBins) -> u64 {
    b.lost.iter().map(|&n| u64::from(n)).sum()
}

/// Failed starts [`Txns`] keeps after the last completed transaction (the smallest).
const MAX_FAILED_AFTER: usize = 64;

/// Accumulates a request–response stream's transactions in bins of their start
/// time. Record them in any order (the background's streams share one): the bins,
/// the first and last completed and the first failure after the last completed come
/// out the same.
#[derive(Debug, Clone)]
pub struct Txns {
    b: TxnBins,
    /// Starts of failed transactions later than the last completed one's start (the
    /// smallest [`MAX_FAILED_AFTER`]).
    failed_after: Vec<u64>,
}

impl Txns {
    /// Bins `width_ns` wide (clamped to 1 µs … 1 ms), bin 0 starting at `origin_ns`
    /// (rounded down to the width; earlier starts count in bin 0).
    pub fn new(width_ns: u64, origin_ns: u64) -> Txns {
        let w = width_ns.clamp(1_000, 1_000_000);
        Txns {
            b: TxnBins {
                width_ns: w,
                origin_ns: origin_ns / w * w,
                ..TxnBins::default()
            },
            failed_after: vec![],
        }
    }

    fn index(&mut self, start_ns: u64) -> usize {
        let b = &mut self.b;
        let i = ((start_ns.saturating_sub(b.origin_ns) / b.width_ns) as usize).min(MAX_BINS - 1);
        if i >= b.done.len() {
            b.done.resize(i + 1, 0);
            b.failed.resize(i + 1, 0);
            b.latency_sum_us.resize(i + 1, 0);
            b.latency_max_us.resize(i + 1, 0);
        }
        i
    }

    /// A transaction that started at `start_ns` (CLOCK_REALTIME) and completed after
    /// `latency_ns` (its round trip, or its connection setup).
    pub fn done(&mut self, start_ns: u64, latency_ns: u64) {
        let i = self.index(start_ns);
        let us = latency_ns / 1_000;
        let b = &mut self.b;
        b.done[i] += 1;
        b.latency_sum_us[i] += us;
        b.latency_max_us[i] = b.latency_max_us[i].max(us.min(u64::from(u32::MAX)) as u32);
        if b.first_done.is_none_or(|(s, _)| start_ns < s) {
            b.first_done = Some((start_ns, latency_ns));
        }
        if b.last_done.is_none_or(|(s, _)| start_ns >= s) {
            b.last_done = Some((start_ns, latency_ns));
            self.failed_after.retain(|&f| f > start_ns);
        }
    }

    /// A transaction that started at `start_ns` and failed (lost, unsent, refused,
    /// timed out).
    pub fn failed(&mut self, start_ns: u64) {
        let i = self.index(start_ns);
        self.b.failed[i] += 1;
        if self.b.last_done.is_none_or(|(s, _)| start_ns > s) {
            self.failed_after.push(start_ns);
            if self.failed_after.len() > MAX_FAILED_AFTER {
                self.failed_after.sort_unstable();
                self.failed_after.truncate(MAX_FAILED_AFTER);
            }
        }
    }

    /// Transactions recorded so far (done and failed).
    pub fn count(&self) -> u64 {
        self.b
            .done
            .iter()
            .chain(&self.b.failed)
            .map(|&n| u64::from(n))
            .sum()
    }

    /// The bins, with the failures before the first completed one counted (in the
    /// bins before its bin).
    pub fn finish(mut self) -> TxnBins {
        self.b.failed_after_last = self.failed_after.iter().copied().min();
        let first_bin = self
            .b
            .first_done
            .map(|(s, _)| (s.saturating_sub(self.b.origin_ns) / self.b.width_ns) as usize);
        self.b.failed_before_first = match first_bin {
            Some(i) => self.b.failed.iter().take(i).map(|&n| u64::from(n)).sum(),
            None => 0,
        };
        self.b
    }
}

/// Transactions a recorder keeps before it adds them to its shared [`Txns`].
const RECORD_BATCH: usize = 256;

/// A stream's side of a shared [`Txns`] (the background's streams share one; a
/// marker stream has one of its own): transactions are batched and added under the
/// lock [`RECORD_BATCH`] at a time, and the rest on [`Recorder::flush`] or drop.
pub struct Recorder {
    batch: Vec<(u64, Option<u64>)>,
    into: std::sync::Arc<std::sync::Mutex<Txns>>,
}

impl Recorder {
    pub fn new(into: std::sync::Arc<std::sync::Mutex<Txns>>) -> Recorder {
        Recorder {
            batch: Vec::with_capacity(RECORD_BATCH),
            into,
        }
    }

    /// A transaction that started at `start_ns`: completed after `latency_ns`
    /// (`Some`) or failed (`None`).
    pub fn record(&mut self, start_ns: u64, latency_ns: Option<u64>) {
        self.batch.push((start_ns, latency_ns));
        if self.batch.len() >= RECORD_BATCH {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if let Ok(mut t) = self.into.lock() {
            for (s, l) in self.batch.drain(..) {
                match l {
                    Some(l) => t.done(s, l),
                    None => t.failed(s),
                }
            }
        }
        self.batch.clear();
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}

/// A client's transactions for gateway events: the marker stream's and the
/// background's, each a shared [`Txns`] its streams' [`Recorder`]s add to.
#[derive(Clone)]
pub struct Streams {
    marker: std::sync::Arc<std::sync::Mutex<Txns>>,
    background: std::sync::Arc<std::sync::Mutex<Txns>>,
}

impl Streams {
    /// Bins of `width_ns` from `origin_ns` on (CLOCK_REALTIME), for both.
    pub fn new(width_ns: u64, origin_ns: u64) -> Streams {
        let shared = || std::sync::Arc::new(std::sync::Mutex::new(Txns::new(width_ns, origin_ns)));
        Streams {
            marker: shared(),
            background: shared(),
        }
    }

    /// A recorder of the marker stream (`true`) or of a background stream.
    pub fn recorder(&self, marker: bool) -> Recorder {
        Recorder::new(
            if marker {
                &self.marker
            } else {
                &self.background
            }
            .clone(),
        )
    }

    /// The bins (call once the recorders have flushed).
    pub fn finish(&self, marker_source: Option<IpAddr>, background_streams: u32) -> TxnStreams {
        let take =
            |t: &std::sync::Mutex<Txns>| t.lock().map(|t| t.clone().finish()).unwrap_or_default();
        TxnStreams {
            marker_source,
            marker: take(&self.marker),
            background: take(&self.background),
            background_streams,
        }
    }
}

/// Sum of the transaction bins' failures.
pub fn failed(b: &TxnBins) -> u64 {
    b.failed.iter().map(|&n| u64::from(n)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed (seq, tx) in arrival order as the sink's flow state does.
    fn feed(arrivals: &[u32], interval: u64) -> (FlowBins, u64) {
        let mut bins = Bins::new(1_000_000);
        let mut highest: Option<(u32, u64)> = None;
        let mut seen = std::collections::HashSet::new();
        let mut received = 0;
        for &seq in arrivals {
            let tx = 1_700_000_000_000_000_000 + u64::from(seq) * interval;
            if !seen.insert(seq) {
                continue;
            }
            received += 1;
            match highest {
                Some((h, _)) if seq < h => bins.on_late(tx, 50_000),
                _ => {
                    bins.on_new_highest(seq, tx, 50_000, highest);
                    highest = Some((seq, tx));
                }
            }
        }
        (bins.finish(), received)
    }

    #[test]
    fn loss_in_the_bins_equals_the_flows_loss() {
        // 0.1 ms apart: gaps, a late packet, a duplicate, loss at the head and tail.
        let arrivals: Vec<u32> = [3, 4, 5, 9, 10, 7, 7, 11]
            .into_iter()
            .chain(40..200)
            .chain([30])
            .collect();
        let (mut b, received) = feed(&arrivals, 100_000);
        let sent = 250;
        close(&mut b, sent);
        assert_eq!(lost(&b), sent - received);
        assert_eq!(
            b.received.iter().map(|&n| u64::from(n)).sum::<u64>(),
            received
        );
        // The longest run lost: 11 → 40.
        let (a, _, z, _) = b.longest_gap.unwrap();
        assert_eq!((a, z), (11, 40));
        assert_eq!(b.first.unwrap().0, 3);
        assert_eq!(b.highest.unwrap().0, 199);
    }

    #[test]
    fn a_drop_shows_as_loss_in_the_bins_after_it() {
        // 10 packets per 1-ms bin; packets 100.. are dropped (sent 300).
        let (mut b, _) = feed(&(0..100).collect::<Vec<_>>(), 100_000);
        close(&mut b, 300);
        let first_bin = b.received.iter().position(|&n| n > 0).unwrap();
        assert_eq!(b.received[first_bin..first_bin + 10], [10; 10]);
        assert_eq!(b.lost[first_bin + 10..first_bin + 30], [10; 20]);
        assert_eq!(lost(&b), 200);
        assert_eq!(b.highest.unwrap().0, 99);
    }

    #[test]
    fn delay_is_summed_and_maxed_per_bin() {
        let mut bins = Bins::new(1_000_000);
        bins.on_new_highest(0, 5_000_000_000, 40_000, None);
        bins.on_new_highest(1, 5_000_100_000, 90_000, Some((0, 5_000_000_000)));
        let b = bins.finish();
        let i = b.received.iter().position(|&n| n > 0).unwrap();
        assert_eq!(
            (b.received[i], b.owd_sum_us[i], b.owd_max_us[i]),
            (2, 130, 90)
        );
    }

    #[test]
    fn transactions_in_any_order_give_the_same_bins_and_marks() {
        let t0 = 1_700_000_000_000_000_000u64;
        let ms = 1_000_000;
        // 0..10 ms: one done per 0.5 ms (latency 100 µs); a failure at 2.2 ms; then
        // from 10 ms on everything fails (a drop took effect at 10.1 ms).
        let mut events: Vec<(u64, Option<u64>)> = (0..20)
            .map(|i| (t0 + i * ms / 2 + 100_000, Some(100_000)))
            .collect();
        events.push((t0 + 2 * ms + 200_000, None));
        events.extend((0..10).map(|i| (t0 + 10 * ms + 100_000 + i * ms, None)));
        let run = |order: &[(u64, Option<u64>)]| {
            let mut t = Txns::new(ms, t0);
            for &(s, l) in order {
                match l {
                    Some(l) => t.done(s, l),
                    None => t.failed(s),
                }
            }
            assert_eq!(t.count(), 31);
            t.finish()
        };
        let b = run(&events);
        let mut rev = events.clone();
        rev.reverse();
        assert_eq!(run(&rev), b, "order does not matter");
        assert_eq!(b.done[..10], [2; 10]);
        assert_eq!(b.latency_sum_us[0], 200);
        assert_eq!(b.latency_max_us[0], 100);
        assert_eq!(failed(&b), 11);
        assert_eq!(b.failed[2], 1);
        assert_eq!(b.failed[10..20], [1; 10]);
        assert_eq!(b.first_done, Some((t0 + 100_000, 100_000)));
        assert_eq!(b.last_done, Some((t0 + 9 * ms + ms / 2 + 100_000, 100_000)));
        // The first failure after the last done: not the one at 2.2 ms.
        assert_eq!(b.failed_after_last, Some(t0 + 10 * ms + 100_000));
        assert_eq!(b.failed_before_first, 0);
    }

    #[test]
    fn a_stream_let_through_counts_what_failed_before() {
        let t0 = 1_700_000_000_000_000_000u64;
        let ms = 1_000_000;
        let mut t = Txns::new(ms, t0);
        for i in 0..5 {
            t.failed(t0 + i * 100 * ms);
        }
        t.done(t0 + 520 * ms, 80_000);
        t.done(t0 + 521 * ms, 80_000);
        let b = t.finish();
        assert_eq!(b.failed_before_first, 5);
        assert_eq!(b.first_done, Some((t0 + 520 * ms, 80_000)));
        assert_eq!(b.failed_after_last, None);
    }
}
