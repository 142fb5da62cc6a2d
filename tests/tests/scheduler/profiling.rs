//! Switchyard's zones through the `profiling` crate (feature `profiling`), here into
//! puffin: a frame's stage zones arrive as puffin scopes, from the calling thread, the
//! workers and the submission thread, and the frame marks end puffin frames.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::{populate, views, world};

/// Runs [`zones_reach_puffin_in_a_process_of_its_own`] alone in a child process. Puffin's
/// profiler is global, and a frame with no thread's scopes in it is dropped together with
/// the scope names first registered during it (puffin 0.20, `GlobalProfiler::new_frame`):
/// the other tests of this binary mark frames of their own renderers at any time, so one
/// of them could end such an empty frame between a zone's first run here and its thread's
/// report, and that zone's name would never arrive.
#[test]
fn the_frames_zones_reach_puffin_through_the_profiling_crate() {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["profiling::zones_reach_puffin_in_a_process_of_its_own", "--exact", "--ignored", "--test-threads=1"])
        .status()
        .unwrap();
    assert!(status.success(), "the puffin test in its own process");
}

#[test]
#[ignore = "run alone in a process of its own by the_frames_zones_reach_puffin_through_the_profiling_crate"]
fn zones_reach_puffin_in_a_process_of_its_own() {
    let seen = Arc::new(Mutex::new((BTreeSet::<String>::new(), BTreeSet::<String>::new(), 0u32)));
    let sink = {
        let seen = seen.clone();
        puffin::GlobalProfiler::lock().add_sink(Box::new(move |frame| {
            let mut s = seen.lock().unwrap();
            s.0.extend(frame.scope_delta.iter().map(|d| d.name().to_string()));
            let unpacked = frame.unpacked().into_iter();
            s.1.extend(unpacked.flat_map(|u| u.thread_streams.keys().map(|t| t.name.clone()).collect::<Vec<_>>()));
            s.2 += 1;
        }))
    };
    puffin::set_scopes_on(true);
    let mut w = world(2, false, 8);
    populate(&mut w, 7, 2_000);
    for f in 0..4 {
        w.r.render(&views(f as f32 * 0.3)).unwrap();
    }
    w.r.flush().unwrap();
    // One more frame mark hands puffin what the last frames' threads reported.
    w.r.render(&views(2.0)).unwrap();
    w.r.flush().unwrap();
    puffin::GlobalProfiler::lock().remove_sink(sink);
    let (scopes, threads, frames) = std::mem::take(&mut *seen.lock().unwrap());
    assert!(frames >= 4, "a puffin frame per frame mark: {frames}");
    for zone in [
        "frame",
        "cull",
        "sort",
        "radix-sort",
        "sort-tail",
        "merge-last",
        "batch",
        "patch",
        "record",
        "submit",
        "wait-gpu",
    ] {
        assert!(scopes.contains(zone), "no {zone} scope in {scopes:?}");
    }
    assert!(threads.iter().any(|t| t == "switchyard-submit"), "the submission thread's scopes: {threads:?}");
    assert!(threads.len() >= 3, "the calling thread, the workers and the submission thread: {threads:?}");
}
