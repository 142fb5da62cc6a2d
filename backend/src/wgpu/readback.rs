//! Reading a color target back to the CPU as tightly packed RGBA8 rows, and a buffer's
//! bytes.
use std::sync::atomic::Ordering;

use super::WgpuBackend;
use crate::desc::{TextureFormat, TextureUsage};
use crate::error::ReadbackError;
use crate::handle::{BufferId, TextureId};
use crate::Image;

impl WgpuBackend {
    /// Copies `texture` into a mapped buffer and unpads its rows (waits for the GPU).
    pub(super) fn read_back(&self, texture: TextureId) -> Result<Image, ReadbackError> {
        self.read_texture_level(texture, 0)
    }

    /// Reads mip level `level` of an RGBA8 texture with `COPY_SRC` usage back as tightly
    /// packed RGBA8 rows (waits for the GPU): for tests and tools.
    pub fn read_texture_level(&self, texture: TextureId, level: u32) -> Result<Image, ReadbackError> {
        let reg = self.reg.read();
        let e = reg.textures.get(texture).ok_or(ReadbackError::InvalidHandle)?;
        let m = &e.meta;
        if level >= m.mip_levels {
            return Err(ReadbackError::Unsupported("mip level past the texture's levels"));
        }
        let (width, height) = (crate::level_side(m.width, level), crate::level_side(m.height, level));
        if m.format.bytes_per_texel() != 4 || m.format.is_depth() {
            return Err(ReadbackError::Unsupported("only RGBA8 formats are read back as RGBA8"));
        }
        if !m.usage.contains(TextureUsage::COPY_SRC) {
            return Err(ReadbackError::Unsupported("texture lacks COPY_SRC usage"));
        }
        let row = width * 4;
        let padded = row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-readback"),
            size: u64::from(padded) * u64::from(height),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-readback") });
        enc.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &e.obj.0,
                mip_level: level,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: Some(height),
                },
            },
            wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        );
        {
            let _queue = self.queue_use.lock();
            self.queue.submit([enc.finish()]);
        }
        self.map_and_wait(&buffer)?;
        let view = buffer.get_mapped_range(..).map_err(|e| ReadbackError::Map(e.to_string()))?;
        let mut pixels = Vec::with_capacity((row * height) as usize);
        for y in 0..height as usize {
            let start = y * padded as usize;
            pixels.extend_from_slice(&view[start..start + row as usize]);
        }
        drop(view);
        buffer.unmap();
        if m.format == TextureFormat::Bgra8UnormSrgb {
            pixels.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
        }
        Ok(Image { width, height, pixels })
    }

    /// Copies `len` bytes of `buffer` from `offset` into a mapped buffer (waits for the GPU).
    pub(super) fn read_buffer_bytes(&self, buffer: BufferId, offset: u64, len: u64) -> Result<Vec<u8>, ReadbackError> {
        let reg = self.reg.read();
        let e = reg.buffers.get(buffer).ok_or(ReadbackError::InvalidHandle)?;
        crate::validate::check_buffer_read(&e.meta, offset, len)?;
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-readback"),
            size: len,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-readback") });
        enc.copy_buffer_to_buffer(&e.obj, offset, &staging, 0, len);
        {
            let _queue = self.queue_use.lock();
            self.queue.submit([enc.finish()]);
        }
        drop(reg);
        self.map_and_wait(&staging)?;
        let bytes = staging.get_mapped_range(..).map_err(|e| ReadbackError::Map(e.to_string()))?.to_vec();
        staging.unmap();
        Ok(bytes)
    }

    /// Maps a read-back buffer whose copy was submitted, waiting for the GPU.
    fn map_and_wait(&self, buffer: &wgpu::Buffer) -> Result<(), ReadbackError> {
        let (tx, rx) = std::sync::mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
            .map_err(|e| ReadbackError::Map(e.to_string()))?;
        if self.lost.load(Ordering::Relaxed) {
            return Err(ReadbackError::DeviceLost);
        }
        rx.recv().map_err(|e| ReadbackError::Map(e.to_string()))?.map_err(|e| ReadbackError::Map(e.to_string()))
    }
}
