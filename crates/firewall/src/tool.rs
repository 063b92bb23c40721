//! The programs fwbench drives (`nft`, `iptables-*-restore`/`-save`, `ipset`): their
//! argv and Debian package, a batch of text for one of them, and running one.
//!
//! Owns: spawning a program, feeding its stdin, and turning a failure into a
//! [`ToolError`] that carries argv, exit status and stderr.
//! Must not: decide what to run (the engines do) or parse a program's output.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The iptables flavour: the legacy x_tables kernel API or the nf_tables one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flavour {
    Legacy,
    Nft,
}

/// Which tool applies a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// `nft -f -`
    Nft,
    /// `nft -j -f -`: a JSON batch (an imported ruleset, read back from nft itself).
    NftJson,
    /// `iptables-restore --noflush` / `ip6tables-restore --noflush`, legacy or nft
    IptablesRestore {
        v6: bool,
        /// Serialized as `backend` (crash markers written by older builds say so).
        #[serde(rename = "backend")]
        flavour: Flavour,
    },
    /// `ipset restore`
    IpsetRestore,
    /// fwbench's own BPF loader (the batch is the program's rule table and maps).
    Bpf,
}

impl Tool {
    /// argv of the batch command (stdin carries the batch text).
    pub fn argv(&self) -> Vec<&'static str> {
        match self {
            Tool::Nft => vec!["nft", "-f", "-"],
            Tool::NftJson => vec!["nft", "-j", "-f", "-"],
            Tool::IptablesRestore { v6, flavour } => {
                let prog = match (v6, flavour) {
                    (false, Flavour::Legacy) => "iptables-legacy-restore",
                    (true, Flavour::Legacy) => "ip6tables-legacy-restore",
                    (false, Flavour::Nft) => "iptables-nft-restore",
                    (true, Flavour::Nft) => "ip6tables-nft-restore",
                };
                vec![prog, "-w", "--noflush"]
            }
            Tool::IpsetRestore => vec!["ipset", "restore"],
            Tool::Bpf => vec!["fwbench-bpf-loader"],
        }
    }
    /// Debian package that provides the tool.
    pub fn package(&self) -> &'static str {
        match self {
            Tool::Nft | Tool::NftJson => "nftables",
            Tool::IptablesRestore { .. } => "iptables",
            Tool::IpsetRestore => "ipset",
            Tool::Bpf => "clang (at build time)",
        }
    }
}

/// One atomic batch: the text `tool` reads on stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub tool: Tool,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{tool} not found: install it with `apt-get install {package}`")]
    MissingTool { tool: String, package: String },
    #[error("`{argv}` rejected the rule set ({status}):\n{stderr}")]
    Rejected {
        argv: String,
        status: String,
        stderr: String,
    },
    #[error("{0}")]
    Io(String),
    /// The engine cannot run on this host or build (e.g. BPF programs not built).
    #[error("{0}")]
    Unavailable(String),
}

/// Find a program in PATH (plus the sbin directories root usually has).
pub fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| PathBuf::from(d).join(prog))
        .find(|p| p.is_file());
    found
}

/// An error unless `tool`'s program is installed.
pub fn check(tool: Tool) -> Result<(), ToolError> {
    let prog = tool.argv()[0];
    match which(prog) {
        Some(_) => Ok(()),
        None => Err(ToolError::MissingTool {
            tool: prog.into(),
            package: tool.package().into(),
        }),
    }
}

/// Run a program, optionally with `stdin`; its stdout on success.
pub fn run(argv: &[&str], stdin: Option<&str>) -> Result<String, ToolError> {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ToolError::MissingTool {
                tool: argv[0].into(),
                package: package_of(argv[0]).into(),
            },
            _ => ToolError::Io(format!("running {}: {e}", argv[0])),
        })?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        // A tool that dies early closes its stdin; its stderr then says why.
        let _ = w.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| ToolError::Io(format!("waiting for {}: {e}", argv[0])))?;
    if !out.status.success() {
        return Err(ToolError::Rejected {
            argv: shell_line(argv),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn package_of(prog: &str) -> &'static str {
    if prog.starts_with("nft") {
        "nftables"
    } else if prog.starts_with("ipset") {
        "ipset"
    } else {
        "iptables"
    }
}

/// Apply one batch (atomic: the tool applies all of it or nothing).
pub fn apply(b: &Batch) -> Result<(), ToolError> {
    run(&b.tool.argv(), Some(&b.text)).map(|_| ())
}

/// `argv` as a shell reads it back: words quoted where they need it (a word with a space
/// or a quote), for messages and dry runs. Words a shell takes as they are stay bare
/// (shlex would quote `198.18.1.1,udp:5001` for its comma).
pub fn shell_line<S: AsRef<str>>(argv: &[S]) -> String {
    let bare = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    };
    let words: Vec<String> = argv
        .iter()
        .map(|w| {
            let w = w.as_ref();
            if bare(w) {
                return w.to_owned();
            }
            match shlex::try_quote(w) {
                Ok(q) => q.into_owned(),
                // A NUL byte, which no shell word holds: escaped, never raw.
                Err(_) => w.escape_default().to_string(),
            }
        })
        .collect();
    words.join(" ")
}
