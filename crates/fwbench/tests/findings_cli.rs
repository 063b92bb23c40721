//! `fwbench run` ends with its answer: the findings (ns per rule with its CI) after the
//! trial table, the legacy-table note said once, and `fwbench report --text` prints
//! the same findings. Needs root (namespaces); without it the test is reported as
//! ignored (skipped), never passed.

mod util;

use util::*;

/// A flood over 0/50/100 iptables-legacy rules, 2 repetitions of 1 s: a cost line
/// with a CI, and a legacy table left after every trial.
const TINY: &str = "order = \"sequential\"\nrepetitions = 2\nworkload = \"flood\"\n\
[params]\nengine = \"iptables-legacy\"\nmodel = \"linear\"\nrules = [0, 50, 100]\n\
size = 128\nrate = \"max\"\nduration = 1\n";

#[test]
#[ignore = "needs root: network namespaces (run with --include-ignored as root)"]
fn run_prints_its_findings_last_and_the_legacy_table_once() {
    let dir = TempDir::new();
    let db = dir.file("r.db");
    let sc = dir.file("tiny.toml");
    std::fs::write(&sc, TINY).unwrap();
    let o = fwbench(&["run", sc.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let out = stdout(&o);
    let stored = out.find("6 of 6 trials stored").expect(&out);
    let findings = out.find("Findings of run").expect(&out);
    assert!(stored < findings, "findings after the trial table: {out}");
    let tail = &out[findings..];
    assert!(tail.contains("ns per rule per packet"), "{tail}");
    assert!(tail.contains(" ± "), "a CI: {tail}");
    assert!(
        tail.trim_end()
            .ends_with(&format!("Details: fwbench report {}", db.display())),
        "where the details are, last: {tail}"
    );
    let err = stderr(&o);
    assert_eq!(
        err.matches("legacy table filter instantiated").count(),
        1,
        "said once per run: {err}"
    );
    assert!(err.contains("gets a new testbed"), "{err}");
    let r = fwbench(&["report", db.to_str().unwrap(), "--text"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let text = stdout(&r);
    assert!(text.starts_with("Findings of run"), "{text}");
    assert_eq!(
        text.lines().find(|l| l.contains("ns per rule")),
        tail.lines().find(|l| l.contains("ns per rule"))
    );
    assert!(!dir.file("report.html").exists());
}
