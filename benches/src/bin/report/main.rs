//! `switchyard-bench-report`: runs the headline comparisons against the baselines a user
//! would otherwise pick, in one process, and prints a markdown table of ratios plus PNG
//! charts of throughput against threads.
//!
//! `--quick` runs in about a minute; the full run takes several.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use std::time::Instant;

use switchyard::backend::wgpu::{WgpuBackend, WgpuConfig};
use switchyard_benches::chart::{line_chart, Series};
use switchyard_benches::*;

mod frame;
mod gpu;
mod sort;

use frame::{digest_rows, frame_rows};
use gpu::{raster_rows, raster_steps, record_rows};
use sort::sort_rows;

struct Row {
    metric: String,
    threads: String,
    ours: String,
    best: String,
    baseline: String,
    ratio: f64,
    target: String,
    met: Option<bool>,
}

struct Report {
    rows: Vec<Row>,
    step: usize,
    steps: usize,
    started: Instant,
    /// Each stage's throughput against threads, as a multiple of its 1-thread value.
    speedups: Vec<Series>,
    /// Lines printed under the table (the median frames' critical paths).
    notes: Vec<String>,
}

impl Report {
    /// Adds `series` (throughput against threads, starting at 1 thread) to the speedup
    /// chart as `name`, each point divided by the 1-thread one.
    fn speedup(&mut self, name: &str, series: &Series) {
        let Some(&(1.0, base)) = series.points.first() else { return };
        if base > 0.0 && series.points.len() > 1 {
            let points = series.points.iter().map(|&(t, v)| (t, v / base)).collect();
            self.speedups.push(Series { name: name.into(), points });
        }
    }

    fn progress(&mut self, what: &str) {
        self.step += 1;
        eprint!("\r[{:>2}/{}] {:>5.1}s {what:<70}", self.step, self.steps, self.started.elapsed().as_secs_f64());
        let _ = std::io::stderr().flush();
    }

    #[allow(clippy::too_many_arguments)] // one table row's columns
    fn row(
        &mut self,
        metric: &str,
        threads: usize,
        ours: String,
        best: String,
        baseline: &str,
        ratio: f64,
        target: &str,
        met: Option<bool>,
    ) {
        self.rows.push(Row {
            metric: metric.into(),
            threads: threads.to_string(),
            ours,
            best,
            baseline: baseline.into(),
            ratio,
            target: target.into(),
            met,
        });
    }
}

/// Runs Switchyard's headline comparisons against the baselines a user would otherwise
/// pick, in one process; prints a markdown table of ratios and writes PNG charts.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Options {
    /// Smaller workloads and fewer iterations (about a minute).
    #[arg(long)]
    quick: bool,
    /// Skip the rows that need a GPU adapter.
    #[arg(long)]
    no_gpu: bool,
    /// Folder for report.md and the charts.
    #[arg(long, default_value = "bench-report")]
    out: PathBuf,
    /// Stages to run, comma-separated (all when absent).
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Stage>,
}

/// The report's stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Stage {
    Bandwidth,
    Sort,
    Cull,
    Lists,
    Frame,
    Digest,
    Graph,
    Record,
    Raster,
    Tracy,
}

impl Options {
    fn runs(&self, stage: Stage) -> bool {
        self.only.is_empty() || self.only.contains(&stage)
    }

    fn gpu(&self) -> bool {
        !self.no_gpu
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn thread_counts(all: usize) -> Vec<usize> {
    let mut t: Vec<usize> = [1, 2, 4, 8, 16, 32, 64].into_iter().filter(|&t| t < all).collect();
    t.push(all);
    t
}

fn mkeys(n: usize, secs: f64) -> f64 {
    n as f64 / secs / 1e6
}

fn main() {
    let o = Options::parse();
    if let Err(e) = std::fs::create_dir_all(&o.out) {
        eprintln!("switchyard-bench-report: {}: {e}", o.out.display());
        std::process::exit(1);
    }
    let all = cores();
    let threads = thread_counts(all);
    println!("# Switchyard benchmark report{}\n", if o.quick { " (--quick)" } else { "" });
    println!("- machine: {} with {all} cores available", cpu_model());
    let gpu = if o.gpu() { WgpuBackend::new(&WgpuConfig::default()).ok() } else { None };
    match &gpu {
        Some(b) => {
            let i = b.adapter_info();
            println!("- GPU adapter: {} ({:?}, {:?})", i.name, i.backend, i.device_type);
        }
        None => println!("- GPU adapter: none used"),
    }
    drop(gpu);
    let mut r = Report {
        rows: Vec::new(),
        step: 0,
        steps: 0,
        started: Instant::now(),
        speedups: Vec::new(),
        notes: Vec::new(),
    };
    r.steps = steps(&o, threads.len(), all);

    if o.runs(Stage::Bandwidth) {
        bandwidth_rows(&mut r, all);
    }
    if o.runs(Stage::Sort) {
        sort_rows(&mut r, &o, &threads, all);
    }
    if o.runs(Stage::Cull) {
        cull_rows(&mut r, &o, &threads);
    }
    if o.runs(Stage::Lists) {
        display_list_rows(&mut r, &o, all);
    }
    if o.runs(Stage::Frame) {
        frame_rows(&mut r, &o, &threads, all);
    }
    if o.runs(Stage::Digest) {
        digest_rows(&mut r, &o, all);
    }
    if o.runs(Stage::Graph) {
        graph_rows(&mut r, &o, all);
    }
    if o.gpu() && o.runs(Stage::Record) {
        if let Err(e) = record_rows(&mut r, &o, &threads, all) {
            eprintln!("\nGPU rows skipped: {e}");
        }
    }
    if o.gpu() && o.runs(Stage::Raster) {
        if let Err(e) = raster_rows(&mut r, &o) {
            eprintln!("\nraster rows skipped: {e}");
        }
    }
    if o.runs(Stage::Tracy) {
        tracy_rows(&mut r, &o, all);
    }
    eprintln!("\rdone in {:.0} s{:70}", r.started.elapsed().as_secs_f64(), "");
    if !r.speedups.is_empty() {
        // Where scaling stops shows against the ideal line (speedup = threads).
        let ideal = Series { name: "ideal".into(), points: threads.iter().map(|&t| (t as f64, t as f64)).collect() };
        let mut lines = r.speedups.clone();
        lines.push(ideal);
        let _ = line_chart(&o.out.join("speedup.png"), "speedup against 1 thread", "× 1 thread", &lines);
    }

    let mut md = String::new();
    md.push_str("| metric | threads | ours | best baseline | baseline name | ratio | target | met |\n");
    md.push_str("|---|---|---|---|---|---|---|---|\n");
    for row in &r.rows {
        let ratio = if row.ratio.is_finite() { format!("{:.2}x", row.ratio) } else { "-".into() };
        let met = match row.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "-",
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.metric, row.threads, row.ours, row.best, row.baseline, ratio, row.target, met
        ));
    }
    if !r.notes.is_empty() {
        md.push_str(
            "\nDetails under the rows: each frame row's median frame (where its time went, and its critical \
             path through the job graph in ms after the graph began), and each record row taken apart.\n\n",
        );
        r.notes.iter().for_each(|n| md.push_str(&format!("{n}\n")));
    }
    println!("\n{md}");
    let _ = std::fs::write(o.out.join("report.md"), &md);
    println!("charts: {}", o.out.display());
}

/// How many progress steps the selected stages print (see each stage's `progress` calls).
fn steps(o: &Options, t: usize, all: usize) -> usize {
    let mut n = 0;
    if o.runs(Stage::Bandwidth) {
        n += 1;
    }
    if o.runs(Stage::Sort) {
        n += if o.quick { 2 * 3 * t } else { 5 * 3 * t };
    }
    if o.runs(Stage::Cull) {
        n += 1 + t + if o.quick { 0 } else { 3 };
    }
    if o.runs(Stage::Lists) {
        n += 2;
    }
    if o.runs(Stage::Frame) {
        // Per size: each thread count, then the alternating rounds.
        n += 2 * t + 2 + if all > 1 { 2 } else { 0 };
    }
    if o.runs(Stage::Digest) {
        n += if o.gpu() { 2 } else { 1 };
    }
    if o.runs(Stage::Graph) {
        n += if all > 1 { 2 } else { 1 };
    }
    if o.gpu() && o.runs(Stage::Record) {
        n += 1 + 2 * t + 1 + 4 + 1;
    }
    if o.gpu() && o.runs(Stage::Raster) {
        n += raster_steps(o);
    }
    if o.runs(Stage::Tracy) && cfg!(feature = "tracy") {
        n += if all >= 4 { 2 } else { 1 };
    }
    n
}

fn cull_rows(r: &mut Report, o: &Options, threads: &[usize]) {
    let n = 1_000_000;
    let w = culling::workload(n, 0.5, false, 3);
    let iters = if o.quick { 7 } else { 21 };
    let mut out = Vec::new();
    let (mut parts, mut offsets) = (Vec::new(), Vec::new());
    r.progress("cull 1M, array-of-structs baseline");
    let aos = median(iters, || (), |()| culling::cull_aos(&w.aos, &w.planes, u16::MAX, &mut out));
    let mut ours_series = Series { name: "ours (SoA)".into(), points: vec![] };
    let mut base_series = Series { name: "AoS scalar, 1 thread".into(), points: vec![] };
    for &t in threads {
        r.progress(&format!("cull 1M 50% visible, {t} threads"));
        let p = pool(t);
        let d = p.install(|| median(iters, || (), |()| culling::cull_soa(&w, &mut parts, &mut offsets)));
        culling::cull_aos(&w.aos, &w.planes, u16::MAX, &mut out);
        assert_eq!(parts.concat(), out, "the SoA cull and the baseline disagree");
        let (ours, base) = (d.as_secs_f64() * 1e3, aos.as_secs_f64() * 1e3);
        ours_series.points.push((t as f64, n as f64 / d.as_secs_f64() / 1e6));
        base_series.points.push((t as f64, n as f64 / aos.as_secs_f64() / 1e6));
        let (target, met) = match t {
            1 => ("≥ 4x AoS at 1 thread", Some(base / ours >= 4.0)),
            16 => ("< 0.3 ms (16 cores)", Some(ours < 0.3)),
            _ => ("-", None),
        };
        r.row(
            "cull 1M objects, 50% visible (ms)",
            t,
            format!("{ours:.3}"),
            format!("{base:.3}"),
            "AoS scalar loop, 1 thread",
            base / ours,
            target,
            met,
        );
    }
    if !o.quick {
        for (vis, sorted) in [(0.05, false), (1.0, false), (0.5, true)] {
            r.progress(&format!("cull 1M {}%", vis * 100.0));
            let w = culling::workload(n, vis, sorted, 3);
            let t = *threads.last().expect("threads");
            let p = pool(t);
            let d = p.install(|| median(iters, || (), |()| culling::cull_soa(&w, &mut parts, &mut offsets)));
            let a = median(iters, || (), |()| culling::cull_aos(&w.aos, &w.planes, u16::MAX, &mut out));
            assert_eq!(parts.concat(), out, "the SoA cull and the baseline disagree");
            let name = format!(
                "cull 1M, {}% visible, {} (ms)",
                vis * 100.0,
                if sorted { "spatially sorted" } else { "shuffled" }
            );
            r.row(
                &name,
                t,
                format!("{:.3}", d.as_secs_f64() * 1e3),
                format!("{:.3}", a.as_secs_f64() * 1e3),
                "AoS scalar loop, 1 thread",
                a.as_secs_f64() / d.as_secs_f64(),
                "-",
                None,
            );
        }
    }
    r.speedup("cull 1M", &ours_series);
    let _ = line_chart(&o.out.join("cull.png"), "cull 1M objects", "Mobjects/s", &[ours_series, base_series]);
}

/// The machine's memory read bandwidth: what bounds a stage that streams its input.
fn bandwidth_rows(r: &mut Report, all: usize) {
    use rayon::prelude::*;
    r.progress("memory read bandwidth");
    let data: Vec<u64> = (0..64u64 << 20).collect(); // 512 MiB
    for t in [1, all] {
        let p = pool(t);
        let d = p.install(|| {
            median(
                5,
                || (),
                |()| data.par_chunks(1 << 16).map(|c| c.iter().fold(0u64, |a, &x| a ^ x)).reduce(|| 0, |a, b| a ^ b),
            )
        });
        let gbs = (data.len() * 8) as f64 / d.as_secs_f64() / 1e9;
        r.row("memory read bandwidth, 512 MiB (GB/s)", t, format!("{gbs:.1}"), "-".into(), "-", f64::NAN, "-", None);
        if all == 1 {
            break;
        }
    }
}

fn display_list_rows(r: &mut Report, o: &Options, all: usize) {
    let frames = if o.quick { 10 } else { 40 };
    r.progress("display lists: keyword switching, patch vs rebuild");
    let (cached, c_counts) = frames::keyword_switching_patch_ms(100_000, all, true, frames);
    let (rebuilt, r_counts) = frames::keyword_switching_patch_ms(100_000, all, false, frames);
    let ratio = rebuilt / cached;
    r.row(
        &format!(
            "display lists, global keyword switched every frame (patch ms; rebuilds {} vs {})",
            c_counts.rebuilds + c_counts.misses,
            r_counts.rebuilds + r_counts.misses
        ),
        all,
        format!("{cached:.3}"),
        format!("{rebuilt:.3}"),
        "rebuild every list every frame",
        ratio,
        "≥ 3x",
        Some(ratio >= 3.0),
    );
    r.progress("pipeline cache: ahash vs std HashMap");
    let descs = frames::pipeline_descs(1000);
    let rounds = if o.quick { 50 } else { 200 };
    let a = frames::cache_lookup_ns::<ahash::RandomState, _>(&descs, rounds);
    let s = frames::cache_lookup_ns::<std::collections::hash_map::RandomState, _>(&descs, rounds);
    r.row(
        "pipeline cache lookup, 1000 descriptors (ns)",
        1,
        format!("{a:.0}"),
        format!("{s:.0}"),
        "std HashMap (SipHash)",
        s / a,
        "-",
        None,
    );
}

/// Tracy on vs off: the whole frame with a profiler connected (a stand-in that streams and
/// discards the events, `switchyard_benches::tracy`) against the same frames with none, in
/// alternating blocks so drift on a shared machine hits both alike.
#[cfg(feature = "tracy")]
fn tracy_rows(r: &mut Report, o: &Options, all: usize) {
    use switchyard_benches::tracy::Drain;
    let n = 1_000_000;
    let (rounds, frames) = if o.quick { (6, 15) } else { (20, 20) };
    // All cores, and half of them: Tracy's own thread (compressing and sending) competes
    // with the workers only when every core runs one.
    let counts = if all >= 4 { vec![all / 2, all] } else { vec![all] };
    for t in counts {
        r.progress(&format!("Tracy on vs off, frame 1M objects, {t} threads"));
        let (mut rd, c) =
            frames::city(std::sync::Arc::new(switchyard::backend::null::NullBackend::new(true)), n, t, true);
        frames::run(&mut rd, &c, 3, 5, 0);
        let (mut off, mut on, mut ratios, mut bytes) = (Vec::new(), Vec::new(), Vec::new(), 0u64);
        for _ in 0..rounds {
            let a: Vec<f64> = frames::run(&mut rd, &c, 3, 2, frames).iter().map(|s| s.frame_ms).collect();
            let drain = match Drain::connect(std::time::Duration::from_secs(10)) {
                Ok(d) => d,
                Err(e) => {
                    r.row("Tracy on vs off", t, format!("failed: {e}"), "-".into(), "-", f64::NAN, "-", None);
                    return;
                }
            };
            let b: Vec<f64> = frames::run(&mut rd, &c, 3, 2, frames).iter().map(|s| s.frame_ms).collect();
            bytes += drain.disconnect();
            // Paired per round: drift between rounds cancels.
            ratios.push(frames::percentile(&b, 0.5) / frames::percentile(&a, 0.5));
            off.extend(a);
            on.extend(b);
        }
        let (p_off, p_on) = (frames::percentile(&off, 0.5), frames::percentile(&on, 0.5));
        let overhead = (frames::percentile(&ratios, 0.5) - 1.0) * 100.0;
        let (target, met) = if t == all { ("< 1 % of frame", Some(overhead < 1.0 && bytes > 0)) } else { ("-", None) };
        r.row(
            &format!(
                "Tracy on vs off: frame 1M objects, 3 views, null backend, p50 ms ({rounds} alternating rounds, {:.0} kB of events streamed; median paired overhead {overhead:+.2} %)",
                bytes as f64 / 1e3
            ),
            t,
            format!("{p_on:.3}"),
            format!("{p_off:.3}"),
            "no profiler connected",
            p_off / p_on,
            target,
            met,
        );
    }
}

#[cfg(not(feature = "tracy"))]
fn tracy_rows(r: &mut Report, _o: &Options, all: usize) {
    r.row(
        "Tracy on vs off (run with `--features tracy`)",
        all,
        "not run".into(),
        "-".into(),
        "-",
        f64::NAN,
        "< 1 % of frame",
        None,
    );
}

/// A declared frame graph's cost per frame with its compile cached (16 passes against the
/// same scene passes with one pass after them), per added pass, and its compile.
fn graph_rows(r: &mut Report, o: &Options, all: usize) {
    let objects = if o.quick { 20_000 } else { 100_000 };
    let frames = if o.quick { 60 } else { 300 };
    let k = objects / 1000;
    for t in if all > 1 { vec![1, all] } else { vec![1] } {
        r.progress(&format!("frame graph, 5 and 16 passes, frames alternating, {t} threads"));
        let [few, many] = graphs::graph_frames(t, objects, frames, 5);
        r.row(
            &format!("frame graph {} passes, compile cached, city {k}k (CPU ms/frame, null backend)", many.passes),
            t,
            format!("{:.3}", many.frame_ms),
            format!("{:.3}", few.frame_ms),
            &format!("the same 4 scene passes + 1 pass ({} passes)", few.passes),
            few.frame_ms / many.frame_ms,
            "-",
            None,
        );
        let per_pass_us = (many.frame_ms - few.frame_ms) / (many.passes - few.passes) as f64 * 1e3;
        r.row(
            "frame graph: frame time per added fullscreen/callback pass (µs)",
            t,
            format!("{per_pass_us:.1}"),
            "-".into(),
            "-",
            f64::NAN,
            "-",
            None,
        );
        r.row(
            &format!("frame graph {} passes: set_graph (compile, targets, pipelines) (ms)", many.passes),
            t,
            format!("{:.3}", many.set_ms),
            format!("{:.3}", many.frame_ms),
            "one frame with the compile cached",
            many.set_ms / many.frame_ms,
            "-",
            None,
        );
    }
}
