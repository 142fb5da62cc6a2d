//! The sort rows: ours against the crates a user would pick, at every size, shape and
//! thread count.

use switchyard_benches::chart::{line_chart, Series};
use switchyard_benches::sorting::{self, Shape, SortInput, Sorter};
use switchyard_benches::{median_with, pool};
use switchyard_kernels::sort::RadixSorter;

use super::{mkeys, Options, Report};

pub(super) fn sort_rows(r: &mut Report, o: &Options, threads: &[usize], all: usize) {
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
                    &format!("{label} (Mkeys/s; ours `sort_vecs` reused, fresh sorter in brackets)"),
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
