//! Textures: RGBA8 (sRGB or linear) and BC1/BC7 where the backend has them, with mip
//! levels given by the engine or made on the GPU.

use switchyard_backend::{max_mip_levels, Backend, Resource, TextureDesc, TextureFormat, TextureId, TextureUsage};

use super::copies::CpuCopy;
use super::residency::{TextureOptions, Upload};
use super::retire::PoolKey;
use super::Renderer;
use crate::error::ResourceError;
use crate::scene::{HandleKind, TextureHandle};

/// A texture to upload ([`Renderer::create_texture_data`]).
#[derive(Clone, Copy, Debug)]
pub struct TextureData<'a> {
    /// Width of level 0 in texels.
    pub width: u32,
    /// Height of level 0 in texels.
    pub height: u32,
    /// `Rgba8UnormSrgb` (colors), `Rgba8Unorm` (linear data such as normals), or BC1 /
    /// BC7 of either where [`Caps::bc_textures`](switchyard_backend::Caps::bc_textures)
    /// (sides whole 4 x 4 blocks); other formats are refused.
    pub format: TextureFormat,
    /// Level 0 first, then each smaller level, tightly packed, each exactly
    /// [`TextureFormat::level_bytes`] long: one level, or as many as the engine has.
    pub levels: &'a [&'a [u8]],
    /// Make every level below the one given on the GPU, down to 1 x 1 (uncompressed
    /// formats, one level given).
    pub generate_mips: bool,
}

/// How a texture was made: enough to make it again on a new device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TextureSpec {
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) format: TextureFormat,
    /// Levels of the texture.
    pub(super) mip_levels: u32,
    /// Levels the engine gives (1 where the rest are generated).
    pub(super) given: u32,
    pub(super) generate: bool,
}

impl TextureSpec {
    /// The spec of `data`, or why it is refused (before anything is made).
    fn of(data: &TextureData) -> Result<Self, ResourceError> {
        use TextureFormat as F;
        let sampled = [
            F::Rgba8Unorm,
            F::Rgba8UnormSrgb,
            F::Bc1RgbaUnorm,
            F::Bc1RgbaUnormSrgb,
            F::Bc7RgbaUnorm,
            F::Bc7RgbaUnormSrgb,
        ];
        if !sampled.contains(&data.format) {
            return Err(ResourceError::Invalid(format!("{:?} is not a format of sampled textures", data.format)));
        }
        let given = data.levels.len() as u32;
        let most = max_mip_levels(data.width, data.height);
        if given == 0 || given > most || (data.generate_mips && given != 1) {
            return Err(ResourceError::Invalid(format!(
                "{given} levels given for a {}x{} texture (1 to {most}; 1 when the rest are generated)",
                data.width, data.height
            )));
        }
        if data.generate_mips && data.format.is_compressed() {
            return Err(ResourceError::Invalid("mips of compressed textures are given, not generated".into()));
        }
        let mip_levels = if data.generate_mips { most } else { given };
        let (width, height, format, generate) = (data.width, data.height, data.format, data.generate_mips);
        Ok(Self { width, height, format, mip_levels, given, generate })
    }

    /// `levels` as the spec's given levels: their count and each one's size, or why not.
    pub(super) fn check_levels(&self, levels: &[&[u8]]) -> Result<(), ResourceError> {
        let sizes_fit = levels
            .iter()
            .enumerate()
            .all(|(l, d)| d.len() as u64 == self.format.level_bytes(self.width, self.height, l as u32));
        if levels.len() as u32 != self.given || !sizes_fit {
            return Err(ResourceError::Invalid(format!(
                "{} levels of {:?} bytes for a {}x{} {:?} texture of {} given levels",
                levels.len(),
                levels.iter().map(|d| d.len()).collect::<Vec<_>>(),
                self.width,
                self.height,
                self.format,
                self.given
            )));
        }
        Ok(())
    }

    /// `bytes` (the given levels one after another) split into its levels.
    pub(super) fn split<'a>(&self, mut bytes: &'a [u8]) -> Vec<&'a [u8]> {
        (0..self.given)
            .map(|l| {
                let n = (self.format.level_bytes(self.width, self.height, l) as usize).min(bytes.len());
                let (level, rest) = bytes.split_at(n);
                bytes = rest;
                level
            })
            .collect()
    }
}

impl TextureSpec {
    /// The pool key of textures made as this spec says.
    pub(super) fn pool_key(&self) -> PoolKey {
        (self.width, self.height, self.format, self.mip_levels, self.generate)
    }

    /// Bytes of every level.
    pub(super) fn bytes(&self) -> u64 {
        self.format.mip_chain_bytes(self.width, self.height, self.mip_levels)
    }
}

/// Bytes of removed textures the pool keeps at most.
pub(super) const POOL_BYTES: u64 = 64 << 20;

/// Removed textures kept for a later texture of the same size, format and levels (a
/// streaming engine's textures come in few shapes), which takes one instead of allocating
/// GPU memory on the calling thread. A texture enters once the frames that may sample it
/// have finished (`retire.rs`); the pool holds at most [`POOL_BYTES`], and what does not
/// fit is destroyed. Its textures hold their old texels until the new ones arrive, which
/// nothing samples meanwhile (materials bind the fallback).
#[derive(Debug, Default)]
pub(crate) struct TexturePool {
    free: Vec<(PoolKey, TextureId, u64)>,
    bytes: u64,
}

impl TexturePool {
    /// The oldest pooled texture of `key`.
    pub(super) fn take(&mut self, key: PoolKey) -> Option<TextureId> {
        let i = self.free.iter().position(|f| f.0 == key)?;
        let (_, id, bytes) = self.free.remove(i);
        self.bytes -= bytes;
        Some(id)
    }

    /// Keeps `id`; `false` where it does not fit (the caller destroys it).
    pub(crate) fn put(&mut self, key: PoolKey, id: TextureId, bytes: u64) -> bool {
        if self.bytes + bytes > POOL_BYTES {
            return false;
        }
        self.free.push((key, id, bytes));
        self.bytes += bytes;
        true
    }

    /// Every pooled texture, emptying the pool.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = TextureId> + '_ {
        self.bytes = 0;
        self.free.drain(..).map(|f| f.1)
    }

    /// Bytes pooled.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// A texture: its backend object and how it was made.
#[derive(Debug)]
pub(super) struct TextureRecord {
    pub(super) id: TextureId,
    pub(super) spec: TextureSpec,
    /// The given levels one after another, where kept ([`CpuCopy::Keep`]).
    pub(super) texels: Option<Box<[u8]>>,
    /// Lost with a device: the engine must supply the levels again (`copies.rs`).
    pub(super) awaiting: bool,
    /// Its levels wait in the upload queue; materials bind `fallback` meanwhile.
    pub(super) queued: bool,
    /// What materials sample while it is queued (white: `None`).
    pub(super) fallback: Option<TextureHandle>,
    /// Queued textures that fall back to this one.
    pub(super) fallback_users: u32,
}

impl<B: Backend> Renderer<B> {
    /// Uploads an RGBA8 sRGB texture of one level; its texels are kept on the CPU as
    /// [`RendererConfig::cpu_copies`](super::RendererConfig::cpu_copies) says
    /// ([`Renderer::create_texture_with`] chooses per texture).
    pub fn create_texture(&mut self, width: u32, height: u32, rgba8: &[u8]) -> Result<TextureHandle, ResourceError> {
        self.create_texture_with(width, height, rgba8, self.config.cpu_copies)
    }

    /// [`Renderer::create_texture`] with [`TextureOptions`] (or just a [`CpuCopy`]).
    pub fn create_texture_with(
        &mut self,
        width: u32,
        height: u32,
        rgba8: &[u8],
        options: impl Into<TextureOptions>,
    ) -> Result<TextureHandle, ResourceError> {
        let data = TextureData {
            width,
            height,
            format: TextureFormat::Rgba8UnormSrgb,
            levels: &[rgba8],
            generate_mips: false,
        };
        self.create_texture_data_with(&data, options)
    }

    /// Makes a texture of any sampled format with its mip levels, given or made on the
    /// GPU: the texture at once, its levels queued for the upload thread (`residency.rs`:
    /// materials sample its fallback until a frame takes them); kept on the CPU as
    /// [`RendererConfig::cpu_copies`](super::RendererConfig::cpu_copies) says. Refused with a typed error that leaves nothing behind: a format that is not
    /// sampled or a compressed one the backend lacks (`Backend(Unsupported)`), level
    /// counts or sizes that do not fit, generated mips of a compressed texture.
    pub fn create_texture_data(&mut self, data: &TextureData) -> Result<TextureHandle, ResourceError> {
        self.create_texture_data_with(data, self.config.cpu_copies)
    }

    /// [`Renderer::create_texture_data`] with [`TextureOptions`] (or just a [`CpuCopy`]):
    /// `priority` orders the upload queue; `fallback` (a resident texture, else `Invalid`)
    /// is what materials sample until the texture is resident.
    pub fn create_texture_data_with(
        &mut self,
        data: &TextureData,
        options: impl Into<TextureOptions>,
    ) -> Result<TextureHandle, ResourceError> {
        let options = options.into();
        if self.device.lost {
            return Err(ResourceError::Backend(switchyard_backend::CreateError::DeviceLost));
        }
        let spec = TextureSpec::of(data)?;
        spec.check_levels(data.levels)?;
        if let Some(f) = options.fallback {
            let f = self.res.textures.get(f).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?;
            if f.queued {
                return Err(ResourceError::Invalid("a fallback texture must be resident".into()));
            }
        }
        // A removed texture of the same shape, or a new one.
        let id = match self.res.meshes.pool.take(spec.pool_key()) {
            Some(id) => id,
            None => upload_texture(&*self.res.backend, &spec, None)?,
        };
        let bytes = data.levels.concat().into_boxed_slice();
        let texels = (options.copy == CpuCopy::Keep).then(|| bytes.clone());
        let (fallback, fallback_users) = (options.fallback, 0);
        let record = TextureRecord { id, spec, texels, awaiting: false, queued: true, fallback, fallback_users };
        let handle = self.res.textures.insert(record);
        if let Some(f) = fallback.and_then(|f| self.res.textures.get_mut(f)) {
            f.fallback_users += 1;
        }
        self.res.uploads.push(options.priority, Upload::Texture { handle, data: bytes });
        Ok(handle)
    }
}

/// Creates a texture as `spec` says and uploads `levels` (checked against it), making the
/// rest of its mips where the spec says so; `None`: left as made (zero-filled). Destroyed
/// again on a failed upload.
pub(super) fn upload_texture<B: Backend>(
    b: &B,
    spec: &TextureSpec,
    levels: Option<&[&[u8]]>,
) -> Result<TextureId, ResourceError> {
    let generated = if spec.generate { TextureUsage::RENDER_TARGET } else { TextureUsage::NONE };
    let t = b.create_texture(&TextureDesc {
        label: "texture".into(),
        width: spec.width,
        height: spec.height,
        format: spec.format,
        usage: TextureUsage::SAMPLED | TextureUsage::COPY_DST | generated,
        samples: 1,
        mip_levels: spec.mip_levels,
    })?;
    let written = levels.map_or(Ok(()), |levels| {
        levels.iter().enumerate().try_for_each(|(l, d)| b.write_texture_level(t, l as u32, d)).and_then(|()| {
            if spec.generate {
                b.generate_mips(t)
            } else {
                Ok(())
            }
        })
    });
    if let Err(e) = written {
        let _ = b.destroy(Resource::Texture(t));
        return Err(e.into());
    }
    Ok(t)
}
