//! The parallel pipeline against the single-threaded reference, display-list caching and
//! pipelines made ahead (`pipelines.rs`), and typed errors for bad input.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard::backend::null::NullBackend;
use switchyard::backend::TextureFormat;
use switchyard::*;

mod frustum_tests;
mod keys;
mod many_passes;
mod pipelines;
mod profiling;

fn cube() -> MeshData {
    let p = [[-0.5f32, 0.0, -0.5], [0.5, 0.0, -0.5], [0.5, 1.0, 0.5], [-0.5, 1.0, 0.5]];
    MeshData {
        vertices: p.iter().map(|&position| Vertex { position, normal: [0.0, 1.0, 0.0], uv: [0.0, 0.0] }).collect(),
        indices: vec![0, 1, 2, 0, 2, 3],
    }
}

struct World {
    r: Renderer<NullBackend>,
    backend: Arc<NullBackend>,
    shader: ShaderHandle,
    meshes: Vec<MeshHandle>,
    materials: Vec<MaterialHandle>,
}

fn world(threads: usize, multi_draw: bool, materials: usize) -> World {
    world_of(threads, multi_draw, materials, 50_000)
}

fn world_of(threads: usize, multi_draw: bool, materials: usize, max_objects: usize) -> World {
    world_on(WorkerPool::Own, threads, multi_draw, materials, max_objects)
}

fn world_on(pool: WorkerPool, threads: usize, multi_draw: bool, materials: usize, max_objects: usize) -> World {
    let backend = Arc::new(NullBackend::new(multi_draw));
    let config =
        RendererConfig { threads, pool, max_objects, width: 64, height: 64, shadow_map_size: 64, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let meshes = (0..6).map(|_| r.create_mesh(&cube()).unwrap()).collect();
    let materials = add_materials(&mut r, shader, materials);
    World { r, backend, shader, meshes, materials }
}

/// `n` materials of `shader`: keywords none, SPECULAR or RIM in turn, every seventh
/// transparent.
fn add_materials(r: &mut Renderer<NullBackend>, shader: ShaderHandle, n: usize) -> Vec<MaterialHandle> {
    let sets: [&[&str]; 3] = [&[], &["SPECULAR"], &["RIM"]];
    (0..n)
        .map(|m| {
            r.create_material(&MaterialDesc {
                shader,
                keywords: sets[m % 3].iter().map(|s| s.to_string()).collect(),
                properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color([0.5, 0.2, 0.1, 1.0])),
                base_texture: None,
                transparent: m % 7 == 6,
            })
            .unwrap()
        })
        .collect()
}

fn views(t: f32) -> Vec<View> {
    let eye = Vec3::new(t.cos() * 40.0, 15.0, t.sin() * 40.0);
    let main = Mat4::perspective_rh(1.0, 1.0, 0.5, 200.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
    let light = Mat4::orthographic_rh(-30.0, 30.0, -30.0, 30.0, 0.1, 200.0)
        * Mat4::look_at_rh(Vec3::new(20.0, 60.0, 10.0), Vec3::ZERO, Vec3::Y);
    vec![
        View { label: "main", view_proj: main, eye, far: 200.0, layer_mask: 0b0111, pass: PassKind::Forward },
        View {
            label: "shadow",
            view_proj: light,
            eye: Vec3::new(20.0, 60.0, 10.0),
            far: 200.0,
            layer_mask: u16::MAX,
            pass: PassKind::Shadow,
        },
    ]
}

/// Random objects from a seed: positions, meshes, materials, layers, flags.
fn populate(w: &mut World, seed: u64, n: usize) -> Vec<ObjectId> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let descs: Vec<ObjectDesc> = (0..n)
        .map(|_| {
            let p = Vec3::new(rng.gen_range(-60.0..60.0), rng.gen_range(0.0..10.0), rng.gen_range(-60.0..60.0));
            ObjectDesc {
                mesh: w.meshes[rng.gen_range(0..w.meshes.len())],
                material: w.materials[rng.gen_range(0..w.materials.len())],
                transform: Mat4::from_translation(p) * Mat4::from_scale(Vec3::splat(rng.gen_range(0.5..4.5))),
                layer: rng.gen_range(0..4),
                flags: if rng.gen_bool(1.0 / 3.0) { 0 } else { CASTS_SHADOWS },
            }
        })
        .collect();
    w.r.insert_objects(&descs).unwrap()
}

/// Fails with the first position where `ours` and `reference` differ and the items around
/// it (sort keys print decoded: layer, transparency, state ids, depth).
fn assert_same<T: PartialEq + std::fmt::Debug>(what: &str, ours: &[T], reference: &[T]) {
    if let Some(i) = ours.iter().zip(reference).position(|(a, b)| a != b) {
        let around = |v: &[T]| format!("{:#?}", &v[i.saturating_sub(2)..(i + 3).min(v.len())]);
        panic!(
            "{what}: first difference at {i}\nparallel pipeline: {}\nreference: {}",
            around(ours),
            around(reference)
        );
    }
    assert_eq!(ours.len(), reference.len(), "{what}: lengths differ");
}

/// Checks the frame just rendered against the reference pipeline stage by stage: visible
/// sets, keys, sorted queues, batches, indirect arguments, each chunk's commands, and the
/// digest of the command stream.
fn assert_matches_reference(w: &World, vs: &[View], stats: &FrameStats, frame: usize) {
    let reference = w.r.reference_frame(vs);
    for (v, expect) in reference.views.iter().enumerate() {
        let out = w.r.view_output(v).unwrap();
        let what = |stage: &str| format!("frame {frame}, view {v} ({:?}), {stage}", vs[v].pass);
        assert_same(&what("visible set"), &out.visible, &expect.visible);
        assert_same(&what("sort keys"), &out.keys, &expect.keys);
        assert_same(&what("sorted queue"), &out.queue, &expect.queue);
        assert_same(&what("batches"), &out.batches, &expect.batches);
        assert_same(&what("indirect arguments"), &out.args, &expect.args);
        assert_eq!(out.chunks.len(), expect.chunks.len(), "{}", what("chunk count"));
        for (c, (a, b)) in out.chunks.iter().zip(&expect.chunks).enumerate() {
            assert_same(&what(&format!("commands of chunk {c}")), a, b);
        }
    }
    assert_eq!(stats.digest, Some(reference.digest), "frame {frame}, command stream");
}

fn check_against_reference(threads: usize, seed: u64, n: usize, multi_draw: bool) -> u64 {
    let mut w = world(threads, multi_draw, 24);
    populate(&mut w, seed, n);
    let mut last = 0;
    for f in 0..3 {
        let vs = views(f as f32 * 0.7 + seed as f32);
        let stats = w.r.render(&vs).unwrap();
        w.r.flush().unwrap();
        assert_matches_reference(&w, &vs, &stats, f);
        assert_eq!(Some(w.backend.last_frame().digest), stats.digest, "what the backend received");
        last = stats.digest.unwrap();
    }
    last
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn parallel_pipeline_matches_reference(seed in 1u64..u64::MAX, n in 0usize..6000, multi_draw in any::<bool>()) {
        let d1 = check_against_reference(1, seed, n, multi_draw);
        let d2 = check_against_reference(2, seed, n, multi_draw);
        let d8 = check_against_reference(8, seed, n, multi_draw);
        prop_assert_eq!(d1, d2);
        prop_assert_eq!(d1, d8);
    }
}

#[test]
fn the_engines_pool_and_the_global_pool_give_switchyards_digests() {
    let digests = |pool: WorkerPool, threads: usize| {
        let mut w = world_on(pool, threads, false, 24, 50_000);
        populate(&mut w, 9, 20_000);
        let out: Vec<u64> = (0..3).map(|f| w.r.render(&views(f as f32 * 0.3)).unwrap().digest.unwrap()).collect();
        (out, w.r.threads())
    };
    let (own, n) = digests(WorkerPool::Own, 3);
    assert_eq!(n, 3);
    let engine = Arc::new(switchyard::rayon::ThreadPoolBuilder::new().num_threads(5).build().unwrap());
    let (shared, n) = digests(WorkerPool::Shared(engine.clone()), 3);
    assert_eq!((shared, n), (own.clone(), 5), "on the engine's 5 threads (`threads` unused)");
    let (global, _) = digests(WorkerPool::Global, 3);
    assert_eq!(global, own);
    // Rendering from one of the engine's own threads runs there, without a deadlock.
    let mut w = world_on(WorkerPool::Shared(engine.clone()), 1, false, 24, 50_000);
    populate(&mut w, 9, 20_000);
    let inside = engine.install(|| w.r.render(&views(0.0)).unwrap().digest.unwrap());
    assert_eq!(inside, own[0]);
    let s = w.r.render(&views(0.3)).unwrap();
    assert!(s.busy_ms > 0.0, "the engine's threads count busy time");
    drop(w);
    // The engine's pool outlives the renderer.
    assert_eq!(engine.install(|| 6 * 7), 42);
}

/// The sort's input comes from last frame's order with the keys the cull wrote by object
/// index: small camera steps while objects are removed (their indices taken over by
/// others), inserted, moved and given other materials every frame, and a cut, on 1 and 3
/// threads, every frame against the reference and the digests equal.
#[test]
fn last_frames_order_survives_scene_edits_and_cuts() {
    let run = |threads: usize| {
        let mut w = world(threads, true, 24);
        let mut ids = populate(&mut w, 77, 20_000);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let mut digests = Vec::new();
        let mut from_last = 0;
        for f in 0..12 {
            // Frame 6 is a cut: the camera jumps, most visible objects are new.
            let t = if f == 6 { 2.5 } else { f as f32 * 0.02 };
            let vs = views(t);
            let stats = w.r.render(&vs).unwrap();
            w.r.flush().unwrap();
            assert_matches_reference(&w, &vs, &stats, f);
            from_last += stats.sorts_from_last_order;
            digests.push(stats.digest.unwrap());
            let gone: Vec<ObjectId> = (0..300).map(|_| ids.swap_remove(rng.gen_range(0..ids.len()))).collect();
            w.r.remove_objects(&gone).unwrap();
            ids.extend(populate(&mut w, 1000 + f as u64, 200));
            let moved: Vec<(ObjectId, Mat4)> = (0..500)
                .map(|_| {
                    (ids[rng.gen_range(0..ids.len())], Mat4::from_translation(Vec3::splat(rng.gen_range(-40.0..40.0))))
                })
                .collect();
            w.r.set_transforms(&moved).unwrap();
            let (mesh, materials) = (w.meshes[0], &w.materials);
            let desc = |k: usize| ObjectDesc {
                mesh,
                material: materials[k % materials.len()],
                transform: Mat4::from_translation(Vec3::new(k as f32 * 0.3, 1.0, 0.0)),
                layer: (k % 4) as u8,
                flags: CASTS_SHADOWS,
            };
            let edits: Vec<(ObjectId, ObjectDesc)> =
                (0..100).map(|k| (ids[rng.gen_range(0..ids.len())], desc(k))).collect();
            w.r.update_objects(&edits).unwrap();
        }
        assert!(from_last >= 10, "most sorts start from last frame's order: {from_last}");
        digests
    };
    assert_eq!(run(1), run(3));
}

#[test]
fn large_scene_uses_the_parallel_sort_and_still_matches() {
    let d1 = check_against_reference(1, 42, 40_000, true);
    let d8 = check_against_reference(8, 42, 40_000, true);
    assert_eq!(d1, d8);
}

#[test]
fn frame_stats_account_for_worker_time_and_the_job_graph() {
    let mut w = world(3, true, 4);
    populate(&mut w, 7, 20_000);
    let vs = views(0.0);
    // The first frame sorts in object order, later ones from last frame's order (nearly
    // sorted: the scene did not change).
    let first = w.r.render(&vs).unwrap();
    assert_eq!(first.sorts_from_last_order, 0);
    for _ in 0..3 {
        let s = w.r.render(&vs).unwrap();
        assert_eq!(s.workers, 3);
        assert_eq!(s.sorts_from_last_order, s.views, "{s:?}");
        assert!(s.sorts_nearly_in_order > 0 || s.queue_items < 2_000, "{s:?}");
        // Regions are timed inside the frame, on the frame's workers only.
        assert!(s.busy_ms > 0.0 && s.busy_ms <= s.frame_ms * 3.0, "{} ms busy in {} ms", s.busy_ms, s.frame_ms);
        assert!((0.0..=1.0).contains(&s.utilization()));
        assert!(s.setup_ms >= 0.0 && s.jobs_ms > 0.0 && s.slot_wait_ms >= 0.0);
        assert!(s.slot_wait_ms + s.setup_ms + s.jobs_ms <= s.frame_ms, "{s:?}");
    }
    let spans = w.r.last_job_spans();
    assert!(spans.iter().any(|j| j.name.starts_with("sort[")) && spans.iter().any(|j| j.name == "patch[forward]"));
    let path = w.r.last_critical_path();
    assert!(!path.is_empty() && path.windows(2).all(|p| p[0].end_ms <= p[1].start_ms));
    assert!(path[0].name.starts_with("cull[") || path[0].name.starts_with("pass["), "{path:?}");
}

/// Behind a slow GPU (60 ms per frame, simulated; two frames in flight) `render` waits for
/// a free frame slot: the wait is reported as such, not as the calling thread's setup work.
/// (The simulated GPU is the fault-injection backend's: this runs in that feature's run.)
#[cfg(feature = "fault-injection")]
#[test]
fn the_wait_for_a_free_frame_slot_is_not_setup_work() {
    use switchyard_tests::faults::FaultBackend;
    let backend = Arc::new(FaultBackend::new(NullBackend::new(true)));
    backend.set_gpu_ms(60);
    let config = RendererConfig { threads: 2, frames_in_flight: 2, width: 64, height: 64, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let object = ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS };
    r.insert_objects(&[object; 16]).unwrap();
    let stats: Vec<FrameStats> = (0..5).map(|_| r.render(&views(0.0)).unwrap()).collect();
    for s in &stats {
        assert!(s.slot_wait_ms >= 0.0 && s.slot_wait_ms + s.setup_ms + s.jobs_ms <= s.frame_ms, "{s:?}");
    }
    let waited = stats.iter().max_by(|a, b| a.slot_wait_ms.total_cmp(&b.slot_wait_ms)).unwrap();
    assert!(waited.slot_wait_ms >= 20.0, "the longest wait for a slot: {} ms", waited.slot_wait_ms);
    assert!(waited.setup_ms < waited.slot_wait_ms, "{waited:?}");
    r.flush().unwrap();
}

/// A spatially coherent scene (a grid inserted row by row, so culling blocks are compact)
/// changed between frames: objects moved into and out of view, edited, removed (the last
/// objects move into the holes) and added. Every frame matches the reference pipeline,
/// which tests every object, so stale block bounds would show up here.
fn coherent_scene_with_changes(threads: usize) -> Vec<u64> {
    let mut w = world(threads, false, 12);
    let desc = |w: &World, i: usize, p: Vec3| ObjectDesc {
        mesh: w.meshes[i % w.meshes.len()],
        material: w.materials[(i * 7) % w.materials.len()],
        transform: Mat4::from_translation(p),
        layer: (i % 3) as u8,
        flags: if i.is_multiple_of(5) { 0 } else { CASTS_SHADOWS },
    };
    let grid = |i: usize| Vec3::new((i % 200) as f32 * 1.5 - 150.0, 0.0, (i / 200) as f32 * 1.5 - 75.0);
    let descs: Vec<ObjectDesc> = (0..20_000).map(|i| desc(&w, i, grid(i))).collect();
    let mut ids = w.r.insert_objects(&descs).unwrap();
    let mut digests = Vec::new();
    for f in 0..5usize {
        let vs = views(0.3 + f as f32 * 0.4);
        let stats = w.r.render(&vs).unwrap();
        w.r.flush().unwrap();
        assert_matches_reference(&w, &vs, &stats, f);
        digests.push(stats.digest.unwrap());
        // Far objects into the middle of the view and near ones far away.
        let moves: Vec<(ObjectId, Mat4)> = (0..ids.len())
            .step_by(61)
            .map(|k| {
                let p =
                    if (k + f) % 2 == 0 { Vec3::new(0.0, 1.0, (k % 20) as f32) } else { Vec3::new(900.0, 0.0, 900.0) };
                (ids[k], Mat4::from_translation(p))
            })
            .collect();
        w.r.set_transforms(&moves).unwrap();
        let edits: Vec<(ObjectId, ObjectDesc)> = (0..ids.len())
            .step_by(397)
            .map(|k| (ids[k], desc(&w, k + f, Vec3::new(k as f32 % 30.0, 2.0, -3.0))))
            .collect();
        w.r.update_objects(&edits).unwrap();
        let gone: Vec<ObjectId> = (0..150).map(|k| ids[(k * 113 + f * 7) % ids.len()]).collect::<Vec<_>>();
        let mut gone_sorted = gone.clone();
        gone_sorted.sort_unstable_by_key(|id| w.r.scene().dense_index(*id));
        gone_sorted.dedup();
        w.r.remove_objects(&gone_sorted).unwrap();
        ids.retain(|id| !gone_sorted.contains(id));
        let added: Vec<ObjectDesc> =
            (0..120).map(|k| desc(&w, k, Vec3::new(k as f32 * 0.3 - 18.0, 0.5, 4.0))).collect();
        ids.extend(w.r.insert_objects(&added).unwrap());
    }
    digests
}

#[test]
fn coherent_scene_changed_between_frames_matches_reference() {
    let one = coherent_scene_with_changes(1);
    assert_eq!(one, coherent_scene_with_changes(6), "same command stream on 1 and 6 threads");
}

#[test]
fn stale_handles_and_unknown_properties_are_typed_and_change_nothing() {
    let mut w = world(2, true, 3);
    let ids = populate(&mut w, 3, 100);
    w.r.remove_objects(&ids[..10]).unwrap();
    assert_eq!(w.r.scene().len(), 90);
    let d = ObjectDesc { mesh: w.meshes[0], material: w.materials[0], transform: Mat4::IDENTITY, layer: 0, flags: 0 };
    assert_eq!(
        w.r.update_objects(&[(ids[20], d), (ids[0], d)]),
        Err(SceneError::StaleHandle { kind: HandleKind::Object, index: 1 })
    );
    let before = w.r.scene().objects().transforms.clone();
    assert_eq!(before.len(), 90);
    assert_eq!(
        w.r.remove_objects(&[ids[20], ids[5]]),
        Err(SceneError::StaleHandle { kind: HandleKind::Object, index: 1 })
    );
    assert_eq!(w.r.scene().len(), 90, "a failing batch removes nothing");
    assert_eq!(
        w.r.set_transforms(&[(ids[3], Mat4::IDENTITY)]),
        Err(SceneError::StaleHandle { kind: HandleKind::Object, index: 0 })
    );
    assert_eq!(w.r.scene().objects().transforms, before);

    let bad = ObjectDesc { layer: 16, ..d };
    assert!(matches!(w.r.insert_objects(&[d, bad]), Err(SceneError::Invalid { index: 1, .. })));
    assert_eq!(w.r.scene().len(), 90);

    assert_eq!(
        w.r.set_material_property(w.materials[1], "_Nope", PropertyValue::Float(1.0)),
        Err(ResourceError::UnknownProperty("_Nope".into()))
    );
    assert!(matches!(
        w.r.set_material_property(w.materials[1], "_Roughness", PropertyValue::Vec4([0.0; 4])),
        Err(ResourceError::PropertyType { .. })
    ));
    assert_eq!(
        w.r.set_material_keyword(w.materials[1], "NOPE", true),
        Err(ResourceError::UnknownKeyword("NOPE".into()))
    );
    assert!(matches!(w.r.remove_material(w.materials[1]), Err(ResourceError::InUse(HandleKind::Material, _))));
    let bad_shader = ShaderDesc { wgsl: "fn oops(".into(), ..ShaderDesc::lit() };
    assert!(matches!(w.r.create_shader(&bad_shader), Err(ResourceError::Backend(_))));

    // A material removed after its objects are gone is stale everywhere.
    let lonely = w.materials[2];
    let users: Vec<ObjectId> = ids[10..]
        .iter()
        .copied()
        .filter(|&id| {
            let i = w.r.scene().dense_index(id).unwrap() as usize;
            w.r.scene().objects().material[i] == 2
        })
        .collect();
    w.r.remove_objects(&users).unwrap();
    w.r.remove_material(lonely).unwrap();
    let d2 = ObjectDesc { material: lonely, ..d };
    assert_eq!(w.r.insert_objects(&[d2]), Err(SceneError::StaleHandle { kind: HandleKind::Material, index: 0 }));
    // The renderer still renders.
    w.r.render(&views(0.0)).unwrap();
}

#[test]
fn bad_views_are_errors_and_the_next_frame_works() {
    let mut w = world(2, true, 3);
    populate(&mut w, 5, 500);
    let mut vs = views(0.0);
    vs[0].view_proj = Mat4::NAN;
    assert!(matches!(w.r.render(&vs), Err(RenderError::InvalidView { index: 0, .. })));
    assert!(matches!(w.r.render(&[]), Err(RenderError::InvalidView { .. })));
    w.r.render(&views(0.0)).unwrap();
}

#[test]
fn per_pass_bytes_follow_the_frame_graph() {
    let mut w = world(2, true, 3);
    populate(&mut w, 9, 300);
    // views(): main (forward, 64x64 target) and shadow (64x64 map); a second forward view
    // loads what the first stored.
    let mut vs = views(0.2);
    vs.push(View { label: "overlay", ..vs[0] });
    let stats = w.r.render(&vs).unwrap();
    assert_eq!(w.r.pass_names(), ["shadow", "main", "overlay"], "shadow passes are submitted first");
    let target = 64 * 64 * 4;
    let p = &stats.passes[..stats.pass_count as usize];
    assert_eq!(p[0], PassTraffic { loaded: 0, stored: target, resolved: 0 }, "shadow: depth cleared and stored");
    assert_eq!(p[1], PassTraffic { loaded: 0, stored: 2 * target, resolved: 0 }, "main: color and depth cleared");
    assert_eq!(p[2], PassTraffic { loaded: 2 * target, stored: 2 * target, resolved: 0 }, "overlay loads both");
    assert_eq!(stats.attachment_bytes(), 7 * target);
    // The last forward pass stores a depth target nothing reads: the graph says so.
    assert_eq!(w.r.frame_warnings().len(), 1, "{:?}", w.r.frame_warnings());
    // Two views with one label get distinct pass names.
    vs[2].label = "main";
    w.r.render(&vs).unwrap();
    assert_eq!(w.r.pass_names(), ["shadow", "main", "main#1"]);
}

#[test]
fn resize_recreates_the_main_targets_and_bad_sizes_change_nothing() {
    let mut w = world(2, true, 3);
    populate(&mut w, 4, 800);
    let vs = views(0.4);
    let before = w.r.render(&vs).unwrap();
    let texel = 4;
    assert_eq!(before.passes[1].stored, 2 * 64 * 64 * texel);
    for bad in [(0, 10), (10, 0), (100_000, 10)] {
        assert!(matches!(w.r.resize(bad.0, bad.1), Err(RenderError::InvalidSize { .. })));
        assert_eq!((w.r.config().width, w.r.config().height), (64, 64), "nothing changed");
    }
    w.r.resize(96, 40).unwrap();
    let after = w.r.render(&vs).unwrap();
    w.r.flush().unwrap();
    assert_eq!(after.passes[1].stored, 2 * 96 * 40 * texel, "the main pass writes the new targets");
    assert_eq!(after.passes[0], before.passes[0], "shadow maps keep their size");
    // The frame validates on the null backend (attachment sizes agree) and matches the reference.
    assert_matches_reference(&w, &vs, &after, 1);
    assert_eq!(Some(w.backend.last_frame().digest), after.digest);
    assert_ne!(after.digest, before.digest, "the passes name the new targets");
    // Resizing between frames gives the frame of a renderer resized before its first frame.
    let mut fresh = world(2, true, 3);
    populate(&mut fresh, 4, 800);
    fresh.r.resize(96, 40).unwrap();
    let first = fresh.r.render(&vs).unwrap();
    fresh.r.flush().unwrap();
    // (Texture handles differ: the resized renderer made its new targets after the old.)
    assert_eq!(first.passes[..2], after.passes[..2]);
    assert_eq!((first.visible, first.batches, first.draw_calls), (after.visible, after.batches, after.draw_calls));
    assert_matches_reference(&fresh, &vs, &first, 1);
}

/// A shader declares the passes it has entry points for: a missing entry point is an error
/// when the shader is created; a material whose shader lacks a pass kind is left out of
/// passes of that kind (never a per-frame failure), as the reference does.
#[test]
fn shaders_declare_their_passes_and_materials_lacking_one_are_skipped_for_it() {
    let mut w = world(2, true, 3);
    let missing = ShaderDesc {
        passes: ShaderPasses { shadow: Some("vs_nowhere".into()), ..ShaderPasses::default() },
        ..ShaderDesc::lit()
    };
    assert!(matches!(w.r.create_shader(&missing), Err(ResourceError::Backend(_))), "a missing entry point");
    let none = ShaderDesc { passes: ShaderPasses { shadow: None, forward: None }, ..ShaderDesc::lit() };
    assert!(matches!(w.r.create_shader(&none), Err(ResourceError::Invalid(_))), "a shader of no pass");
    // Lit without a shadow entry: its objects cast no shadows.
    let unshadowed = ShaderDesc {
        name: "no-shadow".into(),
        passes: ShaderPasses { shadow: None, ..ShaderPasses::default() },
        ..ShaderDesc::lit()
    };
    let shader = w.r.create_shader(&unshadowed).unwrap();
    let m = w.r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    w.materials.push(m);
    populate(&mut w, 9, 3000);
    let vs = views(0.3);
    let stats = w.r.render(&vs).unwrap();
    w.r.flush().unwrap();
    assert_matches_reference(&w, &vs, &stats, 0);
    let dense_material = |i: u32| w.r.scene().objects().material[i as usize];
    let out = |v: usize| w.r.view_output(v).unwrap().visible;
    let skipped = w.r.scene().objects().material.iter().filter(|&&d| d == 3).count();
    assert!(skipped > 100, "a quarter of the objects use it");
    assert!(out(1).iter().all(|&i| dense_material(i) != 3), "none in the shadow view");
    assert!(out(0).iter().any(|&i| dense_material(i) == 3), "drawn in the forward view");
}
