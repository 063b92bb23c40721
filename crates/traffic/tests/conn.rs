//! Loopback tests of the connection roles (`traffic::conn`): the built-in server, the
//! session client in every mode, and the relay between them.
//!
//! Loopback only (127.0.0.1 and ::1), every listener on port 0 (the kernel picks), so
//! tests run in parallel without sharing ports. No privileges needed.
//!
//! "FIN, not RST" is checked from both ends: the server counts a reset as an error
//! (`errors` stays 0), and the client reads to a clean end of stream (a reset would
//! be a failed session with a "Connection reset" message).

use proto::{
    pattern_byte, ConnMode, ProxyResults, ProxySpec, SessionClientResults, SessionClientSpec,
    TcpServerResults, TcpServerSpec,
};
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};
use traffic::conn::{Proxy, SessionClient, SessionHeader, TcpServer};
use traffic::TrafficError;

const V4: &str = "127.0.0.1";
const V6: &str = "::1";

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn server(listen: &str) -> TcpServer {
    TcpServer::start(&TcpServerSpec {
        listen: ip(listen),
        port: 0,
        backlog: 4096,
        external: None,
        objects: vec![],
    })
    .expect("server starts")
}

fn spec(mode: ConnMode, to: SocketAddr) -> SessionClientSpec {
    SessionClientSpec {
        mode,
        server: to.ip(),
        port: to.port(),
        source: None,
        sources: Vec::new(),
        parallel: 1,
        count: Some(1),
        request: 16,
        response: 0,
        timeout_ms: 5000,
        overhead_sessions: 0,
        hold_limit: 0,
        verify: true,
        external: None,
        events: None,
    }
}

/// Set up, start, wait until the workers end on their own, stop.
fn run(spec: &SessionClientSpec) -> SessionClientResults {
    let mut c = SessionClient::setup(spec).expect("client setup");
    c.start();
    let deadline = Instant::now() + Duration::from_secs(60);
    wait_until(
        deadline,
        || c.progress().1,
        || "client not done after 60 s".into(),
    );
    c.stop().expect("client stop")
}

/// A client of `mode` against a server of its own on `listen`, its spec as `edit`
/// leaves it, run to its end; then the server stopped: both ends' results.
fn against_server(
    listen: &str,
    mode: ConnMode,
    edit: impl FnOnce(&mut SessionClientSpec),
) -> (SessionClientResults, TcpServerResults) {
    let srv = server(listen);
    let mut s = spec(mode, srv.local_addr());
    edit(&mut s);
    let c = run(&s);
    (c, srv.stop())
}

/// A port of `host` nobody listens on (bound by the kernel's choice, then closed).
fn closed_port(host: &str) -> SocketAddr {
    let l = TcpListener::bind((ip(host), 0)).unwrap();
    l.local_addr().unwrap()
}

/// Poll `done` every 10 ms until it holds; fail with `what` once `deadline` passed.
fn wait_until(deadline: Instant, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
    while !done() {
        assert!(Instant::now() < deadline, "{}", what());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// No session failed, none was corrupt, no error message.
fn assert_clean(c: &SessionClientResults) {
    assert_eq!(c.failed, 0, "{:?}", c.errors);
    assert_eq!(c.corrupt, 0, "{:?}", c.errors);
    assert!(c.errors.is_empty(), "{:?}", c.errors);
}

/// The server saw no reset, no error, nothing malformed.
fn assert_server_clean(s: &TcpServerResults) {
    assert_eq!(s.errors, 0, "{:?}", s.first_error);
    assert_eq!(s.bad_requests, 0, "{s:?}");
    assert_eq!(s.accept_errors, 0, "{s:?}");
}

fn body(n: u64) -> Vec<u8> {
    (0..n).map(pattern_byte).collect()
}

/// Gateway events: every session of the workers in the background's bins (failures
/// as the trial counts them), and a marker stream of the smallest sessions from
/// another address, outside the trial's counts.
#[test]
fn sessions_go_into_the_bins_and_a_marker_stream_runs_beside() {
    let srv = server(V4);
    let mut s = spec(ConnMode::Bulk, srv.local_addr());
    s.count = Some(30);
    s.parallel = 2;
    s.response = 100_000;
    s.overhead_sessions = 5;
    s.events = Some(proto::StreamEventsSpec {
        bin_ns: 1_000_000,
        marker_source: Some(ip("127.0.0.2")),
    });
    let c = run(&s);
    drop(srv.stop());
    assert_clean(&c);
    assert_eq!(c.sessions, 30);
    let e = c.events.as_deref().expect("bins were asked for");
    let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
    // The transfers and the overhead sessions, each with its connection setup time.
    assert_eq!(sum(&e.background.done), 30 + 5);
    assert_eq!(sum(&e.background.failed), c.failed);
    assert_eq!(e.background_streams, 2);
    assert!(e.background.latency_max_us.iter().any(|&us| us > 0));
    assert!(sum(&e.marker.done) > 0, "{:?}", e.marker);
    assert_eq!(sum(&e.marker.failed), 0, "{:?}", e.marker);
}

#[test]
fn fifty_sequential_sessions_are_counted_on_both_ends() {
    let (c, sr) = against_server(V4, ConnMode::Sessions, |s| {
        s.count = Some(50);
        s.request = 1000;
        s.response = 5000;
    });
    assert_clean(&c);
    assert_eq!(c.sessions, 50);
    assert_eq!(c.session.count, 50);
    assert_eq!(c.connect.count, 50);
    assert_eq!(c.ttfb.count, 50);
    assert_eq!(c.ttlb.count, 50);
    assert_eq!(c.session_us.len(), 50);
    assert_eq!(c.bytes, 50 * 5000);
    assert!(c.elapsed_ns > 0);
    assert!(c.connect.max_ns <= c.session.max_ns);
    assert!(c.ttfb.min_ns <= c.ttlb.max_ns && c.ttlb.max_ns <= c.session.max_ns);
    assert_eq!(sr.sessions, 50);
    assert_eq!(sr.accepted, 50);
    assert_eq!(sr.bytes_received, 50 * 1000);
    assert_eq!(sr.bytes_sent, 50 * 5000);
    assert_server_clean(&sr);
}

#[test]
fn eight_workers_run_exactly_two_hundred_sessions_over_ipv6() {
    let (c, sr) = against_server(V6, ConnMode::Sessions, |s| {
        s.parallel = 8;
        s.count = Some(200);
        s.request = 64;
        s.response = 64;
        s.source = Some(ip(V6));
    });
    assert_clean(&c);
    assert_eq!(c.sessions, 200);
    assert_eq!(c.session.count, 200);
    assert_eq!(sr.sessions, 200);
    assert_eq!(sr.accepted, 200);
    assert_server_clean(&sr);
}

#[test]
fn bulk_transfers_arrive_verified_after_the_overhead_sessions() {
    let (c, sr) = against_server(V4, ConnMode::Bulk, |s| {
        s.parallel = 2;
        s.count = Some(5);
        s.response = 1_700_000;
        s.overhead_sessions = 3;
    });
    assert_clean(&c);
    assert_eq!(c.sessions, 5);
    assert_eq!(c.bytes, 5 * 1_700_000);
    assert_eq!(c.session.count, 5, "overhead sessions are not transfers");
    let o = c.overhead.expect("overhead distribution");
    assert_eq!(o.count, 3);
    assert!(o.max_ns > 0);
    assert_eq!(sr.sessions, 8, "5 transfers and 3 zero-byte sessions");
    assert_eq!(sr.bytes_sent, 5 * 1_700_000);
    assert_server_clean(&sr);
}

#[test]
fn http_download_of_8_mib_is_verified_and_timed_in_order() {
    let (c, sr) = against_server(V6, ConnMode::Http, |s| {
        s.count = Some(2);
        s.response = 8 << 20;
    });
    assert_clean(&c);
    assert_eq!(c.sessions, 2);
    assert_eq!(c.bytes, 2 * (8 << 20));
    // Each session: first byte, then last byte, then the end of the session (seen in
    // the distributions: the k-th fastest first byte precedes the k-th fastest last
    // byte; one session's first byte may come after another's last under load).
    assert!(c.ttfb.min_ns <= c.ttlb.min_ns, "{:?} {:?}", c.ttfb, c.ttlb);
    assert!(c.ttfb.max_ns <= c.ttlb.max_ns, "{:?} {:?}", c.ttfb, c.ttlb);
    assert!(c.ttlb.max_ns <= c.session.max_ns);
    assert!(c.ttlb.min_ns <= c.session.min_ns);
    assert_eq!(sr.http_requests, 2);
    assert_eq!(sr.sessions, 2);
    assert_server_clean(&sr);
}

#[test]
fn http_errors_fail_the_session_with_the_status() {
    // Ask the server for more than it serves (> 1 TiB): 404.
    let (c, sr) = against_server(V4, ConnMode::Http, |s| {
        s.count = Some(3);
        s.response = (1 << 40) + 1;
    });
    assert_eq!(c.sessions, 0);
    assert_eq!(c.failed, 3);
    assert_eq!(c.corrupt, 0);
    assert_eq!(c.errors, vec![("HTTP 404".to_string(), 3)]);
    assert_eq!(sr.http_requests, 3);
    assert_server_clean(&sr);
}

/// Read everything up to the server's FIN; a reset fails the test.
fn read_to_fin(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut v = Vec::new();
    s.read_to_end(&mut v)
        .expect("a clean end of stream, not a reset");
    v
}

/// Connect to `to`, send `bytes`, and see the connection end with no answer.
fn unanswered(to: SocketAddr, bytes: &[u8]) {
    let mut s = TcpStream::connect(to).unwrap();
    s.write_all(bytes).unwrap();
    let got = read_to_fin(&mut s);
    assert!(
        got.is_empty(),
        "an answer to {} bytes: {got:?}",
        bytes.len()
    );
}

#[test]
fn raw_http_requests_get_404_and_keep_alive_works() {
    let srv = server(V4);
    let mut s = TcpStream::connect(srv.local_addr()).unwrap();
    // Keep-alive: one download, then a bad path on the same connection, which closes.
    s.write_all(b"GET /bytes/300 HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    let head =
        b"HTTP/1.1 200 OK\r\nContent-Length: 300\r\nContent-Type: application/octet-stream\r\n\r\n";
    let mut first = vec![0u8; head.len() + 300];
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.read_exact(&mut first).unwrap();
    assert_eq!(&first[..head.len()], head);
    assert_eq!(&first[head.len()..], &body(300)[..]);
    s.write_all(b"GET /etc/passwd HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .unwrap();
    let rest = String::from_utf8(read_to_fin(&mut s)).unwrap();
    assert!(rest.starts_with("HTTP/1.1 404 Not Found\r\n"), "{rest}");
    assert!(rest.contains("Connection: close\r\n"), "{rest}");
    drop(s);
    let sr = srv.stop();
    assert_eq!(sr.http_requests, 2);
    assert_server_clean(&sr);
}

#[test]
fn raw_session_gets_its_bytes_and_a_fin() {
    let srv = server(V4);
    let mut s = TcpStream::connect(srv.local_addr()).unwrap();
    let mut req = SessionHeader::session(16 + 500, 12_345).emit().to_vec();
    req.extend(body(500));
    s.write_all(&req).unwrap();
    let got = read_to_fin(&mut s);
    assert_eq!(got, body(12_345));
    drop(s);
    std::thread::sleep(Duration::from_millis(50));
    let sr = srv.stop();
    assert_eq!(sr.sessions, 1);
    assert_server_clean(&sr);
}

#[test]
fn a_corrupted_session_request_is_a_bad_request() {
    let srv = server(V4);
    let mut req = SessionHeader::session(16 + 1000, 100).emit().to_vec();
    req.extend(body(1000));
    req[16 + 777] ^= 0x01;
    unanswered(srv.local_addr(), &req);
    // Garbage that is no protocol at all.
    unanswered(srv.local_addr(), b"\x16\x03\x01garbage");
    std::thread::sleep(Duration::from_millis(50));
    let sr = srv.stop();
    assert_eq!(sr.bad_requests, 2);
    assert_eq!(sr.sessions, 0);
    assert_eq!(sr.errors, 0, "{:?}", sr.first_error);
}

#[test]
fn bad_specs_are_refused() {
    let e = TcpServer::start(&TcpServerSpec {
        listen: ip(V4),
        port: 0,
        backlog: 16,
        external: Some("nginx".into()),
        objects: vec![1],
    })
    .err()
    .unwrap();
    assert!(
        matches!(&e, TrafficError::BadSpec(m) if m.contains("traffic::external")),
        "{e}"
    );
    let e = Proxy::start(&ProxySpec {
        listen: ip(V4),
        port: 0,
        upstream: ip(V4),
        upstream_port: 1,
        buffer: 0,
    })
    .err()
    .unwrap();
    assert_eq!(e.to_string(), "proxy buffer must be at least 1 byte");
}

fn proxy_to(upstream: SocketAddr, buffer: u32) -> Proxy {
    Proxy::start(&ProxySpec {
        listen: ip(V4),
        port: 0,
        upstream: upstream.ip(),
        upstream_port: upstream.port(),
        buffer,
    })
    .expect("proxy starts")
}

fn assert_proxy_clean(p: &ProxyResults) {
    assert_eq!(p.errors, 0, "{:?}", p.first_error);
    assert_eq!(p.upstream_failures, 0);
}

#[test]
fn bulk_and_sessions_pass_the_proxy_intact() {
    for buffer in [1000, 16_384] {
        let srv = server(V4);
        let proxy = proxy_to(srv.local_addr(), buffer);
        let mut b = spec(ConnMode::Bulk, proxy.local_addr());
        b.count = Some(2);
        b.response = 3_000_000;
        let bulk = run(&b);
        let mut s = spec(ConnMode::Sessions, proxy.local_addr());
        s.parallel = 4;
        s.count = Some(40);
        s.request = 5000;
        s.response = 7000;
        let sessions = run(&s);
        // The proxy closes its sides once both directions are done: give it a moment.
        std::thread::sleep(Duration::from_millis(100));
        let pr = proxy.stop();
        let sr = srv.stop();
        assert_clean(&bulk);
        assert_clean(&sessions);
        assert_eq!(bulk.bytes, 6_000_000, "buffer {buffer}");
        assert_eq!(sessions.sessions, 40);
        assert_eq!(pr.connections, 42);
        assert!(pr.bytes_down >= 3_000_000, "{pr:?}");
        assert_eq!(pr.bytes_down, 6_000_000 + 40 * 7000);
        assert_eq!(pr.bytes_up, 2 * 16 + 40 * 5000);
        assert!(pr.max_open >= 1);
        assert_proxy_clean(&pr);
        assert_eq!(sr.sessions, 42);
        assert_server_clean(&sr);
    }
}

/// xorshift64*: an arbitrary, reproducible byte stream.
fn noise(n: usize, mut x: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// FNV-1a over a byte stream.
fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn the_proxy_relays_an_arbitrary_stream_both_ways_with_half_close() {
    // A one-off upstream: echo everything, then FIN after the client's FIN.
    let up = TcpListener::bind((ip(V4), 0)).unwrap();
    let up_addr = up.local_addr().unwrap();
    let echo = std::thread::spawn(move || {
        let (mut s, _) = up.accept().unwrap();
        let mut buf = vec![0u8; 4096];
        let mut seen = Vec::new();
        loop {
            let n = s.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            s.write_all(&buf[..n]).unwrap();
        }
        s.shutdown(Shutdown::Write).unwrap();
        checksum(&seen)
    });
    let proxy = proxy_to(up_addr, 777);
    let data = noise(5_000_000, 0x9e37_79b9_7f4a_7c15);
    // A small receive buffer and a reader that starts late push back on the relay:
    // its writes come up short and it must park blocks and stop reading.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&proxy.local_addr().into()).unwrap();
    let mut c = TcpStream::from(sock);
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut reader = c.try_clone().unwrap();
    let got = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let mut v = Vec::new();
        reader.read_to_end(&mut v).map(|_| v)
    });
    c.write_all(&data).unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let back = got.join().unwrap().expect("a clean end of stream");
    let upstream_sum = echo.join().unwrap();
    drop(c);
    std::thread::sleep(Duration::from_millis(50));
    let pr = proxy.stop();
    assert_eq!(upstream_sum, checksum(&data), "client → upstream corrupted");
    assert_eq!(back.len(), data.len());
    assert_eq!(
        checksum(&back),
        checksum(&data),
        "upstream → client corrupted"
    );
    assert_eq!(pr.bytes_up, 5_000_000);
    assert_eq!(pr.bytes_down, 5_000_000);
    assert_eq!(pr.connections, 1);
    assert_proxy_clean(&pr);
}

#[test]
fn the_proxy_ends_the_client_cleanly_when_the_upstream_refuses() {
    let closed = closed_port(V4);
    let proxy = proxy_to(closed, 4096);
    unanswered(proxy.local_addr(), b"hello");
    std::thread::sleep(Duration::from_millis(50));
    let pr = proxy.stop();
    assert_eq!(pr.upstream_failures, 1);
    assert_eq!(pr.connections, 1);
    assert_eq!(pr.errors, 0, "{:?}", pr.first_error);
}

#[test]
fn hold_reaches_its_limit_and_keeps_every_connection_alive() {
    let srv = server(V4);
    let mut s = spec(ConnMode::Hold, srv.local_addr());
    s.hold_limit = 2000;
    s.count = None;
    let mut c = SessionClient::setup(&s).unwrap();
    c.start();
    let deadline = Instant::now() + Duration::from_secs(60);
    wait_until(
        deadline,
        || c.progress().1,
        || format!("hold not done: {:?}", c.progress()),
    );
    assert_eq!(c.progress(), (2000, true));
    // The server accepts them from its backlog a moment later.
    wait_until(
        deadline,
        || srv.open_now() >= 2000,
        || format!("server has {}", srv.open_now()),
    );
    let r = c.stop().unwrap();
    let h = r.hold.clone().expect("hold results");
    assert_eq!(h.reached, 2000);
    assert_eq!(h.limit, 2000);
    assert_eq!(h.alive_at_stop, 2000);
    assert!(h.limiter.starts_with("limit"), "{}", h.limiter);
    assert_eq!(h.errno, None);
    assert!(h.open_ms > 0.0);
    assert_eq!(r.sessions, 2000);
    assert_eq!(r.failed, 0);
    // The server sees every FIN and closes its side.
    wait_until(
        deadline,
        || srv.open_now() == 0,
        || format!("server still has {}", srv.open_now()),
    );
    let sr = srv.stop();
    assert!(sr.max_open >= 2000, "{sr:?}");
    assert_eq!(sr.accepted, 2000);
    assert_server_clean(&sr);
}

#[test]
fn hold_against_a_closed_port_names_the_refusal() {
    let closed = closed_port(V6);
    let mut s = spec(ConnMode::Hold, closed);
    s.hold_limit = 10;
    let r = run(&s);
    let h = r.hold.expect("hold results");
    assert_eq!(h.reached, 0);
    assert_eq!(h.alive_at_stop, 0);
    assert!(h.limiter.contains("refused"), "{}", h.limiter);
    assert_eq!(h.errno, Some(libc::ECONNREFUSED));
    assert_eq!(r.failed, 1);
    assert_eq!(
        r.errors,
        vec![("connect: Connection refused (os error 111)".to_string(), 1)]
    );
}

const NOFILE_CHILD: &str = "FWB_CONN_NOFILE_CHILD_SERVER";
const NOFILE_CHILD_OK: &str = "FWB-CONN-NOFILE-CHILD-OK";
const NOFILE: u64 = 256;

/// In the child (RLIMIT_NOFILE lowered to 256, soft and hard): hold until EMFILE.
fn nofile_child(server: &str) {
    let addr: SocketAddr = server.parse().expect("server address from the parent");
    let mut s = spec(ConnMode::Hold, addr);
    s.hold_limit = 10_000;
    let r = run(&s);
    let h = r.hold.expect("hold results");
    assert_eq!(
        h.limiter,
        format!("open-file limit of the client (RLIMIT_NOFILE {NOFILE})")
    );
    assert_eq!(h.errno, Some(libc::EMFILE));
    assert!(h.reached > 100 && h.reached < NOFILE, "{h:?}");
    assert_eq!(h.alive_at_stop, h.reached);
    println!("{NOFILE_CHILD_OK} reached {}", h.reached);
}

#[test]
fn hold_names_the_open_file_limit() {
    if let Ok(server) = std::env::var(NOFILE_CHILD) {
        nofile_child(&server);
        return;
    }
    // The limit is lowered in a child process (this test binary again, this test
    // only), so the other tests keep theirs.
    let srv = server(V4);
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {NOFILE} && exec \"$0\" \"$@\""))
        .arg(&exe)
        .args([
            "--exact",
            "hold_names_the_open_file_limit",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(NOFILE_CHILD, srv.local_addr().to_string())
        .output()
        .expect("run sh to lower RLIMIT_NOFILE in a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(NOFILE_CHILD_OK),
        "child failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let sr = srv.stop();
    assert!(sr.accepted > 100, "{sr:?}");
    assert_eq!(sr.errors, 0, "{:?}", sr.first_error);
}

/// Duration mode (no count) stopped after 2 s; prints sessions/s (run with
/// `--nocapture` to see them). Asserts behaviour only, no speed.
#[test]
fn sessions_per_second_on_loopback() {
    for parallel in [1, 8] {
        let srv = server(V4);
        let mut s = spec(ConnMode::Sessions, srv.local_addr());
        s.parallel = parallel;
        s.count = None;
        let mut c = SessionClient::setup(&s).unwrap();
        c.start();
        std::thread::sleep(Duration::from_secs(2));
        let (finished, done) = c.progress();
        assert!(!done, "duration mode runs until stop");
        assert!(finished > 0);
        let r = c.stop().unwrap();
        let sr = srv.stop();
        assert_clean(&r);
        assert!(r.sessions >= finished);
        assert_eq!(sr.sessions, r.sessions, "every answered session completed");
        assert_server_clean(&sr);
        let secs = r.elapsed_ns as f64 / 1e9;
        assert!((1.9..3.0).contains(&secs), "elapsed {secs} s");
        println!(
            "loopback sessions, parallel {parallel}: {} in {secs:.2} s = {:.0}/s \
             (session p50 {:.0} µs, p99 {:.0} µs)",
            r.sessions,
            r.sessions as f64 / secs,
            r.session.p50_ns as f64 / 1e3,
            r.session.p99_ns as f64 / 1e3,
        );
    }
}
