//! Workloads and baselines for Switchyard's benchmarks.
//!
//! Shared by the criterion benches (`benches/stages.rs`) and the report binary
//! (`switchyard-bench-report`), which runs the headline comparisons in one process and
//! prints ratios against the baselines a user would otherwise pick.

pub mod chart;
pub mod cull;
pub mod frame;
pub mod record;
pub mod sort;
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

/// A small deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
