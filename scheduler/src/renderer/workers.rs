//! The worker pool the frame's jobs run on.

use std::sync::Arc;

use switchyard_kernels::busy::BusyCounters;

use crate::error::InitError;
use crate::profile;

/// The worker pool. Dropping it waits (up to 10 s) until every worker thread has left:
/// rayon's own pool only asks them to.
pub(super) struct Workers {
    pool: Option<rayon::ThreadPool>,
    /// Each worker's busy time (the frame's utilization).
    pub(super) busy: Arc<BusyCounters>,
    /// Workers that have not left yet, and a signal for each that does.
    alive: Arc<(parking_lot::Mutex<usize>, parking_lot::Condvar)>,
}

impl Workers {
    pub(super) fn start(threads: usize) -> Result<Self, InitError> {
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
        Ok(Self { pool: Some(pool), busy, alive })
    }
}

impl std::ops::Deref for Workers {
    type Target = rayon::ThreadPool;
    fn deref(&self) -> &rayon::ThreadPool {
        self.pool.as_ref().expect("dropped only in Drop")
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        drop(self.pool.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut n = self.alive.0.lock();
        while *n > 0 && !self.alive.1.wait_until(&mut n, deadline).timed_out() {}
    }
}
