//! Hold mode: open connections one after another and keep them until stop, to find
//! how many concurrent connections the path allows — and name what stopped it.
//!
//! Owns: opening (connect with timeout, send the `FWBH` header), the classification
//! of the failure that stopped the opening into a limiter, and the count of
//! connections still alive at stop. Must not: retry (the first failure is the
//! measurement), or reset the held connections when it closes them.

use super::header::SessionHeader;
use super::{open, OpenError};
use proto::HoldResults;
use std::io::{self, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the connections go and how many.
#[derive(Debug, Clone)]
pub struct HoldPlan {
    pub server: SocketAddr,
    /// Source addresses, one connection each in turn (never empty; `None`: any).
    pub sources: Vec<Option<IpAddr>>,
    pub timeout: Duration,
    pub limit: u32,
    pub limits: Limits,
}

/// What the client knows about its own limits, for the limiter's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Soft RLIMIT_NOFILE in force.
    pub nofile: u64,
    /// Soft RLIMIT_NOFILE before the client raised it (`None`: unreadable).
    pub nofile_before: Option<u64>,
    pub timeout_ms: u32,
}

/// The outcome of the opening phase.
#[derive(Debug, Default)]
pub struct Opened {
    pub streams: Vec<TcpStream>,
    pub limiter: String,
    pub errno: Option<i32>,
    /// The failure that stopped the opening, as an error message.
    pub error: Option<String>,
    pub open_ms: f64,
    /// The open-file limits of the process, for the results.
    pub limits: Option<Limits>,
}

/// Open up to `plan.limit` connections, stopping at the first failure or at `stop`.
/// `opened` follows the count for progress reports.
pub fn open_all(plan: &HoldPlan, stop: &AtomicBool, opened: &AtomicU64) -> Opened {
    let t0 = Instant::now();
    let header = SessionHeader::hold().emit();
    let mut o = Opened::default();
    loop {
        if o.streams.len() >= plan.limit as usize {
            o.limiter = format!("limit ({} connections)", plan.limit);
            break;
        }
        if stop.load(Ordering::Relaxed) {
            o.limiter = format!(
                "stopped after {} of {} connections",
                o.streams.len(),
                plan.limit
            );
            break;
        }
        let source = plan
            .sources
            .get(o.streams.len() % plan.sources.len().max(1))
            .copied()
            .flatten();
        match open_one(plan, source, &header) {
            Ok(s) => {
                o.streams.push(s);
                opened.store(o.streams.len() as u64, Ordering::Relaxed);
            }
            Err(e) => {
                let (limiter, errno) = classify(&e, &plan.limits, local_port_range());
                o.error = Some(super::error_text(e.step, &e.err, plan.timeout));
                o.limiter = limiter;
                o.errno = errno;
                break;
            }
        }
    }
    o.open_ms = t0.elapsed().as_secs_f64() * 1e3;
    o.limits = Some(plan.limits);
    o
}

fn open_one(
    plan: &HoldPlan,
    source: Option<IpAddr>,
    header: &[u8],
) -> Result<TcpStream, OpenError> {
    let mut s = open(plan.server, source, plan.timeout)?;
    let fail = |step| move |err| OpenError { step, err };
    s.set_write_timeout(Some(plan.timeout))
        .map_err(fail("setsockopt"))?;
    s.write_all(header).map_err(fail("write"))?;
    Ok(s)
}

/// `net.ipv4.ip_local_port_range` (it also applies to IPv6), if readable.
fn local_port_range() -> Option<(u32, u32)> {
    let s = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = s.split_whitespace().map(str::parse::<u32>);
    match (it.next(), it.next()) {
        (Some(Ok(a)), Some(Ok(b))) => Some((a, b)),
        _ => None,
    }
}

/// Name the resource behind the failure that stopped the opening: (limiter, errno).
pub fn classify(
    e: &OpenError,
    limits: &Limits,
    port_range: Option<(u32, u32)>,
) -> (String, Option<i32>) {
    let errno = e.err.raw_os_error().or(match e.err.kind() {
        // socket2's connect timeout carries no errno.
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Some(libc::ETIMEDOUT),
        _ => None,
    });
    let limiter = match errno {
        Some(libc::EMFILE | libc::ENFILE) => format!(
            "open-file limit of the client (RLIMIT_NOFILE {})",
            limits.nofile
        ),
        Some(libc::EADDRNOTAVAIL) => match port_range {
            Some((a, b)) => format!("out of source ports (net.ipv4.ip_local_port_range {a} {b})"),
            None => "out of source ports (net.ipv4.ip_local_port_range unreadable)".into(),
        },
        Some(libc::ETIMEDOUT) => format!(
            "connect timed out after {} ms: SYN unanswered (a full conntrack table, \
             a connection limit or a firewall on the path)",
            limits.timeout_ms
        ),
        Some(libc::ECONNREFUSED) => {
            "connection refused (server backlog full or server not listening)".into()
        }
        Some(libc::ECONNRESET | libc::EPIPE) => {
            "connection reset by the server or the path (server out of file descriptors?)".into()
        }
        _ => format!("{}: {}", e.step, e.err),
    };
    (limiter, errno)
}

/// Still open: no data, no FIN and no reset waiting (the server never sends).
fn alive(s: &TcpStream) -> bool {
    if s.set_nonblocking(true).is_err() {
        return false;
    }
    let mut b = [0u8; 1];
    matches!(s.peek(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// At stop: count the connections still alive, close them all with FIN, and return
/// the results with the error that stopped the opening, if any.
pub fn finish(o: Opened, limit: u32) -> (HoldResults, Option<String>) {
    let alive_at_stop = o.streams.iter().filter(|s| alive(s)).count() as u64;
    let reached = o.streams.len() as u64;
    for s in o.streams {
        // Nothing unread (the server sends nothing), so close(2) after this sends no RST.
        let _ = s.shutdown(Shutdown::Write);
    }
    let limiter = if o.limiter.is_empty() {
        "stopped before opening".to_string()
    } else {
        o.limiter
    };
    (
        HoldResults {
            reached,
            limit,
            alive_at_stop,
            limiter,
            errno: o.errno,
            open_ms: o.open_ms,
            nofile_before: o.limits.and_then(|l| l.nofile_before),
            nofile: o.limits.map(|l| l.nofile),
        },
        o.error,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        nofile: 1024,
        nofile_before: None,
        timeout_ms: 1500,
    };

    fn failing(step: &'static str, errno: i32) -> OpenError {
        OpenError {
            step,
            err: io::Error::from_raw_os_error(errno),
        }
    }

    #[test]
    fn classifies_each_errno() {
        let c = |e: OpenError| classify(&e, &LIMITS, Some((32768, 60999)));
        assert_eq!(
            c(failing("socket", libc::EMFILE)),
            (
                "open-file limit of the client (RLIMIT_NOFILE 1024)".into(),
                Some(libc::EMFILE)
            )
        );
        assert_eq!(
            c(failing("socket", libc::ENFILE)).0,
            "open-file limit of the client (RLIMIT_NOFILE 1024)"
        );
        assert_eq!(
            c(failing("connect", libc::EADDRNOTAVAIL)),
            (
                "out of source ports (net.ipv4.ip_local_port_range 32768 60999)".into(),
                Some(libc::EADDRNOTAVAIL)
            )
        );
        let (l, errno) = c(failing("connect", libc::ECONNREFUSED));
        assert_eq!(
            l,
            "connection refused (server backlog full or server not listening)"
        );
        assert_eq!(errno, Some(libc::ECONNREFUSED));
        for errno in [libc::ECONNRESET, libc::EPIPE] {
            assert!(c(failing("write", errno)).0.starts_with("connection reset"));
        }
        let (l, errno) = c(failing("connect", libc::ENETUNREACH));
        assert_eq!(l, "connect: Network is unreachable (os error 101)");
        assert_eq!(errno, Some(libc::ENETUNREACH));
    }

    #[test]
    fn a_connect_timeout_is_an_unanswered_syn() {
        // What socket2's connect_timeout returns: a kind, no errno.
        let e = OpenError {
            step: "connect",
            err: io::ErrorKind::TimedOut.into(),
        };
        let (l, errno) = classify(&e, &LIMITS, None);
        assert!(
            l.starts_with("connect timed out after 1500 ms: SYN unanswered"),
            "{l}"
        );
        assert_eq!(errno, Some(libc::ETIMEDOUT));
        let (l, _) = classify(&failing("connect", libc::ETIMEDOUT), &LIMITS, None);
        assert!(l.starts_with("connect timed out"));
        let (l, _) = classify(&failing("connect", libc::EADDRNOTAVAIL), &LIMITS, None);
        assert!(l.contains("unreadable"), "{l}");
    }

    /// The range as sysctl(8) reads it (procps, which scripts/setup.sh installs).
    #[test]
    fn reads_the_port_range() {
        let o = std::process::Command::new("sysctl")
            .args(["-n", "net.ipv4.ip_local_port_range"])
            .output()
            .expect("sysctl(8) (procps)");
        let text = String::from_utf8_lossy(&o.stdout);
        let w: Vec<u32> = text
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(local_port_range(), Some((w[0], w[1])), "sysctl: {text}");
        assert!(w[0] <= w[1] && w[1] <= 65535, "{w:?}");
    }

    #[test]
    fn alive_sees_fin_and_quiet() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        assert!(alive(&c), "a quiet connection is alive");
        s.shutdown(Shutdown::Write).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!alive(&c), "a FIN from the server ends it");
    }
}
