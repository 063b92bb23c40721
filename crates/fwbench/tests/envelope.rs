//! Privileged: the safe envelope (issue 39) converges on a gateway whose update path
//! has a known limit. The gateway's `nft` is slowed by 100 ms a call (a wrapper first
//! in the PATH the agent inherits: a policed update path, outside fwbench), so no
//! more than 10 updates/s can commit one after another; the search must find the rate
//! its own commits allow, within its precision, and no more. Without root: ignored
//! (skipped).

mod util;

use serde_json::Value;
use std::process::Command;
use util::*;

/// A directory holding an `nft` that sleeps `delay_s` before running the real one.
fn slow_nft(dir: &TempDir, delay_s: &str) -> String {
    let real = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("nft installed (scripts/setup.sh)");
    let wrapper = dir.file("nft");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\n# a policed update path\nsleep {delay_s}\nexec {real} \"$@\"\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[root_test(serial, tb = "forward")]
fn the_envelope_of_a_policed_update_path_is_its_known_limit() {
    let dir = TempDir::new();
    let path = slow_nft(&dir, "0.1");
    let db = dir.file("envelope.db");
    let args = cmd!(
        "envelope --testbed",
        &tb.name,
        "--json --db",
        &db,
        "-r 1kpps --engine nft --rules 100 --event add:1@1s -t 4",
        "--latency-target 400ms --max-update-rate 40"
    );
    let o = Command::new(bin())
        .args(&args)
        .env("PATH", &path)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}\n{}", stdout(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let s = &v["result"];
    assert_eq!(s["search"], "envelope", "{s}");
    assert_eq!(s["converged"], true, "{s}");
    let rate = s["rate"].as_f64().unwrap();
    let fail = s["fail_rate"].as_f64().unwrap();
    // Each commit is the wrapper's 100 ms and nft's own: one after another, they
    // cannot keep up with more than 1000 / commit updates/s.
    let points = s["points"].as_array().unwrap();
    let at = points
        .iter()
        .find(|p| p["rate"].as_f64() == Some(rate) && p["pass"] == true)
        .unwrap();
    let commit = at["commit_ms"]["p50"].as_f64().unwrap();
    assert!(commit >= 100.0, "{at}");
    let limit = 1000.0 / commit;
    assert!(
        rate <= 10.0 && rate <= limit * 1.05,
        "{rate} vs {limit}: {s}"
    );
    assert!(rate >= limit * 0.8, "{rate} vs {limit}: {s}");
    assert!(fail > rate && fail <= limit * 1.5, "{fail}: {s}");
    // Above it, the updates queued: their latency from due grew past the target.
    let above = points
        .iter()
        .find(|p| p["rate"].as_f64() == Some(fail))
        .unwrap();
    assert_eq!(above["pass"], false);
    // The agent stamps each update's wait from when it was due: the queue shows.
    let p99 = |x: &Value| x["p99"].as_f64().unwrap();
    assert!(
        p99(&above["latency_ms"]) > p99(&above["commit_ms"]) + 20.0,
        "{above}"
    );
    // It missed for the queue: updates that never ran, a latency above the target, or
    // a wait that grew over the step.
    let why = above["why"].as_str().unwrap();
    assert!(
        why.contains("did not commit")
            || why.contains("above 400 ms")
            || why.starts_with("the updates fell behind"),
        "{above}"
    );
    // Every step is a stored trial, and the answer too, after them.
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "json", "-o", "-"]);
    let rep: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let text = rep.to_string();
    assert!(
        text.contains("Safe envelope of add:1 (batch) updates at 100 rules"),
        "{}",
        &text[..text.len().min(3000)]
    );
}
