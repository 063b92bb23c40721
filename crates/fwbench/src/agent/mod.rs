//! `fwbench agent`: one role of a trial, driven over stdin/stdout by the controller.
//!
//! Frames in on stdin, frames out on stdout, logs on stderr. The phase machine from
//! `proto` decides what is allowed. Every role is a [`RoleRun`] made by [`setup`], the
//! one registry of roles; what a role set up is undone when it is dropped, so when
//! stdin closes (the controller is gone, even by SIGKILL), at teardown, or after a
//! failed setup, the same code undoes it.
//!
//! Owns: the frame loop and the role registry. Must not: know what a role does
//! (that is [`gateway`] and [`traffic`]).

mod gateway;
mod netstate;
mod traffic;

use proto::{
    encode, AgentError, AgentInfo, AgentPhase, CodecError, ErrorKind, FrameReader, FromAgent,
    RoleResults, RoleSpec, ToAgent, PROTOCOL_VERSION,
};
use std::io::Write;
use std::sync::mpsc;

/// How far a role has got: what it counts (messages, packets, sessions) and whether
/// it has finished on its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub count: u64,
    pub done: bool,
}

/// A role that is set up. Dropping it without [`RoleRun::stop`] undoes its setup.
pub trait RoleRun {
    /// Start the measured phase (traffic sources send from here on).
    fn start(&mut self);
    /// Progress while running (polled by the controller).
    fn progress(&self) -> Progress {
        Progress::default()
    }
    /// Stop, undo the setup and report.
    fn stop(self: Box<Self>) -> Result<RoleResults, AgentError>;
}

/// The registry of roles: what each role spec sets up.
fn setup(spec: &RoleSpec) -> Result<Box<dyn RoleRun>, AgentError> {
    use crate::agent::traffic::{role, Sink};
    use crate::agent::traffic::{
        EchoClients, EchoServer, ExternalClient, ExternalServer, PingClient,
    };
    use crate::agent::traffic::{Reflector, SessionClient, TcpServer, UdpSource};
    Ok(match spec {
        RoleSpec::Gateway(g) => Box::new(gateway::GatewayRole::setup(g)?),
        RoleSpec::EchoServer(s) => role(EchoServer::start(s))?,
        RoleSpec::EchoClient(c) => role(EchoClients::connect(c))?,
        RoleSpec::UdpSource(s) => role(UdpSource::setup(s))?,
        RoleSpec::UdpSink(s) => role(Sink::start(s))?,
        RoleSpec::Ping(s) => role(PingClient::setup(s))?,
        RoleSpec::Reflector(s) => role(Reflector::start(s))?,
        RoleSpec::TcpServer(s) if s.external.is_some() => role(ExternalServer::start(s))?,
        RoleSpec::TcpServer(s) => role(TcpServer::start(s))?,
        RoleSpec::SessionClient(c) if c.external.is_some() => role(ExternalClient::setup(c))?,
        RoleSpec::SessionClient(c) => role(SessionClient::setup(c))?,
    })
}

enum Input {
    Msg(ToAgent),
    Bad(String),
    Eof,
}

pub fn run(cpus: Option<Vec<usize>>) -> anyhow::Result<()> {
    // Ctrl-C in the terminal reaches the whole process group; the controller decides
    // how to stop.
    crate::sys::ignore_sigint();
    if let Some(c) = &cpus {
        ::traffic::sys::set_affinity(c)
            .map_err(|e| anyhow::anyhow!("pinning agent to CPUs {c:?}: {e}"))?;
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || read_stdin(tx));
    let mut out = std::io::stdout().lock();
    let mut send = |m: FromAgent| -> bool {
        match encode(&m) {
            Ok(b) => out.write_all(&b).and_then(|_| out.flush()).is_ok(),
            Err(e) => {
                tracing::error!("cannot encode {}: {e}", m.name());
                false
            }
        }
    };
    let mut phase = AgentPhase::AwaitHello;
    // Dropping the role undoes its setup: on every return below.
    let mut role: Option<Box<dyn RoleRun>> = None;
    let mut sampler: Option<crate::host::probe::Sampler> = None;
    loop {
        let msg = match rx.recv().unwrap_or(Input::Eof) {
            Input::Msg(m) => m,
            Input::Bad(why) => {
                send(FromAgent::Error(error(ErrorKind::Protocol, why)));
                continue;
            }
            Input::Eof => {
                if role.is_some() {
                    tracing::warn!("controller gone (stdin closed): undoing setup");
                }
                drop(role.take());
                return Ok(());
            }
        };
        tracing::info!(phase = phase.name(), "received {}", msg.name());
        let next = match phase.on_message(&msg) {
            Ok(p) => p,
            Err(e) => {
                send(FromAgent::Error(error(ErrorKind::Protocol, e.to_string())));
                continue;
            }
        };
        let reply = match msg {
            ToAgent::Hello { .. } => FromAgent::Hello {
                version: PROTOCOL_VERSION,
                agent: agent_info(),
            },
            ToAgent::Setup(spec) => match setup(&spec) {
                Ok(r) => {
                    role = Some(r);
                    FromAgent::Ready
                }
                Err(e) => {
                    phase = phase.setup_failed();
                    send(FromAgent::Error(e));
                    continue;
                }
            },
            ToAgent::Start => {
                sampler = Some(crate::host::probe::Sampler::start());
                if let Some(r) = role.as_mut() {
                    r.start();
                }
                FromAgent::Started
            }
            ToAgent::Poll => {
                let Progress { count, done } =
                    role.as_ref().map(|r| r.progress()).unwrap_or_default();
                FromAgent::Progress { count, done }
            }
            ToAgent::Stop => {
                let samples = sampler.take().map(|s| s.stop()).unwrap_or_default();
                let results = match role.take() {
                    Some(r) => r.stop(),
                    None => Err(error(ErrorKind::Internal, "stop without a role".into())),
                };
                match results {
                    Ok(results) => FromAgent::Results { results, samples },
                    Err(e) => {
                        phase = next;
                        send(FromAgent::Error(e));
                        continue;
                    }
                }
            }
            ToAgent::Time => FromAgent::Time {
                realtime_ns: crate::clock::realtime_ns(),
            },
            ToAgent::Teardown => {
                drop(role.take());
                send(FromAgent::Done);
                return Ok(());
            }
        };
        phase = next;
        if !send(reply) {
            drop(role.take());
            return Ok(());
        }
    }
}

fn error(kind: ErrorKind, message: String) -> AgentError {
    AgentError { kind, message }
}

fn read_stdin(tx: mpsc::Sender<Input>) {
    for frame in FrameReader::new(std::io::stdin().lock()) {
        let input = match frame {
            Ok(m) => Input::Msg(m),
            // The controller is gone in the middle of a frame: just the end.
            Err(CodecError::Truncated(_)) => break,
            // The stream cannot be resynchronised after a bad frame.
            Err(e) => Input::Bad(e.to_string()),
        };
        if tx.send(input).is_err() {
            return;
        }
    }
    let _ = tx.send(Input::Eof);
}

pub fn agent_info() -> AgentInfo {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    AgentInfo {
        fwbench_version: crate::version::VERSION.into(),
        pid: std::process::id(),
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpus: ::traffic::sys::get_affinity()
            .map(|c| ::traffic::sys::format_cpus(&c))
            .unwrap_or_default(),
    }
}
