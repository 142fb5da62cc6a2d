//! The radix sort's tests: every path against a stable sort's order, thresholds ±1,
//! thread counts, scratch reuse.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::ties::order_runs;
use super::*;

mod gaps;
mod runs;
mod wide;
mod windows;

fn check(keys: Vec<u64>) {
    let n = keys.len();
    let mut k = keys.clone();
    let mut v: Vec<u32> = (0..n as u32).collect();
    RadixSorter::new().sort(&mut k, &mut v);
    assert_stable(&keys, &k, &v, "check");
}

/// Asserts that `k` with `v` is the stable sort of `keys` with their input positions as
/// values, which is what a stable `sort_by_key` of the pairs gives, checked in one pass:
/// each value a position not seen before (so all of them), holding the key beside it,
/// and the pairs ascending by key, then position. (Under miri a second sort to compare
/// with costs as much as the sort tested.)
fn assert_stable(keys: &[u64], k: &[u64], v: &[u32], what: &str) {
    assert!(
        k.len() == keys.len() && v.len() == keys.len(),
        "{what}: {} keys and {} values for {}",
        k.len(),
        v.len(),
        keys.len()
    );
    let mut seen = vec![false; keys.len()];
    for (i, (&key, &at)) in k.iter().zip(v).enumerate() {
        let fresh = seen.get_mut(at as usize).is_some_and(|s| !std::mem::replace(s, true));
        assert!(fresh, "{what}: value {at} at {i} is not a position not seen before");
        assert_eq!(key, keys[at as usize], "{what}: the key at {i} is not the one at position {at}");
        assert!(i == 0 || (k[i - 1], v[i - 1]) < (key, at), "{what}: pairs {} and {i} not in stable order", i - 1);
    }
}

#[test]
fn the_stable_order_check_refuses_every_other_order() {
    let keys = [5, 3, 5, 1];
    assert_stable(&keys, &[1, 3, 5, 5], &[3, 1, 0, 2], "the stable order");
    let wrong: [(&[u64], &[u32]); 5] = [
        (&[1, 3, 5, 5], &[3, 1, 2, 0]), // equal keys out of input order
        (&[1, 3, 5, 5], &[3, 1, 0, 0]), // a position twice
        (&[1, 3, 5, 5], &[3, 1, 0, 9]), // a position past the input
        (&[1, 5, 5, 3], &[3, 0, 2, 1]), // keys out of order
        (&[1, 3, 5], &[3, 1, 0]),       // a pair lost
    ];
    for (k, v) in wrong {
        let caught = std::panic::catch_unwind(|| assert_stable(&keys, k, v, "a wrong order"));
        assert!(caught.is_err(), "{k:?} {v:?} passed");
    }
}

/// Sorted keys below `values` with one in `every` then changed in place: last frame's
/// order with a few objects moved.
fn coherent(n: usize, seed: u64, values: u64, every: usize) -> Vec<u64> {
    let mut keys: Vec<u64> = random(n, seed).into_iter().map(|k| k % values).collect();
    keys.sort_unstable();
    let mut rng = Pcg64Mcg::seed_from_u64(seed + 1);
    for _ in 0..n / every {
        keys[rng.gen_range(0..n)] = rng.gen_range(0..values);
    }
    keys
}

/// Sorts `keys` (values: input positions) with `sorter` on a pool of `threads`;
/// returns the keys, the values, and whether the nearly-sorted path ran.
fn sort_on(threads: usize, keys: &[u64], sorter: &mut RadixSorter) -> (Vec<u64>, Vec<u32>, bool) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let (mut k, mut v) = (keys.to_vec(), (0..keys.len() as u32).collect::<Vec<_>>());
        sorter.sort(&mut k, &mut v);
        (k, v, sorter.last_path == SortPath::NearlySorted)
    })
}

/// The most threads a test sorts on (fewer under miri, where each costs much).
const MANY: usize = if cfg!(miri) { 4 } else { 8 };
/// Thread counts a test compares: one, a few, many (under miri one and a few: each
/// sort costs much there, and three threads take the same parallel paths as four).
const THREADS: &[usize] = if cfg!(miri) { &[1, 3] } else { &[1, 3, MANY] };

/// `n` random keys from `seed`.
fn random(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

#[test]
fn matches_std_sort_on_shapes() {
    let sizes: &[usize] = if cfg!(miri) { &[0, 1, 2, 20, 600] } else { &[0, 1, 2, 20, 255, 4096, 100_000] };
    for &n in sizes {
        check(random(n, 7));
        let mut sorted = random(n, 9);
        sorted.sort_unstable();
        check(sorted.clone());
        sorted.reverse();
        check(sorted);
        check(vec![42; n]);
        check(random(n, 3).into_iter().map(|k| k & 0xF000_0000_0000_00FF).collect());
    }
}

#[test]
fn parallel_path_is_stable_and_independent_of_threads() {
    let n = if cfg!(miri) { 600 } else { 300_000 };
    let keys: Vec<u64> = random(n, 5).into_iter().map(|k| k % 1000).collect();
    let one = sort_on(1, &keys, &mut RadixSorter::new());
    assert_eq!(one, sort_on(4, &keys, &mut RadixSorter::new()));
    check(keys);
}

#[test]
fn nearly_sorted_input_takes_the_merge_path_and_stays_stable() {
    // (Under miri too, on one thread: every path of the sort runs there at least once. The
    // nearly-sorted path's other tests are safe code over par and the radix paths.)
    let n = if cfg!(miri) { 800 } else { 200_000 };
    // 1 % of keys changed.
    let keys = coherent(n, 11, 5000, 100);
    let mut k = keys.clone();
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut s = RadixSorter::new();
    s.sort(&mut k, &mut v);
    assert_eq!(s.last_path, SortPath::NearlySorted);
    check(keys.clone());
    // Already sorted: untouched.
    let mut v2: Vec<u32> = (0..n as u32).collect();
    s.sort(&mut k, &mut v2);
    assert_eq!(v2, (0..n as u32).collect::<Vec<_>>());
    assert_eq!(s.last_path, SortPath::InOrder);
    // Few descents but many keys out of place (one early spike of huge keys): the
    // merge path gives up, restores the input and the full sort runs.
    let mut spiky: Vec<u64> = (0..n as u64).collect();
    for x in spiky.iter_mut().take(n / 4) {
        *x += n as u64;
    }
    let (mut k, mut v) = (spiky.clone(), (0..n as u32).collect::<Vec<_>>());
    s.sort(&mut k, &mut v);
    assert_eq!(s.last_path, SortPath::Radix { merge_gave_up: true });
    check(spiky);
}

#[test]
fn sorting_owned_arrays_equals_sorting_slices_on_every_path() {
    let n = if cfg!(miri) { 300 } else { 100_000 };
    let coherent = coherent(n, 21, 7000, 50);
    let sorted: Vec<u64> = (0..n as u64).collect();
    // Skewed keys (few top digits): buckets split again on 3 threads, which with owned
    // arrays leave their results in the sorter's scratch.
    let skewed: Vec<u64> =
        random(n, 29).into_iter().enumerate().map(|(i, k)| (((i % 3) as u64) << 60) | (k >> 40)).collect();
    // The paths (the skewed keys' order sample reads differently at miri's size: either
    // radix path).
    let radix = |merge_gave_up| [SortPath::Radix { merge_gave_up }; 2];
    let mut cases = vec![
        (coherent, [SortPath::NearlySorted; 2]),
        (random(n, 23), radix(false)),
        (skewed, [SortPath::Radix { merge_gave_up: false }, SortPath::Radix { merge_gave_up: true }]),
        (sorted, [SortPath::InOrder; 2]),
    ];
    // Render keys natively. Under miri the skewed keys alone, on three threads: their
    // buckets split again leave the result in the sorter's scratch (the exchange this
    // test checks) through the parallel scatters; the other paths' scatters are checked
    // by the threshold test, and the nearly-sorted and in-order paths are safe code.
    if cfg!(miri) {
        cases = vec![cases.swap_remove(2)];
    } else {
        cases.push((render_keys(n, 27), radix(false)));
    }
    for threads in if cfg!(miri) { &[3][..] } else { &[1, 3] } {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(*threads).build().unwrap();
        // One sorter for every case and round: exchanged buffers are reused, whatever
        // length the previous sort left them.
        let (mut by_slice, mut by_vec) = (RadixSorter::new(), RadixSorter::new());
        for round in 0..2 {
            for (keys, path) in &cases {
                let (mut k1, mut v1) = (keys.clone(), (0..n as u32).rev().collect::<Vec<_>>());
                let (mut k2, mut v2) = (k1.clone(), v1.clone());
                pool.install(|| by_slice.sort(&mut k1, &mut v1));
                pool.install(|| by_vec.sort_vecs(&mut k2, &mut v2));
                assert!(path.contains(&by_vec.last_path), "{threads} threads, round {round}");
                assert!(k2.len() == n && v2.len() == n);
                assert!(k1 == k2 && v1 == v2, "{threads} threads, {:?}, round {round}", path[0]);
            }
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the nearly-sorted path is safe code over par and the radix paths, checked by their own tests"
)]
fn nearly_sorted_path_is_independent_of_threads() {
    // Enough changed keys that the set-aside ones take the parallel sort too.
    let n = if cfg!(miri) { 1_600 } else { 600_000 };
    let mut keys: Vec<u64> = random(n, 21).into_iter().map(|k| k % 20_000).collect();
    keys.sort_unstable();
    let mut rng = Pcg64Mcg::seed_from_u64(22);
    for _ in 0..n / if cfg!(miri) { 20 } else { 30 } {
        keys[rng.gen_range(0..n)] = rng.gen_range(0..20_000);
    }
    let run = |threads, merge_path: bool| {
        let mut s = RadixSorter::new();
        if !merge_path {
            s.nearly_sorted_max_threads = 0;
        }
        let out = sort_on(threads, &keys, &mut s);
        assert_eq!(out.2, merge_path);
        if merge_path && threads > 1 {
            let rest = s.rest_keys.len();
            assert!(rest >= PARALLEL_MIN, "{rest} set aside: the nested parallel sort is exercised");
        }
        (out.0, out.1)
    };
    let one = run(1, true);
    assert_eq!(one, run(3, true));
    assert_eq!(one, run(MANY, true));
    assert_eq!(one, run(MANY, false), "the merge path and the full sort agree");
    check(keys);
}

#[test]
fn skewed_keys_split_big_buckets_again_and_stay_stable() {
    // Few distinct top digits (render-shaped): buckets far larger than the size above
    // which a bucket is split again (pairs over twice the threads, at most SPLIT_AGAIN).
    let n = if cfg!(miri) { 600 } else { 400_000 };
    let keys: Vec<u64> = random(n, 31)
        .into_iter()
        .enumerate()
        .map(|(i, k)| (((i % 3) as u64) << 60) | ((k & 0xffff_ffff) % 50_000))
        .collect();
    let one = sort_on(1, &keys, &mut RadixSorter::new());
    // Three threads under miri split the buckets again at a fraction of six's cost.
    assert_eq!(one, sort_on(if cfg!(miri) { 3 } else { 6 }, &keys, &mut RadixSorter::new()));
    check(keys);
}

/// Render-shaped keys: a pass bit, a few pipelines, 256 materials, 64 meshes, a depth.
fn render_keys(n: usize, seed: u64) -> Vec<u64> {
    let mut r = Pcg64Mcg::seed_from_u64(seed);
    let pipes: Vec<u64> = (0..16).map(|_| r.gen_range(0..1u64 << 15)).collect();
    let mats: Vec<u64> = (0..256).map(|_| r.gen_range(0..1u64 << 16)).collect();
    let meshes: Vec<u64> = (0..64).map(|_| r.gen_range(0..1u64 << 12)).collect();
    (0..n)
        .map(|_| {
            (r.gen_range(0..2u64) << 60)
                | (pipes[r.gen_range(0..16)] << 44)
                | (mats[r.gen_range(0..256)] << 28)
                | (meshes[r.gen_range(0..64)] << 16)
                | r.gen_range(0..1u64 << 16)
        })
        .collect()
}

/// Every input shape the tests sort, by name: `n` keys each.
fn shapes(n: usize, seed: u64) -> Vec<(&'static str, Vec<u64>)> {
    let mut sorted = random(n, seed + 1);
    sorted.sort_unstable();
    let mut reversed = sorted.clone();
    reversed.reverse();
    // Frame-coherent: last frame's sorted queue with 3 % of the keys changed.
    let mut coherent = render_keys(n, seed + 2);
    coherent.sort_unstable();
    let fresh = render_keys(n / 30 + 1, seed + 3);
    let mut rng = Pcg64Mcg::seed_from_u64(seed + 4);
    for &k in &fresh {
        if n > 0 {
            coherent[rng.gen_range(0..n)] = k;
        }
    }
    // Adversarial: one key far above the rest puts all others in one top bucket, the
    // rest differ only in their lowest bits with many duplicates; and a spike (few
    // descents, a quarter of the keys out of place) that makes the merge path give up.
    let mut outlier: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 5).collect();
    if let Some(k) = outlier.get_mut(n / 2) {
        *k = u64::MAX;
    }
    let spike: Vec<u64> = (0..n as u64).map(|i| if i < n as u64 / 4 { i + n as u64 } else { i }).collect();
    vec![
        ("random", random(n, seed)),
        ("render", render_keys(n, seed)),
        ("coherent", coherent),
        ("all-equal", vec![0x5eed_0000_1234; n]),
        ("sorted", sorted),
        ("reversed", reversed),
        ("outlier", outlier),
        ("spike", spike),
    ]
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the nearly-sorted path is safe code over par and the radix paths, checked by their own tests"
)]
fn a_gap_at_either_end_of_the_input_merges_in_parallel_segments() {
    // Keys changed at both ends (and the middle) leave the first and last kept segments
    // empty; the parallel merge splits around them (merged runs off: they would take it).
    let n = if cfg!(miri) { 600 } else { 100_000 };
    let mut keys: Vec<u64> = (0..n as u64).map(|k| k * 8).collect();
    for (i, k) in [(0, 5 * 8 * n as u64 / 7), (1, 3), (n / 2, 17), (n - 2, 5), (n - 1, 40 * n as u64 / 9)] {
        keys[i] = k;
    }
    for &threads in THREADS {
        let mut s = RadixSorter { merged_runs: false, ..RadixSorter::new() };
        let (k, v, merged) = sort_on(threads, &keys, &mut s);
        assert!(merged, "the merge path ran");
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        expect.sort_by_key(|p| p.0);
        assert!(expect.iter().map(|p| p.0).eq(k) && expect.iter().map(|p| p.1).eq(v), "{threads} threads");
    }
}

#[test]
fn every_size_threshold_plus_minus_one_on_every_shape() {
    // The radix paths' thresholds, then the nearly-sorted path's and the merged runs'.
    let radix = [
        lsd::INSERTION_MAX,
        msd::NARROW_MAX,
        MIN_BLOCK,
        SPLIT_MIN,
        PARALLEL_MIN,
        EVEN_SERIAL_MAX,
        BLOCK,
        COPY_PARALLEL_MIN,
        SPLIT_AGAIN,
        msd::LSD_MAX,
        msd::PREFIX_MIN,
        msd::PREFIX_MAX,
        sparse::SPARSE_MIN,
        sparse::SPARSE_MAX,
        super::wide::WIDE_MIN,
        super::wide::WIDE_MAX,
    ];
    let safe = [NEARLY_SORTED_MIN, MERGE_PARALLEL_MIN, super::runs::RUNS_MAX];
    // Miri: the radix paths' scaled thresholds (not the unscaled large ones), on random
    // keys, which take those paths and their unsafe scatters (the nearly-sorted path and
    // the merged runs, which the other shapes and thresholds reach, are safe code over
    // them).
    let largest = if cfg!(miri) { 200 } else { usize::MAX };
    let miri_shapes = ["random"];
    let thresholds = radix.iter().chain(if cfg!(miri) { &[][..] } else { &safe[..] });
    let mut sizes: Vec<usize> = thresholds.flat_map(|&t| [t - 1, t, t + 1]).filter(|&n| n <= largest).collect();
    sizes.sort_unstable();
    sizes.dedup();
    // Five threads (merged runs take four or more); three under miri, where their tests run.
    let many = if cfg!(miri) { 3 } else { 5 };
    let pools = [1, many].map(|t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap());
    let mut sorter = RadixSorter::new();
    for &n in &sizes {
        for (name, keys) in shapes(n, n as u64) {
            if cfg!(miri) && !miri_shapes.contains(&name) {
                continue;
            }
            // Miri: the thread count each size's paths need (each run costs much there).
            let pools = if cfg!(miri) { &pools[usize::from(n >= PARALLEL_MIN)..][..1] } else { &pools[..] };
            for pool in pools {
                let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
                pool.install(|| sorter.sort(&mut k, &mut v));
                let threads = pool.current_num_threads();
                assert_stable(&keys, &k, &v, &format!("{name}, {n} pairs, {threads} threads"));
            }
        }
    }
}

#[test]
fn evenly_spread_keys_sort_on_their_top_bits_then_fix_equal_prefixes_stably() {
    // Random keys spread over the top digit (the prefix sort's case on one thread), with
    // a long run of keys equal in their top 24 bits (sorted below by the MSD sort) and
    // short runs equal in their top 16, and duplicates of whole keys (stability). Under
    // miri fewer (still above the prefix sort's PREFIX_MIN, with a run above NARROW_MAX's
    // insertion sort).
    let n = if cfg!(miri) { 700 } else { 3000 };
    let mut keys = random(n, 41);
    for (i, k) in keys.iter_mut().enumerate() {
        match i % 10 {
            0 => *k = (0xABCDEF << 40) | (*k & 0xFF_FFFF),
            1 => *k = (*k & !0xFFFF_FFFF_FFFF) | (i as u64 % 7),
            2 => *k = 0x1234_5678_9ABC_DEF0,
            _ => {}
        }
    }
    let (k, v, _) = sort_on(1, &keys, &mut RadixSorter::new());
    assert_stable(&keys, &k, &v, "evenly spread");
}

#[test]
fn constant_digits_are_skipped() {
    let mut k: Vec<u64> = (0..1000u64).map(|i| (i % 200) << 8 | 0xAB).collect();
    let mut v: Vec<u32> = (0..1000).collect();
    let mut s = RadixSorter::new();
    s.sort(&mut k, &mut v);
    assert_eq!(s.last_passes, 1, "only digit 1 varies");
}

#[test]
#[cfg_attr(miri, ignore = "path choice only (safe code): the paths' scatters are checked by the threshold test")]
fn small_evenly_spread_inputs_sort_on_one_thread_and_render_keys_in_parallel() {
    // Render-shaped keys: few values in the top digit, then hashed states and a depth.
    let render = |n: usize| -> Vec<u64> {
        random(n, 7).into_iter().map(|r| ((r % 5) << 58) | (r >> 20 & 0xFFFF) << 24 | (r & 0xFF_FFFF)).collect()
    };
    // (keys, threads, whether the radix passes run in parallel)
    let cases = [
        (random(EVEN_SERIAL_MAX, 3), EVEN_SERIAL_THREADS, false),
        (random(EVEN_SERIAL_MAX, 3), EVEN_SERIAL_THREADS + 1, true),
        (random(EVEN_SERIAL_MAX + 1, 3), EVEN_SERIAL_THREADS, true),
        (render(EVEN_SERIAL_MAX), EVEN_SERIAL_THREADS, true),
        (render(PARALLEL_MIN), EVEN_SERIAL_THREADS, true),
    ];
    for (keys, threads, parallel) in cases {
        let n = keys.len();
        let mut sorter = RadixSorter::new();
        let (k, v, _) = sort_on(threads, &keys, &mut sorter);
        assert_eq!(sorter.last_parallel, parallel, "{n} pairs on {threads} threads: parallel passes");
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        expect.sort_by_key(|p| p.0);
        assert!(expect.iter().map(|p| p.0).eq(k) && expect.iter().map(|p| p.1).eq(v), "{n} pairs: stable order");
        // One thread never runs parallel passes.
        sort_on(1, &keys, &mut sorter);
        assert!(!sorter.last_parallel, "{n} pairs on one thread");
    }
}

#[test]
#[cfg_attr(miri, ignore = "ties are ordered by safe code after the radix paths, which the other tests check")]
fn ties_by_value_give_the_key_value_order_on_every_path() {
    // Values are a permutation (as object indices are), so the (key, value) order is
    // unique whatever the input order. Shapes with many equal keys: duplicates in random
    // order, sorted keys whose values descend within runs (taking the in-order path),
    // nearly sorted keys with a few moved (the merge path) and the rest of `shapes`.
    // Miri: one serial and one parallel size (above the scaled PARALLEL_MIN), the shapes
    // that reach the three paths (each sort costs much there).
    let sizes: &[usize] = if cfg!(miri) { &[90, 700] } else { &[0, 1, 2, 300, 5000, 40_000] };
    let mut sorter = RadixSorter { ties_by_value: true, ..RadixSorter::new() };
    for &n in sizes {
        let mut rng = Pcg64Mcg::seed_from_u64(n as u64);
        let few: Vec<u64> = (0..n).map(|_| rng.gen_range(0..1 + n as u64 / 8)).collect();
        let mut in_order = few.clone();
        in_order.sort_unstable();
        let mut nearly = in_order.clone();
        for _ in 0..n / 50 {
            let i = rng.gen_range(0..n);
            nearly[i] = rng.gen_range(0..1 + n as u64 / 8);
        }
        let mut cases = vec![("few values", few), ("in order", in_order), ("nearly", nearly)];
        if !cfg!(miri) {
            cases.extend(shapes(n, 7 + n as u64));
        }
        for (name, keys) in cases {
            // Values: a shuffled permutation.
            let mut vals: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                vals.swap(i, rng.gen_range(0..=i));
            }
            let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
            expect.sort_unstable();
            let expect: (Vec<u64>, Vec<u32>) = expect.into_iter().unzip();
            for &threads in THREADS {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (mut k, mut v) = (keys.clone(), vals.clone());
                pool.install(|| sorter.sort(&mut k, &mut v));
                assert!((&k, &v) == (&expect.0, &expect.1), "{name}, {n} pairs, {threads} threads, sort");
                let (mut k, mut v) = (keys.clone(), vals.clone());
                pool.install(|| sorter.sort_vecs(&mut k, &mut v));
                assert!((k, v) == expect, "{name}, {n} pairs, {threads} threads, sort_vecs");
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "ties are ordered by safe code after the radix paths, which the other tests check")]
fn runs_of_equal_keys_are_ordered_by_value_wherever_they_fall() {
    // Sorted keys with no ties, some, and all equal; runs at the start, the end, across
    // the 16-key groups, and every length around them.
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let lens: &[usize] = if cfg!(miri) { &[0, 1, 2, 17, 40] } else { &[0, 1, 2, 15, 16, 17, 33, 100, 1000] };
    for &n in lens {
        for values in [1u64, 2, 7, 40, u64::MAX] {
            let mut k: Vec<u64> = (0..n).map(|_| rng.gen_range(0..=values.min(1 << 40))).collect();
            k.sort_unstable();
            // Values at random, and in order but for a few swapped pairs (most runs then
            // need nothing; one whose out-of-order pair lies in a later group of 16 than its
            // start must still be sorted whole).
            let mut in_order: Vec<u32> = (0..n as u32).collect();
            for _ in 0..n / 10 + 1 {
                if n > 1 {
                    let i = rng.gen_range(0..n - 1);
                    in_order.swap(i, i + 1);
                }
            }
            for v0 in [(0..n).map(|_| rng.gen()).collect::<Vec<u32>>(), in_order] {
                let mut v = v0.clone();
                order_runs(&k, &mut v);
                let mut expect: Vec<(u64, u32)> = k.iter().copied().zip(v0).collect();
                expect.sort_unstable();
                assert_eq!(v, expect.iter().map(|p| p.1).collect::<Vec<_>>(), "{n} keys below {values}");
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code only (the order sample)")]
fn the_order_sample_tells_nearly_sorted_inputs_from_shuffled_ones() {
    // Sizes around the sample's step changing (65 pairs: step 1), and larger.
    for n in [2, 3, 64, 65, 66, 1000, 5000] {
        let mut sorted = random(n, 5);
        sorted.sort_unstable();
        assert!(looks_nearly_sorted(&sorted), "{n} sorted keys");
        let mut descending = sorted.clone();
        descending.reverse();
        assert_eq!(looks_nearly_sorted(&descending), descending.windows(2).all(|w| w[0] == w[1]), "{n} descending");
        if n >= 1000 {
            assert!(!looks_nearly_sorted(&random(n, 6)), "{n} random keys");
            assert!(looks_nearly_sorted(&coherent(n, 7, 1 << 40, 33)), "{n} keys, 3 % changed");
        }
    }
    // Either answer sorts alike: the sample only picks whether the nearly-sorted path is
    // tried before the survey.
    let m = if cfg!(miri) { 300 } else { 20_000 };
    for keys in [coherent(m, 8, 1 << 40, 33), random(m, 9)] {
        let one = sort_on(1, &keys, &mut RadixSorter::new());
        assert_eq!(sort_on(3, &keys, &mut RadixSorter::new()), one);
    }
    // A sample that misjudges: every sampled pair ascends, most of the others descend.
    // The nearly-sorted path, tried first, gives up; the survey and the radix sort follow.
    let n: usize = if cfg!(miri) { 600 } else { 20_000 };
    let step = (n - 1).div_ceil(ORDER_SAMPLE);
    let mut keys = random(n, 10);
    keys.sort_unstable();
    for chunk in keys.chunks_mut(step) {
        let keep = 2.min(chunk.len());
        chunk[keep..].reverse();
    }
    assert!(looks_nearly_sorted(&keys));
    let mut sorter = RadixSorter::new();
    for threads in [1, 3] {
        let (k, v, _) = sort_on(threads, &keys, &mut sorter);
        assert_eq!(sorter.last_path, SortPath::Radix { merge_gave_up: true }, "{threads} threads");
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        expect.sort_by_key(|p| p.0);
        assert!(
            expect.iter().map(|p| p.0).eq(k) && expect.iter().map(|p| p.1).eq(v),
            "{threads} threads: stable order"
        );
    }
}
