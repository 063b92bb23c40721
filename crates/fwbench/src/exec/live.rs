//! Live intervals (`-i/--interval`): while the traffic runs, every interval the trial
//! driver asks each traffic role for its cumulative counters (`ToAgent::Tally`) and
//! hands them to the caller's observer, which prints the differences.
//!
//! Owns: the observer's types and the schedule of boundaries (pure: time passed in).
//! Must not: print (the caller's observer does) or talk to agents (the driver does).

use std::time::Duration;

/// One boundary: every traffic role's cumulative counters at (about) `t_s` seconds
/// after the traffic started, as the controller's clock saw the request.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub t_s: f64,
    /// The traffic phase ended: the last boundary, before the roles are stopped
    /// (normally shorter than an interval).
    pub last: bool,
    pub roles: Vec<(&'static str, proto::Tally)>,
}

/// What the trial driver needs: how often, and whom to tell.
pub struct Live {
    pub every: Duration,
    pub observe: Box<dyn FnMut(&Tick)>,
}

/// Boundaries at k · every after the start; a boundary missed (the driver was busy)
/// is skipped, not repeated.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    every: Duration,
    next: Duration,
}

impl Schedule {
    pub fn new(every: Duration) -> Schedule {
        Schedule { every, next: every }
    }

    /// Is a boundary due at `elapsed`? Advances past it when it is.
    pub fn due(&mut self, elapsed: Duration) -> bool {
        if elapsed < self.next {
            return false;
        }
        while self.next <= elapsed {
            self.next += self.every;
        }
        true
    }

    /// Time left until the next boundary.
    pub fn wait(&self, elapsed: Duration) -> Duration {
        self.next.saturating_sub(elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_every_interval_and_missed_ones_skipped() {
        let ms = Duration::from_millis;
        let mut s = Schedule::new(ms(1000));
        assert!(!s.due(ms(999)));
        assert_eq!(s.wait(ms(900)), ms(100));
        assert!(s.due(ms(1000)));
        assert!(!s.due(ms(1500)));
        // Late by more than an interval: one boundary, the next at 4 s.
        assert!(s.due(ms(3200)));
        assert_eq!(s.wait(ms(3200)), ms(800));
        assert!(!s.due(ms(3999)) && s.due(ms(4000)));
    }
}
