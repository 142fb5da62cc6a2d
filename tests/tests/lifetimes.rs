//! Lifetimes of what the renderer makes on its backend (feature `fault-injection`, for the
//! slow GPU of [`FaultBackend`]):
//! - nothing is freed or overwritten while a frame queued to the submission thread or on
//!   the GPU may still read it: meshes streamed through freed ranges and a scene growing
//!   past every per-view buffer size give, frame by frame, the pixels of a clean run (one
//!   that waits for each frame before changing anything), with 1 to 3 frames in flight and
//!   a slow GPU, on lavapipe and llvmpipe;
//! - nothing is left behind: a dropped renderer leaves its backend's live objects as they
//!   were before it (1,000 create/drop cycles on one backend), `recover` releases what it
//!   made on the old backend.
#![cfg(feature = "fault-injection")]

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::*;
use switchyard::*;
use switchyard::{InitError, ShaderDesc};
use switchyard_tests::faults::FaultBackend;
use switchyard_tests::full_graph::{bar_pipeline, cameras, full_graph, scattered};
use switchyard_tests::{cube, plain_material};

const SIDE: u32 = 64;

/// A box of `scale` standing on y = 0 (the cube's 8 vertices and 36 indices: every box
/// fits exactly in another's freed ranges).
fn scaled_cube(scale: Vec3) -> MeshData {
    let mut m = cube();
    for v in &mut m.vertices {
        v.position = (Vec3::from(v.position) * scale).to_array();
    }
    m
}

fn view() -> View {
    let eye = Vec3::new(0.0, 6.0, 5.0);
    View {
        label: "main",
        view_proj: Mat4::perspective_rh(0.9, 1.0, 0.5, 30.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 30.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    }
}

fn config(frames_in_flight: usize, max_objects: usize) -> RendererConfig {
    RendererConfig { threads: 2, frames_in_flight, width: SIDE, height: SIDE, max_objects, ..Default::default() }
}

/// A wgpu backend on the first adapter of `api` (`None` where there is none; on CI a
/// missing adapter fails).
fn wgpu(api: ::wgpu::Backends) -> Option<WgpuBackend> {
    let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
        return None;
    };
    Some(WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).expect("a device"))
}

/// `n` render targets the frames draw into, one each, read back at the end.
fn outputs<B: Backend>(b: &B, n: usize) -> Vec<TextureId> {
    (0..n)
        .map(|i| {
            b.create_texture(&TextureDesc {
                label: format!("out-{i}"),
                width: SIDE,
                height: SIDE,
                format: TextureFormat::Rgba8UnormSrgb,
                usage: TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC,
                samples: 1,
                mip_levels: 1,
            })
            .expect("an output")
        })
        .collect()
}

/// How the frames of a run meet the GPU.
#[derive(Clone, Copy, Debug)]
enum Run {
    /// Frames queue up behind a slow GPU while the scene changes.
    Streaming { frames_in_flight: usize },
    /// Each frame finishes before anything changes.
    Clean,
}

impl Run {
    fn renderer(
        self,
        inner: WgpuBackend,
        max_objects: usize,
    ) -> (Arc<FaultBackend<WgpuBackend>>, Renderer<FaultBackend<WgpuBackend>>) {
        let backend = Arc::new(FaultBackend::new(inner));
        let fif = match self {
            Run::Streaming { frames_in_flight } => {
                backend.set_gpu_ms(25);
                frames_in_flight
            }
            Run::Clean => 1,
        };
        let r = Renderer::new(backend.clone(), config(fif, max_objects)).expect("a renderer");
        (backend, r)
    }

    /// After a frame was handed over.
    fn settle<B: Backend>(self, r: &mut Renderer<B>) {
        if let Run::Clean = self {
            r.flush().expect("the frame finished");
        }
    }
}

/// Twelve frames, each drawing one box; between frames the box's object and mesh are
/// removed and a box of another shape (same vertex and index counts) is made: a slab,
/// then a small cube, and so on. Each frame draws into its own texture; returns them.
fn streamed_boxes(api: ::wgpu::Backends, run: Run) -> Option<Vec<Image>> {
    let (backend, mut r) = run.renderer(wgpu(api)?, 64);
    let out = outputs(&*backend, 12);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = plain_material(&mut r, shader, [0.9, 0.5, 0.1, 1.0]);
    let shape = |i: usize| if i.is_multiple_of(2) { Vec3::new(5.0, 0.2, 5.0) } else { Vec3::splat(0.3) };
    let object = |mesh| ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 };
    let mut mesh = r.create_mesh(&scaled_cube(shape(0))).unwrap();
    let mut id = r.insert_objects(&[object(mesh)]).unwrap()[0];
    for (i, &target) in out.iter().enumerate() {
        r.render_to(&[view()], target).unwrap();
        run.settle(&mut r);
        // While that frame may still be queued: its mesh goes, another takes its place.
        r.remove_objects(&[id]).unwrap();
        r.remove_mesh(mesh).unwrap();
        mesh = r.create_mesh(&scaled_cube(shape(i + 1))).unwrap();
        id = r.insert_objects(&[object(mesh)]).unwrap()[0];
    }
    r.flush().unwrap();
    Some(out.iter().map(|&t| backend.read_rgba8(t).unwrap()).collect())
}

/// Pixels that are not the sky (the clear color of the corner).
fn colored(img: &Image) -> usize {
    let sky = img.pixel(0, 0);
    (0..SIDE * SIDE).filter(|i| img.pixel(i % SIDE, i / SIDE) != sky).count()
}

#[test]
fn meshes_streamed_through_freed_ranges_never_change_a_queued_frame() {
    for api in [::wgpu::Backends::VULKAN, ::wgpu::Backends::GL] {
        let Some(clean) = streamed_boxes(api, Run::Clean) else { continue };
        // The slab covers much of the frame, the small cube little: frames differ.
        let (slab, small) = (colored(&clean[0]), colored(&clean[1]));
        assert!(slab > 4 * small && small > 0, "{api:?}: slab {slab} px, cube {small} px");
        for frames_in_flight in 1..=3 {
            let streamed = streamed_boxes(api, Run::Streaming { frames_in_flight }).expect("the adapter is there");
            for (i, (a, b)) in clean.iter().zip(&streamed).enumerate() {
                assert!(
                    a == b,
                    "{api:?}, {frames_in_flight} in flight: frame {i} differs ({} vs {} px)",
                    colored(a),
                    colored(b)
                );
            }
        }
    }
}

/// Eight frames; before each, 600 more cubes join the scene, so it passes 1,024, 2,048
/// and 4,096 objects (the per-view instance and indirect buffers grow each time) while
/// earlier frames are queued.
fn growing_scene<B: Backend>(backend: &Arc<B>, r: &mut Renderer<B>, out: &[TextureId], run: Run) {
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&scaled_cube(Vec3::splat(0.08))).unwrap();
    let materials = [plain_material(r, shader, [0.9, 0.2, 0.1, 1.0]), plain_material(r, shader, [0.1, 0.8, 0.3, 1.0])];
    let mut placed = 0;
    for &target in out {
        let objects: Vec<ObjectDesc> = (placed..placed + 600)
            .map(|i| ObjectDesc {
                mesh,
                material: materials[i % 2],
                transform: Mat4::from_translation(Vec3::new(
                    (i % 70) as f32 * 0.1 - 3.5,
                    0.0,
                    (i / 70) as f32 * 0.1 - 3.5,
                )),
                layer: 0,
                flags: 0,
            })
            .collect();
        placed += objects.len();
        r.insert_objects(&objects).unwrap();
        r.render_to(&[view()], target).unwrap();
        run.settle(r);
    }
    r.flush().expect("no frame failed: every buffer it uploads into is alive");
    let _ = backend;
}

#[test]
fn a_scene_growing_past_every_buffer_size_keeps_its_queued_frames() {
    // Null: the queued frames' uploads land (a destroyed buffer would fail them).
    for frames_in_flight in 1..=3 {
        let backend = Arc::new(FaultBackend::new(NullBackend::new(true)));
        backend.set_gpu_ms(10);
        let mut r = Renderer::new(backend.clone(), config(frames_in_flight, 8192)).unwrap();
        let out = outputs(&*backend, 8);
        growing_scene(&backend, &mut r, &out, Run::Streaming { frames_in_flight });
        assert_eq!(backend.submits(), 8);
    }
    // wgpu: and every frame draws what a clean run draws.
    for api in [::wgpu::Backends::VULKAN, ::wgpu::Backends::GL] {
        let Some(inner) = wgpu(api) else { continue };
        let (backend, mut r) = Run::Clean.renderer(inner, 8192);
        let out = outputs(&*backend, 8);
        growing_scene(&backend, &mut r, &out, Run::Clean);
        let clean: Vec<Image> = out.iter().map(|&t| backend.read_rgba8(t).unwrap()).collect();
        assert!(colored(&clean[7]) > colored(&clean[0]), "{api:?}: the scene grows on screen");
        for frames_in_flight in 2..=3 {
            let run = Run::Streaming { frames_in_flight };
            let (backend, mut r) = run.renderer(wgpu(api).expect("there"), 8192);
            let out = outputs(&*backend, 8);
            growing_scene(&backend, &mut r, &out, run);
            for (i, &t) in out.iter().enumerate() {
                assert!(backend.read_rgba8(t).unwrap() == clean[i], "{api:?}, {frames_in_flight} in flight: frame {i}");
            }
        }
    }
}

/// Eight frames; before each, a box on its own mesh joins the scene, the mesh padded
/// with 1,500 unused vertices, so the shared vertex buffer (2,048 vertices at first)
/// grows at frames 1, 3 and 6 while earlier frames are queued: each grown buffer takes
/// the old one's contents by a GPU copy on the submission thread.
fn growing_meshes<B: Backend>(r: &mut Renderer<B>, out: &[TextureId], run: Run) {
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = plain_material(r, shader, [0.9, 0.6, 0.1, 1.0]);
    for (i, &target) in out.iter().enumerate() {
        let mut mesh = scaled_cube(Vec3::new(0.3, 0.3 + 0.1 * i as f32, 0.3));
        mesh.vertices.extend(std::iter::repeat_n(Vertex::default(), 1500));
        let mesh = r.create_mesh(&mesh).unwrap();
        let at = Vec3::new(i as f32 % 4.0 - 1.5, 0.0, (i / 4) as f32 * 1.2 - 0.6);
        let object = ObjectDesc { mesh, material, transform: Mat4::from_translation(at), layer: 0, flags: 0 };
        r.insert_objects(&[object]).unwrap();
        r.render_to(&[view()], target).unwrap();
        run.settle(r);
    }
    r.flush().expect("no frame failed: every buffer a frame draws from is alive and whole");
}

#[test]
fn meshes_growing_the_shared_buffers_are_copied_on_the_gpu_and_queued_frames_keep_theirs() {
    // Null: the copies are checked (sizes, uses, live buffers) and counted.
    let backend = Arc::new(FaultBackend::new(NullBackend::new(true)));
    backend.set_gpu_ms(10);
    let mut r = Renderer::new(backend.clone(), config(3, 64)).unwrap();
    growing_meshes(&mut r, &outputs(&*backend, 8), Run::Streaming { frames_in_flight: 3 });
    // 64 KiB -> 128 KiB -> 256 KiB -> 512 KiB of vertices, each copied whole.
    assert_eq!(backend.inner().copied_bytes(), (64 + 128 + 256) << 10);
    // As many buffers as a renderer whose meshes never grew: the grown-out ones are gone.
    let other = Arc::new(NullBackend::new(true));
    let mut one = Renderer::new(other.clone(), config(3, 64)).unwrap();
    growing_meshes(&mut one, &outputs(&*other, 1), Run::Clean);
    assert_eq!(other.copied_bytes(), 0);
    assert_eq!(backend.live().buffers, other.live().buffers);
    // wgpu: every frame draws what a clean run draws.
    for api in [::wgpu::Backends::VULKAN, ::wgpu::Backends::GL] {
        let Some(inner) = wgpu(api) else { continue };
        let (backend, mut r) = Run::Clean.renderer(inner, 64);
        let out = outputs(&*backend, 8);
        growing_meshes(&mut r, &out, Run::Clean);
        let clean: Vec<Image> = out.iter().map(|&t| backend.read_rgba8(t).unwrap()).collect();
        // Every frame shows one box more: a box whose vertices a grown buffer lost would
        // vanish (or smear) at the frames where the buffer grew.
        for i in 1..8 {
            assert!(colored(&clean[i]) > colored(&clean[i - 1]), "{api:?}: frame {i} adds a box to the others");
        }
        for frames_in_flight in 2..=3 {
            let run = Run::Streaming { frames_in_flight };
            let (backend, mut r) = run.renderer(wgpu(api).expect("there"), 64);
            let out = outputs(&*backend, 8);
            growing_meshes(&mut r, &out, run);
            for (i, &t) in out.iter().enumerate() {
                assert!(backend.read_rgba8(t).unwrap() == clean[i], "{api:?}, {frames_in_flight} in flight: frame {i}");
            }
        }
    }
}

/// Everything a renderer can make: shaders and their variants, meshes (grown buffers,
/// removed ones), textures, materials, a full graph (targets, fullscreen pipelines, bind
/// groups), a second graph replacing it, views frames, frames in flight.
fn busy_renderer<B: Backend>(backend: &Arc<B>, bar: PipelineId, full: bool) {
    let mut r = Renderer::new(backend.clone(), config(2, 4096)).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let texture = r.create_texture(2, 2, &[200; 16]).unwrap();
    let textured = MaterialDesc { shader, base_texture: Some(texture), ..Default::default() };
    let materials = [r.create_material(&textured).unwrap(), plain_material(&mut r, shader, [1.0; 4])];
    r.set_material_keyword(materials[1], "FOG", true).unwrap();
    r.insert_objects(&scattered(if full { 1500 } else { 20 }, 5, mesh, &materials)).unwrap();
    r.render(&[view()]).unwrap();
    if !full {
        return;
    }
    let spare = r.create_mesh(&scaled_cube(Vec3::splat(2.0))).unwrap();
    for _ in 0..3 {
        r.render(&[view()]).unwrap();
    }
    r.remove_mesh(spare).unwrap();
    let gone = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    r.remove_material(gone).unwrap();
    let (g, _) = full_graph(TargetKind::Retained, 64, bar);
    r.set_graph(g).unwrap();
    let cams = cameras();
    for _ in 0..3 {
        r.render_graph(&FrameInput { cameras: &cams, targets: &[] }).unwrap();
    }
    r.resize(48, 40).unwrap();
    let (g, _) = full_graph(TargetKind::Retained, 32, bar);
    r.set_graph(g).unwrap();
    r.render_graph(&FrameInput { cameras: &cams, targets: &[] }).unwrap();
    // Dropped with frames in flight.
}

#[test]
fn a_thousand_renderers_made_and_dropped_leave_the_backend_as_it_was() {
    let backend = Arc::new(NullBackend::new(true));
    let bar = bar_pipeline(&*backend).unwrap();
    let before = backend.live();
    for i in 0..1000 {
        busy_renderer(&backend, bar, i % 50 == 0);
        assert_eq!(backend.live(), before, "cycle {i}");
    }
    // Renderers alive at once share the backend's cached pipelines: dropping one leaves
    // the other's working.
    let mut a = Renderer::new(backend.clone(), config(2, 64)).unwrap();
    let shader = a.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = a.create_mesh(&cube()).unwrap();
    let m = plain_material(&mut a, shader, [1.0; 4]);
    a.insert_objects(&[ObjectDesc { mesh, material: m, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]).unwrap();
    busy_renderer(&backend, bar, true);
    a.render(&[view()]).unwrap();
    a.flush().unwrap();
    drop(a);
    assert_eq!(backend.live(), before);
}

#[test]
fn renderers_dropped_on_a_wgpu_device_leave_it_as_it_was() {
    for api in [::wgpu::Backends::VULKAN, ::wgpu::Backends::GL] {
        let Some(backend) = wgpu(api) else { continue };
        let backend = Arc::new(backend);
        let bar = bar_pipeline(&*backend).unwrap();
        let before = backend.live();
        // The staging rings are the backend's, kept for the renderers after: once a
        // dropped renderer's frames are done, each ring holds at most what it keeps for
        // reuse, however many renderers came before.
        for i in 0..4 {
            busy_renderer(&backend, bar, i % 2 == 0);
            let live = backend.live();
            assert!(live.staging_bytes > 0, "{api:?}: the frames staged their uploads");
            let kept = 2 * ::switchyard::backend::wgpu::STAGING_RING_KEPT;
            assert!(live.staging_bytes <= kept, "{api:?}, cycle {i}: {} bytes held", live.staging_bytes);
            assert_eq!(live.objects(), before.objects(), "{api:?}, cycle {i}");
        }
    }
}

#[test]
fn recover_releases_what_the_renderer_made_on_the_old_backend() {
    let old = Arc::new(FaultBackend::new(NullBackend::new(true)));
    let mut r = Renderer::new(old.clone(), config(2, 4096)).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let texture = r.create_texture(2, 2, &[200; 16]).unwrap();
    let material =
        r.create_material(&MaterialDesc { shader, base_texture: Some(texture), ..Default::default() }).unwrap();
    r.insert_objects(&scattered(300, 2, mesh, &[material])).unwrap();
    for _ in 0..3 {
        r.render(&[view()]).unwrap();
    }
    old.lose_device();
    assert_eq!(r.render(&[view()]), Err(RenderError::DeviceLost));
    let new = Arc::new(FaultBackend::new(NullBackend::new(true)));
    r.recover(new.clone()).unwrap();
    assert_eq!(old.inner().live(), LiveResources::default(), "nothing stays on the old backend");
    r.render(&[view()]).unwrap();
    r.flush().unwrap();
    // A recovery refused part-way (out of memory at the 8th buffer or texture) leaves
    // nothing on the backend that refused it.
    let short = Arc::new(FaultBackend::new(NullBackend::new(true)));
    short.out_of_memory_in(8);
    assert!(matches!(r.recover(short.clone()), Err(InitError::Backend(CreateError::OutOfMemory { .. }))));
    assert_eq!(short.inner().live(), LiveResources::default());
    drop(r);
    assert_eq!(new.inner().live(), LiveResources::default(), "nor on the new one once dropped");
}

/// One copy: data the renderer dropped after uploading it is asked for after a loss (and
/// after a second loss before it came), checked against what the resource was made with,
/// and refused where it is not needed; kept and still-staged data needs nothing.
#[test]
fn data_dropped_after_upload_is_asked_for_again_after_a_loss_and_checked() {
    let old = Arc::new(FaultBackend::new(NullBackend::new(true)));
    let mut r = Renderer::new(old.clone(), config(2, 4096)).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let dropped = r.create_mesh(&cube()).unwrap();
    let gone = r.create_mesh(&cube()).unwrap();
    let kept = r.create_mesh_with(&scaled_cube(Vec3::splat(2.0)), CpuCopy::Keep).unwrap();
    let texture = r.create_texture(2, 2, &[200; 16]).unwrap();
    let kept_texture = r.create_texture_with(2, 2, &[100; 16], CpuCopy::Keep).unwrap();
    let m = |t| MaterialDesc { shader, base_texture: Some(t), ..Default::default() };
    let materials = [r.create_material(&m(texture)).unwrap(), r.create_material(&m(kept_texture)).unwrap()];
    r.insert_objects(&scattered(200, 3, dropped, &materials)).unwrap();
    r.insert_objects(&scattered(200, 4, kept, &materials)).unwrap();
    for _ in 0..2 {
        r.render(&[view()]).unwrap();
    }
    // Made after the last frame: `staged` (lower priority, past the budget of one mesh) is
    // still queued when the device goes, so not lost. `taken` goes with the batch of the
    // frame that meets the loss, and its data is lost with the device, where that frame
    // took its batch before it met the loss (the loss may be reported first, by an
    // earlier frame's submission: then `taken` is still queued too).
    let taken = r.create_mesh_with(&cube(), MeshOptions { priority: 1, ..Default::default() }).unwrap();
    let staged = r.create_mesh(&scaled_cube(Vec3::splat(3.0))).unwrap();
    r.set_upload_budget(1).unwrap();
    old.lose_device();
    assert_eq!(r.render(&[view()]), Err(RenderError::DeviceLost));
    let taken_lost = r.is_resident(taken) == Ok(true);
    assert_eq!(r.is_resident(staged), Ok(false));
    let new = Arc::new(FaultBackend::new(NullBackend::new(true)));
    let stats = r.recover(new.clone()).unwrap();
    let mut needs = vec![NeedsData::Mesh(dropped), NeedsData::Mesh(gone), NeedsData::Texture(texture)];
    if taken_lost {
        needs.insert(2, NeedsData::Mesh(taken));
    }
    assert_eq!((stats.meshes, stats.textures, &stats.needs_data), (1, 1, &needs));
    assert_eq!(r.needs_data(), needs);

    // Refusals change nothing.
    let triangle = MeshData { vertices: cube().vertices[..3].to_vec(), indices: vec![0, 1, 2] };
    let mut nan = cube();
    nan.vertices[0].position[0] = f32::NAN;
    for (mesh, data) in [(dropped, &triangle), (dropped, &scaled_cube(Vec3::splat(2.0))), (dropped, &nan)] {
        assert!(matches!(r.resupply_mesh(mesh, data), Err(ResourceError::Invalid(_))));
    }
    assert_eq!(r.resupply_mesh(kept, &scaled_cube(Vec3::splat(2.0))), Err(ResourceError::HasData(HandleKind::Mesh)));
    assert_eq!(r.resupply_mesh(staged, &scaled_cube(Vec3::splat(3.0))), Err(ResourceError::HasData(HandleKind::Mesh)));
    assert!(matches!(r.resupply_texture(texture, &[&[1; 12]]), Err(ResourceError::Invalid(_))));
    assert_eq!(r.resupply_texture(kept_texture, &[&[1; 16]]), Err(ResourceError::HasData(HandleKind::Texture)));
    r.remove_mesh(gone).unwrap();
    r.remove_mesh(taken).unwrap();
    assert_eq!(r.resupply_mesh(gone, &cube()), Err(ResourceError::StaleHandle(HandleKind::Mesh)));
    let needs = vec![NeedsData::Mesh(dropped), NeedsData::Texture(texture)];
    assert_eq!(r.needs_data(), needs);
    r.set_upload_budget(64 << 20).unwrap();
    r.render(&[view()]).unwrap();

    // Lost again before the data came: still asked for, and the staged mesh, uploaded by
    // the frame since, too.
    new.lose_device();
    assert_eq!(r.render(&[view()]).and_then(|_| r.flush()), Err(RenderError::DeviceLost));
    let newer = Arc::new(FaultBackend::new(NullBackend::new(true)));
    let needs = vec![NeedsData::Mesh(dropped), NeedsData::Mesh(staged), NeedsData::Texture(texture)];
    assert_eq!(r.recover(newer.clone()).unwrap().needs_data, needs);
    r.resupply_mesh(staged, &scaled_cube(Vec3::splat(3.0))).unwrap();
    r.resupply_mesh(dropped, &cube()).unwrap();
    r.resupply_texture(texture, &[&[200; 16]]).unwrap();
    assert_eq!(r.needs_data(), []);
    assert_eq!(r.memory().cpu_texture_bytes, 16, "the kept texture only");
    for _ in 0..3 {
        r.render(&[view()]).unwrap();
    }
    r.flush().unwrap();
    assert_eq!(r.memory().cpu_mesh_bytes, (8 * 32 + 36 * 4) as u64, "the kept mesh only");
}

#[test]
fn warm_up_makes_the_staging_the_first_frame_and_batch_use() {
    for api in [::wgpu::Backends::VULKAN, ::wgpu::Backends::GL] {
        let Some(backend) = wgpu(api) else { continue };
        let mut r = Renderer::new(Arc::new(backend), config(2, 70_000)).unwrap();
        let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
        let mesh = r.create_mesh(&cube()).unwrap();
        let materials = [plain_material(&mut r, shader, [1.0; 4]), plain_material(&mut r, shader, [0.5; 4])];
        // 66k objects: their transforms (4.2 MB) are a write larger than a staging chunk.
        r.insert_objects(&scattered(66_000, 7, mesh, &materials)).unwrap();
        let warm = r.warm_up().unwrap();
        assert_eq!(warm.staging_bytes_made, 16 << 20, "{api:?}");
        assert!(warm.frame_staging_bytes_made >= 66_000 * 68, "{api:?}: {warm:?}");
        let held = r.backend().live().staging_bytes;
        assert_eq!(held, warm.staging_bytes_made + warm.frame_staging_bytes_made, "{api:?}");
        // The first frame and its batch (the cube) stage into what warm_up made.
        r.render(&[view()]).unwrap();
        r.flush().unwrap();
        assert_eq!(r.backend().live().staging_bytes, held, "{api:?}: the first frame made no staging");
        assert!(r.is_resident(mesh).unwrap());
    }
}

#[test]
fn buffer_writes_spanning_staging_chunks_arrive_whole() {
    for api in [::wgpu::Backends::VULKAN, ::wgpu::Backends::GL] {
        let Some(b) = wgpu(api) else { continue };
        let size = 10u64 << 20;
        let usage = BufferUsage::COPY_DST | BufferUsage::COPY_SRC;
        let buf = b.create_buffer(&BufferDesc { label: "spanning".into(), size, usage }).unwrap();
        // Room for 3 MB ahead and a chunk more: the 10 MB below span it and the chunks
        // made after.
        let made = b.prepare_uploads(&PrepareUploads { frame_writes: &[3 << 20], ..Default::default() }).unwrap();
        assert_eq!(made.frame_staging_bytes, 7 << 20, "{api:?}");
        for round in 0..2u8 {
            let data: Vec<u8> = (0..size as usize).map(|i| (i * 7 % 251) as u8 ^ round).collect();
            // A small write first (its chunk keeps room the large one starts in).
            let writes = [
                BufferWrite { buffer: buf, offset: 0, data: &data[..4096] },
                BufferWrite { buffer: buf, offset: 4096, data: &data[4096..] },
            ];
            let held = b.live().staging_bytes;
            let id = b.submit(&writes, &mut []).unwrap();
            b.wait(id).unwrap();
            assert!(b.read_buffer(buf, 0, size).unwrap() == data, "{api:?}, round {round}: the bytes arrived whole");
            if round == 1 {
                assert_eq!(b.live().staging_bytes, held, "{api:?}: the chunks came back and were reused");
            }
        }
    }
}
