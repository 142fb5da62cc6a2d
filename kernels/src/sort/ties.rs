//! Equal keys ordered by value ([`RadixSorter::ties_by_value`](super::RadixSorter::ties_by_value)):
//! finding the ties out of order, and sorting the runs of equal keys that hold one.

use super::BLOCK;

/// Adjacent pairs with equal keys whose values descend (`k[i] == k[i+1]`, `v[i] > v[i+1]`):
/// the ties a tie pass would reorder.
pub(super) fn ties_out_of_order(keys: &[u64], vals: &[u32]) -> u64 {
    let n = keys.len().min(vals.len());
    if n < 2 {
        return 0;
    }
    // Shifted slices rather than windows: the comparisons vectorize.
    let (k0, k1, v0, v1) = (&keys[..n - 1], &keys[1..n], &vals[..n - 1], &vals[1..n]);
    k0.iter().zip(k1).zip(v0.iter().zip(v1)).map(|((a, b), (x, y))| u64::from((a == b) & (x > y))).sum()
}

/// Sorts each run of equal keys in `keys` (ascending) by its values, in place: in
/// parallel over blocks that start where a run starts when `parallel`.
pub(crate) fn order_ties_by_value(keys: &[u64], vals: &mut [u32], starts: &mut Vec<usize>, parallel: bool) {
    let n = keys.len();
    starts.clear();
    starts.push(0);
    if parallel {
        for b in 1..n.div_ceil(BLOCK) {
            let mut s = (b * BLOCK).max(*starts.last().expect("non-empty"));
            while s < n && keys[s] == keys[s - 1] {
                s += 1;
            }
            starts.push(s);
        }
    }
    starts.push(n);
    crate::par::fill_ranges(starts, vals, &|b, v: &mut [u32]| order_runs(&keys[starts[b]..starts[b + 1]], v));
}

/// Sorts each run of equal keys of `k` by its values in `v` (same length).
pub(crate) fn order_runs(k: &[u64], v: &mut [u32]) {
    // Equal neighbours are common in render keys (a fifth of a city's main queue: objects
    // of one state at one coarse depth), but most runs of them are already in value order.
    // So look for the neighbours that need a change, equal keys with values descending, 16
    // at a time without a branch (they vectorize), and sort only the runs that hold one.
    const GROUP: usize = 16;
    let n = k.len();
    let mut s = 0;
    while s + 1 < n {
        if s + GROUP < n {
            // A whole group and the pair after it, as arrays: the comparisons vectorize.
            let ka: &[u64; GROUP + 1] = k[s..s + GROUP + 1].try_into().expect("GROUP + 1 long");
            let va: &[u32; GROUP + 1] = v[s..s + GROUP + 1].try_into().expect("GROUP + 1 long");
            let mut any = false;
            for i in 0..GROUP {
                any |= (ka[i] == ka[i + 1]) & (va[i] > va[i + 1]);
            }
            if !any {
                s += GROUP;
                continue;
            }
        }
        let end = (s + GROUP).min(n - 1);
        // The first neighbours of the group with equal keys and values descending.
        let Some(at) = (s..end).find(|&i| k[i] == k[i + 1] && v[i] > v[i + 1]) else {
            s = end;
            continue;
        };
        // The run that holds them: back to its start (which may lie before this group, in
        // a part already looked at and in order), on to its end.
        let mut first = at;
        while first > 0 && k[first - 1] == k[at] {
            first -= 1;
        }
        let mut e = at + 2;
        while e < n && k[e] == k[at] {
            e += 1;
        }
        v[first..e].sort_unstable();
        s = e;
    }
}
