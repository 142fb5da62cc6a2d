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
//!
//! **Labels.** A job runs in [`timed_as`], which names it for the pieces it forks: a
//! parallel helper (`par::for_each_index`) takes the label of the thread that forks and
//! runs each piece under it, so in a Tracy capture a piece another worker took shows the
//! job's name as its `work` zone's text instead of an anonymous zone, and a fork inside
//! that piece takes the same label.

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
    /// The label of the job (or of the job whose piece) this thread runs, while a
    /// [`Labelled`] scope holds it: its pointer is valid until that scope ends.
    static LABEL: Cell<Option<*const str>> = const { Cell::new(None) };
}

/// A label set on this thread until dropped (also when the work in it panics), then the
/// one before it restored.
struct Labelled {
    before: Option<*const str>,
}

impl Labelled {
    fn set(label: Option<*const str>) -> Self {
        Self { before: LABEL.with(|l| l.replace(label)) }
    }
}

impl Drop for Labelled {
    fn drop(&mut self) {
        LABEL.with(|l| l.set(self.before));
    }
}

/// This thread's label as [`timed_as`] set it (or a piece's, set by [`Label::run`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label(Option<*const str>);

// SAFETY: the pointer is only read while the scope that set it is open on the thread
// that took it, and the pieces that read it on other threads finish before that scope
// ends (`Label::current`'s contract); `str` is `Sync`.
unsafe impl Send for Label {}
// SAFETY: as for `Send`.
unsafe impl Sync for Label {}

impl Label {
    /// The calling thread's label.
    ///
    /// # Safety
    /// The result, and every copy of it, must be used ([`Label::run`]) only before the
    /// calling thread leaves the scope it is in (a fork that returns once all its pieces
    /// are done, taking the label at its start, meets this).
    pub(crate) unsafe fn current() -> Self {
        Self(LABEL.with(Cell::get))
    }

    /// Runs `f` as a timed region ([`timed`]) under this label: the label is this thread's
    /// while `f` runs, and the region's Tracy zone, where it is the outermost, shows it.
    #[inline]
    pub(crate) fn run<R>(self, f: impl FnOnce() -> R) -> R {
        let _label = Labelled::set(self.0);
        let region = Region::enter();
        if let Some(label) = self.0 {
            // SAFETY: `Label::current`'s contract: the scope that set it is still open.
            region.text(unsafe { &*label });
        }
        f()
    }
}

/// Calls `f` with this thread's label: the name of the job it runs, or of the job whose
/// piece it runs; `None` outside any (the tests' view of the labels).
#[cfg(test)]
fn with_label<R>(f: impl FnOnce(Option<&str>) -> R) -> R {
    // SAFETY: a label on this thread points at the `&str` given to the `timed_as` (or the
    // piece) whose scope is open now, and `f` runs inside that scope.
    let label = LABEL.with(Cell::get).map(|l| unsafe { &*l });
    f(label)
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
    /// Sets the text of the region's Tracy zone (only an outermost region has one, and only
    /// while a profiler is connected).
    #[inline]
    fn text(&self, text: &str) {
        if let Some(zone) = &self._zone {
            zone.text_str(text);
        }
    }

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

/// [`timed`], naming the work `label` for the pieces it forks (the module's note on
/// labels) and for its Tracy zone.
#[inline]
pub fn timed_as<R>(label: &str, f: impl FnOnce() -> R) -> R {
    Label(Some(label as *const str)).run(f)
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
    fn a_jobs_label_reaches_every_piece_it_forks_on_any_thread() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let seen: Vec<std::sync::Mutex<Option<String>>> = (0..64).map(|_| Default::default()).collect();
        let nested: Vec<std::sync::Mutex<Option<String>>> = (0..16).map(|_| Default::default()).collect();
        // Piece 0 holds its thread until a piece has started on another one (or a second
        // has passed), so other workers run pieces.
        let started = AtomicU64::new(0);
        let elsewhere = std::sync::atomic::AtomicBool::new(false);
        pool.install(|| {
            let first = std::thread::current().id();
            with_label(|l| assert_eq!(l, None, "no job yet"));
            timed_as("cull[opaque]", || {
                crate::par::for_each_index(seen.len(), &|i| {
                    started.fetch_add(1, Ordering::Relaxed);
                    if std::thread::current().id() != first {
                        elsewhere.store(true, Ordering::Relaxed);
                    }
                    let t = Instant::now();
                    while i == 0 && !elsewhere.load(Ordering::Relaxed) && t.elapsed().as_secs() < 1 {
                        std::thread::yield_now();
                    }
                    *seen[i].lock().unwrap() = with_label(|l| l.map(str::to_owned));
                    // A fork inside a piece (on whichever thread runs it) takes the same label.
                    if i < nested.len() {
                        crate::par::for_each_index(2, &|_| {
                            *nested[i].lock().unwrap() = with_label(|l| l.map(str::to_owned));
                        });
                    }
                });
                // An inner job names its own pieces, then the outer label is back.
                timed_as("sort[opaque]", || with_label(|l| assert_eq!(l, Some("sort[opaque]"))));
                with_label(|l| assert_eq!(l, Some("cull[opaque]")));
            });
            with_label(|l| assert_eq!(l, None, "the job's scope ended"));
        });
        assert_eq!(started.load(Ordering::Relaxed), 64);
        assert!(elsewhere.load(Ordering::Relaxed), "every piece ran on the forking thread");
        for s in seen.iter().chain(&nested) {
            assert_eq!(s.lock().unwrap().as_deref(), Some("cull[opaque]"));
        }
    }

    #[test]
    fn a_label_is_restored_when_its_work_panics() {
        timed_as("outer", || {
            let r = std::panic::catch_unwind(|| timed_as("inner", || panic!("boom")));
            assert!(r.is_err());
            with_label(|l| assert_eq!(l, Some("outer")));
        });
        with_label(|l| assert_eq!(l, None));
        assert_eq!(DEPTH.with(Cell::get), 0);
    }

    #[test]
    fn a_panicking_region_still_leaves_its_level() {
        let r = std::panic::catch_unwind(|| timed(|| panic!("boom")));
        assert!(r.is_err());
        assert_eq!(DEPTH.with(Cell::get), 0);
    }
}
