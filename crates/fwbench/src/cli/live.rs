//! `-i/--interval` and `--json-stream`: live per-interval output of a single trial
//! (every trial command but `ping`, whose `-i` is the probe interval as in ping(8)).

use crate::error::usage;
use anyhow::Result;
use clap::Args;

#[derive(Args, Clone, Default)]
pub struct LiveArgs {
    /// Print the counts and rates of each interval of this many seconds while the
    /// trial runs (as iperf3 -i): packets, bytes, rate and loss (flood, flow), echoes
    /// and mean RTT (echo), sessions or connections per second
    #[arg(long = "interval", short = 'i', value_name = "SECS")]
    pub interval: Option<f64>,
    /// JSON lines on stdout: one object per interval ("type": "interval") and one at
    /// the end ("type": "end", with the trial as --json has it); -i 1 unless given
    #[arg(long)]
    pub json_stream: bool,
}

/// Minimum interval: the agents count continuously, but each boundary is a round trip
/// to every traffic agent.
pub const MIN_INTERVAL_S: f64 = 0.1;

impl LiveArgs {
    /// The interval asked for, if any (checked: exit 2 for nonsense).
    pub fn every(&self) -> Result<Option<std::time::Duration>> {
        let s = match (self.interval, self.json_stream) {
            (Some(s), _) => s,
            (None, true) => 1.0,
            (None, false) => return Ok(None),
        };
        if !(s.is_finite() && s >= MIN_INTERVAL_S) {
            return Err(usage(format!(
                "--interval {s}: must be at least {MIN_INTERVAL_S} s"
            )));
        }
        Ok(Some(std::time::Duration::from_secs_f64(s)))
    }
}
