//! Material bind groups, one per texture bound. A material's group 1 binds the constant
//! ring (at the material's dynamic offset), its base texture and the material sampler:
//! only the texture differs between materials, so the materials of one texture share one
//! group, counted here. White's group (materials without a texture, and those waiting for
//! a texture without a fallback of its own) lives as long as the backend.
//!
//! A material whose texture is still queued binds its fallback's group and holds the
//! texture's own group ahead of time, so the texture's arrival swaps ids: the frame that
//! takes it makes no GPU object (`residency.rs`).

use slotmap::SecondaryMap;
use switchyard_backend::{Backend, BindGroupId, CreateError, TextureId};

use super::gpu::FrameResources;

/// Each bound texture's material group and the number of holds on it.
#[derive(Debug, Default)]
pub(super) struct MaterialGroups {
    groups: SecondaryMap<TextureId, (BindGroupId, u32)>,
}

impl MaterialGroups {
    /// The groups with white's made (held until the backend goes).
    pub(super) fn new<B: Backend>(b: &B, gpu: &FrameResources) -> Result<Self, CreateError> {
        let mut groups = Self::default();
        groups.hold(b, gpu, gpu.white)?;
        Ok(groups)
    }

    /// One more hold on `texture`'s group, made on the first.
    pub(super) fn hold<B: Backend>(
        &mut self,
        b: &B,
        gpu: &FrameResources,
        texture: TextureId,
    ) -> Result<BindGroupId, CreateError> {
        if let Some((group, holds)) = self.groups.get_mut(texture) {
            *holds += 1;
            return Ok(*group);
        }
        let group = gpu.material_group(b, texture)?;
        self.groups.insert(texture, (group, 1));
        Ok(group)
    }

    /// `texture`'s group, held already.
    pub(super) fn get(&self, texture: TextureId) -> Option<BindGroupId> {
        self.groups.get(texture).map(|&(g, _)| g)
    }

    /// One hold fewer on `texture`'s group: the group to retire once it was the last.
    pub(super) fn let_go(&mut self, texture: TextureId) -> Option<BindGroupId> {
        let (group, holds) = self.groups.get_mut(texture)?;
        *holds -= 1;
        if *holds > 0 {
            return None;
        }
        let group = *group;
        self.groups.remove(texture);
        Some(group)
    }

    /// Every group (the backend goes): the map is left empty.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = BindGroupId> + '_ {
        self.groups.drain().map(|(_, (g, _))| g)
    }

    /// Every group, held.
    pub(super) fn all(&self) -> impl Iterator<Item = BindGroupId> + '_ {
        self.groups.values().map(|&(g, _)| g)
    }

    /// Groups alive.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.groups.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_backend::null::NullBackend;

    #[test]
    fn holds_share_one_group_per_texture_and_the_last_let_go_returns_it() {
        let b = NullBackend::new(true);
        let gpu = FrameResources::create(&b, 16, 16, false, false, false).unwrap();
        let mut groups = MaterialGroups::new(&b, &gpu).unwrap();
        let white = groups.get(gpu.white).unwrap();
        assert_eq!(groups.hold(&b, &gpu, gpu.white).unwrap(), white, "white's group is shared");
        let other = b
            .create_texture(&switchyard_backend::TextureDesc {
                label: "other".into(),
                width: 4,
                height: 4,
                format: switchyard_backend::TextureFormat::Rgba8UnormSrgb,
                usage: switchyard_backend::TextureUsage::SAMPLED,
                samples: 1,
                mip_levels: 1,
            })
            .unwrap();
        let g = groups.hold(&b, &gpu, other).unwrap();
        assert_ne!(g, white);
        assert_eq!(groups.hold(&b, &gpu, other).unwrap(), g);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups.let_go(other), None, "one hold left");
        assert_eq!(groups.let_go(other), Some(g), "the last hold returns the group to retire");
        assert_eq!(groups.get(other), None);
        assert_eq!(groups.let_go(gpu.white), None, "white's own hold stays");
        assert_eq!(groups.let_go(other), None, "an unknown texture lets go of nothing");
        assert_eq!(groups.drain().collect::<Vec<_>>(), vec![white]);
        assert_eq!(groups.len(), 0);
    }
}
