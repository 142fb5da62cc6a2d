//! The staging ring the submission thread uploads a frame's bytes through: mapped staging
//! chunks written on the CPU and copied on the GPU by the frame's first command buffer, then
//! mapped again once the GPU is done with them and reused. Measured against
//! `Queue::write_buffer`, which allocates a staging buffer per call: 1.3-1.5x its throughput
//! with 64 MiB per submit and 2.3-2.6x with 256 MiB on the H200 (run 23 in
//! `docs/bench/RUNS.md`; wgpu's `util::StagingBelt` is the same mechanism, but takes a chunk
//! whose mapping failed, as on a lost device, back as if mapped and then panics).
//!
//! A buffer write goes on from one chunk into the next, so chunks made ahead
//! (`reserve`, `reserve_writes`: `Backend::prepare_uploads`) serve writes of any size; a
//! texture level, whose rows one copy reads, takes one chunk (`put`). The upload thread has
//! a ring of its own (`upload.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use super::{WgpuBackend, WgpuObjects};
use crate::error::WriteError;
use crate::handle::TextureId;
use crate::registry::{Registry, TextureMeta};
use crate::BufferWrite;

/// Chunks smaller writes share; a larger write gets a chunk of its own size.
const CHUNK: u64 = 4 << 20;
/// Mapped chunks kept for reuse beyond what one frame needs are released (more where
/// [`StagingRing::reserve`] made more).
const MAX_FREE: usize = 16;
/// Bytes of free chunks a ring keeps for reuse, unless `prepare_uploads` asked for more:
/// what the rings hold once the GPU is done with every submission.
pub const STAGING_RING_KEPT: u64 = MAX_FREE as u64 * CHUNK;
/// Offsets within a chunk are multiples of this (mapped ranges start at 8-byte
/// boundaries; copies need 4).
const ALIGN: u64 = wgpu::MAP_ALIGNMENT;

pub(super) struct Chunk {
    buffer: wgpu::Buffer,
    size: u64,
    used: u64,
    /// The ring's count of bytes held, less this chunk's once it is dropped.
    held: Arc<AtomicU64>,
}

impl Drop for Chunk {
    fn drop(&mut self) {
        self.held.fetch_sub(self.size, Ordering::Relaxed);
    }
}

/// See the module documentation. Used by one thread at a time (behind a lock).
pub(super) struct StagingRing {
    free: Vec<Chunk>,
    active: Option<Chunk>,
    /// Written and unmapped; copied by the command buffer about to be submitted.
    closed: Vec<Chunk>,
    /// Chunks mapped again (`None`: the mapping failed and the chunk is gone).
    back: (Sender<Option<Chunk>>, Receiver<Option<Chunk>>),
    /// Bytes of the chunks made and not yet dropped, wherever they are.
    held: Arc<AtomicU64>,
    /// Free chunks kept for reuse at most.
    keep: usize,
}

impl Default for StagingRing {
    fn default() -> Self {
        Self {
            free: Vec::new(),
            active: None,
            closed: Vec::new(),
            back: channel(),
            held: Arc::default(),
            keep: MAX_FREE,
        }
    }
}

impl StagingRing {
    /// Makes mapped chunks until the ring holds `bytes` (free or on their way back),
    /// and keeps that many for reuse: the bytes made.
    pub(super) fn reserve(&mut self, device: &wgpu::Device, bytes: u64) -> u64 {
        self.receive();
        let mut made = 0;
        while self.held.load(Ordering::Relaxed) < bytes {
            let chunk = self.make(device, CHUNK);
            made += chunk.size;
            self.free.push(chunk);
        }
        self.keep = self.keep.max(bytes.div_ceil(CHUNK) as usize);
        made
    }

    /// Makes a mapped chunk where the free chunks cannot take writes of `sizes` bytes (one
    /// frame's; a write goes on from one chunk into the next) and a chunk more (that
    /// frame's other data: its views' instances and draws), and keeps the free chunks for
    /// reuse: the bytes made.
    pub(super) fn reserve_writes(&mut self, device: &wgpu::Device, sizes: &[u64]) -> u64 {
        self.receive();
        if sizes.is_empty() {
            return 0;
        }
        let needed: u64 = sizes.iter().map(|s| s.next_multiple_of(ALIGN)).sum::<u64>() + CHUNK;
        let free: u64 = self.free.iter().map(|c| c.size).sum();
        let mut made = 0;
        if needed > free {
            let chunk = self.make(device, (needed - free).next_multiple_of(ALIGN).max(CHUNK));
            made = chunk.size;
            self.free.push(chunk);
        }
        self.keep = self.keep.max(self.free.len());
        made
    }

    /// Bytes of the chunks made and not yet dropped (free, written, or on their way
    /// back), after taking back those mapped again (and releasing those beyond what it
    /// keeps).
    pub(super) fn held(&mut self) -> u64 {
        self.receive();
        self.held.load(Ordering::Relaxed)
    }

    /// A mapped chunk of `size` bytes (a multiple of [`ALIGN`]).
    fn make(&mut self, device: &wgpu::Device, size: u64) -> Chunk {
        zone!("staging-chunk");
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-staging"),
            size,
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: true,
        });
        self.held.fetch_add(size, Ordering::Relaxed);
        Chunk { buffer, size, used: 0, held: self.held.clone() }
    }

    /// Records a copy of `data` (a multiple of 4 bytes, validated by the caller) into
    /// `target` at `offset` on `encoder`, staging it through mapped chunks (the room left
    /// in the chunk being written, then the smallest free chunk that holds the rest, else
    /// the largest, and so on: a large write may span chunks); `false` where a chunk could
    /// not be written (the caller writes it another way).
    pub(super) fn write(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::Buffer,
        offset: u64,
        data: &[u8],
    ) -> bool {
        let mut done = 0;
        while done < data.len() {
            let Some((chunk, at, n)) = self.write_part(device, &data[done..]) else { return false };
            encoder.copy_buffer_to_buffer(&chunk, at, target, offset + done as u64, n as u64);
            done += n;
        }
        true
    }

    /// Writes the start of `data` into the chunk being written (or the next one, as
    /// [`StagingRing::write`] says): the chunk, where in it, and how many bytes (a
    /// multiple of 4); `None` where the chunk is not mapped (a lost device).
    fn write_part(&mut self, device: &wgpu::Device, data: &[u8]) -> Option<(wgpu::Buffer, u64, usize)> {
        self.receive();
        let want = data.len() as u64;
        let room = |c: &Chunk| c.size - c.used.next_multiple_of(ALIGN).min(c.size);
        if self.active.as_ref().is_none_or(|c| room(c) == 0) {
            self.close_active();
            let holds = self.free.iter().enumerate().filter(|(_, c)| c.size >= want).min_by_key(|(_, c)| c.size);
            let at = holds.or_else(|| self.free.iter().enumerate().max_by_key(|(_, c)| c.size)).map(|(i, _)| i);
            let chunk = match at {
                Some(i) => self.free.swap_remove(i),
                None => self.make(device, want.next_multiple_of(ALIGN).max(CHUNK)),
            };
            self.active = Some(chunk);
        }
        let chunk = self.active.as_mut().expect("set above");
        let at = chunk.used.next_multiple_of(ALIGN);
        // Chunk sizes and offsets are multiples of 8 and `data`'s length of 4.
        let n = want.min(chunk.size - at) as usize;
        let Ok(mut view) = chunk.buffer.slice(at..at + n as u64).get_mapped_range_mut() else {
            // Not mapped after all (a lost device): give the chunk up.
            self.active = None;
            return None;
        };
        view.copy_from_slice(&data[..n]);
        drop(view);
        chunk.used = (at + n as u64).next_multiple_of(ALIGN).min(chunk.size);
        Some((chunk.buffer.clone(), at, n))
    }

    /// `size` bytes of a mapped chunk at an offset that is a multiple of `align` (a power
    /// of two of at least 8), filled by `fill`: the chunk and the offset, or `None` where
    /// the chunk could not be written (not mapped: a lost device).
    pub(super) fn put(
        &mut self,
        device: &wgpu::Device,
        size: u64,
        align: u64,
        fill: impl FnOnce(&mut wgpu::BufferViewMut),
    ) -> Option<(wgpu::Buffer, u64)> {
        self.receive();
        let fits = |c: &Chunk| c.used.next_multiple_of(align) + size <= c.size;
        if !self.active.as_ref().is_some_and(fits) {
            self.close_active();
            // The smallest free chunk that holds it: large chunks made for large writes
            // (`reserve_writes`) stay free for them.
            let fits = self.free.iter().enumerate().filter(|(_, c)| c.size >= size);
            let at = fits.min_by_key(|(_, c)| c.size).map(|(i, _)| i);
            let chunk = match at {
                Some(i) => self.free.swap_remove(i),
                None => self.make(device, size.next_multiple_of(ALIGN).max(CHUNK)),
            };
            self.active = Some(chunk);
        }
        let chunk = self.active.as_mut().expect("set above");
        let at = chunk.used.next_multiple_of(align);
        let Ok(mut view) = chunk.buffer.slice(at..at + size).get_mapped_range_mut() else {
            // Not mapped after all (a lost device): give the chunk up.
            self.active = None;
            return None;
        };
        fill(&mut view);
        drop(view);
        chunk.used = (at + size).next_multiple_of(ALIGN).min(chunk.size);
        Some((chunk.buffer.clone(), at))
    }

    /// Unmaps the chunks written since the last call: call before submitting the encoder
    /// the writes went to.
    pub(super) fn finish(&mut self) {
        self.close_active();
    }

    /// Maps the submitted chunks again; each comes back for reuse once the GPU is done
    /// with it and the device is polled (`wait` polls). Call after the submit.
    pub(super) fn recall(&mut self) {
        recall(self.closed.drain(..), &self.back.0);
    }

    /// The chunks written since the last call, unmapped, and where to send them once
    /// mapped again: for a batch submitted later by another thread.
    pub(super) fn take_closed(&mut self) -> (Vec<Chunk>, Sender<Option<Chunk>>) {
        self.close_active();
        (std::mem::take(&mut self.closed), self.back.0.clone())
    }

    fn close_active(&mut self) {
        if let Some(chunk) = self.active.take() {
            chunk.buffer.unmap();
            self.closed.push(chunk);
        }
    }

    fn receive(&mut self) {
        while let Ok(back) = self.back.1.try_recv() {
            if let Some(mut chunk) = back {
                chunk.used = 0;
                if self.free.len() < self.keep {
                    self.free.push(chunk);
                }
            }
        }
    }
}

/// Maps `chunks` again once the GPU is done with them (call after the submit that copies
/// from them); each comes back through `back`.
pub(super) fn recall(chunks: impl Iterator<Item = Chunk>, back: &Sender<Option<Chunk>>) {
    for chunk in chunks {
        let tx = back.clone();
        let buffer = chunk.buffer.clone();
        buffer.slice(..).map_async(wgpu::MapMode::Write, move |mapped| {
            let _ = tx.send(mapped.is_ok().then_some(chunk));
        });
    }
}

impl WgpuBackend {
    /// A frame's uploads (validated) staged through `ring`: the command buffer that copies
    /// them, to submit first (`None` when there is nothing to copy). What does not fit a
    /// chunk, as on a lost device, goes through the queue. The caller submits, then calls
    /// `ring.recall()`.
    pub(super) fn stage_uploads(
        &self,
        reg: &Registry<WgpuObjects>,
        uploads: &[BufferWrite<'_>],
        ring: &mut StagingRing,
    ) -> Option<wgpu::CommandBuffer> {
        let mut copies = None;
        for w in uploads.iter().filter(|w| !w.data.is_empty()) {
            let encoder = copies.get_or_insert_with(|| {
                self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("uploads") })
            });
            let target = &reg.buffers[w.buffer].obj;
            if !ring.write(&self.device, encoder, target, w.offset, w.data) {
                self.queue.write_buffer(target, w.offset, w.data);
            }
        }
        ring.finish();
        copies.map(wgpu::CommandEncoder::finish)
    }

    /// See [`crate::Backend::write_texture_level`]: through the queue (a texture's levels
    /// are written once, when it is made).
    pub(super) fn write_level(&self, texture: TextureId, level: u32, data: &[u8]) -> Result<(), WriteError> {
        if self.is_lost() {
            return Err(WriteError::DeviceLost);
        }
        let reg = self.reg.read();
        crate::upload::check_texture_write(&reg, texture, level, data)?;
        let t = &reg.textures[texture];
        self.write_level_to(&t.obj.0, &t.meta, level, data);
        Ok(())
    }

    /// Writes a checked level of `texture` (described by `m`) through the queue.
    pub(super) fn write_level_to(&self, texture: &wgpu::Texture, m: &TextureMeta, level: u32, data: &[u8]) {
        // Compressed levels are copied whole blocks at a time (their physical size).
        let (side, _) = m.format.block();
        let (w, h) = (crate::level_side(m.width, level), crate::level_side(m.height, level));
        self.queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: level,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            data,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(m.format.row_bytes(m.width, level)),
                rows_per_image: Some(h.div_ceil(side)),
            },
            wgpu::Extent3d {
                width: w.next_multiple_of(side),
                height: h.next_multiple_of(side),
                depth_or_array_layers: 1,
            },
        );
    }
}
