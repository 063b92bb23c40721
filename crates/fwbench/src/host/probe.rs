//! Kernel counters read in a role's own network namespace (the `probe` part of
//! DESIGN.md): interface packet counters, and a sampler that records per-CPU
//! user/system/softirq/irq/idle, context switches (the machine's, and the role's own
//! process's over all its threads), memory and interface rates at 5 Hz while traffic
//! runs.

use proto::{IfCounters, MetricSample};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// CPUs of this machine (1 when unknown).
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sampling period: 5 Hz.
pub const PERIOD: Duration = Duration::from_millis(200);
/// Samples kept per trial (10 minutes at 5 Hz); later ones are dropped.
const MAX_ROUNDS: usize = 3000;

/// CPU time counters of one CPU (jiffies), from a `cpuN` line of /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CpuTimes {
    user: u64,
    nice: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    irq: u64,
    softirq: u64,
    steal: u64,
}

impl CpuTimes {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// One reading of everything sampled.
#[derive(Debug, Clone, Default)]
struct Reading {
    cpus: Vec<(usize, CpuTimes)>,
    ctxt: u64,
    /// This process's (voluntary, nonvoluntary) context switches, all threads.
    proc_ctxt: (u64, u64),
    /// This process's CPU time (user + system, all threads), in /proc's clock ticks.
    proc_ticks: u64,
    mem_used_kib: u64,
    ifaces: Vec<IfCounters>,
    /// Entries in this namespace's conntrack table (`None`: no conntrack here).
    ct_count: Option<u64>,
    /// This process's peak resident set (VmHWM), KiB.
    hwm_kib: Option<u64>,
}

/// Per-CPU times and the context-switch count from /proc/stat text.
fn parse_stat(text: &str) -> (Vec<(usize, CpuTimes)>, u64) {
    let mut cpus = Vec::new();
    let mut ctxt = 0;
    for l in text.lines() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some("ctxt") => ctxt = it.next().and_then(|v| v.parse().ok()).unwrap_or(0),
            Some(name) if name.starts_with("cpu") && name.len() > 3 => {
                let Ok(n) = name[3..].parse::<usize>() else {
                    continue;
                };
                let v: Vec<u64> = it.map(|x| x.parse().unwrap_or(0)).collect();
                let g = |i: usize| v.get(i).copied().unwrap_or(0);
                cpus.push((
                    n,
                    CpuTimes {
                        user: g(0),
                        nice: g(1),
                        system: g(2),
                        idle: g(3),
                        iowait: g(4),
                        irq: g(5),
                        softirq: g(6),
                        steal: g(7),
                    },
                ));
            }
            _ => {}
        }
    }
    (cpus, ctxt)
}

/// MemTotal − MemAvailable from /proc/meminfo text, KiB.
fn parse_mem_used(text: &str) -> u64 {
    let get = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    get("MemTotal:").saturating_sub(get("MemAvailable:"))
}

/// (voluntary, nonvoluntary) context switches from a /proc/PID/status text.
fn parse_ctxt_switches(text: &str) -> (u64, u64) {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    (
        get("voluntary_ctxt_switches:"),
        get("nonvoluntary_ctxt_switches:"),
    )
}

/// A `Key:  123 kB` value of a /proc/PID/status text, e.g. `VmHWM:` (KiB).
pub fn status_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// This process's peak resident set size (VmHWM), KiB.
pub fn own_peak_rss_kib() -> Option<u64> {
    status_kib(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmHWM:",
    )
}

/// `nf_conntrack_count` of this network namespace (`None` when conntrack is not loaded).
pub fn conntrack_count() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/net/netfilter/nf_conntrack_count")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// This process's context switches, summed over its threads (/proc/self/task/*/status:
/// /proc/self/status has the main thread's only). Threads that ended take theirs along.
/// utime + stime of a `/proc/PID/stat` line, in clock ticks (0 if unreadable).
fn parse_proc_ticks(text: &str) -> u64 {
    // Fields after the command (which may hold spaces) and its ')': state is the
    // first, utime the 12th, stime the 13th.
    let Some(rest) = text.rsplit_once(')').map(|x| x.1) else {
        return 0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let g = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    g(11) + g(12)
}

fn own_ctxt_switches() -> (u64, u64) {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return (0, 0);
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .map(|t| parse_ctxt_switches(&t))
        .fold((0, 0), |(v, n), (a, b)| (v + a, n + b))
}

fn read_all() -> Reading {
    let (cpus, ctxt) = parse_stat(&std::fs::read_to_string("/proc/stat").unwrap_or_default());
    Reading {
        cpus,
        ctxt,
        proc_ctxt: own_ctxt_switches(),
        proc_ticks: parse_proc_ticks(
            &std::fs::read_to_string("/proc/self/stat").unwrap_or_default(),
        ),
        mem_used_kib: parse_mem_used(&std::fs::read_to_string("/proc/meminfo").unwrap_or_default()),
        ifaces: interfaces(),
        ct_count: conntrack_count(),
        hwm_kib: own_peak_rss_kib(),
    }
}

/// The metrics between two readings `dt_s` apart (pure; unit-tested).
fn metrics(prev: &Reading, now: &Reading, t_s: f64, dt_s: f64) -> Vec<MetricSample> {
    let mut out = Vec::new();
    let mut push = |metric: String, value: f64| out.push(MetricSample { t_s, metric, value });
    for (n, c) in &now.cpus {
        let Some((_, p)) = prev.cpus.iter().find(|(m, _)| m == n) else {
            continue;
        };
        let total = c.total().saturating_sub(p.total()).max(1) as f64;
        let pct = |a: u64, b: u64| 100.0 * a.saturating_sub(b) as f64 / total;
        push(
            format!("cpu{n}.user"),
            pct(c.user + c.nice, p.user + p.nice),
        );
        push(format!("cpu{n}.system"), pct(c.system, p.system));
        push(format!("cpu{n}.softirq"), pct(c.softirq, p.softirq));
        push(format!("cpu{n}.irq"), pct(c.irq, p.irq));
        push(
            format!("cpu{n}.idle"),
            pct(c.idle + c.iowait, p.idle + p.iowait),
        );
    }
    push(
        "ctxt".into(),
        now.ctxt.saturating_sub(prev.ctxt) as f64 / dt_s,
    );
    // The role's own process (all threads): a thread that ended between two readings
    // can make the sum smaller; that interval reads 0, never negative.
    let (v, n) = (
        now.proc_ctxt.0.saturating_sub(prev.proc_ctxt.0) as f64 / dt_s,
        now.proc_ctxt.1.saturating_sub(prev.proc_ctxt.1) as f64 / dt_s,
    );
    push("proc.ctxt".into(), v + n);
    // The role's own CPU, % of one CPU (all threads: 200 = two CPUs busy): its ticks
    // over the ticks one CPU had (both in /proc's clock ticks).
    let cpus = now.cpus.len().max(1) as u64;
    let per_cpu = now
        .cpus
        .iter()
        .filter_map(|(n, c)| {
            let (_, p) = prev.cpus.iter().find(|(m, _)| m == n)?;
            Some(c.total().saturating_sub(p.total()))
        })
        .sum::<u64>()
        / cpus;
    if per_cpu > 0 {
        push(
            "proc.cpu".into(),
            100.0 * now.proc_ticks.saturating_sub(prev.proc_ticks) as f64 / per_cpu as f64,
        );
    }
    push("proc.ctxt_voluntary".into(), v);
    push("proc.ctxt_nonvoluntary".into(), n);
    push("mem.used_kib".into(), now.mem_used_kib as f64);
    // Levels, not rates: the connection workloads take their peaks.
    if let Some(c) = now.ct_count {
        push("ct.count".into(), c as f64);
    }
    if let Some(k) = now.hwm_kib {
        push("proc.hwm_kib".into(), k as f64);
    }
    for d in since(&now.ifaces, &prev.ifaces) {
        push(format!("if.{}.rx_pps", d.name), d.rx_packets as f64 / dt_s);
        push(format!("if.{}.tx_pps", d.name), d.tx_packets as f64 / dt_s);
        push(
            format!("if.{}.rx_dropped_ps", d.name),
            d.rx_dropped as f64 / dt_s,
        );
        push(
            format!("if.{}.tx_dropped_ps", d.name),
            d.tx_dropped as f64 / dt_s,
        );
    }
    out
}

/// Samples the host's CPUs and memory and this namespace's interfaces every
/// [`PERIOD`] from `start` until `stop`.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<Vec<MetricSample>>>,
}

impl Sampler {
    pub fn start() -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let worker = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut prev = (t0, read_all());
            let mut out = Vec::new();
            let mut rounds = 0;
            while !s.load(Ordering::Relaxed) && rounds < MAX_ROUNDS {
                // Sleep in short steps so that stop is quick.
                let due = prev.0 + PERIOD;
                while Instant::now() < due && !s.load(Ordering::Relaxed) {
                    std::thread::sleep((due - Instant::now()).min(Duration::from_millis(20)));
                }
                let now = (Instant::now(), read_all());
                let dt = (now.0 - prev.0).as_secs_f64();
                if dt >= PERIOD.as_secs_f64() / 2.0 {
                    out.extend(metrics(&prev.1, &now.1, (now.0 - t0).as_secs_f64(), dt));
                    prev = now;
                    rounds += 1;
                }
            }
            out
        });
        Sampler {
            stop,
            worker: Some(worker),
        }
    }

    pub fn stop(mut self) -> Vec<MetricSample> {
        self.stop.store(true, Ordering::SeqCst);
        self.worker
            .take()
            .and_then(|w| w.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_and_context_switch_rates() {
        let a = "cpu  10 0 10 80 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\nctxt 1000\n";
        let b = "cpu  40 0 20 140 0 0 0 0\ncpu0 20 0 10 80 0 0 90 0 0 0\ncpu1 20 0 10 170 0 0 0 0\nctxt 1500\n";
        let (ca, xa) = parse_stat(a);
        let (cb, xb) = parse_stat(b);
        assert_eq!((ca.len(), xa, xb), (2, 1000, 1500));
        let ra = Reading {
            cpus: ca,
            ctxt: xa,
            ..Default::default()
        };
        let rb = Reading {
            cpus: cb,
            ctxt: xb,
            proc_ctxt: (300, 50),
            proc_ticks: 75,
            mem_used_kib: 42,
            ct_count: Some(250_003),
            hwm_kib: Some(9000),
            ..Default::default()
        };
        let m = metrics(&ra, &rb, 1.0, 0.5);
        assert!(metrics(&rb, &ra, 1.0, 0.5)
            .iter()
            .all(|s| s.metric != "ct.count" && s.metric != "proc.hwm_kib"));
        let get = |k: &str| m.iter().find(|s| s.metric == k).map(|s| s.value).unwrap();
        // CPU 0: 100 jiffies passed, 90 of them softirq, 10 user.
        assert_eq!(get("cpu0.softirq"), 90.0);
        assert_eq!(get("cpu0.user"), 10.0);
        assert_eq!(get("cpu1.idle"), 70.0);
        assert_eq!(get("cpu1.user"), 20.0);
        assert_eq!(get("ctxt"), 1000.0, "500 switches in 0.5 s");
        assert_eq!(get("mem.used_kib"), 42.0);
        assert_eq!(get("proc.ctxt_voluntary"), 600.0, "300 in 0.5 s");
        assert_eq!(get("proc.ctxt_nonvoluntary"), 100.0);
        assert_eq!(get("proc.ctxt"), 700.0);
        assert_eq!(get("ct.count"), 250_003.0);
        assert_eq!(get("proc.hwm_kib"), 9000.0);
        // 75 ticks of the process while each CPU had (100 + 100) / 2 = 100.
        assert_eq!(get("proc.cpu"), 75.0);
    }

    #[test]
    fn peak_rss_from_status() {
        let t = "Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t    5120 kB\nVmRSS:\t 4000 kB\n";
        assert_eq!(status_kib(t, "VmHWM:"), Some(5120));
        assert_eq!(status_kib(t, "VmSwap:"), None);
        assert!(own_peak_rss_kib().is_some_and(|k| k > 100));
    }

    #[test]
    fn own_cpu_time_from_stat() {
        // pid (comm with spaces) state ppid … utime=11th after state+1, stime next.
        let t = "42 (fw bench) S 1 42 42 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 3 0 100";
        assert_eq!(parse_proc_ticks(t), 1234 + 56);
        assert_eq!(parse_proc_ticks("garbage"), 0);
    }

    #[test]
    fn own_context_switches_from_status() {
        let t = "Name:\tfwbench\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n";
        assert_eq!(parse_ctxt_switches(t), (1234, 56));
        assert_eq!(parse_ctxt_switches("Name: x\n"), (0, 0));
        // This process has run, so it has switched at least once.
        let (v, n) = own_ctxt_switches();
        assert!(v + n > 0);
    }

    #[test]
    fn memory_used() {
        assert_eq!(
            parse_mem_used("MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 400 kB\n"),
            600
        );
    }

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
