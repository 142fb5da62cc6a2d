//! Flat property sheets.
//!
//! A sheet is a names array (name + type), a `u32` offsets array, one byte buffer of
//! values, and two bit sets: "gamma → linear" (colors authored in sRGB) and "texture
//! auxiliary" (tiling/offset vectors that belong to a texture). Lookup is a linear scan:
//! 5–30 properties is the common case and a scan over a dense array beats hashing there.
//! Anything that remembers a property remembers its byte *offset*, never a pointer; values
//! are only ever appended or overwritten in place, so offsets stay valid.

/// Type of one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PropertyType {
    /// One f32 (4 bytes, 4-aligned in constant blocks).
    Float,
    /// Four f32 (16 bytes, 16-aligned).
    Vec4,
    /// An RGBA color authored in sRGB; stored linear (16 bytes, 16-aligned).
    Color,
    /// A 4x4 matrix, column-major (64 bytes, 16-aligned).
    Mat4,
}

impl PropertyType {
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            Self::Float => 4,
            Self::Vec4 | Self::Color => 16,
            Self::Mat4 => 64,
        }
    }
    /// Alignment in a constant block (WGSL uniform layout).
    pub fn align(self) -> u32 {
        match self {
            Self::Float => 4,
            _ => 16,
        }
    }
}

/// A property value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PropertyValue {
    /// A float.
    Float(f32),
    /// A vector.
    Vec4([f32; 4]),
    /// An sRGB color; converted to linear when stored.
    Color([f32; 4]),
    /// A matrix, column-major.
    Mat4([f32; 16]),
}

impl PropertyValue {
    /// The value's type.
    pub fn ty(&self) -> PropertyType {
        match self {
            Self::Float(_) => PropertyType::Float,
            Self::Vec4(_) => PropertyType::Vec4,
            Self::Color(_) => PropertyType::Color,
            Self::Mat4(_) => PropertyType::Mat4,
        }
    }
}

/// sRGB → linear for one channel.
#[inline]
pub fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// A property sheet in the flat layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropertySheet {
    names: Vec<(Box<str>, PropertyType)>,
    offsets: Vec<u32>,
    values: Vec<u8>,
    gamma: Vec<u64>,
    texture_aux: Vec<u64>,
}

fn set_bit(bits: &mut Vec<u64>, i: usize, on: bool) {
    if bits.len() <= i / 64 {
        bits.resize(i / 64 + 1, 0);
    }
    if on {
        bits[i / 64] |= 1 << (i % 64);
    } else {
        bits[i / 64] &= !(1 << (i % 64));
    }
}

fn bit(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

impl PropertySheet {
    /// An empty sheet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the sheet is empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Index of `name` (linear scan).
    #[inline]
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|(n, _)| &**n == name)
    }

    /// Name and type of property `i`.
    pub fn property(&self, i: usize) -> (&str, PropertyType) {
        let (n, t) = &self.names[i];
        (n, *t)
    }

    /// Byte offset of property `i` in [`Self::values`].
    #[inline]
    pub fn offset(&self, i: usize) -> u32 {
        self.offsets[i]
    }

    /// The value bytes of every property.
    #[inline]
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// The stored bytes of property `i` (colors already linear).
    #[inline]
    pub fn bytes(&self, i: usize) -> &[u8] {
        let o = self.offsets[i] as usize;
        &self.values[o..o + self.names[i].1.size() as usize]
    }

    /// Whether property `i` was authored in sRGB.
    pub fn is_gamma(&self, i: usize) -> bool {
        bit(&self.gamma, i)
    }

    /// Whether property `i` is a texture's auxiliary (tiling/offset) vector.
    pub fn is_texture_aux(&self, i: usize) -> bool {
        bit(&self.texture_aux, i)
    }

    /// Marks property `i` as a texture's auxiliary vector.
    pub fn mark_texture_aux(&mut self, i: usize) {
        set_bit(&mut self.texture_aux, i, true);
    }

    /// Sets `name`, adding it if new. Returns `false` (and changes nothing) if the name
    /// exists with another type.
    pub fn set(&mut self, name: &str, value: PropertyValue) -> bool {
        let ty = value.ty();
        let i = match self.find(name) {
            Some(i) if self.names[i].1 != ty => return false,
            Some(i) => i,
            None => {
                let off = self.values.len().next_multiple_of(ty.align() as usize);
                self.values.resize(off + ty.size() as usize, 0);
                self.names.push((name.into(), ty));
                self.offsets.push(off as u32);
                self.names.len() - 1
            }
        };
        set_bit(&mut self.gamma, i, ty == PropertyType::Color);
        let o = self.offsets[i] as usize;
        let dst = &mut self.values[o..o + ty.size() as usize];
        match value {
            PropertyValue::Float(v) => dst.copy_from_slice(&v.to_le_bytes()),
            PropertyValue::Vec4(v) => dst.copy_from_slice(bytemuck::cast_slice(&v)),
            PropertyValue::Color([r, g, b, a]) => {
                let lin = [srgb_to_linear(r), srgb_to_linear(g), srgb_to_linear(b), a];
                dst.copy_from_slice(bytemuck::cast_slice(&lin));
            }
            PropertyValue::Mat4(m) => dst.copy_from_slice(bytemuck::cast_slice(&m)),
        }
        true
    }

    /// Builder form of [`Self::set`].
    pub fn with(mut self, name: &str, value: PropertyValue) -> Self {
        self.set(name, value);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_aligned_and_stable() {
        let mut s = PropertySheet::new();
        assert!(s.set("_Roughness", PropertyValue::Float(0.5)));
        assert!(s.set("_BaseColor", PropertyValue::Color([1.0, 0.5, 0.0, 1.0])));
        let off = s.offset(s.find("_BaseColor").unwrap());
        assert_eq!(off % 16, 0);
        assert!(s.set("_Extra", PropertyValue::Vec4([1.0; 4])));
        assert_eq!(s.offset(s.find("_BaseColor").unwrap()), off, "adding keeps offsets");
        assert!(!s.set("_Roughness", PropertyValue::Vec4([0.0; 4])), "type change refused");
        assert_eq!(s.bytes(0), &0.5f32.to_le_bytes());
        let i = s.find("_BaseColor").unwrap();
        assert!(s.is_gamma(i) && !s.is_gamma(0));
        let lin: &[f32] = bytemuck::cast_slice(s.bytes(i));
        assert!((lin[1] - 0.2140).abs() < 1e-3, "sRGB 0.5 is linear 0.214");
    }
}
