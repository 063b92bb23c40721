//! Why a value as written was refused: the one error of the value parsers, shared by
//! clap and scenario files (and the parameter types that parse themselves).

/// Why a value as written was refused. The message names the value and what was
/// expected; it reads the same wherever the value was written (clap prints it after
/// the flag, a scenario after `file:line:col: field:`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// Not the kind of value expected: `'{value}' is not {expected}`.
    #[error("'{value}' is not {expected}")]
    NotA {
        value: String,
        expected: &'static str,
    },
    /// The kind of value, refused: `{what} '{value}' {why}`.
    #[error("{what} '{value}' {why}")]
    Refused {
        what: &'static str,
        value: String,
        why: String,
    },
    /// A refusal its parser phrased whole (a named choice listing the names, a limit
    /// with its numbers).
    #[error("{0}")]
    Other(String),
}

impl ValueError {
    /// `'{value}' is not {expected}`.
    pub fn not_a(value: &str, expected: &'static str) -> ValueError {
        ValueError::NotA {
            value: value.to_string(),
            expected,
        }
    }
    /// `{what} '{value}' {why}`.
    pub fn refused(what: &'static str, value: &str, why: impl Into<String>) -> ValueError {
        ValueError::Refused {
            what,
            value: value.to_string(),
            why: why.into(),
        }
    }
}

impl From<String> for ValueError {
    fn from(s: String) -> ValueError {
        ValueError::Other(s)
    }
}

impl From<&str> for ValueError {
    fn from(s: &str) -> ValueError {
        ValueError::Other(s.to_string())
    }
}

/// For callers that still carry messages as text.
impl From<ValueError> for String {
    fn from(e: ValueError) -> String {
        e.to_string()
    }
}
