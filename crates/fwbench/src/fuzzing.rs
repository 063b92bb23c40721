//! Fuzz targets of the binary's parsers: the scenario parser and the workload
//! language. `cargo fuzz` builds the binary's source as its targets `scenario` and
//! `worklang` (fuzz/Cargo.toml, cfg `fuzzing`: `main` is replaced by libFuzzer's
//! entry, which calls [`by_name`] with the target's name); the fuzz-smoke test below
//! runs the same checks on stable over the seed corpus and seeded mutations.
//!
//! Must not: touch the host (both parsers are pure).

/// The check of fuzz target `name` on one input.
pub fn by_name(name: &str, data: &[u8]) {
    match name {
        "scenario" => scenario(data),
        "worklang" => worklang(data),
        other => panic!("no fuzz target {other}"),
    }
}

/// Any text parses or is refused with a `file:…` message; a plan stays within the
/// trial limit and every trial has a key.
pub fn scenario(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match crate::plan::scenario::parse("fuzz.toml", &text, 1) {
        Ok(plan) => {
            assert!(plan.trials.len() as u64 <= crate::limits::MAX_TRIALS);
            assert!(plan.trials.iter().all(|t| t.key.len() == 16));
        }
        Err(e) => assert!(e.starts_with("fuzz.toml"), "{e}"),
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
        Err(e) => assert!(e.starts_with("fuzz.txt"), "{e}"),
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
        mutate::run("scenario", 17, 3_000, |b| super::by_name("scenario", b));
    }

    #[test]
    fn workload_parser_survives_the_corpus_and_mutations() {
        mutate::run("worklang", 17, 20_000, |b| super::by_name("worklang", b));
    }
}
