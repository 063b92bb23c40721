//! Host metadata recorded with every run: kernel, CPU, fwbench version, sysctls, tools,
//! CPU vulnerability mitigations (docs/results.md lists them; `store::Host::facts`
//! names them for trends).

use store::Host;

fn read(p: &str) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// sysctls that shape forwarding, socket performance and a rule's cost, as the root
/// namespace has them (a namespace testbed's gateway has its own `net.ipv4.*`; the
/// gateway's are in its trial results). A sysctl this kernel lacks is left out.
const SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.netdev_max_backlog",
    "net.core.netdev_budget",
    "net.core.busy_poll",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.udp_mem",
    "kernel.sched_autogroup_enabled",
    // A rule's cost: BPF programs (xdp, tc-bpf engines) run JITed or interpreted,
    // hardened or not; conntrack's table and hash size; forwarding and reverse-path
    // filtering (a route lookup per packet).
    "net.core.bpf_jit_enable",
    "net.core.bpf_jit_harden",
    "net.netfilter.nf_conntrack_max",
    "net.netfilter.nf_conntrack_buckets",
    "net.ipv4.ip_forward",
    "net.ipv4.conf.all.rp_filter",
];

/// Where the kernel says how it mitigates each CPU vulnerability (one file each).
const VULNERABILITIES: &str = "/sys/devices/system/cpu/vulnerabilities";

/// Each file of [`VULNERABILITIES`] (name, its line), sorted by name; none when the
/// kernel has no such directory.
fn mitigations(dir: &std::path::Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut v: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                text.trim().to_owned(),
            ))
        })
        .collect();
    v.sort();
    v
}

pub fn collect(tools: Vec<(String, String)>) -> Host {
    let cpu_model = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    Host {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        fwbench_version: crate::version::VERSION.into(),
        sysctls: SYSCTLS
            .iter()
            .filter_map(|k| {
                let v =
                    std::fs::read_to_string(format!("/proc/sys/{}", k.replace('.', "/"))).ok()?;
                Some((
                    k.to_string(),
                    v.split_whitespace().collect::<Vec<_>>().join(" "),
                ))
            })
            .collect(),
        tools,
        mitigations: mitigations(std::path::Path::new(VULNERABILITIES)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mitigations_are_each_file_of_the_directory_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spectre_v2"), "Mitigation: Retpolines\n").unwrap();
        std::fs::write(dir.path().join("meltdown"), "Not affected\n").unwrap();
        assert_eq!(
            mitigations(dir.path()),
            [
                ("meltdown".to_string(), "Not affected".to_string()),
                ("spectre_v2".into(), "Mitigation: Retpolines".into())
            ]
        );
        assert!(mitigations(&dir.path().join("absent")).is_empty());
    }

    /// This host's: every file of the kernel's directory, when it has one.
    #[test]
    fn this_hosts_facts_include_its_mitigations_and_rule_cost_sysctls() {
        let h = collect(vec![]);
        let files = std::fs::read_dir(VULNERABILITIES).map_or(0, |d| d.count());
        assert_eq!(h.mitigations.len(), files);
        if std::path::Path::new("/proc/sys/net/core/bpf_jit_enable").exists() {
            assert!(h.facts().contains_key("sysctl.net.core.bpf_jit_enable"));
        }
    }
}
