//! Where in a text file a value stands: byte spans (as `toml::Spanned` gives them) →
//! `file:line:column` messages, for scenario and testbed files alike.

/// A file's name and text, for messages about spans of it.
pub struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

/// A message about a value of a file, where it stands: `file:line:col: field: msg`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {field}: {msg}")]
pub struct Located {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in bytes.
    pub col: usize,
    /// The field as written (`params.rate`, `case[2].label`).
    pub field: String,
    pub msg: String,
}

/// For callers that carry messages as text.
impl From<Located> for String {
    fn from(e: Located) -> String {
        e.to_string()
    }
}

impl Ctx<'_> {
    /// `file:line:col: field: msg` for the span's start (1-based line and column).
    pub fn at(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        msg: impl std::fmt::Display,
    ) -> String {
        self.locate(span, field, msg).to_string()
    }

    /// The span's start (1-based line and column) with the field and the message.
    pub fn locate(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        msg: impl std::fmt::Display,
    ) -> Located {
        let before = self
            .text
            .get(..span.start.min(self.text.len()))
            .unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
        Located {
            file: self.file.to_string(),
            line,
            col,
            field: field.to_string(),
            msg: msg.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_of_a_span() {
        let cx = Ctx {
            file: "f.toml",
            text: "a = 1\nbb = 2\n",
        };
        assert_eq!(cx.at(11..12, "bb", "bad"), "f.toml:2:6: bb: bad");
        assert_eq!(cx.at(0..1, "a", "x"), "f.toml:1:1: a: x");
    }
}
