//! The nearly-sorted path: a frame's queue is last frame's order with a few keys changed,
//! so the keys that break the order are set aside, sorted, and merged back (three passes
//! over the input instead of sixteen).

mod merge;

use super::msd::{msd, Lsd};
use super::{block_len, survey, RadixSorter, MERGE_PARALLEL_MIN, PARALLEL_MIN};
use merge::Merge;

/// Fewest pairs set aside that are copied out by several threads, and fewest per thread:
/// a frame's few hundred (695 of the main view's 31k in the city of 100k objects) take
/// about 1.5 µs on one thread, less than waking the pool's helpers. (Copied in parallel
/// from 1k pairs, the city's frame at 1M objects on 16 threads was slower: run 96's
/// "mid".) 8 under miri, so that its small inputs copy in parallel too.
const SET_ASIDE_PARALLEL_MIN: usize = if cfg!(miri) { 8 } else { 8 << 10 };
const SET_ASIDE_PER_THREAD: usize = if cfg!(miri) { 4 } else { 256 };

/// Fewest given gaps widened by several threads, per thread: each gap reads the pairs
/// around it, which the workers that wrote the input hold in their caches (the city's
/// main view's given descents took 40-45 µs to widen on one thread of the 16-core machine,
/// run 95; the frame's sorts now give one gap, a tail, and widen on one thread).
pub(super) const WIDEN_PER_THREAD: usize = if cfg!(miri) { 2 } else { 32 };

/// Whether pair `a` comes after pair `b`: by key, and with `vals` (equal keys ordered by
/// value, [`RadixSorter::ties_by_value`]) by value where keys are equal.
#[inline]
pub(super) fn after(keys: &[u64], vals: Option<&[u32]>, a: usize, b: usize) -> bool {
    match vals {
        Some(v) => (keys[a], v[a]) > (keys[b], v[b]),
        None => keys[a] > keys[b],
    }
}

/// Appends the descents (pair `j` after pair `j + 1`, see [`after`]) for `j` in `range`
/// to `runs` as gaps `[base + j, base + j + 2)`, merging gaps that touch.
fn descent_runs(
    keys: &[u64],
    vals: Option<&[u32]>,
    range: std::ops::Range<usize>,
    base: usize,
    runs: &mut Vec<(usize, usize)>,
) {
    // Descents are rare, but not so rare that a branch per element predicts well (with 3 %
    // of keys changed about every third group of 16 holds one): 16 comparisons at a time
    // into a bit mask, without a branch, then one step per set bit.
    const GROUP: usize = 16;
    let mut j = range.start;
    while j + GROUP <= range.end {
        // The group and the pair after it as arrays (`range.end` is at most `n - 1`): the
        // comparisons vectorize.
        let k: &[u64; GROUP + 1] = keys[j..j + GROUP + 1].try_into().expect("GROUP + 1 long");
        let mut mask = 0u32;
        if let Some(vals) = vals {
            let v: &[u32; GROUP + 1] = vals[j..j + GROUP + 1].try_into().expect("GROUP + 1 long");
            for i in 0..GROUP {
                mask |= u32::from((k[i] > k[i + 1]) | ((k[i] == k[i + 1]) & (v[i] > v[i + 1]))) << i;
            }
        } else {
            for i in 0..GROUP {
                mask |= u32::from(k[i] > k[i + 1]) << i;
            }
        }
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            push_run(runs, (base + j + i, base + j + i + 2));
            mask &= mask - 1;
        }
        j += GROUP;
    }
    for i in j..range.end {
        if after(keys, vals, i, i + 1) {
            push_run(runs, (base + i, base + i + 2));
        }
    }
}

/// Appends the descents of the pairs (`keys`, `vals`) to `gaps` as gaps
/// `[base + j, base + j + 2)`, merging gaps that touch (also the last one already there):
/// the gaps a caller that writes a sort's input in parts finds in each part, for
/// [`RadixSorter::sort_vecs_surveyed`]. A descent is `keys[j] > keys[j + 1]`; with `vals`
/// (for a sorter that orders equal keys by value, [`RadixSorter::ties_by_value`]) also
/// equal keys whose values descend. The pair across two parts' seam is the caller's to
/// add ([`push_gap`]).
pub fn descent_gaps(keys: &[u64], vals: Option<&[u32]>, base: usize, gaps: &mut Vec<(usize, usize)>) {
    descent_runs(keys, vals, 0..keys.len().saturating_sub(1), base, gaps);
}

/// Appends `gap` to `gaps` (ascending), merged with the last one where they touch.
#[inline]
pub fn push_gap(gaps: &mut Vec<(usize, usize)>, gap: (usize, usize)) {
    push_run(gaps, gap);
}

#[inline]
fn push_run(runs: &mut Vec<(usize, usize)>, r: (usize, usize)) {
    match runs.last_mut() {
        Some(last) if last.1 >= r.0 => last.1 = last.1.max(r.1),
        _ => runs.push(r),
    }
}

/// Widens the gaps `input` (ascending, not touching) onto `out` until the survivors
/// around each are ordered (by key, and with `vals` by value where keys are equal), merging gaps that come to touch: one pass, each gap finished
/// before the next; a gap that grows into one already in `out` takes it back off and
/// re-checks. With `until_clean`, stops after the first finished gap that the next input
/// gap does not touch and returns the index of that next gap: the rest of `input`, already
/// widened on its own, needs nothing more. `None`: one gap grew past `limit`.
fn widen_gaps(
    keys: &[u64],
    vals: Option<&[u32]>,
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
            if cur.0 > 0 && cur.1 < n && after(keys, vals, cur.0 - 1, cur.1) {
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

/// How the nearly-sorted path ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Merged {
    /// Sorted into the scratch arrays (`self.keys[..n]`, `self.vals[..n]`).
    Done,
    /// No descents: the pairs were in order (with ties by value, equal keys by value
    /// too), nothing moved.
    InOrder,
    /// Too many keys out of place: the input is untouched.
    GaveUp,
}

impl RadixSorter {
    /// The nearly-sorted path: set aside the keys that break the order, sort them, merge
    /// into the scratch arrays (`self.keys[..n]`, `self.vals[..n]`, exactly `n` long: the
    /// caller copies them back or takes them). [`Merged::GaveUp`], with the input
    /// untouched, when too many keys are out of place; [`Merged::InOrder`] when there is
    /// no descent.
    ///
    /// Both ends of every descent are set aside; the survivors next to each gap are then
    /// compared and the gap widened until the survivors are in order. Survivors that were
    /// adjacent in the input are already in order, so only the gaps need checking.
    ///
    /// With [`RadixSorter::ties_by_value`] the order is that of (key, value) throughout:
    /// equal keys whose values descend are descents too, the pairs set aside are sorted
    /// by key then value, and the merge compares values where keys are equal, so the
    /// output needs no pass that orders its ties.
    pub(super) fn sort_nearly_sorted(&mut self, keys: &mut [u64], vals: &mut [u32]) -> Merged {
        let n = keys.len();
        let limit = n / 8;
        let parallel = n >= MERGE_PARALLEL_MIN && rayon::current_num_threads() > 1;
        let by_value = self.ties_by_value.then_some(&*vals);
        if std::mem::take(&mut self.gaps_given) {
            // The caller found the descents (or a tail holding them) as it wrote the input:
            // widened without a pass over the input, in parallel groups where there are
            // many gaps.
            let zone = crate::profile::zone!("widen-gaps");
            self.runs.clear();
            let given = &self.given_gaps[..];
            let groups = if parallel { rayon::current_num_threads().min(given.len() / WIDEN_PER_THREAD) } else { 1 };
            if groups <= 1 {
                if widen_gaps(keys, by_value, given, &mut self.runs, limit, false).is_none() {
                    return Merged::GaveUp;
                }
            } else {
                // Groups of gaps widened in parallel, then joined as the blocks below are.
                self.block_widened.resize_with(groups, Vec::new);
                let failed = std::sync::atomic::AtomicBool::new(false);
                let k = &*keys;
                type Gaps = Vec<(usize, usize)>;
                crate::par::fill_blocks(1, &mut self.block_widened[..groups], &|g, w: &mut [Gaps]| {
                    let w = &mut w[0];
                    w.clear();
                    let group = &given[g * given.len() / groups..(g + 1) * given.len() / groups];
                    if widen_gaps(k, by_value, group, w, limit, false).is_none() {
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                });
                if failed.into_inner() || !self.join_widened(keys, by_value, groups, limit) {
                    return Merged::GaveUp;
                }
            }
            drop(zone);
            return self.set_aside_and_merge(keys, vals, parallel);
        }
        // Gaps as half-open ranges [start, end) of set-aside positions, ascending. Per block
        // (in parallel): the descents, then the gaps widened until the survivors around each
        // are ordered. Then, in order, each block's gaps are joined to the previous blocks':
        // only gaps that meet across a block edge need another look.
        let blocks = if parallel { (n - 1).div_ceil(block_len(n)) } else { 1 };
        let block = (n - 1).div_ceil(blocks);
        self.block_runs.resize_with(blocks, Vec::new);
        self.block_widened.resize_with(blocks, Vec::new);
        let failed = std::sync::atomic::AtomicBool::new(false);
        let k = &*keys;
        let blocks_out = (&mut self.block_runs[..], &mut self.block_widened[..]);
        type Gaps = Vec<(usize, usize)>;
        crate::par::fill_blocks(1, blocks_out, &|b, (r, w): (&mut [Gaps], &mut [Gaps])| {
            let (r, w) = (&mut r[0], &mut w[0]);
            r.clear();
            w.clear();
            descent_runs(k, by_value, b * block..((b + 1) * block).min(n - 1), 0, r);
            if widen_gaps(k, by_value, r, w, limit, false).is_none() {
                failed.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
        if failed.into_inner() {
            return Merged::GaveUp;
        }
        self.runs.clear();
        if !self.join_widened(keys, by_value, blocks, limit) {
            return Merged::GaveUp;
        }
        self.set_aside_and_merge(keys, vals, parallel)
    }

    /// Joins the gaps that the first `parts` of `self.block_widened` hold (each widened on
    /// its own, ascending from part to part) onto `self.runs`: only gaps that meet across
    /// two parts' seam need another look. False: one gap grew past `limit`.
    fn join_widened(&mut self, keys: &[u64], by_value: Option<&[u32]>, parts: usize, limit: usize) -> bool {
        for w in &self.block_widened[..parts] {
            if w.is_empty() {
                continue;
            }
            let Some(i) = widen_gaps(keys, by_value, w, &mut self.runs, limit, true) else { return false };
            self.runs.extend_from_slice(&w[i..]);
        }
        true
    }

    /// The rest of the nearly-sorted path once `self.runs` holds the widened gaps: set
    /// them aside, sort them, merge.
    fn set_aside_and_merge(&mut self, keys: &mut [u64], vals: &mut [u32], parallel: bool) -> Merged {
        let n = keys.len();
        let limit = n / 8;
        let runs = &self.runs;
        if runs.is_empty() {
            return Merged::InOrder;
        }
        let removed: usize = runs.iter().map(|r| r.1 - r.0).sum();
        if removed > limit {
            return Merged::GaveUp;
        }
        debug_assert!(runs.windows(2).all(|w| w[0].1 < w[1].0));
        let by_value = self.ties_by_value.then_some(&*vals);
        debug_assert!(runs.iter().all(|r| r.0 == 0 || r.1 == n || !after(keys, by_value, r.0 - 1, r.1)));
        // Pairs set aside before each gap, for the merge's split points.
        self.run_prefix.clear();
        self.run_prefix.push(0);
        for r in runs {
            self.run_prefix.push(self.run_prefix[self.run_prefix.len() - 1] + (r.1 - r.0));
        }
        // Set the gaps aside, in input order (in parallel over groups of gaps), and sort
        // them stably: by the parallel sort when there are many; with ties by value, equal
        // keys then by value.
        let m = removed;
        let set_aside = crate::profile::zone!("set-aside");
        crate::par::set_len(&mut self.rest_keys, m);
        crate::par::set_len(&mut self.rest_vals, m);
        crate::par::set_len(&mut self.rest_pos, m);
        self.rest_order.clear();
        self.rest_order.extend(0..m as u32);
        {
            // Groups of gaps of about equal size: their first gaps, and where their pairs go
            // (the pairs set aside before a group's first gap).
            let groups = if parallel && m >= SET_ASIDE_PARALLEL_MIN {
                rayon::current_num_threads().min(runs.len()).min(m / SET_ASIDE_PER_THREAD).max(1)
            } else {
                1
            };
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
        drop(set_aside);
        let sort_zone = crate::profile::zone!("sort-set-aside");
        if m >= PARALLEL_MIN && parallel {
            let sorter = self.rest_sorter.get_or_insert_with(Default::default);
            sorter.sort_vecs(&mut self.rest_keys, &mut self.rest_order);
        } else {
            // Scratch of at least m: cut to m, it would be written again up to n below
            // (zeroes over the whole queue, every frame).
            if self.keys.len() < m {
                crate::par::set_len(&mut self.keys, m);
                crate::par::set_len(&mut self.vals, m);
            }
            let (and, or, _) = survey(&self.rest_keys);
            msd(
                &mut self.rest_keys,
                &mut self.rest_order,
                &mut self.keys[..m],
                &mut self.vals[..m],
                and ^ or,
                true,
                Lsd::FewValues,
            );
        }
        if self.ties_by_value {
            order_set_aside_ties(&self.rest_keys, &mut self.rest_order, &self.rest_vals);
        }
        drop(sort_zone);
        let zone = crate::profile::zone!("merge");
        crate::par::set_len(&mut self.keys, n);
        crate::par::set_len(&mut self.vals, n);
        // Merge the kept pairs (the input minus the gaps: sorted) with the set-aside ones
        // into the scratch arrays, in parallel segments.
        let parts = if parallel { rayon::current_num_threads().min(64) } else { 1 };
        zone.text(|| format!("{n} pairs, {m} set aside in {} gaps, {parts} parts", self.runs.len()));
        let merge = Merge {
            ties_by_value: self.ties_by_value,
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
        Merged::Done
    }
}

/// Orders each run of equal keys of the set-aside pairs (`rk`, sorted) by value
/// (`rv[order[j]]`); runs already in order are only read.
fn order_set_aside_ties(rk: &[u64], order: &mut [u32], rv: &[u32]) {
    let mut s = 0;
    while s < rk.len() {
        let mut e = s + 1;
        while e < rk.len() && rk[e] == rk[s] {
            e += 1;
        }
        let run = &mut order[s..e];
        if run.windows(2).any(|w| rv[w[0] as usize] > rv[w[1] as usize]) {
            run.sort_unstable_by_key(|&o| rv[o as usize]);
        }
        s = e;
    }
}
