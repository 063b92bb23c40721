//! UDP ping with nanosecond timing (seed 003's UDP round trips) and its reflector.
//!
//! One probe in flight at a time: send, wait for the reply with the same sequence
//! number (first 8 bytes of the payload, big-endian) and size, record the round trip.
//! Probes leave every `interval` on a fixed schedule (a late reply delays the next
//! probe, never the schedule), or back to back with interval 0.

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

pub struct PingClient {
    gate: StartGate,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<Result<PingResults, TrafficError>>>,
}

impl PingClient {
    pub fn setup(spec: &PingSpec) -> Result<PingClient, TrafficError> {
        if spec.payload < MIN_PING_PAYLOAD || spec.payload > 65_507 {
            return Err(TrafficError::BadSpec(format!(
                "ping payload must be {MIN_PING_PAYLOAD}..65507 bytes (the first 8 carry the sequence number), not {}",
                spec.payload
            )));
        }
        let src = SocketAddr::new(spec.source, 0);
        let dst = SocketAddr::new(spec.server, spec.port);
        let s = sys::udp_socket(&src)?;
        let ctx = |what: &str, e| TrafficError::io(format!("{what} {src} → {dst}"), e);
        s.bind(&src.into()).map_err(|e| ctx("bind", e))?;
        s.connect(&dst.into()).map_err(|e| ctx("connect", e))?;
        let sock: UdpSocket = s.into();
        let gate = StartGate::new();
        let stop = Arc::new(AtomicBool::new(false));
        let (g, st, spec) = (gate.clone(), stop.clone(), spec.clone());
        let worker = std::thread::spawn(move || {
            if !g.wait() {
                return Ok(PingResults::default());
            }
            ping_loop(&sock, &spec, &st)
        });
        Ok(PingClient {
            gate,
            stop,
            worker: Some(worker),
        })
    }

    pub fn start(&mut self) {
        self.gate.open(Gate::Go);
    }

    pub fn stop(mut self) -> Result<PingResults, TrafficError> {
        self.stop.store(true, Ordering::SeqCst);
        self.gate.open(Gate::Abort);
        match self.worker.take().map(|w| w.join()) {
            Some(Ok(r)) => r,
            _ => Err(TrafficError::BadSpec("the ping thread panicked".into())),
        }
    }
}

impl Drop for PingClient {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.gate.open(Gate::Abort);
    }
}

fn ping_loop(
    sock: &UdpSocket,
    spec: &PingSpec,
    stop: &AtomicBool,
) -> Result<PingResults, TrafficError> {
    sys::tight_timer_slack();
    let mut r = PingResults::default();
    let mut hist = RttHistogram::new();
    let len = spec.payload as usize;
    let mut out = vec![0u8; len];
    let mut inp = vec![0u8; len + 1];
    let timeout = Duration::from_millis(spec.timeout_ms.max(1) as u64);
    let t0 = sys::monotonic_ns();
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
                continue;
            }
            Err(e) => return Err(TrafficError::io("sending a ping", e)),
        }
        // Wait for the matching reply; anything else (late replies) is invalid.
        loop {
            let waited = Duration::from_nanos(sys::monotonic_ns() - sent_at);
            if waited >= timeout {
                r.lost += 1;
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
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
                    r.lost += 1;
                    break;
                }
                Err(e) => return Err(TrafficError::io("receiving a ping reply", e)),
            }
        }
    }
    r.elapsed_ns = sys::monotonic_ns() - t0;
    r.rtt = hist.summary();
    Ok(r)
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

    /// Loopback only: a reflector and a ping of 20 probes, back to back.
    #[test]
    fn ping_over_loopback() {
        let port = {
            let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let refl = Reflector::start(&ReflectorSpec {
            listen: "127.0.0.1".parse().unwrap(),
            port,
        })
        .unwrap();
        let mut c = PingClient::setup(&PingSpec {
            source: "127.0.0.1".parse().unwrap(),
            server: "127.0.0.1".parse().unwrap(),
            port,
            payload: 8,
            count: Some(20),
            interval_ns: 0,
            timeout_ms: 500,
        })
        .unwrap();
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
            source: "127.0.0.1".parse().unwrap(),
            server: "127.0.0.1".parse().unwrap(),
            port,
            payload: 7,
            count: None,
            interval_ns: 0,
            timeout_ms: 500,
        });
        assert!(e
            .err()
            .unwrap()
            .to_string()
            .contains("ping payload must be 8"));
    }
}
