//! Unit tests of `views`, beside `views.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use serde_json::json;

fn config(params: serde_json::Value, y: f64, ci: f64) -> Config {
    let mut metrics = BTreeMap::new();
    metrics.insert(
        "m".to_string(),
        Summary {
            n: 3,
            mean: y,
            sd: None,
            ci95: Some(ci),
        },
    );
    let key = crate::model::canonical(&params);
    Config {
        metrics,
        ..Config::new(key, params, "echo".into(), None)
    }
}

#[test]
fn averages_over_the_parameters_not_shown_with_a_ci_over_configurations() {
    // Two frame sizes per (proto, n): the point is their mean; the CI is t(1)·sd/√2.
    let c = |proto: &str, clients: u32, frame: u32, y: f64, ci: f64| {
        config(
            json!({"proto": proto, "clients": clients, "frame_size": frame}),
            y,
            ci,
        )
    };
    let cs = [
        c("tcp", 5, 64, 10.0, 0.1),
        c("tcp", 5, 128, 14.0, 0.1),
        c("tcp", 10, 64, 8.0, 0.5),
        c("udp", 5, 64, 20.0, 1.0),
    ];
    let refs: Vec<&Config> = cs.iter().collect();
    let y = |c: &Config| crate::series::metric(c, "m", 1.0);
    let x = |c: &Config| c.param_f64("clients");
    let s = averaged_series(&refs, &|c| Some(proto_family(c)), &x, &y);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].name, "TCP");
    let p = &s[0].points[0];
    assert_eq!((p.x, p.y), (5.0, 12.0));
    let want = crate::stats::ci95_half_width(&[10.0, 14.0]).unwrap();
    assert!((p.ci95.unwrap() - want).abs() < 1e-12);
    // One configuration alone keeps its own CI.
    assert_eq!(s[0].points[1].ci95, Some(0.5));
    assert!(averaged_note(&refs, &["proto", "clients"]).contains("mean over frame_size"));
}
