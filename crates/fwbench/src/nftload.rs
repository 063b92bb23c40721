//! Loading a user's nft ruleset safely (the file itself is read by
//! `limits::read_user_file`): loaded by nft itself into a scratch network
//! namespace that exists only while the load runs.
//!
//! Owns: [`load_nft`] (nft parses the file in an anonymous network
//! namespace made by `unshare --net`, which the kernel removes when its last process
//! ends — also when fwbench is killed; the messages nft sends to the kernel, and its
//! read-back as JSON and as text), [`check_in_scratch`] (a batch tool's own check, in a
//! scratch namespace).
//! Must not: run the user's file, or a text made from it, in any other namespace; run
//! anything through a shell with the user's text or path in the script.

use crate::process::{Cmd, Failure};
use std::time::Duration;

/// How long nft may take to load and list a file in the scratch namespace.
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// What nft made of a file in the scratch namespace.
#[derive(Debug)]
pub struct Loaded {
    /// nf_tables netlink message types nft sent while loading it, each once.
    pub messages: Vec<u16>,
    /// `nft -j list ruleset` of the scratch namespace.
    pub json: String,
    /// `nft -a list ruleset` of the scratch namespace (rule texts with handles).
    pub listing: String,
}

/// The script run in the scratch namespace. The file comes on stdin: neither its
/// path nor its text is part of the script. nft's `--debug=mnl` dump of the messages
/// it sends goes through grep, which keeps only the message-type column (a listing
/// command in the file prints into the same pipe, never past it).
const SCRIPT: &str = r#"set -o pipefail
nft --debug=mnl -f /dev/stdin | { grep -aoE '^\| [0-9]{5} \|' || true; } | sort -u || exit 3
echo @@FWBENCH-JSON@@
nft -j list ruleset || exit 4
echo @@FWBENCH-TEXT@@
nft -a list ruleset || exit 4
"#;

/// Load `text` (the contents of `path`) with nft into a fresh anonymous network
/// namespace and read it back. nft's own errors (with `path:line:col`) are returned
/// as they are, the path put back in place of nft's `/dev/stdin`.
pub fn load_nft(path: &str, text: &str) -> Result<Loaded, String> {
    let args = [
        "--net",
        "--",
        "bash",
        "-c",
        SCRIPT,
        "fwbench-import-scratch",
    ];
    let f = Cmd::new("unshare", &args)
        .input(text)
        .timeout(LOAD_TIMEOUT)
        .c_locale()
        .finish()
        .map_err(|e| match e.failure {
            Failure::TimedOut(t) => format!(
                "--import {path}: nft did not load it within {} s (in a scratch namespace)",
                t.as_secs()
            ),
            _ => format!("--import {path}: {}", e.one_line()),
        })?;
    let stderr = f.stderr.replace("/dev/stdin", path);
    if !f.success() {
        if stderr.contains("unshare failed") || stderr.contains("Operation not permitted") {
            return Err(format!(
                "--import {path}: loading an nft file into a scratch network namespace needs \
                 root: {}",
                stderr.trim()
            ));
        }
        return Err(format!(
            "--import {path}: nft rejects it:\n{}",
            stderr.trim_end()
        ));
    }
    let out = f.stdout;
    let (types, rest) = out
        .split_once("@@FWBENCH-JSON@@\n")
        .ok_or_else(|| format!("--import {path}: nft's read-back is incomplete"))?;
    let (json, listing) = rest
        .split_once("@@FWBENCH-TEXT@@\n")
        .ok_or_else(|| format!("--import {path}: nft's read-back is incomplete"))?;
    let messages = types
        .lines()
        .filter_map(|l| l.trim_matches(|c| c == '|' || c == ' ').parse().ok())
        .collect();
    Ok(Loaded {
        messages,
        json: json.to_owned(),
        listing: listing.to_owned(),
    })
}

/// Run a batch tool's own check mode (`argv`, reading `text` on stdin) inside a
/// fresh anonymous network namespace, after `ipset restore` of `sets` there (the
/// ipsets the rules match; from a private temporary file, whose path is an argument
/// of the fixed script, never part of it); its complaint, if any.
pub fn check_in_scratch(argv: &[&str], text: &str, sets: Option<&str>) -> Result<(), String> {
    let mut args = vec!["--net", "--"];
    // Private (mkdtemp), removed when dropped.
    let dir = match sets {
        Some(s) => {
            let dir = crate::host::state::temp_dir("sets").map_err(|e| e.to_string())?;
            std::fs::write(dir.path().join("sets"), s)
                .map_err(|e| format!("writing the ipsets to {}: {e}", dir.path().display()))?;
            Some(dir)
        }
        None => None,
    };
    let file = dir
        .as_ref()
        .map(|d| d.path().join("sets").display().to_string());
    if let Some(f) = &file {
        args.extend([
            "sh",
            "-c",
            "ipset restore -file \"$1\" && shift && exec \"$@\"",
            "sh",
            f.as_str(),
        ]);
    }
    args.extend_from_slice(argv);
    let ran = Cmd::new("unshare", &args)
        .input(text)
        .timeout(LOAD_TIMEOUT)
        .c_locale()
        .finish();
    drop(dir);
    let f = ran.map_err(|e| e.one_line())?;
    if f.success() {
        Ok(())
    } else {
        Err(f.stderr.trim().to_owned())
    }
}
