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

use rayon::prelude::*;

const RADIX: usize = 256;
const DIGITS: usize = 8;
/// Below this many pairs one thread sorts.
const PARALLEL_MIN: usize = 1 << 15;
/// Most pairs per block in the parallel passes.
const BLOCK: usize = 1 << 14;
/// Fewest pairs per block: smaller inputs get smaller blocks, so every worker gets some.
const MIN_BLOCK: usize = 1 << 12;

/// Pairs per block for `n` pairs on the current pool: about two blocks per worker, within
/// `MIN_BLOCK..=BLOCK`. (The result does not depend on it: a stable sort's output is unique.)
fn block_len(n: usize) -> usize {
    (n / (2 * rayon::current_num_threads())).clamp(MIN_BLOCK, BLOCK)
}
/// Below this many pairs a plain LSD sort beats the MSD split.
const HYBRID_MIN: usize = 1 << 16;
/// Buckets at least this large are split again rather than sorted by one worker.
const SPLIT_AGAIN: usize = 1 << 16;
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
    /// Digit passes over the whole input run by the last sort (for stats and tests).
    pub last_passes: u32,
    /// Whether the last sort took the nearly-sorted path.
    pub last_nearly_sorted: bool,
}

#[inline]
fn digit(k: u64, d: usize) -> usize {
    ((k >> (d * 8)) & 0xff) as usize
}

/// A pointer that workers write through at disjoint indices.
#[derive(Clone, Copy)]
struct Scatter<T>(*mut T);
// SAFETY: workers only write through it at indices no other worker writes (see `scatter_parallel`).
unsafe impl<T: Send> Send for Scatter<T> {}
// SAFETY: as above; the pointer is never read through concurrently.
unsafe impl<T: Send> Sync for Scatter<T> {}

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
            last_passes: 0,
            last_nearly_sorted: false,
        }
    }
}

/// Appends the descents `k[j] > k[j + 1]` for `j` in `range` to `runs` as gaps
/// `[j, j + 2)`, merging gaps that touch.
fn descent_runs(keys: &[u64], range: std::ops::Range<usize>, runs: &mut Vec<(usize, usize)>) {
    for j in range {
        if keys[j] > keys[j + 1] {
            push_run(runs, (j, j + 2));
        }
    }
}

#[inline]
fn push_run(runs: &mut Vec<(usize, usize)>, r: (usize, usize)) {
    match runs.last_mut() {
        Some(last) if last.1 >= r.0 => last.1 = last.1.max(r.1),
        _ => runs.push(r),
    }
}

/// Widens the gaps `input` (ascending, not touching) onto `out` until the survivors
/// around each are ordered, merging gaps that come to touch: one pass, each gap finished
/// before the next; a gap that grows into one already in `out` takes it back off and
/// re-checks. With `until_clean`, stops after the first finished gap that the next input
/// gap does not touch and returns the index of that next gap: the rest of `input`, already
/// widened on its own, needs nothing more. `None`: one gap grew past `limit`.
fn widen_gaps(
    keys: &[u64],
    input: &[(usize, usize)],
    out: &mut Vec<(usize, usize)>,
    limit: usize,
    until_clean: bool,
) -> Option<usize> {
    let n = keys.len();
    let mut i = 0;
    while i < input.len() {
        let mut cur = input[i];
        i += 1;
        loop {
            while i < input.len() && input[i].0 <= cur.1 {
                cur.1 = cur.1.max(input[i].1);
                i += 1;
            }
            if let Some(&last) = out.last().filter(|l| l.1 >= cur.0) {
                out.pop();
                cur = (last.0, cur.1.max(last.1));
                continue;
            }
            if cur.0 > 0 && cur.1 < n && keys[cur.0 - 1] > keys[cur.1] {
                cur = (cur.0 - 1, cur.1 + 1);
                if cur.1 - cur.0 > limit {
                    return None;
                }
                continue;
            }
            break;
        }
        out.push(cur);
        if until_clean && input.get(i).is_none_or(|r| r.0 > cur.1) {
            return Some(i);
        }
    }
    Some(i)
}

impl RadixSorter {
    /// A sorter with no scratch memory yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sorts `keys` ascending, permuting `vals` alongside, stably.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn sort(&mut self, keys: &mut [u64], vals: &mut [u32]) {
        assert_eq!(keys.len(), vals.len(), "keys and values differ in length");
        let n = keys.len();
        self.last_passes = 0;
        self.last_nearly_sorted = false;
        if n < 2 {
            return;
        }
        let parallel = n >= PARALLEL_MIN && rayon::current_num_threads() > 1;
        // One cheap read: which bits vary, and how far from sorted the input is.
        let (and, or, descents) = if parallel {
            let block = block_len(n);
            let (a, o, d) = keys
                .par_chunks(block)
                .map(survey)
                .reduce(|| (u64::MAX, 0, 0), |(a0, o0, d0), (a1, o1, d1)| (a0 & a1, o0 | o1, d0 + d1));
            let seams = (1..n.div_ceil(block)).filter(|&b| keys[b * block - 1] > keys[b * block]).count() as u64;
            (a, o, d + seams)
        } else {
            survey(keys)
        };
        if descents == 0 {
            return;
        }
        let threads = rayon::current_num_threads();
        if n >= 1024
            && threads <= self.nearly_sorted_max_threads
            && descents <= n as u64 / 8
            && self.sort_nearly_sorted(keys, vals)
        {
            self.last_nearly_sorted = true;
            return;
        }
        let (active, count) = varying_digits(and ^ or);
        let active = &active[..count];
        let Some(&hi) = active.last() else { return };
        self.keys.resize(n, 0);
        self.vals.resize(n, 0);
        // One thread: a plain LSD sort below HYBRID_MIN. Several: the MSD split even for
        // small inputs, so the buckets' LSD passes spread over the workers.
        if n < HYBRID_MIN && !parallel {
            self.last_passes = count as u32;
            if lsd(keys, vals, &mut self.keys[..n], &mut self.vals[..n], active) {
                keys.copy_from_slice(&self.keys[..n]);
                vals.copy_from_slice(&self.vals[..n]);
            }
            return;
        }
        // MSD split on the highest varying digit, into the scratch arrays.
        self.last_passes = 1;
        let bounds = if parallel {
            let block = block_len(n);
            self.hist.resize(n.div_ceil(block), [0; RADIX]);
            scatter_parallel(&mut self.hist, block, keys, vals, &mut self.keys, &mut self.vals, hi)
        } else {
            let mut h = [0u32; RADIX];
            keys.iter().for_each(|&k| h[digit(k, hi)] += 1);
            scatter_serial(&h, keys, vals, &mut self.keys, &mut self.vals, hi);
            let mut bounds = [0usize; RADIX + 1];
            for r in 0..RADIX {
                bounds[r + 1] = bounds[r] + h[r] as usize;
            }
            bounds
        };
        // Finish each bucket on its lower digits; results land back in `keys`/`vals`.
        // Buckets larger than a worker's fair share are split again (parallel only).
        let split = parallel.then(|| (n / (2 * threads)).clamp(1 << 13, SPLIT_AGAIN));
        finish_buckets(&bounds, &mut self.keys, &mut self.vals, keys, vals, &active[..count - 1], split);
    }

    /// The nearly-sorted path: set aside the keys that break the order, sort them, merge.
    /// Returns `false`, with the input untouched, when too many keys are out of place.
    ///
    /// Both ends of every descent are set aside; the survivors next to each gap are then
    /// compared and the gap widened until the survivors are in order. Survivors that were
    /// adjacent in the input are already in order, so only the gaps need checking.
    fn sort_nearly_sorted(&mut self, keys: &mut [u64], vals: &mut [u32]) -> bool {
        let n = keys.len();
        let limit = n / 8;
        let parallel = n >= PARALLEL_MIN && rayon::current_num_threads() > 1;
        // Gaps as half-open ranges [start, end) of set-aside positions, ascending. Per block
        // (in parallel): the descents, then the gaps widened until the survivors around each
        // are ordered. Then, in order, each block's gaps are joined to the previous blocks':
        // only gaps that meet across a block edge need another look.
        let blocks = if parallel { (n - 1).div_ceil(block_len(n)) } else { 1 };
        let block = (n - 1).div_ceil(blocks);
        self.block_runs.resize_with(blocks, Vec::new);
        self.block_widened.resize_with(blocks, Vec::new);
        let widened_ok = self
            .block_runs
            .par_iter_mut()
            .zip(self.block_widened.par_iter_mut())
            .enumerate()
            .map(|(b, (r, w))| {
                r.clear();
                w.clear();
                descent_runs(keys, b * block..((b + 1) * block).min(n - 1), r);
                widen_gaps(keys, r, w, limit, false).is_some()
            })
            .reduce(|| true, |a, b| a && b);
        if !widened_ok {
            return false;
        }
        self.runs.clear();
        for w in &self.block_widened {
            if w.is_empty() {
                continue;
            }
            let Some(i) = widen_gaps(keys, w, &mut self.runs, limit, true) else { return false };
            self.runs.extend_from_slice(&w[i..]);
        }
        let runs = &self.runs;
        let removed: usize = runs.iter().map(|r| r.1 - r.0).sum();
        if removed > limit {
            return false;
        }
        debug_assert!(runs.windows(2).all(|w| w[0].1 < w[1].0));
        debug_assert!(runs.iter().all(|r| r.0 == 0 || r.1 == n || keys[r.0 - 1] <= keys[r.1]));
        // Pairs set aside before each gap, for the merge's split points.
        self.run_prefix.clear();
        self.run_prefix.push(0);
        for r in runs {
            self.run_prefix.push(self.run_prefix[self.run_prefix.len() - 1] + (r.1 - r.0));
        }
        // Set the gaps aside, in input order (in parallel over groups of gaps), and sort
        // them stably: by the parallel sort when there are many.
        let m = removed;
        self.rest_keys.resize(m, 0);
        self.rest_vals.resize(m, 0);
        self.rest_pos.resize(m, 0);
        self.rest_order.clear();
        self.rest_order.extend(0..m as u32);
        {
            // Groups of gaps of about equal size: their first gaps, and where their pairs go
            // (the pairs set aside before a group's first gap).
            let groups = if parallel { rayon::current_num_threads().min(runs.len()).max(1) } else { 1 };
            let (firsts, at) = (&mut self.group_first, &mut self.group_at);
            firsts.clear();
            at.clear();
            for (i, &p) in self.run_prefix.iter().enumerate() {
                if i == 0
                    || i == runs.len()
                    || (i < runs.len() && firsts.len() < groups && p * groups >= m * firsts.len())
                {
                    firsts.push(i);
                    at.push(p);
                }
            }
            let firsts = &*firsts;
            let out = (&mut self.rest_keys[..], &mut self.rest_vals[..], &mut self.rest_pos[..]);
            crate::par::fill_ranges(at, out, &|g, (dk, dv, dp): (&mut [u64], &mut [u32], &mut [u32])| {
                // Gaps are mostly a few pairs long: element loops beat a memcpy call per gap.
                let mut w = 0;
                for &(a, b) in &runs[firsts[g]..firsts[g + 1]] {
                    for i in a..b {
                        dk[w] = keys[i];
                        dv[w] = vals[i];
                        dp[w] = i as u32;
                        w += 1;
                    }
                }
            });
        }
        if m >= PARALLEL_MIN && parallel {
            let sorter = self.rest_sorter.get_or_insert_with(Default::default);
            sorter.sort(&mut self.rest_keys, &mut self.rest_order);
        } else {
            self.keys.resize(m, 0);
            self.vals.resize(m, 0);
            let (and, or, _) = survey(&self.rest_keys);
            let (active, count) = varying_digits(and ^ or);
            if lsd(
                &mut self.rest_keys,
                &mut self.rest_order,
                &mut self.keys[..m],
                &mut self.vals[..m],
                &active[..count],
            ) {
                self.rest_keys.copy_from_slice(&self.keys[..m]);
                self.rest_order.copy_from_slice(&self.vals[..m]);
            }
        }
        self.keys.resize(n, 0);
        self.vals.resize(n, 0);
        // Merge the kept pairs (the input minus the gaps: sorted) with the set-aside ones
        // into the scratch arrays, in parallel segments, then copy back.
        let parts = if parallel { rayon::current_num_threads().min(64) } else { 1 };
        let merge = Merge {
            keys,
            vals,
            runs: &self.runs,
            prefix: &self.run_prefix,
            rk: &self.rest_keys,
            order: &self.rest_order,
            rv: &self.rest_vals,
            rpos: &self.rest_pos,
        };
        let (sk, sv) = (&mut self.keys[..n], &mut self.vals[..n]);
        merge.run(sk, sv, parts, &mut self.merge_splits, &mut self.merge_offsets);
        if parts > 1 {
            keys.par_chunks_mut(BLOCK).zip(sk.par_chunks(BLOCK)).for_each(|(d, s)| d.copy_from_slice(s));
            vals.par_chunks_mut(BLOCK).zip(sv.par_chunks(BLOCK)).for_each(|(d, s)| d.copy_from_slice(s));
        } else {
            keys.copy_from_slice(sk);
            vals.copy_from_slice(sv);
        }
        true
    }
}

/// The merge of the nearly-sorted path: kept pairs are the input minus `runs` (sorted);
/// the set-aside pairs are `rk` (sorted) with payload `rv[order]` and input positions
/// `rpos[order]`. Ties go to the smaller input position, which keeps the sort stable.
struct Merge<'a> {
    keys: &'a [u64],
    vals: &'a [u32],
    runs: &'a [(usize, usize)],
    /// `prefix[i]`: pairs set aside in `runs[..i]`.
    prefix: &'a [usize],
    rk: &'a [u64],
    order: &'a [u32],
    rv: &'a [u32],
    rpos: &'a [u32],
}

impl Merge<'_> {
    /// Pairs set aside before input position `p`.
    fn removed_before(&self, p: usize) -> usize {
        let r = self.runs.partition_point(|r| r.1 <= p);
        self.prefix[r] + self.runs.get(r).map_or(0, |r| p.saturating_sub(r.0))
    }

    /// The first kept input position whose key is `>= x` (or `n`).
    fn kept_lower_bound(&self, x: u64) -> usize {
        let n = self.keys.len();
        // Kept segments lie between the gaps; each is sorted, and so is their sequence.
        let seg = |i: usize| {
            let start = if i == 0 { 0 } else { self.runs[i - 1].1 };
            let end = self.runs.get(i).map_or(n, |r| r.0);
            start..end
        };
        let segments = self.runs.len() + 1;
        // First segment whose last key is >= x (segments are never empty: gaps do not touch).
        let (mut lo, mut hi) = (0, segments);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let r = seg(mid);
            if r.is_empty() || self.keys[r.end - 1] < x {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let s = lo;
        if s == segments {
            return n;
        }
        let r = seg(s);
        r.start + self.keys[r.clone()].partition_point(|&k| k < x)
    }

    /// Merges into `out_k`/`out_v` in up to `parts` independent segments; `splits` and
    /// `offsets` are scratch for the segments' bounds.
    fn run(
        &self,
        out_k: &mut [u64],
        out_v: &mut [u32],
        parts: usize,
        splits: &mut Vec<(usize, usize)>,
        offsets: &mut Vec<usize>,
    ) {
        let m = self.rk.len();
        if parts <= 1 || m < 2 {
            self.segment(0, m, 0, self.keys.len(), out_k, out_v);
            return;
        }
        // Split the set-aside pairs at the start of equal-key runs; the kept pairs at the
        // first key not below the split key. Every segment is then independent.
        splits.clear();
        splits.push((0, 0));
        for s in 1..parts {
            let mut r = s * m / parts;
            while r > 0 && self.rk[r - 1] == self.rk[r] {
                r -= 1;
            }
            let p = self.kept_lower_bound(self.rk[r]);
            if r > splits.last().expect("non-empty").0 {
                splits.push((r, p));
            }
        }
        splits.push((m, self.keys.len()));
        // Each segment's first output position: the set-aside and kept pairs before it.
        offsets.clear();
        offsets.extend(splits.iter().map(|&(r, p)| r + p - self.removed_before(p)));
        let splits = &*splits;
        crate::par::fill_ranges(offsets, (out_k, out_v), &|i, (ok, ov): (&mut [u64], &mut [u32])| {
            let (a, b) = (splits[i], splits[i + 1]);
            self.segment(a.0, b.0, a.1, b.1, ok, ov);
        });
    }

    /// Merges set-aside pairs `[r0, r1)` with kept input positions `[p0, p1)`.
    ///
    /// Kept pairs come in contiguous stretches between gaps; for each set-aside pair the
    /// kept pairs that precede it are found by a short scan and copied as one block.
    fn segment(&self, r0: usize, r1: usize, p0: usize, p1: usize, out_k: &mut [u64], out_v: &mut [u32]) {
        let runs = self.runs;
        let mut gap = runs.partition_point(|r| r.1 <= p0);
        let mut p = p0;
        // Moves `p` past a gap it stands in (gaps never touch, so one suffices).
        let skip = |p: &mut usize, gap: &mut usize| {
            while *gap < runs.len() && runs[*gap].0 <= *p {
                *p = (*p).max(runs[*gap].1);
                *gap += 1;
            }
        };
        skip(&mut p, &mut gap);
        let mut w = 0;
        let (keys, vals) = (self.keys, self.vals);
        let copy = |out_k: &mut [u64], out_v: &mut [u32], from: usize, to: usize, w: &mut usize| {
            let len = to - from;
            out_k[*w..*w + len].copy_from_slice(&keys[from..to]);
            out_v[*w..*w + len].copy_from_slice(&vals[from..to]);
            *w += len;
        };
        for j in r0..r1 {
            let (x, xpos) = (self.rk[j], self.rpos[self.order[j] as usize] as usize);
            // Kept pairs before (x, xpos): smaller keys, or equal keys earlier in the input.
            while p < p1 {
                let end = runs.get(gap).map_or(p1, |r| r.0.min(p1));
                let mut q = p;
                while q < end && (self.keys[q] < x || (self.keys[q] == x && q < xpos)) {
                    q += 1;
                }
                copy(out_k, out_v, p, q, &mut w);
                p = q;
                if q < end {
                    break;
                }
                skip(&mut p, &mut gap);
            }
            out_k[w] = x;
            out_v[w] = self.rv[self.order[j] as usize];
            w += 1;
        }
        // The kept pairs after the last set-aside one.
        while p < p1 {
            let end = runs.get(gap).map_or(p1, |r| r.0.min(p1));
            copy(out_k, out_v, p, end, &mut w);
            p = end;
            skip(&mut p, &mut gap);
        }
        debug_assert_eq!(w, out_k.len());
    }
}

/// Stable LSD sort of `k`/`v` over `digits` (ascending), using `tk`/`tv` as scratch;
/// digits constant in this input are skipped. Returns `true` when the result ended in
/// the scratch arrays, `false` when it is in `k`/`v`.
fn lsd(k: &mut [u64], v: &mut [u32], tk: &mut [u64], tv: &mut [u32], digits: &[usize]) -> bool {
    let n = k.len();
    if n < 2 || digits.is_empty() {
        return false;
    }
    let mut h = [[0u32; RADIX]; DIGITS];
    for &key in k.iter() {
        for &d in digits {
            h[d][digit(key, d)] += 1;
        }
    }
    let mut in_scratch = false;
    for &d in digits {
        if h[d].iter().any(|&c| c as usize == n) {
            continue;
        }
        if in_scratch {
            scatter_serial(&h[d], tk, tv, k, v, d);
        } else {
            scatter_serial(&h[d], k, v, tk, tv, d);
        }
        in_scratch = !in_scratch;
    }
    in_scratch
}

/// Sorts each bucket `src[bounds[b]..bounds[b+1]]` on `digits` and writes it to the same
/// range of `dst` (the other pair of arrays serves as scratch). Buckets split recursively
/// with `rayon::join`, so no list of slices is allocated. `split`: run in parallel, and
/// split buckets at least this large again; `None`: one thread.
fn finish_buckets(
    bounds: &[usize],
    src_k: &mut [u64],
    src_v: &mut [u32],
    dst_k: &mut [u64],
    dst_v: &mut [u32],
    digits: &[usize],
    split: Option<usize>,
) {
    let buckets = bounds.len() - 1;
    let base = bounds[0];
    if buckets == 1 || split.is_none() {
        for b in 0..buckets {
            let (lo, hi) = (bounds[b] - base, bounds[b + 1] - base);
            if let Some(split) = split.filter(|&s| hi - lo >= s && digits.len() >= 2) {
                split_again(
                    &mut src_k[lo..hi],
                    &mut src_v[lo..hi],
                    &mut dst_k[lo..hi],
                    &mut dst_v[lo..hi],
                    digits,
                    split,
                );
                continue;
            }
            // Sort in the source range with the destination range as scratch; move the result
            // over unless it already ended there.
            if !lsd(&mut src_k[lo..hi], &mut src_v[lo..hi], &mut dst_k[lo..hi], &mut dst_v[lo..hi], digits) {
                dst_k[lo..hi].copy_from_slice(&src_k[lo..hi]);
                dst_v[lo..hi].copy_from_slice(&src_v[lo..hi]);
            }
        }
        return;
    }
    let mid = buckets / 2;
    let at = bounds[mid] - base;
    let (sk0, sk1) = src_k.split_at_mut(at);
    let (sv0, sv1) = src_v.split_at_mut(at);
    let (dk0, dk1) = dst_k.split_at_mut(at);
    let (dv0, dv1) = dst_v.split_at_mut(at);
    rayon::join(
        || finish_buckets(&bounds[..=mid], sk0, sv0, dk0, dv0, digits, split),
        || finish_buckets(&bounds[mid..], sk1, sv1, dk1, dv1, digits, split),
    );
}

/// A bucket too big for one worker (render keys have few distinct top digits): split it
/// again on its highest varying lower digit, in parallel, and finish the sub-buckets.
/// Sorts `sk`/`sv` into `dk`/`dv`.
fn split_again(sk: &mut [u64], sv: &mut [u32], dk: &mut [u64], dv: &mut [u32], digits: &[usize], split: usize) {
    let (and, or, _) = sk
        .par_chunks(BLOCK)
        .map(survey)
        .reduce(|| (u64::MAX, 0, 0), |(a0, o0, d0), (a1, o1, d1)| (a0 & a1, o0 | o1, d0 + d1));
    let varying = and ^ or;
    let Some(pos) = digits.iter().rposition(|&d| (varying >> (d * 8)) & 0xff != 0) else {
        dk.copy_from_slice(sk);
        dv.copy_from_slice(sv);
        return;
    };
    // At most SPLIT_BLOCKS blocks, so their histograms fit on the stack (no allocation
    // while a frame sorts).
    let n = sk.len();
    let block = block_len(n).max(n.div_ceil(SPLIT_BLOCKS));
    let mut hist = [[0u32; RADIX]; SPLIT_BLOCKS];
    let bounds = scatter_parallel(&mut hist[..n.div_ceil(block)], block, sk, sv, dk, dv, digits[pos]);
    // The data is in `dk`/`dv` now; the sub-buckets' results land in `sk`/`sv`.
    finish_buckets(&bounds, dk, dv, sk, sv, &digits[..pos], Some(split));
    dk.par_chunks_mut(BLOCK).zip(sk.par_chunks(BLOCK)).for_each(|(d, s)| d.copy_from_slice(s));
    dv.par_chunks_mut(BLOCK).zip(sv.par_chunks(BLOCK)).for_each(|(d, s)| d.copy_from_slice(s));
}

fn scatter_serial(hist: &[u32; RADIX], sk: &[u64], sv: &[u32], dk: &mut [u64], dv: &mut [u32], d: usize) {
    let mut offs = [0usize; RADIX];
    let mut sum = 0;
    for r in 0..RADIX {
        offs[r] = sum;
        sum += hist[r] as usize;
    }
    for (&k, &v) in sk.iter().zip(sv) {
        let b = digit(k, d);
        dk[offs[b]] = k;
        dv[offs[b]] = v;
        offs[b] += 1;
    }
}

/// Stable parallel scatter of `sk`/`sv` into `dk`/`dv` on digit `d`, over blocks of
/// `block` pairs with one histogram each in `hist` (`n.div_ceil(block)` of them); returns
/// the buckets' bounds.
fn scatter_parallel(
    hist: &mut [[u32; RADIX]],
    block: usize,
    sk: &[u64],
    sv: &[u32],
    dk: &mut [u64],
    dv: &mut [u32],
    d: usize,
) -> [usize; RADIX + 1] {
    let n = sk.len();
    debug_assert_eq!(hist.len(), n.div_ceil(block));
    hist.par_iter_mut().zip(sk.par_chunks(block)).for_each(|(h, c)| {
        *h = [0; RADIX];
        for &k in c {
            h[digit(k, d)] += 1;
        }
    });
    // Exclusive prefix over (bucket, block): block b's run of bucket r starts after every
    // earlier bucket and after bucket r of earlier blocks. This keeps the sort stable.
    let mut sum = 0u32;
    for r in 0..RADIX {
        for h in hist.iter_mut() {
            let c = h[r];
            h[r] = sum;
            sum += c;
        }
    }
    debug_assert_eq!(sum as usize, n);
    // Block 0's start of bucket r is bucket r's start in the output.
    let mut bounds = [n; RADIX + 1];
    bounds[..RADIX].iter_mut().zip(&hist[0]).for_each(|(b, &o)| *b = o as usize);
    let (pk, pv) = (Scatter(dk.as_mut_ptr()), Scatter(dv.as_mut_ptr()));
    hist.par_iter_mut().zip(sk.par_chunks(block).zip(sv.par_chunks(block))).for_each(|(offs, (ck, cv))| {
        // Capture the whole wrappers (Sync), not their raw-pointer fields.
        let (pk, pv) = (pk, pv);
        for (&k, &v) in ck.iter().zip(cv) {
            let b = digit(k, d);
            let o = offs[b] as usize;
            debug_assert!(o < n);
            // SAFETY: 1. `o < n`: the offsets are an exclusive prefix sum of counts that add
            //            up to `n` = `dk.len()` = `dv.len()`.
            //         2. Each (block, bucket) owns the range [offs, offs + count) and writes
            //            each index once, so no two writes (same or other thread) alias.
            //         3. `dk`/`dv` are exclusively borrowed for this call and not read here.
            unsafe {
                *pk.0.add(o) = k;
                *pv.0.add(o) = v;
            }
            offs[b] += 1;
        }
    });
    bounds
}

#[cfg(test)]
mod tests {
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
            (k, v, sorter.last_nearly_sorted)
        })
    }

    fn lcg(n: usize, seed: u64) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s ^ (s >> 29)
            })
            .collect()
    }

    #[test]
    fn matches_std_sort_on_shapes() {
        let sizes: &[usize] = if cfg!(miri) { &[0, 1, 2, 50] } else { &[0, 1, 2, 255, 4096, 100_000] };
        for &n in sizes {
            check(lcg(n, 7));
            let mut sorted = lcg(n, 9);
            sorted.sort_unstable();
            check(sorted.clone());
            sorted.reverse();
            check(sorted);
            check(vec![42; n]);
            check(lcg(n, 3).into_iter().map(|k| k & 0xF000_0000_0000_00FF).collect());
        }
    }

    #[test]
    fn parallel_path_is_stable_and_independent_of_threads() {
        let n = if cfg!(miri) { 40_000 } else { 300_000 };
        let keys: Vec<u64> = lcg(n, 5).into_iter().map(|k| k % 1000).collect();
        let one = sort_on(1, &keys, &mut RadixSorter::new());
        assert_eq!(one, sort_on(4, &keys, &mut RadixSorter::new()));
        check(keys);
    }

    #[test]
    fn nearly_sorted_input_takes_the_merge_path_and_stays_stable() {
        let n = if cfg!(miri) { 3000 } else { 200_000 };
        let mut keys: Vec<u64> = lcg(n, 11).into_iter().map(|k| k % 5000).collect();
        keys.sort_unstable();
        // Change 1% of keys in place: last frame's order, a few objects moved.
        let changes = lcg(n / 100, 12);
        for (j, c) in changes.iter().enumerate() {
            keys[(c % n as u64) as usize] = lcg(1, j as u64)[0] % 5000;
        }
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..n as u32).collect();
        let mut s = RadixSorter::new();
        s.sort(&mut k, &mut v);
        assert!(s.last_nearly_sorted);
        check(keys.clone());
        // Already sorted: untouched.
        let mut v2: Vec<u32> = (0..n as u32).collect();
        s.sort(&mut k, &mut v2);
        assert_eq!(v2, (0..n as u32).collect::<Vec<_>>());
        // Few descents but many keys out of place (one early spike of huge keys): the
        // merge path gives up, restores the input and the full sort runs.
        let mut spiky: Vec<u64> = (0..n as u64).collect();
        for x in spiky.iter_mut().take(n / 4) {
            *x += n as u64;
        }
        check(spiky);
    }

    #[test]
    fn gaps_that_meet_across_block_edges_are_joined() {
        let n = if cfg!(miri) { 40_000 } else { 200_000 };
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
        for &e in &edges {
            for d in 0..40 {
                c[e - 20 + d] = ((e as u64 / 3) + 29 - d as u64) % (n as u64 / 3);
            }
        }
        cases.push(c);
        for keys in cases {
            check(keys.clone());
            let results: Vec<_> = [1, 3, 8].map(|t| sort_on(t, &keys, &mut RadixSorter::new())).into();
            assert!(results.iter().all(|r| r.2), "the merge path ran");
            assert!(results.windows(2).all(|w| w[0] == w[1]));
        }
    }

    #[test]
    fn nearly_sorted_path_is_independent_of_threads() {
        // Enough changed keys that the set-aside ones take the parallel sort too.
        let n = if cfg!(miri) { 40_000 } else { 600_000 };
        let mut keys: Vec<u64> = lcg(n, 21).into_iter().map(|k| k % 20_000).collect();
        keys.sort_unstable();
        for (j, c) in lcg(n / 30, 22).iter().enumerate() {
            keys[(c % n as u64) as usize] = lcg(1, 100 + j as u64)[0] % 20_000;
        }
        let run = |threads, merge_path: bool| {
            let mut s = RadixSorter::new();
            if !merge_path {
                s.nearly_sorted_max_threads = 0;
            }
            let out = sort_on(threads, &keys, &mut s);
            assert_eq!(out.2, merge_path);
            if merge_path && !cfg!(miri) && threads > 1 {
                let rest = s.rest_keys.len();
                assert!(rest >= PARALLEL_MIN, "{rest} set aside: the nested parallel sort is exercised");
            }
            (out.0, out.1)
        };
        let one = run(1, true);
        assert_eq!(one, run(3, true));
        assert_eq!(one, run(8, true));
        assert_eq!(one, run(8, false), "the merge path and the full sort agree");
        check(keys);
    }

    #[test]
    fn skewed_keys_split_big_buckets_again_and_stay_stable() {
        // Few distinct top digits (render-shaped): buckets far larger than SPLIT_AGAIN.
        let n = if cfg!(miri) { 40_000 } else { 400_000 };
        let keys: Vec<u64> = lcg(n, 31)
            .into_iter()
            .enumerate()
            .map(|(i, k)| (((i % 3) as u64) << 60) | ((k & 0xffff_ffff) % 50_000))
            .collect();
        let one = sort_on(1, &keys, &mut RadixSorter::new());
        assert_eq!(one, sort_on(6, &keys, &mut RadixSorter::new()));
        check(keys);
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
