//! The frame as a graph of passes over targets, declared by the engine: what each pass
//! draws, what it loads, stores, resolves and samples; compiled into a submission order,
//! lifetimes, aliasing, and the bytes each pass moves through memory.
//!
//! A [`FrameGraph`] names
//! - **cameras** ([`FrameGraph::camera`]): slots the engine fills every frame with a
//!   [`Camera`] (any number; a shadow cascade is one more camera);
//! - **targets** ([`FrameGraph::target`]): textures the graph owns — transient ones live
//!   within a frame and may share memory, retained ones keep their content after the frame
//!   ([`crate::Renderer::read_target`]) — and external ones the engine hands in per frame
//!   (a swapchain image, an editor viewport);
//! - **buffers** ([`FrameGraph::buffer`]): the engine's GPU buffers that passes read and
//!   write (indirect arguments a GPU cull writes, particles a simulation moves), named so
//!   the graph can order the passes; the engine creates them and binds them itself, or,
//!   for a fullscreen pass, hands them to Switchyard to bind ([`FrameGraph::uniform_buffer`],
//!   [`crate::Renderer::bind_buffer`]);
//! - **passes** ([`Pass`]): an owned name, a color and a depth attachment with load and
//!   store ops, the targets the pass samples, the buffers it reads and writes, and what it
//!   does ([`PassContent`]): draw the scene's queue for one camera, a fullscreen shader
//!   (post-processing), an engine callback that records its own draws on a worker, or an
//!   engine callback that records compute dispatches.
//!
//! [`crate::Renderer::set_graph`] compiles it: checks it and derives
//! - **order**: a pass that samples a target runs after every pass that writes it; passes
//!   writing one target keep their declared order (a `Load` continues the previous
//!   writer's content); passes touching one buffer, one of them writing it, keep their
//!   declared order (as in a command list); a cycle is an error naming a pass on it. Among
//!   ready passes, offscreen work goes first, then a pass that ends a transient target's
//!   lifetime (a light's lighting pass right after its shadow maps, so the next light's
//!   maps can share their textures), then declaration order: deterministic;
//! - **culling**: passes whose results reach no retained or external target and write no
//!   buffer (buffers are the engine's: a write is a result) are skipped (and reported);
//! - **lifetimes and aliasing**: each transient target lives from its first to its last
//!   use; transient targets of equal format, size, samples and usage whose lifetimes do not
//!   overlap share one physical texture;
//! - **transience**: a transient target that is only rendered to, cleared (or don't-care)
//!   on load and discarded on store, never needs memory behind it (memoryless where the
//!   adapter saves memory that way);
//! - **bandwidth**: per pass, the bytes each attachment loads, stores and resolves;
//! - **warnings**: a store nothing reads, a load of a target nothing wrote this frame.

mod camera;
mod check;
mod compile;
mod pass;

use std::fmt;
use std::sync::Arc;

pub use crate::error::GraphError;
pub use camera::Camera;
pub(crate) use compile::{CompiledGraph, GraphCaps};
pub use compile::{
    GraphWarning, PassBytes, FORWARD_FORMATS, MAX_FULLSCREEN_INPUTS, MAX_PASSES, MAX_SHADOW_MAPS, MAX_VIEWS,
};
pub use pass::Pass;

use switchyard_backend::wgpu::NativePass;
use switchyard_backend::{Command, TextureFormat, TextureId};

use crate::material::PassKind;

/// A target of a frame graph: its index in the graph, and the graph it belongs to (a
/// target of another graph is refused where it is given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetId(pub(crate) u32, pub(crate) GraphTag);

/// Which graph a [`TargetId`] or [`GraphBuffer`] belongs to: each [`FrameGraph::new`] takes
/// a new one (a clone keeps it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct GraphTag(u32);

impl GraphTag {
    fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl TargetId {
    /// The target's index (its declaration order).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// A camera slot of a frame graph, filled per frame ([`crate::FrameInput::cameras`], in
/// declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CameraId(pub(crate) u32);

impl CameraId {
    /// The slot of index `i` (its declaration order); a slot the graph lacks is an error
    /// when the graph is set.
    pub fn from_index(i: u32) -> Self {
        Self(i)
    }

    /// The slot's index.
    pub fn index(self) -> u32 {
        self.0
    }
}

/// A buffer of a frame graph (its index in the graph): a name for one of the engine's
/// buffers, so that the passes reading and writing it are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphBuffer(pub(crate) u32, pub(crate) GraphTag);

impl GraphBuffer {
    /// The buffer's index (its declaration order).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// How large a target is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetSize {
    /// A fixed size in texels (shadow maps).
    Fixed {
        /// Width in texels.
        width: u32,
        /// Height in texels.
        height: u32,
    },
    /// The size of the frame's output ([`crate::Renderer::resize`] changes it).
    Output,
    /// The output's size times a factor (each side rounded, at least 1): 0.5 is half
    /// resolution.
    Scaled(f32),
}

impl TargetSize {
    /// The size in texels for an output of `output` texels (`None`: a scale that is not
    /// finite, above 0 and at most 16).
    pub(crate) fn at(self, output: (u32, u32)) -> Option<(u32, u32)> {
        match self {
            TargetSize::Fixed { width, height } => Some((width, height)),
            TargetSize::Output => Some(output),
            TargetSize::Scaled(f) if f.is_finite() && f > 0.0 && f <= 16.0 => {
                let side = |s: u32| ((s as f32 * f).round() as u32).max(1);
                Some((side(output.0), side(output.1)))
            }
            TargetSize::Scaled(_) => None,
        }
    }
}

/// Where a target's memory comes from and how long its content lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// Owned by the graph, its content lives within one frame: it may share a texture with
    /// other transient targets, or have no memory at all.
    Transient,
    /// Owned by the graph, its content stays after the frame (read it back with
    /// [`crate::Renderer::read_target`]). A frame's result.
    Retained,
    /// The engine's texture, handed in every frame ([`crate::FrameInput::targets`]). A
    /// frame's result.
    External,
}

/// A target: a texture passes render into and sample.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TargetDecl {
    pub(crate) name: String,
    pub(crate) kind: TargetKind,
    pub(crate) format: TextureFormat,
    pub(crate) size: TargetSize,
    pub(crate) samples: u32,
}

/// What happens to an attachment when its pass begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadOp<V> {
    /// Clear to a value (linear RGBA for color, depth in 0..=1).
    Clear(V),
    /// Keep what an earlier pass wrote.
    Load,
    /// The content is undefined: the pass overwrites every texel. A fullscreen pass hands
    /// it to the GPU as a don't-care load (neither loaded nor cleared: cheapest on tiled
    /// GPUs); other passes clear (Switchyard cannot know they cover every texel).
    DontCare,
}

/// What happens to an attachment when its pass ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// Keep the results.
    Store,
    /// Throw them away.
    Discard,
}

/// One attachment of a pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attachment<V> {
    /// The target rendered into.
    pub target: TargetId,
    /// At the start of the pass.
    pub load: LoadOp<V>,
    /// At the end of the pass.
    pub store: StoreOp,
    /// The single-sample target a multisampled attachment resolves into.
    pub resolve: Option<TargetId>,
}

/// Which part of a camera's queue a scene pass draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Every visible object: opaque ones front to back, then transparent ones back to
    /// front.
    #[default]
    All,
    /// Objects of opaque materials.
    Opaque,
    /// Objects of transparent materials, back to front.
    Transparent,
}

/// How a fullscreen or scene pass binds a buffer it reads ([`FrameGraph::uniform_buffer`],
/// [`FrameGraph::storage_buffer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum BufferBinding {
    /// `var<uniform>`: the buffer needs `BufferUsage::UNIFORM`.
    Uniform,
    /// `var<storage, read>`: the buffer needs `BufferUsage::STORAGE`.
    Storage,
}

/// Most buffers one fullscreen pass binds (the portable limit of storage buffers per
/// fragment stage is 4).
pub const MAX_FULLSCREEN_BUFFERS: usize = 4;

/// Most buffers the scene passes of a graph bind (group 2 of every material pipeline;
/// with the transforms in group 0 this stays within the portable limit of storage buffers
/// per stage).
///
/// Scene passes share one pipeline per material, so they share the group's layout: group
/// 2, binding j, is the j-th buffer declared with a binding that any scene pass of the
/// graph reads ([`Pass::reads`]), in declaration order — `var<uniform>` or
/// `var<storage, read>`, visible to the vertex and fragment stages — and every scene pass
/// binds it (a shadow pipeline's group 1 is then empty). A material's shader declares
/// those of them it uses; the built-in lit shader uses none. A shader is compiled against
/// the groups of the graph set when it is created: create the shaders that read group 2
/// after setting a graph that binds it. Each scene pass runs after the passes declared
/// before it that write the buffers it reads itself.
pub const MAX_SCENE_BUFFERS: usize = 4;

/// A fullscreen pass's shader: WGSL with a fragment entry point. Switchyard adds the
/// vertex stage (one triangle over the target) and binds, in group 0:
/// - binding 0: `var<uniform> frame: FullscreenFrame` — the target's size, its inverse,
///   and the pass's `params`;
/// - binding 1: `frame_sampler`, linear and clamping;
/// - binding 2: `frame_point_sampler`, nearest and clamping (for depth inputs);
/// - binding 3 + i: the pass's i-th sampled target as `texture_2d<f32>`; a depth target
///   too, unfilterable, its depth in the red channel: read it with
///   `textureSampleLevel(depth, frame_point_sampler, uv, 0.0).r` or `textureLoad` (a
///   `texture_depth_2d` declaration fails where the GLSL translation cannot sample it,
///   as a typed error when the graph is set);
/// - binding 3 + (sampled targets) + j: the j-th buffer the pass reads that was declared
///   with a binding ([`FrameGraph::uniform_buffer`]: `var<uniform>`,
///   [`FrameGraph::storage_buffer`]: `var<storage, read>`), the engine's buffer bound to it
///   with [`crate::Renderer::bind_buffer`] (at most [`MAX_FULLSCREEN_BUFFERS`]).
///
/// The fragment entry takes `FullscreenVertex` (`@location(0) uv: vec2<f32>`, 0..1 with
/// the origin at the top left) and writes `@location(0)`. Both structs are declared by
/// Switchyard: do not declare them again.
#[derive(Clone, Debug, PartialEq)]
pub struct FullscreenShader {
    /// Name (labels, errors).
    pub name: String,
    /// WGSL with the fragment entry point and the bindings above.
    pub wgsl: String,
    /// The fragment entry point.
    pub entry: String,
    /// Constants of the pass (`frame.params`): exposure, fog distances, ...
    pub params: [f32; 8],
}

/// What an engine callback sees when it records its pass.
#[derive(Clone, Copy, Debug)]
pub struct CallbackContext<'a> {
    /// The pass's name.
    pub pass: &'a str,
    /// The frame number ([`crate::FrameStats::frame`]).
    pub frame: u64,
    /// The size of the pass's attachments (a compute pass: the output's size).
    pub size: (u32, u32),
    /// The textures of the targets the pass samples ([`Pass::sample`]) this frame, in
    /// declaration order: what the engine binds to read them.
    pub inputs: &'a [(TargetId, TextureId)],
}

impl CallbackContext<'_> {
    /// This frame's texture of sampled target `t` (`None`: the pass does not sample it).
    /// A graph-owned target keeps its texture until the graph is compiled again (a new
    /// graph, a resize); an external one is the texture the frame was given.
    pub fn texture(&self, t: TargetId) -> Option<TextureId> {
        self.inputs.iter().find(|(id, _)| *id == t).map(|&(_, tex)| tex)
    }
}

/// Records an engine pass: called once per frame on a worker thread with the pass's
/// context and an empty command list, into which it pushes backend [`Command`]s (its
/// own pipelines, bind groups and buffers, made through [`crate::Renderer::backend`]). The
/// list starts with no state bound; the backend validates it like any chunk. A compute
/// pass's list binds compute pipelines and dispatches (`Command::Dispatch`,
/// `Command::DispatchIndirect`).
pub type PassCallback = Arc<dyn Fn(&CallbackContext<'_>, &mut Vec<Command>) + Send + Sync>;

/// What a pass draws.
#[derive(Clone)]
pub enum PassContent {
    /// The scene as `camera` sees it, through the materials' `kind` pipelines: `Shadow`
    /// renders depth only (objects that cast shadows, single-sampled), `Forward` the lit
    /// color (single- or multisampled). A forward pass samples at most [`MAX_SHADOW_MAPS`] depth targets,
    /// written by shadow passes: its shadow maps.
    Scene {
        /// The camera.
        camera: CameraId,
        /// The pipelines it draws with.
        kind: PassKind,
        /// Which objects.
        queue: Queue,
    },
    /// One triangle over the color target with a shader that samples the pass's inputs.
    Fullscreen(FullscreenShader),
    /// Commands an engine callback records.
    Callback(PassCallback),
    /// Compute dispatches an engine callback records: a pass with no attachments that
    /// reads and writes buffers ([`Pass::reads`], [`Pass::writes`]) and may sample targets.
    Compute(PassCallback),
    /// Drawing the engine does with wgpu itself, in the render pass the wgpu backend begins
    /// for the pass's attachments, on the submission thread ([`Pass::wgpu`]).
    Wgpu(NativePass),
}

impl fmt::Debug for PassContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scene { camera, kind, queue } => {
                f.debug_struct("Scene").field("camera", camera).field("kind", kind).field("queue", queue).finish()
            }
            Self::Fullscreen(s) => f.debug_tuple("Fullscreen").field(&s.name).finish(),
            Self::Callback(_) => f.write_str("Callback"),
            Self::Compute(_) => f.write_str("Compute"),
            Self::Wgpu(_) => f.write_str("Wgpu"),
        }
    }
}

/// A frame described as cameras, targets and passes. Build it once, hand it to
/// [`crate::Renderer::set_graph`] (which compiles it and creates its targets), and render
/// it every frame with [`crate::Renderer::render_graph`].
#[derive(Clone, Debug)]
pub struct FrameGraph {
    /// What its target and buffer ids carry.
    pub(crate) tag: GraphTag,
    pub(crate) cameras: Vec<String>,
    pub(crate) targets: Vec<TargetDecl>,
    pub(crate) buffers: Vec<String>,
    /// How fullscreen passes bind each buffer (`None`: ordering only).
    pub(crate) buffer_bindings: Vec<Option<BufferBinding>>,
    pub(crate) passes: Vec<Pass>,
    /// One texture per transient target (aliasing off: for comparisons and debugging).
    pub(crate) no_aliasing: bool,
}

impl Default for FrameGraph {
    fn default() -> Self {
        Self {
            tag: GraphTag::next(),
            cameras: Vec::new(),
            targets: Vec::new(),
            buffers: Vec::new(),
            buffer_bindings: Vec::new(),
            passes: Vec::new(),
            no_aliasing: false,
        }
    }
}

impl FrameGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of this graph's target of index `i`.
    pub(crate) fn target_id(&self, i: usize) -> TargetId {
        TargetId(i as u32, self.tag)
    }

    /// Adds a camera slot.
    pub fn camera(&mut self, name: impl Into<String>) -> CameraId {
        self.cameras.push(name.into());
        CameraId(self.cameras.len() as u32 - 1)
    }

    /// Adds a single-sample target.
    pub fn target(
        &mut self,
        name: impl Into<String>,
        kind: TargetKind,
        format: TextureFormat,
        size: TargetSize,
    ) -> TargetId {
        self.target_multisampled(name, kind, format, size, 1)
    }

    /// Adds a target with `samples` samples per texel: 1, or a count the backend supports
    /// (`Caps::sample_counts`; 4 on every wgpu adapter). A multisampled target is a render
    /// target only: a pass resolves it ([`Pass::resolve`]) into a single-sample one to
    /// sample or read it. Forward scene passes draw into multisampled color and depth
    /// (one sample count per graph); shadow and fullscreen passes do not.
    pub fn target_multisampled(
        &mut self,
        name: impl Into<String>,
        kind: TargetKind,
        format: TextureFormat,
        size: TargetSize,
        samples: u32,
    ) -> TargetId {
        self.targets.push(TargetDecl { name: name.into(), kind, format, size, samples });
        self.target_id(self.targets.len() - 1)
    }

    /// Adds a buffer: a name for one of the engine's buffers that passes read and write.
    pub fn buffer(&mut self, name: impl Into<String>) -> GraphBuffer {
        self.buffer_with(name, None)
    }

    /// Adds a buffer that fullscreen passes reading it bind as `var<uniform>` (see
    /// [`FullscreenShader`]), and scene passes in group 2 if one of them reads it (see
    /// [`MAX_SCENE_BUFFERS`]); the engine binds its buffer to it with
    /// [`crate::Renderer::bind_buffer`]. Callback, compute and wgpu passes are ordered by it
    /// as by any buffer.
    pub fn uniform_buffer(&mut self, name: impl Into<String>) -> GraphBuffer {
        self.buffer_with(name, Some(BufferBinding::Uniform))
    }

    /// Adds a buffer that fullscreen and scene passes reading it bind as
    /// `var<storage, read>`; as [`FrameGraph::uniform_buffer`] otherwise.
    pub fn storage_buffer(&mut self, name: impl Into<String>) -> GraphBuffer {
        self.buffer_with(name, Some(BufferBinding::Storage))
    }

    fn buffer_with(&mut self, name: impl Into<String>, binding: Option<BufferBinding>) -> GraphBuffer {
        self.buffers.push(name.into());
        self.buffer_bindings.push(binding);
        GraphBuffer(self.buffers.len() as u32 - 1, self.tag)
    }

    /// Adds a pass.
    pub fn pass(&mut self, pass: Pass) -> &mut Self {
        self.passes.push(pass);
        self
    }

    /// The camera slots, in the order frames fill them.
    pub fn cameras(&self) -> &[String] {
        &self.cameras
    }

    /// The target named `name`.
    pub fn find_target(&self, name: &str) -> Option<TargetId> {
        self.targets.iter().position(|t| t.name == name).map(|i| self.target_id(i))
    }

    /// The passes, in declaration order.
    pub fn passes(&self) -> &[Pass] {
        &self.passes
    }

    /// Whether transient targets whose lifetimes do not overlap share textures (the
    /// default). Off, each target gets its own: the pixels are the same, only memory
    /// differs.
    pub fn set_aliasing(&mut self, on: bool) -> &mut Self {
        self.no_aliasing = !on;
        self
    }
}

#[cfg(test)]
mod tests;
