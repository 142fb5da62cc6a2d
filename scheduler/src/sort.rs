//! Parallel LSD radix sort over (u64 key, u32 value) pairs.
//!
//! Eight 8-bit digits. One read pass computes all eight histograms; a digit whose
//! histogram puts every key in one bucket is skipped (render keys have few distinct high
//! bits, and a frame's depth bits are often constant in a bucket). Each remaining digit is
//! a counting pass per block and a scatter pass; blocks are contiguous ranges of the input
//! and write to disjoint, precomputed output ranges, so the sort is stable and its result
//! does not depend on the number of threads.

use rayon::prelude::*;

const RADIX: usize = 256;
const DIGITS: usize = 8;
/// Below this many pairs one thread sorts.
const PARALLEL_MIN: usize = 1 << 15;
/// Pairs per block in the parallel passes.
const BLOCK: usize = 1 << 14;

/// Reusable scratch memory for [`RadixSorter::sort`].
#[derive(Debug, Default)]
pub struct RadixSorter {
    keys: Vec<u64>,
    vals: Vec<u32>,
    hist: Vec<[u32; RADIX]>,
    /// Digit passes run by the last sort (for stats and tests).
    pub last_passes: u32,
}

#[inline]
fn digit(k: u64, d: usize) -> usize {
    ((k >> (d * 8)) & 0xff) as usize
}

/// A pointer that workers write through at disjoint indices.
#[derive(Clone, Copy)]
struct Scatter<T>(*mut T);
// SAFETY: workers only write through it at indices no other worker writes (see `scatter`).
unsafe impl<T: Send> Send for Scatter<T> {}
// SAFETY: as above; the pointer is never read through concurrently.
unsafe impl<T: Send> Sync for Scatter<T> {}

impl RadixSorter {
    /// A sorter with no scratch memory yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sorts `keys` ascending, permuting `vals` alongside, stably.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn sort(&mut self, keys: &mut [u64], vals: &mut [u32]) {
        assert_eq!(keys.len(), vals.len(), "keys and values differ in length");
        let n = keys.len();
        self.last_passes = 0;
        if n < 2 {
            return;
        }
        let parallel = n >= PARALLEL_MIN && rayon::current_num_threads() > 1;
        // All eight histograms in one read.
        let all = if parallel {
            keys.par_chunks(BLOCK)
                .map(|c| {
                    let mut h = [[0u32; RADIX]; DIGITS];
                    for &k in c {
                        for (d, hd) in h.iter_mut().enumerate() {
                            hd[digit(k, d)] += 1;
                        }
                    }
                    h
                })
                .reduce(
                    || [[0u32; RADIX]; DIGITS],
                    |mut a, b| {
                        for d in 0..DIGITS {
                            for r in 0..RADIX {
                                a[d][r] += b[d][r];
                            }
                        }
                        a
                    },
                )
        } else {
            let mut h = [[0u32; RADIX]; DIGITS];
            for &k in keys.iter() {
                for (d, hd) in h.iter_mut().enumerate() {
                    hd[digit(k, d)] += 1;
                }
            }
            h
        };
        self.keys.resize(n, 0);
        self.vals.resize(n, 0);
        let mut in_scratch = false;
        for (d, hist) in all.iter().enumerate() {
            if hist.iter().any(|&c| c as usize == n) {
                continue; // constant digit
            }
            self.last_passes += 1;
            let (src_k, src_v, dst_k, dst_v): (&[u64], &[u32], &mut [u64], &mut [u32]) = if in_scratch {
                (&self.keys, &self.vals, keys, vals)
            } else {
                (keys, vals, &mut self.keys, &mut self.vals)
            };
            if parallel {
                scatter_parallel(&mut self.hist, src_k, src_v, dst_k, dst_v, d);
            } else {
                scatter_serial(hist, src_k, src_v, dst_k, dst_v, d);
            }
            in_scratch = !in_scratch;
        }
        if in_scratch {
            keys.copy_from_slice(&self.keys);
            vals.copy_from_slice(&self.vals);
        }
    }
}

fn scatter_serial(hist: &[u32; RADIX], sk: &[u64], sv: &[u32], dk: &mut [u64], dv: &mut [u32], d: usize) {
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

fn scatter_parallel(hist: &mut Vec<[u32; RADIX]>, sk: &[u64], sv: &[u32], dk: &mut [u64], dv: &mut [u32], d: usize) {
    let n = sk.len();
    let blocks = n.div_ceil(BLOCK);
    hist.resize(blocks, [0; RADIX]);
    hist.par_iter_mut().zip(sk.par_chunks(BLOCK)).for_each(|(h, c)| {
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
    let (pk, pv) = (Scatter(dk.as_mut_ptr()), Scatter(dv.as_mut_ptr()));
    hist.par_iter_mut().zip(sk.par_chunks(BLOCK).zip(sv.par_chunks(BLOCK))).for_each(|(offs, (ck, cv))| {
        // Capture the whole wrappers (Sync), not their raw-pointer fields.
        let (pk, pv) = (pk, pv);
        for (&k, &v) in ck.iter().zip(cv) {
            let b = digit(k, d);
            let o = offs[b] as usize;
            debug_assert!(o < n);
            // SAFETY: 1. `o < n`: the offsets are an exclusive prefix sum of counts that add
            //            up to `n` = `dk.len()` = `dv.len()`.
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(keys: Vec<u64>) {
        let n = keys.len();
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..n as u32).collect();
        RadixSorter::new().sort(&mut k, &mut v);
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        expect.sort_by_key(|p| p.0); // stable: equal keys keep input order
        assert_eq!(k, expect.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(v, expect.iter().map(|p| p.1).collect::<Vec<_>>());
        let mut std_sorted = keys;
        std_sorted.sort_unstable();
        assert_eq!(k, std_sorted);
    }

    fn lcg(n: usize, seed: u64) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s ^ (s >> 29)
            })
            .collect()
    }

    #[test]
    fn matches_std_sort_on_shapes() {
        let sizes: &[usize] = if cfg!(miri) { &[0, 1, 2, 50] } else { &[0, 1, 2, 255, 4096, 100_000] };
        for &n in sizes {
            check(lcg(n, 7));
            let mut sorted = lcg(n, 9);
            sorted.sort_unstable();
            check(sorted.clone());
            sorted.reverse();
            check(sorted);
            check(vec![42; n]);
            check(lcg(n, 3).into_iter().map(|k| k & 0xF000_0000_0000_00FF).collect());
        }
    }

    #[test]
    fn parallel_path_is_stable_and_independent_of_threads() {
        let n = if cfg!(miri) { 40_000 } else { 300_000 };
        let keys: Vec<u64> = lcg(n, 5).into_iter().map(|k| k % 1000).collect();
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
                RadixSorter::new().sort(&mut k, &mut v);
                (k, v)
            })
        };
        let one = run(1);
        let four = run(4);
        assert_eq!(one, four);
        check(keys);
    }

    #[test]
    fn constant_digits_are_skipped() {
        let mut k: Vec<u64> = (0..1000u64).map(|i| (i % 200) << 8 | 0xAB).collect();
        let mut v: Vec<u32> = (0..1000).collect();
        let mut s = RadixSorter::new();
        s.sort(&mut k, &mut v);
        assert_eq!(s.last_passes, 1, "only digit 1 varies");
    }
}
