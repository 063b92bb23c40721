//! An ipset file (`ipset save` output) for an `iptables-save` import: its sets
//! renamed into fwbench's own (`fwbench-i-NAME`), created with `-exist` and flushed,
//! filled with the file's elements. Linear in the file: sets are found by name in a
//! hash map.
//!
//! Must not: accept any command but `create` and `add`; name a set that is not
//! fwbench's in what it writes.

use super::names::fit_name;
use super::{check_size, control_char, file_error, ImportError};
use crate::model::{ImportedSets, Ip};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

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
    let mut r = SetReader {
        ip,
        names: vec![],
        ours: HashMap::new(),
        taken: HashSet::new(),
        list_sets: HashSet::new(),
        out: String::with_capacity(text.len() + 1024),
        elements: 0,
    };
    for (n, raw) in text.lines().enumerate() {
        r.line(raw).map_err(|why| ImportError::Line {
            file: source.to_owned(),
            line: n + 1,
            why: why.0,
        })?;
    }
    if r.names.is_empty() {
        return file_error(
            source,
            "creates no set (`ipset save` output expected)".into(),
        );
    }
    Ok(ImportedSets {
        source: source.to_owned(),
        text: r.out,
        names: r.names,
    })
}

/// Why a line of an ipset file is refused (the caller adds file and line).
struct Refused(String);

/// The ipset file being read.
struct SetReader {
    ip: Ip,
    /// (the file's name, fwbench's) of each set, in the file's order.
    names: Vec<(String, String)>,
    /// fwbench's name by the file's, and the names given.
    ours: HashMap<String, String>,
    taken: HashSet<String>,
    /// The file's names of its `list:set` sets.
    list_sets: HashSet<String>,
    out: String,
    elements: usize,
}

impl SetReader {
    fn line(&mut self, raw: &str) -> Result<(), Refused> {
        if let Some(why) = control_char(raw, "ipset save") {
            return Err(Refused(why));
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let mut w = line.split_whitespace();
        let (cmd, name) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
        // The rest of the line after the name, verbatim.
        let after = line
            .find(name)
            .map_or("", |at| line[at + name.len()..].trim_start());
        match cmd {
            "create" => self.create(name, after),
            "add" => self.add(name, after),
            other => Err(Refused(format!(
                "`{other}` refused: an ipset file for an import only creates sets and \
                 adds elements (`ipset save` output)"
            ))),
        }
    }

    /// `create NAME TYPE OPTIONS…`
    fn create(&mut self, name: &str, after: &str) -> Result<(), Refused> {
        let refuse = |why: String| Err(Refused(why));
        if name.is_empty()
            || name.len() > MAX_SET_NAME
            || name.starts_with('-')
            || name.contains('"')
        {
            return refuse(format!("set name `{name}` not understood"));
        }
        if self.ours.contains_key(name) {
            return refuse(format!("set {name} created twice"));
        }
        let mut opts = after.split_whitespace();
        let kind = opts.next().unwrap_or("");
        if !(kind.starts_with("hash:") || kind.starts_with("bitmap:") || kind == "list:set") {
            return refuse(format!("set {name}: type `{kind}` not understood"));
        }
        let words: Vec<&str> = opts.collect();
        let family = words.windows(2).find(|p| p[0] == "family").map(|p| p[1]);
        let ip = self.ip;
        let want = match ip {
            Ip::V4 => "inet",
            Ip::V6 => "inet6",
        };
        if family.is_some_and(|f| f != want)
            || (family.is_none() && ip == Ip::V6 && kind.starts_with("hash:"))
        {
            return refuse(format!(
                "set {name} is of family {}, the trial is IPv{}",
                family.unwrap_or("inet"),
                if ip == Ip::V6 { 6 } else { 4 }
            ));
        }
        if words.contains(&"-exist") || words.contains(&"-!") {
            return refuse(format!("set {name}: options of `ipset save` output only"));
        }
        let renamed = fit_name(
            format!("{IMPORTED_SET_PREFIX}{name}"),
            name,
            MAX_SET_NAME,
            |c| self.taken.contains(c),
        );
        let _ = writeln!(self.out, "create {renamed} {after} -exist");
        let _ = writeln!(self.out, "flush {renamed}");
        if kind == "list:set" {
            self.list_sets.insert(name.to_owned());
        }
        self.taken.insert(renamed.clone());
        self.ours.insert(name.to_owned(), renamed.clone());
        self.names.push((name.to_owned(), renamed));
        Ok(())
    }

    /// `add NAME ELEMENT…`; a list set's element is a set created before it.
    fn add(&mut self, name: &str, after: &str) -> Result<(), Refused> {
        let Some(set) = self.ours.get(name) else {
            return Err(Refused(format!(
                "add to set {name}, which the file does not create"
            )));
        };
        self.elements += 1;
        if self.elements > MAX_SET_ELEMENTS {
            return Err(Refused(format!(
                "more than {MAX_SET_ELEMENTS} elements; fwbench imports at most \
                 {MAX_SET_ELEMENTS}"
            )));
        }
        let mut element = after.to_owned();
        if self.list_sets.contains(name) {
            let member = after.split_whitespace().next().unwrap_or("");
            let Some(m) = self.ours.get(member) else {
                return Err(Refused(format!(
                    "list set {name}: member {member} is not created before it"
                )));
            };
            element = format!("{m}{}", &after[member.len()..]);
        }
        let _ = writeln!(self.out, "add {set} {element}");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{import, import_with_sets};
    use super::*;

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
        // Two rules and INPUT's DROP policy (a jump and a counted drop).
        assert_eq!((imp.rules, imp.elements), (4, 4));
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
