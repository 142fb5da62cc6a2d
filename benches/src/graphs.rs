//! Frame-graph workloads: what a declared graph costs per frame with its compile cached,
//! per pass, and what compiling it costs.

use std::sync::Arc;
use std::time::Instant;

use switchyard::backend::null::NullBackend;
use switchyard::backend::TextureFormat;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};

use crate::frames;

/// A blur step at half resolution (the chain's fullscreen passes).
const STEP: &str = "
@group(0) @binding(3) var src: texture_2d<f32>;
@fragment
fn fs_step(v: FullscreenVertex) -> @location(0) vec4<f32> {
    return textureSample(src, frame_sampler, v.uv) * frame.params[0].x;
}
";

fn step(name: &str) -> FullscreenShader {
    FullscreenShader { name: name.into(), wgsl: STEP.into(), entry: "fs_step".into(), params: [1.0; 8] }
}

/// Two shadow cascades, opaque and transparent scene passes; then, with `others`, a chain
/// of ten fullscreen passes at half resolution, a post pass and an engine callback (16
/// passes), or else one callback pass into the output (5 passes). Cameras: two suns, main.
pub fn graph(others: bool) -> FrameGraph {
    let mut g = FrameGraph::new();
    let suns = [g.camera("sun-0"), g.camera("sun-1")];
    let main = g.camera("main");
    let map = TargetSize::Fixed { width: 1024, height: 1024 };
    let color = g.target("color", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let mut maps = Vec::new();
    for (k, &sun) in suns.iter().enumerate() {
        let t = g.target(format!("shadow-{k}"), TargetKind::Transient, TextureFormat::Depth32Float, map);
        g.pass(Pass::scene(format!("shadow-{k}"), sun, PassKind::Shadow, Queue::All).depth(
            t,
            LoadOp::Clear(1.0),
            StoreOp::Store,
        ));
        maps.push(t);
    }
    for (name, queue, first) in [("opaque", Queue::Opaque, true), ("transparent", Queue::Transparent, false)] {
        let (cl, dl) = if first { (LoadOp::Clear([0.0; 4]), LoadOp::Clear(1.0)) } else { (LoadOp::Load, LoadOp::Load) };
        let store = if first { StoreOp::Store } else { StoreOp::Discard };
        g.pass(
            Pass::scene(name, main, PassKind::Forward, queue)
                .color(color, cl, StoreOp::Store)
                .depth(depth, dl, store)
                .sample(maps[0])
                .sample(maps[1]),
        );
    }
    if !others {
        g.pass(Pass::callback("present", |_, _| {}).color(out, LoadOp::Load, StoreOp::Store).sample(color));
        return g;
    }
    let mut input = color;
    for i in 0..10 {
        let t =
            g.target(format!("chain-{i}"), TargetKind::Transient, TextureFormat::Rgba8Unorm, TargetSize::Scaled(0.5));
        g.pass(
            Pass::fullscreen(format!("chain-{i}"), step("chain"))
                .color(t, LoadOp::DontCare, StoreOp::Store)
                .sample(input),
        );
        input = t;
    }
    g.pass(
        Pass::fullscreen("post", step("post")).color(out, LoadOp::DontCare, StoreOp::Store).sample(color).sample(input),
    );
    g.pass(Pass::callback("overlay", |_, _| {}).color(out, LoadOp::Load, StoreOp::Store));
    g
}

/// What [`graph_frames`] measured of one graph.
#[derive(Clone, Copy, Debug)]
pub struct GraphCost {
    /// Passes that ran.
    pub passes: usize,
    /// Median CPU time of a frame (`render_graph`, null backend), ms.
    pub frame_ms: f64,
    /// Median time of `set_graph` (compile and plan), ms.
    pub set_ms: f64,
}

/// The city of `objects` objects rendered on the null backend through [`graph`] without
/// and with the other passes, one renderer each, their frames alternating (so both see
/// the same machine): `frames` frames each after a warm-up, `set_graph` timed `sets` times.
pub fn graph_frames(threads: usize, objects: usize, frames: u32, sets: usize) -> [GraphCost; 2] {
    let mut rs = [false, true].map(|others| {
        let (mut r, c) = frames::city(Arc::new(NullBackend::new(true)), objects, threads, true);
        let set = crate::median(sets, || graph(others), |g| r.set_graph(g).expect("graph"));
        (r, c, set.as_secs_f64() * 1e3, Vec::with_capacity(frames as usize), 0)
    });
    for f in 0..frames + 5 {
        // A B, then B A: neither always runs right after the other.
        if f % 2 == 1 {
            rs.swap(0, 1);
        }
        for (r, c, _, times, passes) in &mut rs {
            let v = c.views(f, 3, 16.0 / 9.0);
            let cam = |v: &View| Camera {
                view_proj: v.view_proj,
                eye: v.eye,
                far: v.far,
                layer_mask: v.layer_mask,
                receivers: None,
            };
            let cameras = [cam(&v[1]), cam(&v[2]), cam(&v[0])];
            let t = Instant::now();
            let s = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] }).expect("frame");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            *passes = s.pass_count as usize;
            if f >= 5 {
                times.push(ms);
            }
        }
    }
    if (frames + 5) % 4 >= 2 {
        rs.swap(0, 1);
    }
    rs.map(|(mut r, _, set_ms, times, passes)| {
        r.flush().expect("flush");
        GraphCost { passes, frame_ms: frames::percentile(&times, 0.5), set_ms }
    })
}
