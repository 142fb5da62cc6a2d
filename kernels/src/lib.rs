//! Switchyard's CPU kernels: the parts of a frame that need no GPU, in a crate of their own
//! so they can be tested under miri and reused.
//!
//! - [`sort`]: a stable parallel radix sort over (u64 key, u32 value) pairs with a path for
//!   nearly sorted input (a frame's queue is last frame's order with a few keys changed);
//! - [`cull`]: frustum culling over structure-of-arrays bounds, with a bounds hierarchy and
//!   an AVX2 loop that only a CPU-feature check can select;
//! - [`par`]: data-parallel helpers whose output ranges are fixed before any worker runs.
//!
//! Every kernel gives the same result for any number of threads: parallel work writes to
//! disjoint ranges computed up front, never in completion order.

#![deny(missing_docs)]

pub mod busy;
pub mod cull;
mod pages;
pub mod par;
mod profile;
pub mod sort;
