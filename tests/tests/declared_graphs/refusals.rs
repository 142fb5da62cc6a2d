//! Bad graphs, bad frame inputs and failing callbacks: typed errors that change nothing.

use super::*;

/// `set_graph` errors leave the previous graph in place: its next frame is the same.
#[test]
fn bad_graphs_are_typed_errors_and_change_nothing() {
    let mut w = world(2);
    let t = set_full(&mut w);
    let out = engine_texture(&w.backend, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
    let _ = t;
    let frame = |w: &mut World| {
        // The current graph's `out` (a target id names its graph).
        let t_out = w.r.graph().unwrap().find_target("out").unwrap();
        let s = w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t_out, out)] }).unwrap();
        w.r.flush().unwrap();
        (s.digest, s.visible, s.passes)
    };
    let before = frame(&mut w);
    let bar = w.bar;
    type Edit = Box<dyn Fn(&mut FrameGraph)>;
    type Case = (&'static str, Edit, fn(&RenderError) -> bool);
    let cases: Vec<Case> = vec![
        (
            "cycle",
            Box::new(|g| {
                let hdr = g.find_target("hdr").unwrap();
                let blur_v = g.find_target("blur-v").unwrap();
                // bright now also samples blur-v, which (through blur-h) samples bright.
                let p =
                    Pass::fullscreen("bright2", blur_shader()).color(hdr, LoadOp::Load, StoreOp::Store).sample(blur_v);
                g.pass(p);
            }),
            |e| matches!(e, RenderError::Graph(GraphError::Cycle { .. })),
        ),
        (
            "unknown camera",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let depth = g.find_target("depth").unwrap();
                let cam = CameraId::from_index(9);
                g.pass(
                    Pass::scene("ghost", cam, PassKind::Forward, Queue::All)
                        .color(out, LoadOp::Load, StoreOp::Store)
                        .depth(depth, LoadOp::Load, StoreOp::Store),
                );
            }),
            |e| matches!(e, RenderError::Graph(GraphError::UnknownCamera { pass, camera: 9 }) if pass == "ghost"),
        ),
        (
            "forward pass without depth",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let cam = CameraId::from_index(2);
                g.pass(Pass::scene("flat", cam, PassKind::Forward, Queue::All).color(
                    out,
                    LoadOp::Load,
                    StoreOp::Store,
                ));
            }),
            |e| matches!(e, RenderError::Graph(GraphError::InvalidPass { pass, .. }) if pass == "flat"),
        ),
        (
            "shadow pass with color",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let depth = g.find_target("depth").unwrap();
                let cam = CameraId::from_index(0);
                g.pass(
                    Pass::scene("odd", cam, PassKind::Shadow, Queue::All)
                        .color(out, LoadOp::Load, StoreOp::Store)
                        .depth(depth, LoadOp::Load, StoreOp::Store),
                );
            }),
            |e| matches!(e, RenderError::Graph(GraphError::InvalidPass { pass, .. }) if pass == "odd"),
        ),
        (
            "fullscreen shader that does not compile",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let mut s = blur_shader();
                s.wgsl = "this is not wgsl".into();
                g.pass(Pass::fullscreen("broken", s).color(out, LoadOp::Load, StoreOp::Store));
            }),
            |e| matches!(e, RenderError::Shader { pass, .. } if pass == "broken"),
        ),
        (
            "fullscreen entry point missing",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let mut s = blur_shader();
                s.entry = "fs_nowhere".into();
                g.pass(Pass::fullscreen("lost", s).color(out, LoadOp::Load, StoreOp::Store));
            }),
            |e| matches!(e, RenderError::Shader { pass, .. } if pass == "lost"),
        ),
        (
            "a don't-care load before a shader that may discard",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let hdr = g.find_target("hdr").unwrap();
                let s = FullscreenShader {
                    name: "cut".into(),
                    wgsl: "@group(0) @binding(3) var t: texture_2d<f32>;
                        @fragment fn fs_cut(v: FullscreenVertex) -> @location(0) vec4<f32> {
                            let c = textureSample(t, frame_sampler, v.uv);
                            if c.a < 0.5 { discard; }
                            return c;
                        }"
                    .into(),
                    entry: "fs_cut".into(),
                    params: [0.0; 8],
                };
                g.pass(Pass::fullscreen("cut", s).color(out, LoadOp::DontCare, StoreOp::Store).sample(hdr));
            }),
            |e| matches!(e, RenderError::Graph(GraphError::InvalidPass { pass, .. }) if pass == "cut"),
        ),
        (
            "sampling a target nobody writes",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                let lonely = g.target("lonely", TargetKind::Transient, TextureFormat::Rgba8Unorm, TargetSize::Output);
                g.pass(
                    Pass::fullscreen("reads", blur_shader()).color(out, LoadOp::Load, StoreOp::Store).sample(lonely),
                );
            }),
            |e| matches!(e, RenderError::Graph(GraphError::MissingInput { pass, target }) if pass == "reads" && target == "lonely"),
        ),
        (
            "forward passes into two color formats",
            Box::new(|g| {
                let depth = g.find_target("depth").unwrap();
                let ldr = g.target("ldr", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
                let cam = CameraId::from_index(2);
                g.pass(
                    Pass::scene("ldr-pass", cam, PassKind::Forward, Queue::All)
                        .color(ldr, LoadOp::Clear([0.0; 4]), StoreOp::Store)
                        .depth(depth, LoadOp::Load, StoreOp::Store),
                );
            }),
            |e| matches!(e, RenderError::Graph(GraphError::InvalidPass { .. })),
        ),
        (
            "two passes of one name",
            Box::new(|g| {
                let out = g.find_target("out").unwrap();
                g.pass(Pass::callback("post", |_, _| {}).color(out, LoadOp::Load, StoreOp::Store));
            }),
            |e| matches!(e, RenderError::Graph(GraphError::DuplicateName { name, .. }) if name == "post"),
        ),
        (
            "a sample count the backend lacks (the null backend has 1 and 4)",
            Box::new(|g| {
                let msaa = g.target_multisampled(
                    "msaa",
                    TargetKind::Retained,
                    TextureFormat::Rgba8Unorm,
                    TargetSize::Output,
                    8,
                );
                g.pass(Pass::callback("ms", |_, _| {}).color(msaa, LoadOp::Clear([0.0; 4]), StoreOp::Store));
            }),
            |e| matches!(e, RenderError::Graph(GraphError::InvalidTarget { target, .. }) if target == "msaa"),
        ),
    ];
    let live = w.backend.live();
    for (what, edit, expected) in cases {
        let (mut g, _) = full_graph(TargetKind::External, 64, bar);
        edit(&mut g);
        let e = w.r.set_graph(g).expect_err(what);
        assert!(expected(&e), "{what}: {e}");
        assert_eq!(frame(&mut w), before, "{what}: the previous graph renders as before");
        // What a refused graph made is destroyed again.
        assert_eq!(w.backend.live(), live, "{what}");
    }
    // The same discarding shader over a loaded target is fine: texels it skips keep what
    // the passes before wrote.
    let (mut g, t2) = full_graph(TargetKind::External, 64, bar);
    let s = FullscreenShader {
        name: "cut".into(),
        wgsl: "@fragment fn fs_cut(v: FullscreenVertex) -> @location(0) vec4<f32> {
                if v.uv.x < 0.5 { discard; } return vec4<f32>(1.0); }"
            .into(),
        entry: "fs_cut".into(),
        params: [0.0; 8],
    };
    g.pass(Pass::fullscreen("cut", s).color(t2.out, LoadOp::Load, StoreOp::Store));
    w.r.set_graph(g).unwrap();
    frame(&mut w);
    // Replacing the graph by itself leaves no more than it had.
    let (g, _) = full_graph(TargetKind::External, 64, bar);
    w.r.set_graph(g).unwrap();
    frame(&mut w);
    assert_eq!(w.backend.live(), live, "a new plan takes the old one's place");
    assert!(matches!(w.r.set_graph(FrameGraph::new()), Err(RenderError::Graph(GraphError::Empty))));
}

#[test]
fn bad_frame_inputs_are_typed_errors_and_the_next_frame_works() {
    let mut w = world(2);
    let cams = cameras();
    assert!(matches!(w.r.render_graph(&FrameInput { cameras: &cams, targets: &[] }), Err(RenderError::NoGraph)));
    let t = set_full(&mut w);
    let b = &*w.backend;
    let out = engine_texture(b, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
    let wrong_format = engine_texture(b, SIDE, SIDE, TextureFormat::Rgba8Unorm);
    let wrong_size = engine_texture(b, SIDE + 1, SIDE, TextureFormat::Rgba8UnormSrgb);
    let stale = engine_texture(b, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
    b.destroy(Resource::Texture(stale)).unwrap();
    let sampled_only = b
        .create_texture(&TextureDesc {
            label: "sampled".into(),
            width: SIDE,
            height: SIDE,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::SAMPLED,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    let frames_before = w.r.render_graph(&FrameInput { cameras: &cams, targets: &[(t.out, out)] }).unwrap().frame;
    let mut bad_camera = cams;
    bad_camera[1].view_proj.x_axis.x = f32::NAN;
    type Case<'a> = (&'a str, &'a [Camera], Vec<(TargetId, TextureId)>);
    let cases: Vec<Case> = vec![
        ("too few cameras", &cams[..2], vec![(t.out, out)]),
        ("a non-finite camera", &bad_camera, vec![(t.out, out)]),
        ("no output texture", &cams, vec![]),
        ("output twice", &cams, vec![(t.out, out), (t.out, out)]),
        ("a graph-owned target given", &cams, vec![(t.out, out), (t.hdr, out)]),
        ("wrong format", &cams, vec![(t.out, wrong_format)]),
        ("stale texture", &cams, vec![(t.out, stale)]),
        ("not a render target", &cams, vec![(t.out, sampled_only)]),
    ];
    for (what, cameras, targets) in cases {
        let e = w.r.render_graph(&FrameInput { cameras, targets: &targets }).expect_err(what);
        assert!(
            matches!(
                e,
                RenderError::CameraCount { .. } | RenderError::InvalidView { .. } | RenderError::InvalidTarget { .. }
            ),
            "{what}: {e}"
        );
    }
    let next = w.r.render_graph(&FrameInput { cameras: &cams, targets: &[(t.out, out)] }).unwrap();
    assert_eq!(next.frame, frames_before + 1, "no failed input started a frame");
    // A texture of another size is no error: the output follows it (a resized swapchain).
    w.r.render_graph(&FrameInput { cameras: &cams, targets: &[(t.out, wrong_size)] }).unwrap();
    assert_eq!((w.r.config().width, w.r.config().height), (SIDE + 1, SIDE));
}

#[test]
fn a_panicking_or_invalid_callback_fails_its_frame_only() {
    let mut w = world(2);
    let calls = Arc::new(AtomicU64::new(0));
    let seen = calls.clone();
    let bar = w.bar;
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    g.pass(
        Pass::callback("ui", move |ctx, cmds| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            assert_eq!(ctx.size, (SIDE, SIDE));
            match n {
                1 => panic!("the engine's UI code failed"),
                2 => {
                    cmds.push(Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 })
                }
                _ => cmds.extend([
                    Command::SetPipeline(bar),
                    Command::Draw { first_vertex: 0, vertex_count: 6, first_instance: 0, instance_count: 1 },
                ]),
            }
        })
        .color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store),
    );
    w.r.set_graph(g).unwrap();
    let input = FrameInput { cameras: &[], targets: &[] };
    let good = w.r.render_graph(&input).unwrap();
    match w.r.render_graph(&input) {
        Err(RenderError::JobPanicked { job, message }) => {
            assert_eq!(job, "pass[ui]");
            assert!(message.contains("UI code failed"), "{message}");
        }
        other => panic!("expected a job panic, got {other:?}"),
    }
    // A draw with no pipeline bound: the backend's validator refuses the chunk.
    assert!(matches!(w.r.render_graph(&input), Err(RenderError::Record(_))));
    let again = w.r.render_graph(&input).unwrap();
    w.r.flush().unwrap();
    assert_eq!(again.digest, good.digest, "the same stream as the first good frame");
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}
