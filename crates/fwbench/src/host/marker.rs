//! Crash markers: what an fwbench process changed on this host, written *before* it
//! changes anything, so that the next run (or `fwbench testbed check`/`cleanup`) on the
//! host undoes it after a power loss or a SIGKILL of the whole process tree — when no
//! agent was left to see its stdin close.
//!
//! A marker is `/run/fwbench/host/<pid>-<starttime>.json`: the owner's PID and start
//! time (so a reused PID is not mistaken for the owner), the inode of its network
//! namespace, and the changes in the order made (sysctls and sysfs files with their old
//! values, fwbench's rule set, namespaces made, interfaces moved with their original
//! addresses, MTU and state). `/run` is a tmpfs: after a power loss the marker is gone
//! together with everything it lists, except a moved physical interface's settings,
//! which a reboot resets anyway.
//!
//! A [`TrialMark`] is the same idea for a named testbed: `/run/fwbench/trials/NAME.json`
//! is written before each trial on it and removed once the trial ended and what it left
//! was dealt with; found by the next run, it says the previous trial was interrupted
//! (SIGINT, SIGKILL) and its gateway may keep what cannot be undone (a legacy table).
//!
//! Owns: the marker format, [`cleanup_here`], the trial marks, and removing the
//! firewall crate's rule-set markers of namespaces that are gone
//! ([`remove_orphan_rule_markers_in`]). Must not: touch a marker whose owner is alive,
//! or one of another network namespace that still exists (hosts emulated by namespaces
//! share this directory; each cleans its own).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where markers live (a tmpfs: nothing survives a reboot, as nothing it lists does).
pub const DIR: &str = "/run/fwbench/host";

/// An interface's settings before fwbench moved it, to put back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortState {
    /// Global addresses with prefix length, e.g. "198.18.0.2/24".
    pub addrs: Vec<String>,
    pub mtu: u32,
    pub up: bool,
}

impl PortState {
    /// As the testbed's text and metadata say it: `198.18.0.2/24 mtu 1500 up`,
    /// `no address, mtu 1500 down`.
    pub fn describe(&self) -> String {
        let addrs = if self.addrs.is_empty() {
            "no address,".to_string()
        } else {
            self.addrs.join(" ")
        };
        let up = if self.up { "up" } else { "down" };
        format!("{addrs} mtu {} {up}", self.mtu)
    }
}

/// One change, with what undoes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// A sysctl set; `old` is its value before.
    Sysctl { name: String, old: String },
    /// A sysfs file written (RPS masks); `old` is its content before.
    File { path: String, old: String },
    /// fwbench's rule set (the firewall crate's own marker says which tables).
    Rules,
    /// A process holding a network namespace fwbench made (`unshare -n`): killing it
    /// ends the namespace (a physical interface in it returns to the init namespace, a
    /// virtual one is destroyed).
    Holder { pid: u32, start: u64 },
    /// An interface moved into the namespace of holder `holder`; `orig` is how it
    /// was found.
    Port {
        interface: String,
        holder: u32,
        holder_start: u64,
        orig: PortState,
    },
}

impl Item {
    pub fn describe(&self) -> String {
        match self {
            Item::Sysctl { name, old } => format!("sysctl {name} (back to {old})"),
            Item::File { path, old } => format!("{path} (back to {old})"),
            Item::Rules => "fwbench's rule set".into(),
            Item::Holder { pid, .. } => format!("namespace held by pid {pid}"),
            Item::Port {
                interface, holder, ..
            } => format!("interface {interface} (back from the namespace of pid {holder})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Data {
    /// Who wrote it: "gateway agent", "ports of client".
    pub what: String,
    pub pid: u32,
    /// The owner's start time (clock ticks since boot, `/proc/PID/stat` field 22).
    pub start: u64,
    /// Inode of the owner's network namespace.
    pub netns_ino: u64,
    pub items: Vec<Item>,
}

/// A marker owned by this process; removed with [`Marker::done`].
#[derive(Debug)]
pub struct Marker {
    path: PathBuf,
    data: Data,
}

pub fn own_netns_ino() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/net")
        .map(|m| m.ino())
        .unwrap_or(0)
}

/// Start time of process `pid` (`None`: no such process).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    // Fields after the command: state is field 3, starttime field 22.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether process `pid` started at `start` still runs: a zombie (killed, its parent
/// gone and not yet reaped) does not — it holds no file and changes nothing.
pub fn runs(pid: u32, start: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return false;
    };
    let mut f = rest.split_whitespace();
    let state = f.next().unwrap_or("X");
    !matches!(state, "Z" | "X" | "x") && f.nth(18).and_then(|v| v.parse().ok()) == Some(start)
}

/// Whether the process that wrote `d` still runs.
fn owner_alive(d: &Data) -> bool {
    runs(d.pid, d.start)
}

impl Marker {
    /// Write an empty marker for this process (in `dir`, normally [`DIR`]).
    pub fn create_in(dir: &Path, what: &str) -> Marker {
        let pid = std::process::id();
        let start = start_time(pid).unwrap_or(0);
        let m = Marker {
            path: dir.join(format!("{pid}-{start}.json")),
            data: Data {
                what: what.into(),
                pid,
                start,
                netns_ino: own_netns_ino(),
                items: vec![],
            },
        };
        m.write();
        m
    }

    pub fn create(what: &str) -> Marker {
        Marker::create_in(Path::new(DIR), what)
    }

    /// Note a change about to be made (the file is rewritten before it is made).
    pub fn add(&mut self, item: Item) {
        self.data.items.push(item);
        self.write();
    }

    /// Several changes at once.
    pub fn extend(&mut self, items: impl IntoIterator<Item = Item>) {
        self.data.items.extend(items);
        self.write();
    }

    fn write(&self) {
        let write = || -> std::io::Result<()> {
            if let Some(d) = self.path.parent() {
                super::state::prepare(d).map_err(std::io::Error::other)?;
            }
            super::state::write_atomic(&self.path, &serde_json::to_vec(&self.data)?)
                .map_err(std::io::Error::other)
        };
        if let Err(e) = write() {
            tracing::warn!("crash marker {}: {e}", self.path.display());
        }
    }

    /// Everything it lists is undone: remove it.
    pub fn done(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Why a change a marker lists could not be read, made or undone.
#[derive(Debug, thiserror::Error)]
pub enum MarkerError {
    /// A command (`ip`, `nsenter`, `kill`) failed.
    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
    /// fwbench's state directory refused (`host::state`).
    #[error(transparent)]
    State(#[from] super::state::StateError),
    /// `ip -j addr` printed what is not its JSON.
    #[error("ip -j addr: {0}")]
    IpJson(serde_json::Error),
    /// No such interface in this namespace.
    #[error("no interface {0}")]
    NoInterface(String),
    /// A port to give back that is no longer there.
    #[error("interface {0} is gone (a virtual interface is destroyed with its namespace)")]
    Gone(String),
    /// A sysctl or file that could not be written back.
    #[error("{path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    /// A trial mark that could not be encoded.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
}

fn sh(prog: &str, args: &[&str]) -> Result<(), MarkerError> {
    crate::process::Cmd::new(prog, args).run()?;
    Ok(())
}

/// Interface `dev` (in this namespace) as it is now.
pub fn port_state(dev: &str) -> Result<PortState, MarkerError> {
    let out = crate::process::Cmd::new("ip", &["-j", "addr", "show", "dev", dev]).run()?;
    let v: serde_json::Value = serde_json::from_str(&out.stdout).map_err(MarkerError::IpJson)?;
    let link = v
        .get(0)
        .ok_or_else(|| MarkerError::NoInterface(dev.into()))?
        .clone();
    let up = link["flags"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x == "UP"));
    let addrs = link["addr_info"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|x| x["scope"] == "global")
                .filter_map(|x| Some(format!("{}/{}", x["local"].as_str()?, x["prefixlen"])))
                .collect()
        })
        .unwrap_or_default();
    Ok(PortState {
        addrs,
        mtu: link["mtu"].as_u64().unwrap_or(1500) as u32,
        up,
    })
}

/// The `ip -b` script that gives `dev` the settings of `s`: its addresses exactly
/// (others flushed; added without duplicate address detection), MTU, up or down.
pub fn port_script(dev: &str, s: &PortState) -> String {
    let mut script = format!(
        "addr flush dev {dev} scope global\nlink set dev {dev} mtu {}\n",
        s.mtu
    );
    for a in &s.addrs {
        let nodad = if a.contains(':') { " nodad" } else { "" };
        script += &format!("addr add {a} dev {dev}{nodad}\n");
    }
    script += &format!("link set dev {dev} {}\n", if s.up { "up" } else { "down" });
    script
}

/// Give `dev` (in the namespace `ns`, or this one) the settings of `s`: its addresses
/// exactly (others flushed), MTU, up or down.
pub fn apply_port_state(ns: Option<&str>, dev: &str, s: &PortState) -> Result<(), MarkerError> {
    let script = port_script(dev, s);
    let mut args = vec![];
    if let Some(ns) = ns {
        args.extend(["-n", ns]);
    }
    args.extend(["-b", "-"]);
    crate::process::Cmd::new("ip", &args).input(&script).run()?;
    Ok(())
}

/// Move `dev` from the namespace of process `holder` (if it still runs) back to this
/// process's namespace and restore how it was.
pub fn return_port(holder: Option<u32>, dev: &str, orig: &PortState) -> Result<(), MarkerError> {
    let me = std::process::id().to_string();
    if let Some(h) = holder {
        // Not there (any more): it was given back already, or went with the namespace.
        let h = h.to_string();
        let _ = sh(
            "nsenter",
            &[
                "-t", &h, "-n", "ip", "link", "set", "dev", dev, "netns", &me,
            ],
        );
    }
    let here = std::path::Path::new("/sys/class/net").join(dev).exists();
    if !here {
        return Err(MarkerError::Gone(dev.into()));
    }
    apply_port_state(None, dev, orig)
}

/// Whether a network namespace of inode `ino` still exists: named (`/run/netns`) or
/// some process's.
fn netns_exists(ino: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let named = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .any(|e| std::fs::metadata(e.path()).is_ok_and(|m| m.ino() == ino))
        })
        .unwrap_or(false);
    named
        || std::fs::read_dir("/proc")
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .bytes()
                            .all(|b| b.is_ascii_digit())
                    })
                    .any(|e| {
                        std::fs::metadata(e.path().join("ns/net")).is_ok_and(|m| m.ino() == ino)
                    })
            })
            .unwrap_or(true)
}

/// Undo one item in this namespace.
fn undo(item: &Item) -> Result<(), MarkerError> {
    let write = |path: String, old: &str| {
        std::fs::write(&path, old).map_err(|source| MarkerError::Write { path, source })
    };
    match item {
        Item::Sysctl { name, old } => write(format!("/proc/sys/{}", name.replace('.', "/")), old),
        Item::File { path, old } => write(path.clone(), old),
        Item::Rules => {
            firewall::install::clean_leftovers();
            Ok(())
        }
        Item::Holder { pid, start } => {
            if start_time(*pid) == Some(*start) {
                sh("kill", &["-KILL", &pid.to_string()])
            } else {
                Ok(())
            }
        }
        Item::Port {
            interface,
            holder,
            holder_start,
            orig,
        } => return_port(
            (start_time(*holder) == Some(*holder_start)).then_some(*holder),
            interface,
            orig,
        ),
    }
}

/// Markers left in `dir` by dead processes of this network namespace: undo what each
/// lists (newest change first), remove it, and say what was done.
pub fn cleanup_in(dir: &Path) -> Vec<String> {
    let mut done = remove_half_written(dir);
    let Ok(rd) = std::fs::read_dir(dir) else {
        return done;
    };
    let ino = own_netns_ino();
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for f in files {
        let text = match super::state::read_owned(&f) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!("{e}");
                continue;
            }
        };
        let Ok(d) = serde_json::from_str::<Data>(&text) else {
            tracing::warn!("{}: not a crash marker; left alone", f.display());
            continue;
        };
        if owner_alive(&d) {
            continue;
        }
        if d.netns_ino != ino {
            // Another namespace's: its own host cleans it — unless that namespace is
            // gone, and with it everything the marker lists (an ephemeral testbed's
            // gateway removed by its reaper).
            if !netns_exists(d.netns_ino) {
                let _ = std::fs::remove_file(&f);
            }
            continue;
        }
        for item in d.items.iter().rev() {
            match undo(item) {
                Ok(()) => done.push(format!(
                    "{} (pid {}): undid {}",
                    d.what,
                    d.pid,
                    item.describe()
                )),
                Err(e) => done.push(format!(
                    "{} (pid {}): could not undo {}: {e}",
                    d.what,
                    d.pid,
                    item.describe()
                )),
            }
        }
        if d.items.is_empty() {
            done.push(format!("{} (pid {}): nothing to undo", d.what, d.pid));
        }
        let _ = std::fs::remove_file(&f);
    }
    done
}

/// Remove what a writer killed between writing a marker's temporary file and renaming it
/// left (`.NAME.PID.N.tmp`, `state::write_atomic`): only when that process is gone.
fn remove_half_written(dir: &Path) -> Vec<String> {
    remove_stale(dir, |name| {
        let pid = half_written_pid(name)?;
        start_time(pid)
            .is_none()
            .then(|| format!("half written by fwbench pid {pid}, which is gone"))
    })
}

/// Remove each file of `dir` that `stale` names stale (saying why) and that is this
/// user's alone ([`super::state::read_owned`]), and say what went and why.
fn remove_stale(dir: &Path, stale: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut done = vec![];
    for e in rd.flatten() {
        let Some(why) = stale(&e.file_name().to_string_lossy()) else {
            continue;
        };
        let path = e.path();
        if matches!(super::state::read_owned(&path), Ok(Some(_)))
            && std::fs::remove_file(&path).is_ok()
        {
            done.push(format!("removed {}: {why}", path.display()));
        }
    }
    done
}

/// The writer's pid of a temporary file `state::write_atomic` names `.NAME.PID.N.tmp`.
fn half_written_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = rest.rsplitn(3, '.');
    let _n: u32 = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    parts.next().filter(|n| !n.is_empty())?;
    Some(pid)
}

/// Where trial marks live.
pub const TRIALS_DIR: &str = "/run/fwbench/trials";

/// What a trial mark holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct TrialData {
    testbed: String,
    pid: u32,
    start: u64,
    /// When the trial began (UTC, RFC 3339).
    at: String,
}

/// "A trial runs on testbed NAME": written before the trial; [`TrialMark::end`] removes
/// it, dropping it without `end` leaves it for the next run (see the module's header).
#[derive(Debug)]
pub struct TrialMark {
    path: PathBuf,
}

fn trial_mark_path(dir: &Path, testbed: &str) -> PathBuf {
    // A testbed file may name its testbed anything: only a plain file name here.
    let safe: String = (testbed.chars())
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    dir.join(format!("{safe}.json"))
}

impl TrialMark {
    /// Mark a trial on `testbed` as begun (in `dir`, normally [`TRIALS_DIR`]).
    pub fn begin_in(dir: &Path, testbed: &str) -> Result<TrialMark, MarkerError> {
        let pid = std::process::id();
        let d = TrialData {
            testbed: testbed.into(),
            pid,
            start: start_time(pid).unwrap_or(0),
            at: crate::clock::now_utc(),
        };
        super::state::prepare(dir)?;
        let path = trial_mark_path(dir, testbed);
        let text = serde_json::to_vec(&d)?;
        super::state::write_atomic(&path, &text)?;
        Ok(TrialMark { path })
    }

    pub fn begin(testbed: &str) -> Result<TrialMark, MarkerError> {
        TrialMark::begin_in(Path::new(TRIALS_DIR), testbed)
    }

    /// The trial ended and what it left was dealt with.
    pub fn end(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// The previous trial on `testbed` did not end (the caller holds the testbed's
    /// lock, so no live run is in it): who ran it, in words. `None`: it ended. The
    /// mark stays until the next trial's [`TrialMark::begin`] and `end`.
    pub fn interrupted_in(dir: &Path, testbed: &str) -> Option<String> {
        let path = trial_mark_path(dir, testbed);
        let said = match super::state::read_owned(&path) {
            Ok(None) => return None,
            Ok(Some(text)) => match serde_json::from_str::<TrialData>(&text) {
                Ok(d) => format!(
                    "its trial begun at {} by fwbench pid {} did not end (interrupted, killed or failed)",
                    d.at, d.pid
                ),
                Err(_) => "a trial on it did not end (its mark is unreadable)".to_string(),
            },
            Err(e) => {
                tracing::warn!("{e}");
                return None;
            }
        };
        Some(said)
    }

    /// The testbed is removed: its mark with it.
    pub fn forget(testbed: &str) {
        let _ = std::fs::remove_file(trial_mark_path(Path::new(TRIALS_DIR), testbed));
    }

    pub fn interrupted(testbed: &str) -> Option<String> {
        TrialMark::interrupted_in(Path::new(TRIALS_DIR), testbed)
    }
}

/// [`cleanup_in`] the markers' directory.
pub fn cleanup_here() -> Vec<String> {
    cleanup_in(Path::new(DIR))
}

/// Remove the markers of network namespaces that no longer exist, whatever namespace
/// this process is in: the crash markers of dead owners in [`DIR`] and the firewall
/// crate's rule-set markers. Called by whoever deletes namespaces, right after (a
/// namespace's inode is reused by the next one made: a marker left behind would be
/// taken for the new namespace's and undone in it), and at start.
pub fn forget_gone_namespaces() -> Vec<String> {
    let mut done = remove_gone_namespace_markers_in(Path::new(DIR));
    done.extend(remove_orphan_rule_markers_in(Path::new(
        firewall::install::MARKER_DIR,
    )));
    done
}

/// Crash markers in `dir` of dead owners whose namespace is gone (everything they
/// list that lived in it went with it): removed, and said.
fn remove_gone_namespace_markers_in(dir: &Path) -> Vec<String> {
    remove_stale(dir, |name| {
        if !name.ends_with(".json") || name.starts_with('.') {
            return None;
        }
        let text = super::state::read_owned(&dir.join(name)).ok()??;
        let d = serde_json::from_str::<Data>(&text).ok()?;
        (!owner_alive(&d) && !netns_exists(d.netns_ino)).then(|| {
            format!(
                "the crash marker of {} (pid {}) in network namespace {}, which is gone",
                d.what, d.pid, d.netns_ino
            )
        })
    })
}

/// Remove the firewall crate's rule-set markers in `dir` (normally
/// [`firewall::install::MARKER_DIR`]) whose network namespace no longer exists: the
/// rules they list went with it (a testbed's gateway deleted, or killed with its
/// agent). Only files named as such markers and owned by this user are touched.
pub fn remove_orphan_rule_markers_in(dir: &Path) -> Vec<String> {
    remove_stale(dir, |name| {
        let ino = firewall::install::marker_netns(name)?;
        (!netns_exists(ino))
            .then(|| format!("the rule-set marker of network namespace {ino}, which is gone"))
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn half_written_markers_name_their_writer() {
        assert_eq!(
            half_written_pid(".23620-159023.json.23620.0.tmp"),
            Some(23620)
        );
        assert_eq!(half_written_pid(".x.json.7.12.tmp"), Some(7));
        assert_eq!(half_written_pid("23620-159023.json"), None);
        assert_eq!(half_written_pid(".x.json.a.0.tmp"), None);
        assert_eq!(half_written_pid("..1.0.tmp"), None);
        // A dead writer's half-written file goes; a live one's stays.
        let d = tempfile::tempdir().unwrap();
        let dead = d.path().join(".m.json.4194304.0.tmp");
        let live = d
            .path()
            .join(format!(".m.json.{}.0.tmp", std::process::id()));
        for p in [&dead, &live] {
            std::fs::write(p, "{}").unwrap();
        }
        let done = remove_half_written(d.path());
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!dead.exists() && live.exists());
    }

    use super::*;

    /// A rule-set marker of a namespace that exists (this process's) stays; one of a
    /// namespace that does not is removed; a file not named as a marker stays.
    /// A rebuilt testbed's gateway took the inode of the namespace a killed agent's
    /// marker named, and undid that agent's rule set in itself (a legacy table
    /// instantiated before its first trial): markers of gone namespaces are removed,
    /// whatever this process's namespace; a live owner's and this namespace's stay.
    #[test]
    fn crash_markers_of_gone_namespaces_are_removed_from_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let live = Marker::create_in(dir.path(), "test");
        let text = std::fs::read_to_string(live.path()).unwrap();
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let dead = c.id();
        c.wait().unwrap();
        let plant = |name: &str, pid: u32, netns_ino: u64| {
            let mut d: Data = serde_json::from_str(&text).unwrap();
            (d.pid, d.netns_ino) = (pid, netns_ino);
            let f = dir.path().join(name);
            std::fs::write(&f, serde_json::to_vec(&d).unwrap()).unwrap();
            f
        };
        let gone = plant("gone.json", dead, 1);
        let here = plant("here.json", dead, own_netns_ino());
        let alive = plant("alive.json", std::process::id(), 1);
        let done = remove_gone_namespace_markers_in(dir.path());
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(
            done[0].contains("network namespace 1, which is gone"),
            "{done:?}"
        );
        assert!(!gone.exists());
        assert!(here.exists() && alive.exists() && live.path().exists());
        live.done();
    }

    #[test]
    fn rule_markers_of_gone_namespaces_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join(format!("netns-{}.json", own_netns_ino()));
        // Inode 1 is the root directory's of some file system, never a namespace's.
        let gone = dir.path().join("netns-1.json");
        let other = dir.path().join("netns-notes.json");
        for p in [&mine, &gone, &other] {
            std::fs::write(p, "{}").unwrap();
        }
        let done = remove_orphan_rule_markers_in(dir.path());
        assert!(mine.exists() && other.exists());
        assert!(!gone.exists());
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(done[0].contains("namespace 1, which is gone"), "{done:?}");
    }

    #[test]
    fn a_zombie_does_not_run() {
        let me = std::process::id();
        assert!(runs(me, start_time(me).unwrap()));
        assert!(!runs(me, start_time(me).unwrap() + 1));
        // Exited, not yet waited for: a zombie.
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let (pid, start) = (c.id(), start_time(c.id()).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(start_time(pid), Some(start), "still in /proc");
        assert!(!runs(pid, start));
        c.wait().unwrap();
        assert!(!runs(pid, start));
    }

    #[test]
    fn a_trial_mark_left_says_the_trial_was_interrupted_once() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(TrialMark::interrupted_in(dir.path(), "tb"), None);
        // Ended: nothing to say.
        TrialMark::begin_in(dir.path(), "tb").unwrap().end();
        assert_eq!(TrialMark::interrupted_in(dir.path(), "tb"), None);
        // Dropped without end (the process died mid-trial): said until a trial ends.
        drop(TrialMark::begin_in(dir.path(), "tb").unwrap());
        let said = TrialMark::interrupted_in(dir.path(), "tb").unwrap();
        assert!(
            said.contains(&format!("pid {}", std::process::id())),
            "{said}"
        );
        assert!(TrialMark::interrupted_in(dir.path(), "tb").is_some());
        TrialMark::begin_in(dir.path(), "tb").unwrap().end();
        assert_eq!(TrialMark::interrupted_in(dir.path(), "tb"), None);
        // Another testbed's mark is its own; odd names stay in the directory.
        drop(TrialMark::begin_in(dir.path(), "../x y").unwrap());
        assert!(dir.path().join(".._x_y.json").is_file());
        assert_eq!(TrialMark::interrupted_in(dir.path(), "tb"), None);
    }

    #[test]
    fn a_dead_owners_marker_is_undone_a_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("rps_cpus");
        std::fs::write(&target, "f").unwrap();
        // A live marker (this process) is left alone.
        let mut live = Marker::create_in(dir.path(), "test");
        live.add(Item::File {
            path: target.display().to_string(),
            old: "0".into(),
        });
        assert!(cleanup_in(dir.path()).is_empty());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "f");
        // The same marker with a dead owner: undone and removed.
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let dead = c.id();
        c.wait().unwrap();
        let text = std::fs::read_to_string(live.path()).unwrap();
        let mut d: Data = serde_json::from_str(&text).unwrap();
        assert_eq!(d.items.len(), 1);
        d.pid = dead;
        let f = dir.path().join(format!("{dead}-1.json"));
        std::fs::write(&f, serde_json::to_vec(&d).unwrap()).unwrap();
        // A marker of a namespace that no longer exists: nothing left to undo.
        let mut other = d.clone();
        other.netns_ino = 1;
        let g = dir.path().join(format!("{dead}-2.json"));
        std::fs::write(&g, serde_json::to_vec(&other).unwrap()).unwrap();
        let log = cleanup_in(dir.path());
        assert_eq!(log.len(), 1, "{log:?}");
        assert!(log[0].contains("undid"), "{log:?}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "0");
        assert!(!f.exists());
        assert!(!g.exists());
        assert!(live.path().exists());
        live.done();
    }

    #[test]
    fn own_start_time_is_read() {
        assert!(start_time(std::process::id()).is_some());
        assert!(start_time(u32::MAX).is_none());
    }
}
