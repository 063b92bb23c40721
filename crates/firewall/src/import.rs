//! Import of a user's own ruleset file (`nft list ruleset` or `iptables-save`
//! output), rewritten into fwbench's own table and chains.
//!
//! Owns: detecting the file's kind; for `iptables-save` text, checking it line by line
//! and renaming every chain into fwbench's names (collision-free, with a table of
//! both names); for nft, rewriting what nft itself read back (`nft -j list ruleset`
//! of a scratch namespace the file was loaded into) into fwbench's table, with a
//! counter on every rule; the list of installed rules with their match fields
//! ([`Imported`], [`ImportedRule`], defined in the `model` module).
//! Must not: run any program or touch firewall state (loading the file into a scratch
//! namespace is the caller's, rendering and installing the result the engines').

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

use crate::model::{AimFields, ImportFormat, Imported, ImportedRule, ImportedSets, Ip};
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

/// Read a user's `iptables-save` file and rewrite it into fwbench's names, so
/// installing it touches nothing else and removing it removes exactly it. `source`
/// names the file in messages (`source:line: why`); `ip` is the trial's IP version.
/// An nft file is not read here: it is loaded into a scratch namespace by nft itself
/// and its read-back is rewritten by [`import_nft_listing`].
pub fn import(source: &str, text: &str, ip: Ip) -> Result<Imported, ImportError> {
    match detect(text) {
        Some(ImportFormat::IptablesSave) => import_iptables(source, text, ip, None),
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
    /// Index into `decls` by the chain's name in the file (a linear search per rule
    /// made 200 000 rules take minutes).
    by_name: std::collections::HashMap<String, usize>,
    /// Rules so far per chain (same order as `decls`): the next rule's position.
    counts: Vec<usize>,
    /// Rewritten `-A` lines, in file order, each with what is known of the rule.
    rules: Vec<(String, ImportedRule)>,
}

/// The user's name of a chain in messages and `--aim CHAIN:N`: bare in table filter,
/// `table/CHAIN` in the others.
fn user_chain(table: &str, chain: &str) -> String {
    if table == "filter" {
        chain.to_owned()
    } else {
        format!("{table}/{chain}")
    }
}

/// Built-in chains of each iptables table (only these are hooked; the only ones with a
/// policy).
pub(crate) fn builtins(table: &str) -> &'static [&'static str] {
    match table {
        "filter" | "security" => &["INPUT", "FORWARD", "OUTPUT"],
        "nat" => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
        "mangle" => &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"],
        "raw" => &["PREROUTING", "OUTPUT"],
        _ => &[],
    }
}

/// FNV-1a, 32 bits: a stable short hash for chain names (no dependency needed for it).
fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// fwbench's name of a chain: `FWBENCH-<CHAIN>` for the filter table's built-ins,
/// `FWBENCH-<TABLE>-<CHAIN>` for other tables' built-ins, `FWBENCH-U-<NAME>` for user
/// chains. A name longer than iptables' 28 characters is cut and ends in `~` and six
/// hex digits of a hash of the whole name; `taken` says whether a name is in use
/// (then the hash is salted until it is free), so two chains never share a name.
fn ipt_name(table: &str, chain: &str, builtin: bool, taken: impl Fn(&str) -> bool) -> String {
    let n = if !builtin {
        format!("FWBENCH-U-{chain}")
    } else if table == "filter" {
        format!("FWBENCH-{chain}")
    } else {
        format!("FWBENCH-{}-{chain}", table.to_ascii_uppercase())
    };
    fit_name(n, chain, MAX_CHAIN_NAME, taken)
}

/// `n` if it fits `max` bytes and is free; else cut to end in `~` and six hex digits
/// of a hash of `key` (salted until the name is free), so two names never collide.
fn fit_name(n: String, key: &str, max: usize, taken: impl Fn(&str) -> bool) -> String {
    if n.len() <= max && !taken(&n) {
        return n;
    }
    let mut cut = (max - 7).min(n.len());
    while !n.is_char_boundary(cut) {
        cut -= 1;
    }
    (0u32..)
        .map(|salt| {
            let key = if salt == 0 {
                key.to_owned()
            } else {
                format!("{key}#{salt}")
            };
            format!("{}~{:06x}", &n[..cut], fnv1a(&key) & 0xff_ffff)
        })
        .find(|c| !taken(c))
        // INVARIANT: fewer names are taken than there are salts.
        .expect("a free name")
}

/// Split a rule into words, honouring double quotes; each word with its byte range.
pub(crate) fn words(s: &str) -> Result<Vec<(usize, usize)>, &'static str> {
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
        Some(ImportFormat::IptablesSave) => import_iptables(source, text, ip, Some(sets)),
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

fn import_iptables(
    source: &str,
    text: &str,
    ip: Ip,
    sets: Option<&ImportedSets>,
) -> Result<Imported, ImportError> {
    const TABLES: [&str; 5] = ["raw", "mangle", "nat", "filter", "security"];
    let mut out = String::with_capacity(text.len() + 1024);
    let mut rules = 0;
    let mut rule_list: Vec<ImportedRule> = vec![];
    let mut chains: Vec<(String, String)> = vec![];
    let mut seen_tables: Vec<String> = vec![];
    let mut sec: Option<Section> = None;
    let mut rules_seen = 0;
    check_size(source, text)?;
    for (n, raw_line) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |why: String| {
            Err(ImportError::Line {
                file: source.to_owned(),
                line: line_no,
                why,
            })
        };
        // iptables-restore reads a line up to a NUL and ignores the rest: the rule it
        // installs would not be the file's (`-s 198.19.0.1\0…`). Other control bytes
        // are never in iptables-save output either.
        if let Some((col, c)) = raw_line
            .char_indices()
            .find(|&(_, c)| c.is_control() && c != '\t' && c != '\r')
        {
            return err(format!(
                "control character U+{:04X} at byte {} of the line (iptables-save \
                 output is plain text)",
                u32::from(c),
                col + 1
            ));
        }
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
                by_name: std::collections::HashMap::new(),
                counts: vec![],
                rules: vec![],
            });
            continue;
        };
        if line == "COMMIT" {
            // INVARIANT: sec is Some in this branch.
            let s = sec.take().expect("inside a section");
            rules += emit_section(&mut out, s, &mut rule_list, &mut chains);
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
            if s.by_name.contains_key(name) {
                return err(format!("chain {name} declared twice"));
            }
            let builtin = builtins(&s.table).contains(&name);
            match (&policy, builtin) {
                (Some(p), false) => {
                    return err(format!(
                        "chain {name} has policy {p} but is not a built-in chain of table {} \
                         (those are {}); a user chain is declared with `-`",
                        s.table,
                        builtins(&s.table).join(", ")
                    ))
                }
                (None, true) => {
                    return err(format!(
                        "built-in chain {name} of table {} is declared without a policy",
                        s.table
                    ))
                }
                _ => {}
            }
            let renamed = ipt_name(&s.table, name, builtin, |n| {
                s.decls.iter().any(|d| d.renamed == n)
            });
            s.by_name.insert(name.to_owned(), s.decls.len());
            s.decls.push(Decl {
                name: name.to_owned(),
                renamed,
                policy,
                used: false,
            });
            s.counts.push(0);
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
        let Some(&at) = s.by_name.get(chain) else {
            return err(format!(
                "chain {chain} is not declared in table {}",
                s.table
            ));
        };
        rules_seen += 1;
        if rules_seen > MAX_RULES {
            return err(format!(
                "more than {MAX_RULES} rules; fwbench imports at most {MAX_RULES}"
            ));
        }
        s.counts[at] += 1;
        let d = &mut s.decls[at];
        d.used = true;
        let mut rule = ImportedRule {
            chain: d.renamed.clone(),
            user_chain: user_chain(&s.table, chain),
            index: s.counts[at],
            text: line.to_owned(),
            verdict: String::new(),
            policy: false,
            aim: AimFields::default(),
        };
        let mut new = format!("-A {}", d.renamed);
        let mut last = ws[0].1;
        let mut pending: Option<&str> = None;
        let mut negated = false;
        for &(a, b) in &ws[1..] {
            let w = &rest[a..b];
            if w == "!" {
                negated = true;
                continue;
            }
            // (option, value, where the value starts): `--opt=value` is one word to
            // iptables' getopt; a word starting with `-` after an option without a
            // value is the next option.
            let (opt, value, value_at) = match (pending.take(), w.split_once('=')) {
                (Some(opt), _) if !(w.starts_with('-') && w.len() > 1) => (opt, w, a),
                (_, Some((o, v))) if o.starts_with("--") => (o, v, a + o.len() + 1),
                _ => {
                    if w.starts_with('-') && w.len() > 1 {
                        pending = Some(w);
                    }
                    continue;
                }
            };
            match ipt_option(opt) {
                Opt::Jump => {
                    rule.verdict = match s.by_name.get(value).map(|&i| &s.decls[i]) {
                        Some(target) => {
                            new.push_str(&rest[last..value_at]);
                            new.push_str(&target.renamed);
                            last = b;
                            format!("jump {value}")
                        }
                        None => value.to_ascii_lowercase(),
                    };
                }
                Opt::Addr(dst) => {
                    for one in value.split(',') {
                        // An IPv6 address always has a colon, an IPv4 one never.
                        let v6 = one.contains(':');
                        if v6 != (ip == Ip::V6) {
                            return err(format!(
                                "address {one} is IPv{} but the trial is IPv{}",
                                if v6 { 6 } else { 4 },
                                if ip == Ip::V6 { 6 } else { 4 }
                            ));
                        }
                    }
                    let first = value.split(',').next().unwrap_or(value).to_owned();
                    aim_field(&mut rule.aim, negated, opt, |a| {
                        if dst {
                            a.dst = Some(first)
                        } else {
                            a.src = Some(first)
                        }
                    });
                }
                Opt::Proto => aim_field(&mut rule.aim, negated, opt, |a| {
                    a.l4 = Some(value.to_ascii_lowercase())
                }),
                Opt::Port(dst) => {
                    let range = ipt_ports(value);
                    aim_field(&mut rule.aim, negated, opt, |a| match range {
                        Some(r) if dst => a.dport = Some(r),
                        Some(r) => a.sport = Some(r),
                        None => a.unaimable = Some(format!("port {value} not understood")),
                    });
                }
                Opt::Set => {
                    // Without an ipset file the name stays (the rule matches a set of
                    // the host, which the engine's own check then looks for).
                    if let Some(sets) = sets {
                        let Some((_, ours)) = sets.names.iter().find(|(n, _)| n == value) else {
                            return err(format!(
                                "{opt} {value}: {} creates no set {value}",
                                sets.source
                            ));
                        };
                        new.push_str(&rest[last..value_at]);
                        new.push_str(ours);
                        last = value_at + value.len();
                    }
                }
                Opt::Other => {}
            }
            negated = false;
        }
        new.push_str(&rest[last..]);
        s.rules.push((new, rule));
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
    let mut notes = vec![];
    if rule_list.iter().any(|r| r.policy) {
        notes.push("a DROP policy is a last counted `-j DROP` rule in fwbench's chain".into());
    }
    let elements = sets.map_or(0, |s| {
        s.text.lines().filter(|l| l.starts_with("add ")).count()
    });
    if let Some(s) = sets {
        notes.push(format!(
            "the ipsets of {} are created as fwbench's own ({}) before the rules and \
             destroyed after them",
            s.source,
            s.names
                .iter()
                .map(|(n, o)| format!("{n} → {o}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Imported {
        format: ImportFormat::IptablesSave,
        source: source.to_owned(),
        text: out,
        rules,
        elements,
        rule_list,
        chains,
        notes,
        sets: sets.cloned(),
    })
}

/// Prefix of the ipsets an import creates (within fwbench's `fwbench-`).
pub const IMPORTED_SET_PREFIX: &str = "fwbench-i-";

/// Longest ipset name (`IPSET_MAXNAMELEN` less its NUL).
const MAX_SET_NAME: usize = 31;

/// Most elements an ipset file may add.
pub const MAX_SET_ELEMENTS: usize = 2_000_000;

/// Read an ipset file (`ipset save` output) for an `iptables-save` import: only
/// `create` and `add` lines (and comments); each set renamed `fwbench-i-NAME` (cut
/// and hashed when longer than 31 characters), created with `-exist` and flushed
/// first, so a leftover of a crashed run is reused and a set that is not fwbench's is
/// never touched. A set of the other IP version, an `add` to a set the file does not
/// create, or any other command is refused, naming the line.
pub fn import_ipset(source: &str, text: &str, ip: Ip) -> Result<ImportedSets, ImportError> {
    check_size(source, text)?;
    let mut names: Vec<(String, String)> = vec![];
    let mut list_sets: Vec<String> = vec![];
    let mut out = String::with_capacity(text.len() + 1024);
    let mut elements = 0usize;
    for (n, raw) in text.lines().enumerate() {
        let err = |why: String| {
            Err(ImportError::Line {
                file: source.to_owned(),
                line: n + 1,
                why,
            })
        };
        if let Some((col, c)) = raw
            .char_indices()
            .find(|&(_, c)| c.is_control() && c != '\t' && c != '\r')
        {
            return err(format!(
                "control character U+{:04X} at byte {} of the line (ipset save output is \
                 plain text)",
                u32::from(c),
                col + 1
            ));
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut w = line.split_whitespace();
        let (cmd, name) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
        // The rest of the line after the name, verbatim.
        let after = line
            .find(name)
            .map_or("", |at| line[at + name.len()..].trim_start());
        let ours = |name: &str| {
            names
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, o)| o.clone())
        };
        match cmd {
            "create" => {
                if name.is_empty()
                    || name.len() > MAX_SET_NAME
                    || name.starts_with('-')
                    || name.contains('"')
                {
                    return err(format!("set name `{name}` not understood"));
                }
                if ours(name).is_some() {
                    return err(format!("set {name} created twice"));
                }
                let mut opts = after.split_whitespace();
                let kind = opts.next().unwrap_or("");
                if !(kind.starts_with("hash:") || kind.starts_with("bitmap:") || kind == "list:set")
                {
                    return err(format!("set {name}: type `{kind}` not understood"));
                }
                let words: Vec<&str> = opts.collect();
                let family = words.windows(2).find(|p| p[0] == "family").map(|p| p[1]);
                let want = match ip {
                    Ip::V4 => "inet",
                    Ip::V6 => "inet6",
                };
                if family.is_some_and(|f| f != want)
                    || (family.is_none() && ip == Ip::V6 && kind.starts_with("hash:"))
                {
                    return err(format!(
                        "set {name} is of family {}, the trial is IPv{}",
                        family.unwrap_or("inet"),
                        if ip == Ip::V6 { 6 } else { 4 }
                    ));
                }
                if words.contains(&"-exist") || words.contains(&"-!") {
                    return err(format!("set {name}: options of `ipset save` output only"));
                }
                let renamed = fit_name(
                    format!("{IMPORTED_SET_PREFIX}{name}"),
                    name,
                    MAX_SET_NAME,
                    |c| names.iter().any(|(_, o)| o == c),
                );
                let _ = writeln!(out, "create {renamed} {after} -exist");
                let _ = writeln!(out, "flush {renamed}");
                if kind == "list:set" {
                    list_sets.push(name.to_owned());
                }
                names.push((name.to_owned(), renamed));
            }
            "add" => {
                let Some(set) = ours(name) else {
                    return err(format!("add to set {name}, which the file does not create"));
                };
                elements += 1;
                if elements > MAX_SET_ELEMENTS {
                    return err(format!(
                        "more than {MAX_SET_ELEMENTS} elements; fwbench imports at most \
                         {MAX_SET_ELEMENTS}"
                    ));
                }
                let mut element = after.to_owned();
                if list_sets.iter().any(|l| l == name) {
                    let member = after.split_whitespace().next().unwrap_or("");
                    let Some(m) = ours(member) else {
                        return err(format!(
                            "list set {name}: member {member} is not created before it"
                        ));
                    };
                    element = format!("{m}{}", &after[member.len()..]);
                }
                let _ = writeln!(out, "add {set} {element}");
            }
            other => {
                return err(format!(
                    "`{other}` refused: an ipset file for an import only creates sets and \
                     adds elements (`ipset save` output)"
                ))
            }
        }
    }
    if names.is_empty() {
        return file_error(
            source,
            "creates no set (`ipset save` output expected)".into(),
        );
    }
    Ok(ImportedSets {
        source: source.to_owned(),
        text: out,
        names,
    })
}

/// What an iptables option is, for renaming and aiming (`-p`, `--dport`, `-j` …).
enum Opt {
    Jump,
    /// `-s`/`-d` and their long forms (true: destination).
    Addr(bool),
    Proto,
    /// `--sport`/`--dport` and their multiport forms (true: destination).
    Port(bool),
    /// A set's name: `--match-set` (match `set`), `--add-set`, `--del-set`,
    /// `--map-set` (target `SET`).
    Set,
    Other,
}

/// Classify an option as iptables' getopt reads it: long options may be abbreviated
/// to any unambiguous prefix of at least two letters (`--sou`, `--dest`).
fn ipt_option(opt: &str) -> Opt {
    let long = |full: &str| {
        opt.strip_prefix("--")
            .is_some_and(|o| o.len() >= 2 && full.starts_with(o))
    };
    match opt {
        "-j" | "-g" => Opt::Jump,
        "-s" | "--src" => Opt::Addr(false),
        "-d" | "--dst" => Opt::Addr(true),
        "-p" => Opt::Proto,
        "--dport" | "--destination-port" | "--dports" | "--destination-ports" => Opt::Port(true),
        "--sport" | "--source-port" | "--sports" | "--source-ports" => Opt::Port(false),
        "--match-set" | "--add-set" | "--del-set" | "--map-set" => Opt::Set,
        _ if long("jump") || long("goto") => Opt::Jump,
        _ if long("source") && opt.len() >= 5 => Opt::Addr(false),
        _ if long("destination") && opt.len() >= 5 => Opt::Addr(true),
        _ if long("protocol") => Opt::Proto,
        _ => Opt::Other,
    }
}

/// A port, a range `a:b` or the first of a list `a,b:c`, as an inclusive range.
fn ipt_ports(v: &str) -> Option<(u16, u16)> {
    let first = v.split(',').next()?;
    match first.split_once(':') {
        Some((a, b)) => Some((
            if a.is_empty() { 0 } else { a.parse().ok()? },
            if b.is_empty() { 65535 } else { b.parse().ok()? },
        )),
        None => first.parse().ok().map(|p| (p, p)),
    }
}

/// Record a match field for aiming, or why a negated one cannot be aimed at.
fn aim_field(a: &mut AimFields, negated: bool, opt: &str, set: impl FnOnce(&mut AimFields)) {
    if negated {
        a.unaimable
            .get_or_insert_with(|| format!("negated match `! {opt}`"));
    } else {
        set(a);
    }
}

/// Write one rewritten section; returns its number of rules. Built-in chains without
/// rules and with policy ACCEPT are left out (they would only cost a jump). Each
/// installed rule goes to `list`, each chain to `chains` (user's name, fwbench's).
fn emit_section(
    out: &mut String,
    s: Section,
    list: &mut Vec<ImportedRule>,
    chains: &mut Vec<(String, String)>,
) -> usize {
    let keep = |d: &&Decl| d.policy.is_none() || d.used || d.policy.as_deref() == Some("DROP");
    let decls: Vec<&Decl> = s.decls.iter().filter(keep).collect();
    if decls.is_empty() {
        return 0;
    }
    let _ = writeln!(out, "*{}", s.table);
    for d in &decls {
        let _ = writeln!(out, ":{} - [0:0]", d.renamed);
        chains.push((user_chain(&s.table, &d.name), d.renamed.clone()));
    }
    let mut n = 0;
    for (r, rule) in s.rules {
        let _ = writeln!(out, "{r}");
        list.push(rule);
        n += 1;
    }
    // A DROP policy becomes a final counted drop rule; built-in policies never change.
    for d in decls.iter().filter(|d| d.policy.as_deref() == Some("DROP")) {
        let _ = writeln!(out, "-A {} -j DROP", d.renamed);
        list.push(ImportedRule {
            chain: d.renamed.clone(),
            user_chain: user_chain(&s.table, &d.name),
            index: list.iter().filter(|r| r.chain == d.renamed).count() + 1,
            text: format!(":{} DROP (the chain's policy)", d.name),
            verdict: "drop".into(),
            policy: true,
            aim: AimFields::default(),
        });
        n += 1;
    }
    for d in decls.iter().filter(|d| d.policy.is_some()) {
        let _ = writeln!(out, "-I {} 1 -j {}", d.name, d.renamed);
    }
    out.push_str("COMMIT\n");
    n
}

// ---------------------------------------------------------------------------
// nft: what nft itself read back from a scratch namespace
// ---------------------------------------------------------------------------

/// nft's name of fwbench's table (family inet).
const TABLE: &str = "fwbench";

/// Largest file fwbench imports (bytes): 200 000 rules of `iptables-save` text are
/// 10–20 MB; a larger file is not a ruleset.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

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

/// Most chains an imported nft ruleset may have (loading is bounded too).
pub const MAX_CHAINS: usize = 10_000;

/// Most rules an imported ruleset may have.
pub const MAX_RULES: usize = 200_000;

/// A refusal that needs no program: `include` could read any file, so the word is
/// refused wherever it appears in the file — inside strings and comments too, since
/// a scanner that disagreed with nft's about where a string ends could otherwise be
/// led past it. (Refused statements such as `flush` are detected from the messages
/// nft sends to the kernel, see [`refused_messages`].)
pub fn check_nft_text(source: &str, text: &str) -> Result<(), ImportError> {
    check_size(source, text)?;
    for (n, line) in text.lines().enumerate() {
        if line.contains("include") {
            return Err(ImportError::Line {
                file: source.to_owned(),
                line: n + 1,
                why: "`include` is refused (an imported ruleset must be self-contained; \
                      the word is refused in comments and strings too)"
                    .into(),
            });
        }
    }
    Ok(())
}

/// nf_tables netlink message types (`NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_*`) a
/// ruleset listing loads with: batch begin/end, the `NEW*` messages, and the `GET*`
/// messages of nft's cache. Anything else (delete, flush, destroy, reset) is refused.
const ALLOWED_MESSAGES: [u16; 17] = [
    16, 17, // NFNL_MSG_BATCH_BEGIN, _END
    2560, 2561, // NEWTABLE, GETTABLE
    2563, 2564, // NEWCHAIN, GETCHAIN
    2566, 2567, // NEWRULE, GETRULE
    2569, 2570, // NEWSET, GETSET
    2572, 2573, // NEWSETELEM, GETSETELEM
    2576, // GETGEN
    2578, 2579, // NEWOBJ, GETOBJ
    2582, 2583, // NEWFLOWTABLE, GETFLOWTABLE
];

/// What a netlink message type does, for the refusal message.
fn message_name(t: u16) -> String {
    match t {
        2562 => {
            "deletes or flushes a table (`delete table`, `flush ruleset`, `destroy table`)".into()
        }
        2565 => "deletes a chain".into(),
        2568 => "deletes or flushes rules (`delete rule`, `flush chain`, `flush table`)".into(),
        2571 => "deletes a set".into(),
        2574 => "deletes or flushes set elements".into(),
        2580 => "deletes a stateful object".into(),
        2581 | 2585 => "resets counters or quotas (`reset …`)".into(),
        2584 => "deletes a flowtable".into(),
        t => format!("sends netlink message type {t}, which a ruleset listing never does"),
    }
}

/// The refusal for the message types nft sent while loading the file (`None`: only
/// what a ruleset listing sends).
pub fn refused_messages(source: &str, types: &[u16]) -> Result<(), ImportError> {
    // No trace at all (an nft built without debug output): nothing can be vouched for.
    if types.is_empty() {
        return file_error(
            source,
            "nft printed no trace of the messages it sent (`nft --debug=mnl`), so fwbench \
             cannot check that the file only creates objects"
                .into(),
        );
    }
    let bad: Vec<String> = types
        .iter()
        .filter(|t| !ALLOWED_MESSAGES.contains(t))
        .map(|&t| message_name(t))
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    file_error(
        source,
        format!(
            "refused: the file {} (an imported ruleset may only create tables, chains, \
             rules, sets and objects, as `nft list ruleset` writes them)",
            bad.join("; it ")
        ),
    )
}

/// The text of each rule in `nft -a list ruleset` output: (table family, table,
/// chain, handle) → the rule as nft prints it.
pub(crate) fn rule_texts(
    listing: &str,
) -> std::collections::HashMap<(String, String, String, u64), String> {
    let mut out = std::collections::HashMap::new();
    let (mut table, mut chain) = ((String::new(), String::new()), String::new());
    for line in listing.lines() {
        let t = line.trim();
        // nft writes the handle as the line's last comment; a rule's own comment
        // string comes before it.
        let Some((body, handle)) = t.rsplit_once(" # handle ") else {
            continue;
        };
        let Ok(handle) = handle.trim().parse::<u64>() else {
            continue;
        };
        let words: Vec<&str> = body.split_whitespace().collect();
        match words[..] {
            ["table", family, name, "{"] => {
                table = (family.to_owned(), name.to_owned());
                chain.clear();
            }
            ["chain", name, "{"] => chain = name.to_owned(),
            [_, _, "{"] if words[0] != "chain" => chain.clear(),
            _ if !chain.is_empty() => {
                out.insert(
                    (table.0.clone(), table.1.clone(), chain.clone(), handle),
                    body.to_owned(),
                );
            }
            _ => {}
        }
    }
    out
}

/// The object kinds a ruleset listing has besides tables, chains and rules; each is
/// re-created in fwbench's table.
const OBJECTS: [&str; 11] = [
    "set",
    "map",
    "element",
    "counter",
    "quota",
    "ct helper",
    "limit",
    "ct timeout",
    "ct expectation",
    "secmark",
    "synproxy",
];

/// Rewrite what nft read back from the scratch namespace (`json`: `nft -j list
/// ruleset`; `listing`: `nft -a list ruleset`) into one JSON batch that replaces
/// `table inet fwbench`: the user's table becomes fwbench's (family inet), handles
/// are dropped, every rule without a counter gets one just before its first
/// statement, and a base chain's drop policy becomes policy accept and a last counted
/// drop rule. Tables of the other IP version, and of families arp, bridge and
/// netdev, are left out (with a note).
pub fn import_nft_listing(
    source: &str,
    json: &str,
    listing: &str,
    ip: Ip,
) -> Result<Imported, ImportError> {
    use serde_json::{json, Value};
    let v: Value = serde_json::from_str(json).map_err(|e| ImportError::File {
        file: source.to_owned(),
        why: format!("reading nft's JSON listing: {e}"),
    })?;
    let items = v["nftables"].as_array().cloned().unwrap_or_default();
    let mut notes: Vec<String> = vec![];
    let mut tables: Vec<(String, String)> = vec![];
    for t in items.iter().filter_map(|i| i.get("table")) {
        let family = t["family"].as_str().unwrap_or("").to_owned();
        let name = t["name"].as_str().unwrap_or("").to_owned();
        match (family.as_str(), ip) {
            ("inet", _) | ("ip", Ip::V4) | ("ip6", Ip::V6) => tables.push((family, name)),
            _ => notes.push(format!(
                "table {family} {name} left out (the trial is IPv{})",
                if ip == Ip::V4 { 4 } else { 6 }
            )),
        }
    }
    if tables.is_empty() {
        return file_error(
            source,
            format!(
                "no table of family inet or {} to import",
                if ip == Ip::V4 { "ip" } else { "ip6" }
            ),
        );
    }
    // Several tables (firewalld, Docker, libvirt each keep their own) go into
    // fwbench's one table, their chains, sets and objects named
    // `<family>-<table>-<name>`; base chains keep their hooks and priorities, so a
    // packet meets them in the host's order. One table keeps its names.
    let many = tables.len() > 1;
    let prefix_of = |f: &str, n: &str| {
        if many {
            format!("{f}-{n}-")
        } else {
            String::new()
        }
    };
    let user_of = |f: &str, n: &str, chain: &str| {
        if many {
            format!("{f}/{n}/{chain}")
        } else {
            chain.to_owned()
        }
    };
    let texts = rule_texts(listing);
    let table_of = |o: &Value| {
        tables
            .iter()
            .find(|(f, n)| o["family"] == f.as_str() && o["table"] == n.as_str())
            .cloned()
    };
    let mut chains: Vec<Value> = vec![];
    let mut objects: Vec<Value> = vec![];
    let mut flowtables: Vec<Value> = vec![];
    let mut rules: Vec<Value> = vec![];
    let mut rule_list: Vec<ImportedRule> = vec![];
    let mut elements = 0;
    let mut counters_added = 0;
    // (fwbench's chain, the user's chain) of each drop policy.
    let mut policies: Vec<(String, String)> = vec![];
    // Rules so far per chain: the next rule's position (counting the list per rule
    // was quadratic).
    let mut per_chain: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let fix = |o: &Value, prefix: &str| -> Value {
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.insert("family".into(), json!("inet"));
            m.insert("table".into(), json!(TABLE));
            m.remove("handle");
            if !prefix.is_empty() {
                for k in ["name", "chain"] {
                    if let Some(Value::String(n)) = m.get_mut(k) {
                        *n = format!("{prefix}{n}");
                    }
                }
                for k in ["expr", "elem"] {
                    if let Some(v) = m.get_mut(k) {
                        rename_refs(v, prefix);
                    }
                }
            }
        }
        o
    };
    for item in &items {
        let Some((kind, o)) = item.as_object().and_then(|m| m.iter().next()) else {
            continue;
        };
        if kind == "metainfo" || kind == "table" {
            continue;
        }
        let Some((family, name)) = table_of(o) else {
            continue;
        };
        let prefix = prefix_of(&family, &name);
        match kind.as_str() {
            "chain" => {
                let mut c = fix(o, &prefix);
                if o["policy"] == "drop" {
                    c["policy"] = json!("accept");
                    let user = o["name"].as_str().unwrap_or("");
                    policies.push((format!("{prefix}{user}"), user_of(&family, &name, user)));
                }
                chains.push(json!({ "add": { "chain": c } }));
            }
            "rule" => {
                let mut r = fix(o, &prefix);
                let chain = o["chain"].as_str().unwrap_or("").to_owned();
                let ours = format!("{prefix}{chain}");
                let expr = r["expr"].as_array_mut().ok_or_else(|| ImportError::File {
                    file: source.to_owned(),
                    why: format!("a rule of chain {chain} has no expressions"),
                })?;
                if let Some(x) = expr.iter().find(|e| e.get("xt").is_some()) {
                    return file_error(
                        source,
                        format!(
                            "chain {chain} has a rule with an iptables extension ({}), which \
                             nft cannot re-create; import the iptables-save output instead",
                            x["xt"]["name"].as_str().unwrap_or("xt")
                        ),
                    );
                }
                if !expr.iter().any(|e| e.get("counter").is_some()) {
                    // Just before the verdict: after every match and every statement
                    // that can stop the rule (`limit`, `ct count`, …), so it counts the
                    // packets the verdict applies to.
                    let at = match expr.last() {
                        Some(v) if !nft_verdict(std::slice::from_ref(v)).is_empty() => {
                            expr.len() - 1
                        }
                        _ => expr.len(),
                    };
                    expr.insert(at, json!({ "counter": { "packets": 0, "bytes": 0 } }));
                    counters_added += 1;
                }
                let handle = o["handle"].as_u64().unwrap_or(0);
                let text = texts
                    .get(&(family.clone(), name.clone(), chain.clone(), handle))
                    .cloned()
                    .unwrap_or_else(|| format!("(rule with handle {handle})"));
                let index = per_chain.entry(ours.clone()).or_insert(0);
                *index += 1;
                rule_list.push(ImportedRule {
                    chain: ours,
                    user_chain: user_of(&family, &name, &chain),
                    index: *index,
                    text,
                    verdict: nft_verdict(expr),
                    policy: false,
                    aim: nft_aim(expr, ip),
                });
                rules.push(json!({ "add": { "rule": r } }));
            }
            "flowtable" => flowtables.push(json!({ "add": { "flowtable": fix(o, &prefix) } })),
            k if OBJECTS.contains(&k) => {
                if k == "set" {
                    elements += o["elem"].as_array().map_or(0, Vec::len);
                }
                objects.push(json!({ "add": { k: fix(o, &prefix) } }));
            }
            other => {
                return file_error(
                    source,
                    format!("nft listed a `{other}` object, which fwbench cannot re-create"),
                )
            }
        }
    }
    for (chain, user) in &policies {
        rules.push(json!({ "add": { "rule": {
            "family": "inet", "table": TABLE, "chain": chain,
            "comment": format!("fwbench: policy drop of chain {user}"),
            "expr": [{ "counter": { "packets": 0, "bytes": 0 } }, { "drop": null }],
        } } }));
        rule_list.push(ImportedRule {
            chain: chain.clone(),
            user_chain: user.clone(),
            index: per_chain.get(chain).copied().unwrap_or(0) + 1,
            text: format!("policy drop (of chain {user})"),
            verdict: "drop".into(),
            policy: true,
            aim: AimFields::default(),
        });
    }
    for (n, max, what) in [
        (chains.len(), MAX_CHAINS, "chains"),
        (rule_list.len(), MAX_RULES, "rules"),
    ] {
        if n > max {
            return file_error(source, format!("{n} {what}; fwbench imports at most {max}"));
        }
    }
    for (family, name) in tables.iter().filter(|(f, _)| f != "inet") {
        notes.push(format!(
            "table {family} {name} is installed as table inet {TABLE} (an inet table checks \
             the protocol family before each address match)"
        ));
    }
    if many {
        let names: Vec<String> = tables.iter().map(|(f, n)| format!("{f} {n}")).collect();
        notes.push(format!(
            "{} tables ({}) are installed in table inet {TABLE}: their chains, sets and \
             objects are named FAMILY-TABLE-NAME, base chains keep their hooks and \
             priorities (packets meet them in the host's order); `--aim FAMILY/TABLE/CHAIN:N`",
            tables.len(),
            names.join(", ")
        ));
    }
    if counters_added > 0 {
        notes.push(format!(
            "a counter was added to {counters_added} rules that had none (counting costs a \
             little per matched packet)"
        ));
    }
    for (_, c) in &policies {
        notes.push(format!(
            "chain {c}: policy drop became policy accept and a last counted drop rule"
        ));
    }
    let table = json!({ "family": "inet", "name": TABLE });
    let mut batch = vec![
        json!({ "add": { "table": table } }),
        json!({ "delete": { "table": table } }),
        json!({ "add": { "table": table } }),
    ];
    batch.extend(chains);
    batch.extend(objects);
    batch.extend(flowtables);
    let n_rules = rules.len();
    batch.extend(rules);
    // One command a line, so `rules render` can be read (and diffed).
    let lines: Vec<String> = batch.iter().map(Value::to_string).collect();
    let text = format!("{{\"nftables\": [\n{}\n]}}", lines.join(",\n"));
    let mut seen = std::collections::HashSet::new();
    let chain_names: Vec<(String, String)> = rule_list
        .iter()
        .filter(|r| seen.insert(r.chain.as_str()))
        .map(|r| (r.user_chain.clone(), r.chain.clone()))
        .collect();
    Ok(Imported {
        format: ImportFormat::Nft,
        source: source.to_owned(),
        text: text + "\n",
        rules: n_rules,
        elements,
        rule_list,
        chains: chain_names,
        notes,
        sets: None,
    })
}

/// Rename, in a rule's expressions or a set's elements, what names an object of the
/// same table: `@set` references, jump and goto targets, named stateful objects.
fn rename_refs(v: &mut serde_json::Value, prefix: &str) {
    use serde_json::Value;
    match v {
        Value::String(s) if s.starts_with('@') => *s = format!("@{prefix}{}", &s[1..]),
        Value::Array(a) => a.iter_mut().for_each(|x| rename_refs(x, prefix)),
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::Object(t) if k == "jump" || k == "goto" => {
                        if let Some(Value::String(c)) = t.get_mut("target") {
                            *c = format!("{prefix}{c}");
                        }
                    }
                    Value::String(n) if OBJECTS.contains(&k.as_str()) => {
                        *n = format!("{prefix}{n}");
                    }
                    _ => rename_refs(x, prefix),
                }
            }
        }
        _ => {}
    }
}

/// The verdict of an nft rule's expressions: accept, drop, reject, jump X, goto X,
/// return, or empty.
fn nft_verdict(expr: &[serde_json::Value]) -> String {
    for e in expr.iter().rev() {
        for k in ["accept", "drop", "reject", "return", "queue"] {
            if e.get(k).is_some() {
                return k.into();
            }
        }
        for k in ["jump", "goto"] {
            if let Some(t) = e.get(k) {
                return format!("{k} {}", t["target"].as_str().unwrap_or("?"));
            }
        }
    }
    String::new()
}

/// A single value a test packet can have for the right side of a match: a number,
/// a range, an address or prefix, or the first element of an anonymous set.
fn first_value(v: &serde_json::Value) -> Option<serde_json::Value> {
    match v {
        serde_json::Value::Object(m) if m.contains_key("set") => {
            first_value(m["set"].as_array()?.first()?)
        }
        other => Some(other.clone()),
    }
}

/// Why a rule cannot be aimed at: its `what` match compares with something unreadable.
fn unreadable_match(what: &str, named: bool) -> String {
    let against = if named {
        "a named set"
    } else {
        "a value fwbench cannot read"
    };
    format!("`{what}` is matched against {against}")
}

fn port_range(v: &serde_json::Value) -> Option<(u16, u16)> {
    if let Some(p) = v.as_u64() {
        let p = u16::try_from(p).ok()?;
        return Some((p, p));
    }
    let r = v.get("range")?.as_array()?;
    Some((
        u16::try_from(r.first()?.as_u64()?).ok()?,
        u16::try_from(r.get(1)?.as_u64()?).ok()?,
    ))
}

fn addr_text(v: &serde_json::Value) -> Option<String> {
    if let Some(s) = v.as_str() {
        return (!s.starts_with('@') && !s.starts_with('$')).then(|| s.to_owned());
    }
    let p = v.get("prefix")?;
    Some(format!("{}/{}", p["addr"].as_str()?, p["len"].as_u64()?))
}

/// The match fields of an nft rule a test packet can be given (addresses, ports,
/// protocol), or why it cannot be aimed at.
fn nft_aim(expr: &[serde_json::Value], ip: Ip) -> AimFields {
    let mut a = AimFields::default();
    let l3 = if ip == Ip::V4 { "ip" } else { "ip6" };
    for e in expr {
        let Some(m) = e.get("match") else { continue };
        let op = m["op"].as_str().unwrap_or("");
        let left = &m["left"];
        let right = &m["right"];
        let what = if let Some(p) = left.get("payload") {
            format!(
                "{} {}",
                p["protocol"].as_str().unwrap_or("?"),
                p["field"].as_str().unwrap_or("?")
            )
        } else if let Some(k) = left.get("meta") {
            format!("meta {}", k["key"].as_str().unwrap_or("?"))
        } else if let Some(k) = left.get("ct") {
            format!("ct {}", k["key"].as_str().unwrap_or("?"))
        } else {
            continue;
        };
        let known = matches!(
            what.as_str(),
            "ip saddr"
                | "ip daddr"
                | "ip6 saddr"
                | "ip6 daddr"
                | "meta l4proto"
                | "ip protocol"
                | "ip6 nexthdr"
        ) || what.ends_with(" sport")
            || what.ends_with(" dport");
        if !known {
            continue;
        }
        if op != "==" && op != "in" {
            a.unaimable
                .get_or_insert_with(|| format!("`{what} {op} …` is not an equality match"));
            continue;
        }
        let Some(val) = first_value(right) else {
            continue;
        };
        let named = right.as_str().is_some_and(|s| s.starts_with('@'));
        match what.as_str() {
            w if w == format!("{l3} saddr") || w == format!("{l3} daddr") => {
                match addr_text(&val) {
                    Some(t) if w.ends_with("saddr") => a.src = Some(t),
                    Some(t) => a.dst = Some(t),
                    None => {
                        a.unaimable
                            .get_or_insert_with(|| unreadable_match(&what, named));
                    }
                }
            }
            "ip saddr" | "ip daddr" | "ip6 saddr" | "ip6 daddr" => {
                a.unaimable
                    .get_or_insert_with(|| format!("`{what}` is of the other IP version"));
            }
            "meta l4proto" | "ip protocol" | "ip6 nexthdr" => {
                if let Some(p) = val.as_str() {
                    a.l4 = Some(p.to_owned());
                }
            }
            w => {
                let proto = w.split_whitespace().next().unwrap_or("");
                if proto == "tcp" || proto == "udp" {
                    a.l4 = Some(proto.to_owned());
                }
                match port_range(&val) {
                    Some(r) if w.ends_with("dport") => a.dport = Some(r),
                    Some(r) => a.sport = Some(r),
                    None => {
                        a.unaimable
                            .get_or_insert_with(|| unreadable_match(&what, named));
                    }
                }
            }
        }
    }
    a
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
:FWBENCH-U-LOG-AND-DRO~e15bce - [0:0]
-A FWBENCH-INPUT -p tcp -m tcp --dport 22 -j FWBENCH-U-SSH-IN
-A FWBENCH-INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FWBENCH-FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FWBENCH-FORWARD -s 198.18.0.0/15 -d 198.19.0.0/16 -p udp -j ACCEPT
-A FWBENCH-FORWARD -s 192.0.2.0/24 -m comment --comment \"doc net, not -j SSH-IN\" -g FWBENCH-U-LOG-AND-DRO~e15bce
-A FWBENCH-U-SSH-IN -s 198.51.100.0/24 -j ACCEPT
-A FWBENCH-U-SSH-IN -j DROP
-A FWBENCH-U-LOG-AND-DRO~e15bce -j LOG --log-prefix \"fw drop: \"
-A FWBENCH-U-LOG-AND-DRO~e15bce -j DROP
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
    }

    #[test]
    fn nul_and_control_bytes_are_refused_with_their_line() {
        // issue 24 4b: iptables-restore stops reading a line at a NUL, so the rule it
        // installs would not be the file's.
        let e = import(
            "f",
            "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s 198.19.0.1\0/8 -j DROP\nCOMMIT\n",
            Ip::V4,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "f:3: control character U+0000 at byte 23 of the line (iptables-save output is \
             plain text)"
        );
        let e = import("f", "*filter\n:INPUT ACCEPT [0:0]\x1b\nCOMMIT\n", Ip::V4).unwrap_err();
        assert!(
            e.to_string().starts_with("f:2: control character U+001B"),
            "{e}"
        );
        // Tabs and CRLF line ends are fine.
        import("f", "*filter\r\n:INPUT\tACCEPT [0:0]\r\nCOMMIT\r\n", Ip::V4).unwrap();
    }

    /// A blocklist of `n` rules in one chain, as iptables-save writes it.
    fn blocklist(n: usize) -> String {
        let mut t = String::from("*filter\n:INPUT ACCEPT [0:0]\n:BL - [0:0]\n-A INPUT -j BL\n");
        for i in 0..n {
            let _ = writeln!(
                t,
                "-A BL -s 203.0.{}.{}/32 -j DROP",
                (i >> 8) & 255,
                i & 255
            );
        }
        t + "COMMIT\n"
    }

    #[test]
    fn the_iptables_importer_is_linear_and_has_a_rule_limit() {
        // issue 24 4c: 200 000 rules took 294 s (each rule's position was found by
        // counting the rules before it). Linear, the whole limit takes well under a
        // second in release, a few seconds in debug builds: 120 s is a bound that only
        // a quadratic step misses, whatever the machine's load.
        let t0 = std::time::Instant::now();
        let imp = import("f", &blocklist(MAX_RULES - 1), Ip::V4).unwrap();
        assert!(t0.elapsed().as_secs() < 120, "{:?}", t0.elapsed());
        assert_eq!(imp.rules, MAX_RULES);
        let last = imp.rule_list.last().unwrap();
        assert_eq!(
            (last.user_chain.as_str(), last.index),
            ("BL", MAX_RULES - 1)
        );
        let e = import("f", &blocklist(MAX_RULES), Ip::V4).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "f:{}: more than {MAX_RULES} rules; fwbench imports at most {MAX_RULES}",
                MAX_RULES + 4
            )
        );
    }

    #[test]
    fn files_over_the_size_limit_are_refused() {
        let mut t = blocklist(1);
        t.push_str(&"#".repeat(MAX_FILE_BYTES as usize));
        let want = format!(
            "f: {} bytes; fwbench imports files of at most 32 MiB",
            t.len()
        );
        assert_eq!(import("f", &t, Ip::V4).unwrap_err().to_string(), want);
        assert_eq!(check_nft_text("f", &t).unwrap_err().to_string(), want);
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
    fn long_chain_names_get_a_hash_and_never_collide() {
        // The ufw case: two names equal in their first 28 characters.
        let text = "*filter\n:INPUT DROP [0:0]\n:ufw-after-logging-forward - [0:0]\n\
                    :ufw-after-logging-input - [0:0]\n-A INPUT -j ufw-after-logging-input\n\
                    -A ufw-after-logging-input -j ufw-after-logging-forward\nCOMMIT\n";
        let imp = import("f", text, Ip::V4).unwrap();
        let names: Vec<&str> = imp.chains.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names.len(), 3);
        for n in &names {
            assert!(n.len() <= MAX_CHAIN_NAME, "{n}");
        }
        assert_ne!(names[1], names[2]);
        assert!(names[1].starts_with("FWBENCH-U-ufw-after-l~"), "{names:?}");
        // The jumps follow the mapping; the mapping names the user's chains.
        assert!(imp
            .text
            .contains(&format!("-A FWBENCH-INPUT -j {}\n", names[2])));
        assert_eq!(imp.chains[2].0, "ufw-after-logging-input");
        // A literal name equal to another chain's hashed name gets its own.
        let taken = names[1].to_owned();
        let n = ipt_name("filter", "x", false, |c| c == "FWBENCH-U-x" || c == taken);
        assert!(
            n != taken && n != "FWBENCH-U-x" && n.len() <= MAX_CHAIN_NAME,
            "{n}"
        );
        // Rules are listed with their chain, position, text and verdict; the DROP
        // policy is a last rule of its own.
        let r = &imp.rule_list;
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].user_chain.as_str(), r[0].index), ("INPUT", 1));
        assert_eq!(r[0].verdict, "jump ufw-after-logging-input");
        assert_eq!(
            (r[2].user_chain.as_str(), r[2].index, r[2].policy),
            ("INPUT", 2, true)
        );
        assert!(r[2].drops());
    }

    #[test]
    fn only_real_built_in_chains_are_hooked() {
        let e = |text: &str| import("f", text, Ip::V4).unwrap_err().to_string();
        assert_eq!(
            e("*filter\n:MYCHAIN DROP [0:0]\nCOMMIT\n"),
            "f:2: chain MYCHAIN has policy DROP but is not a built-in chain of table filter \
             (those are INPUT, FORWARD, OUTPUT); a user chain is declared with `-`"
        );
        assert_eq!(
            e("*raw\n:FORWARD ACCEPT [0:0]\nCOMMIT\n")
                .split(" (")
                .next()
                .unwrap(),
            "f:2: chain FORWARD has policy ACCEPT but is not a built-in chain of table raw"
        );
        assert_eq!(
            e("*filter\n:INPUT - [0:0]\nCOMMIT\n"),
            "f:2: built-in chain INPUT of table filter is declared without a policy"
        );
    }

    #[test]
    fn every_spelling_of_an_address_option_is_family_checked() {
        let e = |rule: &str, ip| {
            let text = format!("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT {rule}\nCOMMIT\n");
            import("f", &text, ip).err().map(|e| e.to_string())
        };
        for rule in [
            "-s 2001:db8::1 -j DROP",
            "--source=2001:db8::1 -j DROP",
            "--src 2001:db8::1 -j DROP",
            "--sou 2001:db8::1 -j DROP",
            "-d 192.0.2.1,2001:db8::1 -j DROP",
            "! --destination=2001:db8::/32 -j DROP",
            "--dst=2001:db8::1 -j DROP",
        ] {
            assert!(
                e(rule, Ip::V4).is_some_and(|m| m.contains("is IPv6 but the trial is IPv4")),
                "{rule}"
            );
        }
        assert_eq!(e("-s 198.18.0.0/15 -j ACCEPT", Ip::V4), None);
        assert!(e("--source=198.18.0.1 -j DROP", Ip::V6).is_some());
        // --sport is not --source.
        assert_eq!(e("-p udp --sport 53 -j ACCEPT", Ip::V4), None);
    }

    #[test]
    fn iptables_rules_carry_their_match_fields() {
        let text = "*filter\n:INPUT ACCEPT [0:0]\n\
                    -A INPUT -s 198.18.0.0/15 -p udp -m multiport --dports 5000:6000,7000 -j ACCEPT\n\
                    -A INPUT -p tcp ! --dport 22 -j DROP\n\
                    -A INPUT --protocol=tcp --destination-port=80 -j ACCEPT\nCOMMIT\n";
        let imp = import("f", text, Ip::V4).unwrap();
        let a = &imp.rule_list[0].aim;
        assert_eq!(a.src.as_deref(), Some("198.18.0.0/15"));
        assert_eq!(a.l4.as_deref(), Some("udp"));
        assert_eq!(a.dport, Some((5000, 6000)));
        assert_eq!(imp.rule_list[0].verdict, "accept");
        assert!(imp.rule_list[1]
            .aim
            .unaimable
            .as_deref()
            .unwrap()
            .contains("! --dport"));
        assert_eq!(imp.rule_list[2].aim.dport, Some((80, 80)));
        assert_eq!(imp.rule_list[2].aim.l4.as_deref(), Some("tcp"));
    }

    #[test]
    fn nft_listing_is_rewritten_into_fwbench_table() {
        let json = fixture("nft-listing.json");
        let text = fixture("nft-listing.txt");
        let imp = import_nft_listing("ruleset.nft", &json, &text, Ip::V4).unwrap();
        assert_eq!(imp.format, ImportFormat::Nft);
        // 10 rules and one for the input chain's drop policy; 6 elements in sets.
        assert_eq!((imp.rules, imp.elements), (11, 6));
        let v: serde_json::Value = serde_json::from_str(&imp.text).unwrap();
        let batch = v["nftables"].as_array().unwrap();
        // Replace fwbench's table and nothing else: every object is in it.
        assert_eq!(
            batch[1],
            serde_json::json!({"delete": {"table": {"family": "inet", "name": "fwbench"}}})
        );
        for cmd in batch {
            let (verb, obj) = cmd.as_object().unwrap().iter().next().unwrap();
            assert!(
                verb == "add" || (verb == "delete" && obj.get("table").is_some()),
                "{cmd}"
            );
            let (_, o) = obj.as_object().unwrap().iter().next().unwrap();
            let table = o.get("table").unwrap_or(&o["name"]);
            assert_eq!(table, "fwbench", "{cmd}");
            assert_eq!(o["family"], "inet", "{cmd}");
            assert!(o.get("handle").is_none(), "{cmd}");
        }
        // Policy drop → accept plus a last counted drop rule.
        let input = batch
            .iter()
            .find(|c| c["add"]["chain"]["name"] == "input")
            .unwrap();
        assert_eq!(input["add"]["chain"]["policy"], "accept");
        let last = &imp.rule_list[imp.rule_list.len() - 1];
        assert!(
            last.policy && last.chain == "input" && last.index == 6,
            "{last:?}"
        );
        // Every rule counts, the counter just before its verdict.
        for cmd in batch.iter().filter(|c| c["add"].get("rule").is_some()) {
            let expr = cmd["add"]["rule"]["expr"].as_array().unwrap();
            let counter = expr
                .iter()
                .position(|e| e.get("counter").is_some())
                .unwrap();
            let verdict = nft_verdict(&expr[counter + 1..]);
            assert!(counter + 2 >= expr.len() && !verdict.is_empty(), "{cmd}");
            assert!(
                expr[..counter].iter().all(|e| e.get("match").is_some()),
                "{cmd}"
            );
        }
        assert!(
            imp.notes
                .iter()
                .any(|n| n.contains("counter was added to 7 rules")),
            "{:?}",
            imp.notes
        );
        // Texts come from nft's own listing, with chain and position.
        let r = &imp.rule_list[6];
        assert_eq!((r.chain.as_str(), r.index), ("forward", 2));
        assert_eq!(r.text, "tcp dport @web_ports accept");
        assert_eq!(r.verdict, "accept");
        assert!(r.aim.unaimable.as_deref().unwrap().contains("named set"));
        let f1 = &imp.rule_list[5].aim;
        assert_eq!(
            (f1.src.as_deref(), f1.dst.as_deref()),
            (Some("198.18.0.0/15"), Some("198.19.0.0/16"))
        );
        assert_eq!(f1.l4.as_deref(), Some("udp"));
        let udp = &imp.rule_list[7];
        assert_eq!(
            (udp.aim.dport, udp.verdict.as_str()),
            (Some((5060, 5060)), "drop")
        );
        assert_eq!(imp.rule_list[3].verdict, "jump ssh_in");
        // The inet table is one for IPv6 trials too.
        assert!(import_nft_listing("f", &json, &text, Ip::V6).is_ok());
    }

    #[test]
    fn several_nft_tables_are_imported_with_their_hooks_and_priorities() {
        // Read back by nft from nft-two-tables.nft: `ip filter` (input, priority 10,
        // a named set, a jump), `inet raw` (input, priority -10), `ip6 six`.
        let json = fixture("nft-two-tables.json");
        let text = fixture("nft-two-tables.txt");
        let imp = import_nft_listing("two.nft", &json, &text, Ip::V4).unwrap();
        let v: serde_json::Value = serde_json::from_str(&imp.text).unwrap();
        let batch = v["nftables"].as_array().unwrap();
        let chain = |n: &str| {
            batch
                .iter()
                .find(|c| c["add"]["chain"]["name"] == n)
                .unwrap_or_else(|| panic!("no chain {n}: {}", imp.text))["add"]["chain"]
                .clone()
        };
        assert_eq!(
            (
                chain("ip-filter-input")["hook"].as_str(),
                chain("ip-filter-input")["prio"].as_i64()
            ),
            (Some("input"), Some(10))
        );
        assert_eq!(chain("inet-raw-input")["prio"], -10);
        assert!(chain("ip-filter-svc").get("hook").is_none());
        // References follow the names: the set, the jump target.
        assert!(
            imp.text.contains(r#""right":"@ip-filter-blocked""#),
            "{}",
            imp.text
        );
        assert!(
            imp.text.contains(r#""target":"ip-filter-svc""#),
            "{}",
            imp.text
        );
        assert!(batch
            .iter()
            .any(|c| c["add"]["set"]["name"] == "ip-filter-blocked"));
        // The IPv6 table is left out of an IPv4 trial; both others are listed.
        assert!(imp
            .notes
            .iter()
            .any(|n| n.contains("table ip6 six left out")));
        assert!(imp
            .notes
            .iter()
            .any(|n| n.starts_with("2 tables (ip filter, inet raw)")));
        let users: Vec<(&str, usize)> = imp
            .rule_list
            .iter()
            .map(|r| (r.user_chain.as_str(), r.index))
            .collect();
        assert_eq!(
            users,
            [
                ("ip/filter/input", 1),
                ("ip/filter/input", 2),
                ("ip/filter/input", 3),
                ("ip/filter/svc", 1),
                ("inet/raw/input", 1),
                ("inet/raw/input", 2),
            ]
        );
        assert_eq!(imp.rule_list[1].verdict, "jump ip-filter-svc");
        assert_eq!(
            imp.rule_list[4].text,
            "udp dport 5000 counter packets 0 bytes 0"
        );
        assert_eq!(
            imp.chains[0],
            ("ip/filter/input".to_owned(), "ip-filter-input".to_owned())
        );
        // An IPv6 trial: inet raw and ip6 six, the latter's drop policy counted.
        let imp = import_nft_listing("two.nft", &json, &text, Ip::V6).unwrap();
        let last = imp.rule_list.last().unwrap();
        assert!(
            last.policy && last.user_chain == "ip6/six/input",
            "{last:?}"
        );
        assert_eq!(last.chain, "ip6-six-input");
    }

    #[test]
    fn nft_refusals_name_the_file() {
        assert_eq!(
            check_nft_text(
                "f",
                "table inet a {\n  comment \"x\" # include \"/etc/x\"\n}\n"
            )
            .unwrap_err()
            .to_string(),
            "f:2: `include` is refused (an imported ruleset must be self-contained; the word \
             is refused in comments and strings too)"
        );
        assert!(check_nft_text("f", "table inet a {\n}\n").is_ok());
        assert!(refused_messages("f", &[16, 2560, 2563, 2566, 17]).is_ok());
        assert!(refused_messages("f", &[])
            .unwrap_err()
            .to_string()
            .contains("no trace"));
        let e = refused_messages("f", &[16, 2562, 2560, 17])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("f: refused: the file deletes or flushes a table"),
            "{e}"
        );
        assert!(refused_messages("f", &[2581])
            .unwrap_err()
            .to_string()
            .contains("resets"));
        let none = r#"{"nftables": [{"table": {"family": "ip6", "name": "c", "handle": 3}}]}"#;
        assert_eq!(
            import_nft_listing("f", none, "", Ip::V4)
                .unwrap_err()
                .to_string(),
            "f: no table of family inet or ip to import"
        );
        let xt = r#"{"nftables": [{"table": {"family": "ip", "name": "filter", "handle": 1}},
            {"rule": {"family": "ip", "table": "filter", "chain": "INPUT", "handle": 4,
              "expr": [{"xt": {"type": "match", "name": "recent"}}, {"accept": null}]}}]}"#;
        assert!(import_nft_listing("f", xt, "", Ip::V4)
            .unwrap_err()
            .to_string()
            .contains("iptables extension (recent)"));
    }

    /// The ipset file `advise --out` writes next to a blocklist it merged, and a
    /// list set of two sets.
    const SETS: &str = "create blocklist hash:net family inet hashsize 1024 maxelem 65536\n\
                        add blocklist 203.0.113.1\n\
                        add blocklist 198.51.100.0/24\n\
                        create blocklist-of-the-whole-network hash:ip family inet\n\
                        add blocklist-of-the-whole-network 192.0.2.7\n\
                        create both list:set size 8\n\
                        add both blocklist\n";

    #[test]
    fn an_ipset_file_is_renamed_into_fwbenchs_own_sets() {
        let s = import_ipset("rules.ipset", SETS, Ip::V4).unwrap();
        let long = s.names[1].1.clone();
        assert_eq!(long.len(), 31, "{long}");
        assert!(long.starts_with("fwbench-i-blocklist-of-t~"), "{long}");
        assert_eq!(
            s.names,
            [
                ("blocklist".to_owned(), "fwbench-i-blocklist".to_owned()),
                ("blocklist-of-the-whole-network".to_owned(), long.clone()),
                ("both".to_owned(), "fwbench-i-both".to_owned()),
            ]
        );
        assert_eq!(
            s.text,
            format!(
                "create fwbench-i-blocklist hash:net family inet hashsize 1024 maxelem 65536 -exist\n\
                 flush fwbench-i-blocklist\n\
                 add fwbench-i-blocklist 203.0.113.1\n\
                 add fwbench-i-blocklist 198.51.100.0/24\n\
                 create {long} hash:ip family inet -exist\nflush {long}\n\
                 add {long} 192.0.2.7\n\
                 create fwbench-i-both list:set size 8 -exist\nflush fwbench-i-both\n\
                 add fwbench-i-both fwbench-i-blocklist\n"
            )
        );
        // The rules match fwbench's copies; the elements are counted.
        let rules = "*filter\n:INPUT DROP [0:0]\n\
                     -A INPUT -m set --match-set blocklist src -j DROP\n\
                     -A INPUT -m set ! --match-set both src,dst -j SET --add-set blocklist src\n\
                     COMMIT\n";
        let imp = import_with_sets("rules.v4", rules, Ip::V4, &s).unwrap();
        assert!(imp
            .text
            .contains("-A FWBENCH-INPUT -m set --match-set fwbench-i-blocklist src -j DROP\n"));
        assert!(imp.text.contains(
            "-m set ! --match-set fwbench-i-both src,dst -j SET --add-set fwbench-i-blocklist src\n"
        ));
        assert_eq!((imp.rules, imp.elements), (3, 4));
        assert_eq!(imp.sets.as_ref(), Some(&s));
        assert!(imp
            .notes
            .iter()
            .any(|n| n.contains("blocklist → fwbench-i-blocklist")));
        // Without the ipset file the names stay as the file has them.
        let plain = import("rules.v4", rules, Ip::V4).unwrap();
        assert!(plain.text.contains("--match-set blocklist src"));
        assert_eq!((plain.elements, plain.sets), (0, None));
    }

    #[test]
    fn ipset_files_that_do_more_than_create_and_fill_sets_are_refused() {
        let e = |text: &str, ip| import_ipset("s.ipset", text, ip).unwrap_err().to_string();
        for (text, says) in [
            (
                "create s hash:ip\ndestroy s\n",
                "s.ipset:2: `destroy` refused",
            ),
            ("flush\n", "s.ipset:1: `flush` refused"),
            ("create s hash:ip\nswap s t\n", "s.ipset:2: `swap` refused"),
            (
                "add s 203.0.113.1\n",
                "s.ipset:1: add to set s, which the file does not create",
            ),
            (
                "create s hash:ip\ncreate s hash:ip\n",
                "s.ipset:2: set s created twice",
            ),
            (
                "create s hash:ip -exist\n",
                "s.ipset:1: set s: options of `ipset save` output only",
            ),
            (
                "create s foo:bar\n",
                "s.ipset:1: set s: type `foo:bar` not understood",
            ),
            (
                "create s hash:ip family inet6\n",
                "s.ipset:1: set s is of family inet6, the trial is IPv4",
            ),
            (
                "create s\0x hash:ip\n",
                "s.ipset:1: control character U+0000",
            ),
            ("# nothing\n", "s.ipset: creates no set"),
        ] {
            assert!(
                e(text, Ip::V4).starts_with(says),
                "{text:?}: {}",
                e(text, Ip::V4)
            );
        }
        assert!(e("create s hash:ip\n", Ip::V6).contains("is of family inet, the trial is IPv6"));
        // A rule matching a set the file does not create: refused with its line.
        let sets = import_ipset("s.ipset", "create s hash:ip\n", Ip::V4).unwrap();
        let e = import_with_sets(
            "r.v4",
            "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m set --match-set other src -j DROP\nCOMMIT\n",
            Ip::V4,
            &sets,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "r.v4:3: --match-set other: s.ipset creates no set other");
        assert!(
            import_with_sets("r.nft", "table inet x {\n}\n", Ip::V4, &sets)
                .unwrap_err()
                .to_string()
                .contains("goes with an `iptables-save` file")
        );
    }
}
