//! fwbench's names for what an import creates: chains (`FWBENCH-…`) and sets
//! (`fwbench-i-…`), cut to the kernel's length and made unique with a hash; the
//! built-in chains of each iptables table; the user's name of a chain in messages.
//!
//! Must not: decide what is imported (the readers do), keep state between calls.

/// iptables' longest chain name.
pub(super) const MAX_CHAIN_NAME: usize = 28;

/// The user's name of a chain in messages and `--aim CHAIN:N`: bare in table filter,
/// `table/CHAIN` in the others.
pub(super) fn user_chain(table: &str, chain: &str) -> String {
    if table == "filter" {
        chain.to_owned()
    } else {
        format!("{table}/{chain}")
    }
}

/// Built-in chains of each iptables table (only these are hooked; the only ones with a
/// policy).
pub(crate) fn builtins(table: &str) -> &'static [&'static str] {
    match table {
        "filter" | "security" => &["INPUT", "FORWARD", "OUTPUT"],
        "nat" => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
        "mangle" => &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"],
        "raw" => &["PREROUTING", "OUTPUT"],
        _ => &[],
    }
}

/// FNV-1a, 32 bits: a stable short hash for chain names (no dependency needed for it).
fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// fwbench's name of a chain: `FWBENCH-<CHAIN>` for the filter table's built-ins,
/// `FWBENCH-<TABLE>-<CHAIN>` for other tables' built-ins, `FWBENCH-U-<NAME>` for user
/// chains. A name longer than iptables' 28 characters is cut and ends in `~` and six
/// hex digits of a hash of the whole name; `taken` says whether a name is in use
/// (then the hash is salted until it is free), so two chains never share a name.
pub(super) fn ipt_name(
    table: &str,
    chain: &str,
    builtin: bool,
    taken: impl Fn(&str) -> bool,
) -> String {
    let n = if !builtin {
        format!("FWBENCH-U-{chain}")
    } else if table == "filter" {
        format!("FWBENCH-{chain}")
    } else {
        format!("FWBENCH-{}-{chain}", table.to_ascii_uppercase())
    };
    fit_name(n, chain, MAX_CHAIN_NAME, taken)
}

/// The chain that holds a built-in chain's DROP policy (`FWBENCH-P-INPUT` for the
/// filter table's INPUT, renamed `FWBENCH-INPUT`): the built-in chain jumps to it, it
/// jumps to the user's rules and then drops. No other name starts `FWBENCH-P-` (user
/// chains are `FWBENCH-U-…`, built-ins `FWBENCH-CHAIN` or `FWBENCH-TABLE-CHAIN`), and
/// the longest, `FWBENCH-P-MANGLE-POSTROUTING`, fits iptables' 28 characters.
pub(super) fn ipt_policy_chain(renamed: &str) -> String {
    format!("FWBENCH-P-{}", renamed.trim_start_matches("FWBENCH-"))
}

/// `n` if it fits `max` bytes and is free; else cut to end in `~` and six hex digits
/// of a hash of `key` (salted until the name is free), so two names never collide.
pub(super) fn fit_name(n: String, key: &str, max: usize, taken: impl Fn(&str) -> bool) -> String {
    if n.len() <= max && !taken(&n) {
        return n;
    }
    let mut cut = (max - 7).min(n.len());
    while !n.is_char_boundary(cut) {
        cut -= 1;
    }
    (0u32..)
        .map(|salt| {
            let key = if salt == 0 {
                key.to_owned()
            } else {
                format!("{key}#{salt}")
            };
            format!("{}~{:06x}", &n[..cut], fnv1a(&key) & 0xff_ffff)
        })
        .find(|c| !taken(c))
        // INVARIANT: fewer names are taken than there are salts.
        .expect("a free name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_kernel_and_never_collide() {
        assert_eq!(
            ipt_name("filter", "INPUT", true, |_| false),
            "FWBENCH-INPUT"
        );
        assert_eq!(
            ipt_name("nat", "PREROUTING", true, |_| false),
            "FWBENCH-NAT-PREROUTING"
        );
        assert_eq!(ipt_name("nat", "x", false, |_| false), "FWBENCH-U-x");
        // Too long: cut, `~` and six hex digits of the whole name's hash.
        let long = ipt_name("filter", "a-very-long-user-chain-name", false, |_| false);
        assert_eq!(long.len(), MAX_CHAIN_NAME, "{long}");
        assert!(long.starts_with("FWBENCH-U-a-very-long~"), "{long}");
        // Taken: salted until free, still within the limit.
        let again = ipt_name("filter", "a-very-long-user-chain-name", false, |n| {
            n == long
        });
        assert!(again != long && again.len() == MAX_CHAIN_NAME, "{again}");
        let set = fit_name("fwbench-i-s".into(), "s", 31, |n| n == "fwbench-i-s");
        assert!(set.starts_with("fwbench-i-s~") && set.len() <= 31, "{set}");
        assert_eq!(user_chain("filter", "INPUT"), "INPUT");
        assert_eq!(user_chain("nat", "POSTROUTING"), "nat/POSTROUTING");
        assert!(builtins("raw").contains(&"PREROUTING") && builtins("broute").is_empty());
        // Every built-in's policy chain fits.
        for table in ["raw", "mangle", "nat", "filter", "security"] {
            for chain in builtins(table) {
                let p = ipt_policy_chain(&ipt_name(table, chain, true, |_| false));
                assert!(
                    p.len() <= MAX_CHAIN_NAME && p.starts_with("FWBENCH-P-"),
                    "{p}"
                );
            }
        }
        assert_eq!(ipt_policy_chain("FWBENCH-INPUT"), "FWBENCH-P-INPUT");
    }
}
