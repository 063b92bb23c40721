//! `fwbench agent`: one role of a trial, driven over stdin/stdout by the controller.
//!
//! Frames in on stdin, frames out on stdout, logs on stderr. The phase machine from
//! `proto` decides what is allowed. Every role is a [`RoleRun`] made by its spec's
//! [`SetUp`] (implemented by the workload family that owns the spec); what a role set up is undone when it is dropped, so when
//! stdin closes (the controller is gone, even by SIGKILL), at teardown, or after a
//! failed setup, the same code undoes it.
//!
//! Owns: the frame loop and the [`SetUp`] seam. Must not: know what a role does
//! (that is [`gateway`] and [`traffic`]) or name a role (the families do).

mod events;
mod gateway;
mod netstate;
pub(crate) mod traffic;

use proto::{
    encode, AgentError, AgentInfo, AgentPhase, CodecError, ErrorKind, FrameReader, FromAgent,
    Reply, Request, RoleResults, RoleSpec, ToAgent, PROTOCOL_VERSION,
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
    /// Cumulative counters for live intervals (`t_ns` is filled in by the frame loop);
    /// by default the progress count.
    fn tally(&self) -> proto::Tally {
        proto::Tally {
            count: self.progress().count,
            ..Default::default()
        }
    }
    /// Stop, undo the setup and report.
    fn stop(self: Box<Self>) -> Result<RoleResults, AgentError>;
}

/// What the agent runs for one role spec. Each spec type implements it beside the
/// workload family that owns it (`workloads::echo`, `workloads::packet`,
/// `workloads::conn`; the gateway in [`gateway`]): the family decides which traffic
/// object plays its roles, and the agent names none.
pub(crate) trait SetUp {
    fn set_up(&self) -> SetUpResult;
}

/// A role set up, or why not.
pub(crate) type SetUpResult = Result<Box<dyn RoleRun>, AgentError>;

/// Set up the role a spec asks for (its type's [`SetUp`]).
fn setup(spec: &RoleSpec) -> SetUpResult {
    proto::with_role_spec!(spec, s => s.set_up())
}

enum Input {
    Msg(Request),
    Bad(String),
    Eof,
}

pub fn run(cpus: Option<Vec<usize>>) -> anyhow::Result<()> {
    if let Some(c) = &cpus {
        ::traffic::sys::set_affinity(c)
            .map_err(|e| anyhow::anyhow!("pinning agent to CPUs {c:?}: {e}"))?;
    }
    let (tx, rx) = mpsc::channel();
    // SIGTERM or SIGHUP (a closed terminal, a cancelled CI job, the controller's death
    // through the parent-death signal) is the end of the input: undo the setup, exit.
    let on_signal = tx.clone();
    if let Err(e) = ctrlc::set_handler(move || {
        let _ = on_signal.send(Input::Eof);
    }) {
        tracing::warn!("cannot handle SIGTERM/SIGHUP: {e}");
    }
    // Ctrl-C in a terminal reaches a whole process group; the controller decides how
    // to stop (set after the handler above, which would take SIGINT too).
    crate::sys::ignore_sigint();
    std::thread::spawn(move || read_stdin(tx));
    let mut out = std::io::stdout().lock();
    // Every reply carries the id of the request it answers (0: none). A reply that
    // cannot be sent is fatal and loud: the agent undoes its setup (the role is
    // dropped on return) and exits non-zero with the reason; never a silent exit 0.
    let mut send = |id: u64, m: FromAgent| -> anyhow::Result<()> {
        let name = m.name();
        let bytes = encode(&Reply { id, msg: m })
            .map_err(|e| anyhow::anyhow!("agent: cannot encode the {name} reply: {e}"))?;
        out.write_all(&bytes)
            .and_then(|_| out.flush())
            .map_err(|e| {
                anyhow::anyhow!(
                    "agent: cannot send the {name} reply ({} bytes) to the controller: {e}",
                    bytes.len()
                )
            })
    };
    let mut phase = AgentPhase::AwaitHello;
    // Dropping the role undoes its setup: on every return below.
    let mut role: Option<Box<dyn RoleRun>> = None;
    let mut sampler: Option<crate::host::probe::Sampler> = None;
    let mut started: Option<std::time::Instant> = None;
    loop {
        let (id, msg) = match rx.recv().unwrap_or(Input::Eof) {
            Input::Msg(Request { id, msg }) => (id, msg),
            Input::Bad(why) => {
                send(0, FromAgent::Error(error(ErrorKind::Protocol, why)))?;
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
        let name = msg.name();
        tracing::info!(phase = phase.name(), "received {name}");
        let next = match phase.on_message(&msg) {
            Ok(p) => p,
            Err(e) => {
                send(
                    id,
                    FromAgent::Error(error(ErrorKind::Protocol, e.to_string())),
                )?;
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
                    send(id, FromAgent::Error(e))?;
                    continue;
                }
            },
            ToAgent::Start => {
                sampler = Some(crate::host::probe::Sampler::start());
                started = Some(std::time::Instant::now());
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
            ToAgent::Tally => FromAgent::Tally(proto::Tally {
                t_ns: started.map_or(0, |t| t.elapsed().as_nanos() as u64),
                ..role.as_ref().map(|r| r.tally()).unwrap_or_default()
            }),
            ToAgent::Stop => {
                let samples = sampler.take().map(|s| s.stop()).unwrap_or_default();
                let results = match role.take() {
                    Some(r) => r.stop(),
                    None => Err(error(ErrorKind::Internal, "stop without a role".into())),
                };
                match results {
                    Ok(results) => FromAgent::Results {
                        results,
                        samples: test_hook_samples(samples),
                    },
                    Err(e) => {
                        phase = next;
                        send(id, FromAgent::Error(e))?;
                        continue;
                    }
                }
            }
            ToAgent::Time => FromAgent::Time {
                realtime_ns: crate::clock::realtime_ns(),
            },
            ToAgent::Teardown => {
                drop(role.take());
                return send(id, FromAgent::Done);
            }
        };
        phase = next;
        send(id, reply)?;
    }
}

/// Test hook (`FWBENCH_TEST_AGENT_SAMPLES=N`): N synthetic samples appended to the
/// results, for tests of results far over one frame. Unset in real runs.
fn test_hook_samples(mut samples: Vec<proto::MetricSample>) -> Vec<proto::MetricSample> {
    let n: usize = std::env::var("FWBENCH_TEST_AGENT_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    samples.extend((0..n).map(|i| proto::MetricSample {
        t_s: i as f64 / 8.0,
        metric: format!("test.cpu{}", i % 64),
        value: (i % 1000) as f64 / 4.0,
    }));
    samples
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
