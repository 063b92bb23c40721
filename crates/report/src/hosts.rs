//! The hosts of a run's testbed roles as a table: what each role ran on (kernel, CPU,
//! NIC driver and offloads, sysctls), from the run's metadata. Runs on a local
//! namespace testbed have none (the run's own host row covers them).

use crate::figure::Table;
use store::RunRow;

/// One row per role host, or `None` when the run recorded none.
pub fn role_hosts_table(run: &RunRow) -> Option<Table> {
    if run.role_hosts.is_empty() {
        return None;
    }
    let pairs = |v: &[(String, String)]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join("; ")
        }
    };
    let rows = run
        .role_hosts
        .iter()
        .map(|h| {
            let nic = match (&h.interface, &h.driver) {
                (Some(i), Some(d)) => format!("{i} ({d})"),
                (Some(i), None) => i.clone(),
                _ => "-".into(),
            };
            let nic = match &h.port {
                Some(p) => format!("{nic}; moved for the run, found {p}"),
                None => nic,
            };
            vec![
                h.role.clone(),
                h.place.clone(),
                if h.kernel.is_empty() {
                    "-".into()
                } else {
                    h.kernel.clone()
                },
                if h.cpus == 0 {
                    "-".into()
                } else {
                    format!("{} ({} CPUs)", h.cpu_model, h.cpus)
                },
                nic,
                pairs(&h.offloads),
                pairs(&h.sysctls),
            ]
        })
        .collect();
    Some(Table::new(
        "Testbed hosts",
        &[
            "role", "host", "kernel", "CPU", "NIC", "offloads", "sysctls",
        ],
        rows,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::RoleHost;

    #[test]
    fn one_row_per_role_and_none_without() {
        let mut run = crate::testing::run_row(1);
        assert!(role_hosts_table(&run).is_none());
        run.role_hosts = vec![
            RoleHost {
                role: "client".into(),
                place: "ssh root@198.18.0.2".into(),
                kernel: "6.1.0".into(),
                cpu_model: "EPYC".into(),
                cpus: 8,
                interface: Some("enp1s0".into()),
                driver: Some("ixgbe".into()),
                offloads: vec![("generic-receive-offload".into(), "on".into())],
                sysctls: vec![],
                port: Some("198.18.200.1/24 mtu 1500 up".into()),
            },
            RoleHost {
                role: "gateway".into(),
                place: "external gateway: no counters".into(),
                ..Default::default()
            },
        ];
        let t = role_hosts_table(&run).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][3], "EPYC (8 CPUs)");
        assert!(
            t.rows[0][4].starts_with("enp1s0 (ixgbe); moved"),
            "{:?}",
            t.rows[0]
        );
        assert_eq!(t.rows[0][5], "generic-receive-offload on");
        assert_eq!(t.rows[1][1], "external gateway: no counters");
        assert_eq!(t.rows[1][2], "-");
    }
}
