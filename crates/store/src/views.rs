//! The per-family views: `echo_results`, `packet_results`, `conn_results`.
//!
//! Owns: the views' SQL (one generated block of columns shared by all three), written
//! by the schema step that introduced the current views (`schema::v6`).
//! Must not: name a workload. A row is in a family's view because the trial stored
//! that family (`trials.family`), and a column that only some trials of a family fill
//! is chosen by what the trial stored as its main metric (`trials.main_metric`): a new
//! workload of a family, or a new family's kind that stores an existing family, needs
//! no view change. Changing a view's columns is a schema change (a new `user_version`).

/// The columns every view takes from a trial's parameters and firewall, in this order
/// after `started_at` (one block, so the views cannot drift apart).
const VIEW_COMMON_COLUMNS: &str = "    json_extract(params, '$.topology') AS topology,
    json_extract(params, '$.engine') AS engine,
    json_extract(params, '$.model') AS model,
    json_extract(params, '$.rules') AS rules_requested,
    rules_installed, set_elements,
    json_extract(params, '$.position') AS rule_position,
    json_extract(params, '$.family') AS ip_family,
";

/// One view (since version 4) per family of workloads, whose columns say what they mean
/// (the `trials` headline columns mean different things per workload: `throughput_bps`
/// is goodput for sessions, `lost` failed sessions …).
struct View {
    /// The family whose trials it shows (`trials.family`); the view is `FAMILY_results`.
    family: &'static str,
    /// Whether a row names its workload (a family of several).
    workload: bool,
    /// The family's parameters: JSON path under `params` → column, after the common ones.
    params: &'static [(&'static str, &'static str)],
    /// The family's results, after `duration_s` (SQL, each line ending in a comma).
    results: &'static str,
}

/// The views: echo, packet, conn.
const VIEWS: [View; 3] = [
    View {
        family: "echo",
        workload: false,
        params: &[
            ("proto", "transport"),
            ("clients", "clients"),
            ("frame_size", "frame_size_bytes"),
            ("server", "server_mode"),
        ],
        results: "    throughput_bps AS echo_throughput_bps,
    transactions_per_s AS echo_transactions_per_s,
    rtt_p50_us, rtt_p90_us, rtt_p99_us, rtt_p999_us, rtt_max_us,
    validation_errors AS frames_invalid,
    unsent AS frames_unsent,
    lost AS frames_lost,
",
    },
    View {
        family: "packet",
        workload: true,
        params: &[
            ("packet.size.payload", "udp_payload_bytes"),
            ("packet.size.frame", "ethernet_frame_bytes"),
            ("packet.rate.bps", "rate_requested_bps"),
            ("packet.rate.pps", "rate_requested_pps"),
            ("packet.flows", "flows"),
            ("packet.threads", "sender_threads"),
        ],
        results: "    offered_pps, sent_pps, received_pps, loss_ratio,
    throughput_bps AS received_bps,
    CASE WHEN main_metric = 'rtt_p50_us' THEN lost END AS ping_lost,
    CASE WHEN main_metric = 'rtt_p50_us' THEN rtt_p50_us END AS ping_rtt_p50_us,
    CASE WHEN main_metric = 'rtt_p50_us' THEN rtt_p99_us END AS ping_rtt_p99_us,
    owd_p50_us AS one_way_delay_p50_us, jitter_us,
    CASE WHEN main_metric = 'received_pps' THEN validation_errors END AS duplicates,
",
    },
    View {
        family: "conn",
        workload: true,
        params: &[
            ("conn.parallel", "parallel"),
            ("conn.request", "request_bytes"),
            ("conn.size", "response_bytes"),
            ("conn.limit", "connection_limit"),
        ],
        results: "    json_extract(results, '$.conn.sessions') AS sessions,
    transactions_per_s AS sessions_per_s,
    throughput_bps AS goodput_bps,
    rtt_p50_us AS session_p50_us, rtt_p90_us AS session_p90_us,
    rtt_p99_us AS session_p99_us, rtt_max_us AS session_max_us,
    lost AS sessions_failed,
    validation_errors AS sessions_corrupt,
    json_extract(results, '$.conn.hold.reached') AS connections_opened,
    json_extract(results, '$.conn.hold.alive_at_stop') AS connections_alive_at_end,
",
    },
];

/// The current views' SQL: each family's rows, by the family each trial stored.
pub(crate) fn current() -> String {
    let mut sql = String::new();
    for v in &VIEWS {
        let workload = if v.workload { "workload, " } else { "" };
        let params: String = v
            .params
            .iter()
            .map(|(path, col)| format!("    json_extract(params, '$.{path}') AS {col},\n"))
            .collect();
        sql += &format!(
            "CREATE VIEW {}_results AS SELECT\n    \
             id AS trial_id, run_id, trial_key, rep, {workload}status, error, started_at,\n\
             {VIEW_COMMON_COLUMNS}{params}    duration_s,\n{}    \
             install_ms AS rules_install_ms, verdicts_ok\nFROM trials WHERE family = '{}';\n",
            v.family, v.results, v.family
        );
    }
    sql
}
