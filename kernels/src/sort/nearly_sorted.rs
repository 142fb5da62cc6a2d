//! The nearly-sorted path: a frame's queue is last frame's order with a few keys changed,
//! so the keys that break the order are set aside, sorted, and merged back (three passes
//! over the input instead of sixteen).

use super::msd::{msd, Lsd};
use super::{block_len, survey, RadixSorter, MERGE_PARALLEL_MIN, PARALLEL_MIN};

/// Fewest pairs set aside that are copied out by several threads: a frame's few hundred
/// (695 of the main view's 31k in the city of 100k objects) take about 1.5 µs on one
/// thread, less than waking the pool's helpers. 8 under miri, so that its small inputs
/// copy in parallel too.
const SET_ASIDE_PARALLEL_MIN: usize = if cfg!(miri) { 8 } else { 8 << 10 };

/// Appends the descents `k[j] > k[j + 1]` for `j` in `range` to `runs` as gaps
/// `[base + j, base + j + 2)`, merging gaps that touch.
fn descent_runs(keys: &[u64], range: std::ops::Range<usize>, base: usize, runs: &mut Vec<(usize, usize)>) {
    // Descents are rare, but not so rare that a branch per element predicts well (with 3 %
    // of keys changed about every third group of 16 holds one): 16 comparisons at a time
    // into a bit mask, without a branch, then one step per set bit.
    const GROUP: usize = 16;
    let mut j = range.start;
    while j + GROUP <= range.end {
        let (a, b) = (&keys[j..j + GROUP], &keys[j + 1..j + GROUP + 1]);
        let mut mask = 0u32;
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            mask |= u32::from(x > y) << i;
        }
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            push_run(runs, (base + j + i, base + j + i + 2));
            mask &= mask - 1;
        }
        j += GROUP;
    }
    for i in j..range.end {
        if keys[i] > keys[i + 1] {
            push_run(runs, (base + i, base + i + 2));
        }
    }
}

/// Appends the descents `keys[j] > keys[j + 1]` to `gaps` as gaps `[base + j, base + j +
/// 2)`, merging gaps that touch (also the last one already there): the gaps a caller that
/// writes a sort's input in parts finds in each part, for
/// [`RadixSorter::sort_vecs_surveyed`]. The pair across two parts' seam is the caller's
/// to add ([`push_gap`]).
pub fn descent_gaps(keys: &[u64], base: usize, gaps: &mut Vec<(usize, usize)>) {
    descent_runs(keys, 0..keys.len().saturating_sub(1), base, gaps);
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

/// How the nearly-sorted path ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Merged {
    /// Sorted into the scratch arrays (`self.keys[..n]`, `self.vals[..n]`).
    Done,
    /// No descents: the keys were in order, nothing moved.
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
    pub(super) fn sort_nearly_sorted(&mut self, keys: &mut [u64], vals: &mut [u32]) -> Merged {
        let n = keys.len();
        let limit = n / 8;
        let parallel = n >= MERGE_PARALLEL_MIN && rayon::current_num_threads() > 1;
        if std::mem::take(&mut self.gaps_given) {
            // The caller found the descents as it wrote the input: widened in one serial
            // pass (a few hundred gaps in a frame), no pass over the input.
            self.runs.clear();
            if widen_gaps(keys, &self.given_gaps, &mut self.runs, limit, false).is_none() {
                return Merged::GaveUp;
            }
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
            descent_runs(k, b * block..((b + 1) * block).min(n - 1), 0, r);
            if widen_gaps(k, r, w, limit, false).is_none() {
                failed.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
        if failed.into_inner() {
            return Merged::GaveUp;
        }
        self.runs.clear();
        for w in &self.block_widened {
            if w.is_empty() {
                continue;
            }
            let Some(i) = widen_gaps(keys, w, &mut self.runs, limit, true) else { return Merged::GaveUp };
            self.runs.extend_from_slice(&w[i..]);
        }
        self.set_aside_and_merge(keys, vals, parallel)
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
        crate::par::set_len(&mut self.rest_keys, m);
        crate::par::set_len(&mut self.rest_vals, m);
        crate::par::set_len(&mut self.rest_pos, m);
        self.rest_order.clear();
        self.rest_order.extend(0..m as u32);
        {
            // Groups of gaps of about equal size: their first gaps, and where their pairs go
            // (the pairs set aside before a group's first gap).
            let groups = if parallel && m >= SET_ASIDE_PARALLEL_MIN {
                rayon::current_num_threads().min(runs.len()).max(1)
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
        crate::par::set_len(&mut self.keys, n);
        crate::par::set_len(&mut self.vals, n);
        // Merge the kept pairs (the input minus the gaps: sorted) with the set-aside ones
        // into the scratch arrays, in parallel segments.
        let parts = if parallel { rayon::current_num_threads().min(64) } else { 1 };
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

/// The merge of the nearly-sorted path: kept pairs are the input minus `runs` (sorted);
/// the set-aside pairs are `rk` (sorted) with payload `rv[order]` and input positions
/// `rpos[order]`. Ties go to the smaller input position, which keeps the sort stable.
struct Merge<'a> {
    /// Order each segment's equal keys by value once it is written.
    ties_by_value: bool,
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
        // The last kept key up to the end of segment `i`. Gaps do not touch, but the first
        // segment is empty when a gap starts the input and the last when one ends it: an
        // empty segment answers for the kept keys before it, so the search below stays
        // monotonic (an empty last segment once made it skip the segment before).
        let last_upto = |i: usize| (0..=i).rev().map(seg).find(|r| !r.is_empty()).map(|r| self.keys[r.end - 1]);
        // First segment whose kept keys up to its end reach x.
        let (mut lo, mut hi) = (0, segments);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if last_upto(mid).is_none_or(|k| k < x) {
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
        // Split at keys taken at equal steps of the input's kept pairs (most of the output:
        // split by the set-aside pairs, which often cluster in a few key ranges, one segment
        // got most of it): both sides at the first pair of the split key, so equal keys
        // never straddle two segments and every segment is independent.
        let n = self.keys.len();
        splits.clear();
        splits.push((0, 0));
        for s in 1..parts {
            // A kept position near the step: past the gap it stands in.
            let mut q = s * n / parts;
            if let Some(r) = self.runs.get(self.runs.partition_point(|r| r.1 <= q)).filter(|r| r.0 <= q) {
                q = r.1;
            }
            if q >= n {
                break;
            }
            let key = self.keys[q];
            let split = (self.rk.partition_point(|&x| x < key), self.kept_lower_bound(key));
            if split != *splits.last().expect("non-empty") {
                splits.push(split);
            }
        }
        splits.push((m, n));
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
                // Copied while compared: most stretches are a few dozen pairs, too short
                // for a memcpy call per stretch to pay.
                let (ks, vs) = (&keys[p..end], &vals[p..end]);
                let (ok, ov) = (&mut out_k[w..], &mut out_v[w..]);
                let mut c = 0;
                // Whole groups of 8 below x first (one vector compare each), then one at a
                // time from the group that holds the first key not below x.
                const LANES: usize = 8;
                while c + LANES <= ks.len() {
                    let group: &[u64; LANES] = ks[c..c + LANES].try_into().expect("LANES long");
                    if group.iter().fold(false, |any, &k| any | (k >= x)) {
                        break;
                    }
                    ok[c..c + LANES].copy_from_slice(group);
                    ov[c..c + LANES].copy_from_slice(&vs[c..c + LANES]);
                    c += LANES;
                }
                let (ks, vs, ok, ov) = (&ks[c..], &vs[c..], &mut ok[c..], &mut ov[c..]);
                w += c;
                p += c;
                let mut c = 0;
                for ((&k, &v), (o, ovv)) in ks.iter().zip(vs).zip(ok.iter_mut().zip(ov.iter_mut())) {
                    if k > x || (k == x && p + c >= xpos) {
                        break;
                    }
                    *o = k;
                    *ovv = v;
                    c += 1;
                }
                w += c;
                p += c;
                if p < end {
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
        // Equal keys never straddle two segments (`run` cuts at the start of a run of
        // equal keys), so each segment orders its own ties.
        if self.ties_by_value {
            super::order_runs(out_k, out_v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_lower_bound_is_right_with_gaps_at_either_end() {
        // Kept keys 0, 10, 20, ... outside the gaps; gap contents do not matter here.
        let n = 40;
        let keys: Vec<u64> = (0..n as u64).map(|i| i * 10).collect();
        let gap_sets: [&[(usize, usize)]; 4] = [
            &[(5, 7), (12, 14), (15, 17), (38, 40)], // the last segment empty
            &[(0, 2), (12, 14), (20, 25)],           // the first segment empty
            &[(0, 3), (9, 11), (37, 40)],            // both
            &[(10, 12), (30, 31)],
        ];
        for runs in gap_sets {
            let merge = Merge {
                ties_by_value: false,
                keys: &keys,
                vals: &[],
                runs,
                prefix: &[],
                rk: &[],
                order: &[],
                rv: &[],
                rpos: &[],
            };
            let kept = |p: usize| !runs.iter().any(|r| (r.0..r.1).contains(&p));
            for x in (0..=n as u64 * 10 + 5).step_by(if cfg!(miri) { 7 } else { 1 }) {
                let expect = (0..n).find(|&p| kept(p) && keys[p] >= x).unwrap_or(n);
                assert_eq!(merge.kept_lower_bound(x), expect, "key {x}, gaps {runs:?}");
            }
        }
    }
}
