//! How much a run's repetitions varied, said once: the spread of the main metric over
//! each configuration's repetitions (its coefficient of variation), summed up for the
//! run as a note beside the findings, and warned of only where one configuration
//! varied far more than the run's others (issue 37: a noisy machine is not something
//! a user acts on per configuration; the CIs already carry the noise).
//!
//! Owns: [`Spread`] (each configuration's CV and the run's median), which
//! configurations stand out ([`Spread::standouts`]) and the note ([`Spread::note`]).
//! Must not: name a workload family; change a CI or a finding (the noise stays in them).

use crate::model::{main_metric, Config};
use crate::series;
use crate::stats;

/// Coefficient of variation of the main metric above which a configuration's
/// repetitions count as varying (the run's note counts them).
pub const UNSTABLE_CV: f64 = 0.05;

/// A configuration whose CV is above [`UNSTABLE_CV`] and more than this many times the
/// run's median CV stands out from the machine's general noise: a warning of its own.
pub const STANDOUT: f64 = 3.0;

/// Fewer configurations with a CV than this give no median to tell a standout from the
/// machine's noise: each above [`UNSTABLE_CV`] is warned of.
pub const FEW: usize = 5;

/// The main metric's spread over each configuration's repetitions (those whose rate
/// is the gateway's: `Config::gateway_values`).
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// (configuration's name, main metric, CV, repetitions), in the configurations'
    /// order; only configurations with a CV (two repetitions or more, mean not 0).
    pub configs: Vec<(String, String, f64, usize)>,
    /// Median of their CVs.
    pub median_cv: Option<f64>,
}

impl Spread {
    /// The spread of `configs`' repetitions.
    pub fn of(configs: &[Config]) -> Spread {
        // Named among the configurations it names (not search steps, each with trials).
        let refs: Vec<&Config> = configs
            .iter()
            .filter(|c| !c.reps.is_empty() && c.step_of().is_none())
            .collect();
        let namer = series::Namer::new(&refs);
        let cvs: Vec<(String, String, f64, usize)> = configs
            .iter()
            // A search's steps vary as its guesses do: no configuration's noise. One that
            // passed every packet offered varies as the sender's pacing does (a CV of 0
            // that made every varying configuration "more than 3× the run's median").
            // A configuration paced in every repetition varies as the sender paces; one
            // paced in some varies as the gateway kept up or did not: its instability,
            // kept.
            .filter(|c| !c.reps.is_empty() && c.step_of().is_none() && !c.paced_throughout())
            .filter_map(|c| {
                let (m, _) = main_metric(c)?;
                // The repetitions whose rate is the gateway's: one fwbench limited is
                // the run's `fwbench-limit` warning, not the configuration's noise.
                let s = c.metrics.get(m)?;
                let cv = s.cv()?;
                // A label several configurations share (an A/B's arms) names none of
                // them alone: what differs within it follows.
                let name = namer.name(c);
                Some((name, m.to_string(), cv, s.n))
            })
            .collect();
        let median_cv = stats::median(cvs.iter().map(|x| x.2));
        Spread {
            configs: cvs,
            median_cv,
        }
    }

    /// The configurations that varied above [`UNSTABLE_CV`] and more than [`STANDOUT`]
    /// times the run's median CV: something of their own, not the machine's noise
    /// (with [`FEW`] configurations or fewer, each above [`UNSTABLE_CV`]).
    pub fn standouts(&self) -> impl Iterator<Item = &(String, String, f64, usize)> {
        let median = if self.few() {
            0.0
        } else {
            self.median_cv.unwrap_or(0.0)
        };
        self.configs
            .iter()
            .filter(move |x| x.2 > UNSTABLE_CV && x.2 > STANDOUT * median)
    }

    /// Too few configurations for a run-wide median ([`FEW`]).
    fn few(&self) -> bool {
        self.configs.len() < FEW
    }

    /// The standout warning's message for one configuration.
    pub fn standout_message(&self, (name, m, cv, reps): &(String, String, f64, usize)) -> String {
        if self.few() {
            return format!(
                "unstable configuration {name}: CV of {m} is {:.1} % over {reps} reps (> {:.0} %; \
                 too few configurations in the run to tell it from the machine's noise): look at \
                 its trials or run it again",
                cv * 100.0,
                UNSTABLE_CV * 100.0
            );
        }
        format!(
            "unstable configuration {name}: CV of {m} is {:.1} % over {reps} reps, more than \
             {STANDOUT:.0}× the run's median of {:.1} % — this configuration, not the machine's \
             general noise: look at its trials (a disturbed one) or run it again",
            cv * 100.0,
            self.median_cv.unwrap_or(0.0) * 100.0
        )
    }

    /// "Noise: …" — how much the repetitions varied, said once, when any configuration
    /// varied above [`UNSTABLE_CV`]: the median CV, how many configurations above it,
    /// the largest; that the CIs carry it and what narrows them. `None` on a quiet run.
    pub fn note(&self) -> Option<String> {
        let above: Vec<&(String, String, f64, usize)> =
            self.configs.iter().filter(|x| x.2 > UNSTABLE_CV).collect();
        let largest = above.iter().max_by(|a, b| a.2.total_cmp(&b.2))?;
        let reps = stats::median(self.configs.iter().map(|x| x.3 as f64)).unwrap_or(0.0);
        Some(format!(
            "Noise: the repetitions varied — median CV of the main metric {:.1} % over {} \
             configurations of {reps:.0} repetitions; {} of them above {:.0} %, the most \
             {:.1} % ({}). The CIs above carry this spread; more repetitions or a quieter \
             machine narrow them.",
            self.median_cv.unwrap_or(0.0) * 100.0,
            self.configs.len(),
            above.len(),
            UNSTABLE_CV * 100.0,
            largest.2 * 100.0,
            largest.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(cvs: &[f64]) -> Spread {
        Spread {
            configs: cvs
                .iter()
                .enumerate()
                .map(|(i, cv)| (format!("c{i}"), "received_pps".into(), *cv, 4))
                .collect(),
            median_cv: stats::median(cvs.iter().copied()),
        }
    }

    /// A noisy machine: every configuration varies 4–9 %: one note, no standout.
    #[test]
    fn a_machine_wide_spread_is_one_note_and_no_warning() {
        let s = spread(&[0.04, 0.06, 0.05, 0.09, 0.07, 0.08]);
        assert_eq!(s.standouts().count(), 0);
        let n = s.note().unwrap();
        assert!(
            n.starts_with("Noise: the repetitions varied — median CV of the main metric 6.5 %"),
            "{n}"
        );
        assert!(n.contains("over 6 configurations of 4 repetitions"), "{n}");
        assert!(
            n.contains("4 of them above 5 %, the most 9.0 % (c3)"),
            "{n}"
        );
    }

    /// One configuration at 30 % among ones at 2 %: a warning of its own, and the note.
    #[test]
    fn a_configuration_far_above_the_run_stands_out() {
        let s = spread(&[0.02, 0.02, 0.30, 0.01, 0.03]);
        let out: Vec<_> = s.standouts().collect();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, "c2");
        let m = s.standout_message(out[0]);
        assert!(
            m.contains("CV of received_pps is 30.0 % over 4 reps"),
            "{m}"
        );
        assert!(m.contains("median of 2.0 %"), "{m}");
        assert!(s.note().is_some());
    }

    /// Fewer than five configurations: no median to compare with, each above 5 % warned.
    #[test]
    fn with_few_configurations_each_above_five_percent_is_warned() {
        let s = spread(&[0.18, 0.06, 0.01]);
        let out: Vec<_> = s.standouts().map(|x| x.0.as_str()).collect();
        assert_eq!(out, ["c0", "c1"]);
        assert!(s
            .standout_message(s.standouts().next().unwrap())
            .contains("too few"));
    }

    /// A quiet run: no note; above 3× the median but below 5 %: no standout.
    #[test]
    fn a_quiet_run_says_nothing() {
        let s = spread(&[0.005, 0.01, 0.04, 0.008]);
        assert_eq!(s.standouts().count(), 0);
        assert_eq!(s.note(), None);
        assert_eq!(spread(&[]).note(), None);
    }
}
