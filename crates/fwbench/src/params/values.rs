//! Parsers of the values a user writes, shared by the command line and scenario files:
//! one parser per kind of value, each naming what it expected in its message.

use crate::params::topology::Topology;
use proto::{Family, FrameSize, Proto, ServerMode};

pub use crate::params::value_error::ValueError;

/// Parse a duration: `10` (seconds), `2.5s`, `500ms`, `1m`. Must be positive.
pub fn parse_duration(s: &str) -> Result<f64, ValueError> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| ValueError::not_a(s, "a duration (like 10, 2.5s, 500ms or 1m)"))?;
    if !v.is_finite() {
        return Err(ValueError::refused("duration", s, "is not a finite number"));
    }
    if v <= 0.0 {
        return Err(ValueError::refused(
            "duration",
            s,
            "must be greater than zero",
        ));
    }
    if v * mult > crate::limits::MAX_DURATION_S {
        return Err(ValueError::refused("duration", s, "is longer than a day"));
    }
    if v * mult < crate::limits::MIN_DURATION_S {
        return Err(ValueError::refused(
            "duration",
            s,
            "is shorter than a millisecond",
        ));
    }
    Ok(v * mult)
}

pub fn parse_clients(s: &str) -> Result<u32, ValueError> {
    let n: u32 = s
        .trim()
        .parse()
        .map_err(|_| ValueError::not_a(s, "a whole number of clients"))?;
    if n == 0 {
        return Err("the number of clients must be at least 1".into());
    }
    if n > crate::limits::MAX_CLIENTS {
        return Err(ValueError::Other(format!(
            "{n} clients is more than a testbed addresses ({})",
            crate::limits::MAX_CLIENTS
        )));
    }
    Ok(n)
}

pub fn parse_timeout_ms(s: &str) -> Result<u32, ValueError> {
    match s.trim().parse::<u32>() {
        Ok(v) if v > 0 && v <= 60_000 => Ok(v),
        _ => Err(ValueError::refused(
            "timeout",
            s,
            "must be 1..60000 milliseconds",
        )),
    }
}

pub fn parse_bool(s: &str) -> Result<bool, ValueError> {
    match s.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ValueError::not_a(s, "true or false")),
    }
}

/// A positive whole number (flows, threads, batch, count).
pub fn parse_count(s: &str) -> Result<u32, ValueError> {
    match s.trim().parse::<u32>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(ValueError::not_a(s, "a whole number of at least 1")),
    }
}

/// A whole number ≥ 0.
pub fn parse_count0(s: &str) -> Result<u32, ValueError> {
    s.trim()
        .parse::<u32>()
        .map_err(|_| ValueError::not_a(s, "a whole number (0 or more)"))
}

/// A duration that may be zero (`0`, `1s`, `500ms`).
pub fn parse_duration0(s: &str) -> Result<f64, ValueError> {
    if s.trim().parse::<f64>() == Ok(0.0) {
        return Ok(0.0);
    }
    parse_duration(s)
}

/// A gap between probes: `0`, `10ms`, `1s`, `250us` → nanoseconds.
pub fn parse_interval(s: &str) -> Result<u64, ValueError> {
    let t = s.trim();
    if t == "0" {
        return Ok(0);
    }
    if let Some(us) = t.strip_suffix("us") {
        return us
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 1e-3 && *v <= 60e6)
            .map(|v| (v * 1e3) as u64)
            .ok_or_else(|| ValueError::not_a(s, "an interval (like 0, 250us, 10ms, 1s)"));
    }
    parse_duration(t)
        .map(|v| (v * 1e9) as u64)
        .map_err(|_| ValueError::not_a(s, "an interval (like 0, 250us, 10ms, 1s)"))
}

pub fn size_u64(s: &str) -> Result<u64, ValueError> {
    crate::params::conn::parse_size(s)
}
pub fn size_u32(s: &str) -> Result<u32, ValueError> {
    let v = crate::params::conn::parse_size(s)?;
    u32::try_from(v).map_err(|_| ValueError::refused("size", s, "is above 4G"))
}
pub fn session_count(s: &str) -> Result<u64, ValueError> {
    crate::params::values::parse_count(s).map(u64::from)
}
/// `auto` (0) or a count ≥ 1.
pub fn parallelism(s: &str) -> Result<u32, ValueError> {
    crate::params::conn::parse_parallel(s)
}
pub fn packet_size(s: &str) -> Result<proto::PacketSize, ValueError> {
    named(s)
}
pub fn rate(s: &str) -> Result<proto::Rate, ValueError> {
    named(s)
}
pub fn count(s: &str) -> Result<u32, ValueError> {
    crate::params::values::parse_count(s)
}
pub fn sender(s: &str) -> Result<crate::params::packet::SenderPath, ValueError> {
    named(s)
}
pub fn sink(s: &str) -> Result<crate::params::packet::SinkKind, ValueError> {
    named(s)
}
/// A ratio above 0, e.g. `1%`.
pub fn positive_ratio(s: &str) -> Result<f64, ValueError> {
    match ratio(s)? {
        v if v > 0.0 => Ok(v),
        _ => Err(ValueError::Other(format!(
            "'{s}' must be above 0 (like 1% or 0.02)"
        ))),
    }
}

/// `0.5%`, `0.005` or `0` → a ratio in 0..1.
pub fn ratio(s: &str) -> Result<f64, ValueError> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| ValueError::not_a(s, "a ratio (like 0, 0.1% or 0.001)"))?;
    if !(0.0..1.0).contains(&v) {
        return Err(ValueError::refused(
            "ratio",
            s,
            "must be at least 0 and below 100%",
        ));
    }
    Ok(v)
}
pub fn frame(s: &str) -> Result<FrameSize, ValueError> {
    named(s)
}
pub fn protocol(s: &str) -> Result<Proto, ValueError> {
    named(s)
}
pub fn family(s: &str) -> Result<Family, ValueError> {
    named(s)
}
pub fn server_mode(s: &str) -> Result<ServerMode, ValueError> {
    named(s)
}
pub fn topology(s: &str) -> Result<Topology, ValueError> {
    named(s)
}
/// A value by its `FromStr`, whose error names the value and what was expected.
pub fn named<T: std::str::FromStr>(s: &str) -> Result<T, ValueError>
where
    T::Err: std::fmt::Display,
{
    s.parse()
        .map_err(|e: T::Err| ValueError::Other(e.to_string()))
}
pub fn engine(s: &str) -> Result<firewall::Engine, ValueError> {
    named(s)
}
pub fn model(s: &str) -> Result<firewall::models::Model, ValueError> {
    named(s)
}
pub fn nft_family(s: &str) -> Result<firewall::NftFamily, ValueError> {
    named(s)
}
pub fn position(s: &str) -> Result<firewall::models::Position, ValueError> {
    named(s)
}
pub fn chain(s: &str) -> Result<firewall::models::Chain, ValueError> {
    named(s)
}
/// A rule count: a whole number ≥ 0 (the generator refuses absurd ones with an estimate).
pub fn rule_count(s: &str) -> Result<u32, ValueError> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(ValueError::refused("rule count", s, "must not be negative"));
    }
    let n = t.parse::<u32>().map_err(|_| {
        ValueError::Other(format!(
            "'{s}' is not a whole number of rules (0 … {MAX_RULES})"
        ))
    })?;
    if n > MAX_RULES {
        return Err(ValueError::Other(format!(
            "{n} rules is more than the {MAX_RULES} one rule set may hold (~{:.1} GiB of kernel memory)",
            (u64::from(n) * firewall::models::BYTES_PER_RULE) as f64 / f64::from(1u32 << 30)
        )));
    }
    Ok(n)
}
use crate::limits::MAX_RULES;

pub fn cpus(s: &str) -> Result<String, ValueError> {
    let list = traffic::sys::parse_cpus(s)?;
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if let Some(c) = list.iter().find(|&&c| c >= n) {
        return Err(ValueError::Other(format!(
            "CPU {c} does not exist (this host has CPUs 0-{})",
            n - 1
        )));
    }
    Ok(traffic::sys::format_cpus(&list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonsense_values_are_refused_not_rounded() {
        assert!(parse_duration("1e-300")
            .unwrap_err()
            .to_string()
            .contains("shorter than a millisecond"));
        assert_eq!(parse_duration("1ms").unwrap(), 1e-3);
        assert!(parse_duration("86401").is_err());
        // Below a nanosecond a gap used to become 0 (back to back).
        assert!(parse_interval("0.0000001us").is_err());
        assert_eq!(parse_interval("0.001us").unwrap(), 1);
        assert!(rate("0").unwrap_err().to_string().contains("zero"));
        assert_eq!(rate("max").unwrap(), proto::Rate::Max);
        assert!(rule_count("1000000000")
            .unwrap_err()
            .to_string()
            .contains("more than the 1000000"));
        assert_eq!(rule_count("1000000").unwrap(), 1_000_000);
        assert!(cpus("0-18446744073709551615").is_err());
    }
}
