//! Encoding: validated commands into render passes or bundles, and a frame's chunks into
//! command buffers for `queue.submit`.

use super::compute::{encode_compute, NativePipeline};
use super::convert::{color_ops, depth_ops, index_format, texture_format};
use super::native::{NativePass, WgpuPassContext};
use super::timing::{Slot, Timed};
use super::{Encoded, Encoding, WgpuBackend, WgpuChunk, WgpuObjects};
use crate::command::{Command, LoadOp, PassDesc, StoreOp, DRAW_INDEXED_INDIRECT_SIZE};
use crate::registry::Registry;
use crate::validate::PassLayout;
use crate::{ChunkPosition, PassSubmit};
use wgpu_profiler::GpuProfilerQuery;

/// A trait over `RenderPass` and `RenderBundleEncoder` so one encoder loop serves both.
pub(super) trait Encoder<'a>: wgpu::util::RenderEncoder<'a> {
    fn multi_draw_indexed_indirect(&mut self, buffer: &'a wgpu::Buffer, offset: u64, count: u32);
    /// `(count_buffer, count_offset)`: where the GPU reads how many of the `max_count`
    /// records to draw.
    fn multi_draw_indexed_indirect_count(
        &mut self,
        buffer: &'a wgpu::Buffer,
        offset: u64,
        count: (&'a wgpu::Buffer, u64),
        max_count: u32,
    );
}

impl<'a> Encoder<'a> for wgpu::RenderPass<'a> {
    fn multi_draw_indexed_indirect(&mut self, buffer: &'a wgpu::Buffer, offset: u64, count: u32) {
        wgpu::RenderPass::multi_draw_indexed_indirect(self, buffer, offset, count);
    }

    fn multi_draw_indexed_indirect_count(
        &mut self,
        buffer: &'a wgpu::Buffer,
        offset: u64,
        (count_buffer, count_offset): (&'a wgpu::Buffer, u64),
        max_count: u32,
    ) {
        wgpu::RenderPass::multi_draw_indexed_indirect_count(
            self,
            buffer,
            offset,
            count_buffer,
            count_offset,
            max_count,
        );
    }
}

impl<'a> Encoder<'a> for wgpu::RenderBundleEncoder<'a> {
    fn multi_draw_indexed_indirect(&mut self, buffer: &'a wgpu::Buffer, offset: u64, count: u32) {
        for i in 0..u64::from(count) {
            self.draw_indexed_indirect(buffer, offset + i * DRAW_INDEXED_INDIRECT_SIZE);
        }
    }

    fn multi_draw_indexed_indirect_count(&mut self, _: &'a wgpu::Buffer, _: u64, _: (&'a wgpu::Buffer, u64), _: u32) {
        // `Caps::indirect_count` is off with render bundles, so the validator refuses it.
        unreachable!("a count buffer draw in a render bundle passed validation")
    }
}

/// Encodes validated commands. Handles were checked by the validator under the same read
/// lock, so a missing one here is a bug in this crate.
pub(super) fn encode<'a, E: Encoder<'a>>(enc: &mut E, reg: &'a Registry<WgpuObjects>, commands: &[Command]) {
    #[cold]
    fn bug() -> ! {
        unreachable!("handle vanished between validation and encoding")
    }
    for cmd in commands {
        match *cmd {
            Command::SetPipeline(p) => match &reg.pipelines.get(p).unwrap_or_else(|| bug()).obj {
                NativePipeline::Render(p) => enc.set_pipeline(p),
                NativePipeline::Compute(_) => bug(),
            },
            Command::SetBindGroup { index, group, offsets } => {
                let g = &reg.bind_groups.get(group).unwrap_or_else(|| bug()).obj;
                enc.set_bind_group(index, Some(g), offsets.as_slice());
            }
            Command::SetVertexBuffer { slot, buffer, offset } => {
                let b = &reg.buffers.get(buffer).unwrap_or_else(|| bug()).obj;
                enc.set_vertex_buffer(slot, Some(b.slice(offset..)));
            }
            Command::SetIndexBuffer { buffer, format, offset } => {
                let b = &reg.buffers.get(buffer).unwrap_or_else(|| bug()).obj;
                enc.set_index_buffer(b.slice(offset..), index_format(format));
            }
            Command::Draw { first_vertex, vertex_count, first_instance, instance_count } => {
                enc.draw(first_vertex..first_vertex + vertex_count, first_instance..first_instance + instance_count);
            }
            Command::DrawIndexed { first_index, index_count, base_vertex, first_instance, instance_count } => {
                enc.draw_indexed(
                    first_index..first_index + index_count,
                    base_vertex,
                    first_instance..first_instance + instance_count,
                );
            }
            Command::MultiDrawIndexedIndirect { buffer, offset, count } => {
                let b = &reg.buffers.get(buffer).unwrap_or_else(|| bug()).obj;
                enc.multi_draw_indexed_indirect(b, offset, count);
            }
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count } => {
                let b = &reg.buffers.get(buffer).unwrap_or_else(|| bug()).obj;
                let c = &reg.buffers.get(count_buffer).unwrap_or_else(|| bug()).obj;
                enc.multi_draw_indexed_indirect_count(b, offset, (c, count_offset), max_count);
            }
            // The validator refuses dispatches in render passes.
            Command::Dispatch { .. } | Command::DispatchIndirect { .. } => bug(),
        }
    }
}

impl WgpuBackend {
    pub(super) fn pass_views<'r>(
        reg: &'r Registry<WgpuObjects>,
        pass: &PassDesc,
        position: ChunkPosition,
    ) -> (Option<wgpu::RenderPassColorAttachment<'r>>, Option<wgpu::RenderPassDepthStencilAttachment<'r>>) {
        let first = position.index == 0;
        let last = position.index + 1 >= position.count;
        let color = pass.color.and_then(|c| {
            let view = &reg.textures.get(c.texture)?.obj.1;
            let load = if first { c.load } else { LoadOp::Load };
            let store = if last { c.store } else { StoreOp::Store };
            // A pass split into several render passes resolves once, at its end.
            let resolve_target = c.resolve.filter(|_| last).and_then(|r| Some(&reg.textures.get(r)?.obj.1));
            Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target,
                ops: color_ops(load, store),
            })
        });
        let depth = pass.depth.and_then(|d| {
            let view = &reg.textures.get(d.texture)?.obj.1;
            let load = if first { d.load } else { LoadOp::Load };
            let store = if last { d.store } else { StoreOp::Store };
            Some(wgpu::RenderPassDepthStencilAttachment {
                view,
                depth_ops: Some(depth_ops(load, store)),
                stencil_ops: None,
            })
        });
        (color, depth)
    }

    pub(super) fn record_bundle(
        &self,
        reg: &Registry<WgpuObjects>,
        layout: &PassLayout,
        commands: &[Command],
    ) -> wgpu::RenderBundle {
        let color_formats = [layout.color.map(texture_format)];
        let mut enc = self.device.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: Some("switchyard-chunk"),
            color_formats: if layout.color.is_some() { &color_formats } else { &[] },
            depth_stencil: layout.depth.map(|f| wgpu::RenderBundleDepthStencil {
                format: texture_format(f),
                depth_read_only: false,
                stencil_read_only: true,
            }),
            sample_count: layout.samples,
            multiview: None,
        });
        encode(&mut enc, reg, commands);
        enc.finish(&wgpu::RenderBundleDescriptor { label: Some("switchyard-chunk") })
    }

    pub(super) fn record_command_buffer(
        &self,
        reg: &Registry<WgpuObjects>,
        pass: &PassDesc,
        position: ChunkPosition,
        commands: &[Command],
    ) -> wgpu::CommandBuffer {
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-chunk") });
        encode(&mut Self::begin_pass(&mut enc, reg, pass, position), reg, commands);
        enc.finish()
    }

    /// Begins `pass` (its chunk at `position`) on `enc`, untimed.
    pub(super) fn begin_pass<'e>(
        enc: &'e mut wgpu::CommandEncoder,
        reg: &Registry<WgpuObjects>,
        pass: &PassDesc,
        position: ChunkPosition,
    ) -> wgpu::RenderPass<'e> {
        let (color, depth) = Self::pass_views(reg, pass, position);
        let colors = [color];
        enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some(&pass.label),
            color_attachments: if pass.color.is_some() { &colors } else { &[] },
            depth_stencil_attachment: depth,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        })
    }

    /// The command buffers of a frame whose chunks were checked against its passes, and
    /// its passes' timestamps when they are timed. With render bundles the frame's one
    /// encoder comes back open: its `finish` (where wgpu does the encoding work) needs no
    /// registry, so the caller finishes it after letting the registry's lock go.
    pub(super) fn encode_frame(
        &self,
        reg: &Registry<WgpuObjects>,
        passes: &mut [PassSubmit<WgpuChunk>],
    ) -> EncodedFrame {
        let mut open = None;
        let mut native_error = None;
        let mut timed = None;
        let mut buffers = Vec::with_capacity(passes.iter().map(|p| p.chunks.len().max(1)).sum());
        match self.encoding {
            Encoding::RenderBundle => {
                let mut enc = self
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-frame") });
                let mut slot = self.timer.as_ref().map(|t| t.begin());
                for p in passes.iter_mut() {
                    if p.desc.compute {
                        let writes = slot
                            .as_mut()
                            .and_then(|s| s.begin_pass(&mut enc, &p.desc.label))
                            .and_then(GpuProfilerQuery::compute_pass_timestamp_writes);
                        encode_compute(&mut enc, reg, &p.desc.label, &p.chunks, writes);
                        if let Some(s) = &mut slot {
                            s.end_pass(&mut enc);
                        }
                        p.chunks.clear();
                        continue;
                    }
                    let timestamp_writes = slot
                        .as_mut()
                        .and_then(|s| s.begin_pass(&mut enc, &p.desc.label))
                        .and_then(GpuProfilerQuery::render_pass_timestamp_writes);
                    let native = p.desc.native.as_ref().map(|n| (n, self.native_context(reg, &p.desc)));
                    if let Some((n, ctx)) = &native {
                        keep_first(&mut native_error, n.with(&p.desc.label, |d| d.prepare(ctx, &mut enc)));
                    }
                    let (color, depth) = Self::pass_views(reg, &p.desc, ChunkPosition::SINGLE);
                    let colors = [color];
                    let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                        label: Some(&p.desc.label),
                        color_attachments: if p.desc.color.is_some() { &colors } else { &[] },
                        depth_stencil_attachment: depth,
                        timestamp_writes,
                        occlusion_query_set: None,
                        multiview_mask: None,
                    });
                    rp.execute_bundles(p.chunks.iter().map(|c| match &c.encoded {
                        Encoded::Bundle(b) => b,
                        _ => unreachable!("checked above"),
                    }));
                    if let Some((n, ctx)) = &native {
                        // Ended below, before the encoder is used again.
                        let mut rp = rp.forget_lifetime();
                        keep_first(&mut native_error, n.with(&p.desc.label, |d| d.draw(ctx, &mut rp)));
                    } else {
                        drop(rp);
                    }
                    if let Some(s) = &mut slot {
                        s.end_pass(&mut enc);
                    }
                    p.chunks.clear();
                }
                if let (Some(timer), Some(slot)) = (&self.timer, slot) {
                    timed = timer.end(&mut enc, slot, passes.iter().map(|p| &*p.desc.label));
                }
                open = Some(enc);
            }
            Encoding::CommandBuffer => {
                let mut slot = self.timer.as_ref().map(|t| t.begin());
                // Between the passes' command buffers: the previous pass's end and this
                // one's beginning.
                let stamps = |begins: Option<&str>, slot: &mut Slot| {
                    let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("switchyard-timestamps"),
                    });
                    slot.end_pass(&mut enc);
                    if let Some(label) = begins {
                        slot.begin_between(&mut enc, label);
                    }
                    enc
                };
                for p in passes.iter_mut() {
                    if let Some(s) = &mut slot {
                        buffers.push(stamps(Some(&p.desc.label), s).finish());
                    }
                    if p.desc.compute {
                        let mut enc = self
                            .device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(&p.desc.label) });
                        encode_compute(&mut enc, reg, &p.desc.label, &p.chunks, None);
                        p.chunks.clear();
                        buffers.push(enc.finish());
                        continue;
                    }
                    if let Some(n) = &p.desc.native {
                        buffers.push(self.native_command_buffer(reg, &p.desc, n, &mut native_error));
                    } else if p.chunks.is_empty() {
                        // Nothing recorded: the pass still clears and stores its attachments.
                        buffers.push(self.record_command_buffer(reg, &p.desc, ChunkPosition::SINGLE, &[]));
                    }
                    for c in p.chunks.drain(..) {
                        match c.encoded {
                            Encoded::Buffer(b) => buffers.push(b),
                            _ => unreachable!("checked above"),
                        }
                    }
                }
                if let (Some(timer), Some(mut s)) = (&self.timer, slot) {
                    let mut enc = stamps(None, &mut s);
                    timed = timer.end(&mut enc, s, passes.iter().map(|p| &*p.desc.label));
                    buffers.push(enc.finish());
                }
            }
        }
        EncodedFrame { buffers, open, timed, native_error }
    }
}

/// A frame's encoding ([`WgpuBackend::encode_frame`]).
pub(super) struct EncodedFrame {
    pub(super) buffers: Vec<wgpu::CommandBuffer>,
    /// The render-bundle encoding's one encoder, to finish without the registry.
    pub(super) open: Option<wgpu::CommandEncoder>,
    pub(super) timed: Option<Timed>,
    /// The first panic of a native pass's drawing (the frame is submitted, then fails).
    pub(super) native_error: Option<String>,
}

/// Passes an engine draws with wgpu itself (`native.rs`): their context and, in the
/// command-buffer encoding, their own command buffer.
impl WgpuBackend {
    /// The context of `pass`'s drawing (its attachments were checked: live textures).
    pub(super) fn native_context<'a>(&'a self, reg: &Registry<WgpuObjects>, pass: &'a PassDesc) -> WgpuPassContext<'a> {
        let texture = |id| reg.textures.get(id).map(|t| t.obj.0.clone());
        let color = pass.color.and_then(|c| texture(c.texture));
        let depth = pass.depth.and_then(|d| texture(d.texture));
        let any = color.as_ref().or(depth.as_ref());
        WgpuPassContext {
            pass: &pass.label,
            device: &self.device,
            queue: &self.queue,
            size: any.map_or((0, 0), |t| (t.width(), t.height())),
            color_format: color.as_ref().map(wgpu::Texture::format),
            depth_format: depth.as_ref().map(wgpu::Texture::format),
            samples: any.map_or(1, wgpu::Texture::sample_count),
        }
    }

    /// A pass of its own for a native pass of the command-buffer encoding: the drawing's
    /// preparation, then the render pass it draws in. A panic is kept in `error`.
    pub(super) fn native_command_buffer(
        &self,
        reg: &Registry<WgpuObjects>,
        pass: &PassDesc,
        native: &NativePass,
        error: &mut Option<String>,
    ) -> wgpu::CommandBuffer {
        let ctx = self.native_context(reg, pass);
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(&pass.label) });
        keep_first(error, native.with(&pass.label, |d| d.prepare(&ctx, &mut enc)));
        let mut rp = Self::begin_pass(&mut enc, reg, pass, ChunkPosition::SINGLE).forget_lifetime();
        keep_first(error, native.with(&pass.label, |d| d.draw(&ctx, &mut rp)));
        drop(rp);
        enc.finish()
    }
}

/// Keeps the first error of a frame's native passes.
pub(super) fn keep_first(error: &mut Option<String>, result: Result<(), String>) {
    if let Err(e) = result {
        error.get_or_insert(e);
    }
}
