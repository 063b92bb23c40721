//! Build metadata for `fwbench --version` and every run's host record: the git commit
//! (with `+dirty` when tracked files differ from it) and the build date (UTC, or
//! SOURCE_DATE_EPOCH's for reproducible builds). Without git — a source tarball,
//! `cargo install` from a copy — the commit is `unknown`; the build never fails for it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's civil_from_days).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let dirty = commit.is_some()
        && git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let commit = match commit {
        Some(c) if dirty => format!("{c}+dirty"),
        Some(c) => c,
        None => "unknown".to_string(),
    };
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    let (y, m, d) = civil(secs.div_euclid(86_400));
    println!("cargo:rustc-env=FWBENCH_COMMIT={commit}");
    println!("cargo:rustc-env=FWBENCH_BUILD_DATE={y:04}-{m:02}-{d:02}");
    // Rebuild the stamp when the commit or the tracked files change.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
        if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
            let common = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(common);
            println!(
                "cargo:rerun-if-changed={}",
                common.join("packed-refs").display()
            );
            if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
                println!("cargo:rerun-if-changed={}", common.join(r).display());
            }
        }
        println!("cargo:rerun-if-changed=../../crates");
        println!("cargo:rerun-if-changed=../../Cargo.lock");
    }
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
}
