//! Switchyard: a multithreaded render-command scheduler that engines embed.
//!
//! Each frame a job graph on worker threads culls the scene per view, sorts each view's
//! queue by hashed 64-bit keys with a parallel radix sort, patches cached material display
//! lists, and records command chunks in parallel; one submission thread hands them to the
//! GPU through a [`switchyard_backend::Backend`].
//!
//! Design choices:
//! - **Handles, not lookups**: objects, meshes, materials, shaders and textures are slotmap
//!   handles resolved to dense indices once, at edit time; hot loops run over dense arrays.
//! - **Structure of arrays** for culling ([`scene::Objects`]).
//! - **Flat property sheets** and **cached, patched display lists** ([`material`]).
//! - **Draws as data**: meshes share one vertex and one index buffer; workers write
//!   per-view instance indices and indirect arguments, and a state bucket becomes one
//!   multi-draw-indirect call where the backend has it.
//! - **Deterministic**: chunk boundaries depend only on the batches ([`frame::chunk_bounds`]), the sort is
//!   stable, so the submitted stream is the same for any thread count.
//!
//! Start at [`Renderer::render`].

#![deny(missing_docs)]

pub mod city;
mod error;
pub mod frame;
pub mod graph;
pub mod material;
mod par;
pub mod profile;
mod renderer;
pub mod scene;
pub mod sort;
mod stats;
mod submit;
pub mod view;

pub use error::*;
pub use material::{ListCounts, MaterialDesc, PassKind, PropertySheet, PropertyType, PropertyValue, ShaderDesc};
pub use renderer::{
    InitError, Lighting, MeshData, ReferenceFrame, Renderer, RendererConfig, Vertex, ViewOutput, MAX_SHADOW_VIEWS,
    MAX_VIEWS,
};
pub use scene::{MaterialHandle, MeshHandle, ObjectDesc, ObjectId, ShaderHandle, TextureHandle, CASTS_SHADOWS};
pub use stats::FrameStats;
pub use submit::SubmitReport;
pub use switchyard_backend as backend;
pub use view::View;
