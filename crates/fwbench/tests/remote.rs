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

/// `prog args…`, which must succeed (util's [`run_ok`]).
fn run(prog: &str, args: &[&str]) -> Output {
    run_ok(&[&[prog], args].concat())
}

/// Three hosts with sshd (four with a second generator host), a controller namespace,
/// a temp dir with keys; all removed on drop (sshd killed by the PIDs started here,
/// the second generator's namespace deleted), also when a test panics.
struct Hosts {
    tb: TestbedGuard,
    ctl: String,
    dir: TempDir,
    sshd: Vec<Child>,
    made_run_sshd: bool,
    ssh_dirs_before: Vec<String>,
    /// The hosts' management addresses (`MGMT`, and `SECOND_CLIENT` when there).
    mgmt: Vec<(&'static str, &'static str, &'static str)>,
}

/// Management addresses: (host's namespace suffix, controller side, host side).
const MGMT: [(&str, &str, &str); 3] = [
    ("cli", "198.19.254.1", "198.19.254.2"),
    ("gw", "198.19.254.5", "198.19.254.6"),
    ("srv", "198.19.254.9", "198.19.254.10"),
];

/// A second generator host (namespace `fwb-N-cl2`): its management addresses. Its test
/// link `c0` goes to the gateway's `g2` (198.18.200.0/24: the gateway .1, the host .2,
/// its clients from .11).
const SECOND_CLIENT: (&str, &str, &str) = ("cl2", "198.19.254.17", "198.19.254.18");

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
/// reaped meanwhile: fewer is fine). A directory (`fwbench-ssh-PID-N`) whose
/// controller still runs in another network namespace than the test's controller
/// namespace `ctl` is another run's on this machine, not this test's.
fn assert_no_new_ssh_dirs(before: &[String], ctl: &str) {
    let ours = format!("/run/netns/{ctl}");
    let ns_of =
        |path: &str| std::fs::metadata(path).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
    let theirs = |d: &str| {
        let pid = d
            .trim_start_matches("fwbench-ssh-")
            .split('-')
            .next()
            .unwrap_or("");
        let net = ns_of(&format!("/proc/{pid}/ns/net"));
        net.is_ok() && net.ok() != ns_of(&ours).ok()
    };
    let left = || -> Vec<String> {
        ssh_dirs()
            .into_iter()
            .filter(|d| !before.contains(d) && !theirs(d))
            .collect()
    };
    assert!(
        wait_for(5.0, || left().is_empty()),
        "left: {:?} (before: {before:?})",
        left()
    );
}

impl Hosts {
    fn up() -> Hosts {
        Hosts::with(false)
    }

    /// The three hosts and a second generator host cabled to the gateway's `g2`.
    fn with_second_client() -> Hosts {
        Hosts::with(true)
    }

    /// [`Hosts::with_second_client`] and its testbed file as it is (`two.toml`: the
    /// client role on both generator hosts).
    fn two_generators() -> (Hosts, String) {
        let h = Hosts::with_second_client();
        let file = h.two_client_file("two.toml", |t| t);
        (h, file)
    }

    fn with(second_client: bool) -> Hosts {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} missing: install openssh-server (scripts/setup.sh does)"
        );
        let ssh_dirs_before = ssh_dirs();
        let tb = TestbedGuard::up("forward");
        let ctl = format!("{}-ctl", tb.name);
        let made_run_sshd = !Path::new("/run/sshd").exists();
        let mut mgmt = MGMT.to_vec();
        if second_client {
            mgmt.push(SECOND_CLIENT);
        }
        let mut h = Hosts {
            tb,
            ctl,
            dir: TempDir::new(),
            sshd: vec![],
            made_run_sshd,
            ssh_dirs_before,
            mgmt,
        };
        if second_client {
            let ns = h.ns(SECOND_CLIENT.0);
            let gw = h.ns("gw");
            run("ip", &["netns", "add", &ns]);
            run(
                "ip",
                &[
                    "-n", &ns, "link", "add", "c0", "type", "veth", "peer", "name", "g2", "netns",
                    &gw,
                ],
            );
            for (n, script) in [
                (
                    &ns,
                    "link set lo up\nlink set c0 up\naddr add 198.18.200.2/24 dev c0\n\
                     route add 198.19.0.0/16 via 198.18.200.1\n",
                ),
                (&gw, "link set g2 up\naddr add 198.18.200.1/24 dev g2\n"),
            ] {
                run_with_input(&["ip", "-n", n, "-b", "-"], script);
            }
        }
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
        for (i, (suffix, ctl_addr, host_addr)) in h.mgmt.clone().iter().enumerate() {
            let ns = h.ns(suffix);
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
        for (suffix, _, addr) in h.mgmt.clone() {
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

    /// The namespace of the host with management suffix `suffix`.
    fn ns(&self, suffix: &str) -> String {
        format!("fwb-{}-{suffix}", self.tb.name)
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

    /// A testbed file whose client role has two hosts (`[[client]]` tables): the
    /// testbed's client namespace and the second generator, cabled to the gateway's
    /// `g0` and `g2`. `edit` may change its text.
    fn two_client_file(&self, name: &str, edit: impl Fn(String) -> String) -> String {
        let text = format!(
            "cache_dir = \"{d}/cache\"\n\n\
             [[client]]\nlauncher = {c}\ninterface = \"c0\"\n\
             prefix = \"198.18.1.0/24\"\ngateway_address = \"198.18.0.1\"\nmanage_addresses = true\n\n\
             [[client]]\nlauncher = {c2}\ninterface = \"c0\"\n\
             prefix = \"198.18.200.10/24\"\ngateway_address = \"198.18.200.1\"\n\
             gateway_interface = \"g2\"\nmanage_addresses = true\n\n\
             [gateway]\nlauncher = {g}\ninterface = \"g0\"\n\n\
             [server]\nlauncher = {s}\naddress = \"198.19.0.2\"\n",
            d = self.dir.path().display(),
            c = self.launcher(MGMT[0].2, "id"),
            c2 = self.launcher(SECOND_CLIENT.2, "id"),
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

    /// `testbed check FILE` passes and prints each of `wants`; its output.
    fn check_prints(&self, file: &str, wants: &[&str]) -> String {
        let o = self.fwbench(&["testbed", "check", file]);
        let out = stdout(&o);
        assert!(o.status.success(), "check: {}\n{out}", stderr(&o));
        for want in wants {
            assert!(out.contains(want), "check: no {want:?} in\n{out}");
        }
        out
    }

    /// Nothing left: no agent, no shared SSH connection, no control socket directory.
    fn assert_left_nothing(&self) {
        assert!(
            wait_for(5.0, || self.strays().is_empty()),
            "left running: {:?}",
            self.strays()
        );
        assert_no_new_ssh_dirs(&self.ssh_dirs_before, &self.ctl);
    }

    /// Processes other than our sshd in the hosts' and the controller's namespaces.
    fn strays(&self) -> Vec<(String, u32)> {
        let ours: Vec<u32> = self.sshd.iter().map(|c| c.id()).collect();
        let mut v = vec![];
        for (suffix, _, _) in &self.mgmt {
            let ns = self.ns(suffix);
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
        if self.mgmt.contains(&SECOND_CLIENT) {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(SECOND_CLIENT.0)])
                .status();
        }
        if self.made_run_sshd {
            let _ = std::fs::remove_dir("/run/sshd");
        }
        // `tb` and `dir` drop after this: the testbed and the temp dir go too.
    }
}

#[root_test(needs = "network namespaces and sshd")]
fn remote_hosts_over_ssh_run_echo_and_flood() {
    let _s = serial();
    let h = Hosts::up();
    let file = h.file("lab.toml", |t| t);
    h.check_prints(
        &file,
        &[
            "interface   g0: present",
            "address     198.19.0.2 (server address): on s0",
            "address     198.18.0.1 (gateway_address): on g0",
            "tool        nft: /",
            "not cached; copying to",
            "agent       cached:",
            "clock       ",
        ],
    );
    for (proto, family) in [("tcp", "4"), ("udp", "4"), ("tcp", "6")] {
        let v = h.json(&trial_args(
            "echo",
            &file,
            &["-n", "3", "-P", proto, "-A", family],
        ));
        let ctx = format!("echo {proto}/IPv{family}: {v}");
        assert_echo_ok(&v, &ctx);
        let places = fields(&v["placement"], "place");
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
        &argv("-r 20kpps --flows 2 --sources 2 -t 2 --engine nft --rules 10 --event add:1@800ms"),
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
    h.assert_left_nothing();
}

#[root_test(needs = "network namespaces and sshd")]
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
    h.assert_left_nothing();
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

#[root_test(needs = "network namespaces and sshd")]
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

#[root_test(needs = "network namespaces and sshd")]
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
    h.assert_left_nothing();
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

#[root_test(needs = "network namespaces and sshd")]
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
    h.assert_left_nothing();
}

/// The gateway's own count of the test traffic: an nft table of the test's (in the
/// gateway namespace the test made) with a counter per ingress port, and one for the
/// packets its drop rule takes (flow `drop_sport`'s, when given).
fn gateway_counters(gw: &str, drop_sport: Option<u16>) {
    let _ = Command::new("ip")
        .args([
            "netns", "exec", gw, "nft", "delete", "table", "inet", "mhtest",
        ])
        .output();
    let drop = drop_sport
        .map(|p| format!("udp sport {p} counter name \"dropped\" drop\n"))
        .unwrap_or_default();
    let rules = format!(
        "table inet mhtest {{\n\
         counter g0 {{}}\ncounter g2 {{}}\ncounter dropped {{}}\n\
         chain counts {{\ntype filter hook forward priority -10; policy accept;\n\
         iifname \"g0\" meta l4proto udp counter name \"g0\"\n\
         iifname \"g2\" meta l4proto udp counter name \"g2\"\n{drop}}}\n}}\n"
    );
    run_with_input(&["ip", "netns", "exec", gw, "nft", "-f", "-"], &rules);
}

/// Packets a named counter of the test's table counted.
fn counted(gw: &str, name: &str) -> u64 {
    let o = run(
        "ip",
        &[
            "netns", "exec", gw, "nft", "-j", "list", "counter", "inet", "mhtest", name,
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["nftables"]
        .as_array()
        .and_then(|a| a.iter().find_map(|x| x["counter"]["packets"].as_u64()))
        .unwrap_or_else(|| panic!("no counter {name}: {v}"))
}

/// A counter of interface `name` in a list of interface counters: the gateway's
/// report (`interfaces`) or a packet result's sink (`sink_interfaces`); 0 when absent.
fn if_counter(v: &serde_json::Value, name: &str, counter: &str) -> u64 {
    ["interfaces", "sink_interfaces"]
        .iter()
        .filter_map(|k| v[*k].as_array())
        .flatten()
        .find(|i| i["name"] == name)
        .map_or(0, |i| u(&i[counter]))
}

/// `hosts[i]` of a spread trial's result: (role, sent, received).
fn host_row(r: &serde_json::Value, i: usize) -> (String, u64, u64) {
    let h = &r["hosts"][i];
    (
        h["role"].as_str().unwrap_or_default().to_string(),
        u(&h["sent"]),
        u(&h["received"]),
    )
}

#[root_test(needs = "network namespaces and sshd")]
fn remote_two_generator_hosts_send_one_trial_the_gateway_counts() {
    let _s = serial();
    let (h, file) = Hosts::two_generators();
    let gw = h.ns("gw");
    // `testbed check` covers every host, the second generator's port on the gateway too.
    let out = h.check_prints(
        &file,
        &[
            "client#1: ssh",
            "client#2: ssh",
            "interface   g2: present",
            "address     198.18.200.1 (gateway_address): on g2",
            "address     198.18.200.11 (client address): absent (manage_addresses = true",
        ],
    );
    assert_eq!(out.matches("  clock       ").count(), 4, "{out}");

    // One flood from both hosts: 4 flows, two from each (ports 30000 + flow).
    gateway_counters(&gw, None);
    let args = [
        "--rate",
        "20kpps",
        "--flows",
        "4",
        "--sources",
        "2",
        "-t",
        "2",
    ];
    let v = h.json(&trial_args("flood", &file, &args));
    let r = &v["result"];
    assert_eq!(v["status"], "ok", "{v}");
    let (g0, g2) = (counted(&gw, "g0"), counted(&gw, "g2"));
    // Each host sent what the gateway counted on its port — or the port dropped on
    // receive (its backlog, under load: docs/tests.md); the one result is their sum.
    let drop_in = |port: &str| if_counter(&v["gateway"], port, "rx_dropped");
    assert_eq!(host_row(r, 0).1, g0 + drop_in("g0"), "{v}");
    assert_eq!(host_row(r, 1).1, g2 + drop_in("g2"), "{v}");
    assert!(
        g0 > 10_000 && g2 > 10_000,
        "both hosts sent: g0 {g0}, g2 {g2}: {v}"
    );
    assert_eq!(u(&r["sent"]), host_row(r, 0).1 + host_row(r, 1).1, "{v}");
    // What the gateway forwarded reached the sink, or was dropped on its way there
    // (none of it at 20 kpps unless the machine is overloaded).
    let after = if_counter(&v["gateway"], "g1", "tx_dropped")
        + if_counter(r, "s0", "rx_dropped")
        + u(&r["kernel"]["rcvbuf_errors"]);
    assert_eq!(u(&r["received"]) + after, g0 + g2, "{v}");
    assert_eq!(u(&r["lost"]), drop_in("g0") + drop_in("g2") + after, "{v}");
    assert_eq!(u(&r["duplicates"]), 0, "{v}");
    // Every flow's sequence checked at the sink, at its number in the trial.
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4, "{v}");
    assert_eq!(u(&flows[0]["sent"]) + u(&flows[1]["sent"]), g0, "{v}");
    assert_eq!(u(&flows[2]["sent"]) + u(&flows[3]["sent"]), g2, "{v}");
    // Where each ran: two client rows, the second marked host 1.
    let clients: Vec<&serde_json::Value> = v["placement"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["role"] == "client")
        .collect();
    assert_eq!(clients.len(), 2, "{v}");
    assert_eq!(clients[1]["host"], 1, "{v}");
    assert!(
        clients[1]["place"]
            .as_str()
            .unwrap()
            .contains(SECOND_CLIENT.2),
        "{v}"
    );
    // Its limit was judged from both hosts' counts and the gateway's two ingresses.
    assert!(r["limited_by"]["by"].is_string(), "{v}");

    // Loss is the gateway's drops: its rule drops flow 3 (the second host's).
    gateway_counters(&gw, Some(30_003));
    let v = h.json(&trial_args("flood", &file, &args));
    let r = &v["result"];
    let dropped = counted(&gw, "dropped");
    assert!(dropped > 1_000, "{v}");
    assert_eq!(u(&r["lost"]), dropped, "{v}");
    assert_eq!(u(&r["flows"][3]["lost"]), dropped, "{v}");
    assert_eq!(u(&r["flows"][3]["received"]), 0, "{v}");
    let (_, sent2, received2) = host_row(r, 1);
    assert_eq!(sent2 - received2, dropped, "{v}");
    assert_eq!(
        u(&r["sent"]),
        counted(&gw, "g0") + counted(&gw, "g2"),
        "{v}"
    );

    gateway_counters(&gw, None);
    // A paced flow through a slow gateway egress (tbf: its queue delays the packets by
    // tens of ms, far more than the clocks' uncertainty): the one-way delays of both
    // hosts, each pair related by the offsets fwbench estimated, merged.
    run(
        "ip",
        &[
            "netns", "exec", &gw, "tc", "qdisc", "replace", "dev", "g1", "root", "tbf", "rate",
            "1600kbit", "burst", "1600", "latency", "60ms",
        ],
    );
    let v = h.json(&trial_args(
        "flow",
        &file,
        &["-r", "4kpps", "--flows", "4", "--sources", "2", "-t", "2"],
    ));
    run(
        "ip",
        &[
            "netns", "exec", &gw, "tc", "qdisc", "del", "dev", "g1", "root",
        ],
    );
    let r = &v["result"];
    assert_eq!(v["status"], "ok", "{v}");
    let c = &r["owd_clocks"];
    assert_eq!(c["basis"], "corrected", "{v}");
    let pairs = c["pairs"].as_array().expect("a pair per generator host");
    assert_eq!(pairs.len(), 2, "{v}");
    for p in pairs {
        // All namespaces read one clock: each estimated offset brackets 0.
        let (corr, unc) = (
            p["correction_ns"].as_i64().unwrap(),
            p["uncertainty_ns"].as_i64().unwrap(),
        );
        assert!(corr.abs() <= unc, "pair {p}: {v}");
        assert_eq!(p["basis"], "corrected", "{v}");
    }
    let owd = &r["owd"];
    assert_eq!(
        u(&owd["count"]),
        u(&r["received"]),
        "every packet's delay: {v}"
    );
    // Queued at the gateway for up to its 60 ms; a delay counts from the intended send
    // time, so a sender behind its schedule (a loaded machine) adds its lag.
    assert!(u(&owd["p50_ns"]) > 5_000_000, "{v}");
    assert!(u(&owd["max_ns"]) < u(&r["max_lag_ns"]) + 200_000_000, "{v}");
    let mut from_hosts = 0;
    for i in 0..2 {
        let ho = &r["hosts"][i]["owd"];
        assert_eq!(u(&ho["count"]), u(&r["hosts"][i]["received"]), "{v}");
        assert!(
            u(&ho["p50_ns"]) >= u(&owd["min_ns"]) && u(&ho["p50_ns"]) <= u(&owd["max_ns"]),
            "{v}"
        );
        from_hosts += u(&ho["count"]);
    }
    assert_eq!(from_hosts, u(&owd["count"]), "{v}");
    for f in r["flows"].as_array().unwrap() {
        assert!(u(&f["received"]) > 0, "{v}");
        assert_eq!(u(&f["owd"]["count"]), u(&f["received"]), "{v}");
    }
    h.assert_left_nothing();
}

#[root_test(needs = "network namespaces and sshd")]
fn remote_bad_multi_host_file_exits_2_and_touches_nothing() {
    let _s = serial();
    let h = Hosts::with_second_client();
    let hosts = [h.ns("cli"), h.ns(SECOND_CLIENT.0)];
    let before: Vec<_> = hosts.iter().map(|ns| global_addrs(ns, "c0")).collect();
    // The second [[client]] sends from outside the benchmarking ranges.
    let file = h.two_client_file("bad.toml", |t| {
        t.replace(
            "prefix = \"198.18.200.10/24\"",
            "prefix = \"192.0.2.10/24\"",
        )
    });
    let o = h.fwbench(&[
        "flood",
        "--testbed",
        &file,
        "--no-store",
        "-t",
        "1",
        "--sources",
        "2",
        "--flows",
        "2",
    ]);
    assert_refused(
        &o,
        "bad.toml:13:10: client#2.prefix: 192.0.2.10: test traffic uses 198.18.0.0/15",
    );
    let o = h.fwbench(&["testbed", "check", &file]);
    assert_refused(&o, "client#2.prefix");
    // Untouched: no host was reached (no binary copied), no address added.
    assert!(!h.dir.file("cache").exists(), "a host was reached");
    let after: Vec<_> = hosts.iter().map(|ns| global_addrs(ns, "c0")).collect();
    assert_eq!(after, before);
    assert!(h.strays().is_empty(), "{:?}", h.strays());
    // A workload that runs on one client host refuses the two-host role, naming it.
    let file = h.two_client_file("two.toml", |t| t);
    let o = h.fwbench(&["echo", "--testbed", &file, "--no-store", "-t", "1"]);
    assert_refused(
        &o,
        "echo runs on one client host; this testbed's client role has 2",
    );
    let after: Vec<_> = hosts.iter().map(|ns| global_addrs(ns, "c0")).collect();
    assert_eq!(after, before, "echo refused before any address was added");
    h.assert_left_nothing();
}

/// Stored step trials of a search (`workload` flood rows of `db`): how many, and how
/// many of them were spread over both generator hosts, each host's sent adding up to
/// the trial's.
fn merged_steps(db: &Path) -> (i64, i64) {
    let all = sqlite_count(db, "SELECT count(*) FROM trials WHERE workload = 'flood'");
    let merged = sqlite_count(
        db,
        "SELECT count(*) FROM trials WHERE workload = 'flood' AND status = 'ok' \
         AND json_array_length(results, '$.packet.hosts') = 3 \
         AND json_extract(results, '$.packet.hosts[0].role') = 'client' \
         AND json_extract(results, '$.packet.hosts[1].role') = 'client' \
         AND json_extract(results, '$.packet.hosts[0].sent') > 0 \
         AND json_extract(results, '$.packet.hosts[1].sent') > 0 \
         AND json_extract(results, '$.packet.hosts[0].sent') \
           + json_extract(results, '$.packet.hosts[1].sent') \
           = json_extract(results, '$.packet.sent')",
    );
    (all, merged)
}

/// NDR and MLRsearch (issue 28) with the client role on two generator hosts: every
/// step is one flood from both hosts (merged, as stored), the searches converge on the
/// gateway's policer — which sees both hosts' traffic, on two ports — within their
/// precision, and latency-under-load trials follow each search. As a scenario the
/// search is one stored row with both goals.
#[root_test(needs = "network namespaces and sshd")]
fn remote_ndr_and_mlr_over_two_generator_hosts_find_a_policers_rate() {
    let _s = serial();
    let (h, file) = Hosts::two_generators();
    let gw = h.ns("gw");
    // The policer of the single-host mlr test (crates/fwbench/tests/packet.rs):
    // 5 000 packets/s, a bucket of 0.5 s (a busy machine's paced senders catch up in
    // bursts it absorbs), on the traffic of both ports; a search the testbed spoiled
    // (a step lost below the policer's rate) runs once more (`Policer::search`).
    let p = Policer {
        limit: 5_000.0,
        burst: 2_500.0,
    };
    let policer = p.in_gateway(&gw);
    let spread = ["--flows", "4", "--sources", "2"];

    // One search (`ndr` or `mlr`, `args` its own) at 2 %, stored in a file of its own.
    let runs = std::cell::Cell::new(0);
    let run = |search: &str, args: &[&str]| {
        runs.set(runs.get() + 1);
        let db = h.dir.file(&format!("{search}{}.db", runs.get()));
        let v = h.json(
            &[
                &[search, "--testbed", &file, "--json"][..],
                args,
                &["--precision", "2%", "--db", db.to_str().unwrap()],
                &spread,
            ]
            .concat(),
        );
        assert_eq!(v["result"]["search"], search, "{v}");
        (v["result"].clone(), db)
    };

    // NDR: 1-s trials, the ceiling measured by an unpaced flood from both hosts.
    let (r, db) = p.search(
        "ndr over two hosts",
        || run("ndr", &["-t", "1"]),
        |r| p.check_ndr(r, 0.02),
    );
    assert!(r["converged"].as_bool().unwrap(), "{r}");
    assert_eq!(r["limited_by_sender"], false, "{r}");
    let ndr = f(&r["rate_pps"]);
    assert!(policer.counter() > 0, "the policer dropped: {r}");
    assert_latency_at_fractions(&r, ndr, true);
    // Every step and latency trial stored, each one trial of both hosts.
    let steps = r["curve"].as_array().unwrap().len() as i64 + 4;
    assert_eq!(merged_steps(&db), (steps, steps), "{r}");

    // MLRsearch: short trials first, both goals from 2-s final trials.
    let d = 2.0;
    let (r, db) = p.search(
        "mlr over two hosts",
        || {
            run(
                "mlr",
                &["-t", "2", "--initial-duration", "0.5", "--goals", "0,5%"],
            )
        },
        |r| p.check_goals(r, d, 0.02),
    );
    assert!(r["converged"].as_bool().unwrap(), "{r}");
    assert_eq!(r["limited_by_sender"], false, "{r}");
    let durations: Vec<f64> = r["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| f(&c["duration_s"]))
        .collect();
    assert_eq!(durations[0], 0.5, "{durations:?}");
    assert!(durations.contains(&d), "{durations:?}");
    assert_latency_at_fractions(&r, f(&r["goals"][0]["rate_pps"]), true);
    let steps = durations.len() as i64 + 4;
    assert_eq!(merged_steps(&db), (steps, steps), "{r}");

    // The same search in a scenario naming the testbed file: one stored row with both
    // goals and its latency trial, beside its merged steps.
    let sc = h.dir.write(
        "mlr.toml",
        "workload = \"mlr\"\n[testbed]\nfile = \"two.toml\"\n[params]\nduration = 1\n\
         initial_duration = \"0.5s\"\ngoals = \"0,5%\"\nprecision = \"3%\"\n\
         max_rate = \"10kpps\"\nlatency_at = \"50%\"\nflows = 4\nclients = 2\n",
    );
    let db = h.dir.file("run.db");
    let o = h.fwbench(&cmd!(
        "run",
        sc.to_str().unwrap(),
        "--db",
        db.to_str().unwrap()
    ));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let row = |path: &str| {
        sqlite_count(
            &db,
            &format!(
                "SELECT CAST(json_extract(results, '{path}') AS INTEGER) \
                 FROM trials WHERE workload = 'mlr' AND status IN ('ok', 'flagged')"
            ),
        )
    };
    let (ndr, pdr) = (
        row("$.search.goals[0].rate_pps"),
        row("$.search.goals[1].rate_pps"),
    );
    assert!(ndr > 0 && pdr >= ndr, "{ndr} {pdr}: {}", stdout(&o));
    assert!(
        pdr as f64 <= (p.limit + p.burst) / 0.95 * 1.005,
        "scenario pdr {pdr}"
    );
    let latency = sqlite_count(
        &db,
        "SELECT json_array_length(results, '$.search.latency') FROM trials \
         WHERE workload = 'mlr'",
    );
    assert_eq!(latency, 1, "one latency trial (50 %)");
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'mlr'"),
        1,
        "one search"
    );
    let (steps, merged) = merged_steps(&db);
    assert!(
        steps >= 3 && merged == steps,
        "{steps} steps, {merged} merged"
    );
    h.assert_left_nothing();
}
