//! The lit shader's `BOX_FACES` keyword: a box drawn as the three faces toward the view's
//! camera (`switchyard_city::box_faces`, mirrored per axis in the vertex stage) gives the
//! pixels of the whole box (`switchyard_city::corner_cube`) with half the triangles:
//! boxes turned about every axis and stretched unevenly, seen from above, from within
//! their height and from below the ground, lit and shadowed by an orthographic sun
//! (whose shadow pass mirrors toward its direction, not a point), on lavapipe (CPU and GPU
//! culls) and llvmpipe: the same pixels covered, shaded within one step of 255. And
//! `MeshData::welded_flat`: a flat-shaded box of 24 vertices welded to its 8 corners and
//! drawn with `FLAT` gives the pixels of the 24 with their normals; `UNTEXTURED` (no uv
//! among the vertex outputs) gives the pixels of the white texture's base color.

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
        // Up to the rounding of normals derived on mirrored faces.
        same_boxes(&a, &b, &format!("{what}, eye {eye}"));
    }
}

/// `a` and `b` cover the same pixels (a box against the background differs by far more
/// than a step), with enough boxes in view, shaded alike within one step in at most 1 %
/// of the boxes' pixels.
fn same_boxes(a: &Image, b: &Image, what: &str) {
    let boxes = a.pixels.chunks_exact(4).filter(|p| p[2] < 60).count();
    assert!(boxes > 500, "{what}: boxes in view ({boxes} pixels)");
    let most = a.pixels.iter().zip(&b.pixels).map(|(p, q)| p.abs_diff(*q)).max();
    assert!(most <= Some(1), "{what}: pixels differ by up to {most:?}");
    let differ = differing_pixels(a, b);
    assert!(differ * 100 <= boxes, "{what}: {differ} of {boxes} box pixels a step apart");
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

/// `box_mesh`'s 24 vertices with every uv at 0 (as the `--write-cube-grid` file's cube,
/// which has none): flat-shaded, three vertices per corner, one for each face that meets there.
fn box_without_uvs() -> MeshData {
    let mut m = switchyard_city::box_mesh(1.0, 1.0, 1.0);
    m.vertices.iter_mut().for_each(|v| v.uv = [0.0, 0.0]);
    m
}

#[test]
fn welding_keeps_every_corner_and_refuses_what_is_not_flat() {
    let corner = |m: &MeshData, i: u32| {
        let v = m.vertices[i as usize];
        (v.position, v.uv)
    };
    // Three faces meet at each of the 8 corners; with its uvs a corner keeps a vertex
    // per distinct uv.
    for (mesh, vertices) in [(box_without_uvs(), 8), (switchyard_city::box_mesh(1.0, 2.0, 3.0), 20)] {
        let welded = mesh.welded_flat().expect("a box is flat-shaded");
        assert_eq!(welded.vertices.len(), vertices);
        assert_eq!(welded.indices.len(), mesh.indices.len());
        for (&i, &j) in mesh.indices.iter().zip(&welded.indices) {
            assert_eq!(corner(&mesh, i), corner(&welded, j));
        }
    }
    // Normals out of the corners (smooth), one normal turned, a normal against the
    // winding, a triangle of no area, a bad index, a non-finite number: not welded.
    let mut turned = box_without_uvs();
    turned.vertices[5].normal = [0.1, 1.0, 0.0];
    let mut flipped = box_without_uvs();
    flipped.indices.swap(0, 1);
    let mut flat = box_without_uvs();
    flat.indices[2] = flat.indices[1];
    let mut out_of_range = box_without_uvs();
    out_of_range.indices[7] = 24;
    let mut nan = box_without_uvs();
    nan.vertices[3].position[1] = f32::NAN;
    for (what, mesh) in [
        ("smooth", switchyard_city::corner_cube()),
        ("turned", turned),
        ("against the winding", flipped),
        ("no area", flat),
        ("index", out_of_range),
        ("nan", nan),
        ("empty", MeshData::default()),
    ] {
        assert_eq!(mesh.welded_flat(), None, "{what}");
    }
    // Nothing to weld: one triangle.
    let tri = MeshData {
        vertices: [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
            .map(|position| Vertex { position, normal: [0.0, 0.0, 1.0], uv: [0.0, 0.0] })
            .to_vec(),
        indices: vec![0, 1, 2],
    };
    assert_eq!(tri.welded_flat(), None);
}

/// Meshes of triangles between a few grid points (so corners repeat), each triangle with
/// its vertices' normals its face's or turned, uvs from two values: `welded_flat` gives
/// `None` or a mesh of fewer vertices whose every index names its old position and uv,
/// `Some` exactly where every triangle is flat-shaded, has area and some two vertices weld.
#[test]
fn welding_random_meshes_keeps_their_corners() {
    use proptest::prelude::*;
    let triangle = (prop::array::uniform3((0u8..3, 0u8..3, 0u8..2, 0u8..2)), any::<bool>());
    proptest!(ProptestConfig::with_cases(256), |(tris in prop::collection::vec(triangle, 1..12))| {
        let mut mesh = MeshData::default();
        let (mut flat, mut area) = (true, true);
        for (corners, turned) in &tris {
            let p = corners.map(|(x, y, z, _)| Vec3::new(f32::from(x), f32::from(y), f32::from(z)));
            let face = (p[1] - p[0]).cross(p[2] - p[0]);
            area &= face.length() > 1e-3;
            flat &= !turned;
            let normal = if *turned { Vec3::new(0.3, 0.9, 0.1) } else { face.normalize_or_zero() };
            for (k, &(_, _, _, u)) in corners.iter().enumerate() {
                mesh.indices.push(mesh.vertices.len() as u32);
                mesh.vertices.push(Vertex { position: p[k].to_array(), normal: normal.to_array(), uv: [f32::from(u), 0.0] });
            }
        }
        let key = |v: &Vertex| (v.position.map(f32::to_bits), v.uv.map(f32::to_bits));
        let distinct = mesh.vertices.iter().map(key).collect::<std::collections::HashSet<_>>().len();
        match mesh.welded_flat() {
            Some(w) => {
                prop_assert!(flat && area && distinct < mesh.vertices.len());
                prop_assert_eq!(w.vertices.len(), distinct);
                prop_assert_eq!(w.indices.len(), mesh.indices.len());
                for (&i, &j) in mesh.indices.iter().zip(&w.indices) {
                    prop_assert_eq!(key(&mesh.vertices[i as usize]), key(&w.vertices[j as usize]));
                }
            }
            None => prop_assert!(!(flat && area && distinct < mesh.vertices.len())),
        }
    });
}

fn welded_draws_the_box<B: Backend>(backend: Arc<B>, cull: CullOn, what: &str) {
    let given = box_without_uvs();
    let welded = given.welded_flat().unwrap();
    for eye in [Vec3::new(-24.0, 18.0, -26.0), Vec3::new(10.0, -6.0, 19.0)] {
        let a = image(backend.clone(), cull, &given, &[], eye);
        let b = image(backend.clone(), cull, &welded, &["FLAT"], eye);
        same_boxes(&a, &b, &format!("{what}, eye {eye}"));
    }
}

#[test]
fn a_welded_box_draws_the_given_box_on_lavapipe() {
    let Some(b) = wgpu_backend(::wgpu::Backends::VULKAN, Encoding::CommandBuffer) else { return };
    welded_draws_the_box(b, CullOn::Cpu, "lavapipe");
}

#[test]
fn a_welded_box_draws_the_given_box_on_llvmpipe() {
    let Some(b) = wgpu_backend(::wgpu::Backends::GL, Encoding::RenderBundle) else { return };
    welded_draws_the_box(b, CullOn::Cpu, "llvmpipe");
}

fn untextured_draws_the_base_color<B: Backend>(backend: Arc<B>, what: &str) {
    let mesh = switchyard_city::box_mesh(1.0, 1.0, 1.0);
    let eye = Vec3::new(-24.0, 18.0, -26.0);
    let a = image(backend.clone(), CullOn::Cpu, &mesh, &[], eye);
    let b = image(backend.clone(), CullOn::Cpu, &mesh, &["UNTEXTURED"], eye);
    let c = image(backend, CullOn::Cpu, &mesh, &["UNTEXTURED", "SPECULAR"], eye);
    let boxes = a.pixels.chunks_exact(4).filter(|p| p[2] < 60).count();
    assert!(boxes > 500, "{what}: boxes in view ({boxes} pixels)");
    assert_eq!(differing_pixels(&a, &b), 0, "{what}");
    assert!(differing_pixels(&b, &c) > 0, "{what}: SPECULAR still shades");
}

#[test]
fn untextured_draws_the_base_color_on_lavapipe_and_llvmpipe() {
    if let Some(b) = wgpu_backend(::wgpu::Backends::VULKAN, Encoding::CommandBuffer) {
        untextured_draws_the_base_color(b, "lavapipe");
    }
    if let Some(b) = wgpu_backend(::wgpu::Backends::GL, Encoding::RenderBundle) {
        untextured_draws_the_base_color(b, "llvmpipe");
    }
}
