//! Count buffers (`RendererConfig::indirect_count`, `Caps::indirect_count`): a GPU-culled
//! view's multi-draws read their records from a region the cull packs with the non-empty
//! ones, and their draw count from the indirect buffer. On lavapipe (the command-buffer
//! encoding) every multi-draw's packed records are its non-empty records in bucket
//! order, for both phases of an occlusion-split pass and for the sun's pass, some are
//! skipped, and the images equal drawing every record. On the null backend the commands
//! are the plain multi-draws' with count buffers, digests equal at 1 and 3 threads, and a
//! backend without count buffers (or `indirect_count: false`) draws every record. The
//! validator's refusals are in `null_backend.rs`.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard_tests::{differing_pixels, look_camera, sun_camera, wgpu_backend};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;
/// A 40 x 40 grid of boxes: eight meshes in bands along x, three materials in bands
/// along z, so a camera that sees part of the grid leaves whole buckets empty.
const SIDE: usize = 40;

fn renderer<B: Backend>(backend: Arc<B>, count: bool, threads: usize) -> (Renderer<B>, TargetId) {
    let config = RendererConfig {
        threads,
        max_objects: SIDE * SIDE + 16,
        width: WIDTH,
        height: HEIGHT,
        cull: CullOn::Gpu,
        occlusion: true,
        indirect_count: count,
        ..Default::default()
    };
    let mut r = Renderer::new(backend, config).unwrap();
    let (meshes, materials) = switchyard_tests::lit_boxes(&mut r, 8);
    let (g, out) = switchyard_tests::shadow_and_opaque_graph(256);
    r.set_graph(g).unwrap();
    let objects: Vec<ObjectDesc> = (0..SIDE * SIDE)
        .map(|i| {
            let (x, z) = (i % SIDE, i / SIDE);
            let at = Vec3::new(x as f32 * 2.5 - 50.0, 0.0, z as f32 * 2.5 - 50.0);
            ObjectDesc {
                mesh: meshes[x * 8 / SIDE],
                material: materials[z * 3 / SIDE],
                transform: Mat4::from_translation(at) * Mat4::from_scale(Vec3::new(1.5, 1.0 + (i % 3) as f32, 1.5)),
                layer: 0,
                flags: CASTS_SHADOWS,
            }
        })
        .collect();
    r.insert_objects(&objects).unwrap();
    (r, out)
}

/// Looking along the grid from one corner (far bands out of view), then from above.
fn cameras(frame: usize) -> [Camera; 2] {
    let aspect = WIDTH as f32 / HEIGHT as f32;
    let main = if frame == 0 {
        look_camera(Vec3::new(-52.0, 3.0, -52.0), Vec3::new(-40.0, 0.0, -30.0), aspect, 40.0)
    } else {
        look_camera(Vec3::new(0.0, 60.0, 10.0), Vec3::new(0.0, 0.0, -5.0), aspect, 120.0)
    };
    [main, sun_camera(Vec3::new(-30.0, 50.0, -20.0), 30.0, 150.0)]
}

/// The plain multi-draws a count-buffer draw stands for: `(first record, count record,
/// max_count)` of every count draw in the view's first half, in order.
fn count_draws(r: &Renderer<impl Backend>, v: usize) -> Vec<(u64, u64, u32)> {
    let out = r.view_output(v).expect("the view ran");
    let cmds = out.chunks.iter().flatten();
    cmds.filter_map(|c| match *c {
        Command::MultiDrawIndexedIndirectCount { offset, count_offset, max_count, .. } => {
            Some((offset / DRAW_INDEXED_INDIRECT_SIZE, count_offset / 4, max_count))
        }
        Command::MultiDrawIndexedIndirect { .. } => panic!("view {v}: a multi-draw without its count"),
        _ => None,
    })
    .collect()
}

/// Every multi-draw's packed records (both halves of a split view) are its non-empty
/// records in order; returns the records skipped (empty) over the frame's views.
fn check_packed(r: &Renderer<impl Backend>, what: &str) -> u32 {
    let mut skipped = 0;
    for v in 0..2 {
        let g = r.gpu_cull_view(v).unwrap_or_else(|| panic!("{what}: view {v} is culled on the GPU"));
        let nb = g.starts.len() as u64 - 1;
        let halves = if g.occluded { 2 } else { 1 };
        let draws = count_draws(r, v);
        let groups = draws.len() as u64;
        assert!(groups > 0, "{what}: view {v} draws");
        let words: Vec<u32> = {
            let len = (2 * halves * nb * 5 + halves * groups) * 4;
            bytemuck::cast_slice(&r.backend().read_buffer(g.args, 0, len).expect("read back")).to_vec()
        };
        let record = |k: u64| {
            let w = &words[(5 * k) as usize..(5 * k + 5) as usize];
            [w[0], w[1], w[2], w[3], w[4]]
        };
        for half in 0..halves {
            for &(packed, count_at, max) in &draws {
                let (packed, count_at) = (packed + half * nb, count_at + half * groups);
                let count = words[count_at as usize];
                assert!(count <= max, "{what}: view {v} half {half}: {count} of {max}");
                // The plain records of the same buckets sit h·n records before.
                let plain: Vec<[u32; 5]> =
                    (0..u64::from(max)).map(|k| record(packed - halves * nb + k)).filter(|a| a[1] != 0).collect();
                let packed: Vec<[u32; 5]> = (0..u64::from(count)).map(|k| record(packed + k)).collect();
                assert_eq!(packed, plain, "{what}: view {v} half {half}: the non-empty records, in order");
                skipped += max - count;
            }
        }
    }
    skipped
}

fn on_vulkan(threads: usize) {
    let Some(backend) = wgpu_backend(::wgpu::Backends::VULKAN, Encoding::CommandBuffer) else { return };
    assert!(backend.caps().indirect_count, "lavapipe draws with count buffers");
    let (mut r, out) = renderer(backend.clone(), true, threads);
    let (mut plain, plain_out) = renderer(backend, false, threads);
    assert!(r.gpu_cull() && r.indirect_count(), "{:?}", r.cull_fallback());
    assert!(!plain.indirect_count());
    for frame in 0..3 {
        let cams = cameras(frame.min(1));
        let what = format!("frame {frame}");
        r.render_graph(&FrameInput { cameras: &cams, targets: &[] }).unwrap();
        r.flush().unwrap();
        let skipped = check_packed(&r, &what);
        assert!(skipped > 0, "{what}: some buckets are empty and skipped");
        plain.render_graph(&FrameInput { cameras: &cams, targets: &[] }).unwrap();
        let (a, b) = (r.read_target(out).unwrap(), plain.read_target(plain_out).unwrap());
        assert_eq!(differing_pixels(&a, &b), 0, "{what}: count buffers draw what every record draws");
    }
}

#[test]
fn count_buffers_draw_the_non_empty_records_in_order_on_vulkan() {
    on_vulkan(2);
}

#[test]
fn count_buffers_on_the_null_backend_are_the_plain_draws_with_counts() {
    let digests = |threads, count| {
        let (mut r, _) = renderer(Arc::new(NullBackend::new(true)), count, threads);
        assert_eq!(r.indirect_count(), count);
        let mut out = Vec::new();
        for frame in 0..3 {
            let s = r.render_graph(&FrameInput { cameras: &cameras(frame.min(1)), targets: &[] }).unwrap();
            out.push(s.digest);
            if count {
                let draws = (0..2).map(|v| count_draws(&r, v).len()).sum::<usize>();
                assert!(draws > 0, "frame {frame}: count draws");
            }
        }
        out
    };
    assert_eq!(digests(1, true), digests(3, true), "count draws do not depend on the thread count");
    assert_ne!(digests(1, true), digests(1, false), "the commands differ");

    // A backend without count buffers draws every record.
    let caps = Caps { indirect_count: false, ..NullBackend::new(true).caps() };
    let (mut r, _) = renderer(Arc::new(NullBackend::with_caps(caps)), true, 2);
    assert!(r.gpu_cull() && r.multi_draw() && !r.indirect_count());
    assert_eq!(r.indirect_count_fallback(), Some("the backend has no count buffers"));
    r.render_graph(&FrameInput { cameras: &cameras(0), targets: &[] }).unwrap();
    let out = r.view_output(1).unwrap();
    assert!(out.chunks.iter().flatten().any(|c| matches!(c, Command::MultiDrawIndexedIndirect { .. })));
    assert!(!out.chunks.iter().flatten().any(|c| matches!(c, Command::MultiDrawIndexedIndirectCount { .. })));

    // Why not, where they were asked for: no native multi-draw; none where they were not
    // asked for or nothing is culled on the GPU.
    let (r, _) = renderer(Arc::new(NullBackend::new(false)), true, 1);
    assert_eq!(r.indirect_count_fallback(), Some("the backend has no native multi-draw (render bundles have none)"));
    let (r, _) = renderer(Arc::new(NullBackend::with_caps(caps)), false, 1);
    assert_eq!(r.indirect_count_fallback(), None);
    let (r, _) = renderer(Arc::new(NullBackend::new(true)), true, 1);
    assert_eq!((r.indirect_count(), r.indirect_count_fallback()), (true, None));
    let config = RendererConfig { cull: CullOn::Cpu, ..Default::default() };
    let r = Renderer::new(Arc::new(NullBackend::with_caps(caps)), config).unwrap();
    assert_eq!((r.indirect_count(), r.indirect_count_fallback()), (false, None));
}
