//! Faults injected through [`FaultBackend`] and the scheduler's fault hooks (feature
//! `fault-injection`): a job that panics, a failed submit, a lost device, out of memory,
//! a slow GPU, shutdown with frames in flight. Each test's name carries the guarantee it
//! proves (README, "Guarantees under faults").
//!
//! The tests here count the process's threads, so they take one lock and run one at a
//! time.
#![cfg(feature = "fault-injection")]

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use glam::Mat4;
use switchyard::backend::null::NullBackend;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{InitError, ShaderDesc};
use switchyard_tests::cube;
use switchyard_tests::faults::{AcquireFault, FaultBackend};
use switchyard_tests::full_graph::{bar_pipeline, cameras, full_graph, scattered, Targets};

mod surfaces;

type Faulty = FaultBackend<NullBackend>;

const SIDE: u32 = 64;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Threads of this process whose name starts with `switchyard` (Linux names are cut at 15
/// bytes: `switchyard-work`, `switchyard-subm`).
fn switchyard_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("switchyard")))
                .count()
        })
        .unwrap_or(0)
}

/// [`switchyard_threads`] once it reads `expected` (threads name themselves after they
/// start), or what it reads after 10 s.
fn settled_threads(expected: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n = switchyard_threads();
        if n == expected || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

struct World {
    backend: Arc<Faulty>,
    r: Renderer<Faulty>,
}

fn config(threads: usize) -> RendererConfig {
    RendererConfig { threads, max_objects: 4096, width: SIDE, height: SIDE, ..Default::default() }
}

/// 1,500 random cubes over seven materials (one transparent, one textured), drawn by the
/// full graph of every pass kind into a retained target.
fn world(threads: usize) -> World {
    world_culled_on(threads, CullOn::Cpu)
}

fn world_culled_on(threads: usize, cull: CullOn) -> World {
    let mut w = scene_culled_on(threads, cull);
    set_graph(&mut w.r, &w.backend);
    w
}

fn scene(threads: usize) -> World {
    scene_culled_on(threads, CullOn::Cpu)
}

fn scene_culled_on(threads: usize, cull: CullOn) -> World {
    let backend = Arc::new(FaultBackend::new(NullBackend::new(true)));
    let mut r = Renderer::new(backend.clone(), RendererConfig { cull, ..config(threads) }).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let texture = r.create_texture(2, 2, &[200; 16]).unwrap();
    let materials: Vec<_> = (0..7)
        .map(|m| {
            let desc = MaterialDesc {
                shader,
                transparent: m == 6,
                base_texture: (m == 3).then_some(texture),
                ..Default::default()
            };
            r.create_material(&desc).unwrap()
        })
        .collect();
    let objects = scattered(1500, 11, mesh, &materials);
    r.insert_objects(&objects).unwrap();
    World { backend, r }
}

/// The engine's part of the graph (its overlay pipeline) is made on `backend`.
fn set_graph(r: &mut Renderer<Faulty>, backend: &Faulty) -> Targets {
    let (g, t) = full_graph(TargetKind::Retained, 64, bar_pipeline(backend).unwrap());
    r.set_graph(g).unwrap();
    t
}

fn frame(r: &mut Renderer<Faulty>) -> Result<FrameStats, RenderError> {
    r.render_graph(&FrameInput { cameras: &cameras(), targets: &[] })
}

/// Digests of `n` clean frames.
fn clean_run(n: usize) -> (Vec<u64>, Vec<u64>) {
    let mut w = world(4);
    let digests = (0..n).map(|_| frame(&mut w.r).unwrap().digest.unwrap()).collect();
    w.r.flush().unwrap();
    (digests, w.backend.frames())
}

#[test]
fn job_panic_in_any_job_fails_its_frame_only() {
    let _one = serial();
    let (clean, _) = clean_run(5);
    let jobs = ["cull[opaque]", "sort[shadow-near]", "batch[transparent]", "patch[forward]", "record[opaque]"];
    for job in jobs.into_iter().chain(["pass[post]", "pass[overlay]", "patch[shadow]", "record[shadow-far]"]) {
        let mut w = world(4);
        w.r.inject_job_panic(job, 3);
        let mut digests = Vec::new();
        for f in 1..=5u64 {
            match frame(&mut w.r) {
                Ok(stats) => {
                    assert_ne!(f, 3, "{job}: frame 3 should fail");
                    // The cameras stand still: a frame keeps the views' cull, sort and batch
                    // outputs of the last frame that reached the GPU thread, none after the
                    // failed frame (which may have left them half written).
                    let culled = stats.views - stats.gpu_culled_views;
                    let kept = if f == 1 || f == 4 { 0 } else { culled };
                    assert_eq!(stats.culls_kept, kept, "{job}: frame {f}");
                    digests.push(stats.digest.unwrap());
                }
                Err(RenderError::JobPanicked { job: named, message }) => {
                    assert_eq!((f, named.as_str()), (3, job), "{message}");
                    w.r.flush().unwrap();
                    assert_eq!(w.backend.submits(), 2, "{job}: nothing of frame 3 reached the backend");
                }
                Err(e) => panic!("{job}: frame {f}: {e}"),
            }
        }
        w.r.flush().unwrap();
        assert_eq!(w.backend.submits(), 4);
        assert_eq!(digests, [clean[0], clean[1], clean[3], clean[4]], "{job}: the frames after equal a clean run's");
        assert_eq!(settled_threads(6), 6, "{job}: no worker lost (4 workers, the submission and upload threads)");
        assert_eq!(w.r.threads(), 4);
    }
}

/// A display list that cannot be built fails its frame with the material named, whichever
/// patch job builds it: the first pipeline of the first frame (the forward part's, which
/// then skips the shadow part) or its last (the shadow part's, after the forward part
/// built its lists). Nothing of that frame is submitted; the next frame builds what is
/// missing and the frames after equal a clean run's.
#[test]
fn a_display_list_that_cannot_be_built_fails_its_frame_in_either_patch_part() {
    let _one = serial();
    let (clean, clean_frames) = clean_run(4);
    let made = {
        let mut w = world(4);
        frame(&mut w.r).unwrap().lists.pipelines_created
    };
    assert!(made > 1, "{made}");
    for n in [1, u64::from(made)] {
        let mut w = world(4);
        w.backend.fail_pipeline_in(n);
        match frame(&mut w.r) {
            Err(RenderError::DisplayList { source: ResourceError::Backend(CreateError::Invalid(m)), .. }) => {
                assert!(m.contains("injected"), "{m}")
            }
            other => panic!("pipeline {n} of {made}: {other:?}"),
        }
        w.r.flush().unwrap();
        // What reached the backend for the failed frame is the upload batch staged before
        // it (`send_batch` runs before the frame's outputs are gathered); its passes did not.
        let before = w.backend.frames().len();
        let after: Vec<u64> = (0..3).map(|_| frame(&mut w.r).unwrap().digest.unwrap()).collect();
        w.r.flush().unwrap();
        assert_eq!(after, clean[1..], "pipeline {n} of {made}: the frames after equal a clean run's");
        assert_eq!(w.backend.frames()[before..], clean_frames[1..], "pipeline {n}: the streams submitted after");
    }
}

#[test]
fn job_panic_with_gpu_culling_fails_its_frame_only() {
    let _one = serial();
    let clean: Vec<u64> = {
        let mut w = world_culled_on(4, CullOn::Gpu);
        assert!(w.r.gpu_cull());
        (0..5).map(|_| frame(&mut w.r).unwrap().digest.unwrap()).collect()
    };
    let jobs = ["cull[opaque]", "cull[shadow-near]", "patch[forward]", "patch[shadow]", "record[opaque]"];
    for job in jobs.into_iter().chain(["record[shadow-far]"]) {
        let mut w = world_culled_on(4, CullOn::Gpu);
        w.r.inject_job_panic(job, 3);
        let mut digests = Vec::new();
        for f in 1..=5u64 {
            match frame(&mut w.r) {
                Ok(stats) => {
                    assert_ne!(f, 3, "{job}: frame 3 should fail");
                    assert_eq!(stats.gpu_culled_views, 3, "{job}");
                    digests.push(stats.digest.unwrap());
                }
                Err(RenderError::JobPanicked { job: named, .. }) => assert_eq!((f, named.as_str()), (3, job)),
                Err(e) => panic!("{job}: frame {f}: {e}"),
            }
        }
        w.r.flush().unwrap();
        assert_eq!(w.backend.submits(), 4);
        assert_eq!(digests, [clean[0], clean[1], clean[3], clean[4]], "{job}: the frames after equal a clean run's");
    }
}

#[test]
fn a_failed_submit_is_returned_naming_its_frame_and_the_next_frames_go_on() {
    let _one = serial();
    let mut w = world(2);
    frame(&mut w.r).unwrap();
    w.backend.fail_submit_in(1);
    let failed = frame(&mut w.r).unwrap().frame;
    // poll() learns of it without rendering, once the submission thread is done with it.
    w.r.flush().map(|_| ()).expect_err("flush returns it");
    frame(&mut w.r).unwrap();
    let e = w.r.flush().err();
    assert!(e.is_none(), "reported once: {e:?}");
    w.backend.fail_submit_in(1);
    frame(&mut w.r).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let e = loop {
        match w.r.poll() {
            Err(e) => break e,
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Ok(_) => panic!("poll never saw the failed submit"),
        }
    };
    assert!(
        matches!(e, RenderError::Submit { frame, source: SubmitError::Validation(_) } if frame == failed + 2),
        "{e}"
    );
    frame(&mut w.r).unwrap();
    w.r.flush().unwrap();
    // A failed frame's error waits for `poll` or the next frame: `set_graph` and `resize`
    // apply meanwhile, they never return it instead.
    w.backend.fail_submit_in(1);
    let failed = frame(&mut w.r).unwrap().frame;
    let deadline = Instant::now() + Duration::from_secs(30);
    while w.backend.submits() < failed && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    set_graph(&mut w.r, &w.backend);
    w.r.resize(SIDE / 2, SIDE / 2).unwrap();
    assert_eq!((w.r.config().width, w.r.config().height), (SIDE / 2, SIDE / 2), "applied");
    let e = w.r.flush().expect_err("the failed frame is still reported");
    assert!(matches!(e, RenderError::Submit { frame, .. } if frame == failed), "{e}");
    frame(&mut w.r).unwrap();
    w.r.flush().unwrap();
}

/// The headline: a lost device is a typed error; `recover` with a new backend makes
/// everything again from the retained scene; the frames after equal a clean run's.
#[test]
fn device_lost_then_recover_renders_what_a_clean_run_renders() {
    let _one = serial();
    let (_, clean) = clean_run(6);
    let mut w = world(4);
    frame(&mut w.r).unwrap();
    frame(&mut w.r).unwrap();
    w.r.flush().unwrap();
    w.backend.lose_device_in(1);
    // Frame 3 is handed over and lost on submission; the next call reports it.
    frame(&mut w.r).unwrap();
    let e = w.r.flush().unwrap_err();
    assert_eq!(e, RenderError::DeviceLost);
    assert!(w.r.is_lost());
    // While lost: frames fail at once and touch nothing; the scene can still change.
    let submits = w.backend.submits();
    assert_eq!(frame(&mut w.r).unwrap_err(), RenderError::DeviceLost);
    assert_eq!(w.r.flush().unwrap_err(), RenderError::DeviceLost);
    assert_eq!(w.backend.submits(), submits);
    let refused = w.r.create_mesh(&cube()).unwrap_err();
    assert!(refused.is_device_lost(), "{refused}");
    let objects = w.r.scene().len();

    // A recovery onto a backend too small for the configuration changes nothing.
    let tiny = Caps { max_buffer_size: 1 << 10, ..NullBackend::new(true).caps() };
    let refused = w.r.recover(Arc::new(FaultBackend::new(NullBackend::with_caps(tiny))));
    assert!(matches!(refused, Err(InitError::Config(_))), "{refused:?}");
    assert!(w.r.is_lost());

    let fresh = Arc::new(FaultBackend::new(NullBackend::new(true)));
    let stats = w.r.recover(fresh.clone()).unwrap();
    // The mesh and the texture live on the GPU only (`CpuCopy::Drop`): the engine gives
    // their data again.
    assert_eq!((stats.meshes, stats.textures, stats.materials, stats.objects), (0, 0, 7, objects));
    assert_eq!(stats.needs_data.len(), 2);
    for need in stats.needs_data {
        match need {
            NeedsData::Mesh(m) => w.r.resupply_mesh(m, &cube()).unwrap(),
            NeedsData::Texture(t) => w.r.resupply_texture(t, &[&[200; 16]]).unwrap(),
        }
    }
    assert!(!w.r.is_lost());
    // The engine's own objects (the overlay's pipeline) are its to make again.
    set_graph(&mut w.r, &fresh);
    for _ in 0..4 {
        frame(&mut w.r).unwrap();
    }
    w.r.flush().unwrap();
    assert_eq!(fresh.frames(), clean[2..6], "frames 3..6 after recovery equal a clean run's, up to handle names");

    // Nothing of the old device is needed again, and nothing was made twice: the new
    // device holds what a clean run's holds.
    let mut c = world(4);
    frame(&mut c.r).unwrap();
    c.r.flush().unwrap();
    let (live, clean_live) = (fresh.inner().live(), c.backend.inner().live());
    assert_eq!(
        (live.buffers, live.textures, live.bind_groups, live.samplers),
        (clean_live.buffers, clean_live.textures, clean_live.bind_groups, clean_live.samplers)
    );
}

#[test]
fn device_lost_mid_frame_while_creating_is_typed_and_recoverable() {
    let _one = serial();
    let mut w = world(2);
    frame(&mut w.r).unwrap();
    w.backend.lose_device();
    // The next frame records on a lost device: the first error it meets is a loss.
    assert_eq!(frame(&mut w.r).unwrap_err(), RenderError::DeviceLost);
    assert_eq!(
        w.r.set_graph(full_graph(TargetKind::Retained, 64, PipelineId::default()).0),
        Err(RenderError::DeviceLost)
    );
    let fresh = Arc::new(FaultBackend::new(NullBackend::new(true)));
    w.r.recover(fresh.clone()).unwrap();
    set_graph(&mut w.r, &fresh);
    frame(&mut w.r).unwrap();
    w.r.flush().unwrap();
    assert_eq!(fresh.submits(), 1);
}

#[test]
fn warm_up_on_a_lost_device_is_a_loss_and_works_again_after_recover() {
    let _one = serial();
    let mut w = world(2);
    frame(&mut w.r).unwrap();
    w.backend.lose_device();
    // A variant nothing has made yet: its module is the first creation, refused as lost.
    let log = w.r.pipeline_log();
    assert_eq!(w.r.warm_up_keywords(&[&["FOG"]]), Err(RenderError::DeviceLost));
    assert_eq!(w.r.warm_up(), Err(RenderError::DeviceLost), "the renderer knows it is lost");
    assert_eq!(w.r.warm_up_log(&log), Err(RenderError::DeviceLost));
    assert_eq!(frame(&mut w.r).unwrap_err(), RenderError::DeviceLost);
    let fresh = Arc::new(FaultBackend::new(NullBackend::new(true)));
    w.r.recover(fresh.clone()).unwrap();
    set_graph(&mut w.r, &fresh);
    let warm = w.r.warm_up_keywords(&[&[], &["FOG"]]).unwrap();
    assert!(warm.pipelines_created > 0, "{warm:?}");
    let s = frame(&mut w.r).unwrap();
    assert_eq!((s.lists.pipelines_created, s.lists.shader_modules_created), (0, 0));
    // The log from before the loss applies to the new device too.
    let replay = w.r.warm_up_log(&log).unwrap();
    assert_eq!((replay.found + replay.pipelines_created) as usize, log.entries.len(), "{replay:?}");
    assert!(replay.skipped.is_empty(), "{replay:?}");
}

/// A device lost while a replayed log compiles its batch: the replay is a loss (the renderer
/// waits for `recover`), and after recovery the same log makes its pipelines.
#[test]
fn a_pipeline_log_replayed_on_a_lost_device_is_a_loss() {
    let _one = serial();
    let mut w = world(2);
    frame(&mut w.r).unwrap();
    w.r.set_global_keyword("FOG", true);
    frame(&mut w.r).unwrap();
    let log = w.r.pipeline_log();
    let fresh = Arc::new(FaultBackend::new(NullBackend::new(true)));
    w.backend.lose_device();
    assert_eq!(frame(&mut w.r).unwrap_err(), RenderError::DeviceLost);
    w.r.recover(fresh.clone()).unwrap();
    fresh.lose_device();
    assert_eq!(w.r.warm_up_log(&log), Err(RenderError::DeviceLost));
    let again = Arc::new(FaultBackend::new(NullBackend::new(true)));
    w.r.recover(again.clone()).unwrap();
    let replay = w.r.warm_up_log(&log).unwrap();
    assert!(replay.pipelines_created > 0 && replay.skipped.is_empty(), "{replay:?}");
}

/// A device lost during a CPU write is a loss wherever the write happens: a texture's
/// texels, a mesh's vertices, a fullscreen pass's uniform block (set_graph), the renderer's
/// own fixed objects (new, recover), a frame's uploads.
#[test]
fn device_lost_during_each_kind_of_write_is_recognised() {
    let _one = serial();
    let lost_at_write = || {
        let b = Arc::new(FaultBackend::new(NullBackend::new(true)));
        b.lose_device_at_write(1);
        b
    };
    // Renderer::new uploads its white texture.
    let e = Renderer::new(lost_at_write(), config(1)).unwrap_err();
    assert!(matches!(e, InitError::Write(WriteError::DeviceLost)), "{e}");
    // A texture's texels, a mesh's vertices and indices go with the next frame's batch of
    // uploads: staging it (on the upload thread, while the frame is built) meets the loss,
    // and the renderer is lost: that frame, or the flush after it, says so.
    for texture in [true, false] {
        let mut w = scene(1);
        set_graph(&mut w.r, &w.backend);
        w.backend.lose_device_at_write(1);
        let make = |r: &mut Renderer<Faulty>| match texture {
            true => r.create_texture(1, 1, &[0; 4]).map(drop),
            false => r.create_mesh(&cube()).map(drop),
        };
        make(&mut w.r).unwrap();
        match frame(&mut w.r) {
            Ok(_) => assert_eq!(w.r.flush(), Err(RenderError::DeviceLost)),
            Err(e) => assert_eq!(e, RenderError::DeviceLost),
        }
        assert!(w.r.is_lost());
        assert!(make(&mut w.r).unwrap_err().is_device_lost(), "refused while lost");
    }
    // set_graph writes each fullscreen pass's uniform block: the renderer is lost.
    let mut w = scene(1);
    w.backend.lose_device_at_write(1);
    let bar = bar_pipeline(&*w.backend).unwrap();
    assert_eq!(w.r.set_graph(full_graph(TargetKind::Retained, 64, bar).0), Err(RenderError::DeviceLost));
    assert!(w.r.is_lost());
    // recover's mesh buffers, onto a backend lost at its first write: refused, and
    // recognised as a loss.
    let e = w.r.recover(lost_at_write()).unwrap_err();
    assert!(matches!(e, InitError::Write(WriteError::DeviceLost)), "{e}");
    let fresh = Arc::new(FaultBackend::new(NullBackend::new(true)));
    w.r.recover(fresh.clone()).unwrap();
    set_graph(&mut w.r, &fresh);
    frame(&mut w.r).unwrap();
    w.r.flush().unwrap();
}

#[test]
fn out_of_memory_and_device_limits_are_typed_and_change_nothing() {
    let _one = serial();
    let mut w = world(2);
    let before = frame(&mut w.r).unwrap().digest;
    // A mesh that grows the shared vertex buffer, whose new buffer is out of memory.
    let big = MeshData { vertices: vec![Vertex::default(); 100_000], indices: vec![0; 300] };
    w.backend.out_of_memory_in(1);
    let e = w.r.create_mesh(&big).unwrap_err();
    // What was asked for: the grown vertex buffer, the next power of two over the mesh's.
    assert!(
        matches!(e, ResourceError::Backend(CreateError::OutOfMemory { requested }) if requested >= 100_000 * 32),
        "{e}"
    );
    w.backend.out_of_memory_in(1);
    let e = w.r.create_texture(4, 4, &[0; 64]).unwrap_err();
    assert_eq!(e, ResourceError::Backend(CreateError::OutOfMemory { requested: 64 }));
    // Over the device's limit: what was asked for and the maximum.
    let e = w.r.create_texture(100_000, 1, &[0; 400_000]).unwrap_err();
    assert_eq!(
        e,
        ResourceError::Backend(CreateError::Limit { what: "texture side", requested: 100_000, maximum: 8192 })
    );
    // A graph whose targets cannot be made: the old graph stays.
    w.backend.out_of_memory_in(1);
    let (g, _) = full_graph(TargetKind::Retained, 128, bar_pipeline(&*w.backend).unwrap());
    let e = w.r.set_graph(g).unwrap_err();
    assert!(
        matches!(&e, RenderError::Target { target, source: CreateError::OutOfMemory { requested } }
            if *requested > 0 && !target.is_empty()),
        "{e}"
    );
    let after = frame(&mut w.r).unwrap().digest;
    assert_eq!(before, after, "the scene and the graph are as they were");
    // The mesh that failed left nothing: the next one lands where it would have.
    w.r.create_mesh(&big).unwrap();
    frame(&mut w.r).unwrap();
    w.r.flush().unwrap();
}

#[test]
fn a_view_buffer_that_cannot_grow_fails_its_frame_and_leaks_nothing() {
    let _one = serial();
    // Two worlds take the same steps; in one, the frame that grows the views' instance and
    // indirect buffers gets no memory for the second (the first view's instances have
    // grown by then). After another frame and a flush both hold the same resources: the
    // buffer the failed frame replaced was retired, not lost.
    let grow = |w: &mut World| {
        let shader = w.r.create_shader(&ShaderDesc::lit()).unwrap();
        let mesh = w.r.create_mesh(&cube()).unwrap();
        let material = w.r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
        w.r.insert_objects(&scattered(1500, 12, mesh, &[material])).unwrap();
    };
    let (mut clean, mut faulted) = (world(2), world(2));
    for w in [&mut clean, &mut faulted] {
        frame(&mut w.r).unwrap();
        grow(w);
    }
    faulted.backend.out_of_memory_in(2);
    let e = frame(&mut faulted.r).unwrap_err();
    assert!(matches!(e, RenderError::FrameBuffer(CreateError::OutOfMemory { .. })), "{e}");
    for w in [&mut clean, &mut faulted] {
        frame(&mut w.r).unwrap();
        w.r.flush().unwrap();
    }
    assert_eq!(faulted.backend.live(), clean.backend.live(), "the failed frame left a buffer behind");
}

#[test]
fn slow_gpu_blocks_render_within_the_frames_in_flight_limit() {
    let _one = serial();
    let mut w = world(4);
    w.backend.set_gpu_ms(4);
    let frames = 60;
    let (tx, rx) = std::sync::mpsc::channel();
    let backend = w.backend.clone();
    let t = Instant::now();
    let worker = std::thread::spawn(move || {
        let mut chunks = 0;
        for _ in 0..frames {
            chunks = chunks.max(frame(&mut w.r).unwrap().chunks);
        }
        w.r.flush().unwrap();
        tx.send(chunks).unwrap();
    });
    // Watchdog: a deadlock fails the test instead of hanging it.
    let chunks = rx.recv_timeout(Duration::from_secs(120)).expect("60 frames finish: no deadlock") as usize;
    worker.join().unwrap();
    let fif = config(4).frames_in_flight;
    assert!(backend.max_in_flight() <= fif, "{} submissions on the GPU at once", backend.max_in_flight());
    assert!(backend.max_in_flight() >= 2, "the GPU was kept busy");
    // Memory stays bounded: chunks alive never exceed those of the frames in flight plus
    // the one being recorded; none is left after the flush.
    let (live, most) = backend.live_chunks();
    assert_eq!(live, 0);
    assert!(most <= chunks * (fif + 1), "{most} chunks alive at once, {chunks} a frame");
    // render blocked on the GPU (the policy: it waits, it never returns a busy error).
    assert!(t.elapsed() >= Duration::from_millis(4 * (frames as u64 - fif as u64)));
}

#[test]
fn shutdown_with_frames_in_flight_joins_every_thread_and_drops_every_chunk() {
    let _one = serial();
    // The tests before this one dropped their renderers, and a drop waits for its threads.
    let threads = settled_threads(0);
    let backend = Arc::new(FaultBackend::new(NullBackend::new(true)));
    backend.set_gpu_ms(30);
    for cycle in 0..100 {
        let mut r = Renderer::new(backend.clone(), config(2)).unwrap();
        if cycle % 10 == 0 {
            // Every tenth: a scene and frames still on the slow GPU when it is dropped.
            let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
            let mesh = r.create_mesh(&cube()).unwrap();
            let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
            let object = ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS };
            r.insert_objects(&[object]).unwrap();
            let (g, _) = full_graph(TargetKind::Retained, 64, bar_pipeline(&*backend).unwrap());
            r.set_graph(g).unwrap();
            for _ in 0..3 {
                frame(&mut r).unwrap();
            }
            let t = Instant::now();
            drop(r);
            assert!(t.elapsed() < Duration::from_secs(10), "drop returned in {:?}", t.elapsed());
            assert_eq!(backend.live_chunks().0, 0, "every chunk dropped");
            assert_eq!(settled_threads(threads), threads, "cycle {cycle}: its threads left");
        }
    }
    assert_eq!(settled_threads(threads), threads, "every worker and submission thread joined");
}
