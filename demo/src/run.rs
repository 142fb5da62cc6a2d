//! One run of the demo: the renderer and scene made from the flags ([`Run::new`]), one
//! frame at a time ([`Run::step`], offscreen or into a window's surface), and the summary,
//! stats file and image at the end ([`Run::finish`]).

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use switchyard::backend::{Backend, SkipReason, SurfaceId, TextureFormat};
use switchyard::*;
use switchyard_city as city;
use switchyard_demo::gltf_scene;

use crate::{churn, output, passes, scenes, stream, summary, Args, CullKind, Device, SceneKind};

/// Where frames go.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Output {
    /// The graph's retained `out` target (read back at the end as `--out`).
    Offscreen,
    /// A window's surface, whose images have `format`: the graph draws `out` as offscreen
    /// and copies it into the image with a last pass.
    Window { surface: SurfaceId, format: TextureFormat },
}

/// A run in progress: what the frame loop keeps between frames.
pub(crate) struct Run<'a, B: Backend> {
    args: &'a Args,
    device: &'a Device<'a, B>,
    output: Output,
    r: Renderer<B>,
    scene: scenes::Scene,
    frame: passes::DemoFrame,
    churn: Option<churn::Churn>,
    stream: Option<stream::Stream>,
    cascades: usize,
    shadow_side: u32,
    /// Frames before the resident memory is first read (`--churn`).
    warm_up: u32,
    rss_warm: Option<u64>,
    rss_peak: u64,
    progress: bool,
    lines: bool,
    noted: Instant,
    /// Stats of the frames the summary covers (with `--churn` the last 1,000).
    kept: usize,
    all: VecDeque<FrameStats>,
    json: Vec<serde_json::Value>,
    /// Frames after which frames/s are counted.
    warm: u32,
    started: Instant,
    /// Frames rendered so far.
    pub(crate) rendered: u32,
    /// Frames a window skipped (minimized, occluded, timed out, resized before its late
    /// acquire), by reason.
    skipped: Vec<SkipReason>,
    /// The newest submitted frame whose late-acquire skip was counted.
    skips_seen: u64,
}

impl<'a, B: Backend> Run<'a, B> {
    /// The renderer on `backend`, the scene and the frame graph the flags ask for.
    pub(crate) fn new(
        args: &'a Args,
        backend: Arc<B>,
        device: &'a Device<'a, B>,
        output: Output,
    ) -> Result<Self, String> {
        let config = RendererConfig {
            threads: args.threads,
            frames_in_flight: args.frames_in_flight as usize,
            width: args.width,
            height: args.height,
            // --churn: its objects wander around objects / 5, at most twice that.
            max_objects: args.objects.max(2)
                + if args.churn { 2 * (args.objects / 5).max(8) + 64 } else { 0 }
                + if args.stream { (stream::KEEP + 64) * stream::OBJECTS } else { 0 },
            max_materials: args.materials.max(1) + 256 + if args.stream { 4 * stream::KEEP } else { 0 },
            multi_draw: !args.no_multi_draw,
            indirect_count: !args.no_indirect_count,
            reuse_prepass_cull: !args.no_prepass_reuse,
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
            late_acquire: args.acquire != Some(crate::AcquireKind::Early),
            // A run that plans to lose its device keeps its meshes' and textures' data on
            // the CPU, so recovery uploads them itself; otherwise the GPU holds the one copy.
            cpu_copies: if args.lose_device_at.is_some() { CpuCopy::Keep } else { CpuCopy::Drop },
            engine_profiler: args.engine_frame_marks,
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
        if let Some(why) = r.indirect_count_fallback() {
            println!("note: count buffers: {why}; GPU-culled draws include empty buckets (--encoding buffer on Vulkan or DX12 has them)");
        }
        // Every scene's materials are the lit shader's: indexed where the adapter allows.
        let lit = match args.no_indexed_materials {
            true => ShaderDesc::lit(),
            false => ShaderDesc::lit_for(&r.backend().caps()),
        };
        let lit = r.create_shader(&lit).map_err(|e| e.to_string())?;
        let scene = match (&args.gltf, args.scene) {
            (Some(path), _) => {
                scenes::Scene::City(gltf_scene::build(&mut r, path, args.objects, lit, !args.gltf_as_given)?)
            }
            (None, SceneKind::City) => {
                // One building in 12 is glass (the full graph's transparent pass draws it).
                let c = city::build_with_shader(&mut r, lit, args.objects, args.materials, args.variants, 12)
                    .map_err(|e| e.to_string())?;
                scenes::Scene::City(c)
            }
            (None, SceneKind::Pillar) => scenes::build_pillar(&mut r, lit).map_err(|e| e.to_string())?,
            (None, SceneKind::Cubes) => scenes::Scene::Cubes(
                city::build_cubes_as(
                    &mut r,
                    lit,
                    args.objects,
                    args.materials,
                    if args.whole_cubes { city::CubeForm::Corners } else { city::CubeForm::BoxFaces },
                )
                .map_err(|e| e.to_string())?,
            ),
        };
        let scene = if args.street { scene.at_street_level()? } else { scene };
        if args.graph == passes::GraphKind::Full {
            // The post pass fogs by depth; the scene passes do not fog again.
            r.set_global_keyword("FOG", false);
        }
        let shadow_side = r.config().shadow_map_size;
        let churn = match args.churn {
            true => Some(churn::Churn::new(&mut r, lit, (args.objects / 5).max(8), extent(&scene))?),
            false => None,
        };
        let stream = match args.stream {
            true => Some(stream::Stream::new(lit, args.stream_mb, extent(&scene))?),
            false => None,
        };
        let cascades = args.views as usize - 1;
        let window = match output {
            Output::Offscreen => None,
            Output::Window { format, .. } => Some(format),
        };
        let frame =
            passes::DemoFrame::set(&mut r, args.graph, cascades, shadow_side, &scene.lens(0), window, args.into())?;
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
        if r.indirect_count() {
            println!("count buffers: GPU-culled multi-draws draw their non-empty records only");
        }
        if let Some(path) = &args.pipeline_log {
            crate::pipeline_files::replay_log(&mut r, path)?;
        }
        if args.warm_up {
            let t = Instant::now();
            let w = r.warm_up().map_err(|e| e.to_string())?;
            println!(
                "warm-up: {} pipelines and {} shader modules created, {} display lists built, {} mip \
                 pipelines and {:.0} MiB of upload staging and {:.1} MiB for the first frame's writes made, \
                 in {:.1} ms",
                w.pipelines_created,
                w.shader_modules_created,
                w.lists_built,
                w.mip_pipelines_created,
                w.staging_bytes_made as f64 / f64::from(1 << 20),
                w.frame_staging_bytes_made as f64 / f64::from(1 << 20),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        let window_mode = matches!(output, Output::Window { .. });
        // Every frame's stats for the summary; with --churn the last 1,000 (memory stays flat).
        let kept = if args.churn { 1000 } else { args.frames as usize };
        Ok(Self {
            args,
            device,
            output,
            r,
            scene,
            frame,
            churn,
            stream,
            cascades,
            shadow_side,
            // The warm-up covers the summary's 1,000 frames filling up.
            warm_up: (args.frames / 10).max(1000),
            rss_warm: None,
            rss_peak: 0,
            progress: std::io::stdout().is_terminal() && !args.digest && !window_mode,
            // Piped output: a line a second instead of the bar, so a long run shows it is working.
            lines: !std::io::stdout().is_terminal() && !args.digest,
            noted: Instant::now(),
            kept,
            all: VecDeque::with_capacity(kept),
            json: Vec::new(),
            // Frames per second finished on the GPU are counted after the first tenth of the
            // frames (first use of pipelines and memory).
            warm: args.frames / 10,
            started: Instant::now(),
            rendered: 0,
            skipped: Vec::new(),
            skips_seen: 0,
        })
    }

    /// Whether every frame asked for was rendered.
    pub(crate) fn done(&self) -> bool {
        self.rendered >= self.args.frames
    }

    /// Renders the next frame. In a window: `false` when the surface gave no image (the
    /// frame is not counted and is tried again).
    pub(crate) fn step(&mut self) -> Result<bool, String> {
        let _frame = EngineFrame::begin(self.args.engine_frame_marks);
        self.render_step()
    }

    fn render_step(&mut self) -> Result<bool, String> {
        let (args, f) = (self.args, self.rendered);
        if f == self.warm {
            self.started = Instant::now();
        }
        let r = &mut self.r;
        if let Some(c) = self.churn.as_mut() {
            c.step(r).map_err(|e| format!("--churn, frame {}: {e}", f + 1))?;
            let rss = churn::rss_bytes().unwrap_or(0);
            match self.rss_warm {
                None if f + 1 == self.warm_up => self.rss_warm = Some(rss),
                Some(_) => self.rss_peak = self.rss_peak.max(rss),
                None => {}
            }
        }
        if let Some(s) = self.stream.as_mut() {
            s.step(r).map_err(|e| format!("--stream, frame {}: {e}", f + 1))?;
        }
        if matches!(self.output, Output::Offscreen) {
            for &(_, w, h) in args.resize_at.iter().filter(|r| r.0 == f + 1) {
                r.resize(w, h).map_err(|e| format!("--resize-at {}:{w}x{h}: {e}", f + 1))?;
            }
        }
        let aspect = r.config().width as f32 / r.config().height as f32;
        let frame = &self.frame;
        let cameras = frame.cameras(
            &self.scene.lens(f),
            r.lighting().direction,
            aspect,
            self.shadow_side,
            self.scene.receivers(),
        );
        r.set_global("_Time", PropertyValue::Float(f as f32 * 0.1)).map_err(|e| e.to_string())?;
        // The overlay shows the last frame's CPU time; not with --digest, whose stream
        // must not depend on timing.
        let shown = if args.digest { 0.0 } else { self.all.back().map_or(0.0, |s: &FrameStats| s.frame_ms as f32) };
        frame.bar_ms.store(shown.to_bits(), Ordering::Relaxed);
        if args.lose_device_at == Some(f + 1) {
            (self.device.lose)(r.backend());
        }
        let input = FrameInput { cameras: &cameras, targets: &[] };
        let mut rendered = match self.output {
            Output::Offscreen => r.render_graph(&input),
            Output::Window { surface, .. } => {
                let target = frame.window.ok_or("the window's target is not declared")?;
                match r.present_graph(&input, surface, target) {
                    Ok(Presented::Frame(s)) => Ok(*s),
                    Ok(Presented::Skipped(why)) => {
                        self.skipped.push(why);
                        return Ok(false);
                    }
                    Err(e) => Err(e),
                }
            }
        };
        if rendered.as_ref().err() == Some(&RenderError::DeviceLost) && matches!(self.output, Output::Offscreen) {
            // Everything the renderer owns is made again on a new device; the demo's own
            // part of the frame (the overlay's pipeline) is the engine's to make again.
            let rebuilt = r.recover((self.device.make)()?).map_err(|e| format!("recovering: {e}"))?;
            if !rebuilt.needs_data.is_empty() {
                return Err(format!("recovering: {} resources need their data again", rebuilt.needs_data.len()));
            }
            self.frame = passes::DemoFrame::set(
                r,
                args.graph,
                self.cascades,
                self.shadow_side,
                &self.scene.lens(f),
                None,
                args.into(),
            )?;
            self.frame.bar_ms.store(shown.to_bits(), Ordering::Relaxed);
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
            rendered = r.render_graph(&input);
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
                (self.device.report)(r.backend())
            } else {
                None
            };
            self.json.push(output::stats_json(&stats, r.pass_names(), report));
        }
        if self.lines && self.noted.elapsed().as_secs_f64() >= args.progress_every {
            self.noted = Instant::now();
            println!("progress: frame {}/{}", f + 1, args.frames);
        }
        if self.progress {
            let done = (f + 1) as usize * 30 / args.frames as usize;
            print!("\r[{}{}] frame {}/{}", "#".repeat(done), " ".repeat(30 - done), f + 1, args.frames);
            let _ = std::io::stdout().flush();
        }
        // A late-acquired frame without an image is known once it is submitted.
        if let (Some(why), true) = (stats.present_skipped, stats.submitted_frame > self.skips_seen) {
            self.skipped.push(why);
        }
        self.skips_seen = self.skips_seen.max(stats.submitted_frame);
        if self.all.len() == self.kept {
            self.all.pop_front();
        }
        self.all.push_back(stats);
        self.rendered += 1;
        Ok(true)
    }

    /// Waits for the last frame, prints the summary, writes `--stats` and, offscreen,
    /// `--out`. Returns the renderer (a window's run reads its image from it).
    pub(crate) fn finish(mut self) -> Result<Renderer<B>, String> {
        let (args, r) = (self.args, &mut self.r);
        if self.progress {
            println!();
        }
        let last = r.flush().map_err(|e| e.to_string())?;
        let counted = self.rendered.saturating_sub(self.warm).max(1);
        let gpu_fps = f64::from(counted) / self.started.elapsed().as_secs_f64();
        if self.churn.is_some() {
            match self.rss_warm {
                Some(warm) if self.rss_peak > 0 => {
                    let mib = |b: u64| b as f64 / (1 << 20) as f64;
                    let now = churn::rss_bytes().unwrap_or(0);
                    let m = r.mesh_memory();
                    println!(
                        "churn: {} frames, {} objects and {} meshes now (mesh buffers: {} vertices, {} free); \
                         resident memory {:.1} MiB after the warm-up ({} frames), {:.1} MiB at the end, peak after \
                         the warm-up {:.1} MiB ({:+.2} %)",
                        self.rendered,
                        r.scene().len(),
                        m.meshes,
                        m.vertices,
                        m.free_vertices,
                        mib(warm),
                        self.warm_up,
                        mib(now),
                        mib(self.rss_peak),
                        (self.rss_peak as f64 / warm as f64 - 1.0) * 100.0
                    );
                }
                _ => {
                    println!("churn: {} frames (resident memory is read after {} frames)", self.rendered, self.warm_up)
                }
            }
        }
        if let Some(s) = &self.stream {
            stream_summary(s, self.all.make_contiguous(), r, self.started.elapsed().as_secs_f64(), counted);
        }
        let critical: Vec<String> =
            r.last_critical_path().iter().map(|j| format!("{} {:.3}–{:.3}", j.name, j.start_ms, j.end_ms)).collect();
        // The scene passes in view order: the cull jobs are named after them, one per view.
        let views: Vec<String> = r
            .last_job_spans()
            .iter()
            .filter_map(|j| j.name.strip_prefix("cull[").and_then(|n| n.strip_suffix(']')).map(str::to_owned))
            .collect();
        if !self.all.is_empty() {
            summary::print(self.all.make_contiguous(), r.pass_names(), &views, last.as_ref(), &critical.join(" → "));
        }
        println!(
            "frames/s completed on the GPU: {gpu_fps:.1} (the last {counted} frames, from the render call of the first \
             until the GPU finished the last; \"frame (cpu)\" above is the render call on the calling thread: the wait \
             for a free frame slot, setup, the job graph and the hand-off, without the submission thread's submit or \
             the GPU)"
        );
        if !self.skipped.is_empty() {
            let count = |why| self.skipped.iter().filter(|&&s| s == why).count();
            println!(
                "window: {} frames skipped (minimized {}, occluded {}, timed out {}, resized before the image {})",
                self.skipped.len(),
                count(SkipReason::ZeroSize),
                count(SkipReason::Occluded),
                count(SkipReason::Timeout),
                count(SkipReason::Resized)
            );
        }
        // What the GPU culls kept in the last frame (read back; the null backend draws nothing).
        let kept: Vec<String> = (0..views.len())
            .filter_map(|v| Some((v, r.gpu_cull_counts(v).ok()??)))
            .map(|(v, c)| format!("{} {} of {} + {}", views[v], c.first_phase, c.candidates, c.second_phase))
            .collect();
        if !kept.is_empty() {
            println!("kept by the GPU culls (last frame; phase 1 of candidates + phase 2): {}", kept.join(", "));
        }
        if let Some(path) = &args.stats {
            let text = serde_json::to_string_pretty(&self.json).map_err(|e| e.to_string())?;
            std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
            println!("wrote {}", path.display());
        }
        if r.backend().name() != "null" && matches!(self.output, Output::Offscreen) {
            let img = r.read_color().map_err(|e| e.to_string())?;
            output::write_image(&args.out, output::checked_out(&args.out)?, img)?;
            println!("wrote {}", args.out.display());
        }
        if let Some(path) = &args.pipeline_log {
            crate::pipeline_files::save_log(r, path)?;
        }
        Ok(self.r)
    }

    /// The graph's `out` target: what the last presented frame showed in a window.
    pub(crate) fn out_target(&self) -> TargetId {
        self.frame.out
    }
}

/// `--engine-frame-marks`: one frame of an engine that owns the Tracy client, a zone
/// `engine-frame` around it and a frame mark at its end (Switchyard, told
/// `engine_profiler`, marks none).
struct EngineFrame {
    #[cfg(feature = "tracy")]
    span: Option<tracy_client::Span>,
}

impl EngineFrame {
    fn begin(on: bool) -> Self {
        #[cfg(feature = "tracy")]
        return Self {
            span: on.then(|| tracy_client::Client::start().span(tracy_client::span_location!("engine-frame"), 0)),
        };
        #[cfg(not(feature = "tracy"))]
        {
            let _ = on;
            Self {}
        }
    }
}

impl Drop for EngineFrame {
    fn drop(&mut self) {
        #[cfg(feature = "tracy")]
        if let Some(span) = self.span.take() {
            drop(span);
            tracy_client::Client::start().frame_mark();
        }
    }
}

/// Renders `--frames` frames offscreen and finishes.
pub(crate) fn offscreen<B: Backend>(args: &Args, backend: Arc<B>, device: &Device<'_, B>) -> Result<(), String> {
    let mut run = Run::new(args, backend, device, Output::Offscreen)?;
    while !run.done() {
        run.step()?;
    }
    run.finish().map(drop)
}

/// The side of the area the scene covers, for churned objects to land in.
fn extent(scene: &scenes::Scene) -> f32 {
    match scene {
        scenes::Scene::City(c) | scenes::Scene::Street(c) => c.side as f32 * city::SPACING,
        scenes::Scene::Cubes(c) => c.side as f32 * city::CUBE_SPACING,
        scenes::Scene::Pillar => 40.0,
    }
}

/// What `--stream` did: blocks, the upload rate, what waited, what is alive, and the
/// pipelines made after the first frame (the frames the summary covers).
fn stream_summary<B: Backend>(s: &stream::Stream, all: &[FrameStats], r: &Renderer<B>, secs: f64, counted: u32) {
    let mb = |b: u64| b as f64 / 1e6;
    let counted = all.len().min(counted as usize);
    let recent = &all[all.len() - counted..];
    let bytes: u64 = recent.iter().map(|f| f.uploads.bytes).sum();
    let waited: Vec<f64> = all.iter().map(|f| f.uploads.wait_ms).filter(|&w| w > 0.0).collect();
    let most_wait = waited.iter().copied().fold(0.0, f64::max);
    let pipelines: u32 = all.iter().skip(1).map(|f| f.lists.pipelines_created).sum();
    let pending = all.last().map_or(0, |f| f.uploads.pending);
    let m = r.mesh_memory();
    println!(
        "stream: {} blocks made ({:.1} MB), {} removed, {} alive; uploads {:.1} MB/s over the last {} frames \
         (batches taken by the frames, against the wall time from the first of them until the GPU finished the last); \
         {} queued at the end; the submission thread waited for the upload thread in {} frames (at most {:.3} ms); \
         {} meshes and {} objects alive; {:.1} MiB of staging memory held by the backend; {} pipelines created \
         after the first frame; making and removing the blocks took {:.3} ms a frame (median; p99 {:.3}) on the \
         calling thread, outside the render call",
        s.made,
        mb(s.bytes),
        s.removed,
        s.alive(),
        mb(bytes) / secs.max(1e-9),
        counted,
        pending,
        waited.len(),
        most_wait,
        m.meshes,
        r.scene().len(),
        r.backend().live().staging_bytes as f64 / f64::from(1 << 20),
        pipelines,
        city::percentile(&s.step_ms, 0.5),
        city::percentile(&s.step_ms, 0.99),
    );
    let per_frame = |ms: f64| ms / s.step_ms.len().max(1) as f64;
    let [texels, textures, materials, meshes, objects, removing] = s.parts_ms.map(per_frame);
    println!(
        "stream: of that, ms a frame (mean): texels {texels:.3}, create_texture_data {textures:.3}, \
         create_material {materials:.3}, create_mesh {meshes:.3}, insert_objects {objects:.3}, removing blocks \
         {removing:.3}"
    );
}
