//! Occlusion culling (`RendererConfig::occlusion`): on lavapipe and llvmpipe an object
//! behind a wall is drawn by neither phase (records read back), one the wall stops hiding
//! is drawn by the second phase in that same frame, and the images equal frustum culling's
//! pixel for pixel; over a scripted flight (10,000 frames on lavapipe, fewer on llvmpipe)
//! every frame's image equals frustum culling's, so no visible object is ever missing. On
//! the null backend: the split pass's command stream does not depend on the thread count,
//! and what cannot be split (multisampled depth, an engine's depth texture) or culled by
//! occlusion (no GPU culling, too few storage buffers) falls back with the reason.

use std::collections::HashSet;
use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use rand::{Rng, SeedableRng};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, plain_material, wgpu_backend};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 96;

/// One opaque forward pass into a retained color target over a transient depth.
fn graph(samples: u32) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let (kind, depth_format) = (TargetKind::Transient, TextureFormat::Depth32Float);
    let depth = g.target_multisampled("depth", kind, depth_format, TargetSize::Output, samples);
    let mut opaque = Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque);
    if samples > 1 {
        let ms = g.target_multisampled("ms", kind, TextureFormat::Rgba8UnormSrgb, TargetSize::Output, samples);
        opaque = opaque.color(ms, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Discard).resolve(out);
    } else {
        opaque = opaque.color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store);
    }
    g.pass(opaque.depth(depth, LoadOp::Clear(1.0), StoreOp::Discard));
    (g, out)
}

fn camera(eye: Vec3, target: Vec3) -> Camera {
    let proj = Mat4::perspective_rh(0.8, WIDTH as f32 / HEIGHT as f32, 0.5, 80.0);
    Camera {
        view_proj: proj * Mat4::look_at_rh(eye, target, Vec3::Y),
        eye,
        far: 80.0,
        layer_mask: u16::MAX,
        receivers: None,
    }
}

/// The objects of [`scene`]: a wall in the middle, a box right behind it, a box in front
/// of it, two beside it, then `field` boxes scattered behind and around it.
const WALL: usize = 0;
const HIDDEN: usize = 1;
const FRONT: usize = 2;

fn wall() -> Mat4 {
    Mat4::from_scale_rotation_translation(Vec3::new(6.0, 8.0, 0.4), Quat::IDENTITY, Vec3::new(0.0, -3.0, 4.0))
}

/// The scene and its graph on `backend`, culled on the GPU, by occlusion too with
/// `occlusion`.
fn scene<B: Backend>(
    backend: Arc<B>,
    occlusion: bool,
    field: usize,
    (samples, threads): (u32, usize),
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
        plain_material(&mut r, shader, [0.5, 0.5, 0.9, 1.0]),
    ];
    let (g, out) = graph(samples);
    r.set_graph(g).unwrap();
    let at = |x, y, z, s| Mat4::from_scale_rotation_translation(Vec3::splat(s), Quat::IDENTITY, Vec3::new(x, y, z));
    let mut places =
        vec![wall(), at(0.0, 0.0, -2.0, 1.0), at(0.3, 0.0, 7.0, 0.8), at(-6.5, 0.0, 0.0, 1.0), at(6.5, 0.0, 0.0, 1.0)];
    let mut rng = rand_pcg::Pcg32::seed_from_u64(9);
    places.extend((0..field).map(|_| {
        let p = Vec3::new(rng.gen_range(-14.0..14.0), rng.gen_range(-1.0..2.0), rng.gen_range(-30.0..3.0));
        let s = Vec3::new(rng.gen_range(0.3..1.5), rng.gen_range(0.3..2.5), rng.gen_range(0.3..1.5));
        Mat4::from_scale_rotation_translation(s, Quat::from_rotation_y(rng.gen_range(0.0..3.0)), p)
    }));
    let objects: Vec<ObjectDesc> = places
        .iter()
        .enumerate()
        .map(|(i, &transform)| ObjectDesc { mesh, material: materials[i % 3], transform, layer: 0, flags: 0 })
        .collect();
    let ids = r.insert_objects(&objects).unwrap();
    (r, ids, out)
}

/// The dense object indices each phase drew in the last frame, read back.
fn drawn<B: Backend>(r: &Renderer<B>) -> (HashSet<u32>, HashSet<u32>) {
    let g = r.gpu_cull_view(0).expect("the opaque view is culled on the GPU");
    assert!(g.occluded, "the opaque view is culled by occlusion");
    let (b, buckets, n) = (r.backend(), g.starts.len() - 1, g.candidates.len());
    let words = |buffer, len: usize| -> Vec<u32> {
        bytemuck::cast_slice(&b.read_buffer(buffer, 0, (len.max(1) * 4) as u64).expect("read back")).to_vec()
    };
    let args = words(g.args, 2 * buckets * 5);
    let instances = words(g.instances, 2 * n);
    let phase = |records: std::ops::Range<usize>| -> HashSet<u32> {
        let mut set = HashSet::new();
        for k in records {
            let (count, first) = (args[5 * k + 1] as usize, args[5 * k + 4] as usize);
            set.extend(&instances[first..first + count]);
        }
        set
    };
    (phase(0..buckets), phase(buckets..2 * buckets))
}

fn differing(a: &Image, b: &Image) -> usize {
    (0..a.width * a.height).filter(|&i| a.pixel(i % a.width, i / a.width) != b.pixel(i % a.width, i / a.width)).count()
}

fn hidden_and_uncovered_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let (mut r, ids, out) = scene(backend.clone(), true, 200, (1, 2));
    if !r.occlusion() {
        assert!(std::env::var_os("CI").is_none(), "{api:?}: no occlusion culling on CI: {:?}", r.occlusion_fallback());
        eprintln!("skipping: {api:?} cannot cull by occlusion: {:?}", r.occlusion_fallback());
        return;
    }
    let (mut f, f_ids, f_out) = scene(backend, false, 200, (1, 2));
    let cameras = [camera(Vec3::new(0.0, 1.0, 12.0), Vec3::new(0.0, 1.0, 0.0))];
    let input = FrameInput { cameras: &cameras, targets: &[] };
    let dense = |r: &Renderer<_>, id| r.scene().dense_index(id).unwrap();
    let (hidden, front, the_wall) = (dense(&r, ids[HIDDEN]), dense(&r, ids[FRONT]), dense(&r, ids[WALL]));
    let frame = |r: &mut Renderer<_>, f: &mut Renderer<_>, what: &str| {
        let s = r.render_graph(&input).unwrap();
        assert_eq!(s.occluded_views, 1, "{what}");
        f.render_graph(&input).unwrap();
        let (a, b) = (r.read_target(out).unwrap(), f.read_target(f_out).unwrap());
        assert_eq!(differing(&a, &b), 0, "{api:?}: {what}: the image equals frustum culling's");
        drawn(r)
    };
    // The first frame has no bits: phase 1 draws everything in the frustum.
    let (first, second) = frame(&mut r, &mut f, "first frame");
    assert!(first.contains(&hidden) && first.contains(&the_wall) && second.is_empty());
    // Now the box behind the wall was found hidden: neither phase draws it.
    let (first, second) = frame(&mut r, &mut f, "second frame");
    assert!(first.contains(&front) && first.contains(&the_wall), "{api:?}: what was visible is drawn first");
    assert!(!first.contains(&hidden) && !second.contains(&hidden), "{api:?}: the hidden box is not drawn");
    let counts = r.gpu_cull_counts(0).unwrap().expect("culled on the GPU");
    assert_eq!(
        counts,
        GpuCullCounts { candidates: ids.len() as u32, first_phase: first.len() as u32, second_phase: 0 }
    );
    let hidden_count = (0..ids.len() as u32).filter(|i| !first.contains(i) && !second.contains(i)).count();
    assert!(hidden_count > 20, "{api:?}: the wall hides boxes of the field ({hidden_count} culled)");
    // The wall goes away: the box is drawn by the second phase of this very frame.
    let away = Mat4::from_translation(Vec3::new(0.0, -40.0, 0.0)) * wall();
    r.set_transforms(&[(ids[WALL], away)]).unwrap();
    f.set_transforms(&[(f_ids[WALL], away)]).unwrap();
    let (first, second) = frame(&mut r, &mut f, "wall gone");
    assert!(!first.contains(&hidden) && second.contains(&hidden), "{api:?}: the uncovered box is drawn at once");
    assert_eq!(r.gpu_cull_counts(0).unwrap().map(|c| c.second_phase), Some(second.len() as u32));
    assert_eq!(r.gpu_cull_counts(1).unwrap(), None, "no such view");
    let (first, second) = frame(&mut r, &mut f, "after");
    assert!(first.contains(&hidden) && !second.contains(&hidden), "{api:?}: then by the first phase");
}

#[test]
fn hidden_objects_are_not_drawn_and_uncovered_ones_appear_at_once_on_vulkan() {
    hidden_and_uncovered_on(::wgpu::Backends::VULKAN);
}

#[test]
fn hidden_objects_are_not_drawn_and_uncovered_ones_appear_at_once_on_gl() {
    hidden_and_uncovered_on(::wgpu::Backends::GL);
}

/// A leg of a scripted flight through the field and around the wall (frames `legs`): a
/// camera circling, rising and turning, with the wall and a few boxes moving, and the
/// output resized halfway; every image against frustum culling's.
fn flight_leg(api: ::wgpu::Backends, legs: std::ops::Range<u32>) {
    let Some(backend) = wgpu_backend(api, Encoding::CommandBuffer) else { return };
    let (mut r, ids, out) = scene(backend.clone(), true, 300, (1, 2));
    if !r.occlusion() {
        assert!(std::env::var_os("CI").is_none(), "{api:?}: no occlusion culling on CI");
        return;
    }
    let (mut f, f_ids, f_out) = scene(backend, false, 300, (1, 2));
    let (half, mut culled) = (legs.start + legs.len() as u32 / 2, 0);
    for frame in legs {
        let t = frame as f32 * 0.013;
        let eye = Vec3::new(16.0 * t.cos(), 1.0 + 2.5 * (t * 0.7).sin().abs(), 8.0 + 14.0 * t.sin());
        let look = Vec3::new(3.0 * (t * 1.3).sin(), 0.5, -8.0);
        let cameras = [camera(eye, look)];
        let input = FrameInput { cameras: &cameras, targets: &[] };
        if frame % 97 == 0 {
            // The wall slides sideways; a few boxes jump.
            let wall = Mat4::from_translation(Vec3::new(8.0 * (t * 3.0).sin(), 0.0, 0.0)) * wall();
            let mut rng = rand_pcg::Pcg32::seed_from_u64(u64::from(frame));
            let k = 5 + rng.gen_range(0..300);
            let jump = Mat4::from_translation(Vec3::new(rng.gen_range(-10.0..10.0), 0.0, rng.gen_range(-25.0..0.0)));
            r.set_transforms(&[(ids[WALL], wall), (ids[k], jump)]).unwrap();
            f.set_transforms(&[(f_ids[WALL], wall), (f_ids[k], jump)]).unwrap();
        }
        if frame == half {
            // An odd size: a new depth target, a pyramid of other levels.
            r.resize(WIDTH * 3 / 4 + 1, HEIGHT + 7).unwrap();
            f.resize(WIDTH * 3 / 4 + 1, HEIGHT + 7).unwrap();
        }
        r.render_graph(&input).unwrap();
        f.render_graph(&input).unwrap();
        let (a, b) = (r.read_target(out).unwrap(), f.read_target(f_out).unwrap());
        assert_eq!(differing(&a, &b), 0, "{api:?}: frame {frame}: the image equals frustum culling's");
        if frame % 100 == 50 {
            let (first, second) = drawn(&r);
            culled += ids.len() - first.union(&second).count();
        }
    }
    assert!(culled > 0, "{api:?}: the flight hides something now and then");
}

/// Frames per leg of the flight.
const LEG: u32 = 1000;

/// The 10,000-frame flight on lavapipe, a leg of 1,000 frames per process
/// ([`flight_leg_on_vulkan`]), each on a fresh device with the scene as built: lavapipe's
/// CPU memory grows by about 0.4 MB a frame with indirect draws and compute passes and is
/// given back only when the process ends (a known lavapipe leak, pygfx/wgpu-py#306; the
/// renderer's live objects stay flat), so one process would take gigabytes. Legs run two
/// at a time (each starts from the scene as built, so they are independent).
#[test]
fn no_visible_object_is_missing_over_a_10000_frame_flight_on_vulkan() {
    let frames: u32 = std::env::var("FLIGHT").map_or(10_000, |v| v.parse().unwrap());
    let legs: Vec<u32> = (0..frames.div_ceil(LEG)).collect();
    for pair in legs.chunks(2) {
        let children: Vec<_> = pair
            .iter()
            .map(|&leg| {
                let child = std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["occlusion::flight_leg_on_vulkan", "--exact", "--ignored", "--test-threads=1"])
                    .env("FLIGHT_LEG", format!("{}..{}", leg * LEG, ((leg + 1) * LEG).min(frames)))
                    .spawn()
                    .unwrap();
                (leg, child)
            })
            .collect();
        // Both waited for before a failure is reported: no leg outlives the test.
        let done: Vec<_> = children.into_iter().map(|(leg, mut child)| (leg, child.wait().unwrap())).collect();
        for (leg, status) in done {
            assert!(status.success(), "leg {leg} of the flight");
        }
    }
}

#[test]
#[ignore = "one leg of the 10,000-frame flight, which runs it in a process of its own"]
fn flight_leg_on_vulkan() {
    let leg = std::env::var("FLIGHT_LEG").unwrap_or_else(|_| format!("0..{LEG}"));
    let (start, end) = leg.split_once("..").expect("FLIGHT_LEG is START..END");
    flight_leg(::wgpu::Backends::VULKAN, start.parse().unwrap()..end.parse().unwrap());
}

#[test]
fn no_visible_object_is_missing_over_a_flight_on_gl() {
    flight_leg(::wgpu::Backends::GL, 0..LEG);
}

#[test]
fn split_digests_do_not_depend_on_threads() {
    let cameras = [camera(Vec3::new(0.0, 1.0, 12.0), Vec3::new(0.0, 1.0, 0.0))];
    let digests = |threads| {
        let backend = Arc::new(NullBackend::new(false));
        let (mut r, ids, _) = scene(backend, true, 2000, (1, threads));
        assert!(r.occlusion(), "{:?}", r.occlusion_fallback());
        let mut out = Vec::new();
        for f in 0..4 {
            if f == 2 {
                r.set_transforms(&[(ids[WALL], Mat4::IDENTITY)]).unwrap();
            }
            let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
            assert_eq!((s.gpu_culled_views, s.occluded_views), (1, 1));
            out.push(s.digest.unwrap());
        }
        out
    };
    let one = digests(1);
    assert_eq!(one, digests(3));
    assert!(one.windows(2).all(|w| w[0] == w[1]), "the stream does not depend on moves: {one:x?}");
}

#[test]
fn what_cannot_be_culled_by_occlusion_falls_back_and_says_why() {
    let cameras = [camera(Vec3::new(0.0, 1.0, 12.0), Vec3::new(0.0, 1.0, 0.0))];
    let input = FrameInput { cameras: &cameras, targets: &[] };
    let caps = NullBackend::new(false).caps();
    // Too few storage buffers for the second cull: frustum culling on the GPU only.
    let (mut r, _, _) =
        scene(Arc::new(NullBackend::with_caps(Caps { max_storage_buffers_per_stage: 5, ..caps })), true, 50, (1, 2));
    assert!(r.gpu_cull() && !r.occlusion());
    assert!(r.occlusion_fallback().unwrap().contains("six storage buffers"), "{:?}", r.occlusion_fallback());
    let s = r.render_graph(&input).unwrap();
    assert_eq!((s.gpu_culled_views, s.occluded_views), (1, 0));
    let frustum_only = s.digest;
    // The null backend reads nothing back: a typed refusal.
    assert!(matches!(r.gpu_cull_counts(0), Err(RenderError::Readback(ReadbackError::Unsupported(_)))));
    // No compute: no GPU culling, so no occlusion either, with both reasons.
    let (r, _, _) = scene(Arc::new(NullBackend::with_caps(Caps { compute: false, ..caps })), true, 50, (1, 2));
    assert!(!r.gpu_cull() && !r.occlusion() && r.cull_fallback().is_some());
    assert!(r.occlusion_fallback().unwrap().contains("needs GPU culling"));
    assert!(occlusion_support(&Caps { max_storage_buffers_per_stage: 5, ..caps }).is_err());
    // Asked for nothing: no note.
    let (mut r, _, _) =
        scene(Arc::new(NullBackend::with_caps(Caps { max_storage_buffers_per_stage: 5, ..caps })), false, 50, (1, 2));
    assert_eq!((r.occlusion(), r.occlusion_fallback()), (false, None));
    assert_eq!(r.render_graph(&input).unwrap().digest, frustum_only, "the same stream as frustum culling");
    // A multisampled pass is not split: it renders as frustum culling does.
    let (mut r, _, _) = scene(Arc::new(NullBackend::new(false)), true, 50, (4, 2));
    assert!(r.occlusion());
    let s = r.render_graph(&input).unwrap();
    assert_eq!((s.gpu_culled_views, s.occluded_views), (1, 0));
    let (mut f, _, _) = scene(Arc::new(NullBackend::new(false)), false, 50, (4, 2));
    let plain = f.render_graph(&input).unwrap();
    // (Handles differ: the renderer made the pyramid's objects.)
    assert_eq!((s.dispatches, s.chunks, s.passes[0]), (plain.dispatches, plain.chunks, plain.passes[0]));
}

#[test]
fn a_split_pass_counts_the_extra_store_and_load_and_keeps_its_depth() {
    let cameras = [camera(Vec3::new(0.0, 1.0, 12.0), Vec3::new(0.0, 1.0, 0.0))];
    let input = FrameInput { cameras: &cameras, targets: &[] };
    let traffic = |occlusion| {
        let (mut r, _, _) = scene(Arc::new(NullBackend::new(false)), occlusion, 50, (1, 2));
        let s = r.render_graph(&input).unwrap();
        (s.passes[0], s.target_bytes)
    };
    let ((split, split_bytes), (plain, plain_bytes)) = (traffic(true), traffic(false));
    let (color, depth) = (u64::from(WIDTH * HEIGHT) * 4, u64::from(WIDTH * HEIGHT) * 4);
    // Color: stored by both halves, loaded by the second; depth: stored by the first,
    // loaded by the second (the pass discards it otherwise).
    assert_eq!(plain.stored, color);
    assert_eq!(split.stored, 2 * color + depth);
    assert_eq!(split.loaded, plain.loaded + color + depth);
    assert_eq!(split_bytes, plain_bytes, "the depth target takes memory either way here");
}
