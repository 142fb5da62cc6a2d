//! Graphs of 1, 4 and 20 scene passes, each of its own camera, over 100 to 1M objects: the
//! command stream is the same on any thread count.

use super::*;
use switchyard::{LoadOp, StoreOp};

/// A graph of `passes` scene passes, each with its own camera and retained targets:
/// forward passes (color and depth, the three queues in turn) and shadow passes (depth)
/// alternating.
fn many_passes(passes: usize) -> FrameGraph {
    let mut g = FrameGraph::new();
    let size = TargetSize::Fixed { width: 32, height: 32 };
    for p in 0..passes {
        let cam = g.camera(format!("cam{p}"));
        let depth = g.target(format!("depth{p}"), TargetKind::Retained, TextureFormat::Depth32Float, size);
        let pass = if p % 2 == 0 {
            let color = g.target(format!("color{p}"), TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, size);
            let queue = [Queue::All, Queue::Opaque, Queue::Transparent][p / 2 % 3];
            Pass::scene(format!("forward{p}"), cam, PassKind::Forward, queue).color(
                color,
                LoadOp::Clear([0.0; 4]),
                StoreOp::Store,
            )
        } else {
            Pass::scene(format!("shadow{p}"), cam, PassKind::Shadow, Queue::All)
        };
        g.pass(pass.depth(depth, LoadOp::Clear(1.0), StoreOp::Store));
    }
    g
}

/// Digests of `frames` frames of `many_passes(passes)` over `objects` random objects on
/// `threads` workers; a tenth of the objects move between frames.
fn many_pass_digests(threads: usize, passes: usize, objects: usize, frames: usize) -> Vec<u64> {
    let mut w = world_of(threads, true, 12, objects.max(1024));
    let ids = populate(&mut w, 5, objects);
    w.r.set_graph(many_passes(passes)).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(6);
    (0..frames)
        .map(|f| {
            let cameras: Vec<Camera> = (0..passes)
                .map(|p| {
                    let v = &views(f as f32 * 0.05 + p as f32 * 0.7)[p % 2];
                    Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: v.layer_mask, receivers: None }
                })
                .collect();
            let moved: Vec<(ObjectId, Mat4)> = ids
                .iter()
                .step_by(10)
                .map(|&id| {
                    let p = Vec3::new(rng.gen_range(-60.0..60.0), rng.gen_range(0.0..10.0), rng.gen_range(-60.0..60.0));
                    (id, Mat4::from_translation(p))
                })
                .collect();
            w.r.set_transforms(&moved).unwrap();
            let s = w.r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).unwrap();
            assert_eq!(s.views as usize, passes);
            s.digest.unwrap()
        })
        .collect()
}

#[test]
fn digests_are_equal_for_any_thread_count_with_1_4_and_20_scene_passes() {
    for (passes, objects) in [(1, 100), (4, 100), (20, 100), (1, 40_000), (4, 40_000), (20, 40_000)] {
        let one = many_pass_digests(1, passes, objects, 3);
        for threads in [2, 3, 8, 16] {
            assert_eq!(
                many_pass_digests(threads, passes, objects, 3),
                one,
                "{passes} passes, {objects} objects, {threads} threads"
            );
        }
    }
}

#[test]
fn digests_are_equal_for_any_thread_count_at_a_million_objects() {
    let one = many_pass_digests(1, 4, 1_000_000, 2);
    assert_eq!(many_pass_digests(16, 4, 1_000_000, 2), one);
}
