//! Sparse windows on against off (`RadixSorter::sparse_windows`), one binary: for each
//! shape and size, rounds of blocks of calls alternating between two reused sorters, the
//! first call of each block untimed (warm against warm); the median Mkeys/s of each and
//! their ratio.
//!
//! `cargo run --release -p switchyard-benches --example sort_sparse_ab -- 20 1`
//! (rounds, then the thread count; sizes 16k, 64k, 256k, 1M).

use std::time::Instant;

use switchyard_benches::sorting::{keys, prepare, run, Shape, SortInput, Sorter};
use switchyard_kernels::sort::RadixSorter;

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok());
    let rounds = args.next().unwrap_or(20).max(1);
    let threads = args.next().unwrap_or(1).max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
    println!("{:<16} {:>8} {:>7} {:>10} {:>10} {:>6}", "shape", "pairs", "threads", "sparse on", "off", "ratio");
    for shape in [Shape::Render, Shape::Uniform] {
        for n in [16_384, 65_536, 262_144, 1 << 20] {
            let template = keys(shape, n, 11);
            let mut sorters = [RadixSorter::new(), RadixSorter::new()];
            sorters[1].sparse_windows = false;
            let mut input = SortInput::default();
            let mut times = [Vec::new(), Vec::new()];
            // Calls per block: about 4M pairs sorted, at least 3.
            let calls = ((4 << 20) / n).max(3);
            for _ in 0..rounds {
                for (s, sorter) in sorters.iter_mut().enumerate() {
                    for call in 0..=calls {
                        prepare(Sorter::Ours, &template, &mut input);
                        let t = pool.install(|| {
                            let start = Instant::now();
                            run(Sorter::Ours, &mut input, sorter, threads);
                            start.elapsed().as_secs_f64()
                        });
                        if call > 0 {
                            times[s].push(t);
                        }
                    }
                }
            }
            assert!(input.keys.windows(2).all(|w| w[0] <= w[1]), "sorted");
            let rate = times.map(|v| n as f64 / switchyard_city::percentile(&v, 0.5) / 1e6);
            println!(
                "{:<16} {:>8} {:>7} {:>10.1} {:>10.1} {:>5.2}x",
                shape.name(),
                n,
                threads,
                rate[0],
                rate[1],
                rate[0] / rate[1]
            );
        }
    }
}
