//! How figures read in text: packets/s, Mb/s, µs and ms, each with the precision the
//! trial lines and tables have always shown. Shared by every family's
//! [`crate::workloads::Summary`] text.
//!
//! Must not: decide what a family shows (its summary does).

/// Nanoseconds as milliseconds, three decimals: `1.234`.
pub fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// Nanoseconds as microseconds, one decimal: `12.3`.
pub fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// Bits/s as megabits/s, two decimals: `941.20`.
pub fn mbps(bps: f64) -> String {
    format!("{:.2}", bps / 1e6)
}

/// Packets/s with their unit: `1.488 Mpps`, `14.9 kpps`, `88 pps`.
pub fn pps(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} Mpps", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} kpps", v / 1e3)
    } else {
        format!("{v:.0} pps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_keeps_its_precision() {
        assert_eq!(ms(1_234_567.0), "1.235");
        assert_eq!(us(12_345), "12.3");
        assert_eq!(mbps(941_204_000.0), "941.20");
        assert_eq!(pps(1_488_095.0), "1.488 Mpps");
        assert_eq!(pps(14_880.0), "14.9 kpps");
        assert_eq!(pps(88.4), "88 pps");
    }
}
