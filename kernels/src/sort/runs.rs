//! Small inputs on many threads: each worker sorts a run of the input with a one-thread
//! sorter of its own, then the runs merge pairwise, each merge cut into pieces that the
//! workers write in parallel.
//!
//! Below 32k pairs of keys that spread evenly (random keys, hashes) the parallel MSD sort
//! forks more often than its pieces pay for: its survey, its scatter and its buckets of a
//! few dozen pairs each are a fork over work of a few microseconds. Likewise the
//! nearly-sorted path up to a few hundred thousand pairs: at 64k pairs it ran no faster on
//! 16 threads than on one (its survey, descents, set-aside sort and copy back are forks
//! over little work, or serial). Here one fork sorts four to seventeen runs of 4k-16k
//! pairs in the caches of their workers, each surveyed there (the one-thread prefix sort
//! for random keys, the nearly-sorted path for a frame's order), and two to five merge
//! passes follow. Measured on the 16-core machine against the sorter before (RUNS.md
//! runs 70-74): 16k uniform pairs on 4, 8, 16 threads 139.6-140.5, 150.4-154.0,
//! 128.3-140.2 Mkeys/s against 75.5-87.3, 116.7-124.0, 109.2-115.0 (run 72); 64k
//! frame-coherent pairs on 8 and 16 threads 231.7-234.5 and 441.4-457.8 against
//! 153.8-162.9 and 211.2-224.2 (run 72); 256k on 16 threads 384.5-385.8 against
//! 205.4-299.2 (run 74), 128k and 192k on 16 threads 2.0-2.6x faster, 128k on 8 1.2x
//! (run 75). Where it lost: 64k uniform pairs on 2-8 threads (runs 70 and 74),
//! render-shaped keys (whose parallel sort splits on the few values of their top digit)
//! from 4 threads on (run 70), 1M frame-coherent pairs (run 74); 16k frame-coherent pairs,
//! and 256k of them on 8 threads, gained nothing. A stable merge of stable runs is the
//! stable sort: the result does not depend on the number of runs.

use super::{looks_nearly_sorted, size, spreads_evenly, RadixSorter, SortPath, PARALLEL_MIN, SPREAD_SAMPLE};
use crate::par::Scaled;

/// Most pairs sorted this way.
pub(super) const RUNS_MAX: usize = size(1 << 15);
/// Fewest threads for which it is taken: on two threads the one-thread sort is as fast
/// (run 70: 16k pairs 77.9-87.8 against 81.5 Mkeys/s).
pub(super) const RUNS_MIN_THREADS: usize = 4;
/// Most pairs of nearly sorted keys sorted this way, and at most `PARALLEL_MIN` per thread
/// (so there are about as many runs as threads, each below the parallel sort's size):
/// 256k pairs on 16 threads sorted 1.3-1.9x faster this way, on 8 threads (17 runs) no
/// faster, and 1M pairs (65 runs, seven merge rounds) slower on 8 and 16 (run 74).
pub(super) const NEARLY_RUNS_MAX: usize = size(1 << 18);
/// Fewest threads for which nearly sorted keys are: on 8 and 16 threads 64k pairs sorted
/// 1.4-1.5x and 2.0-2.2x faster this way (run 72); fewer threads were not measured.
pub(super) const NEARLY_RUNS_MIN_THREADS: usize = 8;
/// Fewest pairs per run (random keys of that many sort on one thread by the prefix sort).
const RUN_MIN: usize = size(1 << 12);
/// Fewest output pairs per merge piece.
const PIECE_MIN: usize = size(1 << 10);

#[cfg(test)]
thread_local! {
    /// Sorts [`sort_runs`] ran on this thread (tests: the sort took this path).
    pub(super) static SORTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Scratch of [`sort_runs`]: where each merge piece's output starts, and the runs it merges.
#[derive(Debug, Default)]
pub(super) struct RunsScratch {
    offsets: Vec<usize>,
    /// Per piece: the left run's start, the right run's start, the right run's end.
    pairs: Vec<(usize, usize, usize)>,
    /// One sorter per run.
    sorters: Vec<RadixSorter>,
}

/// How many pairs of `a` come first among the first `d` pairs of the stable merge of `a`
/// and `b` (both ascending; `a`'s keys first among equal keys).
fn co_rank(d: usize, a: &[u64], b: &[u64]) -> usize {
    let (mut lo, mut hi) = (d.saturating_sub(b.len()), d.min(a.len()));
    while lo < hi {
        let i = (lo + hi) / 2;
        // `i < a.len()`, and `d - i - 1 < b.len()` as `i >= d - b.len()`.
        if a[i] <= b[d - i - 1] {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    lo
}

/// Writes the stable merge of (`ak`, `av`) and (`bk`, `bv`) into `ok`/`ov`, exactly as
/// long as both together.
fn merge(a: (&[u64], &[u32]), b: (&[u64], &[u32]), ok: &mut [u64], ov: &mut [u32]) {
    let ((ak, av), (bk, bv)) = (a, b);
    debug_assert!(ok.len() == ak.len() + bk.len() && ov.len() == ok.len());
    let (mut i, mut j) = (0, 0);
    for (k, v) in ok.iter_mut().zip(ov.iter_mut()) {
        // `a` first among equal keys: stable.
        let take_a = j >= bk.len() || (i < ak.len() && ak[i] <= bk[j]);
        (*k, *v) = if take_a { (ak[i], av[i]) } else { (bk[j], bv[j]) };
        i += usize::from(take_a);
        j += usize::from(!take_a);
    }
}

/// Whether `keys` (at least `PARALLEL_MIN` pairs, on a pool of `threads`) are sorted this
/// way: up to `RUNS_MAX` pairs of keys that spread evenly over the top bits a sample of
/// them varies in, on at least `RUNS_MIN_THREADS` threads; or up to `NEARLY_RUNS_MAX` pairs
/// (and `PARALLEL_MIN` per thread) that a sample finds nearly sorted, on at least
/// `NEARLY_RUNS_MIN_THREADS`. Judged on samples alone, before any read of the whole input:
/// each run surveys itself where its worker sorts it (a parallel survey of 16k pairs cost
/// 15-26 µs on 16 threads, run 36), and the result is the stable order whatever the
/// samples say.
pub(super) fn takes(keys: &[u64], threads: usize) -> bool {
    let n = keys.len();
    let nearly_max = NEARLY_RUNS_MAX.min(threads * PARALLEL_MIN);
    if n <= nearly_max && threads >= NEARLY_RUNS_MIN_THREADS && looks_nearly_sorted(keys) {
        return true;
    }
    if n > RUNS_MAX || threads < RUNS_MIN_THREADS {
        return false;
    }
    let step = n.div_ceil(SPREAD_SAMPLE).max(1);
    let (and, or) = keys.iter().step_by(step).fold((u64::MAX, 0), |(a, o), &k| (a & k, o | k));
    and != or && spreads_evenly(keys, and ^ or)
}

/// Sorts `keys`/`vals` (at least two pairs) stably: runs of at least `RUN_MIN` and fewer
/// than `PARALLEL_MIN` pairs (one per worker up to `threads`, more where the runs would
/// be larger: 17 for 256k pairs), each sorted by a one-thread
/// sorter of its own (with the caller's `sparse_windows` and `wide_digits`), which surveys
/// its run and takes the path that serves it (nearly sorted or radix); then merged pairwise
/// through `sk`/`sv` (as long as `keys`). The runs are sorted into whichever pair of arrays
/// makes the last merge write `keys`/`vals`. Returns the passes over the whole input: one
/// for the runs' sorts, one per merge round (none when every run and every seam between
/// runs was in order).
pub(super) fn sort_runs(
    keys: &mut [u64],
    vals: &mut [u32],
    sk: &mut [u64],
    sv: &mut [u32],
    (threads, (sparse, wide)): (usize, (bool, bool)),
    scratch: &mut RunsScratch,
) -> u32 {
    #[cfg(test)]
    SORTS.with(|c| c.set(c.get() + 1));
    let n = keys.len();
    let runs = threads.min(n / RUN_MIN).max(n.div_ceil(PARALLEL_MIN - 1)).max(1);
    let run = n.div_ceil(runs);
    let runs = n.div_ceil(run);
    let rounds = runs.next_power_of_two().trailing_zeros();
    // An odd number of merge rounds starts from the scratch.
    let into_keys = rounds % 2 == 0;
    // Grown, never shrunk: a sorter dropped would free the scratch the next call needs.
    if scratch.sorters.len() < runs {
        scratch.sorters.resize_with(runs, RadixSorter::new);
    }
    for s in &mut scratch.sorters {
        (s.sparse_windows, s.wide_digits, s.ties_by_value) = (sparse, wide, false);
    }
    type Arrays<'a> = ((Scaled<&'a mut [u64]>, Scaled<&'a mut [u32]>), (Scaled<&'a mut [u64]>, Scaled<&'a mut [u32]>));
    let sort_run = |_, (s, arrays): (&mut [RadixSorter], Arrays<'_>)| {
        let ((Scaled(k, _), Scaled(v, _)), (Scaled(tk, _), Scaled(tv, _))) = arrays;
        s[0].sort(k, v);
        if !into_keys {
            tk.copy_from_slice(k);
            tv.copy_from_slice(v);
        }
    };
    let arrays = ((Scaled(&mut *keys, run), Scaled(&mut *vals, run)), (Scaled(&mut *sk, run), Scaled(&mut *sv, run)));
    crate::par::fill_blocks(1, (&mut scratch.sorters[..runs], arrays), &sort_run);
    // Every run in order and every seam too: the input was sorted (as a nearly-sorted
    // sample may say); it stays where it is.
    let seams_in_order = (1..runs).all(|r| keys[r * run - 1] <= keys[r * run]);
    if seams_in_order && scratch.sorters[..runs].iter().all(|s| s.last_path == SortPath::InOrder) {
        return 0;
    }
    let piece = (n / (2 * threads)).max(PIECE_MIN);
    let mut in_scratch = !into_keys;
    let mut width = run;
    while width < n {
        let RunsScratch { offsets, pairs, .. } = &mut *scratch;
        offsets.clear();
        pairs.clear();
        let mut start = 0;
        while start < n {
            let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
            let pieces = (end - start).div_ceil(piece);
            for q in 0..pieces {
                offsets.push(start + q * (end - start) / pieces);
                pairs.push((start, mid, end));
            }
            start = end;
        }
        offsets.push(n);
        let (pairs, offsets) = (&pairs[..], &offsets[..]);
        let fill = |src: (&[u64], &[u32]), dst: (&mut [u64], &mut [u32])| {
            crate::par::fill_ranges(offsets, dst, &|p, (ok, ov): (&mut [u64], &mut [u32])| {
                let (s, m, e) = pairs[p];
                let (a, b) = (&src.0[s..m], &src.0[m..e]);
                let (d0, d1) = (offsets[p] - s, offsets[p + 1] - s);
                let (i0, i1) = (co_rank(d0, a, b), co_rank(d1, a, b));
                let (j0, j1) = (d0 - i0, d1 - i1);
                merge((&a[i0..i1], &src.1[s + i0..s + i1]), (&b[j0..j1], &src.1[m + j0..m + j1]), ok, ov);
            });
        };
        if in_scratch {
            fill((sk, sv), (keys, vals));
        } else {
            fill((keys, vals), (sk, sv));
        }
        in_scratch = !in_scratch;
        width *= 2;
    }
    debug_assert!(!in_scratch, "the last merge writes the caller's arrays");
    rounds + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn co_rank_takes_the_left_runs_equal_keys_first() {
        let (a, b) = ([1, 2, 2, 5], [2, 2, 3]);
        // The stable merge: 1 2a 2a 2b 2b 3 5.
        let expect = [0, 1, 2, 3, 3, 3, 3, 4];
        for (d, &i) in expect.iter().enumerate() {
            assert_eq!(co_rank(d, &a, &b), i, "d = {d}");
        }
        assert_eq!(co_rank(0, &[], &b), 0);
        assert_eq!(co_rank(2, &a, &[]), 2);
    }
}
