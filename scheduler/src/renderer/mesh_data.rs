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

/// How closely a vertex normal must follow its triangle's face normal (the cosine of
/// about 0.8 degrees) for [`MeshData::welded_flat`].
const FLAT_COSINE: f32 = 0.9999;

impl MeshData {
    /// The mesh with its vertices welded where it is flat-shaded: where every triangle's
    /// vertex normals are its face normal (the normal of its counter-clockwise winding,
    /// within about 0.8 degrees), vertices that differ only in their normal become one, so
    /// a box of 24 vertices (four per face, a normal each) becomes its 8 corners. Draw the
    /// result with a shader that derives each face's normal from its positions (the lit
    /// shader's `FLAT` keyword): the same pixels from fewer vertices. A welded vertex
    /// keeps the normal of its first use, which that shading does not read.
    ///
    /// `None` where the mesh is not flat-shaded (a normal differs from its face's; a
    /// triangle of no area; an index or number the renderer would refuse) or where no two
    /// vertices weld. Mesh import, not the frame loop: it hashes every vertex.
    pub fn welded_flat(&self) -> Option<MeshData> {
        check_mesh(self).ok()?;
        for tri in self.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| self.vertices[tri[k] as usize]);
            let face = (Vec3::from(b.position) - Vec3::from(a.position))
                .cross(Vec3::from(c.position) - Vec3::from(a.position))
                .try_normalize()?;
            for v in [a, b, c] {
                if Vec3::from(v.normal).try_normalize()?.dot(face) < FLAT_COSINE {
                    return None;
                }
            }
        }
        // Bits, with -0.0 as 0.0 (adding 0.0 does that).
        let bits = |x: f32| (x + 0.0).to_bits();
        let key = |v: &Vertex| (v.position.map(bits), v.uv.map(bits));
        let mut first = ahash::AHashMap::with_capacity(self.vertices.len());
        let mut vertices = Vec::new();
        let mut remap = Vec::with_capacity(self.vertices.len());
        for v in &self.vertices {
            let at = *first.entry(key(v)).or_insert_with(|| {
                vertices.push(*v);
                vertices.len() as u32 - 1
            });
            remap.push(at);
        }
        if vertices.len() == self.vertices.len() {
            return None;
        }
        let indices = self.indices.iter().map(|&i| remap[i as usize]).collect();
        Some(MeshData { vertices, indices })
    }
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
