//! The gateway's userspace TCP relay (seed 003's application proxy, the study's
//! `shovel`): accept on `listen:port`, connect to `upstream:upstream_port`, copy both
//! ways in blocks of at most `buffer` bytes.
//!
//! Owns: one epoll thread over non-blocking sockets. Per direction it reads at most
//! `buffer` bytes and writes that block out before it reads again: a partial write
//! parks the rest and stops reading that direction until it has drained (EPOLLOUT).
//! Half-close is passed on (end of stream from one side → `shutdown(Write)` on the
//! other); both sockets close once both directions are done, so every byte was read
//! and close(2) sends no RST. A failed upstream connect (5 s timeout) ends the client
//! side the same way: FIN, then read to the client's FIN.
//! Must not: hold more than one block per direction, or block the loop (the upstream
//! connect is non-blocking too).

use super::evloop::{Acceptor, LoopThread, Slab, LISTENER, TICK, WAKE};
use crate::sys::{Epoll, EPOLLIN, EPOLLOUT};
use crate::TrafficError;
use proto::{ProxyResults, ProxySpec};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::{self, Read};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long an upstream connect may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes one direction may move per wake-up before the loop serves others.
const PUMP_BYTES: usize = 1 << 20;
/// Blocks one direction may move per wake-up.
const PUMP_ROUNDS: usize = 64;
/// Listen backlog (capped by net.core.somaxconn).
const BACKLOG: u32 = 4096;

/// One direction of a relay.
#[derive(Debug, Default)]
struct Pipe {
    /// The unwritten rest of the last block read.
    pending: Vec<u8>,
    at: usize,
    /// The source sent its FIN.
    eof: bool,
    /// FIN passed on to the destination.
    shut: bool,
}

impl Pipe {
    fn has_pending(&self) -> bool {
        self.at < self.pending.len()
    }

    fn park(&mut self, rest: &[u8]) {
        self.pending.clear();
        self.pending.extend_from_slice(rest);
        self.at = 0;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Upstream connect in flight, given up at the deadline.
    Connecting(Instant),
    Open,
    /// Upstream failed: our FIN is out to the client; read to its FIN.
    Rejecting,
}

/// A client connection and its upstream.
struct Relay {
    client: Socket,
    upstream: Option<Socket>,
    phase: Phase,
    /// client → upstream.
    up: Pipe,
    /// upstream → client.
    down: Pipe,
    /// epoll interest registered for (client, upstream); 0 = not in the set.
    interest: [u32; 2],
}

/// What a side of a relay failed at.
type Failed = (&'static str, io::Error);

/// Copy `src` → `dst` through `p` until the sockets block or the turn is over.
/// `scratch` is one block. Returns the bytes written to `dst`.
fn pump(
    src: &Socket,
    dst: &Socket,
    p: &mut Pipe,
    scratch: &mut [u8],
    names: (&'static str, &'static str),
) -> Result<u64, Failed> {
    let (read_what, write_what) = names;
    let mut moved = 0u64;
    for _ in 0..PUMP_ROUNDS {
        if moved as usize >= PUMP_BYTES {
            break;
        }
        if p.has_pending() {
            match dst.send(&p.pending[p.at..]) {
                Ok(n) => {
                    p.at += n;
                    moved += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err((write_what, e)),
            }
            continue;
        }
        if p.eof {
            if !p.shut {
                dst.shutdown(Shutdown::Write).map_err(|e| (write_what, e))?;
                p.shut = true;
            }
            break;
        }
        let n = match (&*src).read(scratch) {
            Ok(0) => {
                p.eof = true;
                continue;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err((read_what, e)),
        };
        match dst.send(&scratch[..n]) {
            Ok(k) => {
                moved += k as u64;
                if k < n {
                    p.park(&scratch[k..n]);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) =>
            {
                p.park(&scratch[..n])
            }
            Err(e) => return Err((write_what, e)),
        }
    }
    // The turn may end right after the source's FIN was read: pass it on now, since
    // neither side is watched for this direction any more (nothing left to read or write).
    if p.eof && !p.has_pending() && !p.shut {
        dst.shutdown(Shutdown::Write).map_err(|e| (write_what, e))?;
        p.shut = true;
    }
    Ok(moved)
}

impl Relay {
    /// epoll interest wanted now for (client, upstream).
    fn wanted(&self) -> [u32; 2] {
        let out_if = |b: bool| if b { EPOLLOUT } else { 0 };
        let in_if = |b: bool| if b { EPOLLIN } else { 0 };
        match self.phase {
            Phase::Connecting(_) => [0, EPOLLOUT],
            Phase::Rejecting => [EPOLLIN, 0],
            Phase::Open => [
                in_if(!self.up.eof && !self.up.has_pending()) | out_if(self.down.has_pending()),
                in_if(!self.down.eof && !self.down.has_pending()) | out_if(self.up.has_pending()),
            ],
        }
    }

    /// Both directions ended and their FINs passed on.
    fn finished(&self) -> bool {
        self.phase == Phase::Open && self.up.shut && self.down.shut
    }
}

/// What became of a relay after an event.
enum After {
    Keep,
    /// Closed normally.
    Done,
    /// Closed on an error.
    Failed(String),
}

/// A running relay. It serves from [`Proxy::start`] until [`Proxy::stop`].
pub struct Proxy {
    thread: LoopThread<ProxyResults>,
}

impl Proxy {
    pub fn start(spec: &ProxySpec) -> Result<Proxy, TrafficError> {
        if spec.buffer == 0 {
            return Err(TrafficError::BadSpec(
                "proxy buffer must be at least 1 byte".into(),
            ));
        }
        let addr = SocketAddr::new(spec.listen, spec.port);
        let upstream = SocketAddr::new(spec.upstream, spec.upstream_port);
        let buffer = spec.buffer as usize;
        let thread = LoopThread::spawn("proxy", addr, BACKLOG, move |ep, acceptor, st, op| {
            relay_loop(ep, acceptor, upstream, buffer, st, op)
        })?;
        Ok(Proxy { thread })
    }

    /// The address it listens on (the real port when the spec said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.thread.local_addr()
    }

    /// Client connections open right now.
    pub fn open_now(&self) -> u64 {
        self.thread.open_now()
    }

    /// Stop accepting, close every relay, return the counters.
    pub fn stop(self) -> ProxyResults {
        self.thread.finish(|| ProxyResults {
            errors: 1,
            first_error: Some("the proxy thread panicked".into()),
            ..Default::default()
        })
    }
}

fn record_error(r: &mut ProxyResults, text: String) {
    r.errors += 1;
    if r.first_error.is_none() {
        r.first_error = Some(text);
    }
}

/// Start the upstream connection of a new client: Open, Connecting, or (failed) None.
fn connect_upstream(upstream: SocketAddr) -> io::Result<(Socket, Phase)> {
    let s = Socket::new(
        Domain::for_address(upstream),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    s.set_nonblocking(true)?;
    let _ = s.set_nodelay(true);
    match s.connect(&upstream.into()) {
        Ok(()) => Ok((s, Phase::Open)),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            Ok((s, Phase::Connecting(Instant::now() + CONNECT_TIMEOUT)))
        }
        Err(e) => Err(e),
    }
}

/// Give up on the upstream: FIN to the client, then read it to its FIN.
fn reject(rl: &mut Relay, r: &mut ProxyResults, why: &io::Error) {
    r.upstream_failures += 1;
    if r.upstream_failures == 1 {
        tracing::warn!("proxy: upstream connect failed: {why}");
    }
    rl.upstream = None;
    rl.interest[1] = 0;
    rl.phase = Phase::Rejecting;
    let _ = rl.client.shutdown(Shutdown::Write);
}

/// Make the registered interest of one socket `want` (0 = take it out of the set).
fn set_interest(ep: &Epoll, s: &Socket, token: u64, cur: &mut u32, want: u32) -> io::Result<()> {
    if *cur == want {
        return Ok(());
    }
    match (*cur, want) {
        (0, w) => ep.add(s, w, token)?,
        (_, 0) => ep.delete(s)?,
        (_, w) => ep.modify(s, w, token)?,
    }
    *cur = want;
    Ok(())
}

fn sync_interest(ep: &Epoll, key: usize, rl: &mut Relay) -> io::Result<()> {
    let want = rl.wanted();
    let base = key as u64 * 2;
    set_interest(ep, &rl.client, base, &mut rl.interest[0], want[0])?;
    if let Some(u) = &rl.upstream {
        set_interest(ep, u, base + 1, &mut rl.interest[1], want[1])?;
    }
    Ok(())
}

/// Serve one relay after readiness on either of its sockets.
fn service(rl: &mut Relay, scratch: &mut [u8], r: &mut ProxyResults) -> After {
    if let Phase::Connecting(_) = rl.phase {
        let Some(u) = &rl.upstream else {
            return After::Failed("upstream socket missing".into());
        };
        match u.take_error() {
            Ok(None) => match u.peer_addr() {
                Ok(_) => rl.phase = Phase::Open,
                // Not connected yet (a stale event): wait for the real one.
                Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => return After::Keep,
                Err(e) => reject(rl, r, &e),
            },
            Ok(Some(e)) | Err(e) => reject(rl, r, &e),
        }
    }
    match rl.phase {
        Phase::Connecting(_) => After::Keep,
        Phase::Rejecting => {
            // Discard what the client still sends, up to its FIN.
            loop {
                match (&rl.client).read(scratch) {
                    Ok(0) => return After::Done,
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return After::Keep,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return After::Failed(format!("client read: {e}")),
                }
            }
        }
        Phase::Open => {
            let Some(u) = &rl.upstream else {
                return After::Failed("upstream socket missing".into());
            };
            let names_up = ("client read", "upstream write");
            let names_down = ("upstream read", "client write");
            let up = pump(&rl.client, u, &mut rl.up, scratch, names_up);
            let down = up.and_then(|n| {
                r.bytes_up += n;
                pump(u, &rl.client, &mut rl.down, scratch, names_down)
            });
            match down {
                Ok(n) => r.bytes_down += n,
                Err((what, e)) => return After::Failed(format!("{what}: {e}")),
            }
            if rl.finished() {
                After::Done
            } else {
                After::Keep
            }
        }
    }
}

/// The event loop.
fn relay_loop(
    ep: Epoll,
    mut acceptor: Acceptor,
    upstream: SocketAddr,
    buffer: usize,
    stop: &AtomicBool,
    open: &AtomicU64,
) -> ProxyResults {
    let mut r = ProxyResults::default();
    let mut relays: Slab<Relay> = Slab::default();
    let mut scratch = vec![0u8; buffer];
    let mut events = Vec::new();
    let mut next_timeout_scan = Instant::now() + TICK;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        acceptor.resume(&ep, now);
        if let Err(e) = ep.wait(&mut events, acceptor.wait_for(now)) {
            record_error(&mut r, format!("epoll_wait: {e}"));
            break;
        }
        for &(token, _) in &events {
            let key = match token {
                WAKE => continue,
                LISTENER => {
                    acceptor.accept(&ep, Instant::now(), |client| {
                        r.connections += 1;
                        let _ = client.set_nodelay(true);
                        let mut rl = Relay {
                            client,
                            upstream: None,
                            phase: Phase::Open,
                            up: Pipe::default(),
                            down: Pipe::default(),
                            interest: [0, 0],
                        };
                        match connect_upstream(upstream) {
                            Ok((u, phase)) => {
                                rl.upstream = Some(u);
                                rl.phase = phase;
                            }
                            Err(e) => reject(&mut rl, &mut r, &e),
                        }
                        let key = relays.next_key();
                        match sync_interest(&ep, key, &mut rl) {
                            Ok(()) => {
                                relays.insert(rl);
                                r.max_open = r.max_open.max(relays.len() as u64);
                            }
                            Err(e) => record_error(&mut r, format!("epoll_ctl: {e}")),
                        }
                    });
                    continue;
                }
                t => (t / 2) as usize,
            };
            let Some(rl) = relays.get_mut(key) else {
                continue;
            };
            let after = match service(rl, &mut scratch, &mut r) {
                After::Keep => match sync_interest(&ep, key, rl) {
                    Ok(()) => After::Keep,
                    Err(e) => After::Failed(format!("epoll_ctl: {e}")),
                },
                other => other,
            };
            match after {
                After::Keep => {}
                After::Done => {
                    relays.remove(key);
                }
                After::Failed(text) => {
                    record_error(&mut r, text);
                    relays.remove(key);
                }
            }
        }
        // Upstream connects past their deadline fail like refused ones.
        let now = Instant::now();
        if now >= next_timeout_scan {
            next_timeout_scan = now + TICK;
            let mut expired = Vec::new();
            for (key, rl) in relays.iter_mut() {
                if matches!(rl.phase, Phase::Connecting(d) if now >= d) {
                    let e = io::Error::new(io::ErrorKind::TimedOut, "upstream connect timed out");
                    reject(rl, &mut r, &e);
                    expired.push(key);
                }
            }
            for key in expired {
                if let Some(rl) = relays.get_mut(key) {
                    if let Err(e) = sync_interest(&ep, key, rl) {
                        record_error(&mut r, format!("epoll_ctl: {e}"));
                        relays.remove(key);
                    }
                }
            }
        }
        open.store(relays.len() as u64, Ordering::Relaxed);
    }
    relays.drain().for_each(drop);
    open.store(0, Ordering::Relaxed);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    /// A connected pair of sockets: (ours, non-blocking; the peer's std stream).
    fn pair() -> (Socket, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (ours, _) = l.accept().unwrap();
        let ours = Socket::from(ours);
        ours.set_nonblocking(true).unwrap();
        (ours, peer)
    }

    #[test]
    fn pump_moves_blocks_and_passes_the_fin_on() {
        let (src, mut src_peer) = pair();
        let (dst, mut dst_peer) = pair();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 253) as u8).collect();
        src_peer.write_all(&data).unwrap();
        src_peer.shutdown(Shutdown::Write).unwrap();
        let mut p = Pipe::default();
        let mut block = vec![0u8; 1000];
        let mut moved = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !p.shut && Instant::now() < deadline {
            moved += pump(&src, &dst, &mut p, &mut block, ("r", "w")).unwrap();
        }
        assert!(p.shut && p.eof);
        assert_eq!(moved, 10_000);
        let mut got = Vec::new();
        dst_peer.read_to_end(&mut got).unwrap();
        assert_eq!(
            got, data,
            "the relayed stream must be intact and end with FIN"
        );
    }

    #[test]
    fn a_fin_read_in_the_last_round_of_a_turn_is_passed_on_in_that_turn() {
        // 63 blocks and then the FIN: the 64th and last round of the turn reads the end
        // of stream. After that turn nothing watches this direction, so the FIN must
        // already be on its way (a lost FIN stalled bulk transfers through the proxy).
        let (src, mut src_peer) = pair();
        let (dst, mut dst_peer) = pair();
        let data = vec![7u8; 1000 * (PUMP_ROUNDS - 1)];
        src_peer.write_all(&data).unwrap();
        src_peer.shutdown(Shutdown::Write).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let mut p = Pipe::default();
        let mut block = vec![0u8; 1000];
        let moved = pump(&src, &dst, &mut p, &mut block, ("r", "w")).unwrap();
        assert_eq!(moved as usize, data.len());
        assert!(p.eof && p.shut, "FIN not passed on: {p:?}");
        let mut got = Vec::new();
        dst_peer.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), data.len());
    }

    #[test]
    fn interest_follows_the_pipes() {
        let (client, _c) = pair();
        let (upstream, _u) = pair();
        let mut rl = Relay {
            client,
            upstream: Some(upstream),
            phase: Phase::Connecting(Instant::now()),
            up: Pipe::default(),
            down: Pipe::default(),
            interest: [0, 0],
        };
        assert_eq!(rl.wanted(), [0, EPOLLOUT]);
        rl.phase = Phase::Open;
        assert_eq!(rl.wanted(), [EPOLLIN, EPOLLIN]);
        rl.up.park(b"abc");
        assert_eq!(
            rl.wanted(),
            [0, EPOLLIN | EPOLLOUT],
            "a parked block stops reading"
        );
        rl.down.eof = true;
        assert_eq!(rl.wanted(), [0, EPOLLOUT]);
        rl.phase = Phase::Rejecting;
        assert_eq!(rl.wanted(), [EPOLLIN, 0]);
        assert!(!rl.finished());
    }
}
