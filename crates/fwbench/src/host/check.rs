//! `fwbench check`: what this host can do, and what to install when it cannot.
//!
//! Owns: probing the kernel features fwbench relies on (network namespaces, veth,
//! nftables, xtables legacy and nft, ipset, conntrack, SCTP, XDP/BPF, IPv6), locating
//! the external tools with their versions, and rendering the result as text or JSON.
//! Must not: touch firewall state it did not create, or send any traffic. Every probe
//! that changes state runs inside a private namespace `fwb-check-<pid>-<n>`, which a
//! drop guard deletes on every path.

use crate::process::{find_program, first_line, Cmd, Finished};
use crate::sys::load_trivial_xdp;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use traffic::TrafficError;

/// One kernel feature: usable or not, why, and how to fix it.
#[derive(Debug, Clone)]
pub struct Capability {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
    pub fix: Option<String>,
}

/// One external program fwbench drives; `path` is `None` when it is not installed.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: &'static str,
    pub path: Option<String>,
    pub version: Option<String>,
    pub package: &'static str,
    pub needed_for: &'static str,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub capabilities: Vec<Capability>,
    pub tools: Vec<Tool>,
    /// What killed fwbench runs had left changed on this host, restored by
    /// `fwbench check` ([`restore_host_state`]); `None`: not looked at.
    pub host_state: Option<Vec<String>>,
}

const VERSION_TIMEOUT: Duration = Duration::from_secs(3);
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
const SCTP_FIX: &str =
    "load the sctp module (modprobe sctp) or use a kernel built with CONFIG_IP_SCTP";

/// Tools: name, Debian package, version flag, what fwbench needs it for.
#[rustfmt::skip]
const TOOLS: &[(&str, &str, &str, &str)] = &[
    ("ip",              "iproute2",   "-V",        "testbed (namespaces, veth)"),
    ("nft",             "nftables",   "--version", "nft engine"),
    ("iptables-legacy", "iptables",   "--version", "iptables-legacy engine"),
    ("iptables-nft",    "iptables",   "--version", "iptables-nft engine"),
    ("ipset",           "ipset",      "--version", "ipset rule sets"),
    ("conntrack",       "conntrack",  "--version", "conntrack inspection"),
    ("iperf3",          "iperf3",     "--version", "benchmarks (peer tool)"),
    ("sockperf",        "sockperf",   "--version", "latency benchmarks (peer tool)"),
    ("taskset",         "util-linux", "--version", "CPU pinning"),
    ("clang",           "clang",      "--version", "XDP programs"),
    ("sqlite3",         "sqlite3",    "--version", "inspecting results (optional)"),
];

/// Capabilities probed inside the private namespace (after `netns` itself).
const NS_PROBES: [&str; 6] = [
    "veth",
    "nftables",
    "xtables-legacy",
    "xtables-nft",
    "ipset",
    "conntrack",
];

/// Probe everything. Never panics; leaves no namespace behind.
pub fn probe() -> Report {
    let tools: Vec<Tool> = std::thread::scope(|s| {
        let jobs: Vec<_> = TOOLS
            .iter()
            .map(|e| {
                (
                    e,
                    std::thread::Builder::new().spawn_scoped(s, move || locate(e)),
                )
            })
            .collect();
        jobs.into_iter()
            .map(|(e, job)| match job {
                Ok(h) => h.join().unwrap_or_else(|_| unlocated(e)),
                Err(_) => locate(e),
            })
            .collect()
    });
    let path_of = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.path.clone())
    };

    let mut caps = Vec::new();
    let ns = match path_of("ip") {
        None => Err(("ip not found".to_string(), "apt-get install iproute2")),
        Some(ip) => Netns::create(&ip).map_err(|e| {
            (
                format!("ip netns add failed: {e}"),
                "run as root (needs CAP_SYS_ADMIN) on a kernel with CONFIG_NET_NS",
            )
        }),
    };
    match ns {
        Err((detail, fix)) => {
            caps.push(bad("netns", detail, fix));
            caps.extend(
                NS_PROBES
                    .iter()
                    .map(|n| bad(n, "skipped: no network namespace", fix)),
            );
        }
        Ok(ns) => {
            caps.push(ok(
                "netns",
                format!("created a private namespace ({})", ns.name),
            ));
            caps.push(probe_veth(&ns));
            caps.push(probe_nftables(&ns, path_of("nft")));
            caps.push(probe_xtables(&ns, "legacy", path_of("iptables-legacy")));
            caps.push(probe_xtables(&ns, "nft", path_of("iptables-nft")));
            caps.push(probe_ipset(&ns, path_of("ipset")));
            caps.push(probe_conntrack(&ns, path_of("conntrack")));
            // `ns` drops here: the namespace and everything in it is deleted.
        }
    }
    caps.extend([probe_sctp(), probe_xdp(), probe_ipv6(), host_info()]);
    Report {
        capabilities: caps,
        tools,
        host_state: None,
    }
}

/// `fwbench check`'s own cleanup: what killed runs left changed on this host (the
/// journal's conntrack settings, crash markers of this namespace), restored, as lines
/// of the report.
pub fn restore_host_state(r: &mut Report) {
    let mut done = super::marker::cleanup_here();
    done.extend(super::at_start());
    r.host_state = Some(done);
}

/// Cheap check: can this kernel open an SCTP stream socket?
#[cfg(test)]
fn sctp_available() -> bool {
    sctp_socket().is_ok()
}

impl Report {
    #[cfg(test)]
    fn sctp_available(&self) -> bool {
        self.capabilities.iter().any(|c| c.name == "sctp" && c.ok)
    }

    /// Packages of missing tools, deduplicated, in table order.
    pub fn missing_packages(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for t in self.tools.iter().filter(|t| t.path.is_none()) {
            if !out.contains(&t.package) {
                out.push(t.package);
            }
        }
        out
    }

    pub fn to_json(&self) -> Value {
        let caps: Vec<Value> = (self.capabilities.iter())
            .map(|c| json!({"name": c.name, "ok": c.ok, "detail": c.detail, "fix": c.fix}))
            .collect();
        let tools: Vec<Value> = (self.tools.iter())
            .map(|t| {
                json!({"name": t.name, "path": t.path, "version": t.version,
                       "package": t.package, "needed_for": t.needed_for})
            })
            .collect();
        json!({"capabilities": caps, "tools": tools, "missing_packages": self.missing_packages(),
               "host_state": self.host_state})
    }

    pub fn render_text(&self) -> String {
        let w = (self.capabilities.iter().map(|c| c.name.len()))
            .chain(self.tools.iter().map(|t| t.name.len()))
            .max()
            .unwrap_or(0);
        let mark = |ok: bool| if ok { "[ok]" } else { "[--]" };
        let mut out = String::from("Capabilities:\n");
        for c in &self.capabilities {
            out += &format!("  {}  {:w$}  {}\n", mark(c.ok), c.name, c.detail);
            if let Some(fix) = &c.fix {
                out += &format!("          fix: {fix}\n");
            }
        }
        out += "Tools:\n";
        for t in &self.tools {
            let text = match (&t.path, &t.version) {
                (Some(_), Some(v)) => v.clone(),
                (Some(p), None) => format!("{p} (version unknown)"),
                (None, _) => format!(
                    "not found (apt-get install {}) — needed for {}",
                    t.package, t.needed_for
                ),
            };
            out += &format!("  {}  {:w$}  {text}\n", mark(t.path.is_some()), t.name);
        }
        if let Some(h) = &self.host_state {
            out += "Host state (left changed by killed runs):\n";
            if h.is_empty() {
                out += "  [ok]  nothing left changed\n";
            }
            for line in h {
                out += &format!("  [!!]  restored: {line}\n");
            }
        }
        let missing = self.missing_packages();
        if !missing.is_empty() {
            out += &format!(
                "install everything: apt-get install -y {}\n",
                missing.join(" ")
            );
        }
        out
    }
}

fn ok(name: &'static str, detail: impl Into<String>) -> Capability {
    Capability {
        name,
        ok: true,
        detail: detail.into(),
        fix: None,
    }
}

fn bad(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Capability {
    Capability {
        name,
        ok: false,
        detail: detail.into(),
        fix: Some(fix.into()),
    }
}

// ------------------------------------------------------------------ namespace probes

/// A private network namespace, deleted on drop.
struct Netns {
    ip: String,
    name: String,
}

impl Netns {
    fn create(ip: &str) -> Result<Netns, String> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "fwb-check-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        reap_orphans(ip);
        // The guard exists only once `add` succeeded (it fails if the name is taken),
        // so we never delete a namespace we did not create.
        run(ip, &["netns", "add", &name], PROBE_TIMEOUT)?;
        Ok(Netns {
            ip: ip.to_string(),
            name,
        })
    }

    /// Run `prog args...` inside the namespace.
    fn exec(&self, prog: &str, args: &[&str]) -> Result<Finished, String> {
        let mut full = vec!["netns", "exec", &self.name, prog];
        full.extend_from_slice(args);
        run(&self.ip, &full, PROBE_TIMEOUT)
    }
}

/// The owner of a scratch namespace: the process id in `fwb-check-<pid>-<n>`.
fn check_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("fwb-check-")?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Delete the scratch namespaces of probes whose process is gone (killed between
/// `netns add` and its drop): the name carries the owner's process id. A namespace
/// whose owner still runs (or whose id was reused) is left alone.
fn reap_orphans(ip: &str) {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = check_owner(&name) else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        tracing::warn!(
            "removing namespace {name}: left by a probe of process {pid}, which is gone"
        );
        let _ = run(ip, &["netns", "del", &name], PROBE_TIMEOUT);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = run(&self.ip, &["netns", "del", &self.name], PROBE_TIMEOUT);
    }
}

fn probe_veth(ns: &Netns) -> Capability {
    let args = [
        "-n", &ns.name, "link", "add", "a0", "type", "veth", "peer", "name", "b0",
    ];
    match run(&ns.ip, &args, PROBE_TIMEOUT) {
        Ok(_) => ok("veth", "veth pair created in the private namespace"),
        Err(e) => bad(
            "veth",
            e,
            "load the veth module (modprobe veth) or use a kernel with CONFIG_VETH",
        ),
    }
}

fn probe_nftables(ns: &Netns, nft: Option<String>) -> Capability {
    let Some(nft) = nft else {
        return bad("nftables", "nft not found", "apt-get install nftables");
    };
    match ns.exec(&nft, &["add", "table", "inet", "fwbcheck"]) {
        Ok(_) => {
            let _ = ns.exec(&nft, &["delete", "table", "inet", "fwbcheck"]);
            ok("nftables", "table inet fwbcheck added and deleted")
        }
        Err(e) => bad(
            "nftables",
            e,
            "load nf_tables (modprobe nf_tables) or use a kernel with CONFIG_NF_TABLES",
        ),
    }
}

/// `flavour` is "legacy" or "nft"; both iptables and ip6tables must list their tables.
fn probe_xtables(ns: &Netns, flavour: &str, v4: Option<String>) -> Capability {
    let name = if flavour == "legacy" {
        "xtables-legacy"
    } else {
        "xtables-nft"
    };
    let (v4name, v6name) = (
        format!("iptables-{flavour}"),
        format!("ip6tables-{flavour}"),
    );
    let Some(v4) = v4 else {
        return bad(
            name,
            format!("{v4name} not found"),
            "apt-get install iptables",
        );
    };
    let fix = format!(
        "use a kernel with the {flavour} xtables modules (ip_tables, ip6_tables or nft_compat)"
    );
    if let Err(e) = ns.exec(&v4, &["-w", "-L", "-n"]) {
        return bad(name, format!("{v4name}: {e}"), fix);
    }
    let v6 = v4.replace(&v4name, &v6name);
    match ns.exec(&v6, &["-w", "-L", "-n"]) {
        Ok(_) => ok(name, format!("{v4name} and {v6name} list tables")),
        Err(e) => bad(name, format!("{v4name} ok, {v6name}: {e}"), fix),
    }
}

fn probe_ipset(ns: &Netns, ipset: Option<String>) -> Capability {
    let Some(ipset) = ipset else {
        return bad("ipset", "ipset not found", "apt-get install ipset");
    };
    match ns.exec(&ipset, &["create", "fwbcheck", "hash:ip"]) {
        Ok(_) => {
            let _ = ns.exec(&ipset, &["destroy", "fwbcheck"]);
            ok("ipset", "hash:ip set created and destroyed")
        }
        Err(e) => bad(
            "ipset",
            e,
            "load ip_set (modprobe ip_set) or use a kernel with CONFIG_IP_SET",
        ),
    }
}

fn probe_conntrack(ns: &Netns, conntrack: Option<String>) -> Capability {
    const MAX: &str = "/proc/sys/net/netfilter/nf_conntrack_max";
    let read_max = || {
        let o = ns.exec("cat", &[MAX]).ok()?;
        first_line(&o.stdout)
    };
    if let Some(max) = read_max() {
        return ok("conntrack", format!("nf_conntrack_max={max}"));
    }
    let fix = "load nf_conntrack (modprobe nf_conntrack) or use a kernel with CONFIG_NF_CONNTRACK";
    let Some(ct) = conntrack else {
        return bad(
            "conntrack",
            format!("{MAX} unreadable; conntrack not found (apt-get install conntrack)"),
            fix,
        );
    };
    // `conntrack -L` lets the kernel autoload nf_conntrack_netlink (and nf_conntrack).
    match ns.exec(&ct, &["-L"]) {
        Ok(_) => ok(
            "conntrack",
            read_max().map_or("conntrack -L works".into(), |m| {
                format!("nf_conntrack_max={m}")
            }),
        ),
        Err(e) => bad("conntrack", format!("conntrack -L: {e}"), fix),
    }
}

// ------------------------------------------------------------------ host probes

fn probe_sctp() -> Capability {
    match sctp_socket() {
        Ok(()) => ok("sctp", "SCTP stream sockets available"),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EPROTONOSUPPORT | libc::ESOCKTNOSUPPORT)
            ) =>
        {
            bad(
                "sctp",
                format!("SCTP unavailable in this kernel ({})", errno_text(&e)),
                SCTP_FIX,
            )
        }
        Err(e) => bad(
            "sctp",
            format!(
                "socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP) failed ({})",
                errno_text(&e)
            ),
            SCTP_FIX,
        ),
    }
}

/// Why this kernel cannot run a role of `proto` (`None`: it can): the words a role's
/// agent would answer its setup with. Only SCTP may be missing.
pub fn transport_unavailable(proto: proto::Proto) -> Option<String> {
    match proto {
        proto::Proto::Sctp => match traffic::sys::sctp_probe() {
            Err(e @ TrafficError::SctpUnavailable(_)) => Some(e.to_string()),
            Ok(()) | Err(_) => None,
        },
        proto::Proto::Tcp | proto::Proto::Udp => None,
    }
}

/// Open (and close) an SCTP stream socket; the kernel's errno if it cannot.
fn sctp_socket() -> std::io::Result<()> {
    traffic::sys::sctp_probe().map_err(|e| match e {
        TrafficError::SctpUnavailable(e) | TrafficError::Io { source: e, .. } => e,
        e => std::io::Error::other(e.to_string()),
    })
}

/// "Protocol not supported (os error 93)" -> "Protocol not supported".
fn errno_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn probe_xdp() -> Capability {
    match load_trivial_xdp() {
        Ok(()) => ok("xdp", "loaded a trivial XDP program via bpf(2)"),
        Err(e) => {
            let fix = match e.raw_os_error() {
                Some(libc::EPERM) => "run as root (needs CAP_BPF and CAP_NET_ADMIN)",
                _ => "use a kernel built with CONFIG_BPF_SYSCALL and XDP support",
            };
            bad(
                "xdp",
                format!("BPF_PROG_LOAD failed ({})", errno_text(&e)),
                fix,
            )
        }
    }
}

fn probe_ipv6() -> Capability {
    if Path::new("/proc/net/if_inet6").exists() {
        ok("ipv6", "enabled (/proc/net/if_inet6 present)")
    } else if Path::new("/proc/sys/net/ipv6").exists() {
        ok("ipv6", "enabled (/proc/sys/net/ipv6 present)")
    } else {
        bad(
            "ipv6",
            "IPv6 disabled or not built in",
            "boot without ipv6.disable=1, or use a kernel with CONFIG_IPV6",
        )
    }
}

fn host_info() -> Capability {
    let cpus = std::thread::available_parallelism().map_or("?".into(), |n| n.to_string());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease");
    let kernel = kernel.as_deref().map_or("unknown", str::trim);
    ok("host", format!("{cpus} CPUs, kernel {kernel}"))
}

// ------------------------------------------------------------------ tools and processes

fn locate(
    &(name, package, flag, needed_for): &(&'static str, &'static str, &'static str, &'static str),
) -> Tool {
    let path = find_program(name).map(|p| p.to_string_lossy().into_owned());
    let version = path.as_deref().and_then(|p| tool_version(p, flag));
    Tool {
        name,
        path,
        version,
        package,
        needed_for,
    }
}

/// The entry without looking anything up (used if a lookup thread died).
fn unlocated(
    &(name, package, _, needed_for): &(&'static str, &'static str, &'static str, &'static str),
) -> Tool {
    Tool {
        name,
        path: None,
        version: None,
        package,
        needed_for,
    }
}

fn tool_version(path: &str, flag: &str) -> Option<String> {
    // Some tools print their version and exit non-zero: any finished run counts.
    let o = Cmd::new(path, &[flag])
        .timeout(VERSION_TIMEOUT)
        .c_locale()
        .finish()
        .ok()?;
    version_line(&o.stdout).or_else(|| version_line(&o.stderr))
}

/// First line of version output that contains a digit, without hash-like words
/// (sqlite3 appends a 64-character source id), capped at 72 characters.
fn version_line(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find(|l| l.chars().any(|c| c.is_ascii_digit()))?;
    let line = line
        .split_whitespace()
        .filter(|w| w.len() <= 32)
        .collect::<Vec<_>>()
        .join(" ");
    Some(match line.char_indices().nth(72) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    })
}

/// Run a program with a deadline (its whole process group is killed when it passes);
/// Ok on exit 0, otherwise a one-line reason.
fn run(prog: &str, args: &[&str], timeout: Duration) -> Result<Finished, String> {
    Cmd::new(prog, args)
        .timeout(timeout)
        .c_locale()
        .run()
        .map_err(|e| e.one_line())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    mod skip {
        include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/util/skip.rs"));
    }

    fn tool(
        name: &'static str,
        version: Option<&str>,
        package: &'static str,
        needed_for: &'static str,
    ) -> Tool {
        let path = version.map(|_| format!("/usr/sbin/{name}"));
        Tool {
            name,
            path,
            version: version.map(str::to_string),
            package,
            needed_for,
        }
    }

    fn sample() -> Report {
        Report {
            capabilities: vec![
                ok("netns", "created"),
                bad(
                    "sctp",
                    "SCTP unavailable in this kernel (Protocol not supported)",
                    "modprobe sctp",
                ),
            ],
            tools: vec![
                tool("ip", Some("ip 6.1"), "iproute2", "testbed"),
                tool("iptables-nft", None, "iptables", "nft engine"),
                tool("iptables-legacy", None, "iptables", "legacy engine"),
                tool("clang", None, "clang", "XDP programs"),
            ],
            host_state: None,
        }
    }

    #[test]
    fn version_line_extraction() {
        let cases = [
            ("\n  nftables v1.0.6 (Lester Gooch #5)\n", Some("nftables v1.0.6 (Lester Gooch #5)")),
            ("sockperf, version 3.7-no.git\n   compiled 2021-08-23\n", Some("sockperf, version 3.7-no.git")),
            ("usage: foo\nfoo 1.2\n", Some("foo 1.2")),
            ("3.40.1 2022-12-28 14:03:47 df5c253c0b3dd24916e4ec7cf77d3db5294cc9fd45ae7b9c5e82ad8197f3alt1\n", Some("3.40.1 2022-12-28 14:03:47")),
            ("no digits here\n\n", None),
            ("", None),
        ];
        for (input, want) in cases {
            assert_eq!(version_line(input).as_deref(), want, "{input:?}");
        }
        let long = format!("v1{}", " xxxx".repeat(40));
        assert_eq!(version_line(&long).map(|l| l.chars().count()), Some(73));
    }

    #[test]
    fn errno_text_strips_os_error() {
        let e = std::io::Error::from_raw_os_error(libc::EPROTONOSUPPORT);
        assert_eq!(errno_text(&e), "Protocol not supported");
    }

    #[test]
    fn render_text_table() {
        let text = sample().render_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Capabilities:");
        assert_eq!(lines[1], "  [ok]  netns            created");
        assert_eq!(
            lines[2],
            "  [--]  sctp             SCTP unavailable in this kernel (Protocol not supported)"
        );
        assert_eq!(lines[3], "          fix: modprobe sctp");
        assert_eq!(lines[4], "Tools:");
        assert_eq!(lines[5], "  [ok]  ip               ip 6.1");
        assert_eq!(
            lines[6],
            "  [--]  iptables-nft     not found (apt-get install iptables) — needed for nft engine"
        );
        assert_eq!(
            lines.last(),
            Some(&"install everything: apt-get install -y iptables clang")
        );
    }

    #[test]
    fn render_text_nothing_missing() {
        let mut r = sample();
        r.tools.retain(|t| t.path.is_some());
        r.tools.push(Tool {
            version: None,
            ..tool("nft", Some("x"), "nftables", "nft engine")
        });
        let text = r.render_text();
        assert!(text.contains("/usr/sbin/nft (version unknown)"));
        assert!(!text.contains("install everything"));
    }

    #[test]
    fn json_keys() {
        let r = sample();
        let v = r.to_json();
        let c = &v["capabilities"][1];
        for k in ["name", "ok", "detail", "fix"] {
            assert!(c.get(k).is_some(), "capability key {k}");
        }
        assert_eq!(c["ok"], false);
        let t = &v["tools"][1];
        for k in ["name", "path", "version", "package", "needed_for"] {
            assert!(t.get(k).is_some(), "tool key {k}");
        }
        assert!(t["path"].is_null());
        assert_eq!(v["missing_packages"], json!(["iptables", "clang"]));
        assert!(!r.sctp_available());
    }

    #[test]
    fn run_times_out_and_reports_spawn_errors() {
        let t = Instant::now();
        let e = run("sleep", &["5"], Duration::from_millis(200)).unwrap_err();
        assert!(e.starts_with("timed out") && t.elapsed() < Duration::from_secs(3));
        assert!(run("/nonexistent/fwb", &[], VERSION_TIMEOUT).is_err());
    }

    /// The probe against the kernel's own list of registered protocols (the probe's
    /// socket call loads the sctp module first where there is one), and its message.
    #[test]
    fn sctp_probe_agrees_with_the_kernels_protocol_list() {
        let c = probe_sctp();
        let protocols = std::fs::read_to_string("/proc/net/protocols").unwrap();
        let listed = protocols
            .lines()
            .any(|l| l.split_whitespace().next() == Some("SCTP"));
        assert_eq!(c.ok, listed, "{c:?}\n{protocols}");
        if !c.ok {
            assert!(
                c.detail.starts_with("SCTP unavailable in this kernel ("),
                "{c:?}"
            );
        }
    }

    #[test]
    fn scratch_namespace_owner_is_read_from_its_name() {
        assert_eq!(check_owner("fwb-check-1234-0"), Some(1234));
        assert_eq!(check_owner("fwb-check-1234-x"), None);
        assert_eq!(check_owner("fwb-check-1234"), None);
        assert_eq!(check_owner("fwb-t1-gw"), None);
    }

    /// A probe killed mid-way leaves `fwb-check-<pid>-<n>`; the next probe removes it.
    #[test]
    fn orphaned_scratch_namespaces_are_reaped() {
        if crate::sys::euid() != 0 {
            return skip::skip("creating a namespace needs root (CI runs as root)");
        }
        // A process id that is certainly gone: a child we started and reaped (tried
        // again in the rare case its PID was reused at once).
        let dead = (0..100)
            .find_map(|_| {
                let mut c = std::process::Command::new("true").spawn().unwrap();
                let pid = c.id();
                c.wait().unwrap();
                (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(pid)
            })
            .expect("a PID that stays unused");
        let orphan = format!("fwb-check-{dead}-7");
        run("ip", &["netns", "add", &orphan], PROBE_TIMEOUT).unwrap();
        let ns = Netns::create("ip").unwrap();
        let gone = !std::path::Path::new("/run/netns").join(&orphan).exists();
        if !gone {
            let _ = run("ip", &["netns", "del", &orphan], PROBE_TIMEOUT);
        }
        drop(ns);
        assert!(gone, "{orphan} was not reaped");
    }

    /// Full probe: needs root for the namespace probes, and must clean up either way.
    #[test]
    fn probe_leaves_no_namespace() {
        let r = probe();
        assert_eq!(r.tools.len(), TOOLS.len());
        assert_eq!(r.capabilities.len(), 1 + NS_PROBES.len() + 4);
        assert_eq!(r.sctp_available(), sctp_available());
        let ours = format!("fwb-check-{}-", std::process::id());
        let left = std::fs::read_dir("/run/netns")
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&ours))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(left, 0);
    }
}
