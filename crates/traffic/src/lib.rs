//! Traffic generators and sinks.
//!
//! Owns: the echo cycle of seed 000 (client threads; threads or epoll servers over
//! TCP, UDP and SCTP), the payload header with checked parsing, frame validation,
//! the seeded frame-size PRNG and RTT histograms.
//! Must not: know about firewalls, testbeds or storage. It gets a spec and sockets'
//! addresses, and returns counters.

pub mod bins;
pub mod conn;
pub mod echo;
pub mod external;
pub mod frame;
pub mod gate;
pub mod hist;
pub mod pacer;
pub mod packet;
pub mod ping;
pub mod probe;
pub mod probeset;
pub mod program;
pub mod rng;
pub mod sys;
mod tally;
pub mod udp;
pub mod validate;
pub mod xsk;

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    /// The kernel has no SCTP: reported as "unavailable", never as a crash.
    #[error("SCTP unavailable in this kernel: SCTP is not available in this kernel (socket with IPPROTO_SCTP failed: {0}); load the sctp module (modprobe sctp) or use a kernel built with CONFIG_IP_SCTP")]
    SctpUnavailable(io::Error),
    /// The kernel or the interface lacks AF_XDP (or XDP): reported as "unavailable".
    #[error("AF_XDP unavailable in this kernel/interface: {0}")]
    XdpUnavailable(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}")]
    BadSpec(String),
}

impl TrafficError {
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        TrafficError::Io {
            what: what.into(),
            source,
        }
    }
}
