//! Material bind groups, one per texture bound and material binding. A material's group 1
//! binds the constant ring (per draw: at the material's dynamic offset; indexed: all
//! slots, and the objects' materials), its base texture and the material sampler: only
//! the texture and the binding differ between materials, so the materials of one texture
//! and binding share one group, counted here. White's per-draw group (materials without a
//! texture, and those waiting for a texture without a fallback of its own) lives as long
//! as the backend.
//!
//! A material whose texture is still queued binds its fallback's group and holds the
//! texture's own group ahead of time, so the texture's arrival swaps ids: the frame that
//! takes it makes no GPU object (`residency.rs`).

use slotmap::SecondaryMap;
use switchyard_backend::{Backend, BindGroupId, CreateError, TextureId};

use super::gpu::FrameResources;
use crate::material::MaterialBinding;

/// Each bound texture's material groups and the number of holds on each, by binding
/// (`MaterialBinding as usize`).
#[derive(Debug, Default)]
pub(super) struct MaterialGroups {
    groups: [SecondaryMap<TextureId, (BindGroupId, u32)>; 2],
}

impl MaterialGroups {
    /// The groups with white's made (held until the backend goes).
    pub(super) fn new<B: Backend>(b: &B, gpu: &FrameResources) -> Result<Self, CreateError> {
        let mut groups = Self::default();
        groups.hold(b, gpu, gpu.white, MaterialBinding::PerDraw)?;
        Ok(groups)
    }

    /// One more hold on `texture`'s group of `binding`, made on the first.
    pub(super) fn hold<B: Backend>(
        &mut self,
        b: &B,
        gpu: &FrameResources,
        texture: TextureId,
        binding: MaterialBinding,
    ) -> Result<BindGroupId, CreateError> {
        let groups = &mut self.groups[binding as usize];
        if let Some((group, holds)) = groups.get_mut(texture) {
            *holds += 1;
            return Ok(*group);
        }
        let group = gpu.material_group(b, texture, binding)?;
        groups.insert(texture, (group, 1));
        Ok(group)
    }

    /// `texture`'s group of `binding`, held already.
    pub(super) fn get(&self, texture: TextureId, binding: MaterialBinding) -> Option<BindGroupId> {
        self.groups[binding as usize].get(texture).map(|&(g, _)| g)
    }

    /// One hold fewer on `texture`'s group of `binding`: the group to retire once it was
    /// the last.
    pub(super) fn let_go(&mut self, texture: TextureId, binding: MaterialBinding) -> Option<BindGroupId> {
        let groups = &mut self.groups[binding as usize];
        let (group, holds) = groups.get_mut(texture)?;
        *holds -= 1;
        if *holds > 0 {
            return None;
        }
        let group = *group;
        groups.remove(texture);
        Some(group)
    }

    /// Every group (the backend goes): the maps are left empty.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = BindGroupId> + '_ {
        self.groups.iter_mut().flat_map(|g| g.drain().map(|(_, (g, _))| g))
    }

    /// Every group, held.
    pub(super) fn all(&self) -> impl Iterator<Item = BindGroupId> + '_ {
        self.groups.iter().flat_map(|g| g.values().map(|&(g, _)| g))
    }

    /// Groups alive.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.groups.iter().map(|g| g.len()).sum()
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
        let (per_draw, indexed) = (MaterialBinding::PerDraw, MaterialBinding::Indexed);
        let white = groups.get(gpu.white, per_draw).unwrap();
        assert_eq!(groups.hold(&b, &gpu, gpu.white, per_draw).unwrap(), white, "white's group is shared");
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
        let g = groups.hold(&b, &gpu, other, per_draw).unwrap();
        assert_ne!(g, white);
        assert_eq!(groups.hold(&b, &gpu, other, per_draw).unwrap(), g);
        assert_eq!(groups.len(), 2);
        // The indexed binding's group of a texture is another group, held apart.
        let gi = groups.hold(&b, &gpu, other, indexed).unwrap();
        assert!(gi != g && gi != white);
        assert_eq!(groups.len(), 3);
        assert_eq!(groups.let_go(other, per_draw), None, "one hold left");
        assert_eq!(groups.let_go(other, per_draw), Some(g), "the last hold returns the group to retire");
        assert_eq!(groups.get(other, per_draw), None);
        assert_eq!(groups.get(other, indexed), Some(gi), "the indexed group keeps its own hold");
        assert_eq!(groups.let_go(other, indexed), Some(gi));
        assert_eq!(groups.let_go(gpu.white, per_draw), None, "white's own hold stays");
        assert_eq!(groups.let_go(other, per_draw), None, "an unknown texture lets go of nothing");
        assert_eq!(groups.drain().collect::<Vec<_>>(), vec![white]);
        assert_eq!(groups.len(), 0);
    }
}
