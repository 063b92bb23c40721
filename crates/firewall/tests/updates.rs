//! Privileged: every engine's update mechanisms on a real kernel. Each case runs in
//! a thread that moved into a network namespace of its own (`unshare(CLONE_NEWNET)`,
//! anonymous: the kernel removes it with the thread, also on panic), installs a rule
//! set, applies an update, counts what is installed, undoes it and counts again.
//! Without root they are reported as ignored (skipped), never passed.

use firewall::engine::backend;
use firewall::install::install;
use firewall::models::{generate, Addressing, Chain, Model, ModelSpec, Position};
use firewall::render::render_with;
use firewall::update::Events;
use firewall::{Engine, EngineOptions, Ip, Prefix, L4};
use proto::{EventPlace, EventSpec, Marker, Proto, UpdateKind, UpdateMethod};

/// Run `f` in a new, anonymous network namespace (this thread and its children only).
fn in_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(move || {
        // SAFETY: unshare(2) with CLONE_NEWNET changes only this thread's network
        // namespace; no memory is involved.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(
            rc,
            0,
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        );
        f()
    })
    .join()
    .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn rule_set(count: u32) -> firewall::RuleSet {
    rule_set_of(Model::Linear, count)
}

/// `count` fillers of `model` between one client and the server, UDP, forward.
fn rule_set_of(model: Model, count: u32) -> firewall::RuleSet {
    let p = |s: &str, len| Prefix {
        addr: s.parse().unwrap(),
        len,
    };
    let a = Addressing {
        clients: vec!["198.18.1.1".parse().unwrap()],
        client_net: p("198.18.0.0", 16),
        server: "198.19.0.2".parse().unwrap(),
        server_net: p("198.19.0.0", 16),
        gateway_client: "198.18.0.1".parse().ok(),
        gateway_server: "198.19.0.1".parse().ok(),
    };
    let spec = ModelSpec {
        model,
        count,
        position: Position::Last,
        chain: Chain::Forward,
        l4: L4::Udp,
        ip: Ip::V4,
        one_way: false,
        dport: None,
        nat_to: None,
    };
    generate(&spec, &a).unwrap()
}

fn spec(kind: UpdateKind, method: UpdateMethod, k: u32, count: u32) -> EventSpec {
    EventSpec {
        kind,
        k,
        method,
        at_s: 0.0,
        rate: (count > 1).then_some(10.0),
        count,
        marker: Some(Marker {
            src: "198.18.1.1".parse().unwrap(),
            proto: Proto::Udp,
            dport: 5001,
        }),
        place: Default::default(),
    }
}

/// Install 50 filler rules with `engine`, apply every update of `event`, and check
/// the counts after each update and after the undo; the text of the marker's rule
/// or element must be in the kernel while the change is in force.
fn case(engine: Engine, event: EventSpec) {
    in_netns(move || {
        let opts = EngineOptions {
            set_room: event.k * event.count,
            ..EngineOptions::default()
        };
        let (rs, r, installed, base) = fifty_installed(engine, opts);
        let b = backend(engine);
        let ctx = format!("{engine} {:?} {:?}", event.kind, event.method);
        let mut ev = Events::new(&r, rs, opts);
        ev.prepare(0, &event)
            .unwrap_or_else(|e| panic!("{ctx}: prepare: {e}"));
        let (k, n) = (event.k as usize, event.count as usize);
        let (rules0, elements0) = b.count(&r).unwrap();
        match event.kind {
            UpdateKind::Delete => assert_eq!(rules0, base.0 + k * n, "{ctx}: prepared"),
            UpdateKind::Reload => assert_eq!(rules0, base.0 + k, "{ctx}: prepared"),
            UpdateKind::RemoveElements => assert_eq!(elements0, base.1 + k * n, "{ctx}: prepared"),
            UpdateKind::ReloadSet => assert_eq!(elements0, base.1 + k, "{ctx}: prepared"),
            UpdateKind::Add | UpdateKind::Replace | UpdateKind::AddElements => {
                assert_eq!((rules0, elements0), base, "{ctx}: nothing prepared")
            }
            UpdateKind::ExpireElements => panic!("{ctx}: armed, not applied (its own test)"),
        }
        for i in 0..event.count {
            let done = ev
                .apply(0, i, &event)
                .unwrap_or_else(|e| panic!("{ctx}: update {i}: {e}"));
            assert!(done.commit_ns > 0 && done.calls > 0, "{ctx}: {done:?}");
            let got = b.count(&r).unwrap();
            let m = i as usize + 1;
            let want = match event.kind {
                UpdateKind::Add => (base.0 + k * m, base.1),
                UpdateKind::Delete => (base.0 + k * (n - m), base.1),
                // Each replacement holds the rule set plus its own K rules, which the
                // engines that collapse fillers into a set collapse too.
                UpdateKind::Replace | UpdateKind::Reload if collapses(engine) => {
                    (base.0, base.1 + k)
                }
                UpdateKind::Replace | UpdateKind::Reload => (base.0 + k, base.1),
                UpdateKind::AddElements => (base.0, base.1 + k * m),
                UpdateKind::RemoveElements => (base.0, base.1 + k * (n - m)),
                // The same set again (ipset: no filled set left beside it after the swap).
                UpdateKind::ReloadSet => (base.0, base.1 + k),
                UpdateKind::ExpireElements => unreachable!("refused above"),
            };
            assert_eq!(got, want, "{ctx}: after update {i}");
        }
        ev.undo().unwrap_or_else(|e| panic!("{ctx}: undo: {e}"));
        assert!(ev.is_clean(), "{ctx}");
        assert_eq!(b.count(&r).unwrap(), base, "{ctx}: after undo");
        installed.remove().unwrap();
    })
}

/// Events on `rs` as `engine` renders it with `opts` (nothing installed: for
/// rendering updates).
fn events_on(rs: &firewall::RuleSet, engine: Engine, opts: EngineOptions) -> Events {
    let r = render_with(rs, engine, &opts).unwrap();
    Events::new(&r, rs.clone(), opts)
}

/// Why `engine` refuses to render update 0 of `spec` on `rs`.
fn refusal(
    rs: &firewall::RuleSet,
    engine: Engine,
    opts: EngineOptions,
    spec: &EventSpec,
) -> String {
    events_on(rs, engine, opts)
        .render(0, 0, spec)
        .unwrap_err()
        .to_string()
}

/// 50 filler rules installed by `engine` with `opts` (in the caller's namespace): the
/// rule set, its rendering, the installation and its (rules, elements) count.
fn fifty_installed(
    engine: Engine,
    opts: EngineOptions,
) -> (
    firewall::RuleSet,
    firewall::render::Rendered,
    firewall::install::Installed,
    (usize, usize),
) {
    let rs = rule_set(50);
    let r = render_with(&rs, engine, &opts).unwrap();
    let installed = install(&r).unwrap();
    let base = backend(engine).count(&r).unwrap();
    (rs, r, installed, base)
}

/// Each step as `ARGV <STDIN>`.
fn shown(steps: &[firewall::change::Step]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            format!(
                "{} <{}>",
                s.argv.join(" "),
                s.stdin.as_deref().unwrap_or("")
            )
        })
        .collect()
}

fn collapses(e: Engine) -> bool {
    matches!(e, Engine::NftSet | Engine::IpsetLegacy | Engine::IpsetNft)
}

fn root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

const RULE_ENGINES: [Engine; 6] = [
    Engine::Nft,
    Engine::NftSet,
    Engine::IptablesLegacy,
    Engine::IptablesNft,
    Engine::IpsetLegacy,
    Engine::IpsetNft,
];

#[test]
#[ignore = "needs root: network namespaces and nft/iptables/ipset (run with --include-ignored as root)"]
fn rules_are_added_deleted_and_replaced_by_every_method() {
    assert!(root(), "needs root");
    for engine in RULE_ENGINES {
        for method in [UpdateMethod::PerRule, UpdateMethod::Batch] {
            case(engine, spec(UpdateKind::Add, method, 3, 2));
            case(engine, spec(UpdateKind::Delete, method, 2, 2));
        }
        // Issue 39: a reload (the rule set in force again, its K rules where they
        // stand) and a replacement, atomic or in two steps.
        for method in [UpdateMethod::Batch, UpdateMethod::FlushLoad] {
            case(engine, spec(UpdateKind::Replace, method, 3, 2));
            case(engine, spec(UpdateKind::Reload, method, 3, 2));
        }
        // One rule at a time: where the drops are rules, not set elements.
        if !collapses(engine) {
            case(
                engine,
                spec(UpdateKind::Replace, UpdateMethod::PerRule, 3, 2),
            );
            case(
                engine,
                spec(UpdateKind::Reload, UpdateMethod::PerRule, 3, 2),
            );
        }
    }
}

/// A reload one rule at a time (issue 39): fwbench's rule set removed, each chain
/// made again holding only its last rule, then one call per other rule, the chain's
/// last first, so the marker's drop rule (at the head) comes in by the last call.
#[test]
fn a_reload_one_rule_at_a_time_makes_the_chain_then_a_call_per_rule() {
    let rs = rule_set(5);
    let rules = rs.rules.len();
    let ev_of = |engine| events_on(&rs, engine, EngineOptions::default());
    for (engine, remove, call) in [
        (
            Engine::Nft,
            "nft -f -",
            "nft insert rule inet fwbench forward ",
        ),
        (
            Engine::IptablesLegacy,
            "iptables-legacy-restore",
            "iptables-legacy -w -I FWBENCH-FORWARD 1 ",
        ),
    ] {
        let (_, steps) = ev_of(engine)
            .render(0, 0, &spec(UpdateKind::Reload, UpdateMethod::PerRule, 2, 1))
            .unwrap();
        let text = shown(&steps);
        let calls = &text[text.len() - (rules + 2 - 1)..];
        assert!(text[0].starts_with(remove), "{engine}: {text:?}");
        assert_eq!(text.len(), 2 + rules + 2 - 1, "{engine}: {text:?}");
        // The chain made holds one rule: the model's last (its catch-all accept).
        let made = &text[1];
        assert!(made.to_lowercase().contains("accept"), "{engine}: {made}");
        assert!(!made.contains("198.18.1.1"), "{engine}: {made}");
        assert!(
            calls.iter().all(|c| c.starts_with(call)),
            "{engine}: {calls:?}"
        );
        assert!(
            calls.last().unwrap().contains("198.18.1.1"),
            "{engine}: the marker's rule last: {calls:?}"
        );
        assert!(
            calls[..calls.len() - 1]
                .iter()
                .all(|c| !c.contains("198.18.1.1")),
            "{engine}: {calls:?}"
        );
    }
    // Where the drops sit in a set, the set is refilled instead (reload-set).
    let per_rule = spec(UpdateKind::Reload, UpdateMethod::PerRule, 2, 1);
    let why = |engine| refusal(&rs, engine, EngineOptions::default(), &per_rule);
    assert!(why(Engine::NftSet).contains("drops sit in sets"));
    assert!(why(Engine::Xdp).contains("per-rule"));
}

#[test]
#[ignore = "needs root: network namespaces and nft/ipset (run with --include-ignored as root)"]
fn set_elements_are_added_and_removed_by_every_method() {
    assert!(root(), "needs root");
    for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
        for method in [UpdateMethod::PerRule, UpdateMethod::Batch] {
            case(engine, spec(UpdateKind::AddElements, method, 4, 2));
            case(engine, spec(UpdateKind::RemoveElements, method, 2, 2));
        }
        // Issue 39: the set loaded again, atomically, in two steps, element by element.
        for method in [
            UpdateMethod::Batch,
            UpdateMethod::FlushLoad,
            UpdateMethod::PerRule,
        ] {
            case(engine, spec(UpdateKind::ReloadSet, method, 2, 2));
        }
    }
}

/// A set's reload, as each method makes it: nft-set in one transaction flushing and
/// filling the set, or a flush then the adds; ipset by a filled set swapped in, or
/// `ipset flush` then the adds. Every element of the set in force is loaded: the
/// installed fillers and the events' K (the marker's first).
#[test]
fn a_sets_reload_renders_atomic_or_in_two_steps() {
    let rs = rule_set(5);
    let steps = |engine, method| {
        let (change, steps) = events_on(&rs, engine, EngineOptions::default())
            .render(0, 0, &spec(UpdateKind::ReloadSet, method, 2, 1))
            .unwrap();
        assert_eq!(change.size(), 5 + 2, "{engine} {method:?}");
        shown(&steps)
    };
    let nft = steps(Engine::NftSet, UpdateMethod::Batch);
    assert_eq!(nft.len(), 1, "{nft:?}");
    assert!(
        nft[0].starts_with("nft -f - <flush set inet fwbench "),
        "{nft:?}"
    );
    assert_eq!(nft[0].matches(" . ").count(), 7, "{nft:?}");
    assert!(nft[0].contains("198.18.1.1 . 5001"), "{nft:?}");
    let nft = steps(Engine::NftSet, UpdateMethod::FlushLoad);
    assert_eq!(nft.len(), 2, "{nft:?}");
    assert!(nft[0].starts_with("nft flush set inet fwbench "), "{nft:?}");
    assert!(
        nft[1].starts_with("nft -f - <add element inet fwbench "),
        "{nft:?}"
    );
    assert_eq!(steps(Engine::NftSet, UpdateMethod::PerRule).len(), 1 + 7);
    let ipset = steps(Engine::IpsetLegacy, UpdateMethod::Batch);
    assert_eq!(ipset.len(), 1, "{ipset:?}");
    let text = &ipset[0];
    assert!(
        text.starts_with("ipset restore <create fwbench-swap hash:ip,port"),
        "{text}"
    );
    assert_eq!(text.matches("\nadd fwbench-swap ").count(), 7, "{text}");
    assert!(
        text.contains("add fwbench-swap 198.18.1.1,udp:5001"),
        "{text}"
    );
    assert!(
        text.ends_with("\nswap fwbench-swap fwbench-fill0\ndestroy fwbench-swap\n>"),
        "{text}"
    );
    let ipset = steps(Engine::IpsetNft, UpdateMethod::FlushLoad);
    assert_eq!(ipset.len(), 2, "{ipset:?}");
    assert_eq!(ipset[0], "ipset flush fwbench-fill0 <>");
    assert!(
        ipset[1].starts_with("ipset restore <add fwbench-fill0 "),
        "{ipset:?}"
    );
    assert_eq!(steps(Engine::IpsetNft, UpdateMethod::PerRule).len(), 1 + 7);
    // Not by map; not where no set is.
    let why = |engine, method| {
        let reload = spec(UpdateKind::ReloadSet, method, 1, 1);
        refusal(&rs, engine, EngineOptions::default(), &reload)
    };
    let e = why(Engine::NftSet, UpdateMethod::Map);
    assert!(e.contains("by method map"), "{e}");
    let e = why(Engine::Nft, UpdateMethod::Batch);
    assert!(e.contains("nft-set, ipset-legacy or ipset-nft"), "{e}");
}

#[test]
fn methods_an_engine_lacks_are_refused_by_name() {
    let rs = rule_set(5);
    let why = |kind, method| {
        let update = spec(kind, method, 1, 1);
        refusal(&rs, Engine::Nft, EngineOptions::default(), &update)
    };
    assert_eq!(
        why(UpdateKind::Add, UpdateMethod::Map),
        "engine nft cannot express the update 'insert 1 rules' by method map"
    );
    // nft has no set here: element updates name the engines that have.
    let e = why(UpdateKind::AddElements, UpdateMethod::Batch);
    assert!(e.contains("nft-set, ipset-legacy or ipset-nft"), "{e}");
}

#[test]
fn updates_render_the_marker_rule_first_and_last_applied() {
    let rs = rule_set(5);
    for (engine, method, want) in [
        (
            Engine::IptablesLegacy,
            UpdateMethod::PerRule,
            "iptables-legacy -w -I FWBENCH-FORWARD 1 -s 198.18.1.1/32 -p udp -m udp --dport 5001 -j DROP",
        ),
        (
            Engine::Nft,
            UpdateMethod::PerRule,
            // No --echo: it would fetch the whole rule set inside the timed commit.
            "nft 'insert rule inet fwbench forward ip saddr 198.18.1.1 udp dport 5001 counter drop'",
        ),
        (
            Engine::IptablesNft,
            UpdateMethod::Batch,
            "iptables-nft-restore -w --noflush <<'EOF'\n*filter\n\
             -I FWBENCH-FORWARD 1 -s 192.0.2.0/32 -p udp -m udp --dport 65535 -j DROP\n\
             -I FWBENCH-FORWARD 1 -s 198.18.1.1/32 -p udp -m udp --dport 5001 -j DROP\n\
             COMMIT\nEOF",
        ),
    ] {
        let r = render_with(&rs, engine, &EngineOptions::default()).unwrap();
        let mut ev = Events::new(&r, rs.clone(), EngineOptions::default());
        let (_, steps) = ev
            .render(0, 0, &spec(UpdateKind::Add, method, 2, 1))
            .unwrap();
        let last = steps.last().unwrap().to_text();
        assert_eq!(last, want, "{engine} {method:?}");
    }
    // Element updates: ipset add, one call per element, the marker's last.
    let r = render_with(&rs, Engine::IpsetLegacy, &EngineOptions::default()).unwrap();
    let mut ev = Events::new(&r, rs.clone(), EngineOptions::default());
    let (_, steps) = ev
        .render(
            0,
            0,
            &spec(UpdateKind::AddElements, UpdateMethod::PerRule, 2, 1),
        )
        .unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(
        steps[1].to_text(),
        "ipset add fwbench-fill0 198.18.1.1,udp:5001"
    );
    // A replacement keeps the hooks' jumps (it refills fwbench's chains only).
    let r = render_with(&rs, Engine::IptablesLegacy, &EngineOptions::default()).unwrap();
    let mut ev = Events::new(&r, rs, EngineOptions::default());
    let (_, steps) = ev
        .render(0, 0, &spec(UpdateKind::Replace, UpdateMethod::Batch, 1, 1))
        .unwrap();
    let text = steps[0].stdin.as_deref().unwrap();
    assert!(
        text.contains(":FWBENCH-FORWARD - [0:0]\n-A FWBENCH-FORWARD -s 198.18.1.1/32"),
        "{text}"
    );
    assert!(!text.contains("-j FWBENCH-FORWARD"), "{text}");
}

/// Issue 39: an add placed after-established goes behind the stateful model's
/// established-accept rule — second in fwbench's chain — with every rule engine that
/// has such a chain; at the head it goes first. The chain as the kernel lists it.
#[test]
#[ignore = "needs root: network namespaces and nft/iptables (run with --include-ignored as root)"]
fn an_add_after_established_goes_behind_the_established_accept() {
    assert!(root(), "needs root");
    for engine in [Engine::Nft, Engine::IptablesLegacy, Engine::IptablesNft] {
        for place in [EventPlace::AfterEstablished, EventPlace::Head] {
            let listed = in_netns(move || {
                let rs = rule_set_of(Model::Stateful, 3);
                let opts = EngineOptions::default();
                let r = render_with(&rs, engine, &opts).unwrap();
                let installed = install(&r).unwrap();
                let mut ev = Events::new(&r, rs, opts);
                let event = EventSpec {
                    place,
                    ..spec(UpdateKind::Add, UpdateMethod::Batch, 1, 1)
                };
                ev.apply(0, 0, &event).unwrap();
                let argv: Vec<&str> = match engine {
                    Engine::Nft => vec!["nft", "list", "chain", "inet", "fwbench", "forward"],
                    Engine::IptablesLegacy => vec!["iptables-legacy", "-S", "FWBENCH-FORWARD"],
                    _ => vec!["iptables-nft", "-S", "FWBENCH-FORWARD"],
                };
                let out = std::process::Command::new(argv[0])
                    .args(&argv[1..])
                    .output()
                    .unwrap();
                ev.undo().unwrap();
                installed.remove().unwrap();
                String::from_utf8_lossy(&out.stdout).into_owned()
            });
            let rules: Vec<&str> = listed
                .lines()
                .filter(|l| {
                    l.contains("drop")
                        || l.contains("DROP")
                        || l.contains("ccept")
                        || l.contains("ACCEPT")
                })
                .filter(|l| !l.contains("policy"))
                .collect();
            let at = rules
                .iter()
                .position(|l| l.contains("198.18.1.1"))
                .unwrap_or(99);
            let want = if place == EventPlace::Head { 0 } else { 1 };
            assert_eq!(at, want, "{engine} {place:?}:\n{listed}");
            let established = rules[1 - want].to_lowercase();
            assert!(established.contains("established"), "{engine}:\n{listed}");
        }
    }
}

/// Adds leave their handles to be read when a change needs them (no `nft` listing
/// after each commit, which would hold the next update back): after two adds of two
/// rules, a deletion of the event's first two takes the *first* add's rules — the
/// second add's stay at the head of the chain, the same handles as before it. A
/// mapping of the pending handles the wrong way round deletes the second add's.
#[test]
#[ignore = "needs root: network namespaces and nft (run with --include-ignored as root)"]
fn pending_handles_are_read_when_a_deletion_needs_them_and_map_to_their_adds() {
    assert!(root(), "needs root");
    in_netns(|| {
        let rs = rule_set(5);
        let opts = EngineOptions::default();
        let r = render_with(&rs, Engine::Nft, &opts).unwrap();
        let installed = install(&r).unwrap();
        let b = backend(Engine::Nft);
        let base = b.count(&r).unwrap();
        let hook = r.layout.first().unwrap().hook;
        let mut ev = Events::new(&r, rs, opts);
        let add = spec(UpdateKind::Add, UpdateMethod::Batch, 2, 2);
        for i in 0..2 {
            let done = ev.apply(0, i, &add).unwrap();
            assert_eq!(done.calls, 1, "one nft call a commit: {done:?}");
        }
        let head = b.handles(&r, hook, 0, 2).unwrap();
        let deletion = spec(UpdateKind::Delete, UpdateMethod::Batch, 2, 1);
        ev.apply(0, 2, &deletion).unwrap();
        assert_eq!(b.count(&r).unwrap(), (base.0 + 2, base.1));
        assert_eq!(
            b.handles(&r, hook, 0, 2).unwrap(),
            head,
            "the second add's rules are gone: the first add's should have been"
        );
        ev.undo().unwrap();
        assert!(ev.is_clean());
        assert_eq!(b.count(&r).unwrap(), base);
        installed.remove().unwrap();
    })
}

/// `expire-elements` (issue 39): the elements go in with a timeout ending when each
/// update is due — nft in ms, ipset in whole seconds rounded up — into sets made with
/// timeout support; the BPF engines' map entries never expire.
#[test]
fn elements_set_to_expire_render_with_their_timeouts() {
    let rs = rule_set(5);
    let timed = EngineOptions {
        set_timeouts: true,
        ..EngineOptions::default()
    };
    let mut spec = spec(UpdateKind::ExpireElements, UpdateMethod::Batch, 3, 2);
    spec.at_s = 1.25;
    spec.rate = Some(2.0);
    let text = |engine| {
        let (change, steps) = events_on(&rs, engine, timed).render(0, 1, &spec).unwrap();
        assert_eq!(change.size(), 3, "{engine}");
        steps
            .iter()
            .map(|s| s.stdin.clone().unwrap_or_else(|| s.argv.join(" ")))
            .collect::<String>()
    };
    // Update 1 is due at 1.75 s.
    let nft = text(Engine::NftSet);
    assert_eq!(nft.matches(" timeout 1750ms").count(), 3, "{nft}");
    for engine in [Engine::IpsetLegacy, Engine::IpsetNft] {
        let ipset = text(engine);
        assert_eq!(
            ipset.matches(" timeout 2\n").count(),
            3,
            "{engine}: {ipset}"
        );
    }
    // The sets are made for it, and the settings say so.
    let r = render_with(&rs, Engine::NftSet, &timed).unwrap();
    assert!(
        r.install[0].text.contains("flags timeout"),
        "{}",
        r.install[0].text
    );
    assert!(r
        .settings
        .sets
        .as_deref()
        .unwrap()
        .contains("flags timeout"));
    let r = render_with(&rs, Engine::NftSet, &EngineOptions::default()).unwrap();
    assert!(!r.install[0].text.contains("timeout"));
    let r = render_with(&rs, Engine::IpsetNft, &timed).unwrap();
    assert!(
        r.install[0].text.contains(" timeout 0 -exist"),
        "{}",
        r.install[0].text
    );
    let e = refusal(&rs, Engine::XdpMap, timed, &spec);
    assert!(
        e.contains("cannot express the update 'add 3 set elements that expire'"),
        "{e}"
    );
}

/// Armed elements leave the set by themselves when due; what has not expired yet when
/// the trial ends is taken out by the undo.
#[test]
#[ignore = "needs root: network namespaces and nft/ipset (run with --include-ignored as root)"]
fn elements_set_to_expire_leave_the_set_when_due_and_the_undo_takes_the_rest() {
    assert!(root(), "needs root");
    for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
        in_netns(move || {
            let opts = EngineOptions {
                set_room: 6,
                set_timeouts: true,
                ..EngineOptions::default()
            };
            let (rs, r, installed, base) = fifty_installed(engine, opts);
            let b = backend(engine);
            let mut ev = Events::new(&r, rs, opts);
            // Update 0 due at 1 s, update 1 at 11 s (after the undo).
            let mut spec = spec(UpdateKind::ExpireElements, UpdateMethod::Batch, 3, 2);
            spec.at_s = 1.0;
            spec.rate = Some(0.1);
            let t0 = std::time::Instant::now();
            let first = ev.arm(0, 0, &spec, 0).unwrap();
            ev.arm(0, 1, &spec, t0.elapsed().as_nanos() as u64).unwrap();
            assert_eq!(first.timeout_ns, 1_000_000_000, "{engine}");
            // The marker's element alone first: two calls, the first one's the slack.
            assert_eq!(first.committed.calls, 2, "{engine}");
            assert!(first.slack_ns <= first.committed.commit_ns, "{engine}");
            assert_eq!(b.count(&r).unwrap(), (base.0, base.1 + 6), "{engine}");
            assert_eq!(ev.size(UpdateKind::ExpireElements), base.1 as u64 + 6);
            std::thread::sleep(
                std::time::Duration::from_millis(1300)
                    - t0.elapsed().min(std::time::Duration::from_millis(1300)),
            );
            assert_eq!(
                b.count(&r).unwrap(),
                (base.0, base.1 + 3),
                "{engine}: update 0's expired"
            );
            ev.apply(0, 0, &spec).unwrap();
            assert_eq!(ev.size(UpdateKind::ExpireElements), base.1 as u64 + 3);
            ev.undo().unwrap_or_else(|e| panic!("{engine}: undo: {e}"));
            assert!(ev.is_clean(), "{engine}");
            assert_eq!(b.count(&r).unwrap(), base, "{engine}: after undo");
            installed.remove().unwrap();
        });
    }
}
