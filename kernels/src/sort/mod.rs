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
//!   bucket: render keys have few distinct high bits. One thread sorts up to 16k pairs
//!   of keys that do not spread evenly (render keys) LSD on 11-bit digits over pairs
//!   packed 16 bytes apiece (module `wide`), and splits larger ones on sparse windows
//!   where they serve (14 bits that take at most 256 values, as hashed state ids do: one
//!   scatter instead of two, module `sparse`). LSD passes move pairs packed 16 bytes
//!   apiece in a scratch array each thread keeps, between a first pass that reads the
//!   key and value arrays and a last that writes them (module `wide`).
//! - **small inputs on many threads** (up to 32k pairs of random keys or hashes on four
//!   threads or more; nearly sorted inputs of up to 256k pairs, 16k a thread, on eight or
//!   more), judged on samples before the read above: runs sorted on one worker each, then
//!   merged pairwise in parallel pieces (module `runs`).
//!
//! Blocks and buckets write to disjoint precomputed ranges, so the result is the same
//! for any number of threads. With [`RadixSorter::ties_by_value`] equal keys end ordered
//! by value instead of by input position (the nearly-sorted path orders them as it merges;
//! the others in one more pass, which the survey skips when no tie is out of order).

mod lsd;
mod msd;
#[allow(missing_docs)]
pub mod nearly_sorted;
mod runs;
mod sparse;
mod stream;
mod ties;
mod wide;

use msd::{finish_buckets, msd, scatter_parallel, Lsd};
use ties::{order_ties_by_value, ties_out_of_order};

/// The bits below bit `b` (all 64 for `b` ≥ 64).
#[inline]
pub(super) fn bits_below(b: u32) -> u64 {
    if b >= 64 {
        u64::MAX
    } else {
        (1u64 << b) - 1
    }
}

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
/// Up to this many pairs (the one-thread prefix sort's limit), keys that spread evenly
/// over their top digit (random keys, hashes) are sorted by one thread on pools of at
/// most `EVEN_SERIAL_THREADS`: there the one-thread prefix sort (two digit passes in the
/// caches) beats the parallel split (run 22, 16k uniform pairs on 2 threads: 51-56
/// against 38-42 Mkeys/s; run 35, 2-core machine, this limit raised from below 32k: 32k
/// pairs 1.46x, 64k 1.07x, but 96k-126k, past the prefix sort's limit, 0.66-0.67x), while
/// on 8 and 16 threads the split is faster (72-94 against 44-53: one thread in a large
/// pool ran slower than alone). Render keys, which spread over few top-digit values and
/// take more passes, gain from 2 threads on.
const EVEN_SERIAL_MAX: usize = size(1 << 16);
/// Most threads for which small evenly spread inputs sort on one thread.
const EVEN_SERIAL_THREADS: usize = 2;
/// Keys sampled to tell whether an input spreads evenly (up to `EVEN_SERIAL_MAX`).
const SPREAD_SAMPLE: usize = 1024;
/// Below this many pairs one thread runs the nearly-sorted path. It was 32k (its passes are
/// cheap, so forking was thought to pay later than for the radix sort); in the frame, on 16
/// threads, the main view's 31k-34k pairs sort faster in parallel (run 31: the sort stage
/// 0.90x, the 100k-object frame 0.945x, faster in 11 of 12 paired rounds). At 16k pairs
/// each of its parallel passes took longer on 16 threads than on one (run 36).
const MERGE_PARALLEL_MIN: usize = size(24 << 10);
/// Adjacent pairs sampled by `looks_nearly_sorted`: an input that looks nearly sorted
/// goes to the nearly-sorted path before any survey, which runs only if that path gives
/// up. Run 36 timed the survey of 16k pairs at 26 µs in parallel on 16 threads against 15
/// on one; surveying every input below 32k on one thread instead cost 16k uniform pairs
/// 0.68x on 8 and 16 threads (run 37), and surveying on one thread only those the sample
/// found nearly sorted made frame-coherent 16k pairs 1.45x faster there (run 38). Skipping
/// their survey: 1.07-1.10x on one thread and 1.01-1.18x on two from 64k pairs (2-core
/// machine, one binary).
const ORDER_SAMPLE: usize = 64;
/// Below this many pairs a result left in the scratch arrays is copied back by one thread
/// (run 36, 16 threads: 16k pairs 27 µs in parallel against 6 on one thread, 64k 41
/// against 30, 256k 100 against 271). 128 under miri, so that its runs copy both ways.
const COPY_PARALLEL_MIN: usize = if cfg!(miri) { 1 << 7 } else { 1 << 17 };
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
    /// One-thread sorts split on sparse windows (14 key bits that take at most 256
    /// values, as hashed state ids do) where they serve: on by default (tuning; the
    /// result is the same either way).
    pub sparse_windows: bool,
    /// One-thread sorts of 4k to 16k pairs whose keys do not spread evenly (render keys)
    /// run LSD on 11-bit digits over packed pairs (module `wide`): on by default (tuning;
    /// the result is the same either way).
    pub wide_digits: bool,
    /// Small evenly spread or nearly sorted inputs on many threads sort as runs on their
    /// workers, merged in parallel (module `runs`): on by default (tuning; the result is
    /// the same either way).
    pub merged_runs: bool,
    /// Sorts of millions of pairs time streaming stores against plain ones in their top
    /// split (each block of it, on several threads) and take the faster (module
    /// `stream`): on by default (tuning; the result is the same either way).
    pub streamed_splits: bool,
    /// Equal keys end ordered by their values (ascending) instead of by input position:
    /// the result is then the unique (key, value) order whatever the input order was.
    pub ties_by_value: bool,
    /// Where each parallel piece of the tie pass starts (scratch).
    tie_starts: Vec<usize>,
    block_runs: Vec<Vec<(usize, usize)>>,
    block_widened: Vec<Vec<(usize, usize)>>,
    run_prefix: Vec<usize>,
    merge_splits: Vec<(usize, usize)>,
    merge_offsets: Vec<usize>,
    group_first: Vec<usize>,
    group_at: Vec<usize>,
    rest_sorter: Option<Box<RadixSorter>>,
    wide: wide::Wide,
    merge_runs: runs::RunsScratch,
    keys: Vec<u64>,
    vals: Vec<u32>,
    hist: Vec<[u32; RADIX]>,
    rest_keys: Vec<u64>,
    rest_vals: Vec<u32>,
    rest_pos: Vec<u32>,
    runs: Vec<(usize, usize)>,
    rest_order: Vec<u32>,
    /// Each block's survey (parallel inputs): AND, OR, descents, ties out of order.
    surveys: Vec<(u64, u64, u64, u64)>,
    /// The input's survey, given by `sort_vecs_surveyed` for the next sort.
    given: Option<Survey>,
    /// The input's descents, given by `sort_vecs_surveyed` (`gaps_given`) for the next sort.
    given_gaps: Vec<(usize, usize)>,
    gaps_given: bool,
    /// Digit passes over the whole input run by the last sort (for stats and tests; merged
    /// runs count one pass for sorting the runs and one per merge round).
    pub last_passes: u32,
    /// The path the last sort took.
    pub last_path: SortPath,
    /// Whether the last sort's radix passes ran on several threads.
    pub last_parallel: bool,
}

/// Which path a sort took (stats and tests: the result is the same on every path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortPath {
    /// Fewer than two pairs, or the keys were already in order: nothing moved.
    #[default]
    InOrder,
    /// Few keys out of place: set aside, sorted and merged back.
    NearlySorted,
    /// The full radix sort. `merge_gave_up`: the input looked nearly sorted (few descents,
    /// or a sample of adjacent pairs that mostly ascend) but too many keys were out of
    /// place, so the nearly-sorted path gave up first.
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

/// What one read of a sort's input finds: which key bits vary, how far from sorted it is,
/// and (for [`RadixSorter::ties_by_value`]) how many equal neighbours are out of value
/// order. A caller that reads its input anyway (writing it, say) surveys it there and
/// gives the result to [`RadixSorter::sort_vecs_surveyed`], which then does not read the
/// input once more for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Survey {
    /// AND of all keys.
    pub and: u64,
    /// OR of all keys.
    pub or: u64,
    /// Neighbours `k[i] > k[i + 1]`.
    pub descents: u64,
    /// Neighbours `k[i] == k[i + 1]` with `v[i] > v[i + 1]`, counted only where there is no
    /// descent (0 otherwise: a sort that moves keys orders the ties as it goes, and a
    /// frame's queue with a few changed keys is not read once more for them).
    pub ties: u64,
    /// The first and last pair (none for an empty input).
    ends: Option<((u64, u32), (u64, u32))>,
}

impl Default for Survey {
    fn default() -> Self {
        Self { and: u64::MAX, or: 0, descents: 0, ties: 0, ends: None }
    }
}

impl Survey {
    /// The survey of `keys` with their values `vals` (the same length).
    pub fn of(keys: &[u64], vals: &[u32]) -> Self {
        let (and, or, descents) = survey(keys);
        let ends = keys.first().map(|&k| ((k, vals[0]), (keys[keys.len() - 1], vals[keys.len() - 1])));
        let ties = if descents == 0 { ties_out_of_order(keys, vals) } else { 0 };
        Self { and, or, descents, ties, ends }
    }

    /// The survey of the input `self` surveyed followed by the one `next` surveyed.
    pub fn then(self, next: Survey) -> Survey {
        let (Some((first, a)), Some((b, last))) = (self.ends, next.ends) else {
            return if self.ends.is_some() { self } else { next };
        };
        let descents = self.descents + next.descents + u64::from(a.0 > b.0);
        Survey {
            and: self.and & next.and,
            or: self.or | next.or,
            descents,
            ties: if descents == 0 { self.ties + next.ties + u64::from(a.0 == b.0 && a.1 > b.1) } else { 0 },
            ends: Some((first, last)),
        }
    }
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

/// Whether at most one in eight of `ORDER_SAMPLE` adjacent pairs taken at even steps
/// descends: the nearly-sorted path's own limit, on a sample (random keys descend at about
/// every second pair). Needs at least two keys.
fn looks_nearly_sorted(keys: &[u64]) -> bool {
    let step = (keys.len() - 1).div_ceil(ORDER_SAMPLE).max(1);
    let (mut pairs, mut descents) = (0, 0);
    for i in (0..keys.len() - 1).step_by(step) {
        descents += usize::from(keys[i] > keys[i + 1]);
        pairs += 1;
    }
    descents * 8 <= pairs
}

/// Whether `keys` (which differ only in the bits of `varying`, not 0) spread about
/// evenly over the 8 bits below their highest varying bit, judged on up to
/// `SPREAD_SAMPLE` keys taken at equal steps: as random keys and hashes do, unlike render
/// keys, whose top bits take a few values.
fn spreads_evenly(keys: &[u64], varying: u64) -> bool {
    let top = 64 - varying.leading_zeros();
    let shift = top.saturating_sub(8);
    let mask = bits_below(top - shift);
    let step = keys.len().div_ceil(SPREAD_SAMPLE).max(1);
    let mut seen = [0u64; RADIX / 64];
    let mut samples = 0;
    for &k in keys.iter().step_by(step) {
        let d = ((k >> shift) & mask) as usize;
        seen[d / 64] |= 1 << (d % 64);
        samples += 1;
    }
    let spread = seen.iter().map(|w| w.count_ones() as usize).sum();
    msd::evenly_spread(spread, mask as usize + 1, samples)
}

impl Default for RadixSorter {
    fn default() -> Self {
        Self {
            nearly_sorted_max_threads: NEARLY_SORTED_MAX_THREADS,
            sparse_windows: true,
            wide_digits: true,
            merged_runs: true,
            streamed_splits: true,
            ties_by_value: false,
            tie_starts: Vec::new(),
            block_runs: Vec::new(),
            block_widened: Vec::new(),
            run_prefix: Vec::new(),
            merge_splits: Vec::new(),
            merge_offsets: Vec::new(),
            group_first: Vec::new(),
            group_at: Vec::new(),
            rest_sorter: None,
            wide: wide::Wide::default(),
            merge_runs: runs::RunsScratch::default(),
            keys: Vec::new(),
            vals: Vec::new(),
            hist: Vec::new(),
            rest_keys: Vec::new(),
            rest_vals: Vec::new(),
            rest_pos: Vec::new(),
            runs: Vec::new(),
            rest_order: Vec::new(),
            surveys: Vec::new(),
            given: None,
            given_gaps: Vec::new(),
            gaps_given: false,
            last_passes: 0,
            last_path: SortPath::InOrder,
            last_parallel: false,
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
        if self.sort_or_leave_in_scratch(keys, vals, false) {
            let n = keys.len();
            if n >= COPY_PARALLEL_MIN && rayon::current_num_threads() > 1 {
                crate::par::copy_into(keys, &self.keys[..n]);
                crate::par::copy_into(vals, &self.vals[..n]);
            } else {
                keys.copy_from_slice(&self.keys[..n]);
                vals.copy_from_slice(&self.vals[..n]);
            }
        }
    }

    /// [`RadixSorter::sort`] for owned arrays: where a path leaves its result in the
    /// sorter's scratch (the nearly-sorted merge, and here the radix sort, whose last
    /// passes then write the lines they have just read instead of the caller's arrays),
    /// the arrays are exchanged with it instead of copied back. Lengths stay; the arrays'
    /// capacities become the scratch's, and in steady state both sides keep what they
    /// have (no allocation).
    ///
    /// # Panics
    /// As [`RadixSorter::sort`].
    pub fn sort_vecs(&mut self, keys: &mut Vec<u64>, vals: &mut Vec<u32>) {
        if self.sort_or_leave_in_scratch(keys, vals, true) {
            debug_assert!(self.keys.len() == keys.len() && self.vals.len() == vals.len());
            std::mem::swap(keys, &mut self.keys);
            std::mem::swap(vals, &mut self.vals);
        }
    }

    /// [`RadixSorter::sort_vecs`] of an input whose [`Survey`] the caller made (as it wrote
    /// the input): the sort does not survey it again. The result is sorted only if
    /// `survey` is the survey of exactly these pairs (`Survey::of` them, or joined from
    /// their parts in order with [`Survey::then`]); debug builds check it.
    ///
    /// `gaps`, where given, are ranges of positions (ascending, not overlapping) that hold
    /// one end of every descent of the input (each pair `k[j] > k[j + 1]`, with
    /// [`RadixSorter::ties_by_value`] each such pair of (key, value), has `j` or `j + 1` in
    /// a gap): the descents as [`nearly_sorted::descent_gaps`] finds them, or wider ranges
    /// a caller knows hold every pair out of place (a tail of pairs appended to a sorted
    /// run). Debug builds check it. The nearly-sorted path then
    /// starts from them instead of looking for descents.
    ///
    /// # Panics
    /// As [`RadixSorter::sort`].
    pub fn sort_vecs_surveyed(
        &mut self,
        keys: &mut Vec<u64>,
        vals: &mut Vec<u32>,
        survey: Survey,
        gaps: Option<&[(usize, usize)]>,
    ) {
        debug_assert_eq!(survey, Survey::of(keys, vals), "the survey given is not the input's");
        self.given = Some(survey);
        if let Some(g) = gaps {
            debug_assert!(
                {
                    let ordered =
                        g.iter().all(|r| r.0 < r.1 && r.1 <= keys.len()) && g.windows(2).all(|w| w[0].1 <= w[1].0);
                    let mut held = vec![false; keys.len()];
                    g.iter().filter(|_| ordered).for_each(|r| held[r.0..r.1].fill(true));
                    let by_value = self.ties_by_value.then_some(&vals[..]);
                    let after = |j: usize| nearly_sorted::after(keys, by_value, j, j + 1);
                    ordered && (0..keys.len().saturating_sub(1)).all(|j| !after(j) || held[j] || held[j + 1])
                },
                "the gaps given do not hold every descent of the input"
            );
            self.given_gaps.clear();
            self.given_gaps.extend_from_slice(g);
            self.gaps_given = true;
        }
        self.sort_vecs(keys, vals);
        self.gaps_given = false;
    }

    /// Sorts; `true` when the result is in `self.keys`/`self.vals` (exactly as long as the
    /// input) instead of in `keys`/`vals`. `may_leave`: the radix paths may leave it there
    /// too (the caller exchanges the arrays rather than copying).
    fn sort_or_leave_in_scratch(&mut self, keys: &mut [u64], vals: &mut [u32], may_leave: bool) -> bool {
        let given = self.given.take();
        assert_eq!(keys.len(), vals.len(), "keys and values differ in length");
        let n = keys.len();
        self.last_passes = 0;
        self.last_path = SortPath::InOrder;
        self.last_parallel = false;
        if n < 2 {
            return false;
        }
        let parallel = n >= PARALLEL_MIN && rayon::current_num_threads() > 1;
        let ties = self.ties_by_value;
        let threads = rayon::current_num_threads();
        let can_merge = n >= NEARLY_SORTED_MIN && threads <= self.nearly_sorted_max_threads;
        // Small evenly spread or nearly sorted inputs on many threads: runs surveyed and
        // sorted on one worker each, then merged in parallel (module `runs`), with no survey
        // here.
        if given.is_none() && parallel && self.merged_runs && runs::takes(keys, threads) {
            self.last_path = SortPath::Radix { merge_gave_up: false };
            self.last_parallel = true;
            crate::par::set_len(&mut self.keys, n);
            crate::par::set_len(&mut self.vals, n);
            let (sk, sv) = (&mut self.keys[..], &mut self.vals[..]);
            let like = (threads, (self.sparse_windows, self.wide_digits));
            self.last_passes = runs::sort_runs(keys, vals, sk, sv, like, &mut self.merge_runs);
            if self.last_passes == 0 {
                self.last_path = SortPath::InOrder;
            }
            if ties {
                order_ties_by_value(keys, vals, &mut self.tie_starts, true);
            }
            return false;
        }
        // An input whose sample looks nearly sorted goes to the nearly-sorted path before
        // any survey: its own pass finds the descents, and the survey is needed only if it
        // gives up.
        let mut merge_gave_up = false;
        if given.is_none() && can_merge && looks_nearly_sorted(keys) {
            match self.sort_nearly_sorted(keys, vals) {
                nearly_sorted::Merged::Done => {
                    self.last_path = SortPath::NearlySorted;
                    return true;
                }
                // In order (with ties by value, equal keys by value too).
                nearly_sorted::Merged::InOrder => return false,
                nearly_sorted::Merged::GaveUp => merge_gave_up = true,
            }
        }
        // One cheap read: which bits vary, and how far from sorted the input is.
        // With ties by value, also whether an input in key order has ties out of order.
        let (and, or, descents, tied) = if let Some(g) = given {
            (g.and, g.or, g.descents, if ties && g.descents == 0 { g.ties } else { 0 })
        } else if parallel {
            let block = block_len(n);
            self.surveys.resize(n.div_ceil(block), (0, 0, 0, 0));
            let (k, v) = (&*keys, &*vals);
            crate::par::fill_blocks(1, &mut self.surveys[..], &|b, s: &mut [(u64, u64, u64, u64)]| {
                let r = b * block..((b + 1) * block).min(n);
                let (a, o, d) = survey(&k[r.clone()]);
                s[0] = (a, o, d, if ties && d == 0 { ties_out_of_order(&k[r.clone()], &v[r]) } else { 0 });
            });
            let (a, o, d, t) = self
                .surveys
                .iter()
                .fold((u64::MAX, 0, 0, 0), |(a0, o0, d0, t0), &(a1, o1, d1, t1)| (a0 & a1, o0 | o1, d0 + d1, t0 + t1));
            let seams = (1..n.div_ceil(block)).map(|b| (keys[b * block - 1], keys[b * block], b * block));
            let (mut d_seams, mut t_seams) = (0, 0);
            for (x, y, at) in seams {
                d_seams += u64::from(x > y);
                t_seams += u64::from(ties && x == y && vals[at - 1] > vals[at]);
            }
            (a, o, d + d_seams, t + t_seams)
        } else {
            let (a, o, d) = survey(keys);
            (a, o, d, if ties && d == 0 { ties_out_of_order(keys, vals) } else { 0 })
        };
        if descents == 0 {
            if tied > 0 {
                order_ties_by_value(keys, vals, &mut self.tie_starts, parallel);
            }
            return false;
        }
        let try_merge = can_merge && !merge_gave_up && descents <= n as u64 / 8;
        if try_merge && self.sort_nearly_sorted(keys, vals) == nearly_sorted::Merged::Done {
            self.last_path = SortPath::NearlySorted;
            return true;
        }
        self.last_path = SortPath::Radix { merge_gave_up: try_merge || merge_gave_up };
        let (active, count) = varying_digits(and ^ or);
        let active = &active[..count];
        let Some(&hi) = active.last() else { return false };
        let even = |keys: &[u64]| spreads_evenly(keys, and ^ or);
        let parallel = parallel && !(n <= EVEN_SERIAL_MAX && threads <= EVEN_SERIAL_THREADS && even(keys));
        // One thread, keys that do not spread evenly: the packed LSD sort on 11-bit digits.
        if !parallel && self.wide_digits && (wide::WIDE_MIN..=wide::WIDE_MAX).contains(&n) && !even(keys) {
            self.last_passes = self.wide.sort(keys, vals, and ^ or);
            if ties {
                order_ties_by_value(keys, vals, &mut self.tie_starts, false);
            }
            return false;
        }
        crate::par::set_len(&mut self.keys, n);
        crate::par::set_len(&mut self.vals, n);
        // One thread: the serial MSD sort, which turns to LSD where a digit splits little.
        if !parallel {
            self.last_passes = count as u32;
            let rule = Lsd::First { sparse: self.sparse_windows, streamed: self.streamed_splits };
            msd(keys, vals, &mut self.keys[..n], &mut self.vals[..n], and ^ or, !may_leave, rule);
            if ties {
                let (k, v) = if may_leave { (&self.keys[..n], &mut self.vals[..n]) } else { (&*keys, vals) };
                order_ties_by_value(k, v, &mut self.tie_starts, false);
            }
            return may_leave;
        }
        // MSD split on the highest varying digit, into the scratch arrays.
        self.last_passes = 1;
        self.last_parallel = true;
        // Millions of pairs: two blocks a worker, each timing streamed stores against
        // plain ones (module `stream`).
        let streamed = self.streamed_splits && n >= stream::STREAM_MIN;
        let block = if streamed { n.div_ceil(2 * threads) } else { block_len(n) };
        self.hist.resize(n.div_ceil(block), [0; RADIX]);
        let stores = streamed.then_some(stream::Stores::DEFAULT);
        let bounds = scatter_parallel(&mut self.hist, block, keys, vals, &mut self.keys, &mut self.vals, hi, stores);
        // Finish each bucket on its lower digits; results land back in `keys`/`vals`, or
        // stay in the scratch where the caller may take them from there. Buckets larger
        // than a worker's fair share are split again (parallel only).
        let split = parallel.then(|| (n / (2 * threads)).clamp(SPLIT_MIN, SPLIT_AGAIN));
        let rest = (and ^ or) & bits_below(hi as u32 * 8);
        finish_buckets(&bounds, &mut self.keys, &mut self.vals, keys, vals, rest, split, may_leave);
        if ties {
            let (k, v) = if may_leave { (&self.keys[..n], &mut self.vals[..n]) } else { (&*keys, vals) };
            order_ties_by_value(k, v, &mut self.tie_starts, true);
        }
        may_leave
    }
}

#[cfg(test)]
mod tests;
