//! Host metadata per role of a run (kernel, CPU, NIC driver and offloads, sysctls of
//! each testbed host), beside the controller's own host row.
//!
//! Kept in a table of its own, `role_hosts`, made when a run first records role hosts
//! (so older files stay as they are; reading one without the table gives none).

use crate::{Result, Store};
use rusqlite::params;
use serde::{Deserialize, Serialize};

/// One role's host as the run found it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleHost {
    /// client, gateway or server.
    pub role: String,
    /// How it is reached ("ssh root@…", "netns …", "external").
    pub place: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: u32,
    /// The interface the traffic uses there, if the testbed names one.
    #[serde(default)]
    pub interface: Option<String>,
    /// Its driver (`ethtool -i`, else `/sys/class/net/IF/device/driver`).
    #[serde(default)]
    pub driver: Option<String>,
    /// Offloads as `ethtool -k` shows them (feature, on/off).
    #[serde(default)]
    pub offloads: Vec<(String, String)>,
    #[serde(default)]
    pub sysctls: Vec<(String, String)>,
    /// A port moved for the run: how it was found (addresses, MTU, state).
    #[serde(default)]
    pub port: Option<String>,
}

const TABLE: &str = "CREATE TABLE IF NOT EXISTS role_hosts (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    role TEXT NOT NULL,
    meta TEXT NOT NULL
)";

impl Store {
    /// Record the role hosts of run `run_id` (replacing any recorded before).
    pub fn set_role_hosts(&self, run_id: i64, hosts: &[RoleHost]) -> Result<()> {
        self.execute(TABLE, [])?;
        self.execute("DELETE FROM role_hosts WHERE run_id = ?1", params![run_id])?;
        for h in hosts {
            self.execute(
                "INSERT INTO role_hosts (run_id, role, meta) VALUES (?1, ?2, ?3)",
                params![run_id, h.role, serde_json::to_string(h)?],
            )?;
        }
        Ok(())
    }

    /// The role hosts of run `run_id`, in the order recorded (none if never recorded).
    pub fn role_hosts(&self, run_id: i64) -> Result<Vec<RoleHost>> {
        let exists: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'role_hosts'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))?;
        if exists == 0 {
            return Ok(vec![]);
        }
        let metas: Vec<String> = self.rows(
            "SELECT meta FROM role_hosts WHERE run_id = ?1 ORDER BY rowid",
            params![run_id],
            |r| r.get(0),
        )?;
        Ok(metas
            .iter()
            .filter_map(|m| serde_json::from_str(m).ok())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_hosts_round_trip_and_old_files_have_none() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("r.db")).unwrap();
        let run = s.begin_run(&crate::NewRun::default()).unwrap();
        assert!(s.role_hosts(run).unwrap().is_empty());
        let h = RoleHost {
            role: "gateway".into(),
            place: "ssh root@198.18.0.1".into(),
            kernel: "6.1.0".into(),
            cpu_model: "x".into(),
            cpus: 4,
            interface: Some("enp1s0".into()),
            driver: Some("ixgbe".into()),
            offloads: vec![("generic-receive-offload".into(), "on".into())],
            sysctls: vec![("net.ipv4.ip_forward".into(), "1".into())],
            port: None,
        };
        let c = RoleHost {
            role: "client".into(),
            ..h.clone()
        };
        s.set_role_hosts(run, &[c.clone(), h.clone()]).unwrap();
        assert_eq!(s.role_hosts(run).unwrap(), [c, h.clone()]);
        s.set_role_hosts(run, std::slice::from_ref(&h)).unwrap();
        assert_eq!(s.role_hosts(run).unwrap(), std::slice::from_ref(&h));
        assert_eq!(s.runs().unwrap()[0].role_hosts, [h]);
    }
}
