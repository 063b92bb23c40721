//! Nothing left behind when the controller's process group is signalled mid-trial
//! (a closed terminal: SIGHUP; a cancelled CI job: SIGTERM): no rules on the gateway,
//! no process in the testbed's namespaces (agents, nginx, curl), no temp dir.
//! Needs root; reported as ignored otherwise.

mod util;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;
use util::*;

/// Our temp dirs of external programs run by `pids` (`fwbench-nginx-<pid>-<n>`).
fn temp_dirs_of(pids: &[u32]) -> Vec<String> {
    let Ok(d) = std::fs::read_dir(std::env::temp_dir()) else {
        return vec![];
    };
    d.flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            pids.iter().any(|p| {
                n.starts_with(&format!("fwbench-nginx-{p}-"))
                    || n.starts_with(&format!("fwbench-curl-{p}-"))
            })
        })
        .collect()
}

fn signal_group_mid_trial(sig: &str) {
    let tb = TestbedGuard::up("forward");
    let (cli, gw, srv) = (
        format!("fwb-{}-cli", tb.name),
        tb.gw(),
        format!("fwb-{}-srv", tb.name),
    );
    let mut child = Command::new(bin())
        .args(cmd!("http --testbed", &tb.name, "--no-store --count 100000 --size 1M --server-program nginx --client-program curl --engine nft --rules 100"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id();
    // Mid-trial: rules installed, nginx serving, curl downloading.
    let running = wait_for(30.0, || {
        nft_ruleset(&gw).contains("fwbench")
            && pids_in(&srv).len() >= 2
            && !temp_dirs_of(&pids_in(&srv)).is_empty()
    });
    if !running {
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        panic!("{sig}: trial never got going: {}", stderr(&o));
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut pids = Vec::new();
    for ns in [&cli, &gw, &srv] {
        pids.extend(pids_in(ns));
    }
    let dirs = temp_dirs_of(&pids);
    assert!(!dirs.is_empty());
    // The whole group, as a terminal or a CI runner does.
    let st = Command::new("kill")
        .args([&format!("-{sig}"), "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    assert!(st.success());
    assert!(
        wait_for(30.0, || child.try_wait().unwrap().is_some()),
        "{sig}: the controller did not exit"
    );
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(
        wait_for(10.0, || pids.iter().all(|&p| !alive(p))),
        "{sig}: processes left: {:?} ({err})",
        pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
    );
    for ns in [&cli, &gw, &srv] {
        assert!(pids_in(ns).is_empty(), "{sig}: processes in {ns}");
    }
    assert!(
        !nft_ruleset(&gw).contains("fwbench"),
        "{sig}: rules left: {}",
        nft_ruleset(&gw)
    );
    let left: Vec<String> = dirs
        .iter()
        .filter(|d| std::env::temp_dir().join(d).exists())
        .cloned()
        .collect();
    assert!(left.is_empty(), "{sig}: temp dirs left: {left:?}");
}

#[root_test]
fn sigterm_to_the_controllers_group_leaves_nothing() {
    signal_group_mid_trial("TERM");
}

#[root_test]
fn sighup_to_the_controllers_group_leaves_nothing() {
    signal_group_mid_trial("HUP");
}

/// The agent itself: SIGTERM (what the parent-death signal sends when the controller
/// dies) is handled like the end of its input: rules undone, then exit.
#[root_test(tb = "forward")]
fn sigterm_to_the_gateway_agent_undoes_its_rules() {
    let gw = tb.gw();
    let mut child = spawn_echo(&tb.name, &["-t", "60", "--engine", "nft", "--rules", "100"]);
    assert!(
        wait_for(30.0, || nft_ruleset(&gw).contains("fwbench")),
        "rules never installed"
    );
    // The agent is the one process in the gateway's namespace that runs `fwbench agent`;
    // a short-lived child of it (an `nft` it runs to read counters) may be there too.
    let agents_in = || -> Vec<u32> {
        pids_in(&gw)
            .into_iter()
            .filter(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .map(|c| c.split(|&b| b == 0).any(|a| a == b"agent"))
                    .unwrap_or(false)
            })
            .collect()
    };
    let mut agents = agents_in();
    assert!(
        wait_for(10.0, || {
            agents = agents_in();
            agents.len() == 1
        }),
        "agents: {agents:?}, all: {:?}",
        pids_in(&gw)
    );
    Command::new("kill")
        .args(["-TERM", &agents[0].to_string()])
        .status()
        .unwrap();
    let undone = wait_for(10.0, || !nft_ruleset(&gw).contains("fwbench"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(undone, "rules left: {}", nft_ruleset(&gw));
    assert!(wait_for(10.0, || !alive(agents[0])));
    assert!(
        wait_for(10.0, || pids_in(&gw).is_empty()),
        "processes left in the gateway: {:?}",
        pids_in(&gw)
    );
}

/// A test process killed before its guards ran (`cargo test` stopped by Ctrl-C) left
/// its testbed; the next test process that takes a testbed takes it down — only one
/// this harness registered, whose owner's PID is gone — and leaves a live owner's.
#[root_test]
fn testbeds_of_a_test_process_that_died_are_taken_down_by_the_next() {
    let up = |name: &str| {
        let o = fwbench(&["testbed", "up", "--name", name]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let (dead, live) = (unique("o"), unique("o"));
    up(&dead);
    up(&live);
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    std::fs::create_dir_all(REGISTRY).unwrap();
    let reg = |name: &str| std::path::Path::new(REGISTRY).join(name);
    std::fs::write(reg(&dead), pid.to_string()).unwrap();
    std::fs::write(reg(&live), std::process::id().to_string()).unwrap();
    sweep_orphans_now();
    assert!(
        namespaces_with(&format!("fwb-{dead}-")).is_empty(),
        "{:?}",
        namespaces()
    );
    assert!(!reg(&dead).exists());
    assert_eq!(
        namespaces_with(&format!("fwb-{live}-")).len(),
        3,
        "{:?}",
        namespaces()
    );
    drop(TestbedGuard { name: live.clone() });
    assert!(namespaces_with(&format!("fwb-{live}-")).is_empty());
    assert!(!reg(&live).exists());
}
