//! The session client: `parallel` workers running sessions back to back over blocking
//! sockets (sessions, bulk, HTTP downloads), or one opener holding connections (hold
//! mode, in `hold.rs`).
//!
//! Owns: validation of the spec, one session (connect, request, response to the
//! server's FIN, close) with its timings and verdict, and the merge of the workers'
//! results. Must not: abort a run because a session failed (errors are data, counted
//! by message; only a run whose first 100 attempts all fail gives up), or reset a
//! connection: it reads to the server's FIN and then closes (no SO_LINGER 0).
//!
//! A session whose body is wrong (a byte, or the length) is counted in `corrupt` and
//! in `failed`, never in `sessions`; its message says which.
//!
//! Gateway events (issue 25): every session goes into fine time bins by its start
//! (the background: done with its connection setup time, or failed), and one more
//! worker runs the marker stream — the smallest sessions, back to back, from an
//! address of its own, with a short timeout — outside the trial's counts.

use super::header::SessionHeader;
use super::hold::{self, HoldPlan, Limits};
use super::http::{self, Parse};
use super::pattern::{pattern, BodyCheck};
use super::{error_text, open};
use crate::bins::{Recorder, Streams};
use crate::gate::{Gate, StartGate};
use crate::hist::{RttHistogram, SessionTimes};
use crate::sys;
use crate::TrafficError;
use proto::{ConnMode, SessionClientResults, SessionClientSpec, SESSION_HEADER};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most workers.
pub const MAX_PARALLEL: u32 = 4096;
/// Session durations kept in order of completion.
const MAX_SESSION_US: usize = 10_000;
/// Distinct error messages kept (the last one collects the rest).
const MAX_ERRORS: usize = 8;
/// A run whose first this-many attempts all fail stops early.
const GIVE_UP_AFTER: u64 = 100;
/// Read buffer of a worker: large for bulk, small when the responses are (up to 4096
/// workers share the memory).
const READ_BUF: usize = 256 * 1024;
const SMALL_READ_BUF: usize = 16 * 1024;
/// Error entry that collects messages beyond the first [`MAX_ERRORS`]` − 1`.
const OTHER_ERRORS: &str = "other errors";
/// Longest a marker session may take (connect and the rest): a session a rule
/// change blocks fails after this and the next one starts (a change that lets the
/// stream through is seen to about this).
pub const MARKER_TIMEOUT_MS: u32 = 100;

/// What one session sends and expects.
#[derive(Debug, Clone)]
struct Plan {
    http: bool,
    server: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
    verify: bool,
    /// First write: the header and the start of the padding, or the HTTP request.
    first: Vec<u8>,
    /// Padding after `first`: pattern offsets `rest_at .. rest_end`.
    rest_at: u64,
    rest_end: u64,
    /// Body bytes expected back.
    response: u64,
}

impl Plan {
    fn new(spec: &SessionClientSpec) -> Self {
        Plan {
            http: false,
            server: SocketAddr::new(spec.server, spec.port),
            source: spec.source,
            timeout: Duration::from_millis(u64::from(spec.timeout_ms)),
            verify: spec.verify,
            first: Vec::new(),
            rest_at: 0,
            rest_end: 0,
            response: 0,
        }
    }

    /// An FWBS session of `request` bytes up (header included) and `response` down.
    fn session(spec: &SessionClientSpec, request: u32, response: u64) -> Self {
        let h = SessionHeader::session(request, response);
        let mut first = h.emit().to_vec();
        let head_pad = pattern().slice(0, h.body_len());
        first.extend_from_slice(head_pad);
        Plan {
            first,
            rest_at: head_pad.len() as u64,
            rest_end: h.body_len(),
            response,
            ..Plan::new(spec)
        }
    }

    /// `GET /bytes/<response>`, closing after the response.
    fn http(spec: &SessionClientSpec) -> Self {
        let mut p = Plan::new(spec);
        p.http = true;
        p.first = http::get_request(p.server, spec.response);
        p.response = spec.response;
        p
    }
}

/// Timings of one good session, ns from its start (before socket(2)).
#[derive(Debug, Clone, Copy)]
struct Timing {
    connect: u64,
    ttfb: u64,
    ttlb: u64,
    session: u64,
    bytes: u64,
}

/// Why a session failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failure {
    /// A socket call failed or timed out.
    Io(String),
    /// The body was wrong: a byte or the length.
    Corrupt(&'static str),
    /// The server answered something else (an HTTP error, a malformed head).
    Protocol(String),
}

impl Failure {
    fn key(&self) -> &str {
        match self {
            Failure::Io(s) | Failure::Protocol(s) => s,
            Failure::Corrupt(s) => s,
        }
    }
}

/// Takes the bytes of a response as they arrive.
enum Receiver {
    /// An FWBS response: pattern bytes to the FIN.
    Body(BodyCheck),
    Http(HttpReceiver),
}

impl Receiver {
    /// Feed the next bytes; true if they held body bytes.
    fn feed(&mut self, data: &[u8]) -> bool {
        match self {
            Receiver::Body(b) => {
                b.feed(data);
                !data.is_empty()
            }
            Receiver::Http(h) => h.feed(data),
        }
    }

    /// The verdict at end of stream: the body bytes, or why the session failed.
    fn finish(self) -> Result<u64, Failure> {
        match self {
            Receiver::Body(b) => b
                .verdict()
                .map(|()| b.received())
                .map_err(|e| Failure::Corrupt(e.key())),
            Receiver::Http(h) => h.finish(),
        }
    }
}

/// An HTTP response: the head (status 200 and Content-Length required), then the body.
struct HttpReceiver {
    expected: u64,
    verify: bool,
    head: Vec<u8>,
    body: Option<BodyCheck>,
    /// Set once the response is known to be a failure; the rest is read and dropped.
    failure: Option<Failure>,
}

impl HttpReceiver {
    fn new(expected: u64, verify: bool) -> Self {
        HttpReceiver {
            expected,
            verify,
            head: Vec::new(),
            body: None,
            failure: None,
        }
    }

    fn feed(&mut self, data: &[u8]) -> bool {
        if let Some(b) = &mut self.body {
            b.feed(data);
            return !data.is_empty();
        }
        if self.failure.is_some() {
            return false;
        }
        // Bounded: the parser gives up past MAX_HEAD, so at most one read more is kept.
        self.head.extend_from_slice(data);
        let fail = |s: String| Some(Failure::Protocol(s));
        match http::parse_response(&self.head) {
            Parse::Partial => return false,
            Parse::TooLarge => self.failure = fail("HTTP response head over 8 KiB".into()),
            Parse::Malformed(why) => self.failure = fail(format!("bad HTTP response: {why}")),
            Parse::Done(h, _) if h.status != 200 => {
                self.failure = fail(format!("HTTP {}", h.status))
            }
            Parse::Done(h, _) if h.content_length.is_none() => {
                self.failure = fail("HTTP response without Content-Length".into())
            }
            Parse::Done(_, used) => {
                let mut b = BodyCheck::new(self.expected, self.verify);
                let rest = &self.head[used..];
                b.feed(rest);
                let had_body = !rest.is_empty();
                self.body = Some(b);
                self.head = Vec::new();
                return had_body;
            }
        }
        self.head = Vec::new();
        false
    }

    fn finish(self) -> Result<u64, Failure> {
        if let Some(f) = self.failure {
            return Err(f);
        }
        let Some(b) = self.body else {
            return Err(Failure::Protocol(
                "connection closed before the HTTP response head".into(),
            ));
        };
        b.verdict().map_err(|e| Failure::Corrupt(e.key()))?;
        Ok(b.received())
    }
}

fn since(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

/// One session: connect, send the request, read to the server's FIN, close.
fn run_session(plan: &Plan, buf: &mut [u8]) -> Result<Timing, Failure> {
    let t0 = Instant::now();
    let timeout = plan.timeout;
    let io_fail =
        |step: &'static str| move |e: io::Error| Failure::Io(error_text(step, &e, timeout));
    let mut s = open(plan.server, plan.source, timeout)
        .map_err(|e| Failure::Io(error_text(e.step, &e.err, timeout)))?;
    let connect = since(t0);
    s.set_read_timeout(Some(timeout))
        .and_then(|()| s.set_write_timeout(Some(timeout)))
        .and_then(|()| s.set_nodelay(true))
        .map_err(io_fail("setsockopt"))?;
    s.write_all(&plan.first).map_err(io_fail("write"))?;
    let mut at = plan.rest_at;
    while at < plan.rest_end {
        let piece = pattern().slice(at, plan.rest_end - at);
        s.write_all(piece).map_err(io_fail("write"))?;
        at += piece.len() as u64;
    }
    let mut rx = if plan.http {
        Receiver::Http(HttpReceiver::new(plan.response, plan.verify))
    } else {
        Receiver::Body(BodyCheck::new(plan.response, plan.verify))
    };
    let (mut first, mut last) = (None, None);
    loop {
        match s.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                let now = since(t0);
                first.get_or_insert(now);
                if rx.feed(&buf[..n]) {
                    last = Some(now);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_fail("read")(e)),
        }
    }
    let eof = since(t0);
    // Everything up to the server's FIN is read: close(2) sends our FIN, never RST.
    drop(s);
    let session = since(t0);
    let bytes = rx.finish()?;
    Ok(Timing {
        connect,
        ttfb: first.unwrap_or(eof),
        ttlb: last.unwrap_or(session),
        session,
        bytes,
    })
}

/// Error messages with their counts, at most [`MAX_ERRORS`] distinct.
#[derive(Debug, Default, Clone, PartialEq)]
struct ErrorTally {
    v: Vec<(String, u64)>,
}

impl ErrorTally {
    fn add(&mut self, key: &str, n: u64) {
        if let Some(e) = self.v.iter_mut().find(|(k, _)| k == key) {
            e.1 += n;
        } else if self.v.len() < MAX_ERRORS - 1 {
            self.v.push((key.to_string(), n));
        } else if let Some(e) = self.v.iter_mut().find(|(k, _)| k == OTHER_ERRORS) {
            e.1 += n;
        } else {
            self.v.push((OTHER_ERRORS.to_string(), n));
        }
    }

    fn merge(&mut self, other: ErrorTally) {
        for (k, n) in other.v {
            self.add(&k, n);
        }
    }

    /// Most frequent first; the collection of other errors last.
    fn into_vec(mut self) -> Vec<(String, u64)> {
        self.v.sort_by(|a, b| {
            (a.0 == OTHER_ERRORS)
                .cmp(&(b.0 == OTHER_ERRORS))
                .then(b.1.cmp(&a.1))
                .then_with(|| a.0.cmp(&b.0))
        });
        self.v
    }
}

/// Results of one worker, merged at stop.
#[derive(Default)]
struct Tally {
    done: SessionTimes,
    failed: u64,
    corrupt: u64,
    overhead: RttHistogram,
    errors: ErrorTally,
}

impl Tally {
    fn record(&mut self, t: &Timing) {
        self.done
            .record(t.bytes, t.session, t.connect, t.ttfb, t.ttlb);
    }

    fn fail(&mut self, f: &Failure, prefix: &str) {
        self.failed += 1;
        if matches!(f, Failure::Corrupt(_)) {
            self.corrupt += 1;
        }
        if prefix.is_empty() {
            self.errors.add(f.key(), 1);
        } else {
            self.errors.add(&format!("{prefix}{}", f.key()), 1);
        }
    }

    fn merge(&mut self, o: Tally) {
        self.done.merge(&o.done);
        self.failed += o.failed;
        self.corrupt += o.corrupt;
        self.overhead.merge(&o.overhead);
        self.errors.merge(o.errors);
    }
}

/// State shared by the client and its workers.
struct Shared {
    epoch: Instant,
    stop: AtomicBool,
    /// The first attempts all failed: every worker ends.
    give_up: AtomicBool,
    /// Sessions claimed so far (count mode).
    claimed: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    /// Workers that ended on their own (count reached or gave up).
    finished_workers: AtomicU32,
    /// When the transfers began (after the overhead sessions), ns since `epoch`.
    start_ns: AtomicU64,
    /// End of the latest session that completed, ns since `epoch`: the end of the
    /// window the rates divide by (a session that failed — a timeout of seconds — does
    /// not stretch it; the trial is flagged for its failures).
    last_end_ns: AtomicU64,
    session_us: Mutex<Vec<u32>>,
    /// Opened by worker 0 once the overhead sessions are done.
    transfers: StartGate,
    /// Hold mode: connections open, and whether opening has stopped.
    hold_opened: AtomicU64,
    hold_done: AtomicBool,
    /// CLOCK_REALTIME at `epoch`: the clock of the events' bins.
    epoch_real: u64,
    /// Gateway events: the marker stream's sessions and the workers' (background).
    events: Option<Streams>,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        since(self.epoch)
    }

    /// Now on the events' clock (CLOCK_REALTIME).
    fn real_ns(&self) -> u64 {
        self.epoch_real + self.now_ns()
    }

    fn failed_once(&self) {
        let failed = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
        if failed >= GIVE_UP_AFTER && self.ok.load(Ordering::Relaxed) == 0 {
            self.give_up.store(true, Ordering::Relaxed);
        }
    }

    fn succeeded(&self, session_ns: u64) {
        self.ok.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut v) = self.session_us.lock() {
            if v.len() < MAX_SESSION_US {
                v.push((session_ns / 1000).min(u64::from(u32::MAX)) as u32);
            }
        }
    }
}

/// What a worker does.
struct Job {
    id: u32,
    plan: Arc<Plan>,
    /// Bulk: zero-byte sessions worker 0 runs first.
    overhead: Option<(Arc<Plan>, u32)>,
    count: Option<u64>,
}

/// A session with its start on the events' clock, recorded by `rec` (if any): done
/// with its connection setup time, or failed.
fn timed_session(
    plan: &Plan,
    buf: &mut [u8],
    sh: &Shared,
    rec: &mut Option<Recorder>,
) -> Result<Timing, Failure> {
    let start = sh.real_ns();
    let r = run_session(plan, buf);
    if let Some(rec) = rec.as_mut() {
        rec.record(start, r.as_ref().ok().map(|t| t.connect));
    }
    r
}

/// The marker stream: the smallest sessions from its own address, back to back
/// until stopped, into its own bins (not the trial's counts).
fn run_marker(plan: &Plan, sh: &Shared, gate: &StartGate) {
    let Some(events) = &sh.events else {
        return;
    };
    if !gate.wait() {
        return;
    }
    let mut rec = Some(events.recorder(true));
    let mut buf = vec![0u8; SMALL_READ_BUF];
    while !sh.stop.load(Ordering::Relaxed) {
        let _ = timed_session(plan, &mut buf, sh, &mut rec);
    }
}

fn run_worker(job: Job, sh: &Shared, gate: &StartGate) -> Tally {
    let mut t = Tally::default();
    if !gate.wait() {
        return t;
    }
    let mut rec = sh.events.as_ref().map(|e| e.recorder(false));
    let small = job.plan.response < SMALL_READ_BUF as u64;
    let mut buf = vec![0u8; if small { SMALL_READ_BUF } else { READ_BUF }];
    if let Some((plan, n)) = &job.overhead {
        if job.id == 0 {
            for _ in 0..*n {
                if sh.stop.load(Ordering::Relaxed) || sh.give_up.load(Ordering::Relaxed) {
                    break;
                }
                match timed_session(plan, &mut buf, sh, &mut rec) {
                    Ok(tm) => t.overhead.record(tm.session),
                    Err(f) => {
                        t.fail(&f, "overhead session: ");
                        sh.failed_once();
                    }
                }
            }
            sh.start_ns.store(sh.now_ns(), Ordering::SeqCst);
            sh.transfers.open(Gate::Go);
        } else if !sh.transfers.wait() {
            return t;
        }
    }
    let mut on_its_own = false;
    loop {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        if sh.give_up.load(Ordering::Relaxed) {
            on_its_own = true;
            break;
        }
        if let Some(c) = job.count {
            if sh.claimed.fetch_add(1, Ordering::Relaxed) >= c {
                on_its_own = true;
                break;
            }
        }
        let r = timed_session(&job.plan, &mut buf, sh, &mut rec);
        match r {
            Ok(tm) => {
                sh.last_end_ns.fetch_max(sh.now_ns(), Ordering::Relaxed);
                t.record(&tm);
                sh.succeeded(tm.session);
            }
            Err(f) => {
                t.fail(&f, "");
                sh.failed_once();
            }
        }
    }
    if on_its_own {
        sh.finished_workers.fetch_add(1, Ordering::SeqCst);
    }
    t
}

/// The built-in connection client. Workers are created by [`SessionClient::setup`],
/// released by [`SessionClient::start`], and ended by [`SessionClient::stop`].
pub struct SessionClient {
    mode: ConnMode,
    parallel: u32,
    overhead: bool,
    hold_limit: u32,
    started: bool,
    gate: StartGate,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<Tally>>,
    opener: Option<JoinHandle<hold::Opened>>,
    /// Gateway events: the marker stream's worker and its source address.
    marker: Option<JoinHandle<()>>,
    marker_source: Option<IpAddr>,
    /// Run for a duration (no `count`): the window is the time the client tried, to
    /// its stop (or a session still in flight then), whatever came of the last ones.
    timed: bool,
}

/// Check a spec before anything is created.
fn validate(spec: &SessionClientSpec) -> Result<(), TrafficError> {
    let bad = |s: String| Err(TrafficError::BadSpec(s));
    if spec.external.is_some() {
        return bad("external clients are run by traffic::external".into());
    }
    if !(1..=MAX_PARALLEL).contains(&spec.parallel) {
        return bad(format!(
            "parallel must be 1..{MAX_PARALLEL} workers, not {}",
            spec.parallel
        ));
    }
    if spec.timeout_ms == 0 {
        return bad("timeout_ms must be at least 1 ms".into());
    }
    if spec.mode == ConnMode::Sessions && spec.request < SESSION_HEADER {
        return bad(format!(
            "session request must be at least {SESSION_HEADER} bytes (its header), not {}",
            spec.request
        ));
    }
    if spec.mode == ConnMode::Hold && spec.hold_limit == 0 {
        return bad("hold mode needs hold_limit of at least 1 connection".into());
    }
    if spec.mode == ConnMode::Hold && spec.events.is_some() {
        return bad("hold mode opens and holds connections: it has no sessions to bin".into());
    }
    for src in spec.source_list().into_iter().flatten() {
        if src.is_ipv4() != spec.server.is_ipv4() {
            return bad(format!(
                "source {src} and server {} are of different address families",
                spec.server
            ));
        }
    }
    Ok(())
}

impl SessionClient {
    /// Validate `spec` and create the workers, waiting for [`SessionClient::start`].
    pub fn setup(spec: &SessionClientSpec) -> Result<SessionClient, TrafficError> {
        validate(spec)?;
        let nofile_before = sys::nofile_limit().ok();
        let nofile = match sys::raise_nofile_limit() {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!("cannot raise RLIMIT_NOFILE: {e}");
                sys::nofile_limit().unwrap_or(0)
            }
        };
        let shared = Arc::new(Shared {
            epoch: Instant::now(),
            stop: AtomicBool::new(false),
            give_up: AtomicBool::new(false),
            claimed: AtomicU64::new(0),
            ok: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            finished_workers: AtomicU32::new(0),
            start_ns: AtomicU64::new(0),
            last_end_ns: AtomicU64::new(0),
            session_us: Mutex::new(Vec::new()),
            transfers: StartGate::new(),
            hold_opened: AtomicU64::new(0),
            hold_done: AtomicBool::new(false),
            epoch_real: sys::realtime_ns(),
            events: spec
                .events
                .map(|e| Streams::new(e.bin_ns, sys::realtime_ns())),
        });
        let gate = StartGate::new();
        let mut client = SessionClient {
            mode: spec.mode,
            parallel: spec.parallel,
            overhead: spec.mode == ConnMode::Bulk && spec.overhead_sessions > 0,
            hold_limit: spec.hold_limit,
            started: false,
            gate: gate.clone(),
            shared: shared.clone(),
            workers: Vec::new(),
            opener: None,
            marker: None,
            marker_source: spec.events.and_then(|e| e.marker_source),
            timed: spec.count.is_none(),
        };
        let spawn_err = |e| TrafficError::io("spawning a client thread", e);
        if spec.mode == ConnMode::Hold {
            let plan = HoldPlan {
                server: SocketAddr::new(spec.server, spec.port),
                sources: spec.source_list(),
                timeout: Duration::from_millis(u64::from(spec.timeout_ms)),
                limit: spec.hold_limit,
                limits: Limits {
                    nofile,
                    nofile_before,
                    timeout_ms: spec.timeout_ms,
                },
            };
            let (g, sh) = (gate, shared);
            let opener = std::thread::Builder::new()
                .name("conn-hold".into())
                .spawn(move || {
                    if !g.wait() {
                        sh.hold_done.store(true, Ordering::SeqCst);
                        return hold::Opened::default();
                    }
                    let o = hold::open_all(&plan, &sh.stop, &sh.hold_opened);
                    sh.hold_done.store(true, Ordering::SeqCst);
                    o
                })
                .map_err(spawn_err)?;
            client.opener = Some(opener);
            return Ok(client);
        }
        let plan = Arc::new(match spec.mode {
            ConnMode::Sessions => Plan::session(spec, spec.request, spec.response),
            ConnMode::Http => Plan::http(spec),
            // Bulk (Hold returned above): a bare header asks for the object.
            _ => Plan::session(spec, SESSION_HEADER, spec.response),
        });
        let overhead = client.overhead.then(|| {
            (
                Arc::new(Plan::session(spec, SESSION_HEADER, 0)),
                spec.overhead_sessions,
            )
        });
        // Several sources: worker `id` binds source `id mod n` (its own plan).
        let sources = spec.source_list();
        let plans: Vec<Arc<Plan>> = if sources.len() > 1 {
            sources
                .iter()
                .map(|src| {
                    Arc::new(Plan {
                        source: *src,
                        ..(*plan).clone()
                    })
                })
                .collect()
        } else {
            vec![plan]
        };
        for id in 0..spec.parallel {
            let job = Job {
                id,
                plan: plans[id as usize % plans.len()].clone(),
                overhead: overhead.clone(),
                count: spec.count,
            };
            let (g, sh) = (gate.clone(), shared.clone());
            let w = std::thread::Builder::new()
                .name(format!("conn-client-{id}"))
                .stack_size(256 * 1024)
                .spawn(move || run_worker(job, &sh, &g))
                .map_err(spawn_err)?;
            client.workers.push(w);
        }
        if let Some(src) = spec.events.and_then(|e| e.marker_source) {
            let plan = Plan {
                source: Some(src),
                timeout: Duration::from_millis(u64::from(spec.timeout_ms.min(MARKER_TIMEOUT_MS))),
                ..Plan::session(spec, SESSION_HEADER, 0)
            };
            let (g, sh) = (gate.clone(), shared.clone());
            let w = std::thread::Builder::new()
                .name("conn-marker".into())
                .stack_size(256 * 1024)
                .spawn(move || run_marker(&plan, &sh, &g))
                .map_err(spawn_err)?;
            client.marker = Some(w);
        }
        Ok(client)
    }

    /// Release the workers.
    pub fn start(&mut self) {
        self.shared
            .start_ns
            .store(self.shared.now_ns(), Ordering::SeqCst);
        self.started = true;
        self.gate.open(Gate::Go);
    }

    /// (sessions finished — completed or failed —, all workers ended on their own).
    /// Hold mode: (connections open, opening has stopped).
    pub fn progress(&self) -> (u64, bool) {
        let sh = &self.shared;
        if self.mode == ConnMode::Hold {
            return (
                sh.hold_opened.load(Ordering::Relaxed),
                sh.hold_done.load(Ordering::SeqCst),
            );
        }
        (
            sh.ok.load(Ordering::Relaxed) + sh.failed.load(Ordering::Relaxed),
            sh.finished_workers.load(Ordering::SeqCst) == self.parallel,
        )
    }

    /// Stop: no new sessions (those in flight finish or time out), join the workers,
    /// merge their results. Hold mode: count and close the held connections.
    pub fn stop(mut self) -> Result<SessionClientResults, TrafficError> {
        let sh = self.shared.clone();
        let stop_ns = sh.now_ns();
        sh.stop.store(true, Ordering::SeqCst);
        if !self.started {
            self.gate.open(Gate::Abort);
        }
        // Workers waiting for the overhead sessions need not wait any more.
        sh.transfers.open(Gate::Abort);
        let start_ns = sh.start_ns.load(Ordering::SeqCst);
        let mut r = SessionClientResults {
            mode: self.mode,
            parallel: self.parallel,
            sessions: 0,
            failed: 0,
            errors: Vec::new(),
            elapsed_ns: 0,
            bytes: 0,
            corrupt: 0,
            session: Default::default(),
            connect: Default::default(),
            ttfb: Default::default(),
            ttlb: Default::default(),
            overhead: None,
            session_us: Vec::new(),
            hold: None,
            external: None,
            events: None,
        };
        if let Some(opener) = self.opener.take() {
            let opened = opener
                .join()
                .map_err(|_| TrafficError::BadSpec("the hold thread panicked".into()))?;
            let (hold, error) = hold::finish(opened, self.hold_limit);
            r.sessions = hold.reached;
            if let Some(e) = error {
                r.failed = 1;
                r.errors = vec![(e, 1)];
            }
            r.elapsed_ns = if self.started {
                stop_ns.saturating_sub(start_ns)
            } else {
                0
            };
            r.hold = Some(hold);
            return Ok(r);
        }
        let mut t = Tally::default();
        let mut panicked = false;
        for w in std::mem::take(&mut self.workers) {
            match w.join() {
                Ok(x) => t.merge(x),
                Err(_) => panicked = true,
            }
        }
        if let Some(m) = self.marker.take() {
            panicked |= m.join().is_err();
        }
        if panicked {
            return Err(TrafficError::BadSpec("a session worker panicked".into()));
        }
        // The transfers' start may have moved past the overhead sessions. A count of
        // sessions: the window ends with the last one that completed (a failed one's
        // timeout does not stretch it; none completed: at stop). A duration: the time
        // the client tried, to its stop — sessions an update blacked out at the end
        // are in it (the last success would leave that time out and overstate the rate).
        let start_ns = sh.start_ns.load(Ordering::SeqCst);
        let last = sh.last_end_ns.load(Ordering::SeqCst);
        r.elapsed_ns = match (self.started, last > start_ns) {
            (false, _) => 0,
            (true, true) if self.timed => last.max(stop_ns) - start_ns,
            (true, true) => last - start_ns,
            (true, false) => stop_ns.saturating_sub(start_ns),
        };
        t.done.fill(&mut r);
        r.failed = t.failed;
        r.corrupt = t.corrupt;
        r.overhead = self.overhead.then(|| t.overhead.durations());
        r.errors = t.errors.into_vec();
        r.session_us = sh
            .session_us
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        r.events = sh
            .events
            .as_ref()
            .map(|e| Box::new(e.finish(self.marker_source, self.parallel)));
        Ok(r)
    }
}

impl Drop for SessionClient {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.gate.open(Gate::Abort);
        self.shared.transfers.open(Gate::Abort);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::pattern_byte;

    fn spec(mode: ConnMode) -> SessionClientSpec {
        SessionClientSpec {
            mode,
            server: "127.0.0.1".parse().unwrap(),
            port: 41999,
            source: None,
            sources: Vec::new(),
            parallel: 1,
            count: Some(1),
            request: 16,
            response: 0,
            timeout_ms: 100,
            overhead_sessions: 0,
            hold_limit: 1,
            verify: true,
            external: None,
            events: None,
        }
    }

    #[test]
    fn bad_specs_are_refused_with_the_field() {
        // (mode, change to its base spec, what the refusal names)
        type Change = fn(&mut SessionClientSpec);
        let cases: [(ConnMode, Change, &str); 7] = [
            (
                ConnMode::Sessions,
                |s| s.parallel = 0,
                "parallel must be 1..4096",
            ),
            (ConnMode::Bulk, |s| s.parallel = 4097, "not 4097"),
            (ConnMode::Sessions, |s| s.request = 15, "at least 16 bytes"),
            (ConnMode::Http, |s| s.timeout_ms = 0, "timeout_ms"),
            (ConnMode::Hold, |s| s.hold_limit = 0, "hold_limit"),
            (
                ConnMode::Http,
                |s| s.external = Some("curl".into()),
                "traffic::external",
            ),
            (
                ConnMode::Sessions,
                |s| s.source = Some("::1".parse().unwrap()),
                "address families",
            ),
        ];
        for (mode, change, want) in cases {
            let mut s = spec(mode);
            change(&mut s);
            match SessionClient::setup(&s) {
                Err(TrafficError::BadSpec(m)) => assert!(m.contains(want), "{m}"),
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("accepted: {s:?}"),
            }
        }
    }

    #[test]
    fn plans_put_header_and_padding_in_order() {
        let p = Plan::session(&spec(ConnMode::Sessions), 16 + 300_000, 7);
        assert_eq!(&p.first[..16], &SessionHeader::session(300_016, 7).emit());
        let pad = &p.first[16..];
        assert!(pad.iter().zip(0u64..).all(|(&b, i)| b == pattern_byte(i)));
        assert_eq!(p.rest_at, pad.len() as u64);
        assert_eq!(p.rest_end, 300_000);
        let p = Plan::session(&spec(ConnMode::Bulk), 16, 1_700_000);
        assert_eq!(p.first.len(), 16);
        assert_eq!(p.rest_at, p.rest_end);
    }

    fn http_body(n: u64) -> Vec<u8> {
        (0..n).map(pattern_byte).collect()
    }

    #[test]
    fn http_receiver_takes_head_and_body_in_any_split() {
        let mut raw = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".to_vec();
        raw.extend(http_body(1000));
        for split in [1, 7, 40, 41, 500, raw.len()] {
            let mut h = HttpReceiver::new(1000, true);
            let mut saw_body = false;
            for piece in raw.chunks(split) {
                saw_body |= h.feed(piece);
            }
            assert!(saw_body);
            assert_eq!(h.finish(), Ok(1000), "split {split}");
        }
    }

    #[test]
    fn http_receiver_failures() {
        let mut h = HttpReceiver::new(10, true);
        h.feed(b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno\n");
        assert_eq!(h.finish(), Err(Failure::Protocol("HTTP 404".into())));

        let mut h = HttpReceiver::new(10, true);
        h.feed(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(
            h.finish(),
            Err(Failure::Protocol(
                "HTTP response without Content-Length".into()
            ))
        );

        let mut h = HttpReceiver::new(10, true);
        h.feed(b"HTTP/1.1 200 OK\r\nContent-Le");
        assert!(matches!(h.finish(), Err(Failure::Protocol(_))));

        // A shifted body.
        let mut raw = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".to_vec();
        raw.extend((1..11).map(pattern_byte));
        let mut h = HttpReceiver::new(10, true);
        h.feed(&raw);
        assert!(matches!(h.finish(), Err(Failure::Corrupt(_))));

        // A short one.
        let mut raw = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".to_vec();
        raw.extend(http_body(9));
        let mut h = HttpReceiver::new(10, true);
        h.feed(&raw);
        assert!(matches!(h.finish(), Err(Failure::Corrupt(_))));
    }

    #[test]
    fn error_tally_keeps_eight_messages() {
        let mut t = ErrorTally::default();
        for i in 0..20 {
            t.add(&format!("e{i}"), 1);
        }
        t.add("e0", 5);
        let v = t.into_vec();
        assert_eq!(v.len(), 8);
        assert_eq!(v[0], ("e0".to_string(), 6));
        assert_eq!(v[7], (OTHER_ERRORS.to_string(), 13), "{v:?}");
        let total: u64 = v.iter().map(|e| e.1).sum();
        assert_eq!(total, 25);
    }

    /// A server on loopback that serves its first connection (reads its header, closes:
    /// a zero-byte response) and leaves the next unanswered in its backlog; its port
    /// and its thread (joined: the listener, still open).
    fn serve_one() -> (u16, std::thread::JoinHandle<std::net::TcpListener>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut header = [0u8; SESSION_HEADER as usize];
            c.read_exact(&mut header).unwrap();
            drop(c);
            listener
        });
        (port, server)
    }

    /// One session served, one left unanswered until its timeout: the rates' window
    /// ends with the session that completed, not with the timeout (one 5-s timeout
    /// turned ~50 000 sessions/s into ~1200 while latency read 0.1 ms).
    #[test]
    fn a_session_that_times_out_does_not_stretch_the_window() {
        let (port, server) = serve_one();
        let timeout_ms = 1000;
        let mut s = spec(ConnMode::Sessions);
        (s.port, s.parallel, s.count, s.timeout_ms) = (port, 2, Some(2), timeout_ms);
        let mut client = SessionClient::setup(&s).unwrap();
        client.start();
        let t0 = Instant::now();
        while !client.progress().1 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let r = client.stop().unwrap();
        let _listener = server.join().unwrap();
        assert_eq!((r.sessions, r.failed), (1, 1), "{r:?}");
        assert!(
            r.elapsed_ns < u64::from(timeout_ms) * 1_000_000,
            "the window took in the timeout: {} ns",
            r.elapsed_ns
        );
    }

    /// Run for a duration: the window is the time the client tried, to its stop, even
    /// where its last sessions failed (an update that blacked the path out for the
    /// trial's end must not shorten the window to the last success).
    #[test]
    fn a_timed_run_counts_its_window_to_the_stop() {
        let (port, server) = serve_one();
        let mut s = spec(ConnMode::Sessions);
        (s.port, s.parallel, s.count, s.timeout_ms) = (port, 1, None, 400);
        let mut client = SessionClient::setup(&s).unwrap();
        client.start();
        std::thread::sleep(Duration::from_millis(300));
        let r = client.stop().unwrap();
        let _listener = server.join().unwrap();
        assert_eq!(r.sessions, 1, "{r:?}");
        assert!(
            r.elapsed_ns >= 250_000_000,
            "the window ended at the last success: {} ns",
            r.elapsed_ns
        );
    }

    #[test]
    fn a_refused_session_is_an_error_not_a_panic() {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = probe.local_addr().unwrap().port();
        drop(probe);
        let mut s = spec(ConnMode::Sessions);
        s.port = port;
        let plan = Plan::session(&s, 16, 0);
        let mut buf = vec![0u8; 1024];
        assert_eq!(
            run_session(&plan, &mut buf).unwrap_err(),
            Failure::Io("connect: Connection refused (os error 111)".into())
        );
    }
}
