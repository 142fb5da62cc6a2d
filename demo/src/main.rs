//! `switchyard-demo`: renders a procedural city through the Switchyard scheduler, with
//! its frame declared as a frame graph (`passes.rs`), prints a per-stage and per-pass
//! summary, and writes the last frame as a PNG.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend, WgpuConfig};
use switchyard::backend::Backend;
use switchyard::*;
use switchyard_city as city;
use switchyard_demo::gltf_scene;

mod churn;
mod output;
mod passes;
mod scenes;
mod summary;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum BackendKind {
    /// Render through wgpu (best adapter; software where there is no GPU).
    Wgpu,
    /// CPU side only: validate, count and digest.
    Null,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum EncodingKind {
    /// `RenderBundle` per chunk, executed in one render pass per pass.
    Bundle,
    /// `CommandBuffer` (with its own render pass) per chunk.
    Buffer,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum CullKind {
    /// Per view, from its draws' density.
    Auto,
    /// On the workers.
    Cpu,
    /// In a compute pass, draws indirect.
    Gpu,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum SceneKind {
    /// Buildings on a grid, orbiting camera.
    City,
    /// One pillar and its shadow, camera looking straight down.
    Pillar,
    /// The stress scene: `--objects` unit cubes on a grid, `--materials` materials
    /// round-robin, the sun with shadows, a fixed camera 45° above the grid that sees them all.
    Cubes,
}

/// Renders a procedural city through Switchyard and reports per-stage timings.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Backend.
    #[arg(long, value_enum, default_value = "wgpu")]
    backend: BackendKind,
    /// Objects in the scene.
    #[arg(long, default_value_t = 100_000)]
    objects: usize,
    /// Materials.
    #[arg(long, default_value_t = 256)]
    materials: usize,
    /// Keyword variants among the materials (1-4).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=4))]
    variants: u32,
    /// The frame: one forward pass, or shadow cascades, opaque, transparent, post and an
    /// overlay.
    #[arg(long, value_enum, default_value = "full")]
    graph: passes::GraphKind,
    /// Cameras of the full graph: 1 = main only, 2 to 5 = main plus 1 to 4 shadow cascades.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=5))]
    views: u32,
    /// Seconds between the progress lines printed when the output is not a terminal.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    progress_every: f64,
    /// Frames to render (at least 1).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Scene: the procedural city, one pillar under a fixed camera (shadow test), or the
    /// cube grid (stress test).
    #[arg(long, value_enum, default_value = "city")]
    scene: SceneKind,
    /// Load a glTF 2.0 file (.gltf or .glb) and place copies of it until --objects is reached.
    #[arg(long)]
    gltf: Option<std::path::PathBuf>,
    /// Write the cube grid as a glTF binary (.glb) of `--grid-side` x `--grid-side` cubes in
    /// `--materials` materials (as `--scene cubes` places them) and exit: the same cubes
    /// for another renderer, or for `--gltf`.
    #[arg(long, value_name = "FILE")]
    write_cube_grid: Option<std::path::PathBuf>,
    /// Cubes per side of `--write-cube-grid`.
    #[arg(long, default_value_t = 250)]
    grid_side: usize,
    /// Write every frame's stats as JSON.
    #[arg(long)]
    stats: Option<std::path::PathBuf>,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Output image of the last frame (wgpu backend).
    #[arg(long, default_value = "frame.png")]
    out: std::path::PathBuf,
    /// Print `frame <n> digest <16 hex>` per frame.
    #[arg(long)]
    digest: bool,
    /// Image width.
    #[arg(long, default_value_t = 960)]
    width: u32,
    /// Image height.
    #[arg(long, default_value_t = 540)]
    height: u32,
    /// How the wgpu backend encodes chunks: one RenderBundle or one CommandBuffer each.
    #[arg(long, value_enum, default_value = "bundle")]
    encoding: EncodingKind,
    /// Resize the targets before frame FRAME (1-based, as `--digest` numbers frames) to
    /// WxH; repeatable. The PNG has the final size.
    #[arg(long, value_name = "FRAME:WxH", value_parser = parse_resize)]
    resize_at: Vec<(u32, u32, u32)>,
    /// Draw each batch with its own `draw_indexed` instead of one multi-draw-indirect per
    /// state bucket. The digest depends on this choice, so compare backends with the same.
    #[arg(long)]
    no_multi_draw: bool,
    /// Where views are culled: `gpu` culls shadow passes and the opaque pass in a compute
    /// pass and draws them indirectly (falls back to the CPU, with a note, where the
    /// backend cannot); `auto` decides per view from its last frame's instances per draw
    /// (`CullOn::Auto`). Without the flag: what run 15 measured faster per scene (BENCHMARKS.md),
    /// `gpu` for `--scene cubes` (thousands of instances per bucket), `cpu` for the others
    /// (the city's buckets hold about eight objects, and an indirect draw per bucket costs
    /// more to record than the CPU cull saves).
    #[arg(long, value_enum)]
    cull: Option<CullKind>,
    /// Cull the opaque pass by occlusion too, in two phases against a depth pyramid (with
    /// GPU culling only: without `--cull` it culls on the GPU; with `--cull cpu`, or
    /// where the adapter cannot, frustum culling only, with a note).
    #[arg(long)]
    occlusion: bool,
    /// Look from street level between the city's buildings instead of orbiting above them
    /// (most buildings hidden behind the nearest; the city scenes only).
    #[arg(long)]
    street: bool,
    /// Lose the device before frame FRAME (1-based), as a driver reset would (wgpu:
    /// `Device::destroy`), then recover on a new device from the retained scene and render
    /// the frame again. Digests after it differ from a clean run's: the new device names
    /// its objects differently; the pixels are the same.
    #[arg(long, value_name = "FRAME")]
    lose_device_at: Option<u32>,
    /// Add a fifth as many objects again that never hold still: every frame some are
    /// inserted, removed, moved and given another mesh and material, a material property
    /// changes, and one mesh and one material are replaced (made, their users moved,
    /// the old ones removed). Prints the resident memory after a warm-up (a tenth of the
    /// frames, at least 1,000) and its peak after it; the summary covers the last 1,000
    /// frames.
    #[arg(long)]
    churn: bool,
    /// Wait up to SECONDS (default 60) for a Tracy profiler to connect before building the
    /// scene, so a capture holds every frame (builds with the `tracy` feature; the client
    /// records nothing until a profiler connects).
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "60")]
    wait_for_profiler: Option<u32>,
    /// Create every material's pipelines and shader variants before the first frame
    /// (`Renderer::warm_up`) instead of on first use inside frames. The ids the backend
    /// gives them come in another order, so digests differ from a run without it (and
    /// are the same for any thread count).
    #[arg(long)]
    warm_up: bool,
    /// Keep the driver's pipeline cache in FILE (wgpu, where the device has one): read
    /// before any pipeline is made if the file exists (a file of another adapter or
    /// driver, or a corrupt one, is ignored with a note), written at the end of the run.
    #[arg(long, value_name = "FILE")]
    pipeline_cache: Option<std::path::PathBuf>,
}

/// What the demo needs of a backend kind besides `Backend`: its frame report, a simulated
/// device loss, and a new device after one.
struct Device<'a, B> {
    report: &'a dyn Fn(&B) -> Option<serde_json::Value>,
    lose: &'a dyn Fn(&B),
    make: &'a dyn Fn() -> Result<Arc<B>, String>,
}

/// `FRAME:WxH` of `--resize-at`.
fn parse_resize(s: &str) -> Result<(u32, u32, u32), String> {
    let err = || format!("`{s}` is not FRAME:WxH (e.g. 10:1280x720)");
    let (frame, size) = s.split_once(':').ok_or_else(err)?;
    let (w, h) = size.split_once('x').ok_or_else(err)?;
    let n = |v: &str| v.trim().parse::<u32>().map_err(|_| err());
    let (frame, w, h) = (n(frame)?, n(w)?, n(h)?);
    if frame == 0 || w == 0 || h == 0 {
        return Err(format!("`{s}`: the frame and both sides must be at least 1"));
    }
    Ok((frame, w, h))
}

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    // (The glTF crates' panics on malformed files are caught by the loader and reported as
    // its error.)
    std::panic::set_hook(Box::new(|info| {
        // Output piped into a reader that stopped (`| head`): end quietly, as a shell tool
        // does on SIGPIPE (Rust's `println!` panics on the closed pipe instead).
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        if !info.location().is_some_and(|l| l.file().contains("gltf")) {
            eprintln!("switchyard-demo: internal error: {info}");
        }
    }));
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            print!("{e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let msg = e.to_string();
            let line = msg.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            eprintln!("switchyard-demo: {line} (see --help)");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("switchyard-demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    if let Some(path) = &args.write_cube_grid {
        let bytes = switchyard_demo::cube_grid::glb(args.grid_side, args.materials)?;
        std::fs::write(path, &bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!(
            "wrote {} ({} cubes in {} materials, {} bytes)",
            path.display(),
            args.grid_side * args.grid_side,
            args.materials,
            bytes.len()
        );
        return Ok(());
    }
    if args.wait_for_profiler.is_some() && !cfg!(feature = "tracy") {
        return Err("--wait-for-profiler: this demo was built without the `tracy` feature \
                    (cargo run --release -p switchyard-demo --features tracy)"
            .into());
    }
    if args.pipeline_cache.is_some() && args.backend == BackendKind::Null {
        return Err("--pipeline-cache: the null backend compiles nothing to cache (use --backend wgpu)".into());
    }
    if args.backend != BackendKind::Null {
        output::checked_out(&args.out)?;
    }
    if args.street && args.gltf.is_none() && args.scene != SceneKind::City {
        return Err("--street needs a city (the default --scene, or --gltf)".into());
    }
    match args.backend {
        BackendKind::Null => {
            // Mirror the wgpu backend's capability for the chosen encoding, so digests match.
            let multi_draw = args.encoding == EncodingKind::Buffer && !args.no_multi_draw;
            let report = |b: &NullBackend| {
                let f = b.last_frame();
                Some(serde_json::json!({
                    "digest": format!("{:016x}", f.digest),
                    "draw_calls": f.counts.draw_calls,
                    "draws": f.counts.draws,
                    "state_changes": f.counts.state_changes,
                    "commands": f.counts.commands,
                    "chunks": f.chunks,
                    "passes": f.passes,
                    "upload_bytes": f.upload_bytes,
                }))
            };
            let make = || Ok(Arc::new(NullBackend::new(multi_draw)));
            frames(args, make()?, &Device { report: &report, lose: &NullBackend::lose_device, make: &make })
        }
        BackendKind::Wgpu => {
            let encoding = match args.encoding {
                EncodingKind::Bundle => Encoding::RenderBundle,
                EncodingKind::Buffer => Encoding::CommandBuffer,
            };
            let make = || {
                WgpuBackend::new(&WgpuConfig { encoding, ..WgpuConfig::default() })
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            };
            let b = make()?;
            if let Some(path) = &args.pipeline_cache {
                load_pipeline_cache(&b, path);
            }
            let info = b.adapter_info();
            println!(
                "adapter: {} ({:?}), encoding {:?}, GPU zones {}",
                info.name,
                info.backend,
                b.encoding(),
                if b.gpu_zones() { "on" } else { "off" }
            );
            frames(args, b.clone(), &Device { report: &|_| None, lose: &WgpuBackend::lose_device, make: &make })?;
            match (&args.pipeline_cache, b.pipeline_cache_bytes()) {
                (Some(path), Some(bytes)) => {
                    // Written beside, then renamed: a run stopped midway leaves the old file whole.
                    let tmp = path.with_extension("tmp");
                    std::fs::write(&tmp, &bytes)
                        .and_then(|()| std::fs::rename(&tmp, path))
                        .map_err(|e| format!("writing {}: {e}", path.display()))?;
                    println!("pipeline cache: {} bytes written to {}", bytes.len(), path.display());
                }
                (Some(_), None) => println!("pipeline cache: this device keeps none; nothing written"),
                (None, _) => {}
            }
            Ok(())
        }
    }
}

/// `--pipeline-cache`: the file's cache for the pipelines to come, or a note why not.
fn load_pipeline_cache(b: &WgpuBackend, path: &std::path::Path) {
    match std::fs::read(path) {
        Ok(bytes) => match b.load_pipeline_cache(&bytes) {
            Ok(n) => println!("pipeline cache: {n} bytes of driver data from {}", path.display()),
            Err(e) => println!("note: pipeline cache {} ignored: {e}", path.display()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("pipeline cache: {} not found; starting empty", path.display())
        }
        Err(e) => println!("note: pipeline cache {} not read ({e}); starting empty", path.display()),
    }
}

fn frames<B: Backend>(args: &Args, backend: Arc<B>, device: &Device<'_, B>) -> Result<(), String> {
    let config = RendererConfig {
        threads: args.threads,
        width: args.width,
        height: args.height,
        // --churn: its objects wander around objects / 5, at most twice that.
        max_objects: args.objects.max(2) + if args.churn { 2 * (args.objects / 5).max(8) + 64 } else { 0 },
        max_materials: args.materials.max(1) + 256,
        multi_draw: !args.no_multi_draw,
        cull: match (args.cull, args.scene, &args.gltf) {
            (Some(CullKind::Auto), ..) => switchyard::CullOn::Auto,
            (Some(CullKind::Gpu), ..) | (None, SceneKind::Cubes, None) => switchyard::CullOn::Gpu,
            // Occlusion culling runs on the GPU cull: asked for without --cull, it brings it.
            (None, ..) if args.occlusion => switchyard::CullOn::Gpu,
            _ => switchyard::CullOn::Cpu,
        },
        occlusion: args.occlusion,
        // `--digest` asks for it; otherwise the backend's default (null: on, wgpu: off).
        digest: args.digest.then_some(true),
        ..RendererConfig::default()
    };
    let mut r = Renderer::new(backend, config).map_err(|e| e.to_string())?;
    if let Some(seconds) = args.wait_for_profiler {
        if !switchyard::wait_for_profiler(std::time::Duration::from_secs(seconds.into())) {
            return Err(format!("--wait-for-profiler: no Tracy profiler connected within {seconds} s"));
        }
        println!("profiler connected");
    }
    if let Some(why) = r.cull_fallback() {
        println!("note: --cull gpu: {why}; culling on the CPU");
    }
    if let Some(why) = r.occlusion_fallback() {
        println!("note: --occlusion: {why}; frustum culling only");
    }
    let scene = match (&args.gltf, args.scene) {
        (Some(path), _) => scenes::Scene::City(gltf_scene::build(&mut r, path, args.objects)?),
        (None, SceneKind::City) => {
            // One building in 12 is glass (the full graph's transparent pass draws it).
            let c = city::build_with_glass(&mut r, args.objects, args.materials, args.variants, 12)
                .map_err(|e| e.to_string())?;
            scenes::Scene::City(c)
        }
        (None, SceneKind::Pillar) => scenes::build_pillar(&mut r).map_err(|e| e.to_string())?,
        (None, SceneKind::Cubes) => {
            scenes::Scene::Cubes(city::build_cubes(&mut r, args.objects, args.materials).map_err(|e| e.to_string())?)
        }
    };
    let scene = if args.street { scene.at_street_level()? } else { scene };
    if args.graph == passes::GraphKind::Full {
        // The post pass fogs by depth; the scene passes do not fog again.
        r.set_global_keyword("FOG", false);
    }
    let shadow_side = r.config().shadow_map_size;
    let mut churn = match args.churn {
        true => Some(churn::Churn::new(&mut r, (args.objects / 5).max(8), extent(&scene))?),
        false => None,
    };
    // The warm-up covers the summary's 1,000 frames filling up.
    let warm_up = (args.frames / 10).max(1000);
    let (mut rss_warm, mut rss_peak) = (None, 0u64);
    let cascades = args.views as usize - 1;
    let mut frame = passes::DemoFrame::set(&mut r, args.graph, cascades, shadow_side, &scene.lens(0))?;
    println!(
        "scene: {} objects, frame graph {:?} ({} passes), {} worker threads, multi-draw-indirect {}, cull {}",
        r.scene().len(),
        args.graph,
        r.graph().map_or(0, |g| g.passes().len()),
        r.threads(),
        r.multi_draw(),
        match (r.gpu_cull(), r.config().cull) {
            (false, _) => "cpu",
            (true, switchyard::CullOn::Auto) => "auto (gpu where draws are dense)",
            (true, _) if r.occlusion() => "gpu, occlusion",
            (true, _) => "gpu",
        }
    );
    if args.warm_up {
        let t = std::time::Instant::now();
        let w = r.warm_up().map_err(|e| e.to_string())?;
        println!(
            "warm-up: {} pipelines and {} shader modules created, {} display lists built, in {:.1} ms",
            w.pipelines_created,
            w.shader_modules_created,
            w.lists_built,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    let progress = std::io::stdout().is_terminal() && !args.digest;
    // Piped output: a line a second instead of the bar, so a long run shows it is working.
    let (lines, mut noted) = (!std::io::stdout().is_terminal() && !args.digest, std::time::Instant::now());
    // Every frame's stats for the summary; with --churn the last 1,000 (memory stays flat).
    let kept = if args.churn { 1000 } else { args.frames as usize };
    let mut all = std::collections::VecDeque::with_capacity(kept);
    let mut json = Vec::new();
    // Frames per second finished on the GPU are counted after the first tenth of the frames
    // (first use of pipelines and memory).
    let warm = args.frames / 10;
    let mut started = std::time::Instant::now();
    for f in 0..args.frames {
        if f == warm {
            started = std::time::Instant::now();
        }
        if let Some(c) = churn.as_mut() {
            c.step(&mut r).map_err(|e| format!("--churn, frame {}: {e}", f + 1))?;
            let rss = churn::rss_bytes().unwrap_or(0);
            match rss_warm {
                None if f + 1 == warm_up => rss_warm = Some(rss),
                Some(_) => rss_peak = rss_peak.max(rss),
                None => {}
            }
        }
        for &(_, w, h) in args.resize_at.iter().filter(|r| r.0 == f + 1) {
            r.resize(w, h).map_err(|e| format!("--resize-at {}:{w}x{h}: {e}", f + 1))?;
        }
        let aspect = r.config().width as f32 / r.config().height as f32;
        let cameras = frame.cameras(&scene.lens(f), r.lighting().direction, aspect, shadow_side, scene.receivers());
        r.set_global("_Time", PropertyValue::Float(f as f32 * 0.1)).map_err(|e| e.to_string())?;
        // The overlay shows the last frame's CPU time; not with --digest, whose stream
        // must not depend on timing.
        let shown = if args.digest { 0.0 } else { all.back().map_or(0.0, |s: &FrameStats| s.frame_ms as f32) };
        frame.bar_ms.store(shown.to_bits(), std::sync::atomic::Ordering::Relaxed);
        if args.lose_device_at == Some(f + 1) {
            (device.lose)(r.backend());
        }
        let mut rendered = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] });
        if rendered.as_ref().err() == Some(&RenderError::DeviceLost) {
            // Everything the renderer owns is made again on a new device; the demo's own
            // part of the frame (the overlay's pipeline) is the engine's to make again.
            let rebuilt = r.recover((device.make)()?).map_err(|e| format!("recovering: {e}"))?;
            frame = passes::DemoFrame::set(&mut r, args.graph, cascades, shadow_side, &scene.lens(f))?;
            frame.bar_ms.store(shown.to_bits(), std::sync::atomic::Ordering::Relaxed);
            println!(
                "device lost at frame {}: rebuilt {} meshes, {} textures, {} materials, {} objects on a new device in \
                 {:.1} ms",
                f + 1,
                rebuilt.meshes,
                rebuilt.textures,
                rebuilt.materials,
                rebuilt.objects,
                rebuilt.ms
            );
            rendered = r.render_graph(&FrameInput { cameras: &cameras, targets: &[] });
        }
        let stats = rendered.map_err(|e| e.to_string())?;
        if f == 0 {
            for w in r.frame_warnings() {
                println!("warning (frame graph): {w}");
            }
        }
        if let Some(d) = stats.digest.filter(|_| args.digest) {
            println!("frame {} digest {d:016x}", stats.frame);
        }
        if args.stats.is_some() {
            // The backend's own report of this frame: wait until it is submitted.
            let report = if r.backend().name() == "null" {
                r.flush().map_err(|e| e.to_string())?;
                (device.report)(r.backend())
            } else {
                None
            };
            json.push(output::stats_json(&stats, r.pass_names(), report));
        }
        if lines && noted.elapsed().as_secs_f64() >= args.progress_every {
            noted = std::time::Instant::now();
            println!("progress: frame {}/{}", f + 1, args.frames);
        }
        if progress {
            let done = (f + 1) as usize * 30 / args.frames as usize;
            print!("\r[{}{}] frame {}/{}", "#".repeat(done), " ".repeat(30 - done), f + 1, args.frames);
            let _ = std::io::stdout().flush();
        }
        if all.len() == kept {
            all.pop_front();
        }
        all.push_back(stats);
    }
    if progress {
        println!();
    }
    let last = r.flush().map_err(|e| e.to_string())?;
    let gpu_fps = f64::from(args.frames - warm) / started.elapsed().as_secs_f64();
    if churn.is_some() {
        match rss_warm {
            Some(warm) if rss_peak > 0 => {
                let mib = |b: u64| b as f64 / (1 << 20) as f64;
                let now = churn::rss_bytes().unwrap_or(0);
                let m = r.mesh_memory();
                println!(
                    "churn: {} frames, {} objects and {} meshes now (mesh buffers: {} vertices, {} free); resident \
                     memory {:.1} MiB after the warm-up ({warm_up} frames), {:.1} MiB at the end, peak after the \
                     warm-up {:.1} MiB ({:+.2} %)",
                    args.frames,
                    r.scene().len(),
                    m.meshes,
                    m.vertices,
                    m.free_vertices,
                    mib(warm),
                    mib(now),
                    mib(rss_peak),
                    (rss_peak as f64 / warm as f64 - 1.0) * 100.0
                );
            }
            _ => println!("churn: {} frames (resident memory is read after {warm_up} frames)", args.frames),
        }
    }
    let critical: Vec<String> =
        r.last_critical_path().iter().map(|j| format!("{} {:.3}–{:.3}", j.name, j.start_ms, j.end_ms)).collect();
    // The scene passes in view order: the cull jobs are named after them, one per view.
    let views: Vec<String> = r
        .last_job_spans()
        .iter()
        .filter_map(|j| j.name.strip_prefix("cull[").and_then(|n| n.strip_suffix(']')).map(str::to_owned))
        .collect();
    summary::print(all.make_contiguous(), r.pass_names(), &views, last.as_ref(), &critical.join(" → "));
    println!(
        "frames/s completed on the GPU: {gpu_fps:.1} (the last {} frames, from the render call of the first until \
         the GPU finished the last; \"frame (cpu)\" above is the render call on the calling thread: the wait for a free \
         frame slot, setup, the job graph and the hand-off, without the submission thread's submit or the GPU)",
        args.frames - warm
    );
    // What the GPU culls kept in the last frame (read back; the null backend draws nothing).
    let kept: Vec<String> = (0..views.len())
        .filter_map(|v| Some((v, r.gpu_cull_counts(v).ok()??)))
        .map(|(v, c)| format!("{} {} of {} + {}", views[v], c.first_phase, c.candidates, c.second_phase))
        .collect();
    if !kept.is_empty() {
        println!("kept by the GPU culls (last frame; phase 1 of candidates + phase 2): {}", kept.join(", "));
    }
    if let Some(path) = &args.stats {
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if r.backend().name() != "null" {
        let img = r.read_color().map_err(|e| e.to_string())?;
        output::write_image(&args.out, output::checked_out(&args.out)?, img)?;
        println!("wrote {}", args.out.display());
    }
    Ok(())
}

/// The side of the area the scene covers, for churned objects to land in.
fn extent(scene: &scenes::Scene) -> f32 {
    match scene {
        scenes::Scene::City(c) | scenes::Scene::Street(c) => c.side as f32 * city::SPACING,
        scenes::Scene::Cubes(c) => c.side as f32 * city::CUBE_SPACING,
        scenes::Scene::Pillar => 40.0,
    }
}
