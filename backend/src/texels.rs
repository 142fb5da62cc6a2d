//! Texel layouts: block-compressed formats, mip levels and their sizes, and the checks of
//! a texture's levels and of a write into one (shared by every backend).

use crate::{Caps, CreateError, TextureDesc, TextureFormat, TextureUsage, WriteError};

impl TextureFormat {
    /// Whether texels come in compressed 4 x 4 blocks (BC1, BC7: sampled only, never
    /// rendered to; need [`Caps::bc_textures`]).
    #[inline]
    pub fn is_compressed(self) -> bool {
        matches!(self, Self::Bc1RgbaUnorm | Self::Bc1RgbaUnormSrgb | Self::Bc7RgbaUnorm | Self::Bc7RgbaUnormSrgb)
    }

    /// (side of a block in texels, bytes per block): (1, bytes per texel) for uncompressed
    /// formats, (4, 8) for BC1, (4, 16) for BC7.
    #[inline]
    pub fn block(self) -> (u32, u32) {
        match self {
            Self::Bc1RgbaUnorm | Self::Bc1RgbaUnormSrgb => (4, 8),
            Self::Bc7RgbaUnorm | Self::Bc7RgbaUnormSrgb => (4, 16),
            f => (1, f.bytes_per_texel()),
        }
    }

    /// Bytes of one row of blocks of mip level `level` of a texture `width` texels wide.
    #[inline]
    pub fn row_bytes(self, width: u32, level: u32) -> u32 {
        let (side, bytes) = self.block();
        level_side(width, level).div_ceil(side) * bytes
    }

    /// Bytes of mip level `level` of a `width` x `height` texture.
    #[inline]
    pub fn level_bytes(self, width: u32, height: u32, level: u32) -> u64 {
        let (side, _) = self.block();
        u64::from(self.row_bytes(width, level)) * u64::from(level_side(height, level).div_ceil(side))
    }

    /// Bytes of levels `0..levels` of a `width` x `height` texture.
    pub fn mip_chain_bytes(self, width: u32, height: u32, levels: u32) -> u64 {
        (0..levels).map(|l| self.level_bytes(width, height, l)).sum()
    }
}

/// The side of mip level `level` of a side `side` (at least 1).
#[inline]
pub fn level_side(side: u32, level: u32) -> u32 {
    side.checked_shr(level).unwrap_or(0).max(1)
}

/// The most mip levels a `width` x `height` texture has (down to 1 x 1).
#[inline]
pub fn max_mip_levels(width: u32, height: u32) -> u32 {
    32 - width.max(height).max(1).leading_zeros()
}

/// A texture's levels and format against the backend: a level count from 1 to the full
/// chain (1 when multisampled), a compressed format only where the backend has it, only
/// sampled or copied, with sides that are whole blocks.
pub(crate) fn check_levels(d: &TextureDesc, caps: &Caps) -> Result<(), CreateError> {
    let most = max_mip_levels(d.width, d.height);
    let one_level = d.samples > 1 || d.usage.contains(TextureUsage::TRANSIENT);
    if d.mip_levels == 0 || d.mip_levels > most || (one_level && d.mip_levels != 1) {
        return Err(CreateError::Invalid(format!(
            "texture `{}`: {} mip levels (1 to {most}; 1 when multisampled or transient)",
            d.label, d.mip_levels
        )));
    }
    if d.format.is_compressed() {
        if !caps.bc_textures {
            return Err(CreateError::Unsupported("BC-compressed textures (the adapter lacks them)"));
        }
        let allowed = TextureUsage::SAMPLED | TextureUsage::COPY_DST | TextureUsage::COPY_SRC;
        if d.usage.0 & !allowed.0 != 0 {
            return Err(CreateError::Invalid(format!(
                "compressed texture `{}` can only be sampled and copied",
                d.label
            )));
        }
        if !d.width.is_multiple_of(4) || !d.height.is_multiple_of(4) {
            return Err(CreateError::Invalid(format!(
                "compressed texture `{}` is {}x{}: sides must be whole 4x4 blocks",
                d.label, d.width, d.height
            )));
        }
    }
    Ok(())
}

/// What the registry keeps of a texture, and what the checks of its levels read.
#[derive(Debug, Clone)]
pub(crate) struct TextureMeta {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) format: TextureFormat,
    pub(crate) usage: TextureUsage,
    pub(crate) samples: u32,
    pub(crate) mip_levels: u32,
    /// A surface's stand-in with no image bound: recorded into, never submitted.
    pub(crate) unbound: bool,
}

/// A write of `data` into mip level `level` of a texture: it exists, takes CPU writes, and
/// `data` is exactly that level's bytes.
pub(crate) fn check_level_write(m: &TextureMeta, level: u32, data: &[u8]) -> Result<(), WriteError> {
    if !m.usage.contains(TextureUsage::COPY_DST) {
        return Err(WriteError::Invalid("texture lacks COPY_DST usage"));
    }
    if level >= m.mip_levels {
        return Err(WriteError::Invalid("mip level past the texture's levels"));
    }
    let size = m.format.level_bytes(m.width, m.height, level);
    if data.len() as u64 != size {
        return Err(WriteError::OutOfRange { offset: 0, len: data.len() as u64, size });
    }
    Ok(())
}

/// A texture whose levels below the first can be made from it on the GPU: more than one
/// level, an uncompressed color format, sampled and rendered to.
pub(crate) fn check_generate(m: &TextureMeta) -> Result<(), WriteError> {
    if m.mip_levels < 2 {
        return Err(WriteError::Invalid("generating mips of a texture with one level"));
    }
    if m.format.is_compressed() || m.format.is_depth() || m.samples > 1 {
        return Err(WriteError::Invalid("mips are generated for single-sampled uncompressed color textures"));
    }
    if !m.usage.contains(TextureUsage::SAMPLED | TextureUsage::RENDER_TARGET) {
        return Err(WriteError::Invalid("generating mips needs SAMPLED and RENDER_TARGET usage"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_sizes() {
        assert_eq!(max_mip_levels(1, 1), 1);
        assert_eq!(max_mip_levels(256, 64), 9);
        assert_eq!(max_mip_levels(257, 1), 9);
        assert_eq!(level_side(5, 1), 2);
        assert_eq!(level_side(5, 40), 1);
        let f = TextureFormat::Rgba8UnormSrgb;
        assert_eq!((f.level_bytes(8, 4, 0), f.level_bytes(8, 4, 1), f.level_bytes(8, 4, 3)), (128, 32, 4));
        assert_eq!(f.mip_chain_bytes(8, 4, 4), 128 + 32 + 8 + 4);
        // Blocks round up: a 2x2 level of BC1 is one 8-byte block; BC7 16.
        assert_eq!(TextureFormat::Bc1RgbaUnormSrgb.level_bytes(8, 8, 0), 4 * 8);
        assert_eq!(TextureFormat::Bc1RgbaUnormSrgb.level_bytes(8, 8, 2), 8);
        assert_eq!(TextureFormat::Bc7RgbaUnorm.level_bytes(8, 8, 3), 16);
        assert_eq!(TextureFormat::Bc7RgbaUnorm.row_bytes(12, 0), 48);
    }
}
