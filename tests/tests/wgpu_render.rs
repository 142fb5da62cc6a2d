//! The wgpu backend on real adapters (llvmpipe through GL, lavapipe through Vulkan, or a
//! GPU): exact pixels of the two-quad scene, for both chunk encodings, direct and
//! multi-draw-indirect draws, and 1 vs 4 recording threads.
//!
//! On CI (`CI` set) both software adapters must exist (`.ci/run` installs lavapipe); locally
//! a missing one is reported and skipped.

use switchyard_backend::wgpu::{Encoding, WgpuBackend};
use switchyard_backend::*;
use switchyard_tests::{ndc_to_pixel, TwoQuads, CLEAR, GREEN, RED};

fn backends(api: ::wgpu::Backends) -> Vec<WgpuBackend> {
    let adapters = WgpuBackend::enumerate(api);
    if adapters.is_empty() {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI: is mesa-vulkan-drivers installed?");
        eprintln!("skipping: no {api:?} adapter here");
        return Vec::new();
    }
    // One adapter of this API, both encodings.
    let info = adapters[0].get_info();
    eprintln!("adapter: {} ({:?})", info.name, info.backend);
    let a0 = adapters.into_iter().next().unwrap();
    let mut out = vec![WgpuBackend::from_adapter(a0, Encoding::RenderBundle).expect("device")];
    let a1 = WgpuBackend::enumerate(api).into_iter().next().unwrap();
    out.push(WgpuBackend::from_adapter(a1, Encoding::CommandBuffer).expect("device"));
    out
}

fn render(b: &WgpuBackend, s: &TwoQuads, chunks: &[Vec<Command>], threads: usize) -> Image {
    let pass = s.pass();
    let count = chunks.len() as u32;
    let recorded: Vec<_> = if threads <= 1 {
        chunks
            .iter()
            .enumerate()
            .map(|(i, c)| b.record(&pass, ChunkPosition { index: i as u32, count }, c).expect("record"))
            .collect()
    } else {
        let pass = &pass;
        std::thread::scope(|sc| {
            let per = chunks.len().div_ceil(threads);
            let handles: Vec<_> = chunks
                .chunks(per)
                .enumerate()
                .map(|(t, group)| {
                    sc.spawn(move || {
                        group
                            .iter()
                            .enumerate()
                            .map(|(j, c)| {
                                b.record(pass, ChunkPosition { index: (t * per + j) as u32, count }, c).expect("record")
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        })
    };
    let id = b.submit(&[], &mut [PassSubmit { desc: pass, chunks: recorded }]).expect("submit");
    b.wait(id).expect("wait");
    b.read_rgba8(s.color).expect("readback")
}

fn check_two_quads(img: &Image, what: &str) {
    let at = |x, y| {
        let (px, py) = ndc_to_pixel(x, y);
        img.pixel(px, py)
    };
    assert_eq!(at(-0.6, 0.0), RED, "{what}: only quad A");
    assert_eq!(at(0.0, 0.0), RED, "{what}: overlap, A is nearer though drawn first");
    assert_eq!(at(0.6, 0.0), GREEN, "{what}: only quad B");
    assert_eq!(at(0.0, 0.9), CLEAR, "{what}: clear color");
    assert_eq!(at(0.6, 0.7), CLEAR, "{what}: clear color above B");
}

fn two_quads_on(api: ::wgpu::Backends) {
    for b in backends(api) {
        let s = TwoQuads::create(&b, 0).expect("fixture");
        let what = format!("{} {:?}", b.name(), b.encoding());
        check_two_quads(&render(&b, &s, &[s.direct_stream()], 1), &format!("{what} direct"));
        // Indirect draws: one native multi-draw, or (bundles) a loop of indirect draws.
        if b.caps().multi_draw_indirect || b.caps().indirect_draws {
            check_two_quads(&render(&b, &s, &[s.indirect_stream()], 1), &format!("{what} indirect"));
        } else {
            assert!(b.record(&s.pass(), ChunkPosition::SINGLE, &s.indirect_stream()).is_err());
        }
        // Nothing recorded: the pass still clears.
        let id = b.submit(&[], &mut [PassSubmit { desc: s.pass(), chunks: Vec::new() }]).unwrap();
        b.wait(id).unwrap();
        let img = b.read_rgba8(s.color).unwrap();
        assert!(img.pixels.chunks(4).all(|p| p == CLEAR), "{what}: empty pass clears");
    }
}

fn threads_agree_on(api: ::wgpu::Backends) {
    for b in backends(api) {
        let s = TwoQuads::create(&b, 62).expect("fixture");
        let one = render(&b, &s, &s.chunked_streams(1), 1);
        let four = render(&b, &s, &s.chunked_streams(8), 4);
        assert!(one == four, "{} {:?}: 1 and 4 recording threads differ", b.name(), b.encoding());
        let distinct: std::collections::HashSet<_> = one.pixels.chunks(4).collect();
        assert!(distinct.len() > 10, "the grid scene draws many colors");
    }
}

#[test]
fn two_quads_vulkan() {
    two_quads_on(::wgpu::Backends::VULKAN);
}

#[test]
fn two_quads_gl() {
    two_quads_on(::wgpu::Backends::GL);
}

#[test]
fn one_and_four_threads_render_identically_vulkan() {
    threads_agree_on(::wgpu::Backends::VULKAN);
}

#[test]
fn one_and_four_threads_render_identically_gl() {
    threads_agree_on(::wgpu::Backends::GL);
}

/// A device's pipeline cache goes to bytes and back onto a new device; bytes that are not
/// exactly that (corrupt, of another adapter, not a cache) are refused and the device goes on
/// rendering; a device without a cache says so.
fn pipeline_cache_on(api: ::wgpu::Backends) {
    use switchyard_backend::wgpu::PipelineCacheError as E;
    let Some(b) = backends(api).into_iter().next() else { return };
    TwoQuads::create(&b, 0).expect("fixture");
    let Some(bytes) = b.pipeline_cache_bytes() else {
        assert!(!b.has_pipeline_cache());
        assert_eq!(b.load_pipeline_cache(b"SWYDPC01"), Err(E::Unsupported), "{}", b.name());
        return;
    };
    let fresh = backends(api).into_iter().next().expect("a second device");
    assert!(fresh.load_pipeline_cache(&bytes).is_ok(), "{}", b.name());
    let mut corrupt = bytes.clone();
    *corrupt.last_mut().expect("data") ^= 1;
    assert!(matches!(fresh.load_pipeline_cache(&corrupt), Err(E::Corrupt(_))));
    let mut foreign = bytes.clone();
    foreign[16] ^= 1; // the first byte of the adapter's key
    assert!(matches!(fresh.load_pipeline_cache(&foreign), Err(E::OtherAdapter(_))));
    assert_eq!(fresh.load_pipeline_cache(b"not a cache at all"), Err(E::NotACache));
    assert!(matches!(fresh.load_pipeline_cache(&bytes[..bytes.len() / 2]), Err(E::Corrupt(_))));
    let s = TwoQuads::create(&fresh, 0).expect("fixture");
    check_two_quads(&render(&fresh, &s, &[s.direct_stream()], 1), &format!("{} after a cached load", b.name()));
    assert!(fresh.pipeline_cache_bytes().is_some());
}

#[test]
fn pipeline_cache_round_trips_and_refuses_foreign_bytes_vulkan() {
    pipeline_cache_on(::wgpu::Backends::VULKAN);
}

#[test]
fn pipeline_cache_round_trips_and_refuses_foreign_bytes_gl() {
    pipeline_cache_on(::wgpu::Backends::GL);
}

#[test]
fn readback_errors_are_typed() {
    for b in backends(::wgpu::Backends::VULKAN).into_iter().take(1) {
        let s = TwoQuads::create(&b, 0).unwrap();
        assert!(matches!(b.read_rgba8(s.depth), Err(ReadbackError::Unsupported(_))));
        b.destroy(Resource::Texture(s.color)).unwrap();
        assert_eq!(b.read_rgba8(s.color), Err(ReadbackError::InvalidHandle));
    }
}

/// An engine's device, queue and texture: Switchyard renders into the texture through
/// `WgpuBackend::from_device` and leaves the device as it found it.
fn engine_device_on(api: ::wgpu::Backends) {
    use std::sync::{Arc, Mutex};
    let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
        return;
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&::wgpu::DeviceDescriptor::default())).unwrap();
    // The engine's own error handler: Switchyard must neither replace nor trigger it.
    let engine_errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = engine_errors.clone();
    device.on_uncaptured_error(Arc::new(move |e: ::wgpu::Error| sink.lock().unwrap().push(e.to_string())));
    let texture = device.create_texture(&::wgpu::TextureDescriptor {
        label: Some("engine-target"),
        size: ::wgpu::Extent3d {
            width: switchyard_tests::SIZE,
            height: switchyard_tests::SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: ::wgpu::TextureDimension::D2,
        format: ::wgpu::TextureFormat::Rgba8Unorm,
        usage: ::wgpu::TextureUsages::RENDER_ATTACHMENT | ::wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    for encoding in [Encoding::RenderBundle, Encoding::CommandBuffer] {
        let b = WgpuBackend::from_device(&adapter, device.clone(), queue.clone(), encoding);
        let color = b.import_texture(&texture).expect("import");
        let s = TwoQuads::create_into(&b, 0, Some(color)).expect("fixture");
        check_two_quads(&render(&b, &s, &[s.direct_stream()], 1), &format!("engine device, {encoding:?}"));
        // A pass naming a destroyed import is refused with a typed error before the device sees it.
        b.destroy(Resource::Texture(color)).unwrap();
        let err = b.submit(&[], &mut [PassSubmit { desc: s.pass(), chunks: Vec::new() }]).unwrap_err();
        assert!(matches!(err, SubmitError::Pass(_)), "{err:?}");
    }
    assert!(engine_errors.lock().unwrap().is_empty(), "{:?}", engine_errors.lock().unwrap());
    // The engine's texture and device still work after the backends are gone.
    let mut enc = device.create_command_encoder(&::wgpu::CommandEncoderDescriptor::default());
    let view = texture.create_view(&::wgpu::TextureViewDescriptor::default());
    drop(enc.begin_render_pass(&::wgpu::RenderPassDescriptor {
        label: None,
        color_attachments: &[Some(::wgpu::RenderPassColorAttachment {
            view: &view,
            depth_slice: None,
            resolve_target: None,
            ops: ::wgpu::Operations {
                load: ::wgpu::LoadOp::Clear(::wgpu::Color::BLACK),
                store: ::wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    }));
    queue.submit([enc.finish()]);
    device.poll(::wgpu::PollType::Wait { submission_index: None, timeout: None }).unwrap();
    assert!(engine_errors.lock().unwrap().is_empty());
    // Formats the backend does not know are refused, not guessed.
    let odd = device.create_texture(&::wgpu::TextureDescriptor {
        label: None,
        size: ::wgpu::Extent3d { width: 4, height: 4, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: ::wgpu::TextureDimension::D2,
        format: ::wgpu::TextureFormat::R8Unorm,
        usage: ::wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let b = WgpuBackend::from_device(&adapter, device.clone(), queue.clone(), Encoding::RenderBundle);
    assert!(matches!(b.import_texture(&odd), Err(CreateError::Invalid(_))));
    // With a backend alive, the engine's own mistakes still reach the engine's handler.
    drop(device.create_buffer(&::wgpu::BufferDescriptor {
        label: Some("engine mistake"),
        size: 4,
        usage: ::wgpu::BufferUsages::MAP_READ | ::wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    }));
    device.poll(::wgpu::PollType::Wait { submission_index: None, timeout: None }).unwrap();
    assert_eq!(engine_errors.lock().unwrap().len(), 1, "the engine's handler is still installed");
    drop(b);
}

#[test]
fn renders_into_an_engine_texture_on_the_engines_device_vulkan() {
    engine_device_on(::wgpu::Backends::VULKAN);
}

#[test]
fn renders_into_an_engine_texture_on_the_engines_device_gl() {
    engine_device_on(::wgpu::Backends::GL);
}

/// Passes are timed where `Caps::gpu_timestamps` says so: on a device with timestamp
/// queries, in the `RenderBundle` encoding, and in the `CommandBuffer` encoding where the
/// device also takes timestamps between commands. A submission's times come back once it was waited for,
/// one finite non-negative figure per pass (the first 64 passes of a frame), and only for
/// the two newest submissions waited for.
fn pass_times_on(api: ::wgpu::Backends) {
    for b in backends(api) {
        let s = TwoQuads::create(&b, 0).expect("fixture");
        let what = format!("{} {:?}", b.name(), b.encoding());
        let timed = b.caps().gpu_timestamps;
        let features = b.device().features();
        let has_queries = features.contains(::wgpu::Features::TIMESTAMP_QUERY);
        let between = features.contains(::wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        assert_eq!(timed, has_queries && (b.encoding() == Encoding::RenderBundle || between), "{what}");
        eprintln!("{what}: passes timed: {timed}");
        let submit = |passes: usize| {
            let mut frame: Vec<_> = (0..passes)
                .map(|_| PassSubmit {
                    desc: s.pass(),
                    chunks: vec![b.record(&s.pass(), ChunkPosition::SINGLE, &s.direct_stream()).expect("record")],
                })
                .collect();
            b.submit(&[], &mut frame).expect("submit")
        };
        let mut out = vec![-1.0];
        let first = submit(2);
        assert!(!b.gpu_pass_times(first, &mut out), "{what}: times before the wait");
        assert_eq!(out, [-1.0], "{what}: untouched");
        assert!(b.gpu_profile().is_none(), "{what}: no scopes before the wait");
        b.wait(first).expect("wait");
        assert_eq!(b.gpu_pass_times(first, &mut out), timed, "{what}");
        if timed {
            assert_eq!(out.len(), 2, "{what}: one figure per pass");
            assert!(out.iter().all(|ms| ms.is_finite() && (0.0..10_000.0).contains(ms)), "{what}: {out:?}");
            // The same times as wgpu-profiler's scopes, labelled with the passes' names.
            let (id, scopes) = b.gpu_profile().expect("scopes");
            assert_eq!(id, first, "{what}");
            assert_eq!(scopes.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), [&*s.pass().label; 2], "{what}");
            for (scope, ms) in scopes.iter().zip(&out) {
                let t = scope.time.clone().expect("timed");
                assert!(t.start <= t.end && ((t.end - t.start) * 1e3 - ms).abs() < 1e-9, "{what}: {t:?} {ms}");
                assert!(scope.nested_queries.is_empty());
            }
            // wgpu-profiler's own output takes them.
            let trace = std::env::temp_dir().join(format!("switchyard-gpu-trace-{}.json", std::process::id()));
            switchyard::wgpu_profiler::chrometrace::write_chrometrace(&trace, &scopes).expect("trace");
            let json = std::fs::read_to_string(&trace).expect("read");
            std::fs::remove_file(&trace).ok();
            assert_eq!(json.matches(&format!("\"{}\"", s.pass().label)).count(), 2, "{what}: {json}");
        } else {
            assert!(b.gpu_profile().is_none(), "{what}");
        }
        let second = submit(65);
        b.wait(second).expect("wait");
        if timed {
            let (id, scopes) = b.gpu_profile().expect("scopes");
            assert_eq!((id, scopes.len()), (second, 64), "{what}: the newest submission's first 64 passes");
        }
        // The two newest are kept (a frame split around a late acquire is two).
        assert_eq!(b.gpu_pass_times(first, &mut out), timed, "{what}: the one before stays");
        assert_eq!(b.gpu_pass_times(second, &mut out), timed, "{what}");
        if timed {
            assert_eq!(out.len(), 64, "{what}: the first 64 passes are timed");
        }
        let third = submit(1);
        b.wait(third).expect("wait");
        assert!(!b.gpu_pass_times(first, &mut out), "{what}: only the two newest submissions waited for are kept");
        assert_eq!(b.gpu_pass_times(second, &mut out), timed, "{what}");
        assert_eq!(b.gpu_pass_times(third, &mut out), timed, "{what}");
        check_two_quads(&b.read_rgba8(s.color).expect("readback"), &what);
    }
}

#[test]
fn passes_are_timed_where_the_device_has_timestamps_vulkan() {
    pass_times_on(::wgpu::Backends::VULKAN);
}

#[test]
fn passes_are_timed_where_the_device_has_timestamps_gl() {
    pass_times_on(::wgpu::Backends::GL);
}

/// The renderer's stats carry the GPU times of an earlier frame, one per pass of the
/// frame graph, where the backend times passes; the null backend's stats carry none.
#[test]
fn frame_stats_carry_gpu_pass_times_of_a_finished_frame() {
    use std::sync::Arc;
    use switchyard::{Renderer, RendererConfig};
    use switchyard_tests::{cube, cube_grid, plain_material};
    fn frames<B: Backend>(backend: Arc<B>) -> Vec<switchyard::FrameStats> {
        let config = RendererConfig { threads: 2, max_objects: 64, width: 64, height: 64, ..Default::default() };
        let mut r = Renderer::new(backend, config).expect("renderer");
        let shader = r.create_shader(&switchyard::ShaderDesc::lit()).expect("shader");
        let mesh = r.create_mesh(&cube()).expect("mesh");
        let material = plain_material(&mut r, shader, [0.9, 0.6, 0.3, 1.0]);
        let views = cube_grid(&mut r, mesh, &[material]);
        (0..6).map(|_| r.render(&views).expect("frame")).collect()
    }
    for s in frames(Arc::new(null::NullBackend::new(true))) {
        assert_eq!(s.gpu, None, "the null backend times nothing");
    }
    let Some(backend) = switchyard_tests::wgpu_backend(::wgpu::Backends::VULKAN, Encoding::RenderBundle) else {
        return;
    };
    let timed = backend.caps().gpu_timestamps;
    let stats = frames(backend);
    // Three frames in flight: the fourth frame's submit waits for the first.
    let last = stats.last().expect("six frames");
    eprintln!("gpu times: {:?}", last.gpu.map(|g| (g.frame, g.count, g.total_ms())));
    match last.gpu {
        Some(g) => {
            assert!(timed);
            assert!(g.frame >= 1 && g.frame < last.frame, "times of an earlier frame: {} of {}", g.frame, last.frame);
            assert_eq!(g.count, last.pass_count, "one figure per pass");
            assert!(g.passes().iter().all(|ms| ms.is_finite() && *ms >= 0.0) && g.total_ms() > 0.0, "{g:?}");
        }
        None => assert!(!timed, "the adapter times passes but no frame's times came back"),
    }
}

/// Pipelines and modules made in one batch get the ids the same calls one by one get, on a
/// pool of four threads (the wgpu backend compiles a batch in parallel): equal descriptors
/// share a pipeline, a refused one is its own typed error and takes no id, and the
/// batch's pipelines draw.
fn batches_match_one_by_one<B: Backend>(serial: &B, batched: &B, what: &str) -> Option<(B::Chunk, TwoQuads)> {
    let (a, b) = (TwoQuads::create(serial, 0).expect("fixture"), TwoQuads::create(batched, 0).expect("fixture"));
    let module = |wgsl: &str| ShaderModuleDesc { label: "m".into(), wgsl: wgsl.into() };
    let modules = [module(switchyard_tests::SHADER), module("fn broken("), module(switchyard_tests::SHADER)];
    let one: Vec<_> = modules.iter().map(|m| serial.create_shader(m)).collect();
    let pool = switchyard::rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    let many = pool.install(|| batched.create_shaders(&modules));
    assert!(matches!(many[1], Err(CreateError::Shader { .. })), "{what}: {:?}", many[1]);
    let bits = |r: &Result<ShaderId, CreateError>| r.as_ref().map(|id| id.bits()).map_err(Clone::clone);
    assert_eq!(one.iter().map(bits).collect::<Vec<_>>(), many.iter().map(bits).collect::<Vec<_>>(), "{what}");
    let descs = |q: &TwoQuads, shader: Result<ShaderId, CreateError>| {
        let base = TwoQuads::pipeline_desc(q.shader, q.layout, TextureFormat::Rgba8Unorm);
        let mut v = vec![base.clone()];
        for cull in [CullMode::Back, CullMode::Front] {
            for blend in [BlendMode::Replace, BlendMode::Alpha] {
                let color = Some(ColorTargetState { format: TextureFormat::Rgba8UnormSrgb, blend });
                v.push(PipelineDesc { cull, color, shader: shader.clone().unwrap(), ..base.clone() });
            }
        }
        v.push(PipelineDesc { vertex_entry: "no_such_entry".into(), ..base.clone() });
        v.push(v[2].clone());
        v.push(PipelineDesc { label: "another label".into(), ..v[3].clone() });
        v
    };
    let (da, db) = (descs(&a, one[0].clone()), descs(&b, many[0].clone()));
    let one: Vec<_> = da.iter().map(|d| serial.create_pipeline(d)).collect();
    let many = pool.install(|| batched.create_pipelines(&db));
    assert!(matches!(many[5], Err(CreateError::Invalid(_))), "{what}: {:?}", many[5]);
    assert_eq!(many[0], Ok(b.pipeline), "{what}: the fixture's own pipeline, cached");
    assert_eq!(many[6], many[2], "{what}: equal descriptors share one pipeline");
    let bits = |r: &Result<PipelineId, CreateError>| r.as_ref().map(|id| id.bits()).map_err(Clone::clone);
    assert_eq!(one.iter().map(bits).collect::<Vec<_>>(), many.iter().map(bits).collect::<Vec<_>>(), "{what}");
    assert_eq!(serial.live().pipelines, batched.live().pipelines, "{what}");
    assert_eq!(batched.create_pipelines(&[]), Vec::new());
    // Each creation counts: destroying the shared one twice leaves the fixture's.
    for _ in 0..2 {
        batched.destroy(Resource::Pipeline(*many[6].as_ref().unwrap())).unwrap();
    }
    assert!(batched.destroy(Resource::Pipeline(*many[6].as_ref().unwrap())).is_err(), "{what}: gone now");
    let chunk =
        batched.record(&b.pass(), ChunkPosition::SINGLE, &b.direct_stream()).expect("the batch's fixture draws");
    Some((chunk, b))
}

#[test]
fn pipeline_batches_hand_out_the_ids_of_one_by_one_calls_null() {
    let (serial, batched) = (null::NullBackend::new(true), null::NullBackend::new(true));
    batches_match_one_by_one(&serial, &batched, "null");
}

fn pipeline_batches_on(api: ::wgpu::Backends) {
    let (Some(serial), Some(batched)) = (backends(api).into_iter().next(), backends(api).into_iter().next()) else {
        return;
    };
    let what = batched.name();
    let (chunk, q) = batches_match_one_by_one(&serial, &batched, &what).unwrap();
    let mut passes = vec![PassSubmit { desc: q.pass(), chunks: vec![chunk] }];
    batched.submit(&[], &mut passes).unwrap();
    check_two_quads(&batched.read_rgba8(q.color).unwrap(), &format!("{what}: drawn with a batch's pipeline"));
}

#[test]
fn pipeline_batches_hand_out_the_ids_of_one_by_one_calls_vulkan() {
    pipeline_batches_on(::wgpu::Backends::VULKAN);
}

#[test]
fn pipeline_batches_hand_out_the_ids_of_one_by_one_calls_gl() {
    pipeline_batches_on(::wgpu::Backends::GL);
}
