//! Packet-rate workloads against the kernel's own counters: flood, flow, ping, ndr,
//! degrade. Privileged (namespaces); run with `--include-ignored` as root.

mod util;

use serde_json::Value;
use std::process::Command;
use util::*;

#[root_test(serial, tb = "forward")]
fn measured_loss_equals_the_dropping_rules_counter() {
    // Every 7th packet of the flood is dropped by a rule with a counter; the rule's first
    // counter counts every flood packet that reached it.
    let t = NftTable::forward(
        &tb,
        "fwbt_numgen",
        "udp dport 9000 counter numgen inc mod 7 == 0 counter drop",
    );
    let counts = || -> (u64, u64) {
        let c = t.counters();
        (c[0], c[1])
    };
    // xdp: the AF_XDP sender and sink (copy mode on veth) through the workload seam
    // (issue 28).
    for (family, sender, sink) in [
        ("4", "udp", "socket"),
        ("6", "udp", "socket"),
        ("4", "raw", "socket"),
        ("4", "xdp", "socket"),
        ("6", "xdp", "socket"),
        ("4", "udp", "xdp"),
        ("4", "xdp", "xdp"),
        ("6", "xdp", "xdp"),
    ] {
        let (reached_before, dropped_before) = counts();
        let v = trial_json(
            "flood",
            &tb.name,
            &[
                "-t", "1", "-A", family, "--rate", "50kpps", "--sender", sender, "--sink", sink,
                "--flows", "3",
            ],
        );
        let r = &v["result"];
        let (reached, dropped) = counts();
        let (reached, dropped) = (reached - reached_before, dropped - dropped_before);
        let ctx = format!("IPv{family} {sender} to {sink}: {v}");
        // Enough packets to count on: half the asked 50 000 (a late sender sends less;
        // 35 600 seen at a load of 11, see docs/tests.md). The counts below are exact.
        let sent = u(&r["sent"]);
        assert!(sent > 25_000, "{ctx}");
        // What never reached the rule is lost before it: a stalled gateway CPU on a loaded
        // VM overflows its receive backlog (85 of 51 294 in a fresh-clone CI run). Small,
        // and the measured loss is it plus the rule's drops, exactly.
        assert!(reached <= sent, "{ctx}");
        let before_rule = sent - reached;
        assert!(before_rule <= sent / 20, "{ctx}");
        // What the rule passed can still be lost after it: a sink stalled on the same VM
        // fills its veth's receive queue and the gateway's egress counts the drop (58 of
        // 51 117 in a fresh-clone CI run, 2026-11-27). The gateway's interface counters
        // are per trial, so the measured loss is all three, exactly.
        let after_rule: u64 = v["gateway"]["interfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| u(&i["tx_dropped"]))
            .sum();
        assert!(after_rule <= sent / 20, "{ctx}");
        assert_eq!(u(&r["lost"]), dropped + before_rule + after_rule, "{ctx}");
        // numgen counts every packet it sees: exactly one in seven is dropped.
        assert!(dropped.abs_diff(reached / 7) <= 1, "{ctx}");
        assert_eq!(u(&r["duplicates"]), 0, "{ctx}");
        let per_flow: u64 = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| u(&x["lost"]))
            .sum();
        assert_eq!(per_flow, u(&r["lost"]), "{ctx}");
        // The rule's drops are the gateway's: it forwarded fewer than it received
        // (issue 28: every flood/flow says which role set its rate).
        assert_eq!(r["limited_by"]["by"], "gateway", "{ctx}");
        let why = r["limited_by"]["why"].as_str().unwrap_or_default();
        assert!(why.contains("the gateway forwarded"), "{ctx}");
        // The roles' CPU figures went into the judgement (sampled during the trial).
        assert!(r["limited_by"]["sender_cpu"].as_f64().is_some(), "{ctx}");
        assert!(r["limited_by"]["gateway_cpu"].as_f64().is_some(), "{ctx}");
        // The AF_XDP sockets' mode, read back after bind: copy on veth, one queue;
        // the sink's program in the driver, nothing dropped before its sockets.
        for (role, used) in [("sender", sender), ("sink", sink)] {
            let x = &r["xdp"][role];
            if used != "xdp" {
                assert!(x.is_null(), "{ctx}");
                continue;
            }
            assert_eq!(x["mode"], "copy", "{ctx}");
            assert_eq!(x["queues"], 1, "{ctx}");
            assert_eq!(x["need_wakeup"], role == "sender", "{ctx}");
            assert!(x["ifname"].is_string(), "{ctx}");
            if role == "sink" {
                assert_eq!(x["kernel_drops"], 0, "{ctx}");
                assert_eq!(x["attach"], "native", "{ctx}");
            }
        }
    }
}

/// Issue 26: an IMIX trial's received size histogram matches the mix, on every sender.
/// Each sender thread repeats a seeded period of 7 + 4 + 1 packets, so a size's count
/// differs from its share of all packets sent by at most its weight per sender thread
/// (less than one period each); received equals sent per size exactly when nothing was
/// lost (and within 1 percentage point of the share when something was). Bits/s are the
/// bytes of the sizes received.
#[root_test(serial, tb = "forward")]
fn imix_trial_received_size_histogram_matches_the_mix() {
    // (family, size, frames of the mix, sender, sink, flows, threads)
    let simple = [64u64, 576, 1500];
    for (family, size, frames, sender, sink, flows, threads) in [
        ("4", "imix", simple, "udp", "socket", "1", "1"),
        ("4", "imix", simple, "udp", "socket", "4", "2"),
        ("4", "imix", simple, "raw", "socket", "3", "1"),
        ("4", "csit-imix", [64, 570, 1518], "xdp", "xdp", "3", "1"),
        // 64-byte frames cannot carry IPv6 and UDP headers: IPv6's smallest is 66.
        (
            "6",
            "78:7,576:4,1500:1",
            [78, 576, 1500],
            "xdp",
            "socket",
            "2",
            "1",
        ),
    ] {
        let v = trial_json(
            "flood",
            &tb.name,
            &[
                "-t",
                "1",
                "-A",
                family,
                "--rate",
                "20kpps",
                "--size",
                size,
                "--sender",
                sender,
                "--sink",
                sink,
                "--flows",
                flows,
                "--threads",
                threads,
            ],
        );
        let r = &v["result"];
        let ctx = format!("IPv{family} {size} {sender} to {sink}: {r}");
        assert_eq!(v["params"]["packet"]["size"]["mix"], size, "{ctx}");
        let mix = &r["mix"];
        assert_eq!(mix["mix"], size, "{ctx}");
        let rows = mix["sizes"].as_array().unwrap();
        assert_eq!(rows.len(), 3, "no size outside the mix arrived: {ctx}");
        let sent = u(&r["sent"]);
        let lost = u(&r["lost"]);
        assert!(sent > 5_000, "{ctx}");
        let received: u64 = rows.iter().map(|x| u(&x["received"])).sum();
        let threads: u64 = threads.parse().unwrap();
        for (row, (frame, weight)) in rows.iter().zip(frames.iter().zip([7u64, 4, 1])) {
            assert_eq!(u(&row["frame"]), *frame, "{ctx}");
            assert_eq!(u(&row["weight"]), weight, "{ctx}");
            let want = sent as f64 * weight as f64 / 12.0;
            let got = u(&row["sent"]);
            assert!(
                (got as f64 - want).abs() <= (weight * threads) as f64,
                "{frame} B: sent {got}, want {want:.1} ± {}: {ctx}",
                weight * threads
            );
            if lost == 0 {
                assert_eq!(u(&row["received"]), got, "{frame} B: {ctx}");
            } else {
                let share = u(&row["received"]) as f64 / received as f64;
                assert!(
                    (share - weight as f64 / 12.0).abs() < 0.01,
                    "{frame} B: {ctx}"
                );
            }
        }
        assert_eq!(
            rows.iter().map(|x| u(&x["sent"])).sum::<u64>(),
            sent,
            "{ctx}"
        );
        // Ethernet bits/s are the frames received, size by size.
        let l2_bytes: u64 = rows
            .iter()
            .map(|x| u(&x["received"]) * u(&x["frame"]))
            .sum();
        let bps = l2_bytes as f64 * 8.0 / f(&r["elapsed_s"]);
        assert!(
            (f(&r["received_l2_bps"]) - bps).abs() <= bps * 1e-9,
            "{bps}: {ctx}"
        );
    }
}

/// Issue 26: `--dsts 4 --sources 4 --flows 8` spreads a flood over four destination
/// addresses (the server's and three the testbed adds, 198.19.1.1–3) and four sources:
/// the gateway's per-address counters see each pair's share (flow i from source i mod 4
/// to destination i mod 4, so two flows each), and together every packet; the sink on
/// the wildcard address receives them all.
#[root_test(serial, tb = "forward")]
fn flows_spread_over_destinations_and_sources_as_the_gateway_counts_them() {
    let dsts = ["198.19.0.2", "198.19.1.1", "198.19.1.2", "198.19.1.3"];
    let body: Vec<String> = dsts
        .iter()
        .map(|d| format!("ip daddr {d} udp dport 9000 counter"))
        .collect();
    let t = NftTable::forward(&tb, "fwbt_spread", &body.join("\n"));
    for sender in ["udp", "raw", "xdp"] {
        let before = t.counters();
        let v = trial_json(
            "flood",
            &tb.name,
            &[
                "-t",
                "1",
                "--rate",
                "20kpps",
                "--flows",
                "8",
                "--sources",
                "4",
                "--dsts",
                "4",
                "--sender",
                sender,
            ],
        );
        let r = &v["result"];
        let ctx = format!("{sender}: {r}");
        assert_eq!(v["params"]["packet"]["dsts"], 4, "{ctx}");
        let sent = u(&r["sent"]);
        assert!(sent > 5_000, "{ctx}");
        assert_eq!(u(&r["lost"]), 0, "{ctx}");
        let got: Vec<u64> = t
            .counters()
            .iter()
            .zip(&before)
            .map(|(a, b)| a - b)
            .collect();
        assert_eq!(got.len(), 4, "{ctx}");
        assert_eq!(
            got.iter().sum::<u64>(),
            sent,
            "every packet to one of the four: {ctx}"
        );
        let flows = r["flows"].as_array().unwrap();
        for (d, n) in got.iter().enumerate() {
            // Destination d takes flows d and d + 4.
            let want: u64 = [d, d + 4].iter().map(|&f| u(&flows[f]["sent"])).sum();
            assert_eq!(*n, want, "destination {}: {ctx}", dsts[d]);
            assert!(*n > 0, "{ctx}");
        }
    }
}

/// Through a slow gateway (8 000 filler rules: a few thousand packets/s, a batch of
/// 64 frames takes ~10 ms) the sender stops at its next batch after the stop, and the
/// time counted runs until that batch is out. (The sender once looked at the stop flag
/// every 64th batch and counted time only to the stop: counts came in steps of 4 096
/// frames, and a short trial's rate was overstated by up to 4 096 frames ÷ its
/// duration.)
///
/// Issue 24: this test compared the packets/s of a 0.5-s and a 3-s flood (within
/// 15 %). On this 2-core VM at a load average of 10–15 the ratio of the two ranged
/// from 0.31 to 4.3 over 30 pairs (the slow path's rate is the CPU the load leaves it),
/// so that comparison, a precision claim, is `bench/short_trials.sh`. What is asserted
/// here holds under load:
/// * the counts are not in steps of 64 batches of each other (the old sender's were
///   all 4 032 more than a multiple of 4 096; one that looks at its stop every batch
///   stops at any multiple of 64 frames: four counts in steps of 4 096 by chance have
///   odds of 1 in 64³);
/// * the time counted covers the stop and overruns it by at most a batch. Measured
///   (`bench/test_spread.py`, 60 trials at a load of 10–15): 3–49 ms; the bound is
///   250 ms, or the longest one-way delay of the trial when the path itself held
///   packets longer (once a 3-s trial's last batch was held 3.7 s, its packets up to
///   4.8 s).
///
/// Breaks tried (docs/tests.md): the stop looked at every 64th batch fails the first
/// check in every run; that with the time counted to the last send fails the second in
/// 5 of 6 runs.
#[root_test(serial, tb = "forward")]
fn a_flood_through_a_slow_gateway_stops_within_a_batch_of_its_end() {
    let filler: String = (0..8000)
        .map(|i| {
            format!(
                "ip saddr 203.0.113.{} udp dport {} drop\n",
                i % 250,
                1 + i / 250
            )
        })
        .collect();
    let _t = NftTable::forward(&tb, "fwbt_slow", &filler);
    let mut counts = vec![];
    for secs in [0.5, 3.0, 0.5, 0.5] {
        let t = secs.to_string();
        let v = trial_json(
            "flood",
            &tb.name,
            &cmd!("-t", &t, "--frame 64 --pin-client 0 --pin-server 0"),
        );
        let r = &v["result"];
        let ctx = format!("{secs} s: {r}");
        // Slow, and through: (under load the path once held a 0.5-s trial's first
        // batches 4.5 s, 41 packets/s over its 4.7 s; that is a stall the elapsed
        // check below accounts for, not a gateway that is not slow).
        let rate = f(&r["received_pps"]);
        assert!(
            u(&r["received"]) > 0 && rate < 60_000.0,
            "the gateway is not slow: {ctx}"
        );
        let over = f(&r["elapsed_s"]) - secs;
        let held = u(&r["owd"]["max_ns"]) as f64 / 1e9;
        assert!(
            over >= 0.0 && over <= held.max(0.25),
            "elapsed {secs} s + {over} s (longest one-way delay {held} s): {ctx}"
        );
        counts.push(u(&r["sent"]));
    }
    assert!(
        counts.iter().any(|n| n % 4096 != counts[0] % 4096),
        "sent {counts:?}: in steps of 64 batches of 64 frames"
    );
}

#[root_test(serial, tb = "forward")]
fn paced_flow_holds_its_rate_within_its_measured_spread() {
    // (rate, packets/s it means for 128-byte payloads, the lowest share of it the
    // sender must get out). Tolerances from measured spread (docs/tests.md): 16 trials
    // of 2 s with the debug build at a load average of 5 on this 2-core VM: at 15M
    // (14 648 pps) sent and received were within 0.02 % of the rate, so 1 % is 50× the
    // spread; at 100 kpps the sender fell behind by up to 15.7 % (open loop: a late
    // sender sends less, it never sends more). Issue 24, 20 more trials each at a load
    // of 10–14 (`bench/test_spread.py`): 15M within 0.22 %; 100 kpps 0.546–1.0 of the
    // rate (the sender's CPU share), so its floor is a quarter (1.65× the worst
    // shortfall): it still catches a rate taken in the wrong unit, and the 15M case
    // the pacer's accuracy. Nothing was lost through the gateway in any of the 56
    // trials: received = sent within 1 %. Those trials ran unpinned, the gateway's
    // processing in the sender's context: with the default placement (the gateway on
    // its own CPU) a stall of that vCPU on this shared VM overflows its receive backlog
    // while the sender goes on (6 424 of 198 359 at 100 kpps in a fresh-clone CI run, the
    // gateway's loss, judged so). `--no-pin` keeps the placement the spread was
    // measured under; `a_default_flood_gives_the_gateway_its_own_cpu` tests the default.
    for (rate, pps, floor) in [("15M", 15e6 / 1024.0, 0.99), ("100kpps", 1e5, 0.25)] {
        let v = trial_json("flow", &tb.name, &["-t", "2", "--rate", rate, "--no-pin"]);
        let r = &v["result"];
        let ctx = format!("{rate}: {r}");
        let sent = f(&r["sent_pps"]);
        assert!(
            sent <= pps * 1.01 && sent >= pps * floor,
            "sent {sent} pps, want {pps} (at least {floor} of it): {ctx}"
        );
        let recv = f(&r["received_pps"]);
        assert!(
            (recv - sent).abs() / sent < 0.01,
            "received {recv} pps of {sent} sent: {ctx}"
        );
        let owd = &r["owd"];
        assert!(u(&owd["count"]) > 0 && u(&owd["min_ns"]) > 0, "{ctx}");
        // RFC 3550 jitter smooths |D| of consecutive one-way delays, each at most the
        // spread of the delays: positive on a real path, never above max − min.
        let (min, max) = (u(&owd["min_ns"]), u(&owd["max_ns"]));
        let jitter = f(&r["jitter_ns"]);
        assert!(
            jitter > 0.0 && jitter <= (max - min) as f64,
            "jitter {jitter} ns, one-way delays {min}..{max} ns: {ctx}"
        );
    }
    // A slow flow: its ~100 packets counted beside each link's few frames of neighbour
    // discovery (ARP) at every interface. It read "limited by sink: the sink counted 103
    // of the 106 packets that reached it", fwbench's limit on a trial that lost none.
    let v = trial_json(
        "flow",
        &tb.name,
        &["-t", "1", "--rate", "100pps", "--no-pin"],
    );
    let r = &v["result"];
    // Nothing lost: neither the sink's limit nor the gateway's (a sender stalled past its
    // last packet's time on this busy VM is the sender's, said so).
    if u(&r["lost"]) == 0 {
        let by = r["limited_by"]["by"].as_str().unwrap_or_default();
        assert!(["nothing", "sender"].contains(&by), "{r}");
    }
}

#[root_test(serial, tb = "forward")]
fn ping_round_trips_are_positive_and_ordered() {
    for size in ["8", "1000"] {
        let v = trial_json("ping", &tb.name, &["-c", "300", "-i", "1ms", "-s", size]);
        let r = &v["result"];
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(
            (u(&r["sent"]), u(&r["received"]), u(&r["lost"])),
            (300, 300, 0),
            "{r}"
        );
        assert!(r["finished"].as_bool().unwrap(), "{r}");
        let t = &r["rtt"];
        let (min, p50, p90, p99, max) = (
            u(&t["min_ns"]),
            u(&t["p50_ns"]),
            u(&t["p90_ns"]),
            u(&t["p99_ns"]),
            u(&t["max_ns"]),
        );
        assert!(
            min > 0 && min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= max,
            "{t}"
        );
        assert!(
            f(&t["mean_ns"]) >= min as f64 && f(&t["mean_ns"]) <= max as f64,
            "{t}"
        );
    }
}

/// `fwbench ndr-newflows` end to end (issue 24 5d: no test ran it): a policer of new
/// connections in the gateway (`ct state new limit rate over 2000/second burst 200`)
/// is what limits the new-flow rate, so the search finds limit + burst in 1-s trials,
/// and the policer's own counter shows it dropped new flows (repeated 5-tuples would be
/// established and pass it).
#[root_test(serial, tb = "forward")]
fn ndr_newflows_finds_a_new_flow_policers_rate() {
    let policer = NftTable::forward(
        &tb,
        "fwbt_newflows",
        "ct state new limit rate over 2000/second burst 200 packets counter drop",
    );
    let v = json_of(&cmd!(
        "ndr-newflows --testbed",
        &tb.name,
        "--json -t 1 --precision 3% --flows 20000 --max-rate 6kpps --latency-at none --no-store"
    ));
    let r = &v["result"];
    let (ndr, fail) = (f(&r["rate_pps"]), f(&r["fail_pps"]));
    let ceiling = 2000.0 + 200.0;
    assert!(
        ndr <= ceiling * 1.005 && ndr >= ceiling * 0.9,
        "ndr {ndr}: {r}"
    );
    assert!(
        fail > ndr && fail <= ceiling * 1.1,
        "bracket {ndr}..{fail}: {r}"
    );
    assert!(r["converged"].as_bool().unwrap(), "{r}");
    assert!(policer.counters()[0] > 0, "the policer dropped new flows");
}

#[root_test(serial, tb = "forward")]
fn ndr_finds_a_policers_rate_within_the_precision() {
    let dir = TempDir::new();
    // In a 1-s trial the bucket passes limit + burst packets. Measured (issue 24,
    // `bench/test_spread.py`, at a load average of 10–16 on this 2-core VM): with a
    // policer of 20 000/s and 2 000 (as this test had) 5 of 28 searches had a step the
    // testbed failed below the policer's rate (a paced sender descheduled and catching
    // up in a burst the gateway's backlog drops, or falling behind) and found 0.57–0.97
    // of it; at 5 000/s and 1 000 none of 16 did, and they found 0.971–0.995. The rate
    // found must lie within `Policer::lowest` (0.946 of it) and 1.005.
    let p = Policer {
        limit: 5_000.0,
        burst: 1_000.0,
    };
    let t = p.on(&tb);
    let mut n = 0;
    let (v, db) = p.search(
        "ndr",
        || {
            n += 1;
            let db = dir.file(&format!("ndr{n}.db"));
            let v = json_of(&cmd!(
                "ndr --testbed",
                &tb.name,
                "--json -t 1 --precision 2% --db",
                db.to_str().unwrap()
            ));
            assert_eq!(v["result"]["search"], "ndr", "{v}");
            (v["result"].clone(), db)
        },
        |v| p.check_ndr(v, 0.02),
    );
    let ndr = f(&v["rate_pps"]);
    assert!(v["converged"].as_bool().unwrap(), "{v}");
    let curve = v["curve"].as_array().unwrap();
    assert_eq!(curve.len(), u(&v["trials"]) as usize);
    assert!(
        curve.windows(2).all(|w| f(&w[0]["x"]) <= f(&w[1]["x"])),
        "curve sorted"
    );
    // Latency under load at 10, 50, 90 and 100 % of the rate found (by default).
    assert_latency_at_fractions(&v, ndr, false);
    // Every trial of the search is stored, in one run (latency trials too).
    let n = sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'flood'");
    assert_eq!(n as usize, curve.len() + 4);
    drop(t);
    // The same search as a scenario workload: its steps and its result are stored.
    // Against 20 000/s and 2 000 from 40 kpps at a precision of 3 %: 6 of 6 searches
    // at a load of 11–24 found 0.966–0.994 of it, none with a step the testbed failed.
    let p = Policer {
        limit: 20_000.0,
        burst: 2_000.0,
    };
    let _t = p.on(&tb);
    let ceiling = p.limit + p.burst;
    let sc = dir.write(
        "ndr.toml",
        format!(
            "workload = \"ndr\"\n[testbed]\nname = \"{}\"\n[params]\nduration = 1\nprecision = \"3%\"\nmax_rate = \"40kpps\"\n",
            tb.name
        ),
    );
    let mut n = 0;
    let (found, db2) = p.search(
        "scenario ndr",
        || {
            n += 1;
            let db2 = dir.file(&format!("run{n}.db"));
            let o = run_stored(&sc, &db2);
            assert_prints(&o, "searches");
            (stored_search(&db2, "ndr"), db2)
        },
        |v| {
            let found = f(&v["rate_pps"]);
            assert!(found <= ceiling * 1.005, "scenario ndr {found}: {v}");
            if found < p.lowest(0.03) {
                return Err(format!("scenario ndr {found} of {ceiling}"));
            }
            Ok(())
        },
    );
    assert_eq!(
        sqlite_count(
            &db2,
            "SELECT CAST(received_pps AS INTEGER) FROM trials WHERE workload = 'ndr' AND status = 'ok'",
        ),
        f(&found["rate_pps"]) as i64,
        "the stored headline is the search's rate"
    );
    assert!(sqlite_count(&db2, "SELECT count(*) FROM trials WHERE workload = 'flood'") >= 4);
}

/// The stored result of the (only) search of `workload` in a results file.
fn stored_search(db: &std::path::Path, workload: &str) -> Value {
    let o = Command::new("sqlite3")
        .args(["-cmd", ".timeout 5000"])
        .arg(db)
        .arg(format!(
            "SELECT json_extract(results, '$.search') FROM trials \
             WHERE workload = '{workload}' AND status = 'ok'"
        ))
        .output()
        .expect("sqlite3");
    serde_json::from_str(stdout(&o).trim())
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)))
}

/// MLRsearch (issue 28) on a policed gateway: both goals (0 % and 5 % loss) land on the
/// policer's rate within the precision, from final-duration trials, short trials first;
/// every step and the result (both rates) are stored.
#[root_test(serial, tb = "forward")]
fn mlr_finds_a_policers_rates_for_both_goals_within_the_precision() {
    // 5 000 packets/s, a burst of 0.5 s: a rate the paced sender keeps on a busy
    // machine, and a bucket that absorbs its catching up after being descheduled (with
    // 0.1 s, hiccups of a load of 10–40 lost packets well under the policer's rate).
    let (limit, burst, d) = (5_000.0, 2_500.0, 2.0);
    let p = Policer { limit, burst };
    let _t = p.on(&tb);
    let dir = TempDir::new();
    // Measured (issue 24, `bench/test_spread.py`, 10 searches at a load average of
    // 11–14): the goals' rates were 1.15–1.25 of their floors and 0.92–1.00 of their
    // truths, the 5 % goal 1.01–1.08 times the 0 % goal's. Once (load ~8) the testbed
    // lost 8–10 % in 2-s trials the policer passes whole, and both goals came out equal:
    // such a search runs once more (`Policer::search`).
    let mut n = 0;
    let (v, db) = p.search(
        "mlr",
        || {
            n += 1;
            let db = dir.file(&format!("mlr{n}.db"));
            let v = search_json_of(&cmd!(
                "mlr --testbed",
                &tb.name,
                "--json -t 2 --initial-duration 0.5 --goals 0,5% --precision 2% --db",
                &db
            ));
            assert_eq!(v["result"]["search"], "mlr", "{v}");
            let mut r = v["result"].clone();
            if let Some(e) = contradiction(&v) {
                // Judged by `check_goals`: run once more if the testbed lost below
                // the policer's rate, else a failure.
                r["contradiction"] = e.into();
            }
            (r, db)
        },
        |v| p.check_goals(v, d, 0.02),
    );
    if let Some(e) = v["contradiction"].as_str() {
        // Twice the testbed lost below the policer's rate: the search is honestly not
        // converged, which is all that can be asked of it.
        assert_eq!(v["converged"], false, "{e}: {v}");
        eprintln!("mlr: contradicting trials twice on this testbed ({e}); not converged, as said");
        return;
    }
    assert!(v["converged"].as_bool().unwrap(), "{v}");
    assert_eq!(v["limited_by_sender"], false, "{v}");
    let v = &v;
    let goals = v["goals"].as_array().unwrap();
    assert_eq!(
        f(&v["rate_pps"]),
        f(&goals[0]["rate_pps"]),
        "headline = NDR"
    );
    // Short trials first, final-duration trials only at the end.
    let curve = v["curve"].as_array().unwrap();
    let durations: Vec<f64> = curve.iter().map(|c| f(&c["duration_s"])).collect();
    assert_eq!(durations[0], 0.5, "{durations:?}");
    assert!(durations.windows(2).all(|w| w[0] <= w[1]), "{durations:?}");
    assert!(durations.contains(&d), "{durations:?}");
    assert_latency_at_fractions(v, f(&goals[0]["rate_pps"]), false);
    // Every step is stored (latency trials too).
    let n = sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'flood'");
    assert_eq!(n as usize, curve.len() + 4);
    // The same search as a scenario workload: its row holds both rates.
    let sc = dir.write(
        "mlr.toml",
        format!(
            "workload = \"mlr\"\n[testbed]\nname = \"{}\"\n[params]\nduration = 1\ninitial_duration = \"0.5s\"\ngoals = \"0,5%\"\nprecision = \"3%\"\nmax_rate = \"10kpps\"\nlatency_at = \"none\"\n",
            tb.name
        ),
    );
    let db2 = dir.file("run.db");
    run_stored(&sc, &db2);
    let stored = |i: usize| {
        sqlite_count(
            &db2,
            &format!(
                "SELECT CAST(json_extract(results, '$.search.goals[{i}].rate_pps') AS INTEGER) \
                 FROM trials WHERE workload = 'mlr' AND status IN ('ok', 'flagged')"
            ),
        ) as f64
    };
    // 1-s trials: the bucket adds its whole burst. (How close to the policer this
    // shorter search lands is the sender's business on a busy machine — a late sender
    // counts as loss — and is asserted above; here: both stored, in order.)
    // A busy testbed may make its trials contradict each other (a step lost below the
    // policer's rate, as `Policer::search` allows above): then the search is stored
    // `flagged` with the contradiction named, never `ok`, and its rates still stored.
    let flagged = sqlite_count(
        &db2,
        "SELECT count(*) FROM trials WHERE workload = 'mlr' AND status = 'flagged' \
         AND json_extract(results, '$.doubts[0].kind') IN \
         ('contradiction', 'limited_by_fwbench', 'unexpected_loss')",
    );
    if flagged > 0 {
        eprintln!("mlr scenario: flagged by the testbed's noise (its doubts are stored)");
    }
    let (ndr, pdr) = (stored(0), stored(1));
    assert!(
        ndr > 0.0 && ndr <= (limit + burst) * 1.005,
        "scenario ndr {ndr}"
    );
    assert!(
        pdr >= ndr && pdr <= (limit + burst) / 0.95 * 1.005,
        "scenario pdr {pdr}"
    );
    let headline = sqlite_count(
        &db2,
        "SELECT CAST(received_pps AS INTEGER) FROM trials WHERE workload = 'mlr' \
         AND status IN ('ok', 'flagged')",
    ) as f64;
    assert_eq!(headline, ndr, "the headline is the NDR");
}

#[root_test(serial, tb = "forward")]
fn sinkless_drop_counts_at_the_gateway_and_degrade_runs() {
    // Unpinned (`--no-pin`): the gateway's processing runs in the sender's context and
    // its ingress takes in every frame. With the default placement (the gateway steered
    // to its own CPU) a max-rate flood overflows its receive backlog now and then (915
    // of 548 608 in one fresh-clone CI run): those are the gateway's drops, not what
    // this test counts.
    let v = trial_json(
        "flood",
        &tb.name,
        &[
            "-t", "1", "--engine", "nft", "--model", "raw-drop", "--sink", "gateway", "--no-pin",
        ],
    );
    let r = &v["result"];
    assert_eq!(r["counted_at"], "gateway");
    assert!(u(&r["received"]) > 0);
    // The interface also counts the odd ARP packet.
    let (rx, sent) = (u(&r["received"]), u(&r["sent"]));
    assert!(
        rx >= sent && rx <= sent + 10,
        "the gateway takes in all: {r}"
    );
    assert!(
        r["flows"].as_array().unwrap().is_empty(),
        "no per-flow figures without a sink"
    );
    assert_eq!(u(&v["verdicts"]["matched_packets"]), u(&r["sent"]), "{v}");
    // Above the MTU only with --fragment: the kernel fragments, the sink reassembles.
    let v = trial_json(
        "flood",
        &tb.name,
        &["-t", "1", "--size", "8000", "--fragment", "--rate", "5kpps"],
    );
    let r = &v["result"];
    assert_eq!(u(&r["lost"]), 0, "{r}");
    assert_eq!(
        u(&r["frame"]),
        8008 + 6 * 38,
        "wire bytes of 6 fragments: {r}"
    );
    assert!(u(&r["received"]) > 4000, "{r}");
    // A slow flow never degrades with 2 000 rules: two trials (ceiling, floor) settle it.
    let d = trial_json(
        "degrade",
        &tb.name,
        &argv("-t 1 --rate 1kpps --engine iptables-legacy --max-rules 2000"),
    );
    let d = &d["result"];
    assert_eq!(d["first_degraded_rules"], Value::Null, "{d}");
    assert_eq!(u(&d["last_good_rules"]), 2000, "{d}");
    assert_eq!(u(&d["trials"]), 1, "{d}");
}

#[root_test]
fn pinned_gateway_drops_what_it_cannot_process_and_every_loss_is_placed() {
    let _serial = serial();
    if std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        < 2
    {
        return skip("needs a CPU for the gateway besides the sender's");
    }
    let tb = TestbedGuard::up("forward");
    // 15 000 linear nft rules cost far more than 70 µs per packet: the gateway's CPU
    // cannot keep up with 15 Mb/s of 128-byte packets and its backlog overflows.
    // On this shared 2-core VM a trial now and then loses a few % more than the counters
    // place (seen once in CI: 3 %); a real gap shows in both of two trials.
    let mut last = String::new();
    for attempt in 1..=2 {
        let flow = [
            "-t", "2", "--rate", "15M", "--engine", "nft", "--rules", "15000",
        ];
        let v = trial_json("flow", &tb.name, &[&flow[..], &PINNED].concat());
        let r = &v["result"];
        let sent = u(&r["sent"]);
        let lost = u(&r["lost"]);
        assert!(
            f(&r["sent_pps"]) > 14_000.0,
            "the sender keeps its rate: {r}"
        );
        assert!(lost > sent / 10, "the gateway drops: {r}");
        let mut placed = 0;
        for i in v["gateway"]["interfaces"].as_array().unwrap() {
            placed += u(&i["rx_dropped"]);
        }
        for i in r["sink_interfaces"].as_array().unwrap() {
            placed += u(&i["rx_dropped"]);
        }
        placed += u(&r["kernel"]["rcvbuf_errors"]);
        if placed.abs_diff(lost) * 100 <= lost {
            return;
        }
        eprintln!("attempt {attempt}: lost {lost}, kernel counters place {placed}");
        last = format!("lost {lost}, kernel counters place {placed}: {v}");
    }
    panic!("{last}");
}

/// The CPUs each role asked for, by role (`requested_cpus`; null: not pinned).
fn requested_cpus(v: &Value) -> Vec<(String, Value)> {
    v["placement"]
        .as_array()
        .unwrap_or_else(|| panic!("no placement: {v}"))
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap().to_string(),
                r["requested_cpus"].clone(),
            )
        })
        .collect()
}

/// `flood -t 1 --no-store --json` on an ephemeral testbed, with `extra`: its JSON.
fn ephemeral_flood(extra: &[&str]) -> Value {
    let a = [&["flood", "-t", "1", "--no-store", "--json"], extra].concat();
    let o = fwbench_leaving_no_testbed(&a);
    serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {a:?}\n{}\n{}", stdout(&o), stderr(&o)))
}

#[root_test]
fn a_default_flood_gives_the_gateway_its_own_cpu() {
    let _serial = serial();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return skip("needs a CPU for the gateway besides the sender's");
    }
    // No --pin-* and no --testbed: an ephemeral local testbed, the default placement.
    let v = ephemeral_flood(&[]);
    let last = Value::from((cpus - 1).to_string());
    let zero = Value::from("0");
    let want = [("gateway", &last), ("server", &zero), ("client", &zero)]
        .map(|(r, c)| (r.to_string(), c.clone()));
    assert_eq!(requested_cpus(&v), want, "{v}");
    // The sender is never on the CPU the gateway's softirq runs on.
    let by = &v["result"]["limited_by"]["by"];
    assert!(by.is_string() && by != "shared-cpu", "{v}");
    // --no-pin: every role where the kernel likes.
    let v = ephemeral_flood(&["--no-pin"]);
    let placed = requested_cpus(&v);
    assert_eq!(placed.len(), 3, "{v}");
    assert!(placed.iter().all(|(_, c)| c.is_null()), "{v}");
}

/// issue 37: a max-rate flood whose gateway forwarded a sliver of what was offered
/// (20 000 `inet` rules) was `ok`. The sliver was a receive livelock: the veth
/// delivered what the gateway forwarded onto the gateway CPU's backlog, full of the
/// flood, and dropped it there. With the sink unpinned (so not steered off the
/// gateway's CPU) it still happens, and the flood is `flagged` saying the rate is no
/// capacity; placed by default (the sink pinned, its receive steered to its CPU) the
/// gateway can forward many times more at 1 000 rules, not "overloaded" (in about half
/// the floods here: the others livelock too, and are flagged so).
#[root_test(serial)]
fn a_flood_far_past_the_gateway_is_flagged_not_ok() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return skip(
            "needs a CPU for the gateway besides the sender's (its backlog overflows there)",
        );
    }
    let rules = ["--engine", "nft", "--rules", "1000"];
    let unsteered =
        ephemeral_flood(&[&rules[..], &["--pin-client", "0", "--pin-gateway", "1"]].concat());
    assert_eq!(unsteered["status"], "flagged", "{unsteered}");
    let e = unsteered["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("overloaded: a flood at the maximum rate: the gateway took in ")
            && e.contains("(receive livelock), so this rate is not the gateway's capacity"),
        "{e}"
    );
    // Placed by default the gateway still livelocks in some 1-s floods here: 3 of 6 on
    // 2026-11-28, with the code before that day's changes and after (each flagged
    // `overloaded`, as it should be). The claim tested is that the default placement
    // can carry many times more: one of three floods does, and is not flagged.
    let overloaded = |v: &serde_json::Value| {
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("overloaded")
    };
    let mut tries = vec![];
    let steered = loop {
        let v = ephemeral_flood(&rules);
        if !overloaded(&v) {
            break v;
        }
        tries.push(v);
        assert!(
            tries.len() < 3,
            "three floods at the default placement overloaded: {tries:?}"
        );
    };
    let pps = |v: &serde_json::Value| v["result"]["received_pps"].as_f64().unwrap();
    assert!(
        pps(&steered) > 3.0 * pps(&unsteered),
        "steering the sink off the gateway's CPU: {} vs {} pps",
        pps(&steered),
        pps(&unsteered)
    );
}

/// issue 37: a max-rate flood on a CPU the machine's other load took (a compile)
/// read `ok` at a sliver of its rate. Two busy loops of this test's own on the CPU the
/// sender and the gateway's softirq share: the flood is `flagged` *disturbed*.
#[root_test(serial)]
fn a_flood_on_a_cpu_the_machines_other_load_took_is_flagged() {
    /// The busy loops, killed by their PIDs when dropped (also on panic).
    struct Hogs(Vec<std::process::Child>);
    impl Drop for Hogs {
        fn drop(&mut self) {
            for h in &mut self.0 {
                let _ = h.kill();
                let _ = h.wait();
            }
        }
    }
    let hogs = Hogs(
        (0..2)
            .map(|_| {
                Command::new("taskset")
                    .args(["-c", "0", "sh", "-c", "while :; do :; done"])
                    .spawn()
                    .expect("taskset")
            })
            .collect(),
    );
    // Sender and server on CPU 0, the gateway not steered: its softirq runs there too.
    let v = ephemeral_flood(&["--pin-client", "0", "--pin-server", "0"]);
    drop(hogs);
    assert_eq!(v["result"]["limited_by"]["by"], "shared-cpu", "{v}");
    assert_eq!(v["status"], "flagged", "{v}");
    let e = v["error"].as_str().unwrap_or_default();
    assert!(
        e.starts_with("disturbed: the machine's other load took ") && e.contains("of CPU 0"),
        "{e}"
    );
}

#[test]
fn packet_bad_input_exits_2() {
    refused(
        [
            "flood --size abc",
            "flood --size 1473",
            "flood -A 6 --frame 64",
            "flood --rate 15Q",
            "flood --rate -5M",
            "flood -t 0",
            "flood --threads 500 --flows 500",
            "flood --threads 2",
            "flood --sender dpdk",
            "flood --size 8000 --fragment --sender raw",
            "flood --size 70000 --fragment",
            "flood --sink gateway --topology direct",
            "flood --sink xdp --topology input",
            "flood --size 8000 --fragment --sender xdp",
            "flood --sink xdp --size 3000 --fragment",
            "flow",
            "flow --rate max",
            "ping -s 4",
            "ping -c 0",
            "ping -i soon",
            "ndr --loss 150%",
            "ndr --precision x",
            "ndr --precision 0",
            "ndr --max-rate 0.5pps",
            "ndr --sink gateway",
            "ndr --latency-at 120%",
            "mlr --goals 0,150%",
            "mlr --goals x",
            "mlr --latency-at 0",
            "mlr --precision 0",
            "mlr --initial-duration soon",
            "flood --frame 60",
            // The host's conntrack table is allocated whole: 2^32 − 1 buckets is 32 GiB.
            "newflows --ct-buckets 4294967295",
            "flood --size imix --fragment",
            "flood --size 60:1,1500:1",
            "flood --size 64:0",
            "flood --size 64:7,64:1",
            "flood -A 6 --size imix",
            "ping --size imix",
            "flood --dsts 4",
            "flood --dsts 2 --flows 2 --dst 198.19.0.2",
            "flood --dsts 300 --flows 300",
            "flood --sink gateway --fragment --size 3000",
            "degrade --rate 1M",
            "degrade --rate 1M --engine nft --max-rules 0",
        ]
        .map(|line| (line, "")),
    );
}

/// A scenario interrupted inside an ndr search resumes: the steps stored before the
/// interruption are reused (not measured and inserted again, which hit
/// UNIQUE(run_id, trial_key)), and the search completes with every step stored once.
#[root_test]
fn ndr_search_interrupted_midway_resumes_reusing_its_steps() {
    let _serial = serial();
    let (dir, sc) = TempDir::with_text(
        "ndr.toml",
        // A ceiling far above what the sender manages: a dozen or so bisection steps.
        // No latency steps after it: on this busy machine the one at 100 % of the rate
        // found sometimes lost 0.3 % and rightly flagged the answer (a CI run), which is
        // not what this test is about — resuming.
        "workload = \"ndr\"\n[params]\nduration = \"300ms\"\nprecision = \"2%\"\nmax_rate = \"5000kpps\"\nlatency_at = \"none\"\n",
    );
    let db = dir.file("r.db");
    let args = cmd!("run", &sc, "--db", &db);
    let child = spawn_piped(&args);
    let steps = |db: &std::path::Path| {
        if db.exists() {
            sqlite_count(db, "SELECT count(*) FROM trials WHERE workload = 'flood'")
        } else {
            0
        }
    };
    assert!(wait_for(120.0, || steps(&db) >= 3), "no steps stored");
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let before = steps(&db);
    assert!(before >= 2);
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'ndr'"),
        0,
        "the search itself had not finished"
    );
    let o = fwbench(&args);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    assert_says(&o, "resuming run 1");
    assert_says(&o, "reused");
    let after = steps(&db);
    assert!(after >= before);
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(DISTINCT trial_key) FROM trials WHERE workload = 'flood'"
        ),
        after,
        "no step stored twice"
    );
    // The search finished once. Whether its answer holds is the machine's (a CI run
    // under load had the sender fall behind at some rates: not converged, flagged —
    // rightly, and not what this test is about): ok or flagged, never failed.
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM trials WHERE workload = 'ndr' AND status IN ('ok', 'flagged')"
        ),
        1,
        "{}",
        sqlite_text(
            &db,
            "SELECT status || ': ' || coalesce(error, '') FROM trials WHERE workload = 'ndr'"
        )
    );
    // The search counts every step once: the reused ones and the new ones.
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT json_array_length(results, '$.search.curve') \
             + COALESCE(json_array_length(results, '$.search.latency'), 0) \
             FROM trials WHERE workload = 'ndr'"
        ),
        after
    );
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM runs WHERE status = 'complete'"),
        1
    );
}

/// Issue 37's Done-when: a search fed contradictory trials — a policer whose rate is
/// lowered mid-search — reports `converged: false` with the contradiction named, never
/// `ok`. The policer passes 4 000 pps (a bucket of 200) for the search's first three
/// trials (6 000 fails, 3 000 passes, 4 500 fails), then 1 500: every rate the search
/// tries after that below 3 000 fails, and 3 000 measured again fails too. A watcher
/// thread lowers it as soon as the third trial is stored (each is committed before the
/// next begins). Without the re-test's judgement the bisection confirms ~1 600 pps and
/// says `converged` (`ndr::tests::a_policer_lowered_mid_search_is_not_converged` plants
/// the same verdicts).
#[root_test(serial, tb = "forward")]
fn ndr_against_a_policer_lowered_mid_search_is_not_converged() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let dir = TempDir::new();
    let high = Policer {
        limit: 4_000.0,
        burst: 200.0,
    };
    let t = high.on(&tb);
    let stored = |db: &std::path::Path| -> i64 {
        Command::new("sqlite3")
            .args(["-readonly", "-cmd", ".timeout 2000"])
            .arg(db)
            .arg("SELECT count(*) FROM trials WHERE workload = 'flood'")
            .output()
            .ok()
            .and_then(|o| stdout(&o).trim().parse().ok())
            .unwrap_or(0)
    };
    for attempt in 1..=2 {
        let db = dir.file(&format!("ndr{attempt}.db"));
        // The policer at 4 000 again (a second attempt), then the watcher.
        in_ns(&t.ns, &["nft", "flush", "chain", "inet", &t.name, "c"]);
        let rule = |p: &Policer| {
            format!(
                "udp dport 9000 limit rate over {}/second burst {} packets counter drop",
                p.limit, p.burst
            )
        };
        let add = |p: &Policer| {
            let r = rule(p);
            let mut argv = vec!["nft", "add", "rule", "inet", &t.name, "c"];
            argv.extend(r.split_whitespace());
            in_ns(&t.ns, &argv);
        };
        add(&high);
        let done = Arc::new(AtomicBool::new(false));
        let lowered = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    if stored(&db) >= 3 {
                        in_ns(&t.ns, &["nft", "flush", "chain", "inet", &t.name, "c"]);
                        add(&Policer {
                            limit: 1_500.0,
                            burst: 200.0,
                        });
                        return true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                false
            });
            let o = fwbench(&cmd!(
                "ndr --testbed",
                &tb.name,
                "--json -t 1 --precision 2% --max-rate 6kpps --latency-at none --db",
                db.to_str().unwrap()
            ));
            done.store(true, Ordering::Relaxed);
            (watcher.join().unwrap(), o)
        });
        let (lowered, o) = lowered;
        assert!(lowered, "the watcher saw three stored trials");
        let v: Value = serde_json::from_str(&stdout(&o))
            .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
        let r = &v["result"];
        let curve: Vec<(f64, bool)> = r["curve"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (f(&c["x"]), c["pass"] == true))
            .collect();
        // The subject needs 3 000 to have passed before the change: on a busy host a
        // paced sender descheduled can lose it (a hiccup), then run once more.
        if !curve.contains(&(3_000.0, true)) {
            eprintln!("attempt {attempt}: 3000 pps did not pass before the change: {curve:?}");
            assert!(attempt < 2, "twice 3000 pps did not pass: {curve:?}");
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "flagged: {}", stderr(&o));
        assert_eq!(v["status"], "flagged", "{v}");
        assert_eq!(r["converged"], false, "{r}");
        let why = contradiction(&v).unwrap_or_else(|| panic!("no contradiction: {v}"));
        assert!(
            why.starts_with("3000 pps passed, then lost ")
                && why.ends_with("the gateway's capacity changed during the search"),
            "{why}"
        );
        // Every step, the re-tests too, stored as it finished (what the watcher read),
        // then the answer, flagged with its doubt.
        assert_eq!(stored(&db) as usize, curve.len(), "{curve:?}");
        let answer = sqlite_text(
            &db,
            "SELECT status || ': ' || coalesce(error, '') FROM trials WHERE workload = 'ndr'",
        );
        assert!(
            answer.starts_with("flagged: ")
                && answer.contains("the gateway's capacity changed during the search"),
            "{answer}"
        );
        return;
    }
}

/// Topology input: the sink shares the gateway's namespace. It used to steer that
/// namespace's receive processing to its own CPU — the sender's, on this 2-core
/// machine — so 20 000 rules ran beside the sender, and a flow they held back was
/// said to be "limited by the sender". And it took the kernel's receive stamps, taken
/// on arrival before the rules: the one-way delay was the same at 20 000 rules as at
/// none (p50 3.3 µs against 2.7). Now the rules run on the gateway's CPU, and the
/// delays are timed when the sink reads the datagrams, past the rules.
#[root_test(serial, tb = "input")]
fn on_topology_input_the_rules_run_on_the_gateways_cpu_and_the_delay_counts_them() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return skip("needs two CPUs: the gateway's and the sender's");
    }
    let flow = |rules: &str, rate: &str| {
        let a = [
            "-t", "2", "--engine", "nft", "--rules", rules, "--rate", rate,
        ];
        trial_json("flow", &tb.name, &a)["result"].clone()
    };
    // At 1 kpps 20 000 linear rules (about 0.3 ms a packet here) are carried: the
    // delay is theirs.
    let (none, many) = (flow("0", "1kpps"), flow("20000", "1kpps"));
    let p50 = |r: &Value| u(&r["owd"]["p50_ns"]) as f64;
    assert!(
        p50(&many) > 3.0 * p50(&none),
        "the delay counts the rules: p50 {} ns at 20 000 rules, {} ns at none",
        p50(&many),
        p50(&none)
    );
    // Well above what they carry (about 3 kpps here), the gateway limits, on its CPU.
    let over = flow("20000", "8kpps");
    assert_eq!(
        over["limited_by"]["by"], "gateway",
        "{}",
        over["limited_by"]
    );
}
