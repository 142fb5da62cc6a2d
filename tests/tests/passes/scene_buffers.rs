//! Scene passes that read the engine's buffers (group 2 of every material pipeline,
//! `MAX_SCENE_BUFFERS`): refusals are typed and change nothing, a frame that needs an
//! unbound buffer fails with its name, the group is kept while the bound buffers stay and
//! made again on a recovered device, the stream does not depend on the thread count, and
//! the pipeline log names the group's kinds. On lavapipe and llvmpipe a material's shader reads a uniform in its fragment
//! stage and a storage array in its vertex stage (forward and shadow), and each frame's
//! pixels follow what the engine wrote.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, graph_error, wgpu_backend};

const SIDE: u32 = 32;

/// A material colored by the engine's uniform and lifted by its storage array (in the
/// forward and the shadow pass).
const TINTED: &str = "
struct Globals { view_proj: mat4x4<f32> };
struct Tint { color: vec4<f32> };
@group(0) @binding(0) var<uniform> globals: Globals;
@group(0) @binding(1) var<storage, read> transforms: array<mat4x4<f32>>;
@group(2) @binding(0) var<uniform> tint: Tint;
@group(2) @binding(1) var<storage, read> lift: array<vec4<f32>>;
struct VIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) object: u32,
};
fn place(v: VIn) -> vec4<f32> {
    return globals.view_proj * (transforms[v.object] * vec4<f32>(v.position, 1.0) + lift[0]);
}
@vertex fn vs_main(v: VIn) -> @builtin(position) vec4<f32> { return place(v); }
@vertex fn vs_shadow(v: VIn) -> @builtin(position) vec4<f32> { return place(v); }
@fragment fn fs_main() -> @location(0) vec4<f32> { return tint.color; }
";

struct Graph {
    graph: FrameGraph,
    out: TargetId,
    tint: GraphBuffer,
    lift: GraphBuffer,
}

/// The sun's shadow pass (reading `lift`), then the forward pass (reading both).
fn graph() -> Graph {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let sun = g.camera("sun");
    let tint = g.uniform_buffer("tint");
    let lift = g.storage_buffer("lift");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let map = g.target(
        "map",
        TargetKind::Transient,
        TextureFormat::Depth32Float,
        TargetSize::Fixed { width: 64, height: 64 },
    );
    g.pass(
        Pass::scene("shadow", sun, PassKind::Shadow, Queue::All)
            .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
            .reads(lift),
    );
    g.pass(
        Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
            .color(out, LoadOp::Clear([0.0, 0.0, 0.0, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .sample(map)
            .reads(tint)
            .reads(lift),
    );
    Graph { graph: g, out, tint, lift }
}

fn cameras() -> [Camera; 2] {
    let eye = Vec3::new(0.0, 0.5, 4.0);
    let main = Mat4::perspective_rh(0.6, 1.0, 0.5, 50.0) * Mat4::look_at_rh(eye, Vec3::new(0.0, 0.5, 0.0), Vec3::Y);
    let sun_eye = Vec3::new(0.0, 20.0, 0.1);
    let sun = Mat4::orthographic_rh(-5.0, 5.0, -5.0, 5.0, 1.0, 40.0) * Mat4::look_at_rh(sun_eye, Vec3::ZERO, Vec3::Y);
    [
        Camera { view_proj: main, eye, far: 50.0, layer_mask: u16::MAX, receivers: None },
        Camera { view_proj: sun, eye: sun_eye, far: 40.0, layer_mask: u16::MAX, receivers: None },
    ]
}

/// A renderer with the graph set and one tinted cube at the origin.
fn scene<B: Backend>(backend: Arc<B>, threads: usize) -> (Renderer<B>, Graph) {
    let config = RendererConfig { threads, max_objects: 16, width: SIDE, height: SIDE, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    // First the graph: a shader is compiled against the current graph's groups.
    let g = graph();
    r.set_graph(g.graph.clone()).unwrap();
    let desc = ShaderDesc { name: "tinted".into(), wgsl: TINTED.into(), ..ShaderDesc::lit() };
    let desc = ShaderDesc { keywords: Vec::new(), constants: Vec::new(), ..desc };
    let shader = r.create_shader(&desc).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let object = ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS };
    r.insert_objects(&[object]).unwrap();
    (r, g)
}

fn buffer<B: Backend>(b: &B, usage: BufferUsage, floats: &[f32]) -> BufferId {
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let usage = usage | BufferUsage::COPY_DST;
    let id = b.create_buffer(&BufferDesc { label: "engine".into(), size: bytes.len() as u64, usage }).unwrap();
    b.write_buffer(id, 0, &bytes).unwrap();
    id
}

fn frame<B: Backend>(r: &mut Renderer<B>) -> Result<FrameStats, RenderError> {
    r.render_graph(&FrameInput { cameras: &cameras(), targets: &[] })
}

#[test]
fn scene_passes_read_bound_buffers_only_and_a_missing_one_fails_the_frame() {
    let backend = Arc::new(NullBackend::new(true));
    let (mut r, g) = scene(backend.clone(), 2);
    let live = backend.live();
    match frame(&mut r) {
        Err(RenderError::Buffer { buffer, what }) => {
            assert_eq!(buffer, "tint");
            assert!(what.contains("bound to no engine buffer"), "{what}");
        }
        other => panic!("expected an unbound buffer, got {other:?}"),
    }
    r.flush().unwrap();
    assert_eq!(backend.live(), live, "the failed frame made nothing");
    let uniform = buffer(&*backend, BufferUsage::UNIFORM | BufferUsage::COPY_DST, &[1.0; 4]);
    let storage = buffer(&*backend, BufferUsage::STORAGE | BufferUsage::COPY_DST, &[0.0; 4]);
    r.bind_buffer(g.tint, uniform).unwrap();
    assert!(matches!(frame(&mut r), Err(RenderError::Buffer { buffer, .. }) if buffer == "lift"));
    r.bind_buffer(g.lift, storage).unwrap();
    let s = frame(&mut r).unwrap();
    assert_eq!(s.visible[..2], [1, 1], "the cube is drawn in both passes");
    r.flush().unwrap();
    // The group is kept: another frame makes no bind group; another buffer makes one.
    let groups = backend.live().bind_groups;
    frame(&mut r).unwrap();
    r.flush().unwrap();
    assert_eq!(backend.live().bind_groups, groups);
    let other = buffer(&*backend, BufferUsage::UNIFORM | BufferUsage::COPY_DST, &[0.5; 4]);
    r.bind_buffer(g.tint, other).unwrap();
    frame(&mut r).unwrap();
    r.flush().unwrap();
    assert_eq!(backend.live().bind_groups, groups + 1);
    // The pipelines name the group's kinds in the log.
    let log = r.pipeline_log();
    assert!(!log.entries.is_empty());
    for e in &log.entries {
        assert_eq!(e.scene_buffers, [BufferBinding::Uniform, BufferBinding::Storage], "{e:?}");
    }
    // Replayed, the log finds every pipeline it names.
    let replay = r.warm_up_log(&log).unwrap();
    assert_eq!((replay.found, replay.pipelines_created), (log.entries.len() as u32, 0), "{:?}", replay.skipped);
}

#[test]
fn scene_pass_buffer_refusals_are_typed_and_change_nothing() {
    let backend = Arc::new(NullBackend::new(true));
    let (mut r, g) = scene(backend, 2);
    let refused = |r: &mut Renderer<NullBackend>, g: FrameGraph, pass: &str, what: &'static str| {
        assert_eq!(graph_error(r.set_graph(g)), GraphError::InvalidPass { pass: pass.into(), what });
    };
    let base = || {
        let mut g = FrameGraph::new();
        let cam = g.camera("main");
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        let pass = Pass::scene("opaque", cam, PassKind::Forward, Queue::Opaque)
            .color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard);
        (g, pass)
    };
    let (mut writes, pass) = base();
    let b = writes.storage_buffer("b");
    writes.pass(pass.writes(b));
    refused(&mut r, writes, "opaque", "a scene pass reads buffers, it does not write them");
    let (mut plain, pass) = base();
    let b = plain.buffer("plain");
    plain.pass(pass.reads(b));
    let what = "a scene pass reads only buffers declared with a binding (uniform_buffer, storage_buffer)";
    refused(&mut r, plain, "opaque", what);
    let (mut many, mut pass) = base();
    for i in 0..=MAX_SCENE_BUFFERS {
        pass = pass.reads(many.uniform_buffer(format!("u{i}")));
    }
    many.pass(pass);
    refused(&mut r, many, "opaque", "the scene passes of a graph bind at most MAX_SCENE_BUFFERS (4) buffers");
    // The graph set before is still the one drawn, buffers and all.
    assert_eq!(r.graph().map(|x| x.cameras().len()), Some(2), "the first graph, two cameras");
    let uniform = buffer(&**r.backend(), BufferUsage::UNIFORM, &[1.0; 4]);
    let storage = buffer(&**r.backend(), BufferUsage::STORAGE, &[0.0; 4]);
    r.bind_buffer(g.tint, uniform).unwrap();
    r.bind_buffer(g.lift, storage).unwrap();
    frame(&mut r).unwrap();
    // A log naming more buffers than a graph binds is skipped with why.
    let mut log = r.pipeline_log();
    let entry = PipelineLogEntry { scene_buffers: vec![BufferBinding::Uniform; 5], ..log.entries[0].clone() };
    log.entries = vec![entry];
    let replay = r.warm_up_log(&log).unwrap();
    assert_eq!(replay.skipped, vec![(0, LogSkip::SceneBuffers(5))]);
}

#[test]
fn after_a_recovery_the_new_devices_buffers_are_bound_and_drawn_with() {
    let backend = Arc::new(NullBackend::new(true));
    let (mut r, g) = scene(backend.clone(), 2);
    r.bind_buffer(g.tint, buffer(&*backend, BufferUsage::UNIFORM, &[1.0; 4])).unwrap();
    r.bind_buffer(g.lift, buffer(&*backend, BufferUsage::STORAGE, &[0.0; 4])).unwrap();
    let before = frame(&mut r).unwrap();
    let fresh = Arc::new(NullBackend::new(true));
    r.recover(fresh.clone()).unwrap();
    // The old device's buffers are unbound: the frame names the first one.
    assert!(matches!(frame(&mut r), Err(RenderError::Buffer { buffer, .. }) if buffer == "tint"));
    r.bind_buffer(g.tint, buffer(&*fresh, BufferUsage::UNIFORM, &[1.0; 4])).unwrap();
    r.bind_buffer(g.lift, buffer(&*fresh, BufferUsage::STORAGE, &[0.0; 4])).unwrap();
    let after = frame(&mut r).unwrap();
    assert_eq!((after.draw_calls, after.visible[..2].to_vec()), (before.draw_calls, before.visible[..2].to_vec()));
    r.flush().unwrap();
}

#[test]
fn the_stream_does_not_depend_on_threads() {
    let digests = |threads| {
        let backend = Arc::new(NullBackend::new(false));
        let (mut r, g) = scene(backend.clone(), threads);
        r.bind_buffer(g.tint, buffer(&*backend, BufferUsage::UNIFORM, &[1.0; 4])).unwrap();
        r.bind_buffer(g.lift, buffer(&*backend, BufferUsage::STORAGE, &[0.0; 4])).unwrap();
        (0..3).map(|_| frame(&mut r).unwrap().digest.unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(digests(1), digests(3));
}

fn pixels_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let (mut r, g) = scene(backend.clone(), 2);
    let usage = BufferUsage::COPY_DST;
    let tint = buffer(&*backend, BufferUsage::UNIFORM | usage, &[1.0, 0.0, 0.0, 1.0]);
    let lift = buffer(&*backend, BufferUsage::STORAGE | usage, &[0.0; 4]);
    r.bind_buffer(g.tint, tint).unwrap();
    r.bind_buffer(g.lift, lift).unwrap();
    let center = |r: &mut Renderer<_>| {
        frame(r).unwrap();
        r.read_target(g.out).unwrap().pixel(SIDE / 2, SIDE / 2)
    };
    assert_eq!(center(&mut r), [255, 0, 0, 255], "{api:?}: the uniform's color");
    let bytes = |f: [f32; 4]| f.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    backend.write_buffer(tint, 0, &bytes([0.0, 1.0, 1.0, 1.0])).unwrap();
    assert_eq!(center(&mut r), [0, 255, 255, 255], "{api:?}: the engine's new color, next frame");
    backend.write_buffer(lift, 0, &bytes([0.0, 10.0, 0.0, 0.0])).unwrap();
    assert_eq!(center(&mut r), [0, 0, 0, 255], "{api:?}: lifted out of the view by the storage array");
}

#[test]
fn a_scene_pass_reads_the_engines_buffers_on_vulkan() {
    pixels_on(::wgpu::Backends::VULKAN);
}

#[test]
fn a_scene_pass_reads_the_engines_buffers_on_gl() {
    pixels_on(::wgpu::Backends::GL);
}
