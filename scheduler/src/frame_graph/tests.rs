use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard_backend::TextureFormat::{Depth32Float, Rgba8Unorm, Rgba8UnormSrgb};

use super::*;

const SKY: LoadOp<[f64; 4]> = LoadOp::Clear([0.0, 0.0, 0.0, 1.0]);
const FORMATS: compile::GraphCaps = compile::GraphCaps {
    colors: &FORWARD_FORMATS,
    depth: Depth32Float,
    max_side: 8192,
    sample_counts: 1 | 4,
    occlusion: false,
};

/// A pass whose content puts no demands on its attachments (an engine callback).
fn pass(name: impl Into<String>) -> Pass {
    Pass::callback(name, |_, _| {})
}

fn owned(g: &mut FrameGraph, name: &str, format: TextureFormat, size: TargetSize) -> TargetId {
    g.target_multisampled(name, TargetKind::Transient, format, size, 1)
}

/// shadow → opaque (samples shadow) → post (samples hdr) → ui (loads out), with shadow and
/// opaque declared after the passes that need them. Writers of one target keep their
/// declared order (post, then ui on `out`; opaque, then debug on `hdr`).
fn deferred_like() -> (FrameGraph, [TargetId; 4]) {
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8UnormSrgb, TargetSize::Output, 1);
    let hdr = owned(&mut g, "hdr", Rgba8Unorm, TargetSize::Output);
    let depth = owned(&mut g, "depth", Depth32Float, TargetSize::Output);
    let shadow = owned(&mut g, "shadow", Depth32Float, TargetSize::Fixed { width: 512, height: 512 });
    g.pass(pass("post").color(out, LoadOp::DontCare, StoreOp::Store).sample(hdr));
    g.pass(pass("ui").color(out, LoadOp::Load, StoreOp::Store));
    g.pass(
        pass("opaque")
            .color(hdr, SKY, StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .sample(shadow),
    );
    g.pass(pass("shadow").depth(shadow, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(pass("debug").color(hdr, LoadOp::Load, StoreOp::Store));
    (g, [out, hdr, depth, shadow])
}

fn names(g: &FrameGraph, order: &[usize]) -> Vec<String> {
    order.iter().map(|&p| g.passes[p].name.clone()).collect()
}

#[test]
fn order_follows_dependencies_and_puts_offscreen_work_first() {
    let (g, _) = deferred_like();
    let c = g.compile((64, 32), FORMATS).unwrap();
    // `debug` writes hdr after `opaque` (declared later), so `post`, which samples hdr, waits
    // for it; `ui` loads what `post` wrote.
    assert_eq!(names(&g, &c.order), ["shadow", "opaque", "debug", "post", "ui"]);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.sizes[1], (64, 32));
    assert_eq!(c.sizes[3], (512, 512));
}

#[test]
fn a_depth_prepass_runs_before_the_forward_passes_of_its_camera_and_queue() {
    use crate::material::PassKind::{Depth, Forward};
    // The opaque pass would go first (it ends the transient depth's lifetime); declared
    // after a depth prepass of its camera and queue, it follows it. One of another camera,
    // or declared before the prepass, keeps the old order.
    let order =
        |prepass_camera: usize, prepass_first: bool| {
            let mut g = FrameGraph::default();
            let cameras = [g.camera("main"), g.camera("other")];
            let out = g.target_multisampled("out", TargetKind::Retained, Rgba8UnormSrgb, TargetSize::Output, 1);
            let pre = g.target_multisampled("pre", TargetKind::Retained, Depth32Float, TargetSize::Output, 1);
            let depth = owned(&mut g, "depth", Depth32Float, TargetSize::Output);
            let prepass = Pass::scene("pre", cameras[prepass_camera], Depth, Queue::Opaque).depth(
                pre,
                LoadOp::Clear(1.0),
                StoreOp::Store,
            );
            let opaque = Pass::scene("opaque", cameras[0], Forward, Queue::Opaque)
                .color(out, SKY, StoreOp::Store)
                .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard);
            if prepass_first {
                g.pass(prepass);
                g.pass(opaque);
            } else {
                g.pass(opaque);
                g.pass(prepass);
            }
            let c = g.compile((8, 8), FORMATS).unwrap();
            names(&g, &c.order)
        };
    assert_eq!(order(0, true), ["pre", "opaque"]);
    assert_eq!(order(1, true), ["opaque", "pre"]);
    assert_eq!(order(0, false), ["opaque", "pre"]);
}

#[test]
fn unused_passes_are_skipped_and_reported() {
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
    let scratch = owned(&mut g, "scratch", Rgba8Unorm, TargetSize::Output);
    g.pass(pass("main").color(out, SKY, StoreOp::Store));
    g.pass(pass("orphan").color(scratch, SKY, StoreOp::Store));
    let c = g.compile((8, 8), FORMATS).unwrap();
    assert_eq!(names(&g, &c.order), ["main"]);
    assert!(c.warnings.contains(&GraphWarning::Skipped { pass: "orphan".into() }));
    assert_eq!(c.lifetimes[scratch.0 as usize], None);
}

#[test]
fn passes_whose_every_output_is_overwritten_before_a_read_are_skipped() {
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
    let t = owned(&mut g, "t", Rgba8Unorm, TargetSize::Output);
    g.pass(pass("lost").color(t, SKY, StoreOp::Store)); // cleared again before a read
    g.pass(pass("kept").color(t, LoadOp::DontCare, StoreOp::Store));
    g.pass(pass("added").color(t, LoadOp::Load, StoreOp::Store)); // loads what `kept` wrote
    g.pass(pass("early-out").color(out, SKY, StoreOp::Store)); // the output is cleared again
    g.pass(pass("final").color(out, SKY, StoreOp::Store).sample(t));
    let c = g.compile((8, 8), FORMATS).unwrap();
    assert_eq!(names(&g, &c.order), ["kept", "added", "final"]);
    for p in ["lost", "early-out"] {
        assert!(c.warnings.contains(&GraphWarning::Skipped { pass: p.into() }), "{p}: {:?}", c.warnings);
    }
    // A discarded store feeds nothing either; a depth write kept for a later load does.
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
    let depth = owned(&mut g, "depth", Depth32Float, TargetSize::Output);
    g.pass(pass("discarded").depth(depth, LoadOp::Clear(1.0), StoreOp::Discard));
    g.pass(pass("prepass").depth(depth, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(pass("main").color(out, SKY, StoreOp::Store).depth(depth, LoadOp::Load, StoreOp::Discard));
    let c = g.compile((8, 8), FORMATS).unwrap();
    assert_eq!(names(&g, &c.order), ["prepass", "main"]);
}

#[test]
fn each_error_names_the_pass_or_target() {
    let base = || {
        let mut g = FrameGraph::default();
        let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
        let depth = owned(&mut g, "depth", Depth32Float, TargetSize::Output);
        (g, out, depth)
    };
    let err = |g: &FrameGraph| g.compile((16, 16), FORMATS).unwrap_err();

    let (mut g, out, _) = base();
    g.pass(pass("a").color(out, SKY, StoreOp::Store));
    g.pass(pass("a").color(out, LoadOp::Load, StoreOp::Store));
    assert_eq!(err(&g), GraphError::DuplicateName { what: "passes", name: "a".into() });

    let (mut g, _, _) = base();
    g.pass(pass("empty"));
    assert_eq!(err(&g), GraphError::NoAttachments { pass: "empty".into() });

    let (mut g, _, _) = base();
    g.pass(pass("p").color(TargetId(9, g.tag), SKY, StoreOp::Store));
    assert_eq!(err(&g), GraphError::UnknownTarget { pass: "p".into(), target: 9 });

    let (mut g, _, depth) = base();
    g.pass(pass("p").color(depth, SKY, StoreOp::Store));
    assert!(matches!(err(&g), GraphError::FormatMismatch { pass, target, .. } if pass == "p" && target == "depth"));

    let (mut g, out, _) = base();
    let small = owned(&mut g, "small", Depth32Float, TargetSize::Fixed { width: 4, height: 4 });
    g.pass(pass("p").color(out, SKY, StoreOp::Store).depth(small, LoadOp::Clear(1.0), StoreOp::Discard));
    assert_eq!(err(&g), GraphError::SizeMismatch { pass: "p".into() });

    let (mut g, out, _) = base();
    g.pass(pass("p").color(out, SKY, StoreOp::Store).sample(out));
    assert!(matches!(err(&g), GraphError::SampledAndWritten { .. }));

    let (mut g, out, _) = base();
    let never = owned(&mut g, "never", Rgba8Unorm, TargetSize::Output);
    g.pass(pass("p").color(out, SKY, StoreOp::Store).sample(never));
    assert_eq!(err(&g), GraphError::MissingInput { pass: "p".into(), target: "never".into() });

    let (mut g, out, _) = base();
    g.pass(pass("p").color(out, SKY, StoreOp::Store));
    g.target_multisampled("bad", TargetKind::Transient, Rgba8Unorm, TargetSize::Fixed { width: 0, height: 4 }, 1);
    assert!(matches!(err(&g), GraphError::InvalidTarget { target, .. } if target == "bad"));
    for scale in [0.0, -1.0, f32::NAN, 17.0] {
        let (mut g, out, _) = base();
        g.pass(pass("p").color(out, SKY, StoreOp::Store));
        g.target("scaled", TargetKind::Transient, Rgba8Unorm, TargetSize::Scaled(scale));
        assert!(matches!(err(&g), GraphError::InvalidTarget { target, .. } if target == "scaled"), "{scale}");
    }
    assert_eq!(err(&FrameGraph::new()), GraphError::Empty);

    let (mut g, out, _) = base();
    let msaa = g.target_multisampled("msaa", TargetKind::Transient, Rgba8Unorm, TargetSize::Output, 4);
    g.pass(pass("draw").color(msaa, SKY, StoreOp::Store));
    g.pass(pass("p").color(out, SKY, StoreOp::Store).sample(msaa));
    assert!(matches!(err(&g), GraphError::SampledMultisampled { .. }));

    // a samples b's target and b samples a's: a cycle.
    let (mut g, out, _) = base();
    let ta = owned(&mut g, "ta", Rgba8Unorm, TargetSize::Output);
    let tb = owned(&mut g, "tb", Rgba8Unorm, TargetSize::Output);
    g.pass(pass("a").color(ta, SKY, StoreOp::Store).sample(tb));
    g.pass(pass("b").color(tb, SKY, StoreOp::Store).sample(ta));
    g.pass(pass("c").color(out, SKY, StoreOp::Store).sample(ta));
    assert!(matches!(err(&g), GraphError::Cycle { pass } if pass == "a" || pass == "b"));

    // Clear values the GPU refuses.
    for (color, depth) in [
        ([f64::NAN, 0.0, 0.0, 1.0], 1.0),
        ([f64::INFINITY; 4], 1.0),
        ([0.0; 4], 2.0),
        ([0.0; 4], -0.5),
        ([0.0; 4], f32::NAN),
    ] {
        let (mut g, out, d) = base();
        g.pass(pass("p").color(out, LoadOp::Clear(color), StoreOp::Store).depth(
            d,
            LoadOp::Clear(depth),
            StoreOp::Discard,
        ));
        assert!(matches!(err(&g), GraphError::InvalidPass { pass, .. } if pass == "p"), "{color:?} {depth}");
    }
    // A resolve with no color attachment, in either order; with one, either order works.
    let (mut g, _, _) = base();
    let single = owned(&mut g, "single", Rgba8Unorm, TargetSize::Output);
    g.pass(pass("p").resolve(single));
    assert!(matches!(err(&g), GraphError::NoAttachments { .. } | GraphError::InvalidPass { .. }));
    let (mut g, out, d) = base();
    g.pass(pass("p").resolve(out).depth(d, LoadOp::Clear(1.0), StoreOp::Discard));
    assert!(matches!(err(&g), GraphError::InvalidPass { pass, .. } if pass == "p"));
    let (mut g, out, _) = base();
    let msaa = g.target_multisampled("msaa", TargetKind::Transient, Rgba8Unorm, TargetSize::Output, 4);
    g.pass(pass("p").resolve(out).color(msaa, SKY, StoreOp::Discard));
    let c = g.compile((16, 16), FORMATS).unwrap();
    assert_eq!(g.passes[c.order[0]].color.unwrap().resolve, Some(out), "resolve before color is kept");
    // Another graph's target or buffer.
    let (mut g, _, _) = base();
    let (_, theirs, _) = base();
    g.pass(pass("p").color(theirs, SKY, StoreOp::Store));
    assert!(matches!(err(&g), GraphError::UnknownTarget { pass, .. } if pass == "p"));
    let (mut g, out, _) = base();
    let their_buffer = FrameGraph::new().buffer("b");
    g.buffer("b");
    g.pass(pass("p").color(out, SKY, StoreOp::Store).writes(their_buffer));
    assert!(matches!(err(&g), GraphError::UnknownBuffer { pass, .. } if pass == "p"));
    // Past the device's limits: a side over its largest texture, a sample count it lacks.
    let (mut g, out, _) = base();
    g.pass(pass("p").color(out, SKY, StoreOp::Store));
    g.target("huge", TargetKind::Transient, Rgba8Unorm, TargetSize::Fixed { width: 8193, height: 4 });
    assert!(matches!(err(&g), GraphError::InvalidTarget { target, .. } if target == "huge"));
    let (mut g, out, _) = base();
    g.pass(pass("p").color(out, SKY, StoreOp::Store));
    g.target_multisampled("eight", TargetKind::Transient, Rgba8Unorm, TargetSize::Output, 8);
    assert!(matches!(err(&g), GraphError::InvalidTarget { target, .. } if target == "eight"));
}

#[test]
fn targets_with_disjoint_lifetimes_share_a_texture() {
    // blur chain: a → b → c (each samples the previous), all the same description; a and c
    // can share, b overlaps both.
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
    let [a, b, c] = ["a", "b", "c"].map(|n| owned(&mut g, n, Rgba8Unorm, TargetSize::Output));
    let depth = owned(&mut g, "depth", Depth32Float, TargetSize::Output);
    g.pass(pass("pa").color(a, SKY, StoreOp::Store).depth(depth, LoadOp::Clear(1.0), StoreOp::Discard));
    g.pass(pass("pb").color(b, SKY, StoreOp::Store).sample(a));
    g.pass(pass("pc").color(c, SKY, StoreOp::Store).sample(b));
    g.pass(pass("out").color(out, SKY, StoreOp::Store).sample(c));
    let cg = g.compile((32, 32), FORMATS).unwrap();
    let alias = |t: TargetId| cg.aliases[t.0 as usize].unwrap();
    assert_eq!(alias(a), alias(c), "a dies before c is born");
    assert_ne!(alias(a), alias(b));
    assert_ne!(alias(b), alias(c));
    assert_eq!(cg.aliases[out.0 as usize], None, "outputs are not the graph's to alias");
    // Depth is cleared, discarded, never sampled: transient.
    assert!(cg.physical[alias(depth)].transient);
    assert!(!cg.physical[alias(a)].transient && cg.physical[alias(a)].sampled);
    assert_eq!(cg.physical.len(), 3);
}

#[test]
fn bytes_per_pass_are_the_hand_computed_ones() {
    let (g, _) = deferred_like();
    let c = g.compile((64, 32), FORMATS).unwrap();
    let px = 64 * 32 * 4;
    let by = |name: &str| c.bytes[c.order.iter().position(|&p| g.passes[p].name == name).unwrap()];
    assert_eq!(by("shadow"), PassBytes { loaded: 0, stored: 512 * 512 * 4, resolved: 0 });
    assert_eq!(by("opaque"), PassBytes { loaded: 0, stored: px, resolved: 0 }, "depth is discarded");
    assert_eq!(by("debug"), PassBytes { loaded: px, stored: px, resolved: 0 });
    assert_eq!(by("post"), PassBytes { loaded: 0, stored: px, resolved: 0 });
    assert_eq!(by("ui"), PassBytes { loaded: px, stored: px, resolved: 0 });
    assert_eq!(c.bytes.iter().map(|b| b.loaded).sum::<u64>(), 2 * px);
    // Multisampled: the attachment's bytes count every sample, the resolve one.
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
    let msaa = g.target_multisampled("msaa", TargetKind::Transient, Rgba8Unorm, TargetSize::Output, 4);
    g.pass(pass("p").color(msaa, SKY, StoreOp::Discard).resolve(out));
    let c = g.compile((10, 10), FORMATS).unwrap();
    assert_eq!(c.bytes[0], PassBytes { loaded: 0, stored: 0, resolved: 400 });
    assert!(c.physical[0].transient, "the multisampled attachment itself needs no memory");
}

#[test]
fn warnings_for_unread_stores_and_loads_of_nothing() {
    let mut g = FrameGraph::default();
    let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
    let depth = owned(&mut g, "depth", Depth32Float, TargetSize::Output);
    let hdr = owned(&mut g, "hdr", Rgba8Unorm, TargetSize::Output);
    g.pass(pass("opaque").color(hdr, LoadOp::Load, StoreOp::Store).depth(depth, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(pass("post").color(out, SKY, StoreOp::Store).sample(hdr));
    let c = g.compile((8, 8), FORMATS).unwrap();
    assert_eq!(
        c.warnings,
        [
            GraphWarning::UnreadStore { pass: "opaque".into(), target: "depth".into() },
            GraphWarning::LoadWithoutWrite { pass: "opaque".into(), target: "hdr".into() },
        ]
    );
}

/// Random graphs: targets of a few descriptions, passes that write one or two of them and
/// sample earlier-written ones, the last pass writing the output. Valid ones compile with
/// every dependency respected and every lifetime consistent; corrupted ones give errors.
#[test]
fn random_graphs_compile_or_give_typed_errors() {
    let mut rng = Pcg64Mcg::seed_from_u64(77);
    for case in 0..300 {
        let mut g = FrameGraph::default();
        let out = g.target_multisampled("out", TargetKind::External, Rgba8Unorm, TargetSize::Output, 1);
        let n_targets = rng.gen_range(1..8);
        let targets: Vec<TargetId> = (0..n_targets)
            .map(|i| {
                let size =
                    if rng.gen_bool(0.5) { TargetSize::Output } else { TargetSize::Fixed { width: 16, height: 16 } };
                owned(&mut g, &format!("t{i}"), Rgba8Unorm, size)
            })
            .collect();
        let mut written: Vec<TargetId> = Vec::new();
        for p in 0..rng.gen_range(1..10) {
            let t = targets[rng.gen_range(0..targets.len())];
            let load = if written.contains(&t) && rng.gen_bool(0.3) { LoadOp::Load } else { SKY };
            let mut pass = pass(format!("p{p}")).color(t, load, StoreOp::Store);
            for _ in 0..rng.gen_range(0..3) {
                if let Some(&s) = written.get(rng.gen_range(0..written.len().max(1))).filter(|&&s| s != t) {
                    pass = pass.sample(s);
                }
            }
            g.pass(pass);
            written.push(t);
        }
        let mut last = pass("final").color(out, SKY, StoreOp::Store);
        if let Some(&s) = written.last() {
            last = last.sample(s);
        }
        g.pass(last);
        let corrupt = case % 3 == 0;
        if corrupt {
            // Sample something no pass writes, or write what the pass samples.
            let p = rng.gen_range(0..g.passes.len());
            let extra = owned(&mut g, "unwritten", Rgba8Unorm, TargetSize::Output);
            let t = if rng.gen_bool(0.5) { extra } else { g.passes[p].color.unwrap().target };
            g.passes[p].samples.push(t);
            assert!(g.compile((32, 32), FORMATS).is_err(), "case {case}");
            continue;
        }
        let c = match g.compile((32, 32), FORMATS) {
            Ok(c) => c,
            // A random graph can sample its way into a cycle; that must be the error.
            Err(e) => {
                assert!(matches!(e, GraphError::Cycle { .. }), "case {case}: {e}");
                continue;
            }
        };
        let pos = |p: usize| c.order.iter().position(|&q| q == p);
        assert_eq!(pos(g.passes.len() - 1).map(|i| i + 1), Some(c.order.len()), "the output pass runs last");
        for (i, &p) in c.order.iter().enumerate() {
            for &s in &g.passes[p].samples {
                // Writers whose content is overwritten before anything reads it are culled;
                // those that run, run first, and one of them does.
                let writers = (0..g.passes.len()).filter(|&q| g.passes[q].color.is_some_and(|a| a.target == s));
                let running: Vec<usize> = writers.filter_map(pos).collect();
                assert!(running.iter().all(|&j| j < i), "case {case}: a sampled target's writers run first");
                assert!(!running.is_empty(), "case {case}: a sampled target is written");
            }
        }
        for (t, l) in c.lifetimes.iter().enumerate() {
            if let (Some((a, b)), Some(s)) = (l, c.aliases[t]) {
                for (u, m) in c.lifetimes.iter().enumerate() {
                    if let (Some((x, y)), Some(s2)) = (m, c.aliases[u]) {
                        assert!(u == t || s != s2 || b < x || y < a, "case {case}: aliased lifetimes overlap");
                    }
                }
            }
        }
    }
}
