//! Surfaces under faults: an outdated or lost surface configured again once, skipped
//! frames (timeout, occluded, 0 x 0), with the image acquired early (on the render call)
//! and late (on the submission thread, after the passes before the first one into it).

use super::*;

/// The full graph drawing into a surface of the null backend (a swapchain of three
/// images), through `present_graph`.
fn on_surface(w: u32, h: u32, late: bool) -> (World, SurfaceId, Targets) {
    let mut world = scene(2);
    world.r.set_late_acquire(late);
    let surface = world.backend.inner().create_surface(w, h, TextureFormat::Rgba8UnormSrgb).unwrap();
    let (g, t) = full_graph(TargetKind::External, 64, bar_pipeline(&*world.backend).unwrap());
    world.r.set_graph(g).unwrap();
    (world, surface, t)
}

fn present(w: &mut World, surface: SurfaceId, t: &Targets) -> Result<Presented, RenderError> {
    w.r.present_graph(&FrameInput { cameras: &cameras(), targets: &[] }, surface, t.out)
}

/// The surface configured to 96 x 48: the next frame draws at that size and is presented,
/// the `presents`-th image of the surface.
fn restored_at_another_size(w: &mut World, surface: SurfaceId, t: &Targets, presents: u64) {
    w.backend.configure_surface(surface, 96, 48).unwrap();
    let Presented::Frame(stats) = present(w, surface, t).unwrap() else { panic!("a frame") };
    assert!(stats.draw_calls > 0);
    assert_eq!((w.r.config().width, w.r.config().height), (96, 48));
    w.r.flush().unwrap();
    assert_eq!(w.backend.inner().presents(surface), presents);
}

#[test]
fn early_acquire_outdated_or_lost_is_configured_again_once_and_the_frame_presents() {
    let _one = serial();
    let (mut w, s, t) = on_surface(SIDE, SIDE, false);
    let presented = |w: &mut World| {
        w.r.flush().unwrap();
        w.backend.inner().presents(s)
    };
    assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)));
    assert_eq!(presented(&mut w), 1);
    let configures = w.backend.configures();
    for (k, fault) in [AcquireFault::Outdated, AcquireFault::Lost].into_iter().enumerate() {
        w.backend.fail_acquires(&[fault]);
        assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)), "{fault:?}");
        assert_eq!(presented(&mut w), 2 + k as u64, "{fault:?}: presented after one reconfigure");
        assert_eq!(w.backend.configures(), configures + 1 + k as u64);
        assert_eq!(w.r.surface_reconfigures(), 1 + k as u64);
    }
    // Twice in a row: a typed error, nothing rendered; the next frame goes on.
    let submits = w.backend.submits();
    w.backend.fail_acquires(&[AcquireFault::Outdated, AcquireFault::Lost]);
    assert_eq!(present(&mut w, s, &t).unwrap_err(), RenderError::Surface(SurfaceError::Lost));
    assert_eq!((w.backend.submits(), presented(&mut w)), (submits, 3));
    assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)));
    assert_eq!(presented(&mut w), 4);
}

#[test]
fn early_acquire_timeout_occluded_and_zero_size_skip_the_frame_and_a_resize_goes_on() {
    let _one = serial();
    let (mut w, s, t) = on_surface(SIDE, SIDE, false);
    assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)));
    w.r.flush().unwrap();
    let submits = w.backend.submits();
    w.backend.fail_acquires(&[AcquireFault::Timeout, AcquireFault::Occluded]);
    assert_eq!(present(&mut w, s, &t).unwrap(), Presented::Skipped(SkipReason::Timeout));
    assert_eq!(present(&mut w, s, &t).unwrap(), Presented::Skipped(SkipReason::Occluded));
    // A minimized window: 0 x 0 skips, and nothing is submitted or presented.
    w.backend.configure_surface(s, 0, 0).unwrap();
    assert_eq!(present(&mut w, s, &t).unwrap(), Presented::Skipped(SkipReason::ZeroSize));
    w.r.flush().unwrap();
    assert_eq!((w.backend.submits(), w.backend.inner().presents(s)), (submits, 1));
    // Restored at another size: the frame follows the image's size.
    restored_at_another_size(&mut w, s, &t, 2);
    // A handle that names no surface is typed, and renders nothing.
    let submits = w.backend.submits();
    assert_eq!(present(&mut w, SurfaceId::default(), &t), Err(RenderError::Surface(SurfaceError::InvalidHandle)));
    w.r.flush().unwrap();
    assert_eq!(w.backend.submits(), submits);
}

#[test]
fn late_acquire_submits_the_passes_before_the_image_first_then_presents() {
    let _one = serial();
    let (mut w, s, t) = on_surface(SIDE, SIDE, true);
    assert!(w.r.acquires_late(s));
    let submits = w.backend.submits();
    let Presented::Frame(first) = present(&mut w, s, &t).unwrap() else { panic!("a frame") };
    assert_eq!(first.acquire_ms, 0.0, "nothing waits for the image on the render call");
    w.r.flush().unwrap();
    // The shadow and offscreen passes, then (image acquired) the passes into it.
    assert_eq!((w.backend.submits(), w.backend.inner().presents(s)), (submits + 2, 1));
    let Presented::Frame(next) = present(&mut w, s, &t).unwrap() else { panic!("a frame") };
    assert_eq!(next.submitted_frame, first.frame);
    assert!(next.late_acquire_ms.is_some() && next.latency_ms.is_some() && next.present_skipped.is_none(), "{next:?}");
    // The same command stream on any thread count (the stand-in named in every frame).
    let digests = |late: bool, threads: usize| {
        let mut world = scene(threads);
        world.r.set_late_acquire(late);
        let surface = world.backend.inner().create_surface(SIDE, SIDE, TextureFormat::Rgba8UnormSrgb).unwrap();
        let (g, t) = full_graph(TargetKind::External, 64, bar_pipeline(&*world.backend).unwrap());
        world.r.set_graph(g).unwrap();
        (0..3)
            .map(|_| match present(&mut world, surface, &t).unwrap() {
                Presented::Frame(s) => s.digest,
                Presented::Skipped(r) => panic!("{r:?}"),
            })
            .collect::<Vec<_>>()
    };
    let late = digests(true, 1);
    assert!(late.iter().all(Option::is_some));
    assert_eq!(digests(true, 4), late);
}

#[test]
fn late_acquire_outdated_or_lost_is_configured_again_once_on_the_submission_thread() {
    let _one = serial();
    let (mut w, s, t) = on_surface(SIDE, SIDE, true);
    present(&mut w, s, &t).unwrap();
    w.r.flush().unwrap();
    let configures = w.backend.configures();
    for (k, fault) in [AcquireFault::Outdated, AcquireFault::Lost].into_iter().enumerate() {
        w.backend.fail_acquires(&[fault]);
        assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)), "{fault:?}");
        w.r.flush().unwrap();
        assert_eq!(w.backend.inner().presents(s), 2 + k as u64, "{fault:?}: presented after one reconfigure");
        assert_eq!(w.backend.configures(), configures + 1 + k as u64);
        assert_eq!(w.r.surface_reconfigures(), 1 + k as u64);
    }
    // Twice in a row: the frame's error comes back typed, nothing presented; the frame's
    // passes before the image were submitted, the rest dropped; the next frame goes on.
    w.backend.fail_acquires(&[AcquireFault::Outdated, AcquireFault::Lost]);
    assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)));
    let error = w.r.flush().unwrap_err();
    assert!(matches!(error, RenderError::Submit { source: SubmitError::Present(SurfaceError::Lost), .. }), "{error:?}");
    assert_eq!(w.backend.inner().presents(s), 3);
    assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)));
    w.r.flush().unwrap();
    assert_eq!(w.backend.inner().presents(s), 4);
}

#[test]
fn late_acquire_without_an_image_drops_the_passes_into_it_and_says_why() {
    let _one = serial();
    let (mut w, s, t) = on_surface(SIDE, SIDE, true);
    for fault in [AcquireFault::Timeout, AcquireFault::Occluded] {
        w.backend.fail_acquires(&[fault]);
        let submits = w.backend.submits();
        assert!(matches!(present(&mut w, s, &t).unwrap(), Presented::Frame(_)), "recorded before the image");
        w.r.flush().unwrap();
        assert_eq!(w.backend.submits(), submits + 1, "{fault:?}: only the passes before the image");
        let Presented::Frame(next) = present(&mut w, s, &t).unwrap() else { panic!("a frame") };
        let why = match fault {
            AcquireFault::Timeout => SkipReason::Timeout,
            _ => SkipReason::Occluded,
        };
        assert_eq!((next.present_skipped, next.latency_ms), (Some(why), None), "{fault:?}");
        w.r.flush().unwrap();
    }
    assert_eq!(w.backend.inner().presents(s), 2, "the frames after each skip presented");
    // A minimized window skips on the render call: nothing is recorded or submitted.
    w.backend.configure_surface(s, 0, 0).unwrap();
    let submits = w.backend.submits();
    assert_eq!(present(&mut w, s, &t).unwrap(), Presented::Skipped(SkipReason::ZeroSize));
    w.r.flush().unwrap();
    assert_eq!(w.backend.submits(), submits);
    // Restored at another size: the stand-in has it, the frame follows.
    restored_at_another_size(&mut w, s, &t, 3);
    assert_eq!(present(&mut w, SurfaceId::default(), &t), Err(RenderError::Surface(SurfaceError::InvalidHandle)));
}
