//! Stage 3, batch: runs of equal state in the sorted queue become instanced draws.
//!
//! Two adjacent queue items share a batch when their mesh and their draw state are equal:
//! the material in a forward pass, the (shader, variant) pair in a shadow pass. While the
//! key's state fields hold the dense ids whole (`key::exact`), the sorted keys say this
//! alone, read in order; otherwise the real ids are read from the scene at each item's
//! object. Boundaries are found per block of the queue in parallel and joined at block
//! edges; the result equals the serial loop's.

use crate::material::MaterialFrame;
use crate::material::PassKind;
use crate::profile;
use crate::scene::Objects;
use crate::sort::key::{material_of_state, mesh_of_state, state_of};
use crate::sort::SortedQueue;
use crate::view::View;

/// A run of queue items with equal state: one instanced draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// First queue position.
    pub first: u32,
    /// Items.
    pub count: u32,
    /// Dense mesh index.
    pub mesh: u32,
    /// Material of the first item (its lists give pipeline and bind group).
    pub material: u32,
}

/// State that must be equal for two queue items to share a batch.
#[inline]
pub(crate) fn batch_state(pass: PassKind, mats: &[MaterialFrame], material: u32) -> u32 {
    match pass {
        PassKind::Forward | PassKind::Depth => mats[material as usize].batch_material(material),
        PassKind::Shadow => mats[material as usize].shadow_state,
    }
}

/// What the batch stage reads of a view's sorted queue.
#[derive(Clone, Copy)]
struct Items<'a> {
    pass: PassKind,
    queue: &'a [u32],
    /// The queue's keys, when their state fields are exact (`key::exact`).
    keys: Option<&'a [u64]>,
    objects: &'a Objects,
    mats: &'a [MaterialFrame],
}

impl Items<'_> {
    /// A value equal for two items exactly when they can share a batch.
    #[inline]
    fn state(&self, q: usize) -> u64 {
        match self.keys {
            Some(keys) => state_of(keys[q]),
            None => self.scene_state(q),
        }
    }

    /// [`Items::state`] from the scene's ids (two reads at the item's object).
    #[inline]
    fn scene_state(&self, q: usize) -> u64 {
        let o = self.queue[q] as usize;
        let draw = batch_state(self.pass, self.mats, self.objects.material[o]);
        u64::from(draw) << 32 | u64::from(self.objects.mesh[o])
    }

    /// Marks in `bits` (bit `j` for item `start + j`) the items of `range` that start a
    /// batch; returns how many. The item before `range` continues into it.
    fn mark_starts(&self, range: std::ops::Range<usize>, bits: &mut [u64]) -> usize {
        let start = range.start;
        match self.keys {
            // The keys in order: no scene reads.
            Some(keys) => {
                let prev = if start > 0 { state_of(keys[start - 1]) } else { state_of(keys[start]) ^ 1 };
                mark_changes(keys[range].iter().map(|&k| state_of(k)), prev, bits)
            }
            None => {
                let prev = if start > 0 { self.scene_state(start - 1) } else { self.scene_state(start) ^ 1 };
                mark_changes(range.map(|q| self.scene_state(q)), prev, bits)
            }
        }
    }

    /// The batch that starts at queue position `q` (its count not yet known).
    #[inline]
    fn batch_at(&self, q: usize) -> Batch {
        let first = q as u32;
        match self.keys {
            // Mesh and material are in the key (a shadow key has no material field).
            Some(keys) if self.pass == PassKind::Forward => {
                let s = state_of(keys[q]);
                Batch { first, count: 0, mesh: mesh_of_state(s), material: material_of_state(s) }
            }
            _ => {
                let o = self.queue[q] as usize;
                let m = self.objects.material[o];
                let material = match self.pass {
                    PassKind::Shadow => m,
                    PassKind::Forward | PassKind::Depth => self.mats[m as usize].batch_material(m),
                };
                Batch { first, count: 0, mesh: self.objects.mesh[o], material }
            }
        }
    }
}

/// Sets bit `j` of `bits` (a word per 64 items, every word written) where the `j`-th
/// state differs from the one before it (`prev` before the first); returns how many.
#[inline(always)]
fn mark_changes(states: impl Iterator<Item = u64>, mut prev: u64, bits: &mut [u64]) -> usize {
    let (mut count, mut word, mut j) = (0, 0u64, 0);
    for now in states {
        word |= u64::from(now != prev) << (j % 64);
        prev = now;
        j += 1;
        if j % 64 == 0 {
            bits[j / 64 - 1] = word;
            count += word.count_ones() as usize;
            word = 0;
        }
    }
    if j % 64 != 0 {
        bits[j / 64] = word;
        count += word.count_ones() as usize;
    }
    count
}

/// Reusable memory of [`build_batches_parallel`].
#[derive(Debug, Default)]
struct BatchScratch {
    offsets: Vec<usize>,
    /// A bit per queue item that starts a batch.
    starts: Vec<u64>,
    /// Per block, where the batch after its last one starts (the queue's length at the end).
    ends: Vec<u32>,
}

/// [`build_batches`] on the current rayon pool. Each block of the queue reads its items'
/// state once (the sorted keys in order, or two arrays of the scene at the item's object),
/// marks the items that start a batch in a bit per item and counts them; then each block
/// writes its batches into its own range of `out` from the bits, reading the scene only at
/// batch starts. The result is identical to the serial version.
fn build_batches_parallel(items: Items<'_>, scratch: &mut BatchScratch, out: &mut Vec<Batch>) {
    use switchyard_kernels::par::Scaled;
    let n = items.queue.len();
    // About two blocks per worker (at least 4k items each, whole 64-item words): batches
    // are found per block and joined at block edges, so the result does not depend on the
    // block size.
    let block =
        (n / (2 * rayon::current_num_threads())).clamp(4096, switchyard_kernels::par::BLOCK).next_multiple_of(64);
    let blocks = n.div_ceil(block);
    if blocks <= 1 {
        build_batches(items, out);
        return;
    }
    let words = block / 64;
    scratch.offsets.clear();
    scratch.offsets.resize(blocks + 1, 0);
    switchyard_kernels::par::set_len(&mut scratch.starts, n.div_ceil(64));
    let marks = (Scaled(&mut scratch.starts[..], words), &mut scratch.offsets[1..]);
    switchyard_kernels::par::fill_blocks(
        1,
        marks,
        &|b, (Scaled(bits, _), count): (Scaled<&mut [u64]>, &mut [usize])| {
            count[0] = items.mark_starts(b * block..((b + 1) * block).min(n), bits);
        },
    );
    for b in 0..blocks {
        scratch.offsets[b + 1] += scratch.offsets[b];
    }
    // Per block, where the batch after its last one starts: the first start of a later
    // block, found once from the back (blocks without a start of their own pass it on).
    let starts = &scratch.starts;
    scratch.ends.clear();
    scratch.ends.resize(blocks, n as u32);
    let mut next = n as u32;
    for b in (0..blocks).rev() {
        scratch.ends[b] = next;
        let bits = &starts[b * words..((b + 1) * words).min(starts.len())];
        if let Some(w) = bits.iter().position(|&w| w != 0) {
            next = (b * block + w * 64 + bits[w].trailing_zeros() as usize) as u32;
        }
    }
    let ends = &scratch.ends;
    switchyard_kernels::par::set_len(out, scratch.offsets[blocks]);
    switchyard_kernels::par::fill_ranges(&scratch.offsets, &mut out[..], &|b, dst: &mut [Batch]| {
        if dst.is_empty() {
            return;
        }
        let bits = &starts[b * words..((b + 1) * words).min(starts.len())];
        let mut w = 0;
        for (i, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let q = b * block + i * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if w > 0 {
                    dst[w - 1].count = q as u32 - dst[w - 1].first;
                }
                dst[w] = items.batch_at(q);
                w += 1;
            }
        }
        dst[w - 1].count = ends[b] - dst[w - 1].first;
    });
}

/// Splits a sorted queue (dense object indices) into batches.
fn build_batches(items: Items<'_>, out: &mut Vec<Batch>) {
    out.clear();
    let mut prev = None;
    for q in 0..items.queue.len() {
        let state = Some(items.state(q));
        match out.last_mut() {
            Some(b) if prev == state => b.count += 1,
            _ => out.push(Batch { count: 1, ..items.batch_at(q) }),
        }
        prev = state;
    }
}

/// The batch stage's output for one view.
#[derive(Debug, Default)]
pub(crate) struct Batches {
    pub(crate) batches: Vec<Batch>,
    scratch: BatchScratch,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

/// What the batch stage reads besides the view and its sorted queue.
#[derive(Clone, Copy)]
pub(crate) struct BatchCtx<'a> {
    /// The pass's name (Tracy).
    pub(crate) label: &'a str,
    pub(crate) objects: &'a Objects,
    pub(crate) mat_frames: &'a [MaterialFrame],
    /// Whether this frame's key state fields are exact (`key::exact`): batches are then
    /// found from the keys.
    pub(crate) exact_keys: bool,
}

/// Batches `view`'s sorted queue on the current pool.
pub(crate) fn batch_view(ctx: &BatchCtx<'_>, view: &View, sorted: &SortedQueue, out: &mut Batches) {
    profile::zone_text!("batch", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    let items = Items {
        pass: view.pass,
        queue: &sorted.queue,
        keys: ctx.exact_keys.then_some(&sorted.keys[..]),
        objects: ctx.objects,
        mats: ctx.mat_frames,
    };
    build_batches_parallel(items, &mut out.scratch, &mut out.batches);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// `n` objects of up to `kinds` meshes and `kinds + 1` materials (pairs of which share a
    /// shadow state; odd ones transparent) on two layers; their materials' frame data.
    fn scene(n: usize, kinds: u32) -> (Objects, Vec<MaterialFrame>) {
        let mut objects = Objects::default();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(99);
        for _ in 0..n {
            objects.mesh.push(rng.gen_range(0..kinds));
            objects.material.push(rng.gen_range(0..kinds + 1));
            objects.layer.push(rng.gen_range(0..2));
            objects.cx.push(rng.gen_range(0.0..100.0));
            objects.cy.push(0.0);
            objects.cz.push(0.0);
        }
        let mats = (0..kinds + 1).map(|m| crate::sort::material_frame(0, m / 2, m % 2 == 1, m / 2)).collect();
        (objects, mats)
    }

    #[test]
    fn parallel_batches_equal_serial_batches() {
        // Sizes at and past the block edges; one state throughout (a batch across every
        // block, blocks without a start of their own) or a few.
        for n in [4097, 8257, 200_000] {
            for kinds in [1, 3] {
                batches_equal_serial_batches(n, kinds);
            }
        }
    }

    fn batches_equal_serial_batches(n: usize, kinds: u32) {
        let (objects, mats) = scene(n, kinds);
        // Runs of equal state of varied lengths, like a sorted queue.
        let mut queue: Vec<u32> = (0..n as u32).collect();
        queue.sort_by_key(|&o| (objects.material[o as usize] / 2, objects.mesh[o as usize], o / 5000));
        for pass in [PassKind::Forward, PassKind::Shadow] {
            let items = Items { pass, queue: &queue, keys: None, objects: &objects, mats: &mats };
            let mut serial = Vec::new();
            build_batches(items, &mut serial);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut par = vec![Batch::default(); 3];
                pool.install(|| build_batches_parallel(items, &mut BatchScratch::default(), &mut par));
                assert_eq!(par, serial, "{pass:?} with {threads} threads, {n} items, {kinds} kinds");
            }
        }
    }

    #[test]
    fn batches_from_exact_keys_equal_batches_from_the_scene() {
        // Sorted queues of real keys (both layouts, two layers, materials sharing a shadow
        // state): the batches found from the keys alone are the ones the scene's ids give.
        for (n, kinds) in [(3000, 5), (50_000, 40), (50_000, 300)] {
            let (objects, mats) = scene(n, kinds);
            for pass in [PassKind::Forward, PassKind::Shadow] {
                let view = View {
                    label: "test",
                    view_proj: glam::Mat4::IDENTITY,
                    eye: glam::Vec3::ZERO,
                    far: 100.0,
                    layer_mask: 0b11,
                    pass,
                };
                let mut pairs: Vec<(u64, u32)> =
                    (0..n).map(|i| (crate::sort::key::item_key(&view, &objects, i, &mats), i as u32)).collect();
                pairs.sort_unstable();
                let keys: Vec<u64> = pairs.iter().map(|p| p.0).collect();
                let queue: Vec<u32> = pairs.iter().map(|p| p.1).collect();
                let from_scene = Items { pass, queue: &queue, keys: None, objects: &objects, mats: &mats };
                let from_keys = Items { keys: Some(&keys), ..from_scene };
                let mut want = Vec::new();
                build_batches(from_scene, &mut want);
                assert!(want.len() > kinds as usize, "{pass:?}: layers and depth split some states");
                let mut got = Vec::new();
                build_batches(from_keys, &mut got);
                assert_eq!(got, want, "serial, {pass:?}, {n} items, {kinds} kinds");
                let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
                pool.install(|| build_batches_parallel(from_keys, &mut BatchScratch::default(), &mut got));
                assert_eq!(got, want, "parallel, {pass:?}, {n} items, {kinds} kinds");
            }
        }
    }
}
