//! The AF_XDP sender alone, for `bench/generators.sh` until `fwbench flood --sender xdp`
//! exists: an unpaced flood of UDP frames out of IFNAME (run it inside the client's
//! namespace, pinned with taskset), one thread on queue 0. Prints one JSON line:
//! packets sent (completed by the kernel), seconds, packets/s, the AF_XDP mode, and
//! the process's CPU seconds (user + system, from /proc/self/stat at 100 Hz).
//!
//! Usage: xsk_flood IFNAME NEXT_HOP_MAC SRC_IP DST_IP SECONDS [PAYLOAD] [FLOWS]

use proto::{RawPath, UdpSourceSpec};
use std::time::{Duration, Instant};
use traffic::xsk::{XskModeRequest, XskSource};

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at state, field 3.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11) // state ... cmajflt: utime is field 14, i.e. the 12th after ')'
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<u64>() as f64 / 100.0
}

fn parse_or_exit<T: std::str::FromStr>(s: String, what: &str) -> T {
    s.parse().unwrap_or_else(|_| {
        eprintln!("bad {what}: {s:?}");
        std::process::exit(2)
    })
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 6 {
        eprintln!("usage: xsk_flood IFNAME NEXT_HOP_MAC SRC_IP DST_IP SECONDS [PAYLOAD] [FLOWS]");
        std::process::exit(2);
    }
    let arg = |i: usize, what: &str| -> String {
        a.get(i).cloned().unwrap_or_else(|| {
            eprintln!("missing {what}");
            std::process::exit(2)
        })
    };
    let seconds: f64 = parse_or_exit(arg(5, "seconds"), "seconds");
    let payload: u32 = a.get(6).map_or(18, |s| parse_or_exit(s.clone(), "payload"));
    let flows: u32 = a.get(7).map_or(1, |s| parse_or_exit(s.clone(), "flows"));
    let spec = UdpSourceSpec {
        sources: vec![parse_or_exit(arg(3, "source address"), "source address")],
        src_port: 30000,
        dst: parse_or_exit(arg(4, "destination address"), "destination address"),
        dsts: vec![],
        dst_port: 9000,
        flows,
        payload,
        mix: vec![],
        mix_seed: 0,
        pps: None,
        threads: 1,
        batch: 64,
        raw: Some(RawPath {
            ifname: arg(1, "interface"),
            dst_mac: arg(2, "next-hop MAC"),
            xdp: false,
        }),
        first_flow: 0,
        new_flows: false,
    };
    let mut src = match XskSource::setup(&spec, XskModeRequest::Auto) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("xsk_flood: {e}");
            std::process::exit(1);
        }
    };
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    src.start();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let r = match src.stop() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("xsk_flood: {e}");
            std::process::exit(1);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let secs = r.results.elapsed_ns as f64 / 1e9;
    println!(
        "{{\"sender\":\"xdp\",\"mode\":\"{}\",\"sent\":{},\"seconds\":{:.3},\"sent_pps\":{:.0},\"cpu_s\":{:.2},\"wall_s\":{:.2},\"kicks_again\":{},\"unsent\":{}}}",
        r.xsk.mode.name(),
        r.results.sent.frames,
        secs,
        r.results.sent.frames as f64 / secs.max(1e-9),
        cpu,
        wall,
        r.kicks_again,
        r.unsent
    );
}
