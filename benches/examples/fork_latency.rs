//! How long a rayon fork takes to reach other workers: a parallel loop of 8 pieces of
//! 25 µs of spinning each, on a pool whose workers slept (the pool idle for 3 ms before
//! each loop) or had just worked (loops back to back), as rayon's `par_iter` and as
//! `switchyard_kernels::par::for_each_index` (claimed pieces; the caller spins instead of
//! sleeping while it waits). Prints the median wall time of the loop, how many workers
//! took part, and when the first piece started on another worker.
//!
//! `cargo run --release -p switchyard-benches --example fork_latency -- 16`

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rayon::prelude::*;

fn spin(us: u64) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_micros(us) {
        std::hint::spin_loop();
    }
}

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(16);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
    let cases = [("slept 3 ms", Some(Duration::from_millis(3))), ("back to back", None)];
    for (name, idle, claimed) in cases.iter().flat_map(|&(n, i)| [(n, i, false), (n, i, true)]) {
        let (mut walls, mut helpers, mut first) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..200 {
            if let Some(d) = idle {
                std::thread::sleep(d);
            }
            let starts = Mutex::new(Vec::with_capacity(8));
            let t = Instant::now();
            pool.install(|| {
                let me = rayon::current_thread_index();
                let piece = |_| {
                    let at = t.elapsed();
                    starts.lock().unwrap().push((rayon::current_thread_index() != me, at));
                    spin(25);
                };
                if claimed {
                    switchyard_kernels::par::for_each_index(8, &piece);
                } else {
                    (0..8).into_par_iter().for_each(piece);
                }
            });
            walls.push(t.elapsed().as_secs_f64() * 1e6);
            let s = starts.into_inner().unwrap();
            let mut who: Vec<_> = s.iter().filter(|x| x.0).map(|x| x.1).collect();
            helpers.push(who.len() as f64);
            who.sort();
            first.push(who.first().map_or(f64::NAN, |d| d.as_secs_f64() * 1e6));
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let p90 = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() * 9 / 10]
        };
        println!(
            "{threads} threads, {name}, {}: loop of 8 x 25 us: wall median {:.1} us (p90 {:.1}; serial 200, ideal 25); pieces on other workers median {:.0} of 8; first piece on another worker at {:.1} us (median)",
            if claimed { "claimed pieces" } else { "rayon par_iter" },
            med(&mut walls),
            p90(&mut walls),
            med(&mut helpers),
            med(&mut first.iter().copied().filter(|x| x.is_finite()).collect()),
        );
    }
}
