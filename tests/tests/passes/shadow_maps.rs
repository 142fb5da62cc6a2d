//! Four shadow maps per forward pass (`MAX_SHADOW_MAPS`): on lavapipe and llvmpipe, the sun's
//! map bound as the fourth gives the pixels it gives as the first (the other three see
//! nothing and shadow nothing), and those differ from a frame without shadows; a fifth map
//! is a typed error.

use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{cube, cube_grid, plain_material, wgpu_backend};

const SIDE: u32 = 96;

/// `maps` shadow passes, the sun's at `sun_at`, the others of cameras that see no layer; a
/// forward pass sampling all of them.
fn graph(maps: usize, sun_at: usize) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let sun = g.camera("sun");
    let blind = g.camera("blind");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let mut forward = Pass::scene("forward", main, PassKind::Forward, Queue::All)
        .color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store)
        .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard);
    for m in 0..maps {
        let size = TargetSize::Fixed { width: 256, height: 256 };
        let map = g.target(format!("map{m}"), TargetKind::Transient, TextureFormat::Depth32Float, size);
        let camera = if m == sun_at { sun } else { blind };
        g.pass(Pass::scene(format!("shadow{m}"), camera, PassKind::Shadow, Queue::All).depth(
            map,
            LoadOp::Clear(1.0),
            StoreOp::Store,
        ));
        forward = forward.sample(map);
    }
    g.pass(forward);
    (g, out)
}

fn scene<B: Backend>(backend: Arc<B>) -> (Renderer<B>, [Camera; 3]) {
    let config = RendererConfig { threads: 2, max_objects: 64, width: SIDE, height: SIDE, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&switchyard::ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let material = plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]);
    let views = cube_grid(&mut r, mesh, &[material]);
    // A floor for the shadows to fall on.
    let floor = glam::Mat4::from_scale_rotation_translation(
        glam::Vec3::new(14.0, 0.1, 14.0),
        glam::Quat::IDENTITY,
        glam::Vec3::new(0.0, -0.1, 0.0),
    );
    r.insert_objects(&[ObjectDesc { mesh, material, transform: floor, layer: 0, flags: CASTS_SHADOWS }]).unwrap();
    // Shade with the sun's direction, so its map falls where its light comes from.
    r.set_lighting(Lighting { direction: -views[1].eye, ..r.lighting() });
    let camera =
        |v: &View, mask| Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: mask, receivers: None };
    (r, [camera(&views[0], u16::MAX), camera(&views[1], u16::MAX), camera(&views[1], 0)])
}

#[test]
fn a_fifth_shadow_map_is_a_typed_error() {
    let (mut r, cameras) = scene(Arc::new(NullBackend::new(true)));
    r.set_graph(graph(MAX_SHADOW_MAPS, 0).0).unwrap();
    let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    assert_eq!(s.views, MAX_SHADOW_MAPS as u32 + 1);
    match r.set_graph(graph(MAX_SHADOW_MAPS + 1, 0).0) {
        Err(RenderError::Graph(GraphError::InvalidPass { pass, what })) => {
            assert_eq!(pass, "forward");
            assert!(what.contains("MAX_SHADOW_MAPS"), "{what}");
        }
        other => panic!("expected InvalidPass, got {other:?}"),
    }
    assert_eq!(r.pass_names().len(), MAX_SHADOW_MAPS + 1, "the graph before stays");
}

fn gpu_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let (mut r, cameras) = scene(backend);
    let mut render = |maps, sun_at| {
        let (g, out) = graph(maps, sun_at);
        r.set_graph(g).unwrap();
        r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
        r.read_target(out).unwrap()
    };
    let first = render(1, 0);
    let fourth = render(4, 3);
    let unshadowed = render(4, 4);
    if let Some(dir) = std::env::var_os("SHADOW_PNG") {
        for (name, img) in [("first", &first), ("unshadowed", &unshadowed)] {
            let path = std::path::Path::new(&dir).join(format!("{name}-{api:?}.ppm"));
            let mut ppm = format!("P6 {SIDE} {SIDE} 255\n").into_bytes();
            ppm.extend(img.pixels.chunks(4).flat_map(|p| [p[0], p[1], p[2]]));
            std::fs::write(path, ppm).unwrap();
        }
    }
    assert_eq!(first, fourth, "{api:?}: the sun's map gives the same shadows as map 0 and as map 3");
    let differ = (0..SIDE * SIDE).filter(|&i| first.pixel(i % SIDE, i / SIDE) != unshadowed.pixel(i % SIDE, i / SIDE));
    let differ = differ.count();
    assert!(differ > 30, "{api:?}: shadows darken {differ} pixels against maps that see nothing");
}

#[test]
fn the_fourth_shadow_map_shadows_on_vulkan() {
    gpu_on(::wgpu::Backends::VULKAN);
}

#[test]
fn the_fourth_shadow_map_shadows_on_gl() {
    gpu_on(::wgpu::Backends::GL);
}
