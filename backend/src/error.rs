//! Typed errors, one enum per operation.

use crate::command::{AttachmentRole, ResourceKind};

/// Creating a resource failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CreateError {
    /// A handle inside the descriptor names no live resource.
    #[error("{kind:?} handle in the descriptor is stale or was never created")]
    InvalidHandle {
        /// What kind of resource the handle names.
        kind: ResourceKind,
    },
    /// A size or count is zero or larger than the device allows.
    #[error("{what}: requested {requested}, maximum {maximum}")]
    Limit {
        /// Which quantity.
        what: &'static str,
        /// What was asked for.
        requested: u64,
        /// What the device allows.
        maximum: u64,
    },
    /// The descriptor is inconsistent (e.g. a binding of the wrong type).
    #[error("invalid descriptor: {0}")]
    Invalid(String),
    /// The WGSL source did not parse or validate.
    #[error("shader `{label}`: {message}")]
    Shader {
        /// The shader's label.
        label: String,
        /// The compiler's message.
        message: String,
    },
    /// The device rejected the object (its message).
    #[error("device validation: {0}")]
    Validation(String),
    /// The backend or its adapter cannot make this kind of object.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The device ran out of memory making a resource of `requested` bytes (0: not a buffer
    /// or texture). wgpu reports no memory budget, so there is no maximum to give; a size
    /// over the device's largest buffer or texture is a [`CreateError::Limit`] instead.
    #[error("out of memory ({requested} bytes requested)")]
    OutOfMemory {
        /// Bytes of the buffer or texture asked for.
        requested: u64,
    },
    /// The device was lost.
    #[error("device lost")]
    DeviceLost,
}

impl CreateError {
    /// The error with the bytes asked for filled in, where it is out of memory.
    pub fn requesting(self, bytes: u64) -> Self {
        match self {
            Self::OutOfMemory { .. } => Self::OutOfMemory { requested: bytes },
            e => e,
        }
    }
}

/// Writing data into a resource failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// The handle names no live resource.
    #[error("{kind:?} handle is stale or was never created")]
    InvalidHandle {
        /// What kind of resource the handle names.
        kind: ResourceKind,
    },
    /// The write does not fit in the resource.
    #[error("write of {len} bytes at offset {offset} exceeds size {size}")]
    OutOfRange {
        /// Byte offset of the write.
        offset: u64,
        /// Length of the write.
        len: u64,
        /// Size of the resource.
        size: u64,
    },
    /// The resource was not created with the usage this write needs, or misaligned data.
    #[error("invalid write: {0}")]
    Invalid(&'static str),
    /// The device was lost.
    #[error("device lost")]
    DeviceLost,
}

/// Recording a chunk of commands failed. `index` is the position of the offending command.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// A command names a stale or unknown handle.
    #[error("command {index}: {kind:?} handle is stale or was never created")]
    InvalidHandle {
        /// Command index in the chunk.
        index: usize,
        /// What kind of resource the handle names.
        kind: ResourceKind,
    },
    /// A draw or bind came before any `SetPipeline`.
    #[error("command {index}: no pipeline set")]
    NoPipeline {
        /// Command index in the chunk.
        index: usize,
    },
    /// A draw needs a bind group the pipeline's layout declares but none is set.
    #[error("command {index}: bind group {group} not set or incompatible with the pipeline")]
    MissingBindGroup {
        /// Command index in the chunk.
        index: usize,
        /// Group index.
        group: u32,
    },
    /// A draw needs a vertex buffer slot that is not set.
    #[error("command {index}: vertex buffer slot {slot} not set")]
    MissingVertexBuffer {
        /// Command index in the chunk.
        index: usize,
        /// Vertex buffer slot.
        slot: u32,
    },
    /// An indexed draw without an index buffer.
    #[error("command {index}: no index buffer set")]
    MissingIndexBuffer {
        /// Command index in the chunk.
        index: usize,
    },
    /// A range (vertices, indices, instances, buffer bytes, indirect records) leaves its buffer.
    #[error("command {index}: {what} range ends at {end}, past the limit {limit}")]
    OutOfRange {
        /// Command index in the chunk.
        index: usize,
        /// Which range.
        what: &'static str,
        /// End of the requested range.
        end: u64,
        /// The available size.
        limit: u64,
    },
    /// An offset that is not a multiple of what the GPU requires (4 bytes for vertex
    /// buffers and indirect records, the index size for index buffers).
    #[error("command {index}: {what} offset is not aligned")]
    Unaligned {
        /// Command index in the chunk.
        index: usize,
        /// Which offset.
        what: &'static str,
    },
    /// A buffer is bound for a use its usage flags do not allow.
    #[error("command {index}: buffer lacks usage {usage}")]
    BadUsage {
        /// Command index in the chunk.
        index: usize,
        /// The missing usage.
        usage: &'static str,
    },
    /// Bind group slot, vertex slot or dynamic offsets do not match the pipeline layout.
    #[error("command {index}: {message}")]
    LayoutMismatch {
        /// Command index in the chunk.
        index: usize,
        /// What does not match.
        message: &'static str,
    },
    /// The pipeline's target formats differ from the pass's attachments.
    #[error("command {index}: pipeline targets do not match the pass attachments")]
    FormatMismatch {
        /// Command index in the chunk.
        index: usize,
    },
    /// A draw or vertex binding in a compute pass, or a dispatch in a render pass, or a
    /// pipeline of the other kind.
    #[error("command {index}: {what}")]
    WrongPassKind {
        /// Command index in the chunk.
        index: usize,
        /// What does not belong.
        what: &'static str,
    },
    /// A resource used two ways at once: an indirect dispatch reading its arguments from
    /// a buffer a bound group writes, or a bind group sampling a texture the pass renders
    /// into.
    #[error("command {index}: a resource is used in conflicting ways (bound read-write, or sampled while attached)")]
    UsageConflict {
        /// Command index in the chunk.
        index: usize,
    },
    /// The command needs a capability the backend lacks (see [`crate::Caps`]).
    #[error("command {index}: unsupported: {what}")]
    Unsupported {
        /// Command index in the chunk.
        index: usize,
        /// Which capability.
        what: &'static str,
    },
    /// The pass description itself is invalid.
    #[error(transparent)]
    Pass(#[from] PassError),
    /// The device was lost.
    #[error("device lost")]
    DeviceLost,
}

/// A pass description is invalid.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PassError {
    /// An attachment handle is stale.
    #[error("{role:?} attachment is stale or was never created")]
    InvalidAttachment {
        /// Which attachment.
        role: AttachmentRole,
    },
    /// An attachment texture was not created as a render target of the right kind.
    #[error("{role:?} attachment is not a render target of a suitable format")]
    NotRenderTarget {
        /// Which attachment.
        role: AttachmentRole,
    },
    /// Color and depth attachments differ in size.
    #[error("attachments differ in size")]
    SizeMismatch,
    /// A pass with neither color nor depth attachment.
    #[error("pass has no attachments")]
    NoAttachments,
    /// The attachments differ in sample count, or a pipeline's differs from the pass's.
    #[error("attachments differ in sample count")]
    SampleMismatch,
    /// A resolve target that is multisampled, of another format or size, not a render
    /// target, or given for a single-sample attachment.
    #[error("invalid resolve target: {0}")]
    InvalidResolve(&'static str),
    /// A compute pass with attachments.
    #[error("a compute pass has no attachments")]
    ComputeWithAttachments,
    /// A transient attachment is loaded or stored (it must be cleared and discarded).
    #[error("{role:?} attachment is transient: it must be cleared on load and discarded on store")]
    TransientKept {
        /// Which attachment.
        role: AttachmentRole,
    },
    /// A clear value the GPU refuses: a color that is not finite, a depth outside 0..=1.
    #[error("{role:?} attachment: clear value out of range (color finite, depth in 0..=1)")]
    InvalidClear {
        /// Which attachment.
        role: AttachmentRole,
    },
    /// A pass the engine draws with wgpu ([`crate::PassDesc::native`]) that is a compute
    /// pass or carries chunks.
    #[error("a wgpu pass {0}")]
    Native(&'static str),
}

/// Submitting a frame failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubmitError {
    /// A pass description is invalid.
    #[error(transparent)]
    Pass(#[from] PassError),
    /// A recorded chunk was recorded for another pass layout than the one it is submitted in.
    #[error("pass {pass}: chunk {chunk} was recorded for different attachments")]
    ChunkMismatch {
        /// Pass index in the frame.
        pass: usize,
        /// Chunk index in the pass.
        chunk: usize,
    },
    /// A per-frame upload failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The device reported a validation error for the submitted work.
    #[error("device validation: {0}")]
    Validation(String),
    /// The device ran out of memory.
    #[error("out of memory")]
    OutOfMemory,
    /// The device was lost.
    #[error("device lost")]
    DeviceLost,
    /// Presenting the frame's surface image failed.
    #[error("present: {0}")]
    Present(crate::SurfaceError),
}

/// Reading a texture back failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadbackError {
    /// The handle names no live texture (or buffer).
    #[error("handle is stale or was never created")]
    InvalidHandle,
    /// The texture's format or usage cannot be read back as RGBA8, or the buffer's usage
    /// or range cannot be read.
    #[error("cannot be read back: {0}")]
    Unsupported(&'static str),
    /// Mapping the read-back buffer failed.
    #[error("map failed: {0}")]
    Map(String),
    /// The device was lost.
    #[error("device lost")]
    DeviceLost,
}

/// Creating a backend (adapter, device) failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InitError {
    /// No adapter matched the request.
    #[error("no suitable GPU adapter found: {0}")]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("device request failed: {0}")]
    Device(String),
}

/// Destroying a resource failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DestroyError {
    /// The handle names no live resource.
    #[error("{kind:?} handle is stale or was never created")]
    InvalidHandle {
        /// What kind of resource the handle names.
        kind: ResourceKind,
    },
}
