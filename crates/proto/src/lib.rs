//! Control protocol between the fwbench controller and its agents.
//!
//! Owns: the message types (including the workload spec types every part shares),
//! the length-prefixed JSON codec with its size cap, the protocol version, and the
//! sans-IO phase state machines of both ends.
//! Must not: do I/O of its own or read clocks. Callers feed bytes and messages in;
//! this crate says what is allowed next. (`FrameReader` reads frames from a `Read`
//! the caller hands it — the only place that calls `read`.)
//!
//! Wire format: each frame is a 4-byte big-endian length followed by that many bytes
//! of UTF-8 JSON (a message over 4 MiB spans several frames: see `codec`). Controller
//! → agent frames are [`Request`]s, agent → controller frames [`Reply`]s: a message
//! with a request id. The first message in each direction is `Hello { version }`.
//!
//! Layers (a module imports only from layers below it):
//! 1. `param`, `measure`: shared value types (family, protocol, frame size, counters,
//!    RTT summaries, interface counters, the parameter error).
//! 2. `echo`, `packet`, `conn`, `event`, `gateway`: each workload's role specs and results (the
//!    gateway's rule request and firewall report are `fwmodel`'s plain data, typed).
//! 3. `role`: the `RoleSpec` / `RoleResults` enums over them.
//! 4. `msg`: the `ToAgent` / `FromAgent` messages.
//! 5. `codec` (generic framing) and `phase` (the phase machines over `msg`).
//!
//! Every public type is re-exported at the crate root; use `proto::X`.

pub mod codec;
pub mod conn;
pub mod echo;
pub mod event;
pub mod gateway;
pub mod measure;
pub mod mix;
pub mod msg;
pub mod packet;
pub mod param;
pub mod phase;
pub mod role;

pub use codec::{encode, CodecError, Decoder, FrameReader, MAX_FRAME_LEN, MAX_MESSAGE_LEN};
pub use conn::*;
pub use echo::*;
pub use event::*;
pub use gateway::*;
pub use measure::*;
pub use mix::*;
pub use msg::*;
pub use packet::*;
pub use param::*;
pub use phase::{AgentPhase, ControllerPhase, PhaseError};
pub use role::*;

/// Version of the control protocol. Both ends must agree exactly.
/// 4: `ToAgent::Time` / `FromAgent::Time` (clock offsets of remote hosts).
/// 5: request ids (`Request` / `Reply`: every reply echoes its request's id) and
/// messages of any size in chunks of at most 4 MiB (the `MORE` header bit).
/// 6: `ToAgent::Tally` / `FromAgent::Tally` (live per-interval counters).
/// 7: the gateway's rule request and firewall report are typed (`fwmodel::Request`,
/// `fwmodel::Report`; their JSON is unchanged, but a malformed one no longer decodes).
pub const PROTOCOL_VERSION: u32 = 7;
