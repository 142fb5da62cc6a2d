//! Typed errors of the scheduler, one enum per operation.

use switchyard_backend::{CreateError, ReadbackError, RecordError, SubmitError, WriteError};

/// A handle kind, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandleKind {
    /// An object.
    Object,
    /// A mesh.
    Mesh,
    /// A material.
    Material,
    /// A shader.
    Shader,
    /// A texture.
    Texture,
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
        expected: crate::PropertyType,
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
    /// The backend refused to create it.
    #[error(transparent)]
    Backend(#[from] CreateError),
    /// The backend refused an upload.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A scene edit (insert, update, remove objects) failed; the scene is unchanged.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SceneError {
    /// An object, mesh or material handle is stale.
    #[error("{kind:?} handle at position {index} is stale or was never created")]
    StaleHandle {
        /// What kind of handle.
        kind: HandleKind,
        /// Position in the batch of edits.
        index: usize,
    },
    /// A value is out of range (layer >= 16, non-finite transform).
    #[error("invalid value at position {index}: {what}")]
    Invalid {
        /// Position in the batch of edits.
        index: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// The scene is full (`RendererConfig::max_objects`).
    #[error("scene capacity {capacity} exceeded")]
    Full {
        /// The capacity.
        capacity: usize,
    },
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
    #[error("display list for material {material}: {source}")]
    DisplayList {
        /// Material dense index.
        material: u32,
        /// The cause.
        source: ResourceError,
    },
    /// A per-frame buffer (instances, indirect arguments) could not be created or grown.
    #[error("frame buffer: {0}")]
    FrameBuffer(CreateError),
    /// The backend rejected a recorded chunk (a scheduler bug).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The backend failed to submit.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// Reading back failed.
    #[error(transparent)]
    Readback(#[from] ReadbackError),
    /// The submission thread is gone (it panicked or the renderer is shutting down).
    #[error("submission thread stopped")]
    SubmitThreadGone,
}
