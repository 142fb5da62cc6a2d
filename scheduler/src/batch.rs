//! Stage 3, batch: runs of equal state in the sorted queue become instanced draws.
//!
//! Two adjacent queue items share a batch when their mesh and their draw state are equal:
//! the material in a forward pass, the (shader, variant) pair in a shadow pass. The real
//! ids are compared, never the key's hashes, so a hash collision only costs ordering.
//! Boundaries are found per block of the queue in parallel and joined at block edges; the
//! result equals the serial loop's.

use crate::material::MaterialFrame;
use crate::material::PassKind;
use crate::profile;
use crate::scene::Objects;
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
        PassKind::Forward => material,
        PassKind::Shadow => mats[material as usize].shadow_state,
    }
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
/// state once (two arrays of the scene at the item's object: the reads that cost), marks
/// the items that start a batch in a bit per item and counts them; then each block writes
/// its batches into its own range of `out` from the bits, reading the scene only at batch
/// starts. The result is identical to the serial version.
fn build_batches_parallel(
    pass: PassKind,
    queue: &[u32],
    objects: &Objects,
    mats: &[MaterialFrame],
    scratch: &mut BatchScratch,
    out: &mut Vec<Batch>,
) {
    use switchyard_kernels::par::Scaled;
    let n = queue.len();
    // About two blocks per worker (at least 4k items each, whole 64-item words): batches
    // are found per block and joined at block edges, so the result does not depend on the
    // block size.
    let block =
        (n / (2 * rayon::current_num_threads())).clamp(4096, switchyard_kernels::par::BLOCK).next_multiple_of(64);
    let blocks = n.div_ceil(block);
    if blocks <= 1 {
        build_batches(pass, queue, objects, mats, out);
        return;
    }
    let state = |q: usize| {
        let o = queue[q] as usize;
        (batch_state(pass, mats, objects.material[o]), objects.mesh[o])
    };
    let words = block / 64;
    scratch.offsets.clear();
    scratch.offsets.resize(blocks + 1, 0);
    switchyard_kernels::par::set_len(&mut scratch.starts, n.div_ceil(64));
    let marks = (Scaled(&mut scratch.starts[..], words), &mut scratch.offsets[1..]);
    switchyard_kernels::par::fill_blocks(
        1,
        marks,
        &|b, (Scaled(bits, _), count): (Scaled<&mut [u64]>, &mut [usize])| {
            let count = &mut count[0];
            bits.fill(0);
            let start = b * block;
            let mut prev = (start > 0).then(|| state(start - 1));
            *count = 0;
            for q in start..(start + block).min(n) {
                let now = Some(state(q));
                if now != prev {
                    bits[(q - start) / 64] |= 1 << (q % 64);
                    *count += 1;
                }
                prev = now;
            }
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
                let o = queue[q] as usize;
                dst[w] = Batch { first: q as u32, count: 0, mesh: objects.mesh[o], material: objects.material[o] };
                w += 1;
            }
        }
        dst[w - 1].count = ends[b] - dst[w - 1].first;
    });
}

/// Splits a sorted queue (dense object indices) into batches.
fn build_batches(pass: PassKind, queue: &[u32], objects: &Objects, mats: &[MaterialFrame], out: &mut Vec<Batch>) {
    out.clear();
    let mut prev: Option<(u32, u32)> = None;
    for (q, &o) in queue.iter().enumerate() {
        let (mesh, material) = (objects.mesh[o as usize], objects.material[o as usize]);
        let state = (batch_state(pass, mats, material), mesh);
        match (prev, out.last_mut()) {
            (Some(p), Some(b)) if p == state => b.count += 1,
            _ => out.push(Batch { first: q as u32, count: 1, mesh, material }),
        }
        prev = Some(state);
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

/// Batches `view`'s sorted queue on the current pool.
pub(crate) fn batch_view(
    label: &str,
    view: &View,
    objects: &Objects,
    mats: &[MaterialFrame],
    sorted: &SortedQueue,
    out: &mut Batches,
) {
    profile::zone_text!("batch", "view {} ({:?})", label, view.pass);
    let t = std::time::Instant::now();
    build_batches_parallel(view.pass, &sorted.queue, objects, mats, &mut out.scratch, &mut out.batches);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use rand::{Rng, SeedableRng};
        let mut objects = Objects::default();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(99);
        for _ in 0..n {
            objects.mesh.push(rng.gen_range(0..kinds));
            objects.material.push(rng.gen_range(0..kinds + 1));
            objects.cx.push(0.0);
        }
        let mats: Vec<MaterialFrame> = (0..4).map(|m| crate::sort::material_frame(m, 0, 0, false, m / 2)).collect();
        // Runs of equal state of varied lengths, like a sorted queue.
        let mut queue: Vec<u32> = (0..n as u32).collect();
        queue.sort_by_key(|&o| (objects.material[o as usize] / 2, objects.mesh[o as usize], o / 5000));
        for pass in [PassKind::Forward, PassKind::Shadow] {
            let mut serial = Vec::new();
            build_batches(pass, &queue, &objects, &mats, &mut serial);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut par = vec![Batch::default(); 3];
                pool.install(|| {
                    build_batches_parallel(pass, &queue, &objects, &mats, &mut BatchScratch::default(), &mut par)
                });
                assert_eq!(par, serial, "{pass:?} with {threads} threads, {n} items, {kinds} kinds");
            }
        }
    }
}
