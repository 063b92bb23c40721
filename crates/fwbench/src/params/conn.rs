//! Parameters of the connection workloads (sessions, bulk, http, connections), their
//! limits, and the byte-size and parallelism values they are written with.

use crate::params::value_error::ValueError;
use serde::Serialize;

/// Port of the connection server (the study's FTP control port 21 becomes 21000; the
/// translated Appendix C rule set allows exactly this port). The proxy listens on it too.
pub const CONN_PORT: u16 = 21000;

/// Largest object or response (1 TiB).
pub const MAX_SIZE: u64 = 1 << 40;
/// Most workers of a connection workload.
pub const MAX_PARALLEL: u32 = 4096;
/// Most connections `fwbench connections` opens.
pub const MAX_LIMIT: u32 = 1_000_000;
/// Largest proxy buffer.
pub const MAX_PROXY_BUFFER: u32 = 64 << 20;

/// Parameters of a connection workload (sessions, bulk, http, connections).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnParams {
    /// Workers running sessions back to back (1 = sequential). 0 = auto: search the
    /// parallelism with the most sessions/s (sessions only).
    pub parallel: u32,
    /// Sessions in total; `None`: as many as fit in the trial's duration.
    pub count: Option<u64>,
    /// Bytes the client sends per session (sessions).
    pub request: u32,
    /// Bytes the server returns per session (sessions) or the object size (bulk, http).
    pub size: u64,
    /// Bulk: zero-byte sessions measured first to split the per-session overhead out.
    pub overhead_sessions: u32,
    /// connections: most connections to open.
    pub limit: u32,
    /// connections: how long to hold them once opening stopped, s.
    pub hold_s: f64,
    /// Proxy topology: the relay's block size (the study's `shovel`), bytes.
    pub proxy_buffer: u32,
    /// An external HTTP server to use instead of the built-in one ("nginx").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_program: Option<String>,
    /// An external HTTP client to use instead of the built-in one ("curl").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_program: Option<String>,
    /// Check every received byte against the generated pattern.
    pub verify: bool,
    /// Connect and read timeout, ms.
    pub timeout_ms: u32,
}

/// Parse a byte size: a number (decimals allowed) with an optional K, M, G or T suffix
/// (powers of 1024, as iperf3's `-n`), optionally followed by `B` or `iB`.
pub fn parse_size(s: &str) -> Result<u64, ValueError> {
    let t = s.trim();
    let bad = || {
        ValueError::Other(format!(
            "bad size '{s}': expected bytes as a number with an optional K, M, G or T suffix \
             (powers of 1024), e.g. 512, 1.7M, 8M"
        ))
    };
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, mult) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1u64 << 10),
        Some('m') => (&body[..body.len() - 1], 1 << 20),
        Some('g') => (&body[..body.len() - 1], 1 << 30),
        Some('t') => (&body[..body.len() - 1], 1 << 40),
        _ => (body, 1),
    };
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let bytes = (v * mult as f64).round();
    if !bytes.is_finite() || bytes > MAX_SIZE as f64 {
        return Err(ValueError::Other(format!(
            "size '{s}' is above the 1T maximum"
        )));
    }
    if mult == 1 && num.contains('.') {
        return Err(ValueError::Other(format!(
            "size '{s}': a byte count must be a whole number"
        )));
    }
    Ok(bytes as u64)
}

/// Print a byte size the way [`parse_size`] reads it (exact when possible).
pub fn format_size(b: u64) -> String {
    for (suffix, m) in [
        ("T", 1u64 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ] {
        if b >= m && (b / m) * m == b {
            return format!("{}{suffix}", b / m);
        }
    }
    b.to_string()
}

/// `auto` (stored as 0: search the sweet spot) or a number of workers ≥ 1.
pub fn parse_parallel(s: &str) -> Result<u32, ValueError> {
    if s.trim() == "auto" {
        return Ok(0);
    }
    match s.trim().parse::<u32>() {
        Ok(v) if (1..=MAX_PARALLEL).contains(&v) => Ok(v),
        _ => Err(ValueError::Other(format!(
            "parallel '{s}' must be auto or 1..{MAX_PARALLEL} sessions at once"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes_and_reject_bad_units() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("8M"), Ok(8 << 20));
        assert_eq!(parse_size("8MiB"), Ok(8 << 20));
        assert_eq!(parse_size("8mb"), Ok(8 << 20));
        assert_eq!(parse_size("1.7M"), Ok(1_782_579));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        for bad in ["", "M", "8Q", "8 M", "-1", "1.5", "8MM", "1e6", "2000T"] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_size("8Q")
            .unwrap_err()
            .to_string()
            .contains("bad size '8Q'"));
        for b in [512, 8 << 20, 1 << 30, 1_700_000] {
            assert_eq!(parse_size(&format_size(b)), Ok(b));
        }
    }
}
