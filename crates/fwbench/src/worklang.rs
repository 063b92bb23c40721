//! The workload language of seed 003 (Molitor, appendix A): jobs made of commands,
//! run in sequence, in parallel, or started at seeded random intervals, nested freely.
//!
//! ```text
//! # comment to the end of the line
//! sequential 30 { command "ftp-session" }
//! parallel 6 { sequential 5 { command "curl -s http://198.19.0.2/" } }
//! random 10 42 0.1 0.5 { command "ping -c 1 198.19.0.2" }   # count seed low high (s)
//! ```
//! A command string is split into argv as a POSIX shell splits words (quotes,
//! backslashes) and executed directly (no shell, no globbing). Parsing is pure; [`run`] executes with a command prefix (e.g.
//! `ip netns exec NS`) and records every command's start, duration and exit status.

use serde::Serialize;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One job of a workload file.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    Command {
        argv: Vec<String>,
        /// 1-based line and column of the `command` keyword.
        at: (usize, usize),
    },
    Sequential {
        repeat: u32,
        jobs: Vec<Job>,
    },
    Parallel {
        repeat: u32,
        jobs: Vec<Job>,
    },
    Random {
        repeat: u32,
        seed: u64,
        /// Seconds between job starts, drawn uniformly from `low..=high`.
        low_s: f64,
        high_s: f64,
        jobs: Vec<Job>,
    },
}

use crate::limits::{MAX_COMMANDS, MAX_CONCURRENT_COMMANDS, MAX_REPEAT, MAX_WORKLOAD_DEPTH};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Open,
    Close,
}

/// 1-based (line, column).
type At = (usize, usize);

/// Why a workload file is refused (bad input); every message starts with the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// `file:line:col: why`.
    #[error("{file}:{line}:{col}: {why}")]
    At {
        file: String,
        line: usize,
        col: usize,
        why: String,
    },
    /// The file as a whole: `file: why`.
    #[error("{file}: {why}")]
    File { file: String, why: String },
}

impl WorkloadError {
    fn at(file: &str, (line, col): At, why: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::At {
            file: file.to_string(),
            line,
            col,
            why: why.to_string(),
        }
    }
}

/// For callers that carry messages as text (`error::usage`).
impl From<WorkloadError> for String {
    fn from(e: WorkloadError) -> String {
        e.to_string()
    }
}

/// Tokens with where they start.
fn lex(file: &str, text: &str) -> Result<Vec<(Tok, At)>, WorkloadError> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let (mut line, mut col) = (1usize, 1usize);
    let bump = |c: char, line: &mut usize, col: &mut usize| {
        if c == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
    };
    while let Some(&c) = chars.peek() {
        let at = (line, col);
        match c {
            '#' => {
                while let Some(&c) = chars.peek() {
                    if c == '\n' {
                        break;
                    }
                    chars.next();
                    bump(c, &mut line, &mut col);
                }
            }
            c if c.is_whitespace() => {
                chars.next();
                bump(c, &mut line, &mut col);
            }
            '{' | '}' => {
                chars.next();
                bump(c, &mut line, &mut col);
                out.push((if c == '{' { Tok::Open } else { Tok::Close }, at));
            }
            '"' => {
                chars.next();
                bump(c, &mut line, &mut col);
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None | Some('\n') => return Err(WorkloadError::at(
                            file,
                            at,
                            "unterminated string (a command string ends with \" on the same line)",
                        )),
                        Some('"') => {
                            bump('"', &mut line, &mut col);
                            break;
                        }
                        Some(c) => {
                            bump(c, &mut line, &mut col);
                            s.push(c);
                        }
                    }
                }
                out.push((Tok::Str(s), at));
            }
            _ => {
                let mut w = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '{' | '}' | '"' | '#') {
                        break;
                    }
                    chars.next();
                    bump(c, &mut line, &mut col);
                    w.push(c);
                }
                out.push((Tok::Word(w), at));
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<(Tok, At)>,
    pos: usize,
    end: At,
    /// Blocks open at the current token.
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, at: At, msg: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::at(self.file, at, msg)
    }

    fn peek(&self) -> Option<&(Tok, At)> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Result<(Tok, At), WorkloadError> {
        let t = self.toks.get(self.pos).cloned().ok_or_else(|| {
            self.err(
                self.end,
                "unexpected end of file (a '}' or a job is missing)",
            )
        })?;
        self.pos += 1;
        Ok(t)
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, WorkloadError> {
        match self.next()? {
            (Tok::Word(w), at) => w
                .parse()
                .map_err(|_| self.err(at, format!("'{w}' is not a valid {what}"))),
            (_, at) => Err(self.err(at, format!("expected the {what}"))),
        }
    }

    fn seconds(&mut self, what: &str) -> Result<f64, WorkloadError> {
        match self.next()? {
            (Tok::Word(w), at) => {
                let (num, mult) = match w.strip_suffix("ms") {
                    Some(n) => (n, 1e-3),
                    None => (w.strip_suffix('s').unwrap_or(&w), 1.0),
                };
                num.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0 && *v * mult <= 86_400.0)
                    .map(|v| v * mult)
                    .ok_or_else(|| {
                        self.err(
                            at,
                            format!("'{w}' is not a valid {what} (seconds, like 0.5 or 200ms)"),
                        )
                    })
            }
            (_, at) => Err(self.err(at, format!("expected the {what}"))),
        }
    }

    /// `{ job+ }`
    fn block(&mut self, keyword: &str) -> Result<Vec<Job>, WorkloadError> {
        match self.next()? {
            (Tok::Open, at) if self.depth >= MAX_WORKLOAD_DEPTH => {
                return Err(self.err(
                    at,
                    format!("blocks nested more than {MAX_WORKLOAD_DEPTH} deep"),
                ))
            }
            (Tok::Open, _) => {}
            (_, at) => return Err(self.err(at, format!("expected '{{' after {keyword}"))),
        }
        self.depth += 1;
        let jobs = self.block_body(keyword);
        self.depth -= 1;
        jobs
    }

    /// The jobs of a block up to its `}`.
    fn block_body(&mut self, keyword: &str) -> Result<Vec<Job>, WorkloadError> {
        let mut jobs = Vec::new();
        loop {
            match self.peek() {
                Some((Tok::Close, at)) => {
                    let at = *at;
                    self.pos += 1;
                    if jobs.is_empty() {
                        return Err(
                            self.err(at, format!("empty {keyword} block: give at least one job"))
                        );
                    }
                    return Ok(jobs);
                }
                None => {
                    return Err(
                        self.err(self.end, format!("unclosed {keyword} block: '}}' missing"))
                    )
                }
                Some(_) => jobs.push(self.job()?),
            }
        }
    }

    fn repeat(&mut self, keyword: &str) -> Result<u32, WorkloadError> {
        let at = self.peek().map(|t| t.1).unwrap_or(self.end);
        let n: u32 = self.number("repeat count")?;
        if n == 0 || n > MAX_REPEAT {
            return Err(self.err(
                at,
                format!("{keyword} repeat count must be 1..{MAX_REPEAT}"),
            ));
        }
        Ok(n)
    }

    fn job(&mut self) -> Result<Job, WorkloadError> {
        let (tok, at) = self.next()?;
        let Tok::Word(w) = tok else {
            return Err(self.err(
                at,
                "expected a job: command, sequential, parallel or random",
            ));
        };
        match w.as_str() {
            "command" => match self.next()? {
                (Tok::Str(s), sat) => {
                    // Words as a POSIX shell splits them (quotes and backslashes: `sh -c
                    // 'a | b'`), run without a shell. shlex: the splitting is the
                    // shell's grammar, not ours to write again.
                    let Some(argv) = shlex::split(&s) else {
                        return Err(
                            self.err(sat, "unbalanced quote or trailing backslash in the command")
                        );
                    };
                    if argv.is_empty() {
                        return Err(self.err(sat, "empty command"));
                    }
                    Ok(Job::Command { argv, at })
                }
                (_, at) => Err(self.err(at, "expected a quoted command string after command")),
            },
            "sequential" | "parallel" => {
                let repeat = match self.peek() {
                    Some((Tok::Word(_), _)) => self.repeat(&w)?,
                    _ => 1,
                };
                let jobs = self.block(&w)?;
                Ok(if w == "sequential" {
                    Job::Sequential { repeat, jobs }
                } else {
                    Job::Parallel { repeat, jobs }
                })
            }
            "random" => {
                let repeat = self.repeat("random")?;
                let seed: u64 = self.number("seed")?;
                let lat = self.peek().map(|t| t.1).unwrap_or(self.end);
                let low_s = self.seconds("low interval")?;
                let high_s = self.seconds("high interval")?;
                if low_s > high_s {
                    return Err(self.err(lat, "the low interval is above the high one"));
                }
                let jobs = self.block("random")?;
                Ok(Job::Random {
                    repeat,
                    seed,
                    low_s,
                    high_s,
                    jobs,
                })
            }
            other => Err(self.err(
                at,
                format!("unknown job '{other}' (expected command, sequential, parallel or random)"),
            )),
        }
    }
}

/// Parse a workload file: one or more jobs. Errors name `file:line:column`.
pub fn parse(file: &str, text: &str) -> Result<Vec<Job>, WorkloadError> {
    let toks = lex(file, text)?;
    let end = text
        .lines()
        .enumerate()
        .last()
        .map(|(i, l)| (i + 1, l.chars().count() + 1))
        .unwrap_or((1, 1));
    let mut p = Parser {
        file,
        toks,
        pos: 0,
        end,
        depth: 0,
    };
    let mut jobs = Vec::new();
    while p.peek().is_some() {
        if let Some((Tok::Close, at)) = p.peek() {
            return Err(p.err(*at, "'}' without a block to close"));
        }
        jobs.push(p.job()?);
    }
    if jobs.is_empty() {
        return Err(WorkloadError::File {
            file: file.to_string(),
            why: "no jobs (give at least one command)".into(),
        });
    }
    let n = count(&jobs);
    if n > MAX_COMMANDS {
        return Err(WorkloadError::File {
            file: file.to_string(),
            why: format!("expands to {n} commands, more than {MAX_COMMANDS}"),
        });
    }
    if let Some((n, (l, c))) = jobs
        .iter()
        .map(|j| (concurrency(j), first_at(j)))
        .find(|(n, _)| *n > MAX_CONCURRENT_COMMANDS)
    {
        return Err(WorkloadError::at(
            file,
            (l, c),
            format!("runs up to {n} commands at once, more than {MAX_CONCURRENT_COMMANDS}"),
        ));
    }
    Ok(jobs)
}

/// Most commands of `j` that may run at once: a `parallel` block starts all its
/// repetitions together, a `random` one may (its gaps can be shorter than its jobs).
pub fn concurrency(j: &Job) -> u64 {
    let sum = |jobs: &[Job]| jobs.iter().map(concurrency).fold(0u64, u64::saturating_add);
    match j {
        Job::Command { .. } => 1,
        Job::Sequential { jobs, .. } => jobs.iter().map(concurrency).max().unwrap_or(0),
        Job::Parallel { repeat, jobs } | Job::Random { repeat, jobs, .. } => {
            u64::from(*repeat).saturating_mul(sum(jobs))
        }
    }
}

/// Where a job starts (its first command), for messages.
fn first_at(j: &Job) -> At {
    match j {
        Job::Command { at, .. } => *at,
        Job::Sequential { jobs, .. } | Job::Parallel { jobs, .. } | Job::Random { jobs, .. } => {
            jobs.first().map(first_at).unwrap_or((1, 1))
        }
    }
}

/// Commands a list of jobs runs in total.
pub fn count(jobs: &[Job]) -> u64 {
    jobs.iter()
        .map(|j| match j {
            Job::Command { .. } => 1,
            Job::Sequential { repeat, jobs }
            | Job::Parallel { repeat, jobs }
            | Job::Random { repeat, jobs, .. } => (*repeat as u64).saturating_mul(count(jobs)),
        })
        .fold(0u64, u64::saturating_add)
}

/// Every distinct command (argv[0] and where), for checking before anything runs.
pub fn commands(jobs: &[Job]) -> Vec<(&str, (usize, usize))> {
    let mut out = Vec::new();
    for j in jobs {
        match j {
            Job::Command { argv, at } => out.push((argv[0].as_str(), *at)),
            Job::Sequential { jobs, .. }
            | Job::Parallel { jobs, .. }
            | Job::Random { jobs, .. } => out.extend(commands(jobs)),
        }
    }
    out
}

/// The seeded start intervals of a `random` block (reproducible; unit-tested).
pub fn intervals(seed: u64, n: usize, low_s: f64, high_s: f64) -> Vec<f64> {
    let mut rng = traffic::rng::Rng::new(seed);
    (0..n)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            low_s + u * (high_s - low_s)
        })
        .collect()
}

/// One command as it ran.
#[derive(Debug, Clone, Serialize)]
pub struct Ran {
    pub argv: Vec<String>,
    /// Seconds from the start of the workload.
    pub start_s: f64,
    pub duration_s: f64,
    /// Exit code (None: killed by a signal, or could not start).
    pub exit: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Run `jobs`, each command as `prefix… argv…`; stop starting new ones once `stop` is set.
pub fn run(jobs: &[Job], prefix: &[String], stop: &AtomicBool) -> Vec<Ran> {
    let out = Mutex::new(Vec::new());
    let t0 = Instant::now();
    let cx = Cx {
        prefix,
        stop,
        t0,
        out: &out,
    };
    for j in jobs {
        cx.job(j);
    }
    out.into_inner().unwrap_or_default()
}

struct Cx<'a> {
    prefix: &'a [String],
    stop: &'a AtomicBool,
    t0: Instant,
    out: &'a Mutex<Vec<Ran>>,
}

impl Cx<'_> {
    fn job(&self, j: &Job) {
        if self.stop.load(Ordering::SeqCst) {
            return;
        }
        match j {
            Job::Command { argv, .. } => self.command(argv),
            Job::Sequential { repeat, jobs } => {
                for _ in 0..*repeat {
                    for j in jobs {
                        self.job(j);
                    }
                }
            }
            Job::Parallel { repeat, jobs } => std::thread::scope(|s| {
                for _ in 0..*repeat {
                    for j in jobs {
                        self.spawn(s, j);
                    }
                }
            }),
            Job::Random {
                repeat,
                seed,
                low_s,
                high_s,
                jobs,
            } => {
                let n = *repeat as usize * jobs.len();
                let gaps = intervals(*seed, n, *low_s, *high_s);
                std::thread::scope(|s| {
                    let all = (0..*repeat).flat_map(|_| jobs.iter());
                    for (j, gap) in all.zip(gaps) {
                        if self.stop.load(Ordering::SeqCst) {
                            break;
                        }
                        self.spawn(s, j);
                        std::thread::sleep(Duration::from_secs_f64(gap));
                    }
                });
            }
        }
    }

    /// Run `j` on a thread of the scope; a thread that cannot be created (the host's
    /// limit) is recorded as a failed command of each command of `j`, not a panic.
    fn spawn<'scope, 'env>(&'env self, s: &'scope std::thread::Scope<'scope, 'env>, j: &'env Job) {
        let started = std::thread::Builder::new().spawn_scoped(s, move || self.job(j));
        if let Err(e) = started {
            for (prog, _) in commands(std::slice::from_ref(j)) {
                self.record(Ran {
                    argv: vec![prog.to_string()],
                    start_s: self.t0.elapsed().as_secs_f64(),
                    duration_s: 0.0,
                    exit: None,
                    error: Some(format!("{prog}: cannot start a thread for it: {e}")),
                });
            }
        }
    }

    fn record(&self, r: Ran) {
        if let Ok(mut o) = self.out.lock() {
            o.push(r);
        }
    }

    fn command(&self, argv: &[String]) {
        let start = self.t0.elapsed();
        let full: Vec<&String> = self.prefix.iter().chain(argv).collect();
        let mut cmd = Command::new(full[0]);
        cmd.args(&full[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // This thread waits for the command, so it outlives it.
        traffic::sys::die_with_parent(&mut cmd);
        let status = cmd.status();
        let duration_s = (self.t0.elapsed() - start).as_secs_f64();
        let (exit, error) = match status {
            Ok(s) => (s.code(), None),
            Err(e) => (None, Some(format!("{}: {e}", argv[0]))),
        };
        if let Ok(mut o) = self.out.lock() {
            o.push(Ran {
                argv: argv.to_vec(),
                start_s: start.as_secs_f64(),
                duration_s,
                exit,
                error,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str, at: (usize, usize)) -> Job {
        Job::Command {
            argv: s.split_whitespace().map(String::from).collect(),
            at,
        }
    }

    #[test]
    fn the_studys_files_parse() {
        let text = "# session latency\nsequential 30 {\n\tcommand \"ftp-session\"\n}\nparallel 6 {\n  sequential 5 { command \"ftp-session\" }\n}\n";
        let jobs = parse("w", text).unwrap();
        assert_eq!(
            jobs[0],
            Job::Sequential {
                repeat: 30,
                jobs: vec![cmd("ftp-session", (3, 2))]
            }
        );
        assert_eq!(count(&jobs), 60);
        let j = parse("w", "sequential 3 { parallel 5 { command \"ls -l\" } }").unwrap();
        assert_eq!(count(&j), 15);
        let Job::Sequential { jobs, .. } = &j[0] else {
            panic!()
        };
        let Job::Parallel { jobs, .. } = &jobs[0] else {
            panic!()
        };
        assert_eq!(jobs[0], cmd("ls -l", (1, 29)));
        // Words are split as a shell splits them: quotes keep a pipeline one word.
        let j = parse("w", "command \"sh -c 'exit 3' a\\ b\"").unwrap();
        let Job::Command { argv, .. } = &j[0] else {
            panic!()
        };
        assert_eq!(argv, &["sh", "-c", "exit 3", "a b"]);
        // Repeat counts are optional for sequential and parallel.
        let j = parse("w", "sequential { command \"a\" command \"b x\" }").unwrap();
        assert_eq!(count(&j), 2);
        let j = parse("w", "random 4 7 0.01 20ms { command \"true\" }").unwrap();
        assert!(matches!(
            j[0],
            Job::Random {
                repeat: 4,
                seed: 7,
                ..
            }
        ));
    }

    #[test]
    fn deep_nesting_and_huge_parallelism_are_refused() {
        // 20 000 levels overflowed the parser's stack; now: a message at the 65th '{'.
        let deep = "sequential { ".repeat(20_000) + "command \"true\"" + &" }".repeat(20_000);
        let e = parse("w.txt", &deep).unwrap_err().to_string();
        assert!(
            e.starts_with("w.txt:1:")
                && e.contains(&format!("nested more than {MAX_WORKLOAD_DEPTH} deep")),
            "{e}"
        );
        let ok = "sequential { ".repeat(MAX_WORKLOAD_DEPTH)
            + "command \"true\""
            + &" }".repeat(MAX_WORKLOAD_DEPTH);
        parse("w.txt", &ok).unwrap();
        // parallel 1000000 panicked when thread creation failed.
        let e = parse("w.txt", "\nparallel 1000000 { command \"true\" }")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("w.txt:2:20: runs up to 1000000 commands at once, more than 1024"),
            "{e}"
        );
        // Nested: the product counts.
        let e = parse("w", "parallel 40 { parallel 40 { command \"a\" } }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("1600 commands at once"), "{e}");
        let e = parse("w", "random 2000 1 0 0 { command \"a\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("2000 commands at once"), "{e}");
        let j = parse("w", "sequential 1000 { parallel 1024 { command \"a\" } }").unwrap();
        assert_eq!(concurrency(&j[0]), 1024);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = |t: &str| parse("w.txt", t).unwrap_err().to_string();
        assert_eq!(
            e("sequential 3 {\n  comand \"x\"\n}"),
            "w.txt:2:3: unknown job 'comand' (expected command, sequential, parallel or random)"
        );
        assert!(e("sequential 3 {\n command \"x\"\n").contains("unclosed sequential block"));
        assert!(e("command \"x").starts_with("w.txt:1:9: unterminated string"));
        assert!(e("parallel 0 { command \"x\" }").starts_with("w.txt:1:10: parallel repeat count"));
        assert!(e("parallel x { command \"x\" }").contains("'x' is not a valid repeat count"));
        assert!(e("sequential { }").contains("empty sequential block"));
        assert!(e("random 3 1 0.5 0.1 { command \"x\" }").contains("low interval is above"));
        assert!(e("random 3 1 0.1 { command \"x\" }").contains("high interval"));
        assert!(e("command \"\"").contains("empty command"));
        assert_eq!(
            e("command \"sh -c 'exit 3\""),
            "w.txt:1:9: unbalanced quote or trailing backslash in the command"
        );
        assert!(e("}").contains("without a block"));
        assert!(e("# only a comment\n").contains("no jobs"));
        assert!(
            e("sequential 1000000 { sequential 1000000 { command \"x\" } }").contains("more than")
        );
    }

    #[test]
    fn random_intervals_are_seeded_and_in_range() {
        let a = intervals(42, 100, 0.1, 0.5);
        assert_eq!(a, intervals(42, 100, 0.1, 0.5), "same seed, same intervals");
        assert_ne!(a, intervals(43, 100, 0.1, 0.5));
        assert!(a.iter().all(|x| (0.1..=0.5).contains(x)));
        let mean = a.iter().sum::<f64>() / 100.0;
        assert!((mean - 0.3).abs() < 0.05, "{mean}");
    }

    #[test]
    fn runs_sequences_and_parallel_jobs() {
        let jobs = parse("w", "sequential 2 { command \"true\" } parallel 3 { command \"sleep 0.2\" } command \"false\" command \"no-such-program-fwbench\"").unwrap();
        let stop = AtomicBool::new(false);
        let t = Instant::now();
        let ran = run(&jobs, &[], &stop);
        assert_eq!(ran.len(), 7);
        // Three sleeps of 0.2 s in parallel take ~0.2 s, not 0.6. Measured (issue 24):
        // the whole workload took 212–326 ms in 10 runs at a load average of 14.5 on
        // this 2-core VM; 550 ms keeps 1.7× the worst.
        assert!(
            t.elapsed() < Duration::from_millis(550),
            "{:?}",
            t.elapsed()
        );
        // A step's end, rounded down by a nanosecond (the sum of two rounded seconds).
        let end = |r: &Ran| r.start_s + r.duration_s - 1e-9;
        let of = |argv0: &str| -> Vec<&Ran> { ran.iter().filter(|r| r.argv[0] == argv0).collect() };
        let (trues, sleeps, falses) = (of("true"), of("sleep"), of("false"));
        assert!(sleeps.iter().all(|r| r.duration_s >= 0.19));
        // The same without a clock bound: the sleeps' span is shorter than their
        // durations end to end (one after another it is at least that).
        let span = sleeps
            .iter()
            .map(|r| r.start_s + r.duration_s)
            .fold(0.0, f64::max)
            - sleeps
                .iter()
                .map(|r| r.start_s)
                .fold(f64::INFINITY, f64::min);
        let sum: f64 = sleeps.iter().map(|r| r.duration_s).sum();
        assert!(
            span < sum,
            "sleeps one after another: span {span} s, {ran:?}"
        );
        // `sequential` before `parallel` before the next command.
        let trues_end = trues.iter().map(|r| end(r)).fold(0.0, f64::max);
        assert!(trues[1].start_s >= end(trues[0]), "{ran:?}");
        assert!(sleeps.iter().all(|r| r.start_s >= trues_end), "{ran:?}");
        assert!(
            sleeps.iter().all(|r| falses[0].start_s >= end(r)),
            "{ran:?}"
        );
        assert_eq!(ran.iter().filter(|r| r.exit == Some(0)).count(), 5);
        assert!(ran
            .iter()
            .any(|r| r.argv[0] == "false" && r.exit == Some(1)));
        assert!(ran.iter().any(|r| r.error.is_some()));
    }
}
