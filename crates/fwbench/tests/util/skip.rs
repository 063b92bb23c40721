// Visible skips, shared by every test crate of the workspace (each includes this file
// with `#[path]`): a test that cannot run here calls `return skip("why")`. The skip is
// printed and appended to the file named by `FWBENCH_SKIP_LOG` (set by
// scripts/test.sh), which counts it as skipped — not passed — and, as root in CI
// (`FWBENCH_TEST_AS_ROOT=1`), fails the run.
//
// No inner attributes or `//!` here: unit tests in src/ take this file with `include!`.

use std::io::Write;

/// The variable naming the file skips are appended to, one `crate::test<TAB>reason` line each.
pub const SKIP_LOG: &str = "FWBENCH_SKIP_LOG";

/// Record that the calling test was skipped, and why. The caller returns right after:
/// `return skip("needs …")`.
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("main");
    let line = format!(
        "{}::{}\t{}\n",
        env!("CARGO_CRATE_NAME"),
        test,
        reason.replace(['\n', '\t'], " ")
    );
    eprintln!("SKIPPED {}", line.trim_end());
    if let Some(path) = std::env::var_os(SKIP_LOG) {
        // One short write to an O_APPEND file: lines of parallel tests do not interleave.
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{SKIP_LOG}={}: {e}", path.to_string_lossy()));
        f.write_all(line.as_bytes())
            .unwrap_or_else(|e| panic!("{SKIP_LOG}: {e}"));
    }
}
