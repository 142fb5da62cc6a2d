//! The plan of a frame for one configuration of views, built when the views' passes or
//! labels change and reused otherwise: the frame graph over the renderer's targets
//! (compiled: submission order, bytes per pass, warnings), the backend pass of each view,
//! and the job graph.
//!
//! The frame is still the fixed one — shadow views render depth into shadow map i, forward
//! views render into the main color and depth targets and sample the maps — but it is
//! described and ordered as a graph, so each pass's memory traffic is known.

use switchyard_backend as backend;
use switchyard_backend::{ColorAttachment, DepthAttachment, PassDesc, TextureFormat, TextureId};

use super::gpu::FrameResources;
use super::jobs::{build_graph, Job};
use super::{RenderError, RendererConfig, ViewKey};
use crate::frame_graph::{CompiledGraph, GraphDesc, LoadOp, PassDecl, StoreOp, TargetId, TargetKind, TargetSize};
use crate::graph::JobGraph;
use crate::material::PassKind;
use crate::view::View;

/// The clear color of the first forward pass (linear RGBA).
const SKY: [f64; 4] = [0.55, 0.65, 0.8, 1.0];

/// One view configuration's frame.
#[derive(Debug)]
pub(crate) struct FramePlan {
    key: Vec<ViewKey>,
    pub(crate) jobs: JobGraph<Job>,
    pub(crate) graph: CompiledGraph,
    /// View indices in submission order (pass `i` of the graph is view `i`).
    pub(crate) order: Vec<usize>,
    /// The backend pass of each view, by view index.
    pub(crate) passes: Vec<PassDesc>,
    /// Pass names in submission order (view labels, made unique).
    pub(crate) names: Vec<String>,
}

impl FramePlan {
    /// Whether this plan was built for `views`.
    pub(crate) fn fits(&self, views: &[View]) -> bool {
        self.key.iter().copied().eq(views.iter().map(|v| (v.pass, v.label)))
    }

    pub(crate) fn build(gpu: &FrameResources, config: &RendererConfig, views: &[View]) -> Result<Self, RenderError> {
        let (desc, textures) = describe(config, views);
        let graph = desc.compile((config.width, config.height)).map_err(|e| RenderError::FrameGraph(e.to_string()))?;
        let texture = |t: TargetId| match textures[t.0 as usize] {
            Target::Shadow(k) => gpu.shadow_maps[k],
            Target::Color => gpu.color,
            Target::Depth => gpu.depth,
        };
        let passes = desc.passes.iter().zip(views).map(|(p, v)| backend_pass(p, v.label, &texture)).collect();
        let names = graph.order.iter().map(|&p| desc.passes[p].name.clone()).collect();
        let jobs = build_graph(views).map_err(|e| RenderError::JobGraph(e.to_string()))?;
        Ok(Self {
            key: views.iter().map(|v| (v.pass, v.label)).collect(),
            jobs,
            order: graph.order.clone(),
            graph,
            passes,
            names,
        })
    }
}

/// Which of the renderer's textures a graph target is.
#[derive(Clone, Copy, Debug)]
enum Target {
    Shadow(usize),
    Color,
    Depth,
}

/// The fixed frame as a graph: one pass per view, in the order given. The shadow maps and
/// the color target outlive the frame (the renderer keeps them; forward views sample the
/// maps, `read_color` reads the color), so they are outputs; the depth target is owned.
fn describe(config: &RendererConfig, views: &[View]) -> (GraphDesc, Vec<Target>) {
    let mut g = GraphDesc::default();
    let s = config.shadow_map_size;
    let map = TargetSize::Fixed { width: s, height: s };
    let shadow_maps = [
        g.target("shadow-0", TargetKind::Output, TextureFormat::Depth32Float, map, 1),
        g.target("shadow-1", TargetKind::Output, TextureFormat::Depth32Float, map, 1),
    ];
    let color = g.target("main-color", TargetKind::Output, TextureFormat::Rgba8UnormSrgb, TargetSize::Output, 1);
    let depth = g.target("main-depth", TargetKind::Owned, TextureFormat::Depth32Float, TargetSize::Output, 1);
    let textures = vec![Target::Shadow(0), Target::Shadow(1), Target::Color, Target::Depth];
    let shadows = views.iter().filter(|v| v.pass == PassKind::Shadow).count().min(shadow_maps.len());
    let (mut shadow_i, mut first_forward) = (0, true);
    for (i, v) in views.iter().enumerate() {
        let repeats = views[..i].iter().filter(|w| w.label == v.label).count();
        let name = if repeats == 0 { v.label.to_string() } else { format!("{}#{repeats}", v.label) };
        let pass = match v.pass {
            PassKind::Shadow => {
                shadow_i += 1;
                PassDecl::new(&name).depth(shadow_maps[shadow_i - 1], LoadOp::Clear(1.0), StoreOp::Store)
            }
            PassKind::Forward => {
                let first = std::mem::replace(&mut first_forward, false);
                let (cl, dl) =
                    if first { (LoadOp::Clear(SKY), LoadOp::Clear(1.0)) } else { (LoadOp::Load, LoadOp::Load) };
                let mut p = PassDecl::new(&name).color(color, cl, StoreOp::Store).depth(depth, dl, StoreOp::Store);
                for &m in &shadow_maps[..shadows] {
                    p = p.sample(m);
                }
                p
            }
        };
        g.pass(pass);
    }
    (g, textures)
}

/// The backend's description of a graph pass.
fn backend_pass(p: &PassDecl, label: &'static str, texture: &dyn Fn(TargetId) -> TextureId) -> PassDesc {
    let store = |s| match s {
        StoreOp::Store => backend::StoreOp::Store,
        StoreOp::Discard => backend::StoreOp::Discard,
    };
    // Don't-care loads run as clears: any content is allowed, and clearing is one choice.
    // (wgpu's `LoadOp::DontCare` needs an unsafe token.)
    PassDesc {
        label,
        color: p.color.map(|a| ColorAttachment {
            texture: texture(a.target),
            load: match a.load {
                LoadOp::Clear(v) => backend::LoadOp::Clear(v),
                LoadOp::Load => backend::LoadOp::Load,
                LoadOp::DontCare => backend::LoadOp::Clear([0.0; 4]),
            },
            store: store(a.store),
        }),
        depth: p.depth.map(|a| DepthAttachment {
            texture: texture(a.target),
            load: match a.load {
                LoadOp::Clear(v) => backend::LoadOp::Clear(v),
                LoadOp::Load => backend::LoadOp::Load,
                LoadOp::DontCare => backend::LoadOp::Clear(1.0),
            },
            store: store(a.store),
        }),
    }
}
