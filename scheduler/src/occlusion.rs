//! Stage 1 on the GPU, second part: two-phase occlusion culling of the opaque forward
//! passes culled on the GPU ([`RendererConfig::occlusion`](crate::RendererConfig::occlusion)),
//! as niagara and Bevy 0.19 do it.
//!
//! Each candidate of such a view has a bit, "visible last frame", after the ranks in its
//! cull's scratch buffer. The frame's cull pass (phase 1) compacts the candidates inside
//! the frustum whose bit is set into the first half of the instance buffer and the first
//! half of the indirect records (records A). The pass is then split in two around a
//! compute pass:
//!
//! 1. the first half draws records A and stores color and depth;
//! 2. the compute pass builds a depth pyramid from that depth (`shaders/pyramid.wgsl`:
//!    level 0 at half the target's size, each texel the farthest depth of the 2×2 texels
//!    below it; odd sizes round up, so the texels of a level cover aligned power-of-two
//!    blocks of the target and every target texel exactly once), then tests every
//!    candidate inside the frustum against it (`count_late`, `scatter_late` in
//!    `shaders/cull.wgsl`): its box's screen rectangle and nearest depth against the
//!    pyramid level where the rectangle spans at most 2×2 texels; a box that crosses the
//!    near plane is visible. The result is the candidate's bit for the next frame; the
//!    visible ones not drawn in phase 1 are compacted into the second halves (records B);
//! 3. the second half loads color and depth and draws records B with the same commands
//!    at the other record offsets.
//!
//! What phase 1 draws depends on last frame's bits only, and phase 2 draws every visible
//! object phase 1 did not: whatever the bits hold, no visible object is missed (a stale
//! bit costs time, never pixels). When the buckets are built again, or the view's buffers
//! are new, phase 1 draws everything in the frustum (`reset`). The split, the pyramid's
//! dispatches and both halves' commands depend only on the buckets and the target's
//! size, so the command stream is the same for any thread count and any camera.

use switchyard_backend::{
    Backend, BindEntry, BindGroupDesc, BindGroupId, BindGroupLayoutDesc, BindGroupLayoutId, BindResource, BindingType,
    BufferId, BufferUsage, Caps, Command, ComputePipelineDesc, CreateError, Digest, DynamicOffsets, LayoutEntry,
    LoadOp, PassDesc, PassSubmit, PipelineId, Resource, ShaderId, ShaderModuleDesc, Stages, StoreOp, TextureId,
    TextureSampleKind,
};

use glam::Mat4;

use crate::gpu_buffer::{buffer, GrowBuffer, Made};

/// Most pyramid levels (a target side up to 2^16 texels).
pub(crate) const MAX_LEVELS: usize = 16;
/// Bytes of one level's parameters in a view's level buffer (the dynamic-offset alignment).
pub(crate) const LEVEL_SLOT: u64 = 256;
/// Bytes of the level parameters the shaders read (`Level` in `shaders/pyramid.wgsl`,
/// and in level 0 of a receiver pyramid `Receivers` in `shaders/receivers.wgsl`).
const LEVEL_SIZE: u64 = 160;
/// The cull phase of a shadow view culled to the casters of its receivers.
pub(crate) const RECEIVERS_PHASE: u32 = 3;
/// Most texels on a side of a receiver map's level 0.
const RECEIVER_MAP_MAX: u32 = 256;
/// Workgroup side of the pyramid shader.
const TILE: u32 = 8;

/// Whether `caps` can cull by occlusion (on top of [`crate::gpu_cull_support`]); the reason
/// where not.
pub fn occlusion_support(caps: &Caps) -> Result<(), &'static str> {
    crate::gpu_cull_support(caps)?;
    if caps.max_storage_buffers_per_stage < 6 {
        return Err("the backend binds fewer than six storage buffers per shader stage");
    }
    Ok(())
}

/// Whether a renderer asked for occlusion culling (`asked`) culls by occlusion, given
/// whether it culls on the GPU at all, and why not where it was asked to.
pub(crate) fn resolve(asked: bool, gpu_cull: bool, caps: &Caps) -> (bool, Option<&'static str>) {
    match (asked, gpu_cull) {
        (false, _) => (false, None),
        (true, false) => {
            (false, Some("occlusion culling needs GPU culling (CullOn::Gpu or Auto, and a backend that can)"))
        }
        (true, true) => match occlusion_support(caps) {
            Ok(()) => (true, None),
            Err(why) => (false, Some(why)),
        },
    }
}

/// Which of a view's two culls parameters are for (`gpu_cull::params`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Occluding<'a> {
    /// 1: the first phase (the frame's cull pass), 2: the second (after the pyramid).
    pub(crate) phase: u32,
    /// The candidates' bits are not this view's yet.
    pub(crate) reset: bool,
    pub(crate) view_proj: &'a Mat4,
    pub(crate) pyramid: &'a Pyramid,
}

/// The target size of a receiver pyramid for a shadow map of `map` texels: level 0 holds
/// at most [`RECEIVER_MAP_MAX`] texels a side and never more than the map, so a texel of
/// it covers at least one shadow-map texel (the cull grows a caster's rectangle by one
/// level-0 texel for the lookup's filter). The pyramid's target is twice level 0.
pub(crate) fn receiver_target(map: (u32, u32)) -> (u32, u32) {
    let side = |m: u32| 2 * m.clamp(1, RECEIVER_MAP_MAX);
    (side(map.0), side(map.1))
}

/// The level layout of a depth pyramid over a target of `width` × `height` texels: level
/// 0 at half size rounded up, each next level half the last rounded up, down to 1×1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pyramid {
    pub(crate) target: (u32, u32),
    pub(crate) levels: u32,
    /// Each level's size.
    pub(crate) sizes: [(u32, u32); MAX_LEVELS],
    /// Where each level starts in the pyramid buffer, in texels.
    pub(crate) at: [u32; MAX_LEVELS],
    /// Texels of all levels.
    pub(crate) texels: u32,
}

impl Pyramid {
    pub(crate) fn new(width: u32, height: u32) -> Self {
        let mut p =
            Self { target: (width, height), levels: 0, sizes: [(0, 0); MAX_LEVELS], at: [0; MAX_LEVELS], texels: 0 };
        let (mut w, mut h) = (width.div_ceil(2).max(1), height.div_ceil(2).max(1));
        loop {
            let l = p.levels as usize;
            (p.sizes[l], p.at[l]) = ((w, h), p.texels);
            p.texels += w * h;
            p.levels += 1;
            if (w, h) == (1, 1) || p.levels as usize == MAX_LEVELS {
                return p;
            }
            (w, h) = (w.div_ceil(2), h.div_ceil(2));
        }
    }

    /// Bytes of the pyramid buffer.
    pub(crate) fn bytes(&self) -> u64 {
        u64::from(self.texels) * 4
    }

    /// The level buffer's bytes: per level (`Level` in `shaders/pyramid.wgsl`) the size
    /// and start of what it reads (the target for level 0) and of what it writes.
    pub(crate) fn level_bytes(&self, out: &mut Vec<u8>) {
        out.clear();
        out.resize(MAX_LEVELS * LEVEL_SLOT as usize, 0);
        for l in 0..self.levels as usize {
            let (src, src_at) = if l == 0 { (self.target, 0) } else { (self.sizes[l - 1], self.at[l - 1]) };
            let words = [src.0, src.1, self.sizes[l].0, self.sizes[l].1, src_at, self.at[l], 0, 0];
            let at = l * LEVEL_SLOT as usize;
            out[at..at + 32].copy_from_slice(bytemuck::cast_slice(&words));
        }
    }

    /// The level buffer's bytes for a receiver pyramid: level 0's slot holds what the
    /// scatter reads (`Receivers` in `shaders/receivers.wgsl`): the depth target's size,
    /// level 0's, the camera's clip-to-world matrix and the shadow map's world-to-clip.
    pub(crate) fn receiver_bytes(&self, depth: (u32, u32), clip_to_world: &Mat4, light: &Mat4, out: &mut Vec<u8>) {
        self.level_bytes(out);
        let words = [depth.0, depth.1, self.sizes[0].0, self.sizes[0].1, 0, 0, 0, 0];
        out[..32].copy_from_slice(bytemuck::cast_slice(&words));
        out[32..96].copy_from_slice(bytemuck::cast_slice(&clip_to_world.to_cols_array()));
        out[96..160].copy_from_slice(bytemuck::cast_slice(&light.to_cols_array()));
    }
}

/// The pyramid pipelines and their layout, the late-phase cull pipelines, and the empty
/// pyramid the cull groups of views without occlusion bind.
#[derive(Debug)]
pub(crate) struct OcclusionObjects {
    layout: BindGroupLayoutId,
    shader: ShaderId,
    /// from_depth, from_level.
    pyramid: [PipelineId; 2],
    /// count_late, scatter_late (the cull shader's, over its layout).
    pub(crate) late: [PipelineId; 2],
    /// count_receivers, scatter_receivers (the cull shader's, over its layout).
    pub(crate) receivers_cull: [PipelineId; 2],
    /// The receiver maps' shader and its clear and scatter pipelines (the pyramid's
    /// layout).
    receivers_shader: ShaderId,
    receivers: [PipelineId; 2],
    pub(crate) empty: BufferId,
}

impl OcclusionObjects {
    /// Makes them; `cull_shader` and `cull_layout` are the GPU cull's (with the pyramid
    /// at binding 6).
    pub(crate) fn create<B: Backend>(
        m: &mut Made<'_, B>,
        b: &B,
        cull_shader: ShaderId,
        cull_layout: BindGroupLayoutId,
    ) -> Result<Self, CreateError> {
        let entry = |binding, ty| LayoutEntry { binding, visibility: Stages::COMPUTE, ty };
        let layout = m.add(b.create_bind_group_layout(&BindGroupLayoutDesc {
            label: "depth-pyramid".into(),
            entries: vec![
                entry(0, BindingType::Uniform { dynamic: true, min_size: LEVEL_SIZE }),
                entry(1, BindingType::Texture(TextureSampleKind::UnfilterableFloat)),
                entry(2, BindingType::StorageReadWrite { dynamic: false }),
            ],
        }))?;
        let shader = m.add(b.create_shader(&ShaderModuleDesc {
            label: "depth-pyramid".into(),
            wgsl: include_str!("shaders/pyramid.wgsl").into(),
        }))?;
        let mut pipeline = |label: &str, shader, entry: &str, layout| {
            m.add(b.create_compute_pipeline(&ComputePipelineDesc {
                label: label.into(),
                shader,
                entry: entry.into(),
                bind_group_layouts: vec![layout],
            }))
        };
        let pyramid = [
            pipeline("depth-pyramid-from-depth", shader, "from_depth", layout)?,
            pipeline("depth-pyramid-from-level", shader, "from_level", layout)?,
        ];
        let late = [
            pipeline("gpu-cull-count-late", cull_shader, "count_late", cull_layout)?,
            pipeline("gpu-cull-scatter-late", cull_shader, "scatter_late", cull_layout)?,
        ];
        let empty = m.add(buffer(b, "depth-pyramid-none", 16, BufferUsage::STORAGE))?;
        let receivers_shader = m.add(b.create_shader(&ShaderModuleDesc {
            label: "shadow-receivers".into(),
            wgsl: include_str!("shaders/receivers.wgsl").into(),
        }))?;
        let mut pipeline = |label: &str, entry: &str| {
            m.add(b.create_compute_pipeline(&ComputePipelineDesc {
                label: label.into(),
                shader: receivers_shader,
                entry: entry.into(),
                bind_group_layouts: vec![layout],
            }))
        };
        let receivers =
            [pipeline("shadow-receivers-clear", "clear")?, pipeline("shadow-receivers-scatter", "scatter")?];
        let mut pipeline = |label: &str, entry: &str| {
            m.add(b.create_compute_pipeline(&ComputePipelineDesc {
                label: label.into(),
                shader: cull_shader,
                entry: entry.into(),
                bind_group_layouts: vec![cull_layout],
            }))
        };
        let receivers_cull = [
            pipeline("gpu-cull-count-receivers", "count_receivers")?,
            pipeline("gpu-cull-scatter-receivers", "scatter_receivers")?,
        ];
        Ok(Self { layout, shader, pyramid, late, receivers_cull, receivers_shader, receivers, empty })
    }

    /// Every object here, given up.
    pub(crate) fn resources(&self) -> impl Iterator<Item = Resource> + '_ {
        let pipelines = self.pyramid.iter().chain(&self.late).chain(&self.receivers_cull).chain(&self.receivers);
        pipelines.map(|&p| Resource::Pipeline(p)).chain([
            Resource::Shader(self.shader),
            Resource::Shader(self.receivers_shader),
            Resource::BindGroupLayout(self.layout),
            Resource::Buffer(self.empty),
        ])
    }

    /// The pyramid's dispatches for a view: level 0 from the depth target, then each
    /// level from the one before.
    pub(crate) fn pyramid_commands(&self, view: &ViewOcclusion, out: &mut Vec<Command>) {
        let p = &view.pyramid;
        for l in 0..p.levels as usize {
            if l < 2 {
                out.push(Command::SetPipeline(self.pyramid[l]));
            }
            let offsets = DynamicOffsets::one(l as u32 * LEVEL_SLOT as u32);
            out.push(Command::SetBindGroup { index: 0, group: view.group, offsets });
            let (w, h) = p.sizes[l];
            out.push(Command::Dispatch { x: w.div_ceil(TILE), y: h.div_ceil(TILE), z: 1 });
        }
    }
}

impl OcclusionObjects {
    /// A receiver pyramid's dispatches: level 0 cleared, the depth target's texels
    /// scattered into it, then each level above from the one before.
    pub(crate) fn receivers_commands(&self, view: &ViewOcclusion, out: &mut Vec<Command>) {
        let p = &view.pyramid;
        let group = |l: usize| Command::SetBindGroup {
            index: 0,
            group: view.group,
            offsets: DynamicOffsets::one(l as u32 * LEVEL_SLOT as u32),
        };
        let over = |(w, h): (u32, u32)| Command::Dispatch { x: w.div_ceil(TILE), y: h.div_ceil(TILE), z: 1 };
        out.extend([Command::SetPipeline(self.receivers[0]), group(0), over(p.sizes[0])]);
        out.extend([Command::SetPipeline(self.receivers[1]), group(0), over(view.source)]);
        for l in 1..p.levels as usize {
            if l == 1 {
                out.push(Command::SetPipeline(self.pyramid[1]));
            }
            out.extend([group(l), over(p.sizes[l])]);
        }
    }
}

/// One occlusion-culled view's pyramid: its buffer, level parameters and the bind group
/// over them and the view's depth target.
#[derive(Debug)]
pub(crate) struct ViewOcclusion {
    pub(crate) pyramid: Pyramid,
    pub(crate) texels: GrowBuffer,
    pub(crate) levels: BufferId,
    pub(crate) depth: TextureId,
    /// The depth target's size (the pyramid's target for occlusion; a receiver
    /// pyramid's target is its shadow map's, [`receiver_target`]).
    pub(crate) source: (u32, u32),
    pub(crate) group: BindGroupId,
    /// The level parameters were written for `pyramid` (`false`: with the next frame).
    pub(crate) levels_written: bool,
}

impl ViewOcclusion {
    /// Its buffers and group, given up.
    pub(crate) fn resources(&self) -> [Resource; 3] {
        [Resource::BindGroup(self.group), Resource::Buffer(self.texels.id), Resource::Buffer(self.levels)]
    }
}

/// What a view's pyramid is built from: a depth target and its size, and the pyramid's
/// target size (the depth target's for occlusion, [`receiver_target`] for receivers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PyramidSource {
    pub(crate) depth: TextureId,
    pub(crate) size: (u32, u32),
    pub(crate) target: (u32, u32),
}

/// Makes or updates `slot` (a view's pyramid) for `src`: the pyramid buffer grows, the
/// group is made again where the depth texture or the buffer changed; what was replaced
/// goes into `gone`. On an error `slot` is as it was.
pub(crate) fn prepare_view<B: Backend>(
    b: &B,
    objects: &OcclusionObjects,
    slot: &mut Option<ViewOcclusion>,
    src: PyramidSource,
    gone: &mut Vec<Resource>,
) -> Result<(), CreateError> {
    let (depth, source) = (src.depth, src.size);
    let pyramid = Pyramid::new(src.target.0, src.target.1);
    let group = |texels: BufferId, levels: BufferId| {
        b.create_bind_group(&BindGroupDesc {
            label: "depth-pyramid".into(),
            layout: objects.layout,
            entries: vec![
                BindEntry {
                    binding: 0,
                    resource: BindResource::Buffer { buffer: levels, offset: 0, size: Some(LEVEL_SIZE) },
                },
                BindEntry { binding: 1, resource: BindResource::Texture(depth) },
                BindEntry { binding: 2, resource: BindResource::Buffer { buffer: texels, offset: 0, size: None } },
            ],
        })
    };
    let Some(v) = slot.as_mut() else {
        let texels = GrowBuffer::new(b, "depth-pyramid", pyramid.bytes(), BufferUsage::STORAGE)?;
        let levels = match buffer(b, "depth-pyramid-levels", MAX_LEVELS as u64 * LEVEL_SLOT, BufferUsage::UNIFORM) {
            Ok(l) => l,
            Err(e) => {
                gone.push(Resource::Buffer(texels.id));
                return Err(e);
            }
        };
        return match group(texels.id, levels) {
            Ok(group) => {
                *slot = Some(ViewOcclusion { pyramid, texels, levels, depth, source, group, levels_written: false });
                Ok(())
            }
            Err(e) => {
                gone.extend([Resource::Buffer(texels.id), Resource::Buffer(levels)]);
                Err(e)
            }
        };
    };
    let grown = if v.texels.capacity < pyramid.bytes() {
        Some(GrowBuffer::new(b, "depth-pyramid", pyramid.bytes(), BufferUsage::STORAGE)?)
    } else {
        None
    };
    if grown.is_some() || v.depth != depth {
        let texels = grown.as_ref().map_or(v.texels.id, |g| g.id);
        let made = match group(texels, v.levels) {
            Ok(g) => g,
            Err(e) => {
                gone.extend(grown.map(|g| Resource::Buffer(g.id)));
                return Err(e);
            }
        };
        gone.push(Resource::BindGroup(std::mem::replace(&mut v.group, made)));
        if let Some(g) = grown {
            gone.push(Resource::Buffer(std::mem::replace(&mut v.texels, g).id));
        }
        v.depth = depth;
    }
    if v.pyramid != pyramid || v.source != source {
        (v.pyramid, v.source) = (pyramid, source);
        v.levels_written = false;
    }
    Ok(())
}

/// The halves of a split pass: the first begins as `pass` does and stores color and
/// depth, the second loads them and ends as `pass` does.
pub(crate) fn halves(pass: &PassDesc) -> [PassDesc; 2] {
    let (mut first, mut second) = (pass.clone(), pass.clone());
    if let Some(c) = &mut first.color {
        c.store = StoreOp::Store;
    }
    if let Some(d) = &mut first.depth {
        d.store = StoreOp::Store;
    }
    if let Some(c) = &mut second.color {
        c.load = LoadOp::Load;
    }
    if let Some(d) = &mut second.depth {
        d.load = LoadOp::Load;
    }
    [first, second]
}

/// The second half of an occlusion-culled view: the compute pass before it (its commands,
/// chunk and digest) and its chunks (the first half's commands at the second records).
#[derive(Debug)]
pub(crate) struct LateHalf<C> {
    /// Split this frame.
    pub(crate) on: bool,
    pub(crate) compute_cmds: Vec<Command>,
    pub(crate) compute_chunk: Option<C>,
    pub(crate) compute_digest: Digest,
    pub(crate) cmds: Vec<Vec<Command>>,
    pub(crate) chunks: Vec<Option<C>>,
    pub(crate) digests: Vec<Digest>,
}

impl<C> Default for LateHalf<C> {
    fn default() -> Self {
        Self {
            on: false,
            compute_cmds: Vec::new(),
            compute_chunk: None,
            compute_digest: Digest::default(),
            cmds: Vec::new(),
            chunks: Vec::new(),
            digests: Vec::new(),
        }
    }
}

/// Makes the three packet passes of a split view from `passes[0]`, which holds the pass
/// (`pass`) with the first half's chunks: the first half, the compute pass (the pyramid
/// and the second cull), the second half with `late`'s chunks ([`halves`]).
pub(crate) fn split_pass<C>(passes: &mut [PassSubmit<C>], pass: &PassDesc, late: &mut LateHalf<C>, compute: &PassDesc) {
    let [first, middle, second] = passes else {
        unreachable!("a split pass takes three packet passes");
    };
    [first.desc, second.desc] = halves(pass);
    middle.desc.clone_from(compute);
    middle.chunks.clear();
    middle.chunks.extend(late.compute_chunk.take());
    second.chunks.clear();
    second.chunks.extend(late.chunks.drain(..).flatten());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_cover_the_target_and_end_at_one_texel() {
        for (w, h) in [(1, 1), (2, 2), (3, 5), (333, 217), (1920, 1080), (16384, 1), (7, 4096)] {
            let p = Pyramid::new(w, h);
            let last = p.levels as usize - 1;
            assert_eq!(p.sizes[last], (1, 1), "{w}x{h}");
            // Level l's texels cover aligned blocks of 2^(l+1) target texels.
            for l in 0..p.levels as usize {
                let side = 1u32 << (l + 1);
                assert_eq!(p.sizes[l], (w.div_ceil(side), h.div_ceil(side)), "{w}x{h} level {l}");
            }
            let sum: u32 = (0..p.levels as usize).map(|l| p.sizes[l].0 * p.sizes[l].1).sum();
            assert_eq!(p.texels, sum);
            let mut bytes = Vec::new();
            p.level_bytes(&mut bytes);
            let words: &[u32] = bytemuck::cast_slice(&bytes[LEVEL_SLOT as usize..LEVEL_SLOT as usize + 24]);
            if p.levels > 1 {
                assert_eq!(words, [p.sizes[0].0, p.sizes[0].1, p.sizes[1].0, p.sizes[1].1, 0, p.at[1]]);
            }
        }
    }
}
