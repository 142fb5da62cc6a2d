//! The one-thread LSD sort of keys that do not spread evenly (render keys), on 11-bit
//! digits over pairs packed 16 bytes apiece.
//!
//! Render keys pack hashed state ids and a depth: nearly every one of their 64 bits varies,
//! yet their top digits take few values, so splitting on the top digit (MSD) leaves large
//! buckets to sort on most of the key again. An LSD sort over the varying bits does the
//! least work for them: with 11-bit digits, six passes cover 64 bits (eight with 8-bit
//! digits). Each pass moves a pair as one 16-byte store into one array rather than a key
//! and a value into two, half the write streams a scatter keeps open (2,048 buckets, each
//! writing where the last pair of its bucket went). The first pass reads the caller's
//! arrays and the last writes them, so packing costs no pass of its own.
//!
//! The packed scatters and a per-thread packed scratch ([`with_packed`]) serve the other
//! LSD passes too: the in-cache LSD sorts (module `lsd`) and the prefix sorts (module
//! `msd`). [`Wide::sort`] keeps packed arrays of its own: run through the per-thread
//! scratch, the render-shaped 16k cell on one thread measured 0.93x (2-core machine).

use super::{bits_below, size};

/// Bits per digit.
const WIDTH: u32 = 11;
/// Buckets per digit.
const BUCKETS: usize = 1 << WIDTH;
/// A digit's mask.
const MASK: u64 = BUCKETS as u64 - 1;
/// Most digits: 11-bit windows over 64 bits.
const MAX_DIGITS: usize = 64usize.div_ceil(WIDTH as usize);
/// Fewest pairs for this sort: below, the 2,048-bucket prefix sums cost more than the
/// fewer passes save.
pub(super) const WIDE_MIN: usize = size(1 << 12);
/// Most pairs for this sort. Measured against the MSD sort it replaces (one thread,
/// render-shaped pairs, RUNS.md run 69): on the 16-core machine's Intel Xeon 1.13x at 4k
/// pairs, 1.00x at 16k, then 0.82x at 64k, 0.87x at 256k and 0.63-0.71x at 512k (its
/// 2,048 write streams a pass outrun that core's caches); on the 2-core machine's AMD EPYC
/// 1.2-1.4x from 16k to 512k. So only up to 16k, where neither loses.
pub(super) const WIDE_MAX: usize = size(1 << 14);

#[cfg(test)]
thread_local! {
    /// Sorts [`Wide::sort`] ran on this thread (tests: the sort took this path).
    pub(super) static SORTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Scratch for [`Wide::sort`]: two packed arrays and the digits' histograms, kept by the sorter.
#[derive(Debug, Default)]
pub(super) struct Wide {
    packed: Vec<[u64; 2]>,
    hist: Vec<[u32; BUCKETS]>,
}

/// The shifts of the 11-bit digits that cover the set bits of `varying`, lowest first:
/// each digit starts at the lowest varying bit its predecessors left uncovered, so bits
/// that never vary between digits cost no pass.
pub(super) fn digits(varying: u64) -> ([u32; MAX_DIGITS], usize) {
    let mut shifts = [0; MAX_DIGITS];
    let mut count = 0;
    let mut rest = varying;
    while rest != 0 {
        let lo = rest.trailing_zeros();
        shifts[count] = lo;
        count += 1;
        rest &= !bits_below((lo + WIDTH).min(64));
    }
    (shifts, count)
}

#[inline(always)]
fn bucket(k: u64, shift: u32) -> usize {
    ((k >> shift) as usize) & (BUCKETS - 1)
}

/// Each bucket's first index: the exclusive prefix sum of `hist`.
#[inline]
fn starts<const R: usize>(hist: &[u32; R]) -> [u32; R] {
    let mut offs = [0u32; R];
    let mut sum = 0;
    for (o, &c) in offs.iter_mut().zip(hist) {
        *o = sum;
        sum += c;
    }
    offs
}

/// Counts the digits at `shifts` of every key into `hist` (zeroed first), in one pass.
fn count<const N: usize>(keys: &[u64], shifts: &[u32], hist: &mut [[u32; BUCKETS]]) {
    let (shifts, hist) = (&shifts[..N], &mut hist[..N]);
    hist.iter_mut().for_each(|h| h.fill(0));
    for &k in keys {
        for (h, &s) in hist.iter_mut().zip(shifts) {
            h[bucket(k, s)] += 1;
        }
    }
}

impl Wide {
    /// Sorts `keys`/`vals` (stable: equal keys keep their input order) on the bits of
    /// `varying`, the bits in which the keys differ (AND and OR of all keys, XORed).
    /// Returns the passes that moved pairs.
    pub(super) fn sort(&mut self, keys: &mut [u64], vals: &mut [u32], varying: u64) -> u32 {
        let n = keys.len();
        assert_eq!(n, vals.len(), "keys and values differ in length");
        assert!(n <= u32::MAX as usize, "more pairs than the u32 histograms count");
        #[cfg(test)]
        SORTS.with(|c| c.set(c.get() + 1));
        let (shifts, count_of) = digits(varying);
        if n < 2 || count_of == 0 {
            return 0;
        }
        self.hist.resize(MAX_DIGITS, [0; BUCKETS]);
        match count_of {
            1 => count::<1>(keys, &shifts, &mut self.hist),
            2 => count::<2>(keys, &shifts, &mut self.hist),
            3 => count::<3>(keys, &shifts, &mut self.hist),
            4 => count::<4>(keys, &shifts, &mut self.hist),
            5 => count::<5>(keys, &shifts, &mut self.hist),
            _ => count::<MAX_DIGITS>(keys, &shifts, &mut self.hist),
        }
        // Digits every key shares move nothing.
        let mut live = [0usize; MAX_DIGITS];
        let mut passes = 0;
        for d in 0..count_of {
            if !self.hist[d].iter().any(|&c| c as usize == n) {
                live[passes] = d;
                passes += 1;
            }
        }
        if passes == 0 {
            return 0;
        }
        crate::par::set_len(&mut self.packed, 2 * n);
        let (a, b) = self.packed.split_at_mut(n);
        let hist = &self.hist;
        let shift = |p: usize| shifts[live[p]];
        // SAFETY: `hist[d]` counts digit `d` over the keys (the same multiset in every
        // array: each pass permutes it), and all the arrays hold `n` pairs.
        unsafe { split_to_packed(keys, vals, a, &hist[live[0]], shift(0), MASK) };
        if passes == 1 {
            unpack(a, keys, vals);
            return 1;
        }
        let (mut from, mut to) = (a, b);
        for p in 1..passes - 1 {
            // SAFETY: as for the first pass.
            unsafe { packed_to_packed(from, to, &hist[live[p]], shift(p), MASK) };
            std::mem::swap(&mut from, &mut to);
        }
        // SAFETY: as for the first pass.
        unsafe { packed_to_split(from, keys, vals, &hist[live[passes - 1]], shift(passes - 1), MASK) };
        passes as u32
    }
}

/// Copies packed pairs back into the caller's arrays.
fn unpack(from: &[[u64; 2]], keys: &mut [u64], vals: &mut [u32]) {
    for ((k, v), p) in keys.iter_mut().zip(vals.iter_mut()).zip(from) {
        *k = p[0];
        *v = p[1] as u32;
    }
}

/// Scatters the pairs of `keys`/`vals` into `to`, packed, on the digit
/// `(key >> shift) & mask` (`R` a power of two, `mask` below it).
///
/// # Safety
/// `hist` counts that digit over `keys`; `vals` and `to` are as long as `keys`.
pub(super) unsafe fn split_to_packed<const R: usize>(
    keys: &[u64],
    vals: &[u32],
    to: &mut [[u64; 2]],
    hist: &[u32; R],
    shift: u32,
    mask: u64,
) {
    debug_assert!(vals.len() == keys.len() && to.len() == keys.len());
    debug_assert!(R.is_power_of_two() && mask < R as u64);
    let mut offs = starts(hist);
    let out = to.as_mut_ptr();
    for (&k, &v) in keys.iter().zip(vals) {
        let r = ((k >> shift) & mask) as usize & (R - 1);
        let o = offs[r] as usize;
        debug_assert!(o < keys.len());
        // SAFETY: the caller's promise: bucket `r` owns `starts[r]..` for `hist[r]` pairs,
        // so `o < n` and no index is written twice.
        unsafe { *out.add(o) = [k, u64::from(v)] };
        offs[r] += 1;
    }
}

/// Scatters packed pairs from `from` into `to` on the digit `(key >> shift) & mask` (`R` a
/// power of two, `mask` below it).
///
/// # Safety
/// `hist` counts that digit over `from`'s keys; `to` is as long as `from`.
pub(super) unsafe fn packed_to_packed<const R: usize>(
    from: &[[u64; 2]],
    to: &mut [[u64; 2]],
    hist: &[u32; R],
    shift: u32,
    mask: u64,
) {
    debug_assert_eq!(from.len(), to.len());
    debug_assert!(R.is_power_of_two() && mask < R as u64);
    let mut offs = starts(hist);
    let out = to.as_mut_ptr();
    for &p in from {
        let r = ((p[0] >> shift) & mask) as usize & (R - 1);
        let o = offs[r] as usize;
        debug_assert!(o < from.len());
        // SAFETY: as in `split_to_packed`.
        unsafe { *out.add(o) = p };
        offs[r] += 1;
    }
}

/// Scatters packed pairs from `from` into `keys`/`vals` on the digit
/// `(key >> shift) & mask` (`R` a power of two, `mask` below it).
///
/// # Safety
/// `hist` counts that digit over `from`'s keys; `keys` and `vals` are as long as `from`.
pub(super) unsafe fn packed_to_split<const R: usize>(
    from: &[[u64; 2]],
    keys: &mut [u64],
    vals: &mut [u32],
    hist: &[u32; R],
    shift: u32,
    mask: u64,
) {
    debug_assert!(keys.len() == from.len() && vals.len() == from.len());
    debug_assert!(R.is_power_of_two() && mask < R as u64);
    let mut offs = starts(hist);
    let (ok, ov) = (keys.as_mut_ptr(), vals.as_mut_ptr());
    for &p in from {
        let r = ((p[0] >> shift) & mask) as usize & (R - 1);
        let o = offs[r] as usize;
        debug_assert!(o < from.len());
        // SAFETY: as in `split_to_packed`.
        unsafe {
            *ok.add(o) = p[0];
            *ov.add(o) = p[1] as u32;
        }
        offs[r] += 1;
    }
}

thread_local! {
    /// Each thread's packed scratch for [`with_packed`] (grown to the largest use, kept: at
    /// most 2 MiB, as its callers take at most two arrays of `LSD_MAX` = `PREFIX_MAX` pairs).
    static PACKED: std::cell::Cell<Vec<[u64; 2]>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Runs `f` on packed scratch of `n` pairs (contents unspecified): this thread's, grown on
/// first use and kept for its next sort (taken out while `f` runs, so a sort nested in `f`
/// would get scratch of its own).
pub(super) fn with_packed<T>(n: usize, f: impl FnOnce(&mut [[u64; 2]]) -> T) -> T {
    let mut p = PACKED.take();
    if p.len() < n {
        p.resize(n, [0; 2]);
    }
    let out = f(&mut p[..n]);
    PACKED.set(p);
    out
}
