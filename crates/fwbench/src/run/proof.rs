//! `rules advise --verify-on-testbed` (and `--measure`, before any number): the proof
//! on a testbed. Each ruleset in turn, with every address mapped into the benchmark
//! ranges and an observer table after it (`firewall::advise::testbed` plans both), is
//! installed on the testbed's gateway by a gateway agent like any imported ruleset;
//! the client sends every probe class a few times as raw frames; the observer's
//! counters, read back when the agent stops, say which classes got through. A class
//! whose fate differs between the rulesets, or from the model's, is a refusal.
//!
//! Owns: the rounds on the testbed (install, send, read, undo), the gateway's local
//! route for the mapped destinations (topology input), the probe sender command.
//! Must not: judge anything itself (the firewall crate does), or send to an address
//! outside the benchmark ranges.

use crate::error::usage;
use crate::params::search::Asked;
use crate::params::topology::Topology;
use crate::params::workload::Workload;
use crate::plan::axes::AxisValues;
use crate::run::session::{require_root, Testbeds};
use crate::testbed::launcher::Launcher;
use crate::testbed::{Host, Testbed};
use anyhow::{Context, Result};
use firewall::advise::testbed::{self as plan, Path, Proven};
use firewall::advise::Rulesets;
use std::time::Duration;
use traffic::packet::ProbeTuple;

/// Packets sent per class and ruleset.
pub const PACKETS: u32 = 3;
/// Their rate: slow enough that the gateway, passing each packet through thousands
/// of linear rules (the original ruleset, then the observer), keeps up without
/// dropping at its backlog (a 5 000-rule chain took ≈ 10 kpps on the 2-core VM).
pub const PPS: f64 = 2000.0;

/// The gateway's local routes for the mapped destinations (topology input: the
/// gateway must take every one of them as its own so they reach its input hook),
/// removed when dropped.
struct LocalRoutes<'a> {
    gw: &'a Launcher,
    added: Vec<[&'static str; 2]>,
}

impl<'a> LocalRoutes<'a> {
    fn add(gw: &'a Launcher) -> Result<LocalRoutes<'a>> {
        let mut r = LocalRoutes { gw, added: vec![] };
        for (family, net) in [("-4", plan::DESTINATIONS_V4), ("-6", plan::DESTINATIONS_V6)] {
            gw.run(
                &["ip", family, "route", "replace", "local", net, "dev", "lo"],
                None,
                gw.timeout,
            )
            .with_context(|| format!("adding the local route {net} on {}", gw.describe()))?;
            r.added.push([family, net]);
        }
        Ok(r)
    }
}

impl Drop for LocalRoutes<'_> {
    fn drop(&mut self) {
        for [family, net] in &self.added {
            let _ = self.gw.run(
                &["ip", family, "route", "del", "local", net, "dev", "lo"],
                None,
                self.gw.timeout,
            );
        }
    }
}

/// A directory of our own for the files (`mkdtemp`: mode 0700, a fresh name nobody
/// could plant or link beforehand), removed on drop — on every exit path but SIGKILL.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    pub fn new(tag: &str) -> Result<Scratch> {
        crate::host::state::temp_dir(tag)
            .map(Scratch)
            .map_err(|e| crate::error::usage(e.to_string()))
    }

    pub fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

/// Prove on testbed `name` that the two rulesets give every probe class the same
/// fate, and the model's. A disagreement is an error (exit 1) naming the rule and
/// the probe; a ruleset or testbed the proof cannot use, bad input (exit 2).
pub fn prove(name: &str, rs: &Rulesets) -> Result<Proven> {
    require_root()?;
    let testbeds = Testbeds::new(Some(name))?;
    // INVARIANT: `Testbeds::new(Some(_))` opens the named testbed or fails.
    let tb: &dyn Testbed = testbeds.named.as_deref().expect("a named testbed");
    let path = match tb.topology() {
        Topology::Input => Path::Input,
        Topology::Forward => Path::Forward,
        t @ (Topology::Direct | Topology::Proxy) => {
            return Err(usage(format!(
                "--verify-on-testbed: testbed {name} has topology {t}; the proof needs a \
                 gateway that filters (topology input or forward)"
            )))
        }
    };
    let (Some(gw), Some(client)) = (tb.launcher(Host::Gateway), tb.launcher(Host::Client)) else {
        return Err(usage(format!(
            "--verify-on-testbed: testbed {name} has no gateway"
        )));
    };
    if gw.transport() != "netns" || tb.gateway_is_external() {
        return Err(usage(format!(
            "--verify-on-testbed: testbed {name} is not a local namespace testbed \
             (`fwbench testbed up`); the proof adds a route on its gateway"
        )));
    }
    let ifaces = [tb.gateway_ingress(), crate::testbed::netns::GATEWAY_OUT_IF];
    let p =
        plan::plan(rs, path, &ifaces).map_err(|e| usage(format!("--verify-on-testbed: {e}")))?;
    let mac = tb.next_hop_mac(0)?;
    let dir = Scratch::new("proof")?;
    let _routes = match path {
        Path::Input => Some(LocalRoutes::add(&gw)?),
        Path::Forward => None,
    };
    let mut counts = vec![];
    for (r, round) in p.rounds.iter().enumerate() {
        let probes: Vec<ProbeTuple> = round
            .classes
            .iter()
            .map(|&k| {
                let c = &p.classes[k];
                ProbeTuple {
                    proto: c.proto,
                    src: c.src,
                    dst: c.dst,
                    sport: c.sport,
                    dport: c.dport,
                }
            })
            .collect();
        let input = serde_json::to_string(&probes)?;
        let mut both: [Vec<u64>; 2] = [vec![], vec![]];
        for (w, which) in ["original", "optimised"].into_iter().enumerate() {
            let file = dir.path().join(format!("{which}-{r}.nft"));
            std::fs::write(&file, &round.files[w])
                .with_context(|| format!("writing {}", file.display()))?;
            let request = request(&file, tb.topology(), round.v6)
                .map_err(|e| usage(format!("--verify-on-testbed: the {which} ruleset: {e}")))?;
            let g = crate::run::worklang::gateway_up(tb, Box::new(request)).with_context(|| {
                format!(
                    "installing the {which} ruleset (mapped) on {}",
                    gw.describe()
                )
            })?;
            let sent = send(&client, tb, &mac, &input, probes.len());
            // What is in flight arrives before the counters are read.
            std::thread::sleep(Duration::from_millis(500));
            let report = crate::run::worklang::gateway_down(g)?;
            sent?;
            both[w] = observed(report.as_deref())
                .with_context(|| format!("reading the observer's counters ({which} ruleset)"))?;
        }
        counts.push(both);
    }
    drop(testbeds);
    plan::judge(&p, &counts, PACKETS).map_err(|e| anyhow::Error::new(*e))
}

/// A flood's axis values with `file` (and the ipsets it matches) imported into
/// `engine`; the rest the registry's defaults.
pub fn import_values(engine: firewall::Engine, file: &str, ipset: Option<&str>) -> AxisValues {
    let mut v = AxisValues::defaults(Asked::Traffic(Workload::Flood));
    v.engine = engine;
    v.model = firewall::models::Model::Import;
    v.model_given = true;
    v.import = Some(file.to_owned());
    v.import_ipset = ipset.map(str::to_owned);
    v
}

/// The nft engine's request for an imported file on the testbed's topology.
fn request(file: &std::path::Path, topology: Topology, v6: bool) -> Result<firewall::Request> {
    let mut v = import_values(firewall::Engine::Nft, &file.display().to_string(), None);
    v.topology = topology;
    v.family = if v6 {
        proto::Family::V6
    } else {
        proto::Family::V4
    };
    let p = crate::plan::build::build(&v, 0, &Default::default()).map_err(usage)?;
    crate::rules::request(&p)
        .map_err(usage)?
        .ok_or_else(|| usage("engine nft installs rules"))
}

/// Send the probes from the client host (`fwbench testbed send-probes`).
fn send(client: &Launcher, tb: &dyn Testbed, mac: &str, input: &str, classes: usize) -> Result<()> {
    let exe = client.fwbench_exe()?;
    let (packets, pps) = (PACKETS.to_string(), PPS.to_string());
    let secs = classes as f64 * f64::from(PACKETS) / PPS;
    let out = client.run(
        &[
            &exe,
            "testbed",
            "send-probes",
            "--ifname",
            tb.client_interface(0),
            "--dst-mac",
            mac,
            "--packets",
            &packets,
            "--rate",
            &pps,
        ],
        Some(input),
        client.timeout + Duration::from_secs_f64(secs * 2.0),
    )?;
    let v: serde_json::Value = serde_json::from_str(&out)
        .with_context(|| format!("reading what the probe sender said: {out}"))?;
    let want = classes as u64 * u64::from(PACKETS);
    match v["sent"].as_u64() {
        Some(n) if n == want => Ok(()),
        n => anyhow::bail!("the probe sender sent {n:?} of {want} packets"),
    }
}

/// The observer's counters, rule by rule, from the gateway's report.
fn observed(report: Option<&firewall::Report>) -> Result<Vec<u64>> {
    let r = report.context("the gateway reported no rule set")?;
    let v = r.verdicts.as_ref().with_context(|| {
        r.verdicts_error
            .clone()
            .unwrap_or_else(|| "no counters".into())
    })?;
    let mut hits: Vec<(usize, u64)> = v
        .rules
        .iter()
        .filter(|h| h.chain == plan::OBSERVER_CHAIN)
        .map(|h| (h.index, h.packets))
        .collect();
    hits.sort_unstable();
    anyhow::ensure!(
        !hits.is_empty(),
        "no rule of chain {} counted",
        plan::OBSERVER_CHAIN
    );
    Ok(hits.into_iter().map(|(_, p)| p).collect())
}

/// `fwbench testbed send-probes` (internal, run on the client host): the probes
/// (JSON on stdin) sent as raw frames; prints `{"sent": N}`.
pub fn send_probes(ifname: &str, dst_mac: &str, packets: u32, pps: f64) -> Result<()> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    let probes: Vec<ProbeTuple> =
        serde_json::from_str(&text).map_err(|e| usage(format!("probes on stdin: {e}")))?;
    for p in &probes {
        for a in [p.src, p.dst] {
            if !crate::testbed::addr::benchmark(a) {
                return Err(usage(format!(
                    "probe address {a} is outside 198.18.0.0/15 and 2001:2::/48: not sent"
                )));
            }
        }
    }
    let sent = traffic::probeset::send(ifname, dst_mac, &probes, packets, pps)?;
    println!("{}", serde_json::json!({ "sent": sent }));
    Ok(())
}
