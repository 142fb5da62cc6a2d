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
use crate::frame_graph::TargetId;
use crate::stats::FrameStats;

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
        let image = match self.acquire(surface) {
            Ok(Acquired::Image(t)) => t,
            Ok(Acquired::Skip(reason)) => return Ok(Presented::Skipped(reason)),
            Err(e) => return self.note_lost(Err(e)),
        };
        let mut targets = std::mem::take(&mut self.device.surface_targets);
        targets.clear();
        targets.extend_from_slice(input.targets);
        targets.push((target, image));
        let r = self.graph_frame(&FrameInput { cameras: input.cameras, targets: &targets }, Some(surface));
        self.device.surface_targets = targets;
        if r.is_err() {
            // Nothing of the frame was handed over: its image goes back unpresented.
            self.res.backend.release_image(surface);
        }
        r.map(|s| Presented::Frame(Box::new(s)))
    }

    /// How often `present_graph` configured a surface again (outdated or lost).
    pub fn surface_reconfigures(&self) -> u64 {
        self.device.reconfigures
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
