//! Fuzz-smoke of the iptables-save importer on stable: the seed corpus and seeded
//! mutations of it (fuzz/mutate.rs), with the same checks as the `cargo fuzz` target.

#[path = "../../../fuzz/checks/iptables.rs"]
mod iptables;
#[path = "../../../fuzz/mutate.rs"]
mod mutate;

#[test]
fn iptables_importer_survives_the_corpus_and_mutations() {
    mutate::run("iptables_import", 17, 1_000, iptables::check);
}
