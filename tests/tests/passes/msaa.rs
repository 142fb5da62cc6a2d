//! Multisampled targets: a forward pass drawing into 4x color and depth that resolves into
//! a single-sample output, on the null backend (bytes, memory, digests at any thread
//! count, every bad case a typed error) and on lavapipe and llvmpipe (both encodings): the
//! resolved image equals the single-sample one inside the objects and blends along their
//! edges.

use std::collections::HashSet;
use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, cube_grid, graph_error, plain_material, wgpu_backend};

const SIDE: u32 = 64;
const SKY: LoadOp<[f64; 4]> = LoadOp::Clear([0.1, 0.2, 0.4, 1.0]);

/// A shadow pass (single-sampled: its map is sampled) and a forward pass into `samples`
/// color and depth samples, resolved into `out` where `samples > 1`.
fn graph(samples: u32) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let sun = g.camera("sun");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let shadow = g.target(
        "shadow",
        TargetKind::Transient,
        TextureFormat::Depth32Float,
        TargetSize::Fixed { width: 128, height: 128 },
    );
    g.pass(Pass::scene("shadow", sun, PassKind::Shadow, Queue::All).depth(shadow, LoadOp::Clear(1.0), StoreOp::Store));
    let ms = |g: &mut FrameGraph, name: &str, format| {
        g.target_multisampled(name, TargetKind::Transient, format, TargetSize::Output, samples)
    };
    let depth = ms(&mut g, "depth", TextureFormat::Depth32Float);
    let forward = Pass::scene("forward", main, PassKind::Forward, Queue::All).sample(shadow);
    let forward = if samples > 1 {
        let color = ms(&mut g, "color-ms", TextureFormat::Rgba8UnormSrgb);
        forward.color(color, SKY, StoreOp::Discard).resolve(out)
    } else {
        forward.color(out, SKY, StoreOp::Store)
    };
    g.pass(forward.depth(depth, LoadOp::Clear(1.0), StoreOp::Discard));
    (g, out)
}

fn scene<B: Backend>(backend: Arc<B>, threads: usize) -> (Renderer<B>, [Camera; 2]) {
    let config = RendererConfig { threads, max_objects: 64, width: SIDE, height: SIDE, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&switchyard::ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let material = plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]);
    let views = cube_grid(&mut r, mesh, &[material]);
    let camera =
        |v: &View| Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: v.layer_mask, receivers: None };
    (r, [camera(&views[0]), camera(&views[1])])
}

#[test]
fn a_resolved_forward_pass_moves_the_hand_computed_bytes_the_same_on_any_thread_count() {
    let mut digests = Vec::new();
    for threads in [1, 2, 8] {
        let backend = Arc::new(NullBackend::new(true));
        let (mut r, cameras) = scene(backend.clone(), threads);
        r.set_graph(graph(4).0).unwrap();
        assert!(r.frame_warnings().is_empty(), "{:?}", r.frame_warnings());
        let mut frames = Vec::new();
        for _ in 0..3 {
            let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
            r.flush().unwrap();
            assert_eq!(Some(backend.last_frame().digest), s.digest);
            assert!(s.visible[1] > 0 && s.draw_calls > 0);
            let texels = u64::from(SIDE * SIDE);
            // Shadow: stores its 128 x 128 map. Forward: clears both 4x attachments,
            // discards them, resolves 4 bytes per output texel; loads nothing.
            assert_eq!(s.passes[0], PassTraffic { loaded: 0, stored: 128 * 128 * 4, resolved: 0 });
            assert_eq!(s.passes[1], PassTraffic { loaded: 0, stored: 0, resolved: texels * 4 });
            // Memory: the map, 4x color and depth (4 samples of 4 bytes), the output.
            assert_eq!(s.target_bytes, 128 * 128 * 4 + 2 * texels * 4 * 4 + texels * 4);
            frames.push(s.digest.unwrap());
        }
        digests.push(frames);
    }
    assert_eq!(digests[0], digests[1]);
    assert_eq!(digests[0], digests[2]);
}

#[test]
fn bad_multisampling_is_a_typed_error_and_changes_nothing() {
    let backend = Arc::new(NullBackend::new(true));
    let (mut r, cameras) = scene(backend.clone(), 2);
    r.set_graph(graph(4).0).unwrap();
    let before = r.pass_names().to_vec();
    let invalid = |g: FrameGraph, r: &mut Renderer<NullBackend>| graph_error(r.set_graph(g));
    // A multisampled shadow map.
    let mut g = FrameGraph::new();
    let sun = g.camera("sun");
    let map = g.target_multisampled("map", TargetKind::Retained, TextureFormat::Depth32Float, TargetSize::Output, 4);
    g.pass(Pass::scene("shadow", sun, PassKind::Shadow, Queue::All).depth(map, LoadOp::Clear(1.0), StoreOp::Store));
    assert!(matches!(invalid(g, &mut r), GraphError::InvalidPass { pass, .. } if pass == "shadow"));
    // Forward passes of two sample counts in one graph.
    let (mut g, out) = graph(4);
    let main = CameraId::from_index(0);
    let depth1 = g.target("depth1", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    g.pass(
        Pass::scene("again", main, PassKind::Forward, Queue::Transparent)
            .color(out, LoadOp::Load, StoreOp::Store)
            .depth(depth1, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    assert_eq!(
        invalid(g, &mut r),
        GraphError::InvalidPass {
            pass: "again".into(),
            what: "every forward pass of a graph draws into one color format and sample count"
        }
    );
    // 4x color with 1x depth.
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let ms = g.target_multisampled("ms", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output, 4);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    g.pass(
        Pass::scene("forward", main, PassKind::Forward, Queue::All)
            .color(ms, SKY, StoreOp::Discard)
            .resolve(out)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    assert_eq!(invalid(g, &mut r), GraphError::SizeMismatch { pass: "forward".into() });
    // Resolving into a multisampled target, or a single-sample attachment.
    let mut g = FrameGraph::new();
    let a = g.target_multisampled("a", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output, 4);
    let b = g.target_multisampled("b", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output, 4);
    g.pass(Pass::callback("c", |_, _| {}).color(a, SKY, StoreOp::Discard).resolve(b));
    assert!(matches!(invalid(g, &mut r), GraphError::FormatMismatch { target, .. } if target == "b"));
    assert_eq!(r.pass_names(), before, "the graph before stays");
    r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    r.flush().unwrap();
}

#[test]
fn the_backends_check_sample_counts_alike() {
    let b = NullBackend::new(true);
    let desc = |samples, usage| TextureDesc {
        label: "t".into(),
        width: 8,
        height: 8,
        format: TextureFormat::Rgba8UnormSrgb,
        usage,
        samples,
        mip_levels: 1,
    };
    let rt = TextureUsage::RENDER_TARGET;
    for bad in [0, 3, 8, 16] {
        assert!(matches!(b.create_texture(&desc(bad, rt)), Err(CreateError::Unsupported(_))), "{bad} samples");
    }
    for usage in [rt | TextureUsage::SAMPLED, rt | TextureUsage::COPY_SRC, TextureUsage::SAMPLED] {
        assert!(matches!(b.create_texture(&desc(4, usage)), Err(CreateError::Invalid(_))), "{usage:?}");
    }
    let ms = b.create_texture(&desc(4, rt)).unwrap();
    assert_eq!(b.texture_info(ms).unwrap().samples, 4);
    let single = b.create_texture(&desc(1, rt)).unwrap();
    let ms_depth = b.create_texture(&TextureDesc { format: TextureFormat::Depth32Float, ..desc(4, rt) }).unwrap();
    let depth = b.create_texture(&TextureDesc { format: TextureFormat::Depth32Float, ..desc(1, rt) }).unwrap();
    let pass = |color, resolve, depth: Option<TextureId>| PassDesc {
        label: "p".into(),
        color: Some(ColorAttachment {
            texture: color,
            load: switchyard::backend::LoadOp::Clear([0.0; 4]),
            store: switchyard::backend::StoreOp::Discard,
            resolve,
        }),
        depth: depth.map(|texture| DepthAttachment {
            texture,
            load: switchyard::backend::LoadOp::Clear(1.0),
            store: switchyard::backend::StoreOp::Discard,
        }),
        compute: false,
        native: None,
    };
    let rec = |p: PassDesc| b.record(&p, ChunkPosition::SINGLE, &[]).map(|_| ());
    rec(pass(ms, Some(single), Some(ms_depth))).unwrap();
    assert_eq!(rec(pass(ms, Some(single), Some(depth))), Err(RecordError::Pass(PassError::SampleMismatch)));
    for (color, resolve) in [(single, single), (ms, ms)] {
        assert!(matches!(rec(pass(color, Some(resolve), None)), Err(RecordError::Pass(PassError::InvalidResolve(_)))));
    }
    let small = b.create_texture(&TextureDesc { width: 4, ..desc(1, rt) }).unwrap();
    assert!(matches!(rec(pass(ms, Some(small), None)), Err(RecordError::Pass(PassError::InvalidResolve(_)))));

    // A pipeline's sample count must be the pass's.
    let wgsl = "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
        @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
    let shader =
        b.create_shader(&switchyard::backend::ShaderModuleDesc { label: "s".into(), wgsl: wgsl.into() }).unwrap();
    let pipeline = |samples| PipelineDesc {
        label: "p".into(),
        shader,
        vertex_entry: "vs".into(),
        fragment_entry: Some("fs".into()),
        bind_group_layouts: Vec::new(),
        vertex_buffers: Vec::new(),
        cull: CullMode::None,
        color: Some(ColorTargetState { format: TextureFormat::Rgba8UnormSrgb, blend: BlendMode::Replace }),
        depth: None,
        samples,
    };
    assert!(matches!(b.create_pipeline(&pipeline(3)), Err(CreateError::Unsupported(_))));
    let (p1, p4) = (b.create_pipeline(&pipeline(1)).unwrap(), b.create_pipeline(&pipeline(4)).unwrap());
    let draw = Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 };
    let stream = |p| [Command::SetPipeline(p), draw];
    let ms_pass = pass(ms, Some(single), None);
    assert!(b.record(&ms_pass, ChunkPosition::SINGLE, &stream(p4)).is_ok());
    assert_eq!(
        b.record(&ms_pass, ChunkPosition::SINGLE, &stream(p1)).map(|_| ()),
        Err(RecordError::FormatMismatch { index: 0 })
    );
}

fn gpu_on(api: ::wgpu::Backends) {
    for encoding in [Encoding::RenderBundle, Encoding::CommandBuffer] {
        let Some(backend) = wgpu_backend(api, encoding) else { return };
        assert!(backend.caps().sample_counts & 4 != 0, "4x is guaranteed by WebGPU");
        let (mut r, cameras) = scene(backend.clone(), 2);
        let mut images = Vec::new();
        for samples in [1, 4] {
            let (g, out) = graph(samples);
            r.set_graph(g).unwrap();
            r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
            images.push(r.read_target(out).unwrap());
        }
        let (one, four) = (&images[0], &images[1]);
        let n = (SIDE * SIDE) as usize;
        let pixels = |img: &Image| (0..SIDE * SIDE).map(|i| img.pixel(i % SIDE, i / SIDE)).collect::<Vec<_>>();
        let (p1, p4) = (pixels(one), pixels(four));
        let same = p1.iter().zip(&p4).filter(|(a, b)| a == b).count();
        let sky = p1[0];
        let covered = p1.iter().filter(|&&p| p != sky).count();
        assert!(covered > n / 8, "{api:?} {encoding:?}: the cubes cover {covered} of {n} pixels");
        assert!(same > n * 3 / 4, "{api:?} {encoding:?}: {same} of {n} pixels equal: inside and sky agree");
        let known: HashSet<[u8; 4]> = p1.iter().copied().collect();
        let blended = p4.iter().filter(|&p| !known.contains(p)).count();
        eprintln!("{api:?} {encoding:?}: covered {covered}, equal {same}, blended {blended} of {n}");
        assert!(blended > 0, "{api:?} {encoding:?}: 4x blends colors along edges that 1x never has");
    }
}

#[test]
fn four_samples_resolve_to_smoothed_edges_on_vulkan() {
    gpu_on(::wgpu::Backends::VULKAN);
}

#[test]
fn four_samples_resolve_to_smoothed_edges_on_gl() {
    gpu_on(::wgpu::Backends::GL);
}
