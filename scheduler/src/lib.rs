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
//!
//! ```
//! use std::sync::Arc;
//! use glam::{Mat4, Vec3};
//! use switchyard::backend::null::NullBackend;
//! use switchyard::*;
//!
//! let backend = Arc::new(NullBackend::new(false));
//! let config = RendererConfig { threads: 2, max_objects: 1000, ..RendererConfig::default() };
//! let mut r = Renderer::new(backend.clone(), config).unwrap();
//! let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
//! let mesh = r.create_mesh(&city::box_mesh(1.0, 1.0, 1.0)).unwrap();
//! let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
//! let objects: Vec<ObjectDesc> = (0..100)
//!     .map(|i| ObjectDesc {
//!         mesh,
//!         material,
//!         transform: Mat4::from_translation(Vec3::new(i as f32 * 2.0 - 100.0, 0.0, 0.0)),
//!         layer: 0,
//!         flags: CASTS_SHADOWS,
//!     })
//!     .collect();
//! r.insert_objects(&objects).unwrap();
//! let eye = Vec3::new(0.0, 20.0, 60.0);
//! let view = View {
//!     label: "main",
//!     view_proj: Mat4::perspective_rh(1.0, 16.0 / 9.0, 0.5, 500.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
//!     eye,
//!     far: 500.0,
//!     layer_mask: u16::MAX,
//!     pass: PassKind::Forward,
//! };
//! let stats = r.render(&[view]).unwrap();
//! assert!(stats.visible[0] > 0 && stats.draw_calls > 0);
//! r.flush().unwrap();
//! assert_eq!(backend.last_frame().digest, stats.digest);
//! ```

#![deny(missing_docs)]

pub mod city;
mod error;
pub mod frame;
pub mod graph;
pub mod material;
pub mod par;
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
