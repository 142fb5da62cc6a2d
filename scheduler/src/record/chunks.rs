//! Chunks: where a view's batches are cut ([`chunk_bounds`]) and how each chunk becomes
//! commands ([`record_chunk`]) and a backend chunk, all chunks in parallel.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use switchyard_backend::{
    Backend, BindGroupId, ChunkPosition, Command, Digest, DrawIndexedIndirectArgs, DynamicOffsets, IndexFormat,
    PipelineId, DRAW_INDEXED_INDIRECT_SIZE,
};

use super::{draw_args, ChunkCounts, MeshRange, RecordCtx, RecordInput, RecordedPass};
use crate::batch::Batch;
use crate::error::RenderError;
use crate::material::PassKind;
use crate::profile;
use crate::sort::key::SortKey;

/// Draw calls per recorded chunk (a chunk ends at the first bucket that would pass it).
/// Boundaries depend only on the batches, never on the number of threads, so the command
/// stream is the same for any thread count.
pub(crate) const CHUNK_DRAWS: usize = 96;
/// Most batches per chunk, and the window a chunk never crosses: a chunk starts at every
/// multiple of it, so each window's chunks are cut on their own, in parallel. It bounds one
/// chunk's work where buckets are large (multi-draw: the city's main view, 8.3k batches,
/// records in 9 chunks, against 3 with a limit of 4096 counted from each cut; run 33).
pub(crate) const CHUNK_BATCHES: usize = 1024;

/// The pipeline and material binding a batch draws with.
#[inline]
fn draw_state(ctx: &RecordCtx<'_>, b: &Batch) -> (PipelineId, Option<(BindGroupId, Option<u32>)>) {
    let l = &ctx.lists[b.material as usize];
    match ctx.pass {
        PassKind::Forward => (l.forward, Some((l.group, l.offset))),
        PassKind::Depth => (l.depth, Some((l.group, l.offset))),
        PassKind::Shadow => (l.shadow, None),
    }
}

/// Cuts a view's batches into chunks: a new chunk starts at every multiple of
/// [`CHUNK_BATCHES`], and where adding the next state bucket (multi-draw) or batch
/// (per-batch draws) would pass [`CHUNK_DRAWS`] draw calls. `starts` receives each chunk's
/// first batch index, then `batches.len()`.
pub(crate) fn chunk_bounds(ctx: &RecordCtx<'_>, batches: &[Batch], starts: &mut Vec<usize>) {
    starts.clear();
    for (w, window) in batches.chunks(CHUNK_BATCHES).enumerate() {
        window_starts(ctx, window, w * CHUNK_BATCHES, starts);
    }
    close_starts(starts, batches.len());
}

/// Ends a list of chunk starts with the batch count; no batches, no chunk: `[0]`.
fn close_starts(starts: &mut Vec<usize>, batches: usize) {
    starts.push(if starts.is_empty() { 0 } else { batches });
}

/// Appends the chunk starts of one window of batches (`window`, whose first batch is
/// batch `base`; see [`chunk_bounds`]).
fn window_starts(ctx: &RecordCtx<'_>, window: &[Batch], base: usize, starts: &mut Vec<usize>) {
    starts.push(base);
    let (mut calls, mut start) = (0, 0);
    let mut prev = None;
    for (i, b) in window.iter().enumerate() {
        let state = draw_state(ctx, b);
        let mut new_call = !ctx.multi_draw || prev != Some(state);
        if i > start && new_call && calls >= CHUNK_DRAWS {
            starts.push(base + i);
            start = i;
            calls = 0;
            new_call = true; // a chunk binds its own state
        }
        calls += usize::from(new_call);
        prev = Some(state);
    }
}

/// The multi-draws [`record_chunk`] issues for `batches` cut at `starts` ([`chunk_bounds`]):
/// each a run of equal draw state within a chunk. Into `out`: each batch's multi-draw
/// (numbered from 0 in order), then each multi-draw's first batch, then `batches.len()`
/// (what the GPU's count compaction reads: `gpu_cull/count.rs`).
pub(crate) fn draw_groups(ctx: &RecordCtx<'_>, batches: &[Batch], starts: &[usize], out: &mut Vec<u32>) {
    out.clear();
    let mut groups = 0u32;
    for c in starts.windows(2) {
        let mut prev = None;
        for b in &batches[c[0]..c[1]] {
            let state = draw_state(ctx, b);
            groups += u32::from(prev != Some(state));
            prev = Some(state);
            out.push(groups - 1);
        }
    }
    let n = out.len();
    for b in 0..n {
        if b == 0 || out[b] != out[b - 1] {
            out.push(b as u32);
        }
    }
    out.push(n as u32);
}

/// Records batches `[b0, b0 + batches.len())` of a view into `cmds`. Their indirect
/// arguments are the view's argument records `b0..` (see [`draw_args`]).
///
/// The view's instance data is its sorted queue itself (one object index per item), so a
/// batch's instances are the range `first..first + count`.
pub(super) fn record_chunk(ctx: &RecordCtx<'_>, batches: &[Batch], b0: usize, cmds: &mut Vec<Command>) -> ChunkCounts {
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
    if let Some((group, empty)) = ctx.scene_groups {
        if ctx.pass == PassKind::Shadow {
            cmds.push(Command::SetBindGroup { index: 1, group: empty, offsets: DynamicOffsets::NONE });
            counts.state_changes += 1;
        }
        cmds.push(Command::SetBindGroup { index: 2, group, offsets: DynamicOffsets::NONE });
        counts.state_changes += 1;
    }

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
                cmds.push(Command::SetBindGroup {
                    index: 1,
                    group: g,
                    offsets: off.map_or(DynamicOffsets::NONE, DynamicOffsets::one),
                });
                bound_group = Some((g, off));
                counts.state_changes += 1;
            }
        }
        // The records drawn: the first set, then (a view drawing both phases of a
        // prepass's cull) the second.
        let sets = std::iter::once((ctx.args_first, ctx.count.map(|c| c.0))).chain(ctx.then);
        if ctx.multi_draw {
            for (args_first, at) in sets {
                let record = |first: usize| (first + b0 + i) as u64 * DRAW_INDEXED_INDIRECT_SIZE;
                cmds.push(match (at, ctx.count) {
                    // The GPU packed the multi-draw's non-empty records from its first
                    // one's place in the compacted region, and wrote their number.
                    (Some(at), Some((_, groups))) => Command::MultiDrawIndexedIndirectCount {
                        buffer: ctx.args,
                        offset: record(at.compact),
                        count_buffer: ctx.args,
                        count_offset: (at.counts + groups[b0 + i] as usize) as u64 * 4,
                        max_count: (j - i) as u32,
                    },
                    _ => Command::MultiDrawIndexedIndirect {
                        buffer: ctx.args,
                        offset: record(args_first),
                        count: (j - i) as u32,
                    },
                });
                counts.draw_calls += 1;
            }
        } else if ctx.indirect {
            for (args_first, _) in sets {
                for b in args_first + b0 + i..args_first + b0 + j {
                    cmds.push(Command::MultiDrawIndexedIndirect {
                        buffer: ctx.args,
                        offset: b as u64 * DRAW_INDEXED_INDIRECT_SIZE,
                        count: 1,
                    });
                    counts.draw_calls += 1;
                }
            }
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

/// One parallel pass per window of [`CHUNK_BATCHES`] batches: the window's indirect
/// records, its chunk starts ([`chunk_bounds`]), and the instances of the queue items its
/// batches hold (the sorted queue itself). Leaves `out.chunk_starts` as `chunk_bounds`
/// would.
pub(super) fn prepare_windows<C>(ctx: &RecordCtx<'_>, queue: &[u32], batches: &[Batch], out: &mut RecordedPass<C>) {
    use switchyard_kernels::par::{self, Parted, Scaled};
    let up = &mut out.upload;
    let windows = batches.len().div_ceil(CHUNK_BATCHES);
    up.args.resize(batches.len(), DrawIndexedIndirectArgs::default());
    par::set_len(&mut up.instances, queue.len());
    // Window `w` copies the items from its first batch's first to the next window's (the
    // first window from 0, the last to the end): batches follow the queue in order.
    let items = &mut out.window_items;
    items.clear();
    items.extend((0..windows).map(|w| if w == 0 { 0 } else { batches[w * CHUNK_BATCHES].first as usize }));
    items.push(queue.len());
    if windows == 0 {
        up.instances.copy_from_slice(queue);
    }
    out.window_starts.resize_with(windows, Vec::new);
    let parts = (
        Scaled(&mut up.args[..], CHUNK_BATCHES),
        Parted(&mut up.instances[..], &items[..]),
        &mut out.window_starts[..],
    );
    type Parts<'a, 'o> = (Scaled<&'a mut [DrawIndexedIndirectArgs]>, Parted<'o, &'a mut [u32]>, &'a mut [Vec<usize>]);
    par::fill_blocks(1, parts, &|w, (Scaled(args, _), Parted(inst, offsets), starts): Parts<'_, '_>| {
        let base = w * CHUNK_BATCHES;
        let window = &batches[base..base + args.len()];
        args.iter_mut().zip(window).for_each(|(a, b)| *a = draw_args(ctx.meshes, b));
        inst.copy_from_slice(&queue[offsets[w]..offsets[w + 1]]);
        starts[0].clear();
        window_starts(ctx, window, base, &mut starts[0]);
    });
    let starts = &mut out.chunk_starts;
    starts.clear();
    starts.extend(out.window_starts.iter().flatten());
    close_starts(starts, batches.len());
}

/// The indirect records of `batches` (what the CPU knows of them: their meshes, and their
/// instances where it culled).
pub(super) fn write_args(meshes: &[MeshRange], batches: &[Batch], args: &mut Vec<DrawIndexedIndirectArgs>) {
    args.resize(batches.len(), DrawIndexedIndirectArgs::default());
    switchyard_kernels::par::fill_blocks(CHUNK_BATCHES, &mut args[..], &|c, a: &mut [DrawIndexedIndirectArgs]| {
        a.iter_mut().zip(&batches[c * CHUNK_BATCHES..]).for_each(|(a, b)| *a = draw_args(meshes, b));
    });
}

/// Records the chunks of `batches` (cut at `out.chunk_starts`: [`chunk_bounds`]) in
/// parallel into `out` (`keys`: the sorted queue's keys, named in each chunk's Tracy zone).
pub(super) fn record_chunks<B: Backend>(
    input: &RecordInput<'_, B>,
    ctx: &RecordCtx<'_>,
    batches: &[Batch],
    keys: Option<&[u64]>,
    out: &mut RecordedPass<B::Chunk>,
) {
    let nchunks = out.chunk_starts.len() - 1;
    out.cmds.resize_with(nchunks, Vec::new);
    out.chunks.clear();
    out.chunks.resize_with(nchunks, || None);
    out.digests.clear();
    out.digests.resize(nchunks, Digest::default());
    let (starts, view, pass) = (&out.chunk_starts, input.view, input.pass);
    // Counts summed over the chunks; of failing chunks, the first one's error.
    let (draws, states) = (AtomicU32::new(0), AtomicU32::new(0));
    let failed: Mutex<Option<(usize, RenderError)>> = Mutex::new(None);
    let per_chunk = (&mut out.cmds[..], &mut out.chunks[..], &mut out.digests[..]);
    type ChunkOut<'a, C> = (&'a mut [Vec<Command>], &'a mut [Option<C>], &'a mut [Digest]);
    switchyard_kernels::par::fill_blocks(1, per_chunk, &|c, (cmds, chunk, digest): ChunkOut<'_, B::Chunk>| {
        let (cmds, chunk, digest) = (&mut cmds[0], &mut chunk[0], &mut digest[0]);
        let b0 = starts[c];
        let bs = &batches[b0..starts[c + 1]];
        // The sort-key range this chunk recorded: traces a reordered draw back here.
        let (first, last) = (&bs[0], &bs[bs.len() - 1]);
        let key = |i: u32| keys.map_or(0, |k| k[i as usize]);
        profile::zone_text!(
            "record-chunk",
            "view {} chunk {c}/{nchunks}: batches {b0}..{}, material buckets {}..{}, keys {} .. {}",
            pass.label,
            b0 + bs.len(),
            first.material,
            last.material,
            SortKey(key(first.first)).display(view.pass),
            SortKey(key(last.first + last.count - 1)),
        );
        let counts = record_chunk(ctx, bs, b0, cmds);
        if input.digest {
            *digest = Digest::of_commands(cmds);
        }
        let position = ChunkPosition { index: c as u32, count: nchunks as u32 };
        match input.backend.record(pass, position, cmds) {
            Ok(recorded) => {
                *chunk = Some(recorded);
                draws.fetch_add(counts.draw_calls, Ordering::Relaxed);
                states.fetch_add(counts.state_changes, Ordering::Relaxed);
            }
            Err(e) => {
                let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                if f.as_ref().is_none_or(|(at, _)| c < *at) {
                    *f = Some((c, e.into()));
                }
            }
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => out.error = Some(e),
        None => out.counts = ChunkCounts { draw_calls: draws.into_inner(), state_changes: states.into_inner() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::FrameList;
    use switchyard_backend::BufferId;

    /// `n` materials' frame lists that differ by their constant offset only.
    fn frame_lists(n: u32) -> Vec<FrameList> {
        (0..n)
            .map(|m| FrameList {
                forward: PipelineId::default(),
                group: BindGroupId::default(),
                offset: Some(m * 256),
                shadow: PipelineId::default(),
                depth: PipelineId::default(),
            })
            .collect()
    }

    /// A forward view's context over default handles.
    fn test_ctx<'a>(
        meshes: &'a [MeshRange],
        lists: &'a [FrameList],
        multi_draw: bool,
        indirect: bool,
    ) -> RecordCtx<'a> {
        RecordCtx {
            pass: PassKind::Forward,
            view_group: BindGroupId::default(),
            view_offset: 0,
            scene_groups: None,
            vertices: BufferId::default(),
            indices: BufferId::default(),
            instances: BufferId::default(),
            args: BufferId::default(),
            args_first: 0,
            multi_draw,
            indirect,
            count: None,
            then: None,
            meshes,
            lists,
        }
    }

    #[test]
    fn windows_cut_write_and_copy_as_the_serial_cut_on_any_pool() {
        // Materials differ by their constant offset; runs of 1-5 batches share one, so
        // multi-draw buckets hold several batches. Two items follow the last batch.
        let lists = frame_lists(40);
        let meshes: Vec<MeshRange> =
            (0..7).map(|m| MeshRange { first_index: m * 36, index_count: 36, base_vertex: m as i32 * 24 }).collect();
        for multi_draw in [true, false] {
            let ctx = test_ctx(&meshes, &lists, multi_draw, false);
            for n in [0usize, 1, 95, 1023, 1024, 1025, 2500] {
                let mut batches = Vec::new();
                let mut first = 0;
                for i in 0..n as u32 {
                    let count = 1 + i % 3;
                    batches.push(Batch { first, count, mesh: i % 7, material: (i / (1 + i % 5)) % 40 });
                    first += count;
                }
                let queue: Vec<u32> = (0..first + 2).map(|i| i * 7 + 1).collect();
                let mut serial = Vec::new();
                chunk_bounds(&ctx, &batches, &mut serial);
                assert!(
                    (1..n.div_ceil(CHUNK_BATCHES)).all(|w| serial.contains(&(w * CHUNK_BATCHES))),
                    "a chunk starts at every window"
                );
                for threads in [1, 3] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let mut out = RecordedPass::<()>::default();
                    // Stale contents from a larger frame must not survive.
                    out.upload.instances = vec![9; queue.len() + 50];
                    pool.install(|| prepare_windows(&ctx, &queue, &batches, &mut out));
                    let at = format!("{n} batches, multi-draw {multi_draw}, {threads} threads");
                    assert_eq!(out.chunk_starts, serial, "{at}");
                    assert_eq!(out.upload.instances, queue, "{at}");
                    let args: Vec<_> = batches.iter().map(|b| draw_args(&meshes, b)).collect();
                    assert_eq!(out.upload.args, args, "{at}");
                }
            }
        }
    }

    #[test]
    fn draw_groups_are_the_multi_draws_record_chunk_issues() {
        let lists = frame_lists(9);
        let meshes = [MeshRange { first_index: 0, index_count: 36, base_vertex: 0 }];
        for n in [0usize, 1, 5, 300, 1024, 2100] {
            // Runs of 1-4 batches of one material; a window cut splits one run in two.
            let batches: Vec<Batch> =
                (0..n as u32).map(|i| Batch { first: i, count: 1, mesh: 0, material: (i / (1 + i % 4)) % 9 }).collect();
            let mut ctx = test_ctx(&meshes, &lists, true, true);
            let mut starts = Vec::new();
            chunk_bounds(&ctx, &batches, &mut starts);
            let mut groups = Vec::new();
            draw_groups(&ctx, &batches, &starts, &mut groups);
            let ng = crate::gpu_cull::group_count(&groups, n);
            assert_eq!(groups.len(), n + ng + 1, "{n}");
            let at = crate::gpu_cull::CountAt { compact: 1000, counts: 5000 };
            ctx.count = Some((at, &groups));
            let (mut plain, mut counted) = (Vec::new(), Vec::new());
            let mut calls = Vec::new();
            for c in starts.windows(2) {
                let bs = &batches[c[0]..c[1]];
                let with = record_chunk(&ctx, bs, c[0], &mut counted);
                let without = record_chunk(&RecordCtx { count: None, ..ctx }, bs, c[0], &mut plain);
                assert_eq!(with, without, "{n}: the same calls and state changes");
                assert_eq!(counted.len(), plain.len());
                for (a, b) in counted.iter().zip(&plain) {
                    match (*a, *b) {
                        (
                            Command::MultiDrawIndexedIndirectCount { offset, count_offset, max_count, .. },
                            Command::MultiDrawIndexedIndirect { offset: plain_offset, count, .. },
                        ) => {
                            assert_eq!(max_count, count);
                            assert_eq!(offset - 1000 * DRAW_INDEXED_INDIRECT_SIZE, plain_offset);
                            let first = (plain_offset / DRAW_INDEXED_INDIRECT_SIZE) as u32;
                            calls.push((((count_offset / 4) - 5000) as u32, first, max_count));
                        }
                        (a, b) => assert_eq!(a, b, "{n}: only the draws differ"),
                    }
                }
            }
            // Group k is the k-th call: it starts at its first batch and spans its batches.
            assert_eq!(calls.len(), ng, "{n}");
            for (k, &(g, first, max)) in calls.iter().enumerate() {
                assert_eq!(g as usize, k, "{n}");
                assert_eq!(groups[n + k], first, "{n}");
                assert_eq!(groups[n + k + 1] - first, max, "{n}");
                assert!((first..first + max).all(|b| groups[b as usize] == g), "{n}");
            }
            // A second set of records (a view drawing a prepass's two phases): each
            // multi-draw again right after, from the second phase's packed records and
            // counts; the plain second records without count buffers.
            let second = at.second(n, ng);
            for (count, then) in [(ctx.count, Some((n, Some(second)))), (None, Some((n, None)))] {
                let both = RecordCtx { count, then, ..ctx };
                let mut k = 0;
                for c in starts.windows(2) {
                    let (mut cmds, mut once) = (Vec::new(), Vec::new());
                    let twice = record_chunk(&both, &batches[c[0]..c[1]], c[0], &mut cmds);
                    let one = record_chunk(&RecordCtx { then: None, ..both }, &batches[c[0]..c[1]], c[0], &mut once);
                    assert_eq!(twice.draw_calls, 2 * one.draw_calls, "{n}");
                    let draws: Vec<&Command> = cmds
                        .iter()
                        .filter(|c| {
                            !matches!(
                                c,
                                Command::SetPipeline(_)
                                    | Command::SetBindGroup { .. }
                                    | Command::SetVertexBuffer { .. }
                                    | Command::SetIndexBuffer { .. }
                            )
                        })
                        .collect();
                    for pair in draws.chunks(2) {
                        let (g, first, _) = calls[k];
                        k += 1;
                        let record = |r: usize| r as u64 * DRAW_INDEXED_INDIRECT_SIZE;
                        match (*pair[0], *pair[1], count) {
                            (
                                Command::MultiDrawIndexedIndirectCount { offset: o1, count_offset: c1, .. },
                                Command::MultiDrawIndexedIndirectCount { offset: o2, count_offset: c2, .. },
                                Some(_),
                            ) => {
                                assert_eq!(
                                    (o1, o2),
                                    (record(1000 + first as usize), record(1000 + n + first as usize))
                                );
                                assert_eq!((c1, c2), ((5000 + g as u64) * 4, (5000 + (ng + g as usize) as u64) * 4));
                            }
                            (
                                Command::MultiDrawIndexedIndirect { offset: o1, .. },
                                Command::MultiDrawIndexedIndirect { offset: o2, .. },
                                None,
                            ) => assert_eq!((o1, o2), (record(first as usize), record(n + first as usize))),
                            other => panic!("{n}: {other:?}"),
                        }
                    }
                }
                assert_eq!(k, ng, "{n}");
            }
        }
    }
}
