//! Criterion benches per stage, each beside its baselines. Smaller workloads when `CI` is
//! set. The headline comparisons with ratios come from `switchyard-bench-report`.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use switchyard::backend::null::NullBackend;
use switchyard_benches::sorting::{Shape, SortInput, Sorter};
use switchyard_benches::*;
use switchyard_kernels::sort::RadixSorter;

fn thread_counts() -> Vec<usize> {
    let all = cores();
    let mut t = vec![1];
    if all >= 2 {
        t.push(2);
    }
    if all > 2 {
        t.push(all);
    }
    t
}

fn sort(c: &mut Criterion) {
    let sizes: &[usize] = if ci() { &[100_000] } else { &[1_000_000, 10_000_000] };
    let mut g = c.benchmark_group("sort");
    g.sample_size(10);
    for &n in sizes {
        for shape in [Shape::Uniform, Shape::Render, Shape::Coherent { percent: 3 }] {
            let keys = sorting::keys(shape, n, 7);
            g.throughput(Throughput::Elements(n as u64));
            for t in thread_counts() {
                let p = pool(t);
                for s in [Sorter::Ours, Sorter::Std, Sorter::Rayon, Sorter::Radsort, Sorter::Rdst, Sorter::Voracious] {
                    let mut ours = RadixSorter::new();
                    let id = BenchmarkId::new(format!("{} {}", shape.name(), s.name()), format!("{n}/{t}t"));
                    g.bench_function(id, |b| {
                        b.iter_batched_ref(
                            || {
                                let mut input = SortInput::default();
                                sorting::prepare(s, &keys, &mut input);
                                input
                            },
                            |input| p.install(|| sorting::run(s, input, &mut ours, t)),
                            criterion::BatchSize::LargeInput,
                        )
                    });
                }
            }
        }
    }
    g.finish();
}

fn cull(c: &mut Criterion) {
    let sizes: &[usize] = if ci() { &[100_000] } else { &[100_000, 1_000_000] };
    let mut g = c.benchmark_group("cull");
    for &n in sizes {
        for visible in [0.05, 0.5, 1.0] {
            for sorted in [false, true] {
                let w = culling::workload(n, visible, sorted, 3);
                let tag = format!("{n} {}% {}", visible * 100.0, if sorted { "sorted" } else { "shuffled" });
                g.throughput(Throughput::Elements(n as u64));
                let mut out = Vec::new();
                g.bench_function(BenchmarkId::new("aos scalar", &tag), |b| {
                    b.iter(|| culling::cull_aos(&w.aos, &w.planes, u16::MAX, &mut out))
                });
                for t in thread_counts() {
                    let p = pool(t);
                    let (mut parts, mut offsets) = (Vec::new(), Vec::new());
                    g.bench_function(BenchmarkId::new(format!("switchyard {t}t"), &tag), |b| {
                        b.iter(|| p.install(|| culling::cull_soa(&w, &mut parts, &mut offsets)))
                    });
                }
            }
        }
    }
    g.finish();
}

fn frame(c: &mut Criterion) {
    let sizes: &[usize] = if ci() { &[20_000] } else { &[100_000, 1_000_000] };
    let mut g = c.benchmark_group("frame-null");
    g.sample_size(10);
    for &n in sizes {
        for t in thread_counts() {
            let (mut r, city) = frames::city(Arc::new(NullBackend::new(false)), n, t, true);
            let views = city.views(0, 3, 16.0 / 9.0);
            g.bench_function(BenchmarkId::new(format!("switchyard {t}t"), n), |b| {
                b.iter(|| r.render(&views).expect("frame"))
            });
            r.flush().expect("flush");
            if t == 1 {
                g.bench_function(BenchmarkId::new("single-threaded reference", n), |b| {
                    b.iter(|| r.reference_frame(&views))
                });
            }
        }
    }
    g.finish();
}

fn display_lists(c: &mut Criterion) {
    let n = if ci() { 20_000 } else { 100_000 };
    let mut g = c.benchmark_group("display-lists");
    g.sample_size(20);
    for cache in [true, false] {
        let (mut r, city) = frames::city(Arc::new(NullBackend::new(false)), n, cores(), cache);
        let views = city.views(0, 3, 16.0 / 9.0);
        let mut on = false;
        let name = if cache { "patch cached lists" } else { "rebuild every frame" };
        g.bench_function(BenchmarkId::new(name, "keyword switched each frame"), |b| {
            b.iter(|| {
                on = !on;
                r.set_global_keyword("FOG", on);
                r.render(&views).expect("frame")
            })
        });
        r.flush().expect("flush");
    }
    let descs = frames::pipeline_descs(1000);
    g.bench_function("pipeline cache ahash", |b| {
        b.iter(|| frames::cache_lookup_ns::<ahash::RandomState, _>(&descs, 1))
    });
    g.bench_function("pipeline cache std", |b| {
        b.iter(|| frames::cache_lookup_ns::<std::collections::hash_map::RandomState, _>(&descs, 1))
    });
    g.finish();
}

fn record(c: &mut Criterion) {
    let draws = if ci() { 1000 } else { 10_000 };
    let mut g = c.benchmark_group("record-state-churn");
    g.sample_size(10);
    for encoding in
        [switchyard::backend::wgpu::Encoding::RenderBundle, switchyard::backend::wgpu::Encoding::CommandBuffer]
    {
        let Ok(churn) = recording::Churn::new(draws, encoding) else {
            eprintln!("record benches skipped: no wgpu adapter");
            return;
        };
        for t in thread_counts() {
            let p = pool(t);
            g.bench_function(BenchmarkId::new(format!("switchyard {encoding:?}"), format!("{t}t")), |b| {
                b.iter_with_large_drop(|| p.install(|| churn.record_ours(recording::CHURN_CHUNKS)))
            });
            if encoding == switchyard::backend::wgpu::Encoding::RenderBundle {
                g.bench_function(BenchmarkId::new("by hand, one pass per thread", format!("{t}t")), |b| {
                    b.iter_with_large_drop(|| p.install(|| churn.record_by_hand(t)))
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, sort, cull, frame, display_lists, record);
criterion_main!(benches);
