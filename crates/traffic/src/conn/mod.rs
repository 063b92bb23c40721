//! Connection workloads (seeds 003 and 004): the built-in TCP server, the session
//! client (sessions, bulk, HTTP downloads, held connections) and the gateway's
//! userspace TCP relay (the study's `shovel`).
//!
//! Owns: the roles [`TcpServer`], [`SessionClient`] and [`Proxy`], the session header
//! ([`SessionHeader`]), the pattern buffer and body checks, and the little HTTP/1.1
//! they speak. The wire protocol itself is described in `proto::conn`.
//! Must not: run external programs (`traffic::external` runs nginx and curl), use
//! `unsafe` (raw syscalls live in `traffic::sys`), or panic on anything a peer sends.
//!
//! Closing is part of what is measured, so every role ends a normal connection with
//! FIN, never RST: whoever closes first shuts down its write side and reads to the
//! peer's FIN before close(2), so no unread data is left to make the kernel reset.

mod client;
mod evloop;
mod header;
mod hold;
mod http;
mod pattern;
mod proxy;
mod server;

pub use client::SessionClient;
pub use header::{HeaderError, Kind, SessionHeader, HEADER_LEN};
pub use proxy::Proxy;
pub use server::TcpServer;

use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

/// A failed step of opening a connection: which step, and the error.
#[derive(Debug)]
pub(crate) struct OpenError {
    pub step: &'static str,
    pub err: io::Error,
}

/// Open a blocking TCP connection to `server`, from `source` (its port chosen at
/// connect) if given, with a connect timeout.
pub(crate) fn open(
    server: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
) -> Result<TcpStream, OpenError> {
    let fail = |step| move |err| OpenError { step, err };
    let s = Socket::new(
        Domain::for_address(server),
        Type::STREAM,
        Some(Protocol::TCP),
    )
    .map_err(fail("socket"))?;
    if let Some(ip) = source {
        // The port comes at connect(2), per destination (held connections fill ranges).
        crate::sys::bind_address_no_port(&s).map_err(fail("setsockopt"))?;
        s.bind(&SocketAddr::new(ip, 0).into())
            .map_err(fail("bind"))?;
    }
    s.connect_timeout(&server.into(), timeout)
        .map_err(fail("connect"))?;
    Ok(s.into())
}

/// A stable text for an I/O error of `step` (results count errors by this text): the
/// OS message, or "timed out after N ms" for a timeout.
pub(crate) fn error_text(step: &str, e: &io::Error, timeout: Duration) -> String {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        format!("{step}: timed out after {} ms", timeout.as_millis())
    } else {
        format!("{step}: {e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_are_stable() {
        let t = Duration::from_millis(250);
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(
            error_text("connect", &refused, t),
            "connect: Connection refused (os error 111)"
        );
        let again = io::Error::from_raw_os_error(libc::EAGAIN);
        assert_eq!(
            error_text("read", &again, t),
            "read: timed out after 250 ms"
        );
        let timed_out: io::Error = io::ErrorKind::TimedOut.into();
        assert_eq!(
            error_text("connect", &timed_out, t),
            "connect: timed out after 250 ms"
        );
    }

    #[test]
    fn open_reports_the_failing_step() {
        // A port nobody listens on (bound, never listening).
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let e = open(addr, None, Duration::from_secs(1)).unwrap_err();
        assert_eq!(e.step, "connect");
        assert_eq!(e.err.raw_os_error(), Some(libc::ECONNREFUSED));
        // A source address of the wrong family fails at bind.
        let e = open(addr, Some("::1".parse().unwrap()), Duration::from_secs(1)).unwrap_err();
        assert_eq!(e.step, "bind");
    }
}
