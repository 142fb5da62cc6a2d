//! What a mesh is made of ([`MeshData`], [`Vertex`]) and what the renderer checks and
//! derives from it before it keeps or uploads it: the data types and the checks that both
//! the shared mesh buffers (`meshes.rs`) and the CPU copies kept for a lost device
//! (`copies.rs`) use.

use glam::Vec3;

use crate::error::ResourceError;
use crate::scene::LocalBounds;

/// Vertex of the shared mesh buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Vertex {
    /// Position.
    pub position: [f32; 3],
    /// Normal.
    pub normal: [f32; 3],
    /// Texture coordinate.
    pub uv: [f32; 2],
}

/// Mesh data to upload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// Vertices.
    pub vertices: Vec<Vertex>,
    /// Triangle list indices.
    pub indices: Vec<u32>,
}

/// A mesh the renderer can draw: vertices, a multiple of 3 indices all naming one of them,
/// finite numbers.
pub(super) fn check_mesh(mesh: &MeshData) -> Result<(), ResourceError> {
    if mesh.vertices.is_empty() || mesh.indices.is_empty() || !mesh.indices.len().is_multiple_of(3) {
        return Err(ResourceError::Invalid("a mesh needs vertices and a multiple of 3 indices".into()));
    }
    if mesh.indices.iter().any(|&i| i as usize >= mesh.vertices.len()) {
        return Err(ResourceError::Invalid("mesh index out of range".into()));
    }
    if mesh.vertices.iter().any(|v| !v.position.iter().chain(&v.normal).chain(&v.uv).all(|x| x.is_finite())) {
        return Err(ResourceError::Invalid("mesh vertex is not finite".into()));
    }
    Ok(())
}

/// The box around a mesh's positions (of a checked mesh: some vertices).
pub(super) fn mesh_bounds(mesh: &MeshData) -> LocalBounds {
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for v in &mesh.vertices {
        lo = lo.min(Vec3::from(v.position));
        hi = hi.max(Vec3::from(v.position));
    }
    LocalBounds { center: (lo + hi) * 0.5, extent: (hi - lo) * 0.5 }
}
