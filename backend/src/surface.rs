//! Presentation surfaces (a window's swapchain): acquiring an image to draw a frame into,
//! presenting it after the submit that drew it, and configuring a new size.
//!
//! A backend reports what happened as is; the scheduler decides (`Renderer::present_graph`):
//! an outdated or lost surface is configured again once and acquired again, a surface of
//! 0 × 0 (a minimized window), an occluded one or a timeout skips the frame.

use std::time::{Duration, Instant};

use parking_lot::{Condvar, MutexGuard};
use slotmap::SlotMap;

use crate::handle::{SurfaceId, TextureId};

/// How long an acquire or a configure waits for the last image to be presented or released.
const IMAGE_WAIT: Duration = Duration::from_secs(10);

/// Why no image was acquired this frame: skip it and try again next frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// The surface is configured to 0 × 0 (a minimized window): nothing to draw into or
    /// present until it has a size again.
    ZeroSize,
    /// The window is hidden.
    Occluded,
    /// No image became free in time.
    Timeout,
    /// Acquired late ([`crate::Backend::acquire_late`]): the surface was configured to
    /// another size after the frame was recorded for the old one.
    Resized,
}

/// What [`crate::Backend::acquire`] gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// The surface's next image: draw into it, then present it. It is a texture of the
    /// surface's size and format, valid until the next acquire.
    Image(TextureId),
    /// No image: skip the frame.
    Skip(SkipReason),
}

/// A surface operation failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SurfaceError {
    /// The handle names no surface of this backend.
    #[error("surface handle is stale or was never created")]
    InvalidHandle,
    /// The surface changed (a resize the configuration does not know yet): configure it
    /// again.
    #[error("the surface is outdated")]
    Outdated,
    /// The surface was lost: configure it again, or make it again from its window.
    #[error("the surface is lost")]
    Lost,
    /// Present without an image acquired since the last present.
    #[error("no image acquired to present")]
    NotAcquired,
    /// A size over the device's limit.
    #[error("surface size {width}x{height}: each side at most {maximum}")]
    Size {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// The largest side.
        maximum: u32,
    },
    /// The device reported an error.
    #[error("surface: {0}")]
    Validation(String),
    /// The device was lost.
    #[error("device lost")]
    DeviceLost,
    /// This backend has no surfaces.
    #[error("this backend does not present")]
    Unsupported,
    /// A presentation mode the surface does not offer (the current one is kept).
    #[error("present mode {asked} is not offered by this surface (it offers {offered})")]
    PresentMode {
        /// The mode asked for.
        asked: String,
        /// The modes the surface offers.
        offered: String,
    },
}

/// The surfaces of a backend and the signal that one gave its image back: what both
/// backends' acquire and configure wait on, so one image is out at a time.
pub(crate) struct Swapchains<S> {
    pub(crate) surfaces: parking_lot::Mutex<SlotMap<SurfaceId, S>>,
    image_back: Condvar,
}

impl<S> Default for Swapchains<S> {
    fn default() -> Self {
        Self { surfaces: parking_lot::Mutex::default(), image_back: Condvar::new() }
    }
}

impl<S> Swapchains<S> {
    /// The surfaces, once `surface` has no image out (`out` says whether it has): waits up
    /// to 10 s for the submission thread to present or release it.
    pub(crate) fn idle(
        &self,
        surface: SurfaceId,
        out: impl Fn(&S) -> bool,
    ) -> Result<MutexGuard<'_, SlotMap<SurfaceId, S>>, SurfaceError> {
        let mut surfaces = self.surfaces.lock();
        let deadline = Instant::now() + IMAGE_WAIT;
        while out(surfaces.get(surface).ok_or(SurfaceError::InvalidHandle)?) {
            if self.image_back.wait_until(&mut surfaces, deadline).timed_out() {
                return Err(SurfaceError::Validation("the last image was neither presented nor released".into()));
            }
        }
        Ok(surfaces)
    }

    /// Wakes acquires and configures waiting for an image to come back.
    pub(crate) fn image_back(&self) {
        self.image_back.notify_all();
    }
}

/// A surface size within the device's largest texture side.
pub(crate) fn check_size(width: u32, height: u32, maximum: u32) -> Result<(), SurfaceError> {
    if width > maximum || height > maximum {
        return Err(SurfaceError::Size { width, height, maximum });
    }
    Ok(())
}
