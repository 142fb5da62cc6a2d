//! The merge of the nearly-sorted path: the kept pairs (the input minus its gaps) with
//! the sorted set-aside ones, in parallel segments cut at keys.

/// The merge of the nearly-sorted path: kept pairs are the input minus `runs` (sorted);
/// the set-aside pairs are `rk` (sorted) with payload `rv[order]` and input positions
/// `rpos[order]`. Ties go to the smaller input position, which keeps the sort stable, or
/// with `ties_by_value` to the smaller value.
pub(super) struct Merge<'a> {
    /// Equal keys by value: the kept pairs and the set-aside ones are each in (key,
    /// value) order, and the merge compares values where keys are equal.
    pub(super) ties_by_value: bool,
    pub(super) keys: &'a [u64],
    pub(super) vals: &'a [u32],
    pub(super) runs: &'a [(usize, usize)],
    /// `prefix[i]`: pairs set aside in `runs[..i]`.
    pub(super) prefix: &'a [usize],
    pub(super) rk: &'a [u64],
    pub(super) order: &'a [u32],
    pub(super) rv: &'a [u32],
    pub(super) rpos: &'a [u32],
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
    pub(super) fn run(
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

    /// Merges set-aside pairs `[r0, r1)` with kept input positions `[p0, p1)`, ties by
    /// value or by input position.
    fn segment(&self, r0: usize, r1: usize, p0: usize, p1: usize, out_k: &mut [u64], out_v: &mut [u32]) {
        if self.ties_by_value {
            self.segment_by::<true>(r0, r1, p0, p1, out_k, out_v);
        } else {
            self.segment_by::<false>(r0, r1, p0, p1, out_k, out_v);
        }
    }

    /// [`Merge::segment`], equal keys by value (`BY_VALUE`) or by input position.
    ///
    /// Kept pairs come in contiguous stretches between gaps; for each set-aside pair the
    /// kept pairs that precede it are found by a short scan and copied as one block.
    fn segment_by<const BY_VALUE: bool>(
        &self,
        r0: usize,
        r1: usize,
        p0: usize,
        p1: usize,
        out_k: &mut [u64],
        out_v: &mut [u32],
    ) {
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
            let o = self.order[j] as usize;
            let (x, xv) = (self.rk[j], self.rv[o]);
            let xpos = if BY_VALUE { 0 } else { self.rpos[o] as usize };
            // Kept pairs before (x, xv): smaller keys, or equal keys with smaller values
            // (BY_VALUE) or earlier in the input.
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
                    if k > x || (k == x && if BY_VALUE { v >= xv } else { p + c >= xpos }) {
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
            out_v[w] = xv;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "safe code only (a search over the kept keys)")]
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
