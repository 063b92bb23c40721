//! `fwbench trace`: event traces for churn replay (`--event-trace`, issue 39) —
//! write one of a known shape on stdout (`trace gen kube-proxy|fail2ban|blocklist`),
//! or check one (`trace check FILE`: its operations, or where it is wrong, exit 2).
//!
//! Owns: the command's flags and printing. Must not: touch the host (the shapes are
//! `params::trace_gen`'s, the format `params::trace`'s).

use crate::error::usage;
use crate::params::trace::{self, format_time, Trace};
use crate::params::trace_gen::{BanFeed, Blocklist, KubeProxy, Span};
use anyhow::Result;
use proto::UpdateKind;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum TraceCmd {
    /// Write a trace of a known shape of churn on stdout (deterministic for --seed)
    Gen {
        #[command(subcommand)]
        shape: Shape,
    },
    /// Read a trace and say what it holds (or where it is wrong: exit 2)
    Check {
        /// The trace file
        file: String,
    },
}

#[derive(clap::Subcommand)]
pub enum Shape {
    /// kube-proxy-like Service churn: endpoint changes at random (Poisson) at --rate/s,
    /// each replacing one Service's rules (replace 1+2×endpoints)
    #[command(name = "kube-proxy")]
    KubeProxy {
        /// Services whose endpoints change
        #[arg(long, default_value = "10", value_parser = clap::value_parser!(u32).range(1..=100_000))]
        services: u32,
        /// Endpoints of each Service at first
        #[arg(long, default_value = "3", value_parser = clap::value_parser!(u32).range(1..=49_999))]
        endpoints: u32,
        /// Endpoint changes per second over all Services
        #[arg(long, default_value = "2", value_parser = crate::workloads::events::positive_rate)]
        rate: f64,
        #[command(flatten)]
        span: SpanArgs,
    },
    /// fail2ban/CrowdSec-like ban feed: add 1 at random (Poisson) at --bans-per-s,
    /// each followed by delete 1 after --ban-time
    #[command(name = "fail2ban")]
    Fail2ban {
        /// Bans per second
        #[arg(long, default_value = "5", value_parser = crate::workloads::events::positive_rate)]
        bans_per_s: f64,
        /// How long a ban lasts (fail2ban's bantime): 2s, 500ms
        #[arg(long, default_value = "2s", value_parser = time)]
        ban_time: u64,
        #[command(flatten)]
        span: SpanArgs,
    },
    /// Blocklist refresh: replace N (the whole list) every --every
    Blocklist {
        /// Entries of the list (at most 100000)
        #[arg(long, default_value = "100000", value_parser = clap::value_parser!(u32).range(1..=proto::MAX_UPDATE_K as i64))]
        entries: u32,
        /// Period of the refresh: 5s, 1500ms
        #[arg(long, default_value = "5s", value_parser = time)]
        every: u64,
        /// Share of the list that may change between refreshes (0 to 1)
        #[arg(long, default_value = "0.01", value_parser = share)]
        churn: f64,
        #[command(flatten)]
        span: SpanArgs,
    },
}

/// When the churn starts, how long it lasts, the seed.
#[derive(clap::Args)]
pub struct SpanArgs {
    /// The first operation no earlier than this after the traffic starts (leave the
    /// trial a quiet window before it: 1s)
    #[arg(long, default_value = "1s", value_parser = time)]
    start: u64,
    /// Operations start within this long after --start
    #[arg(long, default_value = "10s", value_parser = time)]
    duration: u64,
    /// Seed of the random choices
    #[arg(long, default_value = "1")]
    seed: u64,
}

impl SpanArgs {
    fn span(&self) -> Span {
        Span {
            start_ns: self.start,
            duration_ns: self.duration,
            seed: self.seed,
        }
    }
}

fn time(t: &str) -> Result<u64, String> {
    trace::parse_time(t).ok_or_else(|| {
        format!(
            "'{t}' is not a time: expected seconds or milliseconds with the unit (0.5s, \
             250ms), at most {}s",
            trace::MAX_TIME_S
        )
    })
}

fn share(t: &str) -> Result<f64, String> {
    t.parse::<f64>()
        .ok()
        .filter(|v| (0.0..=1.0).contains(v))
        .ok_or_else(|| format!("'{t}': expected a share from 0 to 1"))
}

pub fn run_trace(cmd: &TraceCmd) -> Result<ExitCode> {
    match cmd {
        TraceCmd::Gen { shape } => {
            let (header, ops) = match shape {
                Shape::KubeProxy {
                    services,
                    endpoints,
                    rate,
                    span,
                } => {
                    let g = KubeProxy {
                        span: span.span(),
                        services: *services,
                        endpoints: *endpoints,
                        rate: *rate,
                    };
                    (g.header(), g.ops())
                }
                Shape::Fail2ban {
                    bans_per_s,
                    ban_time,
                    span,
                } => {
                    let g = BanFeed {
                        span: span.span(),
                        bans_per_s: *bans_per_s,
                        ban_ns: *ban_time,
                    };
                    (g.header(), g.ops())
                }
                Shape::Blocklist {
                    entries,
                    every,
                    churn,
                    span,
                } => {
                    let g = Blocklist {
                        span: span.span(),
                        entries: *entries,
                        every_ns: *every,
                        churn: *churn,
                    };
                    (g.header(), g.ops())
                }
            };
            let ops = ops.map_err(usage)?;
            if ops.is_empty() {
                return Err(usage(
                    "no operation falls within --duration: lengthen it or raise the rate",
                ));
            }
            print!("{}", crate::params::trace_gen::render(&header, &ops));
            Ok(ExitCode::SUCCESS)
        }
        TraceCmd::Check { file } => {
            let mut t = Trace::named(file);
            t.load().map_err(|e| usage(e.to_string()))?;
            print!("{}", describe(&t));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// "t.trace: 4 operations from 0.5s to 4s (add 2, delete 1, reload 1), fingerprint …".
fn describe(t: &Trace) -> String {
    let counts: Vec<String> = UpdateKind::ALL
        .iter()
        .filter_map(|k| {
            let n = t.ops.iter().filter(|o| o.kind == *k).count();
            (n > 0).then(|| format!("{} {n}", k.name()))
        })
        .collect();
    let (first, last) = (
        t.ops.first().map_or(0, |o| o.at_ns),
        t.ops.last().map_or(0, |o| o.at_ns),
    );
    let most_k = t.ops.iter().map(|o| o.k).max().unwrap_or(0);
    format!(
        "{}: {} operations from {} to {} ({}), K at most {most_k}, fingerprint {}\n",
        t.file,
        t.operations,
        format_time(first),
        format_time(last),
        counts.join(", "),
        t.fnv
    )
}
