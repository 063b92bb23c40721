//! Import of a user's own ruleset file (`nft list ruleset` or `iptables-save`
//! output), rewritten into fwbench's own table and chains.
//!
//! Owns: detecting the file's kind, the limits every import file is held to, the
//! error type, and the front doors ([`import`], [`import_with_sets`],
//! [`import_ipset`], [`import_nft_listing`]); the work is in one module each:
//! `iptables` (an `iptables-save` file, section by section: declarations renamed
//! into fwbench's chains), `ipt_rule` (one `-A` rule: words, options, jump targets
//! and sets renamed, match fields for aiming), `names` (fwbench's names of chains
//! and sets, collision-free), `ipset` (an `ipset save` file renamed into
//! fwbench's sets), `nft` (what nft itself read back from a scratch namespace,
//! rewritten into fwbench's table), `nft_aim` (an nft rule's match fields for
//! aiming), `nft_checks` (what an nft file may not do: `include`, netlink messages
//! other than creating objects). The installed rules with their match fields are
//! [`Imported`], [`ImportedRule`] (defined in the `model` module).
//! Must not: run any program or touch firewall state (loading the file into a scratch
//! namespace is the caller's, rendering and installing the result the engines').

mod ipset;
mod ipt_rule;
mod iptables;
mod names;
mod nft;
mod nft_aim;
mod nft_checks;

pub use ipset::{import_ipset, IMPORTED_SET_PREFIX, MAX_SET_ELEMENTS};
pub(crate) use ipt_rule::words;
pub(crate) use names::builtins;
pub use nft::import_nft_listing;
pub(crate) use nft::rule_texts;
pub use nft_checks::{check_nft_text, refused_messages};

use crate::model::{ImportFormat, Imported, ImportedSets, Ip};

/// Why a ruleset file cannot be imported; the message names the file (and line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A problem at one line of the file.
    #[error("{file}:{line}: {why}")]
    Line {
        file: String,
        line: usize,
        why: String,
    },
    /// A problem with the file as a whole.
    #[error("{file}: {why}")]
    File { file: String, why: String },
}

fn file_error<T>(file: &str, why: String) -> Result<T, ImportError> {
    Err(ImportError::File {
        file: file.to_owned(),
        why,
    })
}

/// Largest file fwbench imports (bytes): 200 000 rules of `iptables-save` text are
/// 10–20 MB; a larger file is not a ruleset.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// Most chains an imported nft ruleset may have (loading is bounded too).
pub const MAX_CHAINS: usize = 10_000;

/// Most chains (built-in and user chains, all tables) an `iptables-save` file may
/// declare. A user chain is reached only by a jump, which is a rule, so a file
/// within [`MAX_RULES`] that declares more has chains nothing reaches; kube-proxy
/// writes one chain per service and per endpoint, tens of thousands on a large
/// cluster.
pub const MAX_IPTABLES_CHAINS: usize = MAX_RULES;

/// Most rules an imported ruleset may have.
pub const MAX_RULES: usize = 200_000;

/// Refuse a file larger than [`MAX_FILE_BYTES`].
fn check_size(source: &str, text: &str) -> Result<(), ImportError> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return file_error(
            source,
            format!(
                "{} bytes; fwbench imports files of at most {} MiB",
                text.len(),
                MAX_FILE_BYTES >> 20
            ),
        );
    }
    Ok(())
}

/// Why a line of a text file (`what`: whose output it should be) is refused for a
/// control character: iptables-restore reads a line up to a NUL and ignores the
/// rest, so the rule it installs would not be the file's (`-s 198.19.0.1\0…`); other
/// control bytes are never in such output either. Tabs and CR are fine.
fn control_char(raw_line: &str, what: &str) -> Option<String> {
    let (col, c) = raw_line
        .char_indices()
        .find(|&(_, c)| c.is_control() && c != '\t' && c != '\r')?;
    Some(format!(
        "control character U+{:04X} at byte {} of the line ({what} output is plain text)",
        u32::from(c),
        col + 1
    ))
}

/// Which kind of file this is: `iptables-save` output has `*table` lines (and
/// `COMMIT`, which the parser checks); `nft list ruleset` output has `table … {` blocks.
pub fn detect(text: &str) -> Option<ImportFormat> {
    let mut star = false;
    let mut nft = false;
    for line in text.lines().map(str::trim) {
        if line.len() > 1
            && line.starts_with('*')
            && line[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            star = true;
        } else if line.starts_with("table ") && line.ends_with('{') {
            nft = true;
        }
    }
    // A `*table` line is iptables-save; a missing COMMIT is then the parser's to report.
    if star {
        Some(ImportFormat::IptablesSave)
    } else if nft {
        Some(ImportFormat::Nft)
    } else {
        None
    }
}

/// Read a user's `iptables-save` file and rewrite it into fwbench's names, so
/// installing it touches nothing else and removing it removes exactly it. `source`
/// names the file in messages (`source:line: why`); `ip` is the trial's IP version.
/// An nft file is not read here: it is loaded into a scratch namespace by nft itself
/// and its read-back is rewritten by [`import_nft_listing`].
pub fn import(source: &str, text: &str, ip: Ip) -> Result<Imported, ImportError> {
    match detect(text) {
        Some(ImportFormat::IptablesSave) => iptables::import_iptables(source, text, ip, None),
        Some(ImportFormat::Nft) => file_error(
            source,
            "an nft ruleset is imported by loading it into a scratch namespace \
             (fwbench does that; this function reads iptables-save text only)"
                .into(),
        ),
        None => file_error(
            source,
            "neither `iptables-save` nor `nft list ruleset` output \
             (no `*table` … `COMMIT` section and no `table … {` block)"
                .into(),
        ),
    }
}

/// An `iptables-save` file with the ipsets its rules match (`ipset save` output, read
/// by [`import_ipset`]): every `--match-set`, `--add-set`, `--del-set` and
/// `--map-set` names fwbench's copy of the set; a set the ipset file does not create
/// is refused, naming the line.
pub fn import_with_sets(
    source: &str,
    text: &str,
    ip: Ip,
    sets: &ImportedSets,
) -> Result<Imported, ImportError> {
    match detect(text) {
        Some(ImportFormat::IptablesSave) => iptables::import_iptables(source, text, ip, Some(sets)),
        Some(ImportFormat::Nft) | None => file_error(
            source,
            format!(
                "an ipset file ({}) goes with an `iptables-save` file; an nft ruleset \
                 holds its own sets",
                sets.source
            ),
        ),
    }
}

/// The verdict of an imported rule whose verdict is a verdict map (nft's `vmap`):
/// the verdicts its elements give, each once, in the map's order (`vmap {drop,
/// accept, jump svc}`; `?`: one fwbench could not read). A packet the map has no
/// element for goes on to the next rule, so the rule's counter (before the lookup)
/// counts packets of every verdict of the map and of none.
pub(crate) fn map_verdict(verdicts: &[String]) -> String {
    format!("vmap {{{}}}", verdicts.join(", "))
}

/// The verdicts of an imported rule's verdict map ([`map_verdict`]); `None`: the
/// rule's verdict is no verdict map.
pub fn map_verdicts(verdict: &str) -> Option<Vec<&str>> {
    let inner = verdict.strip_prefix("vmap {")?.strip_suffix('}')?;
    Some(inner.split(", ").filter(|v| !v.is_empty()).collect())
}

/// A test fixture of this crate (`tests/fixtures/NAME`).
#[cfg(test)]
fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_the_format() {
        assert_eq!(
            detect(&fixture("iptables-save.txt")),
            Some(ImportFormat::IptablesSave)
        );
        assert_eq!(detect(&fixture("nft-ruleset.nft")), Some(ImportFormat::Nft));
        assert_eq!(detect("hello\n"), None);
        assert!(import("x.txt", "hello\n", Ip::V4)
            .unwrap_err()
            .to_string()
            .starts_with("x.txt: neither"));
    }

    #[test]
    fn files_over_the_size_limit_are_refused() {
        let mut t = String::from("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n");
        t.push_str(&"#".repeat(MAX_FILE_BYTES as usize));
        let want = format!(
            "f: {} bytes; fwbench imports files of at most 32 MiB",
            t.len()
        );
        assert_eq!(import("f", &t, Ip::V4).unwrap_err().to_string(), want);
        assert_eq!(check_nft_text("f", &t).unwrap_err().to_string(), want);
        assert!(import_ipset("f", &t, Ip::V4)
            .unwrap_err()
            .to_string()
            .starts_with("f: "));
    }
}
