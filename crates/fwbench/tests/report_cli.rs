//! `fwbench report`: bad input exits 2 before writing anything (no root needed).

mod util;

use util::*;

#[test]
fn report_refuses_files_that_are_not_fwbench_results() {
    let dir = TempDir::new();
    let out = dir.file("r.html");
    let o = fwbench(&[
        "report",
        "/nonexistent/results.db",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no such results file"),
        "{}",
        stderr(&o)
    );
    // A SQLite file of another program.
    let other = dir.file("other.db");
    let s = std::process::Command::new("sqlite3")
        .arg(&other)
        .arg("CREATE TABLE t(a); INSERT INTO t VALUES (1);")
        .status()
        .expect("sqlite3 CLI (apt-get install sqlite3)");
    assert!(s.success());
    let o = fwbench(&[
        "report",
        other.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not an fwbench results file"),
        "{}",
        stderr(&o)
    );
    // Not SQLite at all.
    let junk = dir.file("junk.db");
    std::fs::write(&junk, "hello, not a database\n".repeat(100)).unwrap();
    let o = fwbench(&[
        "report",
        junk.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A run that does not exist; and a bad format.
    let empty = dir.file("empty.db");
    let o = fwbench(&["report", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "missing file: {}", stderr(&o));
    assert!(!out.exists(), "nothing written for bad input");
    let o = fwbench(&["report", other.to_str().unwrap(), "-f", "pdf"]);
    assert_eq!(o.status.code(), Some(2));
    // A reference that is not ENGINE[/FAMILY], whatever the file.
    let o = fwbench(&[
        "report",
        "/nonexistent/results.db",
        "--reference",
        "nft//ip",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--reference \"nft//ip\": expected ENGINE or ENGINE/FAMILY"),
        "{}",
        stderr(&o)
    );
}
