//! The frame's job graph: typed jobs with declared data access, run on a rayon pool.
//!
//! Each node carries its job ([`GraphJob`]); a job names the data it reads and writes
//! ([`Access`]). [`JobGraph::build`] checks, once per configuration, that every two jobs
//! that may run at the same time (neither depends on the other, directly or not) touch
//! no datum in conflicting ways, and refuses a graph that lacks an edge. At run time each
//! node keeps an atomic count of unfinished inputs; a finished job decrements its
//! dependents and spawns those that reach zero, so independent work overlaps (culling a
//! shadow view while the main view sorts). A panicking job is caught: its dependents never
//! run and [`JobGraph::run`] names the job.
//!
//! The data itself sits in [`Slot`]s: one per stage output and view. Because the graph
//! proved the accesses ordered, a slot's borrow never waits; its flag is a backstop that
//! turns a violated proof into a panic naming the job, never a silent race.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use atomic_refcell::{AtomicRef, AtomicRefCell, AtomicRefMut};

/// How a job uses one datum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access<D> {
    /// Shared, read-only.
    Read(D),
    /// Exclusive.
    Write(D),
}

impl<D: Copy + Eq> Access<D> {
    fn datum(self) -> D {
        match self {
            Access::Read(d) | Access::Write(d) => d,
        }
    }

    fn conflicts(self, other: Self) -> bool {
        self.datum() == other.datum() && matches!((self, other), (Access::Write(_), _) | (_, Access::Write(_)))
    }
}

/// A job of the graph: what it is called in traces and errors, and what it touches.
pub(crate) trait GraphJob: Copy + Send + Sync {
    /// What jobs read and write (a stage output of one view, say).
    type Datum: Copy + Eq + fmt::Debug;
    /// Appends this job's accesses to `out`.
    fn accesses(&self, out: &mut Vec<Access<Self::Datum>>);
}

/// The graph refused at build time: two jobs that may run at once conflict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("jobs `{first}` and `{second}` may run at once but both touch {datum} and one writes it")]
pub(crate) struct AccessConflict {
    pub(crate) first: String,
    pub(crate) second: String,
    pub(crate) datum: String,
}

/// A job that panicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobPanic {
    /// The job's name.
    pub(crate) job: String,
    /// The panic message.
    pub(crate) message: String,
}

#[derive(Debug)]
struct Node<J> {
    job: J,
    name: String,
    deps: Vec<usize>,
    dependents: Vec<usize>,
    pending: AtomicU32,
    /// When the job started and ended in its last run, in ns after the run began.
    span: [AtomicU64; 2],
}

/// When one job of the last run started and ended, in ms after the run began.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobSpan<'a> {
    /// The job's name (`sort[main]`, `patch`, `pass[post]`).
    pub name: &'a str,
    /// Start, ms after the job graph began.
    pub start_ms: f64,
    /// End, ms after the job graph began.
    pub end_ms: f64,
}

/// A job's place in a graph under construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobId(usize);

/// Collects jobs and their dependencies; [`JobGraphBuilder::build`] checks them.
#[derive(Debug)]
pub(crate) struct JobGraphBuilder<J> {
    nodes: Vec<Node<J>>,
}

/// A checked, reusable job graph.
#[derive(Debug)]
pub(crate) struct JobGraph<J> {
    nodes: Vec<Node<J>>,
}

impl<J: GraphJob> JobGraphBuilder<J> {
    pub(crate) fn new() -> Self {
        Self { nodes: Vec::new() }
    }

    /// Adds `job`, named `name`, to run after `deps`.
    pub(crate) fn add(&mut self, job: J, name: impl Into<String>, deps: &[JobId]) -> JobId {
        let i = self.nodes.len();
        for &JobId(d) in deps {
            self.nodes[d].dependents.push(i);
        }
        let deps = deps.iter().map(|d| d.0).collect();
        self.nodes.push(Node {
            job,
            name: name.into(),
            deps,
            dependents: Vec::new(),
            pending: AtomicU32::new(0),
            span: Default::default(),
        });
        JobId(i)
    }

    /// Checks that every two jobs that may run at once have no conflicting access.
    pub(crate) fn build(self) -> Result<JobGraph<J>, AccessConflict> {
        let n = self.nodes.len();
        // before[i][j]: job j finishes before job i starts (nodes are added after their deps).
        let mut before = vec![vec![false; n]; n];
        for i in 0..n {
            for &d in &self.nodes[i].deps {
                before[i][d] = true;
                let (done, row) = before.split_at_mut(i);
                row[0].iter_mut().zip(&done[d]).for_each(|(a, &b)| *a |= b);
            }
        }
        let accesses: Vec<Vec<Access<J::Datum>>> = self
            .nodes
            .iter()
            .map(|node| {
                let mut v = Vec::new();
                node.job.accesses(&mut v);
                v
            })
            .collect();
        for i in 0..n {
            for j in 0..i {
                if before[i][j] {
                    continue;
                }
                for &a in &accesses[i] {
                    if let Some(b) = accesses[j].iter().find(|&&b| a.conflicts(b)) {
                        return Err(AccessConflict {
                            first: self.nodes[j].name.clone(),
                            second: self.nodes[i].name.clone(),
                            datum: format!("{:?}", b.datum()),
                        });
                    }
                }
            }
        }
        Ok(JobGraph { nodes: self.nodes })
    }
}

impl<J: GraphJob> JobGraph<J> {
    /// Number of jobs.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The job named `name`.
    #[cfg_attr(not(feature = "fault-injection"), allow(dead_code))]
    pub(crate) fn job_named(&self, name: &str) -> Option<J> {
        self.nodes.iter().find(|n| n.name == name).map(|n| n.job)
    }

    /// Every job's span in the last run, in the order they were added (a job that did not
    /// run, after a panic, has an empty span at 0).
    pub(crate) fn spans(&self) -> impl Iterator<Item = JobSpan<'_>> {
        self.nodes.iter().map(|n| JobSpan {
            name: &n.name,
            start_ms: n.span[0].load(Ordering::Relaxed) as f64 / 1e6,
            end_ms: n.span[1].load(Ordering::Relaxed) as f64 / 1e6,
        })
    }

    /// The critical path of the last run, first job first: from the job that ended last,
    /// back through the input that ended last each time.
    pub(crate) fn critical_path(&self) -> Vec<JobSpan<'_>> {
        let spans: Vec<JobSpan<'_>> = self.spans().collect();
        let latest = |of: &mut dyn Iterator<Item = usize>| {
            of.max_by(|&a, &b| spans[a].end_ms.total_cmp(&spans[b].end_ms).then(b.cmp(&a)))
        };
        let mut path = Vec::new();
        let mut at = latest(&mut (0..spans.len()));
        while let Some(i) = at {
            path.push(spans[i]);
            at = latest(&mut self.nodes[i].deps.iter().copied());
        }
        path.reverse();
        path
    }

    /// Runs every job on `pool`, each once its inputs are done; `work(job)` does the work.
    /// Each job's span is kept for [`JobGraph::spans`].
    /// `pool`: `None` runs on the global pool (or the pool of the calling thread).
    pub(crate) fn run(&self, pool: Option<&rayon::ThreadPool>, work: &(dyn Fn(J) + Sync)) -> Result<(), JobPanic> {
        for n in &self.nodes {
            n.pending.store(n.deps.len() as u32, Ordering::Relaxed);
            n.span.iter().for_each(|s| s.store(0, Ordering::Relaxed));
        }
        let run = Run { work, failed: OnceLock::new(), epoch: Instant::now() };
        let run = &run;
        let all = || {
            rayon::scope(|s| {
                for (i, n) in self.nodes.iter().enumerate() {
                    if n.deps.is_empty() {
                        s.spawn(move |s| self.execute(s, i, run));
                    }
                }
            })
        };
        match pool {
            Some(p) => p.install(all),
            None => all(),
        }
        match run.failed.get() {
            Some(p) => Err(p.clone()),
            None => Ok(()),
        }
    }

    fn execute<'s>(&'s self, s: &rayon::Scope<'s>, i: usize, run: &'s Run<'s, J>) {
        let node = &self.nodes[i];
        node.span[0].store(run.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let ran =
            catch_unwind(AssertUnwindSafe(|| switchyard_kernels::busy::timed_as(&node.name, || (run.work)(node.job))));
        node.span[1].store(run.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
        match ran {
            Err(e) => {
                let message = e
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| e.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                let _ = run.failed.set(JobPanic { job: node.name.clone(), message });
            }
            Ok(()) => {
                for &d in &node.dependents {
                    if self.nodes[d].pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                        s.spawn(move |s| self.execute(s, d, run));
                    }
                }
            }
        }
    }
}

/// One run of a graph: the work, the first panic, and the clock of the spans.
struct Run<'a, J> {
    work: &'a (dyn Fn(J) + Sync),
    failed: OnceLock<JobPanic>,
    epoch: Instant,
}

/// One stage output of a frame (of one view, say): written by the job that produces it,
/// then read by the jobs after it. The graph proved those accesses ordered, so a borrow
/// here never waits; if the proof were wrong the borrow panics, which fails the frame with
/// the job's name.
#[derive(Debug, Default)]
pub(crate) struct Slot<T>(AtomicRefCell<T>);

impl<T> Slot<T> {
    /// Shared access, for a job that declared [`Access::Read`].
    pub(crate) fn read(&self) -> AtomicRef<'_, T> {
        self.0.try_borrow().unwrap_or_else(|_| unordered())
    }

    /// Exclusive access, for the job that declared [`Access::Write`].
    pub(crate) fn write(&self) -> AtomicRefMut<'_, T> {
        self.0.try_borrow_mut().unwrap_or_else(|_| unordered())
    }

    /// Exclusive access outside the jobs.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

#[cold]
fn unordered() -> ! {
    panic!("a slot was borrowed by two jobs the graph did not order (a scheduler bug)")
}

#[cfg(test)]
mod tests {
    use parking_lot::Mutex;

    use super::*;

    /// Test jobs: each writes one datum and reads others.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct T {
        id: usize,
        writes: u8,
        reads: u8,
    }

    impl GraphJob for T {
        type Datum = u8;
        fn accesses(&self, out: &mut Vec<Access<u8>>) {
            out.push(Access::Write(self.writes));
            out.push(Access::Read(self.reads));
        }
    }

    fn job(id: usize, writes: u8, reads: u8) -> T {
        T { id, writes, reads }
    }

    #[test]
    fn runs_in_dependency_order_and_reports_panics() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let mut g = JobGraphBuilder::new();
        let a = g.add(job(0, 1, 9), "a", &[]);
        let b = g.add(job(1, 2, 9), "b", &[]);
        let c = g.add(job(2, 3, 1), "c", &[a, b]);
        let _d = g.add(job(3, 4, 3), "d", &[c]);
        let g = g.build().unwrap();
        assert_eq!(g.len(), 4);
        for _ in 0..if cfg!(miri) { 5 } else { 200 } {
            let order = Mutex::new(Vec::new());
            g.run(Some(&pool), &|j| order.lock().push(j.id)).unwrap();
            let o = order.into_inner();
            let pos = |x| o.iter().position(|&y| y == x).unwrap();
            assert_eq!(o.len(), 4);
            assert!(pos(0) < pos(2) && pos(1) < pos(2) && pos(2) < pos(3));
        }
        let ran = Mutex::new(Vec::new());
        let err = g
            .run(Some(&pool), &|j| {
                if j.id == 2 {
                    panic!("boom");
                }
                ran.lock().push(j.id);
            })
            .unwrap_err();
        assert_eq!(err, JobPanic { job: "c".into(), message: "boom".into() });
        assert!(!ran.lock().contains(&3), "dependents of a failed job do not run");
        // The graph is reusable after a failure.
        g.run(Some(&pool), &|_| {}).unwrap();
    }

    #[test]
    fn jobs_that_fork_pieces_finish_on_any_pool_size() {
        use rayon::prelude::*;
        // Four chains of five jobs; every job forks rayon pieces and waits for them.
        let mut g = JobGraphBuilder::new();
        for c in 0..4u8 {
            let mut prev: Option<JobId> = None;
            for k in 0..5u8 {
                let id = usize::from(c * 5 + k);
                let reads = if k == 0 { 200 } else { c * 5 + k - 1 };
                let deps: Vec<JobId> = prev.into_iter().collect();
                prev = Some(g.add(job(id, c * 5 + k, reads), format!("j{id}"), &deps));
            }
        }
        let g = g.build().unwrap();
        let data: Vec<u64> = (0..20_000).collect();
        for threads in [1, 2, 3, 16] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for _ in 0..if cfg!(miri) { 2 } else { 300 } {
                let sums = Mutex::new(0u64);
                g.run(Some(&pool), &|j| {
                    // Pieces both ways: rayon's, and claimed ones whose caller spins.
                    let s: u64 = data.par_iter().with_min_len(256).map(|x| x * j.id as u64).sum();
                    let claimed = std::sync::atomic::AtomicU64::new(0);
                    switchyard_kernels::par::for_each_index(8, &|p| {
                        let part = &data[p * 2500..(p + 1) * 2500];
                        claimed.fetch_add(part.iter().map(|x| x * j.id as u64).sum(), Ordering::Relaxed);
                    });
                    assert_eq!(claimed.into_inner(), s);
                    *sums.lock() += s;
                })
                .unwrap();
                assert_eq!(sums.into_inner(), (0..20u64).sum::<u64>() * (0..20_000u64).sum::<u64>());
            }
        }
    }

    #[test]
    fn spans_follow_the_run_and_the_critical_path_follows_the_latest_inputs() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut g = JobGraphBuilder::new();
        let a = g.add(job(0, 1, 9), "a", &[]);
        let b = g.add(job(1, 2, 9), "b", &[]);
        let c = g.add(job(2, 3, 1), "c", &[a, b]);
        g.add(job(3, 4, 3), "d", &[c]);
        g.add(job(4, 5, 9), "e", &[]);
        let g = g.build().unwrap();
        g.run(Some(&pool), &|_| {}).unwrap();
        let spans: Vec<_> = g.spans().collect();
        assert_eq!(spans.iter().map(|s| s.name).collect::<Vec<_>>(), ["a", "b", "c", "d", "e"]);
        assert!(spans.iter().all(|s| s.start_ms <= s.end_ms));
        // A job starts after its inputs end.
        assert!(spans[2].start_ms >= spans[0].end_ms.max(spans[1].end_ms) && spans[3].start_ms >= spans[2].end_ms);
        // Set spans: e ends before d; b ends after a, so the path runs b → c → d.
        for (n, (s, e)) in g.nodes.iter().zip([(0, 5), (0, 7), (7, 9), (9, 12), (0, 11)]) {
            n.span[0].store(s * 1_000_000, Ordering::Relaxed);
            n.span[1].store(e * 1_000_000, Ordering::Relaxed);
        }
        let path: Vec<_> = g.critical_path().iter().map(|s| (s.name, s.start_ms, s.end_ms)).collect();
        assert_eq!(path, [("b", 0.0, 7.0), ("c", 7.0, 9.0), ("d", 9.0, 12.0)]);
    }

    #[test]
    fn unordered_conflicting_jobs_are_refused_when_built() {
        // b reads what a writes, with no edge between them.
        let mut g = JobGraphBuilder::new();
        g.add(job(0, 1, 9), "a", &[]);
        g.add(job(1, 2, 1), "b", &[]);
        let err = g.build().unwrap_err();
        assert_eq!(err, AccessConflict { first: "a".into(), second: "b".into(), datum: "1".into() });
        // Two writers of one datum, ordered only through a third job: accepted.
        let mut g = JobGraphBuilder::new();
        let a = g.add(job(0, 1, 9), "a", &[]);
        let m = g.add(job(1, 2, 8), "m", &[a]);
        g.add(job(2, 1, 2), "z", &[m]);
        assert!(g.build().is_ok(), "the dependency is transitive");
        // Readers may overlap.
        let mut g = JobGraphBuilder::new();
        let a = g.add(job(0, 1, 9), "a", &[]);
        g.add(job(1, 2, 1), "b", &[a]);
        g.add(job(2, 3, 1), "c", &[a]);
        assert!(g.build().is_ok());
    }

    #[test]
    fn a_slot_borrowed_out_of_order_panics_instead_of_waiting() {
        let slot = Slot::<u32>::default();
        let held = slot.write();
        let conflict = std::panic::catch_unwind(AssertUnwindSafe(|| *slot.read()));
        assert!(conflict.is_err());
        drop(held);
        assert_eq!(*slot.read(), 0);
    }
}
