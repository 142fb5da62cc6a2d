//! The whole-frame rows (null backend): time, scaling, utilization and each median
//! frame's critical path; the digest's cost.

use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{WgpuBackend, WgpuConfig};
use switchyard::{Renderer, RendererConfig};
use switchyard_benches::chart::{line_chart, Series};
use switchyard_benches::frames;

use super::{Options, Report};

pub(super) fn frame_rows(r: &mut Report, o: &Options, threads: &[usize], all: usize) {
    let sizes: &[usize] = &[100_000, 1_000_000];
    let frames = if o.quick { 10 } else { 40 };
    let mut chart = Vec::new();
    for &n in sizes {
        let mut series = Series { name: format!("ours {}k objects", n / 1000), points: vec![] };
        let mut p50_1 = f64::NAN;
        let mut reference = f64::NAN;
        for &t in threads {
            r.progress(&format!("frame, null backend, {n} objects, {t} threads"));
            let (mut rd, c) = frames::city(Arc::new(NullBackend::new(true)), n, t, true);
            let traced = frames::run_traced(&mut rd, &c, 3, 3, frames);
            let stats: Vec<_> = traced.iter().map(|(s, _)| *s).collect();
            let ms: Vec<f64> = stats.iter().map(|s| s.frame_ms).collect();
            let (p50, p99) = (frames::percentile(&ms, 0.5), frames::percentile(&ms, 0.99));
            // The median frame: its critical path and where its time went.
            let mut order: Vec<usize> = (0..traced.len()).collect();
            order.sort_by(|&a, &b| ms[a].total_cmp(&ms[b]));
            let (median, path) = &traced[order[order.len() / 2]];
            r.notes.push(format!(
                "- {}k objects, {t} threads, median frame {:.2} ms: waiting for a frame slot {:.2} ms, setup on the \
                 calling thread {:.2} ms, job graph {:.2} ms, after it {:.2} ms; workers busy {:.0} %. Critical path: \
                 {path}",
                n / 1000,
                median.frame_ms,
                median.slot_wait_ms,
                median.setup_ms,
                median.jobs_ms,
                median.frame_ms - median.slot_wait_ms - median.setup_ms - median.jobs_ms,
                median.utilization() * 100.0,
            ));
            let busy: Vec<f64> = stats.iter().map(|s| s.utilization() * 100.0).collect();
            let busy = frames::percentile(&busy, 0.5);
            let (target, met) = match (n, t) {
                (1_000_000, 16) => ("≥ 50 % (16 cores)", Some(busy >= 50.0)),
                _ => ("-", None),
            };
            r.row(
                &format!(
                    "utilization, null backend, {}k objects: busy worker time / (frame × threads), median",
                    n / 1000
                ),
                t,
                format!("{busy:.0} %"),
                "-".into(),
                "-",
                f64::NAN,
                target,
                met,
            );
            if t == 1 {
                p50_1 = p50;
                reference = frames::reference_ms(&mut rd, &c, 3, if o.quick { 3 } else { 8 });
            }
            series.points.push((t as f64, 1000.0 / p50));
            let (target, met) = match (n, t) {
                (1_000_000, 16) => ("p99 < 4 ms (16 cores)", Some(p99 < 4.0)),
                _ => ("-", None),
            };
            r.row(
                &format!("frame, null backend, {}k objects, 3 views (p50 / p99 ms)", n / 1000),
                t,
                format!("{p50:.2} / {p99:.2}"),
                format!("{reference:.2}"),
                "single-threaded reference pipeline",
                reference / p50,
                target,
                met,
            );
        }
        let last = series.points.last().map_or(f64::NAN, |p| p.1);
        let scaling = last / (1000.0 / p50_1);
        let target = match (n, all >= 16) {
            (100_000, true) => Some(("≥ 8x (16 cores)", 8.0)),
            (1_000_000, true) => Some(("≥ 10x (16 cores)", 10.0)),
            _ => None,
        };
        r.row(
            &format!("frame scaling 1 → {all} threads, {}k objects", n / 1000),
            all,
            format!("{scaling:.2}x"),
            "-".into(),
            "ours at 1 thread",
            scaling,
            target.map_or("-", |t| t.0),
            target.map(|t| scaling >= t.1),
        );
        if all > 1 {
            scaling_rounds(r, o, n, all, target);
        }
        r.speedup(&format!("frame {}k", n / 1000), &series);
        chart.push(series);
    }
    let _ = line_chart(&o.out.join("frame.png"), "whole frame, null backend, 3 views", "frames/s", &chart);
    frame_tail_rows(r, o, all);
}

/// Rounds of the scaling row: one thread and `all` threads in turn.
const ROUNDS: usize = 5;

/// The frame's scaling as the median of [`ROUNDS`] alternating rounds (a one-thread
/// renderer and an `all`-thread one, each rendering the same frames in turn), so a host
/// whose single core speeds up or slows down over the run moves both sides of each
/// round's ratio alike; the row gives every round's ratio.
fn scaling_rounds(r: &mut Report, o: &Options, n: usize, all: usize, target: Option<(&str, f64)>) {
    r.progress(&format!("frame scaling, {n} objects, alternating rounds"));
    let frames = if o.quick { 10 } else { 40 };
    let mut one = frames::city(Arc::new(NullBackend::new(true)), n, 1, true);
    let mut many = frames::city(Arc::new(NullBackend::new(true)), n, all, true);
    let p50 = |(rd, c): &mut (Renderer<NullBackend>, switchyard_city::City)| {
        let ms: Vec<f64> = frames::run(rd, c, 3, 3, frames).iter().map(|s| s.frame_ms).collect();
        frames::percentile(&ms, 0.5)
    };
    let mut ratios: Vec<f64> = (0..ROUNDS).map(|_| p50(&mut one) / p50(&mut many)).collect();
    let shown: Vec<String> = ratios.iter().map(|x| format!("{x:.2}")).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ROUNDS / 2];
    r.row(
        &format!(
            "frame scaling 1 → {all} threads, {}k objects, median of {ROUNDS} alternating rounds (each round's: {})",
            n / 1000,
            shown.join(", ")
        ),
        all,
        format!("{median:.2}x"),
        "-".into(),
        "ours at 1 thread, same round",
        median,
        target.map_or("-", |t| t.0),
        target.map(|t| median >= t.1),
    );
}

/// The frame stage's rows after the frame sweep: recording the default scene's main view.
fn frame_tail_rows(r: &mut Report, o: &Options, all: usize) {
    let frames = if o.quick { 10 } else { 40 };
    // Recording the default scene's main view on the null backend (scheduler only).
    for multi in [true, false] {
        r.progress(&format!("record default scene, null backend, multi-draw {multi}"));
        let config = switchyard::RendererConfig { threads: all, multi_draw: multi, ..frames::bench_config() };
        let (mut rd, c) = frames::city_with(Arc::new(NullBackend::new(multi)), 100_000, config);
        let stats = frames::run(&mut rd, &c, 1, 3, frames);
        let rec: Vec<f64> = stats.iter().map(|s| s.record_ms).collect();
        let visible = stats.last().map_or(0, |s| s.visible[0]) as f64;
        let ours = visible / frames::percentile(&rec, 0.5) * 1e3;
        let draws = if multi { "multi-draw-indirect per bucket" } else { "draw_indexed per batch" };
        r.row(
            &format!("record, default scene 100k objects, main view, null backend, {draws} (Mobjects/s)"),
            all,
            format!("{:.2}", ours / 1e6),
            "-".into(),
            "-",
            f64::NAN,
            "-",
            None,
        );
    }
}

/// One row of [`digest_rows`]: `on` and `off` render the same city.
pub(super) fn digest_row<B: switchyard::backend::Backend>(
    r: &mut Report,
    o: &Options,
    all: usize,
    name: &str,
    (mut on, mut off): (Renderer<B>, Renderer<B>),
    c: &switchyard_city::City,
    n: usize,
) {
    let (rounds, frames) = if o.quick { (4, 10) } else { (10, 20) };
    let (mut t_on, mut t_off) = (Vec::new(), Vec::new());
    frames::run(&mut on, c, 3, 5, 0);
    frames::run(&mut off, c, 3, 5, 0);
    for _ in 0..rounds {
        t_on.extend(frames::run(&mut on, c, 3, 2, frames).iter().map(|s| s.frame_ms));
        t_off.extend(frames::run(&mut off, c, 3, 2, frames).iter().map(|s| s.frame_ms));
    }
    let (p_on, p_off) = (frames::percentile(&t_on, 0.5), frames::percentile(&t_off, 0.5));
    r.row(
        &format!("frame, {name}, {}k objects, 3 views, digest on vs off (p50 ms, CPU time of `render`)", n / 1000),
        all,
        format!("{p_on:.3}"),
        format!("{p_off:.3}"),
        "digest off",
        p_off / p_on,
        "-",
        None,
    );
}

/// The frame with the command-stream digest on and off (the null backend digests by
/// default, wgpu does not), in alternating rounds so drift hits both alike.
pub(super) fn digest_rows(r: &mut Report, o: &Options, all: usize) {
    let n = 1_000_000;
    r.progress("frame, null backend, digest on vs off");
    let config = |digest| RendererConfig { threads: all, digest: Some(digest), ..frames::bench_config() };
    let (on, c) = frames::city_with(Arc::new(NullBackend::new(true)), n, config(true));
    let (off, _) = frames::city_with(Arc::new(NullBackend::new(true)), n, config(false));
    digest_row(r, o, all, "null backend", (on, off), &c, n);
    if !o.gpu() {
        return;
    }
    r.progress("frame, wgpu, digest on vs off");
    let Ok(gpu) = WgpuBackend::new(&WgpuConfig::default()) else { return };
    let n = if gpu.adapter_info().device_type == wgpu::DeviceType::Cpu || o.quick { 100_000 } else { 1_000_000 };
    let gpu = Arc::new(gpu);
    let (on, c) = frames::city_with(gpu.clone(), n, config(true));
    let (off, _) = frames::city_with(gpu, n, config(false));
    digest_row(r, o, all, "wgpu", (on, off), &c, n);
}
