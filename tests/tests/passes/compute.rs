//! Compute passes: the backends' compute pipelines, dispatches and their validation, and
//! compute passes of a frame graph ordered by the buffers they read and write.
//!
//! The GPU case (llvmpipe through GL, lavapipe through Vulkan, both chunk encodings): a
//! compute pass sizes the next one by writing its dispatch arguments, the next dispatches
//! indirectly and writes one color per workgroup, and an engine callback draws a triangle
//! over the output whose color is the sum of those the compute pass wrote. Pixels show
//! that the passes ran, in order, with the indirect workgroup count.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::ShaderModuleDesc;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{graph_error, wgpu_backend};

const SIDE: u32 = 32;

const COMPUTE: &str = "
@group(0) @binding(0) var<storage, read_write> args: array<u32, 3>;
@group(0) @binding(1) var<storage, read_write> colors: array<vec4<f32>, 2>;
@compute @workgroup_size(1)
fn size_it() {
    args[0] = 2u;
    args[1] = 1u;
    args[2] = 1u;
}
@compute @workgroup_size(1)
fn fill(@builtin(workgroup_id) g: vec3<u32>) {
    colors[g.x] = select(vec4<f32>(0.0, 1.0, 0.0, 0.5), vec4<f32>(1.0, 0.0, 0.0, 0.5), g.x == 0u);
}
";

const SHOW: &str = "
@group(0) @binding(0) var<storage, read> colors: array<vec4<f32>, 2>;
@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}
@fragment
fn fs() -> @location(0) vec4<f32> {
    return colors[0] + colors[1];
}
";

/// The engine's side: two buffers, two compute pipelines, one render pipeline.
#[derive(Clone, Copy)]
struct Engine {
    args: BufferId,
    size_it: PipelineId,
    fill: PipelineId,
    /// Binds the arguments (read-write), for `size_it`.
    compute_group: BindGroupId,
    /// Binds the colors (read-write), for `fill`: a dispatch may not read its arguments
    /// from a buffer bound read-write.
    fill_group: BindGroupId,
    show: PipelineId,
    show_group: BindGroupId,
}

fn engine<B: Backend>(b: &B) -> Result<Engine, CreateError> {
    let storage = |label: &str, size, extra| {
        b.create_buffer(&BufferDesc { label: label.into(), size, usage: BufferUsage::STORAGE | extra })
    };
    let args = storage("dispatch-args", 12, BufferUsage::INDIRECT)?;
    let colors = storage("colors", 32, BufferUsage::NONE)?;
    let whole = |buffer| BindResource::Buffer { buffer, offset: 0, size: None };
    let rw = |binding, buffer| -> Result<_, CreateError> {
        let ty = BindingType::StorageReadWrite { dynamic: false };
        let entries = vec![LayoutEntry { binding, visibility: Stages::COMPUTE, ty }];
        let layout = b.create_bind_group_layout(&BindGroupLayoutDesc { label: "compute".into(), entries })?;
        let entries = vec![BindEntry { binding, resource: whole(buffer) }];
        Ok((layout, b.create_bind_group(&BindGroupDesc { label: "compute".into(), layout, entries })?))
    };
    let (args_layout, compute_group) = rw(0, args)?;
    let (colors_layout, fill_group) = rw(1, colors)?;
    let module = b.create_shader(&ShaderModuleDesc { label: "compute".into(), wgsl: COMPUTE.into() })?;
    let pipeline = |entry: &str, layout| {
        b.create_compute_pipeline(&ComputePipelineDesc {
            label: entry.into(),
            shader: module,
            entry: entry.into(),
            bind_group_layouts: vec![layout],
        })
    };
    let (size_it, fill) = (pipeline("size_it", args_layout)?, pipeline("fill", colors_layout)?);
    let show_layout = b.create_bind_group_layout(&BindGroupLayoutDesc {
        label: "show".into(),
        entries: vec![LayoutEntry {
            binding: 0,
            visibility: Stages::FRAGMENT,
            ty: BindingType::Storage { dynamic: false },
        }],
    })?;
    let show_group = b.create_bind_group(&BindGroupDesc {
        label: "show".into(),
        layout: show_layout,
        entries: vec![BindEntry { binding: 0, resource: whole(colors) }],
    })?;
    let show_module = b.create_shader(&ShaderModuleDesc { label: "show".into(), wgsl: SHOW.into() })?;
    let show = b.create_pipeline(&PipelineDesc {
        label: "show".into(),
        shader: show_module,
        vertex_entry: "vs".into(),
        fragment_entry: Some("fs".into()),
        bind_group_layouts: vec![show_layout],
        vertex_buffers: Vec::new(),
        cull: CullMode::None,
        color: Some(ColorTargetState { format: TextureFormat::Rgba8UnormSrgb, blend: BlendMode::Replace }),
        depth: None,
        samples: 1,
    })?;
    Ok(Engine { args, size_it, fill, compute_group, fill_group, show, show_group })
}

fn bind(group: BindGroupId) -> Command {
    Command::SetBindGroup { index: 0, group, offsets: DynamicOffsets::NONE }
}

/// size → fill (indirect) → show, into a retained output.
fn graph(e: Engine) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let args = g.buffer("dispatch-args");
    let colors = g.buffer("colors");
    g.pass(
        Pass::compute("size", move |_, c| {
            c.extend([Command::SetPipeline(e.size_it), bind(e.compute_group), Command::Dispatch { x: 1, y: 1, z: 1 }])
        })
        .writes(args),
    );
    g.pass(
        Pass::compute("fill", move |_, c| {
            c.extend([
                Command::SetPipeline(e.fill),
                bind(e.fill_group),
                Command::DispatchIndirect { buffer: e.args, offset: 0 },
            ])
        })
        .reads(args)
        .writes(colors),
    );
    g.pass(
        Pass::callback("show", move |_, c| {
            c.extend([
                Command::SetPipeline(e.show),
                bind(e.show_group),
                Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 },
            ])
        })
        .color(out, LoadOp::Clear([0.0, 0.0, 1.0, 1.0]), StoreOp::Store)
        .reads(colors),
    );
    (g, out)
}

fn renderer<B: Backend>(backend: Arc<B>, threads: usize) -> Renderer<B> {
    let config = RendererConfig { threads, max_objects: 64, width: SIDE, height: SIDE, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

const NO_FRAME: FrameInput<'static> = FrameInput { cameras: &[], targets: &[] };

#[test]
fn compute_passes_run_in_buffer_order_the_same_on_any_thread_count() {
    let mut digests = Vec::new();
    for threads in [1, 2, 8] {
        let backend = Arc::new(NullBackend::new(true));
        let e = engine(&*backend).unwrap();
        let mut r = renderer(backend.clone(), threads);
        r.set_graph(graph(e).0).unwrap();
        assert_eq!(r.pass_names(), ["size", "fill", "show"]);
        assert!(r.frame_warnings().is_empty(), "{:?}", r.frame_warnings());
        let mut frames = Vec::new();
        for _ in 0..3 {
            let s = r.render_graph(&NO_FRAME).unwrap();
            r.flush().unwrap();
            assert_eq!((s.pass_count, s.dispatches, s.draw_calls), (3, 2, 1));
            assert_eq!(backend.last_frame().counts.dispatches, 2, "the backend counts the same dispatches");
            assert_eq!(Some(backend.last_frame().digest), s.digest);
            assert_eq!(s.passes[0], PassTraffic::default(), "a compute pass moves no attachment bytes");
            frames.push(s.digest.unwrap());
        }
        digests.push(frames);
    }
    assert_eq!(digests[0], digests[1]);
    assert_eq!(digests[0], digests[2]);
}

#[test]
fn buffers_order_passes_as_declared_and_a_buffer_write_is_a_result() {
    let backend = Arc::new(NullBackend::new(true));
    let e = engine(&*backend).unwrap();
    let mut r = renderer(backend, 2);
    let record = move |_: &CallbackContext<'_>, c: &mut Vec<Command>| {
        c.extend([Command::SetPipeline(e.size_it), bind(e.compute_group), Command::Dispatch { x: 1, y: 1, z: 1 }])
    };
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let a = g.buffer("a");
    let b = g.buffer("b");
    // Declared first, the UI pass reads `a` before the simulation overwrites it (last
    // frame's values, as in a command list); the simulation reads `b`, which `late` writes
    // after it. Offscreen work goes first where the order allows: `unrelated` (it writes a
    // buffer nothing reads, still a result) runs before the UI pass.
    g.pass(Pass::callback("ui", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store).reads(a));
    g.pass(Pass::compute("simulate", record).reads(b).writes(a));
    g.pass(Pass::compute("late", record).writes(b));
    let c = g.buffer("c");
    g.pass(Pass::compute("unrelated", record).writes(c));
    r.set_graph(g).unwrap();
    assert_eq!(r.pass_names(), ["unrelated", "ui", "simulate", "late"]);
    let s = r.render_graph(&NO_FRAME).unwrap();
    assert_eq!(s.dispatches, 3);
    r.flush().unwrap();

    // A pass that only reads buffers and renders into a target nothing reads is skipped.
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let scratch = g.target("scratch", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let a = g.buffer("a");
    g.pass(Pass::compute("simulate", record).writes(a));
    g.pass(Pass::callback("unseen", |_, _| {}).color(scratch, LoadOp::Clear([0.0; 4]), StoreOp::Store).reads(a));
    g.pass(Pass::callback("ui", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store).reads(a));
    r.set_graph(g).unwrap();
    assert_eq!(r.pass_names(), ["simulate", "ui"]);
    assert!(r.frame_warnings().iter().any(|w| w.contains("`unseen` is skipped")), "{:?}", r.frame_warnings());
}

#[test]
fn bad_compute_graphs_are_typed_errors_and_change_nothing() {
    let backend = Arc::new(NullBackend::new(true));
    let e = engine(&*backend).unwrap();
    let mut r = renderer(backend.clone(), 2);
    let (good, _) = graph(e);
    r.set_graph(good).unwrap();
    let before = r.pass_names().to_vec();
    let base = || {
        let mut g = FrameGraph::new();
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let cam = g.camera("main");
        (g, out, cam)
    };
    let invalid = |g: FrameGraph, r: &mut Renderer<NullBackend>| graph_error(r.set_graph(g));
    // A compute pass with an attachment.
    let (mut g, out, _) = base();
    g.pass(Pass::compute("c", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store));
    assert_eq!(
        invalid(g, &mut r),
        GraphError::InvalidPass { pass: "c".into(), what: "a compute pass has no attachments" }
    );
    // A buffer the graph does not declare.
    let (mut g, _, _) = base();
    let mut other = FrameGraph::new();
    let _ = other.buffer("x");
    let foreign = other.buffer("y");
    g.pass(Pass::compute("c", |_, _| {}).writes(foreign));
    assert_eq!(invalid(g, &mut r), GraphError::UnknownBuffer { pass: "c".into(), buffer: 1 });
    // Two buffers of one name.
    let (mut g, _, _) = base();
    let a = g.buffer("same");
    let _ = g.buffer("same");
    g.pass(Pass::compute("c", |_, _| {}).writes(a));
    assert_eq!(invalid(g, &mut r), GraphError::DuplicateName { what: "buffers", name: "same".into() });
    // Scene passes read only buffers declared with a binding (group 2).
    let (mut g, out, cam) = base();
    let a = g.buffer("a");
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    g.pass(
        Pass::scene("s", cam, PassKind::Forward, Queue::All)
            .color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .reads(a),
    );
    assert_eq!(
        invalid(g, &mut r),
        GraphError::InvalidPass {
            pass: "s".into(),
            what: "a scene pass reads only buffers declared with a binding (uniform_buffer, storage_buffer)"
        }
    );
    // A cycle through a buffer and a target: `early` samples the target `late` renders (so
    // it follows `late`), and `late` writes the buffer `early` reads, declared after it
    // (so it follows `early`).
    let (mut g, out, _) = base();
    let t = g.target("t", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let a = g.buffer("a");
    g.pass(Pass::compute("early", |_, _| {}).reads(a).sample(t));
    g.pass(Pass::callback("late", |_, _| {}).color(t, LoadOp::Clear([0.0; 4]), StoreOp::Store).writes(a));
    g.pass(Pass::callback("ui", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store).reads(a));
    assert!(matches!(invalid(g, &mut r), GraphError::Cycle { .. }));
    assert_eq!(r.pass_names(), before, "the graph before stays");
    r.render_graph(&NO_FRAME).unwrap();
    r.flush().unwrap();
}

#[test]
fn callbacks_see_the_textures_of_the_targets_they_sample() {
    let backend = Arc::new(NullBackend::new(true));
    let e = engine(&*backend).unwrap();
    let mut r = renderer(backend.clone(), 2);
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let lit = g.target("lit", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let engine_in = g.target("engine-in", TargetKind::External, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let a = g.buffer("histogram");
    let seen = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
    let s = seen.clone();
    g.pass(Pass::callback("light", |_, _| {}).color(lit, LoadOp::Clear([0.0; 4]), StoreOp::Store));
    g.pass(
        Pass::compute("histogram", move |ctx, c| {
            s[0].store(ctx.texture(lit).map_or(0, |t| t.bits()), Ordering::SeqCst);
            s[1].store(ctx.texture(engine_in).map_or(0, |t| t.bits()), Ordering::SeqCst);
            s[2].store(ctx.texture(out).map_or(u64::MAX, |t| t.bits()), Ordering::SeqCst);
            c.extend([Command::SetPipeline(e.size_it), bind(e.compute_group), Command::Dispatch { x: 1, y: 1, z: 1 }])
        })
        .sample(lit)
        .sample(engine_in)
        .writes(a),
    );
    g.pass(Pass::callback("ui", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store).reads(a));
    r.set_graph(g).unwrap();
    let given = backend
        .create_texture(&TextureDesc {
            label: "engine".into(),
            width: SIDE,
            height: SIDE,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::SAMPLED | TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    r.render_graph(&FrameInput { cameras: &[], targets: &[(engine_in, given)] }).unwrap();
    r.flush().unwrap();
    assert_eq!(r.pass_names(), ["light", "histogram", "ui"]);
    let lit_texture = r.target_texture(lit).expect("a graph-owned target has a texture");
    assert_eq!(seen[0].load(Ordering::SeqCst), lit_texture.bits(), "the graph's texture of `lit`");
    assert!(backend.texture_info(lit_texture).unwrap().usage.contains(TextureUsage::SAMPLED));
    assert_eq!(seen[1].load(Ordering::SeqCst), given.bits(), "the engine's texture given this frame");
    assert_eq!(seen[2].load(Ordering::SeqCst), u64::MAX, "a target the pass does not sample: none");

    // The engine's texture must be sampleable: a typed error, and the next frame works.
    let unsampled = backend
        .create_texture(&TextureDesc {
            label: "engine".into(),
            width: SIDE,
            height: SIDE,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    match r.render_graph(&FrameInput { cameras: &[], targets: &[(engine_in, unsampled)] }) {
        Err(RenderError::InvalidTarget { target, what }) => {
            assert_eq!((target.as_str(), what), ("engine-in", "a pass samples it: it needs SAMPLED usage"))
        }
        other => panic!("expected InvalidTarget, got {other:?}"),
    }
    r.render_graph(&FrameInput { cameras: &[], targets: &[(engine_in, given)] }).unwrap();
    r.flush().unwrap();
}

/// Every way a compute stream or pipeline can be wrong, on the null backend (the same
/// validator runs in front of wgpu).
#[test]
fn bad_compute_streams_and_pipelines_are_typed_errors() {
    let b = NullBackend::new(true);
    let e = engine(&b).unwrap();
    let compute = PassDesc::compute("c");
    let target = b
        .create_texture(&TextureDesc {
            label: "t".into(),
            width: 8,
            height: 8,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    let render = PassDesc {
        label: "r".into(),
        color: Some(ColorAttachment {
            texture: target,
            load: switchyard::backend::LoadOp::Clear([0.0; 4]),
            store: switchyard::backend::StoreOp::Store,
            resolve: None,
        }),
        depth: None,
        compute: false,
        native: None,
    };
    let rec = |pass: &PassDesc, c: &[Command]| b.record(pass, ChunkPosition::SINGLE, c).map(|c| c.counts);
    let set = [Command::SetPipeline(e.fill), bind(e.fill_group)];
    let ok = rec(&compute, &[set[0], set[1], Command::Dispatch { x: 4, y: 2, z: 1 }]).unwrap();
    assert_eq!((ok.dispatches, ok.draw_calls, ok.state_changes), (1, 0, 2));
    let wrong = |r: Result<Counts, RecordError>| matches!(r, Err(RecordError::WrongPassKind { .. }));
    assert!(wrong(rec(&render, &[Command::Dispatch { x: 1, y: 1, z: 1 }])), "a dispatch in a render pass");
    assert!(wrong(rec(&render, &[Command::SetPipeline(e.fill)])), "a compute pipeline in a render pass");
    assert!(wrong(rec(&compute, &[Command::SetPipeline(e.show)])), "a render pipeline in a compute pass");
    let draw = Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 };
    assert!(wrong(rec(&compute, &[set[0], set[1], draw])), "a draw in a compute pass");
    let vb = Command::SetVertexBuffer { slot: 0, buffer: e.args, offset: 0 };
    assert!(wrong(rec(&compute, &[vb])), "a vertex buffer in a compute pass");
    assert_eq!(rec(&compute, &[Command::Dispatch { x: 1, y: 1, z: 1 }]), Err(RecordError::NoPipeline { index: 0 }));
    assert_eq!(
        rec(&compute, &[set[0], Command::Dispatch { x: 1, y: 1, z: 1 }]),
        Err(RecordError::MissingBindGroup { index: 1, group: 0 })
    );
    assert!(matches!(
        rec(&compute, &[set[0], set[1], Command::Dispatch { x: 1, y: 70_000, z: 1 }]),
        Err(RecordError::OutOfRange { index: 2, what: "workgroups per dimension", end: 70_000, .. })
    ));
    let colors_only =
        b.create_buffer(&BufferDesc { label: "plain".into(), size: 64, usage: BufferUsage::STORAGE }).unwrap();
    let indirect = |buffer, offset| [set[0], set[1], Command::DispatchIndirect { buffer, offset }];
    assert_eq!(rec(&compute, &indirect(colors_only, 0)), Err(RecordError::BadUsage { index: 2, usage: "INDIRECT" }));
    for offset in [4, 2, u64::MAX - 3] {
        assert!(
            matches!(rec(&compute, &indirect(e.args, offset)), Err(RecordError::OutOfRange { index: 2, .. })),
            "offset {offset}"
        );
    }
    assert_eq!(rec(&compute, &indirect(e.args, 0)).unwrap().dispatches, 1);
    // Reading the arguments from a buffer a bound group writes (what wgpu refuses too).
    let conflict = [
        Command::SetPipeline(e.size_it),
        bind(e.compute_group),
        Command::DispatchIndirect { buffer: e.args, offset: 0 },
    ];
    assert_eq!(rec(&compute, &conflict), Err(RecordError::UsageConflict { index: 2 }));
    let with_color = PassDesc { color: render.color, ..compute };
    assert_eq!(rec(&with_color, &[]), Err(RecordError::Pass(PassError::ComputeWithAttachments)));

    // Pipelines and layouts.
    let module = b.create_shader(&ShaderModuleDesc { label: "m".into(), wgsl: COMPUTE.into() }).unwrap();
    let desc = |entry: &str| ComputePipelineDesc {
        label: "p".into(),
        shader: module,
        entry: entry.into(),
        bind_group_layouts: Vec::new(),
    };
    assert!(matches!(b.create_compute_pipeline(&desc("missing")), Err(CreateError::Invalid(_))));
    let show = b.create_shader(&ShaderModuleDesc { label: "s".into(), wgsl: SHOW.into() }).unwrap();
    let vertex_entry = ComputePipelineDesc { shader: show, ..desc("vs") };
    assert!(matches!(b.create_compute_pipeline(&vertex_entry), Err(CreateError::Invalid(_))), "a vertex entry");
    let stale = BindGroupLayoutId::default();
    let stale_layout = ComputePipelineDesc { bind_group_layouts: vec![stale], ..desc("fill") };
    assert!(matches!(b.create_compute_pipeline(&stale_layout), Err(CreateError::InvalidHandle { .. })));
    let in_vertex = BindGroupLayoutDesc {
        label: "l".into(),
        entries: vec![LayoutEntry {
            binding: 0,
            visibility: Stages::VERTEX | Stages::COMPUTE,
            ty: BindingType::StorageReadWrite { dynamic: false },
        }],
    };
    assert!(matches!(b.create_bind_group_layout(&in_vertex), Err(CreateError::Invalid(_))));
    let no_compute = NullBackend::with_caps(Caps { compute: false, ..b.caps() });
    let m = no_compute.create_shader(&ShaderModuleDesc { label: "m".into(), wgsl: COMPUTE.into() }).unwrap();
    assert!(matches!(
        no_compute.create_compute_pipeline(&ComputePipelineDesc { shader: m, ..desc("fill") }),
        Err(CreateError::Unsupported(_))
    ));
}

fn gpu_on(api: ::wgpu::Backends) {
    for encoding in [Encoding::RenderBundle, Encoding::CommandBuffer] {
        let Some(backend) = wgpu_backend(api, encoding) else { return };
        if !backend.caps().compute {
            assert!(std::env::var_os("CI").is_none(), "{api:?} on CI has compute shaders");
            eprintln!("skipping: {api:?} has no compute shaders");
            return;
        }
        let e = engine(&*backend).expect("the engine's objects");
        let mut r = renderer(backend.clone(), 2);
        let (g, out) = graph(e);
        r.set_graph(g).unwrap();
        for _ in 0..2 {
            let s = r.render_graph(&NO_FRAME).unwrap();
            assert_eq!(s.dispatches, 2);
        }
        let img = r.read_target(out).unwrap();
        for (x, y) in [(0, 0), (SIDE / 2, SIDE / 2), (SIDE - 1, SIDE - 1)] {
            assert_eq!(
                img.pixel(x, y),
                [255, 255, 0, 255],
                "{api:?} {encoding:?}: red from workgroup 0 and green from workgroup 1 of the indirect dispatch"
            );
        }
    }
}

#[test]
fn a_compute_chain_feeds_a_draw_on_vulkan() {
    gpu_on(::wgpu::Backends::VULKAN);
}

#[test]
fn a_compute_chain_feeds_a_draw_on_gl() {
    gpu_on(::wgpu::Backends::GL);
}
