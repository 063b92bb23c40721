//! Starting agents and talking to them: the controller's side of the protocol.
//!
//! A launcher is a command prefix (`ip netns exec NS` locally; `ssh HOST` later),
//! so local and remote agents share one code path and no control port exists.
//! What a launcher prints is read with a cap ([`crate::testbed::bounded`]): a command
//! run through it, and an agent's output before the protocol's first frame; a
//! testbed file's launcher that does not start an agent is bad input (exit 2).

use crate::testbed::bounded::{self, BeforeFirstFrame};
use crate::testbed::remote::{self, Remote};
use anyhow::{anyhow, bail, Context, Result};
use proto::{
    encode, reply_to, AgentInfo, CodecError, ControllerPhase, Decoder, ErrorKind, FromAgent, Reply,
    ReplyTo, Request, ToAgent, PROTOCOL_VERSION,
};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
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

/// What broke an agent's output stream (read by [`read_frames`]).
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// What came before the first frame was not the protocol.
    #[error("not an fwbench agent: {why}; its output starts with {start}")]
    NotAnAgent { why: String, start: String },
    /// A frame after the first was broken.
    #[error(transparent)]
    Codec(#[from] CodecError),
}

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
    /// How long reaching the host may take: each command run through the launcher
    /// (copying the binary: ten times this) and an agent's hello. A host that does not
    /// answer within it is an error naming the host ([`HOST_TIMEOUT`] unless a testbed
    /// file says `timeout`).
    pub timeout: Duration,
}

/// How long reaching a host may take, unless a testbed file says otherwise.
pub const HOST_TIMEOUT: Duration = Duration::from_secs(30);

impl Launcher {
    /// Run inside a local network namespace.
    pub fn netns(ns: &str) -> Launcher {
        Launcher {
            prefix: vec!["ip".into(), "netns".into(), "exec".into(), ns.into()],
            host: ns.into(),
            place: format!("netns {ns}"),
            remote: None,
            timeout: HOST_TIMEOUT,
        }
    }

    /// How the host is reached, for messages: `ssh`, `netns`, `local` or `launcher`
    /// (any other command prefix).
    pub fn transport(&self) -> &'static str {
        if remote::is_ssh(&self.prefix) {
            "ssh"
        } else if self.prefix.first().is_some_and(|p| p == "ip")
            && self.prefix.get(1).is_some_and(|p| p == "netns")
        {
            "netns"
        } else if self.prefix == ["env"] {
            "local"
        } else {
            "launcher"
        }
    }

    /// "host H (ssh: `ssh root@h`)": where and how, for messages.
    pub fn describe(&self) -> String {
        format!("host {} ({}: {})", self.host, self.transport(), self.place)
    }

    /// The argv that runs `args` on the host (quoted for `ssh`).
    pub fn argv(&self, args: &[String]) -> Vec<String> {
        remote::command_argv(&self.prefix, args)
    }

    /// Run `args` on the host to completion within `timeout`; its stdout (an error
    /// carries argv, status and stderr). Each stream is read up to
    /// [`bounded::MAX_LAUNCHER_OUTPUT`] bytes; more is an error.
    pub fn run(&self, args: &[&str], input: Option<&str>, timeout: Duration) -> Result<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let argv = self.argv(&args);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        let input = match input {
            Some(t) => bounded::Input::Text(t.to_string()),
            None => bounded::Input::Null,
        };
        let out = bounded::run(cmd, &argv, &self.host, input, timeout)?;
        if !out.status.success() {
            return Err(bounded::LauncherError::Failed {
                argv: argv.join(" "),
                status: out.status,
                stderr: bounded::stderr_text(&out.stderr),
            }
            .into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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

/// A host's clock against the controller's (CLOCK_REALTIME): host − controller, and
/// how far off that may be (half the round trip of the exchange it came from).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ClockOffset {
    pub offset_ns: i64,
    pub uncertainty_ns: i64,
    /// Exchanges it was chosen from.
    pub exchanges: u32,
}

impl ClockOffset {
    /// NTP-style: each exchange is (controller sent, agent's clock, controller got);
    /// the one with the smallest round trip bounds the offset tightest.
    pub fn from_exchanges(x: &[(i64, i64, i64)]) -> Option<ClockOffset> {
        let (t0, t1, t2) = x.iter().copied().min_by_key(|(t0, _, t2)| t2 - t0)?;
        Some(ClockOffset {
            offset_ns: t1 - (t0 + (t2 - t0) / 2),
            uncertainty_ns: (t2 - t0 + 1) / 2,
            exchanges: x.len() as u32,
        })
    }

    /// Offset and uncertainty for people: "+0.012 ms ± 0.040 ms".
    pub fn describe(&self) -> String {
        format!(
            "{:+.3} ms ± {:.3} ms",
            self.offset_ns as f64 / 1e6,
            self.uncertainty_ns as f64 / 1e6
        )
    }
}

pub struct Agent {
    pub role: &'static str,
    /// Where the agent runs and how it is reached ([`Launcher::describe`]), for messages.
    pub host: String,
    transport: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Result<Reply, StreamError>>,
    /// Its launcher is a user's (a testbed file's command line, not a namespace or
    /// this machine): one that starts no agent is bad input.
    user_launcher: bool,
    phase: ControllerPhase,
    /// The id of the last request sent (ids count up from 1).
    last_id: u64,
    /// How long the agent may take to answer a request.
    reply_timeout: Duration,
    pub info: AgentInfo,
}

/// How long an agent may take to answer a control message.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Test hook (`FWBENCH_TEST_REPLY_TIMEOUT_MS`): a shorter reply timeout, for tests of
/// late replies. Unset in real runs.
fn reply_timeout() -> Duration {
    std::env::var("FWBENCH_TEST_REPLY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(REPLY_TIMEOUT)
}

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
        // The agent is ours alone: its own process group (a Ctrl-C, SIGTERM or SIGHUP
        // to the terminal's group reaches the controller, which tears down in order),
        // and SIGTERM when its spawning thread dies (the controller's main thread or a
        // run's long-lived thread: see `die_with_parent`), which the agent handles
        // like the end of its input: it undoes its setup and exits.
        cmd.process_group(0);
        ::traffic::sys::die_with_parent(&mut cmd);
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
            host: launcher.describe(),
            transport: launcher.transport(),
            user_launcher: launcher.remote.is_some(),
            stdin: child.stdin.take(),
            child,
            rx,
            phase: ControllerPhase::AwaitHello,
            last_id: 0,
            reply_timeout: launcher.timeout.min(reply_timeout()),
            info: AgentInfo::default(),
        };
        let hello = agent
            .request(ToAgent::Hello {
                version: PROTOCOL_VERSION,
            })
            .map_err(|e| {
                // A usage error names the host already (it is printed alone).
                if e.is::<crate::error::UsageError>() {
                    e
                } else {
                    e.context(format!("reaching the {role} {}", launcher.describe()))
                }
            })?;
        agent.reply_timeout = reply_timeout();
        match hello {
            FromAgent::Hello { agent: info, .. } => agent.info = info,
            other => bail!("{role} agent answered hello with {}", other.name()),
        }
        tracing::info!(role, pid = agent.info.pid, cpus = %agent.info.cpus, "agent up ({})", launcher.place);
        Ok(agent)
    }

    /// Send a message as a new request; its id.
    fn send(&mut self, msg: &ToAgent) -> Result<u64> {
        self.last_id += 1;
        let id = self.last_id;
        let bytes = encode(&Request {
            id,
            msg: msg.clone(),
        })?;
        let role = self.role;
        let w = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("{role} agent: control channel closed"))?;
        w.write_all(&bytes)
            .and_then(|_| w.flush())
            .with_context(|| format!("{role} agent: sending {}", msg.name()))?;
        Ok(id)
    }

    /// The reply to request `id`. A reply to an earlier request (one given up after
    /// its timeout) is logged and discarded, never taken for this one.
    fn recv(&mut self, id: u64, timeout: Duration) -> Result<FromAgent> {
        let role = self.role;
        let deadline = std::time::Instant::now() + timeout;
        let msg = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let reply = match self.rx.recv_timeout(left) {
                Ok(Ok(m)) => m,
                Ok(Err(e @ StreamError::NotAnAgent { .. })) if self.user_launcher => {
                    return Err(crate::error::usage(format!(
                        "{role} agent on {}: {e}",
                        self.host
                    )))
                }
                Ok(Err(e)) => bail!("{role} agent: {e}"),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    bail!(
                        "{role} agent did not answer within {:.1}s",
                        timeout.as_secs_f64()
                    )
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // Give the process a moment to be reaped: its status says why.
                    let mut status = None;
                    for _ in 0..50 {
                        status = self.child.try_wait().ok().flatten();
                        if status.is_some() {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    bail!(
                        "{role} agent exited unexpectedly ({})",
                        self.why_exited(
                            status.map(|s| s.to_string()),
                            status.and_then(|s| s.code())
                        )
                    )
                }
            };
            match reply_to(id, reply.id) {
                ReplyTo::This => break reply.msg,
                // An error about the stream itself is the answer to whatever waits.
                ReplyTo::Unsolicited if matches!(reply.msg, FromAgent::Error(_)) => {
                    break reply.msg
                }
                ReplyTo::Earlier | ReplyTo::Unsolicited => {
                    tracing::warn!(
                        role,
                        "discarding a late {} reply to request {} (waiting for request {id})",
                        reply.msg.name(),
                        reply.id
                    );
                }
                ReplyTo::Unknown => bail!(
                    "{role} agent: protocol violation: reply to request {} which was never sent (last sent: {id})",
                    reply.id
                ),
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
        let id = self.send(&msg)?;
        let reply = self.recv(id, self.reply_timeout)?;
        tracing::info!(role = self.role, "← {}", reply.name());
        Ok(reply)
    }

    /// Send `msg` to every agent first, then read their replies in the same order, so
    /// they answer at about the same time (live-interval tallies of sender and sink).
    pub fn request_each(agents: &mut [&mut Agent], msg: &ToAgent) -> Result<Vec<FromAgent>> {
        let mut ids = Vec::with_capacity(agents.len());
        for a in agents.iter_mut() {
            ids.push(a.send(msg)?);
        }
        agents
            .iter_mut()
            .zip(ids)
            .map(|(a, id)| a.recv(id, REPLY_TIMEOUT))
            .collect()
    }

    /// Estimate the host's clock offset from `rounds` `Time` exchanges.
    pub fn clock_offset(&mut self, rounds: u32) -> Result<ClockOffset> {
        let mut x = Vec::new();
        for _ in 0..rounds {
            let t0 = crate::clock::realtime_ns();
            let id = self.send(&ToAgent::Time)?;
            let reply = self.recv(id, self.reply_timeout)?;
            let t2 = crate::clock::realtime_ns();
            let FromAgent::Time { realtime_ns } = reply else {
                bail!("{} agent answered time with {}", self.role, reply.name());
            };
            x.push((t0, realtime_ns, t2));
        }
        ClockOffset::from_exchanges(&x).ok_or_else(|| anyhow!("no clock exchanges"))
    }

    /// `Some(why)` if the agent process has exited: its status, the host and the
    /// transport (and, for ssh's 255, that the connection was lost).
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(s)) => Some(self.why_exited(Some(s.to_string()), s.code())),
            _ => None,
        }
    }

    fn why_exited(&self, status: Option<String>, code: Option<i32>) -> String {
        let lost = if self.transport == "ssh" && code == Some(255) {
            ": the SSH connection to the host was lost or refused (ssh exits 255 on a \
             connection error)"
        } else {
            ""
        };
        format!(
            "{}; {} {}{lost}",
            status.unwrap_or_else(|| "status unknown".into()),
            self.role,
            self.host
        )
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
/// Before the first frame at most [`bounded::MAX_LAUNCHER_OUTPUT`] bytes are read, and
/// anything that is not a frame is [`StreamError::NotAnAgent`], quoting its start.
fn read_frames(mut r: impl Read, tx: mpsc::Sender<Result<Reply, StreamError>>) {
    let mut dec = Decoder::new();
    let mut first = BeforeFirstFrame::new();
    let mut buf = vec![0u8; 64 * 1024];
    let broken = |first: &BeforeFirstFrame, e: CodecError| {
        if first.before() {
            StreamError::NotAnAgent {
                why: e.to_string(),
                start: first.quoted(),
            }
        } else {
            StreamError::Codec(e)
        }
    };
    loop {
        loop {
            match dec.next_frame::<Reply>() {
                Ok(Some(m)) => {
                    first.framed();
                    if tx.send(Ok(m)).is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Err(broken(&first, e)));
                    return;
                }
            }
        }
        let n = match r.read(&mut buf) {
            Ok(n) if n > 0 => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(_) | Err(_) => {
                if let Err(e) = dec.finish() {
                    let _ = tx.send(Err(broken(&first, e)));
                }
                return;
            }
        };
        if first.over_cap(&buf[..n]) {
            let why = format!(
                "more than {} bytes before the protocol's first frame",
                bounded::MAX_LAUNCHER_OUTPUT
            );
            let start = first.quoted();
            let _ = tx.send(Err(StreamError::NotAnAgent { why, start }));
            return;
        }
        dec.push(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_offset_keeps_the_tightest_exchange() {
        // Host 5 ms ahead; round trips of 4, 1 and 9 ms (asymmetric on the slow ones).
        let x = [
            (0, 5_003_000, 4_000_000),
            (10_000_000, 15_500_000, 11_000_000),
            (20_000_000, 25_001_000, 29_000_000),
        ];
        let c = ClockOffset::from_exchanges(&x).unwrap();
        assert_eq!(c.offset_ns, 5_000_000);
        assert_eq!(c.uncertainty_ns, 500_000);
        assert_eq!(c.exchanges, 3);
        assert_eq!(c.describe(), "+5.000 ms ± 0.500 ms");
        assert!(ClockOffset::from_exchanges(&[]).is_none());
    }

    /// A launcher of this command line on `host`, said to run at `place`.
    fn launcher(prefix: &[&str], host: &str, place: &str) -> Launcher {
        Launcher {
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
            host: host.into(),
            place: place.into(),
            remote: None,
            timeout: HOST_TIMEOUT,
        }
    }

    /// A launcher of a fake agent: `sh -c script`.
    fn fake(script: &str, host: &str, place: &str) -> Launcher {
        launcher(&["sh", "-c", script, "fake-agent"], host, place)
    }

    /// A fake agent (a shell script replaying frames) answers setup after the
    /// controller gave up on it: the late `ready` must not be taken as the answer to
    /// the teardown that follows (the defect of protocol 4).
    #[test]
    fn a_late_setup_reply_is_not_the_teardown_reply() {
        let dir = tempfile::tempdir().unwrap();
        let frame = |id, msg| encode(&Reply { id, msg }).unwrap();
        let hello = FromAgent::Hello {
            version: PROTOCOL_VERSION,
            agent: AgentInfo::default(),
        };
        std::fs::write(dir.path().join("1"), frame(1, hello)).unwrap();
        std::fs::write(dir.path().join("2"), frame(2, FromAgent::Ready)).unwrap();
        std::fs::write(dir.path().join("3"), frame(3, FromAgent::Done)).unwrap();
        let d = dir.path().display();
        let script =
            format!("cat {d}/1; sleep 0.8; cat {d}/2; sleep 0.3; cat {d}/3; exec cat >/dev/null");
        let launcher = fake(&script, "fake", "a fake agent");
        let mut agent = Agent::spawn(&launcher, "fake", None).unwrap();
        agent.reply_timeout = Duration::from_millis(300);
        let spec = proto::RoleSpec::EchoServer(proto::EchoServerSpec {
            proto: proto::Proto::Tcp,
            mode: proto::ServerMode::Threads,
            listen: "127.0.0.1".parse().unwrap(),
            port: 1,
            clients: 1,
            max_frame: 64,
            timeout_ms: 500,
        });
        let e = agent.request(ToAgent::Setup(spec)).unwrap_err();
        assert!(e.to_string().contains("did not answer"), "{e}");
        agent.reply_timeout = Duration::from_secs(5);
        // Before request ids, this took the late `ready` for the teardown's answer
        // (and failed: 'ready' is not allowed in phase 'await-ready' … or worse).
        let reply = agent.request(ToAgent::Teardown).unwrap();
        assert_eq!(reply, FromAgent::Done);
        assert_eq!(agent.phase, ControllerPhase::Closed);
    }

    /// An agent reached over ssh whose process exits 255 (a dropped connection): the
    /// message names the role, the host and the transport, and says what 255 means.
    #[test]
    fn a_dropped_ssh_connection_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let hello = FromAgent::Hello {
            version: PROTOCOL_VERSION,
            agent: AgentInfo::default(),
        };
        std::fs::write(
            dir.path().join("1"),
            encode(&Reply { id: 1, msg: hello }).unwrap(),
        )
        .unwrap();
        let script = format!(
            "cat {}/1; head -c 1 >/dev/null; exit 255",
            dir.path().display()
        );
        let launcher = fake(&script, "gw.lab", "ssh gw.lab");
        let mut agent = Agent::spawn(&launcher, "gateway", None).unwrap();
        // What `Launcher::transport` says for an ssh prefix.
        agent.transport = "ssh";
        agent.host = "host gw.lab (ssh: ssh gw.lab)".into();
        let _ = agent.send(&ToAgent::Time);
        let why = (0..200)
            .find_map(|_| {
                std::thread::sleep(Duration::from_millis(10));
                agent.exited()
            })
            .expect("the fake agent exits");
        assert!(
            why.contains("255")
                && why.contains("gateway host gw.lab (ssh: ssh gw.lab)")
                && why.contains("SSH connection to the host was lost"),
            "{why}"
        );
    }

    /// What `read_frames` sends for the bytes `input`.
    fn frames_of(input: Vec<u8>) -> Vec<Result<Reply, StreamError>> {
        let (tx, rx) = mpsc::channel();
        read_frames(std::io::Cursor::new(input), tx);
        rx.into_iter().collect()
    }

    #[test]
    fn output_that_is_not_the_protocol_is_not_an_agent() {
        let got = frames_of(b"Welcome to lab host 3\n\x1b[0m".to_vec());
        let e = got[0].as_ref().unwrap_err().to_string();
        assert!(
            e.starts_with("not an fwbench agent: control frame of ")
                && e.ends_with("its output starts with \"Welcome to lab host 3\\n\\u{1b}[0m\""),
            "{e}"
        );
        // /dev/zero: an empty frame is no message.
        let e = frames_of(vec![0; 1 << 20])[0]
            .as_ref()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not an fwbench agent: malformed") && e.len() < 1000,
            "{e}"
        );
        // Frames announcing more (the MORE bit) are read up to the cap, no further.
        let junk: Vec<u8> = [&[0x80, 0, 0, 16][..], &[b' '; 16]]
            .concat()
            .repeat(1 << 16);
        let got = frames_of(junk);
        let e = got[0].as_ref().unwrap_err().to_string();
        assert!(
            e.contains("more than 65536 bytes before the protocol's first frame")
                && e.contains("… (131072 bytes)")
                && e.len() < 500,
            "{e}"
        );
        // After a first frame, frames of any size (up to the codec's caps) pass.
        let hello = FromAgent::Hello {
            version: PROTOCOL_VERSION,
            agent: AgentInfo::default(),
        };
        let mut ok = encode(&Reply { id: 1, msg: hello }).unwrap();
        let big = FromAgent::Error(proto::AgentError {
            kind: ErrorKind::Io,
            message: "x".repeat(1 << 20),
        });
        ok.extend(encode(&Reply { id: 2, msg: big }).unwrap());
        let got = frames_of(ok);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|r| r.is_ok()));
        let after = frames_of(
            [
                encode(&Reply {
                    id: 1,
                    msg: FromAgent::Done,
                })
                .unwrap(),
                vec![0; 8],
            ]
            .concat(),
        );
        assert!(
            matches!(after[1], Err(StreamError::Codec(_))),
            "{:?}",
            after[1]
        );
    }

    #[test]
    fn transports_are_named() {
        let l = |p: &[&str]| launcher(p, "h", "p");
        assert_eq!(l(&["ssh", "root@h"]).transport(), "ssh");
        assert_eq!(l(&["ip", "netns", "exec", "x"]).transport(), "netns");
        assert_eq!(l(&["env"]).transport(), "local");
        assert_eq!(l(&["sh", "-c", "x"]).transport(), "launcher");
        assert_eq!(Launcher::netns("x").describe(), "host x (netns: netns x)");
    }
}
