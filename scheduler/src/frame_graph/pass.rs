//! A pass of a frame graph and the builder that declares it.

use std::sync::Arc;

use switchyard_backend::wgpu::{NativePass, WgpuPassDraw};
use switchyard_backend::Command;

use super::{
    Attachment, CallbackContext, CameraId, FullscreenShader, GraphBuffer, LoadOp, PassContent, Queue, StoreOp, TargetId,
};
use crate::material::PassKind;

/// A pass: its attachments, the targets it samples and what it draws.
#[derive(Clone, Debug)]
pub struct Pass {
    pub(crate) name: String,
    pub(crate) color: Option<Attachment<[f64; 4]>>,
    pub(crate) depth: Option<Attachment<f32>>,
    pub(crate) samples: Vec<TargetId>,
    /// A shadow pass's receivers: a depth target and the camera that saw it.
    pub(crate) receivers: Option<(TargetId, CameraId)>,
    /// Drawn only when what it draws may have changed ([`Pass::cached`]).
    pub(crate) cached: bool,
    pub(crate) reads: Vec<GraphBuffer>,
    pub(crate) writes: Vec<GraphBuffer>,
    pub(crate) content: PassContent,
    /// The resolve target, kept apart so `resolve` and `color` may come in either order.
    pub(crate) resolve: Option<TargetId>,
}

impl Pass {
    /// A pass named `name` drawing `content`, with nothing attached yet.
    pub fn new(name: impl Into<String>, content: PassContent) -> Self {
        let (reads, writes) = (Vec::new(), Vec::new());
        let (samples, receivers, resolve) = (Vec::new(), None, None);
        let (name, cached) = (name.into(), false);
        Self { name, color: None, depth: None, samples, receivers, cached, reads, writes, content, resolve }
    }

    /// A pass drawing the scene's `queue` as `camera` sees it with `kind` pipelines.
    pub fn scene(name: impl Into<String>, camera: CameraId, kind: PassKind, queue: Queue) -> Self {
        Self::new(name, PassContent::Scene { camera, kind, queue })
    }

    /// A fullscreen pass with `shader`.
    pub fn fullscreen(name: impl Into<String>, shader: FullscreenShader) -> Self {
        Self::new(name, PassContent::Fullscreen(shader))
    }

    /// A pass whose commands `record` writes every frame.
    pub fn callback(
        name: impl Into<String>,
        record: impl Fn(&CallbackContext<'_>, &mut Vec<Command>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(name, PassContent::Callback(Arc::new(record)))
    }

    /// A compute pass whose dispatches `record` writes every frame.
    pub fn compute(
        name: impl Into<String>,
        record: impl Fn(&CallbackContext<'_>, &mut Vec<Command>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(name, PassContent::Compute(Arc::new(record)))
    }

    /// A pass the engine draws with wgpu itself: `draw` gets the pass's
    /// `wgpu::RenderPass` (and the device, the queue, the attachments' size and formats)
    /// every frame, on the submission thread, inside the render pass the wgpu backend
    /// begins for the attachments declared here, loaded or cleared and stored as declared.
    /// The graph orders, aliases and counts it like any pass; it samples no targets. This
    /// is how libraries that draw into a render pass (egui-wgpu, glyphon) draw inside the
    /// graph. On the null backend the pass runs (its loads and stores) without the drawing.
    pub fn wgpu(name: impl Into<String>, draw: impl WgpuPassDraw + 'static) -> Self {
        Self::new(name, PassContent::Wgpu(NativePass::new(draw)))
    }

    /// Reads `buffer` (callback, compute, wgpu, fullscreen and scene passes): runs after
    /// the passes declared before it that write the buffer. A fullscreen pass binds the
    /// buffers it reads that were declared with a binding ([`FullscreenShader`]); scene
    /// passes bind them in group 2 ([`MAX_SCENE_BUFFERS`](super::MAX_SCENE_BUFFERS) says how).
    pub fn reads(mut self, buffer: GraphBuffer) -> Self {
        self.reads.push(buffer);
        self
    }

    /// Writes `buffer` (callback and compute passes): runs after the passes declared
    /// before it that read or write the buffer, before those declared after it.
    pub fn writes(mut self, buffer: GraphBuffer) -> Self {
        self.writes.push(buffer);
        self
    }

    /// Attaches `target` as the color attachment.
    pub fn color(mut self, target: TargetId, load: LoadOp<[f64; 4]>, store: StoreOp) -> Self {
        self.color = Some(Attachment { target, load, store, resolve: self.resolve });
        self
    }

    /// Attaches `target` as the depth attachment.
    pub fn depth(mut self, target: TargetId, load: LoadOp<f32>, store: StoreOp) -> Self {
        self.depth = Some(Attachment { target, load, store, resolve: None });
        self
    }

    /// Resolves the (multisampled) color attachment into `target` (before or after
    /// [`Pass::color`]; a pass that resolves without a color attachment is refused when the
    /// graph is set).
    pub fn resolve(mut self, target: TargetId) -> Self {
        self.resolve = Some(target);
        if let Some(c) = &mut self.color {
            c.resolve = Some(target);
        }
        self
    }

    /// Samples `target` (written by earlier passes).
    pub fn sample(mut self, target: TargetId) -> Self {
        self.samples.push(target);
        self
    }

    /// A shadow pass's receivers: `depth`, a depth target written by earlier passes,
    /// holds every surface that `camera` sees and that samples this pass's map (typically
    /// a [`PassKind::Depth`] prepass of the main camera's opaque queue).
    /// Where the renderer culls by occlusion on the GPU
    /// ([`RendererConfig::occlusion`](crate::RendererConfig::occlusion)) the pass then
    /// draws only the casters that can shadow one of those surfaces: before the pass, a
    /// compute pass projects every depth texel into the map and drops each caster whose
    /// nearest depth lies beyond every receiver around it (`shadow-receivers` in Tracy,
    /// its GPU time in the cull's). Elsewhere the pass draws as without receivers; the
    /// pass runs after the passes writing `depth` either way.
    ///
    /// Shadows on the surfaces in `depth`, and on any surface nearer the light, stay the
    /// same; the map is not exact for surfaces hidden in `depth` (a transparent surface
    /// behind the opaque ones misses casters whose shadow falls only on it).
    pub fn receivers(mut self, depth: TargetId, camera: CameraId) -> Self {
        self.receivers = Some((depth, camera));
        self
    }

    /// A shadow pass drawn only when its map may change: a frame in which its camera
    /// (matrix, layer mask, `Camera::receivers`), the camera of its [`Pass::receivers`],
    /// every object (added, removed, moved, re-meshed or re-materialed, anywhere in the
    /// scene), every material, the graph and the map's texture are as they were when the
    /// pass last drew skips it: its map, a retained depth target, keeps what it drew
    /// (`FrameStats::cached_passes` counts the skipped). A still scene under a still
    /// light then renders its shadows once. The pass draws again after a device loss (a
    /// frame that fails before it reaches the GPU thread leaves the map as it was). The
    /// cull, sort and batch stages still run for it; its record stage records nothing.
    /// Shadow scene passes into a retained depth target, reading no engine buffers (what
    /// they hold is not watched), only: a typed error elsewhere. A shader whose shadow
    /// entry moves vertices with the frame's time would need the pass drawn every frame:
    /// do not cache its passes.
    pub fn cached(mut self) -> Self {
        self.cached = true;
        self
    }

    /// The pass's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the pass does.
    pub fn content(&self) -> &PassContent {
        &self.content
    }
}
