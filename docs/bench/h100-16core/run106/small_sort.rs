//! The one-thread sort of small render-shaped inputs (a frame's tail of new and moved
//! objects is 1k-4k pairs): a reused `RadixSorter` with its comparison path for small
//! inputs (`compare_small`, the default) against the same sorter without it (the radix
//! paths), and `slice::sort_unstable_by_key` beside them, stable order by input position
//! and by value (`ties_by_value`, as the frame's tail sorts). Rounds alternate between
//! them; each prints the median µs per sort and the ratio to the radix paths.
//!
//! `cargo run --release -p switchyard-benches --example small_sort -- 15 512 1024 2048 4096 8192 16384`
//! (rounds, then sizes).

use std::time::Instant;

use switchyard_benches::sorting::{keys, Shape};
use switchyard_kernels::sort::RadixSorter;

/// Prototype: LSD over the varying bits compressed into a dense key.
fn dense(k: &mut [u64], v: &mut [u32], a: &mut Vec<[u64; 2]>) {
    let n = k.len();
    let (mut and, mut or) = (u64::MAX, 0u64);
    for &x in k.iter() { and &= x; or |= x; }
    let var = and ^ or;
    // runs (lo, mask, pos)
    let mut runs = [(0u32, 0u64, 0u32); 8]; let mut nr = 0; let mut rest = var; let mut pos = 0;
    while rest != 0 && nr < 8 { let lo = rest.trailing_zeros(); let len = (rest >> lo).trailing_ones(); runs[nr] = (lo, if len == 64 { u64::MAX } else { (1u64 << len) - 1 }, pos); nr += 1; pos += len; rest &= !(if len + lo >= 64 { u64::MAX << lo } else { ((1u64 << len) - 1) << lo }); }
    let bits = pos;
    let passes = bits.div_ceil(11).max(1);
    let w = bits.div_ceil(passes);
    let m = (1u64 << w) - 1;
    let runs = &runs[..nr];
    let d = |x: u64| runs.iter().fold(0u64, |acc, &(lo, mask, pos)| acc | (((x >> lo) & mask) << pos));
    let mut h = vec![[0u32; 2048]; passes as usize];
    for &x in k.iter() { let dk = d(x); for p in 0..passes as usize { h[p][((dk >> (p as u32 * w)) & m) as usize] += 1; } }
    for hp in h.iter_mut() { let mut s = 0; for c in hp.iter_mut() { let t = *c; *c = s; s += t; } }
    a.resize(2 * n, [0; 2]);
    let (x, y) = a.split_at_mut(n);
    // pass 0 from split into x, carrying dense in the upper val bits
    for (&kk, &vv) in k.iter().zip(v.iter()) { let dk = d(kk); let r = (dk & m) as usize; let o = h[0][r] as usize; unsafe { *x.get_unchecked_mut(o) = [kk, (dk << 32) | vv as u64]; } h[0][r] += 1; }
    let (mut from, mut to) = (x, y);
    for p in 1..passes as usize { let sh = 32 + p as u32 * w; for &q in from.iter() { let r = ((q[1] >> sh) & m) as usize; let o = h[p][r] as usize; unsafe { *to.get_unchecked_mut(o) = q; } h[p][r] += 1; } std::mem::swap(&mut from, &mut to); }
    for (i, q) in from.iter().enumerate() { k[i] = q[0]; v[i] = q[1] as u32; }
}

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok());
    let rounds = args.next().unwrap_or(15).max(1);
    let sizes: Vec<usize> = args.collect();
    let sizes = if sizes.is_empty() { vec![1024, 2048, 4096, 8192, 16384] } else { sizes };
    println!(
        "{:>6} {:>6} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "pairs", "ties", "compare", "radix", "std", "c/radix", "std/radix"
    );
    let file: Option<(Vec<u64>, Vec<u32>)> = std::env::var("KEYS").ok().map(|f| {
        std::fs::read_to_string(f).unwrap().lines().map(|l| { let mut w = l.split(' '); (u64::from_str_radix(w.next().unwrap(), 16).unwrap(), w.next().unwrap().parse::<u32>().unwrap()) }).unzip()
    });
    let sizes = if let Some(f) = &file { vec![f.0.len()] } else { sizes };
    for &n in &sizes {
        let template = file.as_ref().map_or_else(|| keys(Shape::Render, n, 11), |f| f.0.clone());
        let vals: Vec<u32> = file.as_ref().map_or_else(|| (0..n as u32).collect(), |f| f.1.clone());
        let calls = (4_000_000 / n).clamp(20, 4000);
        for by_value in [false, true] {
            let mut sorters = [true, false].map(|compare_small| {
                let mut s = RadixSorter::new();
                (s.compare_small, s.ties_by_value) = (compare_small, by_value);
                s
            });
            let mut expect: Vec<(u64, u32)> = template.iter().copied().zip(vals.iter().copied()).collect();
            if by_value { expect.sort() } else { expect.sort_by_key(|p| p.0) };
            let mut times = [vec![], vec![], vec![]];
            let (mut k, mut v) = (template.clone(), vals.clone());
            let mut dense_scratch = Vec::new();
            for _ in 0..rounds {
                for (which, t) in times.iter_mut().enumerate() {
                    let mut run = |k: &mut Vec<u64>, v: &mut Vec<u32>| {
                        k.copy_from_slice(&template);
                        v.copy_from_slice(&vals);
                        if which < 2 {
                            sorters[which].sort_vecs(k, v);
                        } else {
                            dense(k, v, &mut dense_scratch);
                        }
                    };
                    run(&mut k, &mut v);
                    let start = Instant::now();
                    for _ in 0..calls {
                        run(&mut k, &mut v);
                    }
                    t.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
                    if which < 2 || !by_value {
                        assert!(k.iter().copied().zip(v.iter().copied()).eq(expect.iter().copied()), "sorted");
                    }
                }
            }
            let med = |t: &mut Vec<f64>| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            };
            let [c, r, s] = times.map(|mut t| med(&mut t));
            println!("{n:>6} {:>6} {c:>10.2} {r:>10.2} {s:>10.2} {:>8.3} {:>8.3}", by_value, c / r, s / r);
        }
    }
}
