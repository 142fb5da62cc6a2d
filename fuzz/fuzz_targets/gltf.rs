//! `cargo +nightly fuzz run gltf`: the harness is `switchyard_tests::fuzzing::gltf`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/gltf/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::gltf(data));
