//! Parameter types every workload shares: transport protocol, address family, server
//! mode, echo frame size, and the error a refused textual parameter gives.
//!
//! Owns: these small value types, how they parse from and print to text, and their
//! serde form. The bottom layer of the crate.
//! Must not: import any other module of this crate, or know about roles or messages.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Smallest echo frame: the payload header must fit (see `traffic::frame`).
pub const MIN_FRAME: u32 = 28;
/// Largest echo frame accepted on the command line (64 KiB).
pub const MAX_FRAME: u32 = 65536;
/// Largest UDP payload over IPv4 (65535 − 20 − 8); frames above it cannot be echoed over UDP.
pub const MAX_UDP_PAYLOAD: u32 = 65507;

/// Transport protocol of a data connection (seed 000 parameter P).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    Tcp,
    Udp,
    Sctp,
}

/// Address family (seed 000 parameter A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Family {
    #[serde(rename = "4")]
    V4,
    #[serde(rename = "6")]
    V6,
}

/// How the server handles client connections (seed 000 parameter T).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerMode {
    /// One thread per connection (per client socket for UDP).
    Threads,
    /// One thread multiplexing every connection with epoll(7).
    Epoll,
}

/// Frame size per echo cycle (seed 000 parameter f): application payload bytes,
/// header included, fixed or drawn uniformly from `lo..=hi` for every cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FrameSize {
    Fixed { size: u32 },
    Ranged { lo: u32, hi: u32 },
}

impl FrameSize {
    pub fn max(&self) -> u32 {
        match *self {
            FrameSize::Fixed { size } => size,
            FrameSize::Ranged { hi, .. } => hi,
        }
    }
    pub fn min(&self) -> u32 {
        match *self {
            FrameSize::Fixed { size } => size,
            FrameSize::Ranged { lo, .. } => lo,
        }
    }
}

/// Why a textual parameter was refused; the caller adds where it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseSpecError(pub String);

/// `FromStr` (any case, aliases after the first name) and `Display` (the first name)
/// of a closed set of names, from one table; another name is refused naming `$what`
/// and the `$expected` ones.
macro_rules! named {
    ($t:ident, $what:literal, $expected:literal,
     { $($v:ident => $name:literal $(| $alias:literal)*),+ $(,)? }) => {
        impl FromStr for $t {
            type Err = ParseSpecError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s.to_ascii_lowercase().as_str() {
                    $($name $(| $alias)* => Ok($t::$v),)+
                    _ => Err(ParseSpecError(format!(
                        concat!("unknown ", $what, " '{}' (expected ", $expected, ")"),
                        s
                    ))),
                }
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    $($t::$v => $name,)+
                })
            }
        }
    };
}

named!(Proto, "protocol", "tcp, udp or sctp", {
    Tcp => "tcp",
    Udp => "udp",
    Sctp => "sctp",
});
named!(Family, "address family", "4 or 6", {
    V4 => "4" | "ipv4" | "inet",
    V6 => "6" | "ipv6" | "inet6",
});
named!(ServerMode, "server mode", "threads or epoll", {
    Threads => "threads" | "thread",
    Epoll => "epoll",
});

impl FromStr for FrameSize {
    type Err = ParseSpecError;
    /// `64` or `64-1024` (bytes, inclusive), each within `MIN_FRAME..=MAX_FRAME`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let num = |t: &str| -> Result<u32, ParseSpecError> {
            t.trim().parse::<u32>().map_err(|_| {
                ParseSpecError(format!(
                    "frame size '{s}' is not a number of bytes or a range like 64-1024"
                ))
            })
        };
        let check = |v: u32| -> Result<u32, ParseSpecError> {
            if v < MIN_FRAME {
                Err(ParseSpecError(format!(
                    "frame size {v} is below the {MIN_FRAME}-byte frame header"
                )))
            } else if v > MAX_FRAME {
                Err(ParseSpecError(format!(
                    "frame size {v} is above the maximum of {MAX_FRAME} bytes (64 KiB)"
                )))
            } else {
                Ok(v)
            }
        };
        match s.split_once('-') {
            None => Ok(FrameSize::Fixed {
                size: check(num(s)?)?,
            }),
            Some((a, b)) => {
                let (lo, hi) = (check(num(a)?)?, check(num(b)?)?);
                if lo > hi {
                    return Err(ParseSpecError(format!(
                        "frame size range '{s}' has its low end above its high end"
                    )));
                }
                if lo == hi {
                    Ok(FrameSize::Fixed { size: lo })
                } else {
                    Ok(FrameSize::Ranged { lo, hi })
                }
            }
        }
    }
}

impl fmt::Display for FrameSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameSize::Fixed { size } => write!(f, "{size}"),
            FrameSize::Ranged { lo, hi } => write!(f, "{lo}-{hi}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_with_aliases_and_show_the_first() {
        assert_eq!("UDP".parse::<Proto>().unwrap(), Proto::Udp);
        assert_eq!("inet6".parse::<Family>().unwrap().to_string(), "6");
        assert_eq!(
            "Thread".parse::<ServerMode>().unwrap().to_string(),
            "threads"
        );
        let e = |r: Result<ServerMode, ParseSpecError>| r.unwrap_err().to_string();
        assert_eq!(
            e("poll".parse()),
            "unknown server mode 'poll' (expected threads or epoll)"
        );
        assert_eq!(
            "ipv5".parse::<Family>().unwrap_err().to_string(),
            "unknown address family 'ipv5' (expected 4 or 6)"
        );
    }

    #[test]
    fn frame_size_parsing() {
        assert_eq!("64".parse(), Ok(FrameSize::Fixed { size: 64 }));
        assert_eq!(
            "64-1024".parse(),
            Ok(FrameSize::Ranged { lo: 64, hi: 1024 })
        );
        assert_eq!(" 128 - 128".parse(), Ok(FrameSize::Fixed { size: 128 }));
        for bad in [
            "",
            "abc",
            "10",
            "27",
            "65537",
            "1024-64",
            "64-",
            "-64",
            "64-1024-2",
        ] {
            assert!(bad.parse::<FrameSize>().is_err(), "{bad:?} accepted");
        }
        assert_eq!("28".parse(), Ok(FrameSize::Fixed { size: MIN_FRAME }));
        assert_eq!("65536".parse(), Ok(FrameSize::Fixed { size: MAX_FRAME }));
        let e = "10".parse::<FrameSize>().unwrap_err().0;
        assert!(e.contains("below the 28-byte frame header"), "{e}");
    }

    #[test]
    fn enums_parse_and_print_round_trip() {
        for p in [Proto::Tcp, Proto::Udp, Proto::Sctp] {
            assert_eq!(p.to_string().parse::<Proto>(), Ok(p));
        }
        for f in [Family::V4, Family::V6] {
            assert_eq!(f.to_string().parse::<Family>(), Ok(f));
        }
        for m in [ServerMode::Threads, ServerMode::Epoll] {
            assert_eq!(m.to_string().parse::<ServerMode>(), Ok(m));
        }
        assert!("icmp"
            .parse::<Proto>()
            .unwrap_err()
            .0
            .contains("tcp, udp or sctp"));
        assert!("5".parse::<Family>().is_err());
        assert!("fork".parse::<ServerMode>().is_err());
    }

    #[test]
    fn family_serialises_as_number_string() {
        assert_eq!(serde_json::to_string(&Family::V6).unwrap(), "\"6\"");
    }
}
