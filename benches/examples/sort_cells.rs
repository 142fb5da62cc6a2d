//! The sort's cells of the report (issue 22, item 4) without the rest of the report: for
//! each shape, size and thread count, the median Mkeys/s of a reused `RadixSorter` (on
//! owned arrays, `sort_vecs`, as the report times it; on slices, `sort`, and a fresh
//! sorter per call beside it)
//! and of every baseline, rounds alternating between them so a noisy machine hits all alike.
//! Warm against warm, as in the report (which times each sorter's calls back to back):
//! each sorter's timed calls in a round follow one untimed call of the same sorter.
//! (Timing one call of each in turn left ours cold — its reused scratch last touched a
//! round ago — while each baseline's allocation got the pages the one before had just
//! freed: on the 2-core machine 1M uniform pairs measured 38 against 60 Mkeys/s warm.)
//!
//! `cargo run --release -p switchyard-benches --example sort_cells -- 15 1 2 16`
//! (rounds, then thread counts; sizes 16k, 64k, 256k, 1M, and any size `SORT_CELLS`
//! names).

use std::time::Instant;

use switchyard_benches::sorting::{keys, prepare, run, Shape, SortInput, Sorter};
use switchyard_kernels::sort::RadixSorter;

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok());
    let rounds = args.next().unwrap_or(15).max(1);
    let threads: Vec<usize> = args.collect();
    let threads = if threads.is_empty() { vec![1] } else { threads };
    // Ours on owned arrays (`sort_vecs`, as the report times it), ours on slices (the
    // result copied back where a path leaves it in the scratch), ours with a fresh sorter
    // per call, then the baselines.
    let sorters: Vec<Sorter> =
        [Sorter::Ours, Sorter::OursSlices, Sorter::OursFresh].into_iter().chain(Sorter::BASELINES).collect();
    println!(
        "{:<16} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:<24} {:>6}",
        "shape", "pairs", "threads", "ours", "slices", "fresh", "best", "baseline", "ratio"
    );
    // `SORT_CELLS=uniform:65536,render` limits the cells (shape, optionally :size).
    let only = std::env::var("SORT_CELLS").unwrap_or_default();
    let wanted = |shape: Shape, n: usize| {
        only.is_empty()
            || only.split(',').any(|c| {
                let mut it = c.split(':');
                let s = it.next().unwrap_or("");
                shape.name().starts_with(s) && it.next().is_none_or(|m| m.parse() == Ok(n))
            })
    };
    // Sizes named in `SORT_CELLS` are measured even where the report has no cell.
    let mut sizes = vec![16_384, 65_536, 262_144, 1 << 20];
    sizes.extend(only.split(',').filter_map(|c| c.split(':').nth(1)?.parse::<usize>().ok()));
    sizes.sort_unstable();
    sizes.dedup();
    for shape in [Shape::Uniform, Shape::Render, Shape::Coherent { percent: 3 }] {
        for &n in &sizes {
            if !wanted(shape, n) {
                continue;
            }
            let template = keys(shape, n, 11);
            for &t in &threads {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("pool");
                let mut ours = RadixSorter::new();
                let mut input = SortInput::default();
                let mut times = vec![Vec::with_capacity(rounds); sorters.len()];
                // Enough calls per sample that small sizes are not timer-bound.
                let reps = ((1 << 20) / n).max(1);
                for _ in 0..rounds {
                    for (s, &sorter) in sorters.iter().enumerate() {
                        prepare(sorter, &template, &mut input);
                        pool.install(|| run(sorter, &mut input, &mut ours, t));
                        let mut total = 0.0;
                        for _ in 0..reps {
                            prepare(sorter, &template, &mut input);
                            total += pool.install(|| {
                                let start = Instant::now();
                                run(sorter, &mut input, &mut ours, t);
                                start.elapsed().as_secs_f64()
                            });
                        }
                        times[s].push(total / reps as f64);
                    }
                }
                let rate: Vec<f64> =
                    times.iter().map(|v| n as f64 / switchyard_city::percentile(v, 0.5) / 1e6).collect();
                let (b, best) =
                    rate[3..].iter().enumerate().fold((0, 0.0), |a, (i, &r)| if r > a.1 { (i, r) } else { a });
                println!(
                    "{:<16} {:>8} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:<24} {:>5.2}x",
                    shape.name(),
                    n,
                    t,
                    rate[0],
                    rate[1],
                    rate[2],
                    best,
                    Sorter::BASELINES[b].name(),
                    rate[0] / best
                );
            }
        }
    }
}
