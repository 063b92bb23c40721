//! Packet-rate traffic: UDP flood and paced flows (sender) and the counting sink.
//!
//! Sender: `threads` threads; flow `i` belongs to thread `i % threads`, has its own
//! socket (source address `sources[i % len]`, port `src_port + i`) and its own
//! sequence. Packets go out in sendmmsg(2) batches — or, on the raw path, as complete
//! Ethernet frames through AF_PACKET. Paced threads follow an open-loop schedule
//! ([`Pacer`]) and stamp each packet with its *intended* send time.
//!
//! Sink: `threads` sockets sharing the port (SO_REUSEPORT), recvmmsg(2) batches,
//! per-flow accounting: distinct packets, duplicates, reordering, one-way delay and
//! RFC 3550 jitter.

use crate::gate::{Gate, StartGate};
use crate::hist::RttHistogram;
use crate::pacer::Pacer;
use crate::probe::Probe;
use crate::sys::{self, MmsgRecv, MmsgSend};
use crate::TrafficError;
use proto::{
    Counter, FlowRx, UdpKernelCounters, UdpSinkResults, UdpSinkSpec, UdpSourceResults,
    UdpSourceSpec,
};
use socket2::Socket;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Most flows a source may have (one socket each).
pub const MAX_FLOWS: u32 = 4096;
/// Most new flows a source may offer (`new_flows`: a socket at a time; the payload
/// header names a flow in 16 bits).
pub const MAX_NEW_FLOWS: u32 = 65_535;
/// Most sender or sink threads.
pub const MAX_THREADS: u32 = 64;
pub const MAX_BATCH: u32 = 1024;

/// Check a source spec; the message names the offending field.
pub fn check_source(spec: &UdpSourceSpec) -> Result<(), TrafficError> {
    let bad = |m: String| Err(TrafficError::BadSpec(m));
    if spec.sources.is_empty() {
        return bad("a UDP source needs at least one source address".into());
    }
    let max_flows = if spec.new_flows {
        MAX_NEW_FLOWS
    } else {
        MAX_FLOWS
    };
    if spec.flows == 0 || spec.flows > max_flows {
        return bad(format!("flows must be 1..{max_flows}, not {}", spec.flows));
    }
    if spec.new_flows && spec.raw.is_some() {
        return bad("new flows are sent from UDP sockets, not the raw sender".into());
    }
    if spec.threads == 0 || spec.threads > MAX_THREADS {
        return bad(format!(
            "threads must be 1..{MAX_THREADS}, not {}",
            spec.threads
        ));
    }
    if spec.threads > spec.flows {
        return bad(format!(
            "{} sender threads for {} flows: each thread needs a flow of its own",
            spec.threads, spec.flows
        ));
    }
    if spec.batch == 0 || spec.batch > MAX_BATCH {
        return bad(format!("batch must be 1..{MAX_BATCH}, not {}", spec.batch));
    }
    let ports = if spec.new_flows {
        spec.flows.div_ceil(spec.sources.len() as u32)
    } else {
        spec.flows
    };
    if spec.src_port as u32 + ports > 65_536 {
        return bad(format!(
            "{} flows from port {} run past port 65535",
            spec.flows, spec.src_port
        ));
    }
    if spec.payload > 65_507 {
        return bad(format!("payload {} is above 65507 bytes", spec.payload));
    }
    if let Some(p) = spec.pps {
        if !(p.is_finite() && p > 0.0) {
            return bad(format!("rate {p} packets/s is not a positive number"));
        }
    }
    if spec
        .sources
        .iter()
        .any(|s| s.is_ipv4() != spec.dst.is_ipv4())
    {
        return bad("source and destination addresses are of different families".into());
    }
    Ok(())
}

struct Flow {
    id: u16,
    seq: u32,
    sent: u64,
    out: Out,
}

enum Out {
    Socket(Socket),
    /// A new flow: its socket is opened when it sends, and closed after.
    New(SocketAddr, SocketAddr),
    Raw(crate::packet::UdpTemplate),
}

/// A flood or paced flow, set up and waiting for [`UdpSource::start`].
pub struct UdpSource {
    gate: StartGate,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<Result<ThreadResult, TrafficError>>>,
    started_ns: Arc<std::sync::atomic::AtomicU64>,
    flows: u32,
    /// Datagrams sent so far, all threads (read while the trial runs).
    sent: Arc<std::sync::atomic::AtomicU64>,
    payload: u64,
    /// New flows: the sending time ends with the last flow's datagram, not at the stop.
    new_flows: bool,
}

#[derive(Default)]
struct ThreadResult {
    sent: Counter,
    per_flow: Vec<(u16, u64)>,
    scheduled: u64,
    max_lag_ns: u64,
    send_errors: u64,
    /// CLOCK_MONOTONIC when the thread's last send returned (0: it sent nothing).
    ended_ns: u64,
}

impl UdpSource {
    /// Open every flow's socket (or the raw socket and frame templates) now, so that
    /// setup errors surface before the trial starts.
    pub fn setup(spec: &UdpSourceSpec) -> Result<UdpSource, TrafficError> {
        check_source(spec)?;
        let raw_macs = match &spec.raw {
            None => None,
            Some(r) => {
                let src = crate::packet::if_mac(&r.ifname)
                    .map_err(|e| TrafficError::io(format!("MAC of {}", r.ifname), e))?;
                let dst = crate::packet::parse_mac(&r.dst_mac)
                    .map_err(|e| TrafficError::BadSpec(format!("next-hop MAC: {e}")))?;
                Some((src, dst))
            }
        };
        let mut per_thread: Vec<Vec<Flow>> = (0..spec.threads).map(|_| Vec::new()).collect();
        for i in 0..spec.flows {
            let n = spec.sources.len() as u32;
            let port = if spec.new_flows { i / n } else { i };
            let src = SocketAddr::new(spec.sources[(i % n) as usize], spec.src_port + port as u16);
            let dst = SocketAddr::new(spec.dst, spec.dst_port);
            let out = match raw_macs {
                None if spec.new_flows => Out::New(src, dst),
                None => Out::Socket(flow_socket(src, dst)?),
                Some((smac, dmac)) => Out::Raw(
                    crate::packet::UdpTemplate::new(smac, dmac, src, dst, spec.payload as usize)
                        .map_err(TrafficError::BadSpec)?,
                ),
            };
            per_thread[(i % spec.threads) as usize].push(Flow {
                id: i as u16,
                // New flows are one sequence to the sink (flow 0, seq = flow index), so
                // it keeps one flow's state, not one per flow.
                seq: if spec.new_flows { i } else { 0 },
                sent: 0,
                out,
            });
        }
        let mut raw_socks = Vec::new();
        if let Some(r) = &spec.raw {
            for _ in 0..spec.threads {
                raw_socks.push(crate::sys::rawsock::RawSender::open(&r.ifname)?);
            }
        }
        let gate = StartGate::new();
        let stop = Arc::new(AtomicBool::new(false));
        let started_ns = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let thread_pps = spec.pps.map(|p| p / spec.threads as f64);
        let mut workers = Vec::new();
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        for (j, flows) in per_thread.into_iter().enumerate() {
            let w = Worker {
                flows,
                raw: raw_socks.pop(),
                payload: spec.payload as usize,
                batch: spec.batch as usize,
                new_flows: spec.new_flows,
                pps: thread_pps,
                // Threads interleave: thread j starts j packets (of the total rate) late.
                phase_ns: spec.pps.map(|p| (j as f64 * 1e9 / p) as u64).unwrap_or(0),
            };
            let (g, s, t0, n) = (gate.clone(), stop.clone(), started_ns.clone(), sent.clone());
            workers.push(std::thread::spawn(move || w.run(g, s, t0, n)));
        }
        Ok(UdpSource {
            gate,
            stop,
            workers,
            started_ns,
            flows: spec.flows,
            sent,
            payload: spec.payload as u64,
            new_flows: spec.new_flows,
        })
    }

    /// (datagrams, payload bytes) sent so far (live per-interval output).
    pub fn live(&self) -> (u64, u64) {
        let n = self.sent.load(Ordering::Relaxed);
        (n, n * self.payload)
    }

    pub fn start(&mut self) {
        self.started_ns.store(sys::monotonic_ns(), Ordering::SeqCst);
        self.gate.open(Gate::Go);
    }

    /// Stop sending and collect; a thread's failure (e.g. no route) is the error.
    pub fn stop(mut self) -> Result<UdpSourceResults, TrafficError> {
        self.stop.store(true, Ordering::SeqCst);
        let t0 = self.started_ns.load(Ordering::SeqCst);
        let stopped_ns = sys::monotonic_ns();
        self.gate.open(Gate::Abort);
        let mut r = UdpSourceResults {
            sent_per_flow: vec![0; self.flows as usize],
            ..Default::default()
        };
        // The sending time ends when the last thread's last send returned: a send in
        // progress at the stop (a batch takes milliseconds through a slow gateway) is
        // counted, so its time is too.
        let mut ended_ns = stopped_ns;
        let mut last_send_ns = 0;
        let mut first_err = None;
        for w in std::mem::take(&mut self.workers) {
            match w.join() {
                Ok(Ok(t)) => {
                    r.sent.merge(&t.sent);
                    r.scheduled += t.scheduled;
                    r.max_lag_ns = r.max_lag_ns.max(t.max_lag_ns);
                    r.send_errors += t.send_errors;
                    ended_ns = ended_ns.max(t.ended_ns);
                    last_send_ns = last_send_ns.max(t.ended_ns);
                    for (f, n) in t.per_flow {
                        r.sent_per_flow[f as usize] = n;
                    }
                }
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err
                        .get_or_insert(TrafficError::BadSpec("a sender thread panicked".into()));
                }
            }
        }
        if self.new_flows && last_send_ns > t0 && r.sent.frames == u64::from(self.flows) {
            // Every flow sent before the stop: the rate is over the time it took.
            ended_ns = last_send_ns;
        }
        r.elapsed_ns = if t0 == 0 { 0 } else { ended_ns - t0 };
        match first_err {
            Some(e) => Err(e),
            None => Ok(r),
        }
    }
}

impl Drop for UdpSource {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.gate.open(Gate::Abort);
    }
}

fn flow_socket(src: SocketAddr, dst: SocketAddr) -> Result<Socket, TrafficError> {
    let s = sys::udp_socket(&src)?;
    let ctx = |what: &str, e| TrafficError::io(format!("{what} {src} → {dst}"), e);
    s.bind(&src.into()).map_err(|e| ctx("bind", e))?;
    s.connect(&dst.into()).map_err(|e| ctx("connect", e))?;
    let _ = sys::force_buffer(&s, false, 4 << 20);
    Ok(s)
}

/// A new flow's socket: bound and connected, with the default buffers (it sends one
/// datagram and is closed).
fn flow_socket_new(src: SocketAddr, dst: SocketAddr) -> Result<Socket, TrafficError> {
    let s = sys::udp_socket(&src)?;
    let ctx = |what: &str, e| TrafficError::io(format!("{what} {src} → {dst}"), e);
    s.bind(&src.into()).map_err(|e| ctx("bind", e))?;
    s.connect(&dst.into()).map_err(|e| ctx("connect", e))?;
    Ok(s)
}

struct Worker {
    flows: Vec<Flow>,
    raw: Option<crate::sys::rawsock::RawSender>,
    payload: usize,
    batch: usize,
    /// Each flow sends one datagram, then the thread ends.
    new_flows: bool,
    pps: Option<f64>,
    phase_ns: u64,
}

impl Worker {
    fn run(
        mut self,
        gate: StartGate,
        stop: Arc<AtomicBool>,
        started: Arc<std::sync::atomic::AtomicU64>,
        live_sent: Arc<std::sync::atomic::AtomicU64>,
    ) -> Result<ThreadResult, TrafficError> {
        let mut res = ThreadResult::default();
        if !gate.wait() || self.flows.is_empty() {
            return Ok(res);
        }
        sys::tight_timer_slack();
        let frame_len = match self.flows[0].out {
            Out::Raw(ref t) => t.frame_len(),
            Out::Socket(_) | Out::New(..) => self.payload,
        };
        // Slots: the payloads (socket path) or whole frames (raw path).
        let mut slots = vec![0u8; self.batch * frame_len.max(1)];
        let mut payload = vec![0u8; self.payload];
        let mut mm = MmsgSend::new(self.batch);
        let mut pacer = Pacer::new(started.load(Ordering::SeqCst) + self.phase_ns, self.pps);
        let mut last_now = 0;
        // Stamps are CLOCK_REALTIME, the clock of the sink's kernel receive timestamps;
        // the schedule runs on CLOCK_MONOTONIC (it never jumps).
        let to_realtime = sys::realtime_ns() as i128 - sys::monotonic_ns() as i128;
        let stamp = |mono: u64| (mono as i128 + to_realtime) as u64;
        let mut rr = 0usize;
        let mut ip_id: u16 = 0;
        loop {
            // Every batch: a relaxed load is a plain read, and a flood through a slow
            // gateway (a batch of 64 takes 12 ms at 5 k pps) must not overrun its stop by
            // 64 batches — that quantised a trial's count in steps of 4 096 packets.
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = sys::monotonic_ns();
            last_now = now;
            let mut n = pacer.due(now, self.batch as u64) as usize;
            if self.new_flows {
                if rr == self.flows.len() {
                    break; // every flow has sent its datagram
                }
                n = n.min(1);
            }
            if n == 0 {
                let wait = pacer.wait_ns(now);
                if wait > 200_000 {
                    std::thread::sleep(Duration::from_nanos(wait.min(50_000_000) - 100_000));
                } else if wait > 20_000 {
                    std::thread::sleep(Duration::from_nanos(wait / 2));
                } else {
                    std::hint::spin_loop();
                }
                continue;
            }
            let first = pacer.sent();
            if pacer.is_paced() {
                res.max_lag_ns = res
                    .max_lag_ns
                    .max(now.saturating_sub(pacer.intended_ns(first)));
            }
            let nflows = self.flows.len();
            let flow = &mut self.flows[rr];
            if !self.new_flows {
                rr = (rr + 1) % nflows;
            }
            for k in 0..n {
                let probe = Probe {
                    flow: if self.new_flows { 0 } else { flow.id },
                    seq: flow.seq.wrapping_add(k as u32),
                    tx_ns: Some(stamp(if pacer.is_paced() {
                        pacer.intended_ns(first + k as u64)
                    } else {
                        now
                    })),
                };
                let slot = &mut slots[k * frame_len..(k + 1) * frame_len];
                match &flow.out {
                    Out::Socket(_) | Out::New(..) => probe.emit(slot),
                    Out::Raw(t) => {
                        probe.emit(&mut payload);
                        ip_id = ip_id.wrapping_add(1);
                        t.write(slot, &payload, ip_id);
                    }
                }
            }
            let bufs: Vec<&[u8]> = (0..n)
                .map(|k| &slots[k * frame_len..(k + 1) * frame_len])
                .collect();
            let r = match (&flow.out, self.raw.as_mut()) {
                (Out::Socket(s), _) => mm.send(s, &bufs),
                (Out::New(src, dst), _) => {
                    let s = flow_socket_new(*src, *dst)?;
                    mm.send(&s, &bufs)
                }
                (Out::Raw(_), Some(raw)) => raw.send_batch(&bufs),
                (Out::Raw(_), None) => {
                    return Err(TrafficError::BadSpec(
                        "raw flow without a raw socket".into(),
                    ))
                }
            };
            match r {
                Ok(0) => {
                    res.send_errors += 1;
                    std::thread::yield_now();
                }
                Ok(sent) => {
                    if self.new_flows {
                        rr += 1; // the next flow; a failed send retries this one
                    }
                    flow.seq = flow.seq.wrapping_add(sent as u32);
                    flow.sent += sent as u64;
                    res.sent.frames += sent as u64;
                    res.sent.bytes += (sent * self.payload) as u64;
                    live_sent.fetch_add(sent as u64, Ordering::Relaxed);
                    pacer.advance(sent as u64);
                    res.ended_ns = sys::monotonic_ns();
                }
                Err(e) if transient(&e) => {
                    res.send_errors += 1;
                    std::thread::yield_now();
                }
                Err(e) => return Err(TrafficError::io("sending", e)),
            }
        }
        // What was due by the last look at the clock: packets that fell due between it
        // and the stop were not late, just not yet sent.
        res.scheduled = pacer.scheduled(last_now).max(pacer.sent());
        if !pacer.is_paced() {
            res.scheduled = pacer.sent();
        }
        res.per_flow = self.flows.iter().map(|f| (f.id, f.sent)).collect();
        Ok(res)
    }
}

/// Errors a flood meets and survives: full queues, and ICMP errors (port unreachable
/// from a sink-less server) reported on the connected socket.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOBUFS)
            | Some(libc::EAGAIN)
            | Some(libc::ECONNREFUSED)
            | Some(libc::EHOSTUNREACH)
            | Some(libc::ENETUNREACH)
            | Some(libc::EPERM)
    )
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
    bins: Option<crate::bins::Bins>,
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

struct SinkThread {
    flows: Vec<FlowState>,
    received: Counter,
    unstamped: u64,
    first_ns: u64,
    last_ns: u64,
}

/// The counting sink, receiving from setup until `stop`.
pub struct UdpSink {
    stop: Arc<AtomicBool>,
    /// Datagrams received so far, all threads (read while the trial runs).
    progress: Arc<std::sync::atomic::AtomicU64>,
    /// Their bytes.
    progress_bytes: Arc<std::sync::atomic::AtomicU64>,
    workers: Vec<JoinHandle<Result<SinkThread, TrafficError>>>,
    kernel_before: UdpKernelCounters,
    v6: bool,
}

impl UdpSink {
    pub fn start(spec: &UdpSinkSpec) -> Result<UdpSink, TrafficError> {
        if spec.threads == 0 || spec.threads > MAX_THREADS {
            return Err(TrafficError::BadSpec(format!(
                "sink threads must be 1..{MAX_THREADS}, not {}",
                spec.threads
            )));
        }
        let addr = SocketAddr::new(spec.listen, spec.port);
        let mut socks = Vec::new();
        for _ in 0..spec.threads {
            let s = sys::udp_socket(&addr)?;
            let ctx = |what: &str, e| TrafficError::io(format!("{what} {addr}"), e);
            s.set_reuse_port(true).map_err(|e| ctx("SO_REUSEPORT", e))?;
            s.bind(&addr.into()).map_err(|e| ctx("bind", e))?;
            let _ = sys::force_buffer(&s, true, 32 << 20);
            s.set_read_timeout(Some(Duration::from_millis(20)))
                .map_err(|e| ctx("SO_RCVTIMEO", e))?;
            // Per-datagram kernel receive times; without them a batch shares one time.
            let _ = sys::enable_rx_timestamps(&s);
            socks.push(s);
        }
        let v6 = matches!(spec.listen, IpAddr::V6(_));
        let kernel_before = kernel_udp_counters(v6);
        let stop = Arc::new(AtomicBool::new(false));
        let flows = spec.flows.max(1);
        // One byte more than expected, so an oversized datagram shows as such.
        let slot = (spec.payload as usize + 1).clamp(64, 65_536);
        let progress = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let progress_bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let workers = socks
            .into_iter()
            .map(|s| {
                let live = (progress.clone(), progress_bytes.clone());
                let stop = stop.clone();
                let bin_ns = spec.bin_ns;
                std::thread::spawn(move || sink_loop(s, flows, slot, bin_ns, stop, live))
            })
            .collect();
        Ok(UdpSink {
            stop,
            progress,
            progress_bytes,
            workers,
            kernel_before,
            v6,
        })
    }

    /// Datagrams received so far (for adaptive trial length).
    pub fn progress(&self) -> u64 {
        self.progress.load(Ordering::Relaxed)
    }

    /// (datagrams, bytes) received so far (live per-interval output).
    pub fn live(&self) -> (u64, u64) {
        (
            self.progress.load(Ordering::Relaxed),
            self.progress_bytes.load(Ordering::Relaxed),
        )
    }

    /// Drain what is still in flight (until 50 ms pass without a packet, at most
    /// [`DRAIN_MAX_NS`]), stop and collect.
    pub fn stop(mut self) -> Result<UdpSinkResults, TrafficError> {
        self.stop.store(true, Ordering::SeqCst);
        let mut merged: Vec<FlowState> = Vec::new();
        let mut r = UdpSinkResults::default();
        let (mut first, mut last) = (u64::MAX, 0u64);
        let mut err = None;
        for w in std::mem::take(&mut self.workers) {
            match w.join() {
                Ok(Ok(t)) => {
                    r.received.merge(&t.received);
                    r.unstamped += t.unstamped;
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
                Ok(Err(e)) => {
                    err.get_or_insert(e);
                }
                Err(_) => {
                    err.get_or_insert(TrafficError::BadSpec("a sink thread panicked".into()));
                }
            }
        }
        if let Some(e) = err {
            return Err(e);
        }
        let mut owd = RttHistogram::new();
        for f in &merged {
            owd.merge(&f.owd);
        }
        r.owd = owd.summary();
        r.flows = merged
            .into_iter()
            .filter(|f| f.rx.received > 0 || f.rx.duplicates > 0)
            .map(|f| {
                let mut rx = f.rx;
                rx.owd = f.owd.summary();
                rx.bins = f.bins.map(|b| Box::new(b.finish()));
                rx
            })
            .collect();
        r.active_ns = last.saturating_sub(first.min(last));
        r.kernel = kernel_udp_counters(self.v6).since(&self.kernel_before);
        Ok(r)
    }
}

impl Drop for UdpSink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

pub(crate) fn merge_flow(m: &mut FlowState, f: FlowState) {
    // A flow arrives on one socket (SO_REUSEPORT hashes its addresses and ports):
    // its bins are that thread's.
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

fn sink_loop(
    s: Socket,
    flows: u32,
    slot: usize,
    bin_ns: u64,
    stop: Arc<AtomicBool>,
    (progress, progress_bytes): (
        Arc<std::sync::atomic::AtomicU64>,
        Arc<std::sync::atomic::AtomicU64>,
    ),
) -> Result<SinkThread, TrafficError> {
    let mut t = SinkThread {
        flows: (0..flows).map(|f| FlowState::new(f, bin_ns)).collect(),
        received: Counter::default(),
        unstamped: 0,
        first_ns: 0,
        last_ns: 0,
    };
    let mut mm = MmsgRecv::new(64, slot);
    let mut quiet_since: Option<u64> = None;
    let mut stop_seen: Option<u64> = None;
    loop {
        let n = mm.recv(&s).map_err(|e| TrafficError::io("receiving", e))?;
        let now = sys::monotonic_ns();
        if n == 0 {
            quiet_since.get_or_insert(now);
        } else {
            quiet_since = None;
            if t.received.frames == 0 {
                t.first_ns = now;
            }
            t.last_ns = now;
        }
        let wall = if n > 0 { sys::realtime_ns() } else { 0 };
        let bytes_before = t.received.bytes;
        for i in 0..n {
            let d = mm.get(i);
            t.received.add(d.len());
            match Probe::parse(d) {
                Some(p) if (p.flow as u32) < flows => {
                    let rx = mm.rx_ns(i).unwrap_or(wall);
                    t.flows[p.flow as usize].on_packet(p.seq, p.tx_ns, rx, d.len())
                }
                _ => t.unstamped += 1,
            }
        }
        progress_bytes.fetch_add(t.received.bytes - bytes_before, Ordering::Relaxed);
        progress.fetch_add(n as u64, Ordering::Relaxed);
        if stop.load(Ordering::Relaxed) {
            let since = *stop_seen.get_or_insert(now);
            let quiet = quiet_since.map(|q| now - q >= 50_000_000).unwrap_or(false);
            if quiet || now - since >= DRAIN_MAX_NS {
                return Ok(t);
            }
        }
    }
}

/// Longest drain after stop while packets keep arriving. A saturated gateway (thousands
/// of rules, a deep backlog) still delivers queued packets for up to a second or more
/// after the sender stops; cutting the drain short counted them as lost although no
/// counter had dropped them (a CI run saw 3 % of the loss unplaced with a 500-ms cap).
/// The drain ends much sooner in the usual case: 50 ms without a packet.
pub(crate) const DRAIN_MAX_NS: u64 = 2_500_000_000;

trait Since {
    fn since(&self, before: &Self) -> Self;
}

impl Since for UdpKernelCounters {
    fn since(&self, b: &Self) -> Self {
        UdpKernelCounters {
            in_datagrams: self.in_datagrams.saturating_sub(b.in_datagrams),
            no_ports: self.no_ports.saturating_sub(b.no_ports),
            in_errors: self.in_errors.saturating_sub(b.in_errors),
            rcvbuf_errors: self.rcvbuf_errors.saturating_sub(b.rcvbuf_errors),
        }
    }
}

/// The UDP MIB of this network namespace (zeros where unreadable).
pub fn kernel_udp_counters(v6: bool) -> UdpKernelCounters {
    let text = std::fs::read_to_string(if v6 {
        "/proc/net/snmp6"
    } else {
        "/proc/net/snmp"
    })
    .unwrap_or_default();
    parse_udp_mib(&text, v6)
}

/// `/proc/net/snmp` has a `Udp:` header line and a `Udp:` value line;
/// `/proc/net/snmp6` has `Udp6InDatagrams  N` lines.
fn parse_udp_mib(text: &str, v6: bool) -> UdpKernelCounters {
    let mut map = std::collections::HashMap::new();
    if v6 {
        for l in text.lines() {
            let mut it = l.split_whitespace();
            if let (Some(k), Some(v)) = (it.next(), it.next()) {
                if let Some(k) = k.strip_prefix("Udp6") {
                    map.insert(k.to_string(), v.parse::<u64>().unwrap_or(0));
                }
            }
        }
    } else {
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("Udp: ")).collect();
        if lines.len() >= 2 {
            for (k, v) in lines[0]
                .split_whitespace()
                .zip(lines[1].split_whitespace())
                .skip(1)
            {
                map.insert(k.to_string(), v.parse::<u64>().unwrap_or(0));
            }
        }
    }
    let g = |k: &str| map.get(k).copied().unwrap_or(0);
    UdpKernelCounters {
        in_datagrams: g("InDatagrams"),
        no_ports: g("NoPorts"),
        in_errors: g("InErrors"),
        rcvbuf_errors: g("RcvbufErrors"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn udp_mib_parsing() {
        let v4 = "Ip: Forwarding DefaultTTL\nIp: 1 64\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\nUdp: 10 2 3 4 5 6\n";
        let c = parse_udp_mib(v4, false);
        assert_eq!(
            (c.in_datagrams, c.no_ports, c.in_errors, c.rcvbuf_errors),
            (10, 2, 3, 5)
        );
        let v6 = "Udp6InDatagrams                 \t7\nUdp6NoPorts 1\nUdp6InErrors 2\nUdp6RcvbufErrors 3\n";
        let c = parse_udp_mib(v6, true);
        assert_eq!(
            (c.in_datagrams, c.no_ports, c.in_errors, c.rcvbuf_errors),
            (7, 1, 2, 3)
        );
    }

    #[test]
    fn bad_specs_are_refused() {
        let good = UdpSourceSpec {
            sources: vec!["198.18.1.1".parse().unwrap()],
            src_port: 30000,
            dst: "198.19.0.2".parse().unwrap(),
            dst_port: 9,
            flows: 1,
            payload: 18,
            pps: None,
            threads: 1,
            batch: 32,
            raw: None,
            new_flows: false,
        };
        assert!(check_source(&good).is_ok());
        let e = |f: &dyn Fn(&mut UdpSourceSpec)| {
            let mut s = good.clone();
            f(&mut s);
            check_source(&s).unwrap_err().to_string()
        };
        assert!(e(&|s| s.threads = 2).contains("each thread needs a flow"));
        assert!(e(&|s| s.threads = 0).contains("threads must be"));
        assert!(e(&|s| s.flows = 0).contains("flows must be"));
        assert!(e(&|s| s.batch = 0).contains("batch"));
        assert!(e(&|s| s.pps = Some(0.0)).contains("rate"));
        assert!(e(&|s| s.dst = "2001:2:0:2::2".parse().unwrap()).contains("families"));
        assert!(e(&|s| {
            s.src_port = 65535;
            s.flows = 2
        })
        .contains("past port 65535"));
        // New flows: many more flows, spread over the sources' ports; no raw sender.
        assert!(e(&|s| s.flows = 8000).contains("flows must be"));
        let mut n = good.clone();
        n.new_flows = true;
        n.flows = 8000;
        assert!(check_source(&n).is_ok());
        n.flows = 40_000;
        assert!(check_source(&n)
            .unwrap_err()
            .to_string()
            .contains("past port"));
        n.sources.push("198.18.1.2".parse().unwrap());
        assert!(check_source(&n).is_ok());
        n.raw = Some(proto::RawPath {
            ifname: "c0".into(),
            dst_mac: "02:00:00:00:00:01".into(),
            xdp: false,
        });
        assert!(check_source(&n).unwrap_err().to_string().contains("raw"));
    }
}
