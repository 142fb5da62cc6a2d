//! Parallel radix sort over (u64 key, u32 value) pairs: stable, deterministic.
//!
//! One read pass computes all eight 8-bit digit histograms and counts descents
//! (`k[i] > k[i+1]`). Then:
//! - **already sorted**: nothing to do;
//! - **nearly sorted** (a frame's queue is last frame's order with a few keys changed):
//!   the keys that break the order are set aside, sorted, and merged back (three passes
//!   instead of sixteen);
//! - **otherwise**, a hybrid: one MSD scatter on the most significant non-constant digit
//!   (parallel over blocks of the input), then each bucket, now small enough for the
//!   caches, is finished by an LSD sort on its remaining digits (parallel over buckets).
//!   Digits whose histogram puts every key in one bucket are skipped, globally and per
//!   bucket: render keys have few distinct high bits.
//!
//! Blocks and buckets write to disjoint precomputed ranges, so the result is the same
//! for any number of threads.

mod msd;
#[allow(missing_docs)]
pub mod nearly_sorted;

use msd::{bits_below, finish_buckets, msd, scatter_parallel, Lsd};

const RADIX: usize = 256;
const DIGITS: usize = 8;

/// A size threshold: as given, or 256 times smaller under miri, so that the small inputs
/// miri can run take every path (parallel passes, split-again buckets, the nested sort).
const fn size(pairs: usize) -> usize {
    if cfg!(miri) {
        pairs >> 8
    } else {
        pairs
    }
}

/// Below this many pairs one thread runs the radix sort (measured on 16 cores: 16k
/// render-shaped pairs sort 3× faster on 16 threads than on one; 8k pairs gain less than
/// the survey's fork costs with nearly-sorted keys).
const PARALLEL_MIN: usize = size(1 << 14);
/// Below this many pairs one thread runs the nearly-sorted path (its passes are cheap, so
/// forking pays later than for the radix sort).
const MERGE_PARALLEL_MIN: usize = size(1 << 15);
/// Most pairs per block in the parallel passes.
const BLOCK: usize = size(1 << 14);
/// Fewest pairs per block: smaller inputs get smaller blocks, so every worker gets some.
const MIN_BLOCK: usize = size(1 << 11);
/// Fewest pairs for which the nearly-sorted path is tried.
const NEARLY_SORTED_MIN: usize = size(1 << 10);
/// Fewest pairs per split-again bucket.
const SPLIT_MIN: usize = size(1 << 13);

/// Pairs per block for `n` pairs on the current pool: about two blocks per worker, within
/// `MIN_BLOCK..=BLOCK`. (The result does not depend on it: a stable sort's output is unique.)
fn block_len(n: usize) -> usize {
    (n / (2 * rayon::current_num_threads())).clamp(MIN_BLOCK, BLOCK)
}
/// Buckets at least this large are split again rather than sorted by one worker.
const SPLIT_AGAIN: usize = size(1 << 16);
/// Most blocks of a split-again scatter (16 KiB of histograms on the stack).
const SPLIT_BLOCKS: usize = 16;
/// Default for [`RadixSorter::nearly_sorted_max_threads`].
pub const NEARLY_SORTED_MAX_THREADS: usize = usize::MAX;

/// Reusable scratch memory for [`RadixSorter::sort`].
#[derive(Debug)]
pub struct RadixSorter {
    /// Most worker threads for which the nearly-sorted path is taken (tuning; the
    /// result is the same either way).
    pub nearly_sorted_max_threads: usize,
    block_runs: Vec<Vec<(usize, usize)>>,
    block_widened: Vec<Vec<(usize, usize)>>,
    run_prefix: Vec<usize>,
    merge_splits: Vec<(usize, usize)>,
    merge_offsets: Vec<usize>,
    group_first: Vec<usize>,
    group_at: Vec<usize>,
    rest_sorter: Option<Box<RadixSorter>>,
    keys: Vec<u64>,
    vals: Vec<u32>,
    hist: Vec<[u32; RADIX]>,
    rest_keys: Vec<u64>,
    rest_vals: Vec<u32>,
    rest_pos: Vec<u32>,
    runs: Vec<(usize, usize)>,
    rest_order: Vec<u32>,
    /// Each block's survey (parallel inputs).
    surveys: Vec<(u64, u64, u64)>,
    /// Digit passes over the whole input run by the last sort (for stats and tests).
    pub last_passes: u32,
    /// The path the last sort took.
    pub last_path: SortPath,
}

/// Which path a sort took (stats and tests: the result is the same on every path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortPath {
    /// Fewer than two pairs, or the keys were already in order: nothing moved.
    #[default]
    InOrder,
    /// Few keys out of place: set aside, sorted and merged back.
    NearlySorted,
    /// The full radix sort. `merge_gave_up`: the input looked nearly sorted (few descents)
    /// but too many keys were out of place, so the nearly-sorted path gave up first.
    Radix {
        /// The nearly-sorted path was tried and gave up.
        merge_gave_up: bool,
    },
}

#[inline]
fn digit(k: u64, d: usize) -> usize {
    ((k >> (d * 8)) & 0xff) as usize
}

/// (AND of all keys, OR of all keys, descents `k[i] > k[i+1]`) of a block.
fn survey(keys: &[u64]) -> (u64, u64, u64) {
    let (mut and, mut or, mut descents) = (u64::MAX, 0u64, 0u64);
    let mut prev = keys.first().copied().unwrap_or(0);
    for &k in keys {
        and &= k;
        or |= k;
        descents += u64::from(prev > k);
        prev = k;
    }
    (and, or, descents)
}

/// The digits (ascending) in which some keys differ, given the bits that vary.
fn varying_digits(varying: u64) -> ([usize; DIGITS], usize) {
    let mut out = [0; DIGITS];
    let mut n = 0;
    for d in 0..DIGITS {
        if (varying >> (d * 8)) & 0xff != 0 {
            out[n] = d;
            n += 1;
        }
    }
    (out, n)
}

impl Default for RadixSorter {
    fn default() -> Self {
        Self {
            nearly_sorted_max_threads: NEARLY_SORTED_MAX_THREADS,
            block_runs: Vec::new(),
            block_widened: Vec::new(),
            run_prefix: Vec::new(),
            merge_splits: Vec::new(),
            merge_offsets: Vec::new(),
            group_first: Vec::new(),
            group_at: Vec::new(),
            rest_sorter: None,
            keys: Vec::new(),
            vals: Vec::new(),
            hist: Vec::new(),
            rest_keys: Vec::new(),
            rest_vals: Vec::new(),
            rest_pos: Vec::new(),
            runs: Vec::new(),
            rest_order: Vec::new(),
            surveys: Vec::new(),
            last_passes: 0,
            last_path: SortPath::InOrder,
        }
    }
}

impl RadixSorter {
    /// A sorter with no scratch memory yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sorts `keys` ascending, permuting `vals` alongside, stably.
    ///
    /// # Panics
    /// If the slices differ in length or hold more than `u32::MAX` pairs.
    pub fn sort(&mut self, keys: &mut [u64], vals: &mut [u32]) {
        if self.sort_or_leave_in_scratch(keys, vals) {
            let n = keys.len();
            if n >= MERGE_PARALLEL_MIN && rayon::current_num_threads() > 1 {
                crate::par::copy_into(keys, &self.keys[..n]);
                crate::par::copy_into(vals, &self.vals[..n]);
            } else {
                keys.copy_from_slice(&self.keys[..n]);
                vals.copy_from_slice(&self.vals[..n]);
            }
        }
    }

    /// [`RadixSorter::sort`] for owned arrays: where a path leaves its result in the
    /// sorter's scratch (the nearly-sorted merge), the arrays are exchanged with it instead
    /// of copied back. Lengths stay; the arrays' capacities become the scratch's, and in
    /// steady state both sides keep what they have (no allocation).
    ///
    /// # Panics
    /// As [`RadixSorter::sort`].
    pub fn sort_vecs(&mut self, keys: &mut Vec<u64>, vals: &mut Vec<u32>) {
        if self.sort_or_leave_in_scratch(keys, vals) {
            debug_assert!(self.keys.len() == keys.len() && self.vals.len() == vals.len());
            std::mem::swap(keys, &mut self.keys);
            std::mem::swap(vals, &mut self.vals);
        }
    }

    /// Sorts; `true` when the result is in `self.keys`/`self.vals` (exactly as long as the
    /// input) instead of in `keys`/`vals`.
    fn sort_or_leave_in_scratch(&mut self, keys: &mut [u64], vals: &mut [u32]) -> bool {
        assert_eq!(keys.len(), vals.len(), "keys and values differ in length");
        let n = keys.len();
        self.last_passes = 0;
        self.last_path = SortPath::InOrder;
        if n < 2 {
            return false;
        }
        let parallel = n >= PARALLEL_MIN && rayon::current_num_threads() > 1;
        // One cheap read: which bits vary, and how far from sorted the input is.
        let (and, or, descents) = if parallel {
            let block = block_len(n);
            self.surveys.resize(n.div_ceil(block), (0, 0, 0));
            let k = &*keys;
            crate::par::fill_blocks(1, &mut self.surveys[..], &|b, s: &mut [(u64, u64, u64)]| {
                s[0] = survey(&k[b * block..((b + 1) * block).min(n)]);
            });
            let (a, o, d) =
                self.surveys.iter().fold((u64::MAX, 0, 0), |(a0, o0, d0), &(a1, o1, d1)| (a0 & a1, o0 | o1, d0 + d1));
            let seams = (1..n.div_ceil(block)).filter(|&b| keys[b * block - 1] > keys[b * block]).count() as u64;
            (a, o, d + seams)
        } else {
            survey(keys)
        };
        if descents == 0 {
            return false;
        }
        let threads = rayon::current_num_threads();
        let try_merge = n >= NEARLY_SORTED_MIN && threads <= self.nearly_sorted_max_threads && descents <= n as u64 / 8;
        if try_merge && self.sort_nearly_sorted(keys, vals) {
            self.last_path = SortPath::NearlySorted;
            return true;
        }
        self.last_path = SortPath::Radix { merge_gave_up: try_merge };
        let (active, count) = varying_digits(and ^ or);
        let active = &active[..count];
        let Some(&hi) = active.last() else { return false };
        crate::par::set_len(&mut self.keys, n);
        crate::par::set_len(&mut self.vals, n);
        // One thread: the serial MSD sort, which turns to LSD where a digit splits little.
        if !parallel {
            self.last_passes = count as u32;
            msd(keys, vals, &mut self.keys[..n], &mut self.vals[..n], and ^ or, true, Lsd::First);
            return false;
        }
        // MSD split on the highest varying digit, into the scratch arrays.
        self.last_passes = 1;
        let block = block_len(n);
        self.hist.resize(n.div_ceil(block), [0; RADIX]);
        let bounds = scatter_parallel(&mut self.hist, block, keys, vals, &mut self.keys, &mut self.vals, hi);
        // Finish each bucket on its lower digits; results land back in `keys`/`vals`.
        // Buckets larger than a worker's fair share are split again (parallel only).
        let split = parallel.then(|| (n / (2 * threads)).clamp(SPLIT_MIN, SPLIT_AGAIN));
        let rest = (and ^ or) & bits_below(hi as u32 * 8);
        finish_buckets(&bounds, &mut self.keys, &mut self.vals, keys, vals, rest, split);
        false
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;

    fn check(keys: Vec<u64>) {
        let n = keys.len();
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..n as u32).collect();
        RadixSorter::new().sort(&mut k, &mut v);
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        expect.sort_by_key(|p| p.0); // stable: equal keys keep input order
        assert_eq!(k, expect.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(v, expect.iter().map(|p| p.1).collect::<Vec<_>>());
        let mut std_sorted = keys;
        std_sorted.sort_unstable();
        assert_eq!(k, std_sorted);
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
        let n = if cfg!(miri) { 1_200 } else { 300_000 };
        let keys: Vec<u64> = random(n, 5).into_iter().map(|k| k % 1000).collect();
        let one = sort_on(1, &keys, &mut RadixSorter::new());
        assert_eq!(one, sort_on(4, &keys, &mut RadixSorter::new()));
        check(keys);
    }

    #[test]
    fn nearly_sorted_input_takes_the_merge_path_and_stays_stable() {
        let n = if cfg!(miri) { 800 } else { 200_000 };
        let mut keys: Vec<u64> = random(n, 11).into_iter().map(|k| k % 5000).collect();
        keys.sort_unstable();
        // Change 1% of keys in place: last frame's order, a few objects moved.
        let mut rng = Pcg64Mcg::seed_from_u64(12);
        for _ in 0..n / 100 {
            keys[rng.gen_range(0..n)] = rng.gen_range(0..5000);
        }
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
        let n = if cfg!(miri) { 1_500 } else { 100_000 };
        let mut coherent: Vec<u64> = random(n, 21).into_iter().map(|k| k % 7000).collect();
        coherent.sort_unstable();
        let mut rng = Pcg64Mcg::seed_from_u64(22);
        for _ in 0..n / 50 {
            coherent[rng.gen_range(0..n)] = rng.gen_range(0..7000);
        }
        let sorted: Vec<u64> = (0..n as u64).collect();
        let cases = [
            (coherent, SortPath::NearlySorted),
            (random(n, 23), SortPath::Radix { merge_gave_up: false }),
            (sorted, SortPath::InOrder),
        ];
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            // One sorter for every case and round: exchanged buffers are reused, whatever
            // length the previous sort left them.
            let (mut by_slice, mut by_vec) = (RadixSorter::new(), RadixSorter::new());
            for round in 0..2 {
                for (keys, path) in &cases {
                    let (mut k1, mut v1) = (keys.clone(), (0..n as u32).rev().collect::<Vec<_>>());
                    let (mut k2, mut v2) = (k1.clone(), v1.clone());
                    pool.install(|| by_slice.sort(&mut k1, &mut v1));
                    pool.install(|| by_vec.sort_vecs(&mut k2, &mut v2));
                    assert_eq!(by_vec.last_path, *path, "{threads} threads, round {round}");
                    assert!(k2.len() == n && v2.len() == n);
                    assert!(k1 == k2 && v1 == v2, "{threads} threads, {path:?}, round {round}");
                }
            }
        }
    }

    #[test]
    fn gaps_that_meet_across_block_edges_are_joined() {
        let n = if cfg!(miri) { 1_000 } else { 200_000 };
        let edges: Vec<usize> = (1..8).map(|k| k * (n / 8)).collect();
        let mut cases: Vec<Vec<u64>> = Vec::new();
        // A key moved a few places across each edge, both directions.
        let mut a: Vec<u64> = (0..n as u64).map(|k| k * 4).collect();
        for &e in &edges {
            a[e - 3] = a[e + 5] + 1;
            a[e + 2] = a[e - 6] + 1;
        }
        cases.push(a);
        // One key moved far: its gap widens over several blocks.
        let mut b: Vec<u64> = (0..n as u64).map(|k| k * 4).collect();
        b[n / 3] = b[n / 3 + n / 20] + 2;
        cases.push(b);
        // Dense changes around edges, with duplicates.
        let mut c: Vec<u64> = (0..n as u64).map(|k| k / 3).collect();
        let dense = if cfg!(miri) { 8 } else { 40 };
        for &e in &edges {
            for d in 0..dense {
                c[e - dense / 2 + d] = ((e / 3 + dense * 3 / 4 - d) % (n / 3)) as u64;
            }
        }
        cases.push(c);
        for keys in cases {
            check(keys.clone());
            let results: Vec<_> = [1, 3, MANY].map(|t| sort_on(t, &keys, &mut RadixSorter::new())).into();
            assert!(results.iter().all(|r| r.2), "the merge path ran");
            assert!(results.windows(2).all(|w| w[0] == w[1]));
        }
    }

    #[test]
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
        // Few distinct top digits (render-shaped): buckets far larger than SPLIT_AGAIN.
        let n = if cfg!(miri) { 1_024 } else { 400_000 };
        let keys: Vec<u64> = random(n, 31)
            .into_iter()
            .enumerate()
            .map(|(i, k)| (((i % 3) as u64) << 60) | ((k & 0xffff_ffff) % 50_000))
            .collect();
        let one = sort_on(1, &keys, &mut RadixSorter::new());
        assert_eq!(one, sort_on(6, &keys, &mut RadixSorter::new()));
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
    fn a_gap_at_either_end_of_the_input_merges_in_parallel_segments() {
        // Keys changed at the very start and the very end (besides the middle) leave the
        // first and last kept segments empty; the parallel merge splits around them.
        let n = if cfg!(miri) { 600 } else { 100_000 };
        let mut keys: Vec<u64> = (0..n as u64).map(|k| k * 8).collect();
        for (i, k) in [(0, 5 * 8 * n as u64 / 7), (1, 3), (n / 2, 17), (n - 2, 5), (n - 1, 40 * n as u64 / 9)] {
            keys[i] = k;
        }
        for threads in [1, 3, MANY] {
            let mut s = RadixSorter::new();
            let (k, v, merged) = sort_on(threads, &keys, &mut s);
            assert!(merged, "the merge path ran");
            let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
            expect.sort_by_key(|p| p.0);
            assert!(expect.iter().map(|p| p.0).eq(k) && expect.iter().map(|p| p.1).eq(v), "{threads} threads");
        }
    }

    #[test]
    fn every_size_threshold_plus_minus_one_on_every_shape() {
        let thresholds = [
            msd::INSERTION_MAX,
            msd::NARROW_MAX,
            NEARLY_SORTED_MIN,
            MIN_BLOCK,
            SPLIT_MIN,
            PARALLEL_MIN,
            BLOCK,
            MERGE_PARALLEL_MIN,
            SPLIT_AGAIN,
            msd::LSD_MAX,
            msd::PREFIX_MIN,
            msd::PREFIX_MAX,
        ];
        // Miri runs the scaled thresholds (the unscaled large ones are left to native runs)
        // on three shapes: each sort costs much there.
        let largest = if cfg!(miri) { 200 } else { usize::MAX };
        let miri_shapes = ["random", "coherent", "spike"];
        let mut sizes: Vec<usize> =
            thresholds.iter().flat_map(|&t| [t - 1, t, t + 1]).filter(|&n| n <= largest).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let pools = [1, 3].map(|t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap());
        let mut sorter = RadixSorter::new();
        for &n in &sizes {
            for (name, keys) in shapes(n, n as u64) {
                if cfg!(miri) && !miri_shapes.contains(&name) {
                    continue;
                }
                let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
                expect.sort_by_key(|p| p.0);
                let expect: (Vec<u64>, Vec<u32>) = expect.into_iter().unzip();
                // Miri: the thread count each size's paths need (each run costs much there).
                let pools = if cfg!(miri) { &pools[usize::from(n >= PARALLEL_MIN)..][..1] } else { &pools[..] };
                for pool in pools {
                    let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
                    pool.install(|| sorter.sort(&mut k, &mut v));
                    let threads = pool.current_num_threads();
                    assert!((k, v) == expect, "{name}, {n} pairs, {threads} threads: not the stable order");
                }
            }
        }
    }

    #[test]
    fn evenly_spread_keys_sort_on_their_top_bits_then_fix_equal_prefixes_stably() {
        // Random keys spread over the top digit (the prefix sort's case on one thread), with
        // a long run of keys equal in their top 24 bits (sorted below by the MSD sort) and
        // short runs equal in their top 16, and duplicates of whole keys (stability).
        let n = 3000;
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
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        expect.sort_by_key(|p| p.0);
        assert!(expect.iter().map(|p| p.0).eq(k) && expect.iter().map(|p| p.1).eq(v));
    }

    #[test]
    fn constant_digits_are_skipped() {
        let mut k: Vec<u64> = (0..1000u64).map(|i| (i % 200) << 8 | 0xAB).collect();
        let mut v: Vec<u32> = (0..1000).collect();
        let mut s = RadixSorter::new();
        s.sort(&mut k, &mut v);
        assert_eq!(s.last_passes, 1, "only digit 1 varies");
    }
}
