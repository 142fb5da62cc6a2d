//! Stage 4, patch: the display lists of every material the views saw, and the frame's
//! constant blocks.
//!
//! For each used material the cache gives one display list per pass (built on first use,
//! rebuilt only when the material or the global sheet's layout changed); each forward-used
//! material gets a constant slot in the frame ring, filled by copying the list's resolved
//! block and patching the globals in. Lists are looked up and built in material order on
//! one worker, because building creates backend objects whose handles are part of the
//! command stream; the constant copies run in parallel.

use switchyard_backend::{Backend, BindGroupId, PipelineId};

use crate::cull::MaterialSet;
use crate::error::RenderError;
use crate::material::MaterialFrame;
use crate::material::{BuildCtx, Library, ListCounts, PassKind, PropertySheet, CONSTANT_SLOT};
use crate::profile;

/// What a material draws with this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrameList {
    /// Forward pipeline.
    pub(crate) forward: PipelineId,
    /// Material bind group.
    pub(crate) group: BindGroupId,
    /// Dynamic offset of its constant slot in the frame ring.
    pub(crate) offset: u32,
    /// Shadow pipeline.
    pub(crate) shadow: PipelineId,
}

/// The patch stage's output: per dense material what it draws with, and the constant
/// blocks of the forward-used materials in slot order.
#[derive(Debug, Default)]
pub(crate) struct PatchedLists {
    pub(crate) lists: Vec<FrameList>,
    /// Index of each material's forward list in its record's `lists`.
    list_index: Vec<u32>,
    /// Dense material of each constant slot.
    slot_materials: Vec<u32>,
    /// Materials seen by shadow views and by forward views (indexed by [`PassKind`]).
    used: [MaterialSet; 2],
    /// The constant ring's bytes (swapped with the frame packet's around the jobs).
    pub(crate) constants: Vec<u8>,
    pub(crate) counts: ListCounts,
    pub(crate) error: Option<RenderError>,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl PatchedLists {
    /// Forgets the materials the last frame's views used; sizes the sets for `materials`.
    pub(crate) fn clear_used(&mut self, materials: usize) {
        self.used.iter_mut().for_each(|u| u.reset(materials));
    }

    /// Adds the materials a view of `pass` saw.
    pub(crate) fn add_used(&mut self, pass: PassKind, used: &MaterialSet) {
        self.used[pass as usize].union_with(used);
    }
}

/// What the patch stage reads.
pub(crate) struct PatchCtx<'a, B: Backend> {
    pub(crate) build: BuildCtx<'a, B>,
    pub(crate) mat_frames: &'a [MaterialFrame],
}

/// Looks up or builds the lists of every material the views saw ([`PatchedLists::add_used`])
/// and fills the constant slots.
pub(crate) fn patch_frame<B: Backend>(ctx: &PatchCtx<'_, B>, library: &mut Library, out: &mut PatchedLists) {
    let Library { shaders, materials } = library;
    profile::zone!("patch");
    let t = std::time::Instant::now();
    out.error = None;
    let nmat = ctx.mat_frames.len();
    let [shadow, fwd] = &out.used;
    out.lists.clear();
    out.lists.resize(nmat, FrameList::default());
    out.list_index.clear();
    out.list_index.resize(nmat, 0);
    out.slot_materials.clear();
    for m in (0..nmat).filter(|&m| fwd.contains(m)) {
        out.lists[m].offset = out.slot_materials.len() as u32 * CONSTANT_SLOT;
        out.slot_materials.push(m as u32);
    }
    let mut counts = ListCounts::default();
    for (m, (rec, list)) in materials.iter_mut().zip(out.lists.iter_mut()).enumerate() {
        let (f, s) = (fwd.contains(m), shadow.contains(m));
        let Some(rec) = rec.as_mut().filter(|_| f || s) else { continue };
        let shader = &mut shaders[rec.shader as usize];
        let variant = ctx.mat_frames[m].variant;
        let handle = rec.handle;
        let err = |source| RenderError::DisplayList { material: handle, source };
        let built = (|| {
            if f {
                let i = rec.list(shader, variant, PassKind::Forward, &ctx.build, &mut counts).map_err(err)?;
                list.forward = rec.lists[i].pipeline;
                list.group = rec.lists[i].group.unwrap_or(rec.group);
                out.list_index[m] = i as u32;
            }
            if s {
                let i = rec.list(shader, variant, PassKind::Shadow, &ctx.build, &mut counts).map_err(err)?;
                list.shadow = rec.lists[i].pipeline;
            }
            Ok(())
        })();
        if let Err(e) = built {
            out.error = Some(e);
            break;
        }
    }
    out.counts = counts;
    if out.error.is_none() {
        let slot = CONSTANT_SLOT as usize;
        out.constants.clear();
        out.constants.resize(out.slot_materials.len() * slot, 0);
        let globals: &PropertySheet = ctx.build.globals;
        let (materials, list_index) = (&*materials, &out.list_index);
        let slot_materials = &out.slot_materials;
        switchyard_kernels::par::fill_blocks(slot, &mut out.constants[..], &|i, dst: &mut [u8]| {
            let m = slot_materials[i];
            let rec = materials[m as usize].as_ref().expect("a used material exists");
            rec.lists[list_index[m as usize] as usize].patch_into(dst, globals.values());
        });
    }
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}
