//! The packet family's part of a trial's end ([`crate::workloads::Traffic::finish`]):
//! a flood's or flow's `limited_by` verdict judged again with the roles' CPU figures
//! from the trial's samples (issue 28) — each host's sender and sink threads as the
//! trial shared them out, the gateway's steered CPUs, and whether the sender ran on
//! the gateway's kernel.
//!
//! Kept beside `packet.rs` (the family's roles and figures) so the trial driver names
//! no family; the trait's default `finish` calls [`judge_limit`], which leaves figures
//! without a verdict as they are.
//!
//! Must not: start agents or read counters (the samples are handed in).

use crate::limited_by::{cpu_list, limited_by, role_cpus, shared_cpu, SenderPlace};
use crate::testbed::Host;
use crate::workloads::packet::LIMIT_TOLERANCE;
use crate::workloads::{Figures, Finish};

/// Judge the packet figures' `limited_by` again with the roles' CPU figures (a CPU the
/// sender shared with the gateway's softirq makes the verdict `shared-cpu`). Nothing
/// for a trial without packet parameters or figures without counters.
pub fn judge_limit(figures: &mut Figures, f: &Finish) {
    let Some(k) = f.p.packet() else {
        return;
    };
    // Rules in the ingress driver (native XDP) run where its NAPI polls — on a veth the
    // sending CPU, or wherever its poll stayed — not on the CPUs the gateway's packets
    // are steered to: for them the gateway is not steered.
    let in_driver = firewall::engine::backend(f.p.engine).in_driver();
    let steered =
        (f.p.gateway_cpu_list(crate::host::probe::cpus(), f.pin.gateway.as_deref()))
            .filter(|_| !in_driver);
    // Each host's threads, as the trial shared them out.
    let (clients, servers) = (f.tb.hosts_of(Host::Client), f.tb.hosts_of(Host::Server));
    let sender: Vec<u32> =
        crate::testbed::spread::client_shares(k.flows, f.p.clients, k.threads, None, clients)
            .iter()
            .map(|c| c.threads)
            .collect();
    let sink: Vec<u32> = (0..servers)
        .map(|s| crate::testbed::spread::even(k.sink_threads, servers, s).max(1))
        .collect();
    // One kernel for sender and gateway: both on this machine.
    let local = |h: Host| f.tb.launcher(h).is_some_and(|l| l.remote.is_none());
    let pinned = f.pin.client.as_deref().and_then(cpu_list);
    let place = if local(Host::Client) && local(Host::Gateway) {
        SenderPlace::WithGateway {
            pinned: pinned.as_deref(),
        }
    } else {
        SenderPlace::Elsewhere
    };
    judge_with_cpus(
        figures,
        f.samples,
        &sender,
        &sink,
        steered.as_deref(),
        place,
        in_driver,
    );
}

/// The verdict of `figures` (flood and flow) again from the samples: `sender_threads`
/// and `sink_threads` per host, the gateway's CPUs (`None`: not steered), where the
/// sender ran and whether the gateway's rules run in its ingress driver.
fn judge_with_cpus(
    figures: &mut Figures,
    samples: &[crate::testbed::Sampled],
    sender_threads: &[u32],
    sink_threads: &[u32],
    gateway_cpus: Option<&str>,
    sender: SenderPlace,
    in_driver: bool,
) {
    let samples: Vec<(&str, u32, &proto::MetricSample)> = samples
        .iter()
        .map(|s| (s.role, s.host, &s.sample))
        .collect();
    let gateway: Option<Vec<usize>> = gateway_cpus.and_then(cpu_list);
    let cpus = role_cpus(
        &samples,
        sender_threads,
        sink_threads,
        crate::host::probe::cpus(),
        gateway.as_deref(),
    );
    let shared = shared_cpu(
        &samples,
        sender,
        crate::host::probe::cpus(),
        gateway.as_deref(),
    );
    let Figures::Packet(s) = figures else {
        return;
    };
    let Some(mut c) = s.limited_by.as_ref().and_then(|l| l.counters) else {
        return;
    };
    c.sender_cpu = cpus.sender;
    c.gateway_cpu = cpus.gateway;
    c.sink_cpu = cpus.sink;
    c.shared_cpu = shared;
    c.in_driver = in_driver;
    s.limited_by = Some(Box::new(limited_by(&c, LIMIT_TOLERANCE)));
}
