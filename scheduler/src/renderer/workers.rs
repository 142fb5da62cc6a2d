//! The worker pool the frame's jobs run on: Switchyard's own, or the engine's.

use std::sync::Arc;

use switchyard_kernels::busy::BusyCounters;

use crate::error::InitError;
use crate::profile;

/// Which threads run the frame's jobs ([`RendererConfig::pool`](crate::RendererConfig::pool)).
#[derive(Clone, Debug, Default)]
pub enum WorkerPool {
    /// A pool of Switchyard's own with [`RendererConfig::threads`](crate::RendererConfig::threads)
    /// workers (named `switchyard-worker-N`), joined when the renderer is dropped.
    #[default]
    Own,
    /// The engine's pool: jobs run on its threads, so the engine's and Switchyard's work
    /// share one set of workers instead of two fighting for the cores. The renderer
    /// attaches its busy-time counters to the pool's threads once (another renderer on
    /// the same pool takes them over: only the last one's utilization counts).
    Shared(Arc<rayon::ThreadPool>),
    /// rayon's global pool (or, when `render` is called on a thread of some pool, that
    /// pool).
    Global,
}

/// The pool the renderer runs on. Dropping an own pool waits (up to 10 s) until every
/// worker thread has left: rayon's own pool only asks them to.
pub(super) struct Workers {
    pool: Option<rayon::ThreadPool>,
    shared: Option<Arc<rayon::ThreadPool>>,
    /// Each worker's busy time (the frame's utilization).
    pub(super) busy: Arc<BusyCounters>,
    /// Workers that have not left yet, and a signal for each that does (own pool only).
    alive: Arc<(parking_lot::Mutex<usize>, parking_lot::Condvar)>,
}

impl Workers {
    /// Starts an own pool of `threads`, or takes the engine's.
    pub(super) fn new(which: &WorkerPool, threads: usize) -> Result<Self, InitError> {
        let alive = Arc::new((parking_lot::Mutex::new(0), parking_lot::Condvar::new()));
        let attach = |busy: &Arc<BusyCounters>| {
            let busy = busy.clone();
            move |ctx: rayon::BroadcastContext<'_>| busy.attach(ctx.index())
        };
        match which {
            WorkerPool::Own => Self::start(threads),
            WorkerPool::Shared(pool) => {
                let busy = BusyCounters::new(pool.current_num_threads());
                pool.broadcast(attach(&busy));
                Ok(Self { pool: None, shared: Some(pool.clone()), busy, alive })
            }
            WorkerPool::Global => {
                let busy = BusyCounters::new(rayon::current_num_threads());
                rayon::broadcast(attach(&busy));
                Ok(Self { pool: None, shared: None, busy, alive })
            }
        }
    }

    fn start(threads: usize) -> Result<Self, InitError> {
        let alive = Arc::new((parking_lot::Mutex::new(0), parking_lot::Condvar::new()));
        let (up, down) = (alive.clone(), alive.clone());
        let busy = BusyCounters::new(threads);
        let counters = busy.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("switchyard-worker-{i}"))
            .start_handler(move |i| {
                counters.attach(i);
                *up.0.lock() += 1;
                up.1.notify_all();
                profile::thread_name(&format!("switchyard-worker-{i}"));
            })
            .exit_handler(move |_| {
                *down.0.lock() -= 1;
                down.1.notify_all();
            })
            .build()
            .map_err(|e| InitError::Pool(e.to_string()))?;
        // Count every worker in (so a drop waits for each), within a bound.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut n = alive.0.lock();
        while *n < threads && !alive.1.wait_until(&mut n, deadline).timed_out() {}
        drop(n);
        Ok(Self { pool: Some(pool), shared: None, busy, alive })
    }

    /// The pool to install work into (`None`: the global or current pool).
    pub(super) fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool.as_ref().or(self.shared.as_deref())
    }

    /// Runs `f` on the pool.
    pub(super) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self.pool() {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Sets `out` to `n` items, then calls `fill(i, block i of out)` for each block of
    /// `block` items, on the pool; where `out` is one block, on the calling thread (a
    /// worker's wake-up costs more than a small copy, and none is woken for nothing).
    pub(super) fn fill_blocks<T: Copy + Default + Send + Sync>(
        &self,
        block: usize,
        out: &mut Vec<T>,
        n: usize,
        fill: &(dyn Fn(usize, &mut [T]) + Sync),
    ) {
        if n <= block {
            out.resize(n, T::default());
            if n > 0 {
                fill(0, &mut out[..]);
            }
            return;
        }
        self.install(|| {
            switchyard_kernels::par::set_len(out, n);
            switchyard_kernels::par::fill_blocks(block, &mut out[..], fill)
        })
    }

    /// The pool's threads.
    pub(super) fn current_num_threads(&self) -> usize {
        self.pool().map_or_else(rayon::current_num_threads, rayon::ThreadPool::current_num_threads)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        if self.pool.take().is_none() {
            return; // the engine's pool: not ours to wait for
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut n = self.alive.0.lock();
        while *n > 0 && !self.alive.1.wait_until(&mut n, deadline).timed_out() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fills `n` items in blocks of 4 with each item's index plus 1000 times its block's.
    fn filled(workers: &Workers, out: &mut Vec<u32>, n: usize) -> Vec<std::thread::ThreadId> {
        let threads = parking_lot::Mutex::new(Vec::new());
        workers.fill_blocks(4, out, n, &|c, dst: &mut [u32]| {
            threads.lock().push(std::thread::current().id());
            for (k, d) in dst.iter_mut().enumerate() {
                *d = (c * 4 + k) as u32 + 1000 * c as u32;
            }
        });
        threads.into_inner()
    }

    #[test]
    fn fill_blocks_fills_one_block_on_the_caller_and_more_on_the_pool() {
        let workers = Workers::new(&WorkerPool::Own, 3).expect("a pool");
        let me = std::thread::current().id();
        let expect = |n: usize| (0..n).map(|i| i as u32 + 1000 * (i / 4) as u32).collect::<Vec<_>>();
        let mut out = vec![7u32; 9];
        // Shrinking to one block: the calling thread, nothing left of the old items.
        assert_eq!(filled(&workers, &mut out, 3), [me]);
        assert_eq!(out, expect(3));
        assert_eq!(filled(&workers, &mut out, 4), [me]);
        assert_eq!(out, expect(4));
        // Nothing to fill: no piece runs at all.
        assert!(filled(&workers, &mut out, 0).is_empty());
        assert!(out.is_empty());
        // Growing past one block: every block once, on the pool's workers.
        let on = filled(&workers, &mut out, 10);
        assert_eq!(on.len(), 3);
        assert!(!on.contains(&me), "the pieces ran on the workers");
        assert_eq!(out, expect(10));
        assert_eq!(filled(&workers, &mut out, 5).len(), 2);
        assert_eq!(out, expect(5));
    }
}
