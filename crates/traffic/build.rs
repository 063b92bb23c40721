//! Compiles the AF_XDP sink's XDP program (`bpf/xsk_sink.bpf.c`) with `clang -target bpf`
//! into `$OUT_DIR/xsk_sink.bpf.o`, which `xsk::sink` embeds (the same route as the
//! firewall crate's rule walker). Without clang (or libbpf's headers) the object is left
//! empty and the build still succeeds: the AF_XDP sink then reports at run time that it
//! is unavailable.

#[path = "../../build/clang_bpf.rs"]
mod clang_bpf;

fn main() {
    clang_bpf::compile(
        "bpf/xsk_sink.bpf.c",
        "xsk_sink.bpf.o",
        "AF_XDP sink program",
        "the AF_XDP sink will be unavailable",
    );
}
