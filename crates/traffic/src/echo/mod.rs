//! The echo cycle of seed 000: the client sends a frame (MP1), the server receives
//! and validates it (MP2) and echoes it (MP3), the client receives and validates the
//! echo (MP4). One outstanding frame per client connection.

mod client;
mod server;

pub use client::EchoClients;
pub use server::EchoServer;

use std::time::Duration;

/// How often blocked workers look at their stop flag.
pub(crate) const POLL: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{EchoClientSpec, EchoServerSpec, FrameSize, Proto, ServerMode};
    use std::net::IpAddr;

    /// A base port whose next 4 ports are free for TCP listeners and UDP sockets now
    /// (a port held by a client socket or its TIME_WAIT blocks a listener: try again).
    fn free_port(ip: IpAddr) -> u16 {
        for _ in 0..100 {
            let base = std::net::TcpListener::bind((ip, 0))
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
                .min(60000);
            let free = (base..base + 4).all(|p| {
                std::net::TcpListener::bind((ip, p)).is_ok()
                    && std::net::UdpSocket::bind((ip, p)).is_ok()
            });
            if free {
                return base;
            }
        }
        panic!("no 4 free consecutive ports on {ip}");
    }

    /// A server and 3 clients on `ip` cycling for `ms`, both ends' results.
    fn cycle(
        proto: Proto,
        mode: ServerMode,
        ip: &str,
        frame: FrameSize,
        events: Option<proto::StreamEventsSpec>,
        ms: u64,
    ) -> (proto::EchoClientResults, proto::EchoServerResults) {
        let ip: IpAddr = ip.parse().unwrap();
        let port = free_port(ip);
        let server = EchoServer::start(&EchoServerSpec {
            proto,
            mode,
            listen: ip,
            port,
            clients: 3,
            max_frame: frame.max(),
            timeout_ms: 500,
        })
        .unwrap();
        let mut clients = EchoClients::connect(&EchoClientSpec {
            proto,
            sources: vec![ip; 3],
            server: ip,
            port,
            frame,
            seed: 9,
            timeout_ms: 500,
            events,
        })
        .unwrap();
        clients.start();
        std::thread::sleep(Duration::from_millis(ms));
        let c = clients.stop();
        (c, server.stop())
    }

    fn run(proto: Proto, mode: ServerMode, ip: &str, frame: FrameSize) {
        let (c, s) = cycle(proto, mode, ip, frame, None, 300);
        assert_eq!(c.clients.len(), 3);
        for cl in &c.clients {
            assert!(cl.mp4.frames > 10, "{proto}/{mode}: {cl:?}");
            assert_eq!(cl.validation.total(), 0, "{cl:?}");
            assert_eq!(cl.mp1.frames, cl.mp4.frames + cl.lost, "{cl:?}");
            assert!(cl.error.is_none(), "{cl:?}");
            let sv = s.clients.iter().find(|x| x.client == cl.client).unwrap();
            assert_eq!(sv.validation.total(), 0, "{sv:?}");
            assert!(sv.mp2.frames >= cl.mp4.frames && sv.mp2.frames <= cl.mp1.frames);
            assert_eq!(sv.mp2.bytes, sv.mp3.bytes, "{sv:?}");
        }
        assert!(c.rtt.count > 0 && c.rtt.p50_ns > 0 && c.rtt.p50_ns <= c.rtt.max_ns);
    }

    /// Gateway events: client 1's cycles are the marker's bins, the others' the
    /// background's; every cycle is in one bin, its failures the lost and unsent.
    #[test]
    fn cycles_go_into_the_marker_and_background_bins() {
        for proto in [Proto::Udp, Proto::Tcp] {
            let events = Some(proto::StreamEventsSpec {
                bin_ns: 1_000_000,
                marker_source: None,
            });
            let frame = FrameSize::Fixed { size: 64 };
            let (c, _) = cycle(proto, ServerMode::Epoll, "127.0.0.1", frame, events, 200);
            let e = c.events.as_deref().expect("bins were asked for");
            assert_eq!(e.background_streams, 2);
            let total = |b: &proto::TxnBins| {
                let n = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
                (n(&b.done), n(&b.failed))
            };
            let (md, mf) = total(&e.marker);
            let (bd, bf) = total(&e.background);
            let c1 = &c.clients[0];
            assert!(md > 10, "{proto}: {md}");
            assert_eq!(md + mf, c1.mp1.frames + c1.unsent, "{proto}: {c1:?}");
            assert_eq!(mf, c1.lost + c1.unsent, "{proto}");
            let lost: u64 = c.clients.iter().map(|x| x.lost + x.unsent).sum();
            assert_eq!(mf + bf, lost, "{proto}");
            let sent: u64 = c.clients[1..].iter().map(|x| x.mp1.frames + x.unsent).sum();
            assert_eq!(bd + bf, sent, "{proto}");
            assert!(e.marker.first_done.is_some() && e.marker.last_done.is_some());
            let max = e
                .background
                .latency_max_us
                .iter()
                .max()
                .copied()
                .unwrap_or(0);
            assert!(max > 0, "{proto}: round trips in µs");
        }
    }

    #[test]
    fn loopback_echo_all_modes() {
        for proto in [Proto::Tcp, Proto::Udp] {
            for mode in [ServerMode::Threads, ServerMode::Epoll] {
                run(proto, mode, "127.0.0.1", FrameSize::Fixed { size: 64 });
                run(proto, mode, "::1", FrameSize::Ranged { lo: 64, hi: 1024 });
            }
        }
    }

    /// Both kernels: where the kernel lists SCTP among its protocols (an answer
    /// independent of our socket call, read after it loaded the module where there is
    /// one) the echo runs; where it does not, setup fails with the clear message.
    #[test]
    fn sctp_echo_runs_or_setup_fails_cleanly_when_missing() {
        let unavailable = crate::sys::sctp_unavailable();
        let protocols = std::fs::read_to_string("/proc/net/protocols").unwrap();
        let listed = protocols
            .lines()
            .any(|l| l.split_whitespace().next() == Some("SCTP"));
        assert_eq!(!unavailable, listed, "{protocols}");
        if listed {
            run(
                Proto::Sctp,
                ServerMode::Epoll,
                "127.0.0.1",
                FrameSize::Fixed { size: 64 },
            );
        } else {
            let spec = EchoServerSpec {
                proto: Proto::Sctp,
                mode: ServerMode::Epoll,
                listen: "127.0.0.1".parse().unwrap(),
                port: 0,
                clients: 1,
                max_frame: 64,
                timeout_ms: 500,
            };
            let e = EchoServer::start(&spec).err().unwrap();
            assert!(
                e.to_string().starts_with(
                    "SCTP unavailable in this kernel: SCTP is not available in this kernel"
                ),
                "{e}"
            );
        }
    }
}
