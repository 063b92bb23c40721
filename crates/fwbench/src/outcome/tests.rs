//! Unit tests of `outcome`: the stored form keeps its keys and their order.

use super::*;
use crate::workloads::{echo, packet};

fn stored(figures: Option<Figures>) -> String {
    let o = Outcome {
        figures,
        ..Outcome::started("t0".into())
    };
    serde_json::to_string(&o).unwrap()
}

/// Every stored trial has `summary` (echo's figures, else null); the other families'
/// figures follow it under their own key, before `gateway` — byte for byte as before
/// the figures said their own key (old results files read the same).
#[test]
fn stored_form_keys_each_family_as_before() {
    let head =
        r#"{"status":"ok","error":null,"started_at":"t0","finished_at":"t0","placement":[],"#;
    assert_eq!(
        stored(None),
        format!(r#"{head}"summary":null,"gateway":null}}"#)
    );

    let ping = packet::ping::PingSummary {
        sent: 3,
        received: 2,
        lost: 1,
        invalid: 0,
        rtt: proto::RttSummary::default(),
        elapsed_s: 1.5,
        finished: true,
        events: None,
    };
    let text = stored(Some(Figures::Ping(ping.clone())));
    let figures = serde_json::to_string(&ping).unwrap();
    assert_eq!(
        text,
        format!(r#"{head}"summary":null,"ping":{figures},"gateway":null}}"#)
    );

    let c = proto::EchoClientResults {
        clients: vec![],
        rtt: proto::RttSummary::default(),
        elapsed_ns: 1_000_000_000,
        events: None,
    };
    let e = echo::summarise(&c, &proto::EchoServerResults { clients: vec![] });
    let text = stored(Some(Figures::Echo(e.clone())));
    let figures = serde_json::to_string(&e).unwrap();
    assert_eq!(
        text,
        format!(r#"{head}"summary":{figures},"gateway":null}}"#)
    );
}
