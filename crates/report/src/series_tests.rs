//! Unit tests of `series`, beside `series.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;

/// A configuration as the store gives it: the parameters and the effective engine
/// the controller recorded from them.
fn config(params: serde_json::Value) -> Config {
    let engine: fwmodel::Engine = params["engine"].as_str().unwrap().parse().unwrap();
    let family = params["nft_family"]
        .as_str()
        .unwrap_or("inet")
        .parse()
        .unwrap();
    let engine = store::EngineRow::of(fwmodel::EffectiveEngine::new(engine, family));
    Config::new(
        crate::model::canonical(&params),
        params,
        "flood".into(),
        Some(engine),
    )
}

#[test]
fn nft_series_name_their_table_family() {
    use serde_json::json;
    let cs = [
        config(json!({"engine": "nft"})),
        config(json!({"engine": "nft", "nft_family": "ip"})),
        config(json!({"engine": "nft-set"})),
        config(json!({"engine": "iptables-legacy"})),
    ];
    let refs: Vec<&Config> = cs.iter().collect();
    let names: Vec<String> = group(&refs, &[]).into_keys().collect();
    assert_eq!(
        names,
        [
            "engine=iptables-legacy",
            "engine=nft (inet)",
            "engine=nft (ip)",
            "engine=nft-set (inet)"
        ]
    );
    // Only the family varies: it names itself, with its default.
    let only = [&cs[0], &cs[1]];
    let names: Vec<String> = group(&only, &[]).into_keys().collect();
    assert_eq!(names, ["nft_family=inet", "nft_family=ip"]);
}

/// Configurations sharing a label are named by what differs within it, a key that only
/// repeats another (`chain` beside `topology`) left out; a label of its own is its name.
#[test]
fn a_shared_label_is_named_by_what_differs_within_it() {
    use serde_json::json;
    let cs = [
        config(
            json!({"engine": "nft", "label": "128 B", "topology": "forward", "chain": "forward"}),
        ),
        config(json!({"engine": "nft", "label": "128 B", "topology": "input", "chain": "input"})),
        config(json!({"engine": "nft", "label": "1280 B", "topology": "input", "chain": "input"})),
    ];
    let refs: Vec<&Config> = cs.iter().collect();
    let namer = Namer::new(&refs);
    let names: Vec<String> = cs.iter().map(|c| namer.name(c)).collect();
    assert_eq!(
        names,
        [
            "128 B (topology=forward)",
            "128 B (topology=input)",
            "1280 B"
        ]
    );
}
