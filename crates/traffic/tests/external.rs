//! The external endpoints against each other over loopback: our own nginx (never the
//! system service) serving pattern objects, curl downloading them.
//!
//! Needs nginx and curl (scripts/setup.sh installs them); without them every test
//! fails saying which package to install. Loopback only (127.0.0.1 and ::1), one port
//! of 24100-24199 per test so the tests may run in parallel (below the kernel's ephemeral range 32768-60999: a client socket or its TIME_WAIT there would block the bind).

use proto::{pattern_byte, ConnMode, SessionClientResults, SessionClientSpec, TcpServerSpec};
use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::time::{Duration, Instant};
use traffic::external::{ExternalClient, ExternalServer};
use traffic::TrafficError;

const MIB: u64 = 1 << 20;

/// Fail (not skip) with the package to install when `program` is missing.
fn require(program: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(Into::into))
        .any(|d| d.join(program).is_file());
    assert!(
        found,
        "{program} is not installed: these tests need it (run scripts/setup.sh, or apt-get install {program})"
    );
}

fn server_spec(listen: &str, port: u16, objects: &[u64]) -> TcpServerSpec {
    TcpServerSpec {
        listen: listen.parse().unwrap(),
        port,
        backlog: 511,
        external: Some("nginx".into()),
        objects: objects.to_vec(),
    }
}

fn client_spec(server: &str, port: u16, response: u64, count: Option<u64>) -> SessionClientSpec {
    SessionClientSpec {
        mode: ConnMode::Http,
        server: server.parse().unwrap(),
        port,
        source: None,
        sources: Vec::new(),
        parallel: 2,
        count,
        request: 0,
        response,
        timeout_ms: 5000,
        overhead_sessions: 0,
        hold_limit: 0,
        verify: false,
        external: Some("curl".into()),
        events: None,
    }
}

fn start_server(spec: &TcpServerSpec) -> ExternalServer {
    require("nginx");
    ExternalServer::start(spec).unwrap_or_else(|e| panic!("starting nginx: {e}"))
}

/// Run `spec` to its count (at most 60 s) and return the results.
fn download(spec: &SessionClientSpec) -> SessionClientResults {
    require("curl");
    let mut c = ExternalClient::setup(spec).unwrap_or_else(|e| panic!("curl setup: {e}"));
    assert_eq!(c.progress(), (0, false));
    c.start();
    let t0 = Instant::now();
    while !c.progress().1 {
        assert!(t0.elapsed() < Duration::from_secs(60), "downloads hang");
        std::thread::sleep(Duration::from_millis(10));
    }
    c.stop().unwrap()
}

/// Processes whose parent is `pid` (nginx's worker, for its master).
fn children_of(pid: u32) -> Vec<u32> {
    let mut kids = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(pid) {
            kids.push(p);
        }
    }
    kids
}

/// No such process, or only its zombie (dead, waiting for its parent to reap it).
fn gone(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn curl_downloads_from_nginx_over_ipv4() {
    let server = start_server(&server_spec("127.0.0.1", 24101, &[MIB, 8 * MIB]));
    let r = download(&client_spec("127.0.0.1", 24101, 8 * MIB, Some(5)));
    assert_eq!((r.sessions, r.failed, r.corrupt), (5, 0, 0), "{r:?}");
    assert_eq!(r.bytes, 5 * 8 * MIB);
    assert_eq!(r.mode, ConnMode::Http);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.session.count, 5);
    assert_eq!(r.session_us.len(), 5);
    assert!(r.connect.min_ns > 0 && r.connect.max_ns <= r.ttfb.max_ns);
    assert!(r.ttfb.max_ns <= r.ttlb.max_ns && r.ttlb == r.session);
    assert!(r.elapsed_ns >= r.session.max_ns, "{r:?}");
    assert!(r.external.as_deref().unwrap().starts_with("curl "), "{r:?}");

    let s = server.stop();
    assert_eq!(s.http_requests, 5, "{s:?}");
    assert_eq!(s.sessions, 5);
    assert_eq!(s.bytes_sent, 5 * 8 * MIB);
    assert_eq!(s.accepted, 5, "one connection per curl");
    assert_eq!((s.errors, s.bad_requests), (0, 0), "{s:?}");
    assert!(
        s.external.as_deref().unwrap().starts_with("nginx/"),
        "{s:?}"
    );
}

#[test]
fn verified_download_over_ipv6_matches_the_pattern() {
    let server = start_server(&server_spec("::1", 24102, &[MIB]));
    // The object nginx serves is the pattern itself.
    let object = fs::read(server.dir().join("root/bytes").join(MIB.to_string())).unwrap();
    assert_eq!(object.len() as u64, MIB);
    assert!(object
        .iter()
        .enumerate()
        .all(|(i, &b)| b == pattern_byte(i as u64)));

    let mut spec = client_spec("::1", 24102, MIB, Some(3));
    spec.verify = true;
    spec.source = Some("::1".parse().unwrap());
    let r = download(&spec);
    assert_eq!((r.sessions, r.failed, r.corrupt), (3, 0, 0), "{r:?}");
    assert_eq!(r.bytes, 3 * MIB);

    // Now spoil one byte of the served object: verify must notice.
    let path = server.dir().join("root/bytes").join(MIB.to_string());
    let mut f = fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(4096)).unwrap();
    f.write_all(&[!pattern_byte(4096)]).unwrap();
    drop(f);
    spec.count = Some(1);
    let r = download(&spec);
    assert_eq!((r.sessions, r.failed, r.corrupt), (0, 1, 1), "{r:?}");
    assert!(r.errors[0].0.contains("byte 4096"), "{:?}", r.errors);
    let s = server.stop();
    assert_eq!((s.http_requests, s.sessions), (4, 4), "{s:?}");
}

#[test]
fn missing_object_counts_http_404() {
    let server = start_server(&server_spec("127.0.0.1", 24103, &[1024]));
    let r = download(&client_spec("127.0.0.1", 24103, 2048, Some(3)));
    assert_eq!(
        (r.sessions, r.failed, r.corrupt, r.bytes),
        (0, 3, 0, 0),
        "{r:?}"
    );
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert!(r.errors[0].0.contains("HTTP 404"), "{:?}", r.errors);
    assert_eq!(r.errors[0].1, 3);
    assert_eq!(r.session.count, 0);
    let s = server.stop();
    assert_eq!(
        (s.http_requests, s.sessions, s.bad_requests),
        (3, 0, 3),
        "{s:?}"
    );
    assert!(s.first_error.unwrap().contains("HTTP 404"));
}

#[test]
fn dropping_the_server_leaves_no_process_and_no_dir() {
    let server = start_server(&server_spec("127.0.0.1", 24104, &[1024]));
    let master = server.pid().unwrap();
    let workers = children_of(master);
    assert_eq!(workers.len(), 1, "one nginx worker: {workers:?}");
    let dir = server.dir().to_path_buf();
    assert!(dir.join("nginx.conf").is_file());
    drop(server);
    assert!(gone(master), "nginx master {master} survived the drop");
    for w in workers {
        assert!(gone(w), "nginx worker {w} survived the drop");
    }
    assert!(!dir.exists(), "{} survived the drop", dir.display());
    // And the port is free again.
    TcpListener::bind("127.0.0.1:24104").unwrap();
}

#[test]
fn a_busy_port_fails_with_nginx_evidence() {
    require("nginx");
    let _busy = TcpListener::bind("127.0.0.1:24105").unwrap();
    let t0 = Instant::now();
    let e = ExternalServer::start(&server_spec("127.0.0.1", 24105, &[1])).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, TrafficError::Io { .. }), "{text}");
    assert!(text.contains("Address already in use"), "{text}");
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
}

#[test]
fn stop_ends_an_open_ended_run_promptly() {
    let server = start_server(&server_spec("127.0.0.1", 24106, &[64 * 1024]));
    require("curl");
    let mut c = ExternalClient::setup(&client_spec("127.0.0.1", 24106, 64 * 1024, None)).unwrap();
    c.start();
    let t0 = Instant::now();
    while c.progress().0 < 4 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no downloads finish"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!c.progress().1, "an open-ended run is not done before stop");
    let t1 = Instant::now();
    let r = c.stop().unwrap();
    assert!(
        t1.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        t1.elapsed()
    );
    assert!(r.sessions >= 4 && r.failed == 0, "{r:?}");
    assert_eq!(r.bytes, r.sessions * 64 * 1024);
    let s = server.stop();
    // Downloads killed at stop may have reached nginx; finished ones all did.
    assert!(s.http_requests >= r.sessions, "{s:?} {r:?}");
}

#[test]
fn nothing_listening_counts_curl_failures() {
    require("curl");
    let r = download(&client_spec("127.0.0.1", 24107, 1024, Some(2)));
    assert_eq!((r.sessions, r.failed), (0, 2), "{r:?}");
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert!(r.errors[0].0.starts_with("curl: (7)"), "{:?}", r.errors);
}

#[test]
fn unknown_programs_and_modes_are_bad_specs() {
    let mut s = server_spec("127.0.0.1", 24108, &[]);
    s.external = Some("apache".into());
    match ExternalServer::start(&s) {
        Err(TrafficError::BadSpec(m)) => {
            assert_eq!(m, "unknown external server 'apache' (supported: nginx)")
        }
        other => panic!("{other:?}"),
    }
    let mut c = client_spec("127.0.0.1", 24108, 1, Some(1));
    c.external = Some("wget".into());
    match ExternalClient::setup(&c) {
        Err(TrafficError::BadSpec(m)) => assert!(m.contains("'wget'") && m.contains("curl"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("wget accepted"),
    }
    c.external = Some("curl".into());
    c.mode = ConnMode::Bulk;
    match ExternalClient::setup(&c) {
        Err(TrafficError::BadSpec(m)) => {
            assert!(
                m.starts_with("an external client runs http downloads only"),
                "{m}"
            )
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("bulk accepted"),
    }
}
