//! The errors of the renderer's operations, one enum per operation: creating a renderer
//! ([`InitError`]), creating or changing a resource ([`ResourceError`]), compiling a frame
//! graph ([`GraphError`]), rendering a frame ([`RenderError`]). Each keeps the backend's error it wraps, so a lost device is
//! recognised wherever the backend reports it (`is_device_lost`).

use switchyard_backend::{CreateError, ReadbackError, RecordError, SubmitError, SurfaceError, WriteError};

use crate::material::sheet::PropertyType;
use crate::scene::{HandleKind, MaterialHandle};

/// Creating a renderer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// A configuration value is out of range.
    #[error("invalid config: {0}")]
    Config(&'static str),
    /// The backend refused a resource.
    #[error(transparent)]
    Backend(#[from] CreateError),
    /// The backend refused an upload (a lost device among others).
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The worker pool could not start.
    #[error("thread pool: {0}")]
    Pool(String),
    /// The submission thread could not start.
    #[error("submission thread: {0}")]
    Thread(String),
    /// The frame graph set does not fit the new backend ([`Renderer::recover`](crate::Renderer::recover): a target
    /// larger than its textures, a sample count it lacks).
    #[error("frame graph: {0}")]
    Graph(#[from] GraphError),
}

/// Creating or changing a resource (shader, mesh, material, texture) failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceError {
    /// A handle is stale or was never created.
    #[error("{0:?} handle is stale or was never created")]
    StaleHandle(HandleKind),
    /// A property the material's shader does not declare.
    #[error("unknown property `{0}`")]
    UnknownProperty(String),
    /// A property set with a type other than its declaration.
    #[error("property `{name}` is declared as {expected:?}")]
    PropertyType {
        /// Property name.
        name: String,
        /// Its declared type.
        expected: PropertyType,
    },
    /// A keyword the shader does not declare.
    #[error("unknown keyword `{0}`")]
    UnknownKeyword(String),
    /// The description is malformed.
    #[error("invalid description: {0}")]
    Invalid(String),
    /// The resource is still referenced (a mesh or material used by objects).
    #[error("{0:?} still in use by {1} objects")]
    InUse(HandleKind, usize),
    /// Data supplied again for a resource that has its data ([`Renderer::needs_data`](crate::Renderer::needs_data)
    /// does not list it).
    #[error("{0:?} does not need its data again")]
    HasData(HandleKind),
    /// The backend refused to create it.
    #[error(transparent)]
    Backend(#[from] CreateError),
    /// The backend refused an upload.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl ResourceError {
    /// Whether the backend refused because its device is lost ([`Renderer::recover`](crate::Renderer::recover)).
    pub fn is_device_lost(&self) -> bool {
        matches!(self, Self::Backend(CreateError::DeviceLost) | Self::Write(WriteError::DeviceLost))
    }
}

/// Rendering a frame failed. The next frame can still succeed.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum RenderError {
    /// A view is malformed (non-finite matrix, too many views, zero-size target).
    #[error("invalid view {index}: {what}")]
    InvalidView {
        /// View index.
        index: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A job panicked; the frame was dropped.
    #[error("job `{job}` panicked: {message}")]
    JobPanicked {
        /// The job's name.
        job: String,
        /// The panic message.
        message: String,
    },
    /// Building a display list failed (pipeline creation).
    #[error("display list for material {material:?}: {source}")]
    DisplayList {
        /// The material.
        material: MaterialHandle,
        /// The cause.
        source: ResourceError,
    },
    /// A per-frame buffer (instances, indirect arguments, a fullscreen pass's uniform
    /// block) could not be created or grown.
    #[error("frame buffer: {0}")]
    FrameBuffer(CreateError),
    /// The upload thread's staging memory or mip pipelines could not be made ahead
    /// ([`Renderer::warm_up`](crate::Renderer::warm_up)).
    #[error("preparing uploads: {0}")]
    Uploads(CreateError),
    /// A texture of the graph's target could not be created.
    #[error("target `{target}`: {source}")]
    Target {
        /// The target (a physical texture several aliased targets share is named by its
        /// first).
        target: String,
        /// The backend's reason.
        source: CreateError,
    },
    /// A bind group or layout of a pass could not be created.
    #[error("pass `{pass}`: bind group: {source}")]
    BindGroup {
        /// The pass.
        pass: String,
        /// The backend's reason.
        source: CreateError,
    },
    /// An upload the frame or its plan needs failed (a lost device among others).
    #[error(transparent)]
    Write(WriteError),
    /// The backend rejected a recorded chunk (a scheduler bug).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The submission thread's backend failed a frame handed to it: returned by the next
    /// call that collects finished frames (`render*`, [`Renderer::flush`](crate::Renderer::flush),
    /// [`Renderer::poll`](crate::Renderer::poll)), naming the frame.
    #[error("frame {frame} failed on submission: {source}")]
    Submit {
        /// The frame that failed ([`FrameStats::frame`](crate::FrameStats::frame)).
        frame: u64,
        /// The backend's error.
        source: SubmitError,
    },
    /// The device is lost: this frame did nothing, and so will every frame until
    /// [`Renderer::recover`](crate::Renderer::recover) gives the renderer a new backend. (Every operation whose
    /// backend error was a device loss reports this instead.)
    #[error("device lost: Renderer::recover needs a new backend")]
    DeviceLost,
    /// A presentation surface failed in a way configuring it again once did not mend (or
    /// its handle is stale).
    #[error(transparent)]
    Surface(SurfaceError),
    /// Reading back failed.
    #[error(transparent)]
    Readback(#[from] ReadbackError),
    /// The submission thread is gone (it panicked or the renderer is shutting down).
    #[error("submission thread stopped")]
    SubmitThreadGone,
    /// The frame's job graph leaves two conflicting jobs unordered (a scheduler bug).
    #[error("job graph: {0}")]
    JobGraph(String),
    /// A target size of zero or over the device's limit.
    #[error("invalid target size {width}x{height} (each side 1..={maximum})")]
    InvalidSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// The device's largest texture side.
        maximum: u32,
    },
    /// The output texture given to [`Renderer::render_to`](crate::Renderer::render_to) does not fit.
    #[error("invalid output texture: {what}")]
    InvalidOutput {
        /// What is wrong.
        what: &'static str,
    },
    /// The frame graph cannot be compiled (the error names the pass or target).
    #[error("frame graph: {0}")]
    Graph(#[from] GraphError),
    /// A fullscreen pass's shader or pipeline was refused.
    #[error("pass `{pass}`: {source}")]
    Shader {
        /// The pass.
        pass: String,
        /// The backend's reason.
        source: CreateError,
    },
    /// [`Renderer::render_graph`](crate::Renderer::render_graph) without a graph set.
    #[error("no frame graph is set (Renderer::set_graph)")]
    NoGraph,
    /// A frame's cameras do not fill the graph's camera slots.
    #[error("the graph has {expected} cameras, the frame gives {given}")]
    CameraCount {
        /// The graph's camera slots.
        expected: usize,
        /// Cameras given.
        given: usize,
    },
    /// A graph buffer given to [`Renderer::bind_buffer`](crate::Renderer::bind_buffer) or
    /// read by a fullscreen or scene pass: another graph's, declared without a binding, an
    /// engine buffer that does not fit it, or none bound when a frame needs it.
    #[error("graph buffer `{buffer}`: {what}")]
    Buffer {
        /// The buffer's name (or its index when the graph has no such buffer).
        buffer: String,
        /// What is wrong.
        what: &'static str,
    },
    /// An external target given for a frame does not fit, or one the graph uses is missing.
    #[error("external target `{target}`: {what}")]
    InvalidTarget {
        /// The target's name (or its index when the graph has no such target).
        target: String,
        /// What is wrong.
        what: &'static str,
    },
}

impl RenderError {
    /// Whether this error, or the backend error inside it, is a lost device.
    pub fn is_device_lost(&self) -> bool {
        use RenderError as E;
        match self {
            E::DeviceLost
            | E::FrameBuffer(CreateError::DeviceLost)
            | E::Uploads(CreateError::DeviceLost)
            | E::Target { source: CreateError::DeviceLost, .. }
            | E::BindGroup { source: CreateError::DeviceLost, .. }
            | E::Write(WriteError::DeviceLost)
            | E::Record(RecordError::DeviceLost)
            | E::Readback(ReadbackError::DeviceLost)
            | E::Shader { source: CreateError::DeviceLost, .. } => true,
            E::Submit { source, .. } => matches!(
                source,
                SubmitError::DeviceLost
                    | SubmitError::Write(WriteError::DeviceLost)
                    | SubmitError::Present(SurfaceError::DeviceLost)
            ),
            E::Surface(SurfaceError::DeviceLost) => true,
            E::DisplayList { source, .. } => source.is_device_lost(),
            _ => false,
        }
    }
}

/// A graph description that cannot be compiled. Each variant names the pass or target.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[allow(missing_docs)] // each variant's message says what it means
pub enum GraphError {
    #[error("two {what} are named `{name}`")]
    DuplicateName { what: &'static str, name: String },
    #[error("pass `{pass}` refers to target {target}, which the graph does not declare")]
    UnknownTarget { pass: String, target: u32 },
    #[error("pass `{pass}` refers to buffer {buffer}, which the graph does not declare")]
    UnknownBuffer { pass: String, buffer: u32 },
    #[error("pass `{pass}` has no attachment")]
    NoAttachments { pass: String },
    #[error("target `{target}`: {what}")]
    InvalidTarget { target: String, what: &'static str },
    #[error("pass `{pass}`, target `{target}`: {what}")]
    FormatMismatch { pass: String, target: String, what: &'static str },
    #[error("pass `{pass}`: its attachments differ in size or sample count")]
    SizeMismatch { pass: String },
    #[error("pass `{pass}` samples `{target}`, which it also renders to")]
    SampledAndWritten { pass: String, target: String },
    #[error("pass `{pass}` samples `{target}`, which no pass writes")]
    MissingInput { pass: String, target: String },
    #[error("pass `{pass}` samples `{target}`, which is multisampled (resolve it first)")]
    SampledMultisampled { pass: String, target: String },
    #[error("pass `{pass}` is on a dependency cycle")]
    Cycle { pass: String },
    #[error("pass `{pass}` uses camera {camera}, which the graph does not declare")]
    UnknownCamera { pass: String, camera: u32 },
    #[error("pass `{pass}`: {what}")]
    InvalidPass { pass: String, what: &'static str },
    #[error("the graph has no pass")]
    Empty,
}
