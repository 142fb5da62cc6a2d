//! Meshes in the shared vertex and index buffers, and removing meshes and textures.
//!
//! Every mesh lives in one vertex buffer and one index buffer shared by all (one vertex
//! and index binding per frame, whatever the mesh). A mesh takes the first free range
//! that fits in each ([`FreeList`], first fit, neighbours merged) or goes at the end; a
//! removed mesh gives its ranges back, so an engine that streams meshes in and out keeps
//! the buffers at the size of what is alive plus fragmentation, not of everything it ever
//! loaded. Mesh data stays on the CPU only until the next frame uploads it, unless the
//! engine asks to keep it (`copies.rs`).

use std::ops::Range;

use switchyard_backend::{Backend, BufferCopy, BufferUsage, CreateError, TextureId};

use super::copies::{CpuCopy, MeshCopy};
use super::mesh_data::{check_mesh, mesh_bounds, MeshData};
use super::residency::{MeshOptions, Residency};
use super::retire::Retiree;
use super::Renderer;
use crate::error::ResourceError;
use crate::gpu_buffer::buffer;
use crate::gpu_buffer::GrowBuffer;
use crate::record::MeshRange;
use crate::scene::{HandleKind, MeshHandle, TextureHandle};

/// Free element ranges of one shared buffer: sorted, disjoint, never adjacent.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FreeList {
    ranges: Vec<Range<u32>>,
}

impl FreeList {
    /// The start of the first free range of at least `n` elements.
    pub(crate) fn find(&self, n: u32) -> Option<u32> {
        self.ranges.iter().find(|r| r.len() >= n as usize).map(|r| r.start)
    }

    /// Marks `at..at + n` used; it must lie in a free range.
    pub(crate) fn take(&mut self, at: u32, n: u32) {
        let i = self.ranges.iter().position(|r| r.start <= at && at + n <= r.end).expect("a free range holds it");
        let r = self.ranges[i].clone();
        let (before, after) = (r.start..at, at + n..r.end);
        match (before.is_empty(), after.is_empty()) {
            (true, true) => {
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i] = after,
            (false, true) => self.ranges[i] = before,
            (false, false) => {
                self.ranges[i] = before;
                self.ranges.insert(i + 1, after);
            }
        }
    }

    /// Gives `r` back (it must not overlap a free range), merged with its neighbours.
    pub(crate) fn give(&mut self, r: Range<u32>) {
        if r.is_empty() {
            return;
        }
        let i = self.ranges.partition_point(|f| f.end <= r.start);
        debug_assert!(self.ranges.get(i).is_none_or(|f| f.start >= r.end), "freed twice");
        let joins_prev = i > 0 && self.ranges[i - 1].end == r.start;
        let joins_next = self.ranges.get(i).is_some_and(|f| f.start == r.end);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ranges[i - 1].end = self.ranges[i].end;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].end = r.end,
            (false, true) => self.ranges[i].start = r.start,
            (false, false) => self.ranges.insert(i, r),
        }
    }

    /// Free elements in all.
    pub(crate) fn total(&self) -> u64 {
        self.ranges.iter().map(|r| r.len() as u64).sum()
    }
}

/// The shared mesh storage: where each dense mesh sits, its bounds, and
/// what is free.
#[derive(Debug, Default)]
pub(crate) struct MeshStore {
    pub(crate) free_vertices: FreeList,
    pub(crate) free_indices: FreeList,
    /// Dense mesh slots of removed meshes, reused first (lowest first, so the same
    /// operations give the same dense indices).
    pub(crate) free_slots: std::collections::BTreeSet<u32>,
    /// Vertices of each dense mesh (its range in the vertex buffer).
    pub(crate) vertex_counts: Vec<u32>,
    /// Where each dense mesh's data is besides the GPU.
    pub(super) copies: Vec<super::copies::MeshCopy>,
    /// Whether each dense mesh draws its own ranges yet (`residency.rs`).
    pub(super) residency: Vec<super::residency::Residency>,
    /// Queued meshes that draw each dense mesh in their place.
    pub(super) fallback_users: Vec<u32>,
    /// Removed textures for reuse (released by the same path as mesh ranges).
    pub(crate) pool: super::textures::TexturePool,
}

impl super::retire::FreeRanges for MeshStore {
    fn give(&mut self, vertices: Range<u32>, indices: Range<u32>) {
        self.free_vertices.give(vertices);
        self.free_indices.give(indices);
    }

    fn pool_texture(&mut self, id: TextureId, key: super::retire::PoolKey, bytes: u64) -> bool {
        self.pool.put(key, id, bytes)
    }
}

/// What [`Renderer::mesh_memory`] reports: the shared buffers' elements, in use and free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshMemory {
    /// Meshes alive.
    pub meshes: usize,
    /// Vertices the vertex buffer holds up to its last used one (live and free).
    pub vertices: u64,
    /// Of those, free (removed meshes' ranges not taken again yet).
    pub free_vertices: u64,
    /// Of those, removed meshes' ranges that frames queued or on the GPU may still draw:
    /// free once they finish.
    pub retired_vertices: u64,
    /// Indices the index buffer holds up to its last used one (live and free).
    pub indices: u64,
    /// Of those, free.
    pub free_indices: u64,
    /// Of those, retired (free once the frames that may draw them finish).
    pub retired_indices: u64,
    /// Bytes of the vertex and index buffers on the GPU (their capacity).
    pub gpu_bytes: u64,
}

impl<B: Backend> Renderer<B> {
    /// Makes a mesh in the shared vertex and index buffers: its ranges are the first free
    /// ones that fit (removed meshes' space), or at their end (growing them); its data is
    /// queued for the upload thread and the handle returned at once (`residency.rs`: its
    /// objects draw nothing until a frame takes the upload). Its data is kept on the CPU
    /// as [`RendererConfig::cpu_copies`](super::RendererConfig::cpu_copies) says
    /// ([`Renderer::create_mesh_with`] chooses per mesh, with a priority and a fallback).
    /// On an error nothing stays: no queued data, no range taken.
    pub fn create_mesh(&mut self, mesh: &MeshData) -> Result<MeshHandle, ResourceError> {
        self.create_mesh_with(mesh, self.config.cpu_copies)
    }

    /// [`Renderer::create_mesh`] with [`MeshOptions`] (or just a [`CpuCopy`]): with
    /// [`CpuCopy::Drop`] the data is queued until a frame hands it to the upload thread
    /// and then lives on the GPU only; `priority` orders the queue; `fallback` (a resident
    /// mesh, else `Invalid`) is drawn until the mesh is resident.
    pub fn create_mesh_with(
        &mut self,
        mesh: &MeshData,
        options: impl Into<MeshOptions>,
    ) -> Result<MeshHandle, ResourceError> {
        let options = options.into();
        // Like every resource, refused while the device is lost (its upload would only
        // reach the backend with the next frame).
        if self.device.lost {
            return Err(ResourceError::Backend(CreateError::DeviceLost));
        }
        check_mesh(mesh)?;
        let fallback = options.fallback.map(|f| self.resident_mesh(f)).transpose()?;
        let (nv, ni) = (mesh.vertices.len(), mesh.indices.len());
        let s = &mut self.res;
        if (s.vertex_end as usize + nv) as u64 >= u64::from(i32::MAX as u32)
            || (s.index_end as usize + ni) as u64 >= u64::from(u32::MAX)
        {
            return Err(ResourceError::Invalid("the shared mesh buffers are full".into()));
        }
        let (nv, ni) = (nv as u32, ni as u32);
        let v_at = s.meshes.free_vertices.find(nv).unwrap_or(s.vertex_end);
        let i_at = s.meshes.free_indices.find(ni).unwrap_or(s.index_end);
        let b = &*s.backend;
        // A refused growth leaves the buffers as they were, or (the index buffer refused)
        // the vertex buffer larger with its copy queued: nothing of this mesh.
        grow(b, &mut s.vertices, "mesh-vertices", MESH_VERTICES, v_at, nv, 32).map(|c| s.pending_copies.extend(c))?;
        grow(b, &mut s.indices, "mesh-indices", MESH_INDICES, i_at, ni, 4).map(|c| s.pending_copies.extend(c))?;
        if v_at < s.vertex_end {
            s.meshes.free_vertices.take(v_at, nv);
        }
        if i_at < s.index_end {
            s.meshes.free_indices.take(i_at, ni);
        }
        s.vertex_end = s.vertex_end.max(v_at + nv);
        s.index_end = s.index_end.max(i_at + ni);
        let range = MeshRange { first_index: i_at, index_count: ni, base_vertex: v_at as i32 };
        let bounds = mesh_bounds(mesh);
        let kept = match options.copy {
            CpuCopy::Keep => MeshCopy::Kept(Box::new(mesh.clone())),
            CpuCopy::Drop => MeshCopy::Pending,
        };
        let dense = match s.meshes.free_slots.pop_first() {
            Some(d) => {
                s.mesh_ranges[d as usize] = range;
                s.mesh_bounds[d as usize] = bounds;
                s.meshes.vertex_counts[d as usize] = nv;
                s.meshes.copies[d as usize] = kept;
                d
            }
            None => {
                s.mesh_ranges.push(range);
                s.draw_ranges.push(MeshRange::default());
                s.mesh_bounds.push(bounds);
                s.meshes.vertex_counts.push(nv);
                s.meshes.copies.push(kept);
                s.meshes.residency.push(Residency::Resident);
                s.meshes.fallback_users.push(0);
                s.mesh_ranges.len() as u32 - 1
            }
        };
        // A later frame takes the upload into a batch (`residency.rs`).
        self.queue_mesh(dense, mesh, &options, fallback);
        Ok(self.res.mesh_handles.insert(dense))
    }

    /// Removes a mesh no object uses; its ranges in the shared buffers are free for later
    /// meshes once the frames queued or on the GPU that may draw it have finished (see
    /// `retire.rs`). A stale handle or a mesh in use is a typed error that changes nothing.
    pub fn remove_mesh(&mut self, m: MeshHandle) -> Result<(), ResourceError> {
        let &i = self.res.mesh_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Mesh))?;
        let users =
            self.scene.mesh_users.get(i as usize).copied().unwrap_or(0) + self.res.meshes.fallback_users[i as usize];
        if users > 0 {
            return Err(ResourceError::InUse(HandleKind::Mesh, users as usize));
        }
        self.res.mesh_handles.remove(m);
        let s = &mut self.res;
        let r = s.mesh_ranges[i as usize];
        let first = r.base_vertex as u32;
        let ranges = Retiree::MeshRanges {
            vertices: first..first + s.meshes.vertex_counts[i as usize],
            indices: r.first_index..r.first_index + r.index_count,
        };
        self.device.retired.retire(ranges, &*s.backend, &mut s.meshes);
        // An upload not taken yet is not needed.
        s.uploads.cancel_mesh(i);
        if let Residency::Queued(Some(f)) = s.meshes.residency[i as usize] {
            s.meshes.fallback_users[f as usize] -= 1;
        }
        s.meshes.residency[i as usize] = Residency::Resident;
        s.draw_ranges[i as usize] = MeshRange::default();
        s.meshes.copies[i as usize] = MeshCopy::Gpu;
        // The dense slot is the CPU's alone (recorded draws name ranges): free at once.
        s.meshes.free_slots.insert(i);
        Ok(())
    }

    /// Removes a texture no material uses (a material keeps its texture bound) and no
    /// queued texture falls back to; once the frames that may sample it have finished it
    /// goes to the texture pool (a later texture of its shape takes it: `textures.rs`) or,
    /// where the pool is full, is destroyed.
    pub fn remove_texture(&mut self, t: TextureHandle) -> Result<(), ResourceError> {
        let tex = self.res.textures.get(t).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?;
        let (id, fallback_users, fallback, spec) = (tex.id, tex.fallback_users, tex.fallback, tex.spec);
        let users = self.res.library.get_mut().materials.iter().flatten().filter(|m| m.texture == Some(t)).count();
        if users + fallback_users as usize > 0 {
            return Err(ResourceError::InUse(HandleKind::Texture, users + fallback_users as usize));
        }
        self.res.textures.remove(t);
        let s = &mut self.res;
        s.uploads.cancel_texture(t);
        if let Some(f) = fallback.and_then(|f| s.textures.get_mut(f)) {
            f.fallback_users -= 1;
        }
        // Pooled for a later texture of its shape once no frame samples it.
        let retiree = Retiree::Texture { id, key: spec.pool_key(), bytes: spec.bytes() };
        self.device.retired.retire(retiree, &*s.backend, &mut s.meshes);
        Ok(())
    }

    /// The shared mesh buffers: elements held, free, and their GPU bytes.
    pub fn mesh_memory(&self) -> MeshMemory {
        let s = &self.res;
        let (retired_vertices, retired_indices) = self.device.retired.mesh_elements();
        MeshMemory {
            meshes: self.res.mesh_handles.iter().count(),
            vertices: u64::from(s.vertex_end),
            free_vertices: s.meshes.free_vertices.total(),
            retired_vertices,
            indices: u64::from(s.index_end),
            free_indices: s.meshes.free_indices.total(),
            retired_indices,
            gpu_bytes: s.vertices.capacity + s.indices.capacity,
        }
    }
}

/// The shared vertex buffer's uses: drawn from, and copied from when it grows.
pub(super) const MESH_VERTICES: BufferUsage = BufferUsage(BufferUsage::VERTEX.0 | BufferUsage::COPY_SRC.0);
/// The shared index buffer's uses: drawn from, and copied from when it grows.
pub(super) const MESH_INDICES: BufferUsage = BufferUsage(BufferUsage::INDEX.0 | BufferUsage::COPY_SRC.0);

/// Makes room for elements `at..at + n` in the buffer `g` (`size` bytes each): nothing to
/// do when they end within its capacity (the next frame's packet writes them, on the
/// submission thread, in frame order: a write from this thread could race a submit that
/// zero-fills the buffer's unwritten ranges); else a new buffer of twice the size, which
/// takes the old one's contents by a GPU copy on the submission thread before the next
/// frame's uploads (the copy returned: the caller queues it, and the old buffer is retired
/// once the frame carrying it is handed over). Nothing goes through the CPU.
fn grow<B: Backend>(
    b: &B,
    g: &mut GrowBuffer,
    label: &str,
    usage: BufferUsage,
    at: u32,
    n: u32,
    size: u64,
) -> Result<Option<BufferCopy>, ResourceError> {
    let end = (u64::from(at) + u64::from(n)) * size;
    if end <= g.capacity {
        return Ok(None);
    }
    let cap = end.next_power_of_two();
    let id = buffer(b, label, cap, usage)?;
    let old = std::mem::replace(g, GrowBuffer { id, capacity: cap });
    Ok(Some(BufferCopy { src: old.id, dst: id, size: old.capacity }))
}

#[cfg(test)]
mod tests {
    use super::FreeList;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // a list of one free range
    fn free_ranges_merge_and_split() {
        let mut f = FreeList::default();
        f.give(10..20);
        f.give(30..40);
        f.give(20..30);
        assert_eq!(f.ranges, [10..40]);
        assert_eq!(f.find(31), None);
        assert_eq!(f.find(30), Some(10));
        f.take(15, 5);
        assert_eq!(f.ranges, [10..15, 20..40]);
        assert_eq!(f.find(5), Some(10));
        assert_eq!(f.find(6), Some(20));
        f.take(10, 5);
        f.take(35, 5);
        assert_eq!(f.ranges, [20..35]);
        f.give(0..5);
        f.give(40..41);
        assert_eq!(f.ranges, [0..5, 20..35, 40..41]);
        assert_eq!(f.total(), 21);
    }
}
