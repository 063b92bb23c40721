//! Starting agents and talking to them: the controller's side of the protocol.
//!
//! A launcher is a command prefix (`ip netns exec NS` locally; `ssh HOST` later),
//! so local and remote agents share one code path and no control port exists.

use crate::testbed::remote::{self, Remote};
use anyhow::{anyhow, bail, Context, Result};
use proto::{
    encode, AgentInfo, ControllerPhase, ErrorKind, FrameReader, FromAgent, ToAgent,
    PROTOCOL_VERSION,
};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// An agent reported a failure; carried as data so callers can tell "unavailable"
/// (recorded) from other errors (trial failed).
#[derive(Debug)]
pub struct AgentFailed {
    pub role: &'static str,
    pub kind: ErrorKind,
    pub message: String,
}

impl std::fmt::Display for AgentFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} agent: {}", self.role, self.message)
    }
}
impl std::error::Error for AgentFailed {}

/// How to start a program on one host of a testbed: a command prefix.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The argv that runs the rest of a command line there.
    pub prefix: Vec<String>,
    /// The host's name (a namespace, a host name).
    pub host: String,
    /// Where, for people and the trial record ("netns fwb-…-cli").
    pub place: String,
    /// Set when the host does not share this machine's files: the binary is copied
    /// there (see [`crate::testbed::remote`]) and `ssh` commands are quoted.
    pub remote: Option<Remote>,
}

impl Launcher {
    /// Run inside a local network namespace.
    pub fn netns(ns: &str) -> Launcher {
        Launcher {
            prefix: vec!["ip".into(), "netns".into(), "exec".into(), ns.into()],
            host: ns.into(),
            place: format!("netns {ns}"),
            remote: None,
        }
    }

    /// The argv that runs `args` on the host (quoted for `ssh`).
    pub fn argv(&self, args: &[String]) -> Vec<String> {
        remote::command_argv(&self.prefix, args)
    }

    /// The fwbench binary on the host: this very file locally; on a remote host its
    /// cached copy, put there first if missing.
    pub fn fwbench_exe(&self) -> Result<String> {
        match &self.remote {
            None => Ok(self_exe().display().to_string()),
            Some(r) => remote::ensure_binary(&self.prefix, r)
                .with_context(|| format!("putting fwbench on {}", self.place)),
        }
    }
}

pub struct Agent {
    pub role: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Result<FromAgent, String>>,
    phase: ControllerPhase,
    pub info: AgentInfo,
}

/// How long an agent may take to answer a control message.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

impl Agent {
    /// Start an agent and exchange hellos.
    pub fn spawn(launcher: &Launcher, role: &'static str, cpus: Option<&str>) -> Result<Agent> {
        let mut args = Vec::new();
        let log = std::env::var("RUST_LOG").ok();
        if let (Some(filter), Some(_)) = (&log, &launcher.remote) {
            // The environment does not cross ssh: pass the log filter on its line.
            args.extend(["env".to_string(), format!("RUST_LOG={filter}")]);
        }
        args.push(launcher.fwbench_exe()?);
        args.push("agent".into());
        if let Some(c) = cpus {
            args.extend(["--cpus".to_string(), c.to_string()]);
        }
        let argv = launcher.argv(&args);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(filter) = log {
            cmd.env("RUST_LOG", filter);
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting the {role} agent ({})", launcher.place))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("agent stdout missing"))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_frames(stdout, tx));
        let mut agent = Agent {
            role,
            stdin: child.stdin.take(),
            child,
            rx,
            phase: ControllerPhase::AwaitHello,
            info: AgentInfo::default(),
        };
        match agent.request(ToAgent::Hello {
            version: PROTOCOL_VERSION,
        })? {
            FromAgent::Hello { agent: info, .. } => agent.info = info,
            other => bail!("{role} agent answered hello with {}", other.name()),
        }
        tracing::info!(role, pid = agent.info.pid, cpus = %agent.info.cpus, "agent up ({})", launcher.place);
        Ok(agent)
    }

    fn send(&mut self, msg: &ToAgent) -> Result<()> {
        let bytes = encode(msg)?;
        let role = self.role;
        let w = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("{role} agent: control channel closed"))?;
        w.write_all(&bytes)
            .and_then(|_| w.flush())
            .with_context(|| format!("{role} agent: sending {}", msg.name()))
    }

    fn recv(&mut self, timeout: Duration) -> Result<FromAgent> {
        let role = self.role;
        let msg = match self.rx.recv_timeout(timeout) {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => bail!("{role} agent: {e}"),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                bail!("{role} agent did not answer within {}s", timeout.as_secs())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait().ok().flatten();
                bail!(
                    "{role} agent exited unexpectedly{}",
                    status.map(|s| format!(" ({s})")).unwrap_or_default()
                )
            }
        };
        self.phase = self
            .phase
            .on_reply(&msg)
            .map_err(|e| anyhow!("{role} agent: {e}"))?;
        if let FromAgent::Error(e) = msg {
            return Err(AgentFailed {
                role,
                kind: e.kind,
                message: e.message,
            }
            .into());
        }
        Ok(msg)
    }

    /// Send a message and wait for its reply (an `Error` reply becomes `AgentFailed`).
    pub fn request(&mut self, msg: ToAgent) -> Result<FromAgent> {
        tracing::info!(role = self.role, "→ {}", msg.name());
        self.send(&msg)?;
        let reply = self.recv(REPLY_TIMEOUT)?;
        tracing::info!(role = self.role, "← {}", reply.name());
        Ok(reply)
    }

    /// `Some(status)` if the agent process has exited.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(s)) => Some(s.to_string()),
            _ => None,
        }
    }

    /// Ask the agent to undo its setup and exit; kill it (by its PID) if it will not.
    pub fn teardown(mut self) -> Result<()> {
        let res = if self.phase == ControllerPhase::Closed {
            Ok(())
        } else {
            self.request(ToAgent::Teardown).map(|_| ())
        };
        drop(self.stdin.take());
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return res;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!(
            role = self.role,
            "agent did not exit; killing pid {}",
            self.child.id()
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
        res
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // Dropped without teardown (error path): closing stdin makes it undo and exit.
        drop(self.stdin.take());
        for _ in 0..250 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The running fwbench binary, for starting agents and helpers. `/proc/PID/exe`
/// keeps pointing at this very binary even if the file is replaced (an upgrade or a
/// rebuild during a long run), so every agent of a run runs the same code.
pub fn self_exe() -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/proc/{}/exe", std::process::id()))
}

/// Decoded frames from an agent's stdout into `tx`, until the stream ends or breaks.
fn read_frames(r: impl Read, tx: mpsc::Sender<Result<FromAgent, String>>) {
    for frame in FrameReader::new(r) {
        if tx.send(frame.map_err(|e| e.to_string())).is_err() {
            return;
        }
    }
}
