//! One change to an installed rule set, whatever the engine (a gateway event's
//! update, issue 25), and the commands an engine renders for it.
//!
//! Owns: [`Change`] (insert or delete rules at the head of one of fwbench's chains,
//! add or remove elements of one of its sets, replace the whole rule set) and
//! [`Step`] (one program call: argv, stdin, whether it echoes rule handles).
//! Must not: know any engine's syntax (the engines render steps) or run programs
//! (that is `update`).

use crate::model::{Hook, Rule, SetElem, L4};
use crate::rendered::Rendered;
use crate::tool::shell_line;
pub use proto::UpdateMethod;

/// One change to fwbench's installed rule set.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Insert `rules` into fwbench's chain of `hook`, in this order, behind its first
    /// `at` rules (0: at the head).
    Insert {
        hook: Hook,
        at: usize,
        rules: Vec<Rule>,
    },
    /// Delete rules an [`Change::Insert`] put into the chain of `hook`; `handles` are
    /// what the insert's steps echoed (nft), in the same order (empty otherwise).
    Delete {
        hook: Hook,
        rules: Vec<Rule>,
        handles: Vec<u64>,
    },
    /// Add elements (source address, destination port) to fwbench's set `set`; with
    /// `timeout_ms`, each expires that long after it is added (the set made with
    /// timeout support: `EngineOptions::set_timeouts`).
    AddElements {
        set: String,
        l4: L4,
        elements: Vec<SetElem>,
        timeout_ms: Option<u64>,
    },
    /// Remove elements from fwbench's set `set`.
    RemoveElements {
        set: String,
        l4: L4,
        elements: Vec<SetElem>,
    },
    /// Replace the whole installed rule set by this rendering (of the same engine).
    Replace(Box<Rendered>),
    /// Load fwbench's set `set` again: empty it and fill it with `elements`, its whole
    /// contents (the method says whether in one atomic step).
    ReloadSet {
        set: String,
        l4: L4,
        elements: Vec<SetElem>,
    },
}

impl Change {
    /// Rules or elements the change touches (a replacement: every rule it installs).
    pub fn size(&self) -> usize {
        match self {
            Change::Insert { rules, .. } | Change::Delete { rules, .. } => rules.len(),
            Change::AddElements { elements, .. }
            | Change::RemoveElements { elements, .. }
            | Change::ReloadSet { elements, .. } => elements.len(),
            Change::Replace(r) => r.expect_rules + r.expect_elements,
        }
    }

    /// What it is, for messages: "insert 3 rules".
    pub fn describe(&self) -> String {
        match self {
            Change::Insert { rules, .. } => format!("insert {} rules", rules.len()),
            Change::Delete { rules, .. } => format!("delete {} rules", rules.len()),
            Change::AddElements {
                elements,
                timeout_ms: None,
                ..
            } => format!("add {} set elements", elements.len()),
            Change::AddElements {
                elements,
                timeout_ms: Some(_),
                ..
            } => format!("add {} set elements that expire", elements.len()),
            Change::RemoveElements { elements, .. } => {
                format!("remove {} set elements", elements.len())
            }
            Change::Replace(_) => "replace the rule set".into(),
            Change::ReloadSet { elements, .. } => {
                format!("reload a set of {} elements", elements.len())
            }
        }
    }
}

/// One program call of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub argv: Vec<String>,
    /// Text fed on stdin (a batch), if any.
    pub stdin: Option<String>,
    /// The call echoes the handles of the rules it adds (`nft --echo --handle`), in
    /// order: the executor collects them for a later [`Change::Delete`].
    pub echoes_handles: bool,
    /// Exit status 1 is not a failure: the call found nothing to act on (`conntrack
    /// -D` with no entry left to delete).
    pub none_found_ok: bool,
}

impl Step {
    /// A call without stdin.
    pub fn call<S: AsRef<str>>(argv: &[S]) -> Step {
        Step {
            argv: argv.iter().map(|s| s.as_ref().to_owned()).collect(),
            stdin: None,
            echoes_handles: false,
            none_found_ok: false,
        }
    }

    /// A batch: `argv` reads `text` on stdin.
    pub fn batch<S: AsRef<str>>(argv: &[S], text: String) -> Step {
        Step {
            stdin: Some(text),
            ..Step::call(argv)
        }
    }

    /// The step as a shell line, for dry runs and messages.
    pub fn to_text(&self) -> String {
        match &self.stdin {
            Some(t) => format!("{} <<'EOF'\n{t}EOF", shell_line(&self.argv)),
            None => shell_line(&self.argv),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Step;

    /// A dry run's line reads back as the words it runs: a word with a space or a quote
    /// is quoted (joined by spaces, `comment "fwbench rule"` read back as two words).
    #[test]
    fn a_steps_text_reads_back_as_its_words() {
        let words = [
            "iptables",
            "-m",
            "comment",
            "--comment",
            "fwbench rule",
            "it's",
        ];
        let line = Step::call(&words).to_text();
        assert_eq!(shlex::split(&line).unwrap(), words, "{line}");
        let bare = Step::call(&["ipset", "add", "s", "198.18.1.1,udp:5001"]).to_text();
        assert_eq!(bare, "ipset add s 198.18.1.1,udp:5001");
        let nul = Step::call(&["printf", "a\0b"]).to_text();
        assert!(
            !nul.contains('\0') && nul.starts_with("printf a"),
            "{nul:?}"
        );
        let batch = Step::batch(&["nft", "-f", "-"], "add table ip t\n".into()).to_text();
        assert_eq!(batch, "nft -f - <<'EOF'\nadd table ip t\nEOF");
    }
}
