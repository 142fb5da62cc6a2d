use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;
use std::time::Instant;
use switchyard_kernels::sort::RadixSorter;

#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
struct Pair { key: u64, index: u32 }
impl rdst::RadixKey for Pair { const LEVELS: usize = 8; #[inline] fn get_level(&self, l: usize) -> u8 { (self.key >> (l * 8)) as u8 } }
impl voracious_radix_sort::Radixable<u64> for Pair { type Key = u64; #[inline] fn key(&self) -> u64 { self.key } }

fn keys(shape: &str, n: usize, seed: u64) -> Vec<u64> {
    let mut r = Pcg64Mcg::seed_from_u64(seed);
    let pipes: Vec<u64> = (0..16).map(|_| r.gen_range(0..1u64 << 15)).collect();
    let mats: Vec<u64> = (0..256).map(|_| r.gen_range(0..1u64 << 16)).collect();
    let meshes: Vec<u64> = (0..64).map(|_| r.gen_range(0..1u64 << 12)).collect();
    let mut key = |r: &mut Pcg64Mcg| (r.gen_range(0..2u64) << 60) | (pipes[r.gen_range(0..16)] << 44) | (mats[r.gen_range(0..256)] << 28) | (meshes[r.gen_range(0..64)] << 16) | r.gen_range(0..1u64 << 16);
    match shape {
        "uniform" => (0..n).map(|_| r.gen()).collect(),
        "render" => (0..n).map(|_| key(&mut r)).collect(),
        _ => { let mut k: Vec<u64> = (0..n).map(|_| key(&mut r)).collect(); k.sort_unstable(); for _ in 0..n * 3 / 100 { let i = r.gen_range(0..n); k[i] = key(&mut r); } k }
    }
}


#[repr(C)]
#[derive(Clone, Copy, Default)]
struct P { k: u64, v: u32, _p: u32 }

fn lsd_aos(keys: &mut [u64], vals: &mut [u32], a: &mut Vec<P>, b: &mut Vec<P>) {
    let n = keys.len();
    a.clear();
    b.resize(n, P::default());
    let mut h = [[0u32; 256]; 8];
    a.extend(keys.iter().zip(vals.iter()).map(|(&k, &v)| {
        for d in 0..8 { h[d][((k >> (d * 8)) & 0xff) as usize] += 1; }
        P { k, v, _p: 0 }
    }));
    let mut src: &mut Vec<P> = a;
    let mut dst: &mut Vec<P> = b;
    for d in 0..8 {
        if h[d].iter().any(|&c| c as usize == n) { continue; }
        let mut offs = [0usize; 256];
        let mut sum = 0;
        for r in 0..256 { offs[r] = sum; sum += h[d][r] as usize; }
        let dp = dst.as_mut_ptr();
        for p in src.iter() {
            let r = ((p.k >> (d * 8)) & 0xff) as usize;
            unsafe { *dp.add(*offs.get_unchecked(r)) = *p; *offs.get_unchecked_mut(r) += 1; }
        }
        std::mem::swap(&mut src, &mut dst);
    }
    for ((k, v), p) in keys.iter_mut().zip(vals.iter_mut()).zip(src.iter()) { *k = p.k; *v = p.v; }
}


fn lsd_soa(keys: &mut [u64], vals: &mut [u32], tk: &mut Vec<u64>, tv: &mut Vec<u32>) {
    let n = keys.len();
    tk.resize(n, 0); tv.resize(n, 0);
    let mut h = [[0u32; 256]; 8];
    for &k in keys.iter() { for d in 0..8 { h[d][((k >> (d * 8)) & 0xff) as usize] += 1; } }
    let (mut sk, mut sv, mut dk, mut dv): (&mut [u64], &mut [u32], &mut [u64], &mut [u32]) = (keys, vals, &mut tk[..], &mut tv[..]);
    let mut swapped = false;
    for d in 0..8 {
        if h[d].iter().any(|&c| c as usize == n) { continue; }
        let mut offs = [0u32; 256];
        let mut sum = 0;
        for r in 0..256 { offs[r] = sum; sum += h[d][r]; }
        let (kp, vp) = (dk.as_mut_ptr(), dv.as_mut_ptr());
        for (&k, &v) in sk.iter().zip(sv.iter()) {
            let r = ((k >> (d * 8)) & 0xff) as usize;
            unsafe { let o = *offs.get_unchecked(r) as usize; *kp.add(o) = k; *vp.add(o) = v; *offs.get_unchecked_mut(r) += 1; }
        }
        std::mem::swap(&mut sk, &mut dk); std::mem::swap(&mut sv, &mut dv); swapped = !swapped;
    }
    if swapped { dk.copy_from_slice(sk); dv.copy_from_slice(sv); }
}

fn median(mut v: Vec<f64>) -> f64 { v.sort_by(|a, b| a.partial_cmp(b).unwrap()); v[v.len() / 2] }

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: Vec<usize> = args.get(1).map(|s| s.split(',').map(|x| x.parse().unwrap()).collect()).unwrap_or(vec![1, 2]);
    let sizes: Vec<usize> = args.get(2).map(|s| s.split(',').map(|x| x.parse().unwrap()).collect()).unwrap_or(vec![16384, 65536, 262144, 1 << 20]);
    let shapes: Vec<String> = args.get(3).map(|s| s.split(',').map(|x| x.to_string()).collect()).unwrap_or(vec!["uniform".into(), "render".into(), "coherent".into()]);
    let which: String = args.get(4).cloned().unwrap_or("all".into());
    for &t in &threads {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
        for &n in &sizes {
            for shape in &shapes {
                let k = keys(shape, n, 7);
                let iters = (20_000_000 / n).clamp(5, 200);
                let mut ours = RadixSorter::new();
                let mut res: Vec<(String, f64)> = vec![];
                let mut kk = vec![0u64; n]; let mut vv = vec![0u32; n];
                let t_ours = pool.install(|| median((0..iters).map(|_| { kk.copy_from_slice(&k); vv.iter_mut().enumerate().for_each(|(i, v)| *v = i as u32); let s = Instant::now(); ours.sort(&mut kk, &mut vv); s.elapsed().as_secs_f64() }).collect()));
                assert!(kk.windows(2).all(|w| w[0] <= w[1]));
                res.push(("ours".into(), t_ours));
                let mut old = old_kernels::sort::RadixSorter::new();
                let t_old = pool.install(|| median((0..iters).map(|_| { kk.copy_from_slice(&k); vv.iter_mut().enumerate().for_each(|(i, v)| *v = i as u32); let s = Instant::now(); old.sort(&mut kk, &mut vv); s.elapsed().as_secs_f64() }).collect()));
                res.push(("old".into(), t_old));

                if which == "all" {
                let t_fresh = pool.install(|| median((0..iters).map(|_| { kk.copy_from_slice(&k); vv.iter_mut().enumerate().for_each(|(i, v)| *v = i as u32); let s = Instant::now(); RadixSorter::new().sort(&mut kk, &mut vv); s.elapsed().as_secs_f64() }).collect()));
                res.push(("fresh".into(), t_fresh));
                let base: Vec<Pair> = k.iter().enumerate().map(|(i, &key)| Pair { key, index: i as u32 }).collect();
                let mut p = base.clone();
                let mut bench = |name: &str, f: &mut (dyn FnMut(&mut Vec<Pair>) + Send)| { let d = pool.install(|| median((0..iters).map(|_| { p.copy_from_slice(&base); let s = Instant::now(); f(&mut p); s.elapsed().as_secs_f64() }).collect())); assert!(p.windows(2).all(|w| w[0].key <= w[1].key), "{name}"); res.push((name.into(), d)); };
                bench("std", &mut |p| p.sort_unstable_by_key(|x| x.key));
                bench("rayon", &mut |p| p.par_sort_unstable_by_key(|x| x.key));
                bench("radsort", &mut |p| radsort::sort_by_key(p, |x| x.key));
                bench("rdst", &mut |p| rdst::RadixSort::radix_sort_unstable(p));
                bench("vorac-st", &mut |p| voracious_radix_sort::RadixSort::voracious_sort(&mut p[..]));
                bench("vorac-mt", &mut |p| voracious_radix_sort::RadixSort::voracious_mt_sort(&mut p[..], t));
                }
                let best = res.iter().skip(3).map(|r| r.1).fold(f64::INFINITY, f64::min);
                let bestn = res.iter().skip(3).min_by(|a, b| a.1.partial_cmp(&b.1).unwrap()).map(|r| r.0.clone()).unwrap_or_default();
                let line: Vec<String> = res.iter().map(|(nm, d)| format!("{nm} {:.1}", n as f64 / d / 1e6)).collect();
                println!("t={t:2} n={n:8} {shape:9} ours/best={:.2} ({bestn})  [Mkeys/s] {}", best / t_ours, line.join("  "));
            }
        }
    }
}
