//! Depth passes (`PassKind::Depth`, a depth prepass): on lavapipe and llvmpipe the depth a
//! depth pass writes equals, texel for texel, the depth a forward pass of the same camera
//! writes (the forward vertex stage alone), culled on the CPU and on the GPU; on the null
//! backend its command stream does not depend on the thread count and binds no fragment
//! stage; a depth pass with a color attachment, samples or multisampled depth, and a depth
//! view in a views frame, are refused with typed errors.

use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, plain_material, wgpu_backend};

const WIDTH: u32 = 150;
const HEIGHT: u32 = 90;

/// Red where the two depths differ, green where the forward pass drew something.
const COMPARE: &str = "
@group(0) @binding(3) var pre: texture_2d<f32>;
@group(0) @binding(4) var fwd: texture_2d<f32>;
@fragment
fn fs(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let p = vec2<i32>(v.position.xy);
    let a = textureLoad(pre, p, 0).r;
    let b = textureLoad(fwd, p, 0).r;
    return vec4<f32>(select(0.0, 1.0, a != b), select(0.0, 1.0, b < 1.0), 0.0, 1.0);
}
";

/// A depth pass and a forward pass of one camera, each into its own depth target, then a
/// fullscreen pass comparing the two.
fn graph() -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let (t, d) = (TargetKind::Transient, TextureFormat::Depth32Float);
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let color = g.target("color", t, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let (pre, fwd) = (g.target("pre", t, d, TargetSize::Output), g.target("fwd", t, d, TargetSize::Output));
    g.pass(Pass::scene("pre", main, PassKind::Depth, Queue::Opaque).depth(pre, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(
        Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
            .color(color, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(fwd, LoadOp::Clear(1.0), StoreOp::Store),
    );
    let shader =
        FullscreenShader { name: "compare".into(), wgsl: COMPARE.into(), entry: "fs".into(), params: [0.0; 8] };
    g.pass(Pass::fullscreen("compare", shader).color(out, LoadOp::DontCare, StoreOp::Store).sample(pre).sample(fwd));
    (g, out)
}

fn camera(k: usize) -> Camera {
    let eye = [Vec3::new(0.0, 6.0, 16.0), Vec3::new(11.0, 3.0, 7.0), Vec3::new(-4.0, 14.0, 3.0)][k];
    switchyard_tests::look_camera(eye, Vec3::ZERO, WIDTH as f32 / HEIGHT as f32, 60.0)
}

fn scene<B: Backend>(backend: Arc<B>, cull: CullOn, threads: usize) -> (Renderer<B>, TargetId) {
    let config = RendererConfig { threads, max_objects: 256, width: WIDTH, height: HEIGHT, cull, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let materials =
        [plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]), plain_material(&mut r, shader, [0.3, 0.7, 0.9, 1.0])];
    let (g, out) = graph();
    r.set_graph(g).unwrap();
    let objects: Vec<ObjectDesc> = (0..120)
        .map(|i| {
            let f = i as f32;
            let at = Vec3::new((f * 2.3).sin() * 8.0, (f * 0.7).cos() * 2.0, (f * 1.7).cos() * 8.0);
            let scale = Vec3::new(0.6 + (f * 0.3).sin().abs(), 0.5 + (f * 0.9).cos().abs() * 2.0, 0.7);
            ObjectDesc {
                mesh,
                material: materials[i % 2],
                transform: Mat4::from_scale_rotation_translation(scale, Quat::from_rotation_y(f), at),
                layer: 0,
                flags: 0,
            }
        })
        .collect();
    r.insert_objects(&objects).unwrap();
    (r, out)
}

fn same_depth_on(api: ::wgpu::Backends) {
    for cull in [CullOn::Cpu, CullOn::Gpu] {
        let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
        let (mut r, out) = scene(backend, cull, 2);
        for k in 0..3 {
            r.render_graph(&FrameInput { cameras: &[camera(k)], targets: &[] }).unwrap();
            let img = r.read_target(out).unwrap();
            let (mut differ, mut drawn) = (0, 0);
            for i in 0..WIDTH * HEIGHT {
                let p = img.pixel(i % WIDTH, i / WIDTH);
                differ += usize::from(p[0] > 0);
                drawn += usize::from(p[1] > 0);
            }
            assert_eq!(differ, 0, "{api:?} {cull:?} camera {k}: texels where the depth pass's depth differs");
            assert!(drawn > 1000, "{api:?} {cull:?} camera {k}: {drawn} texels drawn");
        }
    }
}

#[test]
fn a_depth_pass_writes_the_forward_passes_depth_on_vulkan() {
    same_depth_on(::wgpu::Backends::VULKAN);
}

#[test]
fn a_depth_pass_writes_the_forward_passes_depth_on_gl() {
    same_depth_on(::wgpu::Backends::GL);
}

#[test]
fn a_depth_pass_is_deterministic_and_binds_no_fragment_stage() {
    let run = |threads: usize, cull: CullOn| {
        let (mut r, _) = scene(Arc::new(NullBackend::new(true)), cull, threads);
        (0..3)
            .map(|k| r.render_graph(&FrameInput { cameras: &[camera(k)], targets: &[] }).unwrap().digest)
            .collect::<Vec<_>>()
    };
    for cull in [CullOn::Cpu, CullOn::Gpu] {
        let one = run(1, cull);
        for threads in [2, 3, 8] {
            assert_eq!(run(threads, cull), one, "{cull:?}: {threads} threads");
        }
    }
    // The pipelines made for it: the forward vertex entry, no fragment stage, no color.
    let (mut r, _) = scene(Arc::new(NullBackend::new(true)), CullOn::Cpu, 1);
    let warm = r.warm_up().unwrap();
    assert!(warm.pipelines_created > 0 || warm.lists_built > 0, "{warm:?}");
    let log = r.pipeline_log();
    assert!(log.entries.iter().any(|e| e.pass == PassKind::Depth), "warm-up makes the depth pipelines");
}

#[test]
fn bad_depth_passes_are_refused() {
    let (mut r, _) = scene(Arc::new(NullBackend::new(true)), CullOn::Cpu, 1);
    let before = r.render_graph(&FrameInput { cameras: &[camera(0)], targets: &[] }).unwrap().digest;
    for k in 0..3 {
        let mut g = FrameGraph::new();
        let main = g.camera("main");
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let samples = if k == 2 { 4 } else { 1 };
        let d =
            g.target_multisampled("d", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output, samples);
        let map = g.target("map", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        g.pass(Pass::callback("map", |_, _| {}).depth(map, LoadOp::Clear(1.0), StoreOp::Store));
        let mut pass =
            Pass::scene("pre", main, PassKind::Depth, Queue::Opaque).depth(d, LoadOp::Clear(1.0), StoreOp::Store);
        match k {
            0 => pass = pass.color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store),
            1 => pass = pass.sample(map),
            _ => {}
        }
        g.pass(pass);
        g.pass(Pass::callback("use", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store));
        let e = r.set_graph(g);
        assert!(matches!(e, Err(RenderError::Graph(GraphError::InvalidPass { .. }))), "case {k}: {e:?}");
    }
    let after = r.render_graph(&FrameInput { cameras: &[camera(0)], targets: &[] }).unwrap().digest;
    assert_eq!(before, after, "the graph set before stays");
    // A views frame has nowhere to keep a depth pass's depth.
    let view = View {
        label: "pre",
        view_proj: camera(0).view_proj,
        eye: camera(0).eye,
        far: 60.0,
        layer_mask: u16::MAX,
        pass: PassKind::Depth,
    };
    match r.render(&[view]) {
        Err(RenderError::InvalidView { index: 0, what }) => assert!(what.contains("depth pass"), "{what}"),
        other => panic!("expected InvalidView, got {other:?}"),
    }
}
