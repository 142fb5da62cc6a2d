//! Streaming meshes and textures in and out: removed meshes give their ranges of the shared
//! buffers back, later meshes take them; removing what is in use is a typed error; a
//! scene reached through many removals renders what the same scene built fresh renders.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::{Backend, Image, TextureFormat};
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
    let material = textured(&mut r, shader, texture);
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
    r.render(&[view()]).unwrap();
    Some(r.read_color().unwrap())
}

/// The camera of these scenes: above and behind the origin, looking at it.
fn view() -> View {
    let eye = Vec3::new(0.0, 4.0, 3.0);
    View {
        label: "main",
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.5, 20.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 20.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    }
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

/// A material of `shader` on `texture` with a white base color (a shader's constants are
/// zero unless set): the texture shows as it is.
fn textured<B: Backend>(r: &mut Renderer<B>, shader: ShaderHandle, texture: TextureHandle) -> MaterialHandle {
    let properties = PropertySheet::new().with("_BaseColor", PropertyValue::Color([1.0; 4]));
    r.create_material(&MaterialDesc { shader, base_texture: Some(texture), properties, ..Default::default() }).unwrap()
}

/// Bytes of `grid(n, _)`'s upload: its vertices and indices.
fn grid_bytes(n: u32) -> u64 {
    u64::from((n + 1) * (n + 1) * 32 + 6 * n * n * 4)
}

fn object(mesh: MeshHandle, material: MaterialHandle, x: f32) -> ObjectDesc {
    ObjectDesc { mesh, material, transform: Mat4::from_translation(Vec3::new(x, 0.0, 0.0)), layer: 0, flags: 0 }
}

#[test]
fn uploads_are_taken_a_batch_per_frame_by_priority_within_the_budget() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let bytes = grid_bytes(4);
    r.set_upload_budget(2 * bytes).unwrap();
    let low = r.create_mesh(&grid(4, 0.0)).unwrap();
    let high = r.create_mesh_with(&grid(4, 0.0), MeshOptions { priority: 2, ..Default::default() }).unwrap();
    let last = r.create_mesh(&grid(4, 0.0)).unwrap();
    let token = r.upload_token();
    r.insert_objects(&[object(low, material, 0.0), object(last, material, 1.0), object(last, material, 2.0)]).unwrap();
    assert_eq!(
        [low, high, last].map(|m| r.is_resident(m)),
        [Ok(false), Ok(false), Ok(false)],
        "nothing is resident before a frame"
    );
    // The first frame takes the highest priority, then the first requested, up to the budget.
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.bytes, s.resources, s.pending, s.pending_bytes), (2 * bytes, 2, 1, bytes));
    assert_eq!((s.waiting_objects, s.waiting_materials), (2, 0), "the objects of the mesh still queued");
    assert_eq!([low, high, last].map(|m| r.is_resident(m)), [Ok(true), Ok(true), Ok(false)]);
    assert!(!r.uploads_complete(token));
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.bytes, s.resources, s.pending, s.waiting_objects), (bytes, 1, 0, 0));
    r.flush().unwrap();
    assert!(r.uploads_complete(token), "both frames finished");
    assert_eq!(backend.staged_uploads(), (3 * bytes, 2), "two batches reached the backend");
    assert_eq!(r.render(&[view()]).unwrap().uploads.completed, 3);

    // A request larger than the budget goes alone, one a frame.
    r.set_upload_budget(1).unwrap();
    let a = r.create_mesh(&grid(2, 0.0)).unwrap();
    let b = r.create_mesh(&grid(3, 0.0)).unwrap();
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.bytes, s.resources, s.pending), (grid_bytes(2), 1, 1));
    assert_eq!((r.is_resident(a), r.is_resident(b)), (Ok(true), Ok(false)));
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.bytes, s.resources, s.pending), (grid_bytes(3), 1, 0));
    // A mesh removed while queued is never uploaded.
    let gone = r.create_mesh(&grid(5, 0.0)).unwrap();
    assert_eq!(r.memory().cpu_mesh_bytes, grid_bytes(5), "its bytes wait on the CPU");
    r.remove_mesh(gone).unwrap();
    assert_eq!(r.memory().cpu_mesh_bytes, 0);
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.bytes, s.resources, s.pending), (0, 0, 0));
    // Budgets of 0: typed, nothing changes.
    assert!(matches!(r.set_upload_budget(0), Err(ResourceError::Invalid(_))));
    let c = r.create_mesh(&grid(2, 0.0)).unwrap();
    let d = r.create_mesh(&grid(2, 0.0)).unwrap();
    assert_eq!(r.render(&[view()]).unwrap().uploads.resources, 1, "the budget of 1 byte still holds");
    assert_eq!((r.is_resident(c), r.is_resident(d)), (Ok(true), Ok(false)));
    let config = RendererConfig { upload_budget: 0, ..Default::default() };
    assert!(matches!(Renderer::new(Arc::new(NullBackend::new(true)), config), Err(InitError::Config(_))));
    // Another renderer's handles are stale here.
    let other = renderer(Arc::new(NullBackend::new(true)));
    assert_eq!(other.is_resident(c), Err(ResourceError::StaleHandle(HandleKind::Mesh)));
}

#[test]
fn fallbacks_must_be_resident_and_stay_while_a_queued_resource_uses_them() {
    let mut r = renderer(Arc::new(NullBackend::new(true)));
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let fallback = r.create_mesh(&grid(1, 0.0)).unwrap();
    let red = r.create_texture(1, 1, &[255, 0, 0, 255]).unwrap();
    // Fallbacks still queued: refused, nothing made.
    let (meshes, live) = (r.mesh_memory(), r.backend().live());
    let on = |f| MeshOptions { fallback: Some(f), ..Default::default() };
    assert!(matches!(r.create_mesh_with(&grid(2, 0.0), on(fallback)), Err(ResourceError::Invalid(_))));
    let on_red = |f| TextureOptions { fallback: Some(f), ..Default::default() };
    assert!(matches!(r.create_texture_with(2, 2, &[0; 16], on_red(red)), Err(ResourceError::Invalid(_))));
    assert_eq!((r.mesh_memory(), r.backend().live()), (meshes, live));
    r.render(&[view()]).unwrap();

    // One request a frame: `big` first, then the mesh and texture with fallbacks.
    r.set_upload_budget(1).unwrap();
    r.create_mesh_with(&grid(8, 0.0), MeshOptions { priority: 9, ..Default::default() }).unwrap();
    let mesh = r.create_mesh_with(&grid(2, 0.0), on(fallback)).unwrap();
    let texture = r.create_texture_with(2, 2, &[0, 255, 0, 255].repeat(4), on_red(red)).unwrap();
    let material = textured(&mut r, shader, texture);
    r.insert_objects(&[object(mesh, material, 0.0)]).unwrap();
    assert_eq!(r.remove_mesh(fallback), Err(ResourceError::InUse(HandleKind::Mesh, 1)));
    assert_eq!(r.remove_texture(red), Err(ResourceError::InUse(HandleKind::Texture, 1)));
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.resources, s.pending, s.waiting_objects, s.waiting_materials), (1, 2, 1, 1));
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.resources, s.pending, s.waiting_objects, s.waiting_materials), (1, 1, 0, 1));
    r.remove_mesh(fallback).unwrap();
    assert_eq!(r.remove_texture(red), Err(ResourceError::InUse(HandleKind::Texture, 1)));
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.resources, s.pending, s.waiting_materials), (1, 0, 0));
    r.remove_texture(red).unwrap();
}

/// Per frame digests of a scene that streams meshes in and out under a small budget.
fn streamed_digests(threads: usize) -> (Vec<u64>, u32) {
    let config = RendererConfig { threads, width: 64, height: 64, max_objects: 4096, ..Default::default() };
    let mut r = Renderer::new(Arc::new(NullBackend::new(true)), config).unwrap();
    r.set_upload_budget(3 * grid_bytes(4)).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let mut live = std::collections::VecDeque::new();
    let (mut digests, mut most_pending) = (Vec::new(), 0);
    for frame in 0..24 {
        for _ in 0..3 {
            let options = MeshOptions { priority: rng.gen_range(0..3), ..Default::default() };
            let mesh = r.create_mesh_with(&grid(rng.gen_range(1..=6), 0.1), options).unwrap();
            let x = rng.gen_range(-2.0..2.0);
            live.push_back((mesh, r.insert_objects(&[object(mesh, material, x)]).unwrap()[0]));
        }
        if frame % 2 == 1 {
            let (mesh, object) = live.pop_front().unwrap();
            r.remove_objects(&[object]).unwrap();
            r.remove_mesh(mesh).unwrap();
        }
        let stats = r.render(&[view()]).unwrap();
        most_pending = most_pending.max(stats.uploads.pending);
        digests.push(stats.digest.unwrap());
    }
    (digests, most_pending)
}

#[test]
fn streamed_uploads_give_the_same_command_stream_at_any_thread_count() {
    let (one, pending) = streamed_digests(1);
    assert!(pending > 3, "the budget held uploads back ({pending} queued at most)");
    for threads in [2, 8] {
        assert_eq!(streamed_digests(threads).0, one, "{threads} threads");
    }
}

/// The streamed scene's frames on `api`: the one that took only `big` (the texture and
/// two meshes still queued), and the one after every upload arrived; then the same two
/// scenes built with what they draw resident from the start.
fn fallback_pixels(api: wgpu::Backends) -> Option<[switchyard::backend::Image; 4]> {
    let adapter = WgpuBackend::enumerate(api).into_iter().next()?;
    let backend = || Arc::new(WgpuBackend::from_adapter(adapter.clone(), Encoding::RenderBundle).unwrap());
    let red = [255, 0, 0, 255].repeat(4);
    let green = [0, 255, 0, 255].repeat(4);
    // Streamed: a cube and a red texture resident, then one request a frame.
    let mut r = renderer(backend());
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let cube = r.create_mesh(&switchyard_tests::cube()).unwrap();
    let fallback = r.create_texture(2, 2, &red).unwrap();
    r.render(&[view()]).unwrap();
    r.set_upload_budget(1).unwrap();
    r.create_mesh_with(&grid(8, -1.0), MeshOptions { priority: 9, ..Default::default() }).unwrap();
    let texture =
        r.create_texture_with(2, 2, &green, TextureOptions { fallback: Some(fallback), ..Default::default() }).unwrap();
    let quad = r.create_mesh_with(&grid(2, 0.5), MeshOptions { fallback: Some(cube), ..Default::default() }).unwrap();
    let skipped = r.create_mesh(&grid(3, 0.5)).unwrap();
    let m = textured(&mut r, shader, texture);
    r.insert_objects(&[object(cube, m, 0.0), object(quad, m, -1.6), object(skipped, m, 1.6)]).unwrap();
    r.render(&[view()]).unwrap();
    let before = r.read_color().unwrap();
    for _ in 0..3 {
        r.render(&[view()]).unwrap();
    }
    assert!([texture.into(), quad.into(), skipped.into()].into_iter().all(|h: Streamed| r.is_resident(h) == Ok(true)));
    let after = r.read_color().unwrap();
    // Built with what those frames should draw resident from the start.
    let built = |texels: &[u8], meshes: &[(MeshData, f32)]| {
        let mut r = renderer(backend());
        let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
        let texture = r.create_texture(2, 2, texels).unwrap();
        let m = textured(&mut r, shader, texture);
        for (mesh, x) in meshes {
            let mesh = r.create_mesh(mesh).unwrap();
            r.insert_objects(&[object(mesh, m, *x)]).unwrap();
        }
        r.render(&[view()]).unwrap();
        r.read_color().unwrap()
    };
    let cube = switchyard_tests::cube;
    let expected_before = built(&red, &[(cube(), 0.0), (cube(), -1.6)]);
    let expected_after = built(&green, &[(cube(), 0.0), (grid(2, 0.5), -1.6), (grid(3, 0.5), 1.6)]);
    Some([before, expected_before, after, expected_after])
}

#[test]
fn fallbacks_draw_until_the_uploads_arrive() {
    for api in [wgpu::Backends::VULKAN, wgpu::Backends::GL] {
        let Some([before, expected_before, after, expected_after]) = fallback_pixels(api) else {
            assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
            continue;
        };
        assert_eq!(before, expected_before, "{api:?}: the fallback texture and mesh, the skipped mesh absent");
        assert_eq!(after, expected_after, "{api:?}: what was streamed");
        // The cube in the middle samples red, then green.
        let [r0, g0, ..] = before.pixel(32, 30);
        let [r1, g1, ..] = after.pixel(32, 30);
        assert!(
            r0 > 2 * g0 && g1 > 2 * r1,
            "{api:?}: red {:?} then green {:?}",
            before.pixel(32, 30),
            after.pixel(32, 30)
        );
    }
}

/// The process's resident memory.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4096
}

/// Streams `per_frame` meshes and as many textures (with materials and objects) in every
/// frame for `frames` frames, the oldest leaving once 40 of each are alive; every 50
/// frames a frame of a static view (layer 1: objects that never change) is rendered too,
/// and with `read` read back. Returns those pictures, the live bytes after the warm-up and
/// at the end, and the resident memory then.
/// Streams `per_frame` meshes and textures in (and the oldest out) for `frames` frames
/// after a warm-up: the static view's pictures, the live bytes and RSS after a fifth of
/// the frames and at the end, and what the warm-up made for the upload thread (staging
/// bytes made, mip pipelines, and the staging bytes the backend then held).
fn soak<B: Backend>(
    backend: Arc<B>,
    frames: u32,
    per_frame: usize,
    read: bool,
) -> (Vec<Image>, [u64; 2], [u64; 2], [u64; 3]) {
    let config = RendererConfig {
        threads: 2,
        width: 64,
        height: 64,
        max_objects: 1024,
        max_materials: 256,
        ..Default::default()
    };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let properties = PropertySheet::new().with("_BaseColor", PropertyValue::Color([1.0; 4]));
    let white_mat = r.create_material(&MaterialDesc { shader, properties, ..Default::default() }).unwrap();
    let warm = r.warm_up().unwrap();
    let prepared = [warm.staging_bytes_made, warm.mip_pipelines_created.into(), r.backend().live().staging_bytes];
    let still = r.create_mesh(&grid(3, 0.0)).unwrap();
    let statics: Vec<ObjectDesc> =
        (0..6).map(|i| ObjectDesc { layer: 1, ..object(still, white_mat, i as f32 - 2.5) }).collect();
    r.insert_objects(&statics).unwrap();
    let static_view = View { layer_mask: 1 << 1, label: "static", ..view() };
    let streamed_view = View { layer_mask: 1, ..view() };
    let mut rng = Pcg64Mcg::seed_from_u64(21);
    let mut alive = std::collections::VecDeque::new();
    let (mut pictures, mut live, mut rss) = (Vec::new(), [0; 2], [0; 2]);
    let warm_up = frames / 5;
    for f in 0..frames {
        for _ in 0..per_frame {
            let mesh = r.create_mesh(&grid(rng.gen_range(1..=8), 0.2)).unwrap();
            let texels: Vec<u8> = (0..16 * 16).flat_map(|_| [rng.gen(), rng.gen(), rng.gen(), 255]).collect();
            let data = TextureData {
                width: 16,
                height: 16,
                format: TextureFormat::Rgba8UnormSrgb,
                levels: &[&texels],
                generate_mips: true,
            };
            let texture = r.create_texture_data(&data).unwrap();
            let material = textured(&mut r, shader, texture);
            let id = r.insert_objects(&[object(mesh, material, rng.gen_range(-2.0..2.0))]).unwrap()[0];
            alive.push_back((id, material, texture, mesh));
        }
        while alive.len() > 40 {
            let (id, material, texture, mesh) = alive.pop_front().unwrap();
            r.remove_objects(&[id]).unwrap();
            r.remove_material(material).unwrap();
            r.remove_texture(texture).unwrap();
            r.remove_mesh(mesh).unwrap();
        }
        let stats = r.render(&[streamed_view]).unwrap();
        assert!(stats.uploads.pending == 0, "frame {f}: the default budget takes every frame's uploads");
        if f % 50 == 0 {
            r.render(&[static_view]).unwrap();
            if read {
                pictures.push(r.read_color().unwrap());
            }
        }
        if f + 1 == warm_up || f + 1 == frames {
            r.flush().unwrap();
            let at = usize::from(f + 1 == frames);
            let l = r.backend().live();
            (live[at], rss[at]) = (l.buffer_bytes + l.texture_bytes, rss_bytes());
        }
    }
    r.flush().expect("no frame read what was freed");
    (pictures, live, rss, prepared)
}

#[test]
fn streaming_thousands_of_meshes_and_textures_keeps_memory_flat() {
    // Null: 10,000 meshes and 10,000 textures over 2,000 frames; the backend checks every
    // staged write and every command against what is alive when it is submitted.
    let (_, live, rss, prepared) = soak(Arc::new(NullBackend::new(true)), 2000, 5, false);
    assert_eq!(prepared, [16 << 20, 2, 0], "the null backend holds no staging memory");
    assert_eq!(live[0], live[1], "the backend's live bytes after the warm-up and at the end");
    assert!(rss[1] <= rss[0] + (32 << 20), "resident memory {} MiB then {} MiB", rss[0] >> 20, rss[1] >> 20);
    // wgpu: fewer frames (software rasterizers), the same checks of what is alive, and the
    // static part drawn alike all along (nothing streamed overwrote its mesh).
    for api in [wgpu::Backends::VULKAN, wgpu::Backends::GL] {
        let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
            assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
            continue;
        };
        let backend = Arc::new(WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).unwrap());
        let (pictures, live, _, prepared) = soak(backend, 300, 5, true);
        assert_eq!(prepared, [16 << 20, 2, 16 << 20], "{api:?}: staging and mip pipelines made ahead");
        assert_eq!(live[0], live[1], "{api:?}: live bytes after the warm-up and at the end");
        assert!(pictures.iter().all(|p| *p == pictures[0]), "{api:?}: the static view changed");
        let drawn = (0..64 * 64).filter(|&i| pictures[0].pixel(i % 64, i / 64) != pictures[0].pixel(0, 0)).count();
        assert!(drawn > 100, "{api:?}: the static objects cover {drawn} pixels");
    }
}

#[test]
fn removed_textures_are_taken_again_by_textures_of_their_shape() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    r.render(&[view()]).unwrap();
    let rgba = |side: u32| vec![7u8; (side * side * 4) as usize];
    let a = r.create_texture(8, 8, &rgba(8)).unwrap();
    r.render(&[view()]).unwrap();
    let before = backend.live();
    r.remove_texture(a).unwrap();
    r.flush().unwrap();
    // Kept by the pool once no frame samples it: still alive on the backend.
    assert_eq!((backend.live(), r.memory().pooled_texture_bytes), (before, 256));
    // A texture of its shape takes it (no new backend texture); another shape makes one.
    let b = r.create_texture(8, 8, &rgba(8)).unwrap();
    assert_eq!((backend.live(), r.memory().pooled_texture_bytes), (before, 0));
    let c = r.create_texture(4, 4, &rgba(4)).unwrap();
    assert_eq!(backend.live().textures, before.textures + 1);
    // Its new texels arrive as any upload does, and it is drawn from then on.
    let s = r.render(&[view()]).unwrap().uploads;
    assert_eq!((s.resources, s.bytes), (2, 256 + 64));
    assert!(r.is_resident(b).unwrap() && r.is_resident(c).unwrap());
    // Dropping the renderer destroys what it pooled.
    r.remove_texture(b).unwrap();
    r.flush().unwrap();
    assert_eq!(r.memory().pooled_texture_bytes, 256);
    drop(r);
    assert_eq!(backend.live(), switchyard::backend::LiveResources::default());
}

#[test]
fn materials_of_one_texture_share_a_bind_group_and_its_arrival_makes_none() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let plain = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let mesh = r.create_mesh(&grid(1, 0.0)).unwrap();
    let first = r.insert_objects(&[object(mesh, plain, 0.0)]).unwrap();
    r.render(&[view()]).unwrap();
    r.flush().unwrap();
    let groups = || backend.live().bind_groups;
    let before = groups();
    // Untextured materials share white's group: nothing made.
    let plain2 = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    assert_eq!(groups(), before);
    // Two materials of a queued texture bind white's and hold the texture's, made once.
    let texture = r.create_texture(2, 2, &[0, 255, 0, 255].repeat(4)).unwrap();
    let a = textured(&mut r, shader, texture);
    let b = textured(&mut r, shader, texture);
    assert_eq!(groups(), before + 1);
    let ids = r.insert_objects(&[object(mesh, a, 1.0), object(mesh, b, 2.0)]).unwrap();
    // The frame that takes the texture makes no group and its materials bind the texture.
    let s = r.render(&[view()]).unwrap();
    assert_eq!((s.uploads.resources, s.uploads.waiting_materials), (1, 0));
    assert!(r.is_resident(texture).unwrap());
    assert_eq!(groups(), before + 1);
    r.render(&[view()]).unwrap();
    r.flush().unwrap();
    assert_eq!(groups(), before + 1, "nothing made while drawn");
    // The group goes with the last material of its texture, once no frame binds it.
    r.remove_objects(&ids).unwrap();
    r.remove_material(a).unwrap();
    r.flush().unwrap();
    assert_eq!(groups(), before + 1);
    r.remove_material(b).unwrap();
    r.render(&[view()]).unwrap();
    r.flush().unwrap();
    assert_eq!(groups(), before);
    r.remove_objects(&first).unwrap();
    r.remove_material(plain2).unwrap();
    r.remove_material(plain).unwrap();
    r.flush().unwrap();
    assert_eq!(groups(), before, "white's group stays with the renderer");
    r.remove_texture(texture).unwrap();
    drop(r);
    assert_eq!(backend.live(), switchyard::backend::LiveResources::default());
}
