//! Passes the engine draws with wgpu itself (`Pass::wgpu`): the wgpu backend begins the
//! render pass for the declared attachments and hands the engine its `wgpu::RenderPass`
//! on the submission thread. On lavapipe and llvmpipe, in both encodings, raw wgpu draws
//! land in the target between the passes the graph orders around them; on the null
//! backend the pass runs without the drawing; refusals are typed.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use std::sync::Mutex;
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuPassContext, WgpuPassDraw};
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{graph_error, wgpu_backend};

const SIDE: u32 = 16;

const FLAT: &str = "
@fragment fn fs_flat(v: FullscreenVertex) -> @location(0) vec4<f32> { return vec4<f32>(0.0, 0.0, 1.0, 1.0); }";
const COPY: &str = "
@group(0) @binding(3) var input: texture_2d<f32>;
@fragment fn fs_copy(v: FullscreenVertex) -> @location(0) vec4<f32> {
    return textureSampleLevel(input, frame_point_sampler, v.uv, 0.0);
}";
/// A triangle over the whole target in red; the scissor keeps it to the left half.
const RED: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0, 0.0, 0.0, 1.0); }";

/// A context's size, color and depth formats and samples.
type Attachments = ((u32, u32), Option<::wgpu::TextureFormat>, Option<::wgpu::TextureFormat>, u32);

/// What the drawing saw, frame by frame.
#[derive(Default)]
struct Seen {
    prepared: AtomicU32,
    drawn: AtomicU32,
    contexts: Mutex<Vec<Attachments>>,
}

/// Red over the left half of the target, through a pipeline of its own made on first use.
struct RedHalf {
    seen: Arc<Seen>,
    pipeline: Option<::wgpu::RenderPipeline>,
    /// Panics in `draw` on this frame (counted from 1).
    panic_at: Option<u32>,
}

impl WgpuPassDraw for RedHalf {
    fn prepare(&mut self, ctx: &WgpuPassContext<'_>, _encoder: &mut ::wgpu::CommandEncoder) {
        self.seen.prepared.fetch_add(1, Ordering::Relaxed);
        self.seen.contexts.lock().unwrap().push((ctx.size, ctx.color_format, ctx.depth_format, ctx.samples));
        if self.pipeline.is_none() {
            let module = ctx.device.create_shader_module(::wgpu::ShaderModuleDescriptor {
                label: Some("red"),
                source: ::wgpu::ShaderSource::Wgsl(RED.into()),
            });
            let format = ctx.color_format.expect("a color attachment");
            self.pipeline = Some(ctx.device.create_render_pipeline(&::wgpu::RenderPipelineDescriptor {
                label: Some("red"),
                layout: None,
                vertex: ::wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: Default::default(),
                depth_stencil: None,
                multisample: ::wgpu::MultisampleState { count: ctx.samples, ..Default::default() },
                fragment: Some(::wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs"),
                    compilation_options: Default::default(),
                    targets: &[Some(format.into())],
                }),
                multiview_mask: None,
                cache: None,
            }));
        }
    }

    fn draw(&mut self, ctx: &WgpuPassContext<'_>, pass: &mut ::wgpu::RenderPass<'static>) {
        let n = self.seen.drawn.fetch_add(1, Ordering::Relaxed) + 1;
        if self.panic_at == Some(n) {
            panic!("the engine's drawing failed");
        }
        pass.set_pipeline(self.pipeline.as_ref().expect("made in prepare"));
        pass.set_scissor_rect(0, 0, ctx.size.0 / 2, ctx.size.1);
        pass.draw(0..3, 0..1);
    }
}

/// Blue into `out`, the engine's red over its left half, then `out` copied into `last`
/// (which therefore shows the engine's drawing only if the graph ordered it before).
fn graph(seen: &Arc<Seen>, panic_at: Option<u32>) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let last = g.target("last", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let shader = |name: &str, wgsl: &str, entry: &str| FullscreenShader {
        name: name.into(),
        wgsl: wgsl.into(),
        entry: entry.into(),
        params: [0.0; 8],
    };
    g.pass(Pass::fullscreen("blue", shader("blue", FLAT, "fs_flat")).color(out, LoadOp::DontCare, StoreOp::Store));
    let draw = RedHalf { seen: seen.clone(), pipeline: None, panic_at };
    g.pass(Pass::wgpu("engine", draw).color(out, LoadOp::Load, StoreOp::Store));
    g.pass(
        Pass::fullscreen("copy", shader("copy", COPY, "fs_copy"))
            .color(last, LoadOp::DontCare, StoreOp::Store)
            .sample(out),
    );
    (g, last)
}

fn renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    let config = RendererConfig { threads: 2, max_objects: 16, width: SIDE, height: SIDE, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

const NO_INPUT: FrameInput<'static> = FrameInput { cameras: &[], targets: &[] };

fn gpu_on(api: ::wgpu::Backends, encoding: Encoding) {
    let Some(backend) = wgpu_backend(api, encoding) else { return };
    let mut r = renderer(backend);
    let seen = Arc::new(Seen::default());
    let (g, last) = graph(&seen, None);
    r.set_graph(g).unwrap();
    for frame in 1..=3 {
        let stats = r.render_graph(&NO_INPUT).unwrap();
        let img = r.read_target(last).unwrap();
        for y in [0, SIDE / 2, SIDE - 1] {
            assert_eq!(img.pixel(0, y), [255, 0, 0, 255], "{api:?} {encoding:?} frame {frame}: the engine's red");
            assert_eq!(img.pixel(SIDE / 2 - 1, y), [255, 0, 0, 255]);
            assert_eq!(img.pixel(SIDE / 2, y), [0, 0, 255, 255], "the graph's blue beside it");
            assert_eq!(img.pixel(SIDE - 1, y), [0, 0, 255, 255]);
        }
        // Counted like any pass: it loads and stores its attachment.
        let bytes = u64::from(SIDE * SIDE * 4);
        assert_eq!((stats.passes[1].loaded, stats.passes[1].stored), (bytes, bytes));
    }
    r.flush().unwrap();
    assert_eq!((seen.prepared.load(Ordering::Relaxed), seen.drawn.load(Ordering::Relaxed)), (3, 3));
    let ctx = ((SIDE, SIDE), Some(::wgpu::TextureFormat::Rgba8UnormSrgb), None, 1);
    assert!(seen.contexts.lock().unwrap().iter().all(|&c| c == ctx), "{:?}", seen.contexts.lock().unwrap());
}

#[test]
fn the_engines_wgpu_draws_land_between_the_graphs_passes_on_vulkan() {
    gpu_on(::wgpu::Backends::VULKAN, Encoding::RenderBundle);
    gpu_on(::wgpu::Backends::VULKAN, Encoding::CommandBuffer);
}

#[test]
fn the_engines_wgpu_draws_land_between_the_graphs_passes_on_gl() {
    gpu_on(::wgpu::Backends::GL, Encoding::RenderBundle);
}

#[test]
fn a_panicking_wgpu_pass_fails_its_frame_and_the_next_frames_draw() {
    let Some(backend) = wgpu_backend(::wgpu::Backends::VULKAN, Encoding::RenderBundle) else { return };
    let mut r = renderer(backend.clone());
    let seen = Arc::new(Seen::default());
    let (g, last) = graph(&seen, Some(2));
    r.set_graph(g).unwrap();
    r.render_graph(&NO_INPUT).unwrap();
    r.flush().unwrap();
    // The frame whose drawing panics fails with the panic named (where the submission
    // reports it: this frame's call or the flush after).
    let failed = r.render_graph(&NO_INPUT).err().or_else(|| r.flush().err()).expect("the frame fails");
    assert!(failed.to_string().contains("panicked"), "{failed}");
    // The drawing is called again on the frames after.
    for _ in 0..2 {
        r.render_graph(&NO_INPUT).unwrap();
        assert_eq!(r.read_target(last).unwrap().pixel(0, 0), [255, 0, 0, 255]);
    }
    assert_eq!(seen.drawn.load(Ordering::Relaxed), 4);
    // The failed frame's GPU scopes went with it: a later frame's are its own three passes.
    r.flush().unwrap();
    if backend.caps().gpu_timestamps {
        let (_, scopes) = backend.gpu_profile().expect("the last frame's scopes");
        let labels: Vec<_> = scopes.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["blue", "engine", "copy"]);
        assert!(scopes.iter().all(|s| s.time.as_ref().is_some_and(|t| t.start <= t.end)), "{scopes:?}");
    }
}

#[test]
fn on_the_null_backend_the_pass_runs_without_the_drawing_and_refusals_are_typed() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    let seen = Arc::new(Seen::default());
    let (g, _) = graph(&seen, None);
    r.set_graph(g).unwrap();
    let stats = r.render_graph(&NO_INPUT).unwrap();
    r.flush().unwrap();
    assert_eq!(stats.passes[1].stored, u64::from(SIDE * SIDE * 4), "counted like any pass");
    assert_eq!(seen.prepared.load(Ordering::Relaxed), 0, "no wgpu here");

    // The graph refuses a wgpu pass without attachments, or sampling a target.
    let draw = || RedHalf { seen: seen.clone(), pipeline: None, panic_at: None };
    let mut g = FrameGraph::new();
    g.pass(Pass::wgpu("alone", draw()));
    assert_eq!(graph_error(r.set_graph(g)), GraphError::NoAttachments { pass: "alone".into() });
    let mut g = FrameGraph::new();
    let a = g.target("a", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let b = g.target("b", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    g.pass(Pass::wgpu("a", draw()).color(a, LoadOp::Clear([0.0; 4]), StoreOp::Store));
    g.pass(Pass::wgpu("b", draw()).color(b, LoadOp::Clear([0.0; 4]), StoreOp::Store).sample(a));
    assert!(matches!(graph_error(r.set_graph(g)), GraphError::InvalidPass { pass, .. } if pass == "b"));
    // The renderer keeps the graph it had.
    r.render_graph(&NO_INPUT).unwrap();

    // The backend refuses a wgpu pass that is a compute pass or carries chunks.
    let native = switchyard::backend::wgpu::NativePass::new(draw());
    let compute = PassDesc { native: Some(native.clone()), ..PassDesc::compute("c") };
    let err = backend.submit(&[], &mut [PassSubmit { desc: compute, chunks: vec![] }]).unwrap_err();
    assert_eq!(err, SubmitError::Pass(PassError::Native("is a render pass, not a compute pass")));
    let t = backend
        .create_texture(&TextureDesc {
            label: "t".into(),
            width: 4,
            height: 4,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    let color =
        ColorAttachment { texture: t, load: backend::LoadOp::Load, store: backend::StoreOp::Store, resolve: None };
    let plain = PassDesc { label: "p".into(), color: Some(color), depth: None, compute: false, native: None };
    let chunk = backend.record(&plain, ChunkPosition::SINGLE, &[]).unwrap();
    let with_native = PassDesc { native: Some(native), ..plain.clone() };
    let err = backend.submit(&[], &mut [PassSubmit { desc: with_native.clone(), chunks: vec![chunk] }]).unwrap_err();
    assert_eq!(err, SubmitError::Pass(PassError::Native("carries no chunks")));
    backend.submit(&[], &mut [PassSubmit { desc: with_native, chunks: vec![] }]).unwrap();
}
