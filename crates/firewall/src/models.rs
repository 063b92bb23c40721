//! Generators: the rule sets of the studies' experiments, built from a few parameters.
//!
//! Owns: the named models (seed 000 templates, linear fillers, seed 001 variants), their
//! addresses and size limits.
//! Must not: know any engine's syntax or run programs; it only builds a `RuleSet`.

use crate::model::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub use fwmodel::models::{
    Addressing, Chain, Model, ModelSpec, Position, CHAINS, MODELS, POSITIONS,
};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("{0}")]
    Invalid(String),
}

// ---------------------------------------------------------------------------
// Filler addresses and limits
// ---------------------------------------------------------------------------

/// The bytes every flood, flow and ping payload starts with (`traffic::probe::MAGIC`,
/// 0xFB 0x50), in iptables' hex notation (rendered as `--hex-string`): a string rule
/// for it matches every test packet of those workloads.
pub const PAYLOAD_MAGIC: &str = "|fb50|";

/// Host addresses of the IPv4 documentation ranges (192.0.2.0/24, 198.51.100.0/24,
/// 203.0.113.0/24), which filler rules use; the IPv6 fillers use as many addresses
/// of 2001:db8::/32.
pub const FILLER_ADDRS: u32 = 768;
/// Distinct (address, port) pairs of filler rules: every address with ports 1..=65535.
pub const MAX_FILLERS: u32 = FILLER_ADDRS * 65_535;
/// Most rules one generated rule set may hold (the "absurd N" guard).
pub const MAX_RULES: u32 = 1_000_000;
/// Rough kernel memory per rule, for the message of the absurd-N guard.
pub const BYTES_PER_RULE: u64 = 300;

/// Source address of filler rule `k` (0-based): never an address of the testbed.
/// Address index `k % 768`: 192.0.2.0..255, then 198.51.100.0..255, then
/// 203.0.113.0..255; IPv6: 2001:db8::<index in hex>.
pub fn filler_addr(ip: Ip, k: u32) -> IpAddr {
    let i = k % FILLER_ADDRS;
    match ip {
        Ip::V4 => {
            let net: [u8; 3] = match i / 256 {
                0 => [192, 0, 2],
                1 => [198, 51, 100],
                _ => [203, 0, 113],
            };
            IpAddr::V4(Ipv4Addr::new(net[0], net[1], net[2], (i % 256) as u8))
        }
        Ip::V6 => IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, i as u16)),
    }
}

/// Destination port of filler rule `k`: `1 + k / 768`, so (address, port) pairs are
/// distinct for `k < MAX_FILLERS`.
pub fn filler_port(k: u32) -> u16 {
    // INVARIANT: callers check k < MAX_FILLERS first; saturate rather than wrap.
    (1 + k / FILLER_ADDRS).min(u32::from(u16::MAX)) as u16
}

/// Refuse more filler rules than there are distinct (address, port) pairs.
pub fn check_fillers(count: u32) -> Result<(), ModelError> {
    if count > MAX_FILLERS {
        return Err(ModelError::Invalid(format!(
            "{count} filler rules are more than the {MAX_FILLERS} distinct \
             (documentation address, port) pairs available"
        )));
    }
    Ok(())
}

/// The absurd-N guard: refuse rule counts whose rule memory alone would be huge.
pub fn check_count(count: u32) -> Result<(), ModelError> {
    if count > MAX_RULES {
        return Err(ModelError::Invalid(format!(
            "{count} rules would need about {} of rule memory; the limit is {MAX_RULES}",
            human_bytes(u64::from(count) * BYTES_PER_RULE)
        )));
    }
    Ok(())
}

/// 3000000000 → "2.8 GiB", 600000000 → "572 MiB".
fn human_bytes(b: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    const GIB: f64 = MIB * 1024.0;
    let b = b as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", b / MIB)
    }
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Build the rule set of a model for the testbed's addresses.
///
/// Rules with role [`Role::Filler`] never match test traffic (their source addresses
/// are documentation addresses); rules with role [`Role::Match`] match it.
pub fn generate(spec: &ModelSpec, a: &Addressing) -> Result<RuleSet, ModelError> {
    check_addressing(spec, a)?;
    if let (Some(to), false) = (spec.nat_to, spec.model == Model::Snat) {
        return Err(ModelError::Invalid(format!(
            "nat_to {to} applies to model snat only, not {}",
            spec.model
        )));
    }
    if spec.l4 == L4::Icmpv6 {
        return Err(ModelError::Invalid(
            "models filter tcp, udp or sctp test traffic, not icmpv6".into(),
        ));
    }
    let mut rs = RuleSet::empty(spec.ip);
    rs.ingress = vec![
        a.clients.first().copied().unwrap_or(a.client_net.addr),
        a.server,
    ];
    let g = Gen::new(spec, a);
    match spec.model {
        Model::None => {
            rs.description = "no rules (baseline)".into();
        }
        Model::Seed000F0 => {
            rs.description = "seed 000, F=0: no rules".into();
        }
        Model::Seed000F2 | Model::Seed000F4 => g.seed000_templates(&mut rs)?,
        Model::Linear | Model::NetDrop => g.linear_fillers(&mut rs)?,
        Model::LinearDrop => g.linear_drop(&mut rs)?,
        Model::Notrack => g.notrack(&mut rs)?,
        Model::Conntrack => g.conntrack(&mut rs)?,
        Model::Stateful => g.stateful(&mut rs)?,
        Model::RawDrop | Model::FilterDrop => g.dropping(&mut rs)?,
        Model::RawFiller => g.raw_filler(&mut rs)?,
        Model::StringBm | Model::StringKmp | Model::StringBmDrop | Model::StringKmpDrop => {
            g.string_match(&mut rs)?
        }
        Model::Hashlimit => g.hashlimit(&mut rs)?,
        Model::Snat => g.snat(&mut rs)?,
        Model::Masquerade => g.masquerade(&mut rs)?,
        Model::Dnat => g.dnat(&mut rs)?,
        Model::Flowtable => g.flowtable(&mut rs)?,
        Model::Import => {
            return Err(ModelError::Invalid(
                "model import needs --import FILE".into(),
            ));
        }
    }
    Ok(rs)
}

/// What every model's rules are built from: the spec, the testbed's addresses, the
/// chain's hook, the protocol and the test traffic's match.
#[derive(Clone)]
struct Gen<'a> {
    spec: &'a ModelSpec,
    a: &'a Addressing,
    hook: Hook,
    l4: Option<L4>,
    /// The test traffic's match: from the client network, its protocol.
    from_clients: Match,
}

/// A rule of a generated set.
fn rule(hook: Hook, m: Match, action: Action, role: Role) -> Rule {
    Rule {
        hook,
        m,
        action,
        role,
    }
}

impl<'a> Gen<'a> {
    fn new(spec: &'a ModelSpec, a: &'a Addressing) -> Self {
        let l4 = Some(spec.l4);
        Gen {
            spec,
            a,
            hook: spec.chain.hook(),
            l4,
            from_clients: Match {
                src: Some(a.client_net),
                l4,
                ..Match::default()
            },
        }
    }

    /// New and established flows of the test traffic, accepted (a stateful rule).
    fn accept_new(&self) -> Rule {
        let m = Match {
            ct_new_established: true,
            ..self.from_clients.clone()
        };
        rule(self.hook, m, Action::Accept, Role::Match)
    }

    /// Seed 000, F=2 and F=4: accept each client's traffic (and, F=4, mark it per client), policy drop.
    fn seed000_templates(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen {
            spec, a, hook, l4, ..
        } = *self;
        if a.clients.is_empty() {
            return Err(ModelError::Invalid(format!(
                "model {} needs at least one client",
                spec.model
            )));
        }
        let server = Prefix::host(a.server);
        // A client's upload rule and, on forward, its download rule. In the input
        // topology replies leave via output and pass neither prerouting nor input,
        // so a download rule would stay idle.
        let up_and_down = |rules: &mut Vec<Rule>, hook, c: &IpAddr, action| {
            let client = Prefix::host(*c);
            let mut ends = vec![(client, server)];
            if spec.chain == Chain::Forward {
                ends.push((server, client));
            }
            for (src, dst) in ends {
                let m = Match {
                    src: Some(src),
                    dst: Some(dst),
                    l4,
                    ..Match::default()
                };
                rules.push(rule(hook, m, action, Role::Match));
            }
        };
        // F=4: a QoS mark per client, set in mangle prerouting, before filtering.
        if spec.model == Model::Seed000F4 {
            for (i, c) in a.clients.iter().enumerate() {
                let mark = Action::Mark(i as u32 + 1);
                up_and_down(&mut rs.rules, Hook::ManglePrerouting, c, mark);
            }
        }
        // Neighbour discovery must reach the gateway itself despite the drop policy.
        if spec.chain == Chain::Input && spec.ip == Ip::V6 {
            rs.rules.push(rule(
                hook,
                Match {
                    l4: Some(L4::Icmpv6),
                    ..Match::default()
                },
                Action::Accept,
                Role::Guard,
            ));
        }
        for c in &a.clients {
            up_and_down(&mut rs.rules, hook, c, Action::Accept);
        }
        rs.policies.push((hook, Policy::Drop));
        let f = if spec.model == Model::Seed000F4 { 4 } else { 2 };
        let n = a.clients.len();
        rs.description = match spec.chain {
            _ if spec.one_way => format!(
                "notrack: {} from the client network untracked in raw prerouting (one-way traffic)",
                spec.l4.name()
            ),
            Chain::Forward => format!(
                "seed 000, F={f}: accept {} between {n} clients and the server on forward, policy drop",
                spec.l4.name()
            ),
            Chain::Input => format!(
                "seed 000, F={f}: accept {} from {n} clients on input, policy drop \
                 (replies leave via output, not filtered)",
                spec.l4.name()
            ),
        };
        if spec.model == Model::Seed000F4 {
            rs.description += "; per-client mark in mangle prerouting";
        }
        Ok(())
    }

    /// `count` filler rules (or documentation networks dropped) with the matching accept at `position`.
    fn linear_fillers(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, hook, .. } = *self;
        let from_clients = &self.from_clients;
        check_count(spec.count)?;
        rs.rules = if spec.model == Model::NetDrop {
            net_fillers(hook, spec)
        } else {
            fillers(hook, spec)?
        };
        let m = from_clients.clone();
        place(&mut rs.rules, spec.position, hook, m, Action::Accept);
        let matching = match spec.position {
            Position::None => "no matching rule".to_string(),
            p => format!("match {p}"),
        };
        rs.description = format!(
            "{}: {} filler rules{} on {}, {matching}",
            spec.model,
            spec.count,
            if spec.model == Model::NetDrop {
                " (drop a documentation /24 or /48 network)"
            } else {
                ""
            },
            spec.chain
        );
        Ok(())
    }

    /// `count` drop rules of (source host, port), the client's own at `position`.
    fn linear_drop(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen {
            spec, a, hook, l4, ..
        } = *self;
        check_count(spec.count)?;
        let n = spec.count.max(1);
        let (Some(port), Some(client)) = (spec.dport, a.clients.first()) else {
            return Err(ModelError::Invalid(
                "model linear-drop needs the traffic's destination port and a client".into(),
            ));
        };
        let mut fill = spec.clone();
        fill.count = n - 1;
        rs.rules = fillers(hook, &fill)?;
        let m = Match {
            src: Some(Prefix::host(*client)),
            l4,
            dport: Some(port),
            ..Match::default()
        };
        place(&mut rs.rules, spec.position, hook, m, Action::Drop);
        rs.description = format!(
            "linear-drop: {n} drop rules of (source host, port) on {}, {}",
            spec.chain,
            match spec.position {
                Position::None => "none of them the client's".to_string(),
                p => format!("the client's own ({client}, {port}) {p}"),
            }
        );
        Ok(())
    }

    /// The test traffic untracked in raw prerouting.
    fn notrack(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, a, l4, .. } = *self;
        // In the input topology replies leave via output and never pass
        // prerouting, so a rule for the server network would stay idle.
        let nets = match (spec.chain, spec.one_way) {
            (Chain::Forward, false) => vec![a.client_net, a.server_net],
            _ => vec![a.client_net],
        };
        for net in nets {
            rs.rules.push(rule(
                Hook::RawPrerouting,
                Match {
                    src: Some(net),
                    l4,
                    ..Match::default()
                },
                Action::Notrack,
                Role::Match,
            ));
        }
        rs.description = match spec.chain {
            Chain::Forward => format!(
                "notrack: {} from the client and server networks untracked in raw prerouting",
                spec.l4.name()
            ),
            Chain::Input => format!(
                "notrack: {} from the client network untracked in raw prerouting \
                 (replies leave via output, still tracked)",
                spec.l4.name()
            ),
        };
        Ok(())
    }

    /// A stateful accept of new and established flows (switches connection tracking on).
    fn conntrack(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, .. } = *self;
        // A stateful accept: the netns's connection tracking is switched on by it
        // (seed 001's "connection tracking enabled" row).
        rs.rules.push(self.accept_new());
        rs.description = format!(
            "conntrack: accept new and established {} from the client network on {} (tracks every flow)",
            spec.l4.name(),
            spec.chain
        );
        Ok(())
    }

    /// Known flows first, `count` fillers every new flow walks, then new flows accepted.
    fn stateful(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, hook, .. } = *self;
        // Known flows first (their packets skip the rest), then `count` filler
        // rules every new flow walks, then new flows from the client network.
        rs.rules.push(rule(
            hook,
            Match {
                ct_established: true,
                ..Match::default()
            },
            Action::Accept,
            // One-way new flows never reach it; a flood's later packets do.
            Role::Guard,
        ));
        rs.rules.extend(fillers(hook, spec)?);
        rs.rules.push(self.accept_new());
        rs.description = format!(
            "stateful: accept established/related, {} non-matching rules, then accept new {} \
             flows from the client network on {}",
            spec.count,
            spec.l4.name(),
            spec.chain
        );
        Ok(())
    }

    /// The test traffic dropped (raw prerouting or the chain) after `count` fillers.
    fn dropping(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, hook, .. } = *self;
        let from_clients = &self.from_clients;
        let (h, where_) = if spec.model == Model::RawDrop {
            (Hook::RawPrerouting, "raw prerouting".to_string())
        } else {
            (hook, spec.chain.to_string())
        };
        // Seed 001's "dropping after 5 rules": `count` non-matching fillers first.
        check_count(spec.count)?;
        rs.rules = fillers(h, spec)?;
        rs.rules
            .push(rule(h, from_clients.clone(), Action::Drop, Role::Match));
        let after = if spec.count > 0 {
            format!(" after {} non-matching rules", spec.count)
        } else {
            String::new()
        };
        rs.description = format!(
            "{}: drop {} from the client network in {where_}{after}",
            spec.model,
            spec.l4.name()
        );
        Ok(())
    }

    /// `count` filler rules in raw prerouting, none matching.
    fn raw_filler(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, .. } = *self;
        check_count(spec.count)?;
        rs.rules = fillers(Hook::RawPrerouting, spec)?;
        rs.description = format!(
            "raw-filler: {} filler rules in raw prerouting, no matching rule",
            spec.count
        );
        Ok(())
    }

    /// `count` payload string rules (Boyer-Moore or KMP), the last matching or none.
    fn string_match(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, hook, l4, .. } = *self;
        check_count(spec.count)?;
        let algo = if matches!(spec.model, Model::StringBm | Model::StringBmDrop) {
            StringAlgo::Bm
        } else {
            StringAlgo::Kmp
        };
        let last_matches = matches!(spec.model, Model::StringBmDrop | Model::StringKmpDrop);
        let n = spec.count.max(1);
        rs.rules = string_rules(hook, l4, algo, n, last_matches);
        rs.description = if last_matches {
            format!(
                "{}: {n} payload string rules on {}, the last matching every test packet \
                 ({PAYLOAD_MAGIC}), drop",
                spec.model, spec.chain
            )
        } else {
            format!(
                "{}: {n} payload string rules that never match on {}",
                spec.model, spec.chain
            )
        };
        Ok(())
    }

    /// Accept up to 1000 packets/s per source network, drop the rest.
    fn hashlimit(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen {
            spec, a, hook, l4, ..
        } = *self;
        let from_clients = &self.from_clients;
        let src_prefix_len = match spec.ip {
            Ip::V4 => 16,
            Ip::V6 => 48,
        };
        rs.rules.push(rule(
            hook,
            Match {
                src: Some(a.client_net),
                l4,
                hashlimit: Some(Hashlimit {
                    name: "fwbench-hl".into(),
                    rate_pps: 1000,
                    burst: 1000,
                    src_prefix_len,
                }),
                ..Match::default()
            },
            Action::Accept,
            Role::Match,
        ));
        rs.rules
            .push(rule(hook, from_clients.clone(), Action::Drop, Role::Match));
        rs.description = format!(
            "hashlimit: accept up to 1000 {} packets/s per source /{src_prefix_len} on {}, drop the rest",
            spec.l4.name(), spec.chain
        );
        Ok(())
    }

    /// Source NAT of the test traffic in nat postrouting.
    fn snat(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, a, .. } = *self;
        let to = match spec.nat_to {
            Some(to) => check_nat_to(to, a)?,
            None => gateway(spec, a.gateway_server, "server")?,
        };
        let what = format!(
            "source NAT in nat postrouting: {} from the client network to {to}",
            spec.l4.name()
        );
        self.clients_through(rs, Hook::NatPostrouting, Action::Snat(to), &what)
    }

    /// Masquerade of the test traffic in nat postrouting.
    fn masquerade(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let what = format!(
            "masquerade in nat postrouting: {} from the client network to the outgoing \
             interface's address",
            self.spec.l4.name()
        );
        self.clients_through(rs, Hook::NatPostrouting, Action::Masquerade, &what)
    }

    /// Destination NAT to the server in nat prerouting.
    fn dnat(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let Gen { spec, a, l4, .. } = *self;
        let at = gateway(spec, a.gateway_client, "client")?;
        let m = Match {
            dst: Some(Prefix::host(at)),
            l4,
            dport: spec.dport,
            ..Match::default()
        };
        let what = format!(
            "destination NAT in nat prerouting: {} to {at}{} forwarded to the server {}",
            spec.l4.name(),
            spec.dport.map(|p| format!(" port {p}")).unwrap_or_default(),
            a.server
        );
        let action = Action::Dnat(a.server, spec.dport);
        translating(rs, spec, Hook::NatPrerouting, action, m, &what)?;
        Ok(())
    }

    /// Flows of the test traffic offloaded to a flowtable on forward.
    fn flowtable(&self, rs: &mut RuleSet) -> Result<(), ModelError> {
        let what = format!(
            "{} flows from the client network added to flowtable ft on forward",
            self.spec.l4.name()
        );
        self.clients_through(rs, Hook::FilterForward, Action::Offload, &what)
    }

    /// The test traffic from the client network through `action` in `hook` (a NAT or
    /// the flowtable; see [`translating`]), `what` the rule set's description.
    fn clients_through(
        &self,
        rs: &mut RuleSet,
        hook: Hook,
        action: Action,
        what: &str,
    ) -> Result<(), ModelError> {
        translating(rs, self.spec, hook, action, self.from_clients.clone(), what)
    }
}

/// `n` payload string rules that drop; none matches the test traffic, or (`last_matches`)
/// the last one's string is the magic every fwbench payload starts with.
fn string_rules(
    hook: Hook,
    l4: Option<L4>,
    algo: StringAlgo,
    n: u32,
    last_matches: bool,
) -> Vec<Rule> {
    (0..n)
        .map(|k| {
            let matching = last_matches && k + 1 == n;
            let text = if matching {
                PAYLOAD_MAGIC.to_string()
            } else {
                format!("fwbench-nomatch-{k}")
            };
            Rule {
                hook,
                m: Match {
                    l4,
                    string: Some((algo, text)),
                    ..Match::default()
                },
                action: Action::Drop,
                role: if matching { Role::Match } else { Role::Filler },
            }
        })
        .collect()
}

/// Puts the rule that matches the test traffic among the fillers at `position`
/// (`Position::None`: not at all).
fn place(rules: &mut Vec<Rule>, position: Position, hook: Hook, m: Match, action: Action) {
    let at = match position {
        Position::First => Some(0),
        Position::Middle => Some(rules.len() / 2),
        Position::Last => Some(rules.len()),
        Position::None => None,
    };
    if let Some(at) = at {
        let role = Role::Match;
        rules.insert(
            at,
            Rule {
                hook,
                m,
                action,
                role,
            },
        );
    }
}

/// A chosen source NAT address: inside the client network (the server routes it back
/// through the gateway, which translates the replies back), not a client's, not the
/// gateway's or the client host's own (the first three addresses of the network).
fn check_nat_to(to: IpAddr, a: &Addressing) -> Result<IpAddr, ModelError> {
    let bits = |x: IpAddr| -> u128 {
        match x {
            IpAddr::V4(v) => u128::from(u32::from(v)),
            IpAddr::V6(v) => u128::from(v),
        }
    };
    let net = a.client_net;
    let width: u32 = if net.addr.is_ipv4() { 32 } else { 128 };
    let host_bits = width - u32::from(net.len);
    let inside = to.is_ipv4() == net.addr.is_ipv4()
        && bits(to).checked_shr(host_bits).unwrap_or(0)
            == bits(net.addr).checked_shr(host_bits).unwrap_or(0);
    // The network's first three addresses: itself, the gateway's, the client host's.
    let taken = a.clients.contains(&to)
        || Some(to) == a.gateway_client
        || bits(to).wrapping_sub(bits(net.addr)) < 3;
    if !inside || taken {
        return Err(ModelError::Invalid(format!(
            "nat_to {to}: give an address of the client network {net} that is not a client's \
             nor the gateway's (the server routes it back through the gateway), e.g. {}",
            match net.addr {
                IpAddr::V4(_) => "198.18.0.100",
                IpAddr::V6(_) => "2001:2:0:1::100",
            }
        )));
    }
    Ok(to)
}

/// The gateway's address on one side, which the NAT models need.
fn gateway(spec: &ModelSpec, addr: Option<IpAddr>, side: &str) -> Result<IpAddr, ModelError> {
    addr.ok_or_else(|| {
        ModelError::Invalid(format!(
            "model {} needs the gateway's {side}-side address",
            spec.model
        ))
    })
}

/// The NAT and flowtable models: `spec.count` fillers of the same verdict on `hook`
/// that never match the test traffic (documentation source addresses; a NAT chain
/// walks them once per new flow, the flowtable's forward chain for every packet not
/// yet offloaded), and the rule `m` → `action` at `spec.position`. Topology forward
/// only: the gateway must route between client and server.
fn translating(
    rs: &mut RuleSet,
    spec: &ModelSpec,
    hook: Hook,
    action: Action,
    m: Match,
    what: &str,
) -> Result<(), ModelError> {
    check_count(spec.count)?;
    if spec.chain != Chain::Forward {
        return Err(ModelError::Invalid(format!(
            "model {} needs topology forward (a gateway that routes between the client and \
             the server), not {}",
            spec.model, spec.chain
        )));
    }
    rs.rules = fillers(hook, spec)?;
    let filler_action = match action {
        // A filler of the flowtable's chain drops (offloading is the matching rule's).
        Action::Offload => Action::Drop,
        a => a,
    };
    for r in &mut rs.rules {
        r.action = filler_action;
    }
    place(&mut rs.rules, spec.position, hook, m, action);
    rs.description = format!(
        "{}: {what}; {} filler rules, {}",
        spec.model,
        spec.count,
        match spec.position {
            Position::None => "no matching rule".to_string(),
            p => format!("match {p}"),
        }
    );
    Ok(())
}

/// `spec.count` filler rules on `hook`: filler k drops (filler_addr(k), filler_port(k)).
fn fillers(hook: Hook, spec: &ModelSpec) -> Result<Vec<Rule>, ModelError> {
    check_fillers(spec.count)?;
    Ok((0..spec.count)
        .map(|k| Rule {
            hook,
            m: Match {
                src: Some(Prefix::host(filler_addr(spec.ip, k))),
                l4: Some(spec.l4),
                dport: Some(filler_port(k)),
                ..Match::default()
            },
            action: Action::Drop,
            role: Role::Filler,
        })
        .collect())
}

/// Filler network `k` (0-based): one of the three IPv4 documentation /24s in turn
/// (192.0.2.0, 198.51.100.0, 203.0.113.0), or 2001:db8:k::/48 — never the testbed's.
pub fn filler_net(ip: Ip, k: u32) -> Prefix {
    match ip {
        Ip::V4 => Prefix {
            addr: IpAddr::V4(match k % 3 {
                0 => Ipv4Addr::new(192, 0, 2, 0),
                1 => Ipv4Addr::new(198, 51, 100, 0),
                _ => Ipv4Addr::new(203, 0, 113, 0),
            }),
            len: 24,
        },
        Ip::V6 => Prefix {
            addr: IpAddr::V6(Ipv6Addr::new(
                0x2001,
                0xdb8,
                (k % 65_536) as u16,
                0,
                0,
                0,
                0,
                0,
            )),
            len: 48,
        },
    }
}

/// `spec.count` rules on `hook`: rule k drops everything from [`filler_net`]`(k)`.
fn net_fillers(hook: Hook, spec: &ModelSpec) -> Vec<Rule> {
    (0..spec.count)
        .map(|k| Rule {
            hook,
            m: Match {
                src: Some(filler_net(spec.ip, k)),
                ..Match::default()
            },
            action: Action::Drop,
            role: Role::Filler,
        })
        .collect()
}

/// Every testbed address must be of the spec's IP version.
fn check_addressing(spec: &ModelSpec, a: &Addressing) -> Result<(), ModelError> {
    let want_v4 = spec.ip == Ip::V4;
    let all = a
        .clients
        .iter()
        .copied()
        .chain([a.client_net.addr, a.server, a.server_net.addr]);
    for addr in all {
        if addr.is_ipv4() != want_v4 {
            return Err(ModelError::Invalid(format!(
                "testbed address {addr} is not {}",
                if want_v4 { "IPv4" } else { "IPv6" }
            )));
        }
    }
    Ok(())
}

/// A testbed's addressing for unit tests: `n` clients from 198.18.1.1 or
/// 2001:2:0:1::c:1 up, the server 198.19.0.2 or 2001:2:0:2::2.
#[cfg(test)]
pub(crate) fn test_addressing(ip: Ip, n: u32) -> Addressing {
    let p = |s: &str, len| Prefix {
        addr: s.parse().unwrap(),
        len,
    };
    let (client_net, server, server_net) = match ip {
        Ip::V4 => (p("198.18.0.0", 16), "198.19.0.2", p("198.19.0.0", 16)),
        Ip::V6 => (
            p("2001:2:0:1::", 64),
            "2001:2:0:2::2",
            p("2001:2:0:2::", 64),
        ),
    };
    let client = |i: u32| match ip {
        Ip::V4 => format!("198.18.1.{i}"),
        Ip::V6 => format!("2001:2:0:1::c:{i:x}"),
    };
    let (gateway_client, gateway_server) = match ip {
        Ip::V4 => ("198.18.0.1", "198.19.0.1"),
        Ip::V6 => ("2001:2:0:1::1", "2001:2:0:2::1"),
    };
    Addressing {
        clients: (1..=n).map(|i| client(i).parse().unwrap()).collect(),
        client_net,
        server: server.parse().unwrap(),
        server_net,
        gateway_client: gateway_client.parse().ok(),
        gateway_server: gateway_server.parse().ok(),
    }
}

/// A model's spec for unit tests: on the forward chain, UDP, both ways.
#[cfg(test)]
pub(crate) fn test_spec(
    model: Model,
    count: u32,
    position: Position,
    ip: Ip,
    dport: Option<u16>,
) -> ModelSpec {
    ModelSpec {
        model,
        count,
        position,
        chain: Chain::Forward,
        l4: L4::Udp,
        ip,
        one_way: false,
        dport,
        nat_to: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(model: Model, count: u32) -> ModelSpec {
        test_spec(model, count, Position::Last, Ip::V4, Some(TEST_DPORT))
    }

    #[test]
    fn filler_addresses_walk_the_documentation_ranges() {
        let a = |ip, k| filler_addr(ip, k).to_string();
        assert_eq!(a(Ip::V4, 0), "192.0.2.0");
        assert_eq!(a(Ip::V4, 255), "192.0.2.255");
        assert_eq!(a(Ip::V4, 256), "198.51.100.0");
        assert_eq!(a(Ip::V4, 511), "198.51.100.255");
        assert_eq!(a(Ip::V4, 512), "203.0.113.0");
        assert_eq!(a(Ip::V4, 767), "203.0.113.255");
        assert_eq!(a(Ip::V4, 768), "192.0.2.0");
        assert_eq!(a(Ip::V6, 0), "2001:db8::");
        assert_eq!(a(Ip::V6, 767), "2001:db8::2ff");
        assert_eq!(a(Ip::V6, 769), "2001:db8::1");
        assert_eq!(filler_port(0), 1);
        assert_eq!(filler_port(767), 1);
        assert_eq!(filler_port(768), 2);
        assert_eq!(filler_port(MAX_FILLERS - 1), 65535);
        assert!(check_fillers(MAX_FILLERS).is_ok());
        let e = check_fillers(MAX_FILLERS + 1).unwrap_err().to_string();
        assert!(e.contains("50330881 filler rules"), "{e}");
    }

    #[test]
    fn filler_pairs_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for k in 0..(3 * FILLER_ADDRS + 5) {
            assert!(
                seen.insert((filler_addr(Ip::V4, k), filler_port(k))),
                "filler {k}"
            );
        }
    }

    #[test]
    fn absurd_count_is_refused_with_a_memory_estimate() {
        let e = generate(
            &spec(Model::Linear, 10_000_000),
            &test_addressing(Ip::V4, 1),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "10000000 rules would need about 2.8 GiB of rule memory; the limit is 1000000"
        );
        let e = generate(
            &spec(Model::StringBm, 2_000_000),
            &test_addressing(Ip::V4, 1),
        )
        .unwrap_err();
        assert!(e.to_string().contains("about 572 MiB"), "{e}");
        assert!(generate(
            &spec(Model::RawFiller, MAX_RULES),
            &test_addressing(Ip::V4, 1)
        )
        .is_ok());
        // Models that ignore the count do not refuse it.
        assert!(generate(
            &spec(Model::Seed000F2, u32::MAX),
            &test_addressing(Ip::V4, 1)
        )
        .is_ok());
    }

    #[test]
    fn names_parse_and_print() {
        for name in MODELS {
            let m: Model = name.parse().unwrap();
            assert_eq!(m.to_string(), *name);
        }
        assert_eq!(Model::ALL.len(), MODELS.len());
        assert_eq!(
            "lineer".parse::<Model>().unwrap_err().to_string(),
            format!(
                "unknown model 'lineer' (expected one of: {})",
                MODELS.join(", ")
            )
        );
        for name in POSITIONS {
            assert_eq!(name.parse::<Position>().unwrap().to_string(), *name);
        }
        assert_eq!(
            "top".parse::<Position>().unwrap_err().to_string(),
            "unknown position 'top' (expected one of: first, middle, last, none)"
        );
        for name in CHAINS {
            assert_eq!(name.parse::<Chain>().unwrap().to_string(), *name);
        }
        assert_eq!(
            "output".parse::<Chain>().unwrap_err().to_string(),
            "unknown chain 'output' (expected one of: forward, input)"
        );
        assert_eq!(
            "pf".parse::<Engine>().unwrap_err().to_string(),
            format!(
                "unknown engine 'pf' (expected one of: {})",
                crate::ENGINES.join(", ")
            )
        );
    }

    /// A test packet: (source, destination, l4).
    type Packet = (IpAddr, IpAddr, L4);

    fn contains(p: Prefix, a: IpAddr) -> bool {
        let bits = |a: IpAddr| -> (u128, u32) {
            match a {
                IpAddr::V4(v) => (u128::from(u32::from(v)), 32),
                IpAddr::V6(v) => (u128::from(v), 128),
            }
        };
        let ((pa, w), (aa, w2)) = (bits(p.addr), bits(a));
        let shift = w - u32::from(p.len);
        w == w2 && pa.checked_shr(shift).unwrap_or(0) == aa.checked_shr(shift).unwrap_or(0)
    }

    /// Whether a rule matches a test packet: test traffic uses ports the rules never
    /// name, its payload never holds a `fwbench-nomatch-*` string, and a rate limit
    /// lets some of it through.
    fn hits(m: &Match, (src, dst, l4): Packet) -> bool {
        m.src.is_none_or(|p| contains(p, src))
            && m.dst.is_none_or(|p| contains(p, dst))
            && m.l4.is_none_or(|x| x == l4)
            && m.dport.is_none_or(|p| p == TEST_DPORT)
            && m.set.is_none()
            && m.string.as_ref().is_none_or(|(_, s)| s == PAYLOAD_MAGIC)
    }

    /// The test traffic's destination port; its payload starts with [`PAYLOAD_MAGIC`].
    const TEST_DPORT: u16 = 9000;

    #[test]
    fn fillers_never_match_and_match_rules_do() {
        for model in Model::ALL.into_iter().filter(|m| *m != Model::Import) {
            for ip in [Ip::V4, Ip::V6] {
                for chain in [Chain::Forward, Chain::Input] {
                    let s = ModelSpec {
                        chain,
                        ip,
                        ..spec(model, 2000)
                    };
                    let a = test_addressing(ip, 3);
                    if chain == Chain::Input && (model.is_nat() || model == Model::Flowtable) {
                        let e = generate(&s, &a).unwrap_err().to_string();
                        assert!(e.contains("needs topology forward"), "{e}");
                        continue;
                    }
                    let rs = generate(&s, &a).unwrap();
                    assert!(!rs.description.is_empty() && !rs.description.contains('\n'));
                    // The client aims at the gateway where destination NAT forwards it.
                    let to = match model.aims_at_gateway() {
                        true => a.gateway_client.unwrap(),
                        false => a.server,
                    };
                    let mut traffic: Vec<Packet> =
                        a.clients.iter().map(|c| (*c, to, L4::Udp)).collect();
                    if chain == Chain::Forward {
                        traffic.extend(a.clients.iter().map(|c| (a.server, *c, L4::Udp)));
                    }
                    for r in &rs.rules {
                        let n = traffic.iter().filter(|p| hits(&r.m, **p)).count();
                        match r.role {
                            Role::Filler => assert_eq!(n, 0, "{model} {ip:?} {chain}: {r:?}"),
                            Role::Match => assert!(n > 0, "{model} {ip:?} {chain}: {r:?}"),
                            _ => {}
                        }
                        if r.role == Role::Filler {
                            if let Some(src) = r.m.src {
                                assert!(!contains(a.client_net, src.addr));
                                assert!(!contains(a.server_net, src.addr));
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn linear_drop_holds_the_clients_own_pair_among_n_and_needs_the_port() {
        let a = test_addressing(Ip::V4, 2);
        let rs = generate(&spec(Model::LinearDrop, 5), &a).unwrap();
        assert_eq!(
            rs.rules.len(),
            5,
            "N rules in all, the client's one of them"
        );
        let last = rs.rules.last().unwrap();
        assert_eq!(last.role, Role::Match);
        assert_eq!(last.action, Action::Drop);
        assert_eq!(last.m.src, Some(Prefix::host(a.clients[0])));
        assert_eq!(last.m.dport, Some(TEST_DPORT));
        assert!(rs.rules.iter().all(|r| r.action == Action::Drop));
        assert_eq!(
            generate(&spec(Model::LinearDrop, 1), &a)
                .unwrap()
                .rules
                .len(),
            1
        );
        let e = generate(
            &ModelSpec {
                dport: None,
                ..spec(Model::LinearDrop, 5)
            },
            &a,
        )
        .unwrap_err();
        assert!(e.to_string().contains("destination port"), "{e}");
    }

    #[test]
    fn net_drop_rules_drop_other_networks() {
        let a = test_addressing(Ip::V4, 1);
        let s = ModelSpec {
            position: Position::None,
            ..spec(Model::NetDrop, 4)
        };
        let rs = generate(&s, &a).unwrap();
        let nets: Vec<String> = rs
            .rules
            .iter()
            .map(|r| r.m.src.unwrap().to_string())
            .collect();
        assert_eq!(
            nets,
            [
                "192.0.2.0/24",
                "198.51.100.0/24",
                "203.0.113.0/24",
                "192.0.2.0/24"
            ]
        );
        assert!(rs
            .rules
            .iter()
            .all(|r| r.action == Action::Drop && r.m.l4.is_none() && r.m.dport.is_none()));
        assert_eq!(filler_net(Ip::V6, 7).to_string(), "2001:db8:7::/48");
    }

    #[test]
    fn string_drop_matches_the_payload_magic_last() {
        let a = test_addressing(Ip::V4, 1);
        for model in [Model::StringBmDrop, Model::StringKmpDrop] {
            let rs = generate(&spec(model, 3), &a).unwrap();
            let strings: Vec<&str> = rs
                .rules
                .iter()
                .map(|r| r.m.string.as_ref().unwrap().1.as_str())
                .collect();
            assert_eq!(
                strings,
                ["fwbench-nomatch-0", "fwbench-nomatch-1", PAYLOAD_MAGIC]
            );
            assert_eq!(rs.rules[2].role, Role::Match);
            assert_eq!(rs.rules[2].action, Action::Drop);
        }
    }

    /// `Model::uses_rule_count` says which models' rule sets grow with `rules`: the
    /// report treats two configurations of the others that differ only in it as one
    /// gateway (pooled, never an A/B of a rule count).
    #[test]
    fn which_models_grow_with_the_rule_count() {
        let a = test_addressing(Ip::V4, 1);
        for model in Model::ALL {
            let at = |n| {
                generate(&spec(model, n), &a).map(|rs| {
                    rs.rules
                        .iter()
                        .map(|r| format!("{:?}", (r.hook, &r.m, r.action, r.role)))
                        .collect::<Vec<_>>()
                })
            };
            match (at(2), at(5)) {
                (Ok(two), Ok(five)) => assert_eq!(
                    two != five,
                    model.uses_rule_count(),
                    "{model}: {two:?} vs {five:?}"
                ),
                // Import needs a file: it installs the user's rules, never a count.
                (Err(_), _) | (_, Err(_)) => {
                    assert_eq!(model, Model::Import, "{model}");
                    assert!(!model.uses_rule_count());
                }
            }
        }
    }

    /// What each model generates at every `position` against `Model::uses_position`:
    /// a model that installs the same rules wherever the matching rule is asked to sit
    /// is one gateway whatever the position (the report's A/B says so).
    #[test]
    fn which_models_place_the_matching_rule() {
        let a = test_addressing(Ip::V4, 1);
        for model in Model::ALL.into_iter().filter(|m| *m != Model::Import) {
            // Its rules and sets (a model whose set elements moved with the position
            // would use it too).
            let at = |position| {
                let s = test_spec(model, 5, position, Ip::V4, Some(TEST_DPORT));
                generate(&s, &a).map(|rs| {
                    let rules: Vec<String> = rs
                        .rules
                        .iter()
                        .map(|r| format!("{:?}", (r.hook, &r.m, r.action, r.role)))
                        .collect();
                    (rules, format!("{:?}", rs.sets))
                })
            };
            let all: Vec<_> = Position::ALL
                .into_iter()
                .filter_map(|p| at(p).ok())
                .collect();
            let varies = all.windows(2).any(|w| w[0] != w[1]);
            assert_eq!(all.len(), Position::ALL.len(), "{model}");
            assert_eq!(varies, model.uses_position(), "{model}: {all:?}");
        }
        assert!(!Model::Import.uses_position());
    }

    #[test]
    fn linear_positions() {
        let a = test_addressing(Ip::V4, 1);
        let roles = |position| -> Vec<Role> {
            let s = ModelSpec {
                position,
                ..spec(Model::Linear, 4)
            };
            generate(&s, &a)
                .unwrap()
                .rules
                .iter()
                .map(|r| r.role)
                .collect()
        };
        use Role::{Filler as F, Match as M};
        assert_eq!(roles(Position::First), [M, F, F, F, F]);
        assert_eq!(roles(Position::Middle), [F, F, M, F, F]);
        assert_eq!(roles(Position::Last), [F, F, F, F, M]);
        assert_eq!(roles(Position::None), [F, F, F, F]);
    }

    #[test]
    fn seed000_rules_per_client_and_chain() {
        let a = test_addressing(Ip::V6, 3);
        let rs = generate(
            &ModelSpec {
                ip: Ip::V6,
                ..spec(Model::Seed000F4, 0)
            },
            &a,
        )
        .unwrap();
        let on = |h| rs.rules.iter().filter(|r| r.hook == h).count();
        assert_eq!(
            (on(Hook::ManglePrerouting), on(Hook::FilterForward)),
            (6, 6)
        );
        assert_eq!(rs.policy(Hook::FilterForward), Policy::Drop);
        assert_eq!(rs.rules[0].action, Action::Mark(1));
        assert_eq!(rs.rules[5].action, Action::Mark(3));
        let s = ModelSpec {
            ip: Ip::V6,
            chain: Chain::Input,
            ..spec(Model::Seed000F4, 0)
        };
        let rs = generate(&s, &a).unwrap();
        let on = |h| rs.rules.iter().filter(|r| r.hook == h).count();
        assert_eq!((on(Hook::ManglePrerouting), on(Hook::FilterInput)), (3, 4));
        let guard = rs
            .rules
            .iter()
            .find(|r| r.hook == Hook::FilterInput)
            .unwrap();
        assert_eq!((guard.role, guard.m.l4), (Role::Guard, Some(L4::Icmpv6)));
        assert!(rs.description.contains("output"), "{}", rs.description);
    }

    #[test]
    fn snat_to_a_chosen_address_of_the_client_network_only() {
        let a = test_addressing(Ip::V4, 2);
        let to = |addr: &str, model| {
            let s = ModelSpec {
                nat_to: Some(addr.parse().unwrap()),
                ..spec(model, 1)
            };
            generate(&s, &a).map(|rs| rs.rules.last().unwrap().action)
        };
        assert_eq!(
            to("198.18.0.100", Model::Snat).unwrap(),
            Action::Snat("198.18.0.100".parse().unwrap())
        );
        for bad in [
            "198.19.0.9",
            "198.18.1.1",
            "198.18.0.1",
            "198.18.0.2",
            "2001:2:0:1::100",
        ] {
            let e = to(bad, Model::Snat).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "nat_to {bad}: give an address of the client network"
                )),
                "{e}"
            );
        }
        assert_eq!(
            to("198.18.0.100", Model::Dnat).unwrap_err().to_string(),
            "nat_to 198.18.0.100 applies to model snat only, not dnat"
        );
    }

    #[test]
    fn bad_input_is_refused() {
        let a = test_addressing(Ip::V4, 1);
        let e = generate(&spec(Model::Import, 0), &a).unwrap_err();
        assert_eq!(e.to_string(), "model import needs --import FILE");
        let v6 = ModelSpec {
            ip: Ip::V6,
            ..spec(Model::Linear, 1)
        };
        assert!(generate(&v6, &a)
            .unwrap_err()
            .to_string()
            .contains("not IPv6"));
        let icmp = ModelSpec {
            l4: L4::Icmpv6,
            ..spec(Model::Linear, 1)
        };
        assert!(generate(&icmp, &a).is_err());
        assert!(generate(&spec(Model::Seed000F2, 0), &test_addressing(Ip::V4, 0)).is_err());
        let rs = generate(&spec(Model::StringKmp, 0), &a).unwrap();
        assert_eq!(rs.rules.len(), 1, "string models have at least one rule");
    }
}
