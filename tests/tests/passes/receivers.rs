//! A shadow pass culled to the casters of what a camera sees (`Pass::receivers`): on
//! lavapipe and llvmpipe, a field of boxes behind a wall, over a ground that receives
//! shadows and casts none, from several cameras: every image equals the one drawn with
//! every caster, pixel for pixel, while the shadow pass draws fewer casters (read back);
//! casters whose shadow falls only behind the wall are not drawn, and are drawn in the
//! very frame the wall goes. On the null backend:
//! the command stream does not depend on the thread count, the pass runs after the
//! prepass it reads even when declared first, a renderer that does not cull by occlusion
//! draws as without receivers, and bad declarations are refused with typed errors that
//! change nothing.

use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use rand::{Rng, SeedableRng};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, differing_pixels, plain_material, wgpu_backend};

const WIDTH: u32 = 200;
const HEIGHT: u32 = 120;
/// Scene pass 0: the sun's shadow pass (declared before the prepass it reads).
const SUN_VIEW: usize = 0;

/// The sun's shadow pass (with receivers: the prepass's depth as the main camera saw
/// it), a depth prepass of the opaque queue, and an opaque pass sampling the map.
fn graph(receivers: bool) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let sun = g.camera("sun");
    let (t, depth) = (TargetKind::Transient, TextureFormat::Depth32Float);
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let seen = g.target("prepass-depth", t, depth, TargetSize::Output);
    let map = g.target("map", t, depth, TargetSize::Fixed { width: 512, height: 512 });
    let main_depth = g.target("depth", t, depth, TargetSize::Output);
    let mut shadow =
        Pass::scene("sun", sun, PassKind::Shadow, Queue::All).depth(map, LoadOp::Clear(1.0), StoreOp::Store);
    if receivers {
        shadow = shadow.receivers(seen, main);
    }
    g.pass(shadow);
    g.pass(Pass::scene("prepass", main, PassKind::Depth, Queue::Opaque).depth(
        seen,
        LoadOp::Clear(1.0),
        StoreOp::Store,
    ));
    g.pass(
        Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
            .color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store)
            .depth(main_depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .sample(map),
    );
    (g, out)
}

fn main_camera(eye: Vec3, target: Vec3) -> Camera {
    switchyard_tests::look_camera(eye, target, WIDTH as f32 / HEIGHT as f32, 90.0)
}

/// The sun from the north-west, high, its box over the whole field.
fn sun() -> Camera {
    switchyard_tests::sun_camera(Vec3::new(-50.0, 70.0, -30.0), 60.0, 220.0)
}

/// Objects of [`scene`]: the ground, the wall, a box behind the wall, then the field.
const WALL: usize = 1;
const HIDDEN: usize = 2;

/// The scene on `backend`, culled on the GPU and by occlusion (with `occlusion`): a
/// ground slab that casts no shadow, a wall in front of the camera, a box behind it and
/// `field` boxes scattered around, casting shadows.
fn scene<B: Backend>(
    backend: Arc<B>,
    receivers: bool,
    occlusion: bool,
    (field, threads): (usize, usize),
) -> (Renderer<B>, Vec<ObjectId>, TargetId) {
    let config = RendererConfig {
        threads,
        max_objects: field + 16,
        width: WIDTH,
        height: HEIGHT,
        cull: CullOn::Gpu,
        occlusion,
        ..Default::default()
    };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let materials = [
        plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]),
        plain_material(&mut r, shader, [0.3, 0.8, 0.4, 1.0]),
        plain_material(&mut r, shader, [0.8, 0.8, 0.8, 1.0]),
    ];
    let (g, out) = graph(receivers);
    r.set_graph(g).unwrap();
    let place = |s: Vec3, y: f32, p: Vec3| Mat4::from_scale_rotation_translation(s, Quat::from_rotation_y(y), p);
    let mut objects = vec![
        (place(Vec3::new(140.0, 1.0, 140.0), 0.0, Vec3::new(0.0, -1.0, 0.0)), 0),
        (place(Vec3::new(16.0, 9.0, 0.6), 0.0, Vec3::new(0.0, 0.0, 14.0)), CASTS_SHADOWS),
        (place(Vec3::splat(1.5), 0.0, Vec3::new(0.0, 0.0, -10.0)), CASTS_SHADOWS),
    ];
    let mut rng = rand_pcg::Pcg32::seed_from_u64(23);
    objects.extend((0..field).map(|_| {
        let p = Vec3::new(rng.gen_range(-60.0..60.0), rng.gen_range(0.0..4.0), rng.gen_range(-60.0..60.0));
        let s = Vec3::new(rng.gen_range(0.5..2.5), rng.gen_range(0.5..6.0), rng.gen_range(0.5..2.5));
        (place(s, rng.gen_range(0.0..3.0), p), CASTS_SHADOWS)
    }));
    let descs: Vec<ObjectDesc> = objects
        .iter()
        .enumerate()
        .map(|(i, &(transform, flags))| ObjectDesc {
            mesh,
            material: materials[if i == 0 { 2 } else { i % 2 }],
            transform,
            layer: 0,
            flags,
        })
        .collect();
    let ids = r.insert_objects(&descs).unwrap();
    (r, ids, out)
}

/// The dense object indices the shadow view drew in the last frame, read back.
fn drawn<B: Backend>(r: &Renderer<B>) -> Vec<u32> {
    let g = r.gpu_cull_view(SUN_VIEW).expect("the shadow view is culled on the GPU");
    let (b, buckets, n) = (r.backend(), g.starts.len() - 1, g.candidates.len());
    let words = |buffer, len: usize| -> Vec<u32> {
        bytemuck::cast_slice(&b.read_buffer(buffer, 0, (len.max(1) * 4) as u64).expect("read back")).to_vec()
    };
    let (args, instances) = (words(g.args, buckets * 5), words(g.instances, n));
    (0..buckets)
        .flat_map(|k| {
            let (count, first) = (args[5 * k + 1] as usize, args[5 * k + 4] as usize);
            instances[first..first + count].to_vec()
        })
        .collect()
}

fn same_pixels_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let (mut r, ids, out) = scene(backend.clone(), true, true, (800, 2));
    if !r.occlusion() {
        assert!(std::env::var_os("CI").is_none(), "{api:?}: no occlusion culling on CI: {:?}", r.occlusion_fallback());
        eprintln!("skipping: {api:?} cannot cull by occlusion: {:?}", r.occlusion_fallback());
        return;
    }
    let (mut all, all_ids, all_out) = scene(backend, false, true, (800, 2));
    let hidden = r.scene().dense_index(ids[HIDDEN]).unwrap();
    // Behind the wall at eye height, then over it, then from the side and far off.
    let eyes = [
        (Vec3::new(0.0, 2.0, 22.0), Vec3::new(0.0, 2.0, 0.0)),
        (Vec3::new(0.0, 2.5, 21.0), Vec3::new(4.0, 1.0, 0.0)),
        (Vec3::new(0.0, 25.0, 40.0), Vec3::ZERO),
        (Vec3::new(45.0, 8.0, 5.0), Vec3::new(-10.0, 0.0, 0.0)),
    ];
    let mut fewer = 0;
    for (k, &(eye, target)) in eyes.iter().enumerate() {
        let cameras = [main_camera(eye, target), sun()];
        let input = FrameInput { cameras: &cameras, targets: &[] };
        // Twice: the prepass's occlusion bits settle after the first frame.
        for _ in 0..2 {
            let s = r.render_graph(&input).unwrap();
            assert_eq!(s.receiver_culled_views, 1, "{api:?}: camera {k}");
            assert_eq!(all.render_graph(&input).unwrap().receiver_culled_views, 0);
        }
        let (a, b) = (r.read_target(out).unwrap(), all.read_target(all_out).unwrap());
        let differ = differing_pixels(&a, &b);
        let (kept, every) = (drawn(&r), all.gpu_cull_counts(SUN_VIEW).unwrap().unwrap());
        assert_eq!(differ, 0, "{api:?}: camera {k}: the same image with {} of {every:?}", kept.len());
        assert_eq!(r.gpu_cull_counts(SUN_VIEW).unwrap().map(|c| c.first_phase), Some(kept.len() as u32));
        assert!(kept.len() as u32 <= every.first_phase, "{api:?}: camera {k}");
        fewer += usize::from(kept.len() * 2 < every.first_phase as usize);
        if k == 0 {
            // Its shadow falls behind the wall, which hides everything there.
            assert!(!kept.contains(&hidden), "{api:?}: the box behind the wall casts onto nothing seen");
            assert!(kept.len() > 3, "{api:?}: the casters before the wall are drawn ({})", kept.len());
        }
    }
    assert!(fewer >= 2, "{api:?}: at least two cameras draw under half the casters ({fewer})");
    // The wall goes: what it hid is in this very frame's prepass (its occlusion's second
    // phase), so the shadows on it are drawn at once.
    let (eye, target) = eyes[0];
    let cameras = [main_camera(eye, target), sun()];
    let input = FrameInput { cameras: &cameras, targets: &[] };
    r.render_graph(&input).unwrap();
    all.render_graph(&input).unwrap();
    let away = Mat4::from_translation(Vec3::new(0.0, -60.0, 0.0));
    r.set_transforms(&[(ids[WALL], away)]).unwrap();
    all.set_transforms(&[(all_ids[WALL], away)]).unwrap();
    r.render_graph(&input).unwrap();
    all.render_graph(&input).unwrap();
    let (a, b) = (r.read_target(out).unwrap(), all.read_target(all_out).unwrap());
    assert_eq!(differing_pixels(&a, &b), 0, "{api:?}: the frame the wall goes");
    assert!(drawn(&r).contains(&hidden), "{api:?}: the box behind the wall casts onto what it uncovered");
    // The shadows are in the images (so the pixels above depend on the casters): with
    // none drawn, the last camera's image changes.
    let (eye, target) = eyes[eyes.len() - 1];
    let elsewhere =
        Mat4::perspective_rh(0.5, 1.0, 1.0, 10.0) * Mat4::look_at_rh(Vec3::splat(500.0), Vec3::splat(520.0), Vec3::Y);
    all.render_graph(&FrameInput { cameras: &[main_camera(eye, target), sun()], targets: &[] }).unwrap();
    let shadowed = all.read_target(all_out).unwrap();
    let cameras = [main_camera(eye, target), Camera { receivers: Some(elsewhere), ..sun() }];
    all.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    let unshadowed = all.read_target(all_out).unwrap();
    let lit = differing_pixels(&shadowed, &unshadowed);
    assert!(lit > 500, "{api:?}: the shadows are in the image ({lit} pixels)");
}

#[test]
fn casters_of_what_the_camera_sees_keep_every_pixel_on_vulkan() {
    same_pixels_on(::wgpu::Backends::VULKAN);
}

#[test]
fn casters_of_what_the_camera_sees_keep_every_pixel_on_gl() {
    same_pixels_on(::wgpu::Backends::GL);
}

#[test]
fn receivers_on_the_null_backend_are_deterministic_and_ordered() {
    let cameras = [main_camera(Vec3::new(0.0, 2.0, 22.0), Vec3::new(0.0, 2.0, 0.0)), sun()];
    let input = FrameInput { cameras: &cameras, targets: &[] };
    let run = |receivers: bool, occlusion: bool, threads: usize| {
        let (mut r, _, _) = scene(Arc::new(NullBackend::new(true)), receivers, occlusion, (300, threads));
        let s = (0..3).map(|_| r.render_graph(&input).unwrap()).last().unwrap();
        (s.digest, s.receiver_culled_views, s.dispatches)
    };
    let one = run(true, true, 1);
    assert_eq!(one.1, 1, "the shadow view is culled to its receivers' casters");
    for threads in [2, 3, 8] {
        assert_eq!(run(true, true, threads), one, "{threads} threads");
    }
    // The receivers' compute pass: clear, scatter, every pyramid level above level 0.
    let without = run(false, true, 1);
    assert_eq!(without.1, 0);
    assert!(one.2 > without.2 + 2, "{} against {} dispatches", one.2, without.2);
    // Exactly: `without` is the shadow view's cull (7: four, and three that pack the
    // multi-draws for count buffers) and the opaque view's two phases (7, then its
    // pyramid and second cull); with the receivers the prepass is culled as the opaque
    // view was and the opaque view draws its visible set (`reuse_prepass_cull`), and the
    // receivers' pass adds clear, scatter and the 8 levels above level 0 of the 512² map's
    // 256² pyramid (10), then the shadow view's cull (7, moved there).
    let opaque = without.2 - 7;
    assert_eq!(one.2, 7 + opaque + 10, "{} against {} dispatches", one.2, without.2);
    // Without occlusion culling the pass draws as without receivers: the shadow view's
    // and the prepass's culls, seven dispatches each, in the frame's cull pass (the
    // opaque view draws the prepass's; without receivers nothing reads the prepass's
    // depth and the graph drops it, and the opaque view culls on its own).
    let (plain, plain_without) = (run(true, false, 1), run(false, false, 1));
    assert_eq!((plain.1, plain.2), (0, 2 * 7));
    assert_eq!(plain_without.2, 2 * 7);
}

#[test]
fn bad_receivers_are_refused_and_change_nothing() {
    let (mut r, _, _) = scene(Arc::new(NullBackend::new(true)), true, true, (20, 2));
    let cameras = [main_camera(Vec3::new(0.0, 2.0, 22.0), Vec3::ZERO), sun()];
    let input = FrameInput { cameras: &cameras, targets: &[] };
    let before = r.render_graph(&input).unwrap().digest;
    type Build = fn(&mut FrameGraph, CameraId, TargetId, TargetId, TargetId) -> Pass;
    let cases: [(&str, Build); 7] = [
        ("a forward pass", |_, main, seen, map, color| {
            Pass::scene("p", main, PassKind::Forward, Queue::Opaque)
                .color(color, LoadOp::Load, StoreOp::Store)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(seen, main)
        }),
        ("a color target", |_, main, _, map, color| {
            Pass::scene("p", main, PassKind::Shadow, Queue::All)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(color, main)
        }),
        ("an unknown camera", |_, main, seen, map, _| {
            Pass::scene("p", main, PassKind::Shadow, Queue::All)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(seen, CameraId::from_index(9))
        }),
        ("a target nothing writes", |g, main, _, map, _| {
            let never = g.target("never", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
            Pass::scene("p", main, PassKind::Shadow, Queue::All)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(never, main)
        }),
        ("its own depth", |_, main, _, map, _| {
            Pass::scene("p", main, PassKind::Shadow, Queue::All)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(map, main)
        }),
        ("a multisampled target", |g, main, _, map, _| {
            let ms =
                g.target_multisampled("ms", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output, 4);
            Pass::scene("p", main, PassKind::Shadow, Queue::All)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(ms, main)
        }),
        ("an external target", |g, main, _, map, _| {
            let ext = g.target("ext", TargetKind::External, TextureFormat::Depth32Float, TargetSize::Output);
            Pass::scene("p", main, PassKind::Shadow, Queue::All)
                .depth(map, LoadOp::Clear(1.0), StoreOp::Store)
                .receivers(ext, main)
        }),
    ];
    for (what, build) in cases {
        let mut g = FrameGraph::new();
        let main = g.camera("main");
        let color = g.target("c", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let seen = g.target("seen", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        let map = g.target("map", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        g.pass(
            Pass::scene("prepass", main, PassKind::Forward, Queue::Opaque)
                .color(color, LoadOp::Clear([0.0; 4]), StoreOp::Store)
                .depth(seen, LoadOp::Clear(1.0), StoreOp::Store),
        );
        let pass = build(&mut g, main, seen, map, color);
        g.pass(pass);
        match r.set_graph(g) {
            Err(RenderError::Graph(
                GraphError::InvalidPass { .. }
                | GraphError::UnknownCamera { camera: 9, .. }
                | GraphError::MissingInput { .. }
                | GraphError::SampledAndWritten { .. }
                | GraphError::SampledMultisampled { .. },
            )) => {}
            other => panic!("{what}: expected a graph error, got {other:?}"),
        }
    }
    let after = r.render_graph(&input).unwrap();
    assert_eq!(after.receiver_culled_views, 1, "the graph set before stays");
    let (mut fresh, _, _) = scene(Arc::new(NullBackend::new(true)), true, true, (20, 2));
    fresh.render_graph(&input).unwrap();
    assert_eq!(fresh.render_graph(&input).unwrap().digest, after.digest, "the refusals changed nothing");
    assert_ne!(before, None);
}
