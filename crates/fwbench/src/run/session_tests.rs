//! Unit tests of `run/session.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::residue_of;
use crate::outcome::{Outcome, RoleInfo, Status};
use crate::params::workload::Workload;
use crate::params::TrialParams;
use crate::plan::build::test_params;

/// A scenario without `pin_*` is placed trial by trial like the trial commands
/// (issue 37); one with pins, or off the local testbed, as it says.
#[test]
fn a_scenario_without_pins_is_placed_like_the_trial_commands() {
    use super::scenario_pinning;
    use crate::params::Pinning;
    let flood = test_params(Workload::Flood, &[]);
    let none = Pinning::default();
    let cpus = crate::host::probe::cpus();
    let want = crate::params::Placement::Default.resolve(true, cpus);
    assert_eq!(scenario_pinning(&none, &flood, true), want);
    if cpus >= 2 {
        assert_eq!(want.gateway, Some((cpus - 1).to_string()));
    }
    // A testbed file's hosts, or not packet-rate traffic: nothing pinned.
    assert_eq!(scenario_pinning(&none, &flood, false), none);
    assert_eq!(scenario_pinning(&none, &echo_on("nft"), true), none);
    // Pins given: as given, the roles not named unpinned.
    let given = Pinning {
        client: Some("0".into()),
        ..Pinning::default()
    };
    assert_eq!(scenario_pinning(&given, &flood, true), given);
}

fn echo_on(engine: &str) -> TrialParams {
    test_params(Workload::Echo, &[("engine", engine)])
}

fn ended(status: Status, roles: &[&'static str]) -> Outcome {
    let mut o = Outcome::started("t0".into());
    o.status = status;
    o.placement = (roles.iter())
        .map(|&role| RoleInfo {
            role,
            host: 0,
            place: "ns".into(),
            requested_cpus: None,
            cpus: "0-1".into(),
            pid: 1,
            clock: None,
        })
        .collect();
    o
}

#[test]
fn a_trial_aborted_after_its_gateway_started_leaves_an_unknown_state() {
    let legacy = echo_on("iptables-legacy");
    let gateway_up = ended(Status::Unavailable, &["gateway", "server"]);
    let left = residue_of(&gateway_up, &legacy, true);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].contains("before its gateway reported"), "{left:?}");
    // Refused before any agent started (SCTP probed here): nothing to doubt.
    assert!(residue_of(&ended(Status::Unavailable, &[]), &legacy, true).is_empty());
    // Nothing installed without an engine; a named testbed keeps the crash marker's way.
    assert!(residue_of(&gateway_up, &echo_on("none"), true).is_empty());
    assert!(residue_of(&gateway_up, &legacy, false).is_empty());
    assert!(residue_of(&ended(Status::Ok, &["gateway"]), &legacy, true).is_empty());
    // The gateway reported (and kept nothing): its state is known.
    let mut reported = gateway_up.clone();
    reported.gateway = Some(proto::GatewayResults::default());
    assert!(residue_of(&reported, &legacy, true).is_empty());
}
