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

use crate::busy::{timed, Label};

mod claim;
pub use claim::{fill_blocks_in_order, ClaimOrder};

/// The pieces of one [`for_each_index`] call.
struct Claim<'a> {
    next: AtomicUsize,
    done: AtomicUsize,
    /// A piece panicked: stop waiting (the panic reaches the caller through `join`).
    failed: AtomicBool,
    n: usize,
    f: &'a (dyn Fn(usize) + Sync),
    /// The forking thread's label: each piece runs under it (`busy`'s note on labels).
    label: Label,
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
            self.label.run(|| (self.f)(i));
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
    // SAFETY: the label is used by the pieces only, and this call returns after every piece
    // is done (or, on a panic, after `fork`'s joins return), inside the caller's scope.
    let label = unsafe { Label::current() };
    let claim =
        Claim { next: AtomicUsize::new(0), done: AtomicUsize::new(0), failed: AtomicBool::new(false), n, f, label };
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
    if grow * size_of::<T>() >= crate::pages::HUGE_MIN {
        v.reserve_exact(grow);
        crate::pages::advise_huge_pages(v.spare_capacity_mut());
    }
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

/// Where each piece of a [`fill_chained`] call ends its output: unset, then published once.
struct Chain<'e> {
    ends: &'e [AtomicUsize],
}

/// Pieces of a [`fill_chained`] call whose ends live on the stack (more are allocated).
const CHAIN_INLINE: usize = 128;

/// Not yet published.
const UNSET: usize = usize::MAX;
/// An earlier piece failed: nothing after it is handed out.
const POISON: usize = usize::MAX - 1;

impl Chain<'_> {
    /// Where piece `i`'s output starts: 0, or where piece `i - 1`'s ends, once it is
    /// published (pieces are claimed in order, so it runs or ran on some thread). Panics
    /// if an earlier piece failed.
    fn start(&self, i: usize) -> usize {
        let Some(prev) = i.checked_sub(1).map(|p| &self.ends[p]) else { return 0 };
        let mut spins = 0u32;
        loop {
            match prev.load(Ordering::Acquire) {
                UNSET => {}
                POISON => {
                    self.ends[i].store(POISON, Ordering::Release);
                    panic!("an earlier piece of the chained fill failed");
                }
                end => return end,
            }
            spins += 1;
            if spins < 1 << 16 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Piece `i`'s one claim on the output of [`fill_chained`]: [`Take::take`] hands it the
/// next `len` positions after the pieces before it. A piece that never takes takes
/// nothing (and one that panics first stops the pieces after it).
pub struct Take<'c, S: SplitAt> {
    chain: &'c Chain<'c>,
    raw: S::Raw,
    len: usize,
    i: usize,
    taken: bool,
}

impl<S: SplitAt> std::fmt::Debug for Take<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Take").field("piece", &self.i).field("taken", &self.taken).finish_non_exhaustive()
    }
}

impl<S: SplitAt> Take<'_, S> {
    /// The output's next `len` positions, once the pieces before this one have taken
    /// theirs. Panics (stopping the pieces after it) if they would pass the output's end.
    pub fn take(self, len: usize) -> S {
        self.take_at(len).1
    }

    /// [`Take::take`], with where the positions start in the output.
    pub fn take_at(mut self, len: usize) -> (usize, S) {
        self.taken = true;
        let start = self.chain.start(self.i);
        let end = start.checked_add(len).filter(|&e| e <= self.len);
        let published = &self.chain.ends[self.i];
        let Some(end) = end else {
            published.store(POISON, Ordering::Release);
            panic!("chained pieces take more than the output holds ({start} + {len} > {})", self.len);
        };
        // SAFETY: `start` is where the previous piece's range ended (or 0), and this
        // piece's range is published only now, once: ranges follow each other without
        // overlapping, and `end` is within the output's length (checked).
        let out = unsafe { S::range(self.raw, start, end) };
        published.store(end, Ordering::Release);
        (start, out)
    }
}

impl<S: SplitAt> Drop for Take<'_, S> {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        let published = &self.chain.ends[self.i];
        if std::thread::panicking() {
            published.store(POISON, Ordering::Release);
        } else {
            let start = self.chain.start(self.i);
            published.store(start, Ordering::Release);
        }
    }
}

/// Calls `piece(i, take, &mut results[i])` for every `i` in `0..results.len()` in
/// parallel, each piece writing as many positions of `out` as it finds it needs, right
/// after the pieces before it: a piece counts what it will write, [`Take::take`]s that
/// many (waiting only for the pieces before it to have taken theirs, not written them) and
/// writes, so a fill whose sizes are known only by reading the input reads it once and
/// forks once, instead of a pass that counts, a prefix sum and a pass that writes.
/// `results[i]` is piece `i`'s own (reused scratch, or where it leaves a result). Returns
/// the positions taken in all. Which thread runs a piece never changes where it writes.
pub fn fill_chained<S: SplitAt, R: Send>(
    out: S,
    results: &mut [R],
    piece: &(dyn Fn(usize, Take<'_, S>, &mut R) + Sync),
) -> usize {
    let n = results.len();
    let (raw, len) = out.into_raw();
    // A frame's fills have a few dozen pieces: their ends on the stack, no allocation.
    let inline: [AtomicUsize; CHAIN_INLINE] = std::array::from_fn(|_| AtomicUsize::new(UNSET));
    let heap: Vec<AtomicUsize>;
    let ends = if n <= CHAIN_INLINE {
        &inline[..n]
    } else {
        heap = (0..n).map(|_| AtomicUsize::new(UNSET)).collect();
        &heap[..]
    };
    let chain = Chain { ends };
    let (res, _) = results.into_raw();
    for_each_index(n, &|i| {
        // SAFETY: piece `i` alone uses `results[i]`, within its length `n`.
        let slot = unsafe { <&mut [R]>::range(res, i, i + 1) };
        piece(i, Take { chain: &chain, raw, len, i, taken: false }, &mut slot[0]);
    });
    chain.ends.last().map_or(0, |e| e.load(Ordering::Acquire))
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
    fn chained_pieces_write_after_each_other_and_a_failing_one_stops_the_rest() {
        // Piece i writes i % 4 copies of i (none for every fourth), beside a second
        // output at the same positions, and returns how many it wrote.
        for threads in [1, 3, if cfg!(miri) { 4 } else { 16 }] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let n = if cfg!(miri) { 9 } else { 300 };
            let total: usize = (0..n).map(|i| i % 4).sum();
            let (mut a, mut b) = (vec![0usize; total + 3], vec![0u8; total + 3]);
            let mut counts = vec![0usize; n];
            let taken = pool.install(|| {
                type Out<'a> = (&'a mut [usize], &'a mut [u8]);
                fill_chained((&mut a[..], &mut b[..]), &mut counts, &|i, take: Take<'_, Out<'_>>, count| {
                    if i % 4 == 0 {
                        return; // dropped: takes nothing
                    }
                    let (x, y) = take.take(i % 4);
                    x.fill(i);
                    y.fill(i as u8);
                    *count = x.len();
                })
            });
            let expect: Vec<usize> = (0..n).flat_map(|i| std::iter::repeat_n(i, i % 4)).collect();
            assert_eq!((taken, &a[..total], &a[total..]), (total, &expect[..], &[0, 0, 0][..]), "{threads} threads");
            assert!(b[..total].iter().zip(&expect).all(|(&y, &x)| y == x as u8));
            assert_eq!(counts, (0..n).map(|i| i % 4).collect::<Vec<_>>());
            // A piece that panics before it takes, and one that takes past the end: the
            // panic reaches the caller and nothing hangs.
            for bad in [2, 5] {
                let mut out = [0u32; 8];
                let mut res = [(); 8];
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.install(|| {
                        fill_chained(&mut out[..], &mut res, &|i, take: Take<'_, &mut [u32]>, _| {
                            if i == bad && bad == 2 {
                                panic!("piece {i}");
                            }
                            take.take(if i == bad { 9 } else { 1 }).fill(1);
                        })
                    })
                }));
                assert!(r.is_err(), "piece {bad}'s failure was lost on {threads} threads");
            }
        }
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
