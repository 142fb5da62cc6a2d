//! The full radix sort: one MSD scatter on the highest varying digit, then an LSD sort of
//! each bucket on its remaining digits (module `lsd`), and the parallel scatter.

use rayon::prelude::*;

use crate::busy::timed;

use super::lsd::{insertion_sort, lsd, scatter_serial, INSERTION_MAX};
use super::sparse::{self, Sparse, MAX_VALUES, SPARSE_MAX, SPARSE_MIN};
use super::stream::{self, Stores, STREAM_MIN};
use super::wide;
use super::{bits_below, block_len, digit, survey, varying_digits, BLOCK, RADIX, SPLIT_BLOCKS};

/// A pointer that workers write through at disjoint indices.
#[derive(Clone, Copy)]
struct Scatter<T>(*mut T);
// SAFETY: workers only write through it at indices no other worker writes (see `scatter_parallel`).
unsafe impl<T: Send> Send for Scatter<T> {}
// SAFETY: as above; the pointer is never read through concurrently.
unsafe impl<T: Send> Sync for Scatter<T> {}

/// Buckets at most this large split on 4-bit digits (16 buckets, so a level's fixed cost
/// stays small against the bucket); larger ones on 8-bit digits.
pub(super) const NARROW_MAX: usize = 256;
/// Under [`Lsd::FewValues`], an 8-bit digit with fewer distinct values than this in a
/// bucket ends the MSD splitting there (when the bucket is at most `LSD_MAX` pairs): the
/// rest is sorted LSD.
const MSD_SPREAD_MIN: usize = 64;

/// When [`msd`] hands a bucket that fits the caches and does not spread evenly to [`lsd`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lsd {
    /// Always: fewer passes and no per-bucket cost against levels of buckets of a few
    /// dozen pairs (one-thread sorts). `sparse`: split on sparse windows where they serve
    /// (module `sparse`).
    First {
        /// Sparse windows are looked for.
        sparse: bool,
        /// Splits of at least `STREAM_MIN` pairs may stream their stores (module `stream`).
        streamed: bool,
    },
    /// Only when its digit has fewer than `MSD_SPREAD_MIN` values (the parallel sort's
    /// buckets, which measured slower on 16 threads with `First`).
    FewValues,
}
/// Largest bucket sorted LSD: its passes stay in the caches.
pub(super) const LSD_MAX: usize = 1 << 16;

/// Stable MSD radix sort of the pairs in `xk`/`xv` on the bits of `varying` (the bits in
/// which keys of this bucket may still differ: all others are equal across it), with
/// `yk`/`yv` (same length) as scratch. The result ends in `x` when `into_x`, else in `y`.
///
/// Each level scatters on the digit just below the highest varying bit (8 bits, or 4 in
/// buckets of at most `NARROW_MAX` pairs; a digit the bucket's keys share is skipped) and
/// recurses into the buckets with the arrays' roles swapped; buckets of at most
/// `INSERTION_MAX` pairs are insertion-sorted. Uniform keys are told apart after two or
/// three digits, so most bits are never visited. A bucket that fits the caches and whose
/// keys do not spread evenly (render keys' hashed states) is sorted LSD over its remaining
/// digits as `rule` says (measurements: BENCHMARKS.md, run 13).
pub(super) fn msd(
    xk: &mut [u64],
    xv: &mut [u32],
    yk: &mut [u64],
    yv: &mut [u32],
    varying: u64,
    into_x: bool,
    rule: Lsd,
) {
    let n = xk.len();
    if varying == 0 || n <= INSERTION_MAX {
        if varying != 0 {
            insertion_sort(xk, xv);
        }
        if !into_x {
            yk.copy_from_slice(xk);
            yv.copy_from_slice(xv);
        }
        return;
    }
    let top = 64 - varying.leading_zeros();
    // Evenly spread keys (judged on a sample) go to the prefix sort without a histogram
    // of their top digit.
    if (PREFIX_MIN.max(SAMPLED_PREFIX_MIN)..=PREFIX_MAX).contains(&n) && super::spreads_evenly(xk, varying) {
        return prefix_sort(xk, xv, yk, yv, varying, into_x);
    }
    // Sparse windows (one-thread sorts of inputs that fit the caches), unless their buckets
    // would hold a hundred pairs or so on average: those are sorted faster by the levels
    // below (an LSD sort of the whole input, or 8-bit levels) than as buckets of their own.
    // Where more than 16 bits vary below the window, smaller buckets too: sorting
    // thousands of ten-pair buckets of such keys by insertion cost more than an LSD sort
    // of their bucket (2-core machine, one thread, render-shaped pairs, 30 bits below:
    // 64k 1.18x, 128k 1.6x; 16k and 256k, whose buckets never split so small, level).
    // With fewer below (states without a depth: 14 bits, 4k pairs), the small buckets
    // measured faster. Not under miri, whose inputs are 256 times smaller: every window
    // there would be declined and the windows' path left unrun (the declined path is the
    // one taken by dense windows).
    if matches!(rule, Lsd::First { sparse: true, .. }) && (SPARSE_MIN..=SPARSE_MAX).contains(&n) && top > 8 {
        let mut bounds = [0; MAX_VALUES + 1];
        let below = varying & bits_below(top.saturating_sub(sparse::WINDOW));
        let declined =
            if below.count_ones() > 16 && !cfg!(miri) { 1..2 * NARROW_MAX } else { INSERTION_MAX + 1..2 * NARROW_MAX };
        match sparse::split(xk, xv, yk, yv, top, declined, &mut bounds) {
            Sparse::Dense => {}
            Sparse::One { lo } => return msd(xk, xv, yk, yv, varying & bits_below(lo), into_x, rule),
            Sparse::Split { lo, buckets } => {
                let sizes = bounds[..=buckets].windows(2).map(|b| b[1] - b[0]);
                return finish_scattered(sizes, xk, xv, yk, yv, varying & bits_below(lo), into_x, rule);
            }
        }
    }
    let width = if n <= NARROW_MAX { 4 } else { 8 };
    let shift = top.saturating_sub(width);
    let mask = bits_below(top - shift);
    let buckets = mask as usize + 1;
    let mut h = [0u32; RADIX];
    for &k in xk.iter() {
        h[((k >> shift) & mask) as usize] += 1;
    }
    let rest = varying & bits_below(shift);
    let spread = h[..buckets].iter().filter(|&&c| c != 0).count();
    if spread == 1 {
        return msd(xk, xv, yk, yv, rest, into_x, rule);
    }
    if (PREFIX_MIN..=PREFIX_MAX).contains(&n) && evenly_spread(spread, buckets, n) {
        return prefix_sort(xk, xv, yk, yv, varying, into_x);
    }
    if width == 8
        && (matches!(rule, Lsd::First { .. }) || spread < MSD_SPREAD_MIN)
        && spread * 4 < n
        && n <= LSD_MAX
        && rest != 0
    {
        let (digits, count) = varying_digits(varying);
        return lsd(xk, xv, yk, yv, &digits[..count], !into_x);
    }
    // SAFETY: `h` is the histogram of `(k >> shift) & mask` over `xk`, counted just above;
    // the caller gives scratch of the same length.
    unsafe {
        if n >= STREAM_MIN && matches!(rule, Lsd::First { streamed: true, .. }) {
            stream::scatter(&h, xk, xv, yk, yv, shift, mask, Stores::DEFAULT);
        } else {
            scatter_serial(&h, xk, xv, yk, yv, shift, mask);
        }
    }
    finish_scattered(h[..buckets].iter().map(|&c| c as usize), xk, xv, yk, yv, rest, into_x, rule);
}

/// Sorts on the bits of `rest` each bucket a scatter from `x` left in `y` (consecutive, of
/// `sizes` pairs), each into `x` when `into_x`, else in place in `y` (a one-pair bucket is
/// only copied).
#[allow(clippy::too_many_arguments)]
fn finish_scattered(
    sizes: impl Iterator<Item = usize>,
    xk: &mut [u64],
    xv: &mut [u32],
    yk: &mut [u64],
    yv: &mut [u32],
    rest: u64,
    into_x: bool,
    rule: Lsd,
) {
    let mut lo = 0;
    for size in sizes {
        let hi = lo + size;
        match size {
            0 => {}
            1 if into_x => {
                xk[lo] = yk[lo];
                xv[lo] = yv[lo];
            }
            1 => {}
            _ => msd(&mut yk[lo..hi], &mut yv[lo..hi], &mut xk[lo..hi], &mut xv[lo..hi], rest, !into_x, rule),
        }
        lo = hi;
    }
}

/// Fewest pairs for which [`msd`] judges on a sample (`spreads_evenly`) whether keys
/// spread evenly, skipping the top digit's histogram for those that do (2-core machine,
/// one thread, RUNS.md run 35: uniform keys 1.03-1.07x at 4k-1M pairs, render-shaped
/// keys, which the sample sends on, 0.98-1.00x).
const SAMPLED_PREFIX_MIN: usize = super::size(1 << 12);
/// Fewest pairs for [`prefix_sort`].
pub(super) const PREFIX_MIN: usize = 256;
/// Most pairs for [`prefix_sort`]: its passes stay in the caches. Larger buckets split on
/// their top digit first. It was 256k: on the 2-core machine (one thread, uniform keys,
/// RUNS.md run 35) splitting first sorts 128k pairs 1.28x and 256k 1.30-1.32x faster (their
/// three prefix passes over 1.5-3 MB and as much scratch left the 2 MB L2 cache), 64k level;
/// splitting 64k pairs first (into buckets of 256) is 0.56x.
pub(super) const PREFIX_MAX: usize = 1 << 16;
/// Whether `n` keys that take `spread` of `buckets` values of their top digit spread about
/// evenly, as hashes and random keys do: at least 80 % of the distinct values `n` uniform
/// keys would take on average.
pub(super) fn evenly_spread(spread: usize, buckets: usize, n: usize) -> bool {
    let b = buckets as f64;
    let expected = b * (1.0 - (-(n as f64) / b).exp());
    spread as f64 >= 0.8 * expected
}

/// Keys that spread evenly over their top digit (uniform keys): an LSD sort on just enough
/// top bits to tell `n` keys apart about twice over (two or three 8-bit digits),
/// all their histograms counted in one pass; then each run of keys equal in those bits
/// (few, and short) is sorted on the bits below, by insertion or, for a long run, by
/// [`msd`]. Fewer passes than splitting level by level, and no per-bucket overhead. Stable:
/// the LSD passes keep input order among equal prefixes and the runs' sorts are stable.
fn prefix_sort(xk: &mut [u64], xv: &mut [u32], yk: &mut [u64], yv: &mut [u32], varying: u64, into_x: bool) {
    let n = xk.len();
    let top = 64 - varying.leading_zeros();
    // Bits to sort on: log2(n) + 1 or more, in whole 8-bit digits below `top` (at most
    // three). Equal prefixes are then rare and their runs short (measured against +0 and +4:
    // +4 costs a third digit from 4k pairs on, +0 leaves longer runs).
    let bits = usize::BITS - n.leading_zeros() + 1;
    if bits > 16 && bits <= 2 * WIDE && top >= 2 * bits.div_ceil(2) {
        return prefix_sort_wide(xk, xv, yk, yv, varying, into_x, bits.div_ceil(2));
    }
    let digits = (bits.div_ceil(8)).min(3).min(top.div_ceil(8));
    let low = top.saturating_sub(8 * digits);
    let shifts: [u32; 3] = [0, 1, 2].map(|j| top.saturating_sub(8 * (j + 1)).max(low));
    let shifts = &shifts[..digits as usize];
    // All histograms in one pass (the lowest digit may be narrower when `top` is small).
    let mut h = [[0u32; RADIX]; 3];
    let masks = [0, 1, 2].map(|j| if j + 1 == digits { bits_below(top - 8 * j - shifts[j as usize]) } else { 0xff });
    for &k in xk.iter() {
        for (j, &sh) in shifts.iter().enumerate() {
            h[j][((k >> sh) & masks[j]) as usize] += 1;
        }
    }
    // Two digits (most inputs): the first pass packs each pair into 16 bytes of this
    // thread's scratch, the second unpacks them where the result goes (nothing is copied
    // after): one write stream a bucket instead of two in the first pass, one read stream
    // in the second (RUNS.md run 84, the two passes over 256 buckets of 4k uniform pairs
    // in a probe: 1.43x faster this way on the 16-core machine's Xeon, 1.48x on the 2-core
    // machine's EPYC).
    if shifts.len() == 2 {
        // SAFETY: `h[j]` counts digit `(k >> shifts[j]) & masks[j]` over `xk`, so over any
        // permutation of it; the packed scratch and all four slices have length `n`;
        // `masks[j]` < `RADIX`.
        wide::with_packed(n, |p| unsafe {
            wide::split_to_packed(xk, xv, p, &h[1], shifts[1], masks[1]);
            let (k, v) = if into_x { (&mut *xk, &mut *xv) } else { (&mut *yk, &mut *yv) };
            wide::packed_to_split(p, k, v, &h[0], shifts[0], masks[0]);
        });
        return finish_prefixes(xk, xv, yk, yv, varying, low, !into_x, into_x);
    }
    // Least significant of the chosen digits first.
    let mut in_y = false;
    for j in (0..shifts.len()).rev() {
        // SAFETY: `h[j]` counts digit `(k >> shifts[j]) & masks[j]` over `xk`, so over any
        // permutation of it (each pass permutes); all four slices have length `n`.
        unsafe {
            if in_y {
                scatter_serial(&h[j], yk, yv, xk, xv, shifts[j], masks[j]);
            } else {
                scatter_serial(&h[j], xk, xv, yk, yv, shifts[j], masks[j]);
            }
        }
        in_y = !in_y;
    }
    finish_prefixes(xk, xv, yk, yv, varying, low, in_y, into_x);
}

/// Widest digit of [`prefix_sort_wide`], in bits.
const WIDE: u32 = 10;

/// [`prefix_sort`] for inputs that need 17-20 prefix bits (32k-256k pairs): two digits of
/// `width` (9 or 10) bits instead of three of 8, one scatter pass fewer (2-core machine,
/// one thread, uniform keys, RUNS.md run 35: 32k pairs 1.17x, 40k 1.13x, 64k 1.08x).
pub(super) fn prefix_sort_wide(
    xk: &mut [u64],
    xv: &mut [u32],
    yk: &mut [u64],
    yv: &mut [u32],
    varying: u64,
    into_x: bool,
    width: u32,
) {
    let top = 64 - varying.leading_zeros();
    assert!(width <= WIDE && 2 * width <= top, "two digits of {width} bits below bit {top}");
    let low = top - 2 * width;
    let mask = bits_below(width);
    let mut h = [[0u32; 1 << WIDE]; 2];
    for &k in xk.iter() {
        h[0][((k >> low) & mask) as usize] += 1;
        h[1][((k >> (low + width)) & mask) as usize] += 1;
    }
    // SAFETY: `h[j]` counts digit `(k >> (low + j * width)) & mask` over `xk`, so over any
    // permutation of it; the packed scratch and all four slices have length `n`; `mask` <
    // `1 << WIDE`. Through packed pairs, as in `prefix_sort`: the second pass writes where
    // the result goes.
    wide::with_packed(xk.len(), |p| unsafe {
        wide::split_to_packed(xk, xv, p, &h[0], low, mask);
        let (k, v) = if into_x { (&mut *xk, &mut *xv) } else { (&mut *yk, &mut *yv) };
        wide::packed_to_split(p, k, v, &h[1], low + width, mask);
    });
    finish_prefixes(xk, xv, yk, yv, varying, low, !into_x, into_x);
}

/// The end of a prefix sort whose digits left the pairs ordered by their bits from `low`
/// up in `y` (when `in_y`) or `x`: each run equal in those bits is sorted on the bits
/// below, then the result goes where `into_x` says.
#[allow(clippy::too_many_arguments)]
fn finish_prefixes(
    xk: &mut [u64],
    xv: &mut [u32],
    yk: &mut [u64],
    yv: &mut [u32],
    varying: u64,
    low: u32,
    in_y: bool,
    into_x: bool,
) {
    let n = xk.len();
    // Runs equal in the sorted bits, sorted on the bits below (in place, the other pair of
    // arrays as scratch).
    let below = varying & bits_below(low);
    let (k, v, tk, tv) = if in_y { (yk, yv, xk, xv) } else { (xk, xv, yk, yv) };
    if below != 0 {
        // Only runs with a descent need sorting, and a descent can only fall inside a run
        // (the keys are in prefix order): look for descents (a branch that is rarely
        // taken), then sort the run around each. (Comparing each key's prefix with its
        // run's instead mispredicted at every run of two: RUNS.md run 35, uniform keys
        // 1.13-1.27x this way.)
        let mut i = 1;
        while i < n {
            if k[i - 1] <= k[i] {
                i += 1;
                continue;
            }
            let prefix = k[i] >> low;
            let mut s = i - 1;
            while s > 0 && k[s - 1] >> low == prefix {
                s -= 1;
            }
            let mut e = i + 1;
            while e < n && k[e] >> low == prefix {
                e += 1;
            }
            msd(&mut k[s..e], &mut v[s..e], &mut tk[s..e], &mut tv[s..e], below, true, Lsd::FewValues);
            i = e;
        }
    }
    // The result is in `k`/`v`: the `y` pair when `in_y`.
    if in_y == into_x {
        tk.copy_from_slice(k);
        tv.copy_from_slice(v);
    }
}

/// Sorts each bucket `src[bounds[b]..bounds[b+1]]` on the bits of `varying` and writes it to the same
/// range of `dst` (the other pair of arrays serves as scratch), or, with `in_src`, leaves
/// it sorted in `src`. Buckets split recursively with `rayon::join`, so no list of slices
/// is allocated. `split`: run in parallel, and split buckets at least this large again;
/// `None`: one thread.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish_buckets(
    bounds: &[usize],
    src_k: &mut [u64],
    src_v: &mut [u32],
    dst_k: &mut [u64],
    dst_v: &mut [u32],
    varying: u64,
    split: Option<usize>,
    in_src: bool,
) {
    let buckets = bounds.len() - 1;
    let base = bounds[0];
    if buckets == 1 || split.is_none() {
        for b in 0..buckets {
            let (lo, hi) = (bounds[b] - base, bounds[b + 1] - base);
            if let Some(split) = split.filter(|&s| hi - lo >= s && varying != 0) {
                split_again(
                    &mut src_k[lo..hi],
                    &mut src_v[lo..hi],
                    &mut dst_k[lo..hi],
                    &mut dst_v[lo..hi],
                    varying,
                    split,
                    in_src,
                );
                continue;
            }
            // Sort the source range into the destination range, or in place with `in_src`
            // (each serves as the other's scratch).
            timed(|| {
                msd(
                    &mut src_k[lo..hi],
                    &mut src_v[lo..hi],
                    &mut dst_k[lo..hi],
                    &mut dst_v[lo..hi],
                    varying,
                    in_src,
                    Lsd::FewValues,
                )
            });
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
        || finish_buckets(&bounds[..=mid], sk0, sv0, dk0, dv0, varying, split, in_src),
        || finish_buckets(&bounds[mid..], sk1, sv1, dk1, dv1, varying, split, in_src),
    );
}

/// A bucket too big for one worker (render keys have few distinct top digits): split it
/// again on its highest varying lower digit, in parallel, and finish the sub-buckets.
/// Sorts `sk`/`sv` into `dk`/`dv`, or in place with `in_src`.
fn split_again(
    sk: &mut [u64],
    sv: &mut [u32],
    dk: &mut [u64],
    dv: &mut [u32],
    varying: u64,
    split: usize,
    in_src: bool,
) {
    let (and, or, _) = sk
        .par_chunks(BLOCK)
        .map(|c| timed(|| survey(c)))
        .reduce(|| (u64::MAX, 0, 0), |(a0, o0, d0), (a1, o1, d1)| (a0 & a1, o0 | o1, d0 + d1));
    let varying = varying & (and ^ or);
    if varying == 0 {
        if !in_src {
            dk.copy_from_slice(sk);
            dv.copy_from_slice(sv);
        }
        return;
    }
    let hi = (63 - varying.leading_zeros()) as usize / 8;
    // At most SPLIT_BLOCKS blocks, so their histograms fit on the stack (no allocation
    // while a frame sorts).
    let n = sk.len();
    let block = block_len(n).max(n.div_ceil(SPLIT_BLOCKS));
    let mut hist = [[0u32; RADIX]; SPLIT_BLOCKS];
    let bounds = scatter_parallel(&mut hist[..n.div_ceil(block)], block, sk, sv, dk, dv, hi, None);
    // The data is in `dk`/`dv` now; the sub-buckets' results land in `sk`/`sv`.
    finish_buckets(&bounds, dk, dv, sk, sv, varying & bits_below(hi as u32 * 8), Some(split), false);
    if !in_src {
        crate::par::copy_into(dk, sk);
        crate::par::copy_into(dv, sv);
    }
}

/// Stable parallel scatter of `sk`/`sv` into `dk`/`dv` on digit `d`, over blocks of
/// `block` pairs with one histogram each in `hist` (`n.div_ceil(block)` of them); returns
/// the buckets' bounds. With `stores`, each block scatters through module `stream`.
#[allow(clippy::too_many_arguments)]
pub(super) fn scatter_parallel(
    hist: &mut [[u32; RADIX]],
    block: usize,
    sk: &[u64],
    sv: &[u32],
    dk: &mut [u64],
    dv: &mut [u32],
    d: usize,
    stores: Option<Stores>,
) -> [usize; RADIX + 1] {
    let n = sk.len();
    // The writes below rely on these (SAFETY 1 and 2): checked once per call, not per pair.
    assert!(sv.len() == n && dk.len() == n && dv.len() == n, "scatter source and destination lengths differ");
    assert!(n <= u32::MAX as usize, "more pairs than the u32 histograms count");
    assert_eq!(hist.len(), n.div_ceil(block), "one histogram per block");
    crate::par::fill_blocks(1, &mut hist[..], &|b, h: &mut [[u32; RADIX]]| {
        let h = &mut h[0];
        *h = [0; RADIX];
        for &k in &sk[b * block..((b + 1) * block).min(n)] {
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
    crate::par::fill_blocks(1, &mut hist[..], &|b, offs: &mut [[u32; RADIX]]| {
        // Capture the whole wrappers (Sync), not their raw-pointer fields.
        let (pk, pv) = (pk, pv);
        let offs = &mut offs[0];
        let range = b * block..((b + 1) * block).min(n);
        let (ck, cv) = (&sk[range.clone()], &sv[range]);
        if let Some(stores) = stores {
            let mut o = [0; RADIX];
            o.iter_mut().zip(offs.iter()).for_each(|(o, &x)| *o = x as usize);
            // SAFETY: as below (1-3): each (block, bucket) range is this block's alone.
            unsafe { stream::scatter_at(&mut o, ck, cv, pk.0, pv.0, d as u32 * 8, 0xff, stores) };
            return;
        }
        for (&k, &v) in ck.iter().zip(cv) {
            let b = digit(k, d);
            let o = offs[b] as usize;
            debug_assert!(o < n);
            // SAFETY: 1. `o < n`: the offsets are an exclusive prefix sum of the counts of
            //            every (block, bucket), which add up to `n` = `dk.len()` = `dv.len()`
            //            (asserted above; the counts are u32 and `n` fits one).
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
