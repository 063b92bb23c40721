//! Fuzz targets of the controller's parsers: the scenario parser and the workload
//! language. `cargo fuzz` targets `scenario` and `worklang` (fuzz/fuzz_targets) call
//! these checks through the library; the fuzz-smoke test below runs the same checks on
//! stable over the seed corpus and seeded mutations.
//!
//! Must not: touch the host (both parsers are pure).

/// Any text parses or is refused with a `file:…` message; a plan stays within the
/// trial limit and every trial has a key.
pub fn scenario(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match crate::plan::scenario::parse("fuzz.toml", &text, 1) {
        Ok(plan) => {
            assert!(plan.trials.len() as u64 <= crate::limits::MAX_TRIALS);
            assert!(plan.trials.iter().all(|t| t.key.len() == 16));
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.toml"), "{e}"),
    }
}

/// Any text parses or is refused with a `file:…` message; a workload stays within
/// the command and concurrency limits.
pub fn worklang(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match crate::worklang::parse("fuzz.txt", &text) {
        Ok(jobs) => {
            assert!(crate::worklang::count(&jobs) <= crate::limits::MAX_COMMANDS);
            assert!(
                jobs.iter()
                    .all(|j| crate::worklang::concurrency(j)
                        <= crate::limits::MAX_CONCURRENT_COMMANDS)
            );
            assert!(!crate::worklang::commands(&jobs).is_empty());
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.txt"), "{e}"),
    }
}

#[cfg(test)]
#[path = "../../../fuzz/mutate.rs"]
mod mutate;

#[cfg(test)]
mod tests {
    use super::mutate;

    #[test]
    fn scenario_parser_survives_the_corpus_and_mutations() {
        mutate::run("scenario", 17, 3_000, super::scenario);
    }

    #[test]
    fn workload_parser_survives_the_corpus_and_mutations() {
        mutate::run("worklang", 17, 20_000, super::worklang);
    }
}
