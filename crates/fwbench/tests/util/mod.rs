//! Harness for the privileged integration tests: the real binary, a temp dir per
//! test, and testbeds with unique names that are always removed (also on panic).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

mod skip;
#[allow(unused_imports)]
pub use skip::skip;
mod tool;
#[allow(unused_imports)]
pub use tool::run_ok;
mod policer;
#[allow(unused_imports)]
pub use policer::{assert_latency_at_fractions, Policer};
/// `#[root_test]`, `#[root_test(serial, tb = "forward")]`: a privileged test, ignored
/// without root, on a testbed of its own (the `root-test` crate).
#[allow(unused_imports)]
pub use root_test::root_test;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fwbench")
}

pub fn fwbench(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("run fwbench")
}

/// fwbench in the background, no input, its stdout and stderr piped (read them with
/// `wait_with_output`).
pub fn spawn_piped<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Child {
    use std::process::Stdio;
    Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fwbench")
}

/// Run fwbench: its PID and its output.
pub fn fwbench_with_pid(args: &[&str]) -> (u32, Output) {
    let child = spawn_piped(args);
    let pid = child.id();
    (pid, child.wait_with_output().expect("wait for fwbench"))
}

/// Run fwbench and check it left no ephemeral testbed behind: those are named after the
/// controller's PID (`fwb-e<pid>x…`), so the check holds while other tests run.
pub fn fwbench_leaving_no_testbed(args: &[&str]) -> Output {
    let (pid, o) = fwbench_with_pid(args);
    let left = namespaces_with(&format!("fwb-e{pid}x"));
    assert!(left.is_empty(), "{args:?} left {left:?}");
    o
}

/// Start `c` with no input and its output discarded.
pub fn spawn_silenced(c: &mut Command) -> std::process::Child {
    use std::process::Stdio;
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{c:?}: {e}"))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A unique name per test and process: `t<pid>-<n>`.
pub fn unique(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "t{}{}{}",
        std::process::id() % 100_000,
        tag,
        N.fetch_add(1, Ordering::SeqCst)
    )
}

pub fn namespaces() -> Vec<String> {
    let o = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

pub fn namespaces_with(prefix: &str) -> Vec<String> {
    namespaces()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// A named testbed, removed when dropped.
pub struct TestbedGuard {
    pub name: String,
}

impl TestbedGuard {
    /// The testbed's gateway namespace.
    pub fn gw(&self) -> String {
        format!("fwb-{}-gw", self.name)
    }

    pub fn up(topology: &str) -> TestbedGuard {
        sweep_orphans();
        let name = unique(&topology[..1]);
        let o = fwbench(&["testbed", "up", "--name", &name, "--topology", topology]);
        assert!(o.status.success(), "testbed up: {}", stderr(&o));
        // Registered with this process's PID: see `sweep_orphans`.
        let _ = std::fs::create_dir_all(REGISTRY);
        let _ = std::fs::write(
            Path::new(REGISTRY).join(&name),
            std::process::id().to_string(),
        );
        TestbedGuard { name }
    }
}

/// Where each test process registers its testbeds (a file per testbed name holding the
/// owner's PID; a tmpfs, gone at reboot with the namespaces).
pub const REGISTRY: &str = "/run/fwbench-test-testbeds";

/// Take down, once per test process, the testbeds of test processes that died
/// before their guards ran (`cargo test` stopped by Ctrl-C: the guards' `Drop` never
/// runs, the namespaces stayed). Only testbeds this harness registered, and only
/// where the owner's PID is gone (a PID reused since counts as alive: left alone).
fn sweep_orphans() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(sweep_orphans_now);
}

/// [`sweep_orphans`]'s work, every time it is called.
pub fn sweep_orphans_now() {
    let Ok(dir) = std::fs::read_dir(REGISTRY) else {
        return;
    };
    for e in dir.flatten() {
        let owner = std::fs::read_to_string(e.path())
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        if owner.is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists()) {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let o = fwbench(&["testbed", "down", "--name", &name]);
        if o.status.success() || stderr(&o).contains("no testbed named") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Drop for TestbedGuard {
    /// `testbed down` is refused while a command uses the testbed: a test that panicked
    /// with its spawned fwbench still running stops that process (ours: its PID is in
    /// our testbed's lock) and takes the testbed down then.
    fn drop(&mut self) {
        for signal in ["-TERM", "-TERM", "-KILL"] {
            let o = fwbench(&["testbed", "down", "--name", &self.name]);
            let e = stderr(&o);
            let Some(pid) = e
                .split("in use by fwbench PID ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
            else {
                let _ = std::fs::remove_file(Path::new(REGISTRY).join(&self.name));
                return;
            };
            let _ = Command::new("kill").args([signal, pid]).status();
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        let _ = fwbench(&["testbed", "down", "--name", &self.name]);
        let _ = std::fs::remove_file(Path::new(REGISTRY).join(&self.name));
    }
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let p = std::env::temp_dir().join(unique("dir"));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
    /// A new temp dir and the path of the file `name` in it (not created): a scratch
    /// results file, typically.
    pub fn with_file(name: &str) -> (TempDir, PathBuf) {
        let dir = TempDir::new();
        let file = dir.file(name);
        (dir, file)
    }
    /// A new temp dir with the file `name` in it holding `text` (a scenario, a rule
    /// set): the dir and the file's path.
    pub fn with_text(name: &str, text: impl AsRef<[u8]>) -> (TempDir, PathBuf) {
        let dir = TempDir::new();
        let file = dir.write(name, text);
        (dir, file)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// A FIFO (named pipe) `name` in this directory; its path.
    pub fn fifo(&self, name: &str) -> PathBuf {
        let p = self.file(name);
        let ok = Command::new("mkfifo").arg(&p).status().expect("mkfifo");
        assert!(ok.success(), "mkfifo {}", p.display());
        p
    }
    /// Write `text` to the file `name` in this directory; its path.
    pub fn write(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let p = self.file(name);
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Wait up to `secs` for `cond`.
pub fn wait_for(secs: f64, mut cond: impl FnMut() -> bool) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed().as_secs_f64() < secs {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    cond()
}

/// The output of `child` once it exits; killed, and the test failed naming `what`, when
/// it runs longer than `secs` (a regression would hang the test otherwise).
pub fn output_within(mut child: std::process::Child, secs: u64, what: &str) -> Output {
    if !wait_for(secs as f64, || child.try_wait().expect("wait").is_some()) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what} did not exit within {secs} s");
    }
    child.wait_with_output().expect("wait")
}

/// PIDs of processes inside a namespace.
pub fn pids_in(ns: &str) -> Vec<u32> {
    let o = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .expect("ip netns pids");
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

pub fn alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; check its state.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')),
        Err(_) => false,
    }
}

/// `SELECT count(*) …` through the sqlite3 CLI (installed by scripts/setup.sh), waiting
/// up to 5 s for a writer's lock (a run may be storing a trial at that moment).
pub fn sqlite_count(db: &Path, sql: &str) -> i64 {
    sqlite_text(db, sql).parse().unwrap()
}

/// What `sql` prints in the results file `db` (sqlite3's list mode), trimmed.
pub fn sqlite_text(db: &Path, sql: &str) -> String {
    let o = Command::new("sqlite3")
        .args(["-cmd", ".timeout 5000"])
        .arg(db)
        .arg(sql)
        .output()
        .expect("sqlite3 CLI needed for this check (apt-get install sqlite3)");
    assert!(
        o.status.success(),
        "sqlite3 {sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `fwbench run SCENARIO --db DB`, required to succeed (its stderr and stdout in the
/// message); its output.
pub fn run_stored(scenario: &Path, db: &Path) -> Output {
    let o = fwbench(&["run", scenario.arg(), "--db", db.arg()]);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    o
}

/// Run fwbench, require success, parse its stdout as JSON.
pub fn json_of(args: &[&str]) -> serde_json::Value {
    checked_json(args, fwbench(args), false)
}

/// A search's `--json` (`args[0]` a search), also when it ended flagged for
/// contradicting trials (exit 1, a `contradiction` doubt: a rate passed above one
/// that failed — on a testbed that lost below a policer's rate, which
/// `policer::Policer::search` runs once more): the trial object, whose `error` names
/// the contradiction ([`contradiction`]).
pub fn search_json_of(args: &[&str]) -> serde_json::Value {
    checked_json(args, fwbench(args), true)
}

/// The contradiction a search's trial object was flagged for, if any.
pub fn contradiction(v: &serde_json::Value) -> Option<String> {
    let doubts = v["doubts"].as_array()?;
    doubts
        .iter()
        .find(|d| d["kind"] == "contradiction")
        .map(|d| d["why"].as_str().unwrap_or("").to_string())
}

/// The doubts of a trial flagged for this machine's noise alone — fwbench's own
/// sender behind its schedule, or the CPU it shared taken by other processes — with
/// why; `None` for a trial not flagged, or flagged for anything else. A test of what
/// the gateway does runs such a trial once more (a busy CI host is not its subject).
pub fn flagged_for_noise(v: &serde_json::Value) -> Option<String> {
    let doubts = v["doubts"].as_array()?;
    let noise =
        |d: &&serde_json::Value| d["kind"] == "limited_by_fwbench" || d["kind"] == "disturbed";
    (v["status"] == "flagged" && !doubts.is_empty() && doubts.iter().all(|d| noise(&d))).then(
        || {
            doubts
                .iter()
                .map(|d| d["why"].to_string())
                .collect::<Vec<_>>()
                .join("; ")
        },
    )
}

fn checked_json(args: &[&str], o: Output, contradicted: bool) -> serde_json::Value {
    let flagged = contradicted
        && o.status.code() == Some(1)
        && serde_json::from_str::<serde_json::Value>(&stdout(&o))
            .ok()
            .and_then(|v| contradiction(&v))
            .is_some();
    assert!(
        o.status.success() || flagged,
        "{args:?} failed: {}\n{}",
        stderr(&o),
        stdout(&o)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", stdout(&o)));
    // Every --json output names its shape: fwbench/<kind>/<version>, kind = the command;
    // a trial's object (any workload, any search) is valid against docs/schema/trial.json.
    if args.contains(&"--json") || args.contains(&"-J") {
        let kind = args[0];
        let trial = trial_kinds().contains(&kind);
        let version = if trial { 2 } else { 1 };
        assert_eq!(
            v["schema"],
            serde_json::json!(format!("fwbench/{kind}/{version}")),
            "{args:?}: schema"
        );
        if trial {
            assert_valid("trial.json", &v);
        }
    }
    v
}

/// The commands whose `--json` is one trial object (docs/schema/trial.json): every
/// name the `workload` axis takes (a workload or a search) is a command of that name,
/// so a new family is among them without being listed here.
pub fn trial_kinds() -> Vec<&'static str> {
    fwbench::params::search::Asked::names()
}

/// Validate `v` against docs/schema/`name` (the schema generated from the types).
pub fn assert_valid(name: &str, v: &serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schema")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("{}: not a schema: {e}", path.display()));
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{v}");
}

/// A JSON count.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A JSON number.
pub fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The object in the JSON array `v` whose `key` is `value` (panics naming both when none is).
pub fn item<'a>(v: &'a serde_json::Value, key: &str, value: &str) -> &'a serde_json::Value {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .find(|x| x[key] == value)
        .unwrap_or_else(|| panic!("no {key} = {value:?} in {v}"))
}

/// Whether this kernel has SCTP, from the kernel's own list of registered protocols
/// (`/proc/net/protocols`) — an answer independent of fwbench's probe. Call it after
/// fwbench tried an SCTP socket: that loads the module where there is one.
pub fn sctp_in_kernel() -> bool {
    let text = std::fs::read_to_string("/proc/net/protocols").expect("/proc/net/protocols");
    text.lines()
        .any(|l| l.split_whitespace().next() == Some("SCTP"))
}

/// Timing-sensitive tests of one test binary run one at a time (a panic elsewhere does
/// not poison the others).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static M: std::sync::Mutex<()> = std::sync::Mutex::new(());
    M.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stdout of `argv` run inside the namespace `ns` (empty when it fails).
pub fn in_ns(ns: &str, argv: &[&str]) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(argv)
        .output()
        .expect("ip netns exec");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Run `argv` with `input` on its stdin (`ip -n NS -b -`, `nft -f -`); it must succeed.
pub fn run_with_input(argv: &[&str], input: &str) {
    let (prog, args) = argv.split_first().expect("a program to run");
    let ok = succeeds_with_input(Command::new(prog).args(args), input);
    assert!(ok, "{argv:?} < {input}");
}

/// `nft list ruleset` inside a namespace.
pub fn nft_ruleset(ns: &str) -> String {
    in_ns(ns, &["nft", "list", "ruleset"])
}

/// Run `c` with `input` on its stdin: whether it succeeded (a probe; see
/// [`run_with_input`] for a command that must).
pub fn succeeds_with_input(c: &mut Command, input: &str) -> bool {
    use std::io::Write;
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{c:?}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap_or_else(|e| panic!("{c:?}: {e}"));
    child
        .wait()
        .unwrap_or_else(|e| panic!("{c:?}: {e}"))
        .success()
}

/// `nft -f -` of `text` inside the namespace `ns`; panics (with the text) when refused.
pub fn nft_load(ns: &str, text: &str) {
    run_with_input(&["ip", "netns", "exec", ns, "nft", "-f", "-"], text);
}

/// A test-owned nft table in a namespace (a testbed's gateway), deleted — only it — when
/// dropped, also when the test panics.
pub struct NftTable {
    pub ns: String,
    family: String,
    pub name: String,
}

impl NftTable {
    /// Load `text`, which defines `table FAMILY NAME`, into `ns`.
    pub fn load(ns: &str, family: &str, name: &str, text: &str) -> NftTable {
        // The guard exists before the table: a refused text still deletes what it made.
        let t = NftTable {
            ns: ns.into(),
            family: family.into(),
            name: name.into(),
        };
        nft_load(ns, text);
        t
    }

    /// `table inet NAME` in the testbed's gateway with one forward chain (priority −10:
    /// before fwbench's rules) holding `chain_body`.
    pub fn forward(tb: &TestbedGuard, name: &str, chain_body: &str) -> NftTable {
        NftTable::forward_in(&tb.gw(), name, chain_body)
    }

    /// The same in the gateway namespace `ns` (one a test made itself).
    pub fn forward_in(ns: &str, name: &str, chain_body: &str) -> NftTable {
        let text = format!(
            "table inet {name} {{\n chain c {{ type filter hook forward priority -10; policy accept;\n {chain_body}\n }}\n}}\n"
        );
        NftTable::load(ns, "inet", name, &text)
    }

    /// Packets counted by each of the table's counters, in rule order.
    pub fn counters(&self) -> Vec<u64> {
        let text = in_ns(
            &self.ns,
            &["nft", "-j", "list", "table", &self.family, &self.name],
        );
        let v: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("nft -j ({e}): {text}"));
        v["nftables"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|item| item["rule"]["expr"].as_array().into_iter().flatten())
            .filter_map(|e| e["counter"]["packets"].as_u64())
            .collect()
    }

    /// Packets counted by the table's first counter.
    pub fn counter(&self) -> u64 {
        *self
            .counters()
            .first()
            .unwrap_or_else(|| panic!("no counter in table {}", self.name))
    }
}

impl Drop for NftTable {
    fn drop(&mut self) {
        let _ = in_ns(
            &self.ns,
            &["nft", "delete", "table", &self.family, &self.name],
        );
    }
}

/// fwbench in the background, its output discarded (a trial to interrupt).
pub fn spawn_quiet(args: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run fwbench")
}

/// SIGKILL every process in a namespace this test created (agents it started).
pub fn kill_all_in(ns: &str) {
    for pid in pids_in(ns) {
        Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill");
    }
}

/// One trial command on a testbed, `--no-store --json`, 1 s unless `extra` has `-t`;
/// its JSON checked as [`json_of`] does.
pub fn trial_json(kind: &str, testbed: &str, extra: &[&str]) -> serde_json::Value {
    json_of(&trial_args(kind, testbed, extra))
}

/// One trial command on a testbed, `--no-store --json` with `extra` as given: its JSON
/// whatever the exit code (a trial whose traffic is dropped exits 1 and still prints it).
pub fn trial_value(kind: &str, testbed: &str, extra: &[&str]) -> serde_json::Value {
    let a = [&[kind, "--testbed", testbed, "--no-store", "--json"], extra].concat();
    let o = fwbench(&a);
    serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {a:?}\n{}\n{}", stdout(&o), stderr(&o)))
}

/// An echo trial that passed: status ok, no invalid frame, some throughput (`ctx` and
/// the trial in every message).
pub fn assert_echo_ok(v: &serde_json::Value, ctx: &str) {
    assert_eq!(v["status"], "ok", "{ctx}: {v}");
    assert_eq!(u(&v["result"]["validation_errors"]), 0, "{ctx}: {v}");
    assert!(f(&v["result"]["throughput_bps"]) > 0.0, "{ctx}: {v}");
}

/// The arguments of [`trial_json`], for callers that run them another way.
pub fn trial_args<'a>(kind: &'a str, testbed: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![kind, "--testbed", testbed, "--no-store", "--json"];
    if !extra.contains(&"-t") {
        args.extend_from_slice(&["-t", "1"]);
    }
    args.extend_from_slice(extra);
    args
}

/// Refused as bad input: exit 2, and stderr names `needle`.
pub fn assert_refused(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(needle), "{}", stderr(o));
}

/// Each line of arguments (split at white space) is refused as bad input: exit 2, a
/// message on stderr, and the message names its `says` (`""`: any message will do).
pub fn refused<'a>(cases: impl IntoIterator<Item = (&'a str, &'a str)>) {
    for (args, says) in cases {
        let o = fwbench(&argv(args));
        assert_eq!(o.status.code(), Some(2), "{args}: {}", stderr(&o));
        assert!(!stderr(&o).trim().is_empty(), "{args}: no message");
        assert!(stderr(&o).contains(says), "{args}: {}", stderr(&o));
    }
}

/// Stderr names `needle` (whatever the exit code).
pub fn assert_says(o: &Output, needle: &str) {
    assert!(
        stderr(o).contains(needle),
        "{needle:?} not in:\n{}",
        stderr(o)
    );
}

/// Stdout names `needle`.
pub fn assert_prints(o: &Output, needle: &str) {
    assert!(
        stdout(o).contains(needle),
        "{needle:?} not in:\n{}",
        stdout(o)
    );
}

/// An echo trial in the background on a testbed (`--no-store`, output discarded), to
/// be interrupted: `extra` names the duration (`-t`) and the rules.
pub fn spawn_echo(testbed: &str, extra: &[&str]) -> std::process::Child {
    let mut args = vec!["echo", "--testbed", testbed, "--no-store"];
    args.extend_from_slice(extra);
    spawn_quiet(&args)
}

/// Everything fwbench could have left in a gateway namespace.
pub fn gateway_state(ns: &str) -> String {
    let mut s = String::new();
    s += &in_ns(ns, &["nft", "list", "ruleset"]);
    for save in [
        "iptables-legacy-save",
        "ip6tables-legacy-save",
        "iptables-nft-save",
        "ip6tables-nft-save",
    ] {
        s += &in_ns(ns, &[save])
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
    }
    s += &in_ns(ns, &["ipset", "list", "-n"]);
    s
}

/// Whether a namespace's state ([`gateway_state`]) holds anything of fwbench's.
pub fn has_fwbench(state: &str) -> bool {
    state.contains("fwbench") || state.contains("FWBENCH")
}

/// Nothing of fwbench's is left in the gateway namespace `ns` (`ctx` in the message).
pub fn assert_gateway_clean(ns: &str, ctx: &str) {
    let left = gateway_state(ns);
    assert!(!has_fwbench(&left), "{ctx} left: {left}");
}

/// The netfilter engines (every engine but the BPF ones), each a trial's `--engine`.
pub const NETFILTER_ENGINES: &[&str] = &[
    "nft",
    "nft-set",
    "iptables-legacy",
    "iptables-nft",
    "ipset-legacy",
    "ipset-nft",
];

/// The string field `key` of each object in the JSON array `v` (e.g. the roles of a
/// trial's `placement`).
pub fn fields<'a>(v: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| {
            x[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string {key} in {x}"))
        })
        .collect()
}

/// Start an echo trial on a testbed (`extra`: duration and rules), wait until its rules
/// are in the gateway namespace `gw`, SIGKILL the gateway agent (it undoes nothing) and
/// see the trial fail because of that. Returns the gateway's state left behind.
///
/// The trial must fail by the kill, not by itself: a trial that fails on its own (a
/// client that cannot bind its address) tears its rules down at once, and whether the
/// kill came before that teardown was a race (issue 24: a testbed file without
/// `manage_addresses` failed every trial this way and the cleanup test passed or not
/// by timing).
pub fn crash_gateway_agent(testbed: &str, gw: &str, extra: &[&str]) -> String {
    let child = Command::new(bin())
        .args(["echo", "--testbed", testbed, "--no-store"])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run fwbench");
    let installed = wait_for(30.0, || gateway_state(gw).contains("fwbench"));
    kill_all_in(gw);
    let o = child.wait_with_output().expect("wait for fwbench");
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(installed, "rules never installed: {said}");
    assert_ne!(
        o.status.code(),
        Some(0),
        "a trial whose gateway died is not ok: {said}"
    );
    assert!(
        said.contains("failed: gateway agent"),
        "the trial failed, but not by the killed gateway agent: {said}"
    );
    gateway_state(gw)
}

/// Pin the client and the server to CPU 0 and the gateway to CPU 1.
pub const PINNED: [&str; 6] = [
    "--pin-client",
    "0",
    "--pin-gateway",
    "1",
    "--pin-server",
    "0",
];

/// A command line written as one string, split at whitespace:
/// `argv("sessions -p 8 --count 800")` (for arguments without spaces).
pub fn argv(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// An argument of [`cmd!`] taken whole: a string or a (UTF-8) path.
pub trait Arg {
    fn arg(&self) -> &str;
}

impl Arg for str {
    fn arg(&self) -> &str {
        self
    }
}

impl Arg for String {
    fn arg(&self) -> &str {
        self
    }
}

impl Arg for Path {
    fn arg(&self) -> &str {
        self.to_str()
            .unwrap_or_else(|| panic!("not UTF-8: {}", self.display()))
    }
}

impl Arg for PathBuf {
    fn arg(&self) -> &str {
        self.as_path().arg()
    }
}

impl<T: Arg + ?Sized> Arg for &T {
    fn arg(&self) -> &str {
        (**self).arg()
    }
}

/// A command line of string literals, each split at whitespace, and other arguments
/// (references to strings or paths: names, files) taken whole:
/// `cmd!("flood --testbed", &tb.name, "-t 1 --db", &db)`.
#[allow(unused_macros)]
macro_rules! cmd {
    (@push $v:ident;) => {};
    (@push $v:ident; $l:literal $(, $($rest:tt)*)?) => {
        $v.extend($l.split_whitespace());
        cmd!(@push $v; $($($rest)*)?);
    };
    (@push $v:ident; $e:expr $(, $($rest:tt)*)?) => {
        $v.push($crate::util::Arg::arg($e));
        cmd!(@push $v; $($($rest)*)?);
    };
    ($($t:tt)*) => {{
        let mut v: Vec<&str> = Vec::new();
        cmd!(@push v; $($t)*);
        v
    }};
}
#[allow(unused_imports)]
pub(crate) use cmd;

/// A trial's stored per-update rows: `n`, each committed without an error. `o`: the
/// run's output, shown when a count is not what it should be.
pub fn updates_stored(db: &Path, o: &Output, n: i64) {
    let seen = || format!("{}\n{}", stdout(o), stderr(o));
    assert_eq!(
        sqlite_count(db, "SELECT count(*) FROM gateway_updates"),
        n,
        "{}",
        seen()
    );
    assert_eq!(
        sqlite_count(
            db,
            "SELECT count(*) FROM gateway_updates WHERE error IS NULL AND commit_ms > 0"
        ),
        n,
        "{}",
        seen()
    );
}

/// Gateway events (issue 25): the checks every trial with one `add:1` update for its
/// marker passes: one row per scheduled update, the marker's drop dated (below the
/// trial's length), and the loss in the bins the trial's (`lost`: what the workload
/// counts as lost).
pub fn update_took_effect(v: &serde_json::Value, ctx: &str, lost: u64) -> f64 {
    assert_eq!(v["status"], "ok", "{ctx}: {v}");
    let e = &v["result"]["events"];
    let ups = e["updates"]
        .as_array()
        .unwrap_or_else(|| panic!("{ctx}: {v}"));
    assert_eq!(ups.len(), 1, "{ctx}: one row per scheduled update");
    assert_eq!(
        v["gateway"]["updates"].as_array().unwrap().len(),
        1,
        "{ctx}"
    );
    let up = &ups[0];
    assert!(up["error"].is_null(), "{ctx}: {up}");
    assert!(f(&up["commit_ms"]) > 0.0, "{ctx}: {up}");
    let tte = f(&up["time_to_effect_ms"]);
    assert!(tte > -1.0 && tte < 2000.0, "{ctx}: time to effect {tte} ms");
    assert_eq!(u(&e["bins_lost"]), lost, "{ctx}: bins vs trial loss");
    // Undone before the verdicts: the rule set is as installed.
    assert_eq!(v["verdicts"]["ok"], true, "{ctx}: {}", v["verdicts"]);
    tte
}
