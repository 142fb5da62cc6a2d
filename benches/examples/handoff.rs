//! What it costs a stage to read what another core just wrote: one-thread work on 31k
//! frame-coherent (key, index) pairs (the opaque queue of the demo's 100k-object frame),
//! with the input written by the same thread or by another one just before, and with the
//! other cores idle or spinning. Prints medians of 200 rounds, µs:
//!
//! - `sort`: `RadixSorter::sort` (the nearly-sorted path) on a one-thread pool;
//! - `read`: a sum over the keys and indices (one sequential read of 375 KB).
//!
//! `cargo run --release -p switchyard-benches --example handoff -- 31000 15`
//! (pairs, spinning threads beside in the last rows).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use switchyard_benches::sorting::{keys, Shape};
use switchyard_kernels::sort::RadixSorter;

/// The input of one round, written by whichever thread `fill` runs on.
struct Input {
    keys: Vec<u64>,
    vals: Vec<u32>,
}

fn fill(input: &Mutex<Input>, template: &[u64]) {
    let mut i = input.lock().unwrap();
    i.keys.copy_from_slice(template);
    i.vals.iter_mut().enumerate().for_each(|(n, v)| *v = n as u32);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok());
    let n = args.next().unwrap_or(31_000);
    let spinners = args.next().unwrap_or(15);
    let template = keys(Shape::Coherent { percent: 3 }, n, 7);
    let input = Arc::new(Mutex::new(Input { keys: vec![0; n], vals: vec![0; n] }));
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    let mut sorter = RadixSorter::new();
    for spin in [0, spinners] {
        let stop = Arc::new(AtomicBool::new(false));
        let spinning: Vec<_> = (0..spin)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        // The other writer: fills the input when the barrier lets it, then waits again.
        let (go, done) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
        let writer = {
            let (go, done, input, template) = (go.clone(), done.clone(), input.clone(), template.clone());
            std::thread::spawn(move || {
                for _ in 0..2 * 200 {
                    go.wait();
                    fill(&input, &template);
                    done.wait();
                }
            })
        };
        for what in ["sort", "read"] {
            let (mut local, mut remote) = (Vec::new(), Vec::new());
            for round in 0..2 * 200 {
                let by_other = round % 2 == 1;
                if by_other {
                    go.wait();
                    done.wait();
                } else {
                    one.install(|| fill(&input, &template));
                }
                let mut i = input.lock().unwrap();
                let i = &mut *i;
                let t = Instant::now();
                one.install(|| match what {
                    "sort" => sorter.sort(&mut i.keys, &mut i.vals),
                    _ => {
                        let s: u64 = i.keys.iter().sum::<u64>() + i.vals.iter().map(|&v| u64::from(v)).sum::<u64>();
                        black_box(s);
                    }
                });
                let us = t.elapsed().as_secs_f64() * 1e6;
                if by_other {
                    remote.push(us)
                } else {
                    local.push(us)
                }
            }
            println!(
                "{n} pairs, {spin} threads spinning beside: {what}: written by the same thread {:.1} us, by another thread {:.1} us ({:.2}x)",
                median(local.clone()),
                median(remote.clone()),
                median(remote) / median(local)
            );
        }
        writer.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        spinning.into_iter().for_each(|t| t.join().unwrap());
    }
}
