//! `cargo +nightly fuzz run shader_material`: the harness is `switchyard_tests::fuzzing::shader_material`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/shader_material/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::shader_material(data));
