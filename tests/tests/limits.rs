//! Bad input at the limits gets a typed error and leaves nothing behind (issue 11's bugs):
//! removed materials free their slot, a mesh that fails to upload leaves no trace, world
//! bounds that overflow are refused, and configuration sizes that cannot be allocated are
//! refused by `Renderer::new`.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::{Backend, TextureDesc, TextureFormat, TextureId, TextureUsage};
use switchyard::*;

fn quad() -> MeshData {
    let p = [[-0.5f32, 0.0, 0.0], [0.5, 0.0, 0.0], [0.5, 1.0, 0.0], [-0.5, 1.0, 0.0]];
    MeshData {
        vertices: p.iter().map(|&position| Vertex { position, normal: [0.0, 0.0, 1.0], uv: [0.0, 0.0] }).collect(),
        indices: vec![0, 1, 2, 0, 2, 3],
    }
}

fn view() -> View {
    let eye = Vec3::new(0.0, 2.0, 10.0);
    View {
        label: "main",
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.1, 100.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 100.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    }
}

fn renderer(backend: Arc<NullBackend>, max_materials: usize) -> Renderer<NullBackend> {
    let config =
        RendererConfig { threads: 2, width: 32, height: 32, max_objects: 256, max_materials, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

#[test]
fn removed_materials_free_their_slot() {
    let mut r = renderer(Arc::new(NullBackend::new(true)), 4);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let desc = MaterialDesc { shader, ..Default::default() };
    let mats: Vec<MaterialHandle> = (0..4).map(|_| r.create_material(&desc).unwrap()).collect();
    assert!(matches!(r.create_material(&desc), Err(ResourceError::Invalid(_))), "the cap holds");
    let mesh = r.create_mesh(&quad()).unwrap();
    let object = ObjectDesc { mesh, material: mats[3], transform: Mat4::IDENTITY, layer: 0, flags: 0 };
    r.insert_objects(&[object]).unwrap();
    // Streaming: remove and create, many times over; the cap counts live materials only.
    for round in 0..20 {
        let victim = if round == 0 { mats[1] } else { r.create_material(&desc).unwrap() };
        r.remove_material(victim).unwrap();
        let fresh = r.create_material(&desc).unwrap();
        assert!(matches!(r.create_material(&desc), Err(ResourceError::Invalid(_))), "round {round}: still 4 live");
        let s = r.render(&[view()]).unwrap();
        assert_eq!(s.visible[0], 1, "round {round}");
        r.remove_material(fresh).unwrap();
        assert!(matches!(r.remove_material(victim), Err(ResourceError::StaleHandle(HandleKind::Material))));
    }
    assert!(matches!(r.remove_material(mats[3]), Err(ResourceError::InUse(HandleKind::Material, 1))));
}

#[test]
fn a_mesh_that_fails_to_upload_leaves_no_trace() {
    // Buffers of at most 1 MiB: a mesh of 40,000 vertices (1.28 MB) cannot grow the shared
    // vertex buffer to hold it.
    let caps = switchyard::backend::Caps { max_buffer_size: 1 << 20, ..NullBackend::new(true).caps() };
    let huge = MeshData {
        vertices: vec![Vertex::default(); 40_000],
        indices: (0..39_999).collect::<Vec<u32>>()[..39_999 / 3 * 3].to_vec(),
    };
    let run = |with_failure: bool| {
        let backend = Arc::new(NullBackend::with_caps(caps));
        let mut r = renderer(backend, 16);
        let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
        let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
        let a = r.create_mesh(&quad()).unwrap();
        if with_failure {
            let e = r.create_mesh(&huge).unwrap_err();
            assert!(matches!(e, ResourceError::Backend(_)), "{e}");
        }
        let c = r.create_mesh(&quad()).unwrap();
        let at = |x: f32| Mat4::from_translation(Vec3::new(x, 0.0, 0.0));
        r.insert_objects(&[
            ObjectDesc { mesh: a, material, transform: at(-1.0), layer: 0, flags: 0 },
            ObjectDesc { mesh: c, material, transform: at(1.0), layer: 0, flags: 0 },
        ])
        .unwrap();
        r.render(&[view()]).unwrap();
        r.flush().unwrap();
        r.view_output(0).unwrap().args
    };
    let clean = run(false);
    assert_eq!(clean.len(), 2);
    assert_eq!(run(true), clean, "the mesh after the failed one lands where it would have");
}

#[test]
fn world_bounds_that_overflow_are_refused_and_change_nothing() {
    let mut r = renderer(Arc::new(NullBackend::new(true)), 16);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mesh = r.create_mesh(&quad()).unwrap();
    let ok = ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 };
    let id = r.insert_objects(&[ok]).unwrap()[0];
    // Finite, but its bounds are not: every view would cull it silently.
    let vast = Mat4::from_scale(Vec3::splat(3e38));
    let far = Mat4::from_translation(Vec3::new(3e38, 0.0, 0.0)) * Mat4::from_scale(Vec3::splat(1e38));
    for m in [vast, far] {
        assert!(m.is_finite());
        let bad = ObjectDesc { transform: m, ..ok };
        assert!(matches!(r.insert_objects(&[ok, bad]), Err(SceneError::Invalid { index: 1, .. })));
        assert!(matches!(r.update_objects(&[(id, bad)]), Err(SceneError::Invalid { index: 0, .. })));
        assert!(matches!(r.set_transforms(&[(id, m)]), Err(SceneError::Invalid { index: 0, .. })));
        assert_eq!(r.scene().len(), 1, "nothing inserted");
        let s = r.render(&[view()]).unwrap();
        assert_eq!(s.visible[0], 1, "the object kept its transform");
    }
}

#[test]
fn configuration_sizes_that_cannot_be_allocated_are_refused() {
    let backend = Arc::new(NullBackend::new(true));
    let max = backend.caps().max_buffer_size;
    let cases = [
        RendererConfig { max_objects: usize::MAX / 2, ..Default::default() },
        RendererConfig { max_objects: (max / 64 + 1) as usize, ..Default::default() },
        RendererConfig { max_materials: usize::MAX, ..Default::default() },
        RendererConfig { max_materials: (max / 256 + 1) as usize, ..Default::default() },
        RendererConfig { frames_in_flight: 1000, ..Default::default() },
    ];
    for c in cases {
        let what = format!("{c:?}");
        assert!(matches!(Renderer::new(backend.clone(), c), Err(InitError::Config(_))), "{what}");
    }
    // On a backend of 1 MiB buffers, the largest sizes that fit are fine and one more is not.
    let caps = switchyard::backend::Caps { max_buffer_size: 1 << 20, ..backend.caps() };
    let small = Arc::new(NullBackend::with_caps(caps));
    let fit = RendererConfig {
        max_objects: (1 << 20) / 64,
        max_materials: (1 << 20) / 256,
        threads: 1,
        ..Default::default()
    };
    assert!(Renderer::new(small.clone(), fit.clone()).is_ok());
    let over = RendererConfig { max_objects: fit.max_objects + 1, ..fit };
    assert!(matches!(Renderer::new(small, over), Err(InitError::Config(_))));
}

/// A graph of one forward pass into `out` (retained or external) with its depth, and the
/// camera slot it needs.
fn one_pass_graph(out_kind: TargetKind, depth_clear: f32) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let cam = g.camera("main");
    let out = g.target("out", out_kind, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    g.pass(
        Pass::scene("main", cam, PassKind::Forward, Queue::All)
            .color(out, LoadOp::Clear([0.0, 0.0, 0.0, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(depth_clear), StoreOp::Discard),
    );
    (g, out)
}

fn camera() -> Camera {
    let v = view();
    Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: v.layer_mask, receivers: None }
}

fn texture(b: &NullBackend, side: u32, format: TextureFormat, samples: u32) -> TextureId {
    let usage =
        if samples > 1 { TextureUsage::RENDER_TARGET } else { TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC };
    b.create_texture(&TextureDesc {
        label: "engine".into(),
        width: side,
        height: side,
        format,
        usage,
        samples,
        mip_levels: 1,
    })
    .unwrap()
}

/// What is given is checked where it is given (`new`, `recover`, `set_graph`,
/// `render_graph`'s inputs), with a typed error naming the culprit, and a refused call
/// changes nothing: no resize, no plan, nothing left on the backend.
#[test]
fn refusals_at_the_door_change_nothing() {
    let backend = Arc::new(NullBackend::new(true));
    let max = backend.caps().max_texture_size;
    // Sizes past the device's textures: refused by `new`, before anything is made.
    for c in [
        RendererConfig { width: 100_000, ..Default::default() },
        RendererConfig { height: max + 1, ..Default::default() },
        RendererConfig { shadow_map_size: 1 << 20, ..Default::default() },
    ] {
        let what = format!("{c:?}");
        assert!(matches!(Renderer::new(backend.clone(), c), Err(InitError::Config(_))), "{what}");
        assert_eq!(backend.live(), Default::default(), "{what}: nothing made");
    }

    let mut r = renderer(backend.clone(), 16);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mesh = r.create_mesh(&quad()).unwrap();
    r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]).unwrap();

    // A depth clear of 2.0: refused by `set_graph`, naming the pass.
    let (g, _) = one_pass_graph(TargetKind::External, 2.0);
    assert!(matches!(r.set_graph(g), Err(RenderError::Graph(GraphError::InvalidPass { pass, .. })) if pass == "main"));
    assert!(r.graph().is_none());

    let (g, out) = one_pass_graph(TargetKind::External, 1.0);
    r.set_graph(g).unwrap();
    let engine = texture(&backend, 32, TextureFormat::Rgba8UnormSrgb, 1);
    let frame = |r: &mut Renderer<NullBackend>, targets: &[(TargetId, TextureId)], cameras: &[Camera]| {
        r.render_graph(&FrameInput { cameras, targets })
    };
    let good = frame(&mut r, &[(out, engine)], &[camera()]).unwrap();
    let live = backend.live();
    let invalid_target = |e: Result<FrameStats, RenderError>, why: &str| match e {
        Err(RenderError::InvalidTarget { what, .. }) => assert!(what.contains(why), "{what}"),
        other => panic!("{why}: {other:?}"),
    };
    // Another graph's target id, even of the same index.
    let (_, theirs) = one_pass_graph(TargetKind::External, 1.0);
    invalid_target(frame(&mut r, &[(theirs, engine)], &[camera()]), "another graph");
    // Another backend's texture, though one of this backend sits in its slot.
    let other = NullBackend::new(true);
    let foreign = texture(&other, 32, TextureFormat::Rgba8UnormSrgb, 1);
    invalid_target(frame(&mut r, &[(out, foreign)], &[camera()]), "stale");
    // A 4x texture for a 1x target.
    let msaa = texture(&backend, 32, TextureFormat::Rgba8UnormSrgb, 4);
    invalid_target(frame(&mut r, &[(out, msaa)], &[camera()]), "sample count");
    // A texture of a new size resizes the output, but not in a frame that is refused.
    let bigger = texture(&backend, 48, TextureFormat::Rgba8UnormSrgb, 1);
    let e = frame(&mut r, &[(out, bigger)], &[camera(), camera()]);
    assert!(matches!(e, Err(RenderError::CameraCount { expected: 1, given: 2 })), "{e:?}");
    assert_eq!((r.config().width, r.config().height), (32, 32), "no resize for a refused frame");
    let live_now = backend.live();
    assert_eq!(
        (live_now.textures, live_now.bind_groups, live_now.buffers),
        (live.textures + 2, live.bind_groups, live.buffers),
        "no plan made (the two engine textures are new)"
    );
    let s = frame(&mut r, &[(out, engine)], &[camera()]).unwrap();
    assert_eq!((s.digest, s.visible), (good.digest, good.visible), "the graph renders as before");
    // A new size given right resizes.
    frame(&mut r, &[(out, bigger)], &[camera()]).unwrap();
    assert_eq!((r.config().width, r.config().height), (48, 48));

    // Recovering onto a device too small for the graph or the output: refused, the old
    // backend stays and renders.
    let (g, out) = one_pass_graph(TargetKind::Retained, 1.0);
    r.set_graph(g).unwrap();
    r.render_graph(&FrameInput { cameras: &[camera()], targets: &[] }).unwrap();
    let small = switchyard::backend::Caps { max_texture_size: 40, ..backend.caps() };
    let e = r.recover(Arc::new(NullBackend::with_caps(small)));
    assert!(matches!(e, Err(InitError::Config(_) | InitError::Graph(_))), "{e:?}");
    r.resize(32, 32).unwrap();
    let mut g = FrameGraph::new();
    let cam = g.camera("main");
    let _ = out;
    let big = g.target(
        "out",
        TargetKind::Retained,
        TextureFormat::Rgba8UnormSrgb,
        TargetSize::Fixed { width: 4096, height: 64 },
    );
    let depth = g.target(
        "depth",
        TargetKind::Transient,
        TextureFormat::Depth32Float,
        TargetSize::Fixed { width: 4096, height: 64 },
    );
    g.pass(
        Pass::scene("main", cam, PassKind::Forward, Queue::All)
            .color(big, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    r.set_graph(g).unwrap();
    let smaller = switchyard::backend::Caps { max_texture_size: 2048, ..backend.caps() };
    let small_backend = Arc::new(NullBackend::with_caps(smaller));
    assert!(
        matches!(r.recover(small_backend.clone()), Err(InitError::Graph(GraphError::InvalidTarget { target, .. })) if target == "out")
    );
    assert_eq!(small_backend.live(), Default::default(), "nothing made on the refused backend");
    r.render_graph(&FrameInput { cameras: &[camera()], targets: &[] }).unwrap();
    r.flush().unwrap();
}

#[test]
fn views_of_one_label_and_graphs_at_the_pass_limits() {
    let mut r = renderer(Arc::new(NullBackend::new(true)), 16);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mesh = r.create_mesh(&quad()).unwrap();
    r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]).unwrap();
    // `main#1` given as a label does not collide with the name a second `main` gets.
    let labelled = |label| View { label, ..view() };
    let s = r.render(&[view(), view(), labelled("main#1")]).unwrap();
    assert_eq!(s.visible[..3], [1, 1, 1]);
    assert_eq!(r.pass_names(), ["main", "main#2", "main#1"]);

    // 65 scene passes of which one is culled: 64 run, the limit.
    let graph = |extra_live: bool| {
        let mut g = FrameGraph::new();
        let cam = g.camera("sun");
        let side = TargetSize::Fixed { width: 8, height: 8 };
        for i in 0..65 {
            // The last one writes a transient map nothing reads (culled), unless asked.
            let kind = if i < 64 || extra_live { TargetKind::Retained } else { TargetKind::Transient };
            let map = g.target(format!("map{i}"), kind, TextureFormat::Depth32Float, side);
            g.pass(Pass::scene(format!("shadow{i}"), cam, PassKind::Shadow, Queue::All).depth(
                map,
                LoadOp::Clear(1.0),
                StoreOp::Store,
            ));
        }
        g
    };
    r.set_graph(graph(false)).unwrap();
    let s = r.render_graph(&FrameInput { cameras: &[camera()], targets: &[] }).unwrap();
    assert_eq!(s.pass_count, 64);
    assert!(matches!(r.set_graph(graph(true)), Err(RenderError::Graph(GraphError::InvalidPass { .. }))));
}

/// Resident memory of this process, bytes (Linux `/proc/self/statm`, 4 KiB pages).
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    Some(statm.split_whitespace().nth(1)?.parse::<u64>().ok()? * 4096)
}

/// Pass names belong to the graph that has them: 10,000 graphs of fresh, long names (an
/// engine naming passes per light or per level) leave the process's memory where it was
/// after the first thousand (a leaked name each would add over 30 MB).
#[test]
fn graphs_of_fresh_pass_names_keep_memory_flat() {
    let mut r = renderer(Arc::new(NullBackend::new(true)), 16);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mesh = r.create_mesh(&quad()).unwrap();
    r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]).unwrap();
    let long = "x".repeat(1000);
    let mut after_warm_up = None;
    for i in 0..10_000 {
        let mut g = FrameGraph::new();
        let cam = g.camera("main");
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        g.pass(
            Pass::scene(format!("scene-{i}-{long}"), cam, PassKind::Forward, Queue::All)
                .color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store)
                .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
        );
        g.pass(Pass::callback(format!("ui-{i}-{long}"), |_, _| {}).color(out, LoadOp::Load, StoreOp::Store));
        g.pass(Pass::compute(format!("sim-{i}-{long}"), |_, _| {}));
        r.set_graph(g).unwrap();
        if i % 1000 == 0 {
            r.render_graph(&FrameInput { cameras: &[camera()], targets: &[] }).unwrap();
        }
        if i == 999 {
            r.flush().unwrap();
            after_warm_up = resident();
        }
    }
    r.flush().unwrap();
    if let (Some(before), Some(after)) = (after_warm_up, resident()) {
        assert!(after < before + (8 << 20), "resident memory grew from {before} to {after} bytes");
    }
}
