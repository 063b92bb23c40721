//! Unit tests of `plan/scenario.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;
use crate::params::packet::SinkKind;
use crate::params::topology::Topology;
use proto::{Family, Proto};

const GOOD: &str = r#"
name = "t"
repetitions = 2
order = "sequential"
seed = 7

[testbed]
pin_client = "0"

[params]
proto = ["tcp", "udp"]
family = [4, 6]
clients = 5
frame_size = [64, "64-1024"]
duration = "1s"
"#;

#[test]
fn cross_product_and_repetitions() {
    let p = parse("s.toml", GOOD, 0).unwrap();
    assert_eq!(p.trials.len(), 2 * 2 * 2 * 2);
    assert_eq!(p.seed, 7);
    assert_eq!(p.pinning.client.as_deref(), Some("0"));
    let first = &p.trials[0].params;
    assert_eq!((first.proto, first.family), (Proto::Tcp, Family::V4));
    assert_eq!(first.duration_s, 1.0);
    assert_eq!(first.topology, Topology::Forward);
    let keys: std::collections::HashSet<_> = p.trials.iter().map(|t| &t.key).collect();
    assert_eq!(keys.len(), p.trials.len(), "keys unique");
    assert_eq!(p.trials[0].rep, 1);
    assert_eq!(p.trials[8].rep, 2);
}

#[test]
fn random_order_is_a_seeded_permutation() {
    let text = GOOD.replace("sequential", "random");
    let a = parse("s.toml", &text, 0).unwrap();
    let b = parse("s.toml", &text, 0).unwrap();
    let seq = parse("s.toml", GOOD, 0).unwrap();
    assert_eq!(a.trials, b.trials);
    assert_ne!(a.trials, seq.trials);
    let mut ka: Vec<_> = a.trials.iter().map(|t| t.key.clone()).collect();
    let mut ks: Vec<_> = seq.trials.iter().map(|t| t.key.clone()).collect();
    ka.sort();
    ks.sort();
    assert_eq!(ka, ks);
}

/// Equal rates written differently are one trial: refused with the axis and both
/// texts (exit 2), not stored twice under one key mid-run.
#[test]
fn equal_rates_in_different_units_are_a_duplicate_value() {
    let e = err("workload = \"flow\"\n[params]\nrate = [\"10MB/s\", \"80Mbit\"]\n");
    assert!(
        e.contains(
            "params.rate: duplicate value: '10MB/s' and '80Mbit' are the same value (80M bits/s)"
        ),
        "{e}"
    );
    // Different rates stay two trials: 10 MB/s is 80 Mbit/s, not 10.
    let p = parse(
        "s.toml",
        "workload = \"flow\"\n[params]\nrate = [\"10MB/s\", \"10Mbit\"]\n",
        0,
    )
    .unwrap();
    assert_eq!(p.trials.len(), 2);
    let rates: Vec<_> = p
        .trials
        .iter()
        .map(|t| t.params.packet().unwrap().rate)
        .collect();
    assert_eq!(rates, [proto::Rate::Bps(80e6), proto::Rate::Bps(10e6)]);
    assert_ne!(p.trials[0].key, p.trials[1].key);
    // And any other axis: 1024 and 1K (sizes are powers of 1024, as iperf3 -l) are one size.
    refused_naming(
        "workload = \"sessions\"\n[params]\nsize = [1024, \"1K\"]\n",
        "duplicate value",
    );
}

#[test]
fn trial_keys_are_stable() {
    let p = parse("s.toml", GOOD, 0).unwrap();
    // A change here breaks resuming old runs: do it only with a schema change.
    assert_eq!(p.trials[0].key, trial_key(&p.trials[0].params, 1));
    assert_ne!(
        trial_key(&p.trials[0].params, 1),
        trial_key(&p.trials[0].params, 2)
    );
}

/// A trial that does not name `nft_family` (the default, inet) keeps the key it
/// had before the axis existed: these keys were computed by the build before it.
#[test]
fn inet_default_keeps_the_keys_from_before_nft_family() {
    let p = parse("s.toml", GOOD, 0).unwrap();
    let nft = parse(
        "s.toml",
        "workload = \"flood\"\n[params]\nengine = \"nft\"\nrules = 2000\n",
        0,
    )
    .unwrap();
    assert_eq!(p.trials[0].key, "916ab4ba26ee9962");
    assert_eq!(nft.trials[0].key, "04bb2369a0c414fb");
}

#[test]
fn testbed_file_relative_to_the_scenario() {
    let p = parse("/lab/sc/s.toml", "[testbed]\nfile = \"../hosts.toml\"\n", 0).unwrap();
    assert_eq!(p.testbed.as_deref(), Some("/lab/sc/../hosts.toml"));
    let p = parse("s.toml", "[testbed]\nfile = \"hosts.toml\"\n", 0).unwrap();
    assert_eq!(p.testbed.as_deref(), Some("./hosts.toml"));
    assert!(crate::testbed::file::is_file(p.testbed.as_deref().unwrap()));
    let p = parse("s.toml", "[testbed]\nfile = \"/etc/fwb/lab.toml\"\n", 0).unwrap();
    assert_eq!(p.testbed.as_deref(), Some("/etc/fwb/lab.toml"));
}

fn err(text: &str) -> String {
    parse("bad.toml", text, 0).unwrap_err().to_string()
}

/// The plan of `text` read as `dir/s.toml` (its relative paths are taken from `dir`).
fn in_dir(text: &str) -> Plan {
    parse("dir/s.toml", text, 0).unwrap()
}

/// `text` is refused with a message that starts with `start`.
fn refused_with(text: &str, start: &str) {
    let e = err(text);
    assert!(e.starts_with(start), "{e}");
}

/// `text` is refused with a message that says `part`.
fn refused_naming(text: &str, part: &str) {
    let e = err(text);
    assert!(e.contains(part), "{e}");
}

#[test]
fn errors_name_file_line_and_field() {
    assert_eq!(
        err("[params]\nproto = [\"tcp\", \"icmp\"]\n"),
        "bad.toml:2:9: params.proto: unknown protocol 'icmp' (expected tcp, udp or sctp)"
    );
    assert!(err("[params]\nclients = 0\n").starts_with("bad.toml:2:11: params.clients:"));
    assert!(err("[params]\nspeed = 3\n").contains("bad.toml:2:1: params.speed: unknown parameter"));
    assert!(err("[params]\nfamily = []\n").contains("params.family: empty list"));
    assert!(err("[params]\nduration = \"soon\"\n")
        .contains("params.duration: 'soon' is not a duration"));
    assert!(err("[params]\nframe_size = 16\n").contains("below the 28-byte frame header"));
    assert!(err("[params]\nserver = \"fork\"\n").contains("params.server"));
    assert!(
        err("colour = 1\n").starts_with("bad.toml:1:1:"),
        "{}",
        err("colour = 1\n")
    );
    assert!(err("[params\n").starts_with("bad.toml:1:"));
    assert!(err("workload = \"storm\"\n").contains("unknown workload 'storm'"));
    assert!(err("workload = \"flood\"\n[params]\nserver = \"epoll\"\n")
        .contains("params.server: not a parameter of the flood workload"));
    assert!(err("[params]\nrate = \"1M\"\n").contains("not a parameter of the echo workload"));
    assert!(err("workload = \"flood\"\n[params]\nrate = \"fast\"\n")
        .starts_with("bad.toml:3:8: params.rate: rate 'fast' is not a rate"));
    assert!(
        err("workload = \"flood\"\n[params]\nsize = 1473\n").contains("above the 1500-byte MTU")
    );
    assert!(err("workload = \"flow\"\n[params]\nrate = \"max\"\n").contains("needs a rate"));
    assert!(
        err("workload = \"flood\"\n[params]\nthreads = 500\nflows = 500\n")
            .contains("threads must be")
    );
    assert!(
        err("workload = \"flood\"\n[params]\nfamily = 6\nsize = \"frame:64\"\n")
            .contains("below the 66 bytes")
    );
    assert!(err("order = \"backwards\"\n").contains("order:"));
    assert!(err("[testbed]\npin_client = \"x\"\n").contains("testbed.pin_client"));
    // Huge CPU ranges: refused, not expanded (this aborted the process).
    refused_with(
        "[testbed]\npin_client = \"0-99999999999\"\n",
        "bad.toml:2:14: testbed.pin_client:",
    );
    // Pins name CPUs of this host.
    refused_naming(
        "[testbed]\npin_gateway = \"4000\"\n",
        "CPU 4000 does not exist",
    );
    // The cross product is counted before it is built: 10^8 trials is refused
    // at once (it used to run out of memory).
    let e = err("[params]\nclients = \"1..10000\"\nframe_size = \"100..10099\"\n");
    assert!(
        e.contains("expands to 100000000 trials") && e.contains("more than 100000"),
        "{e}"
    );
    let e = err("[[case]]\nclients = \"1..10000\"\nframe_size = \"100..10099\"\n");
    assert!(
        e.contains("case[1]") && e.contains("100000000 combinations"),
        "{e}"
    );
    assert!(err("[testbed]\nname = \"a\"\nfile = \"lab.toml\"\n")
        .contains("testbed.file: give a testbed name or a testbed file, not both"));
    assert!(err("[params]\nproto = \"udp\"\nframe_size = 65536\n").contains("largest UDP payload"));
}

#[test]
fn ranges_expand_inclusively_and_refuse_nonsense() {
    assert_eq!(
        expand_range("0..1000 step 250").unwrap(),
        ["0", "250", "500", "750", "1000"]
    );
    assert_eq!(expand_range("3..5").unwrap(), ["3", "4", "5"]);
    assert_eq!(expand_range("each:3").unwrap(), ["1", "2", "3"]);
    assert!(expand_range("each:x").is_err());
    assert_eq!(expand_range("0..10 step 4").unwrap(), ["0", "4", "8"]);
    assert_eq!(expand_range("8M").unwrap(), ["8M"]);
    assert_eq!(expand_range("0..2000 step 1").unwrap().len(), 2001);
    for bad in [
        "5..3",
        "0..10 step 0",
        "0..b",
        "0..1000000 step 1",
        "1..2 step x",
    ] {
        assert!(expand_range(bad).is_err(), "{bad}");
    }
    // `..` in a value that is not a number range is part of the value.
    assert_eq!(expand_range("../rules.txt").unwrap(), ["../rules.txt"]);
    assert_eq!(expand_range("v1..v2").unwrap(), ["v1..v2"]);
    let p = in_dir("[params]\nengine = \"nft\"\nmodel = \"import\"\nimport = \"../rules.nft\"\n");
    assert_eq!(
        p.trials[0].params.import.as_deref(),
        Some("dir/../rules.nft")
    );
    // The ipset file of an import likewise; alone it is refused.
    let p = in_dir(
        "[params]\nengine = \"iptables-nft\"\nimport = \"r.v4\"\nimport_ipset = \"r.ipset\"\n",
    );
    assert_eq!(
        p.trials[0].params.import_ipset.as_deref(),
        Some("dir/r.ipset")
    );
    refused_naming(
        "[params]\nengine = \"iptables-nft\"\nimport_ipset = \"r.ipset\"\n",
        "import_ipset r.ipset: the ipsets of an imported iptables-save file; give its import too",
    );
    refused_with(
        "workload = \"http\"\n[params]\nrules = \"0..x\"\n",
        "bad.toml:3:9: params.rules: '0..x' is not a range",
    );
}

#[test]
fn firewall_rows_cross_cases_with_their_own_workloads() {
    let text = r#"
workload = "sessions"
[[firewall]]
label = "null"
topology = "direct"
[[firewall]]
label = "proxy"
topology = "proxy"
proxy_buffer = "4K"
[[case]]
label = "ping"
workload = "ping"
size = 8
[[case]]
label = "bulk"
workload = "bulk"
size = "1.7M"
count = 3
parallel = [1, 3]
"#;
    let p = parse("s.toml", text, 1).unwrap();
    let got: Vec<(String, Workload, Topology)> = p
        .trials
        .iter()
        .map(|t| {
            (
                t.params.label.clone().unwrap(),
                t.params.workload(),
                t.params.topology,
            )
        })
        .collect();
    assert_eq!(got.len(), 6, "{got:?}");
    assert_eq!(
        got[0],
        ("null: ping".into(), Workload::Ping, Topology::Direct)
    );
    assert_eq!(
        got[5],
        ("proxy: bulk".into(), Workload::Bulk, Topology::Proxy)
    );
    let bulk = p.trials[5].params.conn().unwrap();
    assert_eq!(
        (bulk.size, bulk.count, bulk.parallel),
        (1_782_579, Some(3), 3)
    );
    assert_eq!(bulk.proxy_buffer, 4096);
    // Defaults follow each row's workload: ping's size, bulk's overhead sessions.
    assert!(p.trials[0].params.packet().is_some());
    assert_eq!(bulk.overhead_sessions, 10);
    // An axis foreign to a case's workload is refused, naming the rows.
    refused_naming(
        "workload = \"sessions\"\n[[case]]\nworkload = \"ping\"\nparallel = 2\n",
        "case[1]: parallel is not a parameter of the ping workload",
    );
    refused_naming(
        "workload = \"http\"\n[params]\nsize = \"8Q\"\n",
        "params.size: bad size '8Q'",
    );
    refused_naming(
        "workload = \"bulk\"\n[params]\ntopology = \"proxy\"\nproxy_buffer = 0\n",
        "--proxy-buffer 0",
    );
}

#[test]
fn size_mixes_and_destination_spread_are_axis_values() {
    let text = "workload = \"flood\"\n[params]\nsize = [\"imix\", \"64:7,576:4,1500:1\"]\ndsts = 4\nflows = 8\n";
    let p = parse("s.toml", text, 0).unwrap();
    let sizes: Vec<String> = p
        .trials
        .iter()
        .map(|t| t.params.packet().unwrap().size.to_string())
        .collect();
    assert_eq!(sizes.len(), 2);
    assert!(
        sizes.contains(&"imix".to_string()) && sizes.contains(&"64:7,576:4,1500:1".to_string())
    );
    assert!(p
        .trials
        .iter()
        .all(|t| t.params.packet().unwrap().dsts == 4));
    let e = parse(
        "s.toml",
        "workload = \"flood\"\n[params]\nsize = \"64:0\"\n",
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("weight 0"), "{e}");
}

#[test]
fn cases_cross_params_and_carry_labels() {
    let text = r#"
workload = "flood"
[params]
family = [4, 6]
[[case]]
label = "no firewall"
engine = "none"
[[case]]
label = "raw drop after 5"
engine = "iptables-legacy"
model = "raw-drop"
rules = 5
sink = "gateway"
"#;
    let p = parse("s.toml", text, 1).unwrap();
    assert_eq!(p.trials.len(), 4);
    let t = &p.trials[1].params;
    assert_eq!(t.label.as_deref(), Some("raw drop after 5"));
    assert_eq!(
        (t.engine, t.model, t.rules),
        (
            firewall::Engine::IptablesLegacy,
            firewall::models::Model::RawDrop,
            5
        )
    );
    assert_eq!(t.packet().unwrap().sink, SinkKind::Gateway);
    assert_eq!(p.trials[0].params.label.as_deref(), Some("no firewall"));
    assert_eq!(p.trials[2].params.family, Family::V6);
    assert!(
        err("workload = \"flood\"\n[params]\nrules = 5\n[[case]]\nrules = 6\n")
            .contains("case[1].rules: also set in [params]")
    );
    // A list in a case is crossed within that case.
    let p = parse(
        "s.toml",
        "workload = \"flood\"\n[[case]]\nrate = [\"1M\", \"2M\"]\n[[case]]\nrate = \"3M\"\n",
        1,
    )
    .unwrap();
    assert_eq!(p.trials.len(), 3);
    assert!(
        err("workload = \"flood\"\n[[case]]\nlabel = \"x\"\nspeed = 2\n")
            .starts_with("bad.toml:4:1: case[1].speed: unknown parameter")
    );
    assert!(err("workload = \"flood\"\n[[case]]\nengine = \"pf\"\n").contains("case[1].engine"));
}

#[test]
fn searches_as_workloads() {
    let p = parse(
        "s.toml",
        "workload = \"ndr\"\n[params]\nsize = \"frame:64\"\nprecision = \"1%\"\nmax_rate = \"50kpps\"\n",
        1,
    )
    .unwrap();
    let t = &p.trials[0].params;
    let sp = t.search_params().unwrap();
    assert_eq!((sp.loss, sp.precision), (0.0, 0.01));
    assert_eq!(sp.max_rate, Some(proto::Rate::Pps(50_000.0)));
    let p = parse(
        "s.toml",
        "workload = \"degrade\"\n[params]\nengine = \"nft\"\nmax_rules = 5000\n",
        1,
    )
    .unwrap();
    let t = &p.trials[0].params;
    assert_eq!(t.rules, 5000, "pre-flight renders the largest rule set");
    assert_eq!(t.search_params().unwrap().loss, 0.001);
    assert_eq!(t.packet().unwrap().rate, proto::Rate::Bps(15e6));
    assert!(err("workload = \"degrade\"\n[params]\nmax_rules = 5\n").contains("choose an engine"));
    assert!(err("workload = \"flood\"\n[params]\nprecision = \"1%\"\n")
        .contains("params.precision: not a parameter of the flood workload"));
    assert!(err("workload = \"ndr\"\n[params]\nloss = \"200%\"\n").contains("params.loss"));
}

#[test]
fn baseline_and_warmup() {
    let text = "warmup = \"1s\"\nbaseline = { engine = \"none\" }\n[params]\nengine = [\"none\", \"nft\"]\nrules = [0, 100]\n";
    let p = parse("s.toml", text, 1).unwrap();
    assert_eq!(p.warmup_s, Some(1.0));
    assert_eq!(p.baseline, Some(serde_json::json!({"engine": "none"})));
    let n = p
        .trials
        .iter()
        .filter(|t| matches_baseline(&t.params, p.baseline.as_ref().unwrap()))
        .count();
    assert_eq!(n, 2);
    assert!(
        err("baseline = { engine = \"nft\" }\n[params]\nengine = \"none\"\n")
            .starts_with("bad.toml:1:12: baseline: matches no trial")
    );
    assert!(err("baseline = { colour = 1 }\n").contains("baseline.colour: unknown parameter"));
    assert!(err("baseline = { engine = \"pf\" }\n").contains("baseline.engine"));
    assert!(err("warmup = \"soon\"\n").contains("warmup:"));
    // Numbers match numbers.
    let p = parse(
        "s.toml",
        "baseline = { rules = 0 }\n[params]\nrules = [0, 5]\nengine = \"nft\"\n",
        1,
    )
    .unwrap();
    assert!(matches_baseline(
        &p.trials[0].params,
        p.baseline.as_ref().unwrap()
    ));
}

#[test]
fn adaptive_length() {
    let p = parse(
        "s.toml",
        "workload = \"flood\"\nadaptive = { precision = \"1%\", max_duration = \"30s\" }\n",
        1,
    )
    .unwrap();
    let a = p.trials[0].params.adaptive.as_ref().unwrap();
    assert_eq!((a.precision, a.max_s), (0.01, 30.0));
    assert!(err("adaptive = { max_duration = 5 }\n").contains("needs precision"));
    assert!(err("adaptive = { precision = \"1%\", max_duration = 1 }\n")
        .contains("shorter than the duration"));
    assert!(err("workload = \"ping\"\nadaptive = { precision = \"1%\" }\n").contains("not ping"));
    // A search over flood/flow is not a flood or flow trial.
    assert!(err("workload = \"ndr\"\nadaptive = { precision = \"1%\" }\n").contains("not ndr"));
    assert!(err("adaptive = { precision = 0 }\n").contains("adaptive.precision"));
}

/// Two arms (0 vs 500 rules) in a case of their own with `reps` repetitions, next
/// to a one-repetition sweep, in `order`.
fn ab(order: &str, reps: u32, seed: u64) -> Plan {
    let text = format!(
        "workload = \"http\"\norder = \"{order}\"\nseed = {seed}\n[params]\nengine = \"nft\"\n\
         [[case]]\nlabel = \"sweep\"\nrules = \"0..40 step 10\"\n\
         [[case]]\nlabel = \"A/B\"\nrules = [0, 500]\ncount = 5\nrepetitions = {reps}\n"
    );
    parse("s.toml", &text, 0).unwrap()
}

/// The A/B trials' arms (0 = A, 1 = B) and repetitions, in run order.
fn arms(p: &Plan) -> Vec<(usize, u32)> {
    p.trials
        .iter()
        .filter(|t| t.params.label.as_deref() == Some("A/B"))
        .map(|t| (usize::from(t.params.rules == 500), t.rep))
        .collect()
}

fn sorted_keys(p: &Plan) -> Vec<String> {
    let mut k: Vec<String> = p.trials.iter().map(|t| t.key.clone()).collect();
    k.sort();
    k
}

#[test]
fn interleaved_orders_are_seeded_complete_permutations() {
    let seq = ab("sequential", 40, 1);
    // 5 sweep trials once, 2 arms × 40 repetitions; keys as the sequential order's.
    assert_eq!(seq.trials.len(), 5 + 80);
    assert_eq!(seq.order, Order::Sequential);
    let keys: std::collections::HashSet<_> = seq.trials.iter().map(|t| &t.key).collect();
    assert_eq!(
        keys.len(),
        seq.trials.len(),
        "each (configuration, rep) once"
    );
    for order in ["random", "abba", "paired"] {
        let a = ab(order, 40, 1);
        assert_eq!(a.trials, ab(order, 40, 1).trials, "{order}: seeded");
        assert_eq!(sorted_keys(&a), sorted_keys(&seq), "{order}: complete");
        assert_ne!(a.trials, seq.trials, "{order}");
    }
    assert_ne!(ab("paired", 40, 1).trials, ab("paired", 40, 2).trials);
    // The sweep (one repetition) stays one block of its own, shuffled.
    let p = ab("paired", 40, 1);
    let sweep: Vec<u32> = p.trials[..5].iter().map(|t| t.params.rules).collect();
    assert!(p.trials[..5]
        .iter()
        .all(|t| t.params.label.as_deref() == Some("sweep")));
    assert_eq!(sweep.iter().sum::<u32>(), 100);
}

#[test]
fn abba_alternates_and_never_runs_an_arm_thrice() {
    for seed in 0..20 {
        let got = arms(&ab("abba", 40, seed));
        assert_eq!(got.len(), 80);
        for (i, pair) in got.chunks(2).enumerate() {
            // Repetition r is one pair with both arms, the order flipping each time.
            assert_eq!((pair[0].1, pair[1].1), (i as u32 + 1, i as u32 + 1));
            assert_ne!(pair[0].0, pair[1].0);
            if i > 0 {
                assert_eq!(pair[0].0, got[2 * i - 1].0, "ABBA: {got:?}");
            }
        }
        let longest = got.chunk_by(|x, y| x.0 == y.0).map(|run| run.len()).max();
        assert_eq!(longest, Some(2));
        // A's share of the first places is exactly one half: balanced.
        let firsts = got.chunks(2).filter(|p| p[0].0 == 0).count();
        assert_eq!(firsts, 20);
    }
}

#[test]
fn paired_runs_each_repetition_as_a_randomised_pair() {
    let got = arms(&ab("paired", 200, 7));
    assert_eq!(got.len(), 400);
    for (i, pair) in got.chunks(2).enumerate() {
        assert_eq!((pair[0].1, pair[1].1), (i as u32 + 1, i as u32 + 1));
        assert_ne!(pair[0].0, pair[1].0, "both arms in pair {i}");
    }
    // Random within pairs: A first in about half of them (binomial(200, ½): 100 ± 30
    // at far beyond 3 sd).
    let firsts = got.chunks(2).filter(|p| p[0].0 == 0).count();
    assert!((70..=130).contains(&firsts), "{firsts}");
}

#[test]
fn case_repetitions_and_order_errors() {
    let e = err("order = \"backwards\"\n");
    assert_eq!(
        e,
        "bad.toml:1:9: order: 'backwards' is not an order (expected sequential, random, abba, paired)"
    );
    refused_with(
        "workload = \"http\"\n[[case]]\nrules = 1\nrepetitions = 0\n",
        "bad.toml:4:15: case[1].repetitions: must be 1..1000",
    );
    refused_with(
        "workload = \"http\"\n[[firewall]]\nrepetitions = 2\n[[case]]\nrules = 1\n",
        "bad.toml:3:1: firewall[1].repetitions:",
    );
    // A case's repetitions override the top level's for that case only.
    let p = parse(
        "s.toml",
        "workload = \"http\"\nrepetitions = 2\n[[case]]\nrules = 1\n[[case]]\nrules = 2\nrepetitions = 3\n",
        1,
    )
    .unwrap();
    let reps = |r: u32| p.trials.iter().filter(|t| t.params.rules == r).count();
    assert_eq!((reps(1), reps(2)), (2, 3));
    // Sequential: repetition outermost, as before.
    let order: Vec<(u32, u32)> = p.trials.iter().map(|t| (t.params.rules, t.rep)).collect();
    assert_eq!(order, [(1, 1), (2, 1), (1, 2), (2, 2), (2, 3)]);
}

#[test]
fn durations() {
    for (text, seconds) in [("10", 10.0), ("500ms", 0.5), ("1m", 60.0), ("2.5s", 2.5)] {
        assert_eq!(parse_duration(text), Ok(seconds), "{text}");
    }
    for bad in ["0", "-1", "abc", "", "1h", "nan", "inf"] {
        assert!(parse_duration(bad).is_err(), "{bad}");
    }
}

/// Issue 38: every text of a scenario is bounded, and one-line texts hold no
/// control characters; refused where they stand, before anything is expanded.
#[test]
fn texts_are_bounded_and_free_of_control_characters() {
    // A 20 MB label (with 1000 repetitions it ran out of memory: see
    // tests/limits.rs, run under a memory limit) is refused at its line before a
    // trial is built. One repetition here, so that a regression costs little.
    let huge = format!(
        "repetitions = 1\n[[case]]\nclients = 1\nlabel = \"{}\"\n",
        "x".repeat(20 << 20)
    );
    let e = parse("big.toml", &huge, 0).unwrap_err();
    assert!(matches!(e, ScenarioError::At(_)), "{e:?}");
    let e = e.to_string();
    assert!(
        e.starts_with("big.toml:4:9: case[1].label: 20971520 bytes long, more than the 4096"),
        "{}",
        &e[..200.min(e.len())]
    );
    assert!(e.len() < 300, "the message does not echo the label");
    // At the limit: taken.
    let ok = format!("[[case]]\nlabel = \"{}\"\n", "x".repeat(MAX_LABEL));
    assert!(parse("ok.toml", &ok, 0).is_ok());
    // ESC in a label (TOML's escape), NUL in a name: refused with the character.
    refused_with(
        "[[case]]\nclients = 2\nlabel = \"red \\u001b[31m\"\n",
        "bad.toml:3:9: case[1].label: control character U+001B at byte 4",
    );
    refused_with(
        "name = \"a\\u0000b\"\n",
        "bad.toml:1:8: name: control character U+0000",
    );
    refused_naming(
        "[[firewall]]\nlabel = \"a\\tb\"\n",
        "firewall[1].label: control character U+0009",
    );
    // A description may span lines, within its own limit.
    assert!(parse("d.toml", "description = \"a\\tb\\nc\"\n", 0).is_ok());
    let long = format!("description = \"{}\"\n", "d".repeat(MAX_DESCRIPTION + 1));
    assert!(err(&long).starts_with("bad.toml:1:15: description: 65537 bytes long"));
    // Values, paths and parameter names are bounded too.
    let path = format!("[params]\nimport = \"{}\"\n", "p".repeat(MAX_PATH + 1));
    assert!(err(&path).starts_with("bad.toml:2:10: params.import: 4097 bytes long"));
    refused_naming(
        "[params]\nimport = \"r\\u001b.nft\"\n",
        "params.import: control character U+001B",
    );
    let key = format!("[params]\n{} = 1\n", "k".repeat(MAX_NAME + 1));
    assert!(err(&key).starts_with("bad.toml:2:1: params: 4097 bytes long"));
    refused_with(
        "[testbed]\nfile = \"lab\\u0007.toml\"\n",
        "bad.toml:2:8: testbed.file: control character U+0007",
    );
    refused_naming(
        "[[case]]\nclients = 2\n[baseline]\nlabel = \"\\u001b\"\n",
        "baseline.label: control character",
    );
}

/// Errors are typed: where a value stands, which row a trial came from, or the
/// file as a whole; the adaptive table's refusals stand at its line.
#[test]
fn errors_are_typed_and_keep_their_words() {
    let e = parse("s.toml", "[params]\nclients = 0\n", 0).unwrap_err();
    assert!(matches!(&e, ScenarioError::At(l) if l.line == 2 && l.field == "params.clients"));
    let e = parse(
        "s.toml",
        "[[case]]\nnft_family = \"ip\"\nengine = \"iptables-legacy\"\n",
        0,
    )
    .unwrap_err();
    assert!(
        matches!(&e, ScenarioError::Trial { row, why: PlanError::Conflict(_), .. } if row == "case[1]"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("s.toml: case[1]: nft_family ip applies"),
        "{e}"
    );
    let e = parse(
        "s.toml",
        "workload = \"flood\"\n\nadaptive = { precision = \"1%\", max_duration = 1 }\n",
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("s.toml:3:12: adaptive: the longest adaptive trial (1 s)"),
        "{e}"
    );
    let e = parse("s.toml", "[params]\nclients = [1, \"1\"]\n", 0).unwrap_err();
    assert!(matches!(e, ScenarioError::File { .. }), "{e:?}");
}

/// A named testbed's topology: every trial moved through the front door (its
/// checks run again) and keyed again.
#[test]
fn a_testbed_topology_is_applied_through_the_front_door() {
    use crate::params::topology::Topology;
    let mut p = parse("s.toml", "workload = \"sessions\"\n", 1).unwrap();
    let before = p.trials[0].key.clone();
    p.use_topology(Topology::Proxy).unwrap();
    let t = &p.trials[0];
    assert_eq!(t.params.topology, Topology::Proxy);
    assert_eq!(
        t.params.chain,
        crate::params::topology::chain_of(Topology::Proxy)
    );
    assert_eq!(t.key, trial_key(&t.params, t.rep));
    assert_ne!(t.key, before);
    // An event the input topology cannot carry: refused now, as a scenario naming
    // it would be.
    let mut p = parse(
        "s.toml",
        "workload = \"sessions\"\n[params]\nevent = \"add:1@1s\"\n",
        1,
    )
    .unwrap();
    let e = p.use_topology(Topology::Input).unwrap_err().to_string();
    assert!(e.contains("topology input"), "{e}");
}

/// Churn replay in a scenario: `event_trace` is a file relative to the scenario (as
/// `import`), read once when the plan is built; its operations change the key; a bad
/// trace, or a trace with `event`, is refused naming the file and line.
#[test]
fn an_event_trace_is_relative_to_the_scenario_and_keyed_by_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("s.toml").to_string_lossy().into_owned();
    let write = |text: &str| std::fs::write(dir.path().join("churn.trace"), text).unwrap();
    let text = "workload = \"flow\"\n[params]\nrate = \"1kpps\"\nengine = \"nft\"\n\
                event_trace = \"churn.trace\"\nevent_method = [\"batch\", \"per-rule\"]\n";
    write("0.5s add 1\n1s delete 1\n");
    let p = parse(&sc, text, 0).unwrap();
    assert_eq!(p.trials.len(), 2);
    let e = p.trials[0].params.events.as_ref().unwrap();
    let t = e.trace.as_ref().unwrap();
    assert_eq!(t.file, dir.path().join("churn.trace").to_string_lossy());
    assert_eq!(
        (t.operations, e.kind, e.at_s),
        (2, proto::UpdateKind::Add, 0.5)
    );
    let before = p.trials[0].key.clone();
    write("0.5s add 1\n1s delete 2\n");
    assert_ne!(parse(&sc, text, 0).unwrap().trials[0].key, before);
    write("0.5s add 1\n1s delete\n");
    let e = parse(&sc, text, 0).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "{}:2:10: missing K after 'delete'",
            dir.path().join("churn.trace").display()
        )),
        "{e}"
    );
    let both = text.replace("event_trace", "event = \"add:1@1s\"\nevent_trace");
    let e = parse(&sc, &both, 0).unwrap_err().to_string();
    assert!(
        e.contains("event_trace churn.trace and event: a trace gives every update's kind"),
        "{e}"
    );
}
