//! Host metadata recorded with every run: kernel, CPU, fwbench version, sysctls, tools.

use store::Host;

fn read(p: &str) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// sysctls that shape forwarding and socket performance (root namespace).
const SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.netdev_max_backlog",
    "net.core.busy_poll",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.udp_mem",
    "kernel.sched_autogroup_enabled",
];

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
    }
}
