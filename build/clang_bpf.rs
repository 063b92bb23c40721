//! The one BPF build step of the workspace, shared by the build scripts of `firewall`
//! (the rule walker) and `traffic` (the AF_XDP sink's program) through
//! `#[path = "../../build/clang_bpf.rs"] mod clang_bpf;`.
//!
//! It compiles a C file with `clang -target bpf` into `$OUT_DIR`, which the crate embeds.
//! Without clang (or libbpf's headers) the object is left empty and the build still
//! succeeds: what needs the program then reports at run time that it is unavailable,
//! and a build after clang or its headers are installed compiles it.

use std::path::PathBuf;
use std::process::Command;

/// Compiles `src` (relative to the crate) into `$OUT_DIR/<object>`. On failure prints a
/// cargo warning — "`what` not built (why): `then`; install clang and libbpf-dev and
/// rebuild" — and writes an empty object.
pub fn compile(src: &str, object: &str, what: &str, then: &str) {
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CLANG");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join(object);
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let multiarch = match std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86_64-linux-gnu",
        Ok("aarch64") => "aarch64-linux-gnu",
        _ => "",
    };
    let status = Command::new(&clang)
        .args(["-target", "bpf", "-O2", "-g", "-Wall"])
        .arg(format!("-I/usr/include/{multiarch}"))
        .args(["-c", src, "-o"])
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        other => {
            println!(
                "cargo:warning={what} not built ({}): {then}; install clang and libbpf-dev and rebuild",
                match other {
                    Ok(s) => format!("{clang} failed: {s}"),
                    Err(e) => format!("{clang}: {e}"),
                }
            );
            std::fs::write(&out, b"").expect("writing an empty BPF object");
            // Run again when clang or libbpf's headers may have been installed since, so a
            // plain rebuild picks them up, as the warning says (otherwise the empty object
            // stayed until this file or the C source changed). Cargo scans these
            // directories' times (~0.1 s), only while the program is missing.
            for dir in ["/usr/bin", "/usr/local/bin", "/usr/include"] {
                if std::path::Path::new(dir).is_dir() {
                    println!("cargo:rerun-if-changed={dir}");
                }
            }
        }
    }
}
