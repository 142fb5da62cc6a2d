//! One copy of mesh and texture data: what the renderer keeps on the CPU after an upload,
//! and what it asks the engine for again after a lost device.
//!
//! By default a mesh's vertices and indices live on the CPU only until the frame after
//! [`Renderer::create_mesh`] hands them to the submission thread, and a texture's texels
//! only for the call of [`Renderer::create_texture`]: the GPU holds the one copy (growing
//! the shared mesh buffers copies GPU to GPU). A resource made with [`CpuCopy::Keep`]
//! keeps its data, and [`Renderer::recover`] uploads it to the new device by itself; for
//! every other one it lists a [`NeedsData`] ([`RecoverStats::needs_data`], and
//! [`Renderer::needs_data`] until supplied), which the engine answers with
//! [`Renderer::resupply_mesh`] / [`Renderer::resupply_texture`]. Until then such a mesh
//! draws nothing (its index range holds zeros: degenerate triangles) and such a texture
//! samples as transparent black (a new texture is zero-filled).
//!
//! [`RecoverStats::needs_data`]: super::RecoverStats::needs_data

use glam::Vec3;
use switchyard_backend::Backend;

use super::mesh_data::{check_mesh, mesh_bounds, MeshData};
use super::Renderer;
use crate::error::ResourceError;
use crate::scene::{HandleKind, MeshHandle, TextureHandle};

/// Whether the renderer keeps a resource's data on the CPU after uploading it
/// ([`RendererConfig::cpu_copies`](super::RendererConfig::cpu_copies) for
/// [`Renderer::create_mesh`] and [`Renderer::create_texture`]; per resource with
/// [`Renderer::create_mesh_with`] and [`Renderer::create_texture_with`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuCopy {
    /// The GPU holds the only copy once the upload is handed over (the default); after a
    /// lost device the engine supplies the data again ([`NeedsData`]).
    #[default]
    Drop,
    /// Kept on the CPU, and uploaded again by [`Renderer::recover`] without the engine.
    Keep,
}

/// A resource whose data the renderer needs again (after a lost device, for resources
/// made with [`CpuCopy::Drop`]): answer with [`Renderer::resupply_mesh`] or
/// [`Renderer::resupply_texture`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NeedsData {
    /// A mesh: the same vertices and indices it was made with.
    Mesh(MeshHandle),
    /// A texture: the same texels.
    Texture(TextureHandle),
}

/// Where a mesh's data is, besides the GPU (per dense mesh).
#[derive(Clone, Debug, Default)]
pub(super) enum MeshCopy {
    /// On the GPU only.
    #[default]
    Gpu,
    /// Queued for the upload thread (then on the GPU only).
    Pending,
    /// Kept on the CPU ([`CpuCopy::Keep`]).
    Kept(Box<MeshData>),
    /// Lost with a device; the engine must supply it again.
    Awaiting,
}

impl<B: Backend> Renderer<B> {
    /// The resources whose data the renderer needs again (made with [`CpuCopy::Drop`] and
    /// then moved to a new device by [`Renderer::recover`]), meshes first, in handle order.
    pub fn needs_data(&self) -> Vec<NeedsData> {
        let s = &self.res;
        let meshes = s
            .mesh_handles
            .iter()
            .filter(|&(_, &d)| matches!(s.meshes.copies[d as usize], MeshCopy::Awaiting))
            .map(|(h, _)| NeedsData::Mesh(h));
        let textures = s.textures.iter().filter(|(_, t)| t.awaiting).map(|(h, _)| NeedsData::Texture(h));
        meshes.chain(textures).collect()
    }

    /// Supplies again the data of a mesh that [`Renderer::needs_data`] lists: the vertices
    /// and indices it was made with (same counts and bounds, else `Invalid`). They upload
    /// first of the queue into the mesh's ranges (nothing drawn until then), and the mesh keeps its handle and
    /// [`CpuCopy`] choice. A mesh that does not need its data is `HasData`; a stale handle
    /// `StaleHandle`; nothing changes on an error.
    pub fn resupply_mesh(&mut self, m: MeshHandle, mesh: &MeshData) -> Result<(), ResourceError> {
        let &d = self.res.mesh_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Mesh))?;
        let s = &mut self.res;
        let d = d as usize;
        if !matches!(s.meshes.copies[d], MeshCopy::Awaiting) {
            return Err(ResourceError::HasData(HandleKind::Mesh));
        }
        check_mesh(mesh)?;
        let r = s.mesh_ranges[d];
        if mesh.vertices.len() != s.meshes.vertex_counts[d] as usize || mesh.indices.len() != r.index_count as usize {
            return Err(ResourceError::Invalid(format!(
                "resupplied mesh has {} vertices and {} indices, it was made with {} and {}",
                mesh.vertices.len(),
                mesh.indices.len(),
                s.meshes.vertex_counts[d],
                r.index_count
            )));
        }
        let (b, was) = (mesh_bounds(mesh), s.mesh_bounds[d]);
        let close = |a: Vec3, b: Vec3| (a - b).abs().max_element() <= 1e-4 * (1.0 + a.abs().max_element());
        if !close(b.center, was.center) || !close(b.extent, was.extent) {
            return Err(ResourceError::Invalid("resupplied mesh's bounds differ from the mesh's".into()));
        }
        s.meshes.copies[d] = MeshCopy::Pending;
        // First in the queue: draws nothing until a frame takes it.
        let options = super::MeshOptions { priority: u8::MAX, ..Default::default() };
        self.queue_mesh(d as u32, mesh, &options, None);
        Ok(())
    }

    /// Supplies again the levels of a texture that [`Renderer::needs_data`] lists: those it
    /// was made with (as many, each as long, else `Invalid`; one where the rest were
    /// generated, which are made again); uploaded at once. A texture that does not need
    /// its data is `HasData`; nothing changes on an error.
    pub fn resupply_texture(&mut self, t: TextureHandle, levels: &[&[u8]]) -> Result<(), ResourceError> {
        let tex = self.res.textures.get(t).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?;
        if !tex.awaiting {
            return Err(ResourceError::HasData(HandleKind::Texture));
        }
        tex.spec.check_levels(levels)?;
        let b = &*self.res.backend;
        for (l, d) in levels.iter().enumerate() {
            b.write_texture_level(tex.id, l as u32, d)?;
        }
        if tex.spec.generate {
            b.generate_mips(tex.id)?;
        }
        self.res.textures.get_mut(t).expect("looked up above").awaiting = false;
        Ok(())
    }
}
