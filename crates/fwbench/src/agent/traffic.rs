//! The traffic roles: thin wrappers that put the `traffic` crate's generators, sinks
//! and servers behind [`RoleRun`].
//!
//! Owns: how each traffic object is driven (started, polled, tallied, stopped) and
//! stopping it when the role is dropped without a stop (undo). Must not: generate or
//! count traffic itself, or name roles (its results' type says which role's they are:
//! `RoleResults: From`; each spec's `agent::SetUp`, in its workload family, says which
//! traffic object plays it).

use super::{error, Progress, RoleRun};
use proto::{AgentError, ErrorKind, IfCounters, RoleResults, Tally, UdpSinkResults, UdpSinkSpec};
pub use traffic::conn::{SessionClient, TcpServer};
pub use traffic::echo::{EchoClients, EchoServer};
pub use traffic::external::{ExternalClient, ExternalServer};
pub use traffic::ping::{PingClient, Reflector};
pub use traffic::udp::{UdpSink, UdpSource};
pub use traffic::xsk::{XskModeRequest, XskSink, XskSource};
use traffic::TrafficError;

/// A traffic object as the agent drives it.
pub trait Traffic: Sized {
    fn start(&mut self) {}
    fn progress(&self) -> Progress {
        Progress::default()
    }
    /// Cumulative counters for live intervals (default: the progress count).
    fn tally(&self) -> Tally {
        Tally {
            count: self.progress().count,
            ..Default::default()
        }
    }
    /// Stop and report, as the role its results' type is ([`RoleResults`]'s `From`).
    fn stop(self) -> Result<RoleResults, TrafficError>;
}

/// A traffic role: stopped by [`RoleRun::stop`], or — undo — when dropped.
pub struct Role<T: Traffic>(Option<T>);

/// The role of a traffic object just set up; a failed setup becomes the agent's error.
pub fn role<T: Traffic + 'static>(
    set_up: Result<T, TrafficError>,
) -> Result<Box<dyn RoleRun>, AgentError> {
    match set_up {
        Ok(t) => Ok(Box::new(Role(Some(t)))),
        Err(e) => Err(traffic_error(e)),
    }
}

fn traffic_error(e: TrafficError) -> AgentError {
    let kind = match e {
        TrafficError::SctpUnavailable(_) | TrafficError::XdpUnavailable(_) => {
            ErrorKind::Unavailable
        }
        TrafficError::BadSpec(_) => ErrorKind::BadSetup,
        TrafficError::Io { .. } => ErrorKind::Io,
    };
    error(kind, e.to_string())
}

impl<T: Traffic> RoleRun for Role<T> {
    fn start(&mut self) {
        if let Some(t) = self.0.as_mut() {
            t.start();
        }
    }
    fn progress(&self) -> Progress {
        self.0.as_ref().map(T::progress).unwrap_or_default()
    }
    fn tally(&self) -> Tally {
        self.0.as_ref().map(T::tally).unwrap_or_default()
    }
    fn stop(mut self: Box<Self>) -> Result<RoleResults, AgentError> {
        match self.0.take() {
            Some(t) => t.stop().map_err(|e| error(ErrorKind::Io, e.to_string())),
            None => Err(error(ErrorKind::Internal, "stopped twice".into())),
        }
    }
}

impl<T: Traffic> Drop for Role<T> {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            drop(t.stop());
        }
    }
}

fn counted(count: u64) -> Progress {
    Progress { count, done: false }
}

/// The tally of a packet counter: (packets, bytes).
fn packets((count, bytes): (u64, u64)) -> Tally {
    Tally {
        count,
        bytes,
        ..Default::default()
    }
}

fn until((count, done): (u64, bool)) -> Progress {
    Progress { count, done }
}

/// Servers that only stop (they cannot fail to): their results as they are.
macro_rules! servers {
    ($($t:ident),*) => {
        $(impl Traffic for $t {
            fn stop(self) -> Result<RoleResults, TrafficError> {
                Ok($t::stop(self).into())
            }
        })*
    };
}
servers!(EchoServer, Reflector, TcpServer, ExternalServer);

/// Session clients (ours and curl's): started, done when their sessions are.
macro_rules! session_clients {
    ($($t:ident),*) => {
        $(impl Traffic for $t {
            fn start(&mut self) {
                $t::start(self)
            }
            fn progress(&self) -> Progress {
                until($t::progress(self))
            }
            fn stop(self) -> Result<RoleResults, TrafficError> {
                $t::stop(self).map(|r| Box::new(r).into())
            }
        })*
    };
}
session_clients!(SessionClient, ExternalClient);

/// The ping client: started, counted by itself, done when its probes are.
impl Traffic for PingClient {
    fn start(&mut self) {
        PingClient::start(self)
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        PingClient::stop(self).map(RoleResults::from)
    }
}

impl Traffic for EchoClients {
    fn start(&mut self) {
        EchoClients::start(self)
    }
    fn progress(&self) -> Progress {
        counted(EchoClients::progress(self))
    }
    fn tally(&self) -> Tally {
        let (count, bytes, rtt_sum_ns) = self.live();
        Tally {
            count,
            bytes,
            rtt_sum_ns,
            ..Default::default()
        }
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        Ok(EchoClients::stop(self).into())
    }
}

/// A packet sender: started, its packets tallied, its results a UDP source's (`$results`
/// picks them from what the sender returns).
macro_rules! packet_source {
    ($t:ident, $results:expr) => {
        impl Traffic for $t {
            fn start(&mut self) {
                $t::start(self)
            }
            fn tally(&self) -> Tally {
                packets(self.live())
            }
            fn stop(self) -> Result<RoleResults, TrafficError> {
                $t::stop(self).map(|r| $results(r).into())
            }
        }
    };
}
packet_source!(UdpSource, std::convert::identity);
// The AF_XDP sender reports as a UDP source, with its sockets' mode.
packet_source!(XskSource, |r: traffic::xsk::XskSourceResults| {
    let mut out = r.results;
    out.xdp = Some(Box::new(proto::XdpSockets {
        kicks_again: Some(r.kicks_again),
        ..xdp_sockets(r.xsk)
    }));
    out
});

/// Frames an AF_XDP sink's kernel dropped before its sockets, as `XDP_STATISTICS`
/// define them: the RX ring full plus every other drop (`dropped` already holds the
/// fill-ring-empty drops that `fill_ring_empty` counts again: not added).
fn kernel_drops(d: &traffic::sys::xsk::XskRxDrops) -> u64 {
    d.rx_ring_full + d.dropped
}

/// The AF_XDP sockets of a result: interface, queues and mode, as the sender has them
/// (woken by `sendto`; the sink adds how its program attached and its drops).
fn xdp_sockets(x: traffic::xsk::XskInfo) -> proto::XdpSockets {
    proto::XdpSockets {
        ifname: x.ifname,
        queues: x.queues,
        mode: x.mode.name().into(),
        need_wakeup: true,
        attach: None,
        kernel_drops: None,
        kicks_again: None,
    }
}

/// A packet sink as the agent reads it: the socket sink and the AF_XDP one.
pub trait PacketSink: Sized {
    fn progress(&self) -> u64;
    fn live(&self) -> (u64, u64);
    fn results(self) -> Result<UdpSinkResults, TrafficError>;
}

/// A sink's inherent methods as [`PacketSink`]'s (`$results` picks the UDP sink
/// results from what it returns at stop).
macro_rules! packet_sink {
    ($t:ident, $results:expr) => {
        impl PacketSink for $t {
            fn progress(&self) -> u64 {
                $t::progress(self)
            }
            fn live(&self) -> (u64, u64) {
                $t::live(self)
            }
            fn results(self) -> Result<UdpSinkResults, TrafficError> {
                self.stop().map($results)
            }
        }
    };
}
packet_sink!(UdpSink, std::convert::identity);
// The AF_XDP sink: as the socket sink, plus its sockets' mode, attach mode and drops.
packet_sink!(XskSink, |x: traffic::xsk::XskSinkResults| {
    let mut r = x.results;
    r.xdp = Some(Box::new(proto::XdpSockets {
        need_wakeup: false, // (the sink's rings are polled, never woken)
        attach: Some(format!("{:?}", x.attach).to_lowercase()),
        kernel_drops: Some(kernel_drops(&x.drops)),
        ..xdp_sockets(x.xsk)
    }));
    r
});

/// A packet sink and its namespace's interface counters at Start.
pub struct CountedSink<S> {
    sink: S,
    interfaces: Vec<IfCounters>,
    _steered: Steered,
}

/// The receive processing of the sink namespace's interfaces steered (RPS) to the
/// CPUs the sink runs on, set back when dropped. Without it a veth delivers what the
/// gateway forwards onto the backlog of the CPU that forwarded it — the gateway's,
/// full of the flood it cannot keep up with — and drops most of it there: a max-rate
/// flood through 1 000 nft rules reached the sink at 5 kpps, steered at 79 kpps (the
/// gateway's own rate). An unpinned sink (every CPU) gets no steering (`0`), so each
/// trial sets the same state whatever an earlier, killed one left. A sink in the
/// gateway's namespace (topology input) steers nothing: that is the gateway agent's
/// (to a pinned gateway's CPUs; an unpinned one's rules run where packets arrive, as
/// on forward), and steering it to the sink's CPUs would run the rules there (beside
/// the sender, on a 2-core machine: a trial limited by the rules was said to be
/// limited by fwbench's sender).
struct Steered(Vec<(std::path::PathBuf, String)>);

impl Steered {
    fn to_own_cpus(spec: &UdpSinkSpec) -> Steered {
        if spec.in_gateway {
            return Steered(vec![]);
        }
        let own = ::traffic::sys::get_affinity().unwrap_or_default();
        // The machine's online CPUs (not `available_parallelism`: this process is pinned).
        // SAFETY: sysconf reads a system value; no memory is passed.
        let all =
            usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).unwrap_or(0);
        let mask = if own.is_empty() || own.len() >= all {
            "0".to_string()
        } else {
            super::gateway::rps_mask(&own)
        };
        let mut set = vec![];
        let Ok(dir) = std::fs::read_dir("/sys/class/net") else {
            return Steered(set);
        };
        for e in dir.flatten().filter(|e| e.file_name() != "lo") {
            let Ok(queues) = std::fs::read_dir(e.path().join("queues")) else {
                continue;
            };
            for q in queues.flatten() {
                if !q.file_name().to_string_lossy().starts_with("rx-") {
                    continue;
                }
                let f = q.path().join("rps_cpus");
                let Ok(old) = std::fs::read_to_string(&f) else {
                    continue;
                };
                if old.trim() != mask && std::fs::write(&f, &mask).is_ok() {
                    set.push((f, old.trim().to_string()));
                }
            }
        }
        Steered(set)
    }
}

impl Drop for Steered {
    fn drop(&mut self) {
        for (f, old) in &self.0 {
            let _ = std::fs::write(f, old);
        }
    }
}

/// The socket sink.
pub type Sink = CountedSink<UdpSink>;

/// The AF_XDP sink (`--sink xdp`); reports as the socket sink does (its mode and
/// drops are not yet recorded).
pub type XdpSink = CountedSink<XskSink>;

impl CountedSink<UdpSink> {
    pub fn start(spec: &UdpSinkSpec) -> Result<Sink, TrafficError> {
        Ok(CountedSink {
            _steered: Steered::to_own_cpus(spec),
            sink: UdpSink::start(spec)?,
            interfaces: vec![],
        })
    }
}

impl CountedSink<XskSink> {
    pub fn start(spec: &UdpSinkSpec) -> Result<XdpSink, TrafficError> {
        let ifname = spec.xdp.clone().unwrap_or_default();
        let x = traffic::xsk::XskSinkSpec {
            ifname,
            port: spec.port,
            flows: spec.flows,
            queues: spec.threads.max(1),
            owd_groups: spec.owd_groups.clone(),
        };
        Ok(CountedSink {
            sink: XskSink::start(&x, XskModeRequest::Auto)?,
            interfaces: crate::host::probe::interfaces(),
            _steered: Steered(vec![]),
        })
    }
}

impl<S: PacketSink> Traffic for CountedSink<S> {
    fn start(&mut self) {
        self.interfaces = crate::host::probe::interfaces();
    }
    fn progress(&self) -> Progress {
        counted(self.sink.progress())
    }
    fn tally(&self) -> Tally {
        packets(self.sink.live())
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        let mut r = self.sink.results()?;
        r.interfaces =
            crate::host::probe::since(&crate::host::probe::interfaces(), &self.interfaces);
        Ok(r.into())
    }
}

#[cfg(test)]
mod tests {
    /// A veth in copy mode without fill-ring frames: each dropped frame is counted in
    /// `rx_dropped` and again in `rx_fill_ring_empty_descs` — once here (it was 2×).
    #[test]
    fn an_xdp_sinks_kernel_drops_count_each_frame_once() {
        let d = traffic::sys::xsk::XskRxDrops {
            rx_ring_full: 3,
            fill_ring_empty: 10,
            dropped: 10,
        };
        assert_eq!(super::kernel_drops(&d), 13);
    }
}
