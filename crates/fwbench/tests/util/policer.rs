//! A policer on a gateway and what a rate search against it (ndr, mlr) should find:
//! shared by the single-host search tests (`packet.rs`) and the same searches with the
//! client role on two generator hosts (`remote.rs`).

use serde_json::Value;

use super::{f, u, NftTable, TestbedGuard};

/// A policer on the gateway (`limit` packets/s, a bucket of `burst` packets): what a
/// search against it should find, and the steps whose loss cannot be the policer's.
pub struct Policer {
    pub limit: f64,
    pub burst: f64,
}

impl Policer {
    /// This policer as a test-owned table on the testbed's gateway (UDP to the sink's
    /// port 9000), removed when dropped.
    pub fn on(&self, tb: &TestbedGuard) -> NftTable {
        self.in_gateway(&tb.gw())
    }

    /// The same in the gateway namespace `ns` (one a test made itself): the flood's
    /// packets above `limit` per second, once the bucket is spent, are dropped (and
    /// counted: [`NftTable::counter`]).
    pub fn in_gateway(&self, ns: &str) -> NftTable {
        let (limit, burst) = (self.limit, self.burst);
        let rule = format!(
            "udp dport 9000 limit rate over {limit}/second burst {burst} packets counter drop"
        );
        NftTable::forward_in(ns, "fwbt_policer", &rule)
    }

    /// Steps of a search (its `curve`, and its `latency` trials) that failed below the
    /// policer's rate: they lost packets although they sent fewer than the policer
    /// passes in their time (limit × t + burst, 2 % to spare), or their sender fell
    /// behind its rate (the search's own `sender_behind`). The testbed failed those, not
    /// the policer. On this shared 2-core VM that happens at a load average above ~10
    /// (issue 24: 3 of 23 ndr searches at a load of 10–14 had such a step; a paced sender
    /// that was descheduled catches up in a burst the gateway's backlog cannot hold, or
    /// does not catch up).
    pub fn testbed_failures(&self, search: &Value) -> Vec<String> {
        let mut out = vec![];
        for c in search["curve"].as_array().into_iter().flatten() {
            let (sent, pps) = (u(&c["sent"]) as f64, f(&c["sent_pps"]));
            let t = if pps > 0.0 { sent / pps } else { 0.0 };
            let under = sent <= 0.98 * (self.limit * t + self.burst);
            let lost = f(&c["loss_ratio"]) > 0.0;
            if under && (lost || c["sender_behind"] == true) {
                out.push(format!("step {c}"));
            }
        }
        for p in search["latency"].as_array().into_iter().flatten() {
            if f(&p["loss_ratio"]) > 0.0 && f(&p["offered_pps"]) <= 0.98 * self.limit {
                out.push(format!("latency trial {p}"));
            }
        }
        out
    }

    /// The lowest rate a search with `precision` may report: the policer passes
    /// limit + burst / t packets/s in a trial of t seconds (trials ran up to 8 % longer
    /// than asked under load, 1.1 allows for it), the search's bracket is `precision`
    /// wide, and a failed confirmation at the edge costs one more step of it.
    pub fn lowest(&self, precision: f64) -> f64 {
        (self.limit + self.burst / 1.1) * (1.0 - precision).powi(2)
    }

    /// Run a search (`run`: its result object with `curve`, and what else the caller
    /// keeps) and judge it with `check` (the bounds the testbed can spoil; the caller
    /// asserts the others as hard bounds, e.g. inside `check`). A search that misses
    /// without a step the testbed failed ([`Policer::testbed_failures`]) fails the test.
    /// One the testbed spoiled runs once more; spoiled twice, `check` is not judged
    /// (said on stderr) — at a load average of 14–16 that happened in 2 of 4 runs, at
    /// the load this suite is meant for (8) not once.
    pub fn search<T>(
        &self,
        what: &str,
        mut run: impl FnMut() -> (Value, T),
        check: impl Fn(&Value) -> Result<(), String>,
    ) -> (Value, T) {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (v, keep) = run();
            let Err(e) = check(&v) else {
                return (v, keep);
            };
            let failed = self.testbed_failures(&v);
            assert!(
                !failed.is_empty(),
                "{what}: {e}, and no step failed below the policer's rate: {v}"
            );
            eprintln!("{what}, attempt {attempt}: {e}; the testbed failed: {failed:?}");
            if attempt == 2 {
                eprintln!("{what}: the testbed failed twice; its lower bounds not judged");
                return (v, keep);
            }
        }
    }

    /// An ndr search `v` of 1-s trials at `precision`: the rate found is not above what
    /// the policer passes in a second (limit + burst) and its bracket is at most
    /// `precision` wide (both asserted), and — the bounds the
    /// testbed can spoil, an `Err` for [`Policer::search`] — not under
    /// [`Policer::lowest`], and half of it (the second latency trial) gets through whole.
    pub fn check_ndr(&self, v: &Value, precision: f64) -> Result<(), String> {
        let ceiling = self.limit + self.burst;
        let ndr = v["rate_pps"]
            .as_f64()
            .unwrap_or_else(|| panic!("ndr found no rate: {v}"));
        assert!(ndr <= ceiling * 1.005, "ndr {ndr} above the policer's: {v}");
        let fail = f(&v["fail_pps"]);
        assert!(
            fail > ndr && fail - ndr <= precision * fail + 1.0,
            "bracket {ndr}..{fail}: {v}"
        );
        let half = half_loss(v);
        if ndr < self.lowest(precision) || half > 0.0 {
            return Err(format!("ndr {ndr} of {ceiling}, loss at half of it {half}"));
        }
        Ok(())
    }

    /// An mlr search `v` with goals 0 % and a higher loss ratio, final trials of `d`
    /// seconds, at `precision`. Asserted: each goal's rate is not above the highest the
    /// policer lets through within its loss ratio — in a d-second trial the bucket
    /// passes limit·d + burst packets, so (limit·d + burst) / (d·(1 − ratio)) — and its
    /// bracket is at most `precision` wide. An `Err` (the bounds the testbed can spoil)
    /// when a goal's rate lies under the policer's own rate (limit / (1 − ratio)) by
    /// more than 3 % (a paced sender on a busy machine sends in small bursts the bucket
    /// does not always absorb, so the rate may lie under the first bound, but not so
    /// far), the second goal's rate is not above the first's, or half the first goal's
    /// rate (the second latency trial) lost packets.
    pub fn check_goals(&self, v: &Value, d: f64, precision: f64) -> Result<(), String> {
        if let Some(e) = v["contradiction"].as_str() {
            return Err(format!("contradicting trials: {e}"));
        }
        let goals = v["goals"].as_array().unwrap();
        assert_eq!(goals.len(), 2, "{v}");
        let mut off = vec![];
        for g in goals {
            let ratio = f(&g["loss_ratio"]);
            let truth = (self.limit * d + self.burst) / (d * (1.0 - ratio));
            let floor = self.limit / (1.0 - ratio);
            let (rate, fail) = (f(&g["rate_pps"]), f(&g["fail_pps"]));
            assert!(
                rate <= truth * 1.005,
                "goal {ratio}: {rate} pps above {truth}: {v}"
            );
            assert!(
                fail > rate && fail - rate <= precision * fail + 1.0,
                "goal {ratio}: bracket {rate}..{fail}"
            );
            if rate < floor * 0.97 {
                off.push(format!("goal {ratio}: {rate} pps under {floor}"));
            }
        }
        let (ndr, pdr) = (f(&goals[0]["rate_pps"]), f(&goals[1]["rate_pps"]));
        if pdr <= ndr {
            off.push(format!(
                "the second goal's {pdr} pps not above the first goal's {ndr}"
            ));
        }
        if half_loss(v) > 0.0 {
            off.push("loss at half the NDR".into());
        }
        match off.is_empty() {
            true => Ok(()),
            false => Err(off.join("; ")),
        }
    }
}

/// The loss ratio of a search's second latency trial (at half the rate found, by
/// default).
fn half_loss(v: &Value) -> f64 {
    let p = &v["latency"][1]["loss_ratio"];
    p.as_f64()
        .unwrap_or_else(|| panic!("no second latency trial: {v}"))
}

/// A search's `latency`: one-way delays at 10, 50, 90 and 100 % of `rate`, percentiles
/// in order, all packets through at half of it (below the policer's rate). With `hosts` (source and sink on hosts with clocks of their own) each
/// point says how its delays were related (`owd_basis`): `corrected`, or `rtt-only`
/// and withheld (the clocks are not known well enough to tell delays of
/// microseconds); without, every role read one clock and no point has a basis.
pub fn assert_latency_at_fractions(v: &Value, rate: f64, hosts: bool) {
    let l = v["latency"]
        .as_array()
        .unwrap_or_else(|| panic!("no latency: {v}"));
    let fractions: Vec<f64> = l.iter().map(|p| f(&p["fraction"])).collect();
    assert_eq!(fractions, [0.1, 0.5, 0.9, 1.0], "{v}");
    for p in l {
        let x = f(&p["fraction"]) * rate;
        assert!((f(&p["offered_pps"]) - x).abs() < 1.0, "{p}");
        assert!(f(&p["received_pps"]) > 0.0, "{p}");
        let owd = &p["owd"];
        match (hosts, p["owd_basis"].as_str()) {
            (true, Some("rtt-only")) => {
                assert_eq!(u(&owd["count"]), 0, "withheld: {p}");
                continue;
            }
            (true, Some("corrected")) | (false, None) => {}
            (_, basis) => panic!("owd_basis {basis:?} with hosts {hosts}: {p}"),
        }
        assert!(u(&owd["count"]) > 0, "{p}");
        assert!(
            u(&owd["min_ns"]) <= u(&owd["p50_ns"])
                && u(&owd["p50_ns"]) <= u(&owd["p99_ns"])
                && u(&owd["p99_ns"]) <= u(&owd["max_ns"]),
            "{p}"
        );
    }
    // Half the policer's rate gets through whole.
    assert_eq!(f(&l[1]["loss_ratio"]), 0.0, "{v}");
}
