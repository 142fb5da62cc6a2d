//! Engine-declared frame graphs on the null backend: the full graph of every pass kind
//! (shadow cascades, opaque, transparent, a fullscreen chain, post, an engine callback)
//! renders, is deterministic across thread counts, moves the hand-computed bytes, aliases
//! what it may; every bad graph and bad frame input is a typed error that changes nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard::backend::null::NullBackend;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, ShaderDesc, StoreOp};
use switchyard_tests::cube;
use switchyard_tests::full_graph::{bar_pipeline, cameras, full_graph, scattered, Targets, ORDER};

mod refusals;

const SIDE: u32 = 64;

struct World {
    backend: Arc<NullBackend>,
    r: Renderer<NullBackend>,
    bar: PipelineId,
}

/// A renderer with 2,000 random cubes, a seventh of them transparent.
fn world(threads: usize) -> World {
    let backend = Arc::new(NullBackend::new(true));
    let config = RendererConfig { threads, max_objects: 4096, width: SIDE, height: SIDE, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let materials: Vec<_> = (0..7)
        .map(|m| r.create_material(&MaterialDesc { shader, transparent: m == 6, ..Default::default() }).unwrap())
        .collect();
    let objects = scattered(2000, 5, mesh, &materials);
    r.insert_objects(&objects).unwrap();
    let bar = bar_pipeline(&*backend).unwrap();
    World { backend, r, bar }
}

/// An engine-side texture to render into.
fn engine_texture(b: &NullBackend, w: u32, h: u32, format: TextureFormat) -> TextureId {
    b.create_texture(&TextureDesc {
        label: "engine".into(),
        width: w,
        height: h,
        format,
        usage: TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC,
        samples: 1,
        mip_levels: 1,
    })
    .unwrap()
}

fn set_full(w: &mut World) -> Targets {
    let (g, t) = full_graph(TargetKind::External, 64, w.bar);
    w.r.set_graph(g).unwrap();
    t
}

#[test]
fn the_full_graph_renders_in_dependency_order_the_same_on_any_thread_count() {
    let mut digests = Vec::new();
    for threads in [1, 2, 8] {
        let mut w = world(threads);
        let t = set_full(&mut w);
        let out = engine_texture(&w.backend, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
        let mut frames = Vec::new();
        for _ in 0..3 {
            let stats = w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t.out, out)] }).unwrap();
            w.r.flush().unwrap();
            assert_eq!(Some(w.backend.last_frame().digest), stats.digest, "the null backend saw this stream");
            assert_eq!(stats.pass_count, 9);
            assert_eq!(stats.views, 4, "four scene passes");
            // Opaque and transparent split the main camera's visible objects.
            assert!(stats.visible[2] > 0 && stats.visible[3] > 0);
            assert!(stats.visible[2] > 4 * stats.visible[3], "a seventh of the materials is transparent");
            frames.push(stats.digest.unwrap());
        }
        assert_eq!(w.r.pass_names(), ORDER);
        assert!(w.r.frame_warnings().is_empty(), "{:?}", w.r.frame_warnings());
        digests.push(frames);
    }
    assert_eq!(digests[0], digests[1]);
    assert_eq!(digests[0], digests[2]);
}

#[test]
fn queues_split_what_one_pass_of_everything_sees() {
    let mut w = world(2);
    let mut g = FrameGraph::new();
    let cam = g.camera("main");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let sky = LoadOp::Clear([0.0, 0.0, 0.0, 1.0]);
    g.pass(Pass::scene("all", cam, PassKind::Forward, Queue::All).color(out, sky, StoreOp::Store).depth(
        depth,
        LoadOp::Clear(1.0),
        StoreOp::Store,
    ));
    for (name, q) in [("opaque", Queue::Opaque), ("transparent", Queue::Transparent)] {
        g.pass(Pass::scene(name, cam, PassKind::Forward, q).color(out, LoadOp::Load, StoreOp::Store).depth(
            depth,
            LoadOp::Load,
            StoreOp::Store,
        ));
    }
    w.r.set_graph(g).unwrap();
    let s = w.r.render_graph(&FrameInput { cameras: &cameras()[2..], targets: &[] }).unwrap();
    assert_eq!(s.visible[0], s.visible[1] + s.visible[2]);
    assert!(s.visible[2] > 0);
    // The graph warns once: the last pass stores depth nothing reads.
    assert_eq!(w.r.frame_warnings().len(), 1, "{:?}", w.r.frame_warnings());
    assert_eq!(w.r.color_target(), w.r.target_texture(out), "read_color reads the retained target");
}

#[test]
fn per_pass_bytes_and_aliasing_savings_are_the_hand_computed_ones() {
    let mut w = world(2);
    let t = set_full(&mut w);
    let out = engine_texture(&w.backend, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
    let s = w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t.out, out)] }).unwrap();
    let full = u64::from(SIDE * SIDE * 4);
    let hdr = 2 * full; // RGBA16 float: 8 bytes a texel
    let half = full / 4;
    let map = 64 * 64 * 4;
    let expect = [
        (0, map),                 // shadow-near: cleared, stored
        (0, map),                 // shadow-far
        (0, hdr + full),          // opaque: color and depth cleared, stored
        (hdr + full, hdr + full), // transparent: loads both, stores both (post samples depth)
        (0, half),                // bright: don't-care, stored
        (0, half),                // blur-h
        (0, half),                // blur-v
        (0, full),                // post: don't-care into the output
        (full, full),             // overlay: loads the output
    ];
    for (i, (loaded, stored)) in expect.into_iter().enumerate() {
        assert_eq!(s.passes[i], PassTraffic { loaded, stored, resolved: 0 }, "pass {}", ORDER[i]);
    }
    // bright dies (blur-h samples it) before blur-v is written: they share a texture.
    assert_eq!(w.r.target_texture(t.bright), w.r.target_texture(t.blur_v));
    assert_ne!(w.r.target_texture(t.bright), w.r.target_texture(t.blur_h));
    assert_eq!(s.target_bytes_saved, half);
    assert_eq!(s.target_bytes, 2 * map + hdr + full + 2 * half, "shadow maps, hdr, depth, two half targets");
    assert_eq!(w.r.target_memory(), (s.target_bytes, s.target_bytes_saved));
    // Aliasing off: one texture each, the same command stream but for the texture handles.
    let (mut g, t) = full_graph(TargetKind::External, 64, w.bar);
    g.set_aliasing(false);
    w.r.set_graph(g).unwrap();
    let s2 = w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t.out, out)] }).unwrap();
    assert_eq!(s2.target_bytes_saved, 0);
    assert_eq!(s2.target_bytes, s.target_bytes + half);
    assert_ne!(w.r.target_texture(t.bright), w.r.target_texture(t.blur_v));
    assert_eq!((s2.draw_calls, s2.batches, s2.passes), (s.draw_calls, s.batches, s.passes));
}

#[test]
fn resize_recreates_only_the_output_sized_targets() {
    let mut w = world(2);
    let t = set_full(&mut w);
    let out = engine_texture(&w.backend, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
    w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t.out, out)] }).unwrap();
    let shadow = w.r.target_texture(t.shadows[0]);
    let hdr = w.r.target_texture(t.hdr);
    for bad in [(0, 8), (8, 0), (1 << 20, 8)] {
        assert!(matches!(w.r.resize(bad.0, bad.1), Err(RenderError::InvalidSize { .. })));
        assert_eq!(w.r.target_texture(t.hdr), hdr, "nothing changed");
    }
    w.r.resize(96, 50).unwrap();
    assert_eq!(w.r.target_texture(t.shadows[0]), shadow, "fixed-size targets stay");
    assert_ne!(w.r.target_texture(t.hdr), hdr, "output-sized targets are new");
    // An output-sized external texture of another size (a swapchain image after the
    // window changed) resizes the frame to it: the old 64x64 texture brings 64x64 back.
    let s = w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t.out, out)] }).unwrap();
    assert_eq!((w.r.config().width, w.r.config().height), (SIDE, SIDE));
    assert_eq!(s.passes[7].stored, u64::from(SIDE * SIDE * 4));
    assert_eq!(w.r.target_texture(t.shadows[0]), shadow, "fixed-size targets still stay");
    let out2 = engine_texture(&w.backend, 96, 50, TextureFormat::Rgba8UnormSrgb);
    let s = w.r.render_graph(&FrameInput { cameras: &cameras(), targets: &[(t.out, out2)] }).unwrap();
    w.r.flush().unwrap();
    assert_eq!(s.passes[7].stored, 96 * 50 * 4, "post writes the new size");
    assert_eq!(s.passes[4].stored, 48 * 25 * 4, "half-resolution targets follow");
    // A graph whose fixed-size target cannot fit the new output is refused, and nothing changes.
    let mut g = FrameGraph::new();
    let fixed = g.target(
        "fixed",
        TargetKind::Retained,
        TextureFormat::Rgba8UnormSrgb,
        TargetSize::Fixed { width: 96, height: 50 },
    );
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let cam = g.camera("main");
    g.pass(
        Pass::scene("main", cam, PassKind::Forward, Queue::All)
            .color(fixed, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    w.r.set_graph(g).unwrap();
    let e = w.r.resize(64, 64).unwrap_err();
    assert!(matches!(e, RenderError::Graph(GraphError::SizeMismatch { .. })), "{e}");
    assert_eq!((w.r.config().width, w.r.config().height), (96, 50));
    w.r.render_graph(&FrameInput { cameras: &cameras()[2..], targets: &[] }).unwrap();
}

/// Random graphs of scene, fullscreen and callback passes over random targets: valid ones
/// set and render on the null backend without a panic; broken ones give typed errors and
/// the renderer keeps working.
#[test]
fn random_graphs_render_or_give_typed_errors() {
    let mut w = world(2);
    let mut rng = Pcg64Mcg::seed_from_u64(31);
    let (mut rendered, mut refused) = (0, 0);
    for case in 0..120 {
        let mut g = FrameGraph::new();
        let cam = g.camera("c");
        let n = rng.gen_range(1..6);
        let sizes = [TargetSize::Output, TargetSize::Scaled(0.5), TargetSize::Fixed { width: 16, height: 16 }];
        // One depth target per size, for the scene passes.
        let depths: Vec<TargetId> = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| g.target(format!("depth{i}"), TargetKind::Transient, TextureFormat::Depth32Float, size))
            .collect();
        let colors: Vec<(TargetId, usize)> = (0..n)
            .map(|i| {
                let size = rng.gen_range(0..sizes.len());
                let kind = if rng.gen_bool(0.2) { TargetKind::Retained } else { TargetKind::Transient };
                (g.target(format!("t{i}"), kind, TextureFormat::Rgba8UnormSrgb, sizes[size]), size)
            })
            .collect();
        let depth = depths[0];
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let buffers = [g.buffer("b0"), g.buffer("b1")];
        let mut written = Vec::new();
        for p in 0..rng.gen_range(1..8) {
            let (t, size) = colors[rng.gen_range(0..colors.len())];
            let load = if written.contains(&t) && rng.gen_bool(0.5) { LoadOp::Load } else { LoadOp::Clear([0.0; 4]) };
            let pass = match rng.gen_range(0..4) {
                0 => Pass::scene(format!("p{p}"), cam, PassKind::Forward, Queue::All)
                    .color(t, load, StoreOp::Store)
                    .depth(depths[size], LoadOp::Clear(1.0), StoreOp::Discard),
                1 => match written.get(rng.gen_range(0..written.len().max(1))).filter(|&&s| s != t) {
                    // The blur samples its input; with none, a shader that samples nothing
                    // (a shader using a binding the pass lacks is refused, as wgpu does).
                    Some(&s) => {
                        Pass::fullscreen(format!("p{p}"), blur_shader()).color(t, load, StoreOp::Store).sample(s)
                    }
                    None => Pass::fullscreen(format!("p{p}"), flat_shader()).color(t, load, StoreOp::Store),
                },
                2 => Pass::callback(format!("p{p}"), |_, _| {}).color(t, load, StoreOp::Store),
                _ => Pass::compute(format!("p{p}"), |_, _| {}),
            };
            // Callback and compute passes read and write the engine's buffers at random.
            let pass = match pass.content() {
                PassContent::Callback(_) | PassContent::Compute(_) => {
                    let mut pass = pass;
                    for &b in &buffers {
                        match rng.gen_range(0..4) {
                            0 => pass = pass.reads(b),
                            1 => pass = pass.writes(b),
                            2 => pass = pass.reads(b).writes(b),
                            _ => {}
                        }
                    }
                    pass
                }
                _ => pass,
            };
            if !matches!(pass.content(), PassContent::Compute(_)) {
                written.push(t);
            }
            g.pass(pass);
        }
        g.pass(Pass::callback("final", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store));
        if case % 4 == 0 {
            // Break it: a scene pass with a camera the graph lacks, or a fullscreen pass
            // sampling a target nobody writes.
            if rng.gen_bool(0.5) {
                g.pass(Pass::scene("bad", CameraId::from_index(3), PassKind::Shadow, Queue::All).depth(
                    depth,
                    LoadOp::Clear(1.0),
                    StoreOp::Store,
                ));
            } else {
                let never = g.target("never", TargetKind::Transient, TextureFormat::Rgba8Unorm, TargetSize::Output);
                g.pass(Pass::fullscreen("bad", blur_shader()).color(out, LoadOp::Load, StoreOp::Store).sample(never));
            }
        }
        match w.r.set_graph(g) {
            Ok(()) => {
                let s = w.r.render_graph(&FrameInput { cameras: &cameras()[2..], targets: &[] });
                let s = s.unwrap_or_else(|e| panic!("case {case}: a graph that compiled failed to render: {e}"));
                w.r.flush().unwrap();
                assert_eq!(Some(w.backend.last_frame().digest), s.digest, "case {case}");
                rendered += 1;
            }
            Err(e) => {
                // Sampling into a cycle is the valid random graphs' only way to fail.
                assert!(case % 4 == 0 || matches!(e, RenderError::Graph(GraphError::Cycle { .. })), "case {case}: {e}");
                refused += 1;
            }
        }
    }
    assert!(rendered > 60 && refused >= 30, "rendered {rendered}, refused {refused}");
}

/// Light `l`'s two cascades: their cameras, 64 x 64 depth maps and shadow passes.
fn light_maps(g: &mut FrameGraph, l: usize) -> [TargetId; 2] {
    let map = TargetSize::Fixed { width: 64, height: 64 };
    [0, 1].map(|c| {
        let cam = g.camera(format!("light-{l}-{c}"));
        let t = g.target(format!("map-{l}-{c}"), TargetKind::Transient, TextureFormat::Depth32Float, map);
        let shadow = Pass::scene(format!("shadow-{l}-{c}"), cam, PassKind::Shadow, Queue::All);
        g.pass(shadow.depth(t, LoadOp::Clear(1.0), StoreOp::Store));
        t
    })
}

/// Shadow cascades of several lights are more cameras and passes: 20 lights of 2 cascades
/// each, one forward pass per light sampling its cascades (60 scene passes) render; past
/// `MAX_VIEWS` scene passes the graph is a typed error.
#[test]
fn many_lights_and_cascades_up_to_the_limit() {
    let mut w = world(4);
    let build = |lights: usize| {
        let mut g = FrameGraph::new();
        let main = g.camera("main");
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        for l in 0..lights {
            let maps = light_maps(&mut g, l);
            let (cl, dl) =
                if l == 0 { (LoadOp::Clear([0.0; 4]), LoadOp::Clear(1.0)) } else { (LoadOp::Load, LoadOp::Load) };
            g.pass(
                Pass::scene(format!("lit-{l}"), main, PassKind::Forward, Queue::All)
                    .color(out, cl, StoreOp::Store)
                    .depth(depth, dl, StoreOp::Store)
                    .sample(maps[0])
                    .sample(maps[1]),
            );
        }
        g
    };
    w.r.set_graph(build(20)).unwrap();
    let cams = cameras();
    let mut frame_cameras = vec![cams[2]];
    frame_cameras.extend((0..40).map(|i| cams[i % 2]));
    let s = w.r.render_graph(&FrameInput { cameras: &frame_cameras, targets: &[] }).unwrap();
    w.r.flush().unwrap();
    assert_eq!((s.views, s.pass_count), (60, 60));
    assert_eq!(Some(w.backend.last_frame().digest), s.digest);
    assert!(s.visible[..60].iter().all(|&v| v > 0), "every pass sees objects");
    // 22 lights: 66 scene passes, past the limit.
    let e = w.r.set_graph(build(22)).unwrap_err();
    assert!(matches!(e, RenderError::Graph(GraphError::InvalidPass { .. })), "{e}");
}

/// The materials' forward pipelines follow the forward passes' color format: an HDR graph,
/// then views (RGBA8 sRGB), then the graph again all render; every display list is built
/// again at each switch, and only then.
#[test]
fn switching_between_hdr_and_ldr_frames_rebuilds_the_display_lists_once() {
    let mut w = world(2);
    let t = set_full(&mut w);
    let out = engine_texture(&w.backend, SIDE, SIDE, TextureFormat::Rgba8UnormSrgb);
    let cams = cameras();
    let graph_frame =
        |w: &mut World| w.r.render_graph(&FrameInput { cameras: &cams, targets: &[(t.out, out)] }).unwrap();
    let view = |c: &Camera, label, pass| View {
        label,
        view_proj: c.view_proj,
        eye: c.eye,
        far: c.far,
        layer_mask: c.layer_mask,
        pass,
    };
    let views = [view(&cams[2], "main", PassKind::Forward), view(&cams[0], "sun", PassKind::Shadow)];
    let first = graph_frame(&mut w);
    assert!(first.lists.misses > 0);
    assert_eq!(
        graph_frame(&mut w).lists.misses + graph_frame(&mut w).lists.rebuilds,
        0,
        "cached while nothing changes"
    );
    let ldr = w.r.render(&views).unwrap();
    assert!(ldr.lists.rebuilds > 0, "forward lists built again for RGBA8 sRGB");
    assert_eq!(w.r.render(&views).unwrap().lists.rebuilds, 0);
    let back = graph_frame(&mut w);
    assert!(back.lists.rebuilds > 0, "and again for RGBA16 float");
    w.r.flush().unwrap();
    assert_eq!(Some(w.backend.last_frame().digest), back.digest, "the validator accepted every chunk");
}

/// Lights declared shadows first, then their lighting passes into an HDR target: the
/// order runs each lighting pass as soon as its maps are drawn (it ends their lifetimes),
/// so the next light's maps reuse their textures: two maps' memory instead of sixteen.
#[test]
fn lights_declared_shadows_first_still_alias_their_maps() {
    let mut w = world(2);
    let lights = 8;
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let hdr = g.target("hdr", TargetKind::Transient, TextureFormat::Rgba16Float, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let maps: Vec<TargetId> = (0..lights).flat_map(|l| light_maps(&mut g, l)).collect();
    for l in 0..lights {
        let (cl, dl) =
            if l == 0 { (LoadOp::Clear([0.0; 4]), LoadOp::Clear(1.0)) } else { (LoadOp::Load, LoadOp::Load) };
        let store = if l + 1 == lights { StoreOp::Discard } else { StoreOp::Store };
        g.pass(
            Pass::scene(format!("lit-{l}"), main, PassKind::Forward, Queue::All)
                .color(hdr, cl, StoreOp::Store)
                .depth(depth, dl, store)
                .sample(maps[2 * l])
                .sample(maps[2 * l + 1]),
        );
    }
    g.pass(Pass::fullscreen("post", blur_shader()).color(out, LoadOp::DontCare, StoreOp::Store).sample(hdr));
    let mut unaliased = g.clone();
    unaliased.set_aliasing(false);
    let cams = cameras();
    let mut frame_cameras = vec![cams[2]];
    frame_cameras.extend((0..2 * lights).map(|i| cams[i % 2]));
    let mut memory = Vec::new();
    for graph in [g, unaliased] {
        w.r.set_graph(graph).unwrap();
        let names = w.r.pass_names();
        assert_eq!(&names[..3], ["shadow-0-0", "shadow-0-1", "lit-0"], "light 0 is lit before light 1's maps");
        assert_eq!(&names[3..6], ["shadow-1-0", "shadow-1-1", "lit-1"]);
        let s = w.r.render_graph(&FrameInput { cameras: &frame_cameras, targets: &[] }).unwrap();
        w.r.flush().unwrap();
        memory.push(s.target_bytes);
    }
    let map_bytes = 64 * 64 * 4;
    assert_eq!(memory[1] - memory[0], (2 * lights as u64 - 2) * map_bytes, "two maps' textures serve all sixteen");
}

fn blur_shader() -> FullscreenShader {
    FullscreenShader {
        name: "blur".into(),
        wgsl: switchyard_tests::full_graph::BLUR.into(),
        entry: "fs_blur".into(),
        params: [1.0; 8],
    }
}

/// A fullscreen shader of one color, sampling nothing.
fn flat_shader() -> FullscreenShader {
    FullscreenShader {
        name: "flat".into(),
        wgsl: "@fragment fn fs_flat(v: FullscreenVertex) -> @location(0) vec4<f32> { return frame.params[0]; }".into(),
        entry: "fs_flat".into(),
        params: [0.5; 8],
    }
}
