//! Unit tests of `ndr.rs` (`#[cfg(test)] mod tests`, kept beside it); [`step`] and
//! [`flood`] are the planted flood steps the other searches' tests run on too.

use super::*;
use crate::outcome::search::SearchSummary;
use crate::params::workload::Workload;
use results::{DoubtKind, Status};

/// A step trial as a gateway that forwards everything up to `limit` pps and loses
/// 10 % above it would give (1-s trials, the sender on schedule).
pub(crate) fn step(q: &TrialParams, limit: f64) -> Result<Outcome> {
    let Some(Rate::Pps(x)) = q.packet().map(|k| k.rate) else {
        bail!("the search asked for an unpaced step")
    };
    let sent = x.round() as u64;
    let received = if x <= limit { sent } else { sent * 9 / 10 };
    Ok(crate::outcome::tests::packet_step(
        x, sent, received, 1.0, 0,
    ))
}

/// A flood trial's parameters with `pairs` set.
pub(crate) fn flood(pairs: &[(&str, &str)]) -> TrialParams {
    crate::plan::build::test_params(Workload::Flood, pairs)
}

fn search(max_trials: u32) -> (SearchSummary, Outcome) {
    let p = flood(&[]);
    let sp = SearchParams {
        loss: 0.0,
        precision: 0.02,
        max_rate: Some(Rate::Pps(895_463.0)),
        max_trials,
        latency_at: vec![],
        ..SearchParams::default()
    };
    let r = SearchSummary::Ndr(ndr_search(&p, &sp, &mut |q| step(q, 400_000.0)).unwrap());
    let o = Outcome::started("t0".into()).with_search(r.clone());
    (r, o)
}

/// Issue 37: `ndr --max-rate 895463pps --precision 2%` out of trials said
/// `status: "ok"`, `converged: false`, no doubt. Out of trials it is flagged, the
/// doubt naming the bracket left, in the stored/JSON form too; with enough trials
/// the same search converges and is `ok`.
#[test]
fn an_ndr_out_of_trials_is_flagged_never_ok() {
    let (r, o) = search(3);
    let SearchSummary::Ndr(n) = &r else {
        unreachable!()
    };
    assert!(!n.converged && !r.converged());
    assert_eq!(o.status, Status::Flagged, "{:?}", o.error);
    assert_eq!(r.doubts().len(), 1, "{:?}", r.doubts());
    assert_eq!(r.doubts()[0].kind, DoubtKind::NotConverged);
    let why = o.error.as_deref().unwrap();
    assert!(
        why.starts_with(
            "not converged: out of trials: 3 search steps (--max-trials) left the answer \
             between 223866 pps (passed) and 447732 pps (failed), 50 % apart where 2 % \
             was asked"
        ),
        "{why}"
    );
    let j = serde_json::to_value(&o).unwrap();
    assert_eq!(j["status"], "flagged");
    assert_eq!(j["search"]["converged"], false);
    assert_eq!(j["search"]["doubts"][0]["kind"], "not_converged");
    assert_eq!(j["doubts"][0]["kind"], "not_converged");

    let (r, o) = search(20);
    let SearchSummary::Ndr(n) = &r else {
        unreachable!()
    };
    assert!(n.converged, "{:?}", r.doubts());
    assert_eq!(o.status, Status::Ok, "{:?}", o.error);
    let found = n.rate_pps.unwrap();
    assert!((392_000.0..=400_000.0).contains(&found), "{found}");
}
