//! The lit shader's `BOX_FACES` keyword: a box drawn as the three faces toward the view's
//! camera (`switchyard_city::box_faces`, mirrored per axis in the vertex stage) gives the
//! pixels of the whole box (`switchyard_city::corner_cube`) with half the triangles:
//! boxes turned about every axis and stretched unevenly, seen from above, from within
//! their height and from below the ground, lit and shadowed by an orthographic sun
//! (whose shadow pass mirrors toward its direction, not a point), on lavapipe (CPU and GPU
//! culls) and llvmpipe: the same pixels covered, shaded within one step of 255.

use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard_tests::{differing_pixels, look_camera, sun_camera, wgpu_backend};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;

/// A grid of 64 boxes, each turned and stretched its own way, drawn as `mesh` with
/// `keywords` (besides `FLAT`), and its image from `eye`.
fn image<B: Backend>(backend: Arc<B>, cull: CullOn, mesh: &MeshData, keywords: &[&str], eye: Vec3) -> Image {
    let config =
        RendererConfig { threads: 2, max_objects: 64, width: WIDTH, height: HEIGHT, cull, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(mesh).unwrap();
    let materials: Vec<MaterialHandle> = (0..4)
        .map(|m| {
            let c = [0.3 + 0.2 * m as f32, 0.8 - 0.15 * m as f32, 0.4, 1.0];
            let desc = MaterialDesc {
                shader,
                keywords: keywords.iter().map(|k| k.to_string()).collect(),
                properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color(c)),
                ..MaterialDesc::default()
            };
            r.create_material(&desc).unwrap()
        })
        .collect();
    let descs: Vec<ObjectDesc> = (0..64)
        .map(|i| {
            let f = i as f32;
            let at = Vec3::new((i % 8) as f32 * 4.0 - 14.0, 0.3 * (i % 3) as f32, (i / 8) as f32 * 4.0 - 14.0);
            let axis = Vec3::new((f * 0.7).sin(), 1.0 + (f * 0.3).cos(), (f * 1.3).cos()).normalize();
            let scale = Vec3::new(0.8 + (i % 4) as f32 * 0.5, 0.5 + (i % 5) as f32 * 0.6, 1.9 - (i % 3) as f32 * 0.4);
            ObjectDesc {
                mesh,
                material: materials[i % 4],
                transform: Mat4::from_scale_rotation_translation(scale, Quat::from_axis_angle(axis, f * 0.37), at),
                layer: 0,
                flags: CASTS_SHADOWS,
            }
        })
        .collect();
    r.insert_objects(&descs).unwrap();
    let (g, out) = switchyard_tests::shadow_and_opaque_graph(256);
    r.set_graph(g).unwrap();
    let main = look_camera(eye, Vec3::new(0.0, 0.5, 0.0), WIDTH as f32 / HEIGHT as f32, 120.0);
    let cameras = [main, sun_camera(Vec3::new(-20.0, 40.0, -10.0), 30.0, 120.0)];
    for _ in 0..2 {
        r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    }
    r.flush().unwrap();
    r.read_target(out).unwrap()
}

fn faces_draw_the_whole_box<B: Backend>(backend: Arc<B>, cull: CullOn, what: &str) {
    let (whole, faces) = (switchyard_city::corner_cube(), switchyard_city::box_faces());
    assert_eq!((faces.vertices.len(), faces.indices.len() * 2), (7, whole.indices.len()), "half the triangles");
    for eye in [Vec3::new(-24.0, 18.0, -26.0), Vec3::new(3.0, 0.6, -21.0), Vec3::new(10.0, -6.0, 19.0)] {
        let a = image(backend.clone(), cull, &whole, &["FLAT"], eye);
        let b = image(backend.clone(), cull, &faces, &["FLAT", "BOX_FACES"], eye);
        let boxes = a.pixels.chunks_exact(4).filter(|p| p[2] < 60).count();
        assert!(boxes > 500, "{what}, eye {eye}: boxes in view ({boxes} pixels)");
        // The same pixels covered (a box against the background differs by far more than
        // a step), shaded alike up to the rounding of normals derived on mirrored faces.
        let most = a.pixels.iter().zip(&b.pixels).map(|(p, q)| p.abs_diff(*q)).max();
        assert!(most <= Some(1), "{what}, eye {eye}: pixels differ by up to {most:?}");
        let differ = differing_pixels(&a, &b);
        assert!(differ * 100 <= boxes, "{what}, eye {eye}: {differ} of {boxes} box pixels a step apart");
    }
}

#[test]
fn box_faces_draw_the_whole_box_on_lavapipe() {
    let Some(b) = wgpu_backend(::wgpu::Backends::VULKAN, Encoding::CommandBuffer) else { return };
    faces_draw_the_whole_box(b.clone(), CullOn::Cpu, "lavapipe, CPU cull");
    faces_draw_the_whole_box(b, CullOn::Gpu, "lavapipe, GPU cull");
}

#[test]
fn box_faces_draw_the_whole_box_on_llvmpipe() {
    let Some(b) = wgpu_backend(::wgpu::Backends::GL, Encoding::RenderBundle) else { return };
    faces_draw_the_whole_box(b, CullOn::Cpu, "llvmpipe");
}
