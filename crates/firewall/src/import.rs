//! Import of a user's own ruleset file (`nft list ruleset` or `iptables-save`
//! output), rewritten into fwbench's own table and chains.
//!
//! Owns: detecting the file's kind, checking it line by line and renaming every table
//! and chain into fwbench's names ([`Imported`], defined in the `model` module).
//! Must not: run any program or touch firewall state; rendering and installing the
//! result is the engines' job.

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

use crate::model::{ImportFormat, Imported, Ip};
use std::fmt::Write as _;

/// iptables' longest chain name.
const MAX_CHAIN_NAME: usize = 28;

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

/// Read a user's ruleset file and rewrite it into fwbench's names, so installing it
/// touches nothing else and removing it removes exactly it. `source` names the file in
/// messages (`source:line: why`); `ip` is the trial's IP version.
pub fn import(source: &str, text: &str, ip: Ip) -> Result<Imported, ImportError> {
    match detect(text) {
        Some(ImportFormat::IptablesSave) => import_iptables(source, text, ip),
        Some(ImportFormat::Nft) => import_nft(source, text, ip),
        None => file_error(
            source,
            "neither `iptables-save` nor `nft list ruleset` output \
             (no `*table` … `COMMIT` section and no `table … {` block)"
                .into(),
        ),
    }
}

// ---------------------------------------------------------------------------
// iptables-save
// ---------------------------------------------------------------------------

/// A chain declared in the current `*table` section.
struct Decl {
    /// Name in the file.
    name: String,
    /// Name in fwbench's namespace.
    renamed: String,
    /// `Some(policy)` for a built-in chain (`ACCEPT` or `DROP`).
    policy: Option<String>,
    /// Has at least one rule.
    used: bool,
}

/// One `*table … COMMIT` section being read.
struct Section {
    table: String,
    line: usize,
    decls: Vec<Decl>,
    /// Rewritten `-A` lines, in file order.
    rules: Vec<String>,
}

/// fwbench's name of a chain: `FWBENCH-<CHAIN>` for the filter table's built-ins,
/// `FWBENCH-<TABLE>-<CHAIN>` for other tables' built-ins, `FWBENCH-U-<NAME>` for user
/// chains; cut to iptables' 28 characters.
fn ipt_name(table: &str, chain: &str, builtin: bool) -> String {
    let mut n = if !builtin {
        format!("FWBENCH-U-{chain}")
    } else if table == "filter" {
        format!("FWBENCH-{chain}")
    } else {
        format!("FWBENCH-{}-{chain}", table.to_ascii_uppercase())
    };
    if n.len() > MAX_CHAIN_NAME {
        let mut cut = MAX_CHAIN_NAME;
        while !n.is_char_boundary(cut) {
            cut -= 1;
        }
        n.truncate(cut);
    }
    n
}

/// Split a rule into words, honouring double quotes; each word with its byte range.
fn words(s: &str) -> Result<Vec<(usize, usize)>, &'static str> {
    let mut out = vec![];
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let mut quoted = false;
        while i < b.len() && (quoted || !b[i].is_ascii_whitespace()) {
            match b[i] {
                b'\\' if quoted => i += 1,
                b'"' => quoted = !quoted,
                _ => {}
            }
            i += 1;
        }
        if quoted {
            return Err("unterminated quote");
        }
        out.push((start, i.min(b.len())));
    }
    Ok(out)
}

fn import_iptables(source: &str, text: &str, ip: Ip) -> Result<Imported, ImportError> {
    const TABLES: [&str; 5] = ["raw", "mangle", "nat", "filter", "security"];
    let mut out = String::with_capacity(text.len() + 1024);
    let mut rules = 0;
    let mut seen_tables: Vec<String> = vec![];
    let mut sec: Option<Section> = None;
    for (n, raw_line) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |why: String| {
            Err(ImportError::Line {
                file: source.to_owned(),
                line: line_no,
                why,
            })
        };
        let line = raw_line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(s) = sec.as_mut() else {
            let Some(table) = line.strip_prefix('*') else {
                return err(format!("expected `*table` before `{line}`"));
            };
            if !TABLES.contains(&table) {
                return err(format!(
                    "unknown table `{table}` (expected one of: {})",
                    TABLES.join(", ")
                ));
            }
            if seen_tables.iter().any(|t| t == table) {
                return err(format!("table `{table}` appears twice"));
            }
            seen_tables.push(table.to_owned());
            sec = Some(Section {
                table: table.to_owned(),
                line: line_no,
                decls: vec![],
                rules: vec![],
            });
            continue;
        };
        if line == "COMMIT" {
            // INVARIANT: sec is Some in this branch.
            let s = sec.take().expect("inside a section");
            rules += emit_section(&mut out, s);
            continue;
        }
        if let Some(decl) = line.strip_prefix(':') {
            // `:NAME POLICY [packets:bytes]`; POLICY is `-` for user chains.
            let parts: Vec<&str> = decl.split_whitespace().collect();
            let (name, policy) = match parts[..] {
                [name, policy] | [name, policy, _] => (name, policy),
                _ => return err(format!("chain declaration `{line}` not understood")),
            };
            let policy = match policy {
                "-" => None,
                "ACCEPT" | "DROP" => Some(policy.to_owned()),
                other => {
                    return err(format!(
                        "chain {name}: policy {other} not supported (ACCEPT or DROP)"
                    ))
                }
            };
            if s.decls.iter().any(|d| d.name == name) {
                return err(format!("chain {name} declared twice"));
            }
            let renamed = ipt_name(&s.table, name, policy.is_some());
            if let Some(d) = s.decls.iter().find(|d| d.renamed == renamed) {
                return err(format!(
                    "chains {} and {name} have the same name once cut to {MAX_CHAIN_NAME} characters ({renamed})",
                    d.name
                ));
            }
            s.decls.push(Decl {
                name: name.to_owned(),
                renamed,
                policy,
                used: false,
            });
            continue;
        }
        // `[packets:bytes] -A CHAIN …` (iptables-save -c) or `-A CHAIN …`.
        let rule = match line.strip_prefix('[') {
            Some(rest) => match rest.split_once(']') {
                Some((_, r)) => r.trim_start(),
                None => return err("counter `[packets:bytes]` not closed".into()),
            },
            None => line,
        };
        let Some(rest) = rule.strip_prefix("-A ") else {
            return err(format!(
                "`{line}` not understood (iptables-save output has only `:CHAIN` declarations, \
                 `-A` rules and COMMIT)"
            ));
        };
        let ws = match words(rest) {
            Ok(ws) if !ws.is_empty() => ws,
            Ok(_) => return err("`-A` without a chain".into()),
            Err(why) => return err(why.into()),
        };
        let chain = &rest[ws[0].0..ws[0].1];
        let Some(d) = s.decls.iter_mut().find(|d| d.name == chain) else {
            return err(format!(
                "chain {chain} is not declared in table {}",
                s.table
            ));
        };
        d.used = true;
        let mut new = format!("-A {}", d.renamed);
        let mut last = ws[0].1;
        let mut prev = "";
        for &(a, b) in &ws[1..] {
            let w = &rest[a..b];
            let replaced = match prev {
                "-j" | "--jump" | "-g" | "--goto" => s
                    .decls
                    .iter()
                    .find(|d| d.name == w)
                    .map(|d| d.renamed.as_str()),
                _ => None,
            };
            if let Some(r) = replaced {
                new.push_str(&rest[last..a]);
                new.push_str(r);
                last = b;
            }
            if matches!(prev, "-s" | "--source" | "-d" | "--destination") {
                // An IPv6 address always has a colon, an IPv4 one never.
                let v6 = w.contains(':');
                if v6 != (ip == Ip::V6) {
                    return err(format!(
                        "address {w} is IPv{} but the trial is IPv{}",
                        if v6 { 6 } else { 4 },
                        if ip == Ip::V6 { 6 } else { 4 }
                    ));
                }
            }
            prev = w;
        }
        new.push_str(&rest[last..]);
        s.rules.push(new);
    }
    if let Some(s) = sec {
        return Err(ImportError::Line {
            file: source.to_owned(),
            line: s.line,
            why: format!("table *{} has no COMMIT", s.table),
        });
    }
    if seen_tables.is_empty() {
        return file_error(source, "no `*table` section".into());
    }
    Ok(Imported {
        format: ImportFormat::IptablesSave,
        source: source.to_owned(),
        text: out,
        rules,
        elements: 0,
    })
}

/// Write one rewritten section; returns its number of rules. Built-in chains without
/// rules and with policy ACCEPT are left out (they would only cost a jump).
fn emit_section(out: &mut String, s: Section) -> usize {
    let keep = |d: &&Decl| d.policy.is_none() || d.used || d.policy.as_deref() == Some("DROP");
    let decls: Vec<&Decl> = s.decls.iter().filter(keep).collect();
    if decls.is_empty() {
        return 0;
    }
    let _ = writeln!(out, "*{}", s.table);
    for d in &decls {
        let _ = writeln!(out, ":{} - [0:0]", d.renamed);
    }
    let mut n = 0;
    for r in &s.rules {
        let _ = writeln!(out, "{r}");
        n += 1;
    }
    // A DROP policy becomes a final counted drop rule; built-in policies never change.
    for d in decls.iter().filter(|d| d.policy.as_deref() == Some("DROP")) {
        let _ = writeln!(out, "-A {} -j DROP", d.renamed);
        n += 1;
    }
    for d in decls.iter().filter(|d| d.policy.is_some()) {
        let _ = writeln!(out, "-I {} 1 -j {}", d.name, d.renamed);
    }
    out.push_str("COMMIT\n");
    n
}

// ---------------------------------------------------------------------------
// nft list ruleset
// ---------------------------------------------------------------------------

/// Kinds of `{ … }` blocks of an nft ruleset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Table,
    Chain,
    Set,
    /// Maps, flowtables, named objects.
    Other,
    /// Braces inside a rule or declaration (anonymous sets, multi-line lists).
    Inner,
    /// `elements = { …` of a set, possibly over several lines.
    Elements,
}

/// A line without its `#` comment, ignoring `#` inside double quotes.
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Braces of a line outside double quotes: (opened, closed), and the byte offset just
/// after the first `{`.
fn braces(line: &str) -> (usize, usize, Option<usize>) {
    let (mut open, mut close, mut first) = (0, 0, None);
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' if !quoted => {
                open += 1;
                first.get_or_insert(i + 1);
            }
            '}' if !quoted => close += 1,
            _ => {}
        }
    }
    (open, close, first)
}

/// Items of a comma-separated element list (text between the braces).
fn count_items(list: &str) -> usize {
    list.split(',')
        .filter(|item| !item.trim().is_empty())
        .count()
}

fn import_nft(source: &str, text: &str, ip: Ip) -> Result<Imported, ImportError> {
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str("add table inet fwbench\ndelete table inet fwbench\n");
    let mut stack: Vec<Block> = vec![];
    let mut tables = 0;
    let mut rules = 0;
    let mut elements = 0;
    // Text of a multi-line `elements = { …` list so far.
    let mut list = String::new();
    for (n, raw_line) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |why: String| {
            Err(ImportError::Line {
                file: source.to_owned(),
                line: line_no,
                why,
            })
        };
        let line = strip_comment(raw_line).trim();
        let first_word = line.split_whitespace().next().unwrap_or("");
        // An include could bring in anything; list output never has one. (At the top
        // level only `table` blocks are accepted, so no command such as `flush
        // ruleset` can reach outside fwbench's table.)
        if first_word == "include" && stack.last() != Some(&Block::Elements) {
            return err(format!(
                "`{first_word}` not supported (fwbench imports `nft list ruleset` output)"
            ));
        }
        let (open, close, first_open) = braces(line);
        match stack.last().copied() {
            None => {
                if line.is_empty() {
                    out.push_str(raw_line);
                    out.push('\n');
                    continue;
                }
                // `table [FAMILY] NAME {`
                let ws: Vec<&str> = line.split_whitespace().collect();
                let family = match ws[..] {
                    ["table", _, "{"] => "ip",
                    ["table", family, _, "{"] => family,
                    _ => {
                        return err(format!(
                        "`{line}` not understood (expected `table FAMILY NAME {{` on its own line)"
                    ))
                    }
                };
                tables += 1;
                if tables > 1 {
                    let total = text
                        .lines()
                        .filter(|l| strip_comment(l).trim_start().starts_with("table "))
                        .count();
                    return err(format!("fwbench imports one table; this file has {total}"));
                }
                match (family, ip) {
                    ("inet", _) | ("ip", Ip::V4) | ("ip6", Ip::V6) => {}
                    ("ip", Ip::V6) | ("ip6", Ip::V4) => {
                        return err(format!(
                            "table {family} filters IPv{} only, but the trial is IPv{}",
                            if family == "ip" { 4 } else { 6 },
                            if ip == Ip::V4 { 4 } else { 6 }
                        ))
                    }
                    _ => {
                        return err(format!(
                            "table family {family} cannot be imported (ip, ip6 or inet)"
                        ))
                    }
                }
                let indent = &raw_line[..raw_line.len() - raw_line.trim_start().len()];
                let _ = writeln!(out, "{indent}table inet fwbench {{");
                stack.push(Block::Table);
                continue;
            }
            Some(Block::Elements) => {
                // Until the closing brace of the list.
                match line.find('}') {
                    Some(end) => {
                        list.push_str(&line[..end]);
                        elements += count_items(&list);
                        list.clear();
                        stack.pop();
                        // Whatever follows the list on this line (e.g. the set's `}`).
                        for _ in 0..braces(&line[end + 1..]).1 {
                            stack.pop();
                        }
                    }
                    None => {
                        list.push_str(line);
                        list.push(',');
                    }
                }
            }
            Some(Block::Table) => {
                if open > close {
                    stack.push(match first_word {
                        "chain" => Block::Chain,
                        "set" => Block::Set,
                        _ => Block::Other,
                    });
                } else if close > open {
                    stack.pop();
                }
            }
            Some(Block::Chain) => {
                let declaration = line.is_empty()
                    || line == "}"
                    || matches!(first_word, "type" | "policy" | "comment" | "devices");
                if !declaration {
                    rules += 1;
                }
                for _ in close..open {
                    stack.push(Block::Inner);
                }
                for _ in open..close {
                    stack.pop();
                }
            }
            Some(Block::Set) => {
                if let (Some(rest), Some(at)) = (line.strip_prefix("elements"), first_open) {
                    if rest.trim_start().starts_with('=') {
                        let after = &line[at..];
                        match after.find('}') {
                            // On one line: the generic brace count below balances.
                            Some(end) => elements += count_items(&after[..end]),
                            None => {
                                list.push_str(after);
                                list.push(',');
                                stack.push(Block::Elements);
                                out.push_str(raw_line);
                                out.push('\n');
                                continue;
                            }
                        }
                    }
                }
                for _ in close..open {
                    stack.push(Block::Inner);
                }
                for _ in open..close {
                    stack.pop();
                }
            }
            Some(Block::Other | Block::Inner) => {
                for _ in close..open {
                    stack.push(Block::Inner);
                }
                for _ in open..close {
                    stack.pop();
                }
            }
        }
        out.push_str(raw_line);
        out.push('\n');
    }
    if !stack.is_empty() {
        return file_error(source, "ends inside a block (a `}` is missing)".into());
    }
    if tables == 0 {
        return file_error(source, "no `table … {` block".into());
    }
    Ok(Imported {
        format: ImportFormat::Nft,
        source: source.to_owned(),
        text: out,
        rules,
        elements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

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
    fn iptables_save_is_rewritten_into_fwbench_chains() {
        let imp = import("rules.v4", &fixture("iptables-save.txt"), Ip::V4).unwrap();
        assert_eq!(imp.format, ImportFormat::IptablesSave);
        assert_eq!(imp.source, "rules.v4");
        assert_eq!((imp.rules, imp.elements), (11, 0));
        let want = "\
*raw
:FWBENCH-RAW-PREROUTING - [0:0]
-A FWBENCH-RAW-PREROUTING -s 203.0.113.0/24 -p udp -m udp --dport 5353 -j CT --notrack
-I PREROUTING 1 -j FWBENCH-RAW-PREROUTING
COMMIT
*filter
:FWBENCH-INPUT - [0:0]
:FWBENCH-FORWARD - [0:0]
:FWBENCH-U-SSH-IN - [0:0]
:FWBENCH-U-LOG-AND-DROP-DOCNE - [0:0]
-A FWBENCH-INPUT -p tcp -m tcp --dport 22 -j FWBENCH-U-SSH-IN
-A FWBENCH-INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FWBENCH-FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FWBENCH-FORWARD -s 198.18.0.0/15 -d 198.19.0.0/16 -p udp -j ACCEPT
-A FWBENCH-FORWARD -s 192.0.2.0/24 -m comment --comment \"doc net, not -j SSH-IN\" -g FWBENCH-U-LOG-AND-DROP-DOCNE
-A FWBENCH-U-SSH-IN -s 198.51.100.0/24 -j ACCEPT
-A FWBENCH-U-SSH-IN -j DROP
-A FWBENCH-U-LOG-AND-DROP-DOCNE -j LOG --log-prefix \"fw drop: \"
-A FWBENCH-U-LOG-AND-DROP-DOCNE -j DROP
-A FWBENCH-FORWARD -j DROP
-I INPUT 1 -j FWBENCH-INPUT
-I FORWARD 1 -j FWBENCH-FORWARD
COMMIT
";
        assert_eq!(imp.text, want);
        // Every chain it creates is fwbench's, at most 28 characters long.
        for line in imp.text.lines().filter(|l| l.starts_with(':')) {
            let name = line[1..].split_whitespace().next().unwrap();
            assert!(
                name.starts_with("FWBENCH-") && name.len() <= MAX_CHAIN_NAME,
                "{name}"
            );
        }
    }

    #[test]
    fn iptables_save_errors_name_file_and_line() {
        let e = |text: &str, ip| import("f", text, ip).unwrap_err().to_string();
        assert_eq!(
            e(
                "*filter\n:INPUT ACCEPT [0:0]\n-I INPUT -j DROP\nCOMMIT\n",
                Ip::V4
            ),
            "f:3: `-I INPUT -j DROP` not understood (iptables-save output has only `:CHAIN` \
             declarations, `-A` rules and COMMIT)"
        );
        assert_eq!(
            e(
                "*filter\n:INPUT ACCEPT [0:0]\n-A OTHER -j DROP\nCOMMIT\n",
                Ip::V4
            ),
            "f:3: chain OTHER is not declared in table filter"
        );
        assert_eq!(
            e(
                "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s 2001:db8::1/128 -j DROP\nCOMMIT\n",
                Ip::V4
            ),
            "f:3: address 2001:db8::1/128 is IPv6 but the trial is IPv4"
        );
        assert_eq!(
            e("# x\n*filter\n:INPUT ACCEPT [0:0]\n", Ip::V4),
            "f:2: table *filter has no COMMIT"
        );
        assert_eq!(
            e("*broute\nCOMMIT\n", Ip::V4),
            "f:1: unknown table `broute` (expected one of: raw, mangle, nat, filter, security)"
        );
        assert!(e("*filter\n:INPUT QUEUE [0:0]\nCOMMIT\n", Ip::V4)
            .starts_with("f:2: chain INPUT: policy QUEUE"));
        let long = "*filter\n:ABCDEFGHIJKLMNOPQRSTUVWXY1 - [0:0]\n:ABCDEFGHIJKLMNOPQRSTUVWXY2 - [0:0]\nCOMMIT\n";
        assert!(e(long, Ip::V4).starts_with("f:3: chains ABCDEFGHIJKLMNOPQRSTUVWXY1 and"));
    }

    #[test]
    fn ip6tables_save_with_a_drop_policy_only() {
        let text = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n\
                    -A INPUT -s 2001:db8::/32 -j DROP\nCOMMIT\n";
        let imp = import("f", text, Ip::V6).unwrap();
        assert_eq!(imp.rules, 2);
        assert_eq!(
            imp.text,
            "*filter\n:FWBENCH-INPUT - [0:0]\n:FWBENCH-FORWARD - [0:0]\n\
             -A FWBENCH-INPUT -s 2001:db8::/32 -j DROP\n-A FWBENCH-FORWARD -j DROP\n\
             -I INPUT 1 -j FWBENCH-INPUT\n-I FORWARD 1 -j FWBENCH-FORWARD\nCOMMIT\n"
        );
    }

    #[test]
    fn nft_ruleset_is_rewritten_into_fwbench_table() {
        let src = fixture("nft-ruleset.nft");
        let imp = import("ruleset.nft", &src, Ip::V4).unwrap();
        assert_eq!(imp.format, ImportFormat::Nft);
        assert_eq!((imp.rules, imp.elements), (10, 6));
        let want = format!(
            "add table inet fwbench\ndelete table inet fwbench\n{}",
            src.replacen("table inet filter {", "table inet fwbench {", 1)
        );
        assert_eq!(imp.text, want);
        // Family ip becomes inet, for an IPv4 trial.
        let v4 = "table ip filter {\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tip saddr 192.0.2.1 drop\n\t}\n}\n";
        let imp = import("f", v4, Ip::V4).unwrap();
        assert!(imp.text.contains("\ntable inet fwbench {\n"));
        assert_eq!((imp.rules, imp.elements), (1, 0));
        assert_eq!(
            import("f", v4, Ip::V6).unwrap_err().to_string(),
            "f:1: table ip filters IPv4 only, but the trial is IPv6"
        );
    }

    #[test]
    fn nft_counts_multi_line_blocks() {
        let text = "table inet t {\n  set s {\n    type ipv4_addr . inet_service\n    \
                    elements = {\n      192.0.2.1 . 1, 192.0.2.2 . 1,\n      192.0.2.3 . 1\n    }\n  }\n  \
                    map m {\n    type ipv4_addr : verdict\n    elements = { 192.0.2.9 : drop }\n  }\n  \
                    chain c {\n    tcp dport {\n      22,\n      80 } accept\n    counter\n  }\n}\n";
        let imp = import("f", text, Ip::V4).unwrap();
        // Map elements are not set elements (the installer counts sets only).
        assert_eq!((imp.rules, imp.elements), (2, 3));
    }

    #[test]
    fn nft_errors_name_file_and_line() {
        let e = |text: &str| import("f", text, Ip::V4).unwrap_err().to_string();
        let two = "table inet a {\n}\ntable ip b {\n}\n";
        assert_eq!(e(two), "f:3: fwbench imports one table; this file has 2");
        assert_eq!(
            e("flush ruleset\ntable inet a {\n}\n"),
            "f:1: `flush ruleset` not understood (expected `table FAMILY NAME {` on its own line)"
        );
        assert_eq!(
            e("table bridge a {\n}\n"),
            "f:1: table family bridge cannot be imported (ip, ip6 or inet)"
        );
        assert_eq!(
            e("table inet a {\n  include \"/etc/x\"\n}\n"),
            "f:2: `include` not supported (fwbench imports `nft list ruleset` output)"
        );
        assert_eq!(
            e("table inet a {\n  chain c {\n"),
            "f: ends inside a block (a `}` is missing)"
        );
    }
}
