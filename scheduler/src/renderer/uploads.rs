//! What a frame uploads besides the views' instance and indirect data: the dirty
//! transforms, their objects' world bounds (where views are culled on the GPU), and the
//! meshes made since the last frame. Written into the frame packet; the submission thread
//! copies them before the frame's passes.

use glam::Mat4;
use switchyard_backend::Backend;

use super::copies::MeshCopy;
use super::gpu;
use super::Renderer;
use crate::profile;
use crate::submit::FramePacket;

impl<B: Backend> Renderer<B> {
    /// The transforms of objects changed since the last frame, as writes into the
    /// persistent transform buffer: the writes are listed here, the bytes copied on the
    /// workers (a scene that moves every object copies 64 bytes per object).
    pub(super) fn write_dirty_transforms(&mut self, packet: &mut FramePacket<B::Chunk>) {
        let _z = profile::zone!("dirty-transforms");
        const _: () = assert!(size_of::<Mat4>() as u64 == gpu::TRANSFORM_SIZE, "a transform is one Mat4");
        packet.transforms.0 = Some(self.res.gpu.transforms_buf);
        packet.transform_writes.clear();
        let len = self.scene.objects.len();
        let mut total = 0;
        for (s, e) in self.scene.dirty.drain(..) {
            // Objects removed after being marked leave ranges past the end.
            let (s, e) = ((s as usize).min(len), (e as usize).min(len));
            if s >= e {
                continue;
            }
            let bytes = (e - s) * size_of::<Mat4>();
            packet.transform_writes.push((s as u64 * gpu::TRANSFORM_SIZE, total..total + bytes));
            total += bytes;
        }
        self.write_dirty_bounds(packet, total / 2);
        let dst = &mut packet.transforms.1;
        switchyard_kernels::par::set_len(dst, total);
        // Each block of the packet's bytes copies the parts of the writes it holds; a
        // write's bytes in the packet follow its objects' transforms one to one.
        let (src, writes): (&[u8], _) =
            (bytemuck::cast_slice(&self.scene.objects.transforms), &packet.transform_writes);
        const BLOCK: usize = 1 << 20;
        self.pool.install(|| {
            switchyard_kernels::par::fill_blocks(BLOCK, &mut dst[..], &|c, dst: &mut [u8]| {
                let (a, b) = (c * BLOCK, c * BLOCK + dst.len());
                let first = writes.partition_point(|(_, r)| r.end <= a);
                for (offset, r) in writes[first..].iter().take_while(|(_, r)| r.start < b) {
                    let (lo, hi) = (r.start.max(a), r.end.min(b));
                    let from = *offset as usize + (lo - r.start);
                    dst[lo - a..hi - a].copy_from_slice(&src[from..from + (hi - lo)]);
                }
            })
        });
    }

    /// Where the renderer culls on the GPU, the world bounds of the objects whose
    /// transforms the packet writes (`bytes` in all), in the same order.
    fn write_dirty_bounds(&mut self, packet: &mut FramePacket<B::Chunk>, bytes: usize) {
        packet.bounds.0 = self.res.gpu.cull.as_ref().map(|c| c.bounds_buf);
        const PER: usize = crate::gpu_cull::BOUNDS_SIZE as usize;
        let dst = &mut packet.bounds.1;
        if packet.bounds.0.is_none() {
            dst.clear();
            return;
        }
        switchyard_kernels::par::set_len(dst, bytes / PER);
        let (o, writes) = (&self.scene.objects, &packet.transform_writes);
        const _: () = assert!(PER == size_of::<[f32; 8]>() && 2 * PER as u64 == gpu::TRANSFORM_SIZE);
        // As the transforms: each block of the packet's bounds fills the parts of the writes
        // it holds (object `k` of a write's range is its first object plus `k`).
        const BLOCK: usize = 1 << 14;
        let t = gpu::TRANSFORM_SIZE as usize;
        self.pool.install(|| {
            switchyard_kernels::par::fill_blocks(BLOCK, &mut dst[..], &|c, dst: &mut [[f32; 8]]| {
                let (a, b) = (c * BLOCK, c * BLOCK + dst.len());
                let first = writes.partition_point(|(_, r)| r.end / t <= a);
                for (offset, r) in writes[first..].iter().take_while(|(_, r)| r.start / t < b) {
                    let (lo, hi) = ((r.start / t).max(a), (r.end / t).min(b));
                    let object = *offset as usize / t + (lo - r.start / t);
                    for (k, d) in dst[lo - a..hi - a].iter_mut().enumerate() {
                        let i = object + k;
                        *d = [o.cx[i], o.cy[i], o.cz[i], 0.0, o.ex[i], o.ey[i], o.ez[i], 0.0];
                    }
                }
            })
        });
    }

    /// The meshes made (or supplied again) since the last frame, into the packet's
    /// uploads: their staged bytes move into the packet whole (the packet's previous byte
    /// buffer, emptied, stages the next ones), written into the current shared buffers
    /// before the frame's passes on the submission thread; before them, the GPU copies of
    /// the buffers that grew. From here on a mesh made with `CpuCopy::Drop` lives on the
    /// GPU only.
    pub(super) fn write_mesh_uploads(&mut self, packet: &mut FramePacket<B::Chunk>) {
        let _z = profile::zone!("mesh-uploads");
        packet.mesh_writes.clear();
        packet.mesh_bytes.clear();
        let s = &mut self.res;
        // Grown buffers take their predecessors' contents first.
        packet.buffer_copies.clone_from(&s.pending_copies);
        if s.pending_uploads.is_empty() {
            // Only removed meshes' bytes, if any.
            s.pending_bytes.clear();
        } else {
            std::mem::swap(&mut packet.mesh_bytes, &mut s.pending_bytes);
        }
        for p in s.pending_uploads.drain(..) {
            packet.mesh_writes.push((s.vertices.id, u64::from(p.vertices_at) * 32, p.vertex_bytes));
            packet.mesh_writes.push((s.indices.id, u64::from(p.indices_at) * 4, p.index_bytes));
            let copy = &mut s.meshes.copies[p.dense as usize];
            if matches!(copy, MeshCopy::Pending) {
                *copy = MeshCopy::Gpu;
            }
        }
    }
}
