//! Busy time of worker threads, for the frame's utilization: the time each worker spends
//! inside the frame's work, over the frame's time × workers.
//!
//! Work is wrapped in [`timed`]; only the outermost timed region on a thread counts, so a
//! piece that runs inside a job on the job's own thread is not counted twice, while a piece
//! another worker steals counts on that worker. A thread attached to [`BusyCounters`] (a
//! pool's start handler calls [`BusyCounters::attach`]) adds each outermost region's time to
//! its own cache-padded counter when the region ends; on other threads `timed` only keeps
//! the nesting depth. A job that waits inside a `join` for a piece another worker took counts
//! as busy while it waits (it would steal work if there were any).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_utils::CachePadded;

/// One busy-time counter (nanoseconds) per worker of a pool.
#[derive(Debug)]
pub struct BusyCounters {
    slots: Box<[CachePadded<AtomicU64>]>,
}

thread_local! {
    /// Nesting depth of `timed` on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// This thread's counter, when it is a worker of a pool with counters.
    static COUNTER: RefCell<Option<(Arc<BusyCounters>, usize)>> = const { RefCell::new(None) };
}

impl BusyCounters {
    /// Counters for a pool of `workers` threads.
    pub fn new(workers: usize) -> Arc<Self> {
        Arc::new(Self { slots: (0..workers).map(|_| CachePadded::new(AtomicU64::new(0))).collect() })
    }

    /// Makes the calling thread count into slot `index` (a pool's start handler passes its
    /// worker index). An index past the counters attaches nothing.
    pub fn attach(self: &Arc<Self>, index: usize) {
        if index < self.slots.len() {
            COUNTER.with(|c| *c.borrow_mut() = Some((self.clone(), index)));
        }
    }

    /// Busy nanoseconds of all workers so far (a frame's busy time is the difference of two
    /// readings around it).
    pub fn total_ns(&self) -> u64 {
        self.slots.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

/// A timed region: entered by [`Region::enter`], left when dropped (also when the work in
/// it panics).
#[must_use = "the region ends when this is dropped"]
pub struct Region {
    start: Option<Instant>,
    /// With the `tracy` feature: a zone `work` around an outermost region while a profiler
    /// is connected.
    _zone: Option<crate::profile::Zone>,
}

impl std::fmt::Debug for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Region").field("start", &self.start).finish_non_exhaustive()
    }
}

impl Region {
    /// Enters a region on this thread (see [`timed`]).
    #[inline]
    pub fn enter() -> Self {
        let outer = DEPTH.with(|d| {
            let depth = d.get();
            d.set(depth + 1);
            depth == 0
        });
        Self { _zone: outer.then(|| crate::profile::zone!("work")), start: outer.then(Instant::now) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        if let Some(start) = self.start {
            let ns = start.elapsed().as_nanos() as u64;
            COUNTER.with(|c| {
                if let Some((counters, i)) = &*c.borrow() {
                    counters.slots[*i].fetch_add(ns, Ordering::Relaxed);
                }
            });
        }
    }
}

/// Runs `f`, counting its time as busy time of this thread when it is the outermost timed
/// region here and the thread is attached to counters.
#[inline]
pub fn timed<R>(f: impl FnOnce() -> R) -> R {
    let _region = Region::enter();
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_outermost_regions_count_and_only_on_attached_threads() {
        let counters = BusyCounters::new(2);
        // Not attached: nothing counted.
        timed(|| std::thread::sleep(std::time::Duration::from_millis(2)));
        assert_eq!(counters.total_ns(), 0);
        let c = counters.clone();
        let wall = std::thread::spawn(move || {
            c.attach(1);
            let t = Instant::now();
            timed(|| timed(|| std::thread::sleep(std::time::Duration::from_millis(5))));
            t.elapsed().as_nanos() as u64
        })
        .join()
        .unwrap();
        let ns = counters.total_ns();
        // The outer region counts (at least the 5 ms sleep), the nested one does not (the
        // sum would pass the wall time around both by the inner region's 5 ms).
        assert!(ns >= 5_000_000 && ns <= wall, "{ns} ns counted in {wall} ns");
        assert_eq!(counters.slots[0].load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_panicking_region_still_leaves_its_level() {
        let r = std::panic::catch_unwind(|| timed(|| panic!("boom")));
        assert!(r.is_err());
        assert_eq!(DEPTH.with(Cell::get), 0);
    }
}
