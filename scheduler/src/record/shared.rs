//! Recording a forward view that draws a depth prepass's visible set
//! (`RendererConfig::reuse_prepass_cull`): no cull of its own, its draws read the records
//! and instances the prepass's cull wrote.
//!
//! The two views' buckets are the same (the same candidates in the same order: their keys
//! and draw states do not depend on whether the pass is a forward or a depth pass), so
//! bucket `b` of the view is record `b` of the prepass, and where the prepass was split for
//! occlusion culling record `n + b` holds what its second phase added. By the view's pass
//! both phases are done, so each multi-draw of the view draws the first phase's records
//! and then the second's, in one pass. With count buffers the prepass packed each of its
//! multi-draws; the view takes the packed records where its multi-draws are the prepass's
//! (the same runs of equal state in the same chunks, which holds where the materials'
//! forward pipelines differ where their depth pipelines do), and the plain ones elsewhere.

use switchyard_backend::Backend;

use super::{chunk_bounds, draw_groups, record_chunks, ChunkCounts, RecordCtx, RecordInput, RecordedPass};
use crate::gpu_cull::{group_count, Buckets, CountAt};
use crate::material::PassKind;
use crate::patch::FrameList;
use crate::profile;

/// The depth prepass whose visible set a forward view draws: its view index, its
/// instance and indirect buffers, and its phases (two where it is split for occlusion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SharedCull {
    pub(crate) view: usize,
    pub(crate) instances: switchyard_backend::BufferId,
    pub(crate) args: switchyard_backend::BufferId,
    pub(crate) halves: usize,
}

/// Records a view that draws `shared`'s visible set: its buckets' draws (`buckets`: the
/// prepass's) from the prepass's buffers; `counted`: the renderer draws with count
/// buffers.
pub(crate) fn record_shared_view<B: Backend>(
    input: &RecordInput<'_, B>,
    buckets: &Buckets,
    shared: &SharedCull,
    counted: bool,
    lists: &[FrameList],
    out: &mut RecordedPass<B::Chunk>,
) {
    profile::zone_text!("record", "view {} (the visible set of view {})", input.pass.label, shared.view);
    let t = std::time::Instant::now();
    out.error = None;
    out.counts = ChunkCounts::default();
    // Nothing to cull or upload: the prepass's cull writes what this view draws.
    out.upload.clear();
    out.cull_cmds.clear();
    (out.cull_chunk, out.pre) = (None, false);
    (out.late.on, out.late.compute_chunk) = (false, None);
    if let Some(gpu) = out.gpu.as_mut() {
        // Should the view cull on its own again, its lists and bits are stale by then.
        (gpu.uploaded, gpu.bits) = (None, false);
    }
    let batches = &buckets.buckets[..];
    let nb = batches.len();
    let ctx = input.ctx(shared.instances, shared.args, lists, true);
    chunk_bounds(&ctx, batches, &mut out.chunk_starts);
    // Moved out while the chunks record into `out` (`ctx` borrows it), put back after.
    let mut scratch = std::mem::take(&mut out.shared_scratch);
    let same_draws = counted && {
        let prepass = RecordCtx { pass: PassKind::Depth, ..ctx };
        chunk_bounds(&prepass, batches, &mut scratch.starts);
        draw_groups(&prepass, batches, &scratch.starts, &mut scratch.prepass);
        draw_groups(&ctx, batches, &out.chunk_starts, &mut scratch.groups);
        scratch.starts == out.chunk_starts && scratch.prepass == scratch.groups
    };
    let groups = group_count(&scratch.groups, nb);
    let at = |half| same_draws.then(|| CountAt::new(nb, groups, shared.halves, half));
    let ctx = RecordCtx {
        count: at(0).map(|c| (c, &scratch.groups[..])),
        then: (shared.halves == 2).then(|| (nb, at(1))),
        ..ctx
    };
    record_chunks(input, &ctx, batches, None, out);
    out.shared_scratch = scratch;
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

/// What [`record_shared_view`] compares its draws with the prepass's in (reused).
#[derive(Debug, Default)]
pub(crate) struct SharedScratch {
    starts: Vec<usize>,
    prepass: Vec<u32>,
    groups: Vec<u32>,
}
