//! Display lists and pipelines: keyword variants built once, pipelines made ahead of the
//! frames ([`Renderer::warm_up`], a replayed [`PipelineLog`]), the shader modules given
//! up after, and the command stream the same for any thread count.

use super::*;
use switchyard::backend::Backend as _;

#[test]
fn keyword_switching_builds_each_variant_once() {
    let mut w = world(2, true, 9);
    populate(&mut w, 7, 2000);
    let vs = views(0.3);
    let first = w.r.render(&vs).unwrap().lists;
    assert!(first.misses > 0 && first.rebuilds == 0);
    w.r.set_global_keyword("FOG", true);
    let fog = w.r.render(&vs).unwrap().lists;
    // A new variant builds its lists once, compiling its module and creating its pipelines.
    assert!(fog.misses > 0 && fog.shader_modules_created >= 1 && fog.pipelines_created >= 1, "{fog:?}");
    for on in [false, true, false, true] {
        w.r.set_global_keyword("FOG", on);
        let s = w.r.render(&vs).unwrap().lists;
        assert_eq!((s.misses, s.rebuilds), (0, 0), "switching back and forth builds nothing");
        assert_eq!((s.pipelines_created, s.shader_modules_created), (0, 0), "nor creates anything");
        assert!(s.hits > 0);
    }
    // Changing a material rebuilds its lists once, with the pipelines it already has.
    w.r.set_material_property(w.materials[0], "_Roughness", PropertyValue::Float(0.9)).unwrap();
    let s = w.r.render(&vs).unwrap().lists;
    assert!(s.rebuilds >= 1 && s.misses == 0, "{s:?}");
    assert_eq!((s.pipelines_created, s.shader_modules_created), (0, 0));
    let steady = w.r.render(&vs).unwrap().lists;
    assert!(matches!(steady, ListCounts { rebuilds: 0, pipelines_created: 0, shader_modules_created: 0, .. }));
}

#[test]
fn warm_up_leaves_nothing_for_the_frames_to_create() {
    let (mut w, vs) = (world(2, true, 9), views(0.3));
    populate(&mut w, 7, 2000);
    // Fog off and on: switching it later creates nothing either.
    let warm = w.r.warm_up_keywords(&[&[], &["FOG"]]).unwrap();
    assert!(warm.lists_built > 0 && warm.pipelines_created > 0 && warm.shader_modules_created > 0, "{warm:?}");
    for on in [false, true, false, true] {
        w.r.set_global_keyword("FOG", on);
        let s = w.r.render(&vs).unwrap().lists;
        assert_eq!((s.pipelines_created, s.shader_modules_created, s.misses), (0, 0, 0), "fog {on}: {s:?}");
    }
    // Warming again finds every list, so does a keyword no shader declares; no sets, nothing.
    for again in [w.r.warm_up().unwrap(), w.r.warm_up_keywords(&[&["NO_SUCH_KEYWORD"]]).unwrap()] {
        assert!(again.lists_found > 0 && again == WarmUp { lists_found: again.lists_found, ..Default::default() });
    }
    assert_eq!(w.r.warm_up_keywords(&[]).unwrap(), WarmUp::default());
}

#[test]
fn warm_up_makes_the_pipelines_of_shaders_whose_materials_come_later() {
    let mut w = world(2, true, 9);
    populate(&mut w, 7, 500);
    // A shader registered up front (its base pipelines made for the default target), then
    // a graph that draws forward into RGBA16 float, a warm-up, and the shader's materials
    // streamed in after it.
    let later = w.r.create_shader(&ShaderDesc::lit()).unwrap();
    let mut g = FrameGraph::new();
    let cam = g.camera("main");
    let hdr = g.target("hdr", TargetKind::Retained, TextureFormat::Rgba16Float, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    g.pass(
        Pass::scene("main", cam, PassKind::Forward, Queue::All)
            .color(hdr, LoadOp::Clear([0.0; 4]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    w.r.set_graph(g).unwrap();
    let v = views(0.3)[0];
    let camera = Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: u16::MAX, receivers: None };
    let warm = w.r.warm_up().unwrap();
    assert!(warm.pipelines_created >= 1, "the new shader's forward pipeline for RGBA16 float: {warm:?}");
    let m = w.r.create_material(&MaterialDesc { shader: later, ..Default::default() }).unwrap();
    let object = ObjectDesc { mesh: w.meshes[0], material: m, transform: Mat4::IDENTITY, layer: 0, flags: 0 };
    w.r.insert_objects(&[object]).unwrap();
    for f in 0..3 {
        let s = w.r.render_graph(&FrameInput { cameras: &[camera], targets: &[] }).unwrap().lists;
        assert_eq!((s.pipelines_created, s.shader_modules_created), (0, 0), "frame {f}: {s:?}");
    }
    // Warming again makes nothing.
    assert_eq!(w.r.warm_up().unwrap().pipelines_created, 0);
}

#[test]
fn warm_up_keeps_the_command_stream_the_same_for_any_thread_count() {
    let digests = |threads: usize| -> Vec<Option<u64>> {
        let mut w = world(threads, true, 9);
        populate(&mut w, 5, 3000);
        w.r.warm_up_keywords(&[&["FOG"], &[]]).unwrap();
        (0..3).map(|f| w.r.render(&views(0.2 * f as f32)).unwrap().digest).collect()
    };
    let one = digests(1);
    assert!(one.iter().all(Option::is_some));
    [2, 3, 8].into_iter().for_each(|t| assert_eq!(digests(t), one, "{t} threads"));
}

#[test]
fn warm_up_gives_up_the_shader_modules_and_a_new_variant_compiles_again() {
    let (mut w, vs) = (world(2, true, 9), views(0.3));
    populate(&mut w, 7, 500);
    w.r.render(&vs).unwrap();
    let before = w.backend.live();
    let warm = w.r.warm_up().unwrap();
    let after = w.backend.live();
    // Three variants' modules were compiled by the first frame; the pipelines stay.
    assert_eq!(after.shaders + 3, before.shaders, "{warm:?}");
    assert_eq!(after.pipelines, before.pipelines);
    let steady = w.r.render(&vs).unwrap().lists;
    assert_eq!((steady.pipelines_created, steady.shader_modules_created), (0, 0), "the pipelines drew on");
    // FOG was never warmed: its variants compile again from the kept source, in a frame.
    w.r.set_global_keyword("FOG", true);
    let fog = w.r.render(&vs).unwrap().lists;
    assert!(fog.shader_modules_created == 3 && fog.pipelines_created > 0, "{fog:?}");
    assert_eq!(w.backend.live().shaders, after.shaders + 3);
    w.r.warm_up().unwrap();
    assert_eq!(w.backend.live().shaders, after.shaders, "given up again");
}

/// A log saved by one run, replayed by a fresh renderer before its materials exist.
fn replayed(threads: usize, log: &PipelineLog) -> (LogReplay, Vec<(ListCounts, Option<u64>)>) {
    let mut w = world(threads, true, 0);
    let replay = w.r.warm_up_log(log).unwrap();
    w.materials = add_materials(&mut w.r, w.shader, 9);
    populate(&mut w, 7, 2000);
    let mut frames = Vec::new();
    for on in [false, true, false] {
        w.r.set_global_keyword("FOG", on);
        let s = w.r.render(&views(0.3)).unwrap();
        frames.push((s.lists, s.digest));
    }
    (replay, frames)
}

#[test]
fn a_replayed_log_makes_every_pipeline_before_the_materials_exist() {
    let mut w = world(2, true, 9);
    populate(&mut w, 7, 2000);
    for on in [false, true] {
        w.r.set_global_keyword("FOG", on);
        w.r.render(&views(0.3)).unwrap();
    }
    let log = w.r.pipeline_log();
    let made = w.backend.live().pipelines;
    assert!(log.entries.len() > 4 && log.entries.iter().all(|e| e.shader == "lit"), "{log:?}");
    assert!(log.entries.iter().any(|e| e.keywords == ["RIM", "FOG"] && e.pass == PassKind::Forward));
    assert!(log.entries.iter().any(|e| e.transparent));
    let (replay, frames) = replayed(2, &log);
    // The shader's base pipelines exist from `create_shader`; the log made the others.
    assert_eq!(replay.found + replay.pipelines_created, log.entries.len() as u32, "{replay:?}");
    assert!(replay.skipped.is_empty() && replay.shader_modules_created > 0, "{replay:?}");
    for (lists, _) in &frames {
        assert_eq!((lists.pipelines_created, lists.shader_modules_created), (0, 0), "{lists:?}");
    }
    // Replaying twice makes nothing more; the renderer's own log names the same pipelines.
    let mut again = world(2, true, 0);
    again.r.warm_up_log(&log).unwrap();
    assert_eq!(again.r.warm_up_log(&log).unwrap().found, log.entries.len() as u32);
    assert_eq!(again.backend.live().pipelines, made);
    let mut theirs = again.r.pipeline_log();
    theirs.merge(&log);
    assert_eq!(theirs.entries.len(), log.entries.len(), "nothing new merged in");
    // Made in parallel batches, the pipelines' ids do not depend on the thread count.
    let one = frames.iter().map(|f| f.1).collect::<Vec<_>>();
    assert!(one.iter().all(Option::is_some));
    for t in [1, 3, 8] {
        assert_eq!(replayed(t, &log).1.iter().map(|f| f.1).collect::<Vec<_>>(), one, "{t} threads");
    }
}

#[test]
fn log_entries_that_no_longer_apply_are_skipped_with_why_and_change_nothing() {
    let mut w = world(2, true, 0);
    let plain = ShaderDesc {
        name: "plain".into(),
        passes: ShaderPasses { shadow: None, ..Default::default() },
        ..ShaderDesc::lit()
    };
    w.r.create_shader(&plain).unwrap();
    let entry = |shader: &str, keywords: &[&str], pass, samples| PipelineLogEntry {
        shader: shader.into(),
        keywords: keywords.iter().map(|k| k.to_string()).collect(),
        pass,
        transparent: false,
        color_format: TextureFormat::Rgba8UnormSrgb,
        color_samples: samples,
        scene_buffers: Vec::new(),
    };
    let log = PipelineLog {
        entries: vec![
            entry("no such shader", &[], PassKind::Forward, 1),
            entry("lit", &["NO_SUCH_KEYWORD"], PassKind::Forward, 1),
            entry("lit", &["FOG"], PassKind::Forward, 1),
            entry("lit", &["RIM"], PassKind::Forward, 3),
            entry("plain", &[], PassKind::Shadow, 1),
            entry("plain", &["FOG"], PassKind::Forward, 1),
        ],
    };
    let before = w.backend.live();
    let replay = w.r.warm_up_log(&log).unwrap();
    let why: Vec<_> = replay.skipped.iter().map(|(i, why)| (*i, why.clone())).collect();
    assert!(matches!(&why[0], (0, LogSkip::UnknownShader(s)) if s == "no such shader"), "{why:?}");
    assert!(matches!(&why[1], (1, LogSkip::UnknownKeyword(k)) if k == "NO_SUCH_KEYWORD"), "{why:?}");
    assert!(matches!(&why[2], (3, LogSkip::Refused(ResourceError::Backend(_)))), "{why:?}");
    assert!(matches!(&why[3], (4, LogSkip::NoEntryPoint(PassKind::Shadow))), "{why:?}");
    assert_eq!(why.len(), 4);
    assert_eq!((replay.pipelines_created, replay.found), (2, 0), "{replay:?}");
    let after = w.backend.live();
    assert_eq!(after.pipelines, before.pipelines + 2, "only the two entries that apply");
    assert_eq!(after.shaders, before.shaders.saturating_sub(2), "every module given up, the base variants' too");
    assert_eq!(w.r.warm_up_log(&PipelineLog::default()).unwrap(), LogReplay::default());
}

#[test]
fn warm_up_prepares_the_upload_threads_staging_and_mip_pipelines_once() {
    use switchyard::backend::{CreateError, PrepareUploads, MAX_STAGING_BYTES};
    let mut w = world(2, true, 3);
    populate(&mut w, 7, 2000);
    let n = w.r.scene().len() as u64;
    let warm = w.r.warm_up().unwrap();
    assert_eq!((warm.mip_pipelines_created, warm.staging_bytes_made), (2, 16 << 20), "{warm:?}");
    // Room for the first frame's writes: every object's transform and dense material.
    assert_eq!(warm.frame_staging_bytes_made, n * (64 + 4), "{warm:?}");
    let formats = vec![TextureFormat::Rgba8Unorm, TextureFormat::Rgba8UnormSrgb];
    assert_eq!(w.backend.prepared_uploads(), (formats.clone(), 16 << 20, vec![n * 64, n * 4]));
    let again = w.r.warm_up().unwrap();
    assert_eq!((again.mip_pipelines_created, again.staging_bytes_made, again.frame_staging_bytes_made), (0, 0, 0));
    // After a frame nothing is dirty: no frame writes to make room for.
    w.r.render(&views(0.3)).unwrap();
    w.r.warm_up().unwrap();
    assert_eq!(w.backend.prepared_uploads().2, Vec::<u64>::new());
    // What cannot be prepared is refused, changing nothing.
    let b = &w.backend;
    let prepare = |mip_formats: &[TextureFormat], staging_bytes, frame_writes: &[u64]| {
        b.prepare_uploads(&PrepareUploads { mip_formats, staging_bytes, frame_writes })
    };
    for f in [TextureFormat::Bc7RgbaUnorm, TextureFormat::Bc1RgbaUnormSrgb, TextureFormat::Depth32Float] {
        assert!(matches!(prepare(&[TextureFormat::Rgba16Float, f], 0, &[]), Err(CreateError::Invalid(_))));
    }
    let over = MAX_STAGING_BYTES + 1;
    assert!(matches!(prepare(&[], over, &[]), Err(CreateError::Limit { requested, .. }) if requested == over));
    let writes = [MAX_STAGING_BYTES, 1];
    assert!(matches!(prepare(&[], 0, &writes), Err(CreateError::Limit { requested, .. }) if requested == over));
    assert!(matches!(prepare(&[], 0, &[u64::MAX, 2]), Err(CreateError::Limit { requested: u64::MAX, .. })));
    assert_eq!(b.prepared_uploads(), (formats, 16 << 20, vec![]));
    // A configuration asking for more is refused before anything is made.
    let config = RendererConfig { upload_staging: over, ..Default::default() };
    assert!(matches!(Renderer::new(Arc::new(NullBackend::new(true)), config), Err(InitError::Config(_))));
    // On a lost device warming up is a loss.
    b.lose_device();
    assert_eq!(prepare(&[], 0, &[]), Err(CreateError::DeviceLost));
    assert_eq!(w.r.warm_up(), Err(RenderError::DeviceLost));
}
