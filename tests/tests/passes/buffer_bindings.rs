//! Fullscreen passes that read the engine's buffers (`FrameGraph::uniform_buffer`,
//! `FrameGraph::storage_buffer`, `Renderer::bind_buffer`): every refusal is typed and
//! changes nothing; a frame that needs an unbound buffer fails with the buffer's name; the
//! pass's bind group is made per bound buffer and kept; on lavapipe and llvmpipe the output
//! shows what the engine wrote into its buffers, an imported `wgpu::Buffer` too.

use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::wgpu_backend;

const SIDE: u32 = 8;

/// The color is the uniform's, times the storage array's entry for the pixel's half.
const TINT: &str = "
struct Tint { color: vec4<f32> }
@group(0) @binding(3) var<uniform> tint: Tint;
@group(0) @binding(4) var<storage, read> scale: array<vec4<f32>>;
@fragment fn fs_tint(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let half = select(0u, 1u, v.uv.x >= 0.5);
    return tint.color * scale[half];
}";

struct Graph {
    graph: FrameGraph,
    out: TargetId,
    tint: GraphBuffer,
    scale: GraphBuffer,
    plain: GraphBuffer,
}

fn graph() -> Graph {
    let mut graph = FrameGraph::new();
    let out = graph.target("out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
    let tint = graph.uniform_buffer("tint");
    let scale = graph.storage_buffer("scale");
    let plain = graph.buffer("plain");
    let shader = FullscreenShader { name: "tint".into(), wgsl: TINT.into(), entry: "fs_tint".into(), params: [0.0; 8] };
    graph.pass(
        Pass::fullscreen("tint", shader)
            .color(out, LoadOp::DontCare, StoreOp::Store)
            .reads(tint)
            .reads(plain)
            .reads(scale),
    );
    Graph { graph, out, tint, scale, plain }
}

fn renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    let config = RendererConfig { threads: 2, max_objects: 16, width: SIDE, height: SIDE, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

fn buffer<B: Backend>(b: &B, usage: BufferUsage, floats: &[f32]) -> BufferId {
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let id = b.create_buffer(&BufferDesc { label: "engine".into(), size: bytes.len() as u64, usage }).unwrap();
    b.write_buffer(id, 0, &bytes).unwrap();
    id
}

fn frame<B: Backend>(r: &mut Renderer<B>) -> Result<FrameStats, RenderError> {
    r.render_graph(&FrameInput { cameras: &[], targets: &[] })
}

fn refusal(result: Result<(), RenderError>) -> (String, &'static str) {
    match result {
        Err(RenderError::Buffer { buffer, what }) => (buffer, what),
        other => panic!("expected a buffer error, got {other:?}"),
    }
}

#[test]
fn binding_refusals_are_typed_and_change_nothing() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    let g = graph();
    let uniform = buffer(&*backend, BufferUsage::UNIFORM | BufferUsage::COPY_DST, &[1.0; 4]);
    let storage = buffer(&*backend, BufferUsage::STORAGE | BufferUsage::COPY_DST, &[1.0; 8]);
    assert_eq!(r.bind_buffer(g.tint, uniform), Err(RenderError::NoGraph), "no graph set yet");
    let other = graph();
    r.set_graph(g.graph).unwrap();
    // A frame before the buffers are bound fails with the first one's name, and submits nothing.
    let submitted = backend.live();
    match frame(&mut r) {
        Err(RenderError::Buffer { buffer, .. }) => assert_eq!(buffer, "tint"),
        other => panic!("expected an unbound buffer, got {other:?}"),
    }
    r.flush().unwrap();
    assert_eq!(backend.live(), submitted, "the failed frame made nothing");
    // Another graph's buffer, an ordering-only buffer, wrong usages, a stale buffer.
    assert_eq!(refusal(r.bind_buffer(other.tint, uniform)).1, "not a buffer of the graph set");
    assert!(refusal(r.bind_buffer(g.plain, uniform)).1.contains("ordering only"));
    assert_eq!(refusal(r.bind_buffer(g.tint, storage)).0, "tint");
    assert!(refusal(r.bind_buffer(g.scale, uniform)).1.contains("usage"));
    let gone = buffer(&*backend, BufferUsage::UNIFORM | BufferUsage::COPY_DST, &[0.0; 4]);
    backend.destroy(Resource::Buffer(gone)).unwrap();
    assert!(refusal(r.bind_buffer(g.tint, gone)).1.contains("not a live buffer"));
    // Nothing of that was bound: the frame still lacks `tint`.
    assert!(matches!(frame(&mut r), Err(RenderError::Buffer { buffer, .. }) if buffer == "tint"));
    r.bind_buffer(g.tint, uniform).unwrap();
    assert!(matches!(frame(&mut r), Err(RenderError::Buffer { buffer, .. }) if buffer == "scale"));
    r.bind_buffer(g.scale, storage).unwrap();
    frame(&mut r).unwrap();
    r.flush().unwrap();
    // The group is kept: more frames make no bind group; another buffer makes one.
    let groups = backend.live().bind_groups;
    frame(&mut r).unwrap();
    r.flush().unwrap();
    assert_eq!(backend.live().bind_groups, groups);
    let uniform2 = buffer(&*backend, BufferUsage::UNIFORM | BufferUsage::COPY_DST, &[0.5; 4]);
    r.bind_buffer(g.tint, uniform2).unwrap();
    frame(&mut r).unwrap();
    r.flush().unwrap();
    assert_eq!(backend.live().bind_groups, groups + 1);
}

#[test]
fn fullscreen_passes_write_buffers_never_and_bind_at_most_four() {
    let mut r = renderer(Arc::new(NullBackend::new(true)));
    let shader = || FullscreenShader { name: "s".into(), wgsl: TINT.into(), entry: "fs_tint".into(), params: [0.0; 8] };
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
    let b = g.storage_buffer("b");
    g.pass(Pass::fullscreen("w", shader()).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store).writes(b));
    let what = "a fullscreen pass reads buffers, it does not write them";
    assert_eq!(switchyard_tests::graph_error(r.set_graph(g)), GraphError::InvalidPass { pass: "w".into(), what });
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
    let mut pass = Pass::fullscreen("many", shader()).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store);
    for i in 0..=MAX_FULLSCREEN_BUFFERS {
        pass = pass.reads(g.uniform_buffer(format!("u{i}")));
    }
    g.pass(pass);
    let what = "a fullscreen pass binds at most MAX_FULLSCREEN_BUFFERS (4) buffers";
    assert_eq!(switchyard_tests::graph_error(r.set_graph(g)), GraphError::InvalidPass { pass: "many".into(), what });
    assert!(r.graph().is_none(), "neither graph was set");
}

fn gpu_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let mut r = renderer(backend.clone());
    let g = graph();
    let (out, tint, scale) = (g.out, g.tint, g.scale);
    r.set_graph(g.graph).unwrap();
    let storage =
        buffer(&*backend, BufferUsage::STORAGE | BufferUsage::COPY_DST, &[1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 1.0]);
    r.bind_buffer(scale, storage).unwrap();
    // The engine's own wgpu buffer, imported.
    let engine = backend.device().create_buffer(&::wgpu::BufferDescriptor {
        label: Some("engine tint"),
        size: 16,
        usage: ::wgpu::BufferUsages::UNIFORM | ::wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let imported = backend.import_buffer(&engine).unwrap();
    r.bind_buffer(tint, imported).unwrap();
    for (round, color) in [[1.0f32, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]].into_iter().enumerate() {
        let bytes: Vec<u8> = color.iter().flat_map(|f| f.to_le_bytes()).collect();
        backend.write_buffer(imported, 0, &bytes).unwrap();
        frame(&mut r).unwrap();
        let img = r.read_target(out).unwrap();
        let full = color.map(|c| (c * 255.0) as u8);
        let half = color.map(|c| if c == 1.0 { 128 } else { 0 });
        assert_eq!(img.pixel(0, 0), full, "{api:?} round {round}: the left half is the uniform's color");
        let right = img.pixel(SIDE - 1, SIDE - 1);
        for c in 0..3 {
            assert!(right[c].abs_diff(half[c]) <= 1, "{api:?} round {round}: the right half is scaled: {right:?}");
        }
    }
    // An imported buffer without a binding usage is refused where it is bound.
    let vertex_only = backend.device().create_buffer(&::wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: ::wgpu::BufferUsages::VERTEX,
        mapped_at_creation: false,
    });
    let id = backend.import_buffer(&vertex_only).unwrap();
    assert!(matches!(r.bind_buffer(tint, id), Err(RenderError::Buffer { .. })));
}

#[test]
fn a_fullscreen_pass_reads_the_engines_buffers_on_vulkan() {
    gpu_on(::wgpu::Backends::VULKAN);
}

#[test]
fn a_fullscreen_pass_reads_the_engines_buffers_on_gl() {
    gpu_on(::wgpu::Backends::GL);
}
