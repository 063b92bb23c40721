//! Unit tests of `stored`, beside `stored.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use serde_json::json;

#[test]
fn a_connection_trial_as_fwbench_writes_it_reads_typed() {
    let v = json!({
        "status": "ok", "error": null, "started_at": "a", "finished_at": "b",
        "placement": [{"role": "client", "place": "ns", "requested_cpus": null,
                       "cpus": "1", "pid": 7}],
        "summary": null, "gateway": null,
        "conn": {"mode": "sequential", "parallel": 1, "sessions": 10, "failed": 2,
                 "corrupt": 0, "errors": [["refused", 2]], "elapsed_s": 1.5,
                 "sessions_per_s": 6.6, "bytes": 10, "goodput_bps": 80.0,
                 "session": {"count": 10, "mean_ns": 1e6, "sd_ns": 1e3},
                 "connect": {"count": 10, "mean_ns": 5e5},
                 "ttfb": {"count": 0, "mean_ns": 0.0, "sd_ns": 0.0},
                 "ttlb": {"count": 0, "mean_ns": 0.0, "sd_ns": 0.0},
                 "overhead": {"per_session_s": 0.1, "sessions_charged": 10.0,
                              "overhead_s": 1.0, "transfer_s": 0.5,
                              "net_goodput_bps": null},
                 "hold": {"reached": 5, "limit": 8, "alive_at_stop": 5,
                          "limiter": "nofile", "errno": 24, "open_ms": 3.5},
                 "session_us": [1000, 1200],
                 "server": {"accepted": 10, "bad_requests": 1}},
        "clean_start": false, "start_differences": ["table inet x"]
    });
    let t = StoredTrial::read(&v);
    assert_eq!(t.status, Some(Status::Ok));
    let c = t.conn.as_ref().unwrap();
    assert_eq!(c.errors, vec![("refused".to_string(), 2)]);
    assert_eq!(c.durations(Phase::Connect).unwrap().sd_ns, None);
    assert_eq!(c.overhead.as_ref().unwrap().net_goodput_bps, None);
    assert_eq!(c.hold.as_ref().unwrap().limiter.as_deref(), Some("nofile"));
    assert_eq!(c.session_us, vec![1000.0, 1200.0]);
    assert_eq!(c.server.as_ref().unwrap().bad_requests, Some(1));
    assert_eq!(t.placement.as_ref().unwrap()[0].cpus.as_deref(), Some("1"));
    assert_eq!(t.clean_start, Some(false));
    // The typed view round-trips.
    let back: StoredTrial = serde_json::from_value(serde_json::to_value(&t).unwrap()).unwrap();
    assert_eq!(back, t);
}

#[test]
fn packet_search_and_ping_trials_read_typed() {
    let v = json!({
        "status": "flagged",
        "packet": {"limited_by": {"by": "shared-cpu", "why": "cpu 1"},
                   "conntrack": {"offered": 10, "admitted": 9, "max": 100,
                                 "scope": [["gw", "global"]], "agree": true},
                   "xdp": {"sender": {"ifname": "v", "queues": 1, "mode": "copy",
                                      "need_wakeup": true, "attach": "native"}},
                   "mix": {"mix": "imix", "mean_frame": 353.8,
                           "sizes": [{"frame": 64, "payload": 18, "weight": 7,
                                      "sent": 70, "received": 69}]}},
        "ping": {"rtt": {"count": 3, "min_ns": 1, "mean_ns": 2.5, "p50_ns": 2,
                         "p90_ns": 3, "p99_ns": 3, "p999_ns": 3, "max_ns": 3}},
        "search": {"search": "mlr", "mode": "mlr", "rate_pps": null,
                   "goals": [{"loss_ratio": 0.005, "rate_pps": 100.0}],
                   "curve": [{"x": 5.0, "loss_ratio": 0.1, "pass": false}],
                   "latency": [{"fraction": 0.5, "owd": {"count": 1, "p50_ns": 7}}]}
    });
    let t = StoredTrial::read(&v);
    assert_eq!(t.status, Some(Status::Flagged));
    let p = t.packet.as_ref().unwrap();
    assert_eq!(
        p.limited_by.as_ref().unwrap().by,
        Some(LimitedBy::SharedCpu)
    );
    let ct = p.conntrack.as_ref().unwrap();
    assert_eq!(
        (ct.offered, ct.max, ct.agree),
        (Some(10.0), Some(100), Some(true))
    );
    assert_eq!(ct.scope[0].1, "global");
    let x = p.xdp.as_ref().unwrap().sender.as_ref().unwrap();
    assert_eq!((x.queues, x.need_wakeup), (Some(1), Some(true)));
    let m = p.mix.as_ref().unwrap();
    assert_eq!(m.mix.as_deref(), Some("imix"));
    let row = &m.sizes[0];
    assert_eq!(
        (row.frame, row.weight, row.sent, row.received),
        (Some(64), Some(7), Some(70), Some(69))
    );
    assert_eq!(t.ping.unwrap().rtt.unwrap().mean_ns, Some(2.5));
    let s = t.search.unwrap();
    assert!(s.is(SearchKind::Mlr));
    assert_eq!(s.rate_pps, None);
    assert_eq!(s.goals[0].rate_pps, Some(100.0));
    assert_eq!(s.curve.unwrap()[0].x, Some(5.0));
    assert_eq!(
        s.latency.unwrap()[0].owd.as_ref().unwrap().p50_ns,
        Some(7.0)
    );
}

#[test]
fn the_gateways_firewall_reads_typed() {
    let v = json!({"gateway": {"cpu": [], "firewall": {
        "settings": {"table": "inet fwbench", "counters": true},
        "verdicts": {"ok": true, "rules": [{"chain": "input", "index": 3, "packets": 9},
                                           {"chain": "input"}]}}}});
    let f = StoredTrial::read(&v).gateway.unwrap().firewall.unwrap();
    let settings = f.settings.unwrap();
    assert_eq!(settings["table"], "inet fwbench");
    assert_eq!(settings["counters"], true);
    let rules = f.verdicts.unwrap().rules;
    assert_eq!(
        (rules[0].chain.as_deref(), rules[0].index, rules[1].index),
        (Some("input"), Some(3), None)
    );
}

#[test]
fn old_or_odd_results_read_as_absent_fields_not_errors() {
    // A field in another shape is absent, the rest still reads.
    let v = json!({"status": "weird", "conn": {"sessions": "ten", "failed": 3},
                       "packet": {"limited_by": {"by": "martians"}}, "search": 5});
    let t = StoredTrial::read(&v);
    assert_eq!(t.status, None);
    let c = t.conn.unwrap();
    assert_eq!((c.sessions, c.failed), (None, Some(3.0)));
    // Judged, by a role fwbench does not know.
    assert_eq!(t.packet.unwrap().limited_by, Some(LimitStored::default()));
    assert_eq!(t.search, None);
    assert_eq!(StoredTrial::read(&Value::Null), StoredTrial::default());
    assert_eq!(StoredTrial::read(&json!({"conn": null})).conn, None);
}

#[test]
fn params_read_the_fields_readers_use() {
    let p = StoredParams::read(&json!({"engine": "nft", "rules": 100, "clients": 4,
                                           "label": "a", "topology": "routed",
                                           "packet": {"size": {"payload": 64}}}));
    assert_eq!(p.engine.as_deref(), Some("nft"));
    assert_eq!((p.rules, p.clients), (Some(100), Some(4.0)));
    assert_eq!(StoredParams::read(&json!([])), StoredParams::default());
    let p = StoredParams::read(&json!({"import": "/tmp/a/original.nft",
                                       "packet": {"dport": [5000, 5001], "aim": "input:3"}}));
    assert_eq!(p.import.as_deref(), Some("/tmp/a/original.nft"));
    let packet = p.packet.unwrap();
    assert_eq!(
        (packet.dport, packet.aim.as_deref()),
        (vec![5000, 5001], Some("input:3"))
    );
    // A port given as one number (not a range) reads as none, as `[0]` of it did.
    let p = StoredParams::read(&json!({"packet": {"dport": 5000}}));
    assert!(p.packet.unwrap().dport.is_empty());
}

/// A workload file's command reads back as it was written (a shell would split the line
/// into the same words): `sh -c 'exit 3'`, not `sh -c exit 3`.
#[test]
fn a_commands_line_keeps_its_words_apart() {
    let argv = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(command_line(&argv(&["true"])), "true");
    let line = command_line(&argv(&["sh", "-c", "exit 3"]));
    assert_eq!(line, "sh -c 'exit 3'");
    assert_eq!(shlex::split(&line).unwrap(), ["sh", "-c", "exit 3"]);
}

/// An event's rate, where each workload stores it: a packet trial's in `packet.events`
/// (as `fwbench` writes it), another's at the top; none without a rate or an event.
#[test]
fn an_events_rate_is_read_where_its_workload_keeps_it() {
    let flow = json!({"workload": "flow", "packet": {"events": {"at_s": 1.0, "count": 5,
        "k": 200, "kind": "replace", "method": "batch", "rate": 2.0}}});
    assert_eq!(StoredParams::read(&flow).event_rate(), Some(2.0));
    let echo = json!({"workload": "echo", "events": {"kind": "add", "k": 1, "at_s": 1.0,
        "method": "batch", "rate": 50.0}});
    assert_eq!(StoredParams::read(&echo).event_rate(), Some(50.0));
    let once = json!({"packet": {"events": {"kind": "add", "k": 1, "at_s": 1.0}}});
    assert_eq!(StoredParams::read(&once).event_rate(), None);
    assert_eq!(
        StoredParams::read(&json!({"packet": {}})).event_rate(),
        None
    );
}

/// A trial's doubts are read each alone: one of a kind this version does not know reads
/// with its kind as stored, one that is no `{kind, why}` is kept as its text — none
/// hides the others (a flagged trial whose doubts all vanished would read as clean).
#[test]
fn a_trials_doubts_are_read_each_alone() {
    let t: StoredTrial = serde_json::from_value(serde_json::json!({"doubts": [
        {"kind": "limited_by_fwbench", "why": "the sink fell behind"},
        {"kind": "from_a_later_version", "why": "new"},
        "garbled"
    ]}))
    .unwrap();
    let kinds: Vec<&str> = t.doubts.iter().map(|d| d.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["limited_by_fwbench", "from_a_later_version", "unreadable"]
    );
    assert_eq!(t.doubts[2].why, "\"garbled\"");
}

/// A trial's background load (`--load`) reads as a share of its capacity or of a
/// stated rate, from a packet trial's event or a connection trial's.
#[test]
fn an_events_load_reads_typed() {
    let p = StoredParams::read(&serde_json::json!({"packet": {"events": {
        "rate": 2.0, "load": {"fraction": 0.5, "of": {"pps": 40000.0}}}}}));
    let l = p.event_load().unwrap();
    assert_eq!(
        (l.fraction, l.of.as_ref().and_then(|r| r.pps)),
        (Some(0.5), Some(40000.0))
    );
    let p = StoredParams::read(&serde_json::json!({"events": {"load": {"fraction": 0.25}}}));
    assert_eq!(p.event_load().unwrap().of, None);
    assert_eq!(
        StoredParams::read(&serde_json::json!({})).event_load(),
        None
    );
}
