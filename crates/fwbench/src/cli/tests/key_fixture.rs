//! Trial keys are part of the results format (an interrupted run resumes by them):
//! the keys of every trial of every `scenarios/*.toml` and of a few trials built by
//! the trial commands, as computed by the build before the trial kinds became typed
//! data, are kept in `tests/data/trial_keys.txt`; this test recomputes them.
//! `FWBENCH_BLESS_KEYS=1 cargo test -p fwbench key_fixture` rewrites the file (only
//! with a schema change: old runs would no longer resume).

use super::*;

/// Trial commands whose keys are pinned (seeds given: echo's is random otherwise).
const COMMANDS: &[&str] = &[
    "echo --seed 7",
    "echo -n 3 -P udp -f 64-1024 --seed 9 --engine nft --rules 100",
    "flood",
    "flood -s 64 --engine nft --rules 1000 -6",
    "flood --frame 128 --flows 8 -k 2 --rate 100kpps --until-ci 1%",
    "flow -r 15M",
    "flow -r 10MB/s -s 1400 --dport 5000-6000 --engine iptables-nft --rules 50",
    "ping -c 100 -i 1ms",
    "ping -c 10000 -i 1ms --timeout-ms 100 -t 1",
    "ping -c 50 -i 100ms --timeout-ms 2000 -s 1000 -6",
    "ndr",
    "ndr --frame 64 --loss 0.1% -t 2 --engine nft --rules 100",
    "degrade -r 15M --engine nft",
    "degrade -r 30M -s 512 --engine iptables-legacy --max-rules 5000 --resolution 100",
    "sessions",
    "sessions -p auto --response 4K -t 2",
    "sessions -p 4 -c 1000 --topology proxy",
    "bulk",
    "bulk -s 1.7M -p 3 -c 9",
    "http",
    "http -s 8M --server-program nginx --client-program curl",
    "connections --limit 20000 --engine nft",
];

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shipped scenarios copied to a fixed place: a key holds the absolute path of an
/// imported ruleset (hot-rules.toml imports hot-rules.nft), so the keys are pinned for
/// scenarios read from `/tmp/fwbench-key-fixture/scenarios`, wherever the checkout is.
fn fixed_copy() -> std::path::PathBuf {
    let dir = std::path::Path::new("/tmp/fwbench-key-fixture/scenarios");
    copy_tree(&root().join("scenarios"), dir);
    dir.to_path_buf()
}

/// `from`'s files and folders (the traces of `scenarios/traces/`) into `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// One line per scenario (its trials in plan order), then one per command.
fn compute() -> String {
    let mut out = String::new();
    // This checkout's scenarios (the fixed place is shared by every checkout on the
    // machine: another one's files may stand there too), read from here, named there.
    let fixed = fixed_copy();
    let mut files: Vec<_> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for here in files {
        let text = std::fs::read_to_string(&here).unwrap();
        let f = fixed.join(here.file_name().unwrap());
        let name = format!("scenarios/{}", f.file_name().unwrap().to_string_lossy());
        let plan = crate::plan::scenario::parse(&f.to_string_lossy(), &text, 1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The count, the first key and a digest of all (4536 keys would make a 127-KB file).
        let mut digest = 0xcbf2_9ce4_8422_2325u64;
        for t in &plan.trials {
            assert_eq!(t.key, crate::plan::scenario::trial_key(&t.params, t.rep));
            for b in t.key.bytes() {
                digest = (digest ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        let first = plan.trials.first().map_or("-", |t| t.key.as_str());
        out += &format!("{name} | {} {first} {digest:016x}\n", plan.trials.len());
    }
    for c in COMMANDS {
        let argv: Vec<&str> = ["fwbench"].into_iter().chain(c.split(' ')).collect();
        let cli = Cli::try_parse_named(&argv).unwrap_or_else(|e| panic!("{c}: {e}"));
        let (p, ..) = trial_of(&cli.cmd, cli.asked).unwrap().unwrap();
        out += &format!(
            "{c} | {} {}\n",
            crate::plan::scenario::trial_key(&p, 1),
            crate::plan::scenario::trial_key(&p, 2)
        );
    }
    out
}

#[test]
fn trial_keys_of_scenarios_and_commands_are_unchanged() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trial_keys.txt");
    let now = compute();
    if std::env::var_os("FWBENCH_BLESS_KEYS").is_some() {
        std::fs::write(&file, &now).unwrap();
    }
    let pinned = std::fs::read_to_string(&file).unwrap();
    // By name: a new scenario or command must be pinned too (bless), a pinned one must
    // give the same keys.
    let by_name = |text: &str| -> std::collections::BTreeMap<String, String> {
        text.lines()
            .filter_map(|l| l.split_once(" | "))
            .map(|(n, k)| (n.to_string(), k.to_string()))
            .collect()
    };
    let (pinned, now) = (by_name(&pinned), by_name(&now));
    for (name, keys) in &pinned {
        assert_eq!(
            Some(keys),
            now.get(name),
            "{name}: a trial key changed: old runs would not resume"
        );
    }
    let new: Vec<&String> = now.keys().filter(|n| !pinned.contains_key(*n)).collect();
    assert!(new.is_empty(), "not pinned yet (bless them): {new:?}");
}
