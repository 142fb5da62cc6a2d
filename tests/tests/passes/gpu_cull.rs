//! Culling on the GPU (`CullOn::Gpu`): on lavapipe and llvmpipe the instances and indirect
//! records the cull shader writes equal the CPU oracle's (the same candidates culled on the
//! CPU and compacted stably) for a shadow pass and an opaque pass, over a non-power-of-two
//! viewport, moving objects, a moving camera and a shadow camera limited to the casters of
//! the main view; the images equal the CPU cull's pixel for
//! pixel. On the null backend: digests equal at 1 and 3 threads, buckets are built only
//! when the scene's structure changes, and a backend without compute falls back to the CPU
//! path (the CPU path's digests) with the reason.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::*;
use switchyard::*;
use switchyard_tests::{cube, plain_material, wgpu_backend};

/// A viewport that is no power of two and not square.
const WIDTH: u32 = 333;
const HEIGHT: u32 = 217;
const OBJECTS: usize = 3000;

/// The sun's shadow pass (scene pass 0) and an opaque pass sampling its map.
fn graph() -> (FrameGraph, TargetId) {
    switchyard_tests::shadow_and_opaque_graph(256)
}

fn camera(eye: Vec3, target: Vec3) -> Camera {
    let proj = Mat4::perspective_rh(0.8, WIDTH as f32 / HEIGHT as f32, 0.5, 120.0);
    Camera {
        view_proj: proj * Mat4::look_at_rh(eye, target, Vec3::Y),
        eye,
        far: 120.0,
        layer_mask: u16::MAX,
        receivers: None,
    }
}

fn sun() -> Camera {
    let eye = Vec3::new(30.0, 60.0, 20.0);
    let view_proj =
        Mat4::orthographic_rh(-40.0, 40.0, -40.0, 40.0, 1.0, 150.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
    Camera { view_proj, eye, far: 150.0, layer_mask: u16::MAX, receivers: None }
}

/// Boxes of random size scattered over a square twice the sun's view (many outside
/// either view), three materials, half of them casting shadows; a few with a second mesh.
fn scene<B: Backend>(backend: Arc<B>, cull: CullOn, threads: usize) -> (Renderer<B>, Vec<ObjectId>, TargetId) {
    let config =
        RendererConfig { threads, max_objects: OBJECTS + 16, width: WIDTH, height: HEIGHT, cull, ..Default::default() };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let meshes = [r.create_mesh(&cube()).unwrap(), r.create_mesh(&cube()).unwrap()];
    let materials = [
        plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]),
        plain_material(&mut r, shader, [0.3, 0.8, 0.4, 1.0]),
        plain_material(&mut r, shader, [0.5, 0.5, 0.9, 1.0]),
    ];
    let (g, out) = graph();
    r.set_graph(g).unwrap();
    let mut rng = rand_pcg::Pcg32::seed_from_u64(21);
    let objects: Vec<ObjectDesc> = (0..OBJECTS)
        .map(|i| ObjectDesc {
            mesh: meshes[usize::from(i % 7 == 0)],
            material: materials[i % 3],
            transform: random_place(&mut rng),
            layer: 0,
            flags: if i % 2 == 0 { CASTS_SHADOWS } else { 0 },
        })
        .collect();
    let ids = r.insert_objects(&objects).unwrap();
    (r, ids, out)
}

fn random_place(rng: &mut impl Rng) -> Mat4 {
    let at = Vec3::new(rng.gen_range(-80.0..80.0), rng.gen_range(0.0..4.0), rng.gen_range(-80.0..80.0));
    let scale = Vec3::new(rng.gen_range(0.3..2.0), rng.gen_range(0.3..3.0), rng.gen_range(0.3..2.0));
    Mat4::from_scale_rotation_translation(scale, glam::Quat::from_rotation_y(rng.gen_range(0.0..3.0)), at)
}

/// The GPU's instances and records of every GPU-culled view against the CPU oracle: bucket
/// by bucket the same objects in the same order, the records' first instances packed one
/// after another. Candidates whose bounds touch a plane within float rounding (a fused
/// multiply-add on the GPU decides them either way) are left out of the comparison; there
/// are at most a few.
fn check_against_oracle<B: Backend>(r: &Renderer<B>, what: &str) {
    for v in 0..2 {
        let g = r.gpu_cull_view(v).unwrap_or_else(|| panic!("{what}: view {v} is culled on the GPU"));
        let objects = r.scene().objects();
        let near: Vec<u32> =
            g.candidates.iter().copied().filter(|&i| boundary_margin(objects, &g.frustum, i as usize) < 1e-5).collect();
        assert!(near.len() <= 3, "{what}: view {v}: {} candidates on a plane", near.len());
        let (visible, ranges) = cull_on_cpu(objects, &g.frustum, &g.starts, &g.candidates);
        assert!(visible.len() > 100 && visible.len() + 100 < g.candidates.len(), "{what}: view {v} culls some");
        let b = r.backend();
        let words = |buffer, n: usize| -> Vec<u32> {
            bytemuck::cast_slice(&b.read_buffer(buffer, 0, (n.max(1) * 4) as u64).expect("read back")).to_vec()
        };
        let args = words(g.args, ranges.len() * 5);
        let total: u32 = (0..ranges.len()).map(|k| args[5 * k + 1]).sum();
        let instances = words(g.instances, total as usize);
        let (mut at, far) = (0, |i: &&u32| !near.contains(i));
        for (k, &(first, count)) in ranges.iter().enumerate() {
            let (gpu_first, gpu_count) = (args[5 * k + 4], args[5 * k + 1]);
            assert_eq!(gpu_first, at, "{what}: view {v}: bucket {k} starts where the one before ends");
            at += gpu_count;
            let on_gpu: Vec<u32> = instances[gpu_first as usize..at as usize].iter().filter(far).copied().collect();
            let on_cpu: Vec<u32> =
                visible[first as usize..(first + count) as usize].iter().filter(far).copied().collect();
            assert_eq!(on_gpu, on_cpu, "{what}: view {v}: bucket {k}'s instances");
        }
        assert_eq!(
            total as usize + near.iter().filter(|i| visible.contains(i)).count(),
            visible.len() + near.iter().filter(|&&i| instances.contains(&i)).count()
        );
    }
}

fn oracle_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    oracle(api, backend);
}

fn oracle<B: Backend>(api: ::wgpu::Backends, backend: Arc<B>) {
    let (mut r, ids, out) = scene(backend.clone(), CullOn::Gpu, 2);
    if !r.gpu_cull() {
        assert!(std::env::var_os("CI").is_none(), "{api:?}: no GPU culling on CI: {:?}", r.cull_fallback());
        eprintln!("skipping: {api:?} cannot cull on the GPU: {:?}", r.cull_fallback());
        return;
    }
    let mut cameras = [camera(Vec3::new(0.0, 12.0, 40.0), Vec3::ZERO), sun()];
    let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    assert_eq!((s.gpu_culled_views, s.buckets_built), (2, 2));
    r.flush().unwrap();
    check_against_oracle(&r, "first frame");
    // Moving objects: their bounds reach the GPU with their transforms.
    let mut rng = rand_pcg::Pcg32::seed_from_u64(5);
    let moved: Vec<(ObjectId, Mat4)> = ids.iter().step_by(5).map(|&id| (id, random_place(&mut rng))).collect();
    r.set_transforms(&moved).unwrap();
    let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    assert_eq!(s.buckets_built, 0, "moves change no bucket");
    r.flush().unwrap();
    check_against_oracle(&r, "after moves");
    // A moving camera.
    cameras[0] = camera(Vec3::new(-30.0, 8.0, -10.0), Vec3::new(10.0, 0.0, 5.0));
    r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    r.flush().unwrap();
    check_against_oracle(&r, "after the camera moved");
    // Removing objects rebuilds the buckets.
    r.remove_objects(&ids[..100]).unwrap();
    let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    assert_eq!(s.buckets_built, 2);
    r.flush().unwrap();
    check_against_oracle(&r, "after removals");
    // The sun draws only the casters that can shade the main view: more planes.
    cameras[1].receivers = Some(cameras[0].view_proj);
    r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    r.flush().unwrap();
    let planes = r.gpu_cull_view(0).map(|g| g.frustum.planes().len());
    assert!(planes > Some(6), "{api:?}: the sun's cull has the receivers' planes: {planes:?}");
    check_against_oracle(&r, "casters of the main view");

    // The same frames culled on the CPU give the same pixels.
    let (mut c, c_ids, c_out) = scene(backend, CullOn::Cpu, 2);
    let image = |r: &mut Renderer<_>, out| {
        r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
        r.read_target(out).unwrap()
    };
    // The same edits, through this renderer's handles.
    let moved: Vec<(ObjectId, Mat4)> = c_ids.iter().step_by(5).zip(&moved).map(|(&id, &(_, m))| (id, m)).collect();
    c.set_transforms(&moved).unwrap();
    c.remove_objects(&c_ids[..100]).unwrap();
    let (on_gpu, on_cpu) = (image(&mut r, out), image(&mut c, c_out));
    assert_eq!((on_gpu.width, on_gpu.height), (WIDTH, HEIGHT));
    let differ =
        (0..WIDTH * HEIGHT).filter(|&i| on_gpu.pixel(i % WIDTH, i / WIDTH) != on_cpu.pixel(i % WIDTH, i / WIDTH));
    assert_eq!(differ.count(), 0, "{api:?}: GPU-culled pixels equal the CPU cull's");
}

#[test]
fn the_gpu_cull_equals_the_cpu_oracle_on_vulkan() {
    oracle_on(::wgpu::Backends::VULKAN);
    // lavapipe takes the cull's parameters in a storage buffer (`Caps::inlines_uniforms`);
    // the uniform buffer GPUs take, on the same device.
    let Some(adapter) = WgpuBackend::enumerate(::wgpu::Backends::VULKAN).into_iter().next() else { return };
    let mut wgpu = WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).expect("a device");
    assert!(wgpu.caps().inlines_uniforms, "lavapipe compiles a shader variant per set of uniform values");
    wgpu.set_inlines_uniforms(false);
    oracle(::wgpu::Backends::VULKAN, Arc::new(wgpu));
}

#[test]
fn the_gpu_cull_equals_the_cpu_oracle_on_gl() {
    oracle_on(::wgpu::Backends::GL);
}

#[test]
fn gpu_culled_digests_do_not_depend_on_threads_and_static_frames_build_nothing() {
    let cameras = [camera(Vec3::new(0.0, 12.0, 40.0), Vec3::ZERO), sun()];
    let digests = |threads, inlines_uniforms| {
        // Parameters in a uniform buffer, or in a storage buffer where the driver would
        // compile a shader per set of uniform values: the same commands.
        let caps = Caps { inlines_uniforms, ..NullBackend::new(false).caps() };
        let (mut r, ids, _) = scene(Arc::new(NullBackend::with_caps(caps)), CullOn::Gpu, threads);
        assert!(r.gpu_cull());
        let mut out = Vec::new();
        for f in 0..4 {
            if f == 2 {
                r.set_transforms(&[(ids[3], Mat4::from_translation(Vec3::splat(2.0)))]).unwrap();
            }
            let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
            assert_eq!(s.gpu_culled_views, 2);
            assert_eq!(s.buckets_built, if f == 0 { 2 } else { 0 }, "frame {f}");
            assert_eq!(s.dispatches, 8, "four dispatches per view");
            out.push(s.digest.unwrap());
        }
        out
    };
    let one = digests(1, false);
    assert_eq!(one, digests(3, false));
    assert_eq!(one, digests(2, true));
    assert!(one.windows(2).all(|w| w[0] == w[1]), "the stream does not depend on moves: {one:x?}");
}

#[test]
fn a_backend_without_compute_culls_on_the_cpu_and_says_why() {
    let cameras = [camera(Vec3::new(0.0, 12.0, 40.0), Vec3::ZERO), sun()];
    let caps = NullBackend::new(false).caps();
    let mut digests = Vec::new();
    for (mode, caps) in [
        (CullOn::Gpu, Caps { compute: false, ..caps }),
        (CullOn::Gpu, Caps { indirect_draws: false, ..caps }),
        (CullOn::Gpu, Caps { max_storage_buffers_per_stage: 4, ..caps }),
        (CullOn::Cpu, caps),
    ] {
        let (mut r, _, _) = scene(Arc::new(NullBackend::with_caps(caps)), mode, 2);
        assert!(!r.gpu_cull());
        assert_eq!(r.cull_fallback().is_some(), mode == CullOn::Gpu);
        let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
        assert_eq!(s.gpu_culled_views, 0);
        digests.push(s.digest.unwrap());
    }
    assert!(digests.windows(2).all(|w| w[0] == w[1]), "every fallback renders the CPU path: {digests:x?}");
    let why = gpu_cull_support(&Caps { compute: false, ..caps }).unwrap_err();
    assert!(why.contains("compute"), "{why}");
}

#[test]
fn reading_a_buffer_back_refuses_bad_input() {
    let b = NullBackend::new(false);
    let usage = BufferUsage::STORAGE | BufferUsage::COPY_SRC;
    let buf = b.create_buffer(&BufferDesc { label: "b".into(), size: 64, usage }).unwrap();
    let plain = b.create_buffer(&BufferDesc { label: "p".into(), size: 64, usage: BufferUsage::STORAGE }).unwrap();
    for (buffer, offset, len) in
        [(buf, 2, 4), (buf, 0, 6), (buf, 0, 0), (buf, 60, 8), (buf, u64::MAX - 3, 4), (plain, 0, 4)]
    {
        assert!(matches!(b.read_buffer(buffer, offset, len), Err(ReadbackError::Unsupported(_))), "{offset} {len}");
    }
    b.destroy(Resource::Buffer(buf)).unwrap();
    assert_eq!(b.read_buffer(buf, 0, 4), Err(ReadbackError::InvalidHandle));
}

#[test]
fn auto_culls_on_the_gpu_where_draws_are_dense_and_on_the_cpu_where_not() {
    let cameras = [camera(Vec3::new(0.0, 12.0, 40.0), Vec3::ZERO), sun()];
    let config = RendererConfig {
        threads: 2,
        max_objects: 20_000,
        width: WIDTH,
        height: HEIGHT,
        cull: CullOn::Auto,
        ..Default::default()
    };
    let mut r = Renderer::new(Arc::new(NullBackend::new(false)), config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]);
    r.set_graph(graph().0).unwrap();
    // 400 objects of a mesh each: one object per bucket.
    let mut rng = rand_pcg::Pcg32::seed_from_u64(3);
    let sparse: Vec<ObjectDesc> = (0..400)
        .map(|_| ObjectDesc {
            mesh: r.create_mesh(&cube()).unwrap(),
            material,
            transform: random_place(&mut rng),
            layer: 0,
            flags: CASTS_SHADOWS,
        })
        .collect();
    let sparse = r.insert_objects(&sparse).unwrap();
    let mut frame = || r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap().gpu_culled_views;
    assert_eq!(frame(), 0, "a new view starts on the CPU");
    assert_eq!(frame(), 0, "a batch per object: it stays there");
    // The singletons replaced by 15,000 objects of one mesh: dense draws on the CPU path,
    // so the GPU from the next frame.
    r.remove_objects(&sparse).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let dense: Vec<ObjectDesc> = (0..15_000)
        .map(|_| ObjectDesc { mesh, material, transform: random_place(&mut rng), layer: 0, flags: CASTS_SHADOWS })
        .collect();
    let dense = r.insert_objects(&dense).unwrap();
    let mut frame = || r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap().gpu_culled_views;
    assert_eq!(frame(), 0);
    assert_eq!(frame(), 2, "dense draws: on the GPU");
    assert_eq!(frame(), 2);
    // Back to singletons: a bucket per object sends the views back to the CPU.
    r.remove_objects(&dense).unwrap();
    let singles: Vec<ObjectDesc> = (0..400)
        .map(|_| ObjectDesc {
            mesh: r.create_mesh(&cube()).unwrap(),
            material,
            transform: random_place(&mut rng),
            layer: 0,
            flags: CASTS_SHADOWS,
        })
        .collect();
    r.insert_objects(&singles).unwrap();
    let mut frame = || r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
    let s = frame();
    assert_eq!((s.gpu_culled_views, s.buckets_built), (2, 2));
    assert_eq!(frame().gpu_culled_views, 0, "sparse buckets: on the CPU");
}
