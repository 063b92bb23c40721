//! Echo clients: one thread and one socket per client, each bound to its own source
//! address, cycling send (MP1) → receive echo (MP4) until stopped.
//!
//! Scale: 10 000 clients are 10 000 threads. Each has a small stack
//! ([`CLIENT_STACK`]); above [`COMPACT_ABOVE`] clients the per-client RTT histograms
//! keep two significant digits, while the merged histogram (the trial's RTT) keeps
//! three: every client hands its samples to it in batches.

use crate::bins::{Recorder, Streams};
use crate::frame::{fill_body, Repr};
use crate::hist::RttHistogram;
use crate::rng::FrameSizer;
use crate::sys;
use crate::validate::{Validator, Verdict};
use crate::TrafficError;
use proto::{Counter, EchoClientResults, EchoClientSpec, EchoClientStats, Proto};
use socket2::Socket;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Stack of one client thread: the cycle keeps its buffers on the heap.
pub const CLIENT_STACK: usize = 128 * 1024;
/// Above this many clients, per-client histograms are compact (2 significant digits).
pub const COMPACT_ABOVE: usize = 1000;
/// Samples a client collects before adding them to the merged histogram.
const BATCH: usize = 256;

/// The merged RTT histogram of all clients.
type Merged = Arc<Mutex<RttHistogram>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    Wait,
    Go,
    Abort,
}

enum Sock {
    Stream(Socket),
    Dgram(UdpSocket),
}

/// Connected clients, waiting for [`EchoClients::start`].
pub struct EchoClients {
    gate: Arc<(Mutex<Gate>, Condvar)>,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<EchoClientStats>>,
    merged: Merged,
    started: Option<Instant>,
    /// Echoes received so far (MP4 frames), all clients: read while the trial runs.
    progress: Arc<LiveCounts>,
    /// Gateway events: client 1's cycles (the marker) and the others' (background).
    events: Option<Streams>,
}

/// What the clients have received so far, read while the trial runs.
#[derive(Default)]
struct LiveCounts {
    /// Echoes (MP4 frames).
    echoes: std::sync::atomic::AtomicU64,
    bytes: std::sync::atomic::AtomicU64,
    /// Sum of the round-trip times of `echoes`, ns.
    rtt_ns: std::sync::atomic::AtomicU64,
}

impl LiveCounts {
    fn add(&self, bytes: usize, rtt: Duration) {
        self.echoes.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        self.rtt_ns
            .fetch_add(rtt.as_nanos() as u64, Ordering::Relaxed);
    }
}

impl EchoClients {
    /// Create and connect every client socket (all connected before any traffic, as
    /// in seed 000), then park one thread per client until `start`.
    pub fn connect(spec: &EchoClientSpec) -> Result<EchoClients, TrafficError> {
        if spec.sources.is_empty() {
            return Err(TrafficError::BadSpec(
                "echo client needs at least one client".into(),
            ));
        }
        if spec.proto == Proto::Udp && spec.frame.max() > proto::MAX_UDP_PAYLOAD {
            return Err(TrafficError::BadSpec(format!(
                "frame size {} exceeds the largest UDP payload ({} bytes)",
                spec.frame.max(),
                proto::MAX_UDP_PAYLOAD
            )));
        }
        // One socket per client (and a few files besides): lift the open-file limit.
        let nofile = sys::raise_nofile_limit().or_else(|_| sys::nofile_limit());
        if let Ok(limit) = nofile {
            if spec.sources.len() as u64 + 64 > limit {
                return Err(TrafficError::BadSpec(format!(
                    "{} clients need {} open files; the client's limit is {limit} \
                     (RLIMIT_NOFILE)",
                    spec.sources.len(),
                    spec.sources.len() + 64
                )));
            }
        }
        let timeout = Duration::from_millis(spec.timeout_ms.max(1) as u64);
        let mut socks = Vec::with_capacity(spec.sources.len());
        let t0 = Instant::now();
        for (i, src) in spec.sources.iter().enumerate() {
            match open(spec, i as u32, *src, timeout) {
                Ok(s) => socks.push(s),
                Err(e) => return Err(explain_connect_failure(e, i, spec.sources.len(), t0)),
            }
        }
        let gate = Arc::new((Mutex::new(Gate::Wait), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let n = spec.sources.len() as u32;
        let progress = Arc::new(LiveCounts::default());
        let merged: Merged = Arc::new(Mutex::new(RttHistogram::new()));
        let compact = spec.sources.len() > COMPACT_ABOVE;
        let events = spec
            .events
            .map(|e| Streams::new(e.bin_ns, sys::realtime_ns()));
        let mut clients = EchoClients {
            gate: gate.clone(),
            stop: stop.clone(),
            workers: Vec::with_capacity(socks.len()),
            merged: merged.clone(),
            started: None,
            progress: progress.clone(),
            events: events.clone(),
        };
        for (i, sock) in socks.into_iter().enumerate() {
            let cfg = Cycle {
                client: i as u32 + 1,
                clients: n,
                source: spec.sources[i],
                sizer: FrameSizer::new(spec.frame, spec.seed, i as u32 + 1),
                max_frame: spec.frame.max() as usize,
                timeout,
                progress: progress.clone(),
                compact,
                merged: merged.clone(),
                // Client 1 is the marker stream; the others are the background.
                recorder: events.as_ref().map(|e| e.recorder(i == 0)),
            };
            let (g, s) = (gate.clone(), stop.clone());
            let w = std::thread::Builder::new()
                .name(format!("echo-client-{}", i + 1))
                .stack_size(CLIENT_STACK)
                .spawn(move || cfg.run(sock, g, s))
                .map_err(|e| {
                    TrafficError::BadSpec(format!(
                        "cannot start the thread of client {} of {n}: {e} (the limit is \
                         likely kernel.threads-max, kernel.pid_max or the cgroup's pids.max: \
                         the client runs one thread per client)",
                        i + 1
                    ))
                })?;
            // On error, `clients` is dropped: its Drop releases the threads started so far.
            clients.workers.push(w);
        }
        Ok(clients)
    }

    /// Echoes received so far, all clients (for adaptive trial length).
    pub fn progress(&self) -> u64 {
        self.progress.echoes.load(Ordering::Relaxed)
    }

    /// (echoes, bytes, sum of their RTTs in ns) received so far, all clients (live
    /// per-interval output).
    pub fn live(&self) -> (u64, u64, u64) {
        let p = &self.progress;
        (
            p.echoes.load(Ordering::Relaxed),
            p.bytes.load(Ordering::Relaxed),
            p.rtt_ns.load(Ordering::Relaxed),
        )
    }

    pub fn start(&mut self) {
        self.started = Some(Instant::now());
        self.open_gate(Gate::Go);
    }

    fn open_gate(&self, to: Gate) {
        let (m, cv) = &*self.gate;
        if let Ok(mut g) = m.lock() {
            *g = to;
        }
        cv.notify_all();
    }

    /// End the cycles (each finishes its frame, bounded by the timeout) and collect.
    pub fn stop(mut self) -> EchoClientResults {
        let elapsed_ns = self
            .started
            .map(|t| t.elapsed().as_nanos() as u64)
            .unwrap_or(0);
        self.stop.store(true, Ordering::SeqCst);
        self.open_gate(Gate::Abort);
        let mut clients = Vec::new();
        for w in std::mem::take(&mut self.workers) {
            match w.join() {
                Ok(stats) => clients.push(stats),
                Err(_) => clients.push(EchoClientStats {
                    error: Some("client thread panicked".into()),
                    ..Default::default()
                }),
            }
        }
        let rtt = self.merged.lock().map(|h| h.summary()).unwrap_or_default();
        let background_streams = clients.len().saturating_sub(1) as u32;
        let marker_source = clients.first().and_then(|c| c.source.parse().ok());
        EchoClientResults {
            clients,
            rtt,
            elapsed_ns,
            events: self
                .events
                .take()
                .map(|e| Box::new(e.finish(marker_source, background_streams))),
        }
    }
}

impl Drop for EchoClients {
    fn drop(&mut self) {
        // Dropped without stop (teardown after a failed setup): release parked threads.
        self.stop.store(true, Ordering::SeqCst);
        self.open_gate(Gate::Abort);
    }
}

fn open(
    spec: &EchoClientSpec,
    i: u32,
    src: IpAddr,
    timeout: Duration,
) -> Result<Sock, TrafficError> {
    let client = i + 1;
    match spec.proto {
        Proto::Tcp | Proto::Sctp => {
            let dst = SocketAddr::new(spec.server, spec.port);
            let s = sys::stream_socket(spec.proto, &dst)?;
            let what = format!("client {client}: connect {}/{src} → {dst}", spec.proto);
            s.bind(&SocketAddr::new(src, 0).into())
                .and_then(|_| s.connect_timeout(&dst.into(), Duration::from_secs(5)))
                .map_err(|e| TrafficError::io(what, e))?;
            if spec.proto == Proto::Tcp {
                let _ = s.set_nodelay(true);
            }
            sys::set_timeouts(&s, timeout, super::POLL)
                .map_err(|e| TrafficError::io("set socket timeouts", e))?;
            Ok(Sock::Stream(s))
        }
        Proto::Udp => {
            let port = spec.port as u32 + i;
            let dst = SocketAddr::new(spec.server, port.min(u16::MAX as u32) as u16);
            let s = sys::udp_socket(&dst)?;
            let what = format!("client {client}: udp {src} → {dst}");
            s.bind(&SocketAddr::new(src, 0).into())
                .and_then(|_| s.connect(&dst.into()))
                .map_err(|e| TrafficError::io(what, e))?;
            sys::set_timeouts(&s, timeout, timeout)
                .map_err(|e| TrafficError::io("set socket timeouts", e))?;
            Ok(Sock::Dgram(UdpSocket::from(s)))
        }
    }
}

/// A connect that failed while opening the clients, with the likely limit named:
/// a timeout after many clients points at a backlog or table that filled up.
fn explain_connect_failure(e: TrafficError, i: usize, n: usize, t0: Instant) -> TrafficError {
    let timed_out = matches!(&e, TrafficError::Io { source, .. }
        if matches!(source.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock));
    if !timed_out || i == 0 {
        return e;
    }
    TrafficError::BadSpec(format!(
        "{e}: connect timed out after {i} of {n} clients had connected ({:.1} s): the \
         likely limit is a table or backlog on the path that holds one entry per client \
         — the gateway's neighbour table (net.ipv4.neigh.default.gc_thresh3, shared \
         with the host), the server's SYN/accept backlog (net.ipv4.tcp_max_syn_backlog, \
         net.core.somaxconn) or the conntrack table (net.netfilter.nf_conntrack_max)",
        t0.elapsed().as_secs_f64()
    ))
}

struct Cycle {
    client: u32,
    clients: u32,
    source: IpAddr,
    sizer: FrameSizer,
    max_frame: usize,
    timeout: Duration,
    progress: Arc<LiveCounts>,
    /// Per-client histogram with two significant digits (many clients).
    compact: bool,
    merged: Merged,
    /// Gateway events: where this client's cycles go (by their start time).
    recorder: Option<Recorder>,
}

/// What became of one cycle.
enum Fate {
    /// The echo came back after `rtt_ns`; `late`: its send completed only after the
    /// timeout (counted unsent too).
    Echoed { rtt_ns: u64, late: bool },
    /// No echo: lost (UDP: not within the timeout; a stream: still missing, overdue,
    /// when the trial ended).
    Lost,
    /// Nothing left within the timeout (the sequence number is used again).
    Unsent,
}

struct Tally {
    mp1: Counter,
    mp4: Counter,
    unsent: u64,
    lost: u64,
    v: Validator,
    rtt: RttHistogram,
    /// Samples not yet added to the merged histogram.
    batch: Vec<u64>,
}

impl Tally {
    fn record(&mut self, ns: u64, merged: &Merged) {
        self.rtt.record(ns);
        self.batch.push(ns);
        if self.batch.len() >= BATCH {
            self.flush(merged);
        }
    }

    fn flush(&mut self, merged: &Merged) {
        if let Ok(mut m) = merged.lock() {
            for &ns in &self.batch {
                m.record(ns);
            }
        }
        self.batch.clear();
    }
}

impl Cycle {
    fn run(
        mut self,
        sock: Sock,
        gate: Arc<(Mutex<Gate>, Condvar)>,
        stop: Arc<AtomicBool>,
    ) -> EchoClientStats {
        let mut t = Tally {
            mp1: Counter::default(),
            mp4: Counter::default(),
            unsent: 0,
            lost: 0,
            v: Validator::new(Some(self.client), self.clients),
            rtt: if self.compact {
                RttHistogram::compact()
            } else {
                RttHistogram::new()
            },
            batch: Vec::new(),
        };
        let go = {
            let (m, cv) = &*gate;
            let g = m
                .lock()
                .ok()
                .and_then(|g| cv.wait_while(g, |g| *g == Gate::Wait).ok());
            g.map(|g| *g == Gate::Go).unwrap_or(false)
        };
        let began = Instant::now();
        let began_real = sys::realtime_ns();
        let mut error = None;
        if go {
            let epoch = began;
            let mut out = vec![0u8; self.max_frame];
            let mut inb = vec![0u8; self.max_frame + 1];
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let size = self.sizer.next_size() as usize;
                seq += 1;
                let header = Repr {
                    client: self.client,
                    size: size as u32,
                    seq,
                    send_ns: epoch.elapsed().as_nanos() as u64,
                };
                header.emit(&mut out);
                fill_body(&mut out[..size], seq);
                let r = match &sock {
                    Sock::Stream(s) => self.stream_cycle(s, &out[..size], &mut inb, &mut t, &stop),
                    Sock::Dgram(s) => {
                        self.dgram_cycle(s, &out[..size], seq, &mut inb, &mut t, &stop)
                    }
                };
                let start = began_real + header.send_ns;
                match r {
                    Ok(fate) => {
                        if let Some(rec) = self.recorder.as_mut() {
                            match fate {
                                Fate::Echoed { rtt_ns, late } => {
                                    rec.record(start, Some(rtt_ns));
                                    if late {
                                        rec.record(start, None);
                                    }
                                }
                                Fate::Lost | Fate::Unsent => rec.record(start, None),
                            }
                        }
                        if let Fate::Unsent = fate {
                            seq -= 1; // never left: reuse the number, no gap
                        }
                    }
                    Err(e) => {
                        error = Some(e.to_string());
                        break;
                    }
                }
            }
        }
        t.flush(&self.merged);
        if let Some(rec) = self.recorder.as_mut() {
            rec.flush();
        }
        EchoClientStats {
            client: self.client,
            source: self.source.to_string(),
            mp1: t.mp1,
            mp4: t.mp4,
            unsent: t.unsent,
            lost: t.lost,
            validation: t.v.counts,
            rtt: t.rtt.summary(),
            elapsed_ns: if go {
                began.elapsed().as_nanos() as u64
            } else {
                0
            },
            error,
        }
    }

    /// One stream cycle.
    fn stream_cycle(
        &self,
        s: &Socket,
        frame: &[u8],
        inb: &mut [u8],
        t: &mut Tally,
        stop: &AtomicBool,
    ) -> io::Result<Fate> {
        let t0 = Instant::now();
        let mut sent = 0;
        let mut late = false;
        while sent < frame.len() {
            match (&*s).write(&frame[sent..]) {
                Ok(n) => sent += n,
                Err(e) if is_timeout(&e) => {
                    if sent == 0 {
                        t.unsent += 1;
                        return Ok(Fate::Unsent);
                    }
                    // Partly sent: the stream must stay framed, so finish it; it is late.
                    if t0.elapsed() >= self.timeout && !late {
                        t.unsent += 1;
                        late = true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        t.mp1.add(frame.len());
        let mut got = 0;
        while got < frame.len() {
            match (&*s).read(&mut inb[got..frame.len()]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "server closed the connection",
                    ))
                }
                Ok(n) => got += n,
                Err(e) if is_timeout(&e) => {
                    // Keep waiting for the echo unless told to stop and it is overdue
                    // (then it is lost: e.g. a firewall dropped the connection's segments).
                    if stop.load(Ordering::Relaxed) && t0.elapsed() >= self.timeout {
                        t.lost += 1;
                        return Ok(Fate::Lost);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let rtt = t0.elapsed();
        t.mp4.add(got);
        self.progress.add(got, rtt);
        if t.v
            .check(Repr::parse(&inb[..got]), got, Some(frame.len() as u32))
            == Verdict::InOrder
        {
            t.record(rtt.as_nanos() as u64, &self.merged);
        }
        Ok(Fate::Echoed {
            rtt_ns: rtt.as_nanos() as u64,
            late,
        })
    }

    /// One datagram cycle: the echo of `seq` must arrive within the timeout, else it
    /// is lost; older echoes arriving meanwhile are counted and skipped.
    fn dgram_cycle(
        &self,
        s: &UdpSocket,
        frame: &[u8],
        seq: u64,
        inb: &mut [u8],
        t: &mut Tally,
        stop: &AtomicBool,
    ) -> io::Result<Fate> {
        let t0 = Instant::now();
        match s.send(frame) {
            Ok(_) => t.mp1.add(frame.len()),
            Err(e) if is_timeout(&e) => {
                t.unsent += 1;
                return Ok(Fate::Unsent);
            }
            // The echo's ICMP error from an earlier datagram (port unreachable) surfaces here.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                t.unsent += 1;
                return Ok(Fate::Unsent);
            }
            Err(e) => return Err(e),
        }
        // The socket's receive timeout is the full timeout; only after a stale echo
        // does the wait need shortening (one extra syscall, off the common path).
        let mut shortened = false;
        let mut fate = Fate::Lost;
        loop {
            let left = self.timeout.saturating_sub(t0.elapsed());
            if left.is_zero() {
                t.lost += 1;
                break;
            }
            match s.recv(inb) {
                Ok(n) => {
                    t.mp4.add(n);
                    self.progress.add(n, t0.elapsed());
                    let h = Repr::parse(&inb[..n]);
                    let mine = matches!(h, Ok(h) if h.seq == seq);
                    let verdict = t.v.check(h, n, mine.then_some(frame.len() as u32));
                    if mine {
                        let rtt_ns = t0.elapsed().as_nanos() as u64;
                        if verdict == Verdict::InOrder {
                            t.record(rtt_ns, &self.merged);
                        }
                        fate = Fate::Echoed {
                            rtt_ns,
                            late: false,
                        };
                        break;
                    }
                    let left = self
                        .timeout
                        .saturating_sub(t0.elapsed())
                        .max(Duration::from_micros(1));
                    let _ = s.set_read_timeout(Some(left));
                    shortened = true;
                }
                Err(e) if is_timeout(&e) => {
                    if stop.load(Ordering::Relaxed) || t0.elapsed() >= self.timeout {
                        t.lost += 1;
                        break;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        if shortened {
            let _ = s.set_read_timeout(Some(self.timeout));
        }
        Ok(fate)
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
