//! Host metadata per role of a testbed file: kernel, CPU model and count, the NIC's
//! driver (`ethtool -i`, else sysfs) and offloads (`ethtool -k`), and the sysctls that
//! shape forwarding — read once per run through each role's launcher and stored with
//! the run (`store::RoleHost`), shown in the report's "Testbed hosts" table.
//!
//! Owns: the probe script and parsing its answer. Must not: change anything on a host.

use store::RoleHost;

/// sysctls recorded per role host.
const SYSCTLS: &[&str] = &[
    "net.ipv4.ip_forward",
    "net.ipv6.conf.all.forwarding",
    "net.core.netdev_max_backlog",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.netfilter.nf_conntrack_max",
];

/// Offloads worth recording (`ethtool -k` names).
const OFFLOADS: &[&str] = &[
    "rx-checksumming",
    "tx-checksumming",
    "scatter-gather",
    "tcp-segmentation-offload",
    "generic-segmentation-offload",
    "generic-receive-offload",
    "large-receive-offload",
    "receive-hashing",
    "ntuple-filters",
];

/// The probe, run as `sh -c PROBE sh IFNAME [moved]` (IFNAME may be empty; `moved`:
/// also how the port is found, before fwbench moves it).
pub fn probe_script() -> String {
    let sysctls = SYSCTLS.join(" ");
    let offloads = OFFLOADS.join("|");
    format!(
        "echo \"kernel $(uname -r)\"; echo \"cpus $(nproc 2>/dev/null || echo 0)\"; \
         echo \"cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')\"; \
         i=\"$1\"; if [ -n \"$i\" ]; then \
           d=$(ethtool -i \"$i\" 2>/dev/null | sed -n 's/^driver: //p'); \
           [ -n \"$d\" ] || d=$(basename \"$(readlink \"/sys/class/net/$i/device/driver\" 2>/dev/null)\" 2>/dev/null); \
           echo \"driver $d\"; \
           ethtool -k \"$i\" 2>/dev/null | grep -E '^({offloads}):' | sed 's/^/offload /'; \
           if [ \"$2\" = moved ]; then \
             a=$(ip -o addr show dev \"$i\" scope global | awk '{{printf \"%s \", $4}}'); \
             m=$(ip -o link show dev \"$i\" | sed -n 's/.* mtu \\([0-9]*\\).*/\\1/p'); \
             u=$(ip -o link show dev \"$i\" | grep -q '[<,]UP[,>]' && echo up || echo down); \
             echo \"port ${{a:-no address, }}mtu $m $u\"; \
           fi; \
         fi; \
         for s in {sysctls}; do f=/proc/sys/$(echo $s | tr . /); \
           [ -r \"$f\" ] && echo \"sysctl $s $(cat \"$f\")\"; done; true"
    )
}

/// Parse the probe's answer into a role host.
pub fn parse(role: &str, place: &str, interface: Option<&str>, text: &str) -> RoleHost {
    let mut h = RoleHost {
        role: role.into(),
        place: place.into(),
        interface: interface.map(str::to_owned),
        ..Default::default()
    };
    for line in text.lines() {
        let (k, v) = line.split_once(' ').unwrap_or((line, ""));
        let v = v.trim();
        match k {
            "kernel" => h.kernel = v.into(),
            "cpus" => h.cpus = v.parse().unwrap_or(0),
            "cpu" => h.cpu_model = v.into(),
            "driver" if !v.is_empty() => h.driver = Some(v.into()),
            "port" => h.port = Some(v.into()),
            "offload" => {
                if let Some((name, state)) = v.split_once(':') {
                    h.offloads.push((name.trim().into(), state.trim().into()));
                }
            }
            "sysctl" => {
                if let Some((name, value)) = v.split_once(' ') {
                    let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
                    h.sysctls.push((name.into(), value));
                }
            }
            _ => {}
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_answer_parsed() {
        let h = parse(
            "gateway",
            "ssh root@198.18.0.1",
            Some("enp1s0"),
            "kernel 6.1.0-18-amd64\ncpus 4\ncpu Intel Xeon E-2224\ndriver ixgbe\n\
             offload generic-receive-offload: on\noffload large-receive-offload: off [fixed]\n\
             sysctl net.ipv4.ip_forward 1\nsysctl net.core.rmem_max 212992\n",
        );
        assert_eq!(h.kernel, "6.1.0-18-amd64");
        assert_eq!(h.cpus, 4);
        assert_eq!(h.cpu_model, "Intel Xeon E-2224");
        assert_eq!(h.driver.as_deref(), Some("ixgbe"));
        assert_eq!(
            h.offloads,
            [
                ("generic-receive-offload".to_string(), "on".to_string()),
                ("large-receive-offload".into(), "off [fixed]".into())
            ]
        );
        assert_eq!(h.sysctls[0], ("net.ipv4.ip_forward".into(), "1".into()));
        // No interface: no driver line.
        let h = parse(
            "client",
            "local",
            None,
            "kernel 6.1\ncpus 2\ncpu x\ndriver \n",
        );
        assert_eq!(h.driver, None);
    }

    #[test]
    fn the_probe_runs_here() {
        let out = crate::process::Cmd::new("sh", &["-c", &probe_script(), "sh", "lo", "moved"])
            .run()
            .unwrap()
            .stdout;
        let h = parse("client", "local", Some("lo"), &out);
        assert!(!h.kernel.is_empty() && h.cpus > 0, "{out}");
        assert!(!h.sysctls.is_empty(), "{out}");
        assert!(
            h.port
                .as_deref()
                .is_some_and(|p| p.contains("mtu 65536 up")),
            "{out}"
        );
    }
}
