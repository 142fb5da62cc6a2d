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

impl super::WgpuBackend {
    /// The context of `pass`'s drawing (its attachments were checked: live textures).
    pub(super) fn native_context<'a>(
        &'a self,
        reg: &crate::registry::Registry<super::WgpuObjects>,
        pass: &'a crate::PassDesc,
    ) -> WgpuPassContext<'a> {
        let texture = |id| reg.textures.get(id).map(|t| t.obj.0.clone());
        let color = pass.color.and_then(|c| texture(c.texture));
        let depth = pass.depth.and_then(|d| texture(d.texture));
        let any = color.as_ref().or(depth.as_ref());
        WgpuPassContext {
            pass: &pass.label,
            device: &self.device,
            queue: &self.queue,
            size: any.map_or((0, 0), |t| (t.width(), t.height())),
            color_format: color.as_ref().map(wgpu::Texture::format),
            depth_format: depth.as_ref().map(wgpu::Texture::format),
            samples: any.map_or(1, wgpu::Texture::sample_count),
        }
    }

    /// A pass of its own for a native pass of the command-buffer encoding: the drawing's
    /// preparation, then the render pass it draws in. A panic is kept in `error`.
    pub(super) fn native_command_buffer(
        &self,
        reg: &crate::registry::Registry<super::WgpuObjects>,
        pass: &crate::PassDesc,
        native: &NativePass,
        error: &mut Option<String>,
    ) -> wgpu::CommandBuffer {
        let ctx = self.native_context(reg, pass);
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(&pass.label) });
        keep_first(error, native.with(&pass.label, |d| d.prepare(&ctx, &mut enc)));
        let mut rp = Self::begin_pass(&mut enc, reg, pass, crate::ChunkPosition::SINGLE).forget_lifetime();
        keep_first(error, native.with(&pass.label, |d| d.draw(&ctx, &mut rp)));
        drop(rp);
        enc.finish()
    }
}

/// Keeps the first error of a frame's native passes.
pub(super) fn keep_first(error: &mut Option<String>, result: Result<(), String>) {
    if let Err(e) = result {
        error.get_or_insert(e);
    }
}
