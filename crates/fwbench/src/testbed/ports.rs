//! Two-port tester mode: a role of a testbed file takes an interface of its host
//! (`interface = "enp1s0"`, `move_interface = true`) into a namespace of its own for the
//! run, so one traffic host with two NICs drives a separate device under test.
//!
//! A *keeper* (`fwbench testbed hold`, hidden) runs on the host through the role's
//! launcher for the whole run: it records the interface as found (addresses, MTU,
//! up/down) in the host's crash marker, makes the namespace — held by a child
//! `unshare -n cat` reading the keeper's pipe, not a named `ip netns` (those do not
//! propagate out of the mount namespace `ip netns exec` gives a launcher, and would
//! outlive a killed keeper) — moves the interface in,
//! gives it its addresses there — the ones it had, or with `manage_addresses = true`
//! the file's — and a default route via the role's `gateway_address`, says `ready`,
//! and waits for its stdin to close. Then (normal end, controller killed, SSH dropped
//! alike) it moves the interface back, restores what it recorded, ends the holder
//! (and with it the namespace) and removes its marker. Roles run inside with
//! `nsenter -t HOLDER -n` appended to their launcher ([`inside`]). If the keeper itself dies too (power loss,
//! SIGKILL of the host's process tree), the marker lets the next run undo it
//! ([`crate::host::marker::cleanup_here`]).
//!
//! Owns: the keeper and the controller's handle on it ([`Held`]). Must not: change an
//! interface the file does not name, or keep anything after its stdin closes.

use crate::host::marker::{self, Item, Marker, PortState};
use crate::testbed::launcher::Launcher;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// What a keeper is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldSpec {
    pub role: String,
    pub interface: String,
    /// `Some`: `manage_addresses = true`, these addresses (with prefix length);
    /// `None`: the addresses the interface had.
    pub addrs: Option<Vec<String>>,
    /// Next hops for a default route per family (the DUT's address on this link).
    pub gateways: Vec<String>,
}

/// What a ready keeper tells the controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ready {
    /// The process holding the namespace (enter it with `nsenter -t PID -n`).
    pub holder: u32,
    /// How the interface was found.
    pub orig: PortState,
}

/// `ip ARGS` inside the namespace of process `holder`.
fn ip_in(holder: u32, args: &[&str], input: Option<&str>) -> Result<()> {
    let h = holder.to_string();
    let mut argv = vec!["-t", h.as_str(), "-n", "ip"];
    argv.extend(args);
    let cmd = crate::process::Cmd::new("nsenter", &argv);
    let cmd = match input {
        Some(t) => cmd.input(t),
        None => cmd,
    };
    cmd.run().map(|_| ()).map_err(|e| anyhow!("{e}"))
}

/// Body of `fwbench testbed hold SPEC`: set up, print `ready …`, wait for stdin EOF,
/// give everything back.
pub fn hold(spec_json: &str) -> Result<()> {
    let spec: HoldSpec = serde_json::from_str(spec_json)
        .map_err(|e| crate::error::usage(format!("bad hold spec: {e}")))?;
    // A crashed run's leftovers on this host first (they may hold our port).
    // Never panic on a closed pipe (the controller may be gone): the port must go back.
    use std::io::Write;
    for line in marker::cleanup_here() {
        let _ = writeln!(
            std::io::stderr(),
            "fwbench: cleaned up after a crashed run: {line}"
        );
    }
    let dev = &spec.interface;
    let orig = marker::port_state(dev)
        .map_err(|e| crate::error::usage(format!("{} interface {dev}: {e}", spec.role)))?;
    let mut m = Marker::create(&format!("ports of {}", spec.role));
    // The namespace lives as long as this holder: it reads our pipe and exits when we
    // do, even if we are killed.
    let mut holder = Command::new("unshare")
        .args(["-n", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .context("unshare -n")?;
    let hpid = holder.id();
    m.add(Item::Holder {
        pid: hpid,
        start: marker::start_time(hpid).unwrap_or(0),
    });
    // Wait for unshare to have made the namespace (its exec of cat).
    let mine = std::fs::read_link("/proc/self/ns/net").ok();
    for _ in 0..250 {
        let theirs = std::fs::read_link(format!("/proc/{hpid}/ns/net")).ok();
        if theirs.is_some() && theirs != mine {
            break;
        }
        std::thread::sleep(Duration::from_millis(4));
    }
    let res = move_in(&spec, hpid, &orig, &mut m);
    if res.is_ok() {
        let ready = serde_json::to_string(&Ready {
            holder: hpid,
            orig: orig.clone(),
        })?;
        let mut out = std::io::stdout();
        let _ = writeln!(out, "ready {ready}").and_then(|_| out.flush());
        // Wait until the controller is done (or gone).
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
    }
    let back = marker::return_port(Some(hpid), dev, &orig);
    drop(holder.stdin.take());
    let _ = holder.wait();
    match &back {
        Ok(()) => m.done(),
        Err(e) => tracing::error!("giving back {dev}: {e}"),
    }
    res?;
    back.map_err(|e| anyhow!("giving back {dev}: {e}"))
}

fn move_in(spec: &HoldSpec, holder: u32, orig: &PortState, m: &mut Marker) -> Result<()> {
    let dev = &spec.interface;
    m.add(Item::Port {
        interface: dev.clone(),
        holder,
        holder_start: marker::start_time(holder).unwrap_or(0),
        orig: orig.clone(),
    });
    crate::process::Cmd::new(
        "ip",
        &["link", "set", "dev", dev, "netns", &holder.to_string()],
    )
    .run()
    .map_err(|e| anyhow!("{e}"))?;
    let inside = PortState {
        addrs: spec.addrs.clone().unwrap_or_else(|| orig.addrs.clone()),
        mtu: orig.mtu,
        up: true,
    };
    ip_in(holder, &["link", "set", "dev", "lo", "up"], None)?;
    ip_in(
        holder,
        &["-b", "-"],
        Some(&marker::port_script(dev, &inside)),
    )?;
    settle_ipv6(holder, dev);
    for g in &spec.gateways {
        let fam = if g.contains(':') { "-6" } else { "-4" };
        ip_in(
            holder,
            &[
                fam, "route", "replace", "default", "via", g, "dev", dev, "onlink",
            ],
            None,
        )?;
    }
    Ok(())
}

/// Wait (at most 3 s) until no IPv6 address of `dev` is tentative. The global
/// addresses are added with `nodad`, but the link-local address the kernel makes when
/// the port comes up in its new namespace goes through duplicate address detection;
/// until it has, neighbour discovery on the link can fail and a trial's first second
/// of IPv6 traffic goes nowhere (seen once under heavy load). Best effort: a host
/// without IPv6 has nothing tentative.
fn settle_ipv6(holder: u32, dev: &str) {
    let h = holder.to_string();
    for _ in 0..30 {
        let out = crate::process::Cmd::new(
            "nsenter",
            &[
                "-t",
                &h,
                "-n",
                "ip",
                "-6",
                "addr",
                "show",
                "dev",
                dev,
                "tentative",
            ],
        )
        .run();
        match out {
            Ok(f) if f.stdout.trim().is_empty() => return,
            Ok(_) => std::thread::sleep(Duration::from_millis(100)),
            Err(_) => return,
        }
    }
    tracing::warn!("{dev}: an IPv6 address is still tentative after 3 s");
}

/// The controller's handle on a keeper: the role's launcher now runs inside the
/// namespace. Dropping it closes the keeper's stdin and waits for the interface to
/// be given back.
#[derive(Debug)]
pub struct Held {
    pub role: String,
    pub interface: String,
    /// The process holding the namespace.
    pub holder: u32,
    /// How the interface was found (recorded with the run).
    pub orig: PortState,
    child: Child,
}

/// Start a keeper on the host of `launcher` and wait for it to be ready.
pub fn start(launcher: &Launcher, spec: &HoldSpec) -> Result<Held> {
    let exe = launcher.fwbench_exe()?;
    let argv = launcher.argv(&[
        exe,
        "testbed".into(),
        "hold".into(),
        serde_json::to_string(spec)?,
    ]);
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting the port keeper on {}", launcher.place))?;
    let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
    let mut line = String::new();
    let _ = BufReader::new(stdout).read_line(&mut line);
    let Some(orig) = line.trim().strip_prefix("ready ") else {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = child.wait();
        bail!(
            "{} interface {} on {}: {}",
            spec.role,
            spec.interface,
            launcher.place,
            err.trim()
        );
    };
    let ready: Ready = serde_json::from_str(orig)?;
    // Its later messages go to our stderr.
    if let Some(e) = child.stderr.take() {
        std::thread::spawn(move || {
            for l in BufReader::new(e).lines().map_while(Result::ok) {
                eprintln!("{l}");
            }
        });
    }
    Ok(Held {
        role: spec.role.clone(),
        interface: spec.interface.clone(),
        holder: ready.holder,
        orig: ready.orig,
        child,
    })
}

impl Drop for Held {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        for _ in 0..500 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!(
            "port keeper of {} did not exit; killing pid {}",
            self.role,
            self.child.id()
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A role's launcher moved into its port's namespace (held by process `holder`).
pub fn inside(l: &Launcher, holder: u32) -> Launcher {
    let mut prefix = l.prefix.clone();
    prefix.extend([
        "nsenter".into(),
        "-t".into(),
        holder.to_string(),
        "-n".into(),
    ]);
    Launcher {
        prefix,
        host: l.host.clone(),
        place: format!("{} port netns of pid {holder}", l.place),
        remote: l.remote.clone(),
        timeout: l.timeout,
    }
}
