//! The plan of a frame: a [`FrameGraph`] compiled for the current output size, with the
//! GPU objects it needs (its targets, the bind groups of its scene passes, the pipelines
//! of its fullscreen passes) and the job graph that records it. Built when the graph, the
//! views' configuration or the output size changes, reused otherwise.
//!
//! Frames given as views ([`super::Renderer::render`]) go through the same path: their
//! views become a graph of one scene pass per view (`views_graph` in `input.rs`).

use std::sync::Arc;

use switchyard_backend::Backend;
use switchyard_backend::{
    BindGroupId, Caps, CreateError, Resource, TextureDesc, TextureFormat, TextureId, TextureUsage,
};

use super::config::RendererConfig;
use super::fullscreen::{backend_pass, fullscreen, writes_every_texel};
use super::gpu::FrameResources;
use super::jobs::{build_graph, GraphView, Job};
use crate::error::RenderError;
use crate::frame_graph::CompiledGraph;
use crate::frame_graph::FrameGraph;
use crate::frame_graph::GraphCaps;
use crate::frame_graph::GraphError;
use crate::frame_graph::GraphTag;
use crate::frame_graph::LoadOp;
use crate::frame_graph::PassContent;
use crate::frame_graph::TargetId;
use crate::frame_graph::TargetKind;
use crate::frame_graph::TargetSize;
use crate::frame_graph::FORWARD_FORMATS;
use crate::frame_graph::MAX_SHADOW_MAPS;
use crate::frame_graph::{MAX_PASSES, MAX_VIEWS};
use crate::graph::JobGraph;
use crate::material::PassKind;

/// Where a plan's graph came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Origin {
    /// Views given to `render` (each view's pass and label), into the renderer's color
    /// target (`false`) or an output texture (`true`).
    Views(Vec<(PassKind, &'static str)>, bool),
    /// The graph set with `set_graph`, of this generation.
    Graph(u64),
}

pub(crate) use super::passes::{EngineContent, EnginePlan, Entry, ExternalSlots, ScenePlan};

/// What a texture of the plan was made as: a later plan reuses a texture of equal
/// description instead of creating one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextureSpec {
    format: TextureFormat,
    width: u32,
    height: u32,
    usage: TextureUsage,
    samples: u32,
}

/// GPU objects a plan made, destroyed with it (textures go back to the next plan first).
#[derive(Debug, Default)]
pub(crate) struct PlanObjects {
    pub(crate) textures: Vec<(TextureSpec, TextureId)>,
    resources: Vec<Resource>,
}

impl PlanObjects {
    /// Destroys everything (nothing used it yet: a plan that failed to build).
    pub(crate) fn destroy<B: Backend>(self, b: &B) {
        self.into_resources().for_each(|r| {
            let _ = b.destroy(r);
        });
    }

    /// Everything, given up.
    fn into_resources(self) -> impl Iterator<Item = Resource> {
        self.textures.into_iter().map(|(_, t)| Resource::Texture(t)).chain(self.resources)
    }
}

/// Memory of the graph's own targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TargetMemory {
    /// Bytes the owned targets take.
    pub(crate) bytes: u64,
    /// Bytes aliasing and memoryless targets save against one texture per target.
    pub(crate) saved: u64,
}

/// An external target a plan's passes use: the texture a frame must give for it.
#[derive(Clone, Debug)]
pub(crate) struct ExternalTarget {
    pub(crate) target: usize,
    pub(crate) name: String,
    pub(crate) format: TextureFormat,
    pub(crate) size: (u32, u32),
    /// As declared: what its size is for another output size.
    pub(crate) declared: TargetSize,
    pub(crate) samples: u32,
    /// Declared `TargetSize::Output`: a texture of another size resizes the output.
    pub(crate) follows_output: bool,
    /// A pass renders into it (its texture needs `RENDER_TARGET`), samples it (`SAMPLED`).
    pub(crate) rendered: bool,
    pub(crate) sampled: bool,
}

/// One frame configuration's plan.
#[derive(Debug)]
pub(crate) struct FramePlan {
    pub(crate) origin: Origin,
    /// The graph's tag: what a frame's target ids must carry.
    pub(crate) tag: GraphTag,
    /// The output size it was compiled for.
    pub(crate) size: (u32, u32),
    pub(crate) jobs: JobGraph<Job>,
    pub(crate) graph: CompiledGraph,
    pub(crate) entries: Vec<Entry>,
    pub(crate) scenes: Vec<ScenePlan>,
    pub(crate) engine_passes: Vec<EnginePlan>,
    /// Pass names in submission order.
    pub(crate) names: Vec<String>,
    /// Camera slots a frame fills.
    pub(crate) cameras: usize,
    /// External targets the passes use.
    pub(crate) externals: Vec<ExternalTarget>,
    /// Each target's texture (`None`: external or unused).
    pub(crate) textures: Vec<Option<TextureId>>,
    /// What `read_color` reads: the retained color target the last pass writes.
    pub(crate) readback: Option<TextureId>,
    pub(crate) memory: TargetMemory,
    pub(crate) objects: PlanObjects,
    /// The last frame rendered with this plan (what its retained targets hold).
    pub(crate) last_frame: Option<u64>,
    /// Group 2 of the scene passes, where they read engine buffers.
    pub(crate) scene_buffers: Option<super::fullscreen::SceneBuffers>,
}

/// Compiles `graph` for an output of `output` texels on a device of `caps`: what the
/// graph allows there, and at most [`MAX_VIEWS`] scene passes and [`MAX_PASSES`] passes
/// that run (culled ones do not count).
pub(crate) fn compile(
    graph: &FrameGraph,
    output: (u32, u32),
    caps: &Caps,
    occlusion: bool,
) -> Result<CompiledGraph, GraphError> {
    let graph_caps = GraphCaps {
        occlusion,
        colors: &FORWARD_FORMATS,
        depth: TextureFormat::Depth32Float,
        max_side: caps.max_texture_size,
        sample_counts: caps.sample_counts,
    };
    let compiled = graph.compile(output, graph_caps)?;
    let scene = |&&p: &&usize| matches!(graph.passes[p].content, PassContent::Scene { .. });
    if compiled.order.iter().filter(scene).count() > MAX_VIEWS || compiled.order.len() > MAX_PASSES {
        return Err(GraphError::InvalidPass {
            pass: graph.passes[compiled.order[0]].name.clone(),
            what: "at most MAX_VIEWS scene passes and MAX_PASSES passes run per frame",
        });
    }
    Ok(compiled)
}

impl FramePlan {
    /// Compiles `graph` for the renderer's output size and makes what it needs, taking
    /// textures of equal description from `reuse` (what is left there is the caller's to
    /// destroy). On an error everything made so far is destroyed again.
    pub(crate) fn build<B: Backend>(
        b: &B,
        gpu: &FrameResources,
        config: &RendererConfig,
        origin: Origin,
        graph: &FrameGraph,
        reuse: &mut Vec<(TextureSpec, TextureId)>,
    ) -> Result<Self, RenderError> {
        let output = (config.width, config.height);
        let occlusion = gpu.cull.as_ref().is_some_and(|c| c.occlusion.is_some());
        let compiled = compile(graph, output, &b.caps(), occlusion)?;
        let mut maker = Maker { b, gpu, graph, compiled: &compiled, objects: PlanObjects::default() };
        let offered: Vec<TextureId> = reuse.iter().map(|(_, t)| *t).collect();
        let made = maker.targets(reuse).and_then(|(textures, memory)| {
            let (entries, scenes, engine_passes) = maker.passes(&textures, output)?;
            let views: Vec<GraphView> =
                scenes.iter().map(|s| GraphView { name: &s.label, cull_from: s.cull_from, kind: s.kind }).collect();
            let labels: Vec<&str> = engine_passes.iter().map(|o| o.name.as_str()).collect();
            let jobs = build_graph(&views, &labels).map_err(|e| RenderError::JobGraph(e.to_string()))?;
            Ok((textures, memory, entries, scenes, engine_passes, jobs))
        });
        let mut objects = maker.objects;
        let (textures, memory, entries, scenes, engine_passes, jobs) = match made {
            Ok(made) => made,
            Err(e) => {
                // Textures taken from `reuse` go back; what was made here goes.
                let (back, made): (Vec<_>, Vec<_>) = objects.textures.drain(..).partition(|(_, t)| offered.contains(t));
                reuse.extend(back);
                objects.textures = made;
                objects.destroy(b);
                return Err(e);
            }
        };
        let tex = |t: TargetId| textures[t.0 as usize].unwrap_or_default();
        let readback = compiled.order.iter().rev().find_map(|&p| {
            let c = graph.passes[p].color?;
            let t = c.resolve.unwrap_or(c.target);
            let d = &graph.targets[t.0 as usize];
            (d.kind == TargetKind::Retained && d.samples == 1).then(|| tex(t))
        });
        Ok(Self {
            origin,
            tag: graph.tag,
            size: output,
            jobs,
            names: compiled.order.iter().map(|&p| graph.passes[p].name.clone()).collect(),
            externals: external_targets(graph, &compiled),
            graph: compiled,
            entries,
            scenes,
            engine_passes,
            cameras: graph.cameras.len(),
            textures,
            readback,
            memory,
            objects,
            last_frame: None,
            scene_buffers: None,
        })
    }
}

/// What a plan is made from, and what it made so far (destroyed again if a later step
/// fails).
struct Maker<'a, B: Backend> {
    b: &'a B,
    gpu: &'a FrameResources,
    graph: &'a FrameGraph,
    compiled: &'a CompiledGraph,
    objects: PlanObjects,
}

fn bytes(w: u32, h: u32, f: TextureFormat, samples: u32) -> u64 {
    u64::from(w) * u64::from(h) * u64::from(f.bytes_per_texel()) * u64::from(samples)
}

impl<B: Backend> Maker<'_, B> {
    /// A texture of `spec`: one of `reuse` (the last plan's) or a new one.
    fn texture(
        &mut self,
        spec: TextureSpec,
        label: &str,
        reuse: &mut Vec<(TextureSpec, TextureId)>,
    ) -> Result<TextureId, CreateError> {
        let id = match reuse.iter().position(|(k, _)| *k == spec) {
            Some(i) => reuse.swap_remove(i).1,
            None => self.b.create_texture(&TextureDesc {
                label: label.into(),
                width: spec.width,
                height: spec.height,
                format: spec.format,
                usage: spec.usage,
                samples: spec.samples,
                mip_levels: 1,
            })?,
        };
        self.objects.textures.push((spec, id));
        Ok(id)
    }

    /// The targets' textures: one per physical transient target (aliased targets share
    /// it), one per retained target that is used; and the memory they take and save.
    fn targets(
        &mut self,
        reuse: &mut Vec<(TextureSpec, TextureId)>,
    ) -> Result<(Vec<Option<TextureId>>, TargetMemory), RenderError> {
        let (graph, compiled) = (self.graph, self.compiled);
        let caps = self.b.caps();
        let target_error = |target: &str| {
            let target = target.to_owned();
            move |source| RenderError::Target { target, source }
        };
        let n = graph.targets.len();
        let mut textures: Vec<Option<TextureId>> = vec![None; n];
        let mut memory = TargetMemory::default();
        let mut physical_ids = Vec::with_capacity(compiled.physical.len());
        for (i, p) in compiled.physical.iter().enumerate() {
            let memoryless = p.transient && caps.transient_saves_memory;
            let usage = if memoryless {
                TextureUsage::RENDER_TARGET | TextureUsage::TRANSIENT
            } else if p.sampled {
                TextureUsage::RENDER_TARGET | TextureUsage::SAMPLED
            } else {
                TextureUsage::RENDER_TARGET
            };
            let spec = TextureSpec { format: p.format, width: p.width, height: p.height, usage, samples: p.samples };
            // Named by the first target it holds.
            let first = (0..n).find(|&t| compiled.aliases[t] == Some(i)).map_or("", |t| graph.targets[t].name.as_str());
            physical_ids.push(self.texture(spec, &format!("graph-target-{i}"), reuse).map_err(target_error(first))?);
            if !memoryless {
                memory.bytes += bytes(p.width, p.height, p.format, p.samples);
            }
        }
        for (t, decl) in graph.targets.iter().enumerate() {
            let (w, h) = compiled.sizes[t];
            match decl.kind {
                TargetKind::Transient => {
                    if let Some(a) = compiled.aliases[t] {
                        textures[t] = Some(physical_ids[a]);
                        memory.saved += bytes(w, h, decl.format, decl.samples);
                    }
                }
                TargetKind::Retained if compiled.lifetimes[t].is_some() => {
                    let (_, sampled) = graph.rendered_and_sampled(&compiled.order, graph.target_id(t));
                    // The depth of a pass split for occlusion culling is read by its pyramid.
                    let pyramid =
                        compiled.order.iter().zip(&compiled.split).any(|(&p, &split)| {
                            split && graph.passes[p].depth.is_some_and(|d| d.target.0 as usize == t)
                        });
                    let sampled = sampled || pyramid;
                    let mut usage = TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC;
                    if sampled {
                        usage = usage | TextureUsage::SAMPLED;
                    }
                    if decl.samples > 1 {
                        // Kept content of a multisampled target: render target only.
                        usage = TextureUsage::RENDER_TARGET;
                    }
                    let spec = TextureSpec { format: decl.format, width: w, height: h, usage, samples: decl.samples };
                    textures[t] = Some(self.texture(spec, &decl.name, reuse).map_err(target_error(&decl.name))?);
                    memory.bytes += bytes(w, h, decl.format, decl.samples);
                }
                TargetKind::Retained | TargetKind::External => {}
            }
        }
        memory.saved = memory.saved.saturating_sub(
            compiled
                .physical
                .iter()
                .filter(|p| !(p.transient && caps.transient_saves_memory))
                .map(|p| bytes(p.width, p.height, p.format, p.samples))
                .sum(),
        );
        Ok((textures, memory))
    }

    /// The passes that run, in declaration order (scene passes are numbered so: a views
    /// frame's view index), and the submission order as entries into them.
    #[allow(clippy::type_complexity)] // three lists, named where they are taken apart
    fn passes(
        &mut self,
        textures: &[Option<TextureId>],
        output: (u32, u32),
    ) -> Result<(Vec<Entry>, Vec<ScenePlan>, Vec<EnginePlan>), RenderError> {
        let (graph, compiled) = (self.graph, self.compiled);
        let tex = |t: TargetId| textures[t.0 as usize].unwrap_or_default();
        let ext = |t: TargetId| (graph.targets[t.0 as usize].kind == TargetKind::External).then_some(t.0 as usize);
        let mut scenes = Vec::new();
        let mut engine_passes = Vec::new();
        let mut index_of = vec![None; graph.passes.len()];
        let mut runs = vec![false; graph.passes.len()];
        let mut split = vec![false; graph.passes.len()];
        compiled.order.iter().zip(&compiled.split).for_each(|(&p, &s)| (runs[p], split[p]) = (true, s));
        for (p, pass) in graph.passes.iter().enumerate().filter(|&(p, _)| runs[p]) {
            // The plan owns its passes' names (frames share them: a pointer each).
            let label: Arc<str> = pass.name.as_str().into();
            let desc = backend_pass(pass, label.clone(), &tex);
            let externals = ExternalSlots {
                color: pass.color.and_then(|c| ext(c.target)),
                depth: pass.depth.and_then(|d| ext(d.target)),
                resolve: pass.color.and_then(|c| c.resolve).and_then(ext),
            };
            index_of[p] = Some(match &pass.content {
                PassContent::Scene { camera, kind, queue } => {
                    let (group, shadow_cameras) = self.scene_group(p, *kind, &tex)?;
                    // Views of one camera test the same objects against the same planes
                    // (shadow passes keep only casters: only with each other).
                    let shadow = *kind == PassKind::Shadow;
                    let cull_from = scenes.iter().position(|t: &ScenePlan| {
                        t.camera == camera.0 as usize && (t.kind == PassKind::Shadow) == shadow
                    });
                    scenes.push(ScenePlan {
                        label,
                        camera: camera.0 as usize,
                        kind: *kind,
                        queue: *queue,
                        pass: desc,
                        externals,
                        group,
                        shadow_cameras,
                        shadowed: !pass.samples.is_empty(),
                        occlude: pass
                            .depth
                            .filter(|_| split[p])
                            .map(|d| (tex(d.target), compiled.sizes[d.target.0 as usize])),
                        receivers: pass.receivers.zip(pass.depth).map(|((t, camera), d)| {
                            let size = |t: TargetId| compiled.sizes[t.0 as usize];
                            let (camera, map) = (camera.0 as usize, size(d.target));
                            super::passes::ReceiversPlan { depth: (tex(t), size(t)), camera, map }
                        }),
                        cached: pass.cached,
                        cull_from,
                    });
                    Entry::Scene(scenes.len() - 1)
                }
                PassContent::Fullscreen(shader) => {
                    let c = pass.color.ok_or(GraphError::NoAttachments { pass: pass.name.clone() })?;
                    let size = compiled.sizes[c.target.0 as usize];
                    let inputs: Vec<_> =
                        pass.samples.iter().map(|&s| (tex(s), graph.targets[s.0 as usize].format, ext(s))).collect();
                    let target_format = graph.targets[c.target.0 as usize].format;
                    let (b, gpu) = (self.b, self.gpu);
                    let made = &mut self.objects.resources;
                    let buffers: Vec<_> = pass
                        .reads
                        .iter()
                        .filter_map(|r| {
                            let i = r.0 as usize;
                            Some((i, graph.buffer_bindings[i]?, graph.buffers[i].clone()))
                        })
                        .collect();
                    let (pipeline, group, inputs) =
                        fullscreen(b, gpu, shader, &pass.name, target_format, size, &inputs, &buffers, made)?;
                    // A shader that compiles but may leave texels unwritten cannot take a
                    // don't-care load (its texels would be undefined).
                    if c.load == LoadOp::DontCare && !writes_every_texel(shader) {
                        return Err(RenderError::Graph(GraphError::InvalidPass {
                            pass: pass.name.clone(),
                            what: "a don't-care load needs a fragment entry that writes every texel \
                                   (no discard, no sample_mask); load or clear instead",
                        }));
                    }
                    engine_passes.push(EnginePlan {
                        name: pass.name.clone(),
                        pass: desc,
                        externals,
                        size,
                        content: EngineContent::Fullscreen { pipeline, group, inputs },
                        inputs: Vec::new(),
                    });
                    Entry::Engine(engine_passes.len() - 1)
                }
                PassContent::Wgpu(native) => {
                    let t = pass.color.map(|c| c.target).or(pass.depth.map(|d| d.target));
                    engine_passes.push(EnginePlan {
                        name: pass.name.clone(),
                        pass: switchyard_backend::PassDesc { native: Some(native.clone()), ..desc },
                        externals,
                        size: t.map_or(output, |t| compiled.sizes[t.0 as usize]),
                        content: EngineContent::Wgpu,
                        inputs: Vec::new(),
                    });
                    Entry::Engine(engine_passes.len() - 1)
                }
                PassContent::Callback(cb) | PassContent::Compute(cb) => {
                    let t = pass.color.map(|c| c.target).or(pass.depth.map(|d| d.target));
                    engine_passes.push(EnginePlan {
                        name: pass.name.clone(),
                        pass: desc,
                        externals,
                        // A compute pass has no attachments: the output's size.
                        size: t.map_or(output, |t| compiled.sizes[t.0 as usize]),
                        content: EngineContent::Callback(Arc::clone(cb)),
                        inputs: pass.samples.clone(),
                    });
                    Entry::Engine(engine_passes.len() - 1)
                }
            });
        }
        let entries = compiled.order.iter().filter_map(|&p| index_of[p]).collect();
        Ok((entries, scenes, engine_passes))
    }

    /// Group 0 of scene pass `p` of `kind` and, for a forward pass, the cameras whose depth
    /// its shadow maps hold.
    fn scene_group(
        &mut self,
        p: usize,
        kind: PassKind,
        tex: &dyn Fn(TargetId) -> TextureId,
    ) -> Result<(BindGroupId, [Option<usize>; MAX_SHADOW_MAPS]), RenderError> {
        let (gpu, pass) = (self.gpu, &self.graph.passes[p]);
        match kind {
            PassKind::Shadow => Ok((gpu.shadow_group, [None; MAX_SHADOW_MAPS])),
            // A depth pass samples nothing: the forward group over no shadow maps.
            PassKind::Forward | PassKind::Depth => {
                let mut maps = [gpu.no_shadow; MAX_SHADOW_MAPS];
                let mut cams = [None; MAX_SHADOW_MAPS];
                for (k, &s) in pass.samples.iter().enumerate() {
                    maps[k] = tex(s);
                    cams[k] = shadow_camera(self.graph, &self.compiled.order, p, s);
                }
                let group = gpu
                    .forward_group(self.b, maps)
                    .map_err(|source| RenderError::BindGroup { pass: pass.name.clone(), source })?;
                self.objects.resources.push(Resource::BindGroup(group));
                Ok((group, cams))
            }
        }
    }
}

/// The external targets the passes that run use: the textures a frame must give.
fn external_targets(graph: &FrameGraph, compiled: &CompiledGraph) -> Vec<ExternalTarget> {
    let used = |t: usize| compiled.lifetimes[t].is_some();
    (0..graph.targets.len())
        .filter(|&t| graph.targets[t].kind == TargetKind::External && used(t))
        .map(|t| {
            let (rendered, sampled) = graph.rendered_and_sampled(&compiled.order, graph.target_id(t));
            ExternalTarget {
                target: t,
                name: graph.targets[t].name.clone(),
                format: graph.targets[t].format,
                size: compiled.sizes[t],
                declared: graph.targets[t].size,
                samples: graph.targets[t].samples,
                follows_output: graph.targets[t].size == TargetSize::Output,
                rendered,
                sampled,
            }
        })
        .collect()
}

impl FramePlan {
    /// What the plan made, given up: its objects and the bind groups its fullscreen passes
    /// made per frame (for the caller to retire: frames may still use them).
    pub(crate) fn into_resources(mut self) -> Vec<Resource> {
        let mut out = Vec::new();
        for o in &mut self.engine_passes {
            if let EngineContent::Fullscreen { inputs: Some(inputs), .. } = &mut o.content {
                out.extend(inputs.take_groups().map(Resource::BindGroup));
            }
        }
        if let Some(s) = &mut self.scene_buffers {
            out.extend(s.inputs.take_groups().map(Resource::BindGroup));
        }
        out.extend(self.objects.into_resources());
        out
    }
}

/// The camera of the last shadow scene pass before `pass` that writes depth target `t`.
fn shadow_camera(graph: &FrameGraph, order: &[usize], pass: usize, t: TargetId) -> Option<usize> {
    let at = order.iter().position(|&q| q == pass).unwrap_or(order.len());
    order[..at].iter().rev().find_map(|&q| {
        let p = &graph.passes[q];
        match p.content {
            PassContent::Scene { camera, kind: PassKind::Shadow, .. } if p.depth.is_some_and(|d| d.target == t) => {
                Some(camera.0 as usize)
            }
            _ => None,
        }
    })
}
