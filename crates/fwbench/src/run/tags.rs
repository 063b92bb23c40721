//! `--tag KEY=VALUE`: labels a run is stored with (`run_tags`), so `fwbench trend`
//! can order and group runs by them (`--by tag:KEY`).
//!
//! Owns: the flag and its validation (what the user typed, no syscalls).
//! Must not: store anything (the session and the scenario run pass the tags to
//! `store::NewRun`).

use crate::error::usage;
use anyhow::Result;
use clap::Args;

/// Longest key and value accepted.
pub const MAX_KEY: usize = 64;
pub const MAX_VALUE: usize = 256;

/// The `--tag` flag of every command that stores results.
#[derive(Args, Clone, Debug, Default)]
pub struct TagArgs {
    /// Label the stored run: KEY is [a-z0-9_.-]+ (at most 64), VALUE printable text (at
    /// most 256), e.g. --tag kernel=6.18 --tag commit=abc123; repeatable, each key once.
    /// `fwbench trend --by tag:KEY` orders runs by it
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag, help_heading = "Output")]
    pub tags: Vec<(String, String)>,
}

impl TagArgs {
    /// The tags, each key once (a key given twice is bad input, exit 2).
    pub fn tags(&self) -> Result<Vec<(String, String)>> {
        let mut seen = std::collections::BTreeSet::new();
        for (k, _) in &self.tags {
            if !seen.insert(k) {
                return Err(usage(format!("--tag {k}: given twice (each key once)")));
            }
        }
        Ok(self.tags.clone())
    }
}

/// `KEY=VALUE` → (key, value), or why not (clap names the flag and exits 2).
pub fn parse_tag(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: not KEY=VALUE"))?;
    if k.is_empty() || k.len() > MAX_KEY {
        return Err(format!("key {k:?}: 1 to {MAX_KEY} characters"));
    }
    if let Some(c) = k
        .chars()
        .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '.' | '-'))
    {
        return Err(format!("key {k:?}: {c:?} is not one of a-z 0-9 _ . -"));
    }
    if v.is_empty() || v.chars().count() > MAX_VALUE {
        return Err(format!("value of {k}: 1 to {MAX_VALUE} characters"));
    }
    if v.chars().any(char::is_control) {
        return Err(format!(
            "value of {k}: control characters are not allowed (printable text only)"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_validated() {
        assert_eq!(
            parse_tag("kernel=6.18-rc1 x").unwrap(),
            ("kernel".into(), "6.18-rc1 x".into())
        );
        assert_eq!(parse_tag("a=b=c").unwrap(), ("a".into(), "b=c".into()));
        for bad in [
            "novalue", "=x", "Kernel=1", "k y=1", "k=", "k=a\nb", "k=\u{7}",
        ] {
            assert!(parse_tag(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_tag(&format!("{}=1", "k".repeat(65))).is_err());
        assert!(parse_tag(&format!("k={}", "v".repeat(257))).is_err());
        assert!(parse_tag(&format!("k={}", "v".repeat(256))).is_ok());
        let twice = TagArgs {
            tags: vec![("a".into(), "1".into()), ("a".into(), "2".into())],
        };
        assert!(twice.tags().is_err());
    }
}
