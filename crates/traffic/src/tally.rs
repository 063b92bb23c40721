//! Accounting shared by the packet sources (UDP/AF_PACKET in `udp`, AF_XDP in
//! `xsk::source`) and the packet sinks (UDP sockets in `udp`, AF_XDP in `xsk::sink`):
//! what one thread counted, and how the threads' counts become one result.
//!
//! Owns: per-thread tallies ([`SourceTally`], [`SinkTally`]), the per-datagram sink
//! accounting (probe, size histogram) and per-flow accounting ([`FlowState`]:
//! distinct packets, duplicates, reordering, one-way delay, RFC 3550 jitter, time
//! bins), joining worker threads, merging; and what a source's controlling side shares
//! with its sender threads ([`SourceControl`]: start gate, stop flag, start time, live
//! counters) and each thread's share of the rate ([`thread_pace`]); what a sink shares
//! with its receiving threads ([`SinkControl`]) and when they are done ([`Drain`]).
//! Must not: do I/O or read clocks (times are passed in).

use crate::gate::{Gate, StartGate};
use crate::hist::RttHistogram;
use crate::probe::Probe;
use crate::TrafficError;
use proto::{
    count_size, count_source, Counter, FlowRx, SizeCount, SourceRx, UdpSinkResults,
    UdpSourceResults,
};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Packets and their payload bytes so far, all threads of a source or a sink (read
/// while the trial runs: live lines, adaptive length). One lock over the pair, not
/// two atomics: a reader between a thread's two adds saw packets without their bytes,
/// and an interval's bytes then missed its packets' (a CI run: 20 023 packets of
/// 18 bytes, 360 090 bytes). Threads add once per batch, so the lock is cheap.
#[derive(Clone, Default)]
pub(crate) struct LiveCount(Arc<Mutex<(u64, u64)>>);

impl LiveCount {
    /// (packets, payload bytes), of the same moment.
    pub fn get(&self) -> (u64, u64) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A thread counted `packets` of `bytes` payload bytes.
    pub fn add(&self, packets: u64, bytes: u64) {
        let mut c = self.0.lock().unwrap_or_else(|e| e.into_inner());
        c.0 += packets;
        c.1 += bytes;
    }
}

/// What a source and its sender threads share (each thread holds a clone).
#[derive(Clone)]
pub(crate) struct SourceControl {
    pub gate: StartGate,
    pub stop: Arc<AtomicBool>,
    /// CLOCK_MONOTONIC of the start (0: not started).
    pub started_ns: Arc<AtomicU64>,
    sent: LiveCount,
}

impl SourceControl {
    pub fn new() -> SourceControl {
        SourceControl {
            gate: StartGate::new(),
            stop: Arc::new(AtomicBool::new(false)),
            started_ns: Arc::new(AtomicU64::new(0)),
            sent: LiveCount::default(),
        }
    }

    /// (packets, payload bytes) sent so far.
    pub fn live(&self) -> (u64, u64) {
        self.sent.get()
    }

    /// A thread sent `packets` of `bytes` payload bytes.
    pub fn counted(&self, packets: u64, bytes: u64) {
        self.sent.add(packets, bytes);
    }

    /// Let the threads go, started at `now_ns`.
    pub fn start(&self, now_ns: u64) {
        self.started_ns.store(now_ns, Ordering::SeqCst);
        self.gate.open(Gate::Go);
    }

    /// Tell the threads to stop (and threads never started to end); the start time.
    pub fn halt(&self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        let t0 = self.started_ns.load(Ordering::SeqCst);
        self.gate.open(Gate::Abort);
        t0
    }
}

/// What a sink and its receiving threads share (each thread holds a clone).
#[derive(Clone, Default)]
pub(crate) struct SinkControl {
    stop: Arc<AtomicBool>,
    received: LiveCount,
}

impl SinkControl {
    /// Packets received so far.
    pub fn progress(&self) -> u64 {
        self.received.get().0
    }

    /// (packets, payload bytes) received so far.
    pub fn live(&self) -> (u64, u64) {
        self.received.get()
    }

    /// A thread received `packets` of `bytes` payload bytes.
    pub fn counted(&self, packets: u64, bytes: u64) {
        self.received.add(packets, bytes);
    }

    /// Tell the threads to drain and end.
    pub fn halt(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Longest drain after stop while packets keep arriving. A saturated gateway (thousands
/// of rules, a deep backlog) still delivers queued packets for up to a second or more
/// after the sender stops; cutting the drain short counted them as lost although no
/// counter had dropped them (a CI run saw 3 % of the loss unplaced with a 500-ms cap).
/// The drain ends much sooner in the usual case: 50 ms without a packet.
pub(crate) const DRAIN_MAX_NS: u64 = 2_500_000_000;

/// Quiet time that ends a sink thread's drain after the stop.
const DRAIN_QUIET_NS: u64 = 50_000_000;

/// When a sink thread is done: after the stop, once [`DRAIN_QUIET_NS`] pass without a
/// packet, or [`DRAIN_MAX_NS`] after it saw the stop (times passed in).
#[derive(Debug, Default)]
pub(crate) struct Drain {
    quiet_since: Option<u64>,
    stop_seen: Option<u64>,
}

impl Drain {
    /// A receive at `now` took `n` packets.
    pub fn saw(&mut self, now: u64, n: usize) {
        if n == 0 {
            self.quiet_since.get_or_insert(now);
        } else {
            self.quiet_since = None;
        }
    }

    /// Is the thread done at `now` (`stopping`: the stop was asked for)?
    pub fn done(&mut self, now: u64, stopping: bool) -> bool {
        if !stopping {
            return false;
        }
        let since = *self.stop_seen.get_or_insert(now);
        let quiet = self.quiet_since.is_some_and(|q| now - q >= DRAIN_QUIET_NS);
        quiet || now - since >= DRAIN_MAX_NS
    }
}

/// What one sender thread sends: sizes, batches and its pace.
pub(crate) struct SenderPlan {
    /// The largest payload (of a mix) or every packet's.
    pub payload: usize,
    /// A size mix's order (`None`: one size).
    pub order: Option<Arc<proto::MixOrder>>,
    pub batch: usize,
    /// This thread's share of the source's packets/s (`None`: unpaced).
    pub pps: Option<f64>,
    /// Threads interleave: thread `j` starts `j` packets (of the total rate) late.
    pub phase_ns: u64,
    /// Each flow sends one datagram, then the thread ends (new flows, issue 26).
    pub new_flows: bool,
    /// Added to a flow's index to stamp it: its number in the trial
    /// ([`proto::UdpSourceSpec::first_flow`]).
    pub first_flow: u16,
}

impl SenderPlan {
    /// Thread `j` of `spec`'s source; `order` is the mix's, shared by every thread.
    pub fn new(
        spec: &proto::UdpSourceSpec,
        order: &Option<Arc<proto::MixOrder>>,
        j: usize,
    ) -> SenderPlan {
        SenderPlan {
            payload: spec.payload as usize,
            order: order.clone(),
            batch: spec.batch as usize,
            pps: spec.pps.map(|p| p / f64::from(spec.threads)),
            phase_ns: spec.pps.map(|p| (j as f64 * 1e9 / p) as u64).unwrap_or(0),
            new_flows: spec.new_flows,
            // Checked by `check_source`: below MAX_FLOWS.
            first_flow: spec.first_flow as u16,
        }
    }
}

/// Join every worker: their results in order, and the first failure (a thread's
/// error, or `what` when one panicked).
pub(crate) fn join_all<T>(
    workers: Vec<JoinHandle<Result<T, TrafficError>>>,
    what: &str,
) -> (Vec<T>, Option<TrafficError>) {
    let mut out = Vec::new();
    let mut first_err = None;
    for w in workers {
        match w.join() {
            Ok(Ok(t)) => out.push(t),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(TrafficError::BadSpec(format!("{what} panicked")));
            }
        }
    }
    (out, first_err)
}

/// What one sender thread counted.
#[derive(Default)]
pub(crate) struct SourceTally {
    pub sent: Counter,
    pub per_flow: Vec<(u16, u64)>,
    pub scheduled: u64,
    pub max_lag_ns: u64,
    pub send_errors: u64,
    /// CLOCK_MONOTONIC when the thread's last send returned (0: it sent nothing).
    pub ended_ns: u64,
    /// Packets per payload size (a size mix only).
    pub sizes: Vec<SizeCount>,
}

/// The threads' tallies as one source result: `flows` flows, started at `t0`
/// (0: never started), stopped at `stopped_ns`. The sending time ends when the last
/// thread's last send returned: a send in progress at the stop (a batch takes
/// milliseconds through a slow gateway) is counted, so its time is too.
pub(crate) fn merge_sources<'a>(
    flows: u32,
    t0: u64,
    stopped_ns: u64,
    tallies: impl IntoIterator<Item = &'a SourceTally>,
) -> UdpSourceResults {
    let mut r = UdpSourceResults {
        sent_per_flow: vec![0; flows as usize],
        ..Default::default()
    };
    let mut ended_ns = stopped_ns;
    for t in tallies {
        r.sent.merge(&t.sent);
        r.scheduled += t.scheduled;
        r.max_lag_ns = r.max_lag_ns.max(t.max_lag_ns);
        r.send_errors += t.send_errors;
        ended_ns = ended_ns.max(t.ended_ns);
        for &(f, n) in &t.per_flow {
            r.sent_per_flow[f as usize] = n;
        }
        for c in &t.sizes {
            count_size(&mut r.sent_sizes, c.payload, c.packets);
        }
    }
    r.elapsed_ns = if t0 == 0 { 0 } else { ended_ns - t0 };
    r
}

/// What one sink thread counted.
pub(crate) struct SinkTally {
    pub flows: Vec<FlowState>,
    pub received: Counter,
    pub unstamped: u64,
    /// CLOCK_MONOTONIC of the first and last batch with packets (0: none yet).
    pub first_ns: u64,
    pub last_ns: u64,
    pub sizes: Vec<SizeCount>,
    /// Packets per source address (when asked for), and past [`proto::MAX_SOURCES`].
    pub sources: Vec<SourceRx>,
    pub other_sources: u64,
}

impl SinkTally {
    pub fn new(flows: u32, bin_ns: u64) -> SinkTally {
        SinkTally {
            flows: (0..flows).map(|f| FlowState::new(f, bin_ns)).collect(),
            received: Counter::default(),
            unstamped: 0,
            first_ns: 0,
            last_ns: 0,
            sizes: Vec::new(),
            sources: Vec::new(),
            other_sources: 0,
        }
    }

    /// One datagram from `addr` (sinks asked to count sources).
    pub fn on_source(&mut self, addr: IpAddr) {
        count_source(&mut self.sources, &mut self.other_sources, addr, 1);
    }

    /// One datagram's UDP payload, received at `rx_ns` (CLOCK_REALTIME).
    pub fn on_datagram(&mut self, payload: &[u8], rx_ns: u64) {
        self.received.add(payload.len());
        count_size(&mut self.sizes, payload.len() as u32, 1);
        match Probe::parse(payload) {
            Some(p) if (p.flow as usize) < self.flows.len() => {
                self.flows[p.flow as usize].on_packet(p.seq, p.tx_ns, rx_ns, payload.len())
            }
            _ => self.unstamped += 1,
        }
    }

    /// A batch of packets arrived at `now` (CLOCK_MONOTONIC).
    pub fn saw_batch(&mut self, now: u64) {
        if self.first_ns == 0 {
            self.first_ns = now;
        }
        self.last_ns = now;
    }
}

/// The sink threads' tallies as one result (the `kernel` and `interfaces` fields are
/// the caller's). A flow arrives on one socket (SO_REUSEPORT and RSS hash its addresses
/// and ports), so its time bins are that thread's. `owd_groups`: the first flow of each
/// group whose one-way delays are returned as a histogram of their own
/// ([`proto::UdpSinkSpec::owd_groups`]).
pub(crate) fn merge_sinks(tallies: Vec<SinkTally>, owd_groups: &[u32]) -> UdpSinkResults {
    let mut r = UdpSinkResults::default();
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut merged: Vec<FlowState> = Vec::new();
    for t in tallies {
        r.received.merge(&t.received);
        r.unstamped += t.unstamped;
        for c in &t.sizes {
            count_size(&mut r.sizes, c.payload, c.packets);
        }
        for src in &t.sources {
            count_source(&mut r.sources, &mut r.other_sources, src.addr, src.packets);
        }
        r.other_sources += t.other_sources;
        if t.received.frames > 0 {
            first = first.min(t.first_ns);
            last = last.max(t.last_ns);
        }
        if merged.is_empty() {
            merged = t.flows;
        } else {
            for (m, f) in merged.iter_mut().zip(t.flows) {
                merge_flow(m, f);
            }
        }
    }
    let mut owd = RttHistogram::new();
    for f in &merged {
        owd.merge(&f.owd);
    }
    r.owd = owd.summary();
    r.owd_groups = owd_groups
        .iter()
        .enumerate()
        .map(|(g, &first)| {
            let end = owd_groups.get(g + 1).copied().unwrap_or(u32::MAX);
            let mut h = RttHistogram::new();
            for f in merged.iter().filter(|f| (first..end).contains(&f.rx.flow)) {
                h.merge(&f.owd);
            }
            proto::OwdGroup {
                first_flow: first,
                buckets: h.buckets(),
            }
        })
        .collect();
    r.flows = merged
        .into_iter()
        .filter(|f| f.rx.received > 0 || f.rx.duplicates > 0)
        .map(FlowState::finish)
        .collect();
    r.sources.sort_by_key(|s| std::cmp::Reverse(s.packets));
    r.active_ns = last.saturating_sub(first.min(last));
    r
}

fn merge_flow(m: &mut FlowState, f: FlowState) {
    if m.rx.received == 0 && f.rx.received > 0 {
        m.bins = f.bins;
    }
    m.rx.received += f.rx.received;
    m.rx.bytes += f.rx.bytes;
    m.rx.duplicates += f.rx.duplicates;
    m.rx.reordered += f.rx.reordered;
    m.rx.jitter_ns = m.rx.jitter_ns.max(f.rx.jitter_ns);
    m.owd.merge(&f.owd);
}

/// Sequence numbers remembered below the highest seen, to tell duplicates from late packets.
const WINDOW: u32 = 4096;

#[derive(Clone)]
pub(crate) struct FlowState {
    pub(crate) rx: FlowRx,
    highest: Option<u32>,
    /// bit (seq % WINDOW) set: seq seen (valid for seqs within WINDOW below `highest`).
    seen: Vec<u64>,
    pub(crate) owd: RttHistogram,
    last_transit: Option<i64>,
    /// Send stamp of `highest` (0: unknown).
    highest_tx: u64,
    /// Fine time bins, when asked for (gateway events).
    pub(crate) bins: Option<crate::bins::Bins>,
}

impl FlowState {
    pub(crate) fn new(flow: u32, bin_ns: u64) -> Self {
        FlowState {
            rx: FlowRx {
                flow,
                ..Default::default()
            },
            highest: None,
            seen: vec![0; (WINDOW / 64) as usize],
            owd: RttHistogram::new(),
            last_transit: None,
            highest_tx: 0,
            bins: (bin_ns > 0).then(|| crate::bins::Bins::new(bin_ns)),
        }
    }

    /// The flow's figures, its delays summarised and its bins closed.
    pub(crate) fn finish(self) -> FlowRx {
        let mut rx = self.rx;
        rx.owd = self.owd.summary();
        rx.bins = self.bins.map(|b| Box::new(b.finish()));
        rx
    }

    fn bit(&mut self, seq: u32) -> (usize, u64) {
        let b = seq % WINDOW;
        ((b / 64) as usize, 1u64 << (b % 64))
    }

    /// Account one packet; pure apart from `self` (unit-tested). Sequence numbers
    /// are compared in serial-number arithmetic (RFC 1982), so they may wrap.
    pub(crate) fn on_packet(&mut self, seq: u32, tx_ns: Option<u64>, rx_ns: u64, len: usize) {
        let ahead = self.highest.map(|h| seq.wrapping_sub(h) as i32);
        match (self.highest, ahead) {
            (Some(h), Some(d)) if d <= 0 => {
                let behind = h.wrapping_sub(seq);
                if behind >= WINDOW {
                    // Too old to tell a duplicate: count it as late (it is distinct
                    // unless duplicated from that far back).
                    self.rx.reordered += 1;
                } else {
                    let (w, m) = self.bit(seq);
                    if self.seen[w] & m != 0 {
                        self.rx.duplicates += 1;
                        return;
                    }
                    self.seen[w] |= m;
                    self.rx.reordered += 1;
                }
                if let (Some(b), Some(tx)) = (&mut self.bins, tx_ns) {
                    b.on_late(tx, rx_ns.saturating_sub(tx));
                }
            }
            (prev, d) => {
                // New highest: forget the bits of seqs that fall out of the window.
                let gap = match (prev, d) {
                    (Some(_), Some(d)) => d as u64 - 1,
                    _ => 0,
                };
                if gap >= WINDOW as u64 {
                    self.seen.iter_mut().for_each(|x| *x = 0);
                } else {
                    for k in 1..=gap {
                        let (w, m) = self.bit(seq.wrapping_sub(k as u32));
                        self.seen[w] &= !m;
                    }
                }
                let (w, m) = self.bit(seq);
                self.seen[w] |= m;
                if let (Some(b), Some(tx)) = (&mut self.bins, tx_ns) {
                    let before = prev.map(|p| (p, self.highest_tx));
                    b.on_new_highest(seq, tx, rx_ns.saturating_sub(tx), before);
                }
                self.highest = Some(seq);
                self.highest_tx = tx_ns.unwrap_or(0);
            }
        }
        self.rx.received += 1;
        self.rx.bytes += len as u64;
        if let Some(tx) = tx_ns {
            self.owd.record(rx_ns.saturating_sub(tx));
            // RFC 3550 §6.4.1: J += (|D| − J) / 16 over consecutive arrivals.
            let transit = rx_ns as i64 - tx as i64;
            if let Some(prev) = self.last_transit {
                let d = (transit - prev).unsigned_abs() as f64;
                self.rx.jitter_ns += (d - self.rx.jitter_ns) / 16.0;
            }
            self.last_transit = Some(transit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live reading is of one moment: with threads adding packets of 18 bytes,
    /// every reading's bytes are its packets' (two atomics read one after the other
    /// gave readings off by a batch).
    #[test]
    fn a_live_count_reads_packets_and_their_bytes_together() {
        let c = LiveCount::default();
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let (c, stop) = (c.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        c.add(3, 54);
                    }
                })
            })
            .collect();
        let mut off = 0;
        let mut last = 0;
        for _ in 0..200_000 {
            let (p, b) = c.get();
            off += usize::from(b != p * 18);
            last = p;
        }
        stop.store(true, Ordering::Relaxed);
        writers.into_iter().for_each(|w| w.join().unwrap());
        assert!(last > 0, "the writers ran");
        assert_eq!(off, 0, "readings whose bytes are not their packets'");
    }

    #[test]
    fn a_drain_ends_after_50_quiet_ms_or_its_longest_time_after_the_stop() {
        const MS: u64 = 1_000_000;
        let mut d = Drain::default();
        d.saw(0, 0);
        assert!(!d.done(100 * MS, false), "never before the stop");
        // Quiet since 0: done at the stop.
        assert!(d.done(100 * MS, true));
        let mut d = Drain::default();
        d.saw(10 * MS, 5);
        assert!(
            !d.done(10 * MS, true),
            "stop seen at 10 ms, packets arriving"
        );
        d.saw(20 * MS, 0);
        assert!(!d.done(69 * MS, true), "49 ms quiet");
        assert!(d.done(70 * MS, true), "50 ms quiet");
        // Packets keep coming: done the longest drain after the stop was seen.
        let mut d = Drain::default();
        d.saw(MS, 1);
        assert!(!d.done(MS, true));
        d.saw(MS + DRAIN_MAX_NS - 1, 1);
        assert!(!d.done(MS + DRAIN_MAX_NS - 1, true));
        d.saw(MS + DRAIN_MAX_NS, 1);
        assert!(d.done(MS + DRAIN_MAX_NS, true));
    }

    fn feed(seqs: &[u32]) -> FlowRx {
        let mut f = FlowState::new(0, 0);
        for (i, &s) in seqs.iter().enumerate() {
            f.on_packet(s, Some(1000), 1000 + 100 * (i as u64 + 1), 64);
        }
        f.rx
    }

    #[test]
    fn the_sinks_bins_account_for_every_lost_packet() {
        // Sent 0..500 every 0.1 ms; lost: 0..3, 120..180 (a stall), 490..500 (tail);
        // 50 arrives late, 60 twice.
        let mut f = FlowState::new(0, 1_000_000);
        let t0 = 1_700_000_000_000_000_000u64;
        let mut order: Vec<u32> = (3..120).filter(|&s| s != 50).collect();
        order.extend([50, 60]);
        order.extend(180..490);
        for s in order {
            let tx = t0 + u64::from(s) * 100_000;
            f.on_packet(s, Some(tx), tx + 30_000, 64);
        }
        let mut b = f.bins.take().unwrap().finish();
        crate::bins::close(&mut b, 500);
        assert_eq!(f.rx.received, 117 + 310);
        assert_eq!(crate::bins::lost(&b), 500 - f.rx.received);
        let (a, _, z, _) = b.longest_gap.unwrap();
        assert_eq!((a, z), (119, 180));
    }

    #[test]
    fn in_order_loss_duplicates_and_reordering() {
        let r = feed(&[0, 1, 2, 3]);
        assert_eq!((r.received, r.duplicates, r.reordered), (4, 0, 0));
        let r = feed(&[0, 2, 1, 1, 3, 3, 9]);
        assert_eq!((r.received, r.duplicates, r.reordered), (5, 2, 1));
        // A seq that left the window is late, not a duplicate.
        let r = feed(&[0, 10_000, 5]);
        assert_eq!((r.received, r.duplicates, r.reordered), (3, 0, 1));
        // Far jump clears old bits: seq 4096 shares a bit with 0 but is new.
        let r = feed(&[0, 4096]);
        assert_eq!((r.received, r.duplicates), (2, 0));
        // Sequence numbers wrap: u32::MAX, then 0, 1 are in order; a repeat is a duplicate.
        let r = feed(&[u32::MAX - 1, u32::MAX, 0, 1, u32::MAX, 3, 2]);
        assert_eq!((r.received, r.duplicates, r.reordered), (6, 1, 1));
    }

    #[test]
    fn jitter_follows_rfc3550() {
        // Transit times 100, 300, 100 ns: D = 200, 200 → J = 200/16, then J += (200 − J)/16.
        let mut f = FlowState::new(0, 0);
        f.on_packet(0, Some(0), 100, 16);
        f.on_packet(1, Some(1000), 1300, 16);
        f.on_packet(2, Some(2000), 2100, 16);
        let j1 = 200.0 / 16.0;
        let j2 = j1 + (200.0 - j1) / 16.0;
        assert!((f.rx.jitter_ns - j2).abs() < 1e-9, "{}", f.rx.jitter_ns);
        let s = f.owd.summary();
        assert_eq!((s.count, s.min_ns), (3, 100));
        assert!(s.max_ns >= 299 && s.max_ns <= 301);
    }

    #[test]
    fn sink_tallies_merge_counts_sizes_and_flows() {
        let mut a = SinkTally::new(2, 0);
        let mut b = SinkTally::new(2, 0);
        let mut buf = [0u8; 64];
        for (to_a, flow, seq, len) in [
            (true, 0u16, 0u32, 18usize),
            (true, 0, 1, 64),
            (false, 1, 0, 18),
            (false, 1, 0, 18),
        ] {
            let t = if to_a { &mut a } else { &mut b };
            Probe {
                flow,
                seq,
                tx_ns: Some(1),
            }
            .emit(&mut buf[..len]);
            t.on_datagram(&buf[..len], 10);
            t.saw_batch(5);
        }
        a.on_datagram(&buf[..4], 10);
        let r = merge_sinks(vec![a, b], &[]);
        assert_eq!(r.received.frames, 5);
        assert_eq!(r.unstamped, 1);
        assert_eq!(
            r.sizes,
            [
                SizeCount {
                    payload: 4,
                    packets: 1
                },
                SizeCount {
                    payload: 18,
                    packets: 3
                },
                SizeCount {
                    payload: 64,
                    packets: 1
                },
            ]
        );
        let f: Vec<(u32, u64, u64)> = r
            .flows
            .iter()
            .map(|f| (f.flow, f.received, f.duplicates))
            .collect();
        assert_eq!(f, [(0, 2, 0), (1, 1, 1)]);
    }

    #[test]
    fn a_sinks_delays_come_back_per_group_of_flows() {
        // Flows 0..2 from one source host, 2..4 from another: delays 10 µs and 1 ms.
        let mut t = SinkTally::new(4, 0);
        let mut buf = [0u8; 64];
        for (flow, delay, n) in [(0u16, 10_000u64, 3u32), (1, 10_000, 2), (3, 1_000_000, 4)] {
            for seq in 0..n {
                Probe {
                    flow,
                    seq,
                    tx_ns: Some(1_000_000_000),
                }
                .emit(&mut buf[..32]);
                t.on_datagram(&buf[..32], 1_000_000_000 + delay);
            }
        }
        let r = merge_sinks(vec![t], &[0, 2]);
        let g: Vec<(u32, u64)> = r
            .owd_groups
            .iter()
            .map(|g| (g.first_flow, g.buckets.iter().map(|b| b.1).sum()))
            .collect();
        assert_eq!(g, [(0, 5), (2, 4)]);
        let near = |a: u64, b: u64| a.abs_diff(b) * 1000 <= b;
        assert!(r.owd_groups[0].buckets.iter().all(|b| near(b.0, 10_000)));
        assert!(r.owd_groups[1].buckets.iter().all(|b| near(b.0, 1_000_000)));
        // Not asked: none.
        assert!(merge_sinks(vec![SinkTally::new(4, 0)], &[])
            .owd_groups
            .is_empty());
    }

    #[test]
    fn source_tallies_merge() {
        // A sender thread's tally: flow `(flow, packets)`, ended at `ended_ns`, `bytes`
        // sent and `sized` packets of 18-byte payloads.
        let tally = |flow, ended_ns, bytes, sized| {
            let mut t = SourceTally {
                per_flow: vec![flow],
                ended_ns,
                ..Default::default()
            };
            t.sent.add(bytes);
            count_size(&mut t.sizes, 18, sized);
            t
        };
        let (a, b) = (tally((0, 3), 150, 18, 1), tally((1, 4), 90, 1454, 2));
        let r = merge_sources(2, 100, 120, [&a, &b]);
        assert_eq!(r.sent_per_flow, [3, 4]);
        assert_eq!(r.elapsed_ns, 50);
        assert_eq!(r.sent.bytes, 1472);
        assert_eq!(
            r.sent_sizes,
            [SizeCount {
                payload: 18,
                packets: 3
            }]
        );
    }
}
