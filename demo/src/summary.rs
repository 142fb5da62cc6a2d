//! The demo's closing summary: per-stage times, the workers' busy share, the last frame's
//! counts, and per pass its memory traffic and GPU time.

use switchyard::*;
use switchyard_city as city;

pub(crate) fn print(
    all: &[FrameStats],
    names: &[String],
    views: &[String],
    last: Option<&SubmitReport>,
    critical: &str,
) {
    if all.is_empty() {
        return;
    }
    println!("\n| stage | min ms | median ms | p99 ms |\n|---|---|---|---|");
    let stage = |name: &str, f: &dyn Fn(&FrameStats) -> f64| {
        let v: Vec<f64> = all.iter().map(f).collect();
        let p = |q| city::percentile(&v, q);
        println!("| {name} | {:.3} | {:.3} | {:.3} |", p(0.0), p(0.5), p(0.99));
    };
    stage("cull", &|s| s.cull_ms);
    stage("sort", &|s| s.sort_ms);
    stage("batch", &|s| s.batch_ms);
    stage("patch", &|s| s.patch_ms);
    stage("record", &|s| s.record_ms);
    stage("submit", &|s| s.submit_ms);
    stage("gpu wait", &|s| s.gpu_wait_ms);
    stage("frame (cpu)", &|s| s.frame_ms);
    stage("  of it: waiting for a free frame slot", &|s| s.slot_wait_ms);
    stage("  of it: setup on the calling thread", &|s| s.setup_ms);
    stage("  of it: job graph", &|s| s.jobs_ms);
    // A window's frames: the wait for its image (before the render call's work, not part
    // of it), and from the render call to the image handed to present.
    let latency: Vec<f64> = all.iter().filter_map(|s| s.latency_ms).collect();
    if !latency.is_empty() {
        let late: Vec<f64> = all.iter().filter_map(|s| s.late_acquire_ms).collect();
        if late.is_empty() {
            stage("acquire the window's image (early: before the frame)", &|s| s.acquire_ms);
        } else {
            let p = |q| city::percentile(&late, q);
            println!(
                "| acquire the window's image (late: submission thread, after the passes before it) | {:.3} | {:.3} \
                 | {:.3} |",
                p(0.0),
                p(0.5),
                p(0.99)
            );
        }
        let p = |q| city::percentile(&latency, q);
        println!("| latency: render call → present | {:.3} | {:.3} | {:.3} |", p(0.0), p(0.5), p(0.99));
    }
    let s = all.last().expect("non-empty");
    let busy: Vec<f64> = all.iter().map(|s| s.utilization() * 100.0).collect();
    println!(
        "\nworkers busy: {:.1} % of frame time × {} workers (median frame); last frame's critical path (ms after \
         the job graph began): {critical}",
        city::percentile(&busy, 0.5),
        s.workers
    );
    println!(
        "\nlast frame: objects {}, visible per scene pass [{}]{} (views that took an earlier view's frustum test {}, in its pass over the objects {}), queue items {} (sorts from last frame's order {}/{}, \
         keys nearly in order {}, kept as they were {}; culled, sorted and batched as last frame {}), batches {}, draw calls {}, state changes {}, chunks {}, display lists {}/{}/{} \
         (hits/misses/rebuilds), uploaded {} bytes",
        s.objects,
        s.visible[..s.views as usize]
            .iter()
            .enumerate()
            .map(|(v, n)| format!("{} {n}", views.get(v).map_or("?", String::as_str)))
            .collect::<Vec<_>>()
            .join(", "),
        match s.gpu_culled_views {
            0 => String::new(),
            n => format!(" ({n} culled on the GPU: there, the candidates its cull tests)"),
        },
        s.frustum_tests_taken,
        s.culls_joined,
        s.queue_items,
        s.sorts_from_last_order,
        s.views,
        s.sorts_nearly_in_order,
        s.sorts_unchanged,
        s.culls_kept,
        s.batches,
        s.draw_calls,
        s.state_changes,
        s.chunks,
        s.lists.hits,
        s.lists.misses,
        s.lists.rebuilds,
        s.upload_bytes
    );
    // Shadow passes culled to their receivers' casters, and cached ones skipped.
    let cached = all.iter().filter(|s| s.cached_passes > 0).count();
    if s.receiver_culled_views > 0 || cached > 0 {
        println!(
            "shadows: {} passes culled to the casters of what the camera sees (last frame); cached passes skipped \
             in {cached} of {} frames ({} in the last: the GPU culls' counts below are then 0 for them)",
            s.receiver_culled_views,
            all.len(),
            s.cached_passes
        );
    }
    if s.shared_culls > 0 {
        println!(
            "prepass: {} forward passes drew the depth prepass's visible set instead of culling (last frame)",
            s.shared_culls
        );
    }
    // Pipelines made on first use inside a frame: a hitch each where the driver compiles.
    let made = |f: &dyn Fn(&FrameStats) -> u32| -> (u32, usize) {
        (all.iter().map(f).sum(), all.iter().skip(1).filter(|s| f(s) > 0).count())
    };
    let (pipelines, later) = made(&|s| s.lists.pipelines_created);
    let (modules, _) = made(&|s| s.lists.shader_modules_created);
    println!(
        "created during frames: {pipelines} pipelines, {modules} shader modules ({} and {} in the first frame; \
         later frames that created any: {later})",
        all[0].lists.pipelines_created, all[0].lists.shader_modules_created
    );
    if let Some(r) = last {
        println!("last submitted frame {}: submit {:.3} ms, gpu wait {:.3} ms", r.frame, r.submit_ms, r.gpu_wait_ms);
    }
    let mb = |b: u64| b as f64 / 1e6;
    // GPU ms per pass: the median over the distinct frames timed (a frame's times arrive
    // with later frames' stats).
    let mut timed: Vec<&GpuTimes> = all.iter().filter_map(|s| s.gpu.as_ref()).collect();
    timed.dedup_by_key(|g| g.frame);
    let gpu_ms = |i: usize| -> String {
        let v: Vec<f64> = timed.iter().filter_map(|g| g.passes().get(i).copied()).collect();
        if v.is_empty() {
            "-".into()
        } else {
            format!("{:.3}", city::percentile(&v, 0.5))
        }
    };
    println!(
        "\n| pass | loaded MB/frame | stored MB/frame | resolved MB/frame | GPU ms (median) |\n|---|---|---|---|---|"
    );
    let cull: Vec<f64> = timed.iter().filter_map(|g| g.cull_ms).collect();
    if !cull.is_empty() {
        let n = s.gpu_culled_views;
        println!("| (gpu-cull: {n} views) | 0.00 | 0.00 | 0.00 | {:.3} |", city::percentile(&cull, 0.5));
    }
    let occlusion: Vec<f64> = timed.iter().filter_map(|g| g.occlusion_ms).collect();
    if !occlusion.is_empty() {
        let n = s.occluded_views;
        println!("| (occlusion: {n} views) | 0.00 | 0.00 | 0.00 | {:.3} |", city::percentile(&occlusion, 0.5));
    }
    for (i, (p, name)) in s.passes[..s.pass_count as usize].iter().zip(names).enumerate() {
        println!("| {name} | {:.2} | {:.2} | {:.2} | {} |", mb(p.loaded), mb(p.stored), mb(p.resolved), gpu_ms(i));
    }
    if !timed.is_empty() {
        let total: Vec<f64> = timed.iter().map(|g| g.total_ms()).collect();
        println!(
            "GPU time of the passes, summed: median {:.3} ms, p99 {:.3} ms ({} frames timed)",
            city::percentile(&total, 0.5),
            city::percentile(&total, 0.99),
            timed.len()
        );
    }
    println!("attachments: {:.2} MB/frame; uploads: {:.2} MB/frame", mb(s.attachment_bytes()), mb(s.upload_bytes));
}
