//! The demo's frame, declared through Switchyard's public frame graph:
//! - `minimal`: one forward pass into the output;
//! - `full`: shadow cascades of the sun (derived from the light and the camera each
//!   frame), opaque and transparent scene passes into an intermediate target, a post pass
//!   (tone mapping and depth fog) into the output, and an overlay an engine callback draws
//!   (a frame-time bar).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::{
    Backend, BlendMode, ColorTargetState, Command, CullMode, PipelineDesc, PipelineId, TextureFormat,
};
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_city::Lens;

/// The sky: the first pass's clear color (linear).
const SKY: [f64; 4] = [0.55, 0.65, 0.8, 1.0];

/// Tone mapping (exposure, then an ACES fit) and fog by distance from the depth target.
/// `params`: near, far, fog density, exposure; fog color.
const POST: &str = "
@group(0) @binding(3) var scene: texture_2d<f32>;
@group(0) @binding(4) var depth: texture_2d<f32>;
@fragment
fn fs_post(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let p = frame.params[0];
    var c = textureSample(scene, frame_sampler, v.uv).rgb;
    let z = textureSampleLevel(depth, frame_point_sampler, v.uv, 0.0).r;
    if (z < 1.0) {
        let d = p.x * p.y / (p.y - z * (p.y - p.x));
        c = mix(c, frame.params[1].rgb, 1.0 - exp(-p.z * d));
    }
    let x = c * p.w;
    let mapped = clamp(x * (2.51 * x + 0.03) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
    return vec4<f32>(mapped, 1.0);
}
";

/// The overlay: quad 0 is the bar's dark background, quad i > 0 its i-th millisecond
/// (green within 60 Hz, yellow within 30 Hz, red beyond), from the top-left corner.
const BAR: &str = "
struct Out { @builtin(position) position: vec4<f32>, @location(0) color: vec4<f32> }
@vertex
fn vs_bar(@builtin(vertex_index) v: u32) -> Out {
    let q = v / 6u;
    let x = array<f32, 6>(0.0, 1.0, 0.0, 1.0, 1.0, 0.0)[v % 6u];
    let y = array<f32, 6>(0.0, 0.0, 1.0, 0.0, 1.0, 1.0)[v % 6u];
    var o: Out;
    if (q == 0u) {
        o.position = vec4<f32>(-0.98 + x * 1.0, 0.97 - y * 0.06, 0.0, 1.0);
        o.color = vec4<f32>(0.05, 0.05, 0.05, 1.0);
    } else {
        let i = f32(q - 1u);
        o.position = vec4<f32>(-0.975 + (i + x * 0.8) * (0.99 / 64.0), 0.965 - y * 0.05, 0.0, 1.0);
        o.color = select(select(vec4<f32>(0.9, 0.1, 0.1, 1.0), vec4<f32>(0.9, 0.8, 0.1, 1.0), i < 33.0),
                         vec4<f32>(0.2, 0.85, 0.3, 1.0), i < 16.0);
    }
    return o;
}
@fragment
fn fs_bar(i: Out) -> @location(0) vec4<f32> {
    return i.color;
}
";

/// Which frame the demo declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GraphKind {
    /// One forward pass into the output.
    Minimal,
    /// Shadow cascades, opaque, transparent, post and an overlay.
    Full,
}

/// The demo's declared frame and what a frame fills in.
pub(crate) struct DemoFrame {
    pub(crate) cascades: usize,
    /// Milliseconds the overlay shows (f32 bits), set by the frame loop.
    pub(crate) bar_ms: Arc<AtomicU32>,
}

impl DemoFrame {
    /// Declares the frame on `r` (`cascades`: 0 to 4 shadow maps of `shadow_side` texels,
    /// full graph only).
    pub(crate) fn set<B: Backend>(
        r: &mut Renderer<B>,
        kind: GraphKind,
        cascades: usize,
        shadow_side: u32,
        lens: &Lens,
    ) -> Result<Self, String> {
        let bar_ms = Arc::new(AtomicU32::new(0));
        let mut g = FrameGraph::new();
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        let cascades = if kind == GraphKind::Minimal { 0 } else { cascades.min(MAX_SHADOW_MAPS) };
        let suns: Vec<CameraId> = (0..cascades).map(|k| g.camera(format!("sun-{k}"))).collect();
        let main = g.camera("main");
        if kind == GraphKind::Minimal {
            g.pass(
                Pass::scene("main", main, PassKind::Forward, Queue::All)
                    .color(out, LoadOp::Clear(SKY), StoreOp::Store)
                    .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
            );
            r.set_graph(g).map_err(|e| format!("frame graph: {e}"))?;
            return Ok(Self { cascades, bar_ms });
        }
        let map = TargetSize::Fixed { width: shadow_side, height: shadow_side };
        let mut maps = Vec::new();
        for (k, &sun) in suns.iter().enumerate() {
            let t = g.target(format!("shadow-{k}"), TargetKind::Transient, TextureFormat::Depth32Float, map);
            g.pass(Pass::scene(format!("shadow-{k}"), sun, PassKind::Shadow, Queue::All).depth(
                t,
                LoadOp::Clear(1.0),
                StoreOp::Store,
            ));
            maps.push(t);
        }
        let color = g.target("scene-color", TargetKind::Transient, TextureFormat::Rgba16Float, TargetSize::Output);
        let with_maps = |mut p: Pass| {
            for &m in &maps {
                p = p.sample(m);
            }
            p
        };
        g.pass(with_maps(
            Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
                .color(color, LoadOp::Clear(SKY), StoreOp::Store)
                .depth(depth, LoadOp::Clear(1.0), StoreOp::Store),
        ));
        g.pass(with_maps(
            Pass::scene("transparent", main, PassKind::Forward, Queue::Transparent)
                .color(color, LoadOp::Load, StoreOp::Store)
                .depth(depth, LoadOp::Load, StoreOp::Store),
        ));
        let light = r.lighting();
        let fog = light.fog_color;
        let shader = FullscreenShader {
            name: "post".into(),
            wgsl: POST.into(),
            entry: "fs_post".into(),
            params: [lens.near, lens.far, light.fog_density, 0.6, fog.x, fog.y, fog.z, 0.0],
        };
        g.pass(
            Pass::fullscreen("post", shader).color(out, LoadOp::DontCare, StoreOp::Store).sample(color).sample(depth),
        );
        let bar = bar_pipeline(&**r.backend()).map_err(|e| format!("overlay pipeline: {e}"))?;
        let ms = bar_ms.clone();
        g.pass(
            Pass::callback("overlay", move |_ctx, cmds| {
                let segments = f32::from_bits(ms.load(Ordering::Relaxed)).round().clamp(0.0, 64.0) as u32;
                cmds.push(Command::SetPipeline(bar));
                cmds.push(Command::Draw {
                    first_vertex: 0,
                    vertex_count: 6 * (segments + 1),
                    first_instance: 0,
                    instance_count: 1,
                });
            })
            .color(out, LoadOp::Load, StoreOp::Store),
        );
        r.set_graph(g).map_err(|e| format!("frame graph: {e}"))?;
        Ok(Self { cascades, bar_ms })
    }

    /// This frame's cameras: the cascades of `light` for `lens`, then `lens`.
    pub(crate) fn cameras(&self, lens: &Lens, light: Vec3, aspect: f32, shadow_side: u32) -> Vec<Camera> {
        let mut cams: Vec<Camera> = cascades(lens, light, aspect, self.cascades, shadow_side);
        cams.push(Camera { view_proj: lens.view_proj(aspect), eye: lens.eye, far: lens.far, layer_mask: u16::MAX });
        cams
    }
}

/// The overlay's pipeline: an engine object, made through the renderer's backend.
fn bar_pipeline<B: Backend>(b: &B) -> Result<PipelineId, switchyard::backend::CreateError> {
    let shader =
        b.create_shader(&switchyard::backend::ShaderModuleDesc { label: "overlay".into(), wgsl: BAR.into() })?;
    b.create_pipeline(&PipelineDesc {
        label: "overlay".into(),
        shader,
        vertex_entry: "vs_bar".into(),
        fragment_entry: Some("fs_bar".into()),
        bind_group_layouts: Vec::new(),
        vertex_buffers: Vec::new(),
        cull: CullMode::None,
        color: Some(ColorTargetState { format: TextureFormat::Rgba8UnormSrgb, blend: BlendMode::Replace }),
        depth: None,
        samples: 1,
    })
}

/// Shadow cascades of a directional light for `lens`: the view frustum is split where a
/// log and a uniform split meet halfway (over the nearer part of the view, where shadows
/// are seen), each slice is bounded by a sphere, and each cascade is an orthographic box
/// around it, facing along the light, reaching back towards the light far enough to hold
/// every caster that can shade the slice (casters beyond are culled by the box). The box
/// moves in whole texels, so shadows do not shimmer as the camera moves.
pub(crate) fn cascades(lens: &Lens, light: Vec3, aspect: f32, count: usize, side: u32) -> Vec<Camera> {
    let dir = light.normalize_or(Vec3::NEG_Y);
    let up = if dir.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
    let (near, far) = (lens.near, lens.far * 0.5);
    let split = |i: usize| {
        let f = i as f32 / count as f32;
        0.5 * (near * (far / near).powf(f) + near + (far - near) * f)
    };
    (0..count)
        .map(|k| {
            let (a, b) = (if k == 0 { near } else { split(k) }, if k + 1 == count { far } else { split(k + 1) });
            let corners = lens.slice_corners(aspect, a, b);
            let center = corners.iter().copied().sum::<Vec3>() / 8.0;
            let radius = corners.iter().map(|c| c.distance(center)).fold(0.0, f32::max).max(1.0);
            // Casters up to `reach` towards the light from the slice can shade it.
            let reach = radius * 2.0 + 40.0;
            let texel = 2.0 * radius / side as f32;
            let rotation = Mat4::look_at_rh(Vec3::ZERO, dir, up);
            let snapped = (rotation.transform_point3(center) / texel).round() * texel;
            let center = rotation.inverse().transform_point3(snapped);
            let eye = center - dir * reach;
            let proj = Mat4::orthographic_rh(-radius, radius, -radius, radius, 0.0, reach + radius);
            Camera {
                view_proj: proj * Mat4::look_at_rh(eye, center, up),
                eye,
                far: reach + radius,
                layer_mask: u16::MAX,
            }
        })
        .collect()
}
