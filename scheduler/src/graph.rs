//! A small DAG executor on a rayon pool.
//!
//! The graph for a set of views is built once and reused every frame. Each node keeps an
//! atomic count of unfinished inputs; a finished job decrements its dependents and spawns
//! those that reach zero, so independent work (cull of view B, sort of view A, patching)
//! overlaps. A panicking job is caught: its dependents never run and `run` names the job.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};

use parking_lot::Mutex;

#[derive(Debug)]
struct Node {
    name: String,
    deps: u32,
    dependents: Vec<usize>,
    pending: AtomicU32,
}

/// A reusable job graph.
#[derive(Debug, Default)]
pub struct JobGraph {
    nodes: Vec<Node>,
}

/// A job that panicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPanic {
    /// The job's name.
    pub job: String,
    /// The panic message.
    pub message: String,
}

impl JobGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a job that runs after `deps`; returns its index.
    pub fn add(&mut self, name: impl Into<String>, deps: &[usize]) -> usize {
        let i = self.nodes.len();
        for &d in deps {
            assert!(d < i, "dependencies must be added first");
            self.nodes[d].dependents.push(i);
        }
        self.nodes.push(Node {
            name: name.into(),
            deps: deps.len() as u32,
            dependents: Vec::new(),
            pending: AtomicU32::new(0),
        });
        i
    }

    /// Number of jobs.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no jobs.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Name of job `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }

    /// Runs every job on `pool`, each once its inputs are done; `job(i)` does the work.
    pub fn run(&self, pool: &rayon::ThreadPool, job: &(dyn Fn(usize) + Sync)) -> Result<(), JobPanic> {
        for n in &self.nodes {
            n.pending.store(n.deps, Ordering::Relaxed);
        }
        let failed: Mutex<Option<JobPanic>> = Mutex::new(None);
        let failed_ref = &failed;
        pool.install(|| {
            rayon::scope(|s| {
                for (i, n) in self.nodes.iter().enumerate() {
                    if n.deps == 0 {
                        s.spawn(move |s| self.execute(s, i, job, failed_ref));
                    }
                }
            })
        });
        match failed.into_inner() {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    fn execute<'s>(
        &'s self,
        s: &rayon::Scope<'s>,
        i: usize,
        job: &'s (dyn Fn(usize) + Sync),
        failed: &'s Mutex<Option<JobPanic>>,
    ) {
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| job(i))) {
            let message = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            failed.lock().get_or_insert(JobPanic { job: self.nodes[i].name.clone(), message });
            return;
        }
        for &d in &self.nodes[i].dependents {
            if self.nodes[d].pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                s.spawn(move |s| self.execute(s, d, job, failed));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_in_dependency_order_and_reports_panics() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let mut g = JobGraph::new();
        let a = g.add("a", &[]);
        let b = g.add("b", &[]);
        let c = g.add("c", &[a, b]);
        let _d = g.add("d", &[c]);
        for _ in 0..if cfg!(miri) { 5 } else { 200 } {
            let order = Mutex::new(Vec::new());
            g.run(&pool, &|i| order.lock().push(i)).unwrap();
            let o = order.into_inner();
            let pos = |x| o.iter().position(|&y| y == x).unwrap();
            assert_eq!(o.len(), 4);
            assert!(pos(0) < pos(2) && pos(1) < pos(2) && pos(2) < pos(3));
        }
        let ran = Mutex::new(Vec::new());
        let err = g
            .run(&pool, &|i| {
                if i == c {
                    panic!("boom");
                }
                ran.lock().push(i);
            })
            .unwrap_err();
        assert_eq!(err, JobPanic { job: "c".into(), message: "boom".into() });
        assert!(!ran.lock().contains(&3), "dependents of a failed job do not run");
        // The graph is reusable after a failure.
        g.run(&pool, &|_| {}).unwrap();
    }
}
