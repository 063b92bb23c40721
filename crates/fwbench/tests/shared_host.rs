//! Safe on a shared host (issue 38, items 2–4): a killed run leaves the host's
//! conntrack settings changed no longer than until the next fwbench command; scratch
//! directories never follow a planted path; a named testbed whose trial was killed is
//! rebuilt before the next trial, whose `clean_start` is the truth. Privileged
//! (namespaces, the host's conntrack settings); run with `--include-ignored` as root.

mod util;

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use util::*;

const MAX: &str = "/proc/sys/net/netfilter/nf_conntrack_max";
const HASHSIZE: &str = "/sys/module/nf_conntrack/parameters/hashsize";

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .trim()
        .to_owned()
}

/// The host's conntrack settings as they were, written back whatever happens to the
/// test (a value left at 5000 would limit every namespace of the machine).
struct HostSettings {
    max: String,
    hashsize: String,
}

impl HostSettings {
    /// The settings as they are; `None`, the calling test skipped, when nf_conntrack is
    /// not loaded (`return` then).
    fn save() -> Option<HostSettings> {
        if !Path::new(MAX).exists() || !Path::new(HASHSIZE).exists() {
            skip("nf_conntrack not loaded (modprobe nf_conntrack)");
            return None;
        }
        Some(HostSettings {
            max: read(MAX),
            hashsize: read(HASHSIZE),
        })
    }

    fn now_differ(&self) -> Vec<String> {
        let mut d = vec![];
        if read(MAX) != self.max {
            d.push(format!("nf_conntrack_max {} (was {})", read(MAX), self.max));
        }
        if read(HASHSIZE) != self.hashsize {
            d.push(format!(
                "hashsize {} (was {})",
                read(HASHSIZE),
                self.hashsize
            ));
        }
        d
    }
}

impl Drop for HostSettings {
    fn drop(&mut self) {
        // The hash first: its size bounds nothing, the maximum may then come back.
        let _ = std::fs::write(HASHSIZE, &self.hashsize);
        let _ = std::fs::write(MAX, &self.max);
    }
}

/// fwbench in a process group of its own (with its agents), stderr piped.
fn spawn_group(args: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("run fwbench")
}

/// [`spawn_group`], once `started` holds (within 30 s); killed, and the test failed
/// with its stderr, when it never does (`never`: what did not happen).
fn spawn_group_until(
    args: &[&str],
    started: impl FnMut() -> bool,
    never: &str,
) -> std::process::Child {
    let mut child = spawn_group(args);
    if !wait_for(30.0, started) {
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        panic!("{never}: {}", stderr(&o));
    }
    child
}

/// The arguments of a 30-s `newflows` trial on `tb` (8 000 flows at 4 kpps, nft's
/// stateful rules) that sets the host's `nf_conntrack_max` to 5000, and `extra`.
fn ct_max_trial<'a>(tb: &'a TestbedGuard, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = cmd!(
        "newflows --testbed",
        &tb.name,
        "--flows 8000 -r 4kpps -t 30 --ct-max 5000 --engine nft --model stateful --no-store"
    );
    args.extend_from_slice(extra);
    args
}

/// SIGKILL, at once, the controller `child` (ours: started by [`spawn_group`]), its
/// process group, and every process in the testbed's namespaces (its agents, each in
/// a process group of its own), then wait until they are gone: nobody is left to
/// undo anything.
fn kill_group(child: &mut std::process::Child, namespaces: &[String]) {
    let mut targets = vec!["-KILL".to_string(), "--".into(), format!("-{}", child.id())];
    for ns in namespaces {
        targets.extend(pids_in(ns).iter().map(|p| p.to_string()));
    }
    // A short-lived process of the list may be gone already: `kill` then says so and
    // fails, having killed the others.
    let _ = Command::new("kill")
        .args(&targets)
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    assert!(
        wait_for(20.0, || namespaces.iter().all(|ns| pids_in(ns).is_empty())),
        "processes left in {namespaces:?}"
    );
}

/// A one-second flood with 10 nft rules on testbed `testbed`, and `extra`.
fn nft_flood(testbed: &str, extra: &[&str]) -> std::process::Output {
    let mut args = cmd!(
        "flood --engine nft --rules 10 -t 1 -r 1kpps --testbed",
        testbed
    );
    args.extend(extra);
    fwbench(&args)
}

fn testbed_namespaces(tb: &TestbedGuard) -> Vec<String> {
    ["cli", "gw", "srv"]
        .iter()
        .map(|r| format!("fwb-{}-{r}", tb.name))
        .collect()
}

/// Item 2: `newflows --ct-max 5000 --ct-buckets 4096` killed with its agents (SIGKILL to
/// all at once: nobody left to restore anything), then any fwbench command: the host's
/// `nf_conntrack_max` and hash size are as they were before.
#[root_test(needs = "network namespaces and the host's conntrack settings")]
fn a_killed_ct_max_trial_leaves_the_hosts_settings_changed_only_until_the_next_command() {
    let _serial = serial();
    let Some(host) = HostSettings::save() else {
        return;
    };
    if host.max == "5000" || host.hashsize == "4096" {
        return skip("the host's conntrack settings already are the trial's: nothing would change");
    }
    let tb = TestbedGuard::up("forward");
    let mut child = spawn_group_until(
        &ct_max_trial(&tb, &["--ct-buckets", "4096"]),
        || read(MAX) == "5000" && read(HASHSIZE) != host.hashsize,
        "the trial never changed the host's settings",
    );
    kill_group(&mut child, &testbed_namespaces(&tb));
    // Any command that touches the testbed.
    let o = fwbench(&["testbed", "status", "--name", &tb.name]);
    assert!(o.status.success(), "{}", stderr(&o));
    let differ = host.now_differ();
    assert!(
        differ.is_empty(),
        "left changed: {differ:?}; {}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("cleaned up after a killed run") && stderr(&o).contains(MAX),
        "{}",
        stderr(&o)
    );
    // Nothing left to restore: `fwbench check` says so.
    let o = fwbench(&["check"]);
    assert!(
        stdout(&o).contains("nothing left changed"),
        "{}",
        stdout(&o)
    );
}

/// Item 2, `fwbench check`: a journal left by a dead holder (written under the lock
/// as a holder writes it, the value then changed) is restored and reported.
#[root_test(needs = "the host's conntrack settings")]
fn check_restores_and_reports_what_a_killed_run_left() {
    let _serial = serial();
    let Some(host) = HostSettings::save() else {
        return;
    };
    // fwbench makes its state directory first (any command that touches the host).
    let o = fwbench(&["testbed", "status"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mode = std::fs::metadata("/run/fwbench").unwrap().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let script = format!(
        "b=$(cat {MAX}) && printf '{{\"pid\":{pid},\"start\":1,\"items\":[[\"{MAX}\",\"%s\"]]}}' \"$b\" \
         > /run/fwbench/conntrack-saved.json && echo $((b + 1)) > {MAX}"
    );
    let o = Command::new("flock")
        .args(["/run/fwbench/conntrack.lock", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(read(MAX), host.max);
    let o = fwbench(&["check"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(MAX), host.max, "{out}");
    assert!(
        out.contains(&format!(
            "restored: conntrack (pid {pid}): restored {MAX} to {}",
            host.max
        )),
        "{out}"
    );
    let v = json_of(&["check", "--json"]);
    assert_eq!(v["host_state"], serde_json::json!([]), "{v}");
}

/// Item 2, the agent's own way: only the controller killed (its agents get the
/// parent-death signal), the gateway agent restores the settings itself, though its
/// parent is gone.
#[root_test(needs = "network namespaces and the host's conntrack settings")]
fn a_gateway_agent_whose_controller_was_killed_restores_the_hosts_settings() {
    let _serial = serial();
    let Some(host) = HostSettings::save() else {
        return;
    };
    if host.max == "5000" {
        return skip("the host's nf_conntrack_max already is the trial's");
    }
    let tb = TestbedGuard::up("forward");
    let child = spawn_group_until(
        &ct_max_trial(&tb, &[]),
        || read(MAX) == "5000",
        "the trial never changed nf_conntrack_max",
    );
    let st = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    let nss = testbed_namespaces(&tb);
    assert!(
        wait_for(20.0, || nss.iter().all(|ns| pids_in(ns).is_empty())),
        "agents left in {nss:?}"
    );
    // No fwbench command since: the agent did it.
    let differ = host.now_differ();
    assert!(
        differ.is_empty(),
        "left changed: {differ:?}; {}",
        stderr(&o)
    );
}

/// Item 3: the old scratch names `$TMPDIR/fwbench-proof-PID` (a symlink to a directory
/// of the victim's) and `$TMPDIR/fwbench-advise-PID` (another user's directory, open to
/// all) planted before `rules advise --verify-on-testbed --measure` (run as PID 1 of a
/// PID namespace, so the names are known): nothing is written through either, and no
/// scratch directory is left. A `TMPDIR` that does not exist is bad input, never made.
#[root_test]
fn scratch_directories_never_follow_a_planted_path() {
    let _serial = serial();
    if Command::new("unshare").arg("--version").output().is_err() {
        return skip("unshare (util-linux) not found");
    }
    let tb = TestbedGuard::up("input");
    let dir = TempDir::new();
    let tmp = dir.path().join("tmp");
    let victim = dir.path().join("victim");
    let foreign = tmp.join("fwbench-advise-1");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir(&victim).unwrap();
    std::os::unix::fs::symlink(&victim, tmp.join("fwbench-proof-1")).unwrap();
    std::fs::create_dir(&foreign).unwrap();
    std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(
        &foreign,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let mut rules =
        String::from("*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for i in 0..20 {
        rules += &format!("-A INPUT -s 198.51.100.{i}/32 -j DROP\n");
    }
    rules += "-A INPUT -p udp -m udp --dport 5000 -j ACCEPT\nCOMMIT\n";
    let f = dir.write("bl.rules", rules);
    let advise = |tmpdir: &Path| {
        Command::new("unshare")
            .args(["--pid", "--fork", "--mount-proc", bin()])
            .args(["rules", "advise", "--import", f.to_str().unwrap()])
            .args(["--verify-on-testbed", "--measure", "--testbed", &tb.name])
            .args(["--dport", "5000", "--repeat", "2", "-t", "1"])
            .env("TMPDIR", tmpdir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = advise(&tmp);
    assert!(o.status.success(), "{}", stderr(&o));
    let written: Vec<_> = std::fs::read_dir(&victim).unwrap().flatten().collect();
    assert!(
        written.is_empty(),
        "written through the symlink: {written:?}"
    );
    let written: Vec<_> = std::fs::read_dir(&foreign).unwrap().flatten().collect();
    assert!(
        written.is_empty(),
        "written into another user's directory: {written:?}"
    );
    assert_eq!(std::fs::metadata(&foreign).unwrap().uid(), 65534);
    // Only the planted names remain: every scratch directory of ours was removed.
    let mut left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["fwbench-advise-1", "fwbench-proof-1"]);
    // A TMPDIR that does not exist: refused (exit 2), and not made.
    let missing = dir.path().join("nonexistent");
    let o = advise(&missing);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    assert!(!missing.exists(), "TMPDIR was created");
}

/// Item 4: a legacy flood on a named testbed killed with its agents (the legacy
/// `filter` table stays instantiated in the gateway's namespace); the next trial on
/// the testbed starts clean — the testbed is rebuilt and says so — and the stored
/// `clean_start` is the truth (1 with no residue before the trial).
#[root_test]
fn a_named_testbed_whose_trial_was_killed_is_rebuilt_before_the_next() {
    let _serial = serial();
    if Command::new("iptables-legacy")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("iptables-legacy not found");
    }
    let tb = TestbedGuard::up("forward");
    let gw = tb.gw();
    let legacy = || in_ns(&gw, &["cat", "/proc/net/ip_tables_names"]);
    let mut child = spawn_group_until(
        &cmd!(
            "flood --testbed",
            &tb.name,
            "--engine iptables-legacy --rules 10 -t 30 -r 1kpps --no-store"
        ),
        || legacy().contains("filter"),
        "the legacy rules never came",
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    kill_group(&mut child, &testbed_namespaces(&tb));
    assert!(legacy().contains("filter"), "the legacy table should stay");
    let (_dir, db) = TempDir::with_file("r.db");
    let o = nft_flood(&tb.name, &cmd!("--db", &db, "--json"));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // What the gateway found before its setup: no legacy table (the killed trial's
    // `filter` stayed in the old namespace), and the trial says so.
    let before = &v["gateway"]["residue"]["before"]["legacy_tables"];
    let before = before
        .as_array()
        .unwrap_or_else(|| panic!("no residue.before in {v}"));
    assert!(
        before.is_empty(),
        "residue before the trial: {before:?}; {err}"
    );
    assert_eq!(v["clean_start"], true, "{v}");
    assert!(
        err.contains("did not end") && err.contains("rebuilt"),
        "{err}"
    );
    // Stored: one trial, clean at start, with no legacy table before it.
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM trials WHERE json_extract(results, '$.clean_start') = 1"
        ),
        1
    );
    // The next run on it: nothing to rebuild.
    let o = fwbench(&cmd!(
        "flood --testbed",
        &tb.name,
        "-t 1 -r 1kpps --no-store"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("rebuilt"), "{}", stderr(&o));
}

/// Item 6, a killed gateway agent: its rule set stays on the gateway (the agent is
/// killed by PID: the processes in the testbed's gateway namespace, which this test's
/// fwbench started). The next trial undoes it before its own setup and says what
/// happened (it used to say "the gateway kept nft table inet fwbench gone after a
/// trial; rebuilt the testbed"), and its gateway's state before it holds nothing of
/// the dead agent's.
#[root_test(serial, tb = "forward")]
fn a_killed_gateway_agents_rules_are_undone_before_the_next_trial_which_says_so() {
    let gw = tb.gw();
    let left = crash_gateway_agent(&tb.name, &gw, &argv("-t 30 --engine nft --rules 50"));
    assert!(left.contains("fwbench"), "the dead agent's table: {left}");
    let o = nft_flood(&tb.name, &["--no-store", "--json"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("died during an earlier trial")
            && err.contains("fwbench removed")
            && err.contains("which started clean"),
        "{err}"
    );
    assert!(!err.contains("kept") && !err.contains("rebuilt"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let residue = &v["gateway"]["residue"];
    let tables = residue["before"]["nft_tables"].to_string();
    assert!(!tables.contains("fwbench"), "before the trial: {tables}");
    assert_eq!(residue["left"], serde_json::json!([]), "{residue}");
    assert!(
        residue["removed_before"]
            .to_string()
            .contains("fwbench removed"),
        "{residue}"
    );
    assert_eq!(v["clean_start"], true, "{v}");
    assert!(!gateway_state(&gw).contains("fwbench"));
}

/// Item 6, a forward testbed whose server namespace was deleted: it is listed as
/// incomplete with what is missing (it used to be listed as `input`, the topology
/// whose server lives in the gateway), and a trial on it is refused with the reason.
#[root_test(serial, fwd = "forward", input = "input")]
fn a_forward_testbed_without_its_server_namespace_is_incomplete_not_input() {
    let srv = format!("fwb-{}-srv", fwd.name);
    let o = Command::new("ip")
        .args(["netns", "del", &srv])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fwbench(&["testbed", "status"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed = stdout(&o);
    let line = |name: &str| {
        listed
            .lines()
            .find(|l| l.split('\t').next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
            .to_owned()
    };
    let broken = line(&fwd.name);
    assert!(
        broken.contains("incomplete") && broken.contains(&srv) && !broken.ends_with("input"),
        "{broken}"
    );
    assert!(line(&input.name).ends_with("\tinput"), "{listed}");
    let o = fwbench(&[
        "flood",
        "--testbed",
        &fwd.name,
        "-t",
        "1",
        "-r",
        "1kpps",
        "--no-store",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("incomplete") && err.contains(&srv) && err.contains("testbed down"),
        "{err}"
    );
    // `testbed down` still removes what is left.
    let o = fwbench(&["testbed", "down", "--name", &fwd.name]);
    assert!(o.status.success(), "{}", stderr(&o));
}
