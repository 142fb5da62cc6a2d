//! The nearly-sorted path on frame-coherent keys (last frame's order with 3 % of keys
//! changed, the sort's input in a steady frame): median µs of a reused `RadixSorter`, per
//! size and thread count, timed on the pool's thread (not the hand-off to it).
//!
//! - `sort`: `RadixSorter::sort` on slices (the result copied back from scratch);
//! - `sort_vecs`: `RadixSorter::sort_vecs` on owned arrays (exchanged with the scratch,
//!   as the frame's sort stage does).
//!
//! `cargo run --release -p switchyard-benches --example nearly_sorted -- 300 1 2 16`
//! (rounds, then thread counts).

use std::time::Instant;

use switchyard_benches::sorting::{keys, Shape};
use switchyard_kernels::sort::RadixSorter;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok());
    let rounds = args.next().unwrap_or(300).max(1);
    let threads: Vec<usize> = args.collect();
    let threads = if threads.is_empty() { vec![1, 2] } else { threads };
    println!("{:>9} {:>8} {:>9} {:>10}", "pairs", "threads", "sort µs", "sort_vecs");
    for n in [16_000, 31_000, 62_000, 250_000, 1_000_000] {
        let template = keys(Shape::Coherent { percent: 3 }, n, 7);
        for &t in &threads {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("pool");
            let (mut by_slice, mut by_vec) = (RadixSorter::new(), RadixSorter::new());
            let (mut k, mut v) = (template.clone(), (0..n as u32).collect::<Vec<_>>());
            let (mut slice_us, mut vec_us) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
            for round in 0..2 * rounds {
                k.copy_from_slice(&template);
                v.iter_mut().enumerate().for_each(|(i, x)| *x = i as u32);
                let (sorter, out) =
                    if round % 2 == 0 { (&mut by_slice, &mut slice_us) } else { (&mut by_vec, &mut vec_us) };
                out.push(pool.install(|| {
                    let start = Instant::now();
                    if round % 2 == 0 {
                        sorter.sort(&mut k, &mut v);
                    } else {
                        sorter.sort_vecs(&mut k, &mut v);
                    }
                    start.elapsed().as_secs_f64() * 1e6
                }));
                assert!(k.windows(2).all(|w| w[0] <= w[1]), "unsorted output");
            }
            println!("{n:>9} {t:>8} {:>9.1} {:>10.1}", median(slice_us), median(vec_us));
        }
    }
}
