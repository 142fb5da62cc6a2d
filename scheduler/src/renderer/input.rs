//! What a frame is given: views ([`Renderer::render`], [`Renderer::render_to`]) or a
//! frame graph with its cameras and external targets ([`Renderer::set_graph`],
//! [`Renderer::render_graph`]); checking it, and making the plan current. A new output
//! size ([`Renderer::resize`]) plans again. Then `render.rs` runs the frame.

use switchyard_backend::{Backend, Image, TextureFormat, TextureId, TextureUsage};

use super::config::RendererConfig;
use super::fullscreen::SceneBuffers;
use super::plan::{self, FramePlan};
use super::retire::Retiree;
use super::Renderer;
use crate::error::RenderError;
use crate::frame_graph::{
    Camera, FrameGraph, GraphBuffer, LoadOp, Pass, Queue, StoreOp, TargetId, TargetKind, TargetSize, MAX_SHADOW_MAPS,
    MAX_VIEWS,
};
use crate::graph::Slot;
use crate::material::{PassKind, SceneKinds};
use crate::stats::FrameStats;
use crate::view::View;

/// Most shadow views of a frame given as views (forward views sample every shadow map,
/// and the lit shader samples four).
pub const MAX_SHADOW_VIEWS: usize = crate::frame_graph::MAX_SHADOW_MAPS;

/// What one frame of a graph gets from the engine.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput<'a> {
    /// One camera per camera slot of the graph, in declaration order.
    pub cameras: &'a [Camera],
    /// The texture of each external target the graph uses this frame (a swapchain image,
    /// an editor viewport): its format and `RENDER_TARGET` usage must fit, and its size
    /// the declared one — except that textures of a target declared `TargetSize::Output`
    /// set the output's size: when they agree on a new one, the frame resizes first (as
    /// [`Renderer::resize`] does), so a resized swapchain needs no extra call.
    pub targets: &'a [(TargetId, TextureId)],
}

fn validate_camera(index: usize, c: &Camera) -> Result<(), RenderError> {
    if !c.view_proj.is_finite() || !c.eye.is_finite() || !c.far.is_finite() || c.far <= 0.0 {
        return Err(RenderError::InvalidView { index, what: "matrix, eye or far is not finite and positive" });
    }
    if let Some(r) = c.receivers {
        if !r.is_finite() {
            return Err(RenderError::InvalidView { index, what: "receivers matrix is not finite" });
        }
        if switchyard_kernels::cull::center_of_projection(&c.view_proj).is_none() {
            return Err(RenderError::InvalidView {
                index,
                what: "receivers given, but the matrix projects from no point",
            });
        }
    }
    Ok(())
}

fn validate_views(views: &[View]) -> Result<(), RenderError> {
    if views.is_empty() || views.len() > MAX_VIEWS {
        return Err(RenderError::InvalidView { index: 0, what: "between 1 and MAX_VIEWS views" });
    }
    let mut shadows = 0;
    for (i, v) in views.iter().enumerate() {
        validate_camera(i, &camera_of(v))?;
        if v.pass == PassKind::Depth {
            // Its depth would go nowhere a views frame reads: prepasses need a graph.
            return Err(RenderError::InvalidView { index: i, what: "a depth pass in a views frame (declare a graph)" });
        }
        if v.pass == PassKind::Shadow {
            shadows += 1;
            if shadows > MAX_SHADOW_VIEWS {
                return Err(RenderError::InvalidView { index: i, what: "more than MAX_SHADOW_VIEWS shadow views" });
            }
        }
    }
    Ok(())
}

fn camera_of(v: &View) -> Camera {
    Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: v.layer_mask, receivers: None }
}

impl<B: Backend> Renderer<B> {
    /// Renders one frame of `views` and hands it to the submission thread.
    ///
    /// The views become a frame graph of one scene pass per view (built again only when
    /// the views' passes or labels change): shadow views are submitted before forward
    /// views (which sample their maps); the i-th shadow view renders into shadow map i.
    /// A submission error of an earlier frame is returned by the next call. On an error
    /// nothing of this frame reaches the backend.
    pub fn render(&mut self, views: &[View]) -> Result<FrameStats, RenderError> {
        validate_views(views)?;
        self.views_plan(views, false)?;
        self.render_views(views, &[])
    }

    /// Renders one frame of `views` like [`Renderer::render`], with forward views drawing
    /// into `output` instead of the renderer's own color target: an engine's texture
    /// (imported with `WgpuBackend::import_texture`, say) of the renderer's color format
    /// (RGBA8 sRGB) and size, usable as a render target. Anything else is an
    /// [`RenderError::InvalidOutput`] before any work is done.
    pub fn render_to(&mut self, views: &[View], output: TextureId) -> Result<FrameStats, RenderError> {
        let info = self.res.backend.texture_info(output).ok_or(RenderError::InvalidOutput { what: "stale handle" })?;
        let invalid = |what| Err(RenderError::InvalidOutput { what });
        if info.format != TextureFormat::Rgba8UnormSrgb {
            return invalid("format differs from the renderer's color format");
        }
        if (info.width, info.height) != (self.config.width, self.config.height) {
            return invalid("size differs from the renderer's target size");
        }
        if !info.usage.contains(TextureUsage::RENDER_TARGET) {
            return invalid("not usable as a render target");
        }
        if info.samples != 1 {
            return invalid("multisampled (the renderer's color target is single-sampled)");
        }
        validate_views(views)?;
        self.views_plan(views, true)?;
        let plan = self.frame.plan.as_ref().ok_or(RenderError::NoGraph)?;
        let color = TargetId(plan.externals[0].target as u32, plan.tag);
        self.render_views(views, &[(color, output)])
    }

    /// Sets the frame graph [`Renderer::render_graph`] renders: compiles it for the current
    /// output size and creates its targets and pipelines (textures of equal description
    /// are taken over from the current plan). It does not wait: frames in flight finish
    /// with the old plan, whose objects are destroyed once they have (an earlier frame's
    /// submission error stays for [`Renderer::poll`] or the next frame). On an error — a
    /// [`RenderError::Graph`] naming the pass or target, a refused shader, a failed
    /// creation — nothing changes.
    pub fn set_graph(&mut self, graph: FrameGraph) -> Result<(), RenderError> {
        let origin = plan::Origin::Graph(self.frame.graph_generation + 1);
        self.replace_plan(origin, &graph)?;
        self.frame.bound_buffers = vec![None; graph.buffers.len()];
        self.frame.graph = Some(graph);
        self.frame.graph_generation += 1;
        Ok(())
    }

    /// Binds the engine's `id` to the graph's `buffer` (declared with
    /// [`FrameGraph::uniform_buffer`] or [`FrameGraph::storage_buffer`]): the fullscreen
    /// and scene passes that read `buffer` bind it from the next frame on (scene passes in
    /// group 2, [`crate::MAX_SCENE_BUFFERS`]), until another is bound or
    /// another graph is set (after [`Renderer::recover`], bind the new device's buffers).
    /// The engine writes the buffer as it likes; Switchyard orders the passes by it and
    /// keeps the bind groups it made for it (a few per pass). Refused with
    /// [`RenderError::Buffer`], changing nothing: no graph set, another graph's buffer, a
    /// buffer declared without a binding, a stale `id`, or one without the usage its
    /// binding needs (`UNIFORM`, `STORAGE`).
    pub fn bind_buffer(&mut self, buffer: GraphBuffer, id: switchyard_backend::BufferId) -> Result<(), RenderError> {
        let graph = self.frame.graph.as_ref().ok_or(RenderError::NoGraph)?;
        let i = buffer.0 as usize;
        let refuse = |what| {
            let name = graph.buffers.get(i).filter(|_| buffer.1 == graph.tag);
            Err(RenderError::Buffer { buffer: name.cloned().unwrap_or_else(|| i.to_string()), what })
        };
        if buffer.1 != graph.tag || i >= graph.buffers.len() {
            return refuse("not a buffer of the graph set");
        }
        let Some(binding) = graph.buffer_bindings[i] else {
            return refuse("declared with FrameGraph::buffer (ordering only): declare it with uniform_buffer or storage_buffer to bind it");
        };
        let Some(info) = self.res.backend.buffer_info(id) else {
            return refuse("the engine buffer is not a live buffer of this renderer's backend");
        };
        let need = match binding {
            crate::BufferBinding::Uniform => switchyard_backend::BufferUsage::UNIFORM,
            crate::BufferBinding::Storage => switchyard_backend::BufferUsage::STORAGE,
        };
        if !info.usage.contains(need) {
            return refuse("the engine buffer lacks the usage its binding needs (UNIFORM or STORAGE)");
        }
        self.frame.bound_buffers[i] = Some(id);
        Ok(())
    }

    /// The graph set with [`Renderer::set_graph`].
    pub fn graph(&self) -> Option<&FrameGraph> {
        self.frame.graph.as_ref()
    }

    /// Renders one frame of the graph set with [`Renderer::set_graph`]: `input` fills its
    /// camera slots and external targets. Bad input (a camera count that differs, a
    /// non-finite camera, a missing or unfit external texture) is a typed error before any
    /// work is done.
    pub fn render_graph(&mut self, input: &FrameInput<'_>) -> Result<FrameStats, RenderError> {
        self.graph_frame(input, None)
    }

    /// A frame of the graph set, drawing into `present`'s acquired image where given.
    pub(super) fn graph_frame(
        &mut self,
        input: &FrameInput<'_>,
        present: Option<crate::submit::Present>,
    ) -> Result<FrameStats, RenderError> {
        let generation = self.frame.graph_generation;
        if self.frame.graph.is_none() {
            return Err(RenderError::NoGraph);
        }
        if !self.plan_fits(&plan::Origin::Graph(generation)) {
            let graph = self.frame.graph.take().expect("checked");
            let built = self.replace_plan(plan::Origin::Graph(generation), &graph);
            self.frame.graph = Some(graph);
            built?;
        }
        // Everything is checked before the output resizes to the engine's textures: a
        // refused frame changes nothing.
        let plan = self.frame.plan.as_ref().ok_or(RenderError::NoGraph)?;
        if input.cameras.len() != plan.cameras {
            return Err(RenderError::CameraCount { expected: plan.cameras, given: input.cameras.len() });
        }
        for (i, c) in input.cameras.iter().enumerate() {
            validate_camera(i, c)?;
        }
        let current = (self.config.width, self.config.height);
        let output = self.external_output_size(input.targets).unwrap_or(current);
        check_targets(plan, &*self.res.backend, input.targets, output)?;
        if output != current {
            self.resize(output.0, output.1)?;
        }
        self.render_frame(input.cameras, input.targets, present)
    }

    pub(super) fn render_views(
        &mut self,
        views: &[View],
        targets: &[(TargetId, TextureId)],
    ) -> Result<FrameStats, RenderError> {
        let mut cameras = std::mem::take(&mut self.frame.view_cameras);
        cameras.clear();
        cameras.extend(views.iter().map(camera_of));
        let r = self.render_frame(&cameras, targets, None);
        self.frame.view_cameras = cameras;
        r
    }

    /// Whether the current plan was built for `origin` at the current output size.
    pub(super) fn plan_fits(&self, origin: &plan::Origin) -> bool {
        self.frame
            .plan
            .as_ref()
            .is_some_and(|p| p.origin == *origin && p.size == (self.config.width, self.config.height))
    }

    /// Makes the plan of a views frame current (built again when the views' passes,
    /// labels or output mode changed).
    pub(super) fn views_plan(&mut self, views: &[View], external: bool) -> Result<(), RenderError> {
        // Compared in place: a frame whose views did not change allocates nothing here.
        let size = (self.config.width, self.config.height);
        let fits = self.frame.plan.as_ref().is_some_and(|p| {
            p.size == size
                && matches!(&p.origin, plan::Origin::Views(key, ext)
                    if *ext == external && key.iter().copied().eq(views.iter().map(|v| (v.pass, v.label))))
        });
        if fits {
            return Ok(());
        }
        let key = plan::Origin::Views(views.iter().map(|v| (v.pass, v.label)).collect(), external);
        let graph = views_graph(&self.config, views, external);
        self.replace_plan(key, &graph)
    }

    /// Builds the plan of `graph` and makes it current; the old plan's textures of equal
    /// description move over, the rest of it is destroyed (after the frames in flight).
    /// On an error the old plan stays.
    pub(super) fn replace_plan(&mut self, origin: plan::Origin, graph: &FrameGraph) -> Result<(), RenderError> {
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        let r = self.build_plan(origin, graph);
        self.note_lost(r)
    }

    fn build_plan(&mut self, origin: plan::Origin, graph: &FrameGraph) -> Result<(), RenderError> {
        let b = &*self.res.backend;
        // Group 2 of the scene passes (kept with the plan; its layout is made once per
        // kinds): every material pipeline of the graph has it, so the display lists are
        // built again for it. Made first: a refused layout leaves the current plan alone.
        let scene = graph.scene_buffers();
        let layout = match scene.len() {
            0 => None,
            n if n > crate::MAX_SCENE_BUFFERS => None, // refused by the graph's check
            _ => {
                let kinds = SceneKinds::of(scene.iter().map(|&(_, k)| k));
                let made = self.res.gpu.scene_layout(b, kinds);
                Some(made.map_err(|source| RenderError::BindGroup { pass: "scene passes".into(), source })?)
            }
        };
        let mut reuse: Vec<_> = self.frame.plan.as_ref().map_or_else(Vec::new, |p| p.objects.textures.clone());
        let mut new = FramePlan::build(b, &self.res.gpu, &self.config, origin, graph, &mut reuse)?;
        new.scene_buffers = layout.map(|(layout, empty)| SceneBuffers::new(graph, &scene, layout, empty));
        self.res.gpu.layouts.scene = new.scene_buffers.as_ref().map(|s| s.layout);
        self.frame.engine_passes.resize_with(new.engine_passes.len(), Slot::default);
        // The materials' forward pipelines are built for the forward passes' color format:
        // a graph of another one builds the forward display lists again (once; a list
        // records the format it was built for).
        if let Some((format, samples)) = new.graph.forward_format {
            self.res.gpu.layouts.color_format = format;
            self.res.gpu.layouts.color_samples = samples;
        }
        if let Some(mut old) = self.frame.plan.replace(new) {
            // Textures the new plan took over are its own now; the rest goes once the
            // frames queued with the old plan have finished.
            old.objects.textures.retain(|(_, t)| reuse.iter().any(|(_, r)| r == t));
            for r in old.into_resources() {
                self.device.retired.retire(Retiree::Resource(r), b, &mut self.res.meshes);
            }
        }
        Ok(())
    }

    /// The size the output-sized external textures of this frame agree on, where it differs
    /// from the output's: an engine's swapchain image of a new size resizes the frame.
    fn external_output_size(&self, targets: &[(TargetId, TextureId)]) -> Option<(u32, u32)> {
        let plan = self.frame.plan.as_ref()?;
        let mut sizes = plan.externals.iter().filter(|e| e.follows_output).map(|e| {
            let given = targets.iter().find(|(id, _)| id.0 as usize == e.target && id.1 == plan.tag)?;
            self.res.backend.texture_info(given.1).map(|i| (i.width, i.height))
        });
        let first = sizes.next()??;
        let agree = sizes.all(|s| s == Some(first));
        (agree && first != (self.config.width, self.config.height)).then_some(first)
    }

    /// Changes the output size (of the renderer's color target, of what `render_to`
    /// expects, of `TargetSize::Output` targets) from the next frame on. Only the
    /// size-dependent targets are created again: fixed-size targets (shadow maps),
    /// buffers, pipelines and display lists stay. Frames in flight finish on the old
    /// targets, destroyed once they have. A zero size or one over the device's limit is an error and changes
    /// nothing; so is a graph that does not compile at the new size, or a failed creation
    /// (the old targets stay).
    pub fn resize(&mut self, width: u32, height: u32) -> Result<(), RenderError> {
        if (width, height) == (self.config.width, self.config.height) {
            return Ok(());
        }
        let max = self.res.backend.caps().max_texture_size;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(RenderError::InvalidSize { width, height, maximum: max });
        }
        let old = (self.config.width, self.config.height);
        (self.config.width, self.config.height) = (width, height);
        let Some(origin) = self.frame.plan.as_ref().map(|p| p.origin.clone()) else { return Ok(()) };
        let graph = match &origin {
            plan::Origin::Graph(_) => self.frame.graph.clone(),
            plan::Origin::Views(..) => None,
        };
        // A views frame is planned again by its next `render` (the plan's size differs;
        // its views are not kept here); its old textures move over then.
        let Some(graph) = graph else { return Ok(()) };
        let rebuilt = self.replace_plan(origin, &graph);
        if rebuilt.is_err() {
            (self.config.width, self.config.height) = old;
        }
        rebuilt
    }

    /// Flushes, then reads a retained RGBA8 target of the current graph back.
    pub fn read_target(&mut self, target: TargetId) -> Result<Image, RenderError> {
        self.flush()?;
        let graph_target =
            self.frame.graph.as_ref().filter(|g| g.tag == target.1).and_then(|g| g.targets.get(target.0 as usize));
        let name = graph_target.map_or_else(|| format!("#{}", target.0), |t| t.name.clone());
        let retained = graph_target.is_some_and(|t| t.kind == TargetKind::Retained);
        let current =
            self.frame.plan.as_ref().is_some_and(|p| p.origin == plan::Origin::Graph(self.frame.graph_generation));
        let texture = self.target_texture(target).filter(|_| retained && current);
        let t = texture
            .ok_or(RenderError::InvalidTarget { target: name, what: "not a retained target of the current graph" })?;
        Ok(self.res.backend.read_rgba8(t)?)
    }

    /// What the GPU drew of view `v` (in the order given to `render`) in the last frame,
    /// where it was culled on the GPU (`None` otherwise): waits for the frame and reads its
    /// indirect records back, so it is for summaries and tests, not for every frame. A view
    /// that drew a depth prepass's visible set drew the prepass's counts.
    pub fn gpu_cull_counts(&mut self, v: usize) -> Result<Option<GpuCullCounts>, RenderError> {
        self.flush()?;
        let Some(w) = self.frame.views.get(v).filter(|w| w.setup.gpu) else { return Ok(None) };
        // A view that drew a prepass's visible set drew what the prepass's cull kept.
        let w = match w.setup.shares {
            Some(s) => &self.frame.views[s.view],
            None => w,
        };
        let (buckets, rec) = (w.buckets.read(), w.recorded.read());
        let (n, halves) = (buckets.buckets.len(), if rec.late.on { 2 } else { 1 });
        let Some(args) = rec.args_buf.as_ref().filter(|_| n > 0) else {
            return Ok(Some(GpuCullCounts { candidates: 0, first_phase: 0, second_phase: 0 }));
        };
        let bytes = self.res.backend.read_buffer(args.id, 0, (halves * n * 20) as u64)?;
        let records: &[[u32; 5]] = bytemuck::cast_slice(&bytes);
        let drawn = |r: &[[u32; 5]]| r.iter().map(|a| a[1]).sum::<u32>();
        Ok(Some(GpuCullCounts {
            candidates: buckets.candidates().len() as u32,
            first_phase: drawn(&records[..n]),
            second_phase: drawn(&records[n..]),
        }))
    }
}

/// What the GPU drew of a view culled there ([`Renderer::gpu_cull_counts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuCullCounts {
    /// Objects the view's cull tested (those its pass may draw).
    pub candidates: u32,
    /// Drawn by the frame's cull pass: inside the frustum (and, with occlusion culling,
    /// visible last frame).
    pub first_phase: u32,
    /// Drawn after the depth pyramid: visible now and not drawn by the first phase (0
    /// without occlusion culling).
    pub second_phase: u32,
}

/// The clear color of the first forward pass of a views frame (linear RGBA).
const SKY: [f64; 4] = [0.55, 0.65, 0.8, 1.0];

/// The frame of `views` as a graph: one scene pass per view, in the order given. Shadow
/// views render into shadow map i (the i-th shadow view); forward views render into the
/// main color target (retained, or `external` for `render_to`) and depth, sampling every
/// shadow map; the first forward view clears them.
fn views_graph(config: &RendererConfig, views: &[View], external: bool) -> FrameGraph {
    let mut g = FrameGraph::new();
    let s = config.shadow_map_size;
    let map = TargetSize::Fixed { width: s, height: s };
    let shadows = views.iter().filter(|v| v.pass == PassKind::Shadow).count().min(MAX_SHADOW_MAPS);
    let shadow_maps: Vec<TargetId> = (0..shadows)
        .map(|i| g.target(format!("shadow-{i}"), TargetKind::Transient, TextureFormat::Depth32Float, map))
        .collect();
    let kind = if external { TargetKind::External } else { TargetKind::Retained };
    let color = g.target("main-color", kind, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("main-depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let (mut shadow_i, mut first_forward) = (0, true);
    let mut names: Vec<String> = Vec::with_capacity(views.len());
    for (i, v) in views.iter().enumerate() {
        let camera = g.camera(v.label);
        // A label used again gets `#k`: the smallest k that no view's label nor an earlier
        // name takes (`main`, `main`, `main#1` → `main`, `main#2`, `main#1`).
        let taken = |n: &str| names.iter().any(|m| m == n) || views.iter().any(|w| w.label == n);
        let name = if views[..i].iter().any(|w| w.label == v.label) {
            (1..).map(|k| format!("{}#{k}", v.label)).find(|n| !taken(n)).expect("a free name")
        } else {
            v.label.to_string()
        };
        names.push(name.clone());
        let pass = Pass::scene(name, camera, v.pass, Queue::All);
        let pass = match v.pass {
            PassKind::Shadow => {
                shadow_i += 1;
                pass.depth(shadow_maps[shadow_i - 1], LoadOp::Clear(1.0), StoreOp::Store)
            }
            PassKind::Depth => unreachable!("validate_views refuses depth views"),
            PassKind::Forward => {
                let first = std::mem::replace(&mut first_forward, false);
                let (cl, dl) =
                    if first { (LoadOp::Clear(SKY), LoadOp::Clear(1.0)) } else { (LoadOp::Load, LoadOp::Load) };
                let mut p = pass.color(color, cl, StoreOp::Store).depth(depth, dl, StoreOp::Store);
                for &m in &shadow_maps {
                    p = p.sample(m);
                }
                p
            }
        };
        g.pass(pass);
    }
    g
}

/// Every external target the plan uses has a fitting texture for an output of
/// `output` texels, and nothing else is given.
pub(super) fn check_targets<B: Backend>(
    plan: &FramePlan,
    backend: &B,
    targets: &[(TargetId, TextureId)],
    output: (u32, u32),
) -> Result<(), RenderError> {
    let graph_name = |t: TargetId| {
        let e = plan.externals.iter().find(|e| e.target == t.0 as usize && t.1 == plan.tag)?;
        Some(&e.name)
    };
    for &(t, _) in targets {
        if graph_name(t).is_none() {
            let what =
                if t.1 == plan.tag { "not an external target the graph uses" } else { "a target of another graph" };
            return Err(RenderError::InvalidTarget { target: format!("#{}", t.0), what });
        }
    }
    for e in &plan.externals {
        let (name, format) = (&e.name, &e.format);
        let size = e.declared.at(output).unwrap_or(e.size);
        let invalid = |what| Err(RenderError::InvalidTarget { target: name.clone(), what });
        let mut given = targets.iter().filter(|(id, _)| id.0 as usize == e.target);
        let (Some(&(_, texture)), None) = (given.next(), given.next()) else {
            return invalid("the frame must give exactly one texture for it");
        };
        let Some(info) = backend.texture_info(texture) else { return invalid("stale handle") };
        if info.format != *format {
            return invalid("format differs from the declared one");
        }
        if (info.width, info.height) != size {
            return invalid("size differs from the declared one");
        }
        if info.samples != e.samples {
            return invalid("sample count differs from the declared one");
        }
        if e.rendered && !info.usage.contains(TextureUsage::RENDER_TARGET) {
            return invalid("not usable as a render target");
        }
        if e.sampled && !info.usage.contains(TextureUsage::SAMPLED) {
            return invalid("a pass samples it: it needs SAMPLED usage");
        }
    }
    Ok(())
}
