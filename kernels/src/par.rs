//! Small data-parallel helpers for the frame's per-item passes: no allocation, output
//! ranges fixed before any worker runs, so results do not depend on the thread count.

use rayon::prelude::*;

use crate::busy::timed;

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
    dst.par_chunks_mut(BLOCK).zip(src.par_chunks(BLOCK)).for_each(|(d, s)| timed(|| d.copy_from_slice(s)));
}

/// Output that splits at an index into two independent halves: a mutable slice, or a
/// tuple of them split alike (several arrays written at the same positions).
pub trait SplitAt: Send + Sized {
    /// The part before `at` and the rest.
    fn split_at(self, at: usize) -> (Self, Self);
}

impl<T: Send> SplitAt for &mut [T] {
    fn split_at(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }
}

impl<A: SplitAt, B: SplitAt> SplitAt for (A, B) {
    fn split_at(self, at: usize) -> (Self, Self) {
        let ((a0, a1), (b0, b1)) = (self.0.split_at(at), self.1.split_at(at));
        ((a0, b0), (a1, b1))
    }
}

impl<A: SplitAt, B: SplitAt, C: SplitAt> SplitAt for (A, B, C) {
    fn split_at(self, at: usize) -> (Self, Self) {
        let ((a0, a1), (b0, b1), (c0, c1)) = (self.0.split_at(at), self.1.split_at(at), self.2.split_at(at));
        ((a0, b0, c0), (a1, b1, c1))
    }
}

/// Calls `fill(i, out[offsets[i]..offsets[i + 1]])` for every `i`, in parallel (halving
/// recursively with `rayon::join`, so nothing is allocated); `out` starts at `offsets[0]`.
pub fn fill_ranges<S: SplitAt>(offsets: &[usize], out: S, fill: &(dyn Fn(usize, S) + Sync)) {
    fn go<S: SplitAt>(first: usize, offsets: &[usize], out: S, fill: &(dyn Fn(usize, S) + Sync)) {
        let n = offsets.len() - 1;
        if n == 1 {
            timed(|| fill(first, out));
            return;
        }
        let mid = n / 2;
        let (a, b) = out.split_at(offsets[mid] - offsets[0]);
        rayon::join(|| go(first, &offsets[..=mid], a, fill), || go(first + mid, &offsets[mid..], b, fill));
    }
    if offsets.len() > 1 {
        go(0, offsets, out, fill);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
