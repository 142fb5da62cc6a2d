//! Presentation surfaces (a window's swapchain): acquiring an image to draw a frame into,
//! presenting it after the submit that drew it, and configuring a new size.
//!
//! A backend reports what happened as is; the scheduler decides (`Renderer::present_graph`):
//! an outdated or lost surface is configured again once and acquired again, a surface of
//! 0 × 0 (a minimized window), an occluded one or a timeout skips the frame.

use crate::handle::TextureId;

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
}
