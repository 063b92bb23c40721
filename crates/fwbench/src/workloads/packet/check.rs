//! The packet workloads' cross-field checks: values that are each valid but cannot
//! run together in one trial (bad input, exit 2, before anything runs).
//!
//! Must not: read a testbed or run anything.

use super::*;
use crate::params::Conflict;

/// Cross-field checks (bad input: exit 2 before anything runs); `kind` adds its own
/// where each applies ([`KindRules`]).
pub fn check(p: &TrialParams, kind: &dyn KindRules) -> Result<(), Conflict> {
    let Some(k) = p.packet() else {
        return Ok(());
    };
    let payload = k.payload(p.family).map_err(|e| Conflict(e.to_string()))?;
    sender(p, k, payload, kind)?;
    threads_and_flows(p, k)?;
    destinations(p, k, kind)?;
    conntrack(p, k)?;
    sink(p, k)?;
    probes(k)?;
    size(k, kind)?;
    search_and_rate(p, k)
}

/// Refused with why.
fn refuse(why: impl Into<String>) -> Result<(), Conflict> {
    Err(Conflict(why.into()))
}

/// A count within 1..=`max`, else refused as "`what` must be 1..`max`, not `n`".
fn one_to(what: &str, n: u32, max: u32) -> Result<(), Conflict> {
    if n == 0 || n > max {
        return refuse(format!("{what} must be 1..{max}, not {n}"));
    }
    Ok(())
}

/// What the sender can write: fragments only from sockets, the kind's payload (ping's
/// sequence number), a paced flow's rate, new flows from sockets.
fn sender(
    p: &TrialParams,
    k: &PacketParams,
    payload: u32,
    kind: &dyn KindRules,
) -> Result<(), Conflict> {
    match k.sender {
        SenderPath::Raw | SenderPath::Xdp if k.fragment => {
            return refuse(format!(
                "--fragment needs the UDP sender (the {} sender writes single frames)",
                k.sender.name()
            ));
        }
        SenderPath::Udp | SenderPath::Raw | SenderPath::Xdp => {}
    }
    kind.payload(payload)?;
    // With `--load` the rate is set when the trial runs (`search::load`).
    let load = p.events.as_ref().is_some_and(|e| e.load.is_some());
    if p.workload() == Workload::Flow && k.rate == Rate::Max && !load {
        return refuse("a paced flow needs a rate (--rate 15M, --rate 100kpps)");
    }
    if new_flows(p) && k.sender != SenderPath::Udp {
        return refuse(format!(
            "new flows are sent from UDP sockets (one per flow): --sender {} cannot send them",
            k.sender.name()
        ));
    }
    Ok(())
}

/// Threads within the host's CPUs, flows within the sender's table, a batch within
/// sendmmsg's, at least one flow per thread.
fn threads_and_flows(p: &TrialParams, k: &PacketParams) -> Result<(), Conflict> {
    let max = max_threads();
    for (what, n) in [("threads", k.threads), ("sink threads", k.sink_threads)] {
        if n == 0 || n > max {
            return refuse(format!(
                "{what} must be 1..{max} on this host ({} CPUs × 4), not {n}",
                max / 4
            ));
        }
    }
    let max_flows = if new_flows(p) {
        traffic::udp::MAX_NEW_FLOWS
    } else {
        traffic::udp::MAX_FLOWS
    };
    one_to("flows", k.flows, max_flows)?;
    if k.threads > k.flows {
        return refuse(format!(
            "{} sender threads for {} flows: give at least as many flows as threads",
            k.threads, k.flows
        ));
    }
    one_to("batch", k.batch, traffic::udp::MAX_BATCH)
}

/// `--dsts`: within the address plan, no more than the flows, one destination for a
/// kind that has one (ping), `--dst`, `--aim` and the proxy.
fn destinations(p: &TrialParams, k: &PacketParams, kind: &dyn KindRules) -> Result<(), Conflict> {
    if k.dsts == 1 {
        return Ok(());
    }
    let max = crate::testbed::addr::MAX_DSTS;
    one_to("--dsts", k.dsts, max)?;
    if k.dsts > k.flows {
        return refuse(format!(
            "--dsts {} for {} flows: give at least as many flows as destinations",
            k.dsts, k.flows
        ));
    }
    if kind.one_destination() || k.dst.is_some() || k.aim.is_some() {
        return refuse(format!(
            "--dsts {} spreads flows over destinations: not with ping, --dst or --aim (one destination)",
            k.dsts
        ));
    }
    if p.topology == Topology::Proxy {
        return refuse("--dsts: topology proxy relays to one server address");
    }
    Ok(())
}

/// A conntrack fill within fwbench's bound and, with the flows, within `--ct-max`; a
/// hash table the host can allocate.
fn conntrack(p: &TrialParams, k: &PacketParams) -> Result<(), Conflict> {
    let most = crate::limits::MAX_CT_BUCKETS;
    if let Some(b) = k.ct_buckets.filter(|b| *b > most) {
        return refuse(format!(
            "--ct-buckets {b} is more than {most} (the host's table is allocated whole: 8 \
             bytes a bucket)"
        ));
    }
    if let Some(n) = k.ct_fill {
        let most = crate::host::conntrack::MAX_FILL;
        if n > most {
            return refuse(format!(
                "--ct-fill {n} is above the {most} entries fwbench puts in a table"
            ));
        }
        if let Some(max) = k
            .ct_max
            .filter(|m| u64::from(n) + u64::from(k.flows) > u64::from(*m))
        {
            return refuse(format!(
                "--ct-fill {n} and {} flows do not fit --ct-max {max}",
                k.flows
            ));
        }
    }
    if new_flows(p) && k.sink == SinkKind::Gateway {
        return refuse("new flows are counted at the server: use --sink socket");
    }
    Ok(())
}

/// Where packets are counted: the gateway only where there is one and nothing needs
/// datagrams or a receiver; AF_XDP only before the rules on a forward path.
fn sink(p: &TrialParams, k: &PacketParams) -> Result<(), Conflict> {
    if k.sink == SinkKind::Gateway && p.topology == Topology::Direct {
        return refuse("--sink gateway needs a gateway (topology forward or input)");
    }
    if k.sink == SinkKind::Xdp && matches!(p.topology, Topology::Input) {
        return refuse(
            "--sink xdp takes packets before netfilter: on topology input it would bypass the rules under test",
        );
    }
    if k.sink == SinkKind::Xdp && k.fragment {
        return refuse("--sink xdp counts single frames: it cannot be combined with --fragment");
    }
    if k.sink == SinkKind::Gateway && k.fragment {
        return refuse(
            "--sink gateway counts frames, not datagrams: it cannot be combined with --fragment",
        );
    }
    if k.sink == SinkKind::Gateway && p.search_params().is_some() {
        return refuse(format!(
            "{} decides by loss, which needs a receiver: use --sink socket",
            p.name()
        ));
    }
    Ok(())
}

/// Ping's count within one trial's bounds.
fn probes(k: &PacketParams) -> Result<(), Conflict> {
    let Some(n) = k.count else {
        return Ok(());
    };
    use crate::limits::{MAX_DURATION_S, MAX_PING_COUNT};
    if n > u64::from(MAX_PING_COUNT) {
        return refuse(format!(
            "--count {n} is above the {MAX_PING_COUNT} probes one trial may send"
        ));
    }
    let span_s = n as f64 * k.interval_ns as f64 / 1e9;
    if span_s > MAX_DURATION_S {
        return refuse(format!(
            "--count {n} probes at --interval {} s take {:.0} days, longer than a day",
            k.interval_ns as f64 / 1e9,
            span_s / 86_400.0
        ));
    }
    Ok(())
}

/// Frames of at least Ethernet's minimum; a size mix of single frames, where the kind
/// sends one (not ping).
fn size(k: &PacketParams, kind: &dyn KindRules) -> Result<(), Conflict> {
    match k.size {
        PacketSize::Frame(f) if f < MIN_ETHERNET_FRAME => refuse(format!(
            "frame size {f} is below the {MIN_ETHERNET_FRAME}-byte Ethernet minimum"
        )),
        PacketSize::Mix(m) => {
            if m.smallest() < MIN_ETHERNET_FRAME {
                return refuse(format!(
                    "size mix {m}: frame size {} is below the {MIN_ETHERNET_FRAME}-byte Ethernet minimum",
                    m.smallest()
                ));
            }
            if k.fragment {
                return refuse(format!(
                    "size mix {m}: its sizes are single Ethernet frames; --fragment does not apply"
                ));
            }
            kind.size_mix(m)
        }
        PacketSize::Payload(_) | PacketSize::Frame(_) => Ok(()),
    }
}

/// A search's precision and ceiling, and a rate of at least a packet a second.
fn search_and_rate(p: &TrialParams, k: &PacketParams) -> Result<(), Conflict> {
    if let Some(sp) = p.search_params() {
        if sp.precision < 0.001 {
            return refuse(format!(
                "precision {} % is too fine: give at least 0.1 %",
                sp.precision * 100.0
            ));
        }
        if let Some(max) = sp
            .max_rate
            .and_then(|r| k.mean_rate_bytes(p.family).ok().and_then(|b| r.pps_mean(b)))
        {
            if !(1.0..=proto::MAX_PPS).contains(&max) {
                return refuse(format!(
                    "max rate {} is {max:.3} packets/s: give 1 .. {:.0} packets/s",
                    sp.max_rate.unwrap_or(Rate::Max),
                    proto::MAX_PPS
                ));
            }
        }
    }
    let bytes = k
        .mean_rate_bytes(p.family)
        .map_err(|e| Conflict(e.to_string()))?;
    if let Some(pps) = k.rate.pps_mean(bytes) {
        if pps < 1.0 {
            return refuse(format!("rate {} is below one packet per second", k.rate));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
