//! Testbeds on "remote" hosts: three namespaces of a local testbed, each running a
//! real `sshd` on a management link, and the controller in a fourth namespace that
//! reaches them only over SSH — as a lab's controller reaches its hosts. The testbed
//! file points the roles at `root@198.19.254.{2,6,10}`; fwbench copies itself there
//! (into the test's temp dir) and runs its agents over the SSH sessions' stdio.
//!
//! ```text
//!   [ctl] m1 ─ m0 [fwb-N-cli] c0 ── g0 [fwb-N-gw] g1 ── s0 [fwb-N-srv]
//!         m2 ──────────────────── m0 ┘                      │
//!         m3 ─────────────────────────────────────────── m0 ┘
//! ```
//!
//! Needs root and `/usr/sbin/sshd` (Debian's openssh-server; `scripts/setup.sh`
//! installs it and leaves the system's sshd stopped).

mod util;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use util::*;

const SSHD: &str = "/usr/sbin/sshd";

fn run(prog: &str, args: &[&str]) -> Output {
    let o = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{prog}: {e}"));
    assert!(
        o.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Three hosts with sshd, a controller namespace, a temp dir with keys; all removed
/// on drop (sshd killed by the PIDs started here), also when a test panics.
struct Hosts {
    tb: TestbedGuard,
    ctl: String,
    dir: TempDir,
    sshd: Vec<Child>,
    made_run_sshd: bool,
    ssh_dirs_before: Vec<String>,
}

/// Management addresses: (host's namespace suffix, controller side, host side).
const MGMT: [(&str, &str, &str); 3] = [
    ("cli", "198.19.254.1", "198.19.254.2"),
    ("gw", "198.19.254.5", "198.19.254.6"),
    ("srv", "198.19.254.9", "198.19.254.10"),
];

fn ssh_dirs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("fwbench-ssh-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// No control socket directory was left (stale ones of dead controllers may be
/// reaped meanwhile: fewer is fine).
fn assert_no_new_ssh_dirs(before: &[String]) {
    let now = ssh_dirs();
    assert!(
        now.iter().all(|d| before.contains(d)),
        "left: {now:?} (before: {before:?})"
    );
}

impl Hosts {
    fn up() -> Hosts {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} missing: install openssh-server (scripts/setup.sh does)"
        );
        let ssh_dirs_before = ssh_dirs();
        let tb = TestbedGuard::up("forward");
        let ctl = format!("{}-ctl", tb.name);
        let made_run_sshd = !Path::new("/run/sshd").exists();
        let mut h = Hosts {
            tb,
            ctl,
            dir: TempDir::new(),
            sshd: vec![],
            made_run_sshd,
            ssh_dirs_before,
        };
        if made_run_sshd {
            std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        }
        run("ip", &["netns", "add", &h.ctl]);
        let d = h.dir.path().display().to_string();
        for (name, comment) in [
            ("host_key", "host"),
            ("id", "controller"),
            ("wrong_id", "x"),
        ] {
            run(
                "ssh-keygen",
                &[
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-C",
                    comment,
                    "-f",
                    &format!("{d}/{name}"),
                ],
            );
        }
        std::fs::copy(h.dir.file("id.pub"), h.dir.file("authorized_keys")).unwrap();
        for (i, (suffix, ctl_addr, host_addr)) in MGMT.iter().enumerate() {
            let ns = format!("fwb-{}-{suffix}", h.tb.name);
            let m = format!("m{}", i + 1);
            run(
                "ip",
                &[
                    "-n", &h.ctl, "link", "add", &m, "type", "veth", "peer", "name", "m0", "netns",
                    &ns,
                ],
            );
            run(
                "ip",
                &[
                    "-n",
                    &h.ctl,
                    "addr",
                    "add",
                    &format!("{ctl_addr}/30"),
                    "dev",
                    &m,
                ],
            );
            run("ip", &["-n", &h.ctl, "link", "set", &m, "up"]);
            run(
                "ip",
                &[
                    "-n",
                    &ns,
                    "addr",
                    "add",
                    &format!("{host_addr}/30"),
                    "dev",
                    "m0",
                ],
            );
            run("ip", &["-n", &ns, "link", "set", "m0", "up"]);
            let cfg = h.dir.file(&format!("sshd_config_{suffix}"));
            std::fs::write(
                &cfg,
                format!(
                    "ListenAddress {host_addr}\nPort 22\nHostKey {d}/host_key\n\
                     AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                     StrictModes no\nPidFile none\nLogLevel ERROR\n"
                ),
            )
            .unwrap();
            let log = std::fs::File::create(h.dir.file(&format!("sshd_{suffix}.log"))).unwrap();
            // `ip netns exec` execs sshd: the PID we hold is sshd's.
            let child = Command::new("ip")
                .args(["netns", "exec", &ns, SSHD, "-D", "-e", "-f"])
                .arg(&cfg)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start sshd");
            h.sshd.push(child);
        }
        // Each sshd answers (and its host key goes into the test's known_hosts).
        for (suffix, _, addr) in MGMT {
            let ok = wait_for(10.0, || {
                let mut argv = h.ssh_prefix(addr, "id");
                argv.push("true".into());
                let mut a = vec!["netns".to_string(), "exec".into(), h.ctl.clone()];
                a.extend(argv);
                Command::new("ip")
                    .args(&a)
                    .stdin(Stdio::null())
                    .output()
                    .is_ok_and(|o| o.status.success())
            });
            let log = std::fs::read_to_string(h.dir.file(&format!("sshd_{suffix}.log")));
            assert!(ok, "sshd in {suffix} does not answer: {log:?}");
        }
        h
    }

    fn ssh_prefix(&self, addr: &str, key: &str) -> Vec<String> {
        let d = self.dir.path().display();
        [
            "ssh".to_string(),
            "-i".into(),
            format!("{d}/{key}"),
            "-o".into(),
            format!("UserKnownHostsFile={d}/known_hosts"),
            "-o".into(),
            "StrictHostKeyChecking=accept-new".into(),
            format!("root@{addr}"),
        ]
        .to_vec()
    }

    fn launcher(&self, addr: &str, key: &str) -> String {
        let v: Vec<String> = self
            .ssh_prefix(addr, key)
            .iter()
            .map(|a| format!("{a:?}"))
            .collect();
        format!("[{}]", v.join(", "))
    }

    /// The testbed file; `edit` may change its text (typos, wrong hosts).
    fn file(&self, name: &str, edit: impl Fn(String) -> String) -> String {
        let text = format!(
            "cache_dir = \"{d}/cache\"\n\n\
             [client]\nlauncher = {c}\ninterface = \"c0\"\n\
             prefix = [\"198.18.1.0/16\", \"2001:2:0:1::c:0/64\"]\n\
             gateway_address = [\"198.18.0.1\", \"2001:2:0:1::1\"]\nmanage_addresses = true\n\n\
             [gateway]\nlauncher = {g}\ninterface = \"g0\"\n\n\
             [server]\nlauncher = {s}\naddress = [\"198.19.0.2\", \"2001:2:0:2::2\"]\n",
            d = self.dir.path().display(),
            c = self.launcher(MGMT[0].2, "id"),
            g = self.launcher(MGMT[1].2, "id"),
            s = self.launcher(MGMT[2].2, "id"),
        );
        let path = self.dir.file(name);
        std::fs::write(&path, edit(text)).unwrap();
        path.display().to_string()
    }

    /// Run fwbench as the controller, in the controller's namespace.
    fn fwbench(&self, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.ctl, bin()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run fwbench")
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let o = self.fwbench(args);
        assert!(
            o.status.success(),
            "{args:?}: {}\n{}",
            stderr(&o),
            stdout(&o)
        );
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
    }

    /// Processes other than our sshd in the hosts' and the controller's namespaces.
    fn strays(&self) -> Vec<(String, u32)> {
        let ours: Vec<u32> = self.sshd.iter().map(|c| c.id()).collect();
        let mut v = vec![];
        for (suffix, _, _) in MGMT {
            let ns = format!("fwb-{}-{suffix}", self.tb.name);
            for p in pids_in(&ns) {
                if !ours.contains(&p) {
                    v.push((ns.clone(), p));
                }
            }
        }
        v.extend(
            pids_in(&self.ctl)
                .into_iter()
                .map(|p| (self.ctl.clone(), p)),
        );
        v
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for c in &mut self.sshd {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.ctl])
            .status();
        if self.made_run_sshd {
            let _ = std::fs::remove_dir("/run/sshd");
        }
        // `tb` and `dir` drop after this: the testbed and the temp dir go too.
    }
}

#[test]
#[ignore = "needs root: network namespaces and sshd (run with --include-ignored as root)"]
fn remote_hosts_over_ssh_run_echo_and_flood() {
    let _s = serial();
    let h = Hosts::up();
    let file = h.file("lab.toml", |t| t);
    let o = h.fwbench(&["testbed", "check", &file]);
    let out = stdout(&o);
    assert!(o.status.success(), "check: {}\n{out}", stderr(&o));
    for want in [
        "interface   g0: present",
        "address     198.19.0.2 (server address): on s0",
        "address     198.18.0.1 (gateway_address): on g0",
        "tool        nft: /",
        "not cached; copying to",
        "agent       cached:",
        "clock       ",
    ] {
        assert!(out.contains(want), "check: no {want:?} in\n{out}");
    }
    for (proto, family) in [("tcp", "4"), ("udp", "4"), ("tcp", "6")] {
        let v = h.json(&trial_args(
            "echo",
            &file,
            &["-n", "3", "-P", proto, "-A", family],
        ));
        let ctx = format!("echo {proto}/IPv{family}: {v}");
        assert_echo_ok(&v, &ctx);
        let places: Vec<String> = v["placement"]
            .as_array()
            .expect("placement")
            .iter()
            .map(|p| p["place"].as_str().unwrap_or("").to_string())
            .collect();
        assert!(
            places.iter().all(|p| p.starts_with("ssh ")),
            "{ctx}: {places:?}"
        );
        // Each remote host's clock offset is stored with the trial.
        for p in v["placement"].as_array().unwrap() {
            assert!(p["clock"]["uncertainty_ns"].as_i64().unwrap() >= 0, "{ctx}");
        }
    }
    let v = h.json(&trial_args(
        "flood",
        &file,
        &["--rate", "20kpps", "--flows", "2"],
    ));
    let r = &v["result"];
    assert!(u(&r["sent"]) > 15_000, "{v}");
    // Exact, from measured spread: 10 floods of 20 kpps on a local testbed at a load
    // average of 11 lost no packet (docs/tests.md).
    assert_eq!(u(&r["lost"]), 0, "{v}");
    assert_eq!(u(&r["duplicates"]), 0, "{v}");
    // Source and sink are two hosts: their one-way delays say how the clocks were
    // related — corrected, or withheld when the offset is not known well enough.
    let basis = r["owd_clocks"]["basis"].as_str().unwrap_or_default();
    assert!(basis == "corrected" || basis == "rtt-only", "{v}");
    if basis == "rtt-only" {
        assert_eq!(u(&r["owd"]["count"]), 0, "{v}");
    }
    // A gateway event over SSH (issue 25): the added drop rule takes effect at the
    // remote sink; the time to effect is dated across the hosts' clocks (or withheld
    // when they are not known well enough), and the bins hold all of the loss.
    let v = h.json(&trial_args(
        "flow",
        &file,
        &[
            "-r",
            "20kpps",
            "--flows",
            "2",
            "--sources",
            "2",
            "-t",
            "2",
            "--engine",
            "nft",
            "--rules",
            "10",
            "--event",
            "add:1@800ms",
        ],
    ));
    assert_eq!(v["status"], "ok", "{v}");
    let e = &v["result"]["events"];
    let up = &e["updates"][0];
    assert!(up["error"].is_null(), "{v}");
    match v["result"]["owd_clocks"]["basis"].as_str() {
        Some("rtt-only") => assert!(up["time_to_effect_ms"].is_null(), "{v}"),
        _ => {
            let tte = up["time_to_effect_ms"].as_f64().expect("a time to effect");
            assert!(tte > -5.0 && tte < 2000.0, "time to effect {tte} ms: {v}");
        }
    }
    assert!(u(&v["result"]["lost"]) > 0, "{v}");
    assert_eq!(u(&e["bins_lost"]), u(&v["result"]["lost"]), "{v}");
    assert_eq!(v["verdicts"]["ok"], true, "{v}");
    // Echo: the client times its own cycles, so only the commit's start is moved to
    // its clock (by the two hosts' offsets): the time to effect is always given.
    let v = h.json(&trial_args(
        "echo",
        &file,
        &argv("-P udp -n 3 -t 2 --engine nft --rules 10 --event add:1@800ms"),
    ));
    let r = &v["result"];
    update_took_effect(&v, "echo over ssh", u(&r["lost"]) + u(&r["unsent"]));
    // The binary went to the test's cache dir, once, named by its SHA-256.
    let cached: Vec<String> = std::fs::read_dir(h.dir.file("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert!(
        cached[0].starts_with("fwbench-") && cached[0].len() == 8 + 64,
        "{cached:?}"
    );
    // Nothing left: no agent, no shared SSH connection, no control socket directory.
    assert!(
        wait_for(5.0, || h.strays().is_empty()),
        "left running: {:?}",
        h.strays()
    );
    assert_no_new_ssh_dirs(&h.ssh_dirs_before);
}

#[test]
#[ignore = "needs root: network namespaces and sshd (run with --include-ignored as root)"]
fn remote_bad_host_key_or_file_exits_2() {
    let _s = serial();
    let h = Hosts::up();
    type Edit = Box<dyn Fn(String) -> String>;
    let cases: [(&str, Edit, &str); 3] = [
        (
            "wrong host",
            Box::new(|t: String| t.replace("root@198.19.254.10", "root@198.19.254.14")),
            "server host root@198.19.254.14",
        ),
        (
            "refused key",
            Box::new(|t: String| t.replacen("/id\"", "/wrong_id\"", 1)),
            "Permission denied",
        ),
        (
            "typo",
            Box::new(|t: String| t.replace("interface = \"g0\"", "interfce = \"g0\"")),
            ":12:1: testbed file: unknown field `interfce`",
        ),
    ];
    for (what, edit, expect) in cases {
        let file = h.file(&format!("{}.toml", what.replace(' ', "-")), edit);
        let o = h.fwbench(&["echo", "--testbed", &file, "--no-store", "-t", "1"]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains(expect), "{what}: {}", stderr(&o));
    }
    // `testbed check` names what is missing on a host, exit 2.
    let file = h.file("missing.toml", |t| {
        t.replace("interface = \"g0\"", "interface = \"g9\"")
    });
    let o = h.fwbench(&["testbed", "check", &file]);
    assert_refused(&o, "gateway host: no interface g9");
    assert!(
        wait_for(5.0, || h.strays().is_empty()),
        "left running: {:?}",
        h.strays()
    );
    assert_no_new_ssh_dirs(&h.ssh_dirs_before);
}

/// PIDs of `fwbench … agent` processes in a namespace (the copied binary's path
/// varies, so the command line is matched by its words).
fn agents_in(ns: &str) -> Vec<u32> {
    pids_in(ns)
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                let words: Vec<String> = c
                    .split(|&b| b == 0)
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
                words.first().is_some_and(|w| w.contains("fwbench"))
                    && words.iter().any(|w| w == "agent")
            })
        })
        .collect()
}

fn nft_tables(ns: &str) -> String {
    Command::new("ip")
        .args(["netns", "exec", ns, "nft", "list", "tables"])
        .output()
        .map(|o| stdout(&o))
        .unwrap_or_default()
}

/// After a controller is SIGKILLed, what it left on the controller's side: its SSH
/// connection masters (they would exit on their own after `ControlPersist`) are
/// killed by PID — only processes in the test's own controller namespace — and its
/// control socket directory (named by its PID) is removed. Also on panic.
struct ReapController {
    ctl: String,
    pid: u32,
}

impl Drop for ReapController {
    fn drop(&mut self) {
        for p in pids_in(&self.ctl) {
            let _ = Command::new("kill").arg(p.to_string()).status();
        }
        let mine = format!("fwbench-ssh-{}-", self.pid);
        for d in ssh_dirs().into_iter().filter(|d| d.starts_with(&mine)) {
            let _ = std::fs::remove_dir_all(std::env::temp_dir().join(d));
        }
    }
}

#[test]
#[ignore = "needs root: network namespaces and sshd (run with --include-ignored as root)"]
fn remote_controller_sigkill_mid_trial_leaves_nothing_on_the_hosts() {
    let _s = serial();
    let h = Hosts::up();
    let file = h.file("lab.toml", |t| t);
    let gw = format!("fwb-{}-gw", h.tb.name);
    let hosts: Vec<String> = MGMT
        .iter()
        .map(|(s, _, _)| format!("fwb-{}-{s}", h.tb.name))
        .collect();
    // `ip netns exec` execs fwbench: the child's PID is the controller's.
    let mut ctl = spawn_silenced(
        Command::new("ip")
            .args(["netns", "exec", &h.ctl, bin()])
            .args(cmd!(
                "flood --testbed",
                &file,
                "--engine nft --rules 100 -t 20 --no-store"
            )),
    );
    let _reap = ReapController {
        ctl: h.ctl.clone(),
        pid: ctl.id(),
    };
    // Mid-trial: the gateway's ruleset is loaded and every host runs its agent (the
    // gateway's comes first; the flood's source and sink follow).
    let started = std::time::Instant::now();
    // Generous: on a loaded 2-core CI machine, reaching three hosts takes a while.
    let loaded = wait_for(40.0, || nft_tables(&gw).contains("table inet fwbench"));
    let rest = (40.0 - started.elapsed().as_secs_f64()).max(1.0);
    let all = wait_for(rest, || hosts.iter().all(|ns| !agents_in(ns).is_empty()));
    let running: Vec<(String, Vec<u32>)> =
        hosts.iter().map(|ns| (ns.clone(), agents_in(ns))).collect();
    ctl.kill().expect("SIGKILL the controller"); // by its PID, SIGKILL
    ctl.wait().unwrap();
    assert!(loaded, "no fwbench table in {gw}: {}", nft_tables(&gw));
    assert!(all, "an agent per host while the trial ran: {running:?}");
    let left = || -> Vec<(String, Vec<u32>)> {
        hosts
            .iter()
            .map(|ns| (ns.clone(), agents_in(ns)))
            .filter(|(_, p)| !p.is_empty())
            .collect()
    };
    let gone = wait_for(15.0, || left().is_empty());
    assert!(gone, "agents left after the controller died: {:?}", left());
    assert!(
        wait_for(5.0, || !nft_tables(&gw).contains("fwbench")),
        "gateway's ruleset left: {}",
        nft_tables(&gw)
    );
    // The cache holds the binary, and no half-copied temp file beside it.
    let cached: Vec<String> = std::fs::read_dir(h.dir.file("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        cached
            .iter()
            .all(|n| n.starts_with("fwbench-") && n.len() == 8 + 64),
        "{cached:?}"
    );
    assert_eq!(cached.len(), 1, "{cached:?}");
}

#[test]
#[ignore = "needs root: network namespaces and sshd (run with --include-ignored as root)"]
fn remote_sessions_and_a_scenario_run_through_the_hosts() {
    let _s = serial();
    let h = Hosts::up();
    let file = h.file("lab.toml", |t| t);
    let v = h.json(&cmd!(
        "sessions --testbed",
        &file,
        "--count 200 --json --no-store"
    ));
    assert_eq!(v["status"], "ok", "{v}");
    let r = &v["result"];
    // Exactly the count, on both ends: completed by the client, answered by the server.
    assert_eq!(u(&r["sessions"]), 200, "{r}");
    assert_eq!(u(&r["session"]["count"]), 200, "{r}");
    assert_eq!(u(&r["server"]["sessions"]), 200, "{r}");
    assert_eq!(u(&r["failed"]), 0, "{r}");
    assert_eq!(u(&r["corrupt"]), 0, "{r}");
    assert_eq!(u(&r["server"]["errors"]), 0, "{r}");

    let sc = h.dir.file("flood.toml");
    std::fs::write(
        &sc,
        "name = \"remote flood\"\nworkload = \"flood\"\n\
         [params]\nengine = [\"none\", \"nft\"]\nduration = \"1s\"\nrate = \"20kpps\"\n",
    )
    .unwrap();
    let db = h.dir.file("r.db");
    let o = h.fwbench(&cmd!(
        "run",
        sc.to_str().unwrap(),
        "--testbed",
        &file,
        "--db",
        db.to_str().unwrap()
    ));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    assert_eq!(sqlite_count(&db, "SELECT count(*) FROM trials"), 2);
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials WHERE status = 'ok'"),
        2,
        "{}",
        stdout(&o)
    );
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(DISTINCT json_extract(params, '$.engine')) FROM trials"
        ),
        2,
        "one trial per engine"
    );
    assert!(
        wait_for(5.0, || h.strays().is_empty()),
        "left running: {:?}",
        h.strays()
    );
    assert_no_new_ssh_dirs(&h.ssh_dirs_before);
}

/// `ip -j addr show dev DEV` in a namespace: its global addresses, sorted (`None`:
/// the interface is not there).
fn global_addrs(ns: &str, dev: &str) -> Option<Vec<String>> {
    let o = Command::new("ip")
        .args(["-n", ns, "-j", "addr", "show", "dev", dev])
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).ok()?;
    let mut a: Vec<String> = v
        .get(0)?
        .get("addr_info")?
        .as_array()?
        .iter()
        .filter(|x| x["scope"] == "global")
        .map(|x| format!("{}/{}", x["local"].as_str().unwrap_or(""), x["prefixlen"]))
        .collect();
    a.sort();
    Some(a)
}

#[test]
#[ignore = "needs root: network namespaces and sshd (run with --include-ignored as root)"]
fn remote_client_port_moved_over_ssh_and_given_back() {
    let _s = serial();
    let h = Hosts::up();
    let cli = format!("fwb-{}-cli", h.tb.name);
    let before = global_addrs(&cli, "c0").expect("c0 in the client host");
    assert!(!before.is_empty());
    // The client's port goes into a namespace of its own on the (SSH) host; its
    // agent runs there through `ssh … nsenter -t HOLDER -n`.
    // Clients on the gateway's link (the local testbed's gateway routes the client
    // block via 198.18.0.2, an address fwbench gives the moved port here).
    let file = h.file("moved.toml", |t| {
        t.replace(
            "interface = \"c0\"\n",
            "interface = \"c0\"\nmove_interface = true\n",
        )
        .replace(
            "prefix = [\"198.18.1.0/16\", \"2001:2:0:1::c:0/64\"]",
            "addresses = [\"198.18.0.2\", \"198.18.0.3\"]",
        )
    });
    let v = h.json(&trial_args("echo", &file, &["-n", "2"]));
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(u(&v["result"]["validation_errors"]), 0, "{v}");
    let client = v["placement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["role"] == "client")
        .and_then(|p| p["place"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        client.starts_with("ssh ") && client.contains("port netns of pid"),
        "{client}"
    );
    // Back in the host with the addresses it had.
    assert!(
        wait_for(10.0, || global_addrs(&cli, "c0").as_ref() == Some(&before)),
        "c0 after the run: {:?} (before: {before:?})",
        global_addrs(&cli, "c0")
    );
    assert!(
        wait_for(5.0, || h.strays().is_empty()),
        "left running: {:?}",
        h.strays()
    );
    assert_no_new_ssh_dirs(&h.ssh_dirs_before);
}
