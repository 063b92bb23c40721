//! Echo servers: TCP/SCTP streams or UDP sockets, one thread per client ("threads")
//! or one epoll thread for all ("epoll").

use super::POLL;
use crate::frame::{Repr, HEADER_LEN};
use crate::sys::{self, Epoll, EventFd, EPOLLIN, EPOLLOUT};
use crate::validate::Validator;
use crate::TrafficError;
use proto::{Counter, EchoServerResults, EchoServerSpec, EchoServerStats, Proto, ServerMode};
use socket2::Socket;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Counters of one server-side connection.
struct Conn {
    validator: Validator,
    mp2: Counter,
    mp3: Counter,
    unsent: u64,
    error: Option<String>,
}

impl Conn {
    fn new(client: Option<u32>, max_client: u32) -> Self {
        Conn {
            validator: Validator::new(client, max_client),
            mp2: Counter::default(),
            mp3: Counter::default(),
            unsent: 0,
            error: None,
        }
    }

    /// MP2: a whole frame arrived.
    fn received(&mut self, frame: &[u8]) {
        self.mp2.add(frame.len());
        self.validator.check(Repr::parse(frame), frame.len(), None);
    }

    fn stats(self) -> EchoServerStats {
        EchoServerStats {
            client: self.validator.client().unwrap_or(0),
            mp2: self.mp2,
            mp3: self.mp3,
            unsent: self.unsent,
            validation: self.validator.counts,
            error: self.error,
        }
    }
}

type Worker = JoinHandle<Vec<EchoServerStats>>;

/// A running echo server. Serving starts at [`EchoServer::start`] (clients connect
/// during setup); [`EchoServer::stop`] ends it and returns the MP2/MP3 counters.
pub struct EchoServer {
    stop: Arc<AtomicBool>,
    wake: Option<Arc<EventFd>>,
    /// Sockets to shut down at stop so blocked threads return.
    to_shutdown: Arc<Mutex<Vec<Socket>>>,
    workers: Vec<Worker>,
}

impl EchoServer {
    /// The eventfd that wakes the epoll thread at stop (made here, kept for `stop`).
    fn epoll_wake(&mut self) -> Result<Arc<EventFd>, TrafficError> {
        let wake = Arc::new(EventFd::new().map_err(|e| TrafficError::io("eventfd", e))?);
        self.wake = Some(wake.clone());
        Ok(wake)
    }

    pub fn start(spec: &EchoServerSpec) -> Result<EchoServer, TrafficError> {
        if spec.clients == 0 {
            return Err(TrafficError::BadSpec(
                "echo server needs at least one client".into(),
            ));
        }
        // One socket per client: lift the open-file limit (a warning if it cannot).
        if let Err(e) = sys::raise_nofile_limit() {
            tracing::warn!("cannot raise RLIMIT_NOFILE: {e}");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let to_shutdown = Arc::new(Mutex::new(Vec::new()));
        let timeout = Duration::from_millis(spec.timeout_ms.max(1) as u64);
        let mut server = EchoServer {
            stop: stop.clone(),
            wake: None,
            to_shutdown: to_shutdown.clone(),
            workers: Vec::new(),
        };
        match spec.proto {
            Proto::Tcp | Proto::Sctp => {
                let addr = SocketAddr::new(spec.listen, spec.port);
                let l = sys::stream_socket(spec.proto, &addr)?;
                l.set_reuse_address(true)
                    .and_then(|_| l.bind(&addr.into()))
                    .and_then(|_| l.listen(spec.clients.min(65535) as i32))
                    .map_err(|e| TrafficError::io(format!("listen on {}/{addr}", spec.proto), e))?;
                match spec.mode {
                    ServerMode::Threads => {
                        let (s, n, max) = (stop.clone(), spec.clients, spec.max_frame);
                        let reg = to_shutdown.clone();
                        let listener = l
                            .try_clone()
                            .map_err(|e| TrafficError::io("dup listener", e))?;
                        to_shutdown.lock().map_err(poisoned)?.push(listener);
                        server.workers.push(std::thread::spawn(move || {
                            accept_threads(l, n, max, timeout, s, reg)
                        }));
                    }
                    ServerMode::Epoll => {
                        let wake = server.epoll_wake()?;
                        let (s, n, max) = (stop.clone(), spec.clients, spec.max_frame);
                        server.workers.push(std::thread::spawn(move || {
                            stream_epoll(l, n, max, timeout, s, wake)
                        }));
                    }
                }
            }
            Proto::Udp => {
                let mut socks = Vec::new();
                for i in 0..spec.clients {
                    let port = spec.port as u32 + i;
                    if port > u16::MAX as u32 {
                        return Err(TrafficError::BadSpec(format!(
                            "UDP port range {}+{} exceeds 65535",
                            spec.port, spec.clients
                        )));
                    }
                    let addr = SocketAddr::new(spec.listen, port as u16);
                    let s = sys::udp_socket(&addr)?;
                    s.bind(&addr.into())
                        .map_err(|e| TrafficError::io(format!("bind udp/{addr}"), e))?;
                    socks.push(UdpSocket::from(s));
                }
                match spec.mode {
                    ServerMode::Threads => {
                        for (i, s) in socks.into_iter().enumerate() {
                            let st = stop.clone();
                            let (n, max) = (spec.clients, spec.max_frame);
                            server.workers.push(std::thread::spawn(move || {
                                vec![udp_thread(s, i as u32 + 1, n, max, timeout, st)]
                            }));
                        }
                    }
                    ServerMode::Epoll => {
                        let wake = server.epoll_wake()?;
                        let (st, n, max) = (stop.clone(), spec.clients, spec.max_frame);
                        server.workers.push(std::thread::spawn(move || {
                            udp_epoll(socks, n, max, st, wake)
                        }));
                    }
                }
            }
        }
        Ok(server)
    }

    /// Stop serving and collect per-connection counters.
    pub fn stop(self) -> EchoServerResults {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(w) = &self.wake {
            w.wake();
        }
        if let Ok(socks) = self.to_shutdown.lock() {
            for s in socks.iter() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let mut clients = Vec::new();
        for w in self.workers {
            match w.join() {
                Ok(v) => clients.extend(v),
                Err(_) => clients.push(EchoServerStats {
                    error: Some("server worker panicked".into()),
                    ..Default::default()
                }),
            }
        }
        clients.sort_by_key(|c| c.client);
        EchoServerResults { clients }
    }
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> TrafficError {
    TrafficError::BadSpec("internal lock poisoned".into())
}

fn accept_threads(
    listener: Socket,
    clients: u32,
    max_frame: u32,
    timeout: Duration,
    stop: Arc<AtomicBool>,
    to_shutdown: Arc<Mutex<Vec<Socket>>>,
) -> Vec<EchoServerStats> {
    let mut threads = Vec::new();
    for _ in 0..clients {
        let Ok((sock, _)) = listener.accept() else {
            break; // shut down at stop, or a fatal accept error
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let _ = sock.set_nodelay(true);
        let _ = sock.set_write_timeout(Some(timeout));
        if let (Ok(dup), Ok(mut reg)) = (sock.try_clone(), to_shutdown.lock()) {
            reg.push(dup);
        }
        threads.push(std::thread::spawn(move || {
            stream_thread(sock, clients, max_frame)
        }));
    }
    threads.into_iter().filter_map(|t| t.join().ok()).collect()
}

/// Read exactly `buf.len()` bytes. `Ok(false)` on a clean EOF before the first byte.
fn read_full(s: &mut &Socket, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Threads mode: one blocking thread per stream connection.
fn stream_thread(sock: Socket, clients: u32, max_frame: u32) -> EchoServerStats {
    let mut c = Conn::new(None, clients);
    let mut buf = vec![0u8; max_frame as usize];
    let mut s = &sock;
    loop {
        match read_full(&mut s, &mut buf[..HEADER_LEN]) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                c.error = closed_or(e);
                break;
            }
        }
        let size = match Repr::parse(&buf[..HEADER_LEN]) {
            Ok(h) if h.size <= max_frame => h.size as usize,
            Ok(_) => {
                c.validator.counts.wrong_size += 1;
                c.error = Some("frame larger than the server's maximum; stream abandoned".into());
                break;
            }
            Err(_) => {
                c.validator.counts.malformed += 1;
                c.error = Some("unreadable frame header; stream abandoned".into());
                break;
            }
        };
        if let Err(e) = read_full(&mut s, &mut buf[HEADER_LEN..size]) {
            c.error = closed_or(e);
            break;
        }
        c.received(&buf[..size]);
        match write_all_timed(&mut s, &buf[..size]) {
            Ok(false) => c.mp3.add(size),
            Ok(true) => {
                c.unsent += 1;
                c.mp3.add(size);
            }
            Err(e) => {
                c.error = closed_or(e);
                break;
            }
        }
    }
    c.stats()
}

/// Write all of `data` through a socket with SO_SNDTIMEO set. Returns whether the
/// timeout struck (the frame was late: unsent) before the write completed. A stream
/// must stay framed, so a late frame is still completed.
fn write_all_timed(s: &mut &Socket, data: &[u8]) -> io::Result<bool> {
    let mut sent = 0;
    let mut late = false;
    while sent < data.len() {
        match s.write(&data[sent..]) {
            Ok(n) => sent += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                late = true
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(late)
}

/// A reset or shutdown at the end of a trial is normal; anything else is recorded.
fn closed_or(e: io::Error) -> Option<String> {
    match e.kind() {
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::UnexpectedEof
        | io::ErrorKind::NotConnected => None,
        _ => Some(e.to_string()),
    }
}

struct StreamConn {
    sock: Socket,
    inbuf: Vec<u8>,
    filled: usize,
    out: Vec<u8>,
    out_pos: usize,
    /// When the oldest unwritten echo was queued.
    pending_since: Option<Instant>,
    counted_unsent: bool,
    c: Conn,
}

const LISTENER: u64 = u64::MAX;
const WAKE: u64 = u64::MAX - 1;

/// Epoll mode for streams: one thread, non-blocking sockets, per-connection buffers.
fn stream_epoll(
    listener: Socket,
    clients: u32,
    max_frame: u32,
    timeout: Duration,
    stop: Arc<AtomicBool>,
    wake: Arc<EventFd>,
) -> Vec<EchoServerStats> {
    let mut done: Vec<EchoServerStats> = Vec::new();
    let fail = |msg: String| {
        vec![EchoServerStats {
            error: Some(msg),
            ..Default::default()
        }]
    };
    let ep = match Epoll::new() {
        Ok(e) => e,
        Err(e) => return fail(format!("epoll_create: {e}")),
    };
    if let Err(e) = listener
        .set_nonblocking(true)
        .and_then(|_| ep.add(&listener, EPOLLIN, LISTENER))
        .and_then(|_| ep.add(&*wake, EPOLLIN, WAKE))
    {
        return fail(format!("epoll setup: {e}"));
    }
    let mut conns: Vec<Option<StreamConn>> = Vec::new();
    let mut events = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        if let Err(e) = ep.wait(&mut events, POLL) {
            done.extend(fail(format!("epoll_wait: {e}")));
            break;
        }
        for &(token, _ev) in &events {
            if token == WAKE {
                continue;
            }
            if token == LISTENER {
                while let Ok((sock, _)) = listener.accept() {
                    if conns.len() >= clients as usize {
                        break; // more connections than clients: refuse by dropping
                    }
                    let _ = sock.set_nodelay(true);
                    let _ = sock.set_nonblocking(true);
                    let id = conns.len() as u64;
                    if ep.add(&sock, EPOLLIN, id).is_ok() {
                        conns.push(Some(StreamConn {
                            sock,
                            inbuf: vec![0u8; max_frame as usize],
                            filled: 0,
                            out: Vec::new(),
                            out_pos: 0,
                            pending_since: None,
                            counted_unsent: false,
                            c: Conn::new(None, clients),
                        }));
                    }
                }
                continue;
            }
            let Some(slot) = conns.get_mut(token as usize) else {
                continue;
            };
            let Some(conn) = slot.as_mut() else { continue };
            let keep = service_stream(conn, max_frame) && flush_stream(conn, &ep, token);
            if !keep {
                let _ = ep.delete(&conn.sock);
                if let Some(conn) = slot.take() {
                    done.push(conn.c.stats());
                }
            }
        }
        // Echoes stuck longer than the timeout count as unsent (once per frame).
        for conn in conns.iter_mut().flatten() {
            if let Some(t) = conn.pending_since {
                if !conn.counted_unsent && t.elapsed() > timeout {
                    conn.c.unsent += 1;
                    conn.counted_unsent = true;
                }
            }
        }
    }
    done.extend(conns.into_iter().flatten().map(|c| c.c.stats()));
    done
}

/// Read what is there and queue echoes of every complete frame. false = close.
fn service_stream(conn: &mut StreamConn, max_frame: u32) -> bool {
    // One read per wake-up (level-triggered: leftovers wake us again).
    if conn.filled < conn.inbuf.len() {
        match (&conn.sock).read(&mut conn.inbuf[conn.filled..]) {
            Ok(0) => return false,
            Ok(n) => conn.filled += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                conn.c.error = closed_or(e);
                return false;
            }
        }
    }
    let mut start = 0;
    while conn.filled - start >= HEADER_LEN {
        let size = match Repr::parse(&conn.inbuf[start..start + HEADER_LEN]) {
            Ok(h) if h.size <= max_frame => h.size as usize,
            Ok(_) => {
                conn.c.validator.counts.wrong_size += 1;
                conn.c.error =
                    Some("frame larger than the server's maximum; stream abandoned".into());
                return false;
            }
            Err(_) => {
                conn.c.validator.counts.malformed += 1;
                conn.c.error = Some("unreadable frame header; stream abandoned".into());
                return false;
            }
        };
        if conn.filled - start < size {
            break;
        }
        let frame = &conn.inbuf[start..start + size];
        conn.c.received(frame);
        if conn.out_pos == conn.out.len() {
            conn.out.clear();
            conn.out_pos = 0;
        }
        conn.out.extend_from_slice(frame);
        if conn.pending_since.is_none() {
            conn.pending_since = Some(Instant::now());
            conn.counted_unsent = false;
        }
        start += size;
    }
    conn.inbuf.copy_within(start..conn.filled, 0);
    conn.filled -= start;
    true
}

/// Write queued echoes; arm EPOLLOUT while something is left. false = close.
fn flush_stream(conn: &mut StreamConn, ep: &Epoll, token: u64) -> bool {
    let before = conn.out.len() - conn.out_pos;
    while conn.out_pos < conn.out.len() {
        match (&conn.sock).write(&conn.out[conn.out_pos..]) {
            Ok(n) => conn.out_pos += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                conn.c.error = closed_or(e);
                return false;
            }
        }
    }
    if before > 0 && conn.out_pos == conn.out.len() {
        // MP3 counts whole frames: count those whose last byte just left.
        count_sent_frames(&mut conn.c, &conn.out);
        conn.out.clear();
        conn.out_pos = 0;
        conn.pending_since = None;
        let _ = ep.modify(&conn.sock, EPOLLIN, token);
    } else if conn.out_pos < conn.out.len() {
        let _ = ep.modify(&conn.sock, EPOLLIN | EPOLLOUT, token);
    }
    true
}

fn count_sent_frames(c: &mut Conn, out: &[u8]) {
    let mut at = 0;
    while at + HEADER_LEN <= out.len() {
        let size = Repr::parse(&out[at..at + HEADER_LEN])
            .map(|h| h.size as usize)
            .unwrap_or(out.len() - at);
        c.mp3.add(size);
        at += size.max(1);
    }
}

/// Threads mode for UDP: one blocking thread per client socket.
fn udp_thread(
    s: UdpSocket,
    client: u32,
    clients: u32,
    max_frame: u32,
    timeout: Duration,
    stop: Arc<AtomicBool>,
) -> EchoServerStats {
    let mut c = Conn::new(Some(client), clients);
    let _ = s.set_read_timeout(Some(POLL));
    let _ = s.set_write_timeout(Some(timeout));
    let mut buf = vec![0u8; max_frame as usize + 1];
    while !stop.load(Ordering::SeqCst) {
        match s.recv_from(&mut buf) {
            Ok((n, from)) => udp_echo(&s, &mut c, &buf[..n], from),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                c.error = Some(format!("recvfrom: {e}"));
                break;
            }
        }
    }
    c.stats()
}

fn udp_echo(s: &UdpSocket, c: &mut Conn, frame: &[u8], to: SocketAddr) {
    c.received(frame);
    match s.send_to(frame, to) {
        Ok(n) if n == frame.len() => c.mp3.add(n),
        Ok(_) | Err(_) => c.unsent += 1,
    }
}

/// Epoll mode for UDP: one thread polling every client socket.
fn udp_epoll(
    socks: Vec<UdpSocket>,
    clients: u32,
    max_frame: u32,
    stop: Arc<AtomicBool>,
    wake: Arc<EventFd>,
) -> Vec<EchoServerStats> {
    let mut conns: Vec<Conn> = (1..=clients).map(|i| Conn::new(Some(i), clients)).collect();
    let ep = match Epoll::new() {
        Ok(e) => e,
        Err(e) => {
            conns[0].error = Some(format!("epoll_create: {e}"));
            return conns.into_iter().map(Conn::stats).collect();
        }
    };
    for (i, s) in socks.iter().enumerate() {
        if let Err(e) = s
            .set_nonblocking(true)
            .and_then(|_| ep.add(s, EPOLLIN, i as u64))
        {
            conns[i].error = Some(format!("epoll add: {e}"));
        }
    }
    let _ = ep.add(&*wake, EPOLLIN, WAKE);
    let mut buf = vec![0u8; max_frame as usize + 1];
    let mut events = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        if let Err(e) = ep.wait(&mut events, POLL) {
            conns[0].error = Some(format!("epoll_wait: {e}"));
            break;
        }
        for &(token, _) in &events {
            let i = token as usize;
            let Some(s) = socks.get(i) else { continue };
            // One datagram per wake-up: epoll is level-triggered, so anything still
            // queued wakes us again, and the common case saves an EAGAIN syscall.
            if let Ok((n, from)) = s.recv_from(&mut buf) {
                udp_echo(s, &mut conns[i], &buf[..n], from);
            }
        }
    }
    conns.into_iter().map(Conn::stats).collect()
}
