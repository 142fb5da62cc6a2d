//! Passes an engine draws with wgpu itself: the backend begins the render pass (the
//! pass's attachments, load and store ops, timestamps) and hands the engine its
//! `wgpu::RenderPass` on the submission thread, so libraries that draw into a render
//! pass (egui-wgpu, glyphon) draw inside Switchyard's frame graph.

use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

/// What a wgpu pass sees: the device and queue, and the pass's attachments.
#[derive(Debug)]
pub struct WgpuPassContext<'a> {
    /// The pass's name.
    pub pass: &'a str,
    /// The device the backend renders with.
    pub device: &'a wgpu::Device,
    /// Its queue (writes land before the frame's command buffers run).
    pub queue: &'a wgpu::Queue,
    /// The size of the pass's attachments.
    pub size: (u32, u32),
    /// The color attachment's format (what a pipeline's color target names).
    pub color_format: Option<wgpu::TextureFormat>,
    /// The depth attachment's format.
    pub depth_format: Option<wgpu::TextureFormat>,
    /// The attachments' sample count.
    pub samples: u32,
}

/// An engine's drawing inside a render pass of the frame graph, run on the submission
/// thread every frame the pass runs.
///
/// Both calls run while the backend encodes the frame: make and update wgpu objects with
/// `ctx.device` and `ctx.queue`, never through the Switchyard backend (its calls wait for
/// the encoding to finish). A panic in either is caught and fails the frame
/// ([`crate::SubmitError::Validation`]).
pub trait WgpuPassDraw: Send {
    /// Before the render pass begins: buffer and texture updates, commands that must run
    /// before the pass (egui-wgpu's `update_buffers`), recorded on `encoder`.
    fn prepare(&mut self, ctx: &WgpuPassContext<'_>, encoder: &mut wgpu::CommandEncoder) {
        let _ = (ctx, encoder);
    }

    /// Draws into the pass, whose attachments are loaded or cleared as the graph declares.
    /// The pass is `'static` (`RenderPass::forget_lifetime`: wgpu keeps what it uses
    /// alive, and the backend ends it before using its encoder again), as egui-wgpu's
    /// `Renderer::render` asks.
    fn draw(&mut self, ctx: &WgpuPassContext<'_>, pass: &mut wgpu::RenderPass<'static>);
}

/// A pass's engine drawing, shared by the frame graph and the frames that run it. Equal
/// only to itself (a clone).
#[derive(Clone)]
pub struct NativePass(Arc<Mutex<dyn WgpuPassDraw>>);

impl NativePass {
    /// Wraps `draw`.
    pub fn new(draw: impl WgpuPassDraw + 'static) -> Self {
        Self(Arc::new(Mutex::new(draw)))
    }

    /// Runs `f` on the drawing; a panic inside becomes an error naming the pass.
    pub(crate) fn with<R>(&self, pass: &str, f: impl FnOnce(&mut dyn WgpuPassDraw) -> R) -> Result<R, String> {
        let mut draw = self.0.lock();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut *draw)))
            .map_err(|_| format!("the wgpu pass '{pass}' panicked"))
    }
}

impl PartialEq for NativePass {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for NativePass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NativePass")
    }
}
