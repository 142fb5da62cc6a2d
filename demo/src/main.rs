//! `switchyard-demo`: renders a procedural city through the Switchyard scheduler, prints a
//! per-stage summary, and writes the last frame as a PNG.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{WgpuBackend, WgpuConfig};
use switchyard::backend::Backend;
use switchyard::*;

mod scenes;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum BackendKind {
    /// Render through wgpu (best adapter; software where there is no GPU).
    Wgpu,
    /// CPU side only: validate, count and digest.
    Null,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum SceneKind {
    /// Buildings on a grid, orbiting camera.
    City,
    /// One pillar and its shadow, camera looking straight down.
    Pillar,
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
    /// Views: 1 = main only, 2 or 3 = main plus 1 or 2 shadow views.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=3))]
    views: u32,
    /// Frames to render.
    #[arg(long, default_value_t = 30)]
    frames: u32,
    /// Scene: the procedural city, or one pillar under a fixed camera (shadow test).
    #[arg(long, value_enum, default_value = "city")]
    scene: SceneKind,
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
    /// Draw each batch with its own `draw_indexed` instead of one multi-draw-indirect per
    /// state bucket. The digest depends on this choice, so compare backends with the same.
    #[arg(long)]
    no_multi_draw: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("switchyard-demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    match args.backend {
        BackendKind::Null => frames(args, Arc::new(NullBackend::new(!args.no_multi_draw))),
        BackendKind::Wgpu => {
            let b = WgpuBackend::new(&WgpuConfig::default()).map_err(|e| e.to_string())?;
            let info = b.adapter_info();
            println!("adapter: {} ({:?}), encoding {:?}", info.name, info.backend, b.encoding());
            frames(args, Arc::new(b))
        }
    }
}

fn frames<B: Backend>(args: &Args, backend: Arc<B>) -> Result<(), String> {
    let config = RendererConfig {
        threads: args.threads,
        width: args.width,
        height: args.height,
        max_objects: args.objects.max(1),
        max_materials: args.materials.max(1) + 1,
        multi_draw: !args.no_multi_draw,
        ..RendererConfig::default()
    };
    let mut r = Renderer::new(backend, config).map_err(|e| e.to_string())?;
    let scene = match args.scene {
        SceneKind::City => scenes::build(&mut r, args.objects, args.materials, args.variants),
        SceneKind::Pillar => scenes::build_pillar(&mut r),
    }
    .map_err(|e| e.to_string())?;
    println!(
        "scene: {} objects, {} materials, {} meshes, {} views, {} threads, multi-draw-indirect {}",
        r.scene().len(),
        args.materials,
        scenes::MESHES + 1,
        args.views,
        r.threads(),
        r.multi_draw()
    );
    let mut all = Vec::with_capacity(args.frames as usize);
    for f in 0..args.frames {
        let views = scene.views(f, args.views, args.width as f32 / args.height as f32);
        r.set_global("_Time", PropertyValue::Float(f as f32 * 0.1)).map_err(|e| e.to_string())?;
        let stats = r.render(&views).map_err(|e| e.to_string())?;
        if args.digest {
            println!("frame {} digest {:016x}", stats.frame, stats.digest);
        }
        all.push(stats);
    }
    let last = r.flush().map_err(|e| e.to_string())?;
    summary(&all, last.as_ref());
    if r.backend().name() != "null" {
        let img = r.read_color().map_err(|e| e.to_string())?;
        image::save_buffer(&args.out, &img.pixels, img.width, img.height, image::ExtendedColorType::Rgba8)
            .map_err(|e| format!("writing {}: {e}", args.out.display()))?;
        println!("wrote {}", args.out.display());
    }
    Ok(())
}

fn summary(all: &[FrameStats], last: Option<&SubmitReport>) {
    if all.is_empty() {
        return;
    }
    let pct = |mut v: Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    println!("\n| stage | min ms | median ms | p99 ms |\n|---|---|---|---|");
    let stage = |name: &str, f: &dyn Fn(&FrameStats) -> f64| {
        let v: Vec<f64> = all.iter().map(f).collect();
        println!("| {name} | {:.3} | {:.3} | {:.3} |", pct(v.clone(), 0.0), pct(v.clone(), 0.5), pct(v, 0.99));
    };
    stage("cull", &|s| s.cull_ms);
    stage("sort", &|s| s.sort_ms);
    stage("patch", &|s| s.patch_ms);
    stage("record", &|s| s.record_ms);
    stage("submit", &|s| s.submit_ms);
    stage("gpu wait", &|s| s.gpu_wait_ms);
    stage("frame (cpu)", &|s| s.frame_ms);
    let s = all.last().expect("non-empty");
    println!(
        "\nlast frame: objects {}, visible {:?}, queue items {}, batches {}, draw calls {}, state changes {}, chunks {}, \
         display lists {}/{}/{} (hits/misses/rebuilds), uploaded {} bytes",
        s.objects,
        &s.visible[..s.views as usize],
        s.queue_items,
        s.batches,
        s.draw_calls,
        s.state_changes,
        s.chunks,
        s.lists.hits,
        s.lists.misses,
        s.lists.rebuilds,
        s.upload_bytes
    );
    if let Some(r) = last {
        println!("last submitted frame {}: submit {:.3} ms, gpu wait {:.3} ms", r.frame, r.submit_ms, r.gpu_wait_ms);
    }
}

/// A look-at view-projection for wgpu clip space.
pub(crate) fn perspective(eye: Vec3, target: Vec3, aspect: f32, far: f32) -> Mat4 {
    Mat4::perspective_rh(0.9, aspect, 0.5, far) * Mat4::look_at_rh(eye, target, Vec3::Y)
}
