//! Per-frame statistics: time per stage and the frame's counters.

use crate::material::ListCounts;
use crate::renderer::MAX_VIEWS;

/// What one frame did. Stage times are the sum of that stage's job times (ms); submit and
/// GPU-wait times come from the most recent frame the submission thread finished.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Frame number (1-based).
    pub frame: u64,
    /// Culling, all views, and refreshing the block bounds of changed objects.
    pub cull_ms: f64,
    /// Keys, radix sort and batching, all views.
    pub sort_ms: f64,
    /// Display-list lookup, build and patching.
    pub patch_ms: f64,
    /// Recording chunks, all views.
    pub record_ms: f64,
    /// `render` wall time on the calling thread.
    pub frame_ms: f64,
    /// Frame the submit figures below belong to (0: none finished yet).
    pub submitted_frame: u64,
    /// Uploads and submit on the submission thread.
    pub submit_ms: f64,
    /// Time the submission thread waited on the GPU.
    pub gpu_wait_ms: f64,
    /// Objects in the scene.
    pub objects: u32,
    /// Views rendered.
    pub views: u32,
    /// Visible objects per view (first `views` entries, in the order given to `render`).
    pub visible: [u32; MAX_VIEWS],
    /// Queue items over all views.
    pub queue_items: u32,
    /// Batches (instanced draws) over all views.
    pub batches: u32,
    /// Draw API calls.
    pub draw_calls: u32,
    /// State changes emitted.
    pub state_changes: u32,
    /// Chunks recorded.
    pub chunks: u32,
    /// Display-list hits, misses, rebuilds.
    pub lists: ListCounts,
    /// Bytes handed to the GPU this frame.
    pub upload_bytes: u64,
    /// Digest of the submitted command stream (equal to the null backend's frame digest).
    pub digest: u64,
}
