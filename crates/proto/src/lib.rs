//! Control protocol between the fwbench controller and its agents.
//!
//! Owns: the message types (including the workload spec types every part shares),
//! the length-prefixed JSON codec with its size cap, the protocol version, and the
//! sans-IO phase state machines of both ends.
//! Must not: do I/O or read clocks. Callers feed bytes and messages in; this crate
//! says what is allowed next.
//!
//! Wire format: each frame is a 4-byte big-endian length followed by that many bytes
//! of UTF-8 JSON. The first frame in each direction is `Hello { version }`.

pub mod codec;
pub mod conn;
pub mod msg;
pub mod packet;
pub mod phase;
pub mod spec;

pub use codec::{encode, CodecError, Decoder, MAX_FRAME_LEN};
pub use conn::*;
pub use msg::*;
pub use packet::*;
pub use phase::{AgentPhase, ControllerPhase, PhaseError};
pub use spec::*;

/// Version of the control protocol. Both ends must agree exactly.
pub const PROTOCOL_VERSION: u32 = 3;
