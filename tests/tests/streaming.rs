//! Streaming meshes and textures in and out: removed meshes give their ranges of the shared
//! buffers back, later meshes take them; removing what is in use is a typed error; a
//! scene reached through many removals renders what the same scene built fresh renders.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::Backend;
use switchyard::*;

/// A grid of `n` x `n` quads: (n + 1)² vertices, 6n² indices.
fn grid(n: u32, height: f32) -> MeshData {
    let mut vertices = Vec::new();
    for z in 0..=n {
        for x in 0..=n {
            let (u, v) = (x as f32 / n as f32, z as f32 / n as f32);
            vertices.push(Vertex { position: [u - 0.5, height, v - 0.5], normal: [0.0, 1.0, 0.0], uv: [u, v] });
        }
    }
    let mut indices = Vec::new();
    for z in 0..n {
        for x in 0..n {
            let i = z * (n + 1) + x;
            indices.extend([i, i + n + 1, i + 1, i + 1, i + n + 1, i + n + 2]);
        }
    }
    MeshData { vertices, indices }
}

fn renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    let config = RendererConfig { threads: 2, width: 64, height: 64, max_objects: 256, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

#[test]
fn removing_meshes_and_textures_in_use_or_stale_is_typed_and_changes_nothing() {
    let mut r = renderer(Arc::new(NullBackend::new(true)));
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&grid(2, 0.0)).unwrap();
    let texture = r.create_texture(1, 1, &[9; 4]).unwrap();
    let material =
        r.create_material(&MaterialDesc { shader, base_texture: Some(texture), ..Default::default() }).unwrap();
    let object =
        r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]).unwrap()[0];
    let before = r.mesh_memory();
    assert_eq!(r.remove_mesh(mesh), Err(ResourceError::InUse(HandleKind::Mesh, 1)));
    assert_eq!(r.remove_texture(texture), Err(ResourceError::InUse(HandleKind::Texture, 1)));
    assert_eq!(r.mesh_memory(), before);
    r.remove_objects(&[object]).unwrap();
    r.remove_mesh(mesh).unwrap();
    assert_eq!(r.remove_mesh(mesh), Err(ResourceError::StaleHandle(HandleKind::Mesh)));
    r.remove_material(material).unwrap();
    r.remove_texture(texture).unwrap();
    assert_eq!(r.remove_texture(texture), Err(ResourceError::StaleHandle(HandleKind::Texture)));
    // Another renderer's handles are stale here.
    let mut other = renderer(Arc::new(NullBackend::new(true)));
    let theirs = other.create_mesh(&grid(2, 0.0)).unwrap();
    let their_texture = other.create_texture(1, 1, &[9; 4]).unwrap();
    assert_eq!(r.remove_mesh(theirs), Err(ResourceError::StaleHandle(HandleKind::Mesh)));
    assert_eq!(r.remove_texture(their_texture), Err(ResourceError::StaleHandle(HandleKind::Texture)));
    // An object cannot name a removed mesh.
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let e = r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]);
    assert!(matches!(e, Err(SceneError::StaleHandle { kind: HandleKind::Mesh, index: 0 })), "{e:?}");
}

#[test]
fn removed_meshes_space_is_taken_again_and_the_buffers_stay_bounded() {
    let mut r = renderer(Arc::new(NullBackend::new(true)));
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    let mut live: Vec<(MeshHandle, u64)> = Vec::new();
    let mut most_live = 0;
    for step in 0..3000 {
        if live.len() < 12 && (live.is_empty() || rng.gen_bool(0.5)) {
            let n = rng.gen_range(1..=8);
            let m = r.create_mesh(&grid(n, 0.0)).unwrap();
            live.push((m, u64::from((n + 1) * (n + 1))));
        } else {
            let (m, _) = live.swap_remove(rng.gen_range(0..live.len()));
            r.remove_mesh(m).unwrap();
        }
        let held: u64 = live.iter().map(|l| l.1).sum();
        most_live = most_live.max(held);
        let mem = r.mesh_memory();
        assert_eq!(mem.meshes, live.len());
        assert_eq!(mem.vertices - mem.free_vertices, held, "step {step}: live vertices are what is held");
    }
    let mem = r.mesh_memory();
    // First fit over 3,000 creations and removals: the buffers hold at most twice the
    // most vertices ever alive at once (appending every mesh would hold all ever made).
    assert!(mem.vertices <= 2 * most_live, "{mem:?}, at most {most_live} alive at once");
}

/// A scene of meshes of several sizes built fresh, or reached after streaming others
/// in and out (so its meshes sit at other offsets and slots): the same pixels.
fn scene_pixels(api: wgpu::Backends, churn: bool) -> Option<switchyard::backend::Image> {
    let adapter = WgpuBackend::enumerate(api).into_iter().next()?;
    let backend = Arc::new(WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).unwrap());
    let mut r = renderer(backend);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(8);
    if churn {
        let mut old = Vec::new();
        for _ in 0..40 {
            old.push(r.create_mesh(&grid(rng.gen_range(1..=6), 0.3)).unwrap());
            if rng.gen_bool(0.6) {
                let victim = old.swap_remove(rng.gen_range(0..old.len()));
                r.remove_mesh(victim).unwrap();
            }
        }
        for m in old {
            r.remove_mesh(m).unwrap();
        }
    }
    let colors = [[0.9, 0.2, 0.1, 1.0], [0.1, 0.8, 0.3, 1.0], [0.2, 0.3, 0.9, 1.0]];
    let mut objects = Vec::new();
    for (i, n) in [1, 4, 2, 7, 3].into_iter().enumerate() {
        let mesh = r.create_mesh(&grid(n, 0.1 * i as f32)).unwrap();
        let material = r
            .create_material(&MaterialDesc {
                shader,
                properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color(colors[i % 3])),
                ..Default::default()
            })
            .unwrap();
        let at = Vec3::new(i as f32 * 1.1 - 2.2, 0.0, (i % 2) as f32 * 0.8 - 0.4);
        objects.push(ObjectDesc { mesh, material, transform: Mat4::from_translation(at), layer: 0, flags: 0 });
    }
    r.insert_objects(&objects).unwrap();
    let eye = Vec3::new(0.0, 4.0, 3.0);
    let view = View {
        label: "main",
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.5, 20.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 20.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    };
    r.render(&[view]).unwrap();
    Some(r.read_color().unwrap())
}

#[test]
fn a_scene_reached_through_removals_renders_like_one_built_fresh() {
    for api in [wgpu::Backends::VULKAN, wgpu::Backends::GL] {
        let (Some(fresh), Some(churned)) = (scene_pixels(api, false), scene_pixels(api, true)) else {
            assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
            continue;
        };
        assert_eq!(fresh, churned, "{api:?}");
        let distinct: std::collections::HashSet<[u8; 4]> = (0..64 * 64).map(|i| fresh.pixel(i % 64, i / 64)).collect();
        assert!(distinct.len() > 3, "the grids are drawn: {} colors", distinct.len());
    }
}
