//! What is wrong with a testbed file: [`TestbedFileError`], each naming the file, where
//! in it (`file:line:col`, 1-based, as `crate::textpos` gives for scenario files) and
//! the field, and [`Source`], which turns a `toml` span into that position.
//!
//! Owns: the error type of parsing a testbed file (a value of the file is quoted in
//! one with [`crate::testbed::bounded::shown`]: cut, escaped). Must not: decide an
//! exit code ([`super::load`] makes every one a usage error, exit 2).

use std::ops::Range;

/// Why a testbed file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TestbedFileError {
    /// A value (or a table) at a place in the file.
    #[error("{file}:{line}:{col}: {field}: {why}")]
    At {
        file: String,
        line: usize,
        col: usize,
        field: String,
        why: String,
    },
    /// A table every testbed file has is not there.
    #[error("{file}: [{table}] is missing")]
    Missing { file: String, table: &'static str },
    /// The TOML parser refused the text at no known place.
    #[error("{file}: {why}")]
    Syntax { file: String, why: String },
    /// An `ssh` launcher's connection sharing could not be set up (its private
    /// directory for control sockets).
    #[error("{0}")]
    SshOptions(String),
}

/// The file being parsed: its name and text, for errors about spans of it.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// `file:line:col: field: why` for the span's start.
    pub fn at(
        &self,
        span: Range<usize>,
        field: &str,
        why: impl std::fmt::Display,
    ) -> TestbedFileError {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
        TestbedFileError::At {
            file: self.file.to_string(),
            line,
            col,
            field: field.to_string(),
            why: why.to_string(),
        }
    }

    /// `file: [table] is missing`.
    pub fn missing(&self, table: &'static str) -> TestbedFileError {
        TestbedFileError::Missing {
            file: self.file.to_string(),
            table,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::textpos::Ctx;

    #[test]
    fn positions_are_those_of_scenario_files() {
        let text = "a = 1\nbb = 2\n\n  c = 3\n";
        let src = Source {
            file: "f.toml",
            text,
        };
        let cx = Ctx {
            file: "f.toml",
            text,
        };
        for span in [0..1, 6..8, 11..12, 13..14, 17..18, 99..100] {
            assert_eq!(
                src.at(span.clone(), "x", "why").to_string(),
                cx.at(span, "x", "why")
            );
        }
    }
}
