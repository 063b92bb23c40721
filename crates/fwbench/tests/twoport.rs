//! Two-port tester mode and external gateways: one traffic "host" (a namespace,
//! reached with an `ip netns exec` launcher) with two ports drives a separate device
//! under test it has no agent on — a DUT namespace forwarding between its two ports.
//! The ports are veth pairs standing in for NICs: the tester's ends (`p0`, `p1`) are
//! what fwbench moves; their peers sit in the DUT.
//!
//! ```text
//!   [tester host]  p0 ── d0 [DUT: forwards] d1 ── p1  [tester host]
//!   client role: p0 moved into its own namespace; server role: p1 likewise
//! ```
//!
//! Also the crash marker: state a killed run leaves on a host (an interface left
//! flushed and down, a sysctl, a namespace holder) is undone by the next run.
//!
//! Needs root (network namespaces, `unshare`, `nsenter`).

mod util;

use serde_json::Value;
use std::process::{Command, Output, Stdio};
use util::*;

/// The tester host and the DUT, removed on drop (also on panic). One lab at a time:
/// it holds the test binary's serial lock (released last, after the namespaces go).
struct Lab {
    host: String,
    dut: String,
    dir: TempDir,
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in [&self.host, &self.dut] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// How a port looks: its global addresses, MTU, and whether it is set up.
#[derive(Debug, PartialEq)]
struct Port {
    addrs: Vec<String>,
    mtu: u64,
    up: bool,
}

impl Lab {
    fn up() -> Lab {
        let lab = Lab {
            _serial: serial(),
            host: unique("tph"),
            dut: unique("tpd"),
            dir: TempDir::new(),
        };
        let (h, d) = (lab.host.as_str(), lab.dut.as_str());
        run_ok(&["ip", "netns", "add", h]);
        run_ok(&["ip", "netns", "add", d]);
        for (p, q) in [("p0", "d0"), ("p1", "d1")] {
            run_ok(&[
                "ip", "-n", h, "link", "add", p, "type", "veth", "peer", "name", q, "netns", d,
            ]);
        }
        // What the tester's ports were before fwbench: p0 addressed, MTU 1400, up;
        // p1 bare and down.
        run_ok(&["ip", "-n", h, "addr", "add", "198.18.200.1/24", "dev", "p0"]);
        run_ok(&["ip", "-n", h, "link", "set", "p0", "mtu", "1400", "up"]);
        let script = "addr add 198.18.0.1/16 dev d0\naddr add 2001:2:0:1::1/64 dev d0 nodad\n\
                      addr add 198.19.0.1/24 dev d1\naddr add 2001:2:0:2::1/64 dev d1 nodad\n\
                      link set d0 up\nlink set d1 up\nlink set lo up\n";
        run_with_input(&["ip", "-n", d, "-b", "-"], script);
        run_ok(&cmd!(
            "ip netns exec",
            d,
            "sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1"
        ));
        lab
    }

    /// The testbed file; `manage` sets both roles' `manage_addresses`.
    fn file(&self, manage: bool) -> String {
        let l = format!("[\"ip\", \"netns\", \"exec\", \"{}\"]", self.host);
        let text = format!(
            "name = \"two-port\"\ngateway = \"external\"\n\n\
             [client]\nlauncher = {l}\ninterface = \"p0\"\nmove_interface = true\n\
             manage_addresses = {manage}\n\
             prefix = [\"198.18.1.0/16\", \"2001:2:0:1::c:0/64\"]\n\
             gateway_address = [\"198.18.0.1\", \"2001:2:0:1::1\"]\n\n\
             [server]\nlauncher = {l}\ninterface = \"p1\"\nmove_interface = true\n\
             manage_addresses = {manage}\n\
             address = [\"198.19.0.2\", \"2001:2:0:2::2\"]\n\
             gateway_address = [\"198.19.0.1\", \"2001:2:0:2::1\"]\n"
        );
        let p = self.dir.file(&format!("two-port-{manage}.toml"));
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    /// The testbed file with an agent on the DUT (a `[gateway]` table reached by
    /// `ip netns exec`) instead of `gateway = "external"`: the tester's two ports
    /// still carry the traffic, and fwbench can change the DUT's rules.
    fn file_with_agent(&self) -> String {
        let text = std::fs::read_to_string(self.file(true))
            .unwrap()
            .replace("gateway = \"external\"\n", "")
            + &format!(
            "\n[gateway]\nlauncher = [\"ip\", \"netns\", \"exec\", \"{}\"]\ninterface = \"d0\"\n",
            self.dut
        );
        let p = self.dir.file("two-port-agent.toml");
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    /// Port `dev` in the tester host (`None`: not there — moved away or gone).
    fn port(&self, dev: &str) -> Option<Port> {
        let o = Command::new("ip")
            .args(["-n", &self.host, "-j", "addr", "show", "dev", dev])
            .output()
            .unwrap();
        if !o.status.success() {
            return None;
        }
        let v: Value = serde_json::from_str(&stdout(&o)).ok()?;
        let l = v.get(0)?;
        let mut addrs: Vec<String> = l["addr_info"]
            .as_array()?
            .iter()
            .filter(|a| a["scope"] == "global")
            .map(|a| format!("{}/{}", a["local"].as_str().unwrap(), a["prefixlen"]))
            .collect();
        addrs.sort();
        Some(Port {
            addrs,
            mtu: l["mtu"].as_u64()?,
            up: l["flags"]
                .as_array()?
                .iter()
                .any(|f| f.as_str() == Some("UP")),
        })
    }

    fn original(&self) -> (Port, Port) {
        (
            Port {
                addrs: vec!["198.18.200.1/24".into()],
                mtu: 1400,
                up: true,
            },
            Port {
                addrs: vec![],
                mtu: 1500,
                up: false,
            },
        )
    }

    fn assert_given_back(&self, ctx: &str) {
        let (p0, p1) = self.original();
        let back = wait_for(15.0, || {
            self.port("p0").as_ref() == Some(&p0) && self.port("p1").as_ref() == Some(&p1)
        });
        assert!(
            back,
            "{ctx}: ports not given back as found: p0 {:?}, p1 {:?}",
            self.port("p0"),
            self.port("p1")
        );
        // Nothing runs in the tester host any more (keepers, holders, agents)…
        assert!(
            wait_for(5.0, || pids_in(&self.host).is_empty()),
            "{ctx}: left running in the host: {:?}",
            pids_in(&self.host)
        );
        // …and no crash marker of the host is left.
        assert!(self.markers().is_empty(), "{ctx}: {:?}", self.markers());
    }

    fn host_netns_ino(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/run/netns/{}", self.host))
            .unwrap()
            .ino()
    }

    /// Crash markers of the tester host.
    fn markers(&self) -> Vec<Value> {
        let ino = self.host_netns_ino();
        std::fs::read_dir("/run/fwbench/host")
            .map(|d| {
                d.flatten()
                    .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                    .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
                    .filter(|v| v["netns_ino"].as_u64() == Some(ino))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn fwbench(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run fwbench")
    }
}

#[root_test]
fn two_port_tester_drives_an_external_gateway_and_gives_the_ports_back() {
    let lab = Lab::up();
    let (p0, p1) = lab.original();
    assert_eq!(lab.port("p0"), Some(p0));
    assert_eq!(lab.port("p1"), Some(p1));
    let file = lab.file(true);
    for (proto, family) in [("tcp", "4"), ("udp", "6")] {
        let o = lab.fwbench(&trial_args(
            "echo",
            &file,
            &["-n", "3", "-P", proto, "-A", family],
        ));
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let ctx = format!("echo {proto}/IPv{family}: {v}");
        assert_echo_ok(&v, &ctx);
        // No agent on the gateway: no counters, and the trial says so.
        assert!(v["gateway"].is_null(), "{ctx}");
        let places = fields(&v["placement"], "place");
        assert!(places.contains(&"external gateway: no counters"), "{ctx}");
        // The roles ran inside their ports' namespaces, not in the host's.
        assert!(
            places.iter().filter(|p| p.contains("port netns")).count() == 2,
            "{places:?}"
        );
        lab.assert_given_back(&ctx);
    }
    // A flood through the DUT: every packet arrives (it is the DUT that forwards).
    let o = lab.fwbench(&trial_args("flood", &file, &["--rate", "20kpps"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = &v["result"];
    assert!(u(&r["sent"]) > 15_000, "{v}");
    // Exact, from measured spread: 10 floods of 20 kpps on a local testbed at a load
    // average of 11 lost no packet (docs/tests.md).
    assert_eq!(u(&r["lost"]), 0, "{v}");
    let text = lab.fwbench(&cmd!(
        "flood --testbed",
        &file,
        "--no-store -t 1 --rate 5kpps"
    ));
    assert_prints(&text, "gateway      external gateway: no counters");
    lab.assert_given_back("flood");
    // A scenario names the testbed file relative to itself.
    let sc = lab.dir.file("flood-scenario.toml");
    std::fs::write(
        &sc,
        "name = \"two-port flood\"\nworkload = \"flood\"\n\
         [testbed]\nfile = \"two-port-true.toml\"\n\
         [params]\nduration = \"1s\"\nrate = \"10kpps\"\n",
    )
    .unwrap();
    let db = lab.dir.file("r.db");
    let o = lab.fwbench(&["run", sc.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials WHERE status = 'ok'"),
        1,
        "{}",
        stdout(&o)
    );
    // Each role's host is in the run's metadata and the report's "Testbed hosts".
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM role_hosts"),
        3,
        "client, external gateway, server"
    );
    let o = lab.fwbench(&["report", db.to_str().unwrap(), "-f", "md", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    for want in [
        "Testbed hosts",
        "external gateway: no counters",
        kernel.trim(),
        "p0 (veth); moved for the run, found 198.18.200.1/24 mtu 1400 up",
        "p1 (veth); moved for the run, found no address, mtu 1500 down",
        "net.ipv4.ip_forward",
    ] {
        assert!(md.contains(want), "no {want:?} in\n{md}");
    }
    lab.assert_given_back("scenario");
    // Rules need an agent on the gateway: refused before any port moves.
    let o = lab.fwbench(&cmd!(
        "echo --testbed",
        &file,
        "--engine nft --no-store -t 1"
    ));
    assert_refused(&o, "engine nft needs rules on the gateway");
    assert_refused(&o, "external");
    lab.assert_given_back("refused engine");
}

#[root_test]
fn two_port_ports_come_back_after_the_controller_is_killed() {
    let lab = Lab::up();
    // Without manage_addresses the moved ports keep the addresses they had.
    let file = lab.file(false);
    let mut ctl = spawn_silenced(Command::new(bin()).args(cmd!(
        "flood --testbed",
        &file,
        "--no-store -t 20 --rate 5kpps"
    )));
    // Mid-run: both ports away from the host, each noted in a crash marker.
    let moved = wait_for(15.0, || {
        lab.port("p0").is_none() && lab.port("p1").is_none() && lab.markers().len() == 2
    });
    let markers = lab.markers();
    let inside = markers
        .iter()
        .find(|m| m["what"] == "ports of client")
        .and_then(|m| {
            m["items"]
                .as_array()?
                .iter()
                .find(|i| i["kind"] == "holder")
                .and_then(|i| i["pid"].as_u64())
        })
        .map(|pid| {
            let o = Command::new("nsenter")
                .args(["-t", &pid.to_string(), "-n", "ip", "-br", "addr"])
                .output()
                .unwrap();
            stdout(&o)
        })
        .unwrap_or_default();
    ctl.kill().expect("SIGKILL the controller");
    ctl.wait().unwrap();
    assert!(moved, "ports not moved: {:?} {markers:?}", lab.port("p0"));
    assert!(
        inside.contains("p0") && inside.contains("198.18.200.1/24"),
        "the client's port keeps its own address: {inside}"
    );
    lab.assert_given_back("after SIGKILL of the controller");
}

#[root_test]
fn the_next_run_cleans_up_what_a_killed_host_left() {
    let lab = Lab::up();
    let h = lab.host.clone();
    // What a run killed with its whole process tree leaves: p0 returned from its
    // destroyed namespace flushed, at another MTU and down (as a physical port does);
    // p1 still in a namespace whose holder survived; a sysctl still set.
    run_ok(&["ip", "-n", &h, "addr", "flush", "dev", "p0"]);
    run_ok(&["ip", "-n", &h, "link", "set", "p0", "mtu", "1300", "down"]);
    let holder = Command::new("ip")
        .args(["netns", "exec", &h, "unshare", "-n", "sleep", "60"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let hpid = holder.id();
    // `ip netns exec` execs unshare, which execs sleep: same PID, once in its own netns.
    assert!(wait_for(5.0, || {
        std::fs::read_link(format!("/proc/{hpid}/ns/net")).ok()
            != std::fs::read_link(format!("/run/netns/{h}")).ok()
            && std::fs::read_to_string(format!("/proc/{hpid}/comm"))
                .is_ok_and(|c| c.trim() == "sleep")
    }));
    let holder_pid = hpid.to_string();
    run_ok(&cmd!("ip -n", &h, "link set p1 netns", &holder_pid));
    run_ok(&cmd!(
        "ip netns exec",
        &h,
        "sysctl -qw net.ipv4.ip_forward=1"
    ));
    let start = |pid: u32| -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        s[s.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let marker = serde_json::json!({
        "what": "ports of client",
        "pid": dead_pid,
        "start": 1,
        "netns_ino": lab.host_netns_ino(),
        "items": [
            {"kind": "sysctl", "name": "net.ipv4.ip_forward", "old": "0"},
            {"kind": "holder", "pid": hpid, "start": start(hpid)},
            {"kind": "port", "interface": "p1", "holder": hpid, "holder_start": start(hpid),
             "orig": {"addrs": [], "mtu": 1500, "up": false}},
            {"kind": "port", "interface": "p0", "holder": dead_pid, "holder_start": 1,
             "orig": {"addrs": ["198.18.200.1/24"], "mtu": 1400, "up": true}},
        ],
    });
    std::fs::create_dir_all("/run/fwbench/host").unwrap();
    let mpath = format!("/run/fwbench/host/{dead_pid}-1.json");
    std::fs::write(&mpath, marker.to_string()).unwrap();
    assert_eq!(lab.port("p1"), None);
    // The next run on the host: it cleans up first, then runs.
    let file = lab.file(true);
    let o = lab.fwbench(&["echo", "--testbed", &file, "--no-store", "-t", "1"]);
    let _ = std::fs::remove_file(&mpath);
    let mut holder = holder;
    let holder_gone = wait_for(5.0, || holder.try_wait().is_ok_and(|s| s.is_some()));
    if !holder_gone {
        let _ = holder.kill();
        let _ = holder.wait();
    }
    assert!(o.status.success(), "{}", stderr(&o));
    for want in [
        "undid interface p0",
        "undid interface p1",
        "undid sysctl net.ipv4.ip_forward",
        &format!("undid namespace held by pid {hpid}"),
    ] {
        assert!(stderr(&o).contains(want), "no {want:?} in {}", stderr(&o));
    }
    assert!(holder_gone, "the namespace's holder was not ended");
    let fwd = Command::new("ip")
        .args(["netns", "exec", &h, "sysctl", "-n", "net.ipv4.ip_forward"])
        .output()
        .unwrap();
    assert_eq!(stdout(&fwd).trim(), "0");
    lab.assert_given_back("cleanup by the next run");
}

#[root_test]
fn two_port_bad_interface_exits_2_and_changes_nothing() {
    let lab = Lab::up();
    let file = lab.file(true);
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"p1\"", "\"p9\"");
    std::fs::write(&file, text).unwrap();
    let o = lab.fwbench(&["echo", "--testbed", &file, "--no-store", "-t", "1"]);
    assert_refused(&o, "server interface p9");
    lab.assert_given_back("bad interface");
}

/// Gateway events with the two-port tester: with an agent on the DUT its rules change
/// under the tester's traffic, and the time to effect and the stalls are measured
/// where they always are — at the receiving end (the sink, the echo and session
/// clients), on the tester's one clock; with an external DUT there is nothing of
/// fwbench's to change: refused before a port moves.
#[root_test]
fn two_port_tester_runs_gateway_events_with_an_agent_on_the_dut() {
    let lab = Lab::up();
    let file = lab.file_with_agent();
    let event = argv("-t 2 --engine nft --rules 100 --event add:1@800ms");
    let run = |kind: &str, extra: &[&str]| {
        let mut a = trial_args(kind, &file, &event);
        a.extend_from_slice(extra);
        let o = lab.fwbench(&a);
        serde_json::from_str::<Value>(&stdout(&o))
            .unwrap_or_else(|e| panic!("{kind}: {e}: {}", stderr(&o)))
    };
    let v = run("flow", &argv("-r 20kpps --flows 2 --sources 2"));
    let r = &v["result"];
    update_took_effect(&v, "two-port flow", u(&r["lost"]));
    assert!(u(&r["lost"]) > 0, "the marker flow is dropped: {v}");
    lab.assert_given_back("flow with an event");
    let v = run("echo", &argv("-P udp -n 3"));
    let r = &v["result"];
    update_took_effect(&v, "two-port echo", u(&r["lost"]) + u(&r["unsent"]));
    lab.assert_given_back("echo with an event");
    let v = run("sessions", &argv("-p 2"));
    update_took_effect(&v, "two-port sessions", u(&v["result"]["failed"]));
    lab.assert_given_back("sessions with an event");
    // An external DUT: no rule set of fwbench's to change.
    let external = lab.file(true);
    let o = lab.fwbench(&cmd!(
        "flow --testbed",
        &external,
        "--no-store -t 1 -r 1kpps --engine nft --event add:1@500ms"
    ));
    assert_refused(&o, "its gateway is external");
    lab.assert_given_back("refused event");
}
