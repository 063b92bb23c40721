//! Compiles the BPF rule walker (`bpf/fwbench.bpf.c`) with `clang -target bpf` into
//! `$OUT_DIR/fwbench.bpf.o`, which the engine embeds. Without clang (or libbpf's
//! headers) the object is left empty and the build still succeeds: the BPF engines
//! then report at run time that they are unavailable.

#[path = "../../build/clang_bpf.rs"]
mod clang_bpf;

fn main() {
    clang_bpf::compile(
        "bpf/fwbench.bpf.c",
        "fwbench.bpf.o",
        "BPF programs",
        "the xdp and tc-bpf engines will be unavailable",
    );
}
