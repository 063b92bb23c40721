//! Unit tests of `plan/build.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;
use crate::params::search::Asked;
use crate::params::workload::Workload;

fn flood(pairs: &[(&str, &str)]) -> AxisValues {
    AxisValues::from_text(Asked::Traffic(Workload::Flood), pairs).unwrap()
}

/// Why the front door refuses workload `w` with `pairs` (`None`: built).
fn refusal(w: &str, pairs: &[(&str, &str)]) -> Option<String> {
    let v = AxisValues::from_text(w.parse().unwrap(), pairs).unwrap();
    build(&v, 0, &Context::default())
        .err()
        .map(|e| e.to_string())
}

/// Every caller gets the same: the checks run, adaptive and import paths applied
/// before them and before the key.
#[test]
fn one_front_door_checks_and_applies_the_context() {
    // A cross-field refusal, whatever the caller.
    let e = build(
        &flood(&[("import_ipset", "s.ipset")]),
        0,
        &Context::default(),
    )
    .unwrap_err();
    assert!(matches!(e, PlanError::Conflict(_)), "{e:?}");
    assert!(e.to_string().contains("give its import too"), "{e}");
    // Import files relative to the scenario's directory; absolute ones as given.
    let v = flood(&[("import", "r.nft")]);
    let p = build(&v, 0, &Context::scenario("dir/s.toml")).unwrap();
    assert_eq!(p.import.as_deref(), Some("dir/r.nft"));
    let p = build(&v, 0, &Context::default()).unwrap();
    assert_eq!(p.import.as_deref(), Some("r.nft"));
    let abs = flood(&[("import", "/r.nft")]);
    let p = build(&abs, 0, &Context::scenario("dir/s.toml")).unwrap();
    assert_eq!(p.import.as_deref(), Some("/r.nft"));
    // Adaptive applied, then checked: an error of its own kind.
    let mut cx = Context {
        adaptive: Some(Adaptive {
            precision: 0.01,
            max_s: 60.0,
        }),
        ..Context::default()
    };
    let p = build(&flood(&[]), 0, &cx).unwrap();
    assert_eq!(p.adaptive, cx.adaptive);
    cx.adaptive = Some(Adaptive {
        precision: 0.01,
        max_s: 1.0,
    });
    let e = build(&flood(&[("duration", "5")]), 0, &cx).unwrap_err();
    assert!(matches!(e, PlanError::Adaptive(_)), "{e:?}");
    // The key follows what was built (adaptive is part of it).
    let fixed = build(&flood(&[]), 0, &Context::default()).unwrap();
    cx.adaptive = Some(Adaptive {
        precision: 0.01,
        max_s: 60.0,
    });
    let adaptive = build(&flood(&[]), 0, &cx).unwrap();
    assert_ne!(trial_key(&fixed, 1), trial_key(&adaptive, 1));
}

/// Each kind takes a gateway event as it declares (`TrialKind::event_fit`); the front
/// door refuses it, saying why, for the kinds and settings that cannot run it.
#[test]
fn gateway_events_are_refused_by_the_kinds_that_cannot_take_them() {
    let add = ("event", "add:1@1s");
    let delete = ("event", "delete:1@1s");
    for w in [
        "flood", "flow", "ping", "newflows", "sessions", "bulk", "http", "echo",
    ] {
        assert_eq!(refusal(w, &[add]), None, "{w}");
    }
    let held = refusal("connections", &[add]).expect("refused");
    assert!(
        held.starts_with("--event: connections opens connections"),
        "{held}"
    );
    let echo = refusal("echo", &[delete]).expect("refused");
    assert!(
        echo.contains("echo's marker is client 1, whose tcp connection"),
        "{echo}"
    );
    assert_eq!(refusal("echo", &[delete, ("proto", "udp")]), None);
    let curl = refusal("http", &[add, ("client_program", "curl")]).expect("refused");
    assert!(curl.contains("--event with curl"), "{curl}");
    let input = refusal("sessions", &[add, ("topology", "input")]).expect("refused");
    assert!(input.contains("--event in topology input"), "{input}");
}

/// An update due at or after the end of a trial's traffic is refused where the
/// duration ends it: timed kinds, and sessions without a count (the duration bounds
/// them); sessions with a count, and bulk and http (10 transfers unless told), run
/// until the client is done, whatever the duration.
#[test]
fn an_update_due_after_the_duration_is_refused_where_the_duration_ends_the_traffic() {
    let late = [("event", "add:1@3s"), ("duration", "2")];
    for w in ["flood", "flow", "ping", "echo", "sessions"] {
        let why = refusal(w, &late).unwrap_or_else(|| panic!("{w}: not refused"));
        assert!(
            why.contains("due at 3 s, not before the end of the trial's 2 s of traffic"),
            "{w}: {why}"
        );
        assert_eq!(
            refusal(w, &[("event", "add:1@1s"), ("duration", "2")]),
            None,
            "{w}"
        );
    }
    let counted = [late[0], late[1], ("count", "500")];
    assert_eq!(refusal("sessions", &counted), None);
    assert_eq!(refusal("bulk", &late), None);
    assert_eq!(refusal("http", &late), None);
}
