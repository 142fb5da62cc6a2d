//! Sort workloads: (u64 key, u32 index) pairs of three shapes, and the baselines.

use rand::Rng;
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;
use switchyard_kernels::sort::RadixSorter;

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

/// The state hashes of a render-shaped workload: 16 pipelines, 256 materials, 64 meshes.
struct RenderStates {
    pipelines: Vec<u64>,
    materials: Vec<u64>,
    meshes: Vec<u64>,
}

impl RenderStates {
    fn new(r: &mut Pcg64Mcg) -> Self {
        let mut draw = |n: usize, bits: u32| (0..n).map(|_| r.gen_range(0..1u64 << bits)).collect();
        Self { pipelines: draw(16, 15), materials: draw(256, 16), meshes: draw(64, 12) }
    }

    /// A key laid out as Switchyard's opaque keys: layer, pipeline, material, mesh, depth.
    fn key(&self, r: &mut Pcg64Mcg) -> u64 {
        let layer = r.gen_range(0..2u64) << 60;
        let pipe = self.pipelines[r.gen_range(0..16)] << 44;
        let mat = self.materials[r.gen_range(0..256)] << 28;
        let mesh = self.meshes[r.gen_range(0..64)] << 16;
        layer | pipe | mat | mesh | r.gen_range(0..1u64 << 16)
    }
}

/// `n` keys of `shape`.
pub fn keys(shape: Shape, n: usize, seed: u64) -> Vec<u64> {
    let mut r = crate::rng(seed);
    let states = RenderStates::new(&mut r);
    match shape {
        Shape::Uniform => (0..n).map(|_| r.gen()).collect(),
        Shape::Render => (0..n).map(|_| states.key(&mut r)).collect(),
        Shape::Coherent { percent } => {
            let mut k: Vec<u64> = (0..n).map(|_| states.key(&mut r)).collect();
            k.sort_unstable();
            let changes = n * percent as usize / 100;
            for _ in 0..changes {
                let i = r.gen_range(0..n);
                k[i] = states.key(&mut r);
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
    /// Switchyard's radix sort (keys and values as two owned arrays, `RadixSorter::sort_vecs`:
    /// a result left in the sorter's scratch is exchanged with them, not copied back), one
    /// sorter reused.
    Ours,
    /// [`Sorter::Ours`] with a fresh sorter per call (allocates its scratch, as the baselines
    /// do).
    OursFresh,
    /// Switchyard's radix sort on borrowed slices (`RadixSorter::sort`: a result left in the
    /// scratch is copied back), one sorter reused.
    OursSlices,
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
    /// `voracious_radix_sort`, single-threaded (`voracious_sort`).
    VoraciousSt,
}

impl Sorter {
    /// Every baseline.
    pub const BASELINES: [Sorter; 6] =
        [Sorter::Std, Sorter::Rayon, Sorter::Radsort, Sorter::Rdst, Sorter::Voracious, Sorter::VoraciousSt];

    /// Crate name.
    pub fn name(self) -> &'static str {
        match self {
            Sorter::Ours => "switchyard",
            Sorter::OursFresh => "switchyard, fresh sorter",
            Sorter::OursSlices => "switchyard, slices",
            Sorter::Std => "std sort_unstable",
            Sorter::Rayon => "rayon par_sort_unstable",
            Sorter::Radsort => "radsort",
            Sorter::Rdst => "rdst",
            Sorter::Voracious => "voracious_radix_sort mt",
            Sorter::VoraciousSt => "voracious_radix_sort st",
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
    if matches!(sorter, Sorter::Ours | Sorter::OursFresh | Sorter::OursSlices) {
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
        Sorter::Ours => ours.sort_vecs(&mut input.keys, &mut input.vals),
        Sorter::OursFresh => RadixSorter::new().sort_vecs(&mut input.keys, &mut input.vals),
        Sorter::OursSlices => ours.sort(&mut input.keys, &mut input.vals),
        Sorter::Std => input.pairs.sort_unstable_by_key(|p| p.key),
        Sorter::Rayon => input.pairs.par_sort_unstable_by_key(|p| p.key),
        Sorter::Radsort => radsort::sort_by_key(&mut input.pairs, |p| p.key),
        Sorter::Rdst => rdst::RadixSort::radix_sort_unstable(&mut input.pairs),
        Sorter::Voracious => voracious_radix_sort::RadixSort::voracious_mt_sort(&mut input.pairs[..], threads),
        Sorter::VoraciousSt => voracious_radix_sort::RadixSort::voracious_sort(&mut input.pairs[..]),
    }
}

/// Whether the output of `run` is sorted (sanity check of every run).
pub fn is_sorted(sorter: Sorter, input: &SortInput) -> bool {
    if matches!(sorter, Sorter::Ours | Sorter::OursFresh | Sorter::OursSlices) {
        input.keys.windows(2).all(|w| w[0] <= w[1])
    } else {
        input.pairs.windows(2).all(|w| w[0].key <= w[1].key)
    }
}
