//! Run 70's probe (issue 22): small inputs sorted as runs, one per worker, then merged
//! pairwise in parallel pieces, against `RadixSorter` as it was and rayon's
//! `par_sort_unstable`, on uniform and render-shaped keys of 16k-64k pairs. `chunks`: one run
//! per thread; `chunks4k`: runs of at least 4k pairs. Median Mkeys/s of 7 rounds, the
//! methods alternating within each round; every merged result is checked against the
//! sorter's.
//!
//! `cargo run --release -p switchyard-benches --example merged_runs -- 1 2 4 8 16`
//!
//! Since this probe the sorter takes merged runs itself for evenly spread keys
//! (`kernels/src/sort/runs.rs`), so `ours` includes them where that module applies.

use std::time::Instant;

use rayon::prelude::*;
use switchyard_benches::sorting::{keys, Shape};
use switchyard_kernels::sort::RadixSorter;

/// How many of `a` come first among the first `d` of the stable merge of `a` and `b`.
fn co_rank(d: usize, a: &[u64], b: &[u64]) -> usize {
    let (mut lo, mut hi) = (d.saturating_sub(b.len()), d.min(a.len()));
    while lo < hi {
        let i = (lo + hi) / 2;
        if a[i] <= b[d - i - 1] {
            lo = i + 1
        } else {
            hi = i
        }
    }
    lo
}

/// The stable merge of `a` and `b` into `out` (exactly as long as both).
fn merge(a: (&[u64], &[u32]), b: (&[u64], &[u32]), out: (&mut [u64], &mut [u32])) {
    let (mut i, mut j) = (0, 0);
    for (k, v) in out.0.iter_mut().zip(out.1.iter_mut()) {
        let take_a = j >= b.0.len() || (i < a.0.len() && a.0[i] <= b.0[j]);
        (*k, *v) = if take_a { (a.0[i], a.1[i]) } else { (b.0[j], b.1[j]) };
        i += usize::from(take_a);
        j += usize::from(!take_a);
    }
}

/// Scratch of the probe's sort.
#[derive(Default)]
struct Runs {
    sorters: Vec<RadixSorter>,
    k: Vec<u64>,
    v: Vec<u32>,
}

/// Sorts runs of at least `min_run` pairs (at most `t`) with their own sorters, then merges
/// them pairwise, each merge cut into pieces of about `n / 2t` output pairs.
fn sort_runs(s: &mut Runs, keys: &mut Vec<u64>, vals: &mut Vec<u32>, t: usize, min_run: usize) {
    let n = keys.len();
    s.k.resize(n, 0);
    s.v.resize(n, 0);
    let runs = t.min(n / min_run).max(1);
    let run = n.div_ceil(runs);
    s.sorters.resize_with(runs, RadixSorter::new);
    keys.par_chunks_mut(run)
        .zip(vals.par_chunks_mut(run))
        .zip(s.sorters.par_iter_mut())
        .for_each(|((k, v), sorter)| sorter.sort(k, v));
    let piece = (n / (2 * t)).max(1024);
    let mut width = run;
    while width < n {
        // Each piece: (left run start, right run start, right run end, output range).
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < n {
            let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
            let p = (end - start).div_ceil(piece);
            pieces.extend((0..p).map(|q| (start, mid, end, q * (end - start) / p, (q + 1) * (end - start) / p)));
            start = end;
        }
        let (src_k, src_v) = (&keys[..], &vals[..]);
        let mut outs = Vec::with_capacity(pieces.len());
        let (mut rest_k, mut rest_v) = (&mut s.k[..], &mut s.v[..]);
        for &(_, _, _, d0, d1) in &pieces {
            let (ok, rk) = std::mem::take(&mut rest_k).split_at_mut(d1 - d0);
            let (ov, rv) = std::mem::take(&mut rest_v).split_at_mut(d1 - d0);
            (rest_k, rest_v) = (rk, rv);
            outs.push((ok, ov));
        }
        pieces.par_iter().zip(outs.par_iter_mut()).for_each(|(&(s0, m, e, d0, d1), (ok, ov))| {
            let (a, b) = (&src_k[s0..m], &src_k[m..e]);
            let (i0, i1) = (co_rank(d0, a, b), co_rank(d1, a, b));
            let (j0, j1) = (d0 - i0, d1 - i1);
            let left = (&a[i0..i1], &src_v[s0 + i0..s0 + i1]);
            merge(left, (&b[j0..j1], &src_v[m + j0..m + j1]), (ok, ov));
        });
        drop(outs);
        std::mem::swap(keys, &mut s.k);
        std::mem::swap(vals, &mut s.v);
        width *= 2;
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let threads = if args.is_empty() { vec![1, 2] } else { args };
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for shape in [Shape::Uniform, Shape::Render] {
        for n in [16_384usize, 32_768, 65_536] {
            let template = keys(shape, n, 11);
            let (mut expect_k, mut expect_v) = (template.clone(), (0..n as u32).collect::<Vec<_>>());
            RadixSorter::new().sort(&mut expect_k, &mut expect_v);
            for &t in &threads {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("pool");
                let (mut runs, mut ours) = (Runs::default(), RadixSorter::new());
                let reps = (1 << 21) / n;
                let mut rates: [Vec<f64>; 4] = Default::default();
                for _ in 0..7 {
                    for (m, rate) in rates.iter_mut().enumerate() {
                        let mut total = 0.0;
                        // One untimed call first: warm against warm.
                        for r in 0..=reps {
                            let (mut k, mut v) = (template.clone(), (0..n as u32).collect::<Vec<_>>());
                            let mut pairs: Vec<(u64, u32)> = k.iter().copied().zip(v.iter().copied()).collect();
                            let elapsed = pool.install(|| {
                                let start = Instant::now();
                                match m {
                                    0 => ours.sort(&mut k, &mut v),
                                    1 => sort_runs(&mut runs, &mut k, &mut v, t, 1),
                                    2 => sort_runs(&mut runs, &mut k, &mut v, t, 4096),
                                    _ => pairs.par_sort_unstable_by_key(|p| p.0),
                                }
                                start.elapsed().as_secs_f64()
                            });
                            total += if r > 0 { elapsed } else { 0.0 };
                            assert!(m == 3 || (k == expect_k && v == expect_v), "method {m}: not the sorter's order");
                        }
                        rate.push(n as f64 * reps as f64 / total / 1e6);
                    }
                }
                let [a, b, c, d] = &mut rates;
                println!(
                    "{:<8} {:>6} t={:<2} ours {:>7.1} chunks {:>7.1} chunks4k {:>7.1} rayon {:>7.1}",
                    shape.name(),
                    n,
                    t,
                    median(a),
                    median(b),
                    median(c),
                    median(d)
                );
            }
        }
    }
}
