//! One `-A CHAIN …` rule of an `iptables-save` file: split into words, its options
//! read as iptables' getopt reads them, its jump targets and sets renamed into
//! fwbench's names, its addresses checked against the trial's IP version, and its
//! match fields kept for aiming (`--aim`).
//!
//! Must not: know about sections, declarations or the file's other lines (the
//! `iptables` module gives it the chain names it may jump to).

use super::ImportError;
use crate::model::{AimFields, ImportedRule, ImportedSets, Ip};
use std::collections::HashMap;

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

/// fwbench's copies of the sets an ipset file creates, by the file's name.
pub(super) struct SetNames<'a> {
    /// The ipset file, for messages.
    source: &'a str,
    ours: HashMap<&'a str, &'a str>,
}

impl<'a> SetNames<'a> {
    pub(super) fn new(sets: &'a ImportedSets) -> Self {
        let ours = sets
            .names
            .iter()
            .map(|(n, o)| (n.as_str(), o.as_str()))
            .collect();
        SetNames {
            source: &sets.source,
            ours,
        }
    }
}

/// What a rule's options are checked against and renamed by.
pub(super) struct RuleContext<'a> {
    /// The trial's IP version: every address must be of it.
    pub ip: Ip,
    /// With an ipset file, the sets its rules may name (without one, a set's name
    /// stays: the rule matches a set of the host, which the engine's check looks for).
    pub sets: Option<&'a SetNames<'a>>,
    /// fwbench's name of a chain of the rule's table, by the file's name (`None`: not
    /// a chain, so a target such as `ACCEPT` or `LOG`).
    pub chain: &'a dyn Fn(&str) -> Option<&'a str>,
}

/// One option of a rule with its value, as iptables' getopt reads the words.
struct OptValue<'a> {
    opt: &'a str,
    value: &'a str,
    /// Where the value starts and ends in the rule's text.
    value_at: usize,
    end: usize,
    /// After a `!`.
    negated: bool,
}

/// The options of a rule that have a value: `--opt=value` is one word to iptables'
/// getopt; a word starting with `-` after an option without a value is the next
/// option.
fn options<'a>(rest: &'a str, ws: &[(usize, usize)]) -> Vec<OptValue<'a>> {
    let mut out = vec![];
    let mut pending: Option<&str> = None;
    let mut negated = false;
    for &(a, b) in ws {
        let w = &rest[a..b];
        if w == "!" {
            negated = true;
            continue;
        }
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
        out.push(OptValue {
            opt,
            value,
            value_at,
            end: value_at + value.len(),
            negated,
        });
        negated = false;
    }
    out
}

/// The rule's text being rewritten: the original copied up to `last`, names replaced.
struct Rewrite<'a> {
    rest: &'a str,
    new: String,
    last: usize,
}

impl Rewrite<'_> {
    /// Copy up to `at`, then `with` instead of the text up to `end`.
    fn replace(&mut self, at: usize, end: usize, with: &str) {
        self.new.push_str(&self.rest[self.last..at]);
        self.new.push_str(with);
        self.last = end;
    }

    fn finish(mut self) -> String {
        self.new.push_str(&self.rest[self.last..]);
        self.new
    }
}

/// Why an address option's value is not of the trial's IP version (`None`: it is).
fn family_mismatch(value: &str, ip: Ip) -> Option<String> {
    let version = |v6: bool| if v6 { 6 } else { 4 };
    value.split(',').find_map(|one| {
        // An IPv6 address always has a colon, an IPv4 one never.
        let v6 = one.contains(':');
        (v6 != (ip == Ip::V6)).then(|| {
            format!(
                "address {one} is IPv{} but the trial is IPv{}",
                version(v6),
                version(ip == Ip::V6)
            )
        })
    })
}

/// Rewrite one rule (`rest`: the line after `-A `, `ws`: its words, the first the
/// chain) into fwbench's names: `-A` and `rule.chain`, jump targets and sets renamed;
/// `rule` gets the verdict and the match fields. `err` makes the error at the rule's
/// line from why the rule is refused.
pub(super) fn rewrite_rule(
    rest: &str,
    ws: &[(usize, usize)],
    rule: &mut ImportedRule,
    cx: &RuleContext<'_>,
    err: impl Fn(String) -> ImportError,
) -> Result<String, ImportError> {
    let mut new = Rewrite {
        rest,
        new: format!("-A {}", rule.chain),
        last: ws[0].1,
    };
    for o in options(rest, &ws[1..]) {
        let (opt, value) = (o.opt, o.value);
        match ipt_option(opt) {
            Opt::Jump => {
                rule.verdict = match (cx.chain)(value) {
                    Some(target) => {
                        new.replace(o.value_at, o.end, target);
                        format!("jump {value}")
                    }
                    None => value.to_ascii_lowercase(),
                };
            }
            Opt::Addr(dst) => {
                if let Some(why) = family_mismatch(value, cx.ip) {
                    return Err(err(why));
                }
                let first = value.split(',').next().unwrap_or(value).to_owned();
                aim_field(&mut rule.aim, o.negated, opt, |a| {
                    if dst {
                        a.dst = Some(first)
                    } else {
                        a.src = Some(first)
                    }
                });
            }
            Opt::Proto => aim_field(&mut rule.aim, o.negated, opt, |a| {
                a.l4 = Some(value.to_ascii_lowercase())
            }),
            Opt::Port(dst) => {
                let range = ipt_ports(value);
                aim_field(&mut rule.aim, o.negated, opt, |a| match range {
                    Some(r) if dst => a.dport = Some(r),
                    Some(r) => a.sport = Some(r),
                    None => a.unaimable = Some(format!("port {value} not understood")),
                });
            }
            Opt::Set => {
                if let Some(sets) = cx.sets {
                    let Some(ours) = sets.ours.get(value) else {
                        return Err(err(format!(
                            "{opt} {value}: {} creates no set {value}",
                            sets.source
                        )));
                    };
                    new.replace(o.value_at, o.end, ours);
                }
            }
            Opt::Other => {}
        }
    }
    Ok(new.finish())
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

#[cfg(test)]
mod tests {
    use super::super::import;
    use super::*;

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
    fn words_honour_quotes_and_options_their_getopt_spellings() {
        let s = r#"-m comment --comment "a \" b" -j X"#;
        let w: Vec<&str> = words(s).unwrap().iter().map(|&(a, b)| &s[a..b]).collect();
        assert_eq!(w, ["-m", "comment", "--comment", r#""a \" b""#, "-j", "X"]);
        assert_eq!(words("-s \"x"), Err("unterminated quote"));
        let rest = "X ! -s 198.18.0.1 --dport=80 -f -j Y";
        let o: Vec<(&str, &str, bool)> = options(rest, &words(rest).unwrap()[1..])
            .iter()
            .map(|o| (o.opt, o.value, o.negated))
            .collect();
        assert_eq!(
            o,
            [
                ("-s", "198.18.0.1", true),
                ("--dport", "80", false),
                ("-j", "Y", false)
            ]
        );
    }
}
