//! `switchyard-demo`: renders a procedural city through the Switchyard scheduler, with
//! its frame declared as a frame graph (`passes.rs`), prints a per-stage and per-pass
//! summary, and writes the last frame as a PNG.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend, WgpuConfig};

mod churn;
mod output;
mod passes;
mod pipeline_files;
mod run;
mod scenes;
mod stream;
mod summary;
mod window;

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

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum PresentKind {
    /// One image per vertical blank; the frame loop waits for a free image.
    Fifo,
    /// The newest image at each vertical blank; no wait, frames may be dropped.
    Mailbox,
    /// At once, tearing.
    Immediate,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum AcquireKind {
    /// On the submission thread, once the passes before the image are submitted.
    Late,
    /// On the render call, before the frame is recorded.
    Early,
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
    /// Keep `--gltf`'s vertices as given: without it, a flat-shaded primitive (every vertex
    /// normal its face's) is welded to fewer vertices and lit with `FLAT` (same pixels).
    #[arg(long, requires = "gltf")]
    gltf_as_given: bool,
    /// Write the cube grid as a glTF binary (.glb) of `--grid-side` x `--grid-side` cubes in
    /// `--materials` materials (as `--scene cubes` places them) and exit: the same cubes
    /// for another renderer, or for `--gltf`.
    #[arg(long, value_name = "FILE")]
    write_cube_grid: Option<std::path::PathBuf>,
    /// Cubes per side of `--write-cube-grid`.
    #[arg(long, default_value_t = 250)]
    grid_side: usize,
    /// Vertices of `--write-cube-grid`'s cube: 8 shared corners, or 24 (a normal per face,
    /// as issue 21's Bevy comparison drew).
    #[arg(long, value_enum, default_value = "8")]
    grid_cube: switchyard_demo::cube_grid::GridCube,
    /// Write every frame's stats as JSON.
    #[arg(long)]
    stats: Option<std::path::PathBuf>,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Output image of the last frame (wgpu backend).
    #[arg(long, default_value = "frame.png")]
    out: std::path::PathBuf,
    /// Write the last frame's GPU time per pass as a chrome://tracing JSON file
    /// (wgpu-profiler's scopes; the wgpu backend offscreen, on an adapter with timestamp
    /// queries).
    #[arg(long, value_name = "FILE")]
    gpu_trace: Option<std::path::PathBuf>,
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
    /// Draw a GPU-culled view's multi-draws without count buffers: every bucket's record,
    /// empty or not (`RendererConfig::indirect_count`; the baseline the count buffers are
    /// measured against). Count buffers need `--encoding buffer` and a backend that has
    /// them (Vulkan 1.2 and DX12; the null backend with multi-draw).
    #[arg(long)]
    no_indirect_count: bool,
    /// With `--receivers` (which adds a depth prepass of the opaque queue): the opaque pass
    /// culls on its own instead of drawing the prepass's visible set
    /// (`RendererConfig::reuse_prepass_cull`; the baseline it is measured against).
    #[arg(long)]
    no_prepass_reuse: bool,
    /// Draw with the lit shader's per-draw form (`ShaderDesc::lit`: each material's
    /// constants bound at its own offset, so every material is a draw state of its own)
    /// instead of its indexed form (`ShaderDesc::lit_indexed`, the default where the
    /// adapter allows: materials read by index in the shader, so a multi-draw spans every
    /// material of a pipeline and texture). The baseline indexed materials are measured
    /// against; the digest depends on this choice.
    #[arg(long)]
    no_indexed_materials: bool,
    /// `--scene cubes`: draw each cube as its 8 corners and 12 triangles (`corner_cube`)
    /// instead of the three faces toward the camera (`box_faces` with the lit shader's
    /// `BOX_FACES` keyword, the default: the same pixels from half the triangles). The
    /// baseline the three-face cube is measured against.
    #[arg(long)]
    whole_cubes: bool,
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
    /// Draw in each shadow cascade only the casters that can shadow a surface the camera
    /// sees: a depth prepass of the opaque queue (`PassKind::Depth`) comes first, and
    /// each cascade's GPU cull drops the casters whose
    /// shadow falls on no surface in its depth (`Pass::receivers`). Needs `--occlusion`
    /// (the full graph; where the adapter cannot cull by occlusion, the cascades draw as
    /// without it).
    #[arg(long)]
    receivers: bool,
    /// Keep the shadow cascades' maps from frame to frame and draw one again only when
    /// its light, the camera it follows, an object or a material changed (`Pass::cached`):
    /// a still scene renders its shadows once. The full graph only.
    #[arg(long)]
    cache_shadows: bool,
    /// Look from street level between the city's buildings instead of orbiting above them
    /// (most buildings hidden behind the nearest; the city scenes only).
    #[arg(long)]
    street: bool,
    /// Lose the device before frame FRAME (1-based), as a driver reset would (wgpu:
    /// `Device::destroy`), then recover on a new device from the retained scene and render
    /// the frame again (the run keeps its meshes' and textures' data on the CPU for this:
    /// `CpuCopy::Keep`). Digests after it differ from a clean run's: the new device names
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
    /// Stream city blocks in and out while rendering: every frame new blocks (a 256 x 256
    /// texture whose mips the GPU makes, a material, four building meshes, 24 objects)
    /// until the frame made `--stream-mb` of data, the oldest leaving once 48 are alive.
    /// Uploads go through the upload thread; `--stats` has each frame's `uploads`, the
    /// summary the upload rate, what is alive and the pipelines made after the first frame.
    #[arg(long)]
    stream: bool,
    /// MB of meshes and textures `--stream` makes per frame.
    #[arg(long, value_name = "MB", default_value_t = 1.0)]
    stream_mb: f64,
    /// Wait up to SECONDS (default 60) for a Tracy profiler to connect before building the
    /// scene, so a capture holds every frame (builds with the `tracy` feature; the client
    /// records nothing until a profiler connects).
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "60")]
    wait_for_profiler: Option<u32>,
    /// Play an engine that owns the Tracy client and its frame marks
    /// (`RendererConfig::engine_profiler`): Switchyard marks no frame and the demo marks
    /// one per frame itself, around a zone `engine-frame` that holds Switchyard's (builds
    /// with the `tracy` feature).
    #[arg(long)]
    engine_frame_marks: bool,
    /// Create every material's pipelines and shader variants before the first frame
    /// (`Renderer::warm_up`, compiled in parallel on the workers) instead of on first use
    /// inside frames. The backend hands out their ids in the order the frames would have
    /// made them: digests equal a run without it.
    #[arg(long)]
    warm_up: bool,
    /// Replay the pipeline log in FILE (JSON, `Renderer::warm_up_log`) before the first
    /// frame if the file exists (a corrupt file is ignored with a note), and write the
    /// pipelines the run made to it at the end.
    #[arg(long, value_name = "FILE")]
    pipeline_log: Option<std::path::PathBuf>,
    /// Keep the driver's pipeline cache in FILE (wgpu, where the device has one): read
    /// before any pipeline is made if the file exists (a file of another adapter or
    /// driver, or a corrupt one, is ignored with a note), written at the end of the run.
    #[arg(long, value_name = "FILE")]
    pipeline_cache: Option<std::path::PathBuf>,
    /// Render into a window (X11) instead of offscreen, `--width` x `--height` at first:
    /// resizing the window resizes the frame, a minimized window skips frames, closing it
    /// ends the run with the summary. `--resize-at` resizes the window. wgpu backend only.
    #[arg(long)]
    window: bool,
    /// With `--window`: how images are presented (falls back to fifo, with a note, where
    /// the surface does not offer the mode).
    #[arg(long, value_enum)]
    present: Option<PresentKind>,
    /// With `--window`: when the window's image is acquired. `late` (the default): on the
    /// submission thread, after the frame's passes before the first one into the image are
    /// submitted; `early`: on the render call, before the frame is recorded.
    #[arg(long, value_enum)]
    acquire: Option<AcquireKind>,
    /// Frames queued to the submission thread and the GPU (1-4).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=4))]
    frames_in_flight: u32,
    /// With `--window`: write the last presented frame to FILE (PNG) at the end.
    #[arg(long, value_name = "FILE")]
    screenshot: Option<std::path::PathBuf>,
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
        let bytes = switchyard_demo::cube_grid::glb(args.grid_side, args.materials, args.grid_cube)?;
        std::fs::write(path, &bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!(
            "wrote {} ({} cubes of {} vertices in {} materials, {} bytes)",
            path.display(),
            args.grid_side * args.grid_side,
            if args.grid_cube == switchyard_demo::cube_grid::GridCube::Faces24 { 24 } else { 8 },
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
    if args.engine_frame_marks && !cfg!(feature = "tracy") {
        return Err("--engine-frame-marks: this demo was built without the `tracy` feature \
                    (cargo run --release -p switchyard-demo --features tracy)"
            .into());
    }
    if args.pipeline_cache.is_some() && args.backend == BackendKind::Null {
        return Err("--pipeline-cache: the null backend compiles nothing to cache (use --backend wgpu)".into());
    }
    if args.window && args.backend == BackendKind::Null {
        return Err("--window: the null backend draws nothing to show (use --backend wgpu)".into());
    }
    if args.window && args.lose_device_at.is_some() {
        return Err("--lose-device-at: not with --window (the window's surface belongs to the lost device)".into());
    }
    if args.acquire.is_some() && !args.window {
        return Err("--acquire: needs --window (offscreen frames acquire no image)".into());
    }
    if args.present.is_some() && !args.window {
        return Err("--present: needs --window (offscreen frames are not presented)".into());
    }
    if args.screenshot.is_some() && !args.window {
        return Err("--screenshot: needs --window (an offscreen run writes its last frame to --out)".into());
    }
    if let Some(path) = &args.screenshot {
        output::checked_out(path).map_err(|e| e.replace("--out", "--screenshot"))?;
    } else if args.backend != BackendKind::Null && !args.window {
        output::checked_out(&args.out)?;
    }
    if let Some(path) = &args.gpu_trace {
        if args.backend == BackendKind::Null || args.window {
            return Err("--gpu-trace: needs the wgpu backend offscreen (the null backend times nothing)".into());
        }
        output::writable(path, "--gpu-trace")?;
    }
    if args.receivers && !args.occlusion {
        return Err("--receivers needs --occlusion (the receivers' casters are culled on the GPU with it)".into());
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
            run::offscreen(args, make()?, &Device { report: &report, lose: &NullBackend::lose_device, make: &make })
        }
        BackendKind::Wgpu => {
            let encoding = match args.encoding {
                EncodingKind::Bundle => Encoding::RenderBundle,
                EncodingKind::Buffer => Encoding::CommandBuffer,
            };
            if args.window {
                return window::run(args, encoding);
            }
            let make = || {
                WgpuBackend::new(&WgpuConfig { encoding, ..WgpuConfig::default() })
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            };
            let b = make()?;
            if let Some(path) = &args.pipeline_cache {
                pipeline_files::load_cache(&b, path);
            }
            if args.gpu_trace.is_some() && !switchyard::backend::Backend::caps(&*b).gpu_timestamps {
                return Err("--gpu-trace: this adapter (or encoding) times no passes: no timestamp queries".into());
            }
            let info = b.adapter_info();
            println!(
                "adapter: {} ({:?}), encoding {:?}, GPU zones {}",
                info.name,
                info.backend,
                b.encoding(),
                if b.gpu_zones() { "on" } else { "off" }
            );
            run::offscreen(
                args,
                b.clone(),
                &Device { report: &|_| None, lose: &WgpuBackend::lose_device, make: &make },
            )?;
            if let Some(path) = &args.gpu_trace {
                output::write_gpu_trace(path, &b)?;
            }
            pipeline_files::save_cache(&b, args)
        }
    }
}
