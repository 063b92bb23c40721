//! A testbed file whose launcher is not one (issue 38): `cat /dev/zero` where a host's
//! shell should be, or a launcher that runs fwbench's commands but answers `fwbench
//! agent` with endless zeros. fwbench reads at most 64 KiB of it, stops it, and exits
//! 2 within seconds, in bounded memory, with a short message naming the host (it used
//! to grow to 2 GB and abort, or copy 50 MB of the junk into its error).
//!
//! `testbed check` and `testbed cleanup` need no root; a trial command (the agent's
//! path) does.

mod util;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use util::*;

/// Most memory fwbench may use here (its high-water mark, sampled while it runs).
const MAX_RSS_KB: u64 = 200 << 10;

/// Run fwbench with `args` (virtual memory limited to 2 GB, so a regression cannot
/// take the machine's memory): exit code, stderr, the highest RSS seen and how long it
/// took. Fails past 30 s.
fn bounded(args: &[&str]) -> (i32, String, u64, Duration) {
    let t0 = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2000000 && exec \"$0\" \"$@\"")
        .arg(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fwbench");
    // stderr is read on a thread: a regression printing 100 MB must not block it.
    let mut pipe = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut pipe, &mut b);
        b
    });
    let mut hwm = 0;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
        if let Some(kb) = status.ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        }) {
            hwm = hwm.max(kb);
        }
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fwbench {args:?} did not exit within 30 s (RSS {hwm} kB)");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = String::from_utf8_lossy(&reader.join().expect("reader")).into_owned();
    (status.code().unwrap_or(-1), err, hwm, t0.elapsed())
}

/// A testbed file: every role's `launcher` as given (TOML), a cache dir in `dir`.
fn testbed(dir: &TempDir, launcher: &str) -> String {
    let cache = dir.file("cache");
    dir.write(
        "junk.toml",
        format!(
            r#"
cache_dir = "{cache}"
timeout = "20s"

[client]
launcher = {launcher}
interface = "lo"
prefix = "198.18.1.0/16"
gateway_address = "198.18.0.1"

[gateway]
launcher = {launcher}
interface = "lo"

[server]
launcher = {launcher}
address = "198.19.0.2"
"#,
            cache = cache.display()
        ),
    )
    .display()
    .to_string()
}

/// Exit 2 within 20 s, RSS under [`MAX_RSS_KB`], a short stderr naming `needles` and
/// holding no raw control character (the zeros are quoted escaped).
fn assert_refused_briefly(args: &[&str], needles: &[&str]) {
    let (code, err, hwm, took) = bounded(args);
    let head: String = err.chars().take(2000).collect();
    assert_eq!(code, 2, "{args:?}: exit {code} after {took:?}: {head}");
    assert!(took < Duration::from_secs(20), "{args:?}: took {took:?}");
    assert!(hwm < MAX_RSS_KB, "{args:?}: RSS {hwm} kB");
    assert!(
        err.len() < 4096,
        "{args:?}: {} bytes of stderr: {head}",
        err.len()
    );
    assert!(
        !err.contains('\0')
            && !err
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{args:?}: raw control characters: {err:?}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in: {err}");
    }
}

/// `cat /dev/zero` in place of a host's shell: `testbed check` (a command through the
/// launcher) and `testbed cleanup` (the binary cache probed first) stop it at 64 KiB.
#[test]
fn a_launcher_printing_zeros_is_stopped_at_the_cap() {
    let dir = TempDir::new();
    let tb = testbed(&dir, r#"["sh", "-c", "cat /dev/zero", "zeros"]"#);
    let cut = "printed more than 65536 bytes on its stdout";
    assert_refused_briefly(
        &["testbed", "check", &tb],
        &["client host sh -c cat /dev/zero zeros", cut, "\"\\0\\0\\0"],
    );
    assert_refused_briefly(&["testbed", "cleanup", &tb], &["client host", cut]);
    // On stderr too (what a failed command printed is kept for its error).
    let tb = testbed(&dir, r#"["sh", "-c", "cat /dev/zero >&2", "zeros"]"#);
    assert_refused_briefly(&["testbed", "cleanup", &tb], &["on its stderr"]);
}

/// A launcher that runs what fwbench asks (the cache probe, the copy, a command) but
/// answers `fwbench agent` with zeros: not an fwbench agent, exit 2 naming the host.
#[root_test(needs = "trial commands refuse to start without it")]
fn a_launcher_whose_agent_prints_zeros_is_not_an_agent() {
    if euid() != 0 {
        return skip("needs root: trial commands refuse to start without it");
    }
    let dir = TempDir::new();
    let tb = testbed(
        &dir,
        r#"["sh", "-c", "if [ \"$2\" = agent ]; then exec cat /dev/zero; fi; exec \"$@\"", "fake"]"#,
    );
    assert_refused_briefly(
        &["flood", "-t", "1", "--no-store", "--testbed", &tb],
        &[
            "client agent on host",
            "not an fwbench agent",
            "\"\\0\\0\\0",
        ],
    );
}

/// This process's effective user id (`id -u`: the tests use no libc).
fn euid() -> u32 {
    let o = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .unwrap_or(u32::MAX)
}
