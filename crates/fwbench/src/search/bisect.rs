//! The bisection every search shares: a pure state machine over a bracket of values
//! (the offered rate, a rule count), table-tested without traffic.

use serde::Serialize;

/// How narrow the bracket must get.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Width {
    /// (hi − lo) ≤ r · hi, or hi ≤ the floor value (the search cannot go lower)
    Relative(f64, f64),
    /// (hi − lo) ≤ a
    Absolute(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    Try(f64),
    Done(Found),
}

/// Result: the highest value that passed and the lowest that failed (`None`: none did).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Found {
    pub pass: Option<f64>,
    pub fail: Option<f64>,
}

/// Binary search for the boundary between passing (low) and failing (high) values in
/// `[lo, hi]`. Tries the ceiling first (it may pass: the answer is then "at least
/// hi"), the floor if it is not known to pass, then halves the bracket; with
/// `confirm`, the final answer is tried once more (RFC 2544's confirmation trial) and,
/// if it fails now, the search goes on below it.
#[derive(Debug, Clone)]
pub struct Bisect {
    lo: f64,
    hi: f64,
    floor: f64,
    lo_known: bool,
    hi_known: bool,
    ceiling_passed: bool,
    floor_failed: bool,
    width: Width,
    integer: bool,
    confirm: bool,
    confirming: bool,
    confirmed: bool,
    passes: Vec<f64>,
    pending: Option<f64>,
}

impl Bisect {
    pub fn new(lo: f64, hi: f64, lo_known_pass: bool, width: Width) -> Self {
        Bisect {
            lo,
            hi,
            floor: lo,
            lo_known: lo_known_pass,
            hi_known: false,
            ceiling_passed: false,
            floor_failed: false,
            width,
            integer: false,
            confirm: false,
            confirming: false,
            confirmed: false,
            // Values that passed a trial (a floor known to pass was never tried).
            passes: vec![],
            pending: None,
        }
    }

    /// Only whole numbers are tried (rule counts).
    pub fn integer(mut self) -> Self {
        self.integer = true;
        self
    }

    pub fn with_confirmation(mut self) -> Self {
        self.confirm = true;
        self
    }

    /// The ceiling's outcome is already known (e.g. the max-rate probe failed).
    pub fn ceiling_known(mut self, passed: bool) -> Self {
        self.hi_known = true;
        self.ceiling_passed = passed;
        if passed {
            self.passes.push(self.hi);
        }
        self
    }

    pub fn confirmed(&self) -> bool {
        self.confirmed
    }

    fn narrow(&self) -> bool {
        let w = self.hi - self.lo;
        match self.width {
            Width::Relative(r, min) => w <= r * self.hi || self.hi <= min,
            Width::Absolute(a) => w <= a,
        }
    }

    pub fn next_step(&mut self) -> Step {
        let s = self.step();
        if let Step::Try(x) = s {
            self.pending = Some(x);
        }
        s
    }

    fn step(&mut self) -> Step {
        if !self.hi_known {
            return Step::Try(self.hi);
        }
        if self.ceiling_passed {
            return Step::Done(Found {
                pass: Some(self.hi),
                fail: None,
            });
        }
        if !self.lo_known {
            return Step::Try(self.lo);
        }
        if self.floor_failed {
            return Step::Done(Found {
                pass: None,
                fail: Some(self.lo),
            });
        }
        let mut mid = (self.lo + self.hi) / 2.0;
        if self.integer {
            mid = mid.floor();
        }
        if self.narrow() || mid <= self.lo || mid >= self.hi {
            let found = Found {
                pass: self.passes.contains(&self.lo).then_some(self.lo),
                fail: Some(self.hi),
            };
            if self.confirm && !self.confirmed && self.lo > self.floor {
                self.confirming = true;
                return Step::Try(self.lo);
            }
            return Step::Done(found);
        }
        Step::Try(mid)
    }

    /// Record the outcome of the value last returned by `next`.
    pub fn record(&mut self, pass: bool) {
        let Some(x) = self.pending.take() else {
            return;
        };
        if self.confirming {
            self.confirming = false;
            if pass {
                self.confirmed = true;
            } else {
                // It failed now: the answer lies below it.
                self.hi = x;
                self.passes.retain(|p| *p < x);
                self.lo = self.passes.iter().copied().fold(self.floor, f64::max);
            }
            return;
        }
        if !self.hi_known && x == self.hi {
            self.hi_known = true;
            self.ceiling_passed = pass;
            if pass {
                self.passes.push(x);
            }
            return;
        }
        if !self.lo_known && x == self.lo {
            self.lo_known = true;
            self.floor_failed = !pass;
            if pass {
                self.passes.push(x);
            }
            return;
        }
        if pass {
            self.lo = x;
            self.passes.push(x);
        } else {
            self.hi = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive a bisection against a known boundary: values ≤ `limit` pass.
    fn run(mut b: Bisect, pass: impl Fn(f64) -> bool) -> (Found, Vec<f64>) {
        let mut tried = vec![];
        loop {
            match b.next_step() {
                Step::Done(f) => return (f, tried),
                Step::Try(x) => {
                    tried.push(x);
                    b.record(pass(x));
                    assert!(tried.len() < 100, "does not terminate: {tried:?}");
                }
            }
        }
    }

    #[test]
    fn ndr_converges_within_precision_and_confirms() {
        let b = Bisect::new(0.0, 1000.0, true, Width::Relative(0.01, 1.0)).with_confirmation();
        let (f, tried) = run(b, |x| x <= 637.0);
        let (lo, hi) = (f.pass.unwrap(), f.fail.unwrap());
        assert!(lo <= 637.0 && hi > 637.0, "{f:?}");
        assert!(hi - lo <= 0.01 * hi, "{f:?}");
        assert_eq!(tried[0], 1000.0, "ceiling first");
        assert_eq!(tried.last(), Some(&lo), "confirmation at the answer");
        assert!(tried.len() <= 10, "{tried:?}");
    }

    #[test]
    fn ceiling_that_passes_ends_at_once() {
        let (f, tried) = run(
            Bisect::new(0.0, 500.0, true, Width::Relative(0.01, 1.0)),
            |_| true,
        );
        assert_eq!(
            f,
            Found {
                pass: Some(500.0),
                fail: None
            }
        );
        assert_eq!(tried, vec![500.0]);
        // Known from a probe: no trial at all.
        let b = Bisect::new(0.0, 500.0, true, Width::Relative(0.01, 1.0)).ceiling_known(true);
        assert_eq!(run(b, |_| true).1, Vec::<f64>::new());
    }

    #[test]
    fn nothing_passes_ends_at_the_floor_without_a_pass() {
        let b = Bisect::new(0.0, 1e6, true, Width::Relative(0.02, 1.0)).with_confirmation();
        let (f, tried) = run(b, |_| false);
        assert_eq!(f.pass, None, "{f:?}");
        assert!(f.fail.unwrap() <= 1.0, "{f:?}");
        assert!(tried.len() <= 22, "halves down to 1 pps: {}", tried.len());
    }

    #[test]
    fn failed_confirmation_searches_lower() {
        // The boundary moves down between the search and the confirmation (noise).
        use std::cell::Cell;
        let limit = Cell::new(600.0);
        let calls = Cell::new(0);
        let b = Bisect::new(0.0, 1000.0, true, Width::Relative(0.02, 1.0)).with_confirmation();
        let (f, _) = run(b, |x| {
            calls.set(calls.get() + 1);
            if calls.get() == 8 {
                limit.set(500.0);
            }
            x <= limit.get()
        });
        assert!(f.pass.unwrap() <= 500.0, "{f:?}");
    }

    #[test]
    fn degradation_point_on_rule_counts() {
        // Degrades from 5 000 rules on; search 0 ..= 20 000 to within 250.
        let b = Bisect::new(0.0, 20_000.0, false, Width::Absolute(250.0)).integer();
        let (f, tried) = run(b, |x| x < 5000.0);
        assert_eq!(tried[0], 20_000.0);
        assert_eq!(tried[1], 0.0);
        let (g, d) = (f.pass.unwrap(), f.fail.unwrap());
        assert!(g < 5000.0 && d >= 5000.0 && d - g <= 250.0, "{f:?}");
        assert!(tried.iter().all(|x| x.fract() == 0.0));
        // Degraded without rules / never degraded.
        let b = Bisect::new(0.0, 20_000.0, false, Width::Absolute(250.0)).integer();
        assert_eq!(
            run(b, |_| false).0,
            Found {
                pass: None,
                fail: Some(0.0)
            }
        );
        let b = Bisect::new(0.0, 20_000.0, false, Width::Absolute(250.0)).integer();
        assert_eq!(
            run(b, |_| true).0,
            Found {
                pass: Some(20_000.0),
                fail: None
            }
        );
    }
}
