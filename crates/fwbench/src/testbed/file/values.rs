//! The values of a testbed file, each checked where it is read: lists of strings,
//! addresses (in the benchmarking ranges only), launchers, interface names, the
//! testbed's name — with the bounds on their lengths (see docs/limits.md).
//!
//! Owns: turning one spanned TOML value into a typed one or a [`TestbedFileError`]
//! naming its place and field. Must not: know which role or table a value belongs to
//! beyond the field name it is given.

use super::error::{Source, TestbedFileError};
use crate::testbed::bounded::shown;
use crate::testbed::launcher::Launcher;
use crate::testbed::remote::{self, Remote};
use std::net::IpAddr;
use toml::Spanned;

/// Most words of a launcher (`ssh` with its options is a dozen).
pub const MAX_LAUNCHER_WORDS: usize = 64;

/// Longest word of a launcher, in bytes: a path (`PATH_MAX`), a host, an option.
pub const MAX_WORD_LEN: usize = 4096;

/// Longest testbed `name`, in bytes (it names the testbed's lock file, and runs).
pub const MAX_NAME_LEN: usize = 64;

/// A launcher's words: at most [`MAX_LAUNCHER_WORDS`] of at most [`MAX_WORD_LEN`]
/// bytes, no NUL (no program could get it as an argument).
fn check_words(
    src: &Source,
    v: &Spanned<toml::Value>,
    field: &str,
    argv: &[String],
) -> Result<(), TestbedFileError> {
    if argv.len() > MAX_LAUNCHER_WORDS {
        return Err(src.at(
            v.span(),
            field,
            format!("{} words: at most {MAX_LAUNCHER_WORDS}", argv.len()),
        ));
    }
    for (i, w) in argv.iter().enumerate() {
        let why = if w.len() > MAX_WORD_LEN {
            format!("{} bytes: at most {MAX_WORD_LEN} per word", w.len())
        } else if w.contains('\0') {
            "a NUL character (no program can take it as an argument)".to_string()
        } else {
            continue;
        };
        return Err(src.at(
            v.span(),
            field,
            format!("word {} ('{}'): {why}", i + 1, shown(w)),
        ));
    }
    Ok(())
}

/// A testbed's `name`: at most [`MAX_NAME_LEN`] bytes, no control characters.
pub fn check_name(src: &Source, n: &Spanned<String>) -> Result<String, TestbedFileError> {
    let s = n.get_ref();
    if s.is_empty() || s.len() > MAX_NAME_LEN || s.chars().any(char::is_control) {
        return Err(src.at(
            n.span(),
            "name",
            format!(
                "'{}': 1 to {MAX_NAME_LEN} bytes, no control characters",
                shown(s)
            ),
        ));
    }
    Ok(s.clone())
}

/// A string or a list of strings.
pub fn strings(
    src: &Source,
    v: &Spanned<toml::Value>,
    field: &str,
    one_ok: bool,
) -> Result<Vec<String>, TestbedFileError> {
    let bad = || {
        src.at(
            v.span(),
            field,
            if one_ok {
                "expected a string or a list of strings"
            } else {
                "expected a list of strings"
            },
        )
    };
    match v.get_ref() {
        toml::Value::String(s) if one_ok => Ok(vec![s.clone()]),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned).ok_or_else(bad))
            .collect(),
        _ => Err(bad()),
    }
}

/// Addresses in the benchmarking ranges only (198.18.0.0/15, 2001:2::/48).
pub fn bench_addr(
    src: &Source,
    v: &Spanned<toml::Value>,
    field: &str,
    s: &str,
) -> Result<IpAddr, TestbedFileError> {
    let a: IpAddr = s.parse().map_err(|_| {
        src.at(
            v.span(),
            field,
            format!("'{}' is not an IP address", shown(s)),
        )
    })?;
    let ok = match a {
        IpAddr::V4(v4) => {
            (u32::from(v4) >> 17) == (u32::from(std::net::Ipv4Addr::new(198, 18, 0, 0)) >> 17)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            s[0] == 0x2001 && s[1] == 2 && s[2] == 0
        }
    };
    if !ok {
        return Err(src.at(
            v.span(),
            field,
            format!("{a}: test traffic uses 198.18.0.0/15 or 2001:2::/48 only"),
        ));
    }
    Ok(a)
}

pub fn addrs(
    src: &Source,
    v: &Spanned<toml::Value>,
    field: &str,
    one_ok: bool,
) -> Result<Vec<IpAddr>, TestbedFileError> {
    strings(src, v, field, one_ok)?
        .iter()
        .map(|s| bench_addr(src, v, field, s))
        .collect()
}

pub fn one_per_family(
    src: &Source,
    v: &Spanned<toml::Value>,
    field: &str,
    a: &[IpAddr],
) -> Result<(), TestbedFileError> {
    let v4 = a.iter().filter(|x| x.is_ipv4()).count();
    if v4 > 1 || a.len() - v4 > 1 || a.is_empty() {
        return Err(src.at(v.span(), field, "one address per family (IPv4, IPv6)"));
    }
    Ok(())
}

pub fn launcher(
    src: &Source,
    role: &str,
    v: &Spanned<toml::Value>,
    cache: &str,
    timeout: std::time::Duration,
) -> Result<Launcher, TestbedFileError> {
    let field = format!("{role}.launcher");
    let argv = match v.get_ref() {
        toml::Value::String(s) if s == "local" => vec!["env".to_string()],
        toml::Value::String(s) => {
            return Err(src.at(
                v.span(),
                &field,
                format!(
                    "'{}': \"local\" or an argv list, e.g. [\"ssh\", \"root@host\"]",
                    shown(s)
                ),
            ))
        }
        _ => strings(src, v, &field, false)?,
    };
    if argv.is_empty() || argv[0].is_empty() {
        return Err(src.at(v.span(), &field, "an empty command prefix"));
    }
    check_words(src, v, &field, &argv)?;
    let local = argv == ["env"];
    let netns = argv.len() == 4 && argv[..3] == ["ip", "netns", "exec"];
    let (host, place) = if local {
        ("localhost".to_string(), "local".to_string())
    } else if netns {
        (argv[3].clone(), format!("netns {}", argv[3]))
    } else {
        // ssh's destination is its last word; for other prefixes, the whole line.
        let host = if remote::is_ssh(&argv) {
            argv.last().cloned().unwrap_or_default()
        } else {
            argv.join(" ")
        };
        (host, argv.join(" "))
    };
    let remote = (!local && !netns).then(|| Remote {
        cache_dir: cache.to_string(),
        timeout,
    });
    let prefix = remote::with_ssh_options(argv)
        .map_err(|e| TestbedFileError::SshOptions(format!("{e:#}")))?;
    Ok(Launcher {
        prefix,
        host,
        place,
        remote,
        timeout,
    })
}

pub fn check_interface(
    src: &Source,
    s: &Spanned<String>,
    field: &str,
) -> Result<String, TestbedFileError> {
    let n = s.get_ref();
    let ok = !n.is_empty()
        && n.len() < 16
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if !ok {
        return Err(src.at(
            s.span(),
            field,
            format!("'{}' is not an interface name", shown(n)),
        ));
    }
    Ok(n.clone())
}
