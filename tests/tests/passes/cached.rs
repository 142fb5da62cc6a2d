//! A cached shadow pass (`Pass::cached`): drawn in the first frame, skipped while nothing
//! it draws from changes (its retained map keeps what it drew), drawn again the frame
//! after an object moves, is added or removed, the light moves, a material changes
//! variant, or the graph is set again; the command stream does not depend on the thread
//! count. On lavapipe and llvmpipe every frame's image equals the one drawn with the map
//! drawn every frame. A cached pass elsewhere than a shadow pass into a retained map is
//! refused with a typed error.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, differing_pixels, plain_material, wgpu_backend};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 100;

/// The sun's shadow pass into a retained map (cached with `cached`), then an opaque pass
/// sampling it.
fn graph(cached: bool) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let sun = g.camera("sun");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let size = TargetSize::Fixed { width: 256, height: 256 };
    let map = g.target("map", TargetKind::Retained, TextureFormat::Depth32Float, size);
    let mut shadow =
        Pass::scene("sun", sun, PassKind::Shadow, Queue::All).depth(map, LoadOp::Clear(1.0), StoreOp::Store);
    if cached {
        shadow = shadow.cached();
    }
    g.pass(shadow);
    g.pass(
        Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
            .color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .sample(map),
    );
    (g, out)
}

fn main_camera() -> Camera {
    switchyard_tests::look_camera(Vec3::new(0.0, 9.0, 14.0), Vec3::ZERO, WIDTH as f32 / HEIGHT as f32, 60.0)
}

fn sun(from: Vec3) -> Camera {
    switchyard_tests::sun_camera(from, 15.0, 80.0)
}

/// A ground slab and a row of casting boxes; `cull` and `threads` as given.
fn scene<B: Backend>(
    backend: Arc<B>,
    cached: bool,
    cull: CullOn,
    threads: usize,
) -> (Renderer<B>, Vec<ObjectId>, MaterialHandle, TargetId) {
    let config = RendererConfig { threads, max_objects: 64, width: WIDTH, height: HEIGHT, cull, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let ground = plain_material(&mut r, shader, [0.8, 0.8, 0.8, 1.0]);
    let boxes = plain_material(&mut r, shader, [0.9, 0.5, 0.2, 1.0]);
    let (g, out) = graph(cached);
    r.set_graph(g).unwrap();
    let mut objects = vec![ObjectDesc {
        mesh,
        material: ground,
        transform: Mat4::from_scale_rotation_translation(Vec3::new(30.0, 1.0, 30.0), Default::default(), Vec3::NEG_Y),
        layer: 0,
        flags: 0,
    }];
    objects.extend((0..6).map(|i| ObjectDesc {
        mesh,
        material: boxes,
        transform: Mat4::from_scale_rotation_translation(
            Vec3::new(1.0, 1.0 + i as f32 * 0.5, 1.0),
            Default::default(),
            Vec3::new(i as f32 * 2.5 - 6.0, 0.0, (i % 2) as f32 * 2.0),
        ),
        layer: 0,
        flags: CASTS_SHADOWS,
    }));
    let ids = r.insert_objects(&objects).unwrap();
    (r, ids, boxes, out)
}

/// What each step does to a renderer, and whether the cached pass draws in the frame
/// after it (`false`: skipped).
fn steps() -> Vec<(&'static str, bool)> {
    vec![
        ("first frame", true),
        ("nothing changed", false),
        ("nothing changed again", false),
        ("a box moved", true),
        ("still", false),
        ("the sun moved", true),
        ("still", false),
        ("a box added", true),
        ("a keyword turned on", true),
        ("a box removed", true),
        ("the graph set again", true),
        ("still", false),
    ]
}

/// Applies step `what` to `r` (whose objects are `ids`, box material `boxes`, cached
/// pass with `cached`), moving the sun where it says; the output target of a graph set
/// again.
fn apply<B: Backend>(
    r: &mut Renderer<B>,
    (ids, boxes, cached): (&mut Vec<ObjectId>, MaterialHandle, bool),
    what: &str,
    sun_at: &mut Vec3,
) -> Option<TargetId> {
    match what {
        "a box moved" => r.set_transforms(&[(ids[2], Mat4::from_translation(Vec3::new(1.0, 0.0, -3.0)))]).unwrap(),
        "the sun moved" => *sun_at = Vec3::new(-10.0, 30.0, 5.0),
        "a box added" => {
            let mesh = r.create_mesh(&cube()).unwrap();
            let transform = Mat4::from_translation(Vec3::new(3.0, 0.0, 3.0));
            let desc = ObjectDesc { mesh, material: boxes, transform, layer: 0, flags: CASTS_SHADOWS };
            ids.extend(r.insert_objects(&[desc]).unwrap());
        }
        "a keyword turned on" => r.set_material_keyword(boxes, "SPECULAR", true).unwrap(),
        "a box removed" => r.remove_objects(&[ids.remove(1)]).unwrap(),
        "the graph set again" => {
            let (g, out) = graph(cached);
            r.set_graph(g).unwrap();
            return Some(out);
        }
        _ => {}
    }
    None
}

#[test]
fn a_cached_shadow_pass_draws_only_when_its_map_may_change() {
    let run = |threads: usize, cull: CullOn| {
        let (mut r, mut ids, boxes, _) = scene(Arc::new(NullBackend::new(true)), true, cull, threads);
        let mut sun_at = Vec3::new(-20.0, 30.0, -10.0);
        let mut digests = Vec::new();
        for (what, draws) in steps() {
            apply(&mut r, (&mut ids, boxes, true), what, &mut sun_at);
            let s = r.render_graph(&FrameInput { cameras: &[main_camera(), sun(sun_at)], targets: &[] }).unwrap();
            assert_eq!(s.cached_passes, u32::from(!draws), "{cull:?}, {threads} threads: {what}");
            digests.push(s.digest);
        }
        digests
    };
    for cull in [CullOn::Cpu, CullOn::Gpu] {
        let one = run(1, cull);
        assert_eq!(one[1], one[2], "{cull:?}: two skipped frames record the same stream");
        assert_ne!(one[0], one[1], "{cull:?}: a skipped frame records less");
        for threads in [2, 3, 8] {
            assert_eq!(run(threads, cull), one, "{cull:?}: {threads} threads");
        }
    }
}

#[test]
fn a_cached_pass_elsewhere_is_refused_and_changes_nothing() {
    let (mut r, _, _, _) = scene(Arc::new(NullBackend::new(true)), true, CullOn::Cpu, 2);
    let input = FrameInput { cameras: &[main_camera(), sun(Vec3::new(-20.0, 30.0, -10.0))], targets: &[] };
    let before = r.render_graph(&input).unwrap();
    let mut bad = Vec::new();
    // A forward pass; a shadow pass into a transient map; one reading a buffer.
    for k in 0..3 {
        let mut g = FrameGraph::new();
        let main = g.camera("main");
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let kind = if k == 1 { TargetKind::Transient } else { TargetKind::Retained };
        let depth = g.target("d", kind, TextureFormat::Depth32Float, TargetSize::Output);
        let pass = match k {
            0 => Pass::scene("p", main, PassKind::Forward, Queue::Opaque).color(
                out,
                LoadOp::Clear([0.0; 4]),
                StoreOp::Store,
            ),
            _ => Pass::scene("p", main, PassKind::Shadow, Queue::All),
        };
        let mut pass = pass.depth(depth, LoadOp::Clear(1.0), StoreOp::Store).cached();
        if k == 2 {
            pass = pass.reads(g.uniform_buffer("u"));
        }
        g.pass(pass);
        if k > 0 {
            g.pass(Pass::callback("use", |_, _| {}).color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store).sample(depth));
        }
        bad.push(r.set_graph(g));
    }
    for (k, e) in bad.into_iter().enumerate() {
        assert!(matches!(e, Err(RenderError::Graph(GraphError::InvalidPass { .. }))), "case {k}: {e:?}");
    }
    let after = r.render_graph(&input).unwrap();
    assert_eq!(after.cached_passes, 1, "the graph set before stays, its map too");
    assert_ne!(before.digest, after.digest);
}

fn same_pixels_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let (mut r, mut ids, boxes, mut out) = scene(backend.clone(), true, CullOn::Cpu, 2);
    let (mut every, mut every_ids, every_boxes, mut every_out) = scene(backend, false, CullOn::Cpu, 2);
    let (mut sun_at, mut every_sun) = (Vec3::new(-20.0, 30.0, -10.0), Vec3::new(-20.0, 30.0, -10.0));
    let mut first = None;
    for (what, draws) in steps() {
        out = apply(&mut r, (&mut ids, boxes, true), what, &mut sun_at).unwrap_or(out);
        every_out = apply(&mut every, (&mut every_ids, every_boxes, false), what, &mut every_sun).unwrap_or(every_out);
        let cameras = [main_camera(), sun(sun_at)];
        let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
        assert_eq!(s.cached_passes, u32::from(!draws), "{api:?}: {what}");
        every.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
        let (a, b) = (r.read_target(out).unwrap(), every.read_target(every_out).unwrap());
        assert_eq!(differing_pixels(&a, &b), 0, "{api:?}: {what}: the same image as with the map drawn every frame");
        first.get_or_insert(a);
    }
    // The shadows are in the images: the moved sun changed the first frame's.
    let (a, last) = (first.unwrap(), r.read_target(out).unwrap());
    let changed = differing_pixels(&a, &last);
    assert!(changed > 200, "{api:?}: the shadows moved with the sun");
}

#[test]
fn a_cached_shadow_map_keeps_every_pixel_on_vulkan() {
    same_pixels_on(::wgpu::Backends::VULKAN);
}

#[test]
fn a_cached_shadow_map_keeps_every_pixel_on_gl() {
    same_pixels_on(::wgpu::Backends::GL);
}
