//! `cargo +nightly fuzz run command_stream`: the harness is `switchyard_tests::fuzzing::command_stream`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/command_stream/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::command_stream(data));
