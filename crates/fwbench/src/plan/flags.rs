//! Flag groups shared by the trial commands and `fwbench workload` (clap, no
//! syscalls), each mapped onto the axis registry's typed values ([`AxisValues`]), so
//! a flag and its scenario axis reach `TrialParams` through the one builder.

use crate::error::usage;
use crate::params::topology::Topology;
use crate::params::values::{chain, engine, model, position, rule_count};
use crate::plan::axes::AxisValues;
use anyhow::Result;
use clap::Args;

/// The rule set on the gateway (shared by every workload).
#[derive(Args, Clone)]
#[command(next_help_heading = "Firewall")]
pub struct FirewallArgs {
    /// Filtering engine: none, nft, nft-set, iptables-legacy, iptables-nft, ipset (= ipset-legacy), ipset-nft, xdp (native XDP), xdp-map (filler rules in one hash map), xdp-generic, tc-bpf
    #[arg(long, default_value = "none", value_parser = engine)]
    pub engine: firewall::Engine,
    /// Rule-set model: seed000-f0|f2|f4, linear, linear-drop, net-drop, notrack, conntrack, stateful, raw-drop, filter-drop,
    /// raw-filler, string-bm, string-kmp, string-bm-drop, string-kmp-drop, hashlimit, snat, masquerade, dnat
    /// (NAT: N filler NAT rules, then the translating one; dnat: the client aims at the gateway), flowtable (nft), import
    /// [default: linear, or import with --import]
    #[arg(long, value_parser = model)]
    pub model: Option<firewall::models::Model>,
    /// Number of non-matching filler rules (linear, raw-filler; before the drop in raw-drop, filter-drop) or string rules
    #[arg(long, default_value = "0", value_parser = rule_count, allow_hyphen_values = true)]
    pub rules: u32,
    /// Where the matching rule sits among the fillers: first, middle, last, none (policy decides)
    #[arg(long, default_value = "last", value_parser = position)]
    pub position: firewall::models::Position,
    /// Chain the traffic is filtered in: forward, or input (selects the input topology)
    #[arg(long, value_parser = chain)]
    pub chain: Option<firewall::models::Chain>,
    /// Your own ruleset (`nft list ruleset` or `iptables-save` output), installed into fwbench's own table/chains
    #[arg(long, value_name = "FILE")]
    pub import: Option<String>,
    /// The ipsets your iptables-save file's rules match (`ipset save` output): created
    /// as fwbench's own (`fwbench-i-NAME`) before the rules, destroyed after them
    #[arg(long, value_name = "FILE", requires = "import")]
    pub import_ipset: Option<String>,
    /// Table family of the nft engines: inet (as distributions ship; every ip match also checks the protocol family) or ip (table ip for IPv4, ip6 for IPv6)
    #[arg(long, default_value = "inet", value_parser = crate::params::values::nft_family)]
    pub nft_family: firewall::NftFamily,
    /// Model snat: translate to this address of the client network (198.18.0.3 …, 2001:2:0:1::3 …) instead of the gateway's server-side address
    #[arg(long, value_name = "ADDR")]
    pub nat_to: Option<std::net::IpAddr>,
}

impl FirewallArgs {
    /// Resolve defaults and conflicts: (model, topology override).
    pub fn resolve(
        &self,
        topology: Option<Topology>,
    ) -> Result<(firewall::models::Model, Option<Topology>)> {
        use firewall::models::{Chain, Model};
        let model = match (self.model, &self.import) {
            (Some(Model::Import), None) => return Err(usage("--model import needs --import FILE")),
            (Some(m), Some(_)) if m != Model::Import => {
                return Err(usage(format!(
                    "--import goes with --model import, not --model {m}"
                )))
            }
            (Some(m), _) => m,
            (None, Some(_)) => Model::Import,
            (None, None) => Model::Linear,
        };
        if self.engine == firewall::Engine::None
            && self
                .model
                .is_some_and(|m| m != Model::None && m != Model::Seed000F0)
        {
            return Err(usage(format!(
                "--model {model} installs rules: choose an --engine (nft, iptables-legacy, …)"
            )));
        }
        let topo = match (self.chain, topology) {
            (Some(Chain::Input), Some(t)) if t != Topology::Input && t != Topology::Proxy => {
                return Err(usage(format!(
                    "--chain input needs topology input (or proxy), not {t}"
                )))
            }
            (Some(Chain::Forward), Some(t @ (Topology::Input | Topology::Proxy))) => {
                return Err(usage(format!(
                    "--chain forward does not fit topology {t} (its traffic ends in INPUT)"
                )))
            }
            (Some(Chain::Input), None) => Some(Topology::Input),
            (_, t) => t,
        };
        Ok((model, topo))
    }
}

impl FirewallArgs {
    /// Set these flags on `v` (after [`FirewallArgs::resolve`]'s checks, bad input →
    /// exit 2); `topology` is the one given, and `v` gets the one the flags imply.
    pub fn set(&self, v: &mut AxisValues, topology: Option<Topology>) -> Result<()> {
        let (model, topo) = self.resolve(topology)?;
        v.engine = self.engine;
        v.model = model;
        v.model_given = true;
        v.rules = self.rules;
        v.position = self.position;
        v.nft_family = self.nft_family;
        v.nat_to = self.nat_to;
        v.import = self.import.clone();
        v.import_ipset = self.import_ipset.clone();
        v.topology = topo.unwrap_or(Topology::Forward);
        Ok(())
    }
}
