//! What an nft file may not do, checked without and with nft: the word `include`
//! (it could read any file) and control characters (a NUL cuts nft's reading short)
//! are refused in the text; the netlink messages nft sent
//! while loading the file into a scratch namespace may only create objects.
//!
//! Must not: run nft (the caller loads the file and hands over the message types).

use super::{check_size, file_error, ImportError};

/// A refusal that needs no program: `include` could read any file, so the word is
/// refused wherever it appears in the file — inside strings and comments too, since
/// a scanner that disagreed with nft's about where a string ends could otherwise be
/// led past it. (Refused statements such as `flush` are detected from the messages
/// nft sends to the kernel, see [`refused_messages`].)
pub fn check_nft_text(source: &str, text: &str) -> Result<(), ImportError> {
    check_size(source, text)?;
    // Split at LF alone: a CR before it is a byte of the line (nft refuses it).
    for (n, line) in text.split('\n').enumerate() {
        if let Some(why) = refused_byte(line) {
            return Err(ImportError::Line {
                file: source.to_owned(),
                line: n + 1,
                why,
            });
        }
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

/// Why a line of an nft file is refused for a byte in it (`None`: none is). A NUL
/// ends nft's reading of its input: what follows would be ignored here while `nft -f
/// FILE` refuses the file, so the ruleset would not be the host's. Any other control
/// character but tab (CR, escape, DEL, the C1 controls …) nft's scanner refuses
/// outside strings and comments, and `nft list ruleset` never writes one inside them
/// either: refused wherever it is, before nft runs, so it never reaches a terminal in
/// nft's echo of the line. (Other characters nft refuses outside strings — a
/// non-breaking space — are refused by nft's own load, with its `file:line:col`.)
/// The column counts bytes from 1, as nft's do.
fn refused_byte(line: &str) -> Option<String> {
    let (at, c) = line
        .char_indices()
        .find(|&(_, c)| c.is_control() && c != '\t')?;
    let col = at + 1;
    Some(match c {
        '\0' => format!(
            "a NUL byte at column {col}: nft reads its input only up to it (and `nft -f` \
             refuses the file); refused"
        ),
        c => format!(
            "control character U+{:04X} at column {col}: nft refuses it outside strings and \
             `nft list ruleset` never writes one; refused",
            u32::from(c)
        ),
    })
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

#[cfg(test)]
mod tests {
    use super::super::import_nft_listing;
    use super::*;
    use crate::model::Ip;

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
        // A NUL byte cut nft's reading short: the second table was ignored.
        let cut = "table inet a {\n}\n\0table inet b {\n}\n";
        assert_eq!(
            check_nft_text("f", cut).unwrap_err().to_string(),
            "f:3: a NUL byte at column 1: nft reads its input only up to it (and `nft -f` \
             refuses the file); refused"
        );
        // Other control characters, in a string too, with their line and column; a
        // tab is fine, and so is text after a NUL-free line.
        for (text, want) in [
            (
                "table inet a {\n  chain c {\n\tudp dport 1 \u{1}accept\n",
                "f:3: control character U+0001 at column 14",
            ),
            (
                "table inet a {\r\n}\n",
                "f:1: control character U+000D at column 15",
            ),
            (
                "table inet a {\n comment \"\u{1b}[2J\"\n}\n",
                "f:2: control character U+001B at column 11",
            ),
            (
                "table inet a {\n#\u{7f}\n}\n",
                "f:2: control character U+007F at column 2",
            ),
            (
                "table inet a {\n# \u{85}\n}\n",
                "f:2: control character U+0085 at column 3",
            ),
        ] {
            let e = check_nft_text("f", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
            assert!(e.ends_with("nft refuses it outside strings and `nft list ruleset` never writes one; refused"), "{e}");
        }
        assert!(check_nft_text("f", "table inet a {\n\tcomment \"für\"\n}\n").is_ok());
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
}
