//! `cargo +nightly fuzz run scene_ops`: the harness is `switchyard_tests::fuzzing::scene_ops`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/scene_ops/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::scene_ops(data));
