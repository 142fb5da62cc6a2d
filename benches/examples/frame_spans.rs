//! Every job's span in the median frame of the report's frame row (the city on the null
//! backend, 3 views): where the workers' time goes and what waits on what, beyond the
//! critical path the report prints.
//!
//! `cargo run --release -p switchyard-benches --example frame_spans -- OBJECTS THREADS [FRAMES]`

use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard_benches::frames::city;

fn main() {
    let arg = |i: usize, default: usize| std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (objects, threads, frames) = (arg(1, 100_000), arg(2, 16), arg(3, 200));
    let (mut r, c) = city(Arc::new(NullBackend::new(true)), objects, threads, true);
    let mut kept = Vec::with_capacity(frames);
    for f in 0..frames + 20 {
        let stats = r.render(&c.views(f as u32, 3, 16.0 / 9.0)).expect("frame");
        if f >= 20 {
            let spans: Vec<(String, f64, f64)> =
                r.last_job_spans().iter().map(|s| (s.name.to_string(), s.start_ms, s.end_ms)).collect();
            kept.push((stats.frame_ms, stats.jobs_ms, stats.setup_ms, stats.busy_ms, spans, stats.visible));
        }
    }
    r.flush().expect("flush");
    kept.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (frame, jobs, setup, busy, spans, visible) = &kept[kept.len() / 2];
    println!(
        "{objects} objects, {threads} threads, median of {frames} frames: frame {frame:.3} ms, setup {setup:.3}, \
         job graph {jobs:.3}, busy {busy:.3} ms of work; visible per view {:?}",
        &visible[..3]
    );
    let mut spans = spans.clone();
    spans.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (name, start, end) in spans {
        println!("  {name:<24} {start:>7.3} – {end:>7.3}  ({:.3})", end - start);
    }
}
