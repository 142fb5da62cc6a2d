//! Workloads and baselines for Switchyard's benchmarks.
//!
//! Shared by the criterion benches (`benches/stages.rs`) and the report binary
//! (`switchyard-bench-report`), which runs the headline comparisons in one process and
//! prints ratios against the baselines a user would otherwise pick.

pub mod chart;
pub mod culling;
pub mod frames;
pub mod graphs;
pub mod raster;
pub mod recording;
pub mod sorting;
#[cfg(feature = "tracy")]
pub mod tracy;

use std::time::{Duration, Instant};

/// A rayon pool of `threads` workers.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool")
}

/// Cores available to this process.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether the smaller CI workload is requested (`CI` set).
pub fn ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// Median of `iters` timed runs of `run`, after one untimed warm-up; what `run` returns
/// is dropped after the clock stops (for work whose results a caller keeps and frees
/// elsewhere, such as recorded chunks, which a frame drops on its submission thread).
pub fn median_kept<T>(iters: usize, mut run: impl FnMut() -> T) -> Duration {
    // The untimed setup drops the previous run's output.
    median_with(iters, &mut None, |out| *out = None, |out| *out = Some(run()))
}

/// Median of `iters` timed runs of `run`, after one untimed warm-up; `setup` runs before
/// each and is not timed.
pub fn median<S, T>(iters: usize, mut setup: impl FnMut() -> S, mut run: impl FnMut(S) -> T) -> Duration {
    let mut state = None;
    median_with(iters, &mut state, |s| *s = Some(setup()), |s| run(s.take().expect("set up")))
}

/// Like [`median`], with state that `setup` refills and `run` consumes.
pub fn median_with<T, R>(
    iters: usize,
    state: &mut T,
    mut setup: impl FnMut(&mut T),
    mut run: impl FnMut(&mut T) -> R,
) -> Duration {
    setup(state);
    std::hint::black_box(run(state));
    let mut times: Vec<Duration> = (0..iters.max(1))
        .map(|_| {
            setup(state);
            let t = Instant::now();
            std::hint::black_box(run(state));
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The benches' seeded generator: every random workload comes from one of these.
pub fn rng(seed: u64) -> rand_pcg::Pcg64Mcg {
    rand::SeedableRng::seed_from_u64(seed)
}
