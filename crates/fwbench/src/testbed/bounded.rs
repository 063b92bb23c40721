//! What a launcher prints, read with a cap. A launcher is a command line from a testbed
//! file, so what comes back may be anything: a login banner, a shell's error, or
//! `cat /dev/zero`. At most [`MAX_LAUNCHER_OUTPUT`] bytes of each of its streams are
//! read (more ends the command at once, its whole process group killed), and a message
//! quotes at most [`SHOWN_LEN`] bytes of it, control characters escaped.
//!
//! Owns: running a command through a launcher to its end within a deadline and the cap
//! ([`run`]), the cap on an agent's output before its first frame (used by
//! the `launcher` module), and how foreign text is shown in a message ([`shown`],
//! [`quote`], [`stderr_text`]). Must not: interpret what was printed (callers do), or
//! import another module of the testbed (launcher and remote both build on this).

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Most bytes read from a launcher's stdout or stderr (a command it runs, or an agent
/// before the protocol's first frame). What fwbench runs there prints a few lines; an
/// agent's hello is a few hundred bytes. More is not an fwbench host or agent.
pub const MAX_LAUNCHER_OUTPUT: usize = 64 << 10;

/// Most bytes of foreign text (a value of a file, what a launcher printed) quoted in
/// a message; longer text is cut there and its length said.
pub const SHOWN_LEN: usize = 200;

/// Most bytes of a failed command's stderr shown whole in its error (ssh's warnings
/// and its error fit); longer stderr is cut to [`SHOWN_LEN`].
pub const STDERR_SHOWN: usize = 2048;

/// `s` for a message: as it is when short and printable; otherwise its control
/// characters escaped and, past [`SHOWN_LEN`] bytes, cut with its length said.
pub fn shown(s: &str) -> String {
    cut(s, SHOWN_LEN, |c| c.is_control())
}

/// Bytes a program printed, for a message: in double quotes, escaped (no raw control
/// character, no invalid UTF-8), at most [`SHOWN_LEN`] bytes of them.
pub fn quote(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(SHOWN_LEN + 4)];
    let text = String::from_utf8_lossy(head);
    let mut end = text.len().min(SHOWN_LEN);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let esc: String = text[..end].escape_debug().collect();
    if end < text.len() || head.len() < bytes.len() {
        format!("\"{esc}\"… ({} bytes)", bytes.len())
    } else {
        format!("\"{esc}\"")
    }
}

/// A failed command's stderr for its error: trimmed, as it is when short (lines kept,
/// other control characters escaped); cut to [`SHOWN_LEN`] bytes past [`STDERR_SHOWN`].
pub fn stderr_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let max = if text.len() <= STDERR_SHOWN {
        STDERR_SHOWN
    } else {
        SHOWN_LEN
    };
    cut(text, max, |c| c.is_control() && c != '\n' && c != '\t')
}

fn cut(s: &str, max: usize, escape: impl Fn(char) -> bool) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + 16);
    for c in s[..end].chars() {
        if escape(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    if end < s.len() {
        out += &format!("… ({} bytes)", s.len());
    }
    out
}

/// What a command's stdin gets.
pub enum Input {
    Null,
    File(std::fs::File),
    Text(String),
}

/// What a command run through a launcher printed (each stream at most the cap), and
/// how it exited.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// How running a command through a launcher failed.
#[derive(Debug, thiserror::Error)]
pub enum LauncherError {
    #[error("cannot run `{prog}`: {source}")]
    Spawn {
        prog: String,
        source: std::io::Error,
    },
    #[error("waiting for `{argv}`: {source}")]
    Wait {
        argv: String,
        source: std::io::Error,
    },
    #[error(
        "host {host} did not answer within {secs:.0} s through `{argv}` (the testbed \
         file's `timeout` sets this)"
    )]
    TimedOut {
        host: String,
        secs: f64,
        argv: String,
    },
    #[error(
        "`{argv}` printed more than {max} bytes on its {stream}, more than fwbench reads \
         from a launcher (is it one? a host's shell must run the command it is given and \
         print only what that prints); it starts with {start}"
    )]
    TooMuch {
        argv: String,
        stream: &'static str,
        max: usize,
        start: String,
    },
    #[error("`{argv}` failed ({status}): {stderr}")]
    Failed {
        argv: String,
        status: ExitStatus,
        stderr: String,
    },
}

/// Run `cmd` (argv `argv`, reaching `host`) to its end: each output stream read up
/// to [`MAX_LAUNCHER_OUTPUT`] bytes; more, or a run past `timeout`, kills it and its
/// process group (it leads its own). Output still arriving 0.5 s after it exited (a
/// daemonised grandchild holding a pipe) is not waited for.
pub fn run(
    mut cmd: Command,
    argv: &[String],
    host: &str,
    input: Input,
    timeout: Duration,
) -> Result<Output, LauncherError> {
    run_capped(&mut cmd, argv, host, input, timeout, MAX_LAUNCHER_OUTPUT)
}

/// Which stream a reader thread read.
#[derive(Clone, Copy)]
enum Stream {
    Stdout = 0,
    Stderr = 1,
}

fn run_capped(
    cmd: &mut Command,
    argv: &[String],
    host: &str,
    input: Input,
    timeout: Duration,
    max: usize,
) -> Result<Output, LauncherError> {
    let joined = || argv.join(" ");
    let (stdin, text) = match input {
        Input::Null => (Stdio::null(), None),
        Input::File(f) => (Stdio::from(f), None),
        Input::Text(t) => (Stdio::piped(), Some(t)),
    };
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // The calling thread waits for the command below, so it outlives it.
    traffic::sys::die_with_parent(cmd);
    let mut child = cmd.spawn().map_err(|source| LauncherError::Spawn {
        prog: argv.first().cloned().unwrap_or_default(),
        source,
    })?;
    let (tx, rx) = mpsc::channel();
    read_capped_on_thread(child.stdout.take(), Stream::Stdout, max, tx.clone());
    read_capped_on_thread(child.stderr.take(), Stream::Stderr, max, tx);
    if let (Some(text), Some(mut w)) = (text, child.stdin.take()) {
        // On a thread: a command that does not read must not block us (the deadline
        // or its exit ends the write with EPIPE).
        let _ = std::thread::Builder::new().spawn(move || {
            let _ = w.write_all(text.as_bytes());
        });
    }
    let mut got: [Option<Vec<u8>>; 2] = [None, None];
    let deadline = Instant::now() + timeout;
    let too_much = |child: &mut Child, s: Stream, bytes: &[u8]| {
        kill_group(child);
        LauncherError::TooMuch {
            argv: joined(),
            stream: ["stdout", "stderr"][s as usize],
            max,
            start: quote(bytes),
        }
    };
    let status = loop {
        while let Ok((s, bytes, over)) = rx.try_recv() {
            if over {
                return Err(too_much(&mut child, s, &bytes));
            }
            got[s as usize] = Some(bytes);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                kill_group(&mut child);
                return Err(LauncherError::TimedOut {
                    host: host.to_string(),
                    secs: timeout.as_secs_f64(),
                    argv: joined(),
                });
            }
            Err(source) => {
                kill_group(&mut child);
                return Err(LauncherError::Wait {
                    argv: joined(),
                    source,
                });
            }
        }
    };
    let grace = Instant::now() + Duration::from_millis(500);
    while got.iter().any(Option::is_none) {
        let left = grace.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((s, bytes, true)) => return Err(too_much(&mut child, s, &bytes)),
            Ok((s, bytes, false)) => got[s as usize] = Some(bytes),
            Err(_) => break,
        }
    }
    let [stdout, stderr] = got;
    Ok(Output {
        status,
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
    })
}

/// Read `pipe` to its end or to `max` bytes and one more (then it is `true`: too much).
fn read_capped_on_thread<R: Read + Send + 'static>(
    pipe: Option<R>,
    which: Stream,
    max: usize,
    tx: mpsc::Sender<(Stream, Vec<u8>, bool)>,
) {
    let Some(pipe) = pipe else { return };
    // If no thread can be made, the pipe is dropped and the command sees EPIPE.
    let _ = std::thread::Builder::new().spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.take(max as u64 + 1).read_to_end(&mut buf);
        let over = buf.len() > max;
        let _ = tx.send((which, buf, over));
    });
}

/// Kill the child and its process group, and reap it.
fn kill_group(child: &mut Child) {
    // The child leads its own group and is not reaped yet: the id is still ours.
    let _ = traffic::sys::send_signal(child.id(), libc::SIGKILL, true);
    let _ = child.kill();
    let _ = child.wait();
}

/// Counts what an agent printed before the protocol's first frame, keeping its start
/// for the message if it is not an agent.
#[derive(Debug, Default)]
pub struct BeforeFirstFrame {
    /// Bytes read so far; `None` once a frame was decoded (no cap after that).
    read: Option<usize>,
    start: Vec<u8>,
}

impl BeforeFirstFrame {
    pub fn new() -> Self {
        BeforeFirstFrame {
            read: Some(0),
            start: Vec::new(),
        }
    }

    /// Note `bytes` read; whether more than [`MAX_LAUNCHER_OUTPUT`] came before a frame
    /// now (then [`Self::quoted`] is what to show of it).
    pub fn over_cap(&mut self, bytes: &[u8]) -> bool {
        let Some(n) = self.read.as_mut() else {
            return false;
        };
        *n += bytes.len();
        let keep = (SHOWN_LEN + 4)
            .saturating_sub(self.start.len())
            .min(bytes.len());
        self.start.extend_from_slice(&bytes[..keep]);
        *n > MAX_LAUNCHER_OUTPUT
    }

    /// A frame was decoded: what follows is the protocol's (capped per frame).
    pub fn framed(&mut self) {
        self.read = None;
    }

    /// Whether no frame came yet.
    pub fn before(&self) -> bool {
        self.read.is_some()
    }

    /// The start of what came, quoted.
    pub fn quoted(&self) -> String {
        let mut q = quote(&self.start);
        if let Some(n) = self.read.filter(|n| *n > self.start.len()) {
            // `quote` saw only the kept start: say how much came in all.
            if let Some(i) = q.rfind("… (") {
                q.truncate(i);
            }
            q += &format!("… ({n} bytes)");
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, input: Input, timeout: Duration) -> Result<Output, LauncherError> {
        let argv: Vec<String> = ["sh", "-c", script].iter().map(|s| s.to_string()).collect();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        run(cmd, &argv, "h", input, timeout)
    }

    #[test]
    fn output_is_read_up_to_the_cap() {
        let o = sh(
            "cat; echo err >&2",
            Input::Text("hi\n".into()),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(
            (&o.stdout[..], &o.stderr[..]),
            (&b"hi\n"[..], &b"err\n"[..])
        );
        assert!(o.status.success());
        let t = Instant::now();
        for (script, stream) in [
            ("cat /dev/zero", "stdout"),
            ("cat /dev/zero >&2", "stderr"),
            ("head -c 70000 /dev/zero; sleep 5", "stdout"),
        ] {
            let e = sh(script, Input::Null, Duration::from_secs(20)).unwrap_err();
            let m = e.to_string();
            assert!(matches!(e, LauncherError::TooMuch { .. }), "{m}");
            assert!(
                m.contains(&format!("on its {stream}")) && m.contains("\"\\0\\0") && m.len() < 2000,
                "{m}"
            );
            assert!(!m.contains('\0'), "{m}");
        }
        assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    }

    #[test]
    fn a_command_past_its_deadline_is_killed_with_its_group() {
        let t = Instant::now();
        let e = sh("sleep 5 & sleep 5", Input::Null, Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, LauncherError::TimedOut { .. }), "{e}");
        assert!(
            e.to_string().contains("host h did not answer within 0 s"),
            "{e}"
        );
        assert!(t.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn foreign_text_is_cut_and_escaped() {
        assert_eq!(shown("root@198.19.254.2"), "root@198.19.254.2");
        assert_eq!(shown("a\u{0}b\nc"), "a\\0b\\nc");
        let s = shown(&"é".repeat(1000));
        assert!(
            s.len() < SHOWN_LEN + 20 && s.ends_with("… (2000 bytes)"),
            "{s}"
        );
        assert_eq!(quote(b"ok\x1b[2J\xff"), "\"ok\\u{1b}[2J\u{fffd}\"");
        let q = quote(&[b'y'; 100_000]);
        assert!(
            q.len() < SHOWN_LEN + 30 && q.ends_with("… (100000 bytes)"),
            "{q}"
        );
        assert_eq!(
            stderr_text(b" Permission denied.\r\nbye\n"),
            "Permission denied.\\r\nbye"
        );
        assert!(stderr_text(&[b'x'; 50_000]).len() < SHOWN_LEN + 30);
    }

    #[test]
    fn an_agent_may_print_little_before_its_first_frame() {
        let mut b = BeforeFirstFrame::new();
        assert!(!b.over_cap(b"Welcome\n"));
        assert!(b.before());
        assert_eq!(b.quoted(), "\"Welcome\\n\"");
        assert!(b.over_cap(&vec![0u8; MAX_LAUNCHER_OUTPUT]));
        let e = b.quoted();
        assert!(
            e.starts_with("\"Welcome\\n\\0")
                && e.ends_with(&format!("… ({} bytes)", MAX_LAUNCHER_OUTPUT + 8)),
            "{e}"
        );
        let mut b = BeforeFirstFrame::new();
        b.framed();
        assert!(!b.over_cap(&vec![0u8; 2 * MAX_LAUNCHER_OUTPUT]));
        assert!(!b.before());
    }
}
