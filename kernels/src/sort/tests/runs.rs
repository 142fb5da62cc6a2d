//! Small evenly spread inputs on four threads or more (module `runs`): which inputs take
//! runs sorted per worker and merged, and that the result is the stable order (and the
//! (key, value) order with ties by value) for even and odd numbers of merge rounds.

use super::super::runs::{self, NEARLY_RUNS_MAX, NEARLY_RUNS_MIN_THREADS, RUNS_MAX, RUNS_MIN_THREADS};
use super::*;

/// Sorts `keys` (values: input positions) on `threads` threads with `sorter`, through
/// `sort_vecs` when `vecs`; whether the runs path ran.
fn runs_sort(threads: usize, keys: &[u64], sorter: &mut RadixSorter, vecs: bool) -> (Vec<u64>, Vec<u32>, bool) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let before = runs::SORTS.with(|c| c.get());
        let (mut k, mut v) = (keys.to_vec(), (0..keys.len() as u32).collect::<Vec<_>>());
        if vecs {
            sorter.sort_vecs(&mut k, &mut v);
        } else {
            sorter.sort(&mut k, &mut v);
        }
        (k, v, runs::SORTS.with(|c| c.get()) > before)
    })
}

/// Random keys; random keys whose second half repeats every eighth key of the first (equal
/// keys in different runs: the merge must keep them in input order); random keys whose
/// first half is sorted (runs already in order, which their sort leaves as they are); and
/// natively, random keys each repeated three times in scattered places (under miri too few
/// distinct keys for the sample to find them spread evenly).
fn even_inputs(n: usize) -> Vec<(&'static str, Vec<u64>)> {
    let once = random(n, n as u64);
    let mut copies = once.clone();
    for i in (n / 2..n).filter(|i| i % 8 == 7) {
        copies[i] = copies[i - n / 2];
    }
    let mut half = once.clone();
    half[..n / 2].sort_unstable();
    let thrice: Vec<u64> = (0..n).map(|i| once[(i * 7) % n.div_ceil(3)]).collect();
    let mut inputs = vec![("random", once), ("copies", copies), ("half sorted", half)];
    if !cfg!(miri) {
        inputs.push(("thrice", thrice));
    }
    inputs
}

#[test]
fn evenly_spread_inputs_up_to_32k_on_four_threads_or_more_sort_in_merged_runs() {
    // Sizes at both ends and one between; thread counts that give even and odd numbers
    // of runs and of merge rounds (the runs sorted into the scratch or in place).
    // Under miri (whose pools cost much) the largest size, each input one way.
    let sizes: &[usize] = if cfg!(miri) { &[RUNS_MAX] } else { &[PARALLEL_MIN, PARALLEL_MIN + 1, 20_000, RUNS_MAX] };
    let threads: &[usize] = if cfg!(miri) { &[5] } else { &[RUNS_MIN_THREADS, 5, 8, 16] };
    let mut sorter = RadixSorter::new();
    for &n in sizes {
        for (name, keys) in even_inputs(n) {
            for &t in threads {
                for vecs in [false, true].into_iter().filter(|&v| !cfg!(miri) || v == (name.len() % 2 == 0)) {
                    let (k, v, took) = runs_sort(t, &keys, &mut sorter, vecs);
                    assert!(took && sorter.last_parallel, "{name}, {n} pairs, {t} threads: merged runs ran");
                    assert!(sorter.last_passes >= 2, "{name}, {n} pairs, {t} threads: runs, then a merge");
                    assert_stable(&keys, &k, &v, &format!("{name}, {n} pairs, {t} threads, vecs {vecs}"));
                }
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "path choice only: safe code, the merged runs' sorts are checked by the test above")]
fn other_inputs_and_pools_do_not_take_merged_runs() {
    let n = if cfg!(miri) { RUNS_MAX } else { 20_000 };
    let mut sorter = RadixSorter::new();
    let cases = [
        ("random, 3 threads", random(n, 1), RUNS_MIN_THREADS - 1),
        ("random, past the limit", random(RUNS_MAX + 1, 2), RUNS_MIN_THREADS),
        ("render keys", render_keys(n, 3), 8),
        ("random, below the parallel sort", random(PARALLEL_MIN - 1, 4), 8),
    ];
    for (name, keys, t) in cases {
        let (k, v, took) = runs_sort(t, &keys, &mut sorter, false);
        assert!(!took, "{name}: merged runs ran");
        assert_stable(&keys, &k, &v, name);
    }
}

#[test]
#[cfg_attr(miri, ignore = "ties are safe code over the merged runs, checked by the test above")]
fn ties_by_value_give_the_key_value_order_after_merged_runs() {
    let n = if cfg!(miri) { RUNS_MAX } else { 24_000 };
    let mut sorter = RadixSorter { ties_by_value: true, ..RadixSorter::new() };
    let (_, keys) = even_inputs(n).swap_remove(1);
    // Values a permutation (as object indices are): the (key, value) order is unique.
    let vals: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % n as u32).collect();
    let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    expect.sort_unstable();
    // 4 threads: an even number of merge rounds (the runs sorted in place); 5: odd (the
    // runs sorted into the scratch).
    for t in [RUNS_MIN_THREADS, 5] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
        let (mut k, mut v) = (keys.clone(), vals.clone());
        let took = pool.install(|| {
            let before = runs::SORTS.with(|c| c.get());
            sorter.sort(&mut k, &mut v);
            runs::SORTS.with(|c| c.get()) > before
        });
        assert!(took, "{t} threads: merged runs ran");
        assert!(k.iter().copied().zip(v.iter().copied()).eq(expect.iter().copied()), "{t} threads: (key, value) order");
    }
}

/// Frame-coherent keys (sorted render keys with 3 % changed) of `n` pairs.
fn coherent(n: usize, seed: u64) -> Vec<u64> {
    shapes(n, seed).into_iter().find(|(name, _)| *name == "coherent").expect("a coherent shape").1
}

#[test]
#[cfg_attr(miri, ignore = "the same merged runs as the test above, on nearly sorted inputs (safe code)")]
fn nearly_sorted_inputs_of_at_most_16k_pairs_a_thread_on_eight_threads_or_more_sort_in_merged_runs() {
    // (pairs, threads): both limits, and sizes between, on even and odd thread counts.
    let cases: &[(usize, usize)] = if cfg!(miri) {
        &[(8 * PARALLEL_MIN, 8)]
    } else {
        &[(PARALLEL_MIN, 8), (40_000, 11), (8 * PARALLEL_MIN, 8), (200_000, 16), (NEARLY_RUNS_MAX, 16)]
    };
    let mut sorter = RadixSorter::new();
    for &(n, t) in cases {
        let keys = coherent(n, n as u64);
        let (k, v, took) = runs_sort(t, &keys, &mut sorter, t % 2 == 1);
        assert!(took, "{n} pairs, {t} threads: merged runs ran");
        assert_stable(&keys, &k, &v, &format!("{n} pairs, {t} threads"));
        // Fewer threads: the nearly-sorted path as before.
        let (_, _, took) = runs_sort(NEARLY_RUNS_MIN_THREADS - 1, &keys, &mut sorter, false);
        assert!(!took && sorter.last_path == SortPath::NearlySorted, "{n} pairs, 7 threads: the nearly-sorted path");
    }
    // Past either limit: one pair more than 16k a thread, or than the most pairs.
    let past: &[(usize, usize)] =
        if cfg!(miri) { &[(8 * PARALLEL_MIN + 1, 8)] } else { &[(8 * PARALLEL_MIN + 1, 8), (NEARLY_RUNS_MAX + 1, 32)] };
    for &(n, t) in past {
        let keys = coherent(n, 5);
        let (k, v, took) = runs_sort(t, &keys, &mut sorter, false);
        assert!(!took, "{n} pairs, {t} threads: not merged runs");
        assert_stable(&keys, &k, &v, &format!("{n} pairs, {t} threads"));
    }
}

#[test]
#[cfg_attr(miri, ignore = "ties are safe code over the merged runs, checked by the test above")]
fn sorted_inputs_in_merged_runs_stay_put_and_order_their_ties_by_value() {
    let n = if cfg!(miri) { 8 * PARALLEL_MIN } else { 50_000 };
    // Sorted keys, each three times, their values descending: in key order, every tie out
    // of value order.
    let keys: Vec<u64> = (0..n as u64).map(|i| i / 3 * 1000).collect();
    let vals: Vec<u32> = (0..n as u32).rev().collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(NEARLY_RUNS_MIN_THREADS).build().unwrap();
    let mut sorter = RadixSorter::new();
    let (mut k, mut v) = (keys.clone(), vals.clone());
    let took = pool.install(|| {
        let before = runs::SORTS.with(|c| c.get());
        sorter.sort(&mut k, &mut v);
        runs::SORTS.with(|c| c.get()) > before
    });
    assert!(took && sorter.last_path == SortPath::InOrder && sorter.last_passes == 0, "in order: nothing merged");
    assert!(k == keys && v == vals, "stable: a sorted input stays as it is");
    sorter.ties_by_value = true;
    let (mut k, mut v) = (keys.clone(), vals.clone());
    pool.install(|| sorter.sort(&mut k, &mut v));
    let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    expect.sort_unstable();
    assert!(k.iter().copied().zip(v.iter().copied()).eq(expect), "ties by value: the (key, value) order");
}
