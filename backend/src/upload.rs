//! Resource uploads staged off the frame's path ([`Backend::stage`]): the scheduler's
//! upload thread hands a batch of buffer writes, texture levels and mip generations to
//! the backend, which checks all of it, copies the bytes into staging memory and records
//! the GPU copies; the submission thread submits the result
//! ([`Backend::submit_staged`]) before the frame that first draws with them.

use crate::command::ResourceKind;
use crate::error::{SubmitError, WriteError};
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

/// Checks every write of a batch against the registry; the first refusal, or nothing.
pub(crate) fn check_uploads<O: NativeObjects>(reg: &Registry<O>, u: &Uploads<'_>) -> Result<(), WriteError> {
    for c in u.copies {
        crate::null::check_buffer_copy(reg, c)?;
    }
    for w in u.buffers {
        crate::null::check_buffer_write(reg, w)?;
    }
    for w in u.textures {
        crate::null::check_texture_write(reg, w.texture, w.level, w.data)?;
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
