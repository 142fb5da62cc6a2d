//! The device side of the renderer: the hand-off to the submission thread (`submit.rs`),
//! what the renderer gave up and waits for the frames that may read it (`retire.rs`), and
//! whether the device is lost (`recover.rs` makes everything again on a new one).

use switchyard_backend::{Backend, TextureId};

use super::retire::{self, FreeRanges};
use crate::error::RenderError;
use crate::frame_graph::TargetId;
use crate::submit::{FramePacket, SubmitReport, SubmitThread};

/// The device side: the hand-off to the submission thread, what was given up and waits for
/// the frames that may read it, and whether the device is lost.
pub(super) struct DeviceSide<B: Backend> {
    /// The ring of frame packets, the last report and the first error not yet returned.
    pub(super) submit: SubmitThread<B>,
    pub(super) retired: retire::Retired,
    /// The device was lost; frames fail until [`Renderer::recover`].
    pub(super) lost: bool,
    /// Surfaces configured again after an outdated or lost acquire.
    pub(super) reconfigures: u64,
    /// `present_graph`'s external targets plus the surface image (kept for its memory).
    pub(super) surface_targets: Vec<(TargetId, TextureId)>,
}

impl<B: Backend> DeviceSide<B> {
    /// The device side of a new renderer: its submission thread, nothing given up yet.
    pub(super) fn new(submit: SubmitThread<B>) -> Self {
        Self { submit, retired: retire::Retired::default(), lost: false, reconfigures: 0, surface_targets: Vec::new() }
    }

    /// A free frame packet: finished frames are collected first (waiting for one when all
    /// are in flight); an earlier frame's submission error is returned here.
    pub(super) fn take_packet(&mut self) -> Result<Box<FramePacket<B::Chunk>>, RenderError> {
        let packet = self.submit.take().ok_or(RenderError::SubmitThreadGone)?;
        if let Some((frame, source)) = self.submit.reports.pending.take() {
            self.submit.give_back(packet);
            return Err(RenderError::Submit { frame, source });
        }
        Ok(packet)
    }

    /// Waits until every frame handed over is finished on the GPU, then releases everything
    /// given up (destroyed on `b`, mesh ranges given back to `meshes`).
    pub(super) fn flush(&mut self, b: &B, meshes: &mut impl FreeRanges) -> Result<(), RenderError> {
        if !self.submit.flush() {
            return Err(RenderError::SubmitThreadGone);
        }
        self.retired.flushed();
        self.retired.release(u64::MAX, b, meshes);
        Ok(())
    }

    /// Takes back the finished frames without waiting: the first submission error among
    /// them, or the latest report.
    pub(super) fn poll(&mut self) -> Result<Option<SubmitReport>, RenderError> {
        if self.lost {
            return Err(RenderError::DeviceLost);
        }
        if !self.submit.collect() {
            return Err(RenderError::SubmitThreadGone);
        }
        if let Some((frame, source)) = self.submit.reports.pending.take() {
            return self.note_lost(Err(RenderError::Submit { frame, source }));
        }
        Ok(self.submit.reports.last.clone())
    }

    /// A device-lost error of any operation becomes [`RenderError::DeviceLost`] and marks
    /// the renderer lost.
    pub(super) fn note_lost<T>(&mut self, r: Result<T, RenderError>) -> Result<T, RenderError> {
        match r {
            Err(e) if e.is_device_lost() => {
                self.lost = true;
                Err(RenderError::DeviceLost)
            }
            r => r,
        }
    }
}
