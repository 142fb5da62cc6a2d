//! What one frame hands to the submission thread: its packet (uploads, passes, layout)
//! and each view's instance and indirect data.

use std::ops::Range;
use std::time::Instant;

use switchyard_backend::{BufferId, DrawIndexedIndirectArgs, PassDesc, PassSubmit, SurfaceId, TextureId};

/// One view's per-frame instance and indirect data.
#[derive(Debug, Default)]
pub(crate) struct ViewUpload {
    pub(crate) instance_buffer: Option<BufferId>,
    pub(crate) instances: Vec<u32>,
    pub(crate) args_buffer: Option<BufferId>,
    pub(crate) args: Vec<DrawIndexedIndirectArgs>,
    /// A GPU-culled view's bucket starts and candidates, where they changed.
    pub(crate) lists: (Option<BufferId>, Vec<u32>),
    /// A GPU-culled view's cull parameters: (buffer, offset, bytes).
    pub(crate) params: Option<(BufferId, u64, [u8; crate::gpu_cull::PARAMS_SIZE])>,
    /// An occlusion-culled view's second-phase parameters, and its pyramid's level
    /// parameters where they changed.
    pub(crate) late_params: Option<(BufferId, u64, [u8; crate::gpu_cull::PARAMS_SIZE])>,
    pub(crate) levels: (Option<BufferId>, Vec<u8>),
}

impl ViewUpload {
    /// Nothing to write this frame (the vectors keep their capacity).
    pub(crate) fn clear(&mut self) {
        (self.instance_buffer, self.args_buffer, self.lists.0) = (None, None, None);
        (self.params, self.late_params, self.levels.0) = (None, None, None);
        self.instances.clear();
        self.args.clear();
        self.lists.1.clear();
        self.levels.1.clear();
    }
}

/// The surface a frame presents to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Present {
    pub(crate) surface: SurfaceId,
    /// Late acquire: the surface's stand-in the frame was recorded into, and the size it
    /// was recorded for. The submission thread submits the passes before the first one
    /// that draws into it, then acquires the image into it. `None`: acquired before the
    /// frame was recorded.
    pub(crate) late: Option<(TextureId, (u32, u32))>,
}

impl Present {
    /// Whether `pass` draws into the late-acquired image.
    pub(super) fn draws_into_image(&self, pass: &PassDesc) -> bool {
        let Some((stand_in, _)) = self.late else { return false };
        pass.color.is_some_and(|c| c.texture == stand_in || c.resolve == Some(stand_in))
    }
}

/// Everything one frame hands to the submission thread. Reused across frames.
#[derive(Debug)]
pub(crate) struct FramePacket<C> {
    pub(crate) frame: u64,
    pub(crate) passes: Vec<PassSubmit<C>>,
    pub(crate) globals: (Option<BufferId>, Vec<u8>),
    pub(crate) constants: (Option<BufferId>, Vec<u8>),
    pub(crate) transforms: (Option<BufferId>, Vec<u8>),
    /// (byte offset in the transform buffer, range in `transforms.1`).
    pub(crate) transform_writes: Vec<(u64, Range<usize>)>,
    /// Where the renderer culls on the GPU: the bounds buffer, and the world bounds of the
    /// objects `transform_writes` names ([`crate::gpu_cull::BOUNDS_SIZE`] bytes per object
    /// where a transform has 64: each write's offsets halved).
    pub(crate) bounds: (Option<BufferId>, Vec<[f32; 8]>),
    /// The objects' materials buffer, and the dense materials of the objects
    /// `transform_writes` names (4 bytes per object: each write's offsets divided by 16).
    pub(crate) materials: (Option<BufferId>, Vec<u32>),
    /// Upload batches handed to the upload thread so far (`upload.rs`): the submission
    /// thread submits every one up to this number before the frame's passes.
    pub(crate) batches: u64,
    pub(crate) views: Vec<ViewUpload>,
    /// The surface whose image the frame draws into (presented after its submit) and when
    /// the frame's render call began (for the latency to present).
    pub(crate) present: Option<(Present, Instant)>,
    /// Where the graph's passes lie among `passes`: after the cull pass (timed apart from
    /// them), split for occlusion culling, after a compute pass of their own (receivers).
    pub(crate) layout: crate::stats::PacketLayout,
}

impl<C> Default for FramePacket<C> {
    fn default() -> Self {
        Self {
            frame: 0,
            passes: Vec::new(),
            globals: (None, Vec::new()),
            constants: (None, Vec::new()),
            transforms: (None, Vec::new()),
            transform_writes: Vec::new(),
            bounds: (None, Vec::new()),
            materials: (None, Vec::new()),
            batches: 0,
            views: Vec::new(),
            present: None,
            layout: crate::stats::PacketLayout::default(),
        }
    }
}

impl<C> FramePacket<C> {
    pub(crate) fn upload_bytes(&self) -> u64 {
        let views: usize = self
            .views
            .iter()
            .map(|v| {
                let params = v.params.map_or(0, |p| p.2.len()) + v.late_params.map_or(0, |p| p.2.len());
                (v.instances.len() + v.lists.1.len()) * 4 + v.args.len() * 20 + params + v.levels.1.len()
            })
            .sum();
        let transforms: usize = self.transform_writes.iter().map(|(_, r)| r.len()).sum();
        let bounds = size_of_val(&self.bounds.1[..]) + size_of_val(&self.materials.1[..]);
        (self.globals.1.len() + self.constants.1.len() + transforms + bounds + views) as u64
    }
}
