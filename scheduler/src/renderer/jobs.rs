//! The frame's jobs: which stage runs for which view, what each reads and writes, and the
//! graph that orders them.

use switchyard_backend::{Backend, ChunkPosition, Command, Digest, DynamicOffsets};
use switchyard_kernels::cull::CullBlocks;

use super::gpu::GLOBALS_SLOT;
use super::passes::{EngineContent, EnginePlan};
use super::Resources;
use crate::batch::Batches;
use crate::batch::{batch_view, BatchCtx};
use crate::cull::VisibleList;
use crate::cull::{cull_view, cull_views, CullCtx, CullFrom};
use crate::error::RenderError;
use crate::frame_graph::CallbackContext;
use crate::frame_graph::{Queue, TargetId};
use crate::gpu_cull::{bucket_view, BucketCtx, Buckets};
use crate::graph::{Access, AccessConflict, GraphJob, JobGraph, JobGraphBuilder, Slot};
use crate::material::PassKind;
use crate::material::{BuildCtx, MaterialFrame};
use crate::patch::{patch_frame, PatchCtx, PatchPart, PatchedLists};
use crate::record::RecordedPass;
use crate::record::{record_gpu_view, record_shared_view, record_view, RecordInput, SharedCull};
use crate::scene::Objects;
use crate::sort::SortedQueue;
use crate::sort::{sort_view, SortCtx};
use crate::view::View;
use switchyard_backend::{BindGroupId, PassDesc, TextureId};
use switchyard_kernels::cull::Frustum;

/// What the frame's jobs read of one view, set before they run.
#[derive(Clone, Debug)]
pub(crate) struct ViewSetup {
    /// The camera and the pipelines it draws with (its label is unused: the pass's name is
    /// `pass.label`).
    pub(crate) view: View,
    pub(crate) frustum: Frustum,
    pub(crate) pass: PassDesc,
    /// Group 0 of the pass (globals, transforms, shadow maps).
    pub(crate) group: BindGroupId,
    pub(crate) queue: Queue,
    /// The view's index in the globals buffer (its order in the `render` call).
    pub(crate) slot: u32,
    /// Culled on the GPU this frame (`gpu_cull/`): its cull job builds buckets, its sort
    /// and batch jobs see no visible objects, its record job records indirect draws.
    pub(crate) gpu: bool,
    /// Culled by occlusion this frame (`occlusion.rs`): its depth target and size.
    pub(crate) occlude: Option<crate::gpu_cull::DepthTarget>,
    /// A shadow view culled to the casters of its receivers this frame: what its
    /// receiver pyramid is built from, and the receivers' camera's clip-to-world matrix.
    pub(crate) receivers: Option<(crate::occlusion::PyramidSource, glam::Mat4)>,
    /// A cached pass (`Pass::cached`) whose map holds what it would draw: not submitted.
    pub(crate) skip: bool,
    /// Culled on the CPU from the same [`CullInputs`] as the last frame that reached the
    /// GPU thread: its cull, sort and batch jobs keep their outputs (`FrameStats::culls_kept`).
    pub(crate) keep: bool,
    /// A forward view that draws an earlier depth prepass's visible set
    /// (`RendererConfig::reuse_prepass_cull`) instead of culling.
    pub(crate) shares: Option<SharedCull>,
    /// Culled on the CPU this frame after an earlier view of the same camera, also culled
    /// on the CPU: that view's frustum test is taken, not repeated (`FrameStats::frustum_tests_taken`).
    pub(crate) cull_from: Option<usize>,
    /// A later view takes this view's frustum test: its cull keeps it.
    pub(crate) keep_raw: bool,
    /// Group 2 (the engine's buffers) and the empty group 1 of a shadow pass, where the
    /// graph's scene passes read buffers.
    pub(crate) scene_groups: Option<(BindGroupId, BindGroupId)>,
}

/// What a cached pass's map was drawn from (`Pass::cached`): while all of it stays the
/// same, the map does.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DrawnFrom {
    pub(crate) view_proj: glam::Mat4,
    pub(crate) layer_mask: u16,
    pub(crate) receivers: Option<glam::Mat4>,
    /// The view-projection of the camera that saw its receivers (`Pass::receivers`).
    pub(crate) seen_by: Option<glam::Mat4>,
    /// `Scene::edits`, the graph's generation, and the map's texture.
    pub(crate) edits: u64,
    pub(crate) graph: u64,
    pub(crate) target: switchyard_backend::TextureId,
    /// The count of frames whose material frames changed (a change and its undoing count
    /// as two: the map is drawn again, which is only conservative).
    pub(crate) mats: u64,
}

/// What a view's cull, sort and batch stages make their outputs from, besides the objects
/// and materials themselves: while all of it stays the same, so do the outputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CullInputs {
    pub(crate) view: View,
    /// The planes it culls with (its camera's, and those of `Camera::receivers`).
    pub(crate) frustum: Frustum,
    pub(crate) queue: Queue,
    /// `Scene::edits` (every object edit, moves included), the count of frames whose
    /// materials changed, the graph's generation, the scene's size.
    pub(crate) edits: u64,
    pub(crate) mats: u64,
    pub(crate) graph: u64,
    pub(crate) objects: usize,
    /// Whether the keys' state fields held the frame's ids whole (`key::exact`).
    pub(crate) exact_keys: bool,
}

/// One view's stage outputs, one slot each: written by its stage's job, read by the next.
#[derive(Debug)]
pub(crate) struct ViewFrame<C> {
    pub(crate) setup: ViewSetup,
    pub(crate) visible: Slot<VisibleList>,
    pub(crate) buckets: Slot<Buckets>,
    pub(crate) sorted: Slot<SortedQueue>,
    pub(crate) batches: Slot<Batches>,
    pub(crate) recorded: Slot<RecordedPass<C>>,
    /// [`crate::CullOn::Auto`]: the last frame's draws were dense enough to cull this view
    /// on the GPU.
    pub(crate) dense: bool,
    /// A cached pass: what it last drew from (`None`: its map holds nothing known), and
    /// what this frame's would be (swapped in once the frame reaches the GPU thread).
    pub(crate) drawn: Option<DrawnFrom>,
    pub(crate) drawing: DrawnFrom,
    /// What the outputs were made from, set once their frame reached the GPU thread
    /// (`None` after a frame that did not, or one culled on the GPU), and this frame's.
    pub(crate) culled_from: Option<CullInputs>,
    pub(crate) culling: Option<CullInputs>,
    /// The last frame's indirect arguments, kept for `view_output` (its packet's copy
    /// went to the GPU).
    #[cfg(feature = "reference")]
    pub(crate) args: Vec<switchyard_backend::DrawIndexedIndirectArgs>,
}

impl<C> ViewFrame<C> {
    pub(super) fn new(setup: ViewSetup) -> Self {
        Self {
            setup,
            visible: Slot::default(),
            buckets: Slot::default(),
            sorted: Slot::default(),
            batches: Slot::default(),
            recorded: Slot::default(),
            dense: false,
            drawn: None,
            drawing: DrawnFrom::default(),
            culled_from: None,
            culling: None,
            #[cfg(feature = "reference")]
            args: Vec::new(),
        }
    }
}

/// What an engine pass (fullscreen, callback, compute) recorded this frame.
#[derive(Debug)]
pub(crate) struct EngineRecorded<C> {
    /// The backend pass (external attachments filled in for this frame).
    pub(crate) pass: PassDesc,
    pub(crate) commands: Vec<Command>,
    pub(crate) chunk: Option<C>,
    pub(crate) digest: Option<Digest>,
    pub(crate) error: Option<RenderError>,
    /// Draw calls, dispatches and state changes among the commands, counted as backends
    /// count them.
    pub(crate) draw_calls: u32,
    pub(crate) dispatches: u32,
    pub(crate) state_changes: u32,
    /// This frame's textures of the targets the pass samples (a callback's inputs).
    pub(crate) inputs: Vec<(TargetId, TextureId)>,
    /// A fullscreen pass's bind group for this frame's external inputs.
    pub(crate) input_group: Option<BindGroupId>,
    pub(crate) ms: f64,
}

impl<C> Default for EngineRecorded<C> {
    fn default() -> Self {
        Self {
            pass: PassDesc { label: "".into(), color: None, depth: None, compute: false, native: None },
            commands: Vec::new(),
            chunk: None,
            digest: None,
            error: None,
            draw_calls: 0,
            dispatches: 0,
            state_changes: 0,
            inputs: Vec::new(),
            input_group: None,
            ms: 0.0,
        }
    }
}

/// One job of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Job {
    /// Cull view `view`. `from`: an earlier view of the same camera and filter, whose
    /// cull this one follows and whose frustum test it takes where both cull on the CPU.
    /// `feeds`: the first later view that follows this one, whose list this job writes
    /// too where both cull on the CPU this frame ([`crate::cull::cull_views`]: one pass
    /// over the objects; that view's own job then finds its list made).
    Cull { view: usize, from: Option<usize>, feeds: Option<usize> },
    /// Key and sort view `v`'s visible objects.
    Sort(usize),
    /// Batch view `v`'s sorted queue.
    Batch(usize),
    /// Display lists (and for [`PatchPart::Forward`] the constants) of the materials the
    /// views saw whose bits `views` sets (the part's views).
    Patch { part: PatchPart, views: u64 },
    /// Record view `v`'s batches, which draw with `part`'s lists.
    Record(usize, PatchPart),
    /// Record engine pass `o`: a fullscreen, callback or compute pass (what it draws or
    /// dispatches comes from the engine: its shader or its callback).
    Engine(usize),
}

/// What the frame's jobs read and write: one stage output of one view, or frame-wide data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Datum {
    Visible(usize),
    Buckets(usize),
    Sorted(usize),
    Batches(usize),
    Recorded(usize),
    /// An engine pass's chunk.
    Engine(usize),
    /// A patch job's lists (indexed by [`PatchPart`]).
    Patched(PatchPart),
    /// Shaders and materials (compiled variants, display lists).
    Library,
}

impl GraphJob for Job {
    type Datum = Datum;

    fn accesses(&self, out: &mut Vec<Access<Datum>>) {
        use Access::{Read, Write};
        match *self {
            Job::Cull { view, from, feeds } => {
                // Last frame's queue (the cull cuts its tails by that queue's blocks).
                out.extend([Write(Datum::Visible(view)), Write(Datum::Buckets(view)), Read(Datum::Sorted(view))]);
                out.extend(from.map(|f| Read(Datum::Visible(f))));
                out.extend(feeds.into_iter().flat_map(|f| [Write(Datum::Visible(f)), Read(Datum::Sorted(f))]));
            }
            Job::Sort(v) => out.extend([Read(Datum::Visible(v)), Write(Datum::Sorted(v))]),
            Job::Batch(v) => out.extend([Read(Datum::Sorted(v)), Write(Datum::Batches(v))]),
            Job::Patch { part, views } => {
                out.extend(each_view(views).map(|v| Read(Datum::Visible(v))));
                out.extend([Write(Datum::Patched(part)), Write(Datum::Library)]);
                if part == PatchPart::Shadow {
                    out.push(Read(Datum::Patched(PatchPart::Forward)));
                }
            }
            Job::Record(v, part) => out.extend([
                Read(Datum::Buckets(v)),
                Read(Datum::Sorted(v)),
                Read(Datum::Batches(v)),
                Read(Datum::Patched(part)),
                Write(Datum::Recorded(v)),
            ]),
            Job::Engine(o) => out.push(Write(Datum::Engine(o))),
        }
    }
}

/// The views whose bits `mask` sets.
fn each_view(mask: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |v| mask >> v & 1 != 0)
}

/// One scene pass of a job graph.
#[derive(Clone, Copy, Debug)]
pub(super) struct GraphView<'a> {
    pub(super) name: &'a str,
    /// The earlier view of the same camera whose frustum test its cull may take.
    pub(super) cull_from: Option<usize>,
    pub(super) kind: PassKind,
}

/// The graph for `views`: per view cull → sort → batch → record, a cull that may take
/// another's after that one; a patch job per [`PatchPart`] that has views, after those
/// views' culls (the shadow part also after the forward part: both make backend objects,
/// in that order), which each record of the part waits for; one job per engine pass
/// (fullscreen, callback, compute) (`engine`: their names), which depends on nothing.
pub(super) fn build_graph(views: &[GraphView<'_>], engine: &[&str]) -> Result<JobGraph<Job>, AccessConflict> {
    let mut g = JobGraphBuilder::new();
    let mut culls = Vec::with_capacity(views.len());
    let from = |v: usize| views[v].cull_from.filter(|&f| f < v);
    for (v, view) in views.iter().enumerate() {
        let after: Vec<_> = from(v).map(|f| culls[f]).into_iter().collect();
        let feeds = (v + 1..views.len()).find(|&w| from(w) == Some(v));
        culls.push(g.add(Job::Cull { view: v, from: from(v), feeds }, format!("cull[{}]", view.name), &after));
    }
    let mut patches = [None; 2];
    for part in [PatchPart::Forward, PatchPart::Shadow] {
        let of_part: Vec<usize> = (0..views.len()).filter(|&v| PatchPart::of(views[v].kind) == part).collect();
        if of_part.is_empty() {
            continue;
        }
        let mut after: Vec<_> = of_part.iter().map(|&v| culls[v]).collect();
        after.extend(patches[PatchPart::Forward as usize]);
        let views = of_part.iter().fold(0, |m, &v| m | 1 << v);
        patches[part as usize] = Some(g.add(Job::Patch { part, views }, format!("patch[{}]", part.name()), &after));
    }
    for (v, view) in views.iter().enumerate() {
        let part = PatchPart::of(view.kind);
        let sort = g.add(Job::Sort(v), format!("sort[{}]", view.name), &[culls[v]]);
        let batch = g.add(Job::Batch(v), format!("batch[{}]", view.name), &[sort]);
        let patch = patches[part as usize].expect("a part with views has its patch job");
        g.add(Job::Record(v, part), format!("record[{}]", view.name), &[batch, patch]);
    }
    for (o, name) in engine.iter().enumerate() {
        g.add(Job::Engine(o), format!("pass[{name}]"), &[]);
    }
    g.build()
}

/// What the jobs of one frame run against: read-only inputs, and the slots they fill.
pub(super) struct FrameJobs<'a, B: Backend> {
    pub(super) res: &'a Resources<B>,
    pub(super) objects: &'a Objects,
    /// The scene's structure count (GPU culling's buckets).
    pub(super) structure: u64,
    pub(super) blocks: &'a CullBlocks,
    pub(super) mat_frames: &'a [MaterialFrame],
    pub(super) lacking_passes: u8,
    /// The keys' state fields hold this frame's ids whole (`key::exact`).
    pub(super) exact_keys: bool,
    pub(super) views: &'a [ViewFrame<B::Chunk>],
    pub(super) engine_passes: &'a [Slot<EngineRecorded<B::Chunk>>],
    pub(super) engine_plans: &'a [EnginePlan],
    pub(super) frame: u64,
    /// The patch jobs' outputs (indexed by [`PatchPart`]).
    pub(super) patched: &'a [Slot<PatchedLists>; 2],
    /// The job that panics this frame, injected by a test (`fault-injection`).
    pub(super) panics: Option<Job>,
}

impl<B: Backend> FrameJobs<'_, B> {
    /// What `view`'s cull on the CPU reads.
    fn cull_ctx<'v>(&'v self, view: &'v ViewFrame<B::Chunk>) -> CullCtx<'v> {
        CullCtx {
            label: &view.setup.pass.label,
            objects: self.objects,
            blocks: self.blocks,
            kernel: self.res.kernel,
            materials: self.mat_frames.len(),
            mat_frames: self.mat_frames,
            queue: view.setup.queue,
            pass_filter: self.lacking_passes & view.setup.view.pass.bit() != 0,
        }
    }

    /// Runs one job; it touches exactly the data [`Job::accesses`] names.
    pub(super) fn run(&self, job: Job) {
        if self.panics == Some(job) {
            panic!("fault injected into job {job:?}");
        }
        match job {
            Job::Cull { view: v, .. } if self.views[v].setup.gpu => {
                let view = &self.views[v];
                let ctx = BucketCtx {
                    label: &view.setup.pass.label,
                    objects: self.objects,
                    structure: self.structure,
                    mat_frames: self.mat_frames,
                    queue: view.setup.queue,
                    pass_filter: self.lacking_passes & view.setup.view.pass.bit() != 0,
                };
                let mut buckets = view.buckets.write();
                bucket_view(&ctx, &view.setup.view, &mut buckets);
                view.visible.write().culled_on_gpu(&buckets.used, buckets.ms);
            }
            Job::Cull { view: v, .. } if self.views[v].setup.keep => self.views[v].visible.write().kept(),
            Job::Sort(v) if self.views[v].setup.keep => self.views[v].sorted.write().kept(),
            Job::Batch(v) if self.views[v].setup.keep => self.views[v].batches.write().ms = 0.0,
            Job::Cull { view: v, feeds, .. } => {
                let view = &self.views[v];
                let ctx = self.cull_ctx(view);
                let mut out = view.visible.write();
                let sorted = view.sorted.read();
                // Made by the earlier view's job this frame.
                if out.joined_in(self.frame) {
                    return;
                }
                // A later view of this camera that takes this view's frustum test this frame
                // (it culls on the CPU and is not kept): both lists in one pass.
                let follower = feeds.filter(|&f| view.setup.keep_raw && self.views[f].setup.cull_from == Some(v));
                if let Some(f) = follower {
                    let fv = &self.views[f];
                    let (f_ctx, mut f_out, f_sorted) = (self.cull_ctx(fv), fv.visible.write(), fv.sorted.read());
                    let (last, f_last) = (sorted.last_of(out.generation), f_sorted.last_of(f_out.generation));
                    let lead = (&ctx, &view.setup.view, &view.setup.frustum, (&mut *out, last));
                    let follow = (&f_ctx, &fv.setup.view, &fv.setup.frustum, (&mut *f_out, f_last));
                    if cull_views(lead, follow, self.frame) {
                        return;
                    }
                }
                // The earlier view's list is read-only from its cull's end (this job follows it).
                let src = view.setup.cull_from.map(|f| self.views[f].visible.read());
                let from = match &src {
                    Some(src) => CullFrom::View(src),
                    None if view.setup.keep_raw => CullFrom::Keep,
                    None => CullFrom::Objects,
                };
                let last = sorted.last_of(out.generation);
                cull_view(&ctx, &view.setup.view, &view.setup.frustum, from, (&mut out, last));
            }
            Job::Sort(v) => {
                let view = &self.views[v];
                let ctx = SortCtx { label: &view.setup.pass.label };
                sort_view(&ctx, &view.setup.view, &view.visible.read(), &mut view.sorted.write());
            }
            Job::Batch(v) => {
                let view = &self.views[v];
                let ctx = BatchCtx {
                    label: &view.setup.pass.label,
                    objects: self.objects,
                    mat_frames: self.mat_frames,
                    exact_keys: self.exact_keys,
                };
                batch_view(&ctx, &view.setup.view, &view.sorted.read(), &mut view.batches.write());
            }
            Job::Patch { part, views } => {
                let mut patched = self.patched[part as usize].write();
                if part == PatchPart::Shadow && self.patched[PatchPart::Forward as usize].read().failed {
                    patched.skip();
                    return;
                }
                patched.clear_used(self.mat_frames.len());
                for v in each_view(views) {
                    let v = &self.views[v];
                    patched.add_used(v.setup.view.pass, &v.visible.read().used);
                }
                let s = self.res;
                let ctx = PatchCtx {
                    build: BuildCtx {
                        backend: &*s.backend,
                        layouts: &s.gpu.layouts,
                        globals: &self.res.globals,
                        globals_version: self.res.globals_version,
                        cache: s.display_list_cache,
                    },
                    mat_frames: self.mat_frames,
                };
                patch_frame(&ctx, &mut self.res.library.write(), &mut patched, part);
            }
            Job::Record(v, part) => {
                let view = &self.views[v];
                let patched = self.patched[part as usize].read();
                if patched.failed {
                    return; // the frame fails with the patch error
                }
                let s = self.res;
                let setup = &view.setup;
                if setup.skip {
                    view.recorded.write().record_nothing();
                    return;
                }
                let cull = s.gpu.cull.as_ref().filter(|_| setup.gpu);
                let input = RecordInput {
                    backend: &*s.backend,
                    view: &setup.view,
                    pass: &setup.pass,
                    view_group: (setup.group, setup.slot * GLOBALS_SLOT as u32),
                    scene_groups: setup.scene_groups,
                    mesh_buffers: (s.vertices.id, s.indices.id),
                    multi_draw: s.multi_draw,
                    meshes: &s.draw_ranges,
                    digest: s.digest,
                };
                match (cull, &setup.shares) {
                    (Some(cull), Some(shared)) => record_shared_view(
                        &input,
                        &view.buckets.read(),
                        shared,
                        cull.counts(),
                        &patched.lists,
                        &mut view.recorded.write(),
                    ),
                    (Some(cull), None) => record_gpu_view(
                        &input,
                        cull,
                        &setup.frustum,
                        &view.buckets.read(),
                        setup.slot,
                        setup.receivers.map(|r| r.1).as_ref(),
                        &patched.lists,
                        &mut view.recorded.write(),
                    ),
                    (None, _) => record_view(
                        &input,
                        &view.sorted.read(),
                        &view.batches.read(),
                        &patched.lists,
                        &mut view.recorded.write(),
                    ),
                }
            }
            Job::Engine(o) => self.record_engine_pass(o),
        }
    }

    /// Records a fullscreen pass's triangle, or what an engine callback writes.
    fn record_engine_pass(&self, o: usize) {
        let plan = &self.engine_plans[o];
        crate::profile::zone_text!("record-pass", "pass {}", plan.name);
        let t = std::time::Instant::now();
        let mut rec = self.engine_passes[o].write();
        let rec = &mut *rec;
        (rec.chunk, rec.error) = (None, None);
        rec.commands.clear();
        match &plan.content {
            EngineContent::Fullscreen { pipeline, group, .. } => rec.commands.extend([
                Command::SetPipeline(*pipeline),
                // No plan-time group: the one made for this frame's external inputs.
                Command::SetBindGroup {
                    index: 0,
                    group: group.or(rec.input_group).unwrap_or_default(),
                    offsets: DynamicOffsets::NONE,
                },
                Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 },
            ]),
            EngineContent::Callback(record) => {
                let ctx = CallbackContext { pass: &plan.name, frame: self.frame, size: plan.size, inputs: &rec.inputs };
                record(&ctx, &mut rec.commands)
            }
            EngineContent::Wgpu => {
                // The backend runs the engine's drawing when it submits the pass.
                (rec.digest, rec.draw_calls, rec.dispatches, rec.state_changes) = (None, 0, 0, 0);
                rec.ms = t.elapsed().as_secs_f64() * 1e3;
                return;
            }
        }
        rec.digest = self.res.digest.then(|| Digest::of_commands(&rec.commands));
        let count = |f: fn(&Command) -> bool| rec.commands.iter().filter(|c| f(c)).count() as u32;
        rec.draw_calls = count(|c| {
            matches!(
                c,
                Command::Draw { .. }
                    | Command::DrawIndexed { .. }
                    | Command::MultiDrawIndexedIndirect { .. }
                    | Command::MultiDrawIndexedIndirectCount { .. }
            )
        });
        rec.dispatches = count(|c| matches!(c, Command::Dispatch { .. } | Command::DispatchIndirect { .. }));
        rec.state_changes = rec.commands.len() as u32 - rec.draw_calls - rec.dispatches;
        match self.res.backend.record(&rec.pass, ChunkPosition::SINGLE, &rec.commands) {
            Ok(c) => rec.chunk = Some(c),
            Err(e) => rec.error = Some(e.into()),
        }
        rec.ms = t.elapsed().as_secs_f64() * 1e3;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_graph_orders_every_conflicting_access() {
        for n in 1..=crate::frame_graph::MAX_VIEWS {
            let views: Vec<GraphView> = (0..n)
                .map(|i| match i % 3 {
                    0 => GraphView { name: "a", cull_from: None, kind: PassKind::Forward },
                    1 => GraphView { name: "b", cull_from: Some(i - 1), kind: PassKind::Depth },
                    _ => GraphView { name: "s", cull_from: None, kind: PassKind::Shadow },
                })
                .collect();
            let g = build_graph(&views, &["post", "ui"]).expect("a valid graph");
            let parts = 1 + usize::from(n > 2);
            assert_eq!(g.len(), 4 * n + parts + 2);
        }
    }
}
