//! Size mixes (issue 37): a flood sent with `--size imix`, stored as a trial stores it
//! (`results.packet.mix`), read back as a bar chart of sent and received per frame size
//! with the loss of each size, in the page and the Markdown.

use serde_json::json;
use store::Headline;

mod common;
use common::{figure, figure_in_page, finish, new_run, report_of, table, trial};

#[test]
fn an_imix_flood_shows_sent_and_received_per_frame_size() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("imix", None)).unwrap();
        let mut t = trial(
            run,
            "imix-nft".into(),
            1,
            "flood",
            json!({"engine": "nft", "rules": 1000}),
            Headline::default(),
        );
        t.results = json!({"status": "ok", "packet": {"sent": 12000, "received": 11880,
        "mix": {"mix": "imix", "mean_frame": 353.83, "sizes": [
            {"frame": 64, "payload": 18, "weight": 7, "sent": 7000, "received": 6930},
            {"frame": 570, "payload": 524, "weight": 4, "sent": 4000, "received": 3960},
            {"frame": 1518, "payload": 1472, "weight": 1, "sent": 1000, "received": 990}
        ]}}});
        s.insert_trial(&t).unwrap();
        finish(s, run)
    });
    let run = &r.runs[0];
    let id = format!("size-mix-{}", run.trials[0].id);
    let f = figure(run, &id);
    assert_eq!(f.categories, ["64 B", "570 B", "1518 B"]);
    let ys = |i: usize| -> Vec<f64> { f.series[i].points.iter().map(|p| p.y).collect() };
    assert_eq!(
        (f.series[0].name.as_str(), ys(0)),
        ("sent", vec![7000.0, 4000.0, 1000.0])
    );
    assert_eq!(
        (f.series[1].name.as_str(), ys(1)),
        ("received", vec![6930.0, 3960.0, 990.0])
    );
    let t = table(run, "Size mix imix: loss per frame size");
    assert_eq!(t.rows[0], ["64", "7", "7000", "6930", "70", "1"]);
    assert_eq!(t.rows[3], ["all", "", "12000", "11880", "120", "1"]);

    // In the page: the chart (two bars per size), its note under it, the table.
    let html = r.html();
    let fig = figure_in_page(&html, &id);
    assert!(fig.contains(
        "Size mix imix: packets sent and received per frame size (flood with nft, 1000 rules)"
    ));
    assert_eq!(
        fig.matches("<rect x=").count(),
        6 + 1,
        "six bars and the frame"
    );
    assert!(
        fig.contains(&format!(
            "trial {}; lost: 64 B 1 %, 570 B 1 %, 1518 B 1 %.",
            run.trials[0].id
        )),
        "{fig}"
    );
    assert!(html.contains("Size mix imix: loss per frame size"));
    assert!(r.markdown().contains("Size mix imix: loss per frame size"));
}
