//! Uploads staged on the scheduler's upload thread ([`crate::Backend::stage`]): bytes
//! copied into mapped chunks of a staging ring of their own (the submission thread's
//! frame uploads use another), the copies into buffers and textures and the generated
//! mips recorded on a command encoder there; the submission thread submits the command
//! buffer ([`crate::Backend::submit_staged`]) and hands the chunks back to be mapped
//! again once the GPU is done with them.

use std::sync::mpsc::Sender;

use super::staging::{recall, Chunk};
use super::WgpuBackend;
use crate::error::{CreateError, SubmitError};
use crate::upload::{check_uploads, PreparedUploads, StagedWrites, Uploads};

/// Texture rows in staging memory start at multiples of this (wgpu's copy rule).
const ROW_ALIGN: u64 = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as u64;

/// A staged batch of the wgpu backend: its copies, the chunks they read, and what it
/// writes (checked again at submit).
pub struct WgpuStaged {
    commands: wgpu::CommandBuffer,
    chunks: Vec<Chunk>,
    back: Sender<Option<Chunk>>,
    writes: StagedWrites,
}

impl std::fmt::Debug for WgpuStaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuStaged").field("chunks", &self.chunks.len()).field("writes", &self.writes).finish()
    }
}

impl WgpuBackend {
    /// See [`crate::Backend::stage`].
    pub(super) fn stage_batch(&self, u: &Uploads<'_>) -> Result<WgpuStaged, SubmitError> {
        if self.is_lost() {
            return Err(SubmitError::DeviceLost);
        }
        // The objects the batch names, taken under the registry's read lock and copied
        // into without it: a creation on the render thread (which takes the write lock)
        // never waits for a batch's bytes. An object destroyed meanwhile is refused when
        // the batch is submitted (`StagedWrites::check`).
        let (copies, buffers, textures, mips) = {
            let reg = self.reg.read();
            check_uploads(&reg, u)?;
            let buffer = |b| reg.buffers[b].obj.clone();
            let texture = |t| (reg.textures[t].obj.0.clone(), reg.textures[t].meta.clone());
            (
                u.copies.iter().map(|c| (buffer(c.src), buffer(c.dst), c.size)).collect::<Vec<_>>(),
                u.buffers.iter().map(|w| buffer(w.buffer)).collect::<Vec<_>>(),
                u.textures.iter().map(|w| texture(w.texture)).collect::<Vec<_>>(),
                u.mips.iter().map(|&t| texture(t)).collect::<Vec<_>>(),
            )
        };
        let mut ring = {
            zone!("stage-ring-lock");
            self.upload_ring.lock()
        };
        let device = &self.device;
        let mut enc =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-uploads") });
        {
            zone!("stage-buffers");
            for (src, dst, size) in &copies {
                enc.copy_buffer_to_buffer(src, 0, dst, 0, *size);
            }
            for (w, target) in u.buffers.iter().zip(&buffers) {
                if !ring.write(device, &mut enc, target, w.offset, w.data) {
                    return Err(SubmitError::DeviceLost);
                }
            }
        }
        for (w, (texture, m)) in u.textures.iter().zip(&textures) {
            zone!("stage-texture");
            // Rows of texels (or of 4 x 4 blocks), each padded to the copy alignment.
            let (side, _) = m.format.block();
            let (width, height) = (crate::level_side(m.width, w.level), crate::level_side(m.height, w.level));
            let row = u64::from(m.format.row_bytes(m.width, w.level));
            let rows = u64::from(height.div_ceil(side));
            let padded = row.next_multiple_of(ROW_ALIGN);
            let fill = |view: &mut wgpu::BufferViewMut| {
                for (r, src) in w.data.chunks_exact(row as usize).enumerate() {
                    let at = r * padded as usize;
                    view.slice(at..at + src.len()).copy_from_slice(src);
                }
            };
            if side > 1 && self.adapter_info.backend == wgpu::Backend::Gl {
                // wgpu's GL backend copies no compressed blocks from padded buffer rows
                // (the level stays zero: measured on llvmpipe): there they go through
                // the queue, ordered before the next submit (this texture is new, and
                // no frame before the batch's samples it).
                self.write_level_to(texture, m, w.level, w.data);
                continue;
            }
            let (chunk, at) = ring.put(device, padded * rows, ROW_ALIGN, fill).ok_or(SubmitError::DeviceLost)?;
            enc.copy_buffer_to_texture(
                wgpu::TexelCopyBufferInfo {
                    buffer: &chunk,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: at,
                        bytes_per_row: Some(padded as u32),
                        rows_per_image: Some(rows as u32),
                    },
                },
                wgpu::TexelCopyTextureInfo {
                    texture,
                    mip_level: w.level,
                    origin: wgpu::Origin3d::ZERO,
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::Extent3d {
                    width: width.next_multiple_of(side),
                    height: height.next_multiple_of(side),
                    depth_or_array_layers: 1,
                },
            );
        }
        {
            zone!("stage-mips");
            let textures: Vec<_> = mips.iter().map(|(t, m)| (t, m.format, m.mip_levels)).collect();
            if !textures.is_empty() {
                let maker = self.mip_maker().map_err(|_| SubmitError::DeviceLost)?;
                self.encode_levels(maker, &textures, &mut enc);
            }
        }
        let (chunks, back) = ring.take_closed();
        zone!("stage-finish");
        Ok(WgpuStaged { commands: enc.finish(), chunks, back, writes: StagedWrites::of(u) })
    }

    /// See [`crate::Backend::copy_buffers`].
    pub(super) fn copy_now(&self, copies: &[crate::BufferCopy]) -> Result<(), SubmitError> {
        self.take_errors()?;
        let reg = self.reg.read();
        for c in copies {
            crate::upload::check_buffer_copy(&reg, c)?;
        }
        if copies.is_empty() {
            return Ok(());
        }
        // Its own submission: after the frames submitted before, before the next one's
        // uploads (wgpu runs a submit's queued writes ahead of its command buffers).
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("copies") });
        for c in copies {
            enc.copy_buffer_to_buffer(&reg.buffers[c.src].obj, 0, &reg.buffers[c.dst].obj, 0, c.size);
        }
        let _queue = self.queue_use.lock();
        self.queue.submit([enc.finish()]);
        Ok(())
    }

    /// See [`crate::Backend::prepare_uploads`].
    pub(super) fn prepare_batches(&self, p: &crate::PrepareUploads<'_>) -> Result<PreparedUploads, CreateError> {
        zone!("prepare-uploads");
        if self.is_lost() {
            return Err(CreateError::DeviceLost);
        }
        crate::upload::check_prepare(p)?;
        let mut made = PreparedUploads::default();
        if !p.mip_formats.is_empty() {
            let maker = self.mip_maker()?;
            made.mip_pipelines = self.scoped(|| {
                let formats = p.mip_formats.iter().map(|&f| super::convert::texture_format(f));
                formats.map(|f| u32::from(maker.ensure(&self.device, f))).sum()
            })?;
        }
        made.staging_bytes = self.upload_ring.lock().reserve(&self.device, p.staging_bytes);
        made.frame_staging_bytes = self.staging.lock().reserve_writes(&self.device, p.frame_writes);
        Ok(made)
    }

    /// See [`crate::Backend::submit_staged`].
    pub(super) fn submit_batch(&self, s: WgpuStaged) -> Result<(), SubmitError> {
        if self.is_lost() {
            return Err(SubmitError::DeviceLost);
        }
        s.writes.check(&self.reg.read())?;
        {
            let _queue = self.queue_use.lock();
            self.queue.submit([s.commands]);
        }
        recall(s.chunks.into_iter(), &s.back);
        Ok(())
    }
}
