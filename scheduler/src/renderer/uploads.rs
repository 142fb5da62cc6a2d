//! What a frame uploads besides the views' instance and indirect data: the dirty
//! transforms and their objects' world bounds (where views are culled on the GPU),
//! written into the frame packet; the submission thread copies them before the frame's
//! passes. (Meshes and textures go through the upload thread: `residency.rs`.) And what
//! becomes of a packet whose frame failed.

use glam::Mat4;
use switchyard_backend::Backend;

use super::gpu;
use super::Renderer;
use crate::profile;
use crate::submit::FramePacket;

impl<B: Backend> Renderer<B> {
    /// The transforms of objects changed since the last frame, as writes into the
    /// persistent transform buffer: the writes are listed here, the bytes copied on the
    /// workers (a scene that moves every object copies 64 bytes per object).
    pub(super) fn write_dirty_transforms(&mut self, packet: &mut FramePacket<B::Chunk>) {
        profile::zone!("dirty-transforms");
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
        self.write_dirty_materials(packet, total / 16);
        // Each block of the packet's bytes copies the parts of the writes it holds; a
        // write's bytes in the packet follow its objects' transforms one to one.
        let (src, writes): (&[u8], _) =
            (bytemuck::cast_slice(&self.scene.objects.transforms), &packet.transform_writes);
        const BLOCK: usize = 1 << 20;
        self.pool.fill_blocks(BLOCK, &mut packet.transforms.1, total, &|c, dst: &mut [u8]| {
            let (a, b) = (c * BLOCK, c * BLOCK + dst.len());
            let first = writes.partition_point(|(_, r)| r.end <= a);
            for (offset, r) in writes[first..].iter().take_while(|(_, r)| r.start < b) {
                let (lo, hi) = (r.start.max(a), r.end.min(b));
                let from = *offset as usize + (lo - r.start);
                dst[lo - a..hi - a].copy_from_slice(&src[from..from + (hi - lo)]);
            }
        });
    }

    /// The sizes of the writes the next frame uploads for the objects changed since the
    /// last (`write_dirty_transforms`): see [`frame_writes`].
    pub(super) fn dirty_writes(&self) -> Vec<u64> {
        let bounds = if self.res.gpu.cull.is_some() { crate::gpu_cull::BOUNDS_SIZE } else { 0 };
        let len = self.scene.objects.len() as u32;
        let ranges = self.scene.dirty.iter().map(|&(s, e)| u64::from(e.min(len).saturating_sub(s.min(len))));
        frame_writes(ranges, [gpu::TRANSFORM_SIZE, bounds, 4])
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
        let (o, writes) = (&self.scene.objects, &packet.transform_writes);
        const _: () = assert!(PER == size_of::<[f32; 8]>() && 2 * PER as u64 == gpu::TRANSFORM_SIZE);
        // As the transforms: each block of the packet's bounds fills the parts of the writes
        // it holds (object `k` of a write's range is its first object plus `k`).
        const BLOCK: usize = 1 << 14;
        let t = gpu::TRANSFORM_SIZE as usize;
        self.pool.fill_blocks(BLOCK, dst, bytes / PER, &|c, dst: &mut [[f32; 8]]| {
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
        });
    }

    /// The dense materials of the objects whose transforms the packet writes (`bytes` in
    /// all), in the same order: indexed materials' shaders find their slots with them.
    fn write_dirty_materials(&mut self, packet: &mut FramePacket<B::Chunk>, bytes: usize) {
        packet.materials.0 = Some(self.res.gpu.object_materials_buf);
        let (src, writes) = (&self.scene.objects.material[..], &packet.transform_writes);
        // As the bounds: each block fills the parts of the writes it holds.
        const BLOCK: usize = 1 << 16;
        let t = gpu::TRANSFORM_SIZE as usize;
        self.pool.fill_blocks(BLOCK, &mut packet.materials.1, bytes / 4, &|c, dst: &mut [u32]| {
            let (a, b) = (c * BLOCK, c * BLOCK + dst.len());
            let first = writes.partition_point(|(_, r)| r.end / t <= a);
            for (offset, r) in writes[first..].iter().take_while(|(_, r)| r.start / t < b) {
                let (lo, hi) = ((r.start / t).max(a), (r.end / t).min(b));
                let object = *offset as usize / t + (lo - r.start / t);
                dst[lo - a..hi - a].copy_from_slice(&src[object..object + (hi - lo)]);
            }
        });
    }

    /// Ends a frame that failed: nothing of its passes reaches the backend, and the
    /// transforms and bucket lists it would have uploaded go with the next frame. Where
    /// it handed a batch of uploads to the upload thread, the packet still goes to the
    /// submission thread with no passes and no data of its own, carrying the batch (its
    /// resources are drawn from this frame on); else it is given back.
    pub(super) fn drop_frame(&mut self, mut packet: Box<FramePacket<B::Chunk>>) {
        packet.passes.iter_mut().for_each(|p| p.chunks.clear());
        packet.present = None;
        // The bucket lists it would have uploaded go with the next frame too.
        for w in &mut self.frame.views {
            let rec = w.recorded.get_mut();
            if let Some(g) = rec.gpu.as_mut() {
                g.uploaded = None;
            }
            if let Some(o) = rec.occlusion.as_mut() {
                o.levels_written = false;
            }
        }
        if self.frame.batch_sent && self.send_batch() {
            packet.passes.clear();
            (packet.globals.0, packet.constants.0, packet.transforms.0, packet.bounds.0) = (None, None, None, None);
            packet.materials.0 = None;
            packet.views.iter_mut().for_each(|v| *v = crate::submit::ViewUpload::default());
            packet.layout = crate::stats::PacketLayout::default();
            packet.batches = self.device.submit.uploads.sent;
            if self.device.submit.send(packet) {
                self.device.retired.sent(self.frame.number);
            }
        } else {
            self.device.submit.give_back(packet);
        }
        let n = self.scene.len() as u32;
        if n > 0 {
            self.scene.dirty.clear();
            self.scene.dirty.push((0, n));
        }
    }
}

/// Per range of `objects` changed (a count each), its writes of `per` bytes an object:
/// transforms, world bounds (0 where views are not culled on the GPU: none), dense
/// materials. None at all where they come to more than a backend makes ahead
/// ([`MAX_STAGING_BYTES`](switchyard_backend::MAX_STAGING_BYTES)): that frame then makes
/// its staging as it goes, as without `warm_up`.
fn frame_writes(objects: impl Iterator<Item = u64>, per: [u64; 3]) -> Vec<u64> {
    let writes: Vec<u64> =
        objects.filter(|&n| n > 0).flat_map(|n| per.into_iter().filter(|&b| b > 0).map(move |b| n * b)).collect();
    if writes.iter().sum::<u64>() <= switchyard_backend::MAX_STAGING_BYTES {
        writes
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_writes_are_each_ranges_writes_within_what_a_backend_makes_ahead() {
        assert_eq!(frame_writes([3, 0, 2].into_iter(), [64, 0, 4]), [192, 12, 128, 8]);
        assert_eq!(frame_writes([3].into_iter(), [64, 32, 4]), [192, 96, 12]);
        assert!(frame_writes(std::iter::empty(), [64, 32, 4]).is_empty());
        // 60M objects' transforms, bounds and materials: 6 GB, more than is made ahead.
        let max = switchyard_backend::MAX_STAGING_BYTES;
        assert!(frame_writes([60_000_000].into_iter(), [64, 32, 4]).is_empty());
        assert_eq!(frame_writes([max / 64].into_iter(), [64, 0, 0]), [max]);
        assert!(frame_writes([max / 64, 1].into_iter(), [64, 0, 0]).is_empty());
    }
}
