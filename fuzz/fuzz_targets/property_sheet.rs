//! `cargo +nightly fuzz run property_sheet`: the harness is `switchyard_tests::fuzzing::property_sheet`, and
//! `tests/tests/corpus.rs` replays `fuzz/corpus/property_sheet/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchyard_tests::fuzzing::property_sheet(data));
