//! The full radix sort: one MSD scatter on the highest varying digit, then an LSD sort of
//! each bucket on its remaining digits; the scatter primitives both paths share.

use rayon::prelude::*;

use super::{block_len, digit, survey, BLOCK, DIGITS, RADIX, SPLIT_BLOCKS};

/// A pointer that workers write through at disjoint indices.
#[derive(Clone, Copy)]
struct Scatter<T>(*mut T);
// SAFETY: workers only write through it at indices no other worker writes (see `scatter_parallel`).
unsafe impl<T: Send> Send for Scatter<T> {}
// SAFETY: as above; the pointer is never read through concurrently.
unsafe impl<T: Send> Sync for Scatter<T> {}

/// Buckets this small are insertion-sorted: a digit pass costs two 256-entry loops.
const INSERTION_MAX: usize = 24;

/// Stable insertion sort of `k`/`v` (an element moves left only past strictly larger keys).
fn insertion_sort(k: &mut [u64], v: &mut [u32]) {
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

/// Stable LSD sort of `k`/`v` over `digits` (ascending), using `tk`/`tv` as scratch;
/// digits constant in this input are skipped. Returns `true` when the result ended in
/// the scratch arrays, `false` when it is in `k`/`v`.
pub(super) fn lsd(k: &mut [u64], v: &mut [u32], tk: &mut [u64], tv: &mut [u32], digits: &[usize]) -> bool {
    let n = k.len();
    if n < 2 || digits.is_empty() {
        return false;
    }
    if n <= INSERTION_MAX {
        insertion_sort(k, v);
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
pub(super) fn finish_buckets(
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

pub(super) fn scatter_serial(hist: &[u32; RADIX], sk: &[u64], sv: &[u32], dk: &mut [u64], dv: &mut [u32], d: usize) {
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
pub(super) fn scatter_parallel(
    hist: &mut [[u32; RADIX]],
    block: usize,
    sk: &[u64],
    sv: &[u32],
    dk: &mut [u64],
    dv: &mut [u32],
    d: usize,
) -> [usize; RADIX + 1] {
    let n = sk.len();
    // The writes below rely on these (SAFETY 1 and 2): checked once per call, not per pair.
    assert!(sv.len() == n && dk.len() == n && dv.len() == n, "scatter source and destination lengths differ");
    assert!(n <= u32::MAX as usize, "more pairs than the u32 histograms count");
    assert_eq!(hist.len(), n.div_ceil(block), "one histogram per block");
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
