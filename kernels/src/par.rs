//! Small data-parallel helpers for the frame's per-item passes: no allocation, output
//! ranges fixed before any worker runs, so results do not depend on the thread count.
//!
//! **Claimed pieces, the caller never sleeps** ([`for_each_index`]). A rayon `join` whose
//! caller finishes its half first waits in rayon's idle loop, which puts the thread to sleep
//! after a few dozen empty rounds; the worker that finishes the other half must then wake
//! it, and on the 16-core machine (a Firecracker VM) a wake-up takes 60–76 µs
//! (BENCHMARKS.md, run 17): more than a piece of most stages. Here the caller forks one
//! helper per other worker, and every participant claims piece indices from a shared
//! counter; once none is left the caller spins until the claimed pieces are done, at most
//! one piece's time, and the helpers' jobs that no worker took are popped and return at
//! once. Which thread runs a piece never changes what it writes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::busy::timed;

/// The pieces of one [`for_each_index`] call.
struct Claim<'a> {
    next: AtomicUsize,
    done: AtomicUsize,
    /// A piece panicked: stop waiting (the panic reaches the caller through `join`).
    failed: AtomicBool,
    n: usize,
    f: &'a (dyn Fn(usize) + Sync),
}

/// Sets `failed` if dropped while a piece unwinds.
struct Unwinding<'a>(&'a AtomicBool);

impl Drop for Unwinding<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Claim<'_> {
    /// Runs pieces until none is left to claim.
    fn help(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.n {
                return;
            }
            let unwinding = Unwinding(&self.failed);
            timed(|| (self.f)(i));
            std::mem::forget(unwinding);
            self.done.fetch_add(1, Ordering::Release);
        }
    }

    /// Spins until every piece is done (or one panicked).
    fn wait(&self) {
        let mut spins = 0u32;
        while self.done.load(Ordering::Acquire) < self.n && !self.failed.load(Ordering::Acquire) {
            spins += 1;
            if spins < 1 << 16 {
                std::hint::spin_loop();
            } else {
                // A helper was descheduled mid-piece: let the OS run it.
                std::thread::yield_now();
            }
        }
    }

    /// Forks `helpers` helpers, then helps and waits.
    fn fork(&self, helpers: usize) {
        if helpers == 0 {
            self.help();
            self.wait();
        } else {
            rayon::join(|| self.fork(helpers - 1), || self.help());
        }
    }
}

/// Calls `f(i)` once for every `i` in `0..n`, in parallel on the current pool (each call a
/// busy region), and returns when all are done; see the module's note on why the caller
/// claims pieces and spins instead of sleeping. A panic in `f` reaches the caller.
pub fn for_each_index(n: usize, f: &(dyn Fn(usize) + Sync)) {
    let helpers = rayon::current_num_threads().min(n).saturating_sub(1);
    if helpers == 0 {
        (0..n).for_each(|i| timed(|| f(i)));
        return;
    }
    let claim = Claim { next: AtomicUsize::new(0), done: AtomicUsize::new(0), failed: AtomicBool::new(false), n, f };
    claim.fork(helpers);
}

/// Items per parallel block.
pub const BLOCK: usize = 16 * 1024;

/// Resizes `v` to `n` without writing the part it already has (in steady state a frame's
/// sizes change little, so this rarely writes at all). A growth of a block or more is
/// written in parallel blocks: the first touch of fresh pages (a sorter's scratch for 10M
/// pairs is 120 MB) is then spread over the pool instead of running on one thread.
pub fn set_len<T: Copy + Default + Send + Sync>(v: &mut Vec<T>, n: usize) {
    let grow = n.saturating_sub(v.len());
    if grow >= BLOCK {
        v.par_extend(rayon::iter::repeat_n(T::default(), grow).with_min_len(BLOCK));
    } else {
        v.resize(n, T::default());
    }
}

/// `dst = src`, copied in parallel blocks.
pub fn copy<T: Copy + Default + Send + Sync>(dst: &mut Vec<T>, src: &[T]) {
    set_len(dst, src.len());
    copy_into(dst, src);
}

/// `dst = src` (equal lengths), copied in parallel blocks.
pub fn copy_into<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "copy between slices of different lengths");
    fill_blocks(BLOCK, dst, &|i, d: &mut [T]| d.copy_from_slice(&src[i * BLOCK..i * BLOCK + d.len()]));
}

/// Output that parts into independent ranges: a mutable slice, a tuple of them parted
/// alike (several arrays written at the same positions), or a slice whose ranges are
/// [`Scaled`].
pub trait SplitAt: Send + Sized {
    /// The output's raw parts, shared by the pieces.
    type Raw: Copy + Send + Sync;
    /// Gives up the output for its raw parts and its length (in positions).
    fn into_raw(self) -> (Self::Raw, usize);
    /// Positions `start..end` of the output `raw` came from.
    ///
    /// # Safety
    /// `start <= end <= ` the length [`SplitAt::into_raw`] returned; the output must
    /// outlive the result; ranges in use at the same time must not overlap.
    unsafe fn range(raw: Self::Raw, start: usize, end: usize) -> Self;
}

/// A mutable slice's pointer, shared by pieces that write disjoint ranges of it.
#[derive(Debug)]
pub struct RawSlice<T>(*mut T);

impl<T> Clone for RawSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RawSlice<T> {}

// SAFETY: only `SplitAt::range` dereferences it, for ranges that do not overlap while in
// use (its contract), so sending or sharing it is sending parts of a `&mut [T]`.
unsafe impl<T: Send> Send for RawSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for RawSlice<T> {}

impl<'a, T: Send> SplitAt for &'a mut [T] {
    type Raw = RawSlice<T>;
    fn into_raw(self) -> (Self::Raw, usize) {
        (RawSlice(self.as_mut_ptr()), self.len())
    }
    unsafe fn range(raw: Self::Raw, start: usize, end: usize) -> Self {
        // SAFETY: the caller keeps `start <= end <= len` within the live slice and
        // overlapping ranges apart.
        unsafe { std::slice::from_raw_parts_mut::<'a, T>(raw.0.add(start), end - start) }
    }
}

/// A slice whose range `a..b` is its elements `a * by..b * by`, the last range cut at the
/// slice's end (a part's words of a bit set beside the part itself, say).
#[derive(Debug)]
pub struct Scaled<S>(pub S, pub usize);

impl<T: Send> SplitAt for Scaled<&mut [T]> {
    /// The pointer, `by` and the slice's length in elements.
    type Raw = (RawSlice<T>, usize, usize);
    fn into_raw(self) -> (Self::Raw, usize) {
        let (len, by) = (self.0.len(), self.1.max(1));
        ((RawSlice(self.0.as_mut_ptr()), by, len), len.div_ceil(by))
    }
    unsafe fn range(raw: Self::Raw, start: usize, end: usize) -> Self {
        let (by, len) = (raw.1, raw.2);
        // SAFETY: as for slices, in units of `by` elements: `end <= len.div_ceil(by)`, so
        // the cut range lies in the slice, and disjoint unit ranges stay disjoint.
        Scaled(unsafe { <&mut [T]>::range(raw.0, (start * by).min(len), (end * by).min(len)) }, by)
    }
}

/// A slice whose range `a..b` is its elements `offsets[a]..offsets[b]`: pieces that write
/// ranges of unequal lengths beside outputs parted otherwise (a window of batches beside
/// the items those batches hold, say). The offsets must not decrease and must end within
/// the slice (checked: a violation panics, it never aliases).
#[derive(Debug)]
pub struct Parted<'o, S>(pub S, pub &'o [usize]);

impl<'o, T: Send> SplitAt for Parted<'o, &mut [T]> {
    /// The pointer and the offsets.
    type Raw = (RawSlice<T>, &'o [usize]);
    fn into_raw(self) -> (Self::Raw, usize) {
        let (slice, offsets) = (self.0, self.1);
        assert!(
            offsets.windows(2).all(|w| w[0] <= w[1]) && offsets.last().is_none_or(|&e| e <= slice.len()),
            "offsets decrease or leave the slice"
        );
        ((RawSlice(slice.as_mut_ptr()), offsets), offsets.len().saturating_sub(1))
    }
    unsafe fn range(raw: Self::Raw, start: usize, end: usize) -> Self {
        let offsets = raw.1;
        // SAFETY: `end < offsets.len()` (the caller's contract with the length above); the
        // offsets ascend and end within the slice (checked in `into_raw`), so the element
        // range lies in it and disjoint unit ranges stay disjoint.
        Parted(unsafe { <&mut [T]>::range(raw.0, offsets[start], offsets[end]) }, offsets)
    }
}

impl<A: SplitAt, B: SplitAt> SplitAt for (A, B) {
    type Raw = (A::Raw, B::Raw);
    fn into_raw(self) -> (Self::Raw, usize) {
        let ((a, la), (b, lb)) = (self.0.into_raw(), self.1.into_raw());
        ((a, b), la.min(lb))
    }
    unsafe fn range(raw: Self::Raw, start: usize, end: usize) -> Self {
        // SAFETY: the caller's contract holds for both (the length was their shortest).
        unsafe { (A::range(raw.0, start, end), B::range(raw.1, start, end)) }
    }
}

impl<A: SplitAt, B: SplitAt, C: SplitAt> SplitAt for (A, B, C) {
    type Raw = (A::Raw, B::Raw, C::Raw);
    fn into_raw(self) -> (Self::Raw, usize) {
        let ((a, la), (b, lb), (c, lc)) = (self.0.into_raw(), self.1.into_raw(), self.2.into_raw());
        ((a, b, c), la.min(lb).min(lc))
    }
    unsafe fn range(raw: Self::Raw, start: usize, end: usize) -> Self {
        // SAFETY: the caller's contract holds for all three.
        unsafe { (A::range(raw.0, start, end), B::range(raw.1, start, end), C::range(raw.2, start, end)) }
    }
}

/// Calls `fill(i, out[bounds(i)])` for every `i` in `0..n` with [`for_each_index`], `out`
/// given as its raw parts and length; the bounds must be ascending, not overlapping, and
/// within `out` (checked: a violation panics, it never aliases).
fn fill_with<S: SplitAt>(
    n: usize,
    bounds: &(dyn Fn(usize) -> (usize, usize) + Sync),
    (raw, len): (S::Raw, usize),
    fill: &(dyn Fn(usize, S) + Sync),
) {
    let mut end = 0;
    for i in 0..n {
        let (a, b) = bounds(i);
        assert!(end <= a && a <= b && b <= len, "piece {i}'s range {a}..{b} overlaps or leaves the output");
        end = b;
    }
    for_each_index(n, &|i| {
        let (a, b) = bounds(i);
        // SAFETY: checked above: each piece's range lies in the output after the previous
        // piece's, so no two overlap; `out` was borrowed for longer than this call.
        fill(i, unsafe { S::range(raw, a, b) })
    });
}

/// Calls `fill(i, out[i * block..(i + 1) * block])` (the last block shorter) for each
/// block of `out`, in parallel.
pub fn fill_blocks<S: SplitAt>(block: usize, out: S, fill: &(dyn Fn(usize, S) + Sync)) {
    let (raw, len) = out.into_raw();
    let block = block.max(1);
    fill_with(len.div_ceil(block), &|i| (i * block, ((i + 1) * block).min(len)), (raw, len), fill);
}

/// Calls `fill(i, out[offsets[i]..offsets[i + 1]])` for every `i`, in parallel;
/// `out` starts at `offsets[0]`. Offsets must not decrease (a decreasing pair panics).
pub fn fill_ranges<S: SplitAt>(offsets: &[usize], out: S, fill: &(dyn Fn(usize, S) + Sync)) {
    let Some(&base) = offsets.first() else { return };
    fill_with(offsets.len() - 1, &|i| (offsets[i] - base, offsets[i + 1] - base), out.into_raw(), fill);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_runs_once_on_any_pool_nested_too() {
        use std::sync::atomic::AtomicU32;
        for threads in [1, 2, 3, if cfg!(miri) { 4 } else { 16 }] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for n in [0, 1, 2, 37] {
                let runs: Vec<AtomicU32> = (0..n * 3).map(|_| AtomicU32::new(0)).collect();
                // Each piece forks three more (a stage's pieces inside a job's pieces).
                pool.install(|| {
                    for_each_index(n, &|i| for_each_index(3, &|j| _ = runs[i * 3 + j].fetch_add(1, Ordering::Relaxed)))
                });
                assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1), "{threads} threads, {n} pieces");
            }
        }
    }

    #[test]
    fn a_panicking_piece_reaches_the_caller_and_the_pool_goes_on() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for bad in [0, 5, 9] {
            let caught = pool.install(|| {
                std::panic::catch_unwind(|| {
                    for_each_index(10, &|i| {
                        if i == bad {
                            panic!("piece {i}");
                        }
                    })
                })
            });
            assert!(caught.is_err(), "piece {bad}'s panic was lost");
        }
        let sum = std::sync::atomic::AtomicUsize::new(0);
        pool.install(|| for_each_index(10, &|i| _ = sum.fetch_add(i, Ordering::Relaxed)));
        assert_eq!(sum.into_inner(), 45);
    }

    #[test]
    fn scaled_outputs_keep_their_last_short_range_and_bad_offsets_panic() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        // 10 items in blocks of 4 beside 3 words in units of 1: the last block is short.
        let (mut items, mut marks) = (vec![0u8; 10], vec![0usize; 3]);
        pool.install(|| {
            fill_blocks(1, (Scaled(&mut items[..], 4), &mut marks[..]), &|b,
                                                                          (Scaled(it, _), m): (
                Scaled<&mut [u8]>,
                &mut [usize],
            )| {
                it.iter_mut().for_each(|x| *x = b as u8 + 1);
                m[0] = it.len();
            })
        });
        assert_eq!(items, vec![1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
        assert_eq!(marks, vec![4, 4, 2]);
        let mut out = [0u32; 8];
        for offsets in [&[0, 5, 3][..], &[0, 3, 9][..]] {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                fill_ranges(offsets, &mut out[..], &|_, s: &mut [u32]| s.fill(1))
            }));
            assert!(r.is_err(), "offsets {offsets:?} were accepted");
        }
        assert!(out.iter().all(|&x| x == 0), "nothing is written before the offsets are checked");
    }

    #[test]
    fn parted_outputs_take_their_offsets_beside_blocks_and_bad_offsets_panic() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        // Three blocks of 2 beside items parted 0..1, 1..1 (empty), 1..7.
        let (mut blocks, mut items) = (vec![0u8; 6], vec![0u8; 7]);
        let offsets = [0, 1, 1, 7];
        pool.install(|| {
            let parts = (Scaled(&mut blocks[..], 2), Parted(&mut items[..], &offsets));
            fill_blocks(1, parts, &|b, (Scaled(bl, _), Parted(it, _)): (Scaled<&mut [u8]>, Parted<&mut [u8]>)| {
                bl.fill(b as u8 + 1);
                it.fill(b as u8 + 1);
            })
        });
        assert_eq!(blocks, vec![1, 1, 2, 2, 3, 3]);
        assert_eq!(items, vec![1, 3, 3, 3, 3, 3, 3]);
        let mut out = [0u8; 4];
        for offsets in [&[0, 3, 2][..], &[0, 2, 5][..]] {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                fill_blocks(1, Parted(&mut out[..], offsets), &|_, Parted(s, _): Parted<&mut [u8]>| s.fill(1))
            }));
            assert!(r.is_err(), "offsets {offsets:?} were accepted");
        }
        assert!(out.iter().all(|&x| x == 0), "nothing is written before the offsets are checked");
    }

    #[test]
    fn set_len_keeps_the_old_part_and_zeroes_growth_small_or_parallel() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let mut v: Vec<u16> = vec![7; 5];
        // A growth of a block or more (written in parallel), then a small one, then a cut.
        for (n, filled) in [(BLOCK + 9, 5), (BLOCK + 20, 5), (3, 3), (0, 0)] {
            pool.install(|| set_len(&mut v, n));
            assert_eq!(v.len(), n);
            assert!(v[..filled].iter().all(|&x| x == 7) && v[filled..].iter().all(|&x| x == 0));
            v.iter_mut().take(filled).for_each(|x| *x = 7);
        }
    }

    #[test]
    fn fill_ranges_covers_each_range_once() {
        let offsets = [0, 3, 3, 10, 11];
        let mut out = vec![0usize; 11];
        fill_ranges(&offsets, &mut out[..], &|i, s: &mut [usize]| s.iter_mut().for_each(|x| *x += i + 1));
        assert_eq!(out, vec![1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 4]);
        let (mut a, mut b, mut c) = (vec![0usize; 11], vec![0u8; 11], vec![0u64; 11]);
        fill_ranges(&offsets, (&mut a[..], &mut b[..], &mut c[..]), &|i,
                                                                      (a, b, c): (
            &mut [usize],
            &mut [u8],
            &mut [u64],
        )| {
            a.iter_mut().for_each(|x| *x = i);
            b.iter_mut().for_each(|x| *x = i as u8 + 1);
            c.iter_mut().for_each(|x| *x = 2 * i as u64);
        });
        assert_eq!(a, vec![0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 3]);
        assert_eq!(b, vec![1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 4]);
        assert_eq!(c, vec![0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 6]);
        let src: Vec<u32> = (0..if cfg!(miri) { 40_000 } else { 100_000 }).collect();
        let mut dst = vec![7; 5];
        copy(&mut dst, &src);
        assert_eq!(dst, src);
    }
}
