//! `--window`: the demo's frames in a winit window. The backend is made on an adapter that
//! can present to the window's surface; each redraw renders one frame with
//! `Renderer::present_graph` (the graph's `out` target copied into the window's image by a
//! last pass). A resize configures the surface at the new size (the frame follows it), a
//! minimized window (0 × 0) skips frames until it has a size again, closing the window
//! ends the run with the summary. `--resize-at` asks the window for the size;
//! `--screenshot` writes the last presented frame.

use std::sync::Arc;
use std::time::Duration;

use switchyard::backend::wgpu::WgpuBackend;
use switchyard::backend::{Backend, SurfaceError, SurfaceId};
use switchyard::wgpu;
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::window::{Window, WindowId};

use crate::run::{Output, Run};
use crate::{output, Args, Device, PresentKind};

/// The window, its surface on the backend, and the run drawing into it.
struct Live<'a> {
    window: Arc<Window>,
    backend: Arc<WgpuBackend>,
    surface: SurfaceId,
    run: Run<'a, WgpuBackend>,
    /// The last frame whose `--resize-at` was asked of the window.
    resized_before: u32,
}

struct App<'a> {
    args: &'a Args,
    device: &'a Device<'a, WgpuBackend>,
    encoding: switchyard::backend::wgpu::Encoding,
    live: Option<Live<'a>>,
    /// The first error; the run stops at it.
    error: Option<String>,
    /// The run ended (every frame rendered, or the window closed).
    ended: bool,
}

/// Renders the run in a window; returns once it is closed or every frame was presented.
pub(crate) fn run(args: &Args, encoding: switchyard::backend::wgpu::Encoding) -> Result<(), String> {
    let event_loop = EventLoop::new().map_err(|e| format!("--window: no window system ({e})"))?;
    let report = |_: &WgpuBackend| None;
    let lose = |_: &WgpuBackend| {};
    let make = || Err("a window's device is not made again".to_owned());
    let device = Device { report: &report, lose: &lose, make: &make };
    let mut app = App { args, device: &device, encoding, live: None, error: None, ended: false };
    event_loop.run_app(&mut app).map_err(|e| format!("--window: {e}"))?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

impl<'a> App<'a> {
    /// The window, the backend on an adapter that presents to it, and the run.
    fn open(&self, event_loop: &ActiveEventLoop) -> Result<Live<'a>, String> {
        let args = self.args;
        let attributes = Window::default_attributes()
            .with_title("switchyard-demo")
            .with_inner_size(PhysicalSize::new(args.width, args.height));
        let window = Arc::new(event_loop.create_window(attributes).map_err(|e| format!("--window: {e}"))?);
        let desc =
            wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(event_loop.owned_display_handle()));
        let instance = wgpu::Instance::new(desc);
        let surface = instance.create_surface(window.clone()).map_err(|e| format!("--window: surface: {e}"))?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: Some(&surface),
            apply_limit_buckets: false,
        }))
        .map_err(|e| format!("--window: no adapter presents to this window ({e})"))?;
        let backend = Arc::new(WgpuBackend::from_adapter(adapter, self.encoding).map_err(|e| e.to_string())?);
        if let Some(path) = &args.pipeline_cache {
            crate::pipeline_files::load_cache(&backend, path);
        }
        let size = window.inner_size();
        let id = backend.create_surface(surface, size.width, size.height).map_err(|e| format!("--window: {e}"))?;
        let format = backend.surface_format(id).ok_or("--window: the surface has no format")?;
        if let Some(kind) = args.present {
            let mode = match kind {
                PresentKind::Fifo => wgpu::PresentMode::Fifo,
                PresentKind::Mailbox => wgpu::PresentMode::Mailbox,
                PresentKind::Immediate => wgpu::PresentMode::Immediate,
            };
            match backend.set_present_mode(id, mode) {
                Err(e @ SurfaceError::PresentMode { .. }) => println!("note: --present: {e}; presenting fifo"),
                r => r.map_err(|e| format!("--present: {e}"))?,
            }
        }
        let info = backend.adapter_info();
        println!(
            "adapter: {} ({:?}), encoding {:?}, window {}x{} ({format:?})",
            info.name,
            info.backend,
            backend.encoding(),
            size.width,
            size.height
        );
        let run = Run::new(args, backend.clone(), self.device, Output::Window { surface: id, format })?;
        window.request_redraw();
        Ok(Live { window, backend, surface: id, run, resized_before: 0 })
    }

    /// One redraw: the window's size for `--resize-at`, then a frame.
    fn redraw(&mut self) -> Result<(), String> {
        let args = self.args;
        let Some(live) = self.live.as_mut() else { return Ok(()) };
        let next = live.run.rendered + 1;
        if live.resized_before < next {
            live.resized_before = next;
            if let Some(&(_, w, h)) = args.resize_at.iter().rev().find(|r| r.0 == next) {
                // Applied at once (`Some`) or reported by a `Resized` event later.
                if let Some(size) = live.window.request_inner_size(PhysicalSize::new(w, h)) {
                    configure(live, size)?;
                }
            }
        }
        if !live.run.step()? {
            // No image (minimized, occluded): try again shortly rather than spin.
            std::thread::sleep(Duration::from_millis(10));
        }
        if live.run.done() {
            self.end()?;
        } else {
            live.window.request_redraw();
        }
        Ok(())
    }

    /// Ends the run: the summary, `--screenshot`, the pipeline cache.
    fn end(&mut self) -> Result<(), String> {
        self.ended = true;
        let Some(live) = self.live.take() else { return Ok(()) };
        let args = self.args;
        let out = live.run.out_target();
        let mut r = live.run.finish()?;
        if let Some(path) = &args.screenshot {
            let format = output::checked_out(path)?;
            let img = r.read_target(out).map_err(|e| format!("--screenshot: {e}"))?;
            let (w, h) = (img.width, img.height);
            output::write_image(path, format, img)?;
            println!("wrote {} ({w}x{h}, the last presented frame)", path.display());
        }
        crate::pipeline_files::save_cache(&live.backend, args)?;
        Ok(())
    }
}

/// The surface at the window's new size (0 × 0: frames are skipped until it has one).
fn configure(live: &mut Live<'_>, size: PhysicalSize<u32>) -> Result<(), String> {
    live.backend
        .configure_surface(live.surface, size.width, size.height)
        .map_err(|e| format!("--window: resizing to {}x{}: {e}", size.width, size.height))
}

impl ApplicationHandler for App<'_> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.live.is_some() || self.ended {
            return;
        }
        match self.open(event_loop) {
            Ok(live) => self.live = Some(live),
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let result = match event {
            WindowEvent::CloseRequested | WindowEvent::Destroyed => self.end(),
            WindowEvent::Resized(size) => self.live.as_mut().map_or(Ok(()), |live| configure(live, size)),
            WindowEvent::RedrawRequested => self.redraw(),
            _ => Ok(()),
        };
        if let Err(e) = result {
            self.error.get_or_insert(e);
            self.ended = true;
            self.live = None;
        }
        if self.ended {
            event_loop.exit();
        }
    }
}
