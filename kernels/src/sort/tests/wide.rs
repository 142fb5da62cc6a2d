//! The one-thread LSD sort on 11-bit digits over packed pairs (module `wide`): which inputs
//! take it, and that it gives the stable order (and the (key, value) order with ties by
//! value) on every number of passes; the prefix sort's wide digits (module `msd`).

use super::super::wide::{self, WIDE_MAX, WIDE_MIN};
use super::*;

/// Sorts `keys` on `threads` threads with `sorter`; whether the wide digits ran.
fn wide_sort(threads: usize, keys: &[u64], sorter: &mut RadixSorter) -> (Vec<u64>, Vec<u32>, bool) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let before = wide::SORTS.with(|c| c.get());
        let (mut k, mut v) = (keys.to_vec(), (0..keys.len() as u32).collect::<Vec<_>>());
        sorter.sort(&mut k, &mut v);
        (k, v, wide::SORTS.with(|c| c.get()) > before)
    })
}

/// The (key, value) order of `keys` with `vals`.
fn expected(keys: &[u64], vals: &[u32]) -> (Vec<u64>, Vec<u32>) {
    let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    pairs.sort();
    pairs.into_iter().unzip()
}

/// Inputs the wide digits take, by name: render keys; render keys with many duplicates;
/// keys whose varying bits leave a gap (states without a depth, the mesh field constant);
/// keys that vary in one 11-bit window (one pass: packed, then copied back); keys that
/// vary in the top bit and the lowest (two digits, the top one past the key's end).
fn inputs(n: usize) -> Vec<(&'static str, Vec<u64>)> {
    let render = render_keys(n, n as u64);
    let duplicates: Vec<u64> = render.iter().map(|&k| k & !0xffff).collect();
    let gap: Vec<u64> = render.iter().map(|&k| k & !(0xfff << 16)).collect();
    let one_window: Vec<u64> = (0..n as u64).map(|i| (((i * i + 7) % 5) << 5) | (0xABC << 40)).collect();
    let ends: Vec<u64> = (0..n as u64).map(|i| (u64::from(i % 3 == 0) << 63) | ((i * 2_654_435_761) % 5)).collect();
    vec![("render", render), ("duplicates", duplicates), ("gap", gap), ("one window", one_window), ("ends", ends)]
}

#[test]
fn render_keys_of_4k_to_16k_pairs_sort_on_wide_digits_stably() {
    let sizes: &[usize] = if cfg!(miri) { &[WIDE_MIN, WIDE_MAX] } else { &[WIDE_MIN, 10_000, WIDE_MAX] };
    let mut sorter = RadixSorter::new();
    let mut without = RadixSorter { wide_digits: false, ..RadixSorter::new() };
    for &n in sizes {
        for (name, keys) in inputs(n) {
            let (k, v, took) = wide_sort(1, &keys, &mut sorter);
            assert!(took, "{name}, {n} pairs: the wide digits ran");
            assert_stable(&keys, &k, &v, &format!("{name}, {n} pairs"));
            // (Under miri not again without them: that path's scatters have their own tests.)
            if !cfg!(miri) {
                let (k0, v0, took) = wide_sort(1, &keys, &mut without);
                assert!(!took && (k0, v0) == (k, v), "{name}, {n} pairs: the same result without them");
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "ties are ordered by safe code after the wide digits, which the test above checks")]
fn ties_by_value_give_the_key_value_order_after_wide_digits() {
    let n = if cfg!(miri) { WIDE_MIN + 5 } else { 5000 };
    let mut sorter = RadixSorter { ties_by_value: true, ..RadixSorter::new() };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    for (name, keys) in inputs(n) {
        // Values in descending order: every tie is out of order.
        let vals: Vec<u32> = (0..n as u32).rev().collect();
        let (mut k, mut v) = (keys.clone(), vals.clone());
        // (The count is the pool thread's.)
        let took = pool.install(|| {
            let before = wide::SORTS.with(|c| c.get());
            sorter.sort(&mut k, &mut v);
            wide::SORTS.with(|c| c.get()) > before
        });
        assert!(took, "{name}: the wide digits ran");
        assert!((k, v) == expected(&keys, &vals), "{name}: not the (key, value) order");
    }
}

#[test]
#[cfg_attr(miri, ignore = "path choice only (safe code): the paths' scatters are checked by their own tests")]
fn other_sizes_spread_keys_and_parallel_sorts_keep_their_paths() {
    let mut sorter = RadixSorter::new();
    let render = |n: usize| render_keys(n, 3);
    let mid = (WIDE_MIN + WIDE_MAX) / 2;
    // (keys, threads, whether the wide digits run)
    let cases = [
        (render(WIDE_MIN - 1), 1, false),
        (render(WIDE_MAX + 1), 1, false),
        (random(mid, 4), 1, false),
        // Below the parallel sort's least, a pool of three sorts on one thread too.
        (render(mid), 3, true),
        (render(PARALLEL_MIN.max(WIDE_MAX)), 3, false),
        (render(WIDE_MAX), 1, true),
    ];
    for (keys, threads, wide) in cases {
        let n = keys.len();
        let (k, v, took) = wide_sort(threads, &keys, &mut sorter);
        assert_eq!(took, wide, "{n} pairs on {threads} threads");
        assert_stable(&keys, &k, &v, &format!("{n} pairs"));
    }
}

#[test]
fn digits_cover_every_varying_bit_and_skip_the_gaps() {
    assert_eq!(wide::digits(0).1, 0);
    let (s, n) = wide::digits(u64::MAX);
    assert_eq!(&s[..n], &[0, 11, 22, 33, 44, 55]);
    // Bits 3 and 40..45: two digits, the second starting at 40.
    let (s, n) = wide::digits(1 << 3 | (0x3f << 40));
    assert_eq!(&s[..n], &[3, 40]);
    // The top bit alone: one digit at 63 (its window runs past the key's end).
    let (s, n) = wide::digits(1 << 63);
    assert_eq!(&s[..n], &[63]);
    for varying in [u64::MAX, 0x1fff_ffff_ffff_ffff, 0x8000_0000_0000_0001, 0x00f0_0f00_f00f_00f0] {
        let (s, n) = wide::digits(varying);
        let covered = s[..n].iter().fold(0u64, |m, &sh| m | (bits_below((sh + 11).min(64)) & !bits_below(sh)));
        assert_eq!(covered & varying, varying, "{varying:#x}");
    }
}

#[test]
fn wide_prefix_digits_sort_stably_into_either_pair_of_arrays() {
    // Two digits of `width` bits on the top bits, then runs of equal prefixes (made common
    // by a narrow top) sorted below. Natively also the 9-bit digits 40k pairs take.
    let cases: &[(usize, u32)] = if cfg!(miri) { &[(300, 5)] } else { &[(300, 5), (5_000, 7), (40_000, 9)] };
    for &(n, width) in cases {
        let keys: Vec<u64> = random(n, n as u64).into_iter().map(|k| k >> (64 - 2 * width - 6)).collect();
        let varying = bits_below(2 * width + 6);
        for into_x in [true, false] {
            let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
            let (mut tk, mut tv) = (vec![0; n], vec![0; n]);
            msd::prefix_sort_wide(&mut k, &mut v, &mut tk, &mut tv, varying, into_x, width);
            let (k, v) = if into_x { (k, v) } else { (tk, tv) };
            assert_stable(&keys, &k, &v, &format!("{n} pairs, {width}-bit digits, into x: {into_x}"));
        }
    }
}
