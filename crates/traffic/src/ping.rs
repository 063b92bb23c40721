//! UDP ping with nanosecond timing (seed 003's UDP round trips) and its reflector.
//!
//! One probe in flight at a time: send, wait for the reply with the same sequence
//! number (first 8 bytes of the payload, big-endian) and size, record the round trip.
//! Probes leave every `interval` on a fixed schedule (a late reply delays the next
//! probe, never the schedule), or back to back with interval 0.
//!
//! Gateway events (issue 25): the probes go into fine time bins by send time (the
//! background), and a [`Marker`] prober sends paced probes from another address
//! (the marker stream a rule change acts on), not counted in the ping's figures.

use crate::bins::Txns;
use crate::gate::{Gate, StartGate};
use crate::hist::RttHistogram;
use crate::sys;
use crate::TrafficError;
use proto::{Counter, PingResults, PingSpec, ReflectorResults, ReflectorSpec};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub const MIN_PING_PAYLOAD: u32 = 8;

/// Gap between the marker stream's probes (10 000 probes/s: the time to effect is
/// located to about this, plus a round trip).
pub const MARKER_INTERVAL_NS: u64 = 100_000;
/// Most marker probes one trial sends (200 s of them); then it stops probing.
const MAX_MARKER_PROBES: usize = 2_000_000;

pub struct PingClient {
    gate: StartGate,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<PingLoop>>,
    marker: Option<Marker>,
    marker_source: Option<std::net::IpAddr>,
}

impl PingClient {
    pub fn setup(spec: &PingSpec) -> Result<PingClient, TrafficError> {
        if spec.payload < MIN_PING_PAYLOAD || spec.payload > 65_507 {
            return Err(TrafficError::BadSpec(format!(
                "ping payload must be {MIN_PING_PAYLOAD}..65507 bytes (the first 8 carry the sequence number), not {}",
                spec.payload
            )));
        }
        let sock = connected(spec.source, spec.server, spec.port)?;
        let gate = StartGate::new();
        let stop = Arc::new(AtomicBool::new(false));
        let marker = match spec.events.and_then(|e| e.marker_source.map(|m| (e, m))) {
            Some((e, src)) => Some(Marker::setup(
                connected(src, spec.server, spec.port)?,
                spec,
                e.bin_ns,
                &gate,
                &stop,
            )?),
            None => None,
        };
        let marker_source = spec.events.and_then(|e| e.marker_source);
        let (g, st, spec) = (gate.clone(), stop.clone(), spec.clone());
        let worker = std::thread::spawn(move || {
            if !g.wait() {
                return Ok((PingResults::default(), None));
            }
            ping_loop(&sock, &spec, &st)
        });
        Ok(PingClient {
            gate,
            stop,
            worker: Some(worker),
            marker,
            marker_source,
        })
    }

    pub fn start(&mut self) {
        self.gate.open(Gate::Go);
    }

    pub fn stop(mut self) -> Result<PingResults, TrafficError> {
        self.stop.store(true, Ordering::SeqCst);
        self.gate.open(Gate::Abort);
        let (mut r, background) = match self.worker.take().map(|w| w.join()) {
            Some(Ok(r)) => r?,
            _ => return Err(TrafficError::BadSpec("the ping thread panicked".into())),
        };
        if let Some(background) = background {
            let marker = match self.marker.take() {
                Some(m) => m.finish()?,
                None => Default::default(),
            };
            r.events = Some(Box::new(proto::TxnStreams {
                marker_source: self.marker_source,
                marker,
                background: background.finish(),
                background_streams: 1,
            }));
        }
        Ok(r)
    }
}

impl Drop for PingClient {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.gate.open(Gate::Abort);
    }
}

/// What the ping's thread returns: its results and its probes' bins (with events).
type PingLoop = Result<(PingResults, Option<Txns>), TrafficError>;

/// A UDP socket bound to `src` and connected to `server`:`port`.
fn connected(
    src: std::net::IpAddr,
    server: std::net::IpAddr,
    port: u16,
) -> Result<UdpSocket, TrafficError> {
    let src = SocketAddr::new(src, 0);
    let dst = SocketAddr::new(server, port);
    let s = sys::udp_socket(&src)?;
    let ctx = |what: &str, e| TrafficError::io(format!("{what} {src} → {dst}"), e);
    s.bind(&src.into()).map_err(|e| ctx("bind", e))?;
    s.connect(&dst.into()).map_err(|e| ctx("connect", e))?;
    Ok(s.into())
}

/// The ping's probes and, with gateway events, their bins by send time.
fn ping_loop(sock: &UdpSocket, spec: &PingSpec, stop: &AtomicBool) -> PingLoop {
    sys::tight_timer_slack();
    let mut r = PingResults::default();
    let mut hist = RttHistogram::new();
    let len = spec.payload as usize;
    let mut out = vec![0u8; len];
    let mut inp = vec![0u8; len + 1];
    let timeout = Duration::from_millis(spec.timeout_ms.max(1) as u64);
    let t0 = sys::monotonic_ns();
    // CLOCK_REALTIME of `t0`: the bins' clock (the commit's start is stamped with it).
    let real0 = sys::realtime_ns();
    let mut bins = spec.events.map(|e| Txns::new(e.bin_ns, real0));
    let mut record = |sent_at: u64, rtt: Option<u64>| {
        if let Some(b) = bins.as_mut() {
            let start = real0 + (sent_at - t0);
            match rtt {
                Some(rtt) => b.done(start, rtt),
                None => b.failed(start),
            }
        }
    };
    let mut seq: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        if spec.count.is_some_and(|c| seq >= c) {
            r.finished = true;
            break;
        }
        // Fixed schedule: probe k leaves at t0 + k·interval (or now, if that passed).
        let due = t0 + seq * spec.interval_ns;
        let now = sys::monotonic_ns();
        if due > now {
            std::thread::sleep(Duration::from_nanos((due - now).min(100_000_000)));
            continue;
        }
        seq += 1;
        out[..8].copy_from_slice(&seq.to_be_bytes());
        let sent_at = sys::monotonic_ns();
        match sock.send(&out) {
            Ok(_) => r.sent += 1,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ECONNREFUSED) | Some(libc::ENOBUFS)
                ) =>
            {
                r.sent += 1;
                r.lost += 1;
                record(sent_at, None);
                continue;
            }
            Err(e) => return Err(TrafficError::io("sending a ping", e)),
        }
        // Wait for the matching reply; anything else (late replies) is invalid.
        loop {
            let waited = Duration::from_nanos(sys::monotonic_ns() - sent_at);
            if waited >= timeout {
                r.lost += 1;
                record(sent_at, None);
                break;
            }
            sock.set_read_timeout(Some(timeout - waited))
                .map_err(|e| TrafficError::io("SO_RCVTIMEO", e))?;
            match sock.recv(&mut inp) {
                Ok(n) => {
                    let at = sys::monotonic_ns();
                    if n == len && inp[..8] == out[..8] {
                        hist.record(at - sent_at);
                        r.received += 1;
                        record(sent_at, Some(at - sent_at));
                        break;
                    }
                    r.invalid += 1;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    r.lost += 1;
                    record(sent_at, None);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
                    r.lost += 1;
                    record(sent_at, None);
                    break;
                }
                Err(e) => return Err(TrafficError::io("receiving a ping reply", e)),
            }
        }
    }
    r.elapsed_ns = sys::monotonic_ns() - t0;
    r.rtt = hist.summary();
    Ok((r, bins))
}

/// The marker stream of a ping with gateway events: probes every
/// [`MARKER_INTERVAL_NS`] from an address of its own, not waiting for replies (the
/// sender), and the replies matched to them by sequence number (the receiver).
/// A probe answered within the ping's timeout is done; any other failed.
struct Marker {
    sender: JoinHandle<Vec<u64>>,
    receiver: JoinHandle<Vec<(u64, u64)>>,
    bin_ns: u64,
}

impl Marker {
    fn setup(
        sock: UdpSocket,
        spec: &PingSpec,
        bin_ns: u64,
        gate: &StartGate,
        stop: &Arc<AtomicBool>,
    ) -> Result<Marker, TrafficError> {
        let timeout = Duration::from_millis(u64::from(spec.timeout_ms.max(1)));
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .map_err(|e| TrafficError::io("SO_RCVTIMEO", e))?;
        let sock = Arc::new(sock);
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let payload = spec.payload as usize;
        let (g, st, so, n) = (gate.clone(), stop.clone(), sock.clone(), sent.clone());
        let sender = std::thread::spawn(move || {
            let mut stamps = Vec::new();
            if g.wait() {
                marker_send(&so, payload, &st, &n, &mut stamps);
            }
            stamps
        });
        let (g, st) = (gate.clone(), stop.clone());
        let receiver = std::thread::spawn(move || {
            let mut replies = Vec::new();
            if g.wait() {
                marker_receive(&sock, payload, &st, &sent, timeout, &mut replies);
            }
            replies
        });
        Ok(Marker {
            sender,
            receiver,
            bin_ns,
        })
    }

    /// The probes' bins (call after the stop flag is set).
    fn finish(self) -> Result<proto::TxnBins, TrafficError> {
        let panicked = || TrafficError::BadSpec("a marker thread panicked".into());
        let stamps = self.sender.join().map_err(|_| panicked())?;
        let replies = self.receiver.join().map_err(|_| panicked())?;
        Ok(marker_bins(&stamps, &replies, self.bin_ns))
    }
}

/// Each probe done (answered: its round trip) or failed, in bins by send time.
fn marker_bins(stamps: &[u64], replies: &[(u64, u64)], bin_ns: u64) -> proto::TxnBins {
    let mut rtt: Vec<Option<u64>> = vec![None; stamps.len()];
    for &(seq, at) in replies {
        if let Some(slot) = usize::try_from(seq).ok().and_then(|i| rtt.get_mut(i)) {
            if slot.is_none() {
                *slot = Some(at.saturating_sub(stamps[seq as usize]));
            }
        }
    }
    let mut t = Txns::new(bin_ns, stamps.first().copied().unwrap_or(0));
    for (&sent, r) in stamps.iter().zip(rtt) {
        match r {
            Some(r) => t.done(sent, r),
            None => t.failed(sent),
        }
    }
    t.finish()
}

/// Probes every [`MARKER_INTERVAL_NS`] until stopped; their send stamps
/// (CLOCK_REALTIME) by sequence number.
fn marker_send(
    sock: &UdpSocket,
    payload: usize,
    stop: &AtomicBool,
    sent: &std::sync::atomic::AtomicU64,
    stamps: &mut Vec<u64>,
) {
    sys::tight_timer_slack();
    let mut out = vec![0u8; payload];
    let mut next = sys::monotonic_ns();
    while !stop.load(Ordering::Relaxed) && stamps.len() < MAX_MARKER_PROBES {
        let now = sys::monotonic_ns();
        if next > now {
            std::thread::sleep(Duration::from_nanos(next - now));
            continue;
        }
        // Late by more than a millisecond (a loaded host): no burst to catch up.
        next = if now - next > 1_000_000 { now } else { next } + MARKER_INTERVAL_NS;
        let seq = stamps.len() as u64;
        out[..8].copy_from_slice(&seq.to_be_bytes());
        stamps.push(sys::realtime_ns());
        // A failed send is a probe that failed (no reply will come).
        let _ = sock.send(&out);
        sent.store(seq + 1, Ordering::Release);
    }
}

/// Replies (sequence number, CLOCK_REALTIME received) until stopped and then until
/// every probe sent is answered or `timeout` has passed.
fn marker_receive(
    sock: &UdpSocket,
    payload: usize,
    stop: &AtomicBool,
    sent: &std::sync::atomic::AtomicU64,
    timeout: Duration,
    replies: &mut Vec<(u64, u64)>,
) {
    let mut inp = vec![0u8; payload + 1];
    let mut deadline: Option<u64> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            let now = sys::monotonic_ns();
            let d = *deadline.get_or_insert(now + timeout.as_nanos() as u64);
            if now >= d || replies.len() as u64 >= sent.load(Ordering::Acquire) {
                break;
            }
        }
        match sock.recv(&mut inp) {
            Ok(n) if n == payload => {
                let seq = u64::from_be_bytes(inp[..8].try_into().unwrap_or([0xff; 8]));
                replies.push((seq, sys::realtime_ns()));
            }
            Ok(_) => {}
            Err(_) => {}
        }
    }
}

/// Echoes every datagram back to its sender, unchanged.
pub struct Reflector {
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<Counter>>,
}

impl Reflector {
    pub fn start(spec: &ReflectorSpec) -> Result<Reflector, TrafficError> {
        let addr = SocketAddr::new(spec.listen, spec.port);
        let s = sys::udp_socket(&addr)?;
        s.bind(&addr.into())
            .map_err(|e| TrafficError::io(format!("bind {addr}"), e))?;
        let sock: UdpSocket = s.into();
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .map_err(|e| TrafficError::io("SO_RCVTIMEO", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let worker = std::thread::spawn(move || {
            let mut c = Counter::default();
            let mut buf = vec![0u8; 65_536];
            while !st.load(Ordering::Relaxed) {
                if let Ok((n, from)) = sock.recv_from(&mut buf) {
                    if sock.send_to(&buf[..n], from).is_ok() {
                        c.add(n);
                    }
                }
            }
            c
        });
        Ok(Reflector {
            stop,
            worker: Some(worker),
        })
    }

    pub fn stop(mut self) -> ReflectorResults {
        self.stop.store(true, Ordering::SeqCst);
        ReflectorResults {
            echoed: self
                .worker
                .take()
                .and_then(|w| w.join().ok())
                .unwrap_or_default(),
        }
    }
}

impl Drop for Reflector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reflector on loopback and its port.
    fn reflector() -> (Reflector, u16) {
        let port = {
            let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let refl = Reflector::start(&ReflectorSpec {
            listen: "127.0.0.1".parse().unwrap(),
            port,
        })
        .unwrap();
        (refl, port)
    }

    /// A ping from loopback to `port`.
    fn spec(port: u16, count: Option<u64>, interval_ns: u64) -> PingSpec {
        PingSpec {
            source: "127.0.0.1".parse().unwrap(),
            server: "127.0.0.1".parse().unwrap(),
            port,
            payload: 8,
            count,
            interval_ns,
            timeout_ms: 500,
            events: None,
        }
    }

    /// Loopback only: a reflector and a ping of 20 probes, back to back.
    #[test]
    fn ping_over_loopback() {
        let (refl, port) = reflector();
        let mut c = PingClient::setup(&spec(port, Some(20), 0)).unwrap();
        c.start();
        let t = std::time::Instant::now();
        let r = loop {
            std::thread::sleep(Duration::from_millis(20));
            if t.elapsed() > Duration::from_secs(2) {
                break c.stop().unwrap();
            }
        };
        assert!(r.finished, "{r:?}");
        assert_eq!((r.sent, r.received, r.lost), (20, 20, 0));
        assert!(r.rtt.min_ns > 0 && r.rtt.min_ns <= r.rtt.p50_ns && r.rtt.p50_ns <= r.rtt.max_ns);
        assert_eq!(refl.stop().echoed.frames, 20);
        let e = PingClient::setup(&PingSpec {
            payload: 7,
            ..spec(port, None, 0)
        });
        assert!(e
            .err()
            .unwrap()
            .to_string()
            .contains("ping payload must be 8"));
    }

    /// Gateway events: the ping's probes in the background's bins, and a marker
    /// stream of paced probes from another address, answered by the same reflector.
    #[test]
    fn a_marker_stream_beside_the_ping() {
        let (refl, port) = reflector();
        let mut c = PingClient::setup(&PingSpec {
            timeout_ms: 200,
            events: Some(proto::StreamEventsSpec {
                bin_ns: 1_000_000,
                marker_source: Some("127.0.0.2".parse().unwrap()),
            }),
            ..spec(port, Some(50), 1_000_000)
        })
        .unwrap();
        c.start();
        std::thread::sleep(Duration::from_millis(300));
        let r = c.stop().unwrap();
        assert!(refl.stop().echoed.frames >= 50);
        assert_eq!((r.sent, r.received), (50, 50), "{r:?}");
        let e = r.events.expect("bins were asked for");
        let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
        assert_eq!(sum(&e.background.done), 50);
        assert_eq!(sum(&e.background.failed), r.lost);
        // ~3 000 marker probes in 300 ms (fewer on a loaded host), nearly all answered.
        let (md, mf) = (sum(&e.marker.done), sum(&e.marker.failed));
        assert!(md > 300, "{md} answered, {mf} not");
        assert!(mf * 10 < md, "{md} answered, {mf} not");
    }
}
