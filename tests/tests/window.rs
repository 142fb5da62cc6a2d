//! [surface] Presenting to a real window: an X11 window (Xvfb in CI), its wgpu surface
//! driven by `WgpuBackend::create_surface`, frames drawn by `Renderer::present_graph`
//! into its images and presented; a resize goes on at the new size, 0 x 0 (a minimized
//! window) skips presenting, an outdated surface is configured again once. Lavapipe
//! (Vulkan).

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::{Backend, SkipReason, SurfaceError};
use switchyard::*;
use switchyard_tests::cube;
use winit::platform::x11::EventLoopBuilderExtX11;

/// The window and everything on its device, or `None` without a display (outside CI).
fn windowed() -> Option<(Arc<winit::window::Window>, Arc<WgpuBackend>, switchyard::backend::SurfaceId)> {
    if std::env::var_os("DISPLAY").is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI runs this under Xvfb");
        return None;
    }
    let event_loop = winit::event_loop::EventLoop::builder().with_any_thread(true).build().unwrap();
    #[allow(deprecated)] // the test makes one window outside an application's event loop
    let window = Arc::new(
        event_loop
            .create_window(
                winit::window::Window::default_attributes()
                    .with_title("switchyard")
                    .with_inner_size(winit::dpi::PhysicalSize::new(160, 120)),
            )
            .unwrap(),
    );
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = wgpu::Backends::VULKAN;
    let instance = wgpu::Instance::new(desc);
    let surface = instance.create_surface(window.clone()).unwrap();
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            compatible_surface: Some(&surface),
            ..Default::default()
        }))
        .ok()?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).unwrap();
    let backend = Arc::new(WgpuBackend::from_device(&adapter, device, queue, Encoding::RenderBundle));
    let id = backend.create_surface(surface, 160, 120).unwrap();
    // The event loop goes with the window's lifetime only as far as X11 needs: none here.
    std::mem::forget(event_loop);
    Some((window, backend, id))
}

#[test]
fn surface_frames_present_to_a_window_through_resize_and_zero_size() {
    let Some((_window, backend, surface)) = windowed() else { return };
    let format = backend.surface_format(surface).unwrap();
    let config = RendererConfig { threads: 2, width: 160, height: 120, max_objects: 16, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    r.insert_objects(&[ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: 0 }]).unwrap();
    // A scene pass into an HDR target, tone mapped into the window's image.
    let mut g = FrameGraph::new();
    let cam = g.camera("main");
    let hdr =
        g.target("hdr", TargetKind::Transient, switchyard::backend::TextureFormat::Rgba16Float, TargetSize::Output);
    let depth =
        g.target("depth", TargetKind::Transient, switchyard::backend::TextureFormat::Depth32Float, TargetSize::Output);
    let out = g.target("window", TargetKind::External, format, TargetSize::Output);
    g.pass(
        Pass::scene("opaque", cam, PassKind::Forward, Queue::All)
            .color(hdr, LoadOp::Clear([0.2, 0.3, 0.4, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    let copy = FullscreenShader {
        name: "copy".into(),
        wgsl: "@group(0) @binding(3) var src: texture_2d<f32>;
@fragment fn fs(v: FullscreenVertex) -> @location(0) vec4<f32> { return textureSample(src, frame_sampler, v.uv); }"
            .into(),
        entry: "fs".into(),
        params: [0.0; 8],
    };
    g.pass(Pass::fullscreen("present", copy).color(out, LoadOp::DontCare, StoreOp::Store).sample(hdr));
    r.set_graph(g).unwrap();
    let eye = Vec3::new(2.0, 2.0, 3.0);
    let camera = Camera {
        view_proj: Mat4::perspective_rh(1.0, 4.0 / 3.0, 0.1, 20.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
        eye,
        far: 20.0,
        layer_mask: u16::MAX,
        receivers: None,
    };
    let frame =
        |r: &mut Renderer<WgpuBackend>| r.present_graph(&FrameInput { cameras: &[camera], targets: &[] }, surface, out);
    for _ in 0..3 {
        let presented = frame(&mut r).unwrap();
        assert!(matches!(presented, Presented::Frame(ref s) if s.draw_calls > 0), "{presented:?}");
    }
    r.flush().unwrap();
    // The window grows: the frame follows the surface's size.
    backend.configure_surface(surface, 200, 90).unwrap();
    assert!(matches!(frame(&mut r).unwrap(), Presented::Frame(_)));
    assert_eq!((r.config().width, r.config().height), (200, 90));
    // Minimized: 0 x 0 skips; restored: frames go on.
    backend.configure_surface(surface, 0, 0).unwrap();
    assert_eq!(frame(&mut r).unwrap(), Presented::Skipped(SkipReason::ZeroSize));
    backend.configure_surface(surface, 160, 120).unwrap();
    assert!(matches!(frame(&mut r).unwrap(), Presented::Frame(_)));
    r.flush().unwrap();
    assert_eq!(r.surface_reconfigures(), 0, "nothing was outdated");
    // Latency and the wait for the image are reported: a frame reports the newest
    // finished submit's latency from its render call to its present.
    // Late acquire (the default with render bundles): the submission thread waits for
    // the image, the render call does not; early: the other way round.
    assert!(r.acquires_late(surface));
    for late in [true, false] {
        r.set_late_acquire(late);
        r.flush().unwrap();
        let (mut latencies, mut waits, mut first) = (0, 0, None);
        for _ in 0..4 {
            let Presented::Frame(s) = frame(&mut r).unwrap() else { panic!("a frame") };
            // Reports of this loop's frames only (the first may see the last one before).
            if s.submitted_frame < *first.get_or_insert(s.frame) {
                continue;
            }
            assert!(s.acquire_ms >= 0.0 && s.acquire_ms.is_finite());
            assert!(!late || s.acquire_ms == 0.0, "late: nothing waits on the render call");
            assert_eq!(s.present_skipped, None);
            if let Some(l) = s.latency_ms {
                assert!(s.submitted_frame > 0 && l > 0.0 && l < 60_000.0, "{l} ms for frame {}", s.submitted_frame);
                latencies += 1;
            }
            waits += usize::from(s.late_acquire_ms.is_some());
        }
        assert!(latencies > 0, "presented frames report their latency (late {late})");
        assert_eq!(waits > 0, late, "the submission thread's wait for the image (late {late})");
    }
    // Present modes: FIFO is always offered; an offered mode is taken (configured again at
    // once), one not offered is refused and the frames go on in the current one.
    let modes = backend.present_modes(surface).unwrap();
    assert!(modes.contains(&wgpu::PresentMode::Fifo), "{modes:?}");
    for &mode in &modes {
        backend.set_present_mode(surface, mode).unwrap();
        assert!(matches!(frame(&mut r).unwrap(), Presented::Frame(_)), "{mode:?}");
    }
    let all = [
        wgpu::PresentMode::Fifo,
        wgpu::PresentMode::FifoRelaxed,
        wgpu::PresentMode::Mailbox,
        wgpu::PresentMode::Immediate,
    ];
    if let Some(&missing) = all.iter().find(|m| !modes.contains(m)) {
        let e = backend.set_present_mode(surface, missing).unwrap_err();
        assert!(matches!(e, SurfaceError::PresentMode { .. }), "{e:?}");
        assert!(matches!(frame(&mut r).unwrap(), Presented::Frame(_)));
    }
    let stale = switchyard::backend::SurfaceId::default();
    assert_eq!(backend.set_present_mode(stale, wgpu::PresentMode::Fifo), Err(SurfaceError::InvalidHandle));
    assert_eq!(backend.present_modes(stale), Err(SurfaceError::InvalidHandle));
    r.flush().unwrap();
}
