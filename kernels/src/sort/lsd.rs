//! The in-cache passes both radix paths share: LSD sorts of buckets that fit the caches
//! (moving pairs packed between their first and last pass), the serial scatter, and the
//! insertion sort of the smallest buckets.

use super::{digit, wide, DIGITS, RADIX};

/// Buckets this small are insertion-sorted.
pub(super) const INSERTION_MAX: usize = 24;

/// Stable insertion sort of `k`/`v` (an element moves left only past strictly larger keys).
pub(super) fn insertion_sort(k: &mut [u64], v: &mut [u32]) {
    for i in 1..k.len() {
        let (key, val) = (k[i], v[i]);
        let mut j = i;
        while j > 0 && k[j - 1] > key {
            k[j] = k[j - 1];
            v[j] = v[j - 1];
            j -= 1;
        }
        k[j] = key;
        v[j] = val;
    }
}

/// Counts digits `0..N` of every key of `k` into `h`.
#[inline(always)]
fn count_digits<const N: usize>(k: &[u64], h: &mut [[u32; RADIX]; DIGITS]) {
    for &key in k {
        for (d, h) in h.iter_mut().enumerate().take(N) {
            h[digit(key, d)] += 1;
        }
    }
}

/// Stable LSD sort of `k`/`v` over `digits` (ascending), using `tk`/`tv` as scratch;
/// digits constant in this input are skipped. The result ends in `tk`/`tv` when
/// `into_scratch`, else in `k`/`v`. With two passes or more the pairs move packed 16 bytes
/// apiece in this thread's scratch between the first pass and the last (one write stream a
/// bucket instead of two, as in `prefix_sort`), and the last pass writes where the result
/// goes.
pub(super) fn lsd(k: &mut [u64], v: &mut [u32], tk: &mut [u64], tv: &mut [u32], digits: &[usize], into_scratch: bool) {
    let n = k.len();
    let copy_out = |k: &[u64], v: &[u32], tk: &mut [u64], tv: &mut [u32]| {
        if into_scratch {
            tk.copy_from_slice(k);
            tv.copy_from_slice(v);
        }
    };
    if n < 2 || digits.is_empty() {
        return copy_out(k, v, tk, tv);
    }
    if n <= INSERTION_MAX {
        insertion_sort(k, v);
        return copy_out(k, v, tk, tv);
    }
    // The histograms of every digit up to the highest asked for, in one pass (a fixed loop
    // the compiler unrolls; digits below it not asked for are counted and left unused).
    // Render keys' buckets ask for six (2-core machine, one thread, 256k render-shaped
    // pairs: 1.05-1.08x over counting all eight; 16k and 64k level).
    let mut h = [[0u32; RADIX]; DIGITS];
    match digits[digits.len() - 1] {
        0 => count_digits::<1>(k, &mut h),
        1 => count_digits::<2>(k, &mut h),
        2 => count_digits::<3>(k, &mut h),
        3 => count_digits::<4>(k, &mut h),
        4 => count_digits::<5>(k, &mut h),
        5 => count_digits::<6>(k, &mut h),
        6 => count_digits::<7>(k, &mut h),
        _ => count_digits::<DIGITS>(k, &mut h),
    }
    // The digits that move pairs.
    let mut live = [0u32; DIGITS];
    let mut passes = 0;
    for &d in digits {
        if !h[d].iter().any(|&c| c as usize == n) {
            live[passes] = d as u32;
            passes += 1;
        }
    }
    let hist = |p: usize| &h[live[p] as usize];
    let shift = |p: usize| live[p] * 8;
    match passes {
        0 => copy_out(k, v, tk, tv),
        1 => {
            // SAFETY: `hist(0)` counts that digit over `k`; the four slices have length `n`.
            unsafe { scatter_serial(hist(0), k, v, tk, tv, shift(0), 0xff) };
            if !into_scratch {
                k.copy_from_slice(tk);
                v.copy_from_slice(tv);
            }
        }
        _ => {
            let buffers = if passes > 2 { 2 } else { 1 };
            wide::with_packed(buffers * n, |p| {
                let (mut from, mut to) = p.split_at_mut(n);
                // SAFETY: each `hist(p)` counts its digit over `k`, so over any permutation
                // of it (each pass permutes); every array here has length `n` (`to` only
                // where a middle pass uses it).
                unsafe {
                    wide::split_to_packed(k, v, from, hist(0), shift(0), 0xff);
                    for p in 1..passes - 1 {
                        wide::packed_to_packed(from, to, hist(p), shift(p), 0xff);
                        std::mem::swap(&mut from, &mut to);
                    }
                    let (ok, ov) = if into_scratch { (&mut *tk, &mut *tv) } else { (&mut *k, &mut *v) };
                    wide::packed_to_split(from, ok, ov, hist(passes - 1), shift(passes - 1), 0xff);
                }
            });
        }
    }
}

/// Each bucket's first index: the exclusive prefix sum of `hist`.
pub(super) fn bucket_starts<const R: usize>(hist: &[u32; R]) -> [usize; R] {
    let mut offs = [0usize; R];
    let mut sum = 0;
    for (o, &c) in offs.iter_mut().zip(hist) {
        *o = sum;
        sum += c as usize;
    }
    offs
}

/// Stable serial scatter of `sk`/`sv` into `dk`/`dv` on the digit `(key >> shift) & mask`
/// (`mask` below `R`, the histogram's length).
///
/// # Safety
/// `hist` must be the histogram of that digit over `sk` (bucket `r` counts the keys whose
/// digit is `r`), and `sv`, `dk`, `dv` as long as `sk`: then every write lands in
/// `0..sk.len()`. (The writes are unchecked: this loop is the sort's hot path.)
pub(super) unsafe fn scatter_serial<const R: usize>(
    hist: &[u32; R],
    sk: &[u64],
    sv: &[u32],
    dk: &mut [u64],
    dv: &mut [u32],
    shift: u32,
    mask: u64,
) {
    debug_assert!(mask < R as u64);
    let n = sk.len();
    assert!(sv.len() == n && dk.len() == n && dv.len() == n, "scatter source and destination lengths differ");
    let mut offs = bucket_starts(hist);
    debug_assert_eq!(offs[R - 1] + hist[R - 1] as usize, n, "the histogram counts every key");
    // SAFETY: bucket `b`'s offsets run from its exclusive prefix sum over `hist` for as
    // many keys as `hist[b]` counts (the caller's promise), so each index is below `n` =
    // `dk.len()` = `dv.len()` (asserted) and written once.
    unsafe { scatter_plain(&mut offs, sk, sv, dk.as_mut_ptr(), dv.as_mut_ptr(), shift, mask) };
}

/// Stores each pair of `sk`/`sv` at `pk`/`pv` plus its bucket's offset in `offs` (then
/// advanced), bucket `(key >> shift) & mask`: the plain scatter loop of
/// [`scatter_serial`] and of the streamed split's plain stretches (module `stream`).
///
/// # Safety
/// Every index a pair takes (its bucket's offset, advanced one a pair) valid for writes at
/// `pk` and `pv`, written by no one else during the call, and taken once; `mask < R`.
pub(super) unsafe fn scatter_plain<const R: usize>(
    offs: &mut [usize; R],
    sk: &[u64],
    sv: &[u32],
    pk: *mut u64,
    pv: *mut u32,
    shift: u32,
    mask: u64,
) {
    // The offsets in a local array (registers and the stack, not the caller's memory).
    let mut local = *offs;
    for (&k, &v) in sk.iter().zip(sv) {
        let b = ((k >> shift) & mask) as usize;
        let o = local[b];
        // SAFETY: the caller's promise.
        unsafe {
            *pk.add(o) = k;
            *pv.add(o) = v;
        }
        local[b] = o + 1;
    }
    *offs = local;
}
