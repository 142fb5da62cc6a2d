//! Sparse windows: one scatter for up to 14 key bits that take few values.
//!
//! Render keys pack hashed state ids (a pipeline's, a material's, a mesh's): a few hundred
//! values spread over 12-16 bits each. An 8-bit digit cuts such a field in two, and each
//! half still takes many of its 256 values, so a radix sort spends two passes on a field
//! worth one. [`split`] looks at the 14 bits below the highest varying bit: when they take
//! at most [`MAX_VALUES`] values, it numbers the values in ascending order through a table
//! indexed by the window (on the call's stack) and scatters on those numbers, so the window
//! costs one counting pass and one scatter. On the first value past the limit it stops
//! reading and scatters nothing.

use super::bits_below;

/// Most distinct values a window may take (bucket numbers fit a byte).
pub(super) const MAX_VALUES: usize = 256;
/// Widest window, in bits. Its table (a `u16` per window value, 32 KiB) is made on the
/// stack of [`split`] and zeroed per call (RUNS.md run 35, one thread, render-shaped keys
/// at 16k-1M pairs: 1.09-1.17x over no windows; 12 bits 0.92x at 64k, its buckets came out
/// at ~16 pairs; 16 bits 1.04-1.10x, zeroing 128 KiB a call). As fast as 16-bit windows
/// in a thread-local table, without the thread-local's borrow and the clearing it needs
/// (on unwinding too) to stay all zero between uses.
pub(super) const WINDOW: u32 = 14;
/// Fewest pairs for which a sparse window is looked for (a failed look zeroes the table
/// and reads at least `MAX_VALUES + 1` keys).
pub(super) const SPARSE_MIN: usize = super::size(1 << 11);
/// Most pairs for which a sparse window is looked for: with 16-bit windows, windows at
/// the top of 1M render-shaped pairs measured 0.90-0.92x (RUNS.md run 35: counting
/// through the table, out of the caches, cost more than the 8-bit levels it saved).
pub(super) const SPARSE_MAX: usize = super::size(1 << 18);

#[cfg(test)]
thread_local! {
    /// Scatters [`split`] ran on this thread (tests: the sort took this path).
    pub(super) static SPLITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What [`split`] found.
pub(super) enum Sparse {
    /// The window takes more than `MAX_VALUES` values: nothing was written.
    Dense,
    /// Every key has the same window (bits `lo..top`): nothing was written.
    One {
        /// The window's lowest bit.
        lo: u32,
    },
    /// Scattered into the destination: bucket `b` (keys of the `b`-th smallest window
    /// value) is `bounds[b]..bounds[b + 1]` of the caller's bounds, for `b < buckets`.
    Split {
        /// The window's lowest bit.
        lo: u32,
        /// Buckets (2 to `MAX_VALUES`).
        buckets: usize,
    },
}

/// Looks at bits `top - 14 .. top` of `xk` (all bits below `top` when `top` < 14) and, when
/// they take 2 to `MAX_VALUES` values, scatters `xk`/`xv` stably into `yk`/`yv` (same
/// length) by those values, and writes the buckets' bounds into `bounds`; not (`Dense`,
/// nothing written) when the values average a number of keys in `declined`.
#[inline(never)] // its 32 KiB table stays off the frames of the recursion around it
pub(super) fn split(
    xk: &[u64],
    xv: &[u32],
    yk: &mut [u64],
    yv: &mut [u32],
    top: u32,
    declined: std::ops::Range<usize>,
    bounds: &mut [usize; MAX_VALUES + 1],
) -> Sparse {
    let n = xk.len();
    assert!(xv.len() == n && yk.len() == n && yv.len() == n, "scatter source and destination lengths differ");
    let lo = top.saturating_sub(WINDOW);
    let mask = bits_below(top - lo);
    let window = |k: u64| ((k >> lo) & mask) as usize & ((1 << WINDOW) - 1);
    // Window value → its number + 1 (0: not seen yet).
    let mut slots = [0u16; 1 << WINDOW];
    let mut values = [0u16; MAX_VALUES];
    let mut counts = [0u32; MAX_VALUES];
    let mut distinct = 0;
    let mut dense = false;
    // Where no number of values up to `MAX_VALUES` can give buckets smaller than
    // `declined`, stop once there are too many for buckets as large as its end.
    let limit = if declined.start * MAX_VALUES <= n { (n / declined.end.max(1)).min(MAX_VALUES) } else { MAX_VALUES };
    for &k in xk {
        let w = window(k);
        match slots[w] {
            0 if distinct == limit => {
                dense = true;
                break;
            }
            0 => {
                values[distinct] = w as u16;
                counts[distinct] = 1;
                distinct += 1;
                slots[w] = distinct as u16;
            }
            s => counts[usize::from(s) - 1] += 1,
        }
    }
    dense |= distinct > 0 && declined.contains(&(n / distinct));
    if dense || distinct == 1 {
        return if dense { Sparse::Dense } else { Sparse::One { lo } };
    }
    // Number the values in ascending order; the table maps each to its number + 1.
    let mut order = [0u8; MAX_VALUES];
    order.iter_mut().enumerate().for_each(|(i, o)| *o = i as u8);
    let order = &mut order[..distinct];
    order.sort_unstable_by_key(|&i| values[usize::from(i)]);
    let mut offs = [0usize; MAX_VALUES];
    let mut sum = 0;
    for (b, &i) in order.iter().enumerate() {
        bounds[b] = sum;
        offs[b] = sum;
        sum += counts[usize::from(i)] as usize;
        slots[usize::from(values[usize::from(i)])] = b as u16 + 1;
    }
    assert_eq!(sum, n, "the counts cover every key");
    bounds[distinct] = n;
    let (pk, pv) = (yk.as_mut_ptr(), yv.as_mut_ptr());
    for (&k, &v) in xk.iter().zip(xv) {
        let b = usize::from(slots[window(k)]) - 1;
        let o = offs[b];
        debug_assert!(o < bounds[b + 1]);
        // SAFETY: the table started all zero, and the counting pass read all of `xk` (it
        // did not stop), so every window value of `xk` is one of the `distinct` values
        // numbered above, its number `b` is in the table, and `counts` holds how many keys
        // have it; `offs[b]` runs over `bounds[b]..bounds[b + 1]`, exclusive prefix sums
        // of those counts, which add up to `n` (asserted) = `yk.len()` = `yv.len()`
        // (asserted), and no index is written twice.
        unsafe {
            *pk.add(o) = k;
            *pv.add(o) = v;
        }
        offs[b] = o + 1;
    }
    #[cfg(test)]
    SPLITS.with(|c| c.set(c.get() + 1));
    Sparse::Split { lo, buckets: distinct }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` keys whose bits 26..40 take `values` values (an odd multiple of each, so
    /// distinct), with the bits below from `i`: the window below top bit 40 takes exactly
    /// `values` values.
    fn keys(n: usize, values: u64) -> Vec<u64> {
        (0..n as u64).map(|i| ((((i % values) * 0x9e37) & 0x3fff) << 26) | ((i * 7919) & 0x3ff_ffff)).collect()
    }

    /// The split of `keys` (values: positions) below top bit `top`, and the destination
    /// arrays.
    fn run(keys: &[u64], top: u32, declined: std::ops::Range<usize>) -> (Sparse, Vec<u64>, Vec<u32>) {
        run_bounds(keys, top, declined).0
    }

    /// [`run`], and the bounds written.
    #[allow(clippy::type_complexity)]
    fn run_bounds(
        keys: &[u64],
        top: u32,
        declined: std::ops::Range<usize>,
    ) -> ((Sparse, Vec<u64>, Vec<u32>), [usize; MAX_VALUES + 1]) {
        let n = keys.len();
        let vals: Vec<u32> = (0..n as u32).collect();
        let (mut yk, mut yv) = (vec![u64::MAX; n], vec![u32::MAX; n]);
        let mut bounds = [usize::MAX; MAX_VALUES + 1];
        let s = split(keys, &vals, &mut yk, &mut yv, top, declined, &mut bounds);
        ((s, yk, yv), bounds)
    }

    /// The stable order of `keys` by their bits `lo..top`.
    fn by_window(keys: &[u64], lo: u32, top: u32) -> (Vec<u64>, Vec<u32>) {
        let mut p: Vec<(u64, u32)> = keys.iter().copied().zip(0..).collect();
        p.sort_by_key(|&(k, _)| (k >> lo) & bits_below(top - lo));
        p.into_iter().unzip()
    }

    #[test]
    fn few_values_scatter_stably_in_ascending_order() {
        for values in [2, 5, MAX_VALUES as u64] {
            let k = keys(3 * MAX_VALUES, values);
            let ((s, yk, yv), bounds) = run_bounds(&k, 40, 0..0);
            let Sparse::Split { lo, buckets } = s else { panic!("{values} values: not split") };
            assert_eq!((lo, buckets), (26, values as usize));
            assert_eq!((yk.clone(), yv), by_window(&k, 26, 40), "{values} values");
            for b in 0..buckets {
                let w: Vec<u64> = yk[bounds[b]..bounds[b + 1]].iter().map(|k| k >> 26).collect();
                assert!(!w.is_empty() && w.iter().all(|&x| x == w[0]), "bucket {b} holds one value");
            }
            assert_eq!(bounds[buckets], k.len());
        }
    }

    #[test]
    fn too_many_values_one_value_or_declined_buckets_write_nothing() {
        let n = 3 * MAX_VALUES;
        let untouched = |yk: &[u64], yv: &[u32]| yk.iter().all(|&k| k == u64::MAX) && yv.iter().all(|&v| v == u32::MAX);
        let (s, yk, yv) = run(&keys(n, MAX_VALUES as u64 + 1), 40, 0..0);
        assert!(matches!(s, Sparse::Dense) && untouched(&yk, &yv), "257 values");
        let (s, yk, yv) = run(&keys(n, 1), 40, 0..0);
        assert!(matches!(s, Sparse::One { lo: 26 }) && untouched(&yk, &yv), "one value");
        // 768 pairs over 10 values: 76 a bucket, declined when 76 is in the range.
        let (s, yk, yv) = run(&keys(n, 10), 40, 50..100);
        assert!(matches!(s, Sparse::Dense) && untouched(&yk, &yv), "declined");
        assert!(matches!(run(&keys(n, 10), 40, 80..100).0, Sparse::Split { buckets: 10, .. }), "not declined");
    }

    #[test]
    fn large_inputs_stop_at_as_many_values_as_buckets_of_the_declined_end_allow() {
        // 25 * 256 pairs: no number of values gives buckets below 25, so buckets of at
        // least 500 are the only ones taken: at most 12 values.
        let n = 25 * MAX_VALUES;
        assert!(matches!(run(&keys(n, 12), 40, 25..500).0, Sparse::Split { buckets: 12, .. }));
        let (s, yk, _) = run(&keys(n, 13), 40, 25..500);
        assert!(matches!(s, Sparse::Dense) && yk.iter().all(|&k| k == u64::MAX), "13 values: buckets of 492");
    }

    #[test]
    fn a_window_takes_its_own_bits_only() {
        // Values that differ only above or only below the window's 14 bits count as one.
        let k: Vec<u64> = (0..600u64).map(|i| ((i % 3) << 40) | (((i % 7) * 0x51) << 26) | (i & 0x3ff_ffff)).collect();
        let (s, yk, yv) = run(&k, 40, 0..0);
        assert!(matches!(s, Sparse::Split { lo: 26, buckets: 7 }));
        assert_eq!((yk, yv), by_window(&k, 26, 40));
    }

    #[test]
    fn a_low_top_bit_takes_every_bit_below_it() {
        let k: Vec<u64> = (0..600u64).map(|i| (i * 37) % 1000 % 50).collect();
        let (s, yk, yv) = run(&k, 10, 0..0);
        assert!(matches!(s, Sparse::Split { lo: 0, buckets: 50, .. }));
        assert_eq!((yk, yv), by_window(&k, 0, 10));
    }
}
