//! The traffic roles: thin wrappers that put the `traffic` crate's generators, sinks
//! and servers behind [`RoleRun`].
//!
//! Owns: which results each traffic object reports as, and stopping it when the
//! role is dropped without a stop (undo). Must not: generate or count traffic itself.

use super::{error, Progress, RoleRun};
use proto::{AgentError, ErrorKind, IfCounters, RoleResults, Tally, UdpSinkSpec};
pub use traffic::conn::{SessionClient, TcpServer};
pub use traffic::echo::{EchoClients, EchoServer};
pub use traffic::external::{ExternalClient, ExternalServer};
pub use traffic::ping::{PingClient, Reflector};
pub use traffic::udp::{UdpSink, UdpSource};
pub use traffic::xsk::{XskModeRequest, XskSource};
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

fn until((count, done): (u64, bool)) -> Progress {
    Progress { count, done }
}

impl Traffic for EchoServer {
    fn stop(self) -> Result<RoleResults, TrafficError> {
        Ok(RoleResults::EchoServer(EchoServer::stop(self)))
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
        Ok(RoleResults::EchoClient(EchoClients::stop(self)))
    }
}

impl Traffic for UdpSource {
    fn start(&mut self) {
        UdpSource::start(self)
    }
    fn tally(&self) -> Tally {
        let (count, bytes) = self.live();
        Tally {
            count,
            bytes,
            ..Default::default()
        }
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        UdpSource::stop(self).map(RoleResults::UdpSource)
    }
}

/// The AF_XDP sender reports as a UDP source (its mode is not yet recorded).
impl Traffic for XskSource {
    fn start(&mut self) {
        XskSource::start(self)
    }
    fn tally(&self) -> Tally {
        let (count, bytes) = self.live();
        Tally {
            count,
            bytes,
            ..Default::default()
        }
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        let r = XskSource::stop(self)?;
        let mut out = r.results;
        out.xdp = Some(proto::XdpSockets {
            ifname: r.xsk.ifname,
            queues: r.xsk.queues,
            mode: r.xsk.mode.name().into(),
            need_wakeup: true,
            attach: None,
            kernel_drops: None,
        });
        Ok(RoleResults::UdpSource(out))
    }
}

/// The sink and its namespace's interface counters at Start.
pub struct Sink {
    sink: UdpSink,
    interfaces: Vec<IfCounters>,
}

impl Sink {
    pub fn start(spec: &UdpSinkSpec) -> Result<Sink, TrafficError> {
        Ok(Sink {
            sink: UdpSink::start(spec)?,
            interfaces: vec![],
        })
    }
}

impl Traffic for Sink {
    fn start(&mut self) {
        self.interfaces = crate::host::probe::interfaces();
    }
    fn progress(&self) -> Progress {
        counted(self.sink.progress())
    }
    fn tally(&self) -> Tally {
        let (count, bytes) = self.sink.live();
        Tally {
            count,
            bytes,
            ..Default::default()
        }
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        let mut r = self.sink.stop()?;
        r.interfaces =
            crate::host::probe::since(&crate::host::probe::interfaces(), &self.interfaces);
        Ok(RoleResults::UdpSink(r))
    }
}

/// The AF_XDP sink (`--sink xdp`) and its namespace's interface counters at Start;
/// reports as the socket sink does, plus its sockets' mode, attach mode and drops.
pub struct XdpSink {
    sink: traffic::xsk::XskSink,
    interfaces: Vec<IfCounters>,
}

impl XdpSink {
    pub fn start(spec: &UdpSinkSpec) -> Result<XdpSink, TrafficError> {
        let ifname = spec.xdp.clone().unwrap_or_default();
        let x = traffic::xsk::XskSinkSpec {
            ifname,
            port: spec.port,
            flows: spec.flows,
            queues: spec.threads.max(1),
        };
        Ok(XdpSink {
            sink: traffic::xsk::XskSink::start(&x, XskModeRequest::Auto)?,
            interfaces: crate::host::probe::interfaces(),
        })
    }
}

impl Traffic for XdpSink {
    fn start(&mut self) {
        self.interfaces = crate::host::probe::interfaces();
    }
    fn progress(&self) -> Progress {
        counted(self.sink.progress())
    }
    fn tally(&self) -> Tally {
        let (count, bytes) = self.sink.live();
        Tally {
            count,
            bytes,
            ..Default::default()
        }
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        let x = self.sink.stop()?;
        let mut r = x.results;
        r.xdp = Some(proto::XdpSockets {
            ifname: x.xsk.ifname,
            queues: x.xsk.queues,
            mode: x.xsk.mode.name().into(),
            need_wakeup: false, // (the sink's rings are polled, never woken)
            attach: Some(format!("{:?}", x.attach).to_lowercase()),
            kernel_drops: Some(x.drops.rx_ring_full + x.drops.fill_ring_empty + x.drops.dropped),
        });
        r.interfaces =
            crate::host::probe::since(&crate::host::probe::interfaces(), &self.interfaces);
        Ok(RoleResults::UdpSink(r))
    }
}

impl Traffic for PingClient {
    fn start(&mut self) {
        PingClient::start(self)
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        PingClient::stop(self).map(RoleResults::Ping)
    }
}

impl Traffic for Reflector {
    fn stop(self) -> Result<RoleResults, TrafficError> {
        Ok(RoleResults::Reflector(Reflector::stop(self)))
    }
}

impl Traffic for TcpServer {
    fn stop(self) -> Result<RoleResults, TrafficError> {
        Ok(RoleResults::TcpServer(TcpServer::stop(self)))
    }
}

impl Traffic for ExternalServer {
    fn stop(self) -> Result<RoleResults, TrafficError> {
        Ok(RoleResults::TcpServer(ExternalServer::stop(self)))
    }
}

impl Traffic for SessionClient {
    fn start(&mut self) {
        SessionClient::start(self)
    }
    fn progress(&self) -> Progress {
        until(SessionClient::progress(self))
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        SessionClient::stop(self).map(|r| RoleResults::SessionClient(Box::new(r)))
    }
}

impl Traffic for ExternalClient {
    fn start(&mut self) {
        ExternalClient::start(self)
    }
    fn progress(&self) -> Progress {
        until(ExternalClient::progress(self))
    }
    fn stop(self) -> Result<RoleResults, TrafficError> {
        ExternalClient::stop(self).map(|r| RoleResults::SessionClient(Box::new(r)))
    }
}
