//! An opaque forward pass after a depth prepass of the same camera draws the prepass's
//! visible set (`RendererConfig::reuse_prepass_cull`): no cull and no occlusion split of
//! its own. On lavapipe (with and without count buffers) and llvmpipe, over a camera
//! flight that hides and uncovers boxes behind a wall, the images equal those of the pass
//! culling on its own, pixel for pixel, and its draws read the prepass's records. On the
//! null backend the stream does not depend on the thread count, the frame has fewer
//! dispatches and passes, and a prepass of another camera, one submitted after the pass,
//! or the option off, leave the pass culling on its own.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::{differing_pixels, look_camera, wgpu_backend};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 100;

/// How the graph's prepass relates to the opaque pass.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Prepass {
    /// Before it, same camera: shared.
    Before,
    /// Before it, another camera.
    OtherCamera,
    /// After it (declared after; nothing orders it first).
    After,
}

fn graph(prepass: Prepass) -> (FrameGraph, TargetId) {
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let other = g.camera("other");
    let d = TextureFormat::Depth32Float;
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let pre = g.target("pre", TargetKind::Retained, d, TargetSize::Output);
    // Transient: the opaque pass ends its lifetime, which would put it first; the graph
    // runs a depth prepass of its camera and queue declared before it first anyway.
    let depth = g.target("depth", TargetKind::Transient, d, TargetSize::Output);
    let pre_camera = if prepass == Prepass::OtherCamera { other } else { main };
    let pre_pass =
        Pass::scene("pre", pre_camera, PassKind::Depth, Queue::Opaque).depth(pre, LoadOp::Clear(1.0), StoreOp::Store);
    let opaque = Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
        .color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store)
        .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard);
    if prepass == Prepass::After {
        g.pass(opaque);
        g.pass(pre_pass);
    } else {
        g.pass(pre_pass);
        g.pass(opaque);
    }
    (g, out)
}

/// A wall with boxes behind and around it, eight meshes and three materials.
fn scene<B: Backend>(backend: Arc<B>, reuse: bool, prepass: Prepass, threads: usize) -> (Renderer<B>, TargetId) {
    let config = RendererConfig {
        threads,
        max_objects: 1024,
        width: WIDTH,
        height: HEIGHT,
        cull: CullOn::Gpu,
        occlusion: true,
        reuse_prepass_cull: reuse,
        ..Default::default()
    };
    let mut r = Renderer::new(backend, config).unwrap();
    let (meshes, materials) = switchyard_tests::lit_boxes(&mut r, 8);
    let (g, out) = graph(prepass);
    r.set_graph(g).unwrap();
    let mut objects = vec![ObjectDesc {
        mesh: meshes[0],
        material: materials[0],
        transform: Mat4::from_translation(Vec3::new(0.0, 0.0, 4.0)) * Mat4::from_scale(Vec3::new(16.0, 8.0, 0.5)),
        layer: 0,
        flags: 0,
    }];
    objects.extend((0..400).map(|i| {
        let (x, z) = ((i % 20) as f32 * 2.0 - 19.0, (i / 20) as f32 * -2.0);
        ObjectDesc {
            mesh: meshes[i % 8],
            material: materials[(i / 7) % 3],
            transform: Mat4::from_translation(Vec3::new(x, 0.0, z)) * Mat4::from_scale(Vec3::splat(0.8)),
            layer: 0,
            flags: 0,
        }
    }));
    r.insert_objects(&objects).unwrap();
    (r, out)
}

/// Behind the wall (most boxes hidden), stepping out from behind it (boxes uncovered),
/// above (every box seen), and back.
fn cameras(frame: usize) -> [Camera; 2] {
    let aspect = WIDTH as f32 / HEIGHT as f32;
    let eye = [
        Vec3::new(0.0, 2.0, 12.0),
        Vec3::new(0.0, 2.0, 12.0),
        Vec3::new(12.0, 3.0, 12.0),
        Vec3::new(0.0, 30.0, 14.0),
        Vec3::new(0.0, 2.0, 12.0),
        Vec3::new(-9.0, 2.0, 10.0),
    ][frame % 6];
    let main = look_camera(eye, Vec3::new(0.0, 0.0, -15.0), aspect, 80.0);
    [main, look_camera(Vec3::new(5.0, 40.0, 5.0), Vec3::new(0.0, 0.0, -15.0), aspect, 80.0)]
}

fn same_images_on(api: ::wgpu::Backends, encoding: Encoding) {
    let Some(backend) = wgpu_backend(api, encoding) else { return };
    let counts = encoding == Encoding::CommandBuffer && api == ::wgpu::Backends::VULKAN;
    assert_eq!(backend.caps().indirect_count, counts, "lavapipe's command buffers have count buffers");
    let (mut shared, out) = scene(backend.clone(), true, Prepass::Before, 2);
    let (mut alone, alone_out) = scene(backend.clone(), false, Prepass::Before, 2);
    assert!(shared.gpu_cull() && shared.occlusion(), "{:?}", shared.cull_fallback());
    for frame in 0..12 {
        let cams = cameras(frame);
        let input = FrameInput { cameras: &cams, targets: &[] };
        let (s, a) = (shared.render_graph(&input).unwrap(), alone.render_graph(&input).unwrap());
        let at = format!("{api:?} {encoding:?} frame {frame}");
        assert_eq!((s.shared_culls, a.shared_culls), (1, 0), "{at}");
        assert_eq!((s.occluded_views, a.occluded_views), (1, 2), "{at}: only the prepass is split");
        // The opaque pass's draws read the prepass's records.
        let pre = shared.gpu_cull_view(0).expect("the prepass is culled on the GPU").args;
        let draws = shared.view_output(1).unwrap().chunks.concat();
        let mut n = 0;
        // With count buffers the pass's multi-draws are the prepass's: it takes the packed
        // records.
        let counted = shared.indirect_count();
        for c in &draws {
            match *c {
                Command::MultiDrawIndexedIndirect { buffer, .. } => {
                    assert!(!counted, "{at}: the packed records where there are count buffers");
                    assert_eq!(buffer, pre, "{at}");
                    n += 1;
                }
                Command::MultiDrawIndexedIndirectCount { buffer, count_buffer, .. } => {
                    assert_eq!((buffer, count_buffer), (pre, pre), "{at}");
                    n += 1;
                }
                Command::Draw { .. } | Command::DrawIndexed { .. } => panic!("{at}: a direct draw"),
                _ => {}
            }
        }
        assert!(n > 0, "{at}: the pass draws");
        let (img, alone_img) = (shared.read_target(out).unwrap(), alone.read_target(alone_out).unwrap());
        assert_eq!(differing_pixels(&img, &alone_img), 0, "{at}: the same image as culling on its own");
        let counts = shared.gpu_cull_counts(1).unwrap().expect("the prepass's counts");
        assert_eq!(Some(counts), shared.gpu_cull_counts(0).unwrap(), "{at}");
        // Frame 0 keeps everything in the frustum (no depth from a frame before); the
        // same camera's next frame culls the boxes behind the wall.
        if frame == 1 {
            assert!(counts.first_phase + counts.second_phase < 250, "{at}: the wall hides boxes: {counts:?}");
        }
    }
}

#[test]
fn the_opaque_pass_draws_the_prepass_visible_set_on_vulkan() {
    // Command buffers: with count buffers (lavapipe has them); bundles: without.
    same_images_on(::wgpu::Backends::VULKAN, Encoding::CommandBuffer);
    same_images_on(::wgpu::Backends::VULKAN, Encoding::RenderBundle);
}

#[test]
fn the_opaque_pass_draws_the_prepass_visible_set_on_gl() {
    same_images_on(::wgpu::Backends::GL, Encoding::RenderBundle);
}

#[test]
fn shared_culls_on_the_null_backend() {
    let run = |reuse: bool, prepass: Prepass, threads: usize| {
        let (mut r, _) = scene(Arc::new(NullBackend::new(true)), reuse, prepass, threads);
        let stats: Vec<FrameStats> =
            (0..6).map(|f| r.render_graph(&FrameInput { cameras: &cameras(f), targets: &[] }).unwrap()).collect();
        let last = *stats.last().unwrap();
        (stats.iter().map(|s| s.digest.unwrap()).collect::<Vec<_>>(), last)
    };
    let (digests, s) = run(true, Prepass::Before, 1);
    for threads in [2, 3] {
        assert_eq!(run(true, Prepass::Before, threads).0, digests, "{threads} threads");
    }
    assert_eq!((s.shared_culls, s.occluded_views, s.gpu_culled_views), (1, 1, 2));
    let (other, alone) = (run(false, Prepass::Before, 1).1, run(true, Prepass::OtherCamera, 1).1);
    for (what, a) in [("off", &alone), ("another camera", &other)] {
        assert_eq!((a.shared_culls, a.occluded_views), (0, 2), "{what}");
        // The opaque pass's own cull: seven dispatches in each phase, the pyramid's between.
        assert!(a.dispatches >= s.dispatches + 14, "{what}: {} against {}", a.dispatches, s.dispatches);
        assert!(a.chunks > s.chunks, "{what}");
    }
    let after = run(true, Prepass::After, 1).1;
    assert_eq!(after.shared_culls, 0, "a prepass submitted after the pass");
}
