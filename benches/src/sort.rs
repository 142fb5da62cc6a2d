//! Sort workloads: (u64 key, u32 index) pairs of three shapes, and the baselines.

use rayon::prelude::*;
use switchyard::sort::RadixSorter;

use crate::Rng;

/// Shapes of key sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Uniform random 64-bit keys.
    Uniform,
    /// Render-queue keys: few layers, 16 pipelines, 256 materials, 64 meshes, 16-bit depth.
    Render,
    /// Last frame's sorted render keys with `percent` of them changed in place.
    Coherent {
        /// Share of keys changed.
        percent: u32,
    },
}

impl Shape {
    /// A short name.
    pub fn name(self) -> String {
        match self {
            Shape::Uniform => "uniform".into(),
            Shape::Render => "render-shaped".into(),
            Shape::Coherent { percent } => format!("frame-coherent {percent}%"),
        }
    }
}

fn render_key(r: &mut Rng) -> u64 {
    let mix = |x: u64| Rng(x).next_u64();
    let layer = r.below(2) << 60;
    let pipe = (mix(r.below(16)) & 0x7fff) << 44;
    let mat = (mix(1000 + r.below(256)) & 0xffff) << 28;
    let mesh = (mix(5000 + r.below(64)) & 0xfff) << 16;
    layer | pipe | mat | mesh | (r.next_u64() & 0xffff)
}

/// `n` keys of `shape`.
pub fn keys(shape: Shape, n: usize, seed: u64) -> Vec<u64> {
    let mut r = Rng(seed);
    match shape {
        Shape::Uniform => (0..n).map(|_| r.next_u64()).collect(),
        Shape::Render => (0..n).map(|_| render_key(&mut r)).collect(),
        Shape::Coherent { percent } => {
            let mut k: Vec<u64> = (0..n).map(|_| render_key(&mut r)).collect();
            k.sort_unstable();
            let changes = n * percent as usize / 100;
            for _ in 0..changes {
                let i = r.below(n as u64) as usize;
                k[i] = render_key(&mut r);
            }
            k
        }
    }
}

/// A key-index pair for the baselines that sort an array of structs.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Pair {
    /// Sort key.
    pub key: u64,
    /// Payload.
    pub index: u32,
}

impl rdst::RadixKey for Pair {
    const LEVELS: usize = 8;
    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        (self.key >> (level * 8)) as u8
    }
}

impl voracious_radix_sort::Radixable<u64> for Pair {
    type Key = u64;
    #[inline]
    fn key(&self) -> u64 {
        self.key
    }
}

/// Sort implementations compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sorter {
    /// Switchyard's parallel LSD radix sort (keys and values as two arrays).
    Ours,
    /// `slice::sort_unstable_by_key`.
    Std,
    /// rayon `par_sort_unstable_by_key`.
    Rayon,
    /// `radsort::sort_by_key` (single-threaded LSD radix).
    Radsort,
    /// `rdst` (multithreaded radix).
    Rdst,
    /// `voracious_radix_sort`, multithreaded.
    Voracious,
}

impl Sorter {
    /// Every baseline.
    pub const BASELINES: [Sorter; 5] = [Sorter::Std, Sorter::Rayon, Sorter::Radsort, Sorter::Rdst, Sorter::Voracious];

    /// Crate name.
    pub fn name(self) -> &'static str {
        match self {
            Sorter::Ours => "switchyard",
            Sorter::Std => "std sort_unstable",
            Sorter::Rayon => "rayon par_sort_unstable",
            Sorter::Radsort => "radsort",
            Sorter::Rdst => "rdst",
            Sorter::Voracious => "voracious_radix_sort",
        }
    }
}

/// Input and scratch for one sort run.
#[derive(Debug, Default)]
pub struct SortInput {
    /// Keys (ours).
    pub keys: Vec<u64>,
    /// Values (ours).
    pub vals: Vec<u32>,
    /// Pairs (baselines).
    pub pairs: Vec<Pair>,
}

/// Fills `input` from `keys` for `sorter` (not timed).
pub fn prepare(sorter: Sorter, keys: &[u64], input: &mut SortInput) {
    if sorter == Sorter::Ours {
        input.keys.clear();
        input.keys.extend_from_slice(keys);
        input.vals.clear();
        input.vals.extend(0..keys.len() as u32);
    } else {
        input.pairs.clear();
        input.pairs.extend(keys.iter().enumerate().map(|(i, &key)| Pair { key, index: i as u32 }));
    }
}

/// Sorts `input` with `sorter` on the current rayon pool (`threads` for voracious).
pub fn run(sorter: Sorter, input: &mut SortInput, ours: &mut RadixSorter, threads: usize) {
    match sorter {
        Sorter::Ours => ours.sort(&mut input.keys, &mut input.vals),
        Sorter::Std => input.pairs.sort_unstable_by_key(|p| p.key),
        Sorter::Rayon => input.pairs.par_sort_unstable_by_key(|p| p.key),
        Sorter::Radsort => radsort::sort_by_key(&mut input.pairs, |p| p.key),
        Sorter::Rdst => rdst::RadixSort::radix_sort_unstable(&mut input.pairs),
        Sorter::Voracious => voracious_radix_sort::RadixSort::voracious_mt_sort(&mut input.pairs[..], threads),
    }
}

/// Whether the output of `run` is sorted (sanity check of every run).
pub fn is_sorted(sorter: Sorter, input: &SortInput) -> bool {
    if sorter == Sorter::Ours {
        input.keys.windows(2).all(|w| w[0] <= w[1])
    } else {
        input.pairs.windows(2).all(|w| w[0].key <= w[1].key)
    }
}
