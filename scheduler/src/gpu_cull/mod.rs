//! Stage 1 on the GPU: a view's frustum cull as compute work, its draws indirect.
//!
//! Where the renderer culls on the GPU ([`CullOn::Gpu`] and a backend that can), a view
//! whose draw order does not depend on depth (a shadow pass, or a forward pass of opaque
//! objects) skips the CPU's cull, sort and batch stages. Its *buckets* take their place:
//! the objects the pass may draw (layer, shadow flag and queue filters, as the CPU cull
//! applies them) grouped by draw state and mesh, in the order of the CPU's sort keys
//! without their depth field, object order within a bucket. They are built again only
//! when the scene's structure, the materials or the view's filters change, so a frame in
//! which nothing is added, removed or re-materialed does no per-object CPU work for the
//! view.
//!
//! On the GPU (`shaders/cull.wgsl`), a compute pass at the start of the frame tests every
//! candidate's world bounds (uploaded with the dirty transforms) against the view's planes
//! with the CPU cull's math and compacts the visible ones stably: each bucket's instances
//! are its visible candidates in candidate order, and its indirect record gets their count
//! and first instance. The recorded draws (one indirect draw per bucket, or one
//! multi-draw per state run) depend only on the buckets, so the command stream is the same
//! for any thread count and any camera.
//!
//! [`cull_on_cpu`] is the oracle: the same candidates culled on the CPU, compacted the
//! same way; tests read the GPU's instances and records back and compare.

use switchyard_backend::{
    Backend, BindEntry, BindGroupDesc, BindGroupId, BindGroupLayoutDesc, BindGroupLayoutId, BindResource, BindingType,
    BufferId, Caps, Command, ComputePipelineDesc, CreateError, DynamicOffsets, LayoutEntry, PassDesc, PipelineId,
    Resource, ShaderModuleDesc, Stages, MAX_WORKGROUPS_PER_DIMENSION,
};
use switchyard_kernels::cull::Frustum;

use crate::frame_graph::Queue;
use crate::gpu_buffer::{buffer, GrowBuffer, Made};
use crate::material::PassKind;
use crate::occlusion::ViewOcclusion;
use crate::view::View;
use switchyard_backend::BufferUsage;

mod buckets;
mod count;
mod oracle;
pub(crate) use buckets::{bucket_view, BucketCtx, Buckets};
pub(crate) use count::{group_count, CountAt, COUNTED_ARGS_BYTES};
pub use oracle::{boundary_margin, cull_on_cpu};

/// Where a renderer culls its views (not to be confused with the backend's face culling,
/// `CullMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CullOn {
    /// Every view on the CPU (the workers).
    #[default]
    Cpu,
    /// Shadow passes and opaque forward passes on the GPU, where the backend has compute,
    /// indirect draws with a first instance and five storage buffers per stage
    /// ([`gpu_cull_support`]); other views, and every view elsewhere, on the CPU.
    Gpu,
    /// As [`CullOn::Gpu`] for the views whose draws hold many instances, the CPU for the
    /// others, decided per view from the last frame (a new view starts on the CPU): a view
    /// moves to the GPU when its
    /// visible objects per batch reach [`AUTO_TO_GPU`], back to the CPU when its
    /// candidates per bucket fall below [`AUTO_TO_CPU`]. On the GPU every bucket is an
    /// indirect draw, recorded whether anything in it is visible or not: cheap for a
    /// grid of a million cubes in 256 buckets, dearer than the CPU cull it saves for a
    /// city whose buckets hold eight objects (BENCHMARKS.md, run 15).
    Auto,
}

/// [`CullOn::Auto`]: visible objects per batch on the CPU path from which a view is culled
/// on the GPU. Between the two measured scenes (about 8 per bucket: the CPU path is
/// faster; about 3,900: the GPU path is); not tuned between them.
pub const AUTO_TO_GPU: u32 = 64;
/// [`CullOn::Auto`]: candidates per bucket on the GPU path below which a view goes back to
/// the CPU (below [`AUTO_TO_GPU`], so a view near the line does not switch every frame).
pub const AUTO_TO_CPU: u32 = 32;

/// Candidates per workgroup of the cull shader.
pub(crate) const GPU_CULL_BLOCK: u32 = 256;
/// Bytes of one view's parameters in the parameter buffer (a multiple of the
/// dynamic-offset alignment).
pub(crate) const PARAMS_SLOT: u64 = 512;
/// Bytes of the parameters the shader reads (`Params` in `shaders/cull.wgsl`).
pub(crate) const PARAMS_SIZE: usize = 352;
const CULL_WGSL: &str = include_str!("../shaders/cull.wgsl");
/// Bytes of one object's world bounds in the bounds buffer (center and half extents, two
/// `vec4`s).
pub(crate) const BOUNDS_SIZE: u64 = 32;

/// Whether `caps` can cull on the GPU; the reason where not.
pub fn gpu_cull_support(caps: &Caps) -> Result<(), &'static str> {
    if !caps.compute {
        return Err("the backend has no compute passes");
    }
    if !caps.indirect_draws {
        return Err("the backend has no indirect draws with a first instance");
    }
    if caps.max_storage_buffers_per_stage < 5 {
        return Err("the backend binds fewer than five storage buffers per shader stage");
    }
    Ok(())
}

/// Whether a renderer configured with `mode` culls on the GPU over a backend with `caps`,
/// and why not where it was asked to.
pub(crate) fn resolve(mode: CullOn, caps: &Caps) -> (bool, Option<&'static str>) {
    match mode {
        CullOn::Cpu => (false, None),
        CullOn::Gpu | CullOn::Auto => match gpu_cull_support(caps) {
            Ok(()) => (true, None),
            Err(why) => (false, Some(why)),
        },
    }
}

/// Whether a renderer configured with `config` over a backend with `caps` draws its
/// GPU-culled views through count buffers (`count.rs`): asked for, with multi-draw, where
/// the backend has them; why not where they were asked for and the views are culled on
/// the GPU.
pub(crate) fn resolve_count(config: &crate::RendererConfig, caps: &Caps) -> (bool, Option<&'static str>) {
    let why = if !config.multi_draw {
        "multi-draw is off"
    } else if !caps.multi_draw_indirect {
        "the backend has no native multi-draw (render bundles have none)"
    } else if !caps.indirect_count {
        "the backend has no count buffers"
    } else {
        return (config.indirect_count, None);
    };
    let asked = config.indirect_count && resolve(config.cull, caps).0;
    (false, asked.then_some(why))
}

/// Whether view `view` of a pass with `queue` is culled on the GPU when the renderer can:
/// its draw order does not depend on depth.
pub(crate) fn culls_on_gpu(view: &View, queue: Queue) -> bool {
    view.pass == PassKind::Shadow || queue == Queue::Opaque
}

/// The parameters of one view's cull (`Params` in `shaders/cull.wgsl`): frustum only, or
/// one phase of an occlusion cull (the second writes the second halves of the instances
/// and records).
pub(crate) fn params(
    frustum: &Frustum,
    buckets: &Buckets,
    occ: Option<crate::occlusion::Occluding<'_>>,
    count: Option<CountAt>,
) -> [u8; PARAMS_SIZE] {
    let mut p = [0u8; PARAMS_SIZE];
    // The view's six planes at 0, those limiting it to casters at 256 (zero: passes all).
    let (head, tail) = p.split_at_mut(256);
    let slots = head[..96].chunks_exact_mut(16).chain(tail[..96].chunks_exact_mut(16));
    for (dst, plane) in slots.zip(frustum.planes()) {
        dst.copy_from_slice(bytemuck::cast_slice(&plane.to_array()));
    }
    let n = buckets.candidates().len() as u32;
    let (blocks, nb) = (n.div_ceil(GPU_CULL_BLOCK), buckets.buckets.len() as u32);
    let (phase, reset) = occ.map_or((0, false), |o| (o.phase, o.reset));
    let words = [n, blocks, nb, nb + 1, n + 1, phase, n + 1 + blocks, u32::from(reset)];
    p[96..128].copy_from_slice(bytemuck::cast_slice(&words));
    if let Some(o) = occ {
        p[128..192].copy_from_slice(bytemuck::cast_slice(&o.view_proj.to_cols_array()));
        let late = o.phase == 2;
        let (t, levels) = (o.pyramid.target, o.pyramid.levels);
        // Receivers: one level-0 texel (two target texels, at least a shadow-map texel:
        // `occlusion::receiver_target`) covers the forward shader's filtered lookup.
        let grow = if o.phase == crate::occlusion::RECEIVERS_PHASE { 2 } else { 0 };
        let words = [if late { n } else { 0 }, if late { nb } else { 0 }, t.0, t.1, levels, grow];
        p[192..216].copy_from_slice(bytemuck::cast_slice(&words));
    }
    if let Some(c) = count {
        // The indices fit: the indirect buffer they index is bound as a storage buffer.
        let groups_at = nb + 1 + n;
        let words = [nb.div_ceil(GPU_CULL_BLOCK), groups_at, c.compact as u32, c.counts as u32];
        p[216..232].copy_from_slice(bytemuck::cast_slice(&words));
    }
    p
}

/// A dispatch of `groups` workgroups over a 2D grid within the per-dimension limit.
fn grid(groups: u32) -> Command {
    let x = groups.min(MAX_WORKGROUPS_PER_DIMENSION);
    Command::Dispatch { x, y: groups.div_ceil(x.max(1)), z: 1 }
}

/// The renderer's cull pipelines, their layout and the per-frame buffers every view
/// shares.
#[derive(Debug)]
pub(crate) struct CullObjects {
    pub(crate) layout: BindGroupLayoutId,
    shader: switchyard_backend::ShaderId,
    /// count, scan_blocks, scatter, write_args.
    pipelines: [PipelineId; 4],
    /// With count buffers (`count.rs`): write_args_counted, scan_buckets,
    /// scatter_buckets, move_args.
    counted: Option<[PipelineId; 4]>,
    /// Per view, [`PARAMS_SLOT`] bytes of parameters (then as many for the second phase
    /// of occlusion culls).
    pub(crate) params_buf: BufferId,
    /// World bounds of every object, [`BOUNDS_SIZE`] bytes each (written with the dirty
    /// transforms).
    pub(crate) bounds_buf: BufferId,
    /// The frame's cull pass (every GPU-culled view's dispatches, before the first pass).
    pub(crate) pass: PassDesc,
    /// With occlusion culling: the pyramid's and the second phase's objects (the layout
    /// then binds a pyramid at binding 6).
    pub(crate) occlusion: Option<crate::occlusion::OcclusionObjects>,
    /// The compute pass between the halves of an occlusion-culled pass.
    pub(crate) occlusion_pass: PassDesc,
    /// The compute pass before a shadow pass with receivers (its receiver pyramid and
    /// its cull).
    pub(crate) receivers_pass: PassDesc,
}

/// One GPU-culled view's buffers (its instance and indirect buffers are the view's own)
/// and the bind group over them.
#[derive(Debug)]
pub(crate) struct ViewCull {
    /// Bucket starts and candidates ([`lists_bytes`]).
    pub(crate) lists: GrowBuffer,
    /// Ranks and block sums ([`scratch_bytes`]).
    pub(crate) scratch: GrowBuffer,
    pub(crate) group: BindGroupId,
    /// The buffers `group` binds: lists, instances, args, scratch, pyramid.
    pub(crate) bound: [BufferId; 5],
    /// The list buffer the current buckets were last uploaded into (`None`: upload them
    /// with the next frame).
    pub(crate) uploaded: Option<BufferId>,
    /// The scratch buffer holds this view's visible-last-frame bits (occlusion culling).
    pub(crate) bits: bool,
    /// With count buffers: the draw groups last uploaded after the lists, and this
    /// frame's (`crate::record::draw_groups`).
    pub(crate) groups: Vec<u32>,
    pub(crate) groups_now: Vec<u32>,
}

impl ViewCull {
    /// Its buffers and group, given up.
    pub(crate) fn resources(&self) -> [Resource; 3] {
        [Resource::BindGroup(self.group), Resource::Buffer(self.lists.id), Resource::Buffer(self.scratch.id)]
    }
}

impl CullObjects {
    /// Creates the pipelines and the shared buffers for `max_objects` objects; `count`:
    /// the pipelines that compact multi-draws for count buffers too.
    pub(crate) fn create<B: Backend>(
        m: &mut Made<'_, B>,
        b: &B,
        max_objects: usize,
        occlusion: bool,
        count: bool,
    ) -> Result<Self, CreateError> {
        let entry = |binding, ty| LayoutEntry { binding, visibility: Stages::COMPUTE, ty };
        // The parameters in a uniform buffer, or a storage one where uniforms recompile.
        let (params_binding, usage, wgsl) = if b.caps().inlines_uniforms {
            let wgsl = CULL_WGSL.replace("var<uniform> params", "var<storage, read> params");
            debug_assert_ne!(wgsl, CULL_WGSL, "the declaration was swapped");
            (BindingType::Storage { dynamic: true }, switchyard_backend::BufferUsage::STORAGE, wgsl)
        } else {
            let uniform = BindingType::Uniform { dynamic: true, min_size: PARAMS_SIZE as u64 };
            (uniform, switchyard_backend::BufferUsage::UNIFORM, CULL_WGSL.to_owned())
        };
        let (read, write) = (BindingType::Storage { dynamic: false }, BindingType::StorageReadWrite { dynamic: false });
        let mut entries = vec![entry(0, params_binding), entry(1, read), entry(2, read)];
        entries.extend([entry(3, write), entry(4, write), entry(5, write)]);
        if occlusion {
            entries.push(entry(6, read));
        }
        let layout = m.add(b.create_bind_group_layout(&BindGroupLayoutDesc { label: "gpu-cull".into(), entries }))?;
        let shader = m.add(b.create_shader(&ShaderModuleDesc { label: "gpu-cull".into(), wgsl }))?;
        let mut make = |entries: [&str; 4]| -> Result<[PipelineId; 4], CreateError> {
            let mut pipelines = [PipelineId::default(); 4];
            for (p, entry) in pipelines.iter_mut().zip(entries) {
                *p = m.add(b.create_compute_pipeline(&ComputePipelineDesc {
                    label: format!("gpu-cull-{entry}"),
                    shader,
                    entry: entry.into(),
                    bind_group_layouts: vec![layout],
                }))?;
            }
            Ok(pipelines)
        };
        let pipelines = make(["count", "scan_blocks", "scatter", "write_args"])?;
        let counted = if count {
            Some(make(["write_args_counted", "scan_buckets", "scatter_buckets", "move_args"])?)
        } else {
            None
        };
        let views = crate::frame_graph::MAX_VIEWS as u64;
        let params_buf = m.add(buffer(b, "gpu-cull-params", 2 * views * PARAMS_SLOT, usage))?;
        let storage = switchyard_backend::BufferUsage::STORAGE;
        let bounds_buf = m.add(buffer(b, "bounds", max_objects as u64 * BOUNDS_SIZE, storage))?;
        let occlusion =
            if occlusion { Some(crate::occlusion::OcclusionObjects::create(m, b, shader, layout)?) } else { None };
        Ok(Self {
            layout,
            shader,
            pipelines,
            counted,
            params_buf,
            bounds_buf,
            pass: PassDesc::compute("gpu-cull"),
            occlusion,
            occlusion_pass: PassDesc::compute("occlusion"),
            receivers_pass: PassDesc::compute("shadow-receivers"),
        })
    }

    /// Every object here, given up.
    pub(crate) fn resources(&self) -> impl Iterator<Item = Resource> + '_ {
        self.pipelines
            .iter()
            .chain(self.counted.iter().flatten())
            .map(|&p| Resource::Pipeline(p))
            .chain([
                Resource::Shader(self.shader),
                Resource::BindGroupLayout(self.layout),
                Resource::Buffer(self.params_buf),
                Resource::Buffer(self.bounds_buf),
            ])
            .chain(self.occlusion.iter().flat_map(|o| o.resources()))
    }

    /// Whether GPU-culled views draw through count buffers (`count.rs`).
    pub(crate) fn counts(&self) -> bool {
        self.counted.is_some()
    }

    /// The bind group of one view's cull over its buffers.
    pub(crate) fn group<B: Backend>(
        &self,
        b: &B,
        lists: BufferId,
        instances: BufferId,
        args: BufferId,
        scratch: BufferId,
        pyramid: BufferId,
    ) -> Result<BindGroupId, CreateError> {
        let whole = |buffer| BindResource::Buffer { buffer, offset: 0, size: None };
        let pyramid = self.occlusion.as_ref().map(|_| BindEntry { binding: 6, resource: whole(pyramid) });
        b.create_bind_group(&BindGroupDesc {
            label: "gpu-cull".into(),
            layout: self.layout,
            entries: [
                BindEntry {
                    binding: 0,
                    resource: BindResource::Buffer {
                        buffer: self.params_buf,
                        offset: 0,
                        size: Some(PARAMS_SIZE as u64),
                    },
                },
                BindEntry { binding: 1, resource: whole(self.bounds_buf) },
                BindEntry { binding: 2, resource: whole(lists) },
                BindEntry { binding: 3, resource: whole(instances) },
                BindEntry { binding: 4, resource: whole(args) },
                BindEntry { binding: 5, resource: whole(scratch) },
            ]
            .into_iter()
            .chain(pyramid)
            .collect(),
        })
    }

    /// The commands of one view's cull, appended to `out`: its four dispatches (none for
    /// no candidates), for `phase` 2 those of an occlusion cull's second phase (parameters
    /// in the second slot) and for `RECEIVERS_PHASE` those of a cull to receivers' casters.
    pub(crate) fn commands(
        &self,
        group: BindGroupId,
        slot: u32,
        buckets: &Buckets,
        phase: u32,
        out: &mut Vec<Command>,
    ) {
        let n = buckets.candidates().len() as u32;
        if n == 0 {
            return;
        }
        let slot = if phase == 2 { crate::frame_graph::MAX_VIEWS as u32 + slot } else { slot };
        let bind = Command::SetBindGroup { index: 0, group, offsets: DynamicOffsets::one(slot * PARAMS_SLOT as u32) };
        let blocks = n.div_ceil(GPU_CULL_BLOCK);
        let arg_groups = (buckets.buckets.len() as u32).div_ceil(GPU_CULL_BLOCK);
        let [mut count, scan, mut scatter, args] = self.pipelines;
        match (phase, &self.occlusion) {
            (2, Some(o)) => [count, scatter] = o.late,
            (crate::occlusion::RECEIVERS_PHASE, Some(o)) => [count, scatter] = o.receivers_cull,
            _ => {}
        }
        let args = self.counted.map_or(args, |c| c[0]);
        out.extend([
            Command::SetPipeline(count),
            bind,
            grid(blocks),
            Command::SetPipeline(scan),
            Command::Dispatch { x: 1, y: 1, z: 1 },
            Command::SetPipeline(scatter),
            grid(blocks),
            Command::SetPipeline(args),
            grid(arg_groups),
        ]);
        if let Some([_, scan_buckets, scatter_buckets, move_args]) = self.counted {
            out.extend([
                Command::SetPipeline(scan_buckets),
                Command::Dispatch { x: 1, y: 1, z: 1 },
                Command::SetPipeline(scatter_buckets),
                grid(arg_groups),
                Command::SetPipeline(move_args),
                grid(arg_groups),
            ]);
        }
    }
}

/// Bytes of a view's scratch buffer for `objects` candidates: ranks (one more than the
/// candidates), one sum per block, and a bit (a `u32`) per candidate for occlusion culls.
pub(crate) fn scratch_bytes(objects: u64) -> u64 {
    (2 * objects + 1 + objects.div_ceil(u64::from(GPU_CULL_BLOCK))) * 4
}

/// Bytes of a view's list buffer for `objects` candidates: bucket starts (at most one
/// bucket per candidate, plus one) and the candidates; with count buffers (`count`) each
/// bucket's multi-draw and the multi-draws' first buckets (plus one) too.
pub(crate) fn lists_bytes(objects: u64, count: bool) -> u64 {
    if count {
        (4 * objects + 2) * 4
    } else {
        (2 * objects + 1) * 4
    }
}

/// The depth target (and its size) a view is occlusion-culled against.
pub(crate) type DepthTarget = (switchyard_backend::TextureId, (u32, u32));

/// Grows a GPU-culled view's list and scratch buffers to `objects` candidates (making them
/// at first) and makes its bind group again where a buffer it binds changed; with
/// `pyramid` (what an occlusion or receiver pyramid is built from) the view's pyramid
/// too, without it the pyramid goes. What was replaced goes into `gone`. `instances` and `args`: the view's
/// instance and indirect buffers, which the group binds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare_view<B: Backend>(
    b: &B,
    cull: &CullObjects,
    (instances, args): (BufferId, BufferId),
    view: &mut Option<ViewCull>,
    occlusion: &mut Option<ViewOcclusion>,
    objects: u64,
    pyramid: Option<crate::occlusion::PyramidSource>,
    gone: &mut Vec<Resource>,
) -> Result<(), CreateError> {
    let pyramid = match (&cull.occlusion, pyramid) {
        (Some(o), Some(src)) => {
            crate::occlusion::prepare_view(b, o, occlusion, src, gone)?;
            occlusion.as_ref().map_or(o.empty, |v| v.texels.id)
        }
        (o, _) => {
            gone.extend(occlusion.take().into_iter().flat_map(|v| v.resources()));
            o.as_ref().map_or(BufferId::default(), |o| o.empty)
        }
    };
    let make = |label, size| GrowBuffer::new(b, label, size, BufferUsage::STORAGE);
    let v = match view.as_mut() {
        Some(v) => v,
        None => {
            // The group binds all four: what was made goes again if a later step fails.
            let lists = make("gpu-cull-lists", lists_bytes(objects, cull.counts()))?;
            let scratch = make("gpu-cull-scratch", scratch_bytes(objects))
                .inspect_err(|_| gone.push(Resource::Buffer(lists.id)))?;
            let group = cull
                .group(b, lists.id, instances, args, scratch.id, pyramid)
                .inspect_err(|_| gone.extend([Resource::Buffer(lists.id), Resource::Buffer(scratch.id)]))?;
            let bound = [lists.id, instances, args, scratch.id, pyramid];
            let (groups, groups_now) = (Vec::new(), Vec::new());
            *view = Some(ViewCull { lists, scratch, group, bound, uploaded: None, bits: false, groups, groups_now });
            return Ok(());
        }
    };
    for (g, need, label) in [
        (&mut v.lists, lists_bytes(objects, cull.counts()), "gpu-cull-lists"),
        (&mut v.scratch, scratch_bytes(objects), "gpu-cull-scratch"),
    ] {
        if g.capacity < need {
            gone.push(Resource::Buffer(std::mem::replace(g, make(label, need)?).id));
        }
    }
    let bound = [v.lists.id, instances, args, v.scratch.id, pyramid];
    // A new scratch buffer holds no bits.
    v.bits &= bound[3] == v.bound[3];
    if bound != v.bound {
        let group = cull.group(b, v.lists.id, instances, args, v.scratch.id, pyramid)?;
        gone.push(Resource::BindGroup(std::mem::replace(&mut v.group, group)));
        v.bound = bound;
    }
    Ok(())
}
