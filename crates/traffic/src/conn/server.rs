//! The built-in TCP server: FWBS sessions, FWBH holds and HTTP/1.1 downloads on one
//! port, served by one epoll thread over non-blocking sockets (thousands of sessions/s,
//! tens of thousands of idle connections).
//!
//! Owns: the per-connection protocol — the sans-IO [`Exchange`], fed the bytes read and
//! answering with what to write — and the event loop around it.
//! Must not: block, spawn a thread per connection, or reset a connection it ends
//! normally: after a response that ends the connection it sends FIN
//! (`shutdown(Write)`) and reads until the client's FIN before it closes, so the
//! receive queue is empty at close(2) and the kernel never answers with RST.

use super::evloop::{Acceptor, LoopThread, Slab, LISTENER, WAKE};
use super::header::{Kind, SessionHeader, HEADER_LEN};
use super::http::{self, Parse, Route};
use super::pattern::pattern;
use crate::sys::{Epoll, EPOLLIN, EPOLLOUT};
use crate::TrafficError;
use proto::{TcpServerResults, TcpServerSpec, HOLD_MAGIC, SESSION_MAGIC};
use socket2::Socket;
use std::io::{self, IoSlice, Read};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// What a reply counts as once its last byte is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    /// An FWBS response.
    Session,
    /// An HTTP response to a well-formed request (200, 404, 405).
    Http,
    /// An HTTP error for a malformed request (400, 431); the request was counted bad.
    Refused,
}

/// Bytes to write: `head` from memory, then `body` pattern bytes.
#[derive(Debug, PartialEq, Eq)]
struct Reply {
    head: Vec<u8>,
    body: u64,
    /// Send FIN after it and wait for the client's.
    close: bool,
    served: Served,
}

/// What the bytes fed so far ask for.
#[derive(Debug, PartialEq, Eq)]
enum Fed {
    /// Read more.
    More,
    /// Write this (and read nothing meanwhile).
    Reply(Reply),
    /// A protocol violation: count it; write the reply if any, else close our side.
    Bad {
        why: &'static str,
        reply: Option<Reply>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The first four bytes decide the protocol.
    Magic,
    /// FWBS or FWBH: the rest of the 16-byte header.
    Header,
    /// FWBS: checking the request body; `left` bytes to go from body offset `at`.
    Body { at: u64, left: u64, response: u64 },
    /// FWBH: nothing to do until the client's FIN.
    Hold,
    /// HTTP: collecting a request head.
    HttpHead,
    /// A reply is being written.
    Replying,
    /// Our FIN is out: discard input until the client's FIN.
    Drain,
}

/// One connection's protocol, without I/O.
#[derive(Debug)]
struct Exchange {
    state: State,
    /// The magic and header, or an HTTP head, collected so far (for HTTP also what
    /// followed the last request).
    head: Vec<u8>,
}

/// The first four bytes look like an HTTP method ("GET ", "POST", "HEAD", …).
fn looks_like_http(m: &[u8]) -> bool {
    m.first().is_some_and(u8::is_ascii_uppercase)
        && m.iter().all(|b| b.is_ascii_uppercase() || *b == b' ')
}

impl Exchange {
    fn new() -> Self {
        Exchange {
            state: State::Magic,
            head: Vec::new(),
        }
    }

    /// Take in the next bytes read from the client.
    fn feed(&mut self, mut data: &[u8]) -> Fed {
        loop {
            match self.state {
                State::Magic | State::Header => {
                    let want = if self.state == State::Magic {
                        4
                    } else {
                        HEADER_LEN
                    };
                    let take = (want - self.head.len()).min(data.len());
                    self.head.extend_from_slice(&data[..take]);
                    data = &data[take..];
                    if self.head.len() < want {
                        return Fed::More;
                    }
                    if self.state == State::Magic {
                        let m = &self.head[..4];
                        self.state = if m == SESSION_MAGIC || m == HOLD_MAGIC {
                            State::Header
                        } else if looks_like_http(m) {
                            State::HttpHead
                        } else {
                            return self.bad("unknown protocol (not FWBS, FWBH or HTTP)", None);
                        };
                        continue;
                    }
                    let Ok(h) = SessionHeader::parse(&self.head) else {
                        return self.bad("bad session header", None);
                    };
                    self.head = Vec::new();
                    self.state = match h.kind {
                        Kind::Hold => State::Hold,
                        Kind::Session => State::Body {
                            at: 0,
                            left: h.body_len(),
                            response: h.response,
                        },
                    };
                }
                State::Body { at, left, response } => {
                    if left == 0 {
                        // Anything beyond the announced request is ignored.
                        self.state = State::Replying;
                        return Fed::Reply(Reply {
                            head: Vec::new(),
                            body: response,
                            close: true,
                            served: Served::Session,
                        });
                    }
                    if data.is_empty() {
                        return Fed::More;
                    }
                    let n = left.min(data.len() as u64) as usize;
                    if !pattern().matches(at, &data[..n]) {
                        return self.bad("request body differs from the pattern", None);
                    }
                    self.state = State::Body {
                        at: at + n as u64,
                        left: left - n as u64,
                        response,
                    };
                    data = &data[n..];
                }
                State::HttpHead => {
                    // At most MAX_HEAD plus one read is ever kept: past the cap the
                    // parser says TooLarge and the connection ends.
                    self.head.extend_from_slice(data);
                    return self.http_request();
                }
                State::Hold | State::Drain | State::Replying => return Fed::More,
            }
        }
    }

    /// Parse the request at the start of `head`, if it is complete.
    fn http_request(&mut self) -> Fed {
        match http::parse_request(&self.head) {
            Parse::Partial => Fed::More,
            Parse::TooLarge => {
                let body = "request head larger than 8 KiB\n";
                let reply = refused(http::error_response(431, body, true, 1));
                self.bad("HTTP request head over 8 KiB", Some(reply))
            }
            Parse::Malformed(why) => {
                let reply = refused(http::error_response(400, "bad request\n", true, 1));
                self.bad(why, Some(reply))
            }
            Parse::Done(req, used) => {
                self.head.drain(..used);
                self.state = State::Replying;
                let (close, minor) = (req.close, req.minor);
                let (head, body) = match http::route(&req) {
                    Route::Bytes(n) => (http::response_head(200, n, close, minor), n),
                    Route::NotFound => {
                        let text = "not found: this server has /bytes/<N> only\n";
                        (http::error_response(404, text, close, minor), 0)
                    }
                    Route::MethodNotAllowed => {
                        let text = "only GET is served\n";
                        (http::error_response(405, text, close, minor), 0)
                    }
                };
                Fed::Reply(Reply {
                    head,
                    body,
                    close,
                    served: Served::Http,
                })
            }
        }
    }

    fn bad(&mut self, why: &'static str, reply: Option<Reply>) -> Fed {
        self.head = Vec::new();
        self.state = if reply.is_some() {
            State::Replying
        } else {
            State::Drain
        };
        Fed::Bad { why, reply }
    }

    /// The reply is written. A closing one leaves us draining; a keep-alive one goes
    /// on with the next request (possibly already buffered).
    fn replied(&mut self, close: bool) -> Fed {
        if close {
            self.state = State::Drain;
            self.head = Vec::new();
            return Fed::More;
        }
        self.state = State::HttpHead;
        self.http_request()
    }

    /// The client's FIN arrived: true if that ends the connection normally (between
    /// requests, while held, or after our FIN), false if it cut a request short.
    fn eof_is_clean(&self) -> bool {
        match self.state {
            State::Magic | State::HttpHead => self.head.is_empty(),
            State::Hold | State::Drain => true,
            State::Header | State::Body { .. } | State::Replying => false,
        }
    }
}

fn refused(head: Vec<u8>) -> Reply {
    Reply {
        head,
        body: 0,
        close: true,
        served: Served::Refused,
    }
}

/// A reply on its way out.
struct Outgoing {
    reply: Reply,
    head_at: usize,
    body_at: u64,
}

struct Conn {
    sock: Socket,
    ex: Exchange,
    out: Option<Outgoing>,
    interest: u32,
}

/// A running built-in server. Serving starts at [`TcpServer::start`];
/// [`TcpServer::stop`] closes everything and returns the counters.
pub struct TcpServer {
    thread: LoopThread<TcpServerResults>,
}

impl TcpServer {
    /// Listen on `spec.listen:spec.port` and serve from one epoll thread.
    pub fn start(spec: &TcpServerSpec) -> Result<TcpServer, TrafficError> {
        if spec.external.is_some() {
            return Err(TrafficError::BadSpec(
                "external servers are run by traffic::external".into(),
            ));
        }
        let addr = SocketAddr::new(spec.listen, spec.port);
        let thread = LoopThread::spawn("server", addr, spec.backlog, serve)?;
        Ok(TcpServer { thread })
    }

    /// The address it listens on (the real port when the spec said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.thread.local_addr()
    }

    /// Connections open right now.
    pub fn open_now(&self) -> u64 {
        self.thread.open_now()
    }

    /// Stop accepting, close every connection, and return the counters.
    pub fn stop(self) -> TcpServerResults {
        self.thread.finish(|| TcpServerResults {
            errors: 1,
            first_error: Some("the server thread panicked".into()),
            ..Default::default()
        })
    }
}

fn record_error(r: &mut TcpServerResults, what: &str, e: &io::Error) {
    r.errors += 1;
    if r.first_error.is_none() {
        r.first_error = Some(format!("{what}: {e}"));
    }
}

/// The event loop: until `stop`, accept and serve.
fn serve(
    ep: Epoll,
    mut acceptor: Acceptor,
    stop: &AtomicBool,
    open: &AtomicU64,
) -> TcpServerResults {
    let mut r = TcpServerResults::default();
    let mut conns: Slab<Conn> = Slab::default();
    let mut scratch = vec![0u8; 64 * 1024];
    let mut events = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        acceptor.resume(&ep, now);
        if let Err(e) = ep.wait(&mut events, acceptor.wait_for(now)) {
            record_error(&mut r, "epoll_wait", &e);
            break;
        }
        for &(token, _) in &events {
            match token {
                WAKE => {}
                LISTENER => acceptor.accept(&ep, Instant::now(), |sock| {
                    let key = conns.next_key();
                    let _ = sock.set_nodelay(true);
                    match ep.add(&sock, EPOLLIN, key as u64) {
                        Ok(()) => {
                            conns.insert(Conn {
                                sock,
                                ex: Exchange::new(),
                                out: None,
                                interest: EPOLLIN,
                            });
                            r.accepted += 1;
                            r.max_open = r.max_open.max(conns.len() as u64);
                        }
                        Err(e) => record_error(&mut r, "epoll_ctl(add)", &e),
                    }
                }),
                key => {
                    let key = key as usize;
                    let Some(c) = conns.get_mut(key) else {
                        continue;
                    };
                    if service(c, &mut scratch, &mut r) {
                        let want = if c.out.is_some() { EPOLLOUT } else { EPOLLIN };
                        if want != c.interest {
                            match ep.modify(&c.sock, want, key as u64) {
                                Ok(()) => c.interest = want,
                                Err(e) => record_error(&mut r, "epoll_ctl(mod)", &e),
                            }
                        }
                    } else {
                        let _ = ep.delete(&c.sock);
                        conns.remove(key);
                    }
                }
            }
        }
        open.store(conns.len() as u64, Ordering::Relaxed);
    }
    r.accept_errors = acceptor.errors;
    // Closing at stop may reset connections in the middle of a request; that is the
    // end of the trial, not an error.
    conns.drain().for_each(drop);
    open.store(0, Ordering::Relaxed);
    r
}

/// Handle readiness of one connection. false = close it now.
fn service(c: &mut Conn, scratch: &mut [u8], r: &mut TcpServerResults) -> bool {
    loop {
        if c.out.is_some() {
            match flush(c, r) {
                Ok(false) => return true, // wait for EPOLLOUT
                Ok(true) => {
                    // INVARIANT: `flush` ran on `Some` and only reports, never takes.
                    let done = c.out.take().expect("reply in flight").reply;
                    match done.served {
                        Served::Session => r.sessions += 1,
                        Served::Http => {
                            r.sessions += 1;
                            r.http_requests += 1;
                        }
                        Served::Refused => r.http_requests += 1,
                    }
                    if done.close {
                        if let Err(e) = c.sock.shutdown(Shutdown::Write) {
                            record_error(r, "shutdown", &e);
                            return false;
                        }
                    }
                    let fed = c.ex.replied(done.close);
                    if !take_fed(c, fed, r) {
                        return false;
                    }
                    continue;
                }
                Err(e) => {
                    record_error(r, "write", &e);
                    return false;
                }
            }
        }
        // One read per wake-up: epoll is level-triggered, leftovers wake us again.
        return match (&c.sock).read(scratch) {
            Ok(0) => {
                if !c.ex.eof_is_clean() {
                    r.bad_requests += 1;
                }
                false
            }
            Ok(n) => {
                r.bytes_received += n as u64;
                let fed = c.ex.feed(&scratch[..n]);
                if !take_fed(c, fed, r) {
                    return false;
                }
                if c.out.is_some() {
                    continue; // write at once; most replies fit the socket buffer
                }
                true
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                record_error(r, "read", &e);
                false
            }
        };
    }
}

/// Act on what the exchange asked for. false = close now.
fn take_fed(c: &mut Conn, fed: Fed, r: &mut TcpServerResults) -> bool {
    let reply = match fed {
        Fed::More => return true,
        Fed::Reply(reply) => reply,
        Fed::Bad { why, reply } => {
            r.bad_requests += 1;
            tracing::debug!("bad request: {why}");
            match reply {
                Some(reply) => reply,
                None => {
                    // Our FIN now; the exchange drains the rest of the request.
                    if let Err(e) = c.sock.shutdown(Shutdown::Write) {
                        record_error(r, "shutdown", &e);
                        return false;
                    }
                    return true;
                }
            }
        }
    };
    c.out = Some(Outgoing {
        reply,
        head_at: 0,
        body_at: 0,
    });
    true
}

/// Write as much of the reply as the socket takes. Ok(true) = all of it is out.
fn flush(c: &mut Conn, r: &mut TcpServerResults) -> io::Result<bool> {
    let Some(o) = c.out.as_mut() else {
        return Ok(true);
    };
    loop {
        let head = &o.reply.head[o.head_at..];
        let body = pattern().slice(o.body_at, o.reply.body - o.body_at);
        if head.is_empty() && body.is_empty() {
            return Ok(true);
        }
        // send(2) with MSG_NOSIGNAL (socket2): a gone client is an error, not SIGPIPE.
        let sent = if head.is_empty() {
            c.sock.send(body)
        } else {
            c.sock
                .send_vectored(&[IoSlice::new(head), IoSlice::new(body)])
        };
        match sent {
            Ok(n) => {
                r.bytes_sent += n as u64;
                let h = n.min(head.len());
                o.head_at += h;
                o.body_at += (n - h) as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::pattern_byte;

    fn body(range: std::ops::Range<u64>) -> Vec<u8> {
        range.map(pattern_byte).collect()
    }

    fn session_request(request: u32, response: u64) -> Vec<u8> {
        let mut v = SessionHeader::session(request, response).emit().to_vec();
        v.extend(body(0..u64::from(request) - 16));
        v
    }

    #[test]
    fn a_session_request_fed_byte_by_byte_gets_its_response() {
        let req = session_request(100, 5000);
        let mut ex = Exchange::new();
        for (i, b) in req.iter().enumerate() {
            let fed = ex.feed(std::slice::from_ref(b));
            if i + 1 < req.len() {
                assert_eq!(fed, Fed::More, "byte {i}");
            } else {
                assert_eq!(
                    fed,
                    Fed::Reply(Reply {
                        head: vec![],
                        body: 5000,
                        close: true,
                        served: Served::Session
                    })
                );
            }
        }
        assert!(!ex.eof_is_clean(), "no EOF while replying");
        assert_eq!(ex.replied(true), Fed::More);
        assert!(
            ex.eof_is_clean(),
            "the client's FIN after ours is the normal end"
        );
    }

    #[test]
    fn a_header_only_request_is_answered_at_once() {
        let mut ex = Exchange::new();
        let fed = ex.feed(&session_request(16, 0));
        assert!(matches!(fed, Fed::Reply(Reply { body: 0, .. })), "{fed:?}");
    }

    #[test]
    fn a_corrupted_or_shifted_body_is_bad() {
        let mut req = session_request(1000, 10);
        req[500] ^= 0x40;
        let mut ex = Exchange::new();
        assert!(matches!(ex.feed(&req), Fed::Bad { reply: None, .. }));
        assert_eq!(ex.state, State::Drain);

        // Header then a body that starts one byte late.
        let mut req = SessionHeader::session(116, 0).emit().to_vec();
        req.extend(body(1..101));
        let mut ex = Exchange::new();
        assert!(matches!(ex.feed(&req), Fed::Bad { .. }));
    }

    #[test]
    fn unknown_protocols_and_bad_headers_are_bad() {
        for first in [&b"\x16\x03\x01\x02\x00"[..], b"SSH-2.0-OpenSSH", b"fwbs"] {
            let mut ex = Exchange::new();
            assert!(
                matches!(ex.feed(first), Fed::Bad { reply: None, .. }),
                "{first:?}"
            );
        }
        let mut ex = Exchange::new();
        assert!(matches!(
            ex.feed(&SessionHeader::session(8, 0).emit()),
            Fed::Bad { .. }
        ));
    }

    #[test]
    fn eof_mid_request_is_not_clean() {
        let mut ex = Exchange::new();
        assert!(ex.eof_is_clean(), "connect and close without a byte");
        assert_eq!(ex.feed(b"FW"), Fed::More);
        assert!(!ex.eof_is_clean());
        let mut ex = Exchange::new();
        assert_eq!(ex.feed(&session_request(64, 0)[..40]), Fed::More);
        assert!(!ex.eof_is_clean());
    }

    #[test]
    fn a_hold_header_holds() {
        let mut ex = Exchange::new();
        assert_eq!(ex.feed(&SessionHeader::hold().emit()), Fed::More);
        assert_eq!(ex.state, State::Hold);
        assert_eq!(ex.feed(b"anything"), Fed::More);
        assert!(ex.eof_is_clean());
    }

    #[test]
    fn http_keep_alive_then_close() {
        let mut ex = Exchange::new();
        let two = b"GET /bytes/10 HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nConnection: close\r\n\r\n";
        let Fed::Reply(first) = ex.feed(two) else {
            panic!("no reply")
        };
        assert_eq!(first.body, 10);
        assert!(!first.close);
        assert!(first
            .head
            .starts_with(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"));
        // The second request was already buffered.
        let Fed::Reply(second) = ex.replied(false) else {
            panic!("second request not seen")
        };
        assert!(second.head.starts_with(b"HTTP/1.1 404 "), "{second:?}");
        assert!(second.close);
        assert_eq!(second.body, 0);
        assert_eq!(ex.replied(true), Fed::More);
        assert_eq!(ex.state, State::Drain);
    }

    #[test]
    fn http_errors() {
        let mut ex = Exchange::new();
        let Fed::Reply(r) = ex.feed(b"POST /bytes/1 HTTP/1.1\r\n\r\n") else {
            panic!()
        };
        assert!(r.head.starts_with(b"HTTP/1.1 405 "));
        assert_eq!(r.served, Served::Http);

        let mut ex = Exchange::new();
        let fed = ex.feed(b"GET / HTTP/9.9\r\n\r\n");
        let Fed::Bad { reply: Some(r), .. } = fed else {
            panic!("{fed:?}")
        };
        assert!(r.head.starts_with(b"HTTP/1.1 400 "));
        assert!(r.close);

        let mut ex = Exchange::new();
        let mut big = b"GET /bytes/1 HTTP/1.1\r\n".to_vec();
        big.resize(9000, b'a');
        let fed = ex.feed(&big);
        let Fed::Bad { reply: Some(r), .. } = fed else {
            panic!("{fed:?}")
        };
        assert!(r.head.starts_with(b"HTTP/1.1 431 "));
        assert_eq!(r.served, Served::Refused);
    }
}
