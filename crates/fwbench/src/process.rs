//! Other programs: whether one is installed, and running one to completion.
//!
//! Owns: the binary's one process runner ([`Cmd`]): argv, optional stdin text, an
//! optional deadline after which the child's whole process group is killed, captured
//! stdout/stderr, and a typed [`ProcessError`] that carries argv, exit status and
//! stderr. Must not: interpret what a program printed (callers do), or run anything
//! through a shell on its own. The PATH lookup itself is `traffic::program`.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use traffic::program::find_program;

/// A program name resolves: a path to an executable file, or one in PATH or the sbin dirs.
pub fn program_exists(prog: &str) -> bool {
    find_program(prog).is_some()
}

/// A program to run to completion with its output captured.
#[derive(Debug, Clone)]
pub struct Cmd<'a> {
    prog: &'a str,
    args: &'a [&'a str],
    input: Option<&'a str>,
    timeout: Option<Duration>,
    c_locale: bool,
}

/// What a finished program printed, and how it exited.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.status.success()
    }
}

/// How running a program failed.
#[derive(Debug)]
pub enum Failure {
    /// It could not be started (not installed, not executable…).
    Spawn(std::io::Error),
    /// Writing its stdin failed.
    Input(std::io::Error),
    /// Waiting for it failed.
    Wait(std::io::Error),
    /// It outlived its deadline; its process group was killed.
    TimedOut(Duration),
    /// It exited unsuccessfully.
    Exit(Finished),
}

/// A program that failed, with the evidence a user needs: argv, exit status, stderr.
#[derive(Debug)]
pub struct ProcessError {
    pub argv: Vec<String>,
    pub failure: Failure,
}

impl ProcessError {
    fn prog(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }

    /// One short line for a table cell: the first line the program printed and its
    /// status, or what kept it from finishing.
    pub fn one_line(&self) -> String {
        let prog = self.prog();
        match &self.failure {
            Failure::Spawn(e) | Failure::Input(e) => format!("{prog}: {e}"),
            Failure::Wait(e) => format!("{prog}: wait failed: {e}"),
            Failure::TimedOut(t) => format!("timed out after {}s", t.as_secs_f32()),
            Failure::Exit(f) => match first_line(&f.stderr).or_else(|| first_line(&f.stdout)) {
                Some(l) => format!("{l} ({})", f.status),
                None => f.status.to_string(),
            },
        }
    }
}

impl std::fmt::Display for ProcessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prog = self.prog();
        match &self.failure {
            Failure::Spawn(_) => write!(f, "cannot run {prog} (is it installed?)"),
            Failure::Input(_) => write!(f, "writing to {prog}"),
            Failure::Wait(e) => write!(f, "{e}"),
            Failure::TimedOut(t) => write!(
                f,
                "`{}` timed out after {}s",
                self.argv.join(" "),
                t.as_secs_f32()
            ),
            Failure::Exit(out) => write!(
                f,
                "`{}` failed ({}): {}",
                self.argv.join(" "),
                out.status,
                out.stderr.trim()
            ),
        }
    }
}

impl std::error::Error for ProcessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.failure {
            Failure::Spawn(e) | Failure::Input(e) => Some(e),
            _ => None,
        }
    }
}

impl<'a> Cmd<'a> {
    pub fn new(prog: &'a str, args: &'a [&'a str]) -> Self {
        Cmd {
            prog,
            args,
            input: None,
            timeout: None,
            c_locale: false,
        }
    }

    /// Text written to the program's stdin (otherwise stdin is /dev/null).
    pub fn input(mut self, text: &'a str) -> Self {
        self.input = Some(text);
        self
    }

    /// Kill the program (and its process group: it leads its own) after `t`.
    /// Output still arriving 0.5 s after it ended (a daemonised grandchild holding a
    /// pipe) is not waited for.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Run with `LC_ALL=C`, for output we parse.
    pub fn c_locale(mut self) -> Self {
        self.c_locale = true;
        self
    }

    fn error(&self, failure: Failure) -> ProcessError {
        let argv = std::iter::once(self.prog).chain(self.args.iter().copied());
        ProcessError {
            argv: argv.map(str::to_owned).collect(),
            failure,
        }
    }

    /// Run; Ok only on exit status 0.
    pub fn run(&self) -> Result<Finished, ProcessError> {
        let f = self.finish()?;
        if f.success() {
            Ok(f)
        } else {
            Err(self.error(Failure::Exit(f)))
        }
    }

    /// Run to the end, whatever the exit status; Err only if it could not be started,
    /// fed, waited for, or outlived its deadline.
    pub fn finish(&self) -> Result<Finished, ProcessError> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(self.prog);
        cmd.args(self.args)
            .stdin(if self.input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.c_locale {
            cmd.env("LC_ALL", "C");
        }
        if self.timeout.is_some() {
            cmd.process_group(0);
        }
        // The calling thread waits for the program below, so it outlives it.
        traffic::sys::die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| self.error(Failure::Spawn(e)))?;
        // Readers run on their own threads so a chatty child cannot block on a full pipe.
        let (tx, rx) = mpsc::channel();
        spawn_reader(child.stdout.take(), false, tx.clone());
        spawn_reader(child.stderr.take(), true, tx);
        if let (Some(text), Some(mut w)) = (self.input, child.stdin.take()) {
            if let Err(e) = w.write_all(text.as_bytes()) {
                drop(w);
                self.kill(&mut child);
                return Err(self.error(Failure::Input(e)));
            }
            // `w` drops here: the program sees the end of its input.
        }
        let status = match self.timeout {
            None => child.wait().map_err(|e| self.error(Failure::Wait(e)))?,
            Some(t) => self.wait_until(&mut child, Instant::now() + t)?,
        };
        let mut out = Finished {
            status,
            stdout: String::new(),
            stderr: String::new(),
        };
        let grace = self
            .timeout
            .map(|_| Instant::now() + Duration::from_millis(500));
        loop {
            let got = match grace {
                None => rx.recv().ok(),
                Some(g) => rx
                    .recv_timeout(g.saturating_duration_since(Instant::now()))
                    .ok(),
            };
            match got {
                Some((true, text)) => out.stderr = text,
                Some((false, text)) => out.stdout = text,
                None => break,
            }
        }
        Ok(out)
    }

    fn wait_until(&self, child: &mut Child, deadline: Instant) -> Result<ExitStatus, ProcessError> {
        loop {
            match child.try_wait() {
                Ok(Some(s)) => return Ok(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                waited => {
                    self.kill(child);
                    return Err(self.error(match waited {
                        Err(e) => Failure::Wait(e),
                        Ok(_) => Failure::TimedOut(self.timeout.unwrap_or_default()),
                    }));
                }
            }
        }
    }

    /// Kill the child (with its process group when it leads one) and reap it.
    fn kill(&self, child: &mut Child) {
        if self.timeout.is_some() {
            // The child leads its own group and is not reaped yet: the id is still ours.
            let _ = traffic::sys::send_signal(child.id(), libc::SIGKILL, true);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn spawn_reader<R: Read + Send + 'static>(
    pipe: Option<R>,
    is_err: bool,
    tx: mpsc::Sender<(bool, String)>,
) {
    let Some(mut pipe) = pipe else { return };
    // If no thread can be made, the pipe is dropped and the child sees EPIPE: no panic.
    let _ = std::thread::Builder::new().spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = tx.send((is_err, String::from_utf8_lossy(&buf).into_owned()));
    });
}

/// The first non-blank line, trimmed.
pub fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_input() {
        let f = Cmd::new("sh", &["-c", "cat; echo err >&2"])
            .input("hello\n")
            .run()
            .unwrap();
        assert_eq!((f.stdout.as_str(), f.stderr.as_str()), ("hello\n", "err\n"));
    }

    #[test]
    fn failure_carries_argv_status_and_stderr() {
        let e = Cmd::new("sh", &["-c", "echo bad rule >&2; exit 3"])
            .run()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`sh -c echo bad rule >&2; exit 3` failed (exit status: 3): bad rule"
        );
        assert_eq!(e.one_line(), "bad rule (exit status: 3)");
        // `finish` hands the output back whatever the status.
        let f = Cmd::new("sh", &["-c", "echo v1; exit 1"]).finish().unwrap();
        assert_eq!((f.success(), f.stdout.as_str()), (false, "v1\n"));
    }

    #[test]
    fn spawn_error_names_the_program() {
        let e = Cmd::new("/nonexistent/fwb", &[]).run().unwrap_err();
        assert!(matches!(e.failure, Failure::Spawn(_)));
        assert_eq!(
            e.to_string(),
            "cannot run /nonexistent/fwb (is it installed?)"
        );
        assert!(
            e.one_line().starts_with("/nonexistent/fwb: "),
            "{}",
            e.one_line()
        );
        assert!(!program_exists("/nonexistent/fwb") && program_exists("sh"));
    }

    #[test]
    fn deadline_kills_the_group() {
        let t = Instant::now();
        // The grandchild `sleep` holds the pipes; the group kill ends it too.
        let e = Cmd::new("sh", &["-c", "sleep 5 & sleep 5"])
            .timeout(Duration::from_millis(200))
            .run()
            .unwrap_err();
        assert!(matches!(e.failure, Failure::TimedOut(_)));
        assert_eq!(e.one_line(), "timed out after 0.2s");
        assert!(t.elapsed() < Duration::from_secs(3));
    }
}
