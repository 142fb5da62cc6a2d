//! `cargo +nightly fuzz run frame_graph`: the harness is `switchyard_tests::fuzzing::frame_graph`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/frame_graph/` (on the null backend, and on wgpu against it).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::frame_graph(data));
