//! The passes of a plan, as it made them: which backend pass each entry of the submission
//! order is (a scene pass, or a fullscreen, callback or compute pass), and what each
//! records with. The plan (`plan.rs`) makes them; the frame's jobs (`jobs.rs`) read them.

use switchyard_backend::{BindGroupId, PassDesc, PipelineId, TextureId};

use super::fullscreen::ExternalInputGroups;
use crate::frame_graph::{PassCallback, Queue, TargetId, MAX_SHADOW_MAPS};
use crate::material::PassKind;

/// One backend pass of the plan, in submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Scene pass `s` (a view: cull, sort, batch, record).
    Scene(usize),
    /// Engine pass `o`: a fullscreen, callback or compute pass (its shader or callback is
    /// the engine's; one job records it).
    Engine(usize),
}

/// Which of a pass's attachments are external targets (their texture comes per frame).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExternalSlots {
    pub(crate) color: Option<usize>,
    pub(crate) depth: Option<usize>,
    pub(crate) resolve: Option<usize>,
}

/// A scene pass: one view of the frame.
#[derive(Debug)]
pub(crate) struct ScenePlan {
    pub(crate) label: std::sync::Arc<str>,
    pub(crate) camera: usize,
    pub(crate) kind: PassKind,
    pub(crate) queue: Queue,
    /// The backend pass (external attachments are filled per frame).
    pub(crate) pass: PassDesc,
    pub(crate) externals: ExternalSlots,
    /// Group 0: globals, transforms and (forward) the shadow maps.
    pub(crate) group: BindGroupId,
    /// The cameras whose depth the shadow maps hold (forward passes), by map.
    pub(crate) shadow_cameras: [Option<usize>; MAX_SHADOW_MAPS],
    pub(crate) shadowed: bool,
    /// Split for occlusion culling (`occlusion.rs`): its depth target's texture and size.
    pub(crate) occlude: Option<(TextureId, (u32, u32))>,
    /// A shadow pass's receivers (`Pass::receivers`).
    pub(crate) receivers: Option<ReceiversPlan>,
    /// Drawn only when what it draws may have changed (`Pass::cached`).
    pub(crate) cached: bool,
    /// The first earlier scene pass of the same camera (both shadow passes or neither):
    /// its cull runs first, and where both cull on the CPU this one takes its frustum test.
    pub(crate) cull_from: Option<usize>,
}

/// A shadow pass's receivers: the depth target's texture and size, the camera that saw
/// it, and the shadow map's size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReceiversPlan {
    pub(crate) depth: crate::gpu_cull::DepthTarget,
    pub(crate) camera: usize,
    pub(crate) map: (u32, u32),
}

/// What an engine pass records with.
pub(crate) enum EngineContent {
    /// `group`: its inputs, or `None` when it samples external targets (`inputs` makes the
    /// group per frame).
    Fullscreen {
        pipeline: PipelineId,
        group: Option<BindGroupId>,
        inputs: Option<ExternalInputGroups>,
    },
    Callback(PassCallback),
    /// Drawn by the engine with wgpu on the submission thread (`PassDesc::native`):
    /// nothing to record.
    Wgpu,
}

/// An engine pass: a fullscreen, callback or compute pass.
pub(crate) struct EnginePlan {
    pub(crate) name: String,
    pub(crate) pass: PassDesc,
    pub(crate) externals: ExternalSlots,
    pub(crate) size: (u32, u32),
    pub(crate) content: EngineContent,
    /// The targets a callback or compute pass samples (its context's inputs).
    pub(crate) inputs: Vec<TargetId>,
}

impl std::fmt::Debug for EnginePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnginePlan").field("name", &self.name).field("pass", &self.pass).finish_non_exhaustive()
    }
}
