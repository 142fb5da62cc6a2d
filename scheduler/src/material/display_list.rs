//! The display-list cache: for each (material, variant, pass) one [`DisplayList`] —
//! pipeline, bind group, resolved constant block, and a patch table of (offset in the
//! block ← offset in the global sheet). A material keeps several lists at once, so
//! switching keywords back and forth never rebuilds; per frame only the constant block is
//! copied into the frame ring and the globals patched in.

use switchyard_backend::{Backend, BindGroupId, PipelineId, TextureFormat};

use super::{Layouts, MaterialRecord, PassKind, PropertySheet, ShaderRecord};
use crate::error::ResourceError;

/// One entry of a patch table: copy `len` bytes of the global sheet at `src` into the
/// constant block at `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Patch {
    /// Offset in the constant block.
    pub(crate) dst: u32,
    /// Offset in the global sheet's values.
    pub(crate) src: u32,
    /// Bytes.
    pub(crate) len: u32,
}

/// A cached, patchable command list for one (material, variant, pass).
#[derive(Clone, Debug)]
pub(crate) struct DisplayList {
    /// Variant mask.
    pub(crate) variant: u32,
    /// Pass.
    pub(crate) pass: PassKind,
    /// Material version it was built from.
    pub(crate) material_version: u64,
    /// Global sheet layout version it was built against.
    pub(crate) globals_version: u64,
    /// The color format and sample count its forward pipeline draws into.
    pub(crate) color_format: TextureFormat,
    pub(crate) color_samples: u32,
    /// The scene passes' group 2 it was built for.
    pub(crate) scene: Option<super::SceneLayout>,
    /// The pipeline.
    pub(crate) pipeline: PipelineId,
    /// The material bind group (forward pass only).
    pub(crate) group: Option<BindGroupId>,
    /// The resolved constant block (material values; globals zero until patched).
    pub(crate) constants: Vec<u8>,
    /// Where globals go.
    pub(crate) patches: Vec<Patch>,
}

impl DisplayList {
    /// Copies the constant block into `dst` and patches the globals in.
    #[inline]
    pub(crate) fn patch_into(&self, dst: &mut [u8], globals: &[u8]) {
        dst[..self.constants.len()].copy_from_slice(&self.constants);
        for p in &self.patches {
            let (d, s, n) = (p.dst as usize, p.src as usize, p.len as usize);
            dst[d..d + n].copy_from_slice(&globals[s..s + n]);
        }
    }
}

/// Counters of one frame's display-list lookups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ListCounts {
    /// Found and current.
    pub hits: u32,
    /// Built for the first time.
    pub misses: u32,
    /// Rebuilt because the material, the global layout or the forward color format changed.
    pub rebuilds: u32,
    /// Render pipelines the builds had to create (a variant and pass first drawn this
    /// frame): each a hitch on a driver that compiles at creation. Steady state: 0.
    pub pipelines_created: u32,
    /// Shader modules (variants) the builds had to compile. Steady state: 0.
    pub shader_modules_created: u32,
}

impl std::ops::AddAssign for ListCounts {
    fn add_assign(&mut self, o: Self) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.rebuilds += o.rebuilds;
        self.pipelines_created += o.pipelines_created;
        self.shader_modules_created += o.shader_modules_created;
    }
}

pub(crate) struct BuildCtx<'a, B: Backend> {
    pub(crate) backend: &'a B,
    pub(crate) layouts: &'a Layouts,
    pub(crate) globals: &'a PropertySheet,
    pub(crate) globals_version: u64,
    /// `false`: rebuild on every lookup (benchmark baseline).
    pub(crate) cache: bool,
}

impl MaterialRecord {
    /// Finds or builds the list for (variant, pass); returns its index in `lists`.
    pub(crate) fn list<B: Backend>(
        &mut self,
        shader: &mut ShaderRecord,
        variant: u32,
        pass: PassKind,
        ctx: &BuildCtx<'_, B>,
        counts: &mut ListCounts,
    ) -> Result<usize, ResourceError> {
        let found = self.lists.iter().position(|l| l.variant == variant && l.pass == pass);
        if let Some(i) = found {
            let l = &self.lists[i];
            let format_fits = (pass != PassKind::Forward
                || (l.color_format, l.color_samples) == (ctx.layouts.color_format, ctx.layouts.color_samples))
                && l.scene == ctx.layouts.scene;
            if ctx.cache
                && l.material_version == self.version
                && l.globals_version == ctx.globals_version
                && format_fits
            {
                counts.hits += 1;
                return Ok(i);
            }
        }
        let made = (shader.pipelines.len(), shader.variants.len());
        let list = self.build(shader, variant, pass, ctx);
        // Counted whether or not the build went on to succeed: what was made stays made.
        counts.pipelines_created += (shader.pipelines.len() - made.0) as u32;
        counts.shader_modules_created += (shader.variants.len() - made.1) as u32;
        let list = list?;
        match found {
            Some(i) => {
                counts.rebuilds += 1;
                self.lists[i] = list;
                Ok(i)
            }
            None => {
                counts.misses += 1;
                self.lists.push(list);
                Ok(self.lists.len() - 1)
            }
        }
    }

    fn build<B: Backend>(
        &self,
        shader: &mut ShaderRecord,
        variant: u32,
        pass: PassKind,
        ctx: &BuildCtx<'_, B>,
    ) -> Result<DisplayList, ResourceError> {
        let pipeline = shader.pipeline(ctx.backend, variant, pass, self.transparent, ctx.layouts)?;
        let mut constants = vec![0u8; shader.block_size as usize];
        let mut patches = Vec::new();
        // Forward and depth passes bind the material's constants (a vertex stage may read
        // them); shadow passes bind no material group.
        if pass != PassKind::Shadow {
            for d in &shader.decls {
                let dst = d.offset as usize;
                let len = d.ty.size() as usize;
                if let Some(i) = self.sheet.find(&d.name) {
                    constants[dst..dst + len].copy_from_slice(self.sheet.bytes(i));
                } else if let Some(g) = ctx.globals.find(&d.name).filter(|&g| ctx.globals.property(g).1 == d.ty) {
                    patches.push(Patch { dst: d.offset, src: ctx.globals.offset(g), len: len as u32 });
                }
            }
        }
        Ok(DisplayList {
            variant,
            pass,
            material_version: self.version,
            globals_version: ctx.globals_version,
            color_format: ctx.layouts.color_format,
            color_samples: ctx.layouts.color_samples,
            scene: ctx.layouts.scene,
            pipeline,
            group: (pass != PassKind::Shadow).then_some(self.group),
            constants,
            patches,
        })
    }
}
