//! Unit tests of `plan/axes.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;
use crate::params::workload::Workload;

fn every_workload() -> Vec<Asked> {
    Asked::names().iter().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn names_are_unique_and_defaults_parse_for_every_workload() {
    let mut seen = std::collections::HashSet::new();
    for a in AXES {
        assert!(seen.insert(a.name), "axis {} twice", a.name);
        for w in every_workload() {
            let d = a.default_for(w);
            assert!(a.parse(d, w).is_ok(), "{} default {d:?} for {w}", a.name);
        }
    }
}

#[test]
fn every_workload_builds_from_defaults_alone() {
    for w in every_workload() {
        let p = trial_params(&AxisValues::defaults(w), 7).unwrap_or_else(|e| panic!("{w}: {e}"));
        assert_eq!(p.name(), w.as_str());
    }
}

#[test]
fn conntrack_axes_fill_the_packet_parameters() {
    let w = Asked::Traffic(Workload::NewFlows);
    let p =
        |pairs: &[(&str, &str)]| AxisValues::from_text(w, pairs).and_then(|v| trial_params(&v, 1));
    let k = p(&[
        ("ct_max", "5000"),
        ("ct_fill", "1000"),
        ("ct_udp_timeout", "10"),
    ])
    .unwrap();
    let k = k.packet().unwrap();
    assert_eq!(
        (k.ct_max, k.ct_fill, k.ct_udp_timeout, k.ct_buckets),
        (Some(5000), Some(1000), Some(10), None)
    );
    // A fill of 0 is none (a sweep starts at an empty table): the same trial key.
    let none = p(&[]).unwrap();
    assert_eq!(p(&[("ct_fill", "0")]).unwrap(), none);
    assert!(p(&[("ct_max", "0")]).is_err());
    let huge = p(&[("ct_buckets", "4294967295")]).unwrap_err().to_string();
    assert!(huge.contains("are more than 16777216"), "{huge}");
    assert!(p(&[("ct_buckets", "16777216")]).is_ok());
    assert!(p(&[("ct_max", "many")]).is_err());
    assert_eq!(none.name(), "newflows");
    let v = AxisValues::defaults(Asked::Search(SearchKind::NdrNewflows));
    assert_eq!(trial_params(&v, 1).unwrap().name(), "ndr-newflows");
}

/// The event axes are every workload's; the ones that cannot run an event say
/// why. The key form keeps a packet trial's event where it was (between `aim`
/// and the conntrack settings) and puts the others' at the end.
#[test]
fn events_on_every_workload_and_where_the_key_keeps_them() {
    let p = |w: Workload, pairs: &[(&str, &str)]| {
        let v = AxisValues::from_text(Asked::Traffic(w), pairs).map_err(|e| e.to_string())?;
        let cx = crate::plan::build::Context::default();
        crate::plan::build::build(&v, 1, &cx).map_err(|e| e.to_string())
    };
    let add = ("event", "add:1@1s");
    for w in [
        Workload::Echo,
        Workload::Flood,
        Workload::Flow,
        Workload::Ping,
        Workload::NewFlows,
        Workload::Sessions,
        Workload::Bulk,
        Workload::Http,
    ] {
        let t = p(w, &[add]).unwrap_or_else(|e| panic!("{w}: {e}"));
        assert_eq!(t.events.as_ref().unwrap().k, 1, "{w}");
    }
    let refused = |w, pairs: &[(&str, &str)], why: &str| {
        let e = p(w, pairs).unwrap_err();
        assert!(e.contains(why), "{w}: {e}");
    };
    refused(
        Workload::Connections,
        &[add],
        "connections opens connections",
    );
    refused(
        Workload::Echo,
        &[("event", "delete:1@1s"), ("proto", "tcp")],
        "use -P udp",
    );
    assert!(p(
        Workload::Echo,
        &[("event", "delete:1@1s"), ("proto", "udp")]
    )
    .is_ok());
    refused(
        Workload::Http,
        &[add, ("client_program", "curl")],
        "built-in client",
    );
    refused(
        Workload::Sessions,
        &[add, ("topology", "input")],
        "topology input",
    );
    let flow = p(Workload::Flow, &[add, ("ct_fill", "10"), ("aim", "2")]).unwrap();
    let json = serde_json::to_string(&flow).unwrap();
    let at = |k: &str| json.find(k).unwrap_or_else(|| panic!("{k} in {json}"));
    assert!(at("\"aim\"") < at("\"events\"") && at("\"events\"") < at("\"ct_fill\""));
    assert_eq!(json.matches("\"events\"").count(), 1, "{json}");
    let echo = serde_json::to_string(&p(Workload::Echo, &[add]).unwrap()).unwrap();
    assert!(
        echo.ends_with(r#","events":{"kind":"add","k":1,"at_s":1.0,"method":"batch"}}"#),
        "{echo}"
    );
    let plain = serde_json::to_string(&p(Workload::Echo, &[]).unwrap()).unwrap();
    assert!(!plain.contains("events"), "{plain}");
    // Ping's and the sessions' marker stream sends from a second client address.
    let addresses =
        |w, pairs: &[(&str, &str)]| crate::params::events::client_addresses(&p(w, pairs).unwrap());
    assert_eq!(addresses(Workload::Ping, &[add]), 2);
    assert_eq!(addresses(Workload::Ping, &[]), 1);
    assert_eq!(addresses(Workload::Sessions, &[add]), 2);
    assert_eq!(addresses(Workload::Flow, &[add]), 1);
    assert_eq!(addresses(Workload::Echo, &[add, ("clients", "3")]), 3);
}

/// A value is parsed once, into its type; the builder takes it as it is.
#[test]
fn values_are_typed_once_and_carried() {
    let flood = Asked::Traffic(Workload::Flood);
    let rate = find("rate").unwrap().parse("10MB/s", flood).unwrap();
    assert_eq!(rate, Value::rate(Rate::Bps(80e6)));
    assert!(find("rate").unwrap().parse("fast", flood).is_err());
    let mut v = AxisValues::defaults(flood);
    v.set(rate);
    v.set(Value::rules(100));
    let p = trial_params(&v, 1).unwrap();
    assert_eq!(p.packet().unwrap().rate, Rate::Bps(80e6));
    assert_eq!(p.rules, 100);
    // An import implies the import model unless a model was given.
    let mut v = AxisValues::defaults(flood);
    v.set(Value::import(Some("r.nft".into())));
    assert_eq!(trial_params(&v, 1).unwrap().model, Model::Import);
    v.set(Value::model(Model::Linear));
    assert!(v.model_given);
    assert_eq!(trial_params(&v, 1).unwrap().model, Model::Linear);
    // Degrade renders its largest rule set; ping lasts for its probes.
    let d =
        AxisValues::from_text(Asked::Search(SearchKind::Degrade), &[("max_rules", "500")]).unwrap();
    assert_eq!(trial_params(&d, 1).unwrap().rules, 500);
    let ping = AxisValues::from_text(
        Asked::Traffic(Workload::Ping),
        &[("count", "100"), ("interval", "100ms"), ("duration", "1")],
    )
    .unwrap();
    assert!(trial_params(&ping, 1).unwrap().duration_s > 10.0);
}

#[test]
fn size_is_the_workloads_kind_of_size() {
    let http = Asked::Traffic(Workload::Http);
    let flood = Asked::Traffic(Workload::Flood);
    let size = find("size").unwrap();
    assert_eq!(
        size.parse("8M", http).unwrap(),
        Value::size(Size::Bytes(8 << 20))
    );
    assert!(size.parse("8M", flood).is_err());
    assert_eq!(
        size.parse("frame:64", flood).unwrap(),
        Value::size(Size::Packet(PacketSize::Frame(64)))
    );
    let mut v = AxisValues::defaults(http);
    v.set(size.parse("frame:64", flood).unwrap());
    assert!(trial_params(&v, 1)
        .unwrap_err()
        .to_string()
        .contains("packet size"));
}

#[test]
fn foreign_axes_follow_the_classes() {
    let (t, search) = (Asked::Traffic, Asked::Search);
    for (axis, w, foreign) in [
        ("size", t(Workload::Http), false),
        ("size", t(Workload::Flood), false),
        ("size", t(Workload::Echo), true),
        ("proto", t(Workload::Flood), true),
        ("loss", t(Workload::Flood), true),
        ("loss", search(SearchKind::Ndr), false),
        ("rate", search(SearchKind::Degrade), false),
        ("parallel", t(Workload::Ping), true),
        ("engine", t(Workload::Connections), false),
    ] {
        assert_eq!(find(axis).unwrap().foreign_to(w), foreign, "{axis} for {w}");
    }
}
