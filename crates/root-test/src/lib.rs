//! `#[root_test]`: the shape of fwbench's privileged integration tests, written once.
//!
//! Owns: turning `fn name() { … }` into a `#[test]` that is ignored without root (run
//! with `--include-ignored`, as `scripts/test.sh` does as root) and, when asked, takes
//! the binary's serial lock and brings up a testbed of its own before the body runs.
//! Must not: run anything itself, or know more of the test harness than the names of
//! `util::serial` and `util::TestbedGuard` in the test binary that uses it.
//!
//! ```text
//! #[root_test]                                   // privileged, the body as it is
//! #[root_test(tb = "forward")]                   // `tb`: a forward testbed of its own
//! #[root_test(serial, tb = "input")]             // one at a time, then the testbed
//! #[root_test(needs = "network namespaces and sshd")]  // the ignore reason's words
//! fn name() { … }
//! ```
//!
//! The testbed is a `util::TestbedGuard`: taken down when the test ends, also on
//! panic. The serial lock is taken before the testbed is made and released after it is
//! gone (locals drop in reverse order). Hand-written on `proc_macro` alone: no crate
//! adds an ignore reason and a fixture in one attribute (rstest's fixtures do not
//! ignore, test-with decides at build time), and the tokens it reads are three.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

const NEEDS: &str = "network namespaces";

/// See the crate's header.
#[proc_macro_attribute]
pub fn root_test(args: TokenStream, item: TokenStream) -> TokenStream {
    match expand(args, item) {
        Ok(t) => t,
        Err((span, msg)) => error(span, &msg),
    }
}

struct Args {
    serial: bool,
    needs: String,
    /// `(name, topology)`: `let name = TestbedGuard::up("topology");`
    testbeds: Vec<(Ident, Literal)>,
}

fn parse_args(args: TokenStream) -> Result<Args, (Span, String)> {
    let mut a = Args {
        serial: false,
        needs: NEEDS.to_string(),
        testbeds: Vec::new(),
    };
    let mut it = args.into_iter().peekable();
    while let Some(t) = it.next() {
        let TokenTree::Ident(name) = t else {
            return Err((t.span(), format!("root_test: expected `serial`, `needs = \"…\"` or `NAME = \"topology\"`, found `{t}`")));
        };
        if name.to_string() == "serial" {
            a.serial = true;
        } else {
            match (it.next(), it.next()) {
                (Some(TokenTree::Punct(p)), Some(TokenTree::Literal(l))) if p.as_char() == '=' => {
                    if name.to_string() == "needs" {
                        a.needs = unquote(&l).ok_or((
                            l.span(),
                            "root_test: needs takes a plain string".to_string(),
                        ))?;
                    } else {
                        a.testbeds.push((name, l));
                    }
                }
                _ => return Err((name.span(), format!("root_test: `{name}` wants `= \"…\"`"))),
            }
        }
        match it.next() {
            None => break,
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
            Some(t) => return Err((t.span(), format!("root_test: expected `,`, found `{t}`"))),
        }
    }
    Ok(a)
}

/// The text of a plain string literal (`"…"`, no escapes needed for an ignore reason).
fn unquote(l: &Literal) -> Option<String> {
    let s = l.to_string();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains(['\\', '"'])).then(|| inner.to_string())
}

fn expand(args: TokenStream, item: TokenStream) -> Result<TokenStream, (Span, String)> {
    let a = parse_args(args)?;
    let mut setup = String::new();
    if a.serial {
        setup += "let _serial = crate::util::serial();";
    }
    for (name, topology) in &a.testbeds {
        setup += &format!("let {name} = crate::util::TestbedGuard::up({topology});");
    }
    let setup: TokenStream = setup.parse().expect("the setup is Rust");
    // The body is the item's last token: `fn name() { … }`.
    let mut tokens: Vec<TokenTree> = item.into_iter().collect();
    match tokens.last_mut() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
            let mut body = setup;
            body.extend(g.stream());
            let mut new = Group::new(Delimiter::Brace, body);
            new.set_span(g.span());
            *g = new;
        }
        _ => {
            return Err((
                Span::call_site(),
                "root_test goes on `fn name() { … }`".into(),
            ))
        }
    }
    let attrs = format!(
        "#[test] #[ignore = \"needs root: {} (run with --include-ignored as root)\"]",
        a.needs
    );
    let mut out: TokenStream = attrs.parse().expect("the attributes are Rust");
    out.extend(tokens);
    Ok(out)
}

fn error(span: Span, msg: &str) -> TokenStream {
    let mut lit = Literal::string(msg);
    lit.set_span(span);
    let mut bang = Punct::new('!', Spacing::Alone);
    bang.set_span(span);
    [
        TokenTree::Ident(Ident::new("compile_error", span)),
        TokenTree::Punct(bang),
        TokenTree::Group(Group::new(
            Delimiter::Parenthesis,
            TokenTree::Literal(lit).into(),
        )),
        TokenTree::Punct(Punct::new(';', Spacing::Alone)),
    ]
    .into_iter()
    .collect()
}
