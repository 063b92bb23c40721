//! The connection-tracking table of this host's (or namespace's) kernel: its counters,
//! and its host-wide settings.
//!
//! Counters: the table's entry count (`nf_conntrack_count`, per namespace) and the
//! per-CPU statistics of `/proc/net/stat/nf_conntrack` (hexadecimal columns named by
//! the header line), summed over CPUs.
//!
//! Settings: on current kernels `nf_conntrack_max` and the hash size are read-only in
//! a network namespace other than the host's (EACCES): they are global, so a trial that
//! asks for them sets the host's value ([`Global`]) — under the flock of [`LOCK`], so
//! that two fwbench processes never fight over it — and restores it exactly. What it
//! changes is written to [`SAVED`] first (atomically, in root's private
//! [`super::state::DIR`]): a process that dies holding the settings (SIGKILL; after a
//! power loss `/run`, a tmpfs, is empty and the kernel's defaults are back) leaves the
//! file, and the next fwbench command that touches the host ([`crate::host::at_start`]),
//! `fwbench check`, `fwbench testbed cleanup-host` or the next holder of the lock
//! restores the values it names — only the settings named here ([`JOURNALED`]).
//!
//! The holder keeps the host's namespace open from the moment it takes the lock: an
//! agent whose controller was killed (its parent gone, init's namespace not readable
//! in a container) still restores the values itself.
//!
//! Owns: reading the counters, the global settings' lock, change and restore. Must
//! not: change a per-namespace setting (the gateway agent's guard does that).

use proto::CtStats;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::Path;

/// The lock every fwbench process holds while it changes the host's conntrack settings.
pub const LOCK: &str = "/run/fwbench/conntrack.lock";
/// The settings a lock holder changed, with their values before (its crash marker).
pub const SAVED: &str = "/run/fwbench/conntrack-saved.json";
/// `nf_conntrack_max` (global on this kernel: read-only in a namespace).
pub const MAX: &str = "/proc/sys/net/netfilter/nf_conntrack_max";
/// The hash's bucket count (read-only in a namespace).
pub const BUCKETS: &str = "/proc/sys/net/netfilter/nf_conntrack_buckets";
/// The module parameter that resizes the hash (writable from the host's namespace only).
pub const HASHSIZE: &str = "/sys/module/nf_conntrack/parameters/hashsize";
/// The only host files a journal may name: what [`Global`] sets.
pub const JOURNALED: [&str; 2] = [MAX, HASHSIZE];
/// Unreplied UDP flows' timeout (per namespace).
pub const UDP_TIMEOUT: &str = "/proc/sys/net/netfilter/nf_conntrack_udp_timeout";
const COUNT: &str = "/proc/sys/net/netfilter/nf_conntrack_count";
const STAT: &str = "/proc/net/stat/nf_conntrack";

/// Why the host's conntrack settings could not be read, held, changed or journaled.
#[derive(Debug, thiserror::Error)]
pub enum HostCtError {
    /// `/proc/net/stat/nf_conntrack` is not what the kernel writes.
    #[error("{0}")]
    Stat(String),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// fwbench's state directory or journal refused (`host::state`).
    #[error(transparent)]
    State(#[from] super::state::StateError),
    #[error(
        "neither init's nor the parent's network namespace can be opened \
         (/proc/1/ns/net, /proc/PPID/ns/net)"
    )]
    NoHostNetns,
    /// Reading or writing a host file through `nsenter`.
    #[error(transparent)]
    Nsenter(#[from] crate::process::ProcessError),
    #[error("the journal: {0}")]
    Journal(#[from] serde_json::Error),
}

/// Sum the per-CPU rows of `/proc/net/stat/nf_conntrack` (hex, columns named by the
/// header line); `entries` (the first column, the same on every row) is not a counter.
pub fn parse_stat(text: &str) -> Result<CtStats, HostCtError> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or_else(|| HostCtError::Stat("empty conntrack statistics".into()))?
        .split_whitespace()
        .collect();
    let mut s = CtStats::default();
    for (n, line) in lines.enumerate() {
        let vals: Vec<&str> = line.split_whitespace().collect();
        if vals.is_empty() {
            continue;
        }
        if vals.len() != header.len() {
            return Err(HostCtError::Stat(format!(
                "conntrack statistics row {} has {} columns, the header {}",
                n + 1,
                vals.len(),
                header.len()
            )));
        }
        for (name, v) in header.iter().zip(&vals) {
            let v = u64::from_str_radix(v, 16).map_err(|_| {
                HostCtError::Stat(format!("conntrack statistics: {name} = '{v}' is not hex"))
            })?;
            let field = match *name {
                "found" => &mut s.found,
                "invalid" => &mut s.invalid,
                "insert" => &mut s.insert,
                "insert_failed" => &mut s.insert_failed,
                "drop" => &mut s.drop,
                "early_drop" => &mut s.early_drop,
                "clashres" => &mut s.clash_resolve,
                "search_restart" => &mut s.search_restart,
                _ => continue,
            };
            *field += v;
        }
    }
    Ok(s)
}

/// This namespace's conntrack counters (`None`: no conntrack here — module not loaded).
pub fn read_stats() -> Option<CtStats> {
    let mut s = parse_stat(&std::fs::read_to_string(STAT).ok()?).ok()?;
    s.count = read_u64(COUNT).unwrap_or(0);
    Some(s)
}

/// A number in a proc/sys file of this namespace.
pub fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Whether this namespace may set `path` itself (a namespace-local setting), else the
/// host's value must be set through [`Global`]. Detected by opening it for writing
/// (nothing is written).
pub fn settable_here(path: &str) -> bool {
    std::fs::OpenOptions::new().write(true).open(path).is_ok()
}

/// Most entries a table fill puts in (issue 26: a million flows on this machine).
pub const MAX_FILL: u32 = 1_000_000;

/// First port of the fill's entries; each source address takes [`FILL_PORTS`] of them.
const FILL_PORT: u32 = 1024;
const FILL_PORTS: u32 = 60_000;

/// `conntrack -R` input for a table fill: `n` idle UDP entries (replied, so they are
/// not evicted early) from 198.18.224.0/19 — client-side addresses no testbed host
/// uses — to `dst` port 9, each living `timeout_s`.
pub fn fill_lines(n: u32, dst: std::net::Ipv4Addr, timeout_s: u32) -> String {
    let mut out = String::with_capacity(n as usize * 110);
    for i in 0..n {
        let host = i / FILL_PORTS;
        let src = std::net::Ipv4Addr::new(198, 18, 224 + (host / 256) as u8, (host % 256) as u8);
        let sport = FILL_PORT + i % FILL_PORTS;
        out += &format!(
            "-I -p udp -s {src} -d {dst} --sport {sport} --dport 9 \
             --status SEEN_REPLY,ASSURED -t {timeout_s}\n"
        );
    }
    out
}

/// What [`SAVED`] holds: who changed the host's settings, and their values before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Saved {
    pid: u32,
    start: u64,
    /// (file, value before), in the order changed.
    items: Vec<(String, String)>,
}

/// The host's conntrack settings, held: the lock is taken, every change is saved
/// before it is made, and dropping it restores each value exactly (newest first).
pub struct Global {
    lock: Option<File>,
    saved: Saved,
    saved_path: std::path::PathBuf,
    /// The host's network namespace, opened when the lock was taken.
    host_ns: Option<File>,
}

impl Global {
    /// Take [`LOCK`] (waiting for its holder), first restoring what a dead holder left.
    pub fn hold() -> Result<Global, HostCtError> {
        Global::hold_at(Path::new(LOCK), Path::new(SAVED))
    }

    fn hold_at(lock: &Path, saved: &Path) -> Result<Global, HostCtError> {
        if let Some(d) = lock.parent() {
            super::state::prepare(d).map_err(HostCtError::State)?;
        }
        let io = |what, source| HostCtError::Io {
            what,
            path: lock.to_path_buf(),
            source,
        };
        // The file stays (never removed): every process locks the same inode.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock)
            .map_err(|e| io("opening", e))?;
        crate::sys::flock_exclusive(&file, true).map_err(|e| io("locking", e))?;
        for m in recover_at(saved, &JOURNALED) {
            tracing::warn!("{m}");
        }
        // Opened now, while the parent (in the host's namespace) is alive.
        let host_ns = host_netns().ok().and_then(|p| File::open(p).ok());
        let pid = std::process::id();
        Ok(Global {
            lock: Some(file),
            saved: Saved {
                pid,
                start: super::marker::start_time(pid).unwrap_or(0),
                items: vec![],
            },
            saved_path: saved.to_path_buf(),
            host_ns,
        })
    }

    /// `nsenter`'s argument for the host's namespace: the one held open, else found now.
    fn ns_arg(&self) -> Result<String, HostCtError> {
        use std::os::fd::AsRawFd;
        match &self.host_ns {
            Some(f) => Ok(format!(
                "--net=/proc/{}/fd/{}",
                std::process::id(),
                f.as_raw_fd()
            )),
            None => Ok(format!("--net={}", host_netns()?)),
        }
    }

    /// Set the host's `path` to `value` (noted first), and return the value in force
    /// after (the hash size rounds up to a page of buckets).
    pub fn set(&mut self, path: &str, value: &str) -> Result<String, HostCtError> {
        let ns = self.ns_arg()?;
        let old = host_read(&ns, path)?;
        self.saved.items.push((path.to_owned(), old.clone()));
        self.write_saved()?;
        host_write(&ns, path, value)?;
        host_read(&ns, path)
    }

    fn write_saved(&self) -> Result<(), HostCtError> {
        let text = serde_json::to_string(&self.saved)?;
        super::state::write_atomic(&self.saved_path, text.as_bytes()).map_err(HostCtError::State)
    }

    /// Restore every value changed, newest first; the errors (a value that did not
    /// come back) as messages.
    pub fn restore(&mut self) -> Vec<String> {
        let mut errors = vec![];
        let ns = match self.ns_arg() {
            Ok(ns) => ns,
            Err(e) => {
                return vec![format!(
                    "{e}: {} stays for the next fwbench command",
                    self.saved_path.display()
                )]
            }
        };
        while let Some((path, old)) = self.saved.items.pop() {
            match host_write(&ns, &path, &old).and_then(|_| host_read(&ns, &path)) {
                Ok(now) if now == old => {}
                Ok(now) => errors.push(format!("{path}: restored to {old}, reads {now}")),
                Err(e) => errors.push(format!("restoring {path} to {old}: {e}")),
            }
        }
        if errors.is_empty() {
            let _ = std::fs::remove_file(&self.saved_path);
        }
        errors
    }
}

impl Drop for Global {
    fn drop(&mut self) {
        for e in self.restore() {
            tracing::error!("conntrack settings: {e}");
        }
        if let Some(f) = self.lock.take() {
            crate::sys::flock_release(&f);
        }
    }
}

/// Restore what a dead holder of the settings left in [`SAVED`] (the caller holds the
/// lock), only files named in `allowed`; what was done, as messages.
fn recover_at(saved: &Path, allowed: &[&str]) -> Vec<String> {
    let text = match super::state::read_owned(saved) {
        Ok(Some(t)) => t,
        Ok(None) => return vec![],
        Err(e) => return vec![e.to_string()],
    };
    let Ok(s) = serde_json::from_str::<Saved>(&text) else {
        return vec![format!("{}: not fwbench's; left alone", saved.display())];
    };
    if super::marker::runs(s.pid, s.start) && s.pid != std::process::id() {
        return vec![];
    }
    if let Some((bad, _)) = s.items.iter().find(|(p, _)| !allowed.contains(&p.as_str())) {
        return vec![format!(
            "{}: names {bad}, not a setting fwbench changes; left alone",
            saved.display()
        )];
    }
    let ns = match host_netns() {
        Ok(p) => format!("--net={p}"),
        Err(e) => return vec![format!("conntrack (pid {}): {e}", s.pid)],
    };
    let mut done = vec![];
    for (path, old) in s.items.iter().rev() {
        done.push(match host_write(&ns, path, old) {
            Ok(()) => format!("conntrack (pid {}): restored {path} to {old}", s.pid),
            Err(e) => format!("conntrack (pid {}): could not restore {path}: {e}", s.pid),
        });
    }
    let _ = std::fs::remove_file(saved);
    done
}

/// `fwbench testbed cleanup-host`, `fwbench check` and the start of every command that
/// touches the host ([`crate::host::at_start`]): restore the host's conntrack settings
/// a killed process left changed (only when no live process holds them).
pub fn recover() -> Vec<String> {
    if std::fs::symlink_metadata(SAVED).is_err() {
        return vec![];
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(LOCK)
    else {
        return vec![];
    };
    match crate::sys::flock_exclusive(&file, false) {
        Ok(true) => {
            let done = recover_at(Path::new(SAVED), &JOURNALED);
            crate::sys::flock_release(&file);
            done
        }
        _ => vec![],
    }
}

/// The host's network namespace, as a file: init's where this process may open it,
/// else its parent's — the process that launched the agent (the controller through
/// `ip netns exec`, or the shell of an SSH session) runs in the host's namespace.
pub fn host_netns() -> Result<String, HostCtError> {
    let parent = format!("/proc/{}/ns/net", std::os::unix::process::parent_id());
    ["/proc/1/ns/net".to_string(), parent]
        .into_iter()
        .find(|p| std::fs::read_link(p).is_ok())
        .ok_or(HostCtError::NoHostNetns)
}

/// This process runs in the host's network namespace (a setting made here is the
/// host's).
pub fn in_host_netns() -> bool {
    let here = std::fs::read_link("/proc/self/ns/net").ok();
    here.is_some() && host_netns().ok().and_then(|p| std::fs::read_link(p).ok()) == here
}

/// Read a file as the host's network namespace sees it (`ns`: `--net=FILE`).
fn host_read(ns: &str, path: &str) -> Result<String, HostCtError> {
    let f = crate::process::Cmd::new("nsenter", &[ns, "cat", path]).run()?;
    Ok(f.stdout.trim().to_owned())
}

/// Write a file from the host's network namespace (its sysctls are the global ones).
fn host_write(ns: &str, path: &str, value: &str) -> Result<(), HostCtError> {
    let args = [ns, "tee", path];
    let text = format!("{value}\n");
    crate::process::Cmd::new("nsenter", &args)
        .input(&text)
        .run()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_TEXT: &str = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n\
00001388  00000001 00000002 00000000 00000003 00000000 00000000 00000000 00000000 00000004 00000bb8 00000005 00000000  00000000 00000000 00000000 00000006\n\
00001388  00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 0000000a 00000000 00000000  00000000 00000000 00000000 00000000\n";

    #[test]
    fn a_fill_is_distinct_entries_in_fwbenchs_ranges() {
        let t = fill_lines(120_001, std::net::Ipv4Addr::new(198, 19, 0, 2), 60);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 120_001);
        let distinct: std::collections::BTreeSet<&str> = lines.iter().copied().collect();
        assert_eq!(distinct.len(), lines.len());
        assert!(lines[0].starts_with("-I -p udp -s 198.18.224.0 -d 198.19.0.2 --sport 1024 "));
        assert!(
            lines[120_000].contains("-s 198.18.224.2 ") && lines[120_000].contains("--sport 1024 ")
        );
        // A million fit in the /19.
        let last = (MAX_FILL - 1) / FILL_PORTS;
        assert!(224 + last / 256 < 256);
    }

    #[test]
    fn per_cpu_rows_are_summed_by_their_header_names() {
        let s = parse_stat(STAT_TEXT).unwrap();
        assert_eq!(s.drop, 3000 + 10);
        assert_eq!(
            (s.clash_resolve, s.found, s.invalid, s.insert_failed),
            (2, 2, 3, 4)
        );
        assert_eq!((s.early_drop, s.search_restart, s.count), (5, 6, 0));
        assert!(parse_stat("").is_err());
        for (text, says) in [("a b\n1 zz\n", "not hex"), ("a b\n1\n", "columns")] {
            let e = parse_stat(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_dead_holders_saved_settings_are_restored_a_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("saved.json");
        let target = dir.path().join("max");
        std::fs::write(&target, "5000").unwrap();
        // A live holder (this process): left alone.
        let me = std::process::id();
        let live = Saved {
            pid: me,
            start: crate::host::marker::start_time(me).unwrap(),
            items: vec![(target.display().to_string(), "262144".into())],
        };
        std::fs::write(&saved, serde_json::to_string(&live).unwrap()).unwrap();
        // (recover_at treats this process's own file as stale: a test stands in with
        // another live process.)
        let mut c = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let other = Saved {
            pid: c.id(),
            start: crate::host::marker::start_time(c.id()).unwrap(),
            ..live.clone()
        };
        std::fs::write(&saved, serde_json::to_string(&other).unwrap()).unwrap();
        let allowed = [target.to_str().unwrap()];
        assert!(recover_at(&saved, &allowed).is_empty());
        assert!(saved.exists());
        c.kill().unwrap();
        c.wait().unwrap();
        // Its owner gone: restored (through nsenter where it may run), file removed.
        // A file it does not name: refused, left for a look.
        let other_file = recover_at(&saved, &[MAX]);
        assert!(
            other_file[0].contains("not a setting fwbench changes"),
            "{other_file:?}"
        );
        assert!(saved.exists());
        let done = recover_at(&saved, &allowed);
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!saved.exists());
        if crate::sys::euid() == 0 {
            assert_eq!(std::fs::read_to_string(&target).unwrap().trim(), "262144");
        }
    }
}
