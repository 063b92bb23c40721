//! Fuzz-smoke of the frame decoder on stable: the seed corpus and seeded mutations of
//! it (fuzz/mutate.rs), with the same checks as the `cargo fuzz` target.

#[path = "../../../fuzz/checks/frame.rs"]
mod frame;
#[path = "../../../fuzz/mutate.rs"]
mod mutate;

#[test]
fn frame_decoder_survives_the_corpus_and_mutations() {
    mutate::run("frame_decoder", 17, 3_000, frame::check);
}
