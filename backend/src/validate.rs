//! The command validator every backend runs before executing a chunk.
//!
//! It walks the chunk once, tracking bound state the way the GPU API will, and returns the
//! first problem as a typed [`RecordError`]. The scheduler never produces such a chunk; a
//! failure here means a scheduler bug or a hand-written stream from a user.

use crate::command::{AttachmentRole, LoadOp, StoreOp};
use crate::command::{Caps, Command, Counts, PassDesc, ResourceKind, DRAW_INDEXED_INDIRECT_SIZE};
use crate::command::{DISPATCH_INDIRECT_SIZE, MAX_WORKGROUPS_PER_DIMENSION};
use crate::desc::{BufferUsage, IndexFormat, StepMode, TextureFormat, TextureUsage};
use crate::error::{PassError, ReadbackError, RecordError};
use crate::handle::{BindGroupId, BindGroupLayoutId, TextureId};
use crate::registry::{NativeObjects, PipelineMeta, Registry};

/// Most bind groups and vertex slots the validator tracks.
const MAX_GROUPS: usize = 8;
const MAX_SLOTS: usize = 8;

/// A pass's attachment formats and size: what a chunk is recorded against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassLayout {
    /// Color format.
    pub color: Option<TextureFormat>,
    /// Depth format.
    pub depth: Option<TextureFormat>,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// A compute pass (no attachments, size 0 x 0).
    pub compute: bool,
    /// Samples per texel of the attachments.
    pub samples: u32,
    /// The textures the pass renders into (color, depth, resolve): no bind group of the
    /// pass may sample them.
    pub attachments: [Option<TextureId>; 3],
}

pub(crate) fn resolve_pass<O: NativeObjects>(reg: &Registry<O>, pass: &PassDesc) -> Result<PassLayout, PassError> {
    if pass.compute && pass.native.is_some() {
        return Err(PassError::Native("is a render pass, not a compute pass"));
    }
    if pass.compute {
        if pass.color.is_some() || pass.depth.is_some() {
            return Err(PassError::ComputeWithAttachments);
        }
        let attachments = [None; 3];
        return Ok(PassLayout {
            color: None,
            depth: None,
            width: 0,
            height: 0,
            compute: true,
            samples: 1,
            attachments,
        });
    }
    if pass.color.is_some_and(|c| matches!(c.load, LoadOp::Clear(v) if !v.iter().all(|x| x.is_finite()))) {
        return Err(PassError::InvalidClear { role: AttachmentRole::Color });
    }
    if pass.depth.is_some_and(|d| matches!(d.load, LoadOp::Clear(v) if !(0.0..=1.0).contains(&v))) {
        return Err(PassError::InvalidClear { role: AttachmentRole::Depth });
    }
    let mut size = None;
    let mut color = None;
    let mut depth = None;
    let mut samples = None;
    for (role, tex) in
        [(AttachmentRole::Color, pass.color.map(|c| c.texture)), (AttachmentRole::Depth, pass.depth.map(|d| d.texture))]
    {
        let Some(tex) = tex else { continue };
        let t = reg.textures.get(tex).ok_or(PassError::InvalidAttachment { role })?;
        let m = &t.meta;
        if !m.usage.contains(TextureUsage::RENDER_TARGET) || m.format.is_depth() != (role == AttachmentRole::Depth) {
            return Err(PassError::NotRenderTarget { role });
        }
        if m.usage.contains(TextureUsage::TRANSIENT) {
            let (clears, discards) = match role {
                AttachmentRole::Color => {
                    pass.color.map_or((true, true), |c| (!matches!(c.load, LoadOp::Load), c.store == StoreOp::Discard))
                }
                AttachmentRole::Depth => {
                    pass.depth.map_or((true, true), |d| (!matches!(d.load, LoadOp::Load), d.store == StoreOp::Discard))
                }
            };
            if !(clears && discards) {
                return Err(PassError::TransientKept { role });
            }
        }
        if size.is_some_and(|s| s != (m.width, m.height)) {
            return Err(PassError::SizeMismatch);
        }
        if samples.is_some_and(|s| s != m.samples) {
            return Err(PassError::SampleMismatch);
        }
        size = Some((m.width, m.height));
        samples = Some(m.samples);
        match role {
            AttachmentRole::Color => color = Some(m.format),
            AttachmentRole::Depth => depth = Some(m.format),
        }
    }
    let (width, height) = size.ok_or(PassError::NoAttachments)?;
    let samples = samples.unwrap_or(1);
    if let Some(r) = pass.color.and_then(|c| c.resolve) {
        let bad = PassError::InvalidResolve;
        let t = &reg.textures.get(r).ok_or(bad("stale handle"))?.meta;
        if samples == 1 {
            return Err(bad("the attachment is single-sampled"));
        }
        if t.samples != 1 || !t.usage.contains(TextureUsage::RENDER_TARGET) || t.usage.contains(TextureUsage::TRANSIENT)
        {
            return Err(bad("it must be a single-sample, non-transient render target"));
        }
        if Some(t.format) != color || (t.width, t.height) != (width, height) {
            return Err(bad("its format or size differs from the attachment's"));
        }
    }
    let attachments =
        [pass.color.map(|c| c.texture), pass.depth.map(|d| d.texture), pass.color.and_then(|c| c.resolve)];
    Ok(PassLayout { color, depth, width, height, compute: false, samples, attachments })
}

#[derive(Clone, Copy)]
struct BoundGroup {
    layout: BindGroupLayoutId,
    group: BindGroupId,
}

/// Validates one chunk against `pass`; returns what it counts.
pub(crate) fn validate_chunk<O: NativeObjects>(
    reg: &Registry<O>,
    pass: &PassLayout,
    commands: &[Command],
    caps: &Caps,
) -> Result<Counts, RecordError> {
    let mut counts = Counts { commands: commands.len() as u64, ..Counts::default() };
    let mut pipeline: Option<&PipelineMeta> = None;
    let mut groups: [Option<BoundGroup>; MAX_GROUPS] = [None; MAX_GROUPS];
    // Bytes available from the bound offset to the end of each vertex buffer.
    let mut slots: [Option<u64>; MAX_SLOTS] = [None; MAX_SLOTS];
    let mut index: Option<(u64, IndexFormat)> = None;

    for (i, cmd) in commands.iter().enumerate() {
        let handle = |kind| RecordError::InvalidHandle { index: i, kind };
        let compute_command = matches!(cmd, Command::Dispatch { .. } | Command::DispatchIndirect { .. });
        let either = matches!(cmd, Command::SetPipeline(_) | Command::SetBindGroup { .. });
        if !either && compute_command != pass.compute {
            let what =
                if pass.compute { "a draw or vertex binding in a compute pass" } else { "a dispatch in a render pass" };
            return Err(RecordError::WrongPassKind { index: i, what });
        }
        match *cmd {
            Command::SetPipeline(p) => {
                let p = &reg.pipelines.get(p).ok_or(handle(ResourceKind::Pipeline))?.meta;
                if p.compute != pass.compute {
                    let what = if pass.compute {
                        "a render pipeline in a compute pass"
                    } else {
                        "a compute pipeline in a render pass"
                    };
                    return Err(RecordError::WrongPassKind { index: i, what });
                }
                if p.color != pass.color || p.depth != pass.depth || (!p.compute && p.samples != pass.samples) {
                    return Err(RecordError::FormatMismatch { index: i });
                }
                pipeline = Some(p);
                counts.state_changes += 1;
            }
            Command::SetBindGroup { index: g, group, offsets } => {
                let bg = &reg.bind_groups.get(group).ok_or(handle(ResourceKind::BindGroup))?.meta;
                if g as usize >= MAX_GROUPS.min(caps.max_bind_groups as usize) {
                    return Err(RecordError::LayoutMismatch { index: i, message: "bind group index past the limit" });
                }
                let offs = offsets.as_slice();
                if offs.len() != bg.dynamic.len() {
                    return Err(RecordError::LayoutMismatch {
                        index: i,
                        message: "dynamic offset count differs from the layout",
                    });
                }
                for (&o, w) in offs.iter().zip(&bg.dynamic) {
                    if o % caps.min_uniform_offset_alignment != 0 {
                        return Err(RecordError::LayoutMismatch { index: i, message: "dynamic offset is not aligned" });
                    }
                    let end = u64::from(o) + w.base + w.size;
                    if end > w.buffer_size {
                        return Err(RecordError::OutOfRange {
                            index: i,
                            what: "dynamic binding",
                            end,
                            limit: w.buffer_size,
                        });
                    }
                }
                if bg.textures.iter().any(|t| pass.attachments.contains(&Some(*t))) {
                    return Err(RecordError::UsageConflict { index: i });
                }
                groups[g as usize] = Some(BoundGroup { layout: bg.layout, group });
                counts.state_changes += 1;
            }
            Command::SetVertexBuffer { slot, buffer, offset } => {
                let b = &reg.buffers.get(buffer).ok_or(handle(ResourceKind::Buffer))?.meta;
                if !b.usage.contains(BufferUsage::VERTEX) {
                    return Err(RecordError::BadUsage { index: i, usage: "VERTEX" });
                }
                if slot as usize >= MAX_SLOTS {
                    return Err(RecordError::LayoutMismatch { index: i, message: "vertex slot past the limit" });
                }
                if offset % 4 != 0 {
                    return Err(RecordError::Unaligned { index: i, what: "vertex buffer" });
                }
                if offset > b.size {
                    return Err(RecordError::OutOfRange {
                        index: i,
                        what: "vertex buffer offset",
                        end: offset,
                        limit: b.size,
                    });
                }
                slots[slot as usize] = Some(b.size - offset);
                counts.state_changes += 1;
            }
            Command::SetIndexBuffer { buffer, format, offset } => {
                let b = &reg.buffers.get(buffer).ok_or(handle(ResourceKind::Buffer))?.meta;
                if !b.usage.contains(BufferUsage::INDEX) {
                    return Err(RecordError::BadUsage { index: i, usage: "INDEX" });
                }
                if offset > b.size || offset % format.size() != 0 {
                    return Err(RecordError::OutOfRange {
                        index: i,
                        what: "index buffer offset",
                        end: offset,
                        limit: b.size,
                    });
                }
                index = Some((b.size - offset, format));
                counts.state_changes += 1;
            }
            Command::Draw { first_vertex, vertex_count, first_instance, instance_count } => {
                let p = check_bindings(reg, i, pipeline, &groups, &slots)?;
                check_vertex_ranges(
                    i,
                    p,
                    &slots,
                    Some(end(first_vertex, vertex_count)),
                    end(first_instance, instance_count),
                )?;
                counts.draw_calls += 1;
                counts.draws += 1;
                counts.instances += u64::from(instance_count);
            }
            Command::DrawIndexed { first_index, index_count, first_instance, instance_count, .. } => {
                let p = check_bindings(reg, i, pipeline, &groups, &slots)?;
                let (avail, format) = index.ok_or(RecordError::MissingIndexBuffer { index: i })?;
                let need = end(first_index, index_count) * format.size();
                if need > avail {
                    return Err(RecordError::OutOfRange { index: i, what: "index", end: need, limit: avail });
                }
                check_vertex_ranges(i, p, &slots, None, end(first_instance, instance_count))?;
                counts.draw_calls += 1;
                counts.draws += 1;
                counts.instances += u64::from(instance_count);
            }
            Command::MultiDrawIndexedIndirect { buffer, offset, count } => {
                if !(caps.indirect_draws || caps.multi_draw_indirect) {
                    return Err(RecordError::Unsupported { index: i, what: "multi-draw-indirect" });
                }
                check_bindings(reg, i, pipeline, &groups, &slots)?;
                index.ok_or(RecordError::MissingIndexBuffer { index: i })?;
                let need = u64::from(count) * DRAW_INDEXED_INDIRECT_SIZE;
                check_indirect(reg, i, buffer, offset, need, "indirect records")?;
                counts.draw_calls += 1;
                counts.draws += u64::from(count);
            }
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count } => {
                if !caps.indirect_count {
                    return Err(RecordError::Unsupported { index: i, what: "multi-draw-indirect with a count buffer" });
                }
                check_bindings(reg, i, pipeline, &groups, &slots)?;
                index.ok_or(RecordError::MissingIndexBuffer { index: i })?;
                let need = u64::from(max_count) * DRAW_INDEXED_INDIRECT_SIZE;
                check_indirect(reg, i, buffer, offset, need, "indirect records")?;
                check_indirect(reg, i, count_buffer, count_offset, 4, "indirect count")?;
                counts.draw_calls += 1;
                counts.draws += u64::from(max_count);
            }
            Command::Dispatch { x, y, z } => {
                check_bindings(reg, i, pipeline, &groups, &slots)?;
                if let Some(&n) = [x, y, z].iter().find(|&&n| n > MAX_WORKGROUPS_PER_DIMENSION) {
                    return Err(RecordError::OutOfRange {
                        index: i,
                        what: "workgroups per dimension",
                        end: u64::from(n),
                        limit: u64::from(MAX_WORKGROUPS_PER_DIMENSION),
                    });
                }
                counts.dispatches += 1;
            }
            Command::DispatchIndirect { buffer, offset } => {
                check_bindings(reg, i, pipeline, &groups, &slots)?;
                let b = &reg.buffers.get(buffer).ok_or(handle(ResourceKind::Buffer))?.meta;
                if !b.usage.contains(BufferUsage::INDIRECT) {
                    return Err(RecordError::BadUsage { index: i, usage: "INDIRECT" });
                }
                let bound_writable = groups
                    .iter()
                    .flatten()
                    .any(|g| reg.bind_groups.get(g.group).is_some_and(|bg| bg.meta.writable.contains(&buffer)));
                if bound_writable {
                    return Err(RecordError::UsageConflict { index: i });
                }
                let need = offset.saturating_add(DISPATCH_INDIRECT_SIZE);
                if offset % 4 != 0 || need > b.size {
                    return Err(RecordError::OutOfRange {
                        index: i,
                        what: "indirect dispatch",
                        end: need,
                        limit: b.size,
                    });
                }
                counts.dispatches += 1;
            }
        }
    }
    Ok(counts)
}

/// `need` bytes of `buffer` from `offset` can be read as indirect arguments by command `i`.
fn check_indirect<O: NativeObjects>(
    reg: &Registry<O>,
    i: usize,
    buffer: crate::BufferId,
    offset: u64,
    need: u64,
    what: &'static str,
) -> Result<(), RecordError> {
    let b = &reg.buffers.get(buffer).ok_or(RecordError::InvalidHandle { index: i, kind: ResourceKind::Buffer })?.meta;
    if !b.usage.contains(BufferUsage::INDIRECT) {
        return Err(RecordError::BadUsage { index: i, usage: "INDIRECT" });
    }
    let end = offset.saturating_add(need);
    if !offset.is_multiple_of(4) || end > b.size {
        return Err(RecordError::OutOfRange { index: i, what, end, limit: b.size });
    }
    Ok(())
}

#[inline]
fn end(first: u32, count: u32) -> u64 {
    u64::from(first) + u64::from(count)
}

#[inline]
fn check_bindings<'a, O: NativeObjects>(
    reg: &Registry<O>,
    i: usize,
    pipeline: Option<&'a PipelineMeta>,
    groups: &[Option<BoundGroup>; MAX_GROUPS],
    slots: &[Option<u64>; MAX_SLOTS],
) -> Result<&'a PipelineMeta, RecordError> {
    let p = pipeline.ok_or(RecordError::NoPipeline { index: i })?;
    for (g, layout) in p.layouts.iter().enumerate() {
        if groups.get(g).copied().flatten().is_none_or(|b| b.layout != *layout) {
            return Err(RecordError::MissingBindGroup { index: i, group: g as u32 });
        }
    }
    // Uniform blocks the shader reads: the bound range holds them.
    for &(g, binding, need) in &p.uniform_sizes {
        let bound = groups.get(g as usize).copied().flatten().and_then(|b| reg.bind_groups.get(b.group));
        let size = bound.and_then(|b| b.meta.buffer_sizes.iter().find(|(n, _)| *n == binding)).map_or(0, |s| s.1);
        if size < need {
            return Err(RecordError::OutOfRange { index: i, what: "bound uniform block", end: need, limit: size });
        }
    }
    for s in 0..p.vertex.len() {
        if slots.get(s).copied().flatten().is_none() {
            return Err(RecordError::MissingVertexBuffer { index: i, slot: s as u32 });
        }
    }
    Ok(p)
}

#[inline]
fn check_vertex_ranges(
    i: usize,
    p: &PipelineMeta,
    slots: &[Option<u64>; MAX_SLOTS],
    vertex_end: Option<u64>,
    instance_end: u64,
) -> Result<(), RecordError> {
    for (s, &(stride, step)) in p.vertex.iter().enumerate() {
        let avail = slots[s].unwrap_or(0);
        let (what, n) = match step {
            StepMode::Vertex => match vertex_end {
                Some(n) => ("vertex", n),
                None => continue,
            },
            StepMode::Instance => ("instance", instance_end),
        };
        let need = n * stride;
        if need > avail {
            return Err(RecordError::OutOfRange { index: i, what, end: need, limit: avail });
        }
    }
    Ok(())
}

/// Whether `len` bytes of buffer `b` from `offset` can be read back.
pub(crate) fn check_buffer_read(b: &crate::registry::BufferMeta, offset: u64, len: u64) -> Result<(), ReadbackError> {
    if !b.usage.contains(BufferUsage::COPY_SRC) {
        return Err(ReadbackError::Unsupported("buffer lacks COPY_SRC usage"));
    }
    if !offset.is_multiple_of(4)
        || !len.is_multiple_of(4)
        || len == 0
        || offset.checked_add(len).is_none_or(|end| end > b.size)
    {
        return Err(ReadbackError::Unsupported("range is empty, unaligned or past the buffer's end"));
    }
    Ok(())
}

/// A pass about to be submitted draws into no surface stand-in without an image
/// ([`crate::Backend::surface_stand_in`]).
pub(crate) fn check_bound<O: NativeObjects>(reg: &Registry<O>, pass: &PassDesc) -> Result<(), crate::SubmitError> {
    let color = pass.color.iter().flat_map(|c| [Some(c.texture), c.resolve]).flatten();
    match color.filter_map(|t| reg.textures.get(t)).find(|t| t.meta.unbound) {
        Some(_) => Err(crate::SubmitError::Present(crate::SurfaceError::NotAcquired)),
        None => Ok(()),
    }
}
