//! Packet-rate traffic: UDP flood and paced flows (sender) and the counting sink.
//!
//! Sender: `threads` threads; flow `i` belongs to thread `i % threads`, has its own
//! socket (source address `sources[i % len]`, port `src_port + i`) and its own
//! sequence. Packets go out in sendmmsg(2) batches — or, on the raw path, as complete
//! Ethernet frames through AF_PACKET. Paced threads follow an open-loop schedule
//! ([`Pacer`]) and stamp each packet with its *intended* send time.
//!
//! Sink: `threads` sockets sharing the port (SO_REUSEPORT), recvmmsg(2) batches,
//! per-flow accounting (`crate::tally::FlowState`): distinct packets, duplicates,
//! reordering, one-way delay and RFC 3550 jitter.
//!
//! Sizes: every packet carries `payload` bytes, or with a size mix (`spec.mix`) each
//! sender thread follows the mix's seeded order ([`MixOrder`]) packet by packet; the
//! sink counts received payload sizes either way. The per-thread tallies and their
//! merging are shared with the AF_XDP sender and sink (`crate::tally`).

use crate::pacer::Pacer;
use crate::probe::Probe;
use crate::sys::{self, MmsgRecv, MmsgSend};
use crate::tally::{
    join_all, merge_sinks, merge_sources, Drain, SenderPlan, SinkControl, SinkTally, SourceControl,
    SourceTally,
};
use crate::TrafficError;
use proto::{
    count_size, MixOrder, UdpKernelCounters, UdpSinkResults, UdpSinkSpec, UdpSourceResults,
    UdpSourceSpec,
};
use socket2::Socket;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
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
    if spec.first_flow > 0 && (spec.new_flows || spec.first_flow + spec.flows > MAX_FLOWS) {
        return bad(format!(
            "flows {}..{}: a source's flows are numbered below {MAX_FLOWS} (and new flows from 0)",
            spec.first_flow,
            spec.first_flow + spec.flows
        ));
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
        spec.first_flow + spec.flows
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
    if spec.mix.len() > proto::MAX_MIX_SIZES {
        return bad(format!(
            "a size mix has at most {} sizes, not {}",
            proto::MAX_MIX_SIZES,
            spec.mix.len()
        ));
    }
    for m in &spec.mix {
        if m.payload > spec.payload || m.weight == 0 || m.weight > u32::from(proto::MAX_MIX_WEIGHT)
        {
            return bad(format!(
                "size mix part of {} bytes, weight {}: payloads at most {} (the largest), weights 1..{}",
                m.payload,
                m.weight,
                spec.payload,
                proto::MAX_MIX_WEIGHT
            ));
        }
    }
    if let Some(p) = spec.pps {
        if !(p.is_finite() && p > 0.0) {
            return bad(format!("rate {p} packets/s is not a positive number"));
        }
    }
    if spec
        .sources
        .iter()
        .chain(&spec.dsts)
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
    /// One template per payload size (one size, or each size of the mix).
    Raw(Vec<crate::packet::UdpTemplate>),
}

/// (source, destination) of flow `i`: source address `sources[i % len]`, port
/// `src_port + number` (its number in the trial, [`UdpSourceSpec::flow_number`]);
/// destination spread over `dsts` by that number (or `dst`), port `dst_port`.
pub(crate) fn flow_addrs(spec: &UdpSourceSpec, i: u32) -> (SocketAddr, SocketAddr) {
    let number = spec.flow_number(i);
    let dst = match spec.dsts.len() {
        0 => spec.dst,
        n => spec.dsts[number as usize % n],
    };
    // New flows: each source address walks the ports (flow i is port i / sources).
    let n = spec.sources.len() as u32;
    let port = if spec.new_flows { i / n } else { number };
    (
        SocketAddr::new(spec.sources[(i % n) as usize], spec.src_port + port as u16),
        SocketAddr::new(dst, spec.dst_port),
    )
}

/// Payload sizes a source sends: every one, or each of its mix.
pub(crate) fn payload_sizes(spec: &UdpSourceSpec) -> Vec<u32> {
    if spec.mix.is_empty() {
        vec![spec.payload]
    } else {
        spec.mix.iter().map(|m| m.payload).collect()
    }
}

/// The sender threads' order of sizes (`None`: one size).
pub(crate) fn mix_order(spec: &UdpSourceSpec) -> Option<Arc<MixOrder>> {
    (!spec.mix.is_empty()).then(|| Arc::new(MixOrder::new(&spec.mix, spec.mix_seed)))
}

/// Payload bytes of a thread's `n`-th packet (0-based).
pub(crate) fn size_at(order: Option<&MixOrder>, payload: usize, n: u64) -> usize {
    order.map_or(payload, |o| o.at(n) as usize)
}

/// A source's sender threads, each with its share of the flows and of the rate (the
/// UDP/AF_PACKET source's and the AF_XDP source's; a thread's result is a `T`).
/// Dropping them stops them.
pub(crate) struct SenderThreads<T> {
    ctl: SourceControl,
    workers: Vec<JoinHandle<Result<T, TrafficError>>>,
}

impl<T: Send + 'static> SenderThreads<T> {
    /// One thread per item of `each`, in order: thread `j` runs `run(item j, its
    /// plan, the control)` (it waits for the start there).
    pub fn spawn<W: Send + 'static>(
        spec: &UdpSourceSpec,
        each: impl IntoIterator<Item = W>,
        run: fn(W, SenderPlan, SourceControl) -> Result<T, TrafficError>,
    ) -> SenderThreads<T> {
        let ctl = SourceControl::new();
        let order = mix_order(spec);
        let workers = each
            .into_iter()
            .enumerate()
            .map(|(j, w)| {
                let plan = SenderPlan::new(spec, &order, j);
                let c = ctl.clone();
                std::thread::spawn(move || run(w, plan, c))
            })
            .collect();
        SenderThreads { ctl, workers }
    }

    /// (packets, payload bytes) sent so far.
    pub fn live(&self) -> (u64, u64) {
        self.ctl.live()
    }

    pub fn start(&mut self) {
        self.ctl.start(sys::monotonic_ns());
    }

    /// Stop the threads and join them: (start time, stop time, each thread's result),
    /// or the first thread's failure (`what` names a thread that panicked).
    pub fn stop(&mut self, what: &str) -> Result<(u64, u64, Vec<T>), TrafficError> {
        let t0 = self.ctl.halt();
        let stopped_ns = sys::monotonic_ns();
        match join_all(std::mem::take(&mut self.workers), what) {
            (_, Some(e)) => Err(e),
            (results, None) => Ok((t0, stopped_ns, results)),
        }
    }
}

impl<T> Drop for SenderThreads<T> {
    fn drop(&mut self) {
        self.ctl.halt();
    }
}

/// A flood or paced flow, set up and waiting for [`UdpSource::start`].
pub struct UdpSource {
    threads: SenderThreads<SourceTally>,
    flows: u32,
    /// New flows: the sending time ends with the last flow's datagram, not at the stop.
    new_flows: bool,
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
            let (src, dst) = flow_addrs(spec, i);
            let out = match raw_macs {
                None if spec.new_flows => Out::New(src, dst),
                None => Out::Socket(flow_socket(src, dst)?),
                Some((smac, dmac)) => Out::Raw(
                    payload_sizes(spec)
                        .into_iter()
                        .map(|len| {
                            crate::packet::UdpTemplate::new(smac, dmac, src, dst, len as usize)
                                .map_err(TrafficError::BadSpec)
                        })
                        .collect::<Result<_, _>>()?,
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
        let each = per_thread.into_iter().map(|flows| (flows, raw_socks.pop()));
        let threads = SenderThreads::spawn(spec, each, |(flows, raw), plan, ctl| {
            Worker { flows, raw, plan }.run(ctl)
        });
        Ok(UdpSource {
            threads,
            flows: spec.flows,
            new_flows: spec.new_flows,
        })
    }

    /// (datagrams, payload bytes) sent so far (live per-interval output).
    pub fn live(&self) -> (u64, u64) {
        self.threads.live()
    }

    pub fn start(&mut self) {
        self.threads.start();
    }

    /// Stop sending and collect; a thread's failure (e.g. no route) is the error.
    pub fn stop(mut self) -> Result<UdpSourceResults, TrafficError> {
        let (t0, stopped_ns, tallies) = self.threads.stop("a sender thread")?;
        let mut r = merge_sources(self.flows, t0, stopped_ns, &tallies);
        let last_send_ns = tallies.iter().map(|t| t.ended_ns).max().unwrap_or(0);
        if self.new_flows && last_send_ns > t0 && r.sent.frames == u64::from(self.flows) {
            // Every flow sent before the stop: the rate is over the time it took.
            r.elapsed_ns = last_send_ns - t0;
        }
        Ok(r)
    }
}

/// A flow's socket: bound and connected, with a 4 MiB send buffer where allowed.
fn flow_socket(src: SocketAddr, dst: SocketAddr) -> Result<Socket, TrafficError> {
    let s = flow_socket_new(src, dst)?;
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
    plan: SenderPlan,
}

impl Worker {
    fn run(mut self, ctl: SourceControl) -> Result<SourceTally, TrafficError> {
        let mut res = SourceTally::default();
        if !ctl.gate.wait() || self.flows.is_empty() {
            return Ok(res);
        }
        sys::tight_timer_slack();
        // Slot size: the largest frame (raw) or payload (socket) this thread sends.
        let frame_len = match self.flows[0].out {
            Out::Raw(ref ts) => ts.iter().map(|t| t.frame_len()).max().unwrap_or(0),
            Out::Socket(_) | Out::New(..) => self.plan.payload,
        };
        let order = self.plan.order.clone();
        // Each packet's length in the batch (payload, or whole frame on the raw path).
        let mut lens = vec![0usize; self.plan.batch];
        let mut payload_lens = vec![0usize; self.plan.batch];
        // Slots: the payloads (socket path) or whole frames (raw path).
        let mut slots = vec![0u8; self.plan.batch * frame_len.max(1)];
        let mut payload = vec![0u8; self.plan.payload];
        let mut mm = MmsgSend::new(self.plan.batch);
        let mut pacer = Pacer::new(
            ctl.started_ns.load(Ordering::SeqCst) + self.plan.phase_ns,
            self.plan.pps,
        );
        let mut last_now = 0;
        let stamp = sys::monotonic_to_realtime();
        let mut rr = 0usize;
        let mut ip_id: u16 = 0;
        loop {
            // Every batch: a relaxed load is a plain read, and a flood through a slow
            // gateway (a batch of 64 takes 12 ms at 5 k pps) must not overrun its stop by
            // 64 batches — that quantised a trial's count in steps of 4 096 packets.
            if ctl.stop.load(Ordering::Relaxed) {
                break;
            }
            let now = sys::monotonic_ns();
            last_now = now;
            let mut n = pacer.due(now, self.plan.batch as u64) as usize;
            if self.plan.new_flows {
                if rr == self.flows.len() {
                    break; // every flow has sent its datagram
                }
                n = n.min(1);
            }
            if n == 0 {
                idle(pacer.wait_ns(now));
                continue;
            }
            let first = pacer.sent();
            res.max_lag_ns = res.max_lag_ns.max(pacer.lag_ns(now));
            let nflows = self.flows.len();
            let flow = &mut self.flows[rr];
            if !self.plan.new_flows {
                rr = (rr + 1) % nflows;
            }
            for k in 0..n {
                let len = size_at(
                    order.as_deref(),
                    self.plan.payload,
                    res.sent.frames + k as u64,
                );
                payload_lens[k] = len;
                let probe = Probe {
                    flow: if self.plan.new_flows {
                        0
                    } else {
                        self.plan.first_flow + flow.id
                    },
                    seq: flow.seq.wrapping_add(k as u32),
                    tx_ns: Some(stamp(pacer.stamp_ns(first + k as u64, now))),
                };
                let slot = &mut slots[k * frame_len..(k + 1) * frame_len];
                match &flow.out {
                    Out::Socket(_) | Out::New(..) => {
                        probe.emit(&mut slot[..len]);
                        lens[k] = len;
                    }
                    Out::Raw(ts) => {
                        let Some(t) = ts.iter().find(|t| t.payload_len() == len) else {
                            return Err(TrafficError::BadSpec(format!(
                                "no frame template for a {len}-byte payload"
                            )));
                        };
                        probe.emit(&mut payload[..len]);
                        ip_id = ip_id.wrapping_add(1);
                        t.write(slot, &payload[..len], ip_id);
                        lens[k] = t.frame_len();
                    }
                }
            }
            let bufs: Vec<&[u8]> = (0..n)
                .map(|k| &slots[k * frame_len..k * frame_len + lens[k]])
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
                    if self.plan.new_flows {
                        rr += 1; // the next flow; a failed send retries this one
                    }
                    flow.seq = flow.seq.wrapping_add(sent as u32);
                    flow.sent += sent as u64;
                    res.sent.frames += sent as u64;
                    let bytes: usize = payload_lens[..sent].iter().sum();
                    res.sent.bytes += bytes as u64;
                    if order.is_some() {
                        for &len in &payload_lens[..sent] {
                            count_size(&mut res.sizes, len as u32, 1);
                        }
                    }
                    ctl.counted(sent as u64, bytes as u64);
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
        res.scheduled = pacer.scheduled(last_now);
        res.per_flow = self.flows.iter().map(|f| (f.id, f.sent)).collect();
        Ok(res)
    }
}

/// Wait `wait_ns` for a sender's next packet to fall due: sleep through most of a long
/// wait (waking 100 µs early, and at least every 50 ms to see a stop), half of a
/// shorter one, spin below 20 µs.
pub(crate) fn idle(wait_ns: u64) {
    if wait_ns > 200_000 {
        std::thread::sleep(Duration::from_nanos(wait_ns.min(50_000_000) - 100_000));
    } else if wait_ns > 20_000 {
        std::thread::sleep(Duration::from_nanos(wait_ns / 2));
    } else {
        std::hint::spin_loop();
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

/// The counting sink, receiving from setup until `stop`.
pub struct UdpSink {
    ctl: SinkControl,
    workers: Vec<JoinHandle<Result<SinkTally, TrafficError>>>,
    kernel_before: UdpKernelCounters,
    v6: bool,
    owd_groups: Vec<u32>,
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
            // Per-datagram kernel receive times; without them a batch shares one time
            // (in the gateway's namespace, that of the read: the kernel stamps there
            // before the gateway's rules run).
            if !spec.in_gateway {
                let _ = sys::enable_rx_timestamps(&s);
            }
            socks.push(s);
        }
        let v6 = matches!(spec.listen, IpAddr::V6(_));
        let kernel_before = kernel_udp_counters(v6);
        let ctl = SinkControl::default();
        let flows = spec.flows.max(1);
        // One byte more than expected, so an oversized datagram shows as such.
        let slot = (spec.payload as usize + 1).clamp(64, 65_536);
        let workers = socks
            .into_iter()
            .map(|s| {
                let ctl = ctl.clone();
                let bin_ns = spec.bin_ns;
                let sources = spec.sources;
                std::thread::spawn(move || sink_loop(s, flows, slot, (bin_ns, sources), ctl))
            })
            .collect();
        Ok(UdpSink {
            ctl,
            workers,
            kernel_before,
            v6,
            owd_groups: spec.owd_groups.clone(),
        })
    }

    /// Datagrams received so far (for adaptive trial length).
    pub fn progress(&self) -> u64 {
        self.ctl.progress()
    }

    /// (datagrams, bytes) received so far (live per-interval output).
    pub fn live(&self) -> (u64, u64) {
        self.ctl.live()
    }

    /// Drain what is still in flight (until 50 ms pass without a packet, at most
    /// [`DRAIN_MAX_NS`]), stop and collect.
    pub fn stop(mut self) -> Result<UdpSinkResults, TrafficError> {
        self.ctl.halt();
        let (tallies, err) = join_all(std::mem::take(&mut self.workers), "a sink thread");
        if let Some(e) = err {
            return Err(e);
        }
        let mut r = merge_sinks(tallies, &self.owd_groups);
        r.kernel = kernel_udp_counters(self.v6).since(&self.kernel_before);
        Ok(r)
    }
}

impl Drop for UdpSink {
    fn drop(&mut self) {
        self.ctl.halt();
    }
}

fn sink_loop(
    s: Socket,
    flows: u32,
    slot: usize,
    (bin_ns, by_source): (u64, bool),
    ctl: SinkControl,
) -> Result<SinkTally, TrafficError> {
    let mut t = SinkTally::new(flows, bin_ns);
    let mut mm = MmsgRecv::new(64, slot);
    if by_source {
        mm = mm.with_sources();
    }
    let mut drain = Drain::default();
    loop {
        let n = mm.recv(&s).map_err(|e| TrafficError::io("receiving", e))?;
        let now = sys::monotonic_ns();
        drain.saw(now, n);
        if n > 0 {
            t.saw_batch(now);
        }
        let wall = if n > 0 { sys::realtime_ns() } else { 0 };
        let bytes_before = t.received.bytes;
        for i in 0..n {
            if by_source {
                if let Some(a) = mm.source(i) {
                    t.on_source(a);
                }
            }
            t.on_datagram(mm.get(i), mm.rx_ns(i).unwrap_or(wall));
        }
        ctl.counted(n as u64, t.received.bytes - bytes_before);
        if drain.done(now, ctl.stopping()) {
            return Ok(t);
        }
    }
}

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

    /// One flow from 198.18.1.1:30000 to 198.19.0.2:9, one thread, unpaced.
    fn one_flow() -> UdpSourceSpec {
        UdpSourceSpec {
            sources: vec!["198.18.1.1".parse().unwrap()],
            src_port: 30000,
            dst: "198.19.0.2".parse().unwrap(),
            dst_port: 9,
            flows: 1,
            dsts: vec![],
            payload: 18,
            mix: vec![],
            mix_seed: 0,
            pps: None,
            threads: 1,
            batch: 32,
            raw: None,
            first_flow: 0,
            new_flows: false,
        }
    }

    #[test]
    fn bad_specs_are_refused() {
        let good = one_flow();
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

    #[test]
    fn a_block_of_the_trials_flows_keeps_their_numbers_ports_and_destinations() {
        // Flows 6..10 of a trial (a second client host's block), spread over two sinks.
        let spec = UdpSourceSpec {
            sources: vec!["198.18.2.1".parse().unwrap(), "198.18.2.2".parse().unwrap()],
            dsts: vec!["198.19.0.2".parse().unwrap(), "198.19.0.3".parse().unwrap()],
            flows: 4,
            first_flow: 6,
            ..one_flow()
        };
        check_source(&spec).unwrap();
        let got: Vec<String> = (0..4)
            .map(|i| {
                let (s, d) = flow_addrs(&spec, i);
                format!("{s}>{d}")
            })
            .collect();
        assert_eq!(
            got,
            [
                "198.18.2.1:30006>198.19.0.2:9",
                "198.18.2.2:30007>198.19.0.3:9",
                "198.18.2.1:30008>198.19.0.2:9",
                "198.18.2.2:30009>198.19.0.3:9",
            ]
        );
        let plan = SenderPlan::new(&spec, &None, 0);
        assert_eq!(plan.first_flow, 6);
        // Past the stamp's range, or a block of new flows: refused.
        let mut far = spec.clone();
        far.first_flow = MAX_FLOWS - 3;
        assert!(check_source(&far)
            .unwrap_err()
            .to_string()
            .contains("numbered below"));
        let mut new = spec.clone();
        new.new_flows = true;
        assert!(check_source(&new)
            .unwrap_err()
            .to_string()
            .contains("new flows from 0"));
    }
}
