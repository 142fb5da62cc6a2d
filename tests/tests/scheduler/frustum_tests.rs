//! Scene passes of one camera test the objects against its frustum once: a depth prepass,
//! the opaque and the transparent queue see the same objects in the frustum and differ
//! only in which of them their queue keeps.

use super::*;
use switchyard::{LoadOp, StoreOp};

/// The graph: two shadow passes of the light, a forward pass of the light's camera (it
/// keeps objects that cast no shadow: it tests on its own), and a depth prepass, an
/// opaque and a transparent pass of the main camera. Every pass stores into a retained
/// target, so none is culled from the graph.
fn graph() -> FrameGraph {
    let mut g = FrameGraph::new();
    let (main, light) = (g.camera("main"), g.camera("light"));
    let retained =
        |g: &mut FrameGraph, name: &str, format| g.target(name, TargetKind::Retained, format, TargetSize::Output);
    let (color, depth) = (TextureFormat::Rgba8UnormSrgb, TextureFormat::Depth32Float);
    for name in ["shadow-a", "shadow-b"] {
        let map = retained(&mut g, name, depth);
        g.pass(Pass::scene(name, light, PassKind::Shadow, Queue::All).depth(map, LoadOp::Clear(1.0), StoreOp::Store));
    }
    let (lit, lit_depth) = (retained(&mut g, "lit", color), retained(&mut g, "lit-depth", depth));
    g.pass(
        Pass::scene("light-forward", light, PassKind::Forward, Queue::All)
            .color(lit, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(lit_depth, LoadOp::Clear(1.0), StoreOp::Store),
    );
    let (out, pre, main_depth) =
        (retained(&mut g, "out", color), retained(&mut g, "pre", depth), retained(&mut g, "depth", depth));
    g.pass(Pass::scene("pre", main, PassKind::Depth, Queue::Opaque).depth(pre, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(
        Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
            .color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(main_depth, LoadOp::Clear(1.0), StoreOp::Store),
    );
    g.pass(
        Pass::scene("transparent", main, PassKind::Forward, Queue::Transparent)
            .color(out, LoadOp::Load, StoreOp::Store)
            .depth(main_depth, LoadOp::Load, StoreOp::Store),
    );
    g
}

/// The graph's cameras at `t`: the main one orbits, sees layers 0-2 only; the light is
/// still.
fn cameras(t: f32) -> [Camera; 2] {
    let [main, light] = &views(t)[..] else { unreachable!("views() gives two views") };
    let camera =
        |v: &View| Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: v.layer_mask, receivers: None };
    [camera(main), camera(light)]
}

/// Each scene pass's view, in the graph's order, for the reference.
fn pass_views(t: f32) -> Vec<View> {
    let [main, light] = cameras(t);
    let view = |c: &Camera, pass| View {
        label: "",
        view_proj: c.view_proj,
        eye: c.eye,
        far: c.far,
        layer_mask: c.layer_mask,
        pass,
    };
    vec![
        view(&light, PassKind::Shadow),
        view(&light, PassKind::Shadow),
        view(&light, PassKind::Forward),
        view(&main, PassKind::Depth),
        view(&main, PassKind::Forward),
        view(&main, PassKind::Forward),
    ]
}

/// The second shadow pass takes the first one's frustum test, the opaque and transparent
/// passes take the prepass's (the second shadow pass and the opaque pass in the same pass
/// over the objects as their leader's); the light's forward pass tests on its own. Every view's
/// visible set, keys, queue, batches and commands match the reference (which tests every
/// object for every view) while the camera orbits, objects move, come and go, and frames
/// without changes keep the still light's culls (the last one every view's); the command streams are the same on 1, 2, 3 and 8
/// threads.
#[test]
fn views_of_one_camera_take_the_first_ones_frustum_test() {
    let run = |threads: usize| {
        let mut w = world(threads, true, 14);
        let ids = populate(&mut w, 17, 6_000);
        w.r.set_graph(graph()).unwrap();
        let mut digests = Vec::new();
        for f in 0..8 {
            match f {
                2 => w.r.set_transforms(&[(ids[5], Mat4::from_translation(Vec3::new(0.0, 1.0, 3.0)))]).unwrap(),
                3 => w.r.remove_objects(&ids[100..400]).unwrap(),
                5 => {
                    populate(&mut w, 18, 700);
                }
                _ => {}
            }
            // Frame 7 repeats frame 6: every view keeps its cull.
            let t = [0.0, 0.1, 0.1, 0.2, 0.3, 0.4, 0.5, 0.5][f];
            let stats = w.r.render_graph(&FrameInput { cameras: &cameras(t), targets: &[] }).unwrap();
            w.r.flush().unwrap();
            assert_eq!(stats.views, 6);
            // The still light's three views keep their culls in frames after one without
            // edits; a kept view takes nothing.
            let (kept, taken) = [(0, 3), (3, 2), (0, 3), (0, 3), (3, 2), (0, 3), (3, 2), (6, 0)][f];
            assert_eq!(stats.culls_kept, kept, "frame {f}: views that kept their cull");
            assert_eq!(stats.frustum_tests_taken, taken, "frame {f}: views that took an earlier view's test");
            // The first follower of each leader that culls on the CPU is culled in its pass
            // (shadow-b in shadow-a's unless the light's views are kept, opaque in the
            // prepass's); the transparent pass takes the prepass's test in a job of its own.
            let joined = [2, 1, 2, 2, 1, 2, 1, 0][f];
            assert_eq!(stats.culls_joined, joined, "frame {f}: views culled in their leader's pass");
            assert_matches_reference(&w, &pass_views(t), &stats, f);
            let [_, _, _, pre, opaque, transparent] = stats.visible[..6] else { unreachable!() };
            assert!(opaque > 0 && transparent > 0, "frame {f}: both queues see objects");
            assert_eq!(pre, opaque, "frame {f}: the prepass draws the opaque queue");
            digests.push(stats.digest.unwrap());
        }
        digests
    };
    let one = run(1);
    for threads in [2, 3, 8] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}
