//! Compiles the AF_XDP sink's XDP program (`bpf/xsk_sink.bpf.c`) with `clang -target bpf`
//! into `$OUT_DIR/xsk_sink.bpf.o`, which `xsk::sink` embeds (the same route as the
//! firewall crate's rule walker). Without clang (or libbpf's headers) the object is left
//! empty and the build still succeeds: the AF_XDP sink then reports at run time that it
//! is unavailable.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "bpf/xsk_sink.bpf.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CLANG");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("xsk_sink.bpf.o");
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
                "cargo:warning=AF_XDP sink program not built ({}): the AF_XDP sink will be unavailable; install clang and libbpf-dev and rebuild",
                match other {
                    Ok(s) => format!("{clang} failed: {s}"),
                    Err(e) => format!("{clang}: {e}"),
                }
            );
            std::fs::write(&out, b"").expect("writing an empty BPF object");
        }
    }
}
