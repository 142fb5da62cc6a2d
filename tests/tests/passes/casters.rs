//! A shadow camera limited to the casters of a region (`Camera::receivers`): on the null
//! backend it draws the casters between the region and the light and not those beside or
//! beyond it, and a bad region is refused with a typed error that changes nothing; on
//! lavapipe and llvmpipe the image of a view whose whole frustum is the region is the same
//! pixel for pixel as with every caster drawn, with fewer casters drawn.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard_tests::{cube, plain_material, wgpu_backend};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 200;

/// The sun's shadow pass (scene pass 0) and an opaque pass sampling its map.
fn graph() -> (FrameGraph, TargetId) {
    switchyard_tests::shadow_and_opaque_graph(512)
}

/// Looking at the origin from (0, 10, 30), out to 60 units.
fn main_camera() -> Camera {
    let eye = Vec3::new(0.0, 10.0, 30.0);
    let proj = Mat4::perspective_rh(0.8, WIDTH as f32 / HEIGHT as f32, 0.5, 60.0);
    Camera {
        view_proj: proj * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 60.0,
        layer_mask: u16::MAX,
        receivers: None,
    }
}

/// The sun: an 80-unit orthographic box from `from` towards the origin.
fn sun(from: Vec3) -> Camera {
    let view_proj =
        Mat4::orthographic_rh(-40.0, 40.0, -40.0, 40.0, 1.0, 200.0) * Mat4::look_at_rh(from, Vec3::ZERO, Vec3::Z);
    Camera { view_proj, eye: from, far: 200.0, layer_mask: u16::MAX, receivers: None }
}

fn renderer<B: Backend>(backend: Arc<B>) -> (Renderer<B>, MaterialHandle, MeshHandle, TargetId) {
    let config = RendererConfig { threads: 2, max_objects: 4096, width: WIDTH, height: HEIGHT, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]);
    let mesh = r.create_mesh(&cube()).unwrap();
    let (g, out) = graph();
    r.set_graph(g).unwrap();
    (r, material, mesh, out)
}

#[test]
fn a_shadow_camera_with_receivers_draws_only_the_casters_that_can_shade_them() {
    let (mut r, material, mesh, _) = renderer(Arc::new(NullBackend::new(false)));
    let at = |x, y, z| ObjectDesc {
        mesh,
        material,
        transform: Mat4::from_translation(Vec3::new(x, y, z)),
        layer: 0,
        flags: CASTS_SHADOWS,
    };
    r.insert_objects(&[
        at(0.0, 0.0, 0.0),     // in the view
        at(0.0, 30.0, 0.0),    // above it, out of the view: its shadow falls into it
        at(35.0, 0.0, 35.0),   // behind the camera
        at(-35.0, 2.0, -35.0), // past the view's far plane
        at(0.0, 0.0, 15.0),    // in the view, near the camera
    ])
    .unwrap();
    // The sun straight overhead: every cube is in its box.
    let overhead = sun(Vec3::new(0.0, 100.0, 0.0));
    let all = r.render_graph(&FrameInput { cameras: &[main_camera(), overhead], targets: &[] }).unwrap();
    assert_eq!(all.visible[0], 5, "the sun's box holds every cube");
    let limited = Camera { receivers: Some(main_camera().view_proj), ..overhead };
    let cameras = [main_camera(), limited];
    let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    assert_eq!(s.visible[0], 3, "the two cubes in the view and the one above them");
    assert_eq!(s.visible[1], all.visible[1], "the main view is not limited");
    // A cascade's slice, the view from 0.5 to 20 units: the near cube alone shades it.
    let slice = Mat4::perspective_rh(0.8, WIDTH as f32 / HEIGHT as f32, 0.5, 20.0)
        * Mat4::look_at_rh(main_camera().eye, Vec3::ZERO, Vec3::Y);
    let near = Camera { receivers: Some(slice), ..overhead };
    let s = r.render_graph(&FrameInput { cameras: &[main_camera(), near], targets: &[] }).unwrap();
    assert_eq!(s.visible[0], 1, "only the near cube");
}

#[test]
fn a_bad_receivers_matrix_is_refused_and_changes_nothing() {
    let (mut r, material, mesh, _) = renderer(Arc::new(NullBackend::new(false)));
    r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS }])
        .unwrap();
    let overhead = sun(Vec3::new(0.0, 100.0, 0.0));
    let first = r.render_graph(&FrameInput { cameras: &[main_camera(), overhead], targets: &[] }).unwrap();
    let mut nan = main_camera().view_proj;
    nan.x_axis.x = f32::NAN;
    let flat = Camera { view_proj: Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0)), ..overhead };
    for (bad, why) in [
        (Camera { receivers: Some(nan), ..overhead }, "not finite"),
        (Camera { receivers: Some(main_camera().view_proj), ..flat }, "projects from no point"),
    ] {
        match r.render_graph(&FrameInput { cameras: &[main_camera(), bad], targets: &[] }) {
            Err(RenderError::InvalidView { index: 1, what }) => assert!(what.contains(why), "{what}"),
            other => panic!("{why}: expected InvalidView for camera 1, got {other:?}"),
        }
    }
    let again = r.render_graph(&FrameInput { cameras: &[main_camera(), overhead], targets: &[] }).unwrap();
    assert_eq!(again.digest, first.digest, "the refused frames changed nothing");
    assert_eq!(again.frame, first.frame + 1, "the refused frames were not counted");
}

/// Boxes scattered over a square larger than the sun's box, all casting shadows; the
/// sun from the north-west, high. With the main view's whole frustum as the receivers,
/// fewer casters are drawn and every pixel stays the same.
fn same_pixels_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let (mut r, material, mesh, out) = renderer(backend);
    let mut rng = rand_pcg::Pcg32::seed_from_u64(8);
    let objects: Vec<ObjectDesc> = (0..1500)
        .map(|_| {
            let at = Vec3::new(rng.gen_range(-70.0..70.0), rng.gen_range(0.0..6.0), rng.gen_range(-70.0..70.0));
            let scale = Vec3::new(rng.gen_range(0.5..2.5), rng.gen_range(0.5..5.0), rng.gen_range(0.5..2.5));
            ObjectDesc {
                mesh,
                material,
                transform: Mat4::from_scale_rotation_translation(scale, glam::Quat::from_rotation_y(rng.gen()), at),
                layer: 0,
                flags: CASTS_SHADOWS,
            }
        })
        .collect();
    r.insert_objects(&objects).unwrap();
    let sun = sun(Vec3::new(-50.0, 70.0, -30.0));
    let mut frame = |cameras: &[Camera]| {
        let s = r.render_graph(&FrameInput { cameras, targets: &[] }).unwrap();
        (s.visible[0], r.read_target(out).unwrap())
    };
    let (all, full) = frame(&[main_camera(), sun]);
    let (some, limited) = frame(&[main_camera(), Camera { receivers: Some(main_camera().view_proj), ..sun }]);
    assert!(some * 4 < all * 3, "{api:?}: {some} of {all} casters drawn");
    assert!(some > 50, "{api:?}: {some} casters drawn");
    let differ =
        (0..WIDTH * HEIGHT).filter(|&i| full.pixel(i % WIDTH, i / WIDTH) != limited.pixel(i % WIDTH, i / WIDTH));
    assert_eq!(differ.count(), 0, "{api:?}: the same image with {some} of {all} casters");
    // Receivers far from every box: no caster drawn, and the view loses its shadows (so
    // the pixels above depend on the casters).
    let elsewhere =
        Mat4::perspective_rh(0.5, 1.0, 1.0, 10.0) * Mat4::look_at_rh(Vec3::splat(500.0), Vec3::splat(520.0), Vec3::Y);
    let (none, unshadowed) = frame(&[main_camera(), Camera { receivers: Some(elsewhere), ..sun }]);
    assert_eq!(none, 0, "{api:?}: no caster shades a region far away");
    let lit =
        (0..WIDTH * HEIGHT).filter(|&i| full.pixel(i % WIDTH, i / WIDTH) != unshadowed.pixel(i % WIDTH, i / WIDTH));
    assert!(lit.count() > 1000, "{api:?}: the shadows are in the image");
}

#[test]
fn limiting_casters_to_the_view_keeps_its_pixels_on_vulkan() {
    same_pixels_on(::wgpu::Backends::VULKAN);
}

#[test]
fn limiting_casters_to_the_view_keeps_its_pixels_on_gl() {
    same_pixels_on(::wgpu::Backends::GL);
}
