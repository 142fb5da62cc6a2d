//! The rows that need a GPU adapter: recording and submitting through wgpu.

use std::sync::Arc;
use std::time::Instant;

use switchyard::backend::wgpu::{Encoding, WgpuBackend, WgpuConfig};
use switchyard_benches::chart::{line_chart, Series};
use switchyard_benches::raster::{CubeMesh, Raster};
use switchyard_benches::{cores, frames, median, median_kept, pool, recording};
use switchyard_city::CubeForm;

use super::{Options, Report};

pub(super) fn record_rows(r: &mut Report, o: &Options, threads: &[usize], all: usize) -> Result<(), String> {
    let draws = 10_000;
    let iters = if o.quick { 5 } else { 15 };
    let churn = recording::Churn::new(draws, Encoding::RenderBundle)?;
    r.progress("record state churn, hand-written wgpu, 1 thread");
    // Both sides are timed until their chunks exist; the chunks are dropped after the
    // clock stops (a frame drops them on its submission thread after `queue.submit`; the
    // split below measures the drop).
    let hand1 = median_kept(iters, || churn.record_by_hand(1));
    let mut ours_series = Series { name: "ours (RenderBundle)".into(), points: vec![] };
    let mut hand_series = Series { name: "by hand, N passes".into(), points: vec![] };
    let mut ours1 = f64::NAN;
    for &t in threads {
        r.progress(&format!("record state churn 10k draws, {t} threads"));
        let p = pool(t);
        let ours = p.install(|| median_kept(iters, || churn.record_ours(recording::CHURN_CHUNKS))).as_secs_f64() * 1e3;
        let hand = p.install(|| median_kept(iters, || churn.record_by_hand(t))).as_secs_f64() * 1e3;
        if t == 1 {
            ours1 = ours;
        }
        ours_series.points.push((t as f64, draws as f64 / ours * 1e3));
        hand_series.points.push((t as f64, draws as f64 / hand * 1e3));
        let h1 = hand1.as_secs_f64() * 1e3;
        let (target, met) = match t {
            1 => ("≥ 1x by hand, 1 thread", Some(h1 / ours >= 1.0)),
            16 => ("≤ 0.8 ms (16 cores)", Some(ours <= 0.8)),
            _ => ("-", None),
        };
        r.row(
            &format!("record, state churn 10k draws in {} chunks, 7-texture bind groups (ms)", recording::CHURN_CHUNKS),
            t,
            format!("{ours:.2}"),
            format!("{hand:.2}"),
            &format!("by hand, {t} pass(es)"),
            hand / ours,
            target,
            met,
        );
    }
    let ours_all = ours_series.points.last().map_or(f64::NAN, |p| p.1);
    let scale = ours_all / (draws as f64 / ours1 * 1e3);
    r.row(
        "record scaling 1 → all threads, state churn",
        all,
        format!("{scale:.2}x"),
        "-".into(),
        "ours at 1 thread",
        scale,
        if all >= 16 { "≥ 6x (16 cores)" } else { "-" },
        if all >= 16 { Some(scale >= 6.0) } else { None },
    );
    // Where the recording time goes: wall time, work summed over the threads, and the
    // chunks' drop, for ours at one and four chunks per thread and for hand-written
    // bundles (split into encoder calls and `finish`).
    for &t in threads {
        r.progress(&format!("record state churn taken apart, {t} threads"));
        let p = pool(t);
        let split = |f: &dyn Fn() -> recording::RecordSplit| {
            let runs: Vec<_> = (0..iters).map(|_| f()).collect();
            recording::RecordSplit::median(&runs)
        };
        let chunks = recording::CHURN_CHUNKS;
        let (one, four, hand) = p.install(|| {
            (
                split(&|| churn.record_ours_split(chunks)),
                split(&|| churn.record_ours_split(4 * chunks)),
                split(&|| churn.bundles_by_hand_split(chunks)),
            )
        });
        r.notes.push(format!(
            "- record split, state churn 10k draws, {t} threads (ms; wall / work summed over threads / drop on the calling thread): \
             ours {chunks} chunks {:.2} / {:.2} / {:.2}; ours {} chunks {:.2} / {:.2} / {:.2}; wgpu bundles by hand {chunks} \
             chunks {:.2} / {:.2} (encoder calls {:.2}, finish {:.2}) / {:.2}",
            one.wall,
            one.summed,
            one.drop,
            4 * chunks,
            four.wall,
            four.summed,
            four.drop,
            hand.wall,
            hand.summed,
            hand.encode,
            hand.finish,
            hand.drop
        ));
    }
    drop(churn);
    r.progress("record state churn, CommandBuffer encoding");
    let cb = recording::Churn::new(draws, Encoding::CommandBuffer)?;
    let p = pool(all);
    let ours_cb = p.install(|| median_kept(iters, || cb.record_ours(recording::CHURN_CHUNKS))).as_secs_f64() * 1e3;
    let rb = draws as f64 / ours_all * 1e3;
    r.row(
        "record, state churn, CommandBuffer per chunk vs RenderBundle per chunk (ms)",
        all,
        format!("{ours_cb:.2}"),
        format!("{rb:.2}"),
        "RenderBundle per chunk",
        rb / ours_cb,
        "-",
        None,
    );
    drop(cb);
    r.speedup("record 10k draws (wgpu)", &ours_series);
    let _ =
        line_chart(&o.out.join("record.png"), "record, 10k state-churn draws", "draws/s", &[ours_series, hand_series]);

    // (b) The default scene, main view: objects recorded per second, for both chunk
    // encodings and both draw paths; the baseline draws each visible object by hand.
    let n = 100_000;
    let mut per_obj = f64::NAN;
    for (encoding, multi) in [
        (Encoding::RenderBundle, true),
        (Encoding::CommandBuffer, true),
        (Encoding::RenderBundle, false),
        (Encoding::CommandBuffer, false),
    ] {
        r.progress(&format!("record default scene, {encoding:?}, multi-draw {multi}"));
        let gpu =
            Arc::new(WgpuBackend::new(&WgpuConfig { encoding, ..WgpuConfig::default() }).map_err(|e| e.to_string())?);
        let config = switchyard::RendererConfig { threads: all, multi_draw: multi, ..frames::bench_config() };
        let (mut rd, c) = frames::city_with(gpu.clone(), n, config);
        let stats = frames::run(&mut rd, &c, 1, 3, if o.quick { 5 } else { 15 });
        let rec: Vec<f64> = stats.iter().map(|s| s.record_ms).collect();
        let rec_ms = frames::percentile(&rec, 0.5);
        let visible = stats.last().map_or(0, |s| s.visible[0]) as f64;
        let ours = visible / rec_ms * 1e3;
        if per_obj.is_nan() {
            let vis = rd.view_output(0).map(|v| v.visible).unwrap_or_default();
            let base = recording::PerObject::new(&gpu, n);
            let d = median(iters, || (), |()| base.record(&vis)).as_secs_f64();
            per_obj = vis.len() as f64 / d;
        }
        // The backend may lack multi-draw for this encoding: label what actually ran.
        let draws = if rd.multi_draw() { "multi-draw-indirect per bucket" } else { "draw_indexed per batch" };
        r.row(
            &format!(
                "record, default scene 100k objects, main view, {encoding:?}, {draws}{} (Mobjects/s)",
                if multi { "" } else { " (multi-draw off)" }
            ),
            all,
            format!("{:.2}", ours / 1e6),
            format!("{:.2}", per_obj / 1e6),
            "one draw_indexed per visible object, 1 thread",
            ours / per_obj,
            "≥ 50x",
            Some(ours / per_obj >= 50.0),
        );
    }
    let gpu = Arc::new(WgpuBackend::new(&WgpuConfig::default()).map_err(|e| e.to_string())?);

    // Whole frame on wgpu: 1M objects where the adapter is a real GPU, 100k on a CPU one.
    let cpu_adapter = gpu.adapter_info().device_type == wgpu::DeviceType::Cpu;
    let n = if cpu_adapter || o.quick { 100_000 } else { 1_000_000 };
    r.progress(&format!("frame, wgpu, {n} objects"));
    let (mut rd, c) = frames::city(gpu.clone(), n, all, true);
    let frames = if o.quick { 10 } else { 60 };
    frames::run(&mut rd, &c, 3, 5, 0);
    let t = Instant::now();
    let stats = frames::run(&mut rd, &c, 3, 0, frames);
    let fps = f64::from(frames) / t.elapsed().as_secs_f64();
    let ms: Vec<f64> = stats.iter().map(|s| s.frame_ms).collect();
    let p99 = frames::percentile(&ms, 0.99);
    let big = n == 1_000_000;
    r.row(
        &format!("frame, wgpu, {}k objects, 3 views: CPU p99 ms", n / 1000),
        all,
        format!("{p99:.2}"),
        "-".into(),
        "-",
        f64::NAN,
        if big { "< 8 ms" } else { "-" },
        if big { Some(p99 < 8.0) } else { None },
    );
    r.row(
        &format!("frame, wgpu, {}k objects, 3 views: frames/s", n / 1000),
        all,
        format!("{fps:.1}"),
        "-".into(),
        "-",
        f64::NAN,
        if big { "≥ 60" } else { "-" },
        if big { Some(fps >= 60.0) } else { None },
    );
    Ok(())
}

/// The raster limit of the stress scene's cube grid (hand-written wgpu, one instanced draw,
/// `switchyard_benches::raster`) beside Switchyard's forward pass over the same grid and
/// camera (`--scene cubes`, 256 materials, main view only), both in GPU ms from timestamps.
pub(super) fn raster_rows(r: &mut Report, o: &Options) -> Result<(), String> {
    let raster = Raster::new()?;
    let (width, height) = RASTER_SIZE;
    let iters = if o.quick { 3 } else { 9 };
    for &cubes in raster_counts(o) {
        let (mut corners, mut faces) = (f64::NAN, f64::NAN);
        for mesh in CubeMesh::ALL {
            r.progress(&format!("raster limit, {cubes} cubes, {}", mesh.name()));
            let ms = raster.measure(mesh, cubes, width, height, iters)?;
            match mesh {
                CubeMesh::Corners8 => corners = ms,
                CubeMesh::Visible3 => faces = ms,
                _ => {}
            }
            r.row(
                &format!("raster limit, {cubes} cubes, {}, {width}×{height} (GPU ms, median)", mesh.name()),
                1,
                format!("{ms:.3}"),
                "-".into(),
                "-",
                f64::NAN,
                "-",
                None,
            );
        }
        for (form, what, limit, limit_name) in [
            (CubeForm::Corners, "cubes of 8 vertices", corners, "raster limit, 8 vertices"),
            (CubeForm::BoxFaces, "cubes as the 3 faces toward the eye", faces, "raster limit, 3 faces"),
        ] {
            r.progress(&format!("forward pass of the cube grid, {cubes} {what}"));
            let ours = forward_pass_ms(cubes as usize, iters, form)?;
            r.row(
                &format!(
                    "forward pass of --scene cubes, {cubes} {what}, 256 materials, {width}×{height} (GPU ms, median)"
                ),
                cores(),
                format!("{ours:.3}"),
                format!("{limit:.3}"),
                limit_name,
                limit / ours,
                "-",
                None,
            );
        }
    }
    r.notes.push(format!(
        "- raster limit: {} on the GPU; ratio = limit / ours (1.00x: the forward pass draws as fast as one instanced draw \
         placing cubes from their index)",
        raster.adapter()
    ));
    Ok(())
}

/// Image size of the raster rows.
const RASTER_SIZE: (u32, u32) = (1920, 1080);

/// Cube counts of the raster rows.
fn raster_counts(o: &Options) -> &'static [u32] {
    if o.quick {
        &[10_000]
    } else {
        &[100_000, 1_000_000]
    }
}

/// Steps the raster rows report.
pub(super) fn raster_steps(o: &Options) -> usize {
    raster_counts(o).len() * (CubeMesh::ALL.len() + 2)
}

/// Median GPU ms of Switchyard's forward pass (default encoding) over the cube grid of
/// `cubes` drawn as `form`, main view only, after a few frames of warm-up.
fn forward_pass_ms(cubes: usize, frames: usize, form: CubeForm) -> Result<f64, String> {
    use switchyard::{Renderer, RendererConfig, View};
    let (width, height) = RASTER_SIZE;
    let backend = Arc::new(WgpuBackend::new(&WgpuConfig::default()).map_err(|e| e.to_string())?);
    if !switchyard::backend::Backend::caps(&*backend).gpu_timestamps {
        return Err("the adapter does not time passes".into());
    }
    let config = RendererConfig { width, height, max_objects: cubes, max_materials: 300, ..Default::default() };
    let mut r = Renderer::new(backend, config).map_err(|e| e.to_string())?;
    // The per-draw form of the lit shader, as the raster rows have always measured.
    let shader = r.create_shader(&switchyard::ShaderDesc::lit()).map_err(|e| e.to_string())?;
    let grid = switchyard_city::build_cubes_as(&mut r, shader, cubes, 256, form).map_err(|e| e.to_string())?;
    let lens = grid.lens();
    let view = View {
        label: "main",
        view_proj: lens.view_proj(width as f32 / height as f32),
        eye: lens.eye,
        far: lens.far,
        layer_mask: u16::MAX,
        pass: switchyard::PassKind::Forward,
    };
    let mut times = Vec::new();
    for _ in 0..frames + 8 {
        let s = r.render(&[view]).map_err(|e| e.to_string())?;
        if let Some(g) = s.gpu.filter(|g| times.last().is_none_or(|&(f, _)| f != g.frame)) {
            times.push((g.frame, g.total_ms()));
        }
    }
    r.flush().map_err(|e| e.to_string())?;
    // The first frames pay for first use (pipelines, memory).
    let mut ms: Vec<f64> = times.iter().skip(3).map(|t| t.1).collect();
    if ms.is_empty() {
        return Err("no frame's GPU times came back".into());
    }
    ms.sort_by(f64::total_cmp);
    Ok(ms[ms.len() / 2])
}
