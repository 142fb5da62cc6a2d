//! Resource uploads staged off the frame's path ([`Backend::stage`]): the scheduler's
//! upload thread hands a batch of buffer writes, texture levels and mip generations to
//! the backend, which checks all of it, copies the bytes into staging memory and records
//! the GPU copies; the submission thread submits the result
//! ([`Backend::submit_staged`]) before the frame that first draws with them.

use crate::command::ResourceKind;
use crate::desc::BufferUsage;
use crate::error::{CreateError, SubmitError, WriteError};
use crate::handle::TextureId;
use crate::registry::{NativeObjects, Registry};
use crate::{Backend, BufferCopy, BufferWrite, Resource};

/// One mip level of a texture written from tightly packed texels (or 4 x 4 blocks):
/// exactly [`TextureFormat::level_bytes`](crate::TextureFormat::level_bytes) bytes.
#[derive(Clone, Copy, Debug)]
pub struct TextureWrite<'a> {
    /// Destination texture (needs `COPY_DST`).
    pub texture: TextureId,
    /// Mip level.
    pub level: u32,
    /// The level's bytes.
    pub data: &'a [u8],
}

/// A batch of uploads for [`Backend::stage`], performed in this order: the buffer copies
/// (grown buffers taking their predecessors' contents), the buffer writes, the texture
/// levels, then the mips generated for `mips` (each from its level written above).
#[derive(Clone, Copy, Debug, Default)]
pub struct Uploads<'a> {
    /// GPU-side buffer copies.
    pub copies: &'a [BufferCopy],
    /// Buffer writes.
    pub buffers: &'a [BufferWrite<'a>],
    /// Texture levels.
    pub textures: &'a [TextureWrite<'a>],
    /// Textures whose levels below the first are generated after the writes.
    pub mips: &'a [TextureId],
}

impl Uploads<'_> {
    /// Bytes written.
    pub fn bytes(&self) -> u64 {
        let b: usize = self.buffers.iter().map(|w| w.data.len()).sum();
        let t: usize = self.textures.iter().map(|w| w.data.len()).sum();
        (b + t) as u64
    }

    /// The objects the batch writes, in order (each once per write).
    pub(crate) fn resources(&self) -> impl Iterator<Item = Resource> + '_ {
        let c = self.copies.iter().flat_map(|c| [Resource::Buffer(c.src), Resource::Buffer(c.dst)]);
        let b = c.chain(self.buffers.iter().map(|w| Resource::Buffer(w.buffer)));
        let t = self.textures.iter().map(|w| Resource::Texture(w.texture));
        b.chain(t).chain(self.mips.iter().map(|&t| Resource::Texture(t)))
    }
}

/// Most staging memory [`Backend::prepare_uploads`] makes ahead for each of its two
/// rings (4 GiB).
pub const MAX_STAGING_BYTES: u64 = 4 << 30;

/// What [`Backend::prepare_uploads`] makes ahead.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrepareUploads<'a> {
    /// Formats whose mip generator pipeline to make (uncompressed color formats).
    pub mip_formats: &'a [crate::TextureFormat],
    /// Bytes of mapped staging memory the upload thread's ring holds at least.
    pub staging_bytes: u64,
    /// The sizes of the buffer writes the next frame submits ([`Backend::submit`]'s
    /// uploads: a scene's transforms when it is first drawn, say): the frames' ring gets
    /// staging memory for all of them at once.
    pub frame_writes: &'a [u64],
}

/// What [`Backend::prepare_uploads`] made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreparedUploads {
    /// Mip generator pipelines created (0 where every format had one).
    pub mip_pipelines: u32,
    /// Bytes of mapped staging memory created for the upload thread (0 where its ring
    /// held enough).
    pub staging_bytes: u64,
    /// Bytes of mapped staging memory created for the frames' writes (0 where the ring
    /// held enough).
    pub frame_staging_bytes: u64,
}

/// Checks [`Backend::prepare_uploads`]'s arguments: formats whose mips can be generated
/// (uncompressed color), at most [`MAX_STAGING_BYTES`] for each ring.
pub(crate) fn check_prepare(p: &PrepareUploads<'_>) -> Result<(), CreateError> {
    if let Some(f) = p.mip_formats.iter().find(|f| f.is_compressed() || f.is_depth()) {
        return Err(CreateError::Invalid(format!("mips of {f:?} textures are not generated")));
    }
    let frame = p.frame_writes.iter().try_fold(0u64, |a, &b| a.checked_add(b)).unwrap_or(u64::MAX);
    for (what, requested) in [("staging memory made ahead", p.staging_bytes), ("frame writes staged ahead", frame)] {
        if requested > MAX_STAGING_BYTES {
            return Err(CreateError::Limit { what, requested, maximum: MAX_STAGING_BYTES });
        }
    }
    Ok(())
}

/// Checks every write of a batch against the registry; the first refusal, or nothing.
pub(crate) fn check_uploads<O: NativeObjects>(reg: &Registry<O>, u: &Uploads<'_>) -> Result<(), WriteError> {
    for c in u.copies {
        check_buffer_copy(reg, c)?;
    }
    for w in u.buffers {
        check_buffer_write(reg, w)?;
    }
    for w in u.textures {
        check_texture_write(reg, w.texture, w.level, w.data)?;
    }
    for &t in u.mips {
        let m = &reg.textures.get(t).ok_or(WriteError::InvalidHandle { kind: ResourceKind::Texture })?.meta;
        crate::texels::check_generate(m)?;
    }
    Ok(())
}

/// What a staged batch writes and its bytes: checked again when it is submitted, so that
/// a staged upload into an object destroyed before its submit is refused (a use after
/// free). The null backend's staged batch is this alone.
#[derive(Debug, Default)]
pub struct StagedWrites {
    pub(crate) resources: Vec<Resource>,
    pub(crate) bytes: u64,
    /// Bytes the batch copies between buffers.
    pub(crate) copied: u64,
}

impl StagedWrites {
    pub(crate) fn of(u: &Uploads<'_>) -> Self {
        Self { resources: u.resources().collect(), bytes: u.bytes(), copied: u.copies.iter().map(|c| c.size).sum() }
    }

    /// Whether every object it writes is still alive.
    pub(crate) fn check<O: NativeObjects>(&self, reg: &Registry<O>) -> Result<(), SubmitError> {
        for r in &self.resources {
            let (alive, kind) = match *r {
                Resource::Buffer(b) => (reg.buffers.get(b).is_some(), ResourceKind::Buffer),
                Resource::Texture(t) => (reg.textures.get(t).is_some(), ResourceKind::Texture),
                _ => (true, ResourceKind::Buffer),
            };
            if !alive {
                return Err(SubmitError::Write(WriteError::InvalidHandle { kind }));
            }
        }
        Ok(())
    }
}

/// Stages `uploads` on `backend` and submits them at once: for callers without an
/// upload thread (tests, tools).
pub fn upload_now<B: Backend>(backend: &B, uploads: &Uploads<'_>) -> Result<(), SubmitError> {
    let staged = backend.stage(uploads)?;
    backend.submit_staged(staged)
}

/// A write of `len` bytes at `offset` into a buffer of `size` bytes that takes CPU or copy
/// writes when `usage_ok`.
fn check_write(size: u64, usage_ok: bool, offset: u64, len: u64) -> Result<(), WriteError> {
    if !usage_ok {
        return Err(WriteError::Invalid("buffer lacks COPY_DST usage"));
    }
    if !offset.is_multiple_of(4) || !len.is_multiple_of(4) {
        return Err(WriteError::Invalid("offset and length must be multiples of 4"));
    }
    if offset.checked_add(len).is_none_or(|e| e > size) {
        return Err(WriteError::OutOfRange { offset, len, size });
    }
    Ok(())
}

/// A buffer copy within both buffers, from one with `COPY_SRC` to one with `COPY_DST`.
pub(crate) fn check_buffer_copy<O: NativeObjects>(reg: &Registry<O>, c: &crate::BufferCopy) -> Result<(), WriteError> {
    let stale = WriteError::InvalidHandle { kind: ResourceKind::Buffer };
    let (src, dst) = (&reg.buffers.get(c.src).ok_or(stale.clone())?.meta, &reg.buffers.get(c.dst).ok_or(stale)?.meta);
    if !src.usage.contains(BufferUsage::COPY_SRC) {
        return Err(WriteError::Invalid("copy source lacks COPY_SRC usage"));
    }
    if c.src == c.dst {
        return Err(WriteError::Invalid("a buffer copied onto itself"));
    }
    check_write(src.size, true, 0, c.size)?;
    check_write(dst.size, dst.usage.contains(BufferUsage::COPY_DST), 0, c.size)
}

/// A write of CPU bytes into a buffer: within it, 4-byte aligned, into one with `COPY_DST`.
pub(crate) fn check_buffer_write<O: NativeObjects>(reg: &Registry<O>, w: &BufferWrite<'_>) -> Result<(), WriteError> {
    let b = &reg.buffers.get(w.buffer).ok_or(WriteError::InvalidHandle { kind: ResourceKind::Buffer })?.meta;
    check_write(b.size, b.usage.contains(BufferUsage::COPY_DST), w.offset, w.data.len() as u64)
}

/// A write of one mip level's bytes into a texture ([`crate::texels::check_level_write`]).
pub(crate) fn check_texture_write<O: NativeObjects>(
    reg: &Registry<O>,
    t: TextureId,
    level: u32,
    data: &[u8],
) -> Result<(), WriteError> {
    let m = &reg.textures.get(t).ok_or(WriteError::InvalidHandle { kind: ResourceKind::Texture })?.meta;
    crate::texels::check_level_write(m, level, data)
}
