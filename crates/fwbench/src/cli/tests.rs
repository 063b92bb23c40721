//! Unit tests of `cli/mod.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;

/// `--pin-*` as given, `--no-pin` as nothing pinned, neither: the default.
#[test]
fn pin_flags_say_the_placement() {
    let placement = |args: &[&str]| -> Result<Placement, String> {
        let cli = Cli::try_parse_named([&["fwbench", "flood"][..], args].concat())
            .map_err(|e| e.to_string())?;
        let Cmd::Flood(t) = cli.cmd else {
            unreachable!("parsed as flood")
        };
        Ok(t.trial.pin.placement())
    };
    assert_eq!(placement(&[]), Ok(Placement::Default));
    let gateway = Pinning {
        gateway: Some("1".into()),
        ..Pinning::default()
    };
    assert_eq!(
        placement(&["--pin-gateway", "1"]),
        Ok(Placement::Given(gateway))
    );
    assert_eq!(
        placement(&["--no-pin"]),
        Ok(Placement::Given(Pinning::default()))
    );
    let both = placement(&["--no-pin", "--pin-client", "0"]).unwrap_err();
    assert!(both.contains("--no-pin"), "{both}");
}

#[test]
fn nft_family_is_checked_and_carried() {
    let trial = |args: &[&str]| -> Result<TrialParams> {
        let cli = Cli::try_parse_named([&["fwbench", "flood"][..], args].concat())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(trial_of(&cli.cmd, cli.asked)?.expect("a trial").0)
    };
    let p = trial(&["--engine", "nft", "--nft-family", "ip"]).unwrap();
    assert_eq!(p.nft_family, firewall::NftFamily::Ip);
    assert_eq!(
        crate::rules::request(&p).unwrap().unwrap().nft_family,
        p.nft_family
    );
    let inet = trial(&["--engine", "nft"]).unwrap();
    assert_eq!(inet.nft_family, firewall::NftFamily::Inet);
    assert_ne!(
        crate::plan::scenario::trial_key(&p, 1),
        crate::plan::scenario::trial_key(&inet, 1)
    );
    let bad = trial(&["--engine", "nft", "--nft-family", "bridge"]).unwrap_err();
    assert!(
        bad.to_string().contains("unknown nft family 'bridge'"),
        "{bad}"
    );
    let meaningless = trial(&["--engine", "iptables-legacy", "--nft-family", "ip"]);
    let e = meaningless.unwrap_err();
    assert!(
        e.downcast_ref::<crate::error::UsageError>().is_some(),
        "{e:#}"
    );
    assert!(
        format!("{e:#}").contains("nft_family ip applies to engines nft and nft-set only"),
        "{e:#}"
    );
}

/// `-4`/`-6` set the family; `-J` is `--json`; a byte rate is its bits.
#[test]
fn short_flags_and_byte_rates() {
    let trial = |args: &[&str]| {
        let cli = Cli::try_parse_named(args).unwrap();
        let (p, t, _) = trial_of(&cli.cmd, cli.asked).unwrap().unwrap();
        (p, t.clone())
    };
    let (p, t) = trial(&["fwbench", "flow", "-6", "-J", "-r", "10MB/s"]);
    assert_eq!(p.family, Family::V6);
    assert!(t.json);
    assert_eq!(p.packet().unwrap().rate, proto::Rate::Bps(80e6));
    let (p, t) = trial(&["fwbench", "echo", "-4"]);
    assert_eq!(p.family, Family::V4);
    assert!(!t.json);
    // The same trial, the same key, whichever unit the rate was written in.
    let (a, _) = trial(&["fwbench", "flow", "-r", "10MB/s"]);
    let (b, _) = trial(&["fwbench", "flow", "-r", "80M"]);
    let (c, _) = trial(&["fwbench", "flow", "-r", "10M"]);
    let key = crate::plan::scenario::trial_key;
    assert_eq!(key(&a, 1), key(&b, 1));
    assert_ne!(key(&a, 1), key(&c, 1));
}

/// The trial commands' flags are checked against the axis registry: each flag is
/// an axis its workload reads (by name, or an alias below) or says why it is not
/// one, and each axis the workload reads has a flag or says why not. A flag added
/// without its axis (or an axis without its flag) fails here.
#[test]
fn trial_command_flags_are_the_axis_registry() {
    use clap::CommandFactory;
    // Flags named otherwise than their axis.
    const ALIAS: &[(&str, &str)] = &[
        ("response", "size"),
        ("frame", "size"),
        ("sources", "clients"),
        ("no_verify", "verify"),
        ("ipv4", "family"),
        ("ipv6", "family"),
        ("load", "event_load"),
    ];
    // Flags that are not axes: where and how a trial runs, is shown and stored.
    const NOT_AXES: &[&str] = &[
        "testbed",
        "pin_client",
        "pin_gateway",
        "pin_server",
        "no_pin",
        "db",
        "no_store",
        "tag", // labels the run (run_tags), not a trial parameter
        "json",
        "json_stream",
        "until_ci",     // scenarios: `adaptive = {…}`
        "max_duration", // scenarios: `adaptive = {…}`
        "seed",         // scenarios: the top-level `seed`
        "chain",        // follows the topology (`--chain input` selects it)
        "repeat",       // scenarios: `repetitions`
        "help",
    ];
    // Axes a command leaves at the registry's default (scenario files only).
    // (`gateway_cpus`: the axis a parallel branch adds; a flag is welcome.)
    const SCENARIO_ONLY: &[&str] = &["label", "gateway_cpus"];
    // Axes a command has no flag for (the registry's default applies), listed so a
    // new gap fails here. Most are the registry's coarse classes (a packet axis is
    // the whole family's, though ping sends no rate; a conn axis every conn
    // workload's, though connections have no size); some are flags to add
    // (flood/flow --timeout-ms).
    const NO_FLAG_YET: &[(&str, &str)] = &[
        ("flood", "timeout_ms"),
        ("flood", "count"),
        ("flood", "interval"),
        ("flow", "timeout_ms"),
        ("flow", "count"),
        ("flow", "interval"),
        ("ping", "clients"),
        ("ping", "rate"),
        ("ping", "flows"),
        ("ping", "dsts"),
        ("ping", "threads"),
        ("ping", "sink_threads"),
        ("ping", "batch"),
        ("ping", "sender"),
        ("ping", "sink"),
        ("ping", "sport"),
        ("ping", "dst"),
        ("ping", "fragment"),
        ("sessions", "clients"),
        ("sessions", "overhead_sessions"),
        ("sessions", "limit"),
        ("sessions", "hold"),
        ("sessions", "server_program"),
        ("sessions", "client_program"),
        ("bulk", "clients"),
        ("bulk", "request"),
        ("bulk", "limit"),
        ("bulk", "hold"),
        ("bulk", "server_program"),
        ("bulk", "client_program"),
        ("http", "clients"),
        ("http", "request"),
        ("http", "overhead_sessions"),
        ("http", "limit"),
        ("http", "hold"),
        ("connections", "clients"),
        ("connections", "size"),
        ("connections", "parallel"),
        ("connections", "request"),
        ("connections", "overhead_sessions"),
        ("connections", "server_program"),
        ("connections", "client_program"),
        ("ndr", "timeout_ms"),
        ("ndr", "rate"),
        ("ndr", "count"),
        ("ndr", "interval"),
        ("ndr", "max_rules"),
        ("ndr", "resolution"),
        ("degrade", "timeout_ms"),
        ("degrade", "count"),
        ("degrade", "interval"),
        ("degrade", "precision"),
        ("degrade", "max_rate"),
        ("degrade", "max_trials"),
        ("degrade", "latency_at"),
        ("ndr", "goals"),
        ("ndr-newflows", "goals"),
        ("ndr-newflows", "initial_duration"),
        ("ndr", "initial_duration"),
        ("degrade", "goals"),
        ("degrade", "initial_duration"),
        ("mlr", "timeout_ms"),
        ("mlr", "rate"),
        ("mlr", "count"),
        ("mlr", "interval"),
        ("mlr", "max_rules"),
        ("mlr", "resolution"),
        ("mlr", "loss"),
        // Gateway events (docs/events.md): connections refuses them (scenario
        // files name the axes, and hear why).
        ("connections", "event"),
        ("connections", "event_rate"),
        ("connections", "event_count"),
        ("connections", "event_method"),
        ("connections", "event_load"),
        ("connections", "event_place"),
        ("connections", "event_trace"),
        // Conntrack settings (issue 26): a ping has them in scenario files only.
        ("ping", "ct_max"),
        ("ping", "ct_buckets"),
        ("ping", "ct_udp_timeout"),
        ("ping", "ct_fill"),
        ("newflows", "timeout_ms"),
        ("newflows", "count"),
        // (Its `-i` is the live lines' interval, as flood's and flow's: the hand
        // list of live commands this test had left newflows out, and took that flag
        // for the probe interval's.)
        ("newflows", "interval"),
        ("ndr-newflows", "timeout_ms"),
        ("ndr-newflows", "rate"),
        ("ndr-newflows", "count"),
        ("ndr-newflows", "interval"),
        ("ndr-newflows", "max_rules"),
        ("ndr-newflows", "resolution"),
        // The safe envelope's targets (issue 39): its own flags only.
        ("ndr", "latency_target"),
        ("ndr", "effect_target"),
        ("ndr", "max_update_rate"),
        ("degrade", "latency_target"),
        ("degrade", "effect_target"),
        ("degrade", "max_update_rate"),
        ("ndr-newflows", "latency_target"),
        ("ndr-newflows", "effect_target"),
        ("ndr-newflows", "max_update_rate"),
        ("mlr", "latency_target"),
        ("mlr", "effect_target"),
        ("mlr", "max_update_rate"),
        // The envelope's steps are flows (as degrade's): the other searches' bounds
        // and the ping's axes are not its.
        ("envelope", "timeout_ms"),
        ("envelope", "count"),
        ("envelope", "interval"),
        ("envelope", "loss"),
        ("envelope", "max_rate"),
        ("envelope", "goals"),
        ("envelope", "initial_duration"),
        ("envelope", "latency_at"),
        ("envelope", "max_rules"),
        ("envelope", "resolution"),
    ];
    let mut missing = vec![];
    let cli = Cli::command();
    for name in crate::params::search::Asked::names() {
        let asked: crate::params::search::Asked = name.parse().unwrap();
        let cmd = cli
            .find_subcommand(name)
            .unwrap_or_else(|| panic!("no command {name}"));
        // A command with live output (`LiveArgs`, not `NoLive`) has `--json-stream`;
        // its `--interval` is the live lines' (ping's, without them, is an axis).
        let live = cmd
            .get_arguments()
            .any(|a| a.get_long() == Some("json-stream"));
        let mut flags = std::collections::BTreeSet::new();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let flag = long.replace('-', "_");
            if NOT_AXES.contains(&flag.as_str()) || (flag == "interval" && live) {
                continue;
            }
            let axis = ALIAS
                .iter()
                .find(|(f, _)| *f == flag)
                .map_or(flag.as_str(), |(_, a)| a);
            let a = crate::plan::axes::find(axis).unwrap_or_else(|| {
                panic!("{name} --{long}: no axis {axis} (or list it in NOT_AXES)")
            });
            assert!(
                !a.foreign_to(asked),
                "{name} --{long}: axis {axis} is foreign to {name}"
            );
            flags.insert(axis.to_string());
        }
        for a in crate::plan::axes::AXES {
            if a.foreign_to(asked) || a.name == "workload" || SCENARIO_ONLY.contains(&a.name) {
                continue;
            }
            if !flags.contains(a.name) && !NO_FLAG_YET.contains(&(name, a.name)) {
                missing.push(format!("(\"{name}\", \"{}\")", a.name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "axes without a flag: {}",
        missing.join(", ")
    );
}

/// `fwbench workload` has the trial commands' firewall flags (one `FirewallArgs`),
/// each an axis of the registry but `--chain` (it selects the topology).
#[test]
fn workload_takes_the_trial_commands_firewall_flags() {
    use clap::CommandFactory;
    let cli = Cli::command();
    let firewall = |name: &str| -> Vec<String> {
        let cmd = cli.find_subcommand(name).unwrap();
        cmd.get_arguments()
            .filter(|a| a.get_help_heading() == Some("Firewall"))
            .filter_map(|a| a.get_long().map(|l| l.replace('-', "_")))
            .collect()
    };
    let flags = firewall("workload");
    assert_eq!(flags, firewall("flood"));
    assert!(flags.len() >= 7, "{flags:?}");
    for f in flags.iter().filter(|f| *f != "chain") {
        assert!(crate::plan::axes::find(f).is_some(), "--{f} is no axis");
    }
}

/// One definition per axis: a trial command with no flags gives exactly the trial
/// a scenario naming only the workload gives (the registry's defaults).
#[test]
fn command_line_defaults_are_the_axis_registry_defaults() {
    for w in &crate::params::search::Asked::names() {
        // flow and degrade have no default rate on the command line (it must be
        // asked for; the registry's is seed 002's 15 Mb/s); degrade needs an engine.
        let (args, axes): (&[&str], &[(&str, &str)]) = match *w {
            "flow" => (&["--rate", "15M"], &[]),
            "degrade" => (&["--rate", "15M", "--engine", "nft"], &[("engine", "nft")]),
            // The envelope repeats an event on a rule set: it needs both.
            "envelope" => (
                &["--rate", "15M", "--engine", "nft", "--event", "add:1@1s"],
                &[("engine", "nft"), ("event", "add:1@1s")],
            ),
            _ => (&[], &[]),
        };
        let argv = [&["fwbench", w][..], args].concat();
        let cli = Cli::try_parse_named(argv).unwrap_or_else(|e| panic!("{w}: {e}"));
        let (from_cli, ..) = trial_of(&cli.cmd, cli.asked).unwrap().unwrap();
        let v = AxisValues::from_text(w.parse().unwrap(), axes).unwrap();
        let from_plan = crate::plan::build::build(&v, from_cli.seed, &Default::default()).unwrap();
        assert_eq!(
            from_cli, from_plan,
            "{w}: the CLI and the registry disagree"
        );
    }
}

/// A trial command asks for what its name is in the registry (`Cli::asked`): every
/// command with the trial flags is named as a workload or a search.
#[test]
fn trial_commands_are_named_as_the_registry() {
    use clap::CommandFactory;
    let trials: Vec<String> = Cli::command()
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_id() == "repeat"))
        .map(|c| c.get_name().to_string())
        .collect();
    assert!(trials.len() >= 13, "{trials:?}");
    for name in &trials {
        assert!(
            name.parse::<crate::params::search::Asked>().is_ok(),
            "fwbench {name}: no workload or search of this name"
        );
    }
    let cli = Cli::try_parse_named(["fwbench", "check"]).unwrap();
    assert_eq!(cli.asked, None);
}

/// `--load` takes the place of `--rate`: a flood's default rate does not conflict with
/// it, a rate given does; a flow needs one or the other.
#[test]
fn load_takes_the_place_of_the_rate() {
    let trial = |cmd: &str, args: &[&str]| -> Result<TrialParams> {
        let cli = Cli::try_parse_named([&["fwbench", cmd][..], args].concat())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(trial_of(&cli.cmd, cli.asked)?.expect("a trial").0)
    };
    let ev = ["--engine", "nft", "--event", "add:1@1s", "--load", "0.5"];
    for cmd in ["flood", "flow"] {
        let p = trial(cmd, &ev).unwrap();
        let load = p.events.and_then(|e| e.load).unwrap();
        assert_eq!((load.fraction, load.of, load.capacity), (0.5, None, None));
        let both = trial(cmd, &[&ev[..], &["-r", "20kpps"]].concat()).unwrap_err();
        assert!(both.to_string().contains("cannot be used with"), "{both}");
    }
    let neither = trial("flow", &["--engine", "nft"]).unwrap_err();
    assert!(neither.to_string().contains("--rate"), "{neither}");
}

/// Churn replay: `--event-trace FILE` is one update per operation; the trial key
/// changes with what the trace does (not with its comments or file name), and a
/// trial without a trace keeps its key (the key fixture pins those).
#[test]
fn an_event_trace_is_in_the_key_by_its_operations() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.to_string_lossy().into_owned()
    };
    let trial = |args: &[&str]| -> Result<TrialParams> {
        let cli = Cli::try_parse_named([&["fwbench", "flow", "-r", "1kpps"][..], args].concat())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(trial_of(&cli.cmd, cli.asked)?.expect("a trial").0)
    };
    let key = |p: &TrialParams| crate::plan::scenario::trial_key(p, 1);
    let a = file(
        "a.trace",
        "0.5s add 1\n1s add 1\n1.5s delete 1\n2s replace 10\n",
    );
    let same = file(
        "b.trace",
        "# the same\n500ms add 1\n1s add 1 # x\n1.5s delete 1\n2s replace 10\n",
    );
    let other = file(
        "c.trace",
        "0.5s add 1\n1s add 1\n1.5s delete 1\n2s replace 11\n",
    );
    let ta = trial(&["--engine", "nft", "--event-trace", &a]).unwrap();
    let e = ta.events.as_ref().unwrap();
    assert_eq!((e.kind, e.k, e.at_s), (proto::UpdateKind::Add, 1, 0.5));
    assert_eq!(e.trace.as_ref().unwrap().operations, 4);
    let tsame = trial(&["--engine", "nft", "--event-trace", &same]).unwrap();
    let tother = trial(&["--engine", "nft", "--event-trace", &other]).unwrap();
    assert_eq!(key(&ta), key(&tsame), "comments, units and the file's name");
    assert_ne!(key(&ta), key(&tother), "a K changed");
    let json = serde_json::to_string(&ta).unwrap();
    assert!(
        json.contains(&format!(
            r#""trace":{{"operations":4,"fnv":"{}"}}"#,
            e.trace.as_ref().unwrap().fnv
        )),
        "{json}"
    );
    // Without a trace: the event's key form has no `trace`.
    let plain = trial(&["--engine", "nft", "--event", "add:1@0.5s"]).unwrap();
    assert!(!serde_json::to_string(&plain).unwrap().contains("trace"));
    assert_ne!(key(&plain), key(&ta));
    // The schedule the agent runs: one event per operation, once, at its time, the
    // marker on the first only; method and place apply to each.
    let marker = proto::Marker {
        src: "198.18.0.2".parse().unwrap(),
        proto: proto::Proto::Udp,
        dport: 5001,
    };
    let per_rule = trial(&[
        "--engine",
        "nft",
        "--event-trace",
        &a,
        "--event-method",
        "per-rule",
    ])
    .unwrap();
    let specs = crate::workloads::events::gateway_events(&per_rule, Some(marker));
    let got: Vec<_> = specs
        .iter()
        .map(|s| {
            (
                s.kind.name(),
                s.k,
                s.at_s,
                s.count,
                s.rate,
                s.marker.is_some(),
                s.method,
            )
        })
        .collect();
    let pr = proto::UpdateMethod::PerRule;
    assert_eq!(
        got,
        vec![
            ("add", 1, 0.5, 1, None, true, pr),
            ("add", 1, 1.0, 1, None, false, pr),
            ("delete", 1, 1.5, 1, None, false, pr),
            ("replace", 10, 2.0, 1, None, false, pr),
        ]
    );
    assert!(specs.iter().all(|s| s.check().is_ok()));
}

/// `--event-trace` refuses what `--event` refuses, per operation (file and line
/// named), and the flags it replaces.
#[test]
fn an_event_trace_is_refused_where_its_operations_are() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.trace");
    std::fs::write(&f, "0.5s add 1\n2s reload\n").unwrap();
    let f = f.to_string_lossy().into_owned();
    let refused = |cmd: &str, args: &[&str]| -> String {
        let cli = match Cli::try_parse_named([&["fwbench", cmd][..], args].concat()) {
            Ok(c) => c,
            Err(e) => return e.to_string(),
        };
        match trial_of(&cli.cmd, cli.asked) {
            Ok(_) => panic!("{cmd} {args:?}: accepted"),
            Err(e) => {
                assert!(
                    e.downcast_ref::<crate::error::UsageError>().is_some(),
                    "{e:#}"
                );
                format!("{e:#}")
            }
        }
    };
    let e = refused("echo", &["--engine", "nft", "--event-trace", &f]);
    assert!(
        e.starts_with(&format!("{f}:2: reload 1: --event reload: its violations")),
        "{e}"
    );
    let e = refused(
        "flow",
        &[
            "-r",
            "1kpps",
            "--engine",
            "nft",
            "--event-trace",
            &f,
            "--event-method",
            "flush-load",
        ],
    );
    assert!(
        e.starts_with(&format!("{f}:1: add 1: event method flush-load")),
        "{e}"
    );
    let e = refused(
        "flow",
        &["-r", "1kpps", "--event-trace", &f, "--event", "add:1@1s"],
    );
    assert!(
        e.contains("cannot be used with") && e.contains("'--event-trace <FILE>'"),
        "{e}"
    );
}
