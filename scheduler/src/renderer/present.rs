//! Frames into a presentation surface: acquire its image, render the graph into it,
//! present it after the frame's submit (on the submission thread).
//!
//! The policy: an outdated or lost surface is configured again at its size, once, and
//! acquired again; a second failure is a typed error (nothing rendered). A surface of
//! 0 × 0, an occluded window or a timeout skips the frame ([`Presented::Skipped`]): nothing
//! is rendered or submitted. A new surface size needs no call here: the image has it, and
//! an output-sized external target of a new size resizes the frame.

use switchyard_backend::{Acquired, Backend, SkipReason, SurfaceError, SurfaceId};

use super::input::FrameInput;
use super::Renderer;
use crate::error::RenderError;
use crate::frame_graph::{TargetId, TargetKind};
use crate::stats::FrameStats;
use crate::submit::Present;

/// What [`Renderer::present_graph`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Presented {
    /// Rendered and handed over; the image is presented after its submit.
    Frame(Box<FrameStats>),
    /// No image this frame: nothing rendered.
    Skipped(SkipReason),
}

impl<B: Backend> Renderer<B> {
    /// Renders one frame of the graph into `surface`'s next image as the external target
    /// `target` (declared with the surface's format, usually `TargetSize::Output`), then
    /// presents it. `input` gives the cameras and any other external targets. Outdated or
    /// lost: configured again once (the count is [`Renderer::surface_reconfigures`]);
    /// 0 × 0, occluded or timed out: skipped. Errors are typed and render nothing.
    pub fn present_graph(
        &mut self,
        input: &FrameInput<'_>,
        surface: SurfaceId,
        target: TargetId,
    ) -> Result<Presented, RenderError> {
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        if self.config.late_acquire {
            if let Some(stand_in) = self.res.backend.surface_stand_in(surface) {
                return self.present_late(input, surface, target, stand_in);
            }
        }
        let acquiring = std::time::Instant::now();
        let acquired = {
            crate::profile::zone!("acquire");
            self.acquire(surface)
        };
        let acquire_ms = acquiring.elapsed().as_secs_f64() * 1e3;
        let image = match acquired {
            Ok(Acquired::Image(t)) => t,
            Ok(Acquired::Skip(reason)) => return Ok(Presented::Skipped(reason)),
            Err(e) => return self.note_lost(Err(e)),
        };
        let r = self.frame_into(input, target, image, Present { surface, late: None });
        if r.is_err() {
            // Nothing of the frame was handed over: its image goes back unpresented.
            self.res.backend.release_image(surface);
        }
        r.map(|s| Presented::Frame(Box::new(FrameStats { acquire_ms, ..s })))
    }

    /// Late acquire: the frame recorded into the surface's stand-in at the surface's
    /// size now; the submission thread acquires the image once the passes before the
    /// first one into it are submitted. Nothing waits here for the image.
    fn present_late(
        &mut self,
        input: &FrameInput<'_>,
        surface: SurfaceId,
        target: TargetId,
        stand_in: switchyard_backend::TextureId,
    ) -> Result<Presented, RenderError> {
        let size = self.res.backend.surface_size(surface).ok_or(RenderError::Surface(SurfaceError::InvalidHandle))?;
        if size.0 == 0 || size.1 == 0 {
            return Ok(Presented::Skipped(SkipReason::ZeroSize));
        }
        let r = self.frame_into(input, target, stand_in, Present { surface, late: Some((stand_in, size)) });
        r.map(|s| Presented::Frame(Box::new(s)))
    }

    /// A frame of the graph with `image` as the external `target` besides `input`'s
    /// targets (the list reused from frame to frame).
    fn frame_into(
        &mut self,
        input: &FrameInput<'_>,
        target: TargetId,
        image: switchyard_backend::TextureId,
        present: Present,
    ) -> Result<FrameStats, RenderError> {
        let mut targets = std::mem::take(&mut self.device.surface_targets);
        targets.clear();
        targets.extend_from_slice(input.targets);
        targets.push((target, image));
        let r = self.graph_frame(&FrameInput { cameras: input.cameras, targets: &targets }, Some(present));
        self.device.surface_targets = targets;
        r
    }

    /// Switches between late and early acquire for the next frames
    /// ([`RendererConfig::late_acquire`](crate::RendererConfig::late_acquire)); frames
    /// in flight finish as they were recorded.
    pub fn set_late_acquire(&mut self, late: bool) {
        self.config.late_acquire = late;
    }

    /// Whether [`Renderer::present_graph`] acquires `surface`'s image late: asked for, and
    /// the backend has a stand-in for it.
    pub fn acquires_late(&self, surface: SurfaceId) -> bool {
        self.config.late_acquire && self.res.backend.surface_stand_in(surface).is_some()
    }

    /// How often `present_graph` configured a surface again (outdated or lost).
    pub fn surface_reconfigures(&self) -> u64 {
        self.device.reconfigures + self.device.submit.reports.reconfigures
    }

    fn acquire(&mut self, surface: SurfaceId) -> Result<Acquired, RenderError> {
        let b = &*self.res.backend;
        match b.acquire(surface) {
            Err(SurfaceError::Outdated | SurfaceError::Lost) => {
                let (w, h) = b.surface_size(surface).ok_or(RenderError::Surface(SurfaceError::InvalidHandle))?;
                b.configure_surface(surface, w, h).map_err(RenderError::Surface)?;
                self.device.reconfigures += 1;
                b.acquire(surface).map_err(RenderError::Surface)
            }
            r => r.map_err(RenderError::Surface),
        }
    }
}

impl Renderer<switchyard_backend::wgpu::WgpuBackend> {
    /// A retained target of the current graph as the engine's `wgpu::Texture` (to sample
    /// the scene in its own passes, an editor viewport, a video encoder), and the frame that
    /// last wrote it ([`FrameStats::frame`](crate::FrameStats::frame)). That frame's
    /// contents are in the texture once it is submitted: work the engine submits after
    /// [`Renderer::flush`] (or once [`FrameStats::submitted_frame`](crate::FrameStats::submitted_frame)
    /// reaches it) sees them; a later frame writes it again. Typed errors (`InvalidTarget`):
    /// not a retained target of the current graph, or no frame rendered with it yet.
    pub fn export_target(&self, target: TargetId) -> Result<(wgpu::Texture, u64), RenderError> {
        let graph_target =
            self.frame.graph.as_ref().filter(|g| g.tag == target.1).and_then(|g| g.targets.get(target.0 as usize));
        let name = graph_target.map_or_else(|| format!("#{}", target.0), |t| t.name.clone());
        let invalid = |what| RenderError::InvalidTarget { target: name.clone(), what };
        if !graph_target.is_some_and(|t| t.kind == TargetKind::Retained) {
            return Err(invalid("not a retained target of the current graph"));
        }
        let plan =
            self.frame.plan.as_ref().filter(|p| p.origin == super::plan::Origin::Graph(self.frame.graph_generation));
        let frame = plan.and_then(|p| p.last_frame).ok_or_else(|| invalid("no frame rendered with this graph yet"))?;
        let texture =
            self.target_texture(target).ok_or_else(|| invalid("not a retained target of the current graph"))?;
        let exported = self.res.backend.export_texture(texture).ok_or_else(|| invalid("its texture is gone"))?;
        Ok((exported, frame))
    }
}
