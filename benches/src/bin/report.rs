//! `switchyard-bench-report`: runs the headline comparisons against the baselines a user
//! would otherwise pick, in one process, and prints a markdown table of ratios plus PNG
//! charts of throughput against threads.
//!
//! `--quick` runs in about a minute; the full run takes several.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use std::sync::Arc;
use std::time::Instant;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::{Encoding, WgpuBackend, WgpuConfig};
use switchyard::{Renderer, RendererConfig};
use switchyard_benches::chart::{line_chart, Series};
use switchyard_benches::sorting::{Shape, SortInput, Sorter};
use switchyard_benches::*;
use switchyard_kernels::sort::RadixSorter;

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
            "\nThe median frame of each frame row: where its time went, and its critical path through \
                     the job graph (ms after the graph began).\n\n",
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
        n += 2 * t + 2;
    }
    if o.runs(Stage::Digest) {
        n += if o.gpu() { 2 } else { 1 };
    }
    if o.runs(Stage::Graph) {
        n += if all > 1 { 2 } else { 1 };
    }
    if o.gpu() && o.runs(Stage::Record) {
        n += 1 + t + 1 + 4 + 1;
    }
    if o.runs(Stage::Tracy) && cfg!(feature = "tracy") {
        n += if all >= 4 { 2 } else { 1 };
    }
    n
}

fn sort_rows(r: &mut Report, o: &Options, threads: &[usize], all: usize) {
    // Render queues are 10k–300k items per pass; 1M and 10M for whole-scene sorts.
    let sizes: &[usize] =
        if o.quick { &[1 << 14, 1_000_000] } else { &[1 << 14, 1 << 16, 1 << 18, 1_000_000, 10_000_000] };
    let shapes = [Shape::Uniform, Shape::Render, Shape::Coherent { percent: 3 }];
    let mut ours_sorter = RadixSorter::new();
    let mut input = SortInput::default();
    let mut chart: Vec<Series> = Vec::new();
    for &n in sizes {
        let iters = if n > 2_000_000 {
            3
        } else if o.quick {
            5
        } else if n <= 1 << 16 {
            51
        } else {
            9
        };
        for shape in shapes {
            let keys = sorting::keys(shape, n, 7);
            let size = if n >= 1_000_000 { format!("{}M", n / 1_000_000) } else { format!("{}k", n >> 10) };
            let label = format!("sort {size} {}", shape.name());
            let mut ours_series = Series { name: format!("ours {}", shape.name()), points: vec![] };
            let mut best_series = Series { name: format!("best baseline {}", shape.name()), points: vec![] };
            for &t in threads {
                r.progress(&format!("{label}, {t} threads"));
                let p = pool(t);
                let mut measure = |s: Sorter| {
                    let d = p.install(|| {
                        median_with(
                            iters,
                            &mut input,
                            |i| sorting::prepare(s, &keys, i),
                            |i| sorting::run(s, i, &mut ours_sorter, t),
                        )
                    });
                    assert!(sorting::is_sorted(s, &input), "{} left the keys unsorted", s.name());
                    mkeys(n, d.as_secs_f64())
                };
                let ours = measure(Sorter::Ours);
                let fresh = measure(Sorter::OursFresh);
                let base: Vec<(Sorter, f64)> = Sorter::BASELINES.iter().map(|&s| (s, measure(s))).collect();
                let (best_s, best) =
                    base.iter().copied().fold((Sorter::Std, 0.0), |a, b| if b.1 > a.1 { b } else { a });
                ours_series.points.push((t as f64, ours));
                best_series.points.push((t as f64, best));
                // Met only when the fresh sorter (allocating, as the baselines do) meets it too.
                let worst = ours.min(fresh) / best;
                let (target, met) = match (n, shape, t == all && all >= 16) {
                    (1_000_000, Shape::Uniform | Shape::Render, true) => ("≥ 1.5x best (16 cores)", Some(worst >= 1.5)),
                    (_, Shape::Coherent { .. }, true) => ("≥ 3x best (16 cores)", Some(worst >= 3.0)),
                    _ => ("≥ 1.0x best", Some(worst >= 1.0)),
                };
                r.row(
                    &format!("{label} (Mkeys/s; ours reused, fresh sorter in brackets)"),
                    t,
                    format!("{ours:.1} ({fresh:.1})"),
                    format!("{best:.1}"),
                    best_s.name(),
                    ours / best,
                    target,
                    met,
                );
                if n == 1_000_000 && shape == Shape::Uniform && t == all && all <= 2 {
                    let rad = base.iter().find(|b| b.0 == Sorter::Radsort).map_or(f64::NAN, |b| b.1);
                    r.row(
                        &format!("{label} vs radsort (Mkeys/s)"),
                        t,
                        format!("{ours:.1}"),
                        format!("{rad:.1}"),
                        "radsort",
                        ours / rad,
                        "≥ 1.3x (2 cores)",
                        Some(ours / rad >= 1.3),
                    );
                }
            }
            if matches!(shape, Shape::Coherent { .. }) && n == 1_000_000 {
                // Against uniform keys of the same size, on one thread and on all.
                let uni = sorting::keys(Shape::Uniform, n, 7);
                for t in [1, all] {
                    let p = pool(t);
                    let mut time = |k: &[u64]| {
                        p.install(|| {
                            median_with(
                                iters,
                                &mut input,
                                |i| sorting::prepare(Sorter::Ours, k, i),
                                |i| sorting::run(Sorter::Ours, i, &mut ours_sorter, t),
                            )
                        })
                        .as_secs_f64()
                    };
                    let (d_uni, d_coh) = (time(&uni), time(&keys));
                    let ratio = d_uni / d_coh;
                    // The same coherent keys with the nearly-sorted path turned off.
                    let mut full = RadixSorter::new();
                    full.nearly_sorted_max_threads = 0;
                    let d_full = p
                        .install(|| {
                            median_with(
                                iters,
                                &mut input,
                                |i| sorting::prepare(Sorter::Ours, &keys, i),
                                |i| sorting::run(Sorter::Ours, i, &mut full, t),
                            )
                        })
                        .as_secs_f64();
                    r.row(
                        &format!("sort {size} frame-coherent vs uniform, ours (ms)"),
                        t,
                        format!("{:.2}", d_coh * 1e3),
                        format!("{:.2}", d_uni * 1e3),
                        "ours, uniform keys",
                        ratio,
                        "≥ 3x",
                        Some(ratio >= 3.0),
                    );
                    r.row(
                        &format!("sort {size} frame-coherent, merge path vs full radix sort, ours (ms)"),
                        t,
                        format!("{:.2}", d_coh * 1e3),
                        format!("{:.2}", d_full * 1e3),
                        "ours, nearly-sorted path off",
                        d_full / d_coh,
                        "-",
                        None,
                    );
                    if all == 1 {
                        break;
                    }
                }
            }
            if n == 1_000_000 {
                r.speedup(&format!("sort 1M {}", shape.name()), &ours_series);
                chart.push(ours_series);
                chart.push(best_series);
            }
        }
    }
    let _ = line_chart(&o.out.join("sort.png"), "sort 1M pairs", "Mkeys/s", &chart);
}

fn cull_rows(r: &mut Report, o: &Options, threads: &[usize]) {
    let n = 1_000_000;
    let w = culling::workload(n, 0.5, false, 3);
    let iters = if o.quick { 7 } else { 21 };
    let mut out = Vec::new();
    let (mut parts, mut offsets) = (Vec::new(), Vec::new());
    r.progress("cull 1M, array-of-structs baseline");
    let aos = median(iters, || (), |()| culling::cull_aos(&w.aos, &w.frustum.planes, u16::MAX, &mut out));
    let mut ours_series = Series { name: "ours (SoA)".into(), points: vec![] };
    let mut base_series = Series { name: "AoS scalar, 1 thread".into(), points: vec![] };
    for &t in threads {
        r.progress(&format!("cull 1M 50% visible, {t} threads"));
        let p = pool(t);
        let d = p.install(|| median(iters, || (), |()| culling::cull_soa(&w, &mut parts, &mut offsets)));
        culling::cull_aos(&w.aos, &w.frustum.planes, u16::MAX, &mut out);
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
            let a = median(iters, || (), |()| culling::cull_aos(&w.aos, &w.frustum.planes, u16::MAX, &mut out));
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
        let (mut rd, c) = frames::city(Arc::new(NullBackend::new(true)), n, t, true);
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

fn frame_rows(r: &mut Report, o: &Options, threads: &[usize], all: usize) {
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
                "- {}k objects, {t} threads, median frame {:.2} ms: setup on the calling thread {:.2} ms, job graph \
                 {:.2} ms, after it {:.2} ms; workers busy {:.0} %. Critical path: {path}",
                n / 1000,
                median.frame_ms,
                median.setup_ms,
                median.jobs_ms,
                median.frame_ms - median.setup_ms - median.jobs_ms,
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
        r.row(
            &format!("frame scaling 1 → {all} threads, {}k objects", n / 1000),
            all,
            format!("{scaling:.2}x"),
            "-".into(),
            "ours at 1 thread",
            scaling,
            if n == 1_000_000 && all >= 16 { "≥ 10x (16 cores)" } else { "-" },
            if n == 1_000_000 && all >= 16 { Some(scaling >= 10.0) } else { None },
        );
        r.speedup(&format!("frame {}k", n / 1000), &series);
        chart.push(series);
    }
    let _ = line_chart(&o.out.join("frame.png"), "whole frame, null backend, 3 views", "frames/s", &chart);
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
fn digest_row<B: switchyard::backend::Backend>(
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
fn digest_rows(r: &mut Report, o: &Options, all: usize) {
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

fn record_rows(r: &mut Report, o: &Options, threads: &[usize], all: usize) -> Result<(), String> {
    let draws = 10_000;
    let iters = if o.quick { 5 } else { 15 };
    let churn = recording::Churn::new(draws, Encoding::RenderBundle)?;
    r.progress("record state churn, hand-written wgpu, 1 thread");
    let hand1 = median(iters, || (), |()| churn.record_by_hand(1));
    let mut ours_series = Series { name: "ours (RenderBundle)".into(), points: vec![] };
    let mut hand_series = Series { name: "by hand, N passes".into(), points: vec![] };
    let mut ours1 = f64::NAN;
    for &t in threads {
        r.progress(&format!("record state churn 10k draws, {t} threads"));
        let p = pool(t);
        let ours = p.install(|| median(iters, || (), |()| churn.record_ours(t))).as_secs_f64() * 1e3;
        let hand = p.install(|| median(iters, || (), |()| churn.record_by_hand(t))).as_secs_f64() * 1e3;
        if t == 1 {
            ours1 = ours;
        }
        ours_series.points.push((t as f64, draws as f64 / ours * 1e3));
        hand_series.points.push((t as f64, draws as f64 / hand * 1e3));
        let h1 = hand1.as_secs_f64() * 1e3;
        let (target, met) = if t == 1 { ("≥ 1x by hand, 1 thread", Some(h1 / ours >= 1.0)) } else { ("-", None) };
        r.row(
            "record, state churn 10k draws, 7-texture bind groups (ms)",
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
    drop(churn);
    r.progress("record state churn, CommandBuffer encoding");
    let cb = recording::Churn::new(draws, Encoding::CommandBuffer)?;
    let p = pool(all);
    let ours_cb = p.install(|| median(iters, || (), |()| cb.record_ours(all))).as_secs_f64() * 1e3;
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
