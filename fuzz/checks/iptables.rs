//! What the iptables-save importer fuzz target checks (also run by firewall's
//! fuzz-smoke test): any text the importer takes for `iptables-save` output is imported
//! or refused without a panic, and an import only ever names fwbench's own chains.
//! (The nft importer goes through `nft` itself and is not fuzzed here.)

use firewall::import::{detect, import};
use firewall::model::{ImportFormat, Ip};

pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if detect(&text) != Some(ImportFormat::IptablesSave) {
        return;
    }
    for ip in [Ip::V4, Ip::V6] {
        let Ok(imp) = import("fuzz.rules", &text, ip) else {
            continue;
        };
        for line in imp.text.lines() {
            let chain = if let Some(rest) = line.strip_prefix(':') {
                rest.split_whitespace().next()
            } else if let Some(rest) = line.strip_prefix("-A ") {
                rest.split_whitespace().next()
            } else {
                continue;
            };
            let chain = chain.unwrap_or("");
            assert!(
                chain.starts_with("FWBENCH"),
                "imported text names a chain that is not fwbench's: {line:?}"
            );
        }
    }
}
