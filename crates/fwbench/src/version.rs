//! What this binary is: version, git commit (`+dirty` for uncommitted changes) and
//! build date, stamped by build.rs. Shown by `--version` and recorded with every run
//! (`hosts.fwbench_version`, the agents' hello, every `--json` object).

/// The crate version alone.
pub const PKG: &str = env!("CARGO_PKG_VERSION");
/// The git commit the binary was built from (`unknown` without git).
pub const COMMIT: &str = env!("FWBENCH_COMMIT");
/// The build date, UTC (YYYY-MM-DD).
pub const BUILD_DATE: &str = env!("FWBENCH_BUILD_DATE");
/// `0.1.0 (commit 1a2b3c4d5e6f+dirty, built 2026-11-22)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("FWBENCH_COMMIT"),
    ", built ",
    env!("FWBENCH_BUILD_DATE"),
    ")"
);

#[cfg(test)]
mod tests {
    #[test]
    fn version_names_commit_and_date() {
        assert!(super::VERSION.starts_with(super::PKG));
        assert!(super::VERSION.contains(super::COMMIT));
        let d = super::BUILD_DATE.as_bytes();
        assert_eq!(d.len(), 10, "{}", super::BUILD_DATE);
        assert!(d[4] == b'-' && d[7] == b'-', "{}", super::BUILD_DATE);
        assert!(super::BUILD_DATE[..4].parse::<u32>().unwrap() >= 2024);
        assert!(
            super::COMMIT == "unknown"
                || super::COMMIT
                    .trim_end_matches("+dirty")
                    .chars()
                    .all(|c| c.is_ascii_hexdigit()),
            "{}",
            super::COMMIT
        );
    }
}
