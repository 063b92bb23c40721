//! AF_XDP sender and sink: packet rates sockets cannot reach.
//!
//! Owns: the AF_XDP source ([`XskSource`], same spec and results as the UDP/AF_PACKET
//! source plus the mode used) and the AF_XDP sink ([`XskSink`], an XDP program that
//! redirects the sink's UDP port to one AF_XDP socket per queue, counting, validating
//! sequences and taking receive timestamps like the socket sink), and the frame parser
//! the sink needs ([`parse`]).
//! Must not: hold `unsafe` (that is `sys::xsk`) or know about testbeds: it gets an
//! interface name in the calling thread's network namespace.
//!
//! **Library.** The rings, the UMEM and the socket come from the `xdp` crate (0.8,
//! MIT OR Apache-2.0, maintained for Embark's/Google's Quilkin): pure Rust, no C, no
//! libbpf or libxdp to build, and it licenses like this workspace. Considered and not
//! taken: `xdpilone` (pure Rust too and it exposes the ring's need-wakeup flag, but it
//! is EUPL-1.2, a copyleft licence this MIT/Apache binary would inherit obligations
//! from), `xsk-rs` (binds libxdp/libbpf through `libxdp-sys`, a C build with libelf and
//! zlib), `afxdp` (unmaintained since 2021). The XSKMAP side and the XDP program are
//! loaded with `aya`, as the firewall crate does; the program is C
//! (`bpf/xsk_sink.bpf.c`) built by `build.rs` with clang.
//!
//! **Wakeups.** Sockets bind with `XDP_USE_NEED_WAKEUP`. The `xdp` crate does not expose
//! the ring's flag, so the sender kicks (`sendto`) after each batch that it queued and
//! while frames are in flight; in copy mode that kick is where the kernel transmits (at
//! most 32 frames per call by default, so a batch of 64 takes two kicks), so nothing is
//! lost by it; in zero-copy mode it costs one syscall per batch.
//!
//! **Modes.** Bound without a mode flag, the kernel takes zero-copy where the driver
//! has it and copy otherwise; the mode it chose is read back (`XDP_OPTIONS`) and
//! reported. On veth it is always copy.

pub mod parse;
pub mod sink;
pub mod source;

pub use crate::sys::xsk::{XskMode, XskModeRequest, XskRxDrops};
pub use sink::{XskSink, XskSinkResults, XskSinkSpec};
pub use source::{XskSource, XskSourceResults};

use crate::sys::xsk::OpenError;
use crate::TrafficError;
use serde::{Deserialize, Serialize};

/// Where and how an AF_XDP sender or sink ran: recorded with the trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XskInfo {
    pub ifname: String,
    /// Queues used, one socket and thread each (queues 0..queues).
    pub queues: u32,
    pub mode: XskMode,
}

fn open_error(ifname: &str, e: OpenError) -> TrafficError {
    match e {
        OpenError::Unavailable(m) => TrafficError::XdpUnavailable(format!("{ifname}: {m}")),
        OpenError::Io(what, e) => TrafficError::io(format!("AF_XDP on {ifname}: {what}"), e),
    }
}
