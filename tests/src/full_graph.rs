//! A frame graph of every kind of pass, for the frame-graph tests on the null and wgpu
//! backends: two shadow cascades, opaque and transparent scene passes into a high dynamic
//! range (RGBA16 float) target, a three-step
//! fullscreen bloom chain at half resolution (whose first and last targets share a
//! texture), a post pass into the output, and an overlay an engine callback draws.

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};

/// Names of the graph's camera slots, in order.
pub const CAMERAS: [&str; 3] = ["sun-near", "sun-far", "main"];

/// The graph's cameras, in [`CAMERAS`] order: two sun cascades (15 and 45 units across)
/// and a perspective camera, all looking at the origin from up to 150 units away.
pub fn cameras() -> [Camera; 3] {
    let sun = |half: f32| {
        let eye = Vec3::new(20.0, 50.0, 10.0);
        Camera {
            view_proj: Mat4::orthographic_rh(-half, half, -half, half, 0.1, 150.0)
                * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
            eye,
            far: 150.0,
            layer_mask: u16::MAX,
            receivers: None,
        }
    };
    let eye = Vec3::new(30.0, 20.0, 30.0);
    let main = Camera {
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.5, 150.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 150.0,
        layer_mask: u16::MAX,
        receivers: None,
    };
    [sun(15.0), sun(45.0), main]
}

/// `n` shadow-casting objects of `mesh`, each of a random one of `materials`, scattered over
/// 80 x 80 units around the origin and up to 5 high; `seed` makes them the same every run.
pub fn scattered(n: usize, seed: u64, mesh: MeshHandle, materials: &[MaterialHandle]) -> Vec<ObjectDesc> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    (0..n)
        .map(|_| ObjectDesc {
            mesh,
            material: materials[rng.gen_range(0..materials.len())],
            transform: Mat4::from_translation(Vec3::new(
                rng.gen_range(-40.0..40.0),
                rng.gen_range(0.0..5.0),
                rng.gen_range(-40.0..40.0),
            )),
            layer: 0,
            flags: CASTS_SHADOWS,
        })
        .collect()
}

/// Half-resolution blur step: the average of four taps of input 0, times `params[0].x`.
pub const BLUR: &str = "
@group(0) @binding(3) var src: texture_2d<f32>;
@fragment
fn fs_blur(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let d = frame.inv_size * 0.5;
    let s = textureSample(src, frame_sampler, v.uv + vec2<f32>(d.x, d.y))
        + textureSample(src, frame_sampler, v.uv + vec2<f32>(-d.x, d.y))
        + textureSample(src, frame_sampler, v.uv + vec2<f32>(d.x, -d.y))
        + textureSample(src, frame_sampler, v.uv + vec2<f32>(-d.x, -d.y));
    return s * 0.25 * frame.params[0].x;
}
";

/// Post: the scene plus bloom, tone mapped (Reinhard), then fogged by the depth target
/// (`params[0].y`: fog amount at the far plane).
pub const POST: &str = "
@group(0) @binding(3) var scene: texture_2d<f32>;
@group(0) @binding(4) var bloom: texture_2d<f32>;
@group(0) @binding(5) var depth: texture_2d<f32>;
@fragment
fn fs_post(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let c = textureSample(scene, frame_sampler, v.uv).rgb + 0.5 * textureSample(bloom, frame_sampler, v.uv).rgb;
    let mapped = c / (vec3<f32>(1.0) + c) * 1.6;
    let z = textureSampleLevel(depth, frame_point_sampler, v.uv, 0.0).r;
    let fog = clamp(z * z * z * frame.params[0].y, 0.0, 1.0);
    return vec4<f32>(mix(mapped, vec3<f32>(0.7, 0.75, 0.8), fog), 1.0);
}
";

/// The overlay's shader: a bar from the top-left corner, `width` of the target wide
/// (vertex stage only positions; no bindings).
const BAR: &str = "
@vertex
fn vs_bar(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = array<f32, 6>(0.0, 1.0, 0.0, 1.0, 1.0, 0.0)[i];
    let y = array<f32, 6>(0.0, 0.0, 1.0, 0.0, 1.0, 1.0)[i];
    // A bar over the left half of the top eighth of the target.
    return vec4<f32>(-1.0 + x, 1.0 - y * 0.25, 0.0, 1.0);
}
@fragment
fn fs_bar() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0, 0.0, 0.0, 1.0);
}
";

/// The overlay's pipeline (an engine object, made through the renderer's backend).
pub fn bar_pipeline<B: Backend>(b: &B) -> Result<PipelineId, CreateError> {
    let shader = b.create_shader(&backend::ShaderModuleDesc { label: "bar".into(), wgsl: BAR.into() })?;
    b.create_pipeline(&PipelineDesc {
        label: "bar".into(),
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

/// The targets of [`full_graph`].
#[derive(Clone, Copy, Debug)]
pub struct Targets {
    pub shadows: [TargetId; 2],
    pub hdr: TargetId,
    pub depth: TargetId,
    pub bright: TargetId,
    pub blur_h: TargetId,
    pub blur_v: TargetId,
    pub out: TargetId,
}

/// The graph, drawing into `out` (`External`: the engine's texture; `Retained`: the
/// graph's own). The overlay draws with `bar` (see [`bar_pipeline`]).
pub fn full_graph(out_kind: TargetKind, shadow_side: u32, bar: PipelineId) -> (FrameGraph, Targets) {
    let mut g = FrameGraph::new();
    let cams = CAMERAS.map(|c| g.camera(c));
    let map = TargetSize::Fixed { width: shadow_side, height: shadow_side };
    let shadows =
        ["shadow-near", "shadow-far"].map(|n| g.target(n, TargetKind::Transient, TextureFormat::Depth32Float, map));
    let hdr = g.target("hdr", TargetKind::Transient, TextureFormat::Rgba16Float, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let half = TargetSize::Scaled(0.5);
    let [bright, blur_h, blur_v] =
        ["bright", "blur-h", "blur-v"].map(|n| g.target(n, TargetKind::Transient, TextureFormat::Rgba8Unorm, half));
    let out = g.target("out", out_kind, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    // Declared out of order on purpose: the compiler orders by dependencies.
    let blur = |name: &str, gain: f32| FullscreenShader {
        name: name.into(),
        wgsl: BLUR.into(),
        entry: "fs_blur".into(),
        params: [gain, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    };
    g.pass(
        Pass::fullscreen(
            "post",
            FullscreenShader {
                name: "post".into(),
                wgsl: POST.into(),
                entry: "fs_post".into(),
                params: [0.0, 0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            },
        )
        .color(out, LoadOp::DontCare, StoreOp::Store)
        .sample(hdr)
        .sample(blur_v)
        .sample(depth),
    );
    g.pass(
        Pass::callback("overlay", move |_ctx, cmds| {
            cmds.push(Command::SetPipeline(bar));
            cmds.push(Command::Draw { first_vertex: 0, vertex_count: 6, first_instance: 0, instance_count: 1 });
        })
        .color(out, LoadOp::Load, StoreOp::Store),
    );
    for (i, (name, cam)) in [("shadow-near", cams[0]), ("shadow-far", cams[1])].into_iter().enumerate() {
        g.pass(Pass::scene(name, cam, PassKind::Shadow, Queue::All).depth(
            shadows[i],
            LoadOp::Clear(1.0),
            StoreOp::Store,
        ));
    }
    let sky = [0.55, 0.65, 0.8, 1.0];
    g.pass(
        Pass::scene("opaque", cams[2], PassKind::Forward, Queue::Opaque)
            .color(hdr, LoadOp::Clear(sky), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Store)
            .sample(shadows[0])
            .sample(shadows[1]),
    );
    g.pass(
        Pass::scene("transparent", cams[2], PassKind::Forward, Queue::Transparent)
            .color(hdr, LoadOp::Load, StoreOp::Store)
            .depth(depth, LoadOp::Load, StoreOp::Store)
            .sample(shadows[0])
            .sample(shadows[1]),
    );
    g.pass(Pass::fullscreen("bright", blur("bright", 1.0)).color(bright, LoadOp::DontCare, StoreOp::Store).sample(hdr));
    g.pass(
        Pass::fullscreen("blur-h", blur("blur-h", 1.0)).color(blur_h, LoadOp::DontCare, StoreOp::Store).sample(bright),
    );
    g.pass(
        Pass::fullscreen("blur-v", blur("blur-v", 1.0)).color(blur_v, LoadOp::DontCare, StoreOp::Store).sample(blur_h),
    );
    (g, Targets { shadows, hdr, depth, bright, blur_h, blur_v, out })
}

/// The submission order [`full_graph`] compiles to.
pub const ORDER: [&str; 9] =
    ["shadow-near", "shadow-far", "opaque", "transparent", "bright", "blur-h", "blur-v", "post", "overlay"];
