//! Switchyard's benchmark crate.
//!
//! The criterion benches per stage and the `switchyard-bench-report` binary belong here
//! (tracked in the benchmarks issue); until they land this crate only compiles against the
//! scheduler so that its dependency set stays checked by CI.

pub use switchyard;
