//! Seed 002's degradation point: flow trials at bisected rule counts.

use crate::error::usage;
use crate::outcome::search::DegradeReport;
use crate::outcome::search::Point;
use crate::params::search::check_degrade;
use crate::params::search::SearchParams;
use crate::params::TrialParams;
use crate::search::bisect::Bisect;
use crate::search::bisect::Step;
use crate::search::bisect::Width;
use crate::search::ndr::point;
use crate::search::ndr::progress;
use crate::search::step_params;
use crate::search::Runner;
use anyhow::Result;

/// Seed 002's degradation point: the smallest rule count at which a paced flow loses
/// more than `sp.loss`, searched between 0 and `sp.max_rules`.
pub fn degrade_search(
    p: &TrialParams,
    sp: &SearchParams,
    run: &mut Runner,
) -> Result<DegradeReport> {
    check_degrade(p, sp).map_err(usage)?;
    let mut q = step_params(p);
    let mut b = Bisect::new(
        0.0,
        sp.max_rules as f64,
        false,
        Width::Absolute(sp.resolution as f64),
    )
    .integer();
    let mut points: Vec<Point> = Vec::new();
    let max = 2
        + (sp.max_rules as f64 / sp.resolution.max(1) as f64)
            .log2()
            .ceil()
            .max(0.0) as usize
        + 2;
    let found = loop {
        match b.next_step() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                if points.len() >= max + 4 {
                    break None;
                }
                q.rules = x as u32;
                let o = run(&q)?;
                let pt = point(x, &o, sp.loss, false)?;
                progress(points.len() + 1, max, &format!("{} rules", x as u32), &pt);
                b.record(pt.pass);
                points.push(pt);
            }
        }
    };
    // Out of trials: the bracket so far, flagged (never `ok`: not converged).
    let doubts = match found {
        Some(_) => vec![],
        None => {
            let (pass, fail) =
                crate::search::witness::bracket(points.iter().map(|q| (q.x, q.pass)));
            vec![crate::search::witness::out_of_trials(
                &format!("{} trials", points.len()),
                "rules",
                pass,
                fail,
                Width::Absolute(sp.resolution as f64),
            )]
        }
    };
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Ok(DegradeReport {
        loss_threshold: sp.loss,
        resolution: sp.resolution,
        max_rules: sp.max_rules,
        last_good_rules: found.and_then(|f| f.pass).map(|x| x as u32),
        first_degraded_rules: found.and_then(|f| f.fail).map(|x| x as u32),
        trials: points.len(),
        converged: found.is_some(),
        points,
        doubts,
    })
}
