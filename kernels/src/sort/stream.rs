//! The top split of a sort of millions of pairs, with its writes streamed past the caches
//! on hosts where that is faster.
//!
//! An 8-bit split of millions of pairs writes 512 streams (the keys and the values of 256
//! buckets) into scratch that is not in the caches. Each plain store first reads its line
//! from memory; streaming stores of whole lines, gathered per bucket in line buffers, do
//! not. Which is faster depends on the host (RUNS.md runs 88-89, 10M uniform pairs, one
//! thread): on the 16-core H100 host's Xeon the split took 74 ms streamed against 125
//! plain (huge pages did not help: 113), on the 2-core machine's EPYC 61 against 36. Both
//! write the same output, so the split runs in chunks, times the first chunks of each
//! kind, and finishes with the faster: the choice never changes the result. The whole
//! one-thread sort of 10M uniform pairs on the Xeon: 266 ms against 334 with plain stores
//! (run 90, same binary); render-shaped pairs level (476 against 474); on the EPYC level.
//! A parallel split times its stores in each block (two blocks a worker).

use std::time::Instant;

use super::{size, RADIX};

/// Fewest pairs whose top split times streamed stores against plain ones (48 MB of keys
/// and values: past the caches of both measured hosts' cores).
pub(super) const STREAM_MIN: usize = size(1 << 22);
/// Most pairs per timed chunk.
const CHUNK: usize = size(1 << 15);
/// Chunks of each kind timed before the choice (the fastest of each counts: one chunk
/// slowed by an interrupt once misled a choice of two on the 2-core machine).
const PROBES: usize = 3;

/// How a split stores its pairs (`Plain` and `Streamed` only in tests).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stores {
    /// Times the first chunks of each kind, then takes the faster for the rest.
    Timed,
    /// Plain stores of each pair.
    Plain,
    /// Whole lines gathered per bucket and streamed.
    Streamed,
    /// Chunks alternate between the two (tests and miri: both kinds and the switches
    /// between them run, whatever the timings).
    Alternate,
}

impl Stores {
    /// What the sort uses: timed, alternating under test and miri.
    pub(super) const DEFAULT: Stores = if cfg!(any(test, miri)) { Stores::Alternate } else { Stores::Timed };
}

/// Keys per cache line.
const KEYS: usize = 8;
/// Values per cache line.
const VALS: usize = 16;

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct KeyLine([u64; KEYS]);

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct ValLine([u32; VALS]);

/// Per-bucket line buffers and where each bucket's streamed stretch began.
struct Lines {
    keys: [KeyLine; RADIX],
    vals: [ValLine; RADIX],
    /// First index of each bucket written since the split last turned to streaming: a
    /// line starting before it holds pairs stored plainly (or another bucket's), so it
    /// is written slot by slot instead of streamed.
    from: [usize; RADIX],
    /// Slot of index 0 in its line: `dk`'s and `dv`'s start need not be line-aligned.
    key_skew: usize,
    val_skew: usize,
}

/// Stable scatter of `sk`/`sv` into `dk`/`dv` on `(k >> shift) & mask`, as
/// `lsd::scatter_serial`, with the stores chosen by `stores`.
///
/// # Safety
/// As `lsd::scatter_serial`: `hist` must be the histogram of that digit over `sk`, and
/// `sv`, `dk`, `dv` as long as `sk`; `mask < RADIX`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatter(
    hist: &[u32; RADIX],
    sk: &[u64],
    sv: &[u32],
    dk: &mut [u64],
    dv: &mut [u32],
    shift: u32,
    mask: u64,
    stores: Stores,
) {
    let n = sk.len();
    assert!(sv.len() == n && dk.len() == n && dv.len() == n, "scatter source and destination lengths differ");
    assert!(mask < RADIX as u64, "a digit of at most 8 bits");
    let mut offs = super::lsd::bucket_starts(hist);
    debug_assert_eq!(offs[RADIX - 1] + hist[RADIX - 1] as usize, n, "the histogram counts every key");
    // SAFETY: the caller's promise: each bucket's indexes, from its exclusive prefix sum
    // for as many pairs as `hist` counts, lie below `n` and are written once.
    unsafe { scatter_at(&mut offs, sk, sv, dk.as_mut_ptr(), dv.as_mut_ptr(), shift, mask, stores) };
}

/// Stores each pair of `sk`/`sv` at `pk`/`pv` plus its bucket's offset in `offs` (then
/// advanced), bucket `(k >> shift) & mask`, with the stores chosen by `stores`: one block
/// of a parallel scatter, or a whole serial one.
///
/// # Safety
/// Every index a pair takes (its bucket's offset, advanced one a pair) must be valid for
/// writes at `pk` and `pv`, written by no one else during this call, and taken once;
/// `mask < RADIX`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatter_at(
    offs: &mut [usize; RADIX],
    sk: &[u64],
    sv: &[u32],
    pk: *mut u64,
    pv: *mut u32,
    shift: u32,
    mask: u64,
    stores: Stores,
) {
    let n = sk.len();
    debug_assert!(sv.len() == n && mask < RADIX as u64);
    // 33 KB on the stack: the lines a streamed stretch fills.
    let mut lines = Lines {
        keys: [KeyLine([0; KEYS]); RADIX],
        vals: [ValLine([0; VALS]); RADIX],
        from: [0; RADIX],
        key_skew: (pk as usize / size_of::<u64>()) % KEYS,
        val_skew: (pv as usize / size_of::<u32>()) % VALS,
    };
    let (mut plain_best, mut streamed_best) = (f64::MAX, f64::MAX);
    // The probes take at most a quarter of a parallel scatter's block.
    let chunk_len = CHUNK.min(n.div_ceil(8 * PROBES)).max(1);
    let mut streaming = false;
    let mut at = 0;
    let mut chunk = 0;
    while at < n {
        let probing = stores == Stores::Timed && chunk < 2 * PROBES;
        let streamed = match stores {
            Stores::Plain => false,
            Stores::Streamed => true,
            Stores::Alternate => chunk % 2 == 1,
            Stores::Timed if probing => chunk % 2 == 1,
            Stores::Timed => streamed_best < plain_best,
        };
        // After the probes (or with one kind throughout) the rest is one chunk.
        let len = if probing || stores == Stores::Alternate { chunk_len.min(n - at) } else { n - at };
        if streamed && !streaming {
            lines.from = *offs;
        } else if !streamed && streaming {
            // SAFETY: the buffered slots are indexes the caller gave these buckets.
            unsafe { flush_partial(&lines, offs, pk, pv) };
        }
        streaming = streamed;
        let (ck, cv) = (&sk[at..at + len], &sv[at..at + len]);
        let start = probing.then(Instant::now);
        // SAFETY: the caller's promise: every index written is one it gave the pair's
        // bucket, valid and written once.
        unsafe {
            if streamed {
                streamed_chunk(ck, cv, pk, pv, offs, &mut lines, shift, mask);
            } else {
                super::lsd::scatter_plain(offs, ck, cv, pk, pv, shift, mask);
            }
        }
        if let Some(start) = start {
            let t = start.elapsed().as_secs_f64();
            let best = if streamed { &mut streamed_best } else { &mut plain_best };
            *best = best.min(t);
        }
        at += len;
        chunk += 1;
    }
    if streaming {
        // SAFETY: as above.
        unsafe { flush_partial(&lines, offs, pk, pv) };
    }
}

/// Each pair into its bucket's line buffers; a full line is streamed when it lies in the
/// bucket's streamed stretch, else written slot by slot.
///
/// # Safety
/// As [`scatter_at`].
#[allow(clippy::too_many_arguments)]
unsafe fn streamed_chunk(
    ck: &[u64],
    cv: &[u32],
    pk: *mut u64,
    pv: *mut u32,
    offs: &mut [usize; RADIX],
    lines: &mut Lines,
    shift: u32,
    mask: u64,
) {
    let (ks, vs) = (lines.key_skew, lines.val_skew);
    for (&k, &v) in ck.iter().zip(cv) {
        let b = ((k >> shift) & mask) as usize;
        let o = offs[b];
        let (kslot, vslot) = ((o + ks) % KEYS, (o + vs) % VALS);
        lines.keys[b].0[kslot] = k;
        lines.vals[b].0[vslot] = v;
        // SAFETY: index `o` is bucket `b`'s (the caller's promise), and so is every index
        // of its stretch from `from[b]` to `o`.
        unsafe {
            if kslot == KEYS - 1 {
                line_filled(pk, &lines.keys[b].0, o, ks, lines.from[b]);
            }
            if vslot == VALS - 1 {
                line_filled(pv, &lines.vals[b].0, o, vs, lines.from[b]);
            }
        }
        offs[b] = o + 1;
    }
}

/// Writes each bucket's buffered pairs of its last, partly filled lines (slot by slot),
/// then orders the streamed stores before any later access.
///
/// # Safety
/// As [`scatter_at`]: `offs` are the buckets' next indexes after a streamed stretch.
unsafe fn flush_partial(lines: &Lines, offs: &[usize; RADIX], pk: *mut u64, pv: *mut u32) {
    let (ks, vs) = (lines.key_skew, lines.val_skew);
    let buffered = lines.keys.iter().zip(&lines.vals).zip(lines.from.iter().zip(offs));
    for ((keys, vals), (&from, &end)) in buffered {
        // SAFETY: `from..end` are the bucket's indexes stored since the stretch began.
        unsafe {
            line_partial(pk, &keys.0, end, ks, from);
            line_partial(pv, &vals.0, end, vs, from);
        }
    }
    fence();
}

/// Writes the line of a bucket's buffer (of `L` slots, the one at `p.add(i)` in slot
/// `(i + skew) % L`) whose last slot index `o` has just filled: streamed when the whole
/// line lies in the bucket's streamed stretch (indexes from `from` on), else slot by slot
/// from `from`.
///
/// # Safety
/// Indexes `from..=o` valid for writes at `p` and the bucket's to write; `from <= o`; `o`
/// in the last slot (`(o + skew) % L == L - 1`); `[T; L]` one 64-byte line.
#[inline(always)]
unsafe fn line_filled<T: Copy, const L: usize>(p: *mut T, line: &[T; L], o: usize, skew: usize, from: usize) {
    debug_assert!(size_of::<[T; L]>() == 64 && (o + skew) % L == L - 1 && from <= o);
    // SAFETY: a first index at or after `from` starts a whole line of the bucket's
    // (its slot is 0, so `p.add(first)` is 64-byte aligned); otherwise only `from..=o`.
    unsafe {
        if let Some(first) = (o + 1).checked_sub(L).filter(|&f| f >= from) {
            stream_line(p.add(first).cast(), line.as_ptr().cast());
        } else {
            for i in from..=o {
                *p.add(i) = line[(i + skew) % L];
            }
        }
    }
}

/// Writes, slot by slot, the buffered indexes of a bucket's last, partly filled line:
/// those of its stretch (from `from` on) below `end`, in the line `end` would fill.
///
/// # Safety
/// Indexes `from..end` valid for writes at `p` and the bucket's to write.
#[inline(always)]
unsafe fn line_partial<T: Copy, const L: usize>(p: *mut T, line: &[T; L], end: usize, skew: usize, from: usize) {
    for i in from.max(end.saturating_sub((end + skew) % L))..end {
        // SAFETY: `i` in `from..end` (the caller's promise).
        unsafe { *p.add(i) = line[(i + skew) % L] };
    }
}

/// Copies one 64-byte line from `src` to `dst`, past the caches where the target can.
///
/// # Safety
/// Both valid for 64 bytes, 64-byte aligned, not overlapping.
#[inline(always)]
unsafe fn stream_line(dst: *mut u8, src: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: SSE2 is part of x86_64; the caller's promise covers the addresses.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
        for j in 0..4 {
            let x = _mm_load_si128(src.add(16 * j).cast::<__m128i>());
            _mm_stream_si128(dst.add(16 * j).cast::<__m128i>(), x);
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    // SAFETY: the caller's promise.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, 64)
    };
}

/// Orders streaming stores before the stores and loads after it (they are weakly ordered).
fn fence() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: SSE is part of x86_64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of storing, against plain stores, on misaligned destinations and sizes
    /// that end mid-line and mid-chunk, with empty and one-pair buckets.
    #[test]
    fn streamed_splits_match_plain_ones() {
        let n = if cfg!(miri) { 3 * CHUNK + 37 } else { 5 * CHUNK + 37 };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let keys: Vec<u64> = (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Skewed: bucket 3 takes every fourth pair, bucket 200 one pair.
                match i % 4 {
                    0 => (3 << 56) | (state >> 8),
                    _ if i == 11 => 200 << 56,
                    _ => state & !(200 << 56) | (1 << 56),
                }
            })
            .collect();
        let vals: Vec<u32> = (0..n as u32).collect();
        let shift = 56;
        let mut hist = [0u32; RADIX];
        keys.iter().for_each(|&k| hist[(k >> shift) as usize] += 1);
        assert!(hist.contains(&0) && hist.contains(&1));
        let run = |stores: Stores, skew: usize| {
            let mut dk = vec![0u64; n + skew];
            let mut dv = vec![0u32; n + skew];
            let (tk, tv) = (&mut dk[skew..], &mut dv[skew..]);
            // SAFETY: `hist` is the histogram of the top 8 bits over `keys`.
            unsafe { scatter(&hist, &keys, &vals, tk, tv, shift, 0xff, stores) };
            (tk.to_vec(), tv.to_vec())
        };
        let expected = run(Stores::Plain, 0);
        assert!(expected.0.windows(2).all(|w| w[0] >> shift <= w[1] >> shift));
        for stores in [Stores::Streamed, Stores::Alternate, Stores::Timed] {
            for skew in [0, 1, 3, 7] {
                assert!(run(stores, skew) == expected, "{stores:?} with the destinations {skew} pairs off a line");
            }
        }
        // Three blocks, as a parallel scatter runs them (here one after another): each
        // bucket's run of a block starts after the same bucket's runs of earlier blocks,
        // so lines are shared between blocks as well as between buckets.
        let bounds = [0, n / 3 + 5, 2 * n / 3 - 9, n];
        let mut block_offs = vec![[0usize; RADIX]; 3];
        let mut sum = 0;
        for r in 0..RADIX {
            for (b, offs) in block_offs.iter_mut().enumerate() {
                offs[r] = sum;
                sum += keys[bounds[b]..bounds[b + 1]].iter().filter(|&&k| (k >> shift) as usize == r).count();
            }
        }
        for stores in [Stores::Plain, Stores::Streamed, Stores::Alternate, Stores::Timed] {
            let (mut dk, mut dv) = (vec![0u64; n + 1], vec![0u32; n + 1]);
            let (pk, pv) = (dk[1..].as_mut_ptr(), dv[1..].as_mut_ptr());
            for (b, offs) in block_offs.iter().enumerate() {
                let r = bounds[b]..bounds[b + 1];
                let mut offs = *offs;
                // SAFETY: each (block, bucket) owns the indexes from its prefix sum on.
                unsafe { scatter_at(&mut offs, &keys[r.clone()], &vals[r], pk, pv, shift, 0xff, stores) };
            }
            assert!((dk[1..].to_vec(), dv[1..].to_vec()) == expected, "{stores:?} in three blocks");
        }
    }

    /// Sorts at the streamed split's threshold ±1 on one thread and in parallel (their
    /// chunks alternate between the two kinds of stores under test), against
    /// `sort_by_key`: uniform keys and keys whose top digit takes a few values, one
    /// bucket holding most pairs.
    #[test]
    #[cfg_attr(miri, ignore = "millions of pairs: the split itself is checked above")]
    fn sorts_at_the_threshold_match_a_stable_sort() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut sorter = crate::sort::RadixSorter::new();
        let pools = [1, 3].map(|t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap());
        for n in [STREAM_MIN - 1, STREAM_MIN, STREAM_MIN + 1] {
            let uniform: Vec<u64> = (0..n).map(|_| next()).collect();
            let skewed: Vec<u64> =
                (0..n).map(|i| if i % 8 == 0 { next() } else { (next() >> 40) | (5 << 56) }).collect();
            for (name, keys) in [("uniform", uniform), ("skewed", skewed)] {
                let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
                expect.sort_by_key(|p| p.0);
                for pool in &pools {
                    let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
                    pool.install(|| sorter.sort(&mut k, &mut v));
                    let sorted = expect.iter().map(|p| p.0).eq(k) && expect.iter().map(|p| p.1).eq(v);
                    assert!(sorted, "{name}, {n} pairs, {} threads", pool.current_num_threads());
                }
            }
        }
    }
}
