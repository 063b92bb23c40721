//! The gateway role (the device under test): sysctls, RPS steering, fwbench's rule
//! set and — proxy mode — a TCP relay, all held by one [`GatewayGuard`].
//!
//! Owns: what the gateway changes in its namespace and undoing it. The guard is built
//! step by step, so a setup that fails half-way undoes what it did; its drop undoes
//! everything exactly once, in reverse order, on every path (stop, teardown, failed
//! setup, controller gone); for a NAT model, the connection-tracking entries of the
//! client network's flows (fwbench's traffic only), forgotten before and after.
//! Must not: touch a table, set or sysctl it did not make or change (the one
//! exception is in [`super::netstate`]).

use super::netstate::{self, sysctl_path};
use super::{error, Progress, RoleRun};
use proto::{
    AgentError, CtReport, ErrorKind, GatewayResults, GatewaySpec, IfCounters, NetState,
    ProxyResults, ProxySpec, Residue, RoleResults,
};
use std::path::PathBuf;
use traffic::conn::Proxy;
use traffic::TrafficError;

/// sysctls recorded with every trial (read in the gateway's namespace).
const GATEWAY_SYSCTLS: &[&str] = &[
    "net.ipv4.ip_forward",
    "net.ipv6.conf.all.forwarding",
    "net.core.netdev_max_backlog",
    "net.netfilter.nf_conntrack_max",
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.neigh.default.gc_thresh3",
];

/// The gateway role while set up.
pub struct GatewayRole {
    /// Gateway events (dropped, hence undone, before the guard).
    events: Option<super::events::EventRunner>,
    guard: GatewayGuard,
    /// sysctl values in force (after setup).
    in_force: Vec<(String, String)>,
    /// Interface counters at Start.
    interfaces: Vec<IfCounters>,
    /// Conntrack: the settings in force (the report without counters), and the
    /// counters at Start (when the spec asked for conntrack).
    conntrack: Option<Box<CtReport>>,
}

impl GatewayRole {
    pub fn setup(spec: &GatewaySpec) -> Result<GatewayRole, AgentError> {
        // Each step is recorded in the guard as it succeeds; `?` drops the guard,
        // which undoes the steps done so far.
        let ct_sysctls = spec.conntrack.as_ref().map(ct_sysctls).unwrap_or_default();
        // Before every trial, with rules or without (an `engine = none` baseline must
        // not run on top of rules a crashed run left behind), and before the snapshot:
        // what a dead agent left is not this trial's to report as its own change.
        let removed_before = undo_dead_agents();
        let mut guard = GatewayGuard::begin(
            removed_before,
            spec.sysctls
                .iter()
                .chain(&ct_sysctls)
                .map(|(k, _)| k.clone()),
        );
        for (k, v) in spec.sysctls.iter().chain(&ct_sysctls) {
            guard.set_sysctl(k, v)?;
        }
        let conntrack = match &spec.conntrack {
            Some(ct) => Some(Box::new(guard.conntrack(ct)?)),
            None => None,
        };
        let in_force = netstate::read_sysctls(GATEWAY_SYSCTLS);
        // Always set: a pinned gateway's CPUs, else none (the testbed's default), so a
        // mask left by a killed agent on a named testbed never outlives the next trial.
        guard.steer(spec.steer_cpus.as_deref())?;
        if let Some(fw) = &spec.firewall {
            guard.install_rules(fw, super::events::room(&spec.events))?;
        }
        if let Some(p) = &spec.proxy {
            guard.start_proxy(p)?;
        }
        let installed = guard.rules.as_ref().map(|r| &*r.rendered);
        let events =
            super::events::EventRunner::setup(&spec.events, spec.firewall.as_deref(), installed)?;
        Ok(GatewayRole {
            events,
            guard,
            in_force,
            interfaces: vec![],
            conntrack,
        })
    }
}

impl super::SetUp for GatewaySpec {
    fn set_up(&self) -> super::SetUpResult {
        Ok(Box::new(GatewayRole::setup(self)?))
    }
}

impl RoleRun for GatewayRole {
    fn start(&mut self) {
        self.interfaces = crate::host::probe::interfaces();
        if let Some(ct) = &mut self.conntrack {
            ct.before = crate::host::conntrack::read_stats().unwrap_or_default();
        }
        if let Some(e) = &mut self.events {
            e.start();
        }
    }

    fn progress(&self) -> Progress {
        Progress::default()
    }

    fn stop(self: Box<Self>) -> Result<RoleResults, AgentError> {
        let interfaces =
            crate::host::probe::since(&crate::host::probe::interfaces(), &self.interfaces);
        let GatewayRole {
            mut events,
            guard,
            in_force,
            mut conntrack,
            ..
        } = *self;
        // Read before the rules go (their removal does not touch the table, but the
        // settings' restore may resize it).
        if let Some(ct) = &mut conntrack {
            ct.after = crate::host::conntrack::read_stats().unwrap_or_default();
        }
        // The events' changes out first: the verdicts read the rule set as installed.
        // A failed schedule fails the trial, once the rules and settings are undone.
        let updates = events.as_mut().map(|e| e.finish()).transpose();
        let changed_elements = events.as_ref().is_some_and(|e| e.changes_elements());
        let replaced = events.as_mut().and_then(|e| e.replaced_verdicts());
        let (mut firewall, proxy, residue) = guard.finish(changed_elements);
        // After replacements the undone rule set's counters start at 0: the verdict
        // check reads the last replacement's window instead (`agent::events`).
        if let (Some(report), Some(v)) = (firewall.as_mut(), replaced) {
            (report.verdicts, report.verdicts_error) = match v {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            };
        }
        let updates = updates?.unwrap_or_default();
        Ok(RoleResults::Gateway(GatewayResults {
            sysctls: in_force,
            firewall,
            interfaces,
            proxy,
            residue: Some(Box::new(residue)),
            updates,
            conntrack,
        }))
    }
}

/// Undo what gateway agents that died in this namespace left (a killed agent's crash
/// marker: its sysctls, RPS masks and rule set; the firewall crate's own marker of the
/// rules), in words: each change undone, then each table or set that went with it.
fn undo_dead_agents() -> Vec<String> {
    let then = netstate::snapshot(&[]);
    let mut done = crate::host::marker::cleanup_here();
    if firewall::install::clean_leftovers() {
        done.push("removed the rule set a crashed run left".into());
    }
    if done.is_empty() {
        return done;
    }
    let now = netstate::snapshot(&[]);
    let gone = |what: &str, then: &[String], now: &[String]| -> Vec<String> {
        then.iter()
            .filter(|t| !now.contains(t))
            .map(|t| format!("{what} {t} removed"))
            .collect()
    };
    done.extend(gone("nft table", &then.nft_tables, &now.nft_tables));
    done.extend(gone("ipset", &then.ipsets, &now.ipsets));
    for d in &done {
        tracing::info!("left by a gateway agent that died: {d}");
    }
    done
}

/// Everything the gateway changed, undone by [`GatewayGuard::finish`] or on drop —
/// once, in reverse order: proxy stopped, rules removed, RPS masks and sysctls
/// restored; then the namespace is compared with its state before setup.
pub struct GatewayGuard {
    /// The namespace before setup.
    before: Option<NetState>,
    /// What a gateway agent that died had left here, undone before `before` was read.
    removed_before: Vec<String>,
    /// The sysctls the gateway sets (compared before/after).
    sysctl_names: Vec<String>,
    /// sysctls to restore: (name, old value), in the order set.
    sysctls: Vec<(String, String)>,
    /// RPS masks to restore: (sysfs file, old value), in the order set.
    rps: Vec<(PathBuf, String)>,
    /// fwbench's rule set while it is installed.
    rules: Option<firewall::install::Installed>,
    /// Proxy mode: the TCP relay while it runs.
    proxy: Option<Proxy>,
    /// A NAT rule set's client network: its connection-tracking entries are forgotten
    /// before the rules go in and after they come out (a flow's NAT binding lives in
    /// its entry, which outlives the rules: a later trial of the same flows would be
    /// translated — or not — by the earlier trial's rules).
    forget: Option<firewall::Prefix>,
    /// This host's crash marker: each change is noted before it is made.
    marker: Option<crate::host::marker::Marker>,
    /// The host's conntrack settings, held (lock taken, restored on undo).
    ct_global: Option<crate::host::conntrack::Global>,
    /// The table was filled: flush it at undo (fwbench's gateway namespace only).
    ct_filled: bool,
}

impl GatewayGuard {
    /// Snapshot the namespace; nothing is changed yet.
    fn begin(
        removed_before: Vec<String>,
        sysctl_names: impl Iterator<Item = String>,
    ) -> GatewayGuard {
        let sysctl_names: Vec<String> = sysctl_names.filter(|k| sysctl_name_ok(k)).collect();
        GatewayGuard {
            before: Some(netstate::snapshot(&sysctl_names)),
            removed_before,
            sysctl_names,
            sysctls: vec![],
            rps: vec![],
            rules: None,
            proxy: None,
            forget: None,
            marker: Some(crate::host::marker::Marker::create("gateway agent")),
            ct_global: None,
            ct_filled: false,
        }
    }

    fn note(&mut self, items: impl IntoIterator<Item = crate::host::marker::Item>) {
        if let Some(m) = &mut self.marker {
            m.extend(items);
        }
    }

    fn set_sysctl(&mut self, k: &str, v: &str) -> Result<(), AgentError> {
        if !sysctl_name_ok(k) {
            return Err(error(ErrorKind::BadSetup, format!("bad sysctl name '{k}'")));
        }
        let path = sysctl_path(k);
        let old = std::fs::read_to_string(&path)
            .map_err(|e| error(ErrorKind::Io, format!("reading {k}: {e}")))?;
        self.note([crate::host::marker::Item::Sysctl {
            name: k.to_owned(),
            old: old.trim().to_owned(),
        }]);
        std::fs::write(&path, v)
            .map_err(|e| error(ErrorKind::Io, format!("setting {k}={v}: {e}")))?;
        self.sysctls.push((k.to_owned(), old.trim().to_owned()));
        Ok(())
    }

    /// Steer receive processing of every interface (but `lo`) of the gateway's
    /// namespace to `cpus` with RPS, and its transmit queues with XPS where the
    /// interface has them (`None`: no steering), noting each file so that teardown
    /// sets it back to no steering — the interfaces are the testbed's own, and that is
    /// their default. veth has no IRQs to give an affinity to; a NIC's are the
    /// two-port testbed's business.
    fn steer(&mut self, cpus: Option<&str>) -> Result<(), AgentError> {
        let mask =
            match cpus {
                None => "0".to_string(),
                Some(cpus) => rps_mask(&::traffic::sys::parse_cpus(cpus).map_err(|e| {
                    error(ErrorKind::BadSetup, format!("gateway CPUs '{cpus}': {e}"))
                })?),
            };
        let cpus = cpus.unwrap_or("none");
        let dir = std::fs::read_dir("/sys/class/net")
            .map_err(|e| error(ErrorKind::Io, format!("/sys/class/net: {e}")))?;
        for e in dir.flatten() {
            if e.file_name() == "lo" {
                continue;
            }
            let Ok(queues) = std::fs::read_dir(e.path().join("queues")) else {
                continue;
            };
            for q in queues.flatten() {
                let name = q.file_name().to_string_lossy().into_owned();
                let f = match &name {
                    n if n.starts_with("rx-") => q.path().join("rps_cpus"),
                    n if n.starts_with("tx-") => q.path().join("xps_cpus"),
                    _ => continue,
                };
                if !f.exists() {
                    continue;
                }
                let old = std::fs::read_to_string(&f)
                    .map_err(|e| error(ErrorKind::Io, format!("{}: {e}", f.display())))?;
                if old.trim() == mask {
                    continue;
                }
                self.note([crate::host::marker::Item::File {
                    path: f.display().to_string(),
                    old: old.trim().to_owned(),
                }]);
                match std::fs::write(&f, &mask) {
                    Ok(()) => self.rps.push((f, old.trim().to_owned())),
                    // Transmit steering is best effort: a driver may refuse XPS.
                    Err(e) if name.starts_with("tx-") => {
                        tracing::info!("no XPS on {}: {e}", f.display());
                    }
                    Err(e) => {
                        return Err(error(
                            ErrorKind::Io,
                            format!("steering to CPUs {cpus} ({}): {e}", f.display()),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    fn install_rules(
        &mut self,
        request: &firewall::Request,
        room: firewall::request::Room,
    ) -> Result<(), AgentError> {
        use firewall::{install::InstallError, tool::ToolError};
        let rendered = firewall::request::render_with_room(request, room)
            .map_err(|e| error(ErrorKind::BadSetup, e.to_string()))?;
        self.note([crate::host::marker::Item::Rules]);
        let nat = request.spec.as_ref().is_some_and(|s| s.model.is_nat());
        if let (true, Some(a)) = (nat, &request.addressing) {
            forget_flows(a.client_net).map_err(|e| error(ErrorKind::BadSetup, e))?;
            self.forget = Some(a.client_net);
        }
        let installed = firewall::install::install(&rendered).map_err(|e| {
            let kind = match e {
                InstallError::Tool(ToolError::MissingTool { .. } | ToolError::Rejected { .. }) => {
                    ErrorKind::BadSetup
                }
                InstallError::Tool(ToolError::Unavailable(_)) => ErrorKind::Unavailable,
                _ => ErrorKind::Io,
            };
            error(kind, e.to_string())
        })?;
        self.rules = Some(installed);
        Ok(())
    }

    /// Conntrack settings: each where this namespace may set it, else the host's
    /// (global) value under [`crate::host::conntrack::LOCK`]; returns what is in force.
    /// The namespace's timeouts were set as sysctls (`ct_sysctls`).
    fn conntrack(&mut self, spec: &proto::CtSpec) -> Result<CtReport, AgentError> {
        use crate::host::conntrack::{self as ct, Global};
        // The module's hook must be loaded for the files to exist.
        if !std::path::Path::new(ct::MAX).exists() {
            return Err(error(
                ErrorKind::Unavailable,
                format!(
                    "conntrack is not available in the gateway's namespace ({} missing): \
                     load nf_conntrack (modprobe nf_conntrack)",
                    ct::MAX
                ),
            ));
        }
        let mut scope = vec![];
        let wanted = [
            ("nf_conntrack_max", spec.max, ct::MAX, ct::MAX),
            (
                "nf_conntrack_buckets",
                spec.buckets,
                ct::BUCKETS,
                ct::HASHSIZE,
            ),
        ];
        for (name, value, here, global) in wanted {
            let Some(v) = value else { continue };
            let v = v.to_string();
            if ct::settable_here(here) && !own_netns_is_hosts() {
                let key = format!("net.netfilter.{name}");
                self.sysctl_names.push(key.clone());
                self.set_sysctl(&key, &v)?;
                scope.push((name.to_owned(), "netns".to_owned()));
                continue;
            }
            if self.ct_global.is_none() {
                let g = Global::hold()
                    .map_err(|e| error(ErrorKind::Io, format!("conntrack settings: {e}")))?;
                self.ct_global = Some(g);
            }
            let g = self.ct_global.as_mut().expect("held above");
            g.set(global, &v).map_err(|e| {
                error(
                    ErrorKind::Io,
                    format!("setting the host's {name} to {v} (global on this kernel): {e}"),
                )
            })?;
            scope.push((name.to_owned(), "global".to_owned()));
        }
        if spec.fill.is_some() && own_netns_is_hosts() {
            return Err(error(
                ErrorKind::BadSetup,
                "a conntrack table fill needs fwbench's own gateway namespace: this gateway \
                 runs in its host's namespace, whose table fwbench leaves alone"
                    .to_string(),
            ));
        }
        if spec.flush {
            if own_netns_is_hosts() {
                tracing::warn!(
                    "the gateway runs in its host's own namespace: its conntrack table is \
                     not flushed (new flows of an earlier trial may still be in it)"
                );
            } else {
                // The testbed's gateway namespace is fwbench's: its table holds only
                // fwbench's flows.
                crate::process::Cmd::new("conntrack", &["-F"])
                    .run()
                    .map_err(|e| {
                        error(
                            ErrorKind::Unavailable,
                            format!(
                                "emptying the gateway's conntrack table: {e} \
                                 (conntrack-tools: apt-get install conntrack)"
                            ),
                        )
                    })?;
            }
        }
        Ok(CtReport {
            max: ct::read_u64(ct::MAX).unwrap_or(0),
            buckets: ct::read_u64(ct::BUCKETS).unwrap_or(0),
            udp_timeout_s: ct::read_u64(ct::UDP_TIMEOUT).unwrap_or(0),
            filled: match spec.fill {
                Some(n) => self.fill(n)?,
                None => 0,
            },
            scope,
            ..Default::default()
        })
    }

    /// Put `n` idle entries in this namespace's table (`conntrack -R`); the table is
    /// flushed at undo. Returns the entries in the table after.
    fn fill(&mut self, n: u32) -> Result<u64, AgentError> {
        use crate::host::conntrack as ct;
        let io = |m: String| error(ErrorKind::Io, m);
        let max = ct::read_u64(ct::MAX).unwrap_or(0);
        if u64::from(n) > max {
            return Err(error(
                ErrorKind::BadSetup,
                format!(
                    "a fill of {n} entries does not fit nf_conntrack_max {max}: raise --ct-max"
                ),
            ));
        }
        // Live for a day at most; flushed at undo anyway.
        let text = ct::fill_lines(n, std::net::Ipv4Addr::new(198, 19, 0, 2), 86_400);
        let path = format!("/run/fwbench/ctfill-{}.txt", std::process::id());
        std::fs::write(&path, text).map_err(|e| io(format!("{path}: {e}")))?;
        self.ct_filled = true;
        let r = crate::process::Cmd::new("conntrack", &["-R", &path]).run();
        let _ = std::fs::remove_file(&path);
        r.map_err(|e| io(format!("filling the gateway's conntrack table: {e}")))?;
        let count = ct::read_stats().map(|s| s.count).unwrap_or(0);
        if count < u64::from(n) {
            return Err(io(format!(
                "the conntrack table holds {count} entries after a fill of {n}"
            )));
        }
        Ok(count)
    }

    fn start_proxy(&mut self, spec: &ProxySpec) -> Result<(), AgentError> {
        let proxy = Proxy::start(spec).map_err(|e| {
            let kind = match e {
                TrafficError::BadSpec(_) => ErrorKind::BadSetup,
                _ => ErrorKind::Io,
            };
            error(kind, format!("proxy: {e}"))
        })?;
        self.proxy = Some(proxy);
        Ok(())
    }

    /// Stop: the rule set's report (verdict counters read, then the rules removed,
    /// timed), the proxy's results, then everything else undone and the residue.
    fn finish(
        mut self,
        changed_elements: bool,
    ) -> (Option<Box<firewall::Report>>, Option<ProxyResults>, Residue) {
        let firewall = self
            .rules
            .take()
            .map(|r| Box::new(firewall::report::stop(r, changed_elements)));
        if let Some(net) = self.forget.take() {
            if let Err(e) = forget_flows(net) {
                tracing::error!("{e}");
            }
        }
        let proxy = self.proxy.take().map(Proxy::stop);
        let residue = self.undo().unwrap_or_default();
        (firewall, proxy, residue)
    }

    /// Undo what is still in force, newest first; each step is taken out as it is
    /// undone, so a second call does nothing (and returns `None`).
    fn undo(&mut self) -> Option<Residue> {
        if let Some(p) = self.proxy.take() {
            drop(p.stop());
        }
        if let Some(rules) = self.rules.take() {
            if let Err(e) = rules.remove() {
                tracing::error!("removing fwbench's rules: {e}");
            }
        }
        if let Some(net) = self.forget.take() {
            if let Err(e) = forget_flows(net) {
                tracing::error!("{e}");
            }
        }
        if std::mem::take(&mut self.ct_filled) {
            if let Err(e) = crate::process::Cmd::new("conntrack", &["-F"]).run() {
                tracing::error!("emptying the filled conntrack table: {e}");
            }
        }
        // The host's conntrack settings back (and their lock released) at once.
        drop(self.ct_global.take());
        while let Some((path, old)) = self.rps.pop() {
            if let Err(e) = std::fs::write(&path, &old) {
                tracing::error!("restoring {}: {e}", path.display());
            }
        }
        while let Some((k, old)) = self.sysctls.pop() {
            if let Err(e) = std::fs::write(sysctl_path(&k), &old) {
                tracing::error!("restoring {k}={old}: {e}");
            }
        }
        if let Some(m) = self.marker.take() {
            m.done();
        }
        let before = self.before.take()?;
        let mut residue = netstate::settle(before, &self.sysctl_names);
        residue.removed_before = std::mem::take(&mut self.removed_before);
        for r in &residue.removed {
            tracing::info!("removed {r} (made by an engine's tool, left empty)");
        }
        // The controller says it (once per run, with what it did about it).
        for l in &residue.left {
            tracing::info!("the gateway keeps a change after teardown: {l}");
        }
        Some(residue)
    }
}

impl Drop for GatewayGuard {
    fn drop(&mut self) {
        self.undo();
    }
}

/// Delete the connection-tracking entries of flows from `net` (the testbed's client
/// network, which only fwbench's traffic uses) in this namespace, with `conntrack -D`.
fn forget_flows(net: firewall::Prefix) -> Result<(), String> {
    let family = if net.addr.is_ipv4() { "ipv4" } else { "ipv6" };
    let net = net.to_string();
    let args = ["-D", "-f", family, "-s", net.as_str()];
    let f = crate::process::Cmd::new("conntrack", &args)
        .c_locale()
        .timeout(std::time::Duration::from_secs(30))
        .finish()
        .map_err(|e| {
            format!(
                "a NAT model forgets the flows of earlier trials with conntrack (package \
                 conntrack): {}",
                e.one_line()
            )
        })?;
    // Exit 1 with "0 flow entries have been deleted" when there were none.
    if f.success() || f.stderr.contains("flow entries have been deleted") {
        Ok(())
    } else {
        Err(format!("conntrack -D -s {net}: {}", f.stderr.trim()))
    }
}

/// The namespace-local conntrack settings of a spec, as sysctls.
fn ct_sysctls(spec: &proto::CtSpec) -> Vec<(String, String)> {
    spec.udp_timeout_s
        .map(|t| {
            (
                "net.netfilter.nf_conntrack_udp_timeout".to_owned(),
                t.to_string(),
            )
        })
        .into_iter()
        .collect()
}

/// The agent runs in the host's own network namespace (a real gateway): a setting
/// made "here" is the host's, so it takes the lock all the same.
fn own_netns_is_hosts() -> bool {
    crate::host::conntrack::in_host_netns()
}

fn sysctl_name_ok(k: &str) -> bool {
    !k.contains("..") && !k.contains('/')
}

/// CPU list → the hex mask sysfs takes (comma every 32 bits), e.g. [1] → "2".
pub(super) fn rps_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map(|m| m / 32 + 1).unwrap_or(1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c / 32] |= 1 << (c % 32);
    }
    let mut parts: Vec<String> = w.iter().rev().map(|x| format!("{x:08x}")).collect();
    parts[0] = format!("{:x}", w[words - 1]);
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::rps_mask;

    #[test]
    fn rps_masks() {
        assert_eq!(rps_mask(&[1]), "2");
        assert_eq!(rps_mask(&[0, 1]), "3");
        assert_eq!(rps_mask(&[0, 33]), "2,00000001");
    }
}
