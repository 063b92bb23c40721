//! Kernel counters read in a role's own network namespace (the `probe` part of
//! DESIGN.md): interface packet counters today; CPU and memory sampling follow.

use proto::IfCounters;

/// Counters of every interface except `lo` (sysfs of this namespace: `ip netns exec`
/// mounts it for us). Unreadable values are 0.
pub fn interfaces() -> Vec<IfCounters> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/sys/class/net") else {
        return out;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "lo" {
            continue;
        }
        let stat = |f: &str| -> u64 {
            std::fs::read_to_string(e.path().join("statistics").join(f))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0)
        };
        out.push(IfCounters {
            rx_packets: stat("rx_packets"),
            rx_bytes: stat("rx_bytes"),
            rx_dropped: stat("rx_dropped"),
            tx_packets: stat("tx_packets"),
            tx_bytes: stat("tx_bytes"),
            tx_dropped: stat("tx_dropped"),
            name,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Per-interface differences `now − before` (interfaces missing from `before` count from 0).
pub fn since(now: &[IfCounters], before: &[IfCounters]) -> Vec<IfCounters> {
    now.iter()
        .map(|n| {
            let b = before
                .iter()
                .find(|b| b.name == n.name)
                .cloned()
                .unwrap_or_default();
            IfCounters {
                name: n.name.clone(),
                rx_packets: n.rx_packets.saturating_sub(b.rx_packets),
                rx_bytes: n.rx_bytes.saturating_sub(b.rx_bytes),
                rx_dropped: n.rx_dropped.saturating_sub(b.rx_dropped),
                tx_packets: n.tx_packets.saturating_sub(b.tx_packets),
                tx_bytes: n.tx_bytes.saturating_sub(b.tx_bytes),
                tx_dropped: n.tx_dropped.saturating_sub(b.tx_dropped),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_per_interface() {
        let c = |name: &str, rx: u64| IfCounters {
            name: name.into(),
            rx_packets: rx,
            ..Default::default()
        };
        let d = since(&[c("g0", 150), c("g1", 7)], &[c("g0", 100)]);
        assert_eq!(d, vec![c("g0", 50), c("g1", 7)]);
    }
}
