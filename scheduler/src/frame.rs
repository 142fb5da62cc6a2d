//! Per-item frame logic shared by the parallel pipeline and the single-threaded reference:
//! sort keys, batching, and recording one chunk of batches into commands.

use switchyard_backend::{
    BindGroupId, BufferId, Command, DrawIndexedIndirectArgs, DynamicOffsets, IndexFormat, PipelineId,
    DRAW_INDEXED_INDIRECT_SIZE,
};

use crate::material::PassKind;
use crate::scene::Objects;
use crate::view::View;

/// Draw calls per recorded chunk (a chunk ends at the first bucket that would pass it).
/// Boundaries depend only on the batches, never on the number of threads, so the command
/// stream is the same for any thread count.
pub const CHUNK_DRAWS: usize = 96;
/// Most batches per chunk (bounds one chunk's work when buckets are large).
pub const CHUNK_BATCHES: usize = 4096;

/// Per-material data resolved once per frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaterialFrame {
    /// Variant mask (material | global keywords).
    pub variant: u32,
    /// Dense shader index.
    pub shader: u32,
    /// Alpha blended.
    pub transparent: bool,
    /// Shadow-pass state id: materials with equal shader and variant share it.
    pub shadow_state: u32,
    /// Sort-key bits of the pipeline state (hash of shader and variant).
    pub pipe_bits: u64,
    /// Sort-key bits of the material (its hash).
    pub material_bits: u64,
}

impl MaterialFrame {
    /// The frame data of dense material `material`; the key hashes are computed here,
    /// once per material and frame, not per queue item.
    pub fn new(material: u32, variant: u32, shader: u32, transparent: bool, shadow_state: u32) -> Self {
        Self {
            variant,
            shader,
            transparent,
            shadow_state,
            pipe_bits: mix(u64::from(shader) << 32 | u64::from(variant)) & 0x7fff,
            material_bits: mix(u64::from(material) | 1 << 40) & 0xffff,
        }
    }
}

/// Sort-key bits of dense mesh `mesh` (its hash), computed once when the mesh is created.
pub fn mesh_bits(mesh: u32) -> u64 {
    mix(u64::from(mesh) | 2 << 40) & 0xfff
}

/// A mesh's place in the shared buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshRange {
    /// First index in the shared index buffer.
    pub first_index: u32,
    /// Index count.
    pub index_count: u32,
    /// First vertex in the shared vertex buffer.
    pub base_vertex: i32,
}

/// What a material draws with this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameList {
    /// Forward pipeline.
    pub forward: PipelineId,
    /// Material bind group.
    pub group: BindGroupId,
    /// Dynamic offset of its constant slot in the frame ring.
    pub offset: u32,
    /// Shadow pipeline.
    pub shadow: PipelineId,
}

#[inline]
fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Quantized distance from the eye, 16 bits, 0 = nearest.
#[inline]
pub fn depth_bits(view: &View, cx: f32, cy: f32, cz: f32) -> u64 {
    let d = ((cx - view.eye.x).powi(2) + (cy - view.eye.y).powi(2) + (cz - view.eye.z).powi(2)).sqrt();
    let t = (d / view.far.max(1e-6)).clamp(0.0, 1.0);
    (t * 65535.0) as u64
}

/// The 64-bit sort key of one queue item.
///
/// Layout: `[63:60]` layer, `[59]` transparent; opaque: `[58:44]` pipeline-state hash,
/// `[43:28]` material hash, `[27:16]` mesh hash, `[15:0]` depth front to back;
/// transparent: `[58:43]` depth back to front, `[42:0]` state hashes. A collision only
/// costs ordering: batch boundaries compare real ids.
#[inline]
pub fn sort_key(pass: PassKind, layer: u8, m: &MaterialFrame, mesh_bits: u64, depth: u64) -> u64 {
    let pipe = m.pipe_bits;
    let mat = match pass {
        PassKind::Shadow => 0,
        PassKind::Forward => m.material_bits,
    };
    let top = u64::from(layer & 15) << 60;
    if m.transparent && pass == PassKind::Forward {
        top | 1 << 59 | (0xffff - depth) << 43 | pipe << 28 | mat << 12 | mesh_bits
    } else {
        top | pipe << 44 | mat << 28 | mesh_bits << 16 | depth
    }
}

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
fn batch_state(pass: PassKind, mats: &[MaterialFrame], material: u32) -> u32 {
    match pass {
        PassKind::Forward => material,
        PassKind::Shadow => mats[material as usize].shadow_state,
    }
}

/// Reusable memory of [`build_batches_parallel`].
#[derive(Debug, Default)]
pub struct BatchScratch {
    offsets: Vec<usize>,
    first_boundary: Vec<u32>,
}

/// [`build_batches`] on the current rayon pool: boundaries are counted per block of the
/// queue, then each block writes its batches into its own range of `out`. The result is
/// identical to the serial version.
pub fn build_batches_parallel(
    pass: PassKind,
    queue: &[u32],
    objects: &Objects,
    mats: &[MaterialFrame],
    scratch: &mut BatchScratch,
    out: &mut Vec<Batch>,
) {
    use rayon::prelude::*;
    let n = queue.len();
    // About two blocks per worker (at least 4k items each): batches are found per block
    // and joined at block edges, so the result does not depend on the block size.
    let block = (n / (2 * rayon::current_num_threads())).clamp(4096, crate::par::BLOCK);
    let blocks = n.div_ceil(block);
    if blocks <= 1 {
        build_batches(pass, queue, objects, mats, out);
        return;
    }
    let state = |q: usize| {
        let o = queue[q] as usize;
        (batch_state(pass, mats, objects.material[o]), objects.mesh[o])
    };
    let is_boundary = |q: usize| q == 0 || state(q) != state(q - 1);
    // Per block: how many batches start in it, and where the first one starts.
    scratch.offsets.clear();
    scratch.offsets.resize(blocks + 1, 0);
    scratch.first_boundary.clear();
    scratch.first_boundary.resize(blocks, n as u32);
    scratch.offsets[1..].par_iter_mut().zip(scratch.first_boundary.par_iter_mut()).enumerate().for_each(
        |(b, (count, first))| {
            let range = b * block..((b + 1) * block).min(n);
            *count = 0;
            for q in range {
                if is_boundary(q) {
                    if *count == 0 {
                        *first = q as u32;
                    }
                    *count += 1;
                }
            }
        },
    );
    for b in 0..blocks {
        scratch.offsets[b + 1] += scratch.offsets[b];
    }
    // Where the batch after block b's last one starts: the next block's first boundary.
    let mut next = n as u32;
    let mut ends = std::mem::take(&mut scratch.first_boundary);
    for b in (0..blocks).rev() {
        let first = ends[b];
        ends[b] = next;
        if first != n as u32 {
            next = first;
        }
    }
    crate::par::set_len(out, scratch.offsets[blocks]);
    crate::par::fill_ranges(&scratch.offsets, &mut out[..], &|b, dst: &mut [Batch]| {
        let range = b * block..((b + 1) * block).min(n);
        let mut w = 0;
        for q in range {
            if is_boundary(q) {
                if w > 0 {
                    dst[w - 1].count = q as u32 - dst[w - 1].first;
                }
                let o = queue[q] as usize;
                dst[w] = Batch { first: q as u32, count: 0, mesh: objects.mesh[o], material: objects.material[o] };
                w += 1;
            }
        }
        if w > 0 {
            dst[w - 1].count = ends[b] - dst[w - 1].first;
        }
    });
    scratch.first_boundary = ends;
}

/// Splits a sorted queue (dense object indices) into batches.
pub fn build_batches(pass: PassKind, queue: &[u32], objects: &Objects, mats: &[MaterialFrame], out: &mut Vec<Batch>) {
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

/// Buffers and bindings one chunk records against.
#[derive(Clone, Copy, Debug)]
pub struct RecordCtx<'a> {
    /// The pass.
    pub pass: PassKind,
    /// Group 0 of this view.
    pub view_group: BindGroupId,
    /// Dynamic offset of this view's globals.
    pub view_offset: u32,
    /// Shared vertex buffer.
    pub vertices: BufferId,
    /// Shared index buffer.
    pub indices: BufferId,
    /// This view's instance buffer (u32 object index per instance).
    pub instances: BufferId,
    /// This view's indirect argument buffer.
    pub args: BufferId,
    /// Use `MultiDrawIndexedIndirect` per state bucket.
    pub multi_draw: bool,
    /// Meshes by dense index.
    pub meshes: &'a [MeshRange],
    /// Frame lists by dense material index.
    pub lists: &'a [FrameList],
}

/// What one chunk recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkCounts {
    /// Draw API calls.
    pub draw_calls: u32,
    /// State changes emitted.
    pub state_changes: u32,
}

/// The draw arguments of one batch (what its indirect record holds).
#[inline]
pub fn draw_args(meshes: &[MeshRange], b: &Batch) -> DrawIndexedIndirectArgs {
    let m = &meshes[b.mesh as usize];
    DrawIndexedIndirectArgs {
        index_count: m.index_count,
        instance_count: b.count,
        first_index: m.first_index,
        base_vertex: m.base_vertex,
        first_instance: b.first,
    }
}

/// The pipeline and material binding a batch draws with.
#[inline]
fn draw_state(ctx: &RecordCtx<'_>, b: &Batch) -> (PipelineId, Option<(BindGroupId, u32)>) {
    let l = &ctx.lists[b.material as usize];
    match ctx.pass {
        PassKind::Forward => (l.forward, Some((l.group, l.offset))),
        PassKind::Shadow => (l.shadow, None),
    }
}

/// Cuts a view's batches into chunks: a new chunk starts where adding the next state
/// bucket (multi-draw) or batch (per-batch draws) would pass [`CHUNK_DRAWS`] draw calls,
/// or the chunk holds [`CHUNK_BATCHES`] batches. `starts` receives each chunk's first
/// batch index, then `batches.len()`.
pub fn chunk_bounds(ctx: &RecordCtx<'_>, batches: &[Batch], starts: &mut Vec<usize>) {
    starts.clear();
    starts.push(0);
    if batches.is_empty() {
        return;
    }
    let (mut calls, mut start) = (0, 0);
    let mut prev = None;
    for (i, b) in batches.iter().enumerate() {
        let state = draw_state(ctx, b);
        let mut new_call = !ctx.multi_draw || prev != Some(state);
        if i > start && ((new_call && calls >= CHUNK_DRAWS) || i - start >= CHUNK_BATCHES) {
            starts.push(i);
            start = i;
            calls = 0;
            new_call = true; // a chunk binds its own state
        }
        calls += usize::from(new_call);
        prev = Some(state);
    }
    starts.push(batches.len());
}

/// Records batches `[b0, b0 + batches.len())` of a view into `cmds`. Their indirect
/// arguments are the view's argument records `b0..` (see [`draw_args`]).
///
/// The view's instance data is its sorted queue itself (one object index per item), so a
/// batch's instances are the range `first..first + count`.
pub fn record_chunk(ctx: &RecordCtx<'_>, batches: &[Batch], b0: usize, cmds: &mut Vec<Command>) -> ChunkCounts {
    cmds.clear();
    let mut counts = ChunkCounts::default();
    if batches.is_empty() {
        return counts;
    }

    cmds.push(Command::SetBindGroup { index: 0, group: ctx.view_group, offsets: DynamicOffsets::one(ctx.view_offset) });
    cmds.push(Command::SetVertexBuffer { slot: 0, buffer: ctx.vertices, offset: 0 });
    cmds.push(Command::SetVertexBuffer { slot: 1, buffer: ctx.instances, offset: 0 });
    cmds.push(Command::SetIndexBuffer { buffer: ctx.indices, format: IndexFormat::Uint32, offset: 0 });
    counts.state_changes += 4;

    // Packed state words of what is bound: compared as integers to drop redundant changes.
    let mut bound_pipeline = None;
    let mut bound_group = None;
    let mut i = 0;
    while i < batches.len() {
        let (pipeline, group) = draw_state(ctx, &batches[i]);
        // The state bucket: following batches with the same pipeline and material binding.
        let mut j = i + 1;
        while j < batches.len() && draw_state(ctx, &batches[j]) == (pipeline, group) {
            j += 1;
        }
        if bound_pipeline != Some(pipeline) {
            cmds.push(Command::SetPipeline(pipeline));
            bound_pipeline = Some(pipeline);
            counts.state_changes += 1;
        }
        if let Some((g, off)) = group {
            if bound_group != Some((g, off)) {
                cmds.push(Command::SetBindGroup { index: 1, group: g, offsets: DynamicOffsets::one(off) });
                bound_group = Some((g, off));
                counts.state_changes += 1;
            }
        }
        if ctx.multi_draw {
            cmds.push(Command::MultiDrawIndexedIndirect {
                buffer: ctx.args,
                offset: (b0 + i) as u64 * DRAW_INDEXED_INDIRECT_SIZE,
                count: (j - i) as u32,
            });
            counts.draw_calls += 1;
        } else {
            for b in &batches[i..j] {
                let a = draw_args(ctx.meshes, b);
                cmds.push(Command::DrawIndexed {
                    first_index: a.first_index,
                    index_count: a.index_count,
                    base_vertex: a.base_vertex,
                    first_instance: a.first_instance,
                    instance_count: a.instance_count,
                });
                counts.draw_calls += 1;
            }
        }
        i = j;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_batches_equal_serial_batches() {
        let n = if cfg!(miri) { 40_000 } else { 200_000 };
        let mut objects = Objects::default();
        let mut s = 99u64;
        for _ in 0..n {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            objects.mesh.push(((s >> 40) % 3) as u32);
            objects.material.push(((s >> 50) % 4) as u32);
            objects.cx.push(0.0);
        }
        let mats: Vec<MaterialFrame> = (0..4).map(|m| MaterialFrame::new(m, 0, 0, false, m / 2)).collect();
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
                assert_eq!(par, serial, "{pass:?} with {threads} threads");
            }
        }
    }
}
