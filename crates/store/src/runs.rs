//! Runs: one invocation of fwbench that stores trials, and the host it ran on.
//!
//! Owns: the `hosts` and `runs` rows, a run's status (running, complete, interrupted,
//! failed; resume) and its recovery key: a random value made when the run begins (or is
//! resumed), which a recovery file must carry to be imported into this file. A
//! `running` run records its process ([`Owner`]): one whose process is gone (SIGKILL,
//! an abort for want of memory) reads as `interrupted`, with why, and is written so at
//! the next open for writing.
//! Must not: touch trials (`trials`) or decide when a run is resumed (the controller).

use crate::{Result, RoleHost, Store, StoreError};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// Version 8: the process of a `running` run (`owner`, an [`Owner`] as JSON) and why a
/// run ended unfinished (`ended_why`).
pub(crate) const SCHEMA_V8: &str = "
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE runs ADD COLUMN ended_why TEXT;
";

/// Version 9: labels given at run time (`--tag KEY=VALUE`), for trending by them.
pub(crate) const SCHEMA_V9: &str = "
CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
";

/// The process that runs a run: its host, that host's boot, its PID and start time
/// (clock ticks since boot, `/proc/PID/stat` field 22: a reused PID has another).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub host: String,
    pub boot: String,
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    /// This process (`None` where /proc does not say).
    pub fn this_process() -> Option<Owner> {
        let pid = std::process::id();
        Some(Owner {
            host: read_trimmed("/proc/sys/kernel/hostname")?,
            boot: read_trimmed("/proc/sys/kernel/random/boot_id")?,
            pid,
            start: start_time(pid)?,
        })
    }

    /// Why this owner no longer runs its run, seen from this host: `None` while it
    /// may (it runs, or it is another host's and cannot be seen from here).
    pub fn gone(&self) -> Option<String> {
        let here = Owner::this_process()?;
        if here.host != self.host {
            return None;
        }
        if here.boot != self.boot {
            return Some(format!(
                "its process (pid {}) ran before {} was restarted",
                self.pid, self.host
            ));
        }
        if start_time(self.pid) == Some(self.start) {
            return None;
        }
        Some(format!(
            "its process (pid {}) ended without finishing it (killed, or aborted: e.g. out \
             of memory)",
            self.pid
        ))
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

/// Start time of process `pid` (`None`: no such process, or a zombie: it runs no more).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    // After the command: state (field 3) … starttime (field 22).
    if matches!(fields.next()?, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// A run's status now: a `running` one whose owner is gone is `interrupted`, with why.
fn status_now(status: String, owner: Option<&str>) -> (String, Option<String>) {
    if status != "running" {
        return (status, None);
    }
    let owner = owner.and_then(|o| serde_json::from_str::<Owner>(o).ok());
    match owner.and_then(|o| o.gone()) {
        Some(why) => ("interrupted".into(), Some(why)),
        None => (status, None),
    }
}

/// Host metadata recorded once per run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cores: u32,
    pub fwbench_version: String,
    pub sysctls: Vec<(String, String)>,
    pub tools: Vec<(String, String)>,
    /// Each file of `/sys/devices/system/cpu/vulnerabilities` (name, its one line:
    /// `Not affected`, `Mitigation: …`, `Vulnerable`). Stored in the `hosts.sysctls`
    /// column under the file's path ([`MITIGATION_PREFIX`]), so no schema change; runs
    /// recorded before 2026-11-28 have none.
    #[serde(default)]
    pub mitigations: Vec<(String, String)>,
}

/// Name/value pairs as `hosts` stores them (sysctls, tools, mitigations).
type Pairs = Vec<(String, String)>;

/// The name under which a mitigation is stored among `hosts.sysctls`: its file's path.
pub const MITIGATION_PREFIX: &str = "/sys/devices/system/cpu/vulnerabilities/";

impl Host {
    /// Every fact recorded about the host, by name: `hostname kernel cpu_model cores
    /// fwbench_version`, `tool.NAME` (its version line as recorded: `tool.nft`,
    /// `tool.iptables-legacy`, `tool.ipset` …), `sysctl.NAME`
    /// (`sysctl.net.core.bpf_jit_enable`) and `mitigation.NAME`
    /// (`mitigation.spectre_v2`). What a trend lines runs up by (docs/results.md).
    pub fn facts(&self) -> std::collections::BTreeMap<String, String> {
        let mut f = std::collections::BTreeMap::new();
        f.insert("hostname".to_string(), self.hostname.clone());
        f.insert("kernel".into(), self.kernel.clone());
        f.insert("cpu_model".into(), self.cpu_model.clone());
        f.insert("cores".into(), self.cores.to_string());
        f.insert("fwbench_version".into(), self.fwbench_version.clone());
        let groups = [
            ("tool.", &self.tools),
            ("sysctl.", &self.sysctls),
            ("mitigation.", &self.mitigations),
        ];
        for (prefix, pairs) in groups {
            for (k, v) in pairs {
                f.insert(format!("{prefix}{k}"), v.clone());
            }
        }
        f
    }

    /// The `hosts.sysctls` column: the sysctls, then the mitigations under their path.
    fn sysctls_column(&self) -> Pairs {
        let mitigations =
            (self.mitigations.iter()).map(|(k, v)| (format!("{MITIGATION_PREFIX}{k}"), v.clone()));
        self.sysctls.iter().cloned().chain(mitigations).collect()
    }

    /// Split a `hosts.sysctls` column into sysctls and mitigations (by the path prefix).
    fn split_sysctls_column(pairs: Pairs) -> (Pairs, Pairs) {
        let (mut sysctls, mut mitigations) = (vec![], vec![]);
        for (k, v) in pairs {
            match k.strip_prefix(MITIGATION_PREFIX) {
                Some(name) => mitigations.push((name.to_string(), v)),
                None => sysctls.push((k, v)),
            }
        }
        (sysctls, mitigations)
    }
}

#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub started_at: String,
    pub scenario: String,
    pub scenario_text: Option<String>,
    pub seed: u64,
    pub command: String,
    pub host: Host,
    /// Axis values that select the run's baseline trials, e.g. `{"engine": "none"}`.
    pub baseline: Option<serde_json::Value>,
    /// Labels given at run time (`--tag KEY=VALUE`), validated by the caller.
    pub tags: Vec<(String, String)>,
}

/// A stored run read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub scenario: String,
    pub scenario_text: Option<String>,
    pub seed: u64,
    pub command: String,
    pub status: String,
    /// Why a run ended unfinished, where known (its process gone while `running`).
    pub ended_why: Option<String>,
    pub baseline: Option<serde_json::Value>,
    pub host: Host,
    /// Metadata of each testbed role's host (testbed files; empty otherwise).
    pub role_hosts: Vec<RoleHost>,
    /// Labels given at run time (`--tag KEY=VALUE`), by key.
    pub tags: Vec<(String, String)>,
}

impl Store {
    /// Begin a run: its host row (an identical one of an earlier run reused: the host's
    /// facts — mitigations, sysctls, tools — are a few KiB a run otherwise), its run row
    /// (`running`) and its recovery key.
    pub fn begin_run(&self, run: &NewRun) -> Result<i64> {
        let h = &run.host;
        let (sysctls, tools) = (
            serde_json::to_string(&h.sysctls_column())?,
            serde_json::to_string(&h.tools)?,
        );
        let host = params![
            h.hostname,
            h.kernel,
            h.cpu_model,
            h.cores,
            h.fwbench_version,
            sysctls,
            tools
        ];
        let same: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM hosts WHERE hostname = ?1 AND kernel = ?2 AND cpu_model = ?3
                 AND cores = ?4 AND fwbench_version = ?5 AND sysctls = ?6 AND tools = ?7
                 ORDER BY id DESC LIMIT 1",
                host,
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let host_id = match same {
            Some(id) => id,
            None => {
                self.execute(
                    "INSERT INTO hosts (hostname, kernel, cpu_model, cores, fwbench_version, sysctls, tools)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    host,
                )?;
                self.conn.last_insert_rowid()
            }
        };
        let key = new_key()?;
        self.execute(
            "INSERT INTO runs (started_at, scenario, scenario_text, seed, command, host_id, status, baseline, recovery_key, owner)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9)",
            params![
                run.started_at,
                run.scenario,
                run.scenario_text,
                run.seed as i64,
                run.command,
                host_id,
                run.baseline.as_ref().map(|b| b.to_string()),
                key,
                owner_json()
            ],
        )?;
        let id = self.conn.last_insert_rowid();
        self.run_keys.borrow_mut().insert(id, key);
        self.set_run_tags(id, &run.tags)?;
        Ok(id)
    }

    /// Label run `run_id` with `tags` (a key given again takes its new value).
    pub fn set_run_tags(&self, run_id: i64, tags: &[(String, String)]) -> Result<()> {
        for (k, v) in tags {
            self.execute(
                "INSERT OR REPLACE INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)",
                params![run_id, k, v],
            )?;
        }
        Ok(())
    }

    /// The labels of run `run_id`, by key.
    pub fn run_tags(&self, run_id: i64) -> Result<Vec<(String, String)>> {
        self.rows(
            "SELECT key, value FROM run_tags WHERE run_id = ?1 ORDER BY key",
            params![run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// Mark a run finished (`complete`, `interrupted`, `failed`).
    pub fn finish_run(&self, run_id: i64, finished_at: &str, status: &str) -> Result<()> {
        self.execute(
            "UPDATE runs SET finished_at = ?1, status = ?2 WHERE id = ?3",
            params![finished_at, status, run_id],
        )?;
        Ok(())
    }

    /// Every run, oldest first, with its host.
    pub fn runs(&self) -> Result<Vec<RunRow>> {
        let mut runs: Vec<RunRow> = self.rows(
            "SELECT r.id, r.started_at, r.finished_at, r.scenario, r.scenario_text, r.seed,
                    r.command, r.status, r.baseline, h.hostname, h.kernel, h.cpu_model, h.cores,
                    h.fwbench_version, h.sysctls, h.tools, r.owner, r.ended_why
                 FROM runs r JOIN hosts h ON h.id = r.host_id ORDER BY r.id",
            [],
            |r| {
                let json = |s: Option<String>| -> Option<serde_json::Value> {
                    s.and_then(|s| serde_json::from_str(&s).ok())
                };
                let pairs = |s: String| -> Vec<(String, String)> {
                    serde_json::from_str(&s).unwrap_or_default()
                };
                let (status, gone) =
                    status_now(r.get(7)?, r.get::<_, Option<String>>(16)?.as_deref());
                let (sysctls, mitigations) = Host::split_sysctls_column(pairs(r.get(14)?));
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    finished_at: r.get(2)?,
                    scenario: r.get(3)?,
                    scenario_text: r.get(4)?,
                    seed: r.get::<_, i64>(5)? as u64,
                    command: r.get(6)?,
                    status,
                    ended_why: gone.or(r.get(17)?),
                    baseline: json(r.get(8)?),
                    host: Host {
                        hostname: r.get(9)?,
                        kernel: r.get(10)?,
                        cpu_model: r.get(11)?,
                        cores: r.get(12)?,
                        fwbench_version: r.get(13)?,
                        sysctls,
                        tools: pairs(r.get(15)?),
                        mitigations,
                    },
                    role_hosts: vec![],
                    tags: vec![],
                })
            },
        )?;
        for r in &mut runs {
            r.role_hosts = self.role_hosts(r.id)?;
            r.tags = self.run_tags(r.id)?;
        }
        Ok(runs)
    }

    /// The newest run of this scenario text that did not complete (interrupted, killed
    /// while `running`, or stopped as `failed`): the run a rerun resumes.
    pub fn resumable_run(&self, scenario_text: &str) -> Result<Option<RunRow>> {
        Ok(self
            .runs()?
            .into_iter()
            .rev()
            .find(|r| r.scenario_text.as_deref() == Some(scenario_text))
            .filter(|r| r.status != "complete"))
    }

    /// Mark a run as running again (resumed); a run from before schema 6 gets its
    /// recovery key now.
    pub fn reopen_run(&self, run_id: i64) -> Result<()> {
        let key = match self.stored_key(run_id)? {
            Some(key) => key,
            None => new_key()?,
        };
        self.execute(
            "UPDATE runs SET status = 'running', finished_at = NULL, recovery_key = ?2,
                    owner = ?3, ended_why = NULL
                 WHERE id = ?1",
            params![run_id, key, owner_json()],
        )?;
        self.run_keys.borrow_mut().insert(run_id, key);
        Ok(())
    }

    /// The recovery key of run `run_id`: the one this store began or reopened it
    /// with, else the one stored (`None`: no such run, or a run of before schema 6).
    pub(crate) fn run_key(&self, run_id: i64) -> Result<Option<String>> {
        match self.run_keys.borrow().get(&run_id) {
            Some(key) => Ok(Some(key.clone())),
            None => self.stored_key(run_id),
        }
    }

    fn stored_key(&self, run_id: i64) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT recovery_key FROM runs WHERE id = ?1",
                [run_id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(|e| self.sql(e))
    }

    /// Write `interrupted`, with why, for every `running` run whose process is gone
    /// (at the open for writing, so that no run stays `running` once nothing runs it).
    pub(crate) fn end_dead_runs(&self) -> Result<()> {
        let running: Vec<(i64, Option<String>)> = {
            self.rows(
                "SELECT id, owner FROM runs WHERE status = 'running'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
        };
        for (id, owner) in running {
            if let (status, Some(why)) = status_now("running".into(), owner.as_deref()) {
                self.execute(
                    "UPDATE runs SET status = ?2, ended_why = ?3
                         WHERE id = ?1 AND status = 'running'",
                    params![id, status, why],
                )?;
            }
        }
        Ok(())
    }

    /// Status of a run, if it exists.
    pub fn run_status(&self, run_id: i64) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT status FROM runs WHERE id = ?1", [run_id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))
    }
}

/// This process as a run's `owner` (NULL where /proc does not say).
fn owner_json() -> Option<String> {
    Owner::this_process().and_then(|o| serde_json::to_string(&o).ok())
}

/// A new recovery key: 128 random bits from the kernel, in hex.
fn new_key() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(StoreError::Random)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's mitigations are stored beside its sysctls (under their path) and read
    /// back apart from them; an older row (sysctls only) reads with none; `facts` names
    /// every fact once, by group.
    #[test]
    fn host_facts_round_trip_and_are_named_by_group() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("r.db")).unwrap();
        let host = Host {
            hostname: "bench1".into(),
            kernel: "6.12.0".into(),
            cpu_model: "Test CPU".into(),
            cores: 2,
            fwbench_version: "0.1.0".into(),
            sysctls: vec![("net.core.bpf_jit_enable".into(), "1".into())],
            tools: vec![("nft".into(), "nftables v1.1.1".into())],
            mitigations: vec![
                ("spectre_v2".into(), "Mitigation: Retpolines".into()),
                ("meltdown".into(), "Not affected".into()),
            ],
        };
        let new = |host: Host| NewRun {
            host,
            ..Default::default()
        };
        s.begin_run(&new(host.clone())).unwrap();
        let older = Host {
            mitigations: vec![],
            ..host.clone()
        };
        s.begin_run(&new(older.clone())).unwrap();
        let runs = s.runs().unwrap();
        assert_eq!(runs[0].host, host);
        assert_eq!(runs[1].host, older);
        let stored: String = s
            .conn
            .query_row("SELECT sysctls FROM hosts ORDER BY id LIMIT 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(
            stored.contains("/sys/devices/system/cpu/vulnerabilities/spectre_v2"),
            "{stored}"
        );
        let f = host.facts();
        assert_eq!(f["kernel"], "6.12.0");
        assert_eq!(f["cores"], "2");
        assert_eq!(f["tool.nft"], "nftables v1.1.1");
        assert_eq!(f["sysctl.net.core.bpf_jit_enable"], "1");
        assert_eq!(f["mitigation.spectre_v2"], "Mitigation: Retpolines");
        assert_eq!(f.len(), 5 + 1 + 1 + 2);
    }

    /// Each run gets its own key, kept in the file; a resumed run keeps it, and a run
    /// without one (from before schema 6) gets one when it is resumed.
    #[test]
    fn runs_have_their_own_recovery_key_and_keep_it_on_resume() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        let s = Store::open(&p).unwrap();
        let (a, b) = (
            s.begin_run(&NewRun::default()).unwrap(),
            s.begin_run(&NewRun::default()).unwrap(),
        );
        let ka = s.run_key(a).unwrap().unwrap();
        assert_eq!(ka.len(), 32, "{ka}");
        assert_ne!(Some(ka.clone()), s.run_key(b).unwrap());
        drop(s);
        let s = Store::open(&p).unwrap();
        assert_eq!(s.run_key(a).unwrap(), Some(ka.clone()), "stored");
        s.reopen_run(a).unwrap();
        assert_eq!(s.run_key(a).unwrap(), Some(ka), "resumed");
        s.conn
            .execute("UPDATE runs SET recovery_key = NULL WHERE id = ?1", [b])
            .unwrap();
        assert_eq!(s.run_key(b).unwrap(), None);
        s.reopen_run(b).unwrap();
        assert!(s.run_key(b).unwrap().is_some());
        assert_eq!(s.run_key(b + 1).unwrap(), None, "no such run");
    }

    /// `prlimit --as 50M fwbench …` aborted without a word and left its run `running`.
    /// A run whose process is gone (its PID now another process's start, or a boot
    /// before this one) reads as `interrupted` with why, and the next open for writing
    /// writes it so; a live owner's run and another host's stay `running`.
    #[test]
    fn a_running_run_whose_process_is_gone_is_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        let s = Store::open(&p).unwrap();
        let me = Owner::this_process().expect("/proc says who this process is");
        let runs: Vec<i64> = (0..4)
            .map(|_| s.begin_run(&NewRun::default()).unwrap())
            .collect();
        let plant = |run: i64, o: &Owner| {
            s.conn
                .execute(
                    "UPDATE runs SET owner = ?2 WHERE id = ?1",
                    params![run, serde_json::to_string(o).unwrap()],
                )
                .unwrap();
        };
        // runs[0]: this process (alive). runs[1]: this PID with another start time.
        plant(
            runs[1],
            &Owner {
                start: me.start + 1,
                ..me.clone()
            },
        );
        // runs[2]: an earlier boot. runs[3]: another host's process.
        plant(
            runs[2],
            &Owner {
                boot: "earlier".into(),
                ..me.clone()
            },
        );
        plant(
            runs[3],
            &Owner {
                host: "elsewhere".into(),
                start: 1,
                ..me.clone()
            },
        );
        let status = |s: &Store| -> Vec<(String, Option<String>)> {
            s.runs()
                .unwrap()
                .into_iter()
                .map(|r| (r.status, r.ended_why))
                .collect()
        };
        let seen = status(&s);
        assert_eq!(seen[0], ("running".into(), None));
        assert_eq!(seen[1].0, "interrupted");
        let why = seen[1].1.as_deref().unwrap();
        assert!(
            why.contains(&format!("pid {}", me.pid)) && why.contains("killed"),
            "{why}"
        );
        assert_eq!(seen[2].0, "interrupted");
        assert!(
            seen[2].1.as_deref().unwrap().contains("restarted"),
            "{seen:?}"
        );
        assert_eq!(seen[3], ("running".into(), None));
        drop(s);
        // Written at the next open for writing, and read back as written.
        let s = Store::open(&p).unwrap();
        let stored: Vec<String> = runs
            .iter()
            .map(|r| s.run_status(*r).unwrap().unwrap())
            .collect();
        assert_eq!(stored, ["running", "interrupted", "interrupted", "running"]);
        assert_eq!(status(&s), seen);
        // Resumed: running again, by this process, with no reason to end.
        s.reopen_run(runs[1]).unwrap();
        assert_eq!(status(&s)[1], ("running".into(), None));
    }
}
