//! Metrics sampled on every role during a trial (5 Hz: CPU, interrupts, interface
//! counters, memory), one row each in `samples`.
//!
//! Owns: the `samples` rows of a trial, written in the trial's transaction.
//! Must not: summarise them (the report does).

use crate::{Result, Store};
use rusqlite::{params, Transaction};
use serde::{Deserialize, Serialize};

/// One metric sample of one role during a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub role: String,
    /// Seconds since the trial's traffic started.
    pub t_s: f64,
    /// e.g. `cpu1.softirq` (% of that CPU), `ctxt` (switches/s), `mem.used_kib`,
    /// `if.g0.rx_pps`, `if.g0.rx_dropped_ps`.
    pub metric: String,
    pub value: f64,
}

/// Store trial `trial_id`'s samples in its transaction.
pub(crate) fn insert(
    tx: &Transaction,
    trial_id: i64,
    samples: &[SampleRow],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO samples (trial_id, role, t_s, metric, value) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for x in samples {
        stmt.execute(params![trial_id, x.role, x.t_s, x.metric, x.value])?;
    }
    Ok(())
}

impl Store {
    /// Metric samples of one trial, in time order.
    pub fn samples(&self, trial_id: i64) -> Result<Vec<SampleRow>> {
        self.rows(
            "SELECT role, t_s, metric, value FROM samples WHERE trial_id = ?1 ORDER BY t_s, role, metric",
            [trial_id],
            |r| {
                Ok(SampleRow {
                    role: r.get(0)?,
                    t_s: r.get(1)?,
                    metric: r.get(2)?,
                    value: r.get(3)?,
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{scratch_run, trial};
    use crate::TrialRecord;

    #[test]
    fn samples_come_back_in_time_order_with_their_trial() {
        let (_dir, _, mut s, run) = scratch_run("r.db");
        let at = |t_s: f64, metric: &str| SampleRow {
            role: "gateway".into(),
            t_s,
            metric: metric.into(),
            value: t_s * 10.0,
        };
        let id = s
            .insert_trial(&TrialRecord {
                samples: vec![at(0.4, "ctxt"), at(0.2, "ctxt"), at(0.2, "cpu1.softirq")],
                ..trial(run, "a")
            })
            .unwrap();
        let other = s.insert_trial(&trial(run, "b")).unwrap();
        assert_eq!(
            s.samples(id).unwrap(),
            vec![at(0.2, "cpu1.softirq"), at(0.2, "ctxt"), at(0.4, "ctxt")]
        );
        assert!(s.samples(other).unwrap().is_empty());
    }
}
