//! `cargo +nightly fuzz run resource_descs`: the harness is `switchyard_tests::fuzzing::resource_descs`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/resource_descs/` (on the null backend, and on wgpu against it).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::resource_descs(data));
