//! Where in a text file a value stands: byte spans (as `toml::Spanned` gives them) →
//! `file:line:column` messages, for scenario and testbed files alike.

/// A file's name and text, for messages about spans of it.
pub struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Ctx<'_> {
    /// `file:line:col: field: msg` for the span's start (1-based line and column).
    pub fn at(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        msg: impl std::fmt::Display,
    ) -> String {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
        format!("{}:{line}:{col}: {field}: {msg}", self.file)
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
