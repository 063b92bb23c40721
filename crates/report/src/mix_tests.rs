//! Unit tests of `mix.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;
use crate::testing::trial_row;
use serde_json::json;

/// A flood trial `id` of configuration `key` sent with imix: `sizes` are
/// (frame, weight, sent, received).
fn imix(id: i64, key: &str, sizes: &[(u32, u32, u64, u64)]) -> Trial {
    let mut row = trial_row(id, "flood");
    row.trial_key = key.into();
    row.params = json!({"engine": "nft", "rules": 100});
    let rows: Vec<_> = sizes
        .iter()
        .map(|(f, w, s, r)| {
            json!({"frame": f, "payload": f - 46, "weight": w,
                                   "sent": s, "received": r})
        })
        .collect();
    row.results = json!({"packet": {"mix": {"mix": "imix", "mean_frame": 353.8,
                                            "sizes": rows}}});
    Trial::new(row)
}

#[test]
fn a_mix_is_summed_over_its_trials_size_by_size() {
    let trials = [
        imix(
            1,
            "a",
            &[(64, 7, 700, 690), (570, 4, 400, 400), (1518, 1, 100, 90)],
        ),
        imix(
            2,
            "a",
            &[(64, 7, 700, 700), (570, 4, 400, 380), (1518, 1, 100, 100)],
        ),
        // Another configuration, and a trial without a mix.
        imix(3, "b", &[(64, 7, 10, 10)]),
        Trial::new(trial_row(4, "flood")),
    ];
    let figs = figures(&trials);
    assert_eq!(figs.len(), 2);
    let f = &figs[0];
    assert_eq!(f.id, "size-mix-1");
    assert_eq!(f.categories, ["64 B", "570 B", "1518 B"]);
    let ys = |i: usize| -> Vec<f64> { f.series[i].points.iter().map(|p| p.y).collect() };
    assert_eq!(f.series[0].name, "sent");
    assert_eq!(ys(0), [1400.0, 800.0, 200.0]);
    assert_eq!(f.series[1].name, "received");
    assert_eq!(ys(1), [1390.0, 780.0, 190.0]);
    assert_eq!(
        f.notes,
        ["summed over 2 trials (1, 2); lost: 64 B 0.7143 %, 570 B 2.5 %, 1518 B 5 %."]
    );
    let t = &tables(&trials)[0];
    assert_eq!(
        t.title,
        "Size mix imix: loss per frame size (flood with nft, 100 rules, summed over 2 \
         trials (1, 2))"
    );
    let want = [
        ["64", "7", "1400", "1390", "10", "0.7143"],
        ["570", "4", "800", "780", "20", "2.5"],
        ["1518", "1", "200", "190", "10", "5"],
        ["all", "", "2400", "2360", "40", "1.667"],
    ];
    assert_eq!(t.rows, want.map(|r| r.map(String::from).to_vec()));
}

#[test]
fn sizes_counted_at_the_gateway_are_not_called_lost() {
    let mut t = imix(1, "a", &[(64, 7, 700, 0), (1518, 1, 100, 0)]);
    t.row.headline.received_pps = Some(800.0);
    let t = [Trial::new(t.row)];
    let f = &figures(&t)[0];
    assert_eq!(f.series.len(), 1, "sent only");
    assert!(
        f.notes[0].contains("received per size is unknown"),
        "{:?}",
        f.notes
    );
    assert_eq!(tables(&t)[0].rows[0], ["64", "7", "700", "–", "–", "–"]);
}
