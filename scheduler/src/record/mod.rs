//! Stage 5, record: a view's batches become backend command chunks, in parallel.
//!
//! The batches are cut into contiguous chunks whose boundaries depend only on the batches
//! ([`chunk_bounds`]), never on the thread count; each worker records one chunk into a
//! reused command vector and hands it to [`Backend::record`]. Chunks are submitted in
//! order, so the command stream is the same for 1 thread and for 64.
//!
//! The view's instance data is its sorted queue itself (one object index per item), and
//! its indirect records follow the batches ([`draw_args`]): with multi-draw-indirect a
//! state bucket is one API call whatever its mesh count.

use switchyard_backend::{
    Backend, BindGroupId, BufferId, BufferUsage, ChunkPosition, Command, CreateError, Digest, DrawIndexedIndirectArgs,
    PassDesc, Resource,
};

use crate::batch::{Batch, Batches};
use crate::error::RenderError;
use crate::gpu_buffer::{grow, GrowBuffer};
use crate::material::PassKind;
use crate::occlusion::LateHalf;
use crate::patch::FrameList;
use crate::profile;
use crate::sort::SortedQueue;
use crate::submit::ViewUpload;
use crate::view::View;

mod chunks;
mod shared;

pub(crate) use chunks::{chunk_bounds, draw_groups};
use chunks::{prepare_windows, record_chunks, write_args};
#[cfg(feature = "reference")]
pub(crate) use chunks::{CHUNK_BATCHES, CHUNK_DRAWS};
pub(crate) use shared::{record_shared_view, SharedCull};

/// A mesh's place in the shared buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MeshRange {
    /// First index in the shared index buffer.
    pub(crate) first_index: u32,
    /// Index count.
    pub(crate) index_count: u32,
    /// First vertex in the shared vertex buffer.
    pub(crate) base_vertex: i32,
}

/// Buffers and bindings one chunk records against.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordCtx<'a> {
    /// The pass.
    pub(crate) pass: PassKind,
    /// Group 0 of this view.
    pub(crate) view_group: BindGroupId,
    /// Dynamic offset of this view's globals.
    pub(crate) view_offset: u32,
    /// Group 2 (the engine's buffers) and the empty group 1 of a shadow pass.
    pub(crate) scene_groups: Option<(BindGroupId, BindGroupId)>,
    /// Shared vertex buffer.
    pub(crate) vertices: BufferId,
    /// Shared index buffer.
    pub(crate) indices: BufferId,
    /// This view's instance buffer (u32 object index per instance).
    pub(crate) instances: BufferId,
    /// This view's indirect argument buffer.
    pub(crate) args: BufferId,
    /// The record of batch 0 in `args` (the second half of an occlusion-culled view draws
    /// from the records after the first half's).
    pub(crate) args_first: usize,
    /// Use `MultiDrawIndexedIndirect` per state bucket.
    pub(crate) multi_draw: bool,
    /// Draw every batch from its indirect record (the GPU wrote its instances), one
    /// indirect draw each where multi-draw is off.
    pub(crate) indirect: bool,
    /// Multi-draws through count buffers (`gpu_cull/count.rs`): where this half's
    /// compacted records and counts are, and each batch's multi-draw ([`draw_groups`]).
    pub(crate) count: Option<(crate::gpu_cull::CountAt, &'a [u32])>,
    /// A second set of records each bucket draws from right after the first (a view
    /// drawing both phases of a prepass's occlusion cull: `shared.rs`): their first
    /// record, and with count buffers their compacted records and counts.
    pub(crate) then: Option<(usize, Option<crate::gpu_cull::CountAt>)>,
    /// Meshes by dense index.
    pub(crate) meshes: &'a [MeshRange],
    /// Frame lists by dense material index.
    pub(crate) lists: &'a [FrameList],
}

/// What one chunk recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ChunkCounts {
    /// Draw API calls.
    pub(crate) draw_calls: u32,
    /// State changes emitted.
    pub(crate) state_changes: u32,
}

/// The draw arguments of one batch (what its indirect record holds).
#[inline]
pub(crate) fn draw_args(meshes: &[MeshRange], b: &Batch) -> DrawIndexedIndirectArgs {
    let m = &meshes[b.mesh as usize];
    DrawIndexedIndirectArgs {
        index_count: m.index_count,
        instance_count: b.count,
        first_index: m.first_index,
        base_vertex: m.base_vertex,
        first_instance: b.first,
    }
}

/// The record stage's output for one view: its chunks in order, the commands behind them,
/// and the instance and indirect data they draw from.
#[derive(Debug)]
pub(crate) struct RecordedPass<C> {
    chunk_starts: Vec<usize>,
    /// Each window's chunk starts and where its items start (`prepare_windows`, reused).
    window_starts: Vec<Vec<usize>>,
    window_items: Vec<usize>,
    /// Each chunk's commands (kept for the reference comparison and the digest).
    pub(crate) cmds: Vec<Vec<Command>>,
    pub(crate) chunks: Vec<Option<C>>,
    /// Each chunk's digest, where the renderer digests the stream.
    pub(crate) digests: Vec<Digest>,
    /// Instance and indirect data (swapped with the frame packet's around the jobs).
    pub(crate) upload: ViewUpload,
    /// This view's instance and indirect buffers, grown before the jobs run.
    pub(crate) instance_buf: Option<GrowBuffer>,
    pub(crate) args_buf: Option<GrowBuffer>,
    /// Where the view is culled on the GPU: its buffers and bind group, and its cull's
    /// commands and chunk (in the frame's cull pass).
    pub(crate) gpu: Option<crate::gpu_cull::ViewCull>,
    pub(crate) cull_cmds: Vec<Command>,
    pub(crate) cull_chunk: Option<C>,
    pub(crate) cull_digest: Digest,
    /// The cull chunk goes into a compute pass of its own before the view's pass (a
    /// shadow view culled to the casters of its receivers) instead of the cull pass.
    pub(crate) pre: bool,
    /// Where the view is culled by occlusion (`occlusion.rs`): its depth pyramid, the
    /// compute pass between its halves (the pyramid and the second cull), and the second
    /// half's chunks.
    pub(crate) occlusion: Option<crate::occlusion::ViewOcclusion>,
    pub(crate) late: LateHalf<C>,
    /// What a view drawing a prepass's visible set compares its draws in (`shared.rs`).
    shared_scratch: shared::SharedScratch,
    pub(crate) counts: ChunkCounts,
    pub(crate) error: Option<RenderError>,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl<C> Default for RecordedPass<C> {
    fn default() -> Self {
        Self {
            chunk_starts: Vec::new(),
            window_starts: Vec::new(),
            window_items: Vec::new(),
            cmds: Vec::new(),
            chunks: Vec::new(),
            digests: Vec::new(),
            upload: ViewUpload::default(),
            instance_buf: None,
            args_buf: None,
            gpu: None,
            cull_cmds: Vec::new(),
            cull_chunk: None,
            cull_digest: Digest::default(),
            pre: false,
            occlusion: None,
            late: LateHalf::default(),
            shared_scratch: Default::default(),
            counts: ChunkCounts::default(),
            error: None,
            ms: 0.0,
        }
    }
}

/// What the record stage of one view reads besides its inputs.
pub(crate) struct RecordInput<'a, B: Backend> {
    pub(crate) backend: &'a B,
    pub(crate) view: &'a View,
    pub(crate) pass: &'a PassDesc,
    /// Group 0 of this view and the dynamic offset of its globals.
    pub(crate) view_group: (BindGroupId, u32),
    /// Group 2 (the engine's buffers) and the empty group 1 of a shadow pass.
    pub(crate) scene_groups: Option<(BindGroupId, BindGroupId)>,
    /// Shared vertex and index buffers.
    pub(crate) mesh_buffers: (BufferId, BufferId),
    pub(crate) multi_draw: bool,
    pub(crate) meshes: &'a [MeshRange],
    /// Digest every chunk's commands.
    pub(crate) digest: bool,
}

impl<'a, B: Backend> RecordInput<'a, B> {
    /// What the chunks of this view are recorded with: its instance and indirect buffers
    /// (`instances`, `args`), its materials' frame lists, and whether every batch draws
    /// from its indirect record (the GPU culled the view).
    fn ctx(&self, instances: BufferId, args: BufferId, lists: &'a [FrameList], indirect: bool) -> RecordCtx<'a> {
        RecordCtx {
            pass: self.view.pass,
            view_group: self.view_group.0,
            view_offset: self.view_group.1,
            scene_groups: self.scene_groups,
            vertices: self.mesh_buffers.0,
            indices: self.mesh_buffers.1,
            instances,
            args,
            args_first: 0,
            multi_draw: self.multi_draw,
            indirect,
            count: None,
            then: None,
            meshes: self.meshes,
            lists,
        }
    }
}

/// Records `view`'s batches into chunks on the current pool.
pub(crate) fn record_view<B: Backend>(
    input: &RecordInput<'_, B>,
    sorted: &SortedQueue,
    batches: &Batches,
    lists: &[FrameList],
    out: &mut RecordedPass<B::Chunk>,
) {
    profile::zone_text!("record", "view {} ({:?})", input.pass.label, input.view.pass);
    let t = std::time::Instant::now();
    out.error = None;
    out.counts = ChunkCounts::default();
    let (Some(inst_id), Some(args_id)) = (out.instance_buf.as_ref().map(|g| g.id), out.args_buf.as_ref().map(|g| g.id))
    else {
        unreachable!("the renderer grows a view's buffers before its jobs run");
    };
    let batches = &batches.batches[..];
    let up = &mut out.upload;
    up.instance_buffer = Some(inst_id);
    up.args_buffer = Some(args_id);
    up.lists.1.clear();
    up.params = None;
    up.late_params = None;
    up.levels.1.clear();
    out.late.on = false;
    out.pre = false;
    let ctx = input.ctx(inst_id, args_id, lists, false);
    // The instance data is the sorted queue; the indirect records follow the batches.
    prepare_windows(&ctx, &sorted.queue, batches, out);
    record_chunks(input, &ctx, batches, Some(&sorted.keys), out);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

/// Records a view culled on the GPU: its cull's dispatches into its cull chunk, and one
/// indirect draw per bucket (a multi-draw per state run where the backend has them)
/// whose instances the GPU writes. Uploads the bucket lists where they changed or never
/// reached the view's buffer, and this frame's planes. `receivers`: a shadow view's
/// receivers' clip-to-world matrix, where it is culled to their casters (its pyramid is
/// then the receivers', built in the cull chunk before the cull).
#[allow(clippy::too_many_arguments)]
pub(crate) fn record_gpu_view<B: Backend>(
    input: &RecordInput<'_, B>,
    cull: &crate::gpu_cull::CullObjects,
    frustum: &switchyard_kernels::cull::Frustum,
    buckets: &crate::gpu_cull::Buckets,
    slot: u32,
    receivers: Option<&glam::Mat4>,
    lists: &[FrameList],
    out: &mut RecordedPass<B::Chunk>,
) {
    profile::zone_text!("record", "view {} ({:?}, culled on the GPU)", input.pass.label, input.view.pass);
    let t = std::time::Instant::now();
    out.error = None;
    out.counts = ChunkCounts::default();
    let (Some(inst_id), Some(args_id), Some(gpu)) =
        (out.instance_buf.as_ref().map(|g| g.id), out.args_buf.as_ref().map(|g| g.id), out.gpu.as_mut())
    else {
        unreachable!("the renderer grows a GPU-culled view's buffers before its jobs run");
    };
    let up = &mut out.upload;
    // The GPU writes the instances and the instance fields of the records.
    up.instance_buffer = None;
    up.instances.clear();
    up.args_buffer = Some(args_id);
    let batches = &buckets.buckets[..];
    write_args(input.meshes, batches, &mut up.args);
    up.args.iter_mut().for_each(|a| (a.instance_count, a.first_instance) = (0, 0));
    // The chunk cuts, and with count buffers the multi-draws the GPU compacts for.
    let ctx = input.ctx(inst_id, args_id, lists, true);
    chunk_bounds(&ctx, batches, &mut out.chunk_starts);
    gpu.groups_now.clear();
    if cull.counts() {
        debug_assert!(input.multi_draw, "count buffers come with multi-draw");
        draw_groups(&ctx, batches, &out.chunk_starts, &mut gpu.groups_now);
    }
    up.lists.1.clear();
    if buckets.rebuilt || gpu.uploaded != Some(gpu.lists.id) || gpu.groups != gpu.groups_now {
        up.lists.0 = Some(gpu.lists.id);
        up.lists.1.clone_from(&buckets.lists);
        up.lists.1.extend_from_slice(&gpu.groups_now);
        gpu.uploaded = Some(gpu.lists.id);
        std::mem::swap(&mut gpu.groups, &mut gpu.groups_now);
    }
    // Taken out while the chunks record (they borrow it; `out` is written), put back below.
    let groups = std::mem::take(&mut gpu.groups);
    // Occlusion culling: two phases, the second's records after the first's. Receivers:
    // one phase after the receiver pyramid.
    let pyramid_slot = cull.occlusion.as_ref().zip(out.occlusion.as_mut());
    let (split, recv) = match receivers {
        Some(m) => (None, pyramid_slot.map(|(o, v)| (o, v, m))),
        None => (pyramid_slot, None),
    };
    let pyramid = split.as_ref().map(|(_, v)| v.pyramid).or(recv.as_ref().map(|(_, v, _)| v.pyramid));
    let occluding = pyramid.as_ref().map(|pyramid| crate::occlusion::Occluding {
        phase: if recv.is_some() { crate::occlusion::RECEIVERS_PHASE } else { 1 },
        reset: buckets.rebuilt || !gpu.bits,
        view_proj: &input.view.view_proj,
        pyramid,
    });
    gpu.bits = split.is_some();
    let nb = batches.len();
    let ngroups = crate::gpu_cull::group_count(&groups, nb);
    let count = cull.counts().then(|| crate::gpu_cull::CountAt::new(nb, ngroups, 1 + usize::from(split.is_some()), 0));
    let at = u64::from(slot) * crate::gpu_cull::PARAMS_SLOT;
    up.params = Some((cull.params_buf, at, crate::gpu_cull::params(frustum, buckets, occluding, count)));
    up.late_params = None;
    up.levels.1.clear();
    out.cull_cmds.clear();
    out.pre = recv.is_some();
    if let Some((objects, v, clip_to_world)) = recv {
        // The matrices change every frame: the level parameters go up every frame.
        up.levels.0 = Some(v.levels);
        v.pyramid.receiver_bytes(v.source, clip_to_world, &input.view.view_proj, &mut up.levels.1);
        if !buckets.candidates().is_empty() {
            objects.receivers_commands(v, &mut out.cull_cmds);
        }
    }
    let phase = if out.pre { crate::occlusion::RECEIVERS_PHASE } else { 1 };
    cull.commands(gpu.group, slot, buckets, phase, &mut out.cull_cmds);
    out.cull_chunk = None;
    let late = &mut out.late;
    (late.on, late.compute_chunk) = (false, None);
    if let (Some((objects, v)), Some(o)) = (split, occluding) {
        up.args.extend_from_within(..);
        let late_at = (crate::frame_graph::MAX_VIEWS as u64 + u64::from(slot)) * crate::gpu_cull::PARAMS_SLOT;
        let late_count = count.map(|c| c.second(nb, ngroups));
        let o = Some(crate::occlusion::Occluding { phase: 2, ..o });
        let params = crate::gpu_cull::params(frustum, buckets, o, late_count);
        up.late_params = Some((cull.params_buf, late_at, params));
        if !v.levels_written {
            up.levels.0 = Some(v.levels);
            v.pyramid.level_bytes(&mut up.levels.1);
            v.levels_written = true;
        }
        late.on = true;
        late.compute_cmds.clear();
        objects.pyramid_commands(v, &mut late.compute_cmds);
        cull.commands(gpu.group, slot, buckets, 2, &mut late.compute_cmds);
        if input.digest {
            late.compute_digest = Digest::of_commands(&late.compute_cmds);
        }
        match input.backend.record(&cull.occlusion_pass, ChunkPosition::SINGLE, &late.compute_cmds) {
            Ok(c) => late.compute_chunk = Some(c),
            Err(e) => out.error = Some(e.into()),
        }
    }
    if input.digest {
        out.cull_digest = Digest::of_commands(&out.cull_cmds);
    }
    if !out.cull_cmds.is_empty() {
        let pass = if out.pre { &cull.receivers_pass } else { &cull.pass };
        match input.backend.record(pass, ChunkPosition::SINGLE, &out.cull_cmds) {
            Ok(c) => out.cull_chunk = Some(c),
            Err(e) => out.error = Some(e.into()),
        }
    }
    let ctx = RecordCtx { count: count.map(|c| (c, &groups[..])), ..ctx };
    let halves = out.late.on.then(|| crate::occlusion::halves(input.pass));
    let first = RecordInput { pass: halves.as_ref().map_or(input.pass, |h| &h[0]), ..*input };
    if out.error.is_none() {
        record_chunks(&first, &ctx, batches, None, out);
    }
    if let (None, Some([_, second])) = (&out.error, &halves) {
        // The second half: the same draws at the second records, recorded in the first
        // half's place and moved into the late half.
        let first = out.counts;
        let late = &mut out.late;
        std::mem::swap(&mut out.cmds, &mut late.cmds);
        std::mem::swap(&mut out.chunks, &mut late.chunks);
        std::mem::swap(&mut out.digests, &mut late.digests);
        let input = RecordInput { pass: second, ..*input };
        let count = ctx.count.map(|(c, g)| (c.second(nb, ngroups), g));
        record_chunks(&input, &RecordCtx { args_first: nb, count, ..ctx }, batches, None, out);
        let late = &mut out.late;
        std::mem::swap(&mut out.cmds, &mut late.cmds);
        std::mem::swap(&mut out.chunks, &mut late.chunks);
        std::mem::swap(&mut out.digests, &mut late.digests);
        out.counts.draw_calls += first.draw_calls;
        out.counts.state_changes += first.state_changes;
    }
    if let Some(gpu) = out.gpu.as_mut() {
        gpu.groups = groups;
    }
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

impl<C> RecordedPass<C> {
    /// A cached pass skipped this frame (`Pass::cached`): no chunk, no cull, nothing to
    /// upload. Its bucket lists go up again with the next frame that draws it.
    pub(crate) fn record_nothing(&mut self) {
        self.error = None;
        self.counts = ChunkCounts::default();
        self.cmds.clear();
        self.chunks.clear();
        self.digests.clear();
        self.upload.clear();
        self.cull_cmds.clear();
        (self.cull_chunk, self.pre, self.late.on, self.ms) = (None, false, false, 0.0);
        if let Some(gpu) = &mut self.gpu {
            gpu.uploaded = None;
        }
    }

    /// Grows this view's instance and indirect buffers to `need` objects, with `usage`
    /// added (an occlusion-culled view's second phase writes a second set of each), and for
    /// a view culled on the GPU (`gpu`: the cull objects, what its pyramid is built from,
    /// and whether it is split for occlusion) the cull's own buffers and bind group. What
    /// was replaced goes into `gone` even when a later step fails, so the caller retires
    /// it either way.
    pub(crate) fn grow_buffers<B: Backend>(
        &mut self,
        b: &B,
        need: u64,
        usage: BufferUsage,
        gpu: Option<(&crate::gpu_cull::CullObjects, Option<crate::occlusion::PyramidSource>, bool)>,
        gone: &mut Vec<Resource>,
    ) -> Result<(), CreateError> {
        let halves = if matches!(gpu, Some((_, _, true))) { 2 } else { 1 };
        // With count buffers: each record's compacted copy and the counts after them.
        let record = match gpu {
            Some((c, _, _)) if c.counts() => crate::gpu_cull::COUNTED_ARGS_BYTES,
            _ => switchyard_backend::DRAW_INDEXED_INDIRECT_SIZE,
        };
        for (buffer, size, usage, label) in [
            (&mut self.instance_buf, 4 * halves, BufferUsage::VERTEX | usage, "instances"),
            (&mut self.args_buf, record * halves, BufferUsage::INDIRECT | usage, "indirect"),
        ] {
            gone.extend(grow(b, buffer, need * size, usage, label)?.map(Resource::Buffer));
        }
        let Some((cull, pyramid, _)) = gpu else { return Ok(()) };
        let (Some(i), Some(a)) = (&self.instance_buf, &self.args_buf) else {
            unreachable!("both buffers were grown above");
        };
        let bufs = (i.id, a.id);
        crate::gpu_cull::prepare_view(b, cull, bufs, &mut self.gpu, &mut self.occlusion, need, pyramid, gone)
    }
}
