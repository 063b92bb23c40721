//! Hosts reached through a launcher that is not this machine's filesystem (`ssh HOST`,
//! any argv prefix): this very binary is put there once, keyed by its SHA-256, and
//! commands are passed so the remote shell sees exactly the argv we mean.
//!
//! Owns: the binary cache on a host (`<cache_dir>/fwbench-<sha256>`, checked with
//! `sha256sum`, copied over the launcher's stdin with `cat` — no scp), quoting for
//! `ssh` (which joins its arguments into one shell command line), and SSH connection
//! sharing (`ControlMaster`/`ControlPath` in a private directory of this process).
//! What a launcher prints is read with [`bounded`]'s cap. Must not: disable host key checking or override an SSH option the user gave.

use crate::testbed::bounded::{self, shown};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Where the binary lives on a remote host (`~` is the remote user's home).
pub const DEFAULT_CACHE_DIR: &str = "~/.cache/fwbench";

/// A host that needs its own copy of the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// Cache directory on the host ([`check_cache_dir`] has vetted it).
    pub cache_dir: String,
    /// How long reaching the host may take (the launcher's timeout).
    pub timeout: std::time::Duration,
}

/// Longest `cache_dir`, in bytes (a path: `PATH_MAX`, less the binary's file name).
pub const MAX_CACHE_DIR_LEN: usize = 3072;

/// A `cache_dir` fwbench will not paste into a host's shell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{shown}': an absolute path or one starting with ~/, of letters, digits, '/', '.', \
     '_', '-', at most {MAX_CACHE_DIR_LEN} bytes"
)]
pub struct BadCacheDir {
    /// The directory as given, cut and escaped for the message.
    pub shown: String,
}

/// A cache dir is pasted into a shell script: a leading `~/` and path characters only.
pub fn check_cache_dir(d: &str) -> Result<(), BadCacheDir> {
    let rest = d.strip_prefix("~/").unwrap_or(d);
    let ok = !rest.is_empty()
        && d.len() <= MAX_CACHE_DIR_LEN
        && (d.starts_with('/') || d.starts_with("~/"))
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(BadCacheDir { shown: shown(d) })
    }
}

/// Whether a launcher prefix is `ssh …` (by its program's file name).
pub fn is_ssh(prefix: &[String]) -> bool {
    prefix
        .first()
        .and_then(|p| p.rsplit('/').next())
        .is_some_and(|p| p == "ssh")
}

/// One argument for a POSIX shell, quoted so it arrives unchanged.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,@%+".contains(c))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The full argv that runs `args` through `prefix`. `ssh` joins the words of its
/// command with spaces and hands them to the remote shell, so each is quoted.
pub fn command_argv(prefix: &[String], args: &[String]) -> Vec<String> {
    let quote = is_ssh(prefix);
    prefix
        .iter()
        .cloned()
        .chain(
            args.iter()
                .map(|a| if quote { shell_quote(a) } else { a.clone() }),
        )
        .collect()
}

/// This process's private directory (mode 0700) for SSH control sockets, once made.
static CONTROL_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Remove `fwbench-ssh-PID-N` directories in `base` whose PID no longer runs (a
/// controller killed before it could remove its own); their sockets are dead, and
/// the masters behind them exit after `ControlPersist`. Returns what was removed.
pub fn reap_control_dirs(base: &std::path::Path) -> Vec<PathBuf> {
    let mut gone = vec![];
    let Ok(rd) = std::fs::read_dir(base) else {
        return gone;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("fwbench-ssh-") else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (
            pid.parse::<u32>(),
            !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
        ) else {
            continue;
        };
        // A directory (never a symlink) of this user: another user's is never removed.
        let is_dir = e.metadata().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_dir() && m.uid() == crate::sys::euid()
        });
        if is_dir
            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
            && std::fs::remove_dir_all(e.path()).is_ok()
        {
            gone.push(e.path());
        }
    }
    gone
}

fn control_dir() -> Result<&'static PathBuf> {
    if let Some(d) = CONTROL_DIR.get() {
        return Ok(d);
    }
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for d in reap_control_dirs(&base) {
        tracing::info!("removed {} (its controller is gone)", d.display());
    }
    for n in 0..100 {
        let p = base.join(format!("fwbench-ssh-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(CONTROL_DIR.get_or_init(|| p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", p.display())),
        }
    }
    bail!(
        "no free directory for SSH control sockets in {}",
        base.display()
    )
}

/// The options fwbench adds to an `ssh` launcher, unless the user set them: connection
/// sharing (one TCP connection per host for a whole run), no prompts (a missing key
/// fails at once instead of waiting for a password nobody types), a connect timeout.
/// Host key checking stays whatever SSH's configuration and the user's options say.
pub fn ssh_options(prefix: &[String]) -> Result<Vec<String>> {
    let given = |opt: &str| {
        prefix.iter().any(|a| {
            let a = a.to_ascii_lowercase();
            a.starts_with(&opt.to_ascii_lowercase())
                || a.starts_with(&format!("-o{}", opt.to_ascii_lowercase()))
        })
    };
    let mut out = Vec::new();
    if !given("ControlMaster") && !given("ControlPath") && !prefix.iter().any(|a| a == "-S") {
        let dir = control_dir()?;
        out.extend([
            "-o".into(),
            "ControlMaster=auto".into(),
            "-o".into(),
            format!("ControlPath={}/%C", dir.display()),
            "-o".into(),
            "ControlPersist=60".into(),
        ]);
    }
    if !given("BatchMode") {
        out.extend(["-o".into(), "BatchMode=yes".into()]);
    }
    if !given("ConnectTimeout") {
        out.extend(["-o".into(), "ConnectTimeout=10".into()]);
    }
    Ok(out)
}

/// `prefix` with fwbench's SSH options inserted after the program (ssh only).
pub fn with_ssh_options(prefix: Vec<String>) -> Result<Vec<String>> {
    if !is_ssh(&prefix) {
        return Ok(prefix);
    }
    let opts = ssh_options(&prefix)?;
    let mut v = vec![prefix[0].clone()];
    v.extend(opts);
    v.extend(prefix[1..].iter().cloned());
    Ok(v)
}

/// Close the shared SSH connection of an `ssh` launcher (if one may be open).
pub fn close_shared(prefix: &[String]) {
    if CONTROL_DIR.get().is_none() || !is_ssh(prefix) {
        return;
    }
    let mut argv = prefix.to_vec();
    argv.insert(1, "-O".into());
    argv.insert(2, "exit".into());
    let _ = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Remove this process's control directory (after [`close_shared`] on each host).
pub fn remove_control_dir() {
    if let Some(d) = CONTROL_DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The running binary (as `launcher::self_exe`, which imports this module).
fn own_exe() -> PathBuf {
    PathBuf::from(format!("/proc/{}/exe", std::process::id()))
}

/// SHA-256 of the running binary (hex), computed once.
pub fn self_sha256() -> Result<&'static str> {
    static SHA: OnceLock<String> = OnceLock::new();
    if let Some(s) = SHA.get() {
        return Ok(s);
    }
    let exe = own_exe().display().to_string();
    let out = crate::process::Cmd::new("sha256sum", &[&exe])
        .run()
        .context("hashing the fwbench binary")?;
    let sha = out
        .stdout
        .split_whitespace()
        .next()
        .filter(|s| s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| anyhow!("sha256sum printed no hash: {}", out.stdout))?
        .to_owned();
    Ok(SHA.get_or_init(|| sha))
}

/// What a host's cache holds for this binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cached {
    /// This exact binary is there (absolute path on the host).
    Have(String),
    /// It is not (or differs); it would go to this absolute path.
    Missing(String),
}

/// A failure to reach a host through its launcher: argv, status, what it printed
/// (at most [`bounded::STDERR_SHOWN`] bytes of it).
fn failed(what: &str, argv: &[String], out: &bounded::Output) -> anyhow::Error {
    anyhow!(
        "{what}: `{}` failed ({}): {}",
        argv.join(" "),
        out.status,
        bounded::stderr_text(&out.stderr)
    )
}

/// The host a prefix reaches, for messages: ssh's destination, else the prefix.
fn host_of(prefix: &[String]) -> String {
    if is_ssh(prefix) {
        prefix.last().cloned().unwrap_or_default()
    } else {
        prefix.join(" ")
    }
}

/// `sh -c script` on the host through the launcher `prefix`, `input` on its stdin, its
/// output read with a cap: the argv run and its output.
fn sh_on_host(
    prefix: &[String],
    script: String,
    input: bounded::Input,
    timeout: std::time::Duration,
) -> Result<(Vec<String>, bounded::Output)> {
    let argv = command_argv(prefix, &["sh".into(), "-c".into(), script]);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    let out = bounded::run(cmd, &argv, &host_of(prefix), input, timeout)?;
    Ok((argv, out))
}

/// Look for this binary in the host's cache (one round trip).
pub fn probe_cache(prefix: &[String], remote: &Remote) -> Result<Cached> {
    let sha = self_sha256()?;
    let script = format!(
        "d={d}; f=\"$d/fwbench-{sha}\"; \
         if [ -x \"$f\" ] && [ \"$(sha256sum < \"$f\" | cut -c1-64)\" = {sha} ]; \
         then echo \"have $f\"; else echo \"missing $f\"; fi",
        d = remote.cache_dir
    );
    let (argv, out) = sh_on_host(prefix, script, bounded::Input::Null, remote.timeout)?;
    if !out.status.success() {
        return Err(failed("reaching the host", &argv, &out));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or("");
    match line.split_once(' ') {
        Some(("have", p)) => Ok(Cached::Have(p.to_owned())),
        Some(("missing", p)) => Ok(Cached::Missing(p.to_owned())),
        _ => bail!(
            "unexpected answer from `{}`: {} (is the host's shell POSIX sh? is the \
             launcher one: does it run the command it is given?)",
            argv.join(" "),
            bounded::quote(&out.stdout)
        ),
    }
}

/// Copy this binary to the host's cache (over the launcher's stdin).
fn copy(prefix: &[String], remote: &Remote, dest: &str) -> Result<()> {
    let sha = self_sha256()?;
    let script = format!(
        "d={d}; mkdir -p \"$d\" && t=\"$d/.fwbench-{sha}.$$\" && cat > \"$t\" && \
         chmod 755 \"$t\" && mv -f \"$t\" \"$d/fwbench-{sha}\"",
        d = remote.cache_dir
    );
    let exe = std::fs::File::open(own_exe()).context("opening own binary")?;
    let input = bounded::Input::File(exe);
    let (argv, out) = sh_on_host(prefix, script, input, remote.timeout * 10)?;
    if !out.status.success() {
        return Err(failed(&format!("copying fwbench to {dest}"), &argv, &out));
    }
    tracing::info!("copied fwbench to {dest} ({})", argv.join(" "));
    Ok(())
}

/// The path of this binary on the host, copying it there first if needed. Checked
/// once per host and process (a sweep of 1 000 trials asks once).
pub fn ensure_binary(prefix: &[String], remote: &Remote) -> Result<String> {
    static DONE: OnceLock<Mutex<HashMap<Vec<String>, String>>> = OnceLock::new();
    let done = DONE.get_or_init(Default::default);
    if let Some(p) = done.lock().ok().and_then(|m| m.get(prefix).cloned()) {
        return Ok(p);
    }
    let path = match probe_cache(prefix, remote)? {
        Cached::Have(p) => p,
        Cached::Missing(p) => {
            copy(prefix, remote, &p)?;
            match probe_cache(prefix, remote)? {
                Cached::Have(p) => p,
                Cached::Missing(p) => bail!("{p}: copied, but its SHA-256 does not match"),
            }
        }
    };
    if let Ok(mut m) = done.lock() {
        m.insert(prefix.to_vec(), path.clone());
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ssh_commands_are_quoted_others_not() {
        let ssh = v(&["ssh", "-i", "k", "root@198.18.0.2"]);
        let args = v(&["sh", "-c", "echo 'a b'; x=$y"]);
        assert_eq!(
            command_argv(&ssh, &args)[4..],
            v(&["sh", "-c", r#"'echo '\''a b'\''; x=$y'"#])
        );
        let ns = v(&["ip", "netns", "exec", "n"]);
        assert_eq!(command_argv(&ns, &args)[4..], args[..]);
        assert!(is_ssh(&v(&["/usr/bin/ssh", "h"])));
        assert!(!is_ssh(&v(&["env"])));
    }

    #[test]
    fn ssh_options_added_unless_given() {
        let p = with_ssh_options(v(&["ssh", "-o", "BatchMode=no", "h"])).unwrap();
        assert_eq!(p[0], "ssh");
        assert!(p.iter().any(|a| a == "ControlMaster=auto"));
        assert!(p.iter().any(|a| a.starts_with("ControlPath=")));
        assert!(!p.iter().any(|a| a == "BatchMode=yes"));
        assert_eq!(&p[p.len() - 3..], &v(&["-o", "BatchMode=no", "h"])[..]);
        assert!(!p.iter().any(|a| a.contains("StrictHostKeyChecking")));
        let q = with_ssh_options(v(&["ssh", "-S", "/x", "h"])).unwrap();
        assert!(!q.iter().any(|a| a == "ControlMaster=auto"));
        assert_eq!(with_ssh_options(v(&["env"])).unwrap(), v(&["env"]));
        remove_control_dir();
    }

    #[test]
    fn control_dirs_of_dead_controllers_are_reaped() {
        let base = tempfile::tempdir().unwrap();
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let dead = c.id();
        c.wait().unwrap();
        let me = std::process::id();
        for n in [
            format!("fwbench-ssh-{dead}-0"),
            format!("fwbench-ssh-{me}-0"),
            format!("fwbench-ssh-{dead}-x"),
            "other-1-0".to_string(),
        ] {
            std::fs::create_dir(base.path().join(n)).unwrap();
        }
        std::fs::write(base.path().join(format!("fwbench-ssh-{dead}-0/s")), "").unwrap();
        let gone = reap_control_dirs(base.path());
        assert_eq!(gone, [base.path().join(format!("fwbench-ssh-{dead}-0"))]);
        let mut left: Vec<String> = std::fs::read_dir(base.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = [
            format!("fwbench-ssh-{dead}-x"),
            format!("fwbench-ssh-{me}-0"),
            "other-1-0".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn cache_dirs_checked() {
        for ok in ["~/.cache/fwbench", "/var/tmp/fw-b_1"] {
            assert!(check_cache_dir(ok).is_ok(), "{ok}");
        }
        for bad in ["", "~", "rel/x", "/a b", "/a;rm", "~user/x", "/$(x)"] {
            assert!(check_cache_dir(bad).is_err(), "{bad}");
        }
        let long = "/d".repeat(2000);
        let e = check_cache_dir(&long).unwrap_err().to_string();
        assert!(e.contains("… (4000 bytes)") && e.len() < 400, "{e}");
        assert!(check_cache_dir(&long[..MAX_CACHE_DIR_LEN]).is_ok());
    }
}
