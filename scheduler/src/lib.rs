//! Switchyard: a multithreaded render-command scheduler that engines embed.
//!
//! Each frame a job graph on worker threads culls the scene per view, sorts each view's
//! queue by hashed 64-bit keys with a parallel radix sort, batches it, patches cached
//! material display lists, and records command chunks in parallel; one submission thread
//! hands them to the GPU through a [`switchyard_backend::Backend`].
//!
//! The modules follow one frame's data, and each stage's output is its own type:
//!
//! | step | module | output |
//! |---|---|---|
//! | scene | [`scene`] | dense structure-of-arrays objects, slotmap handles |
//! | cull | `cull` | `VisibleList`: visible objects per view, materials they use |
//! | sort | `sort` (key layout: [`sort_key`]) | `SortedQueue`: objects in draw order and their keys |
//! | batch | `batch` | `Batches`: runs of equal state, one instanced draw each |
//! | patch | `patch` | `PatchedLists` per part (forward and depth passes, shadow passes): display lists and constant blocks per material |
//! | record | `record` | `RecordedPass`: backend command chunks, in order |
//! | submit | `submit` | the frame packet, handed to the one submission thread |
//!
//! `renderer` owns it all: [`Renderer::render_graph`] and [`Renderer::render`]
//! (`renderer/input.rs`) check what a frame is given and lead to the frame loop,
//! `render_frame` in `renderer/render.rs` (start reading there); `renderer/jobs.rs` is the
//! job graph, `graph` the executor that checks the jobs' data access. The CPU kernels (radix sort, culling loops) live in `switchyard_kernels`.
//!
//! Design choices:
//! - **Handles, not lookups**: objects, meshes, materials, shaders and textures are slotmap
//!   handles resolved to dense indices once, at edit time; hot loops run over dense arrays.
//!   A handle names the renderer that made it: a stale one, or another renderer's, is a
//!   typed error.
//! - **A declared frame** ([`frame_graph`]): cameras, targets and passes compiled once into
//!   an order, aliased targets and bytes per pass; `Renderer::render(&[View])` is the same
//!   path with one pass per view.
//! - **Structure of arrays** for culling ([`scene::Objects`]).
//! - **Flat property sheets** and **cached, patched display lists** ([`material`]).
//! - **Draws as data**: meshes share one vertex and one index buffer; workers write
//!   per-view instance indices and indirect arguments, and a state bucket becomes one
//!   multi-draw-indirect call where the backend has it.
//! - **Deterministic**: chunk boundaries depend only on the batches and the sort is stable,
//!   so the submitted stream is the same for any thread count.
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
//! // A unit quad standing on y = 0, facing +z.
//! let corner = |x: f32, y: f32| Vertex { position: [x, y, 0.0], normal: [0.0, 0.0, 1.0], uv: [x + 0.5, y] };
//! let quad = MeshData {
//!     vertices: vec![corner(-0.5, 0.0), corner(0.5, 0.0), corner(0.5, 1.0), corner(-0.5, 1.0)],
//!     indices: vec![0, 1, 2, 0, 2, 3],
//! };
//! let mesh = r.create_mesh(&quad).unwrap();
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
//! assert_eq!(Some(backend.last_frame().digest), stats.digest);
//! ```

#![deny(missing_docs)]

pub mod scene;
mod view;

mod batch;
mod cull;
mod error;
pub mod frame_graph;
mod gpu_buffer;
mod gpu_cull;
mod graph;
pub mod material;
mod occlusion;
mod patch;
mod profile;
mod record;
mod renderer;
mod sort;
mod stats;
mod submit;
mod upload;

pub use batch::Batch;
pub use error::{InitError, RenderError, ResourceError};
pub use frame_graph::{
    Attachment, BufferBinding, CallbackContext, Camera, CameraId, FrameGraph, FullscreenShader, GraphBuffer,
    GraphError, GraphWarning, LoadOp, Pass, PassBytes, PassCallback, PassContent, Queue, StoreOp, TargetId, TargetKind,
    TargetSize, MAX_FULLSCREEN_BUFFERS, MAX_FULLSCREEN_INPUTS, MAX_PASSES, MAX_SCENE_BUFFERS, MAX_SHADOW_MAPS,
    MAX_VIEWS,
};
/// The glam Switchyard's matrices and vectors are (an engine need not match its version).
pub use glam;
pub use gpu_cull::{boundary_margin, cull_on_cpu, gpu_cull_support, CullOn, AUTO_TO_CPU, AUTO_TO_GPU};
pub use graph::JobSpan;
pub use material::{
    ListCounts, MaterialBinding, MaterialDesc, PassKind, PipelineLog, PipelineLogEntry, PropertySheet, PropertyType,
    PropertyValue, ShaderDesc, ShaderPasses, INDEXED_STORAGE_BUFFERS,
};
pub use occlusion::occlusion_support;
pub use profile::wait_for_profiler;
/// The rayon whose pools [`WorkerPool::Shared`] takes.
pub use rayon;
pub use renderer::{
    CpuCopy, FrameInput, GpuCullCounts, Lighting, LogReplay, LogSkip, MemoryReport, MeshData, MeshMemory, MeshOptions,
    NeedsData, Presented, RecoverStats, Renderer, RendererConfig, Streamed, TextureData, TextureOptions, UploadToken,
    Vertex, WarmUp, WorkerPool, MAX_SHADOW_VIEWS,
};
#[cfg(feature = "reference")]
pub use renderer::{GpuCullView, ReferenceFrame, ViewOutput};
pub use scene::{
    HandleKind, MaterialHandle, MeshHandle, ObjectDesc, ObjectId, SceneError, ShaderHandle, TextureHandle,
    CASTS_SHADOWS,
};
pub use sort::key as sort_key;
pub use sort::key::{SortKey, SortKeyFields};
pub use stats::{FrameStats, GpuTimes, PassTraffic, UploadStats};
pub use submit::SubmitReport;
pub use switchyard_backend as backend;
/// The wgpu-profiler whose scopes time the wgpu backend's passes
/// ([`backend::wgpu::WgpuBackend::gpu_profile`] gives them): an engine writes them out with
/// its chrome-trace or puffin output, or nests its own scopes in the same version.
pub use switchyard_backend::wgpu_profiler;
pub use view::View;
/// The wgpu Switchyard's wgpu backend is built on: an engine that gives Switchyard its own
/// device ([`backend::wgpu::WgpuBackend`]) makes it with this one.
pub use wgpu;

#[cfg(test)]
mod readme {
    /// README's embedding snippet is `examples/embedding.rs`'s `embed` body line for line
    /// (that example compiles with the tests and runs in CI).
    #[test]
    fn the_embedding_snippet_is_the_compiled_example() {
        let readme = include_str!("../../README.md");
        let at = readme.find("## Embedding it").expect("README has the section");
        let start = at + readme[at..].find("```rust\n").expect("a rust block") + "```rust\n".len();
        let snippet = &readme[start..start + readme[start..].find("```").expect("the block ends")];
        let example = include_str!("../examples/embedding.rs");
        let (a, b) = (example.find("// README: begin\n").unwrap(), example.find("    // README: end").unwrap());
        let body = &example[a + "// README: begin\n".len()..b];
        let lines = |s: &str| s.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(lines(snippet), lines(body), "README's snippet and examples/embedding.rs differ");
    }
}
