//! Stage 4, patch: the display lists of every material the views saw, and the frame's
//! constant blocks.
//!
//! For each used material the cache gives one display list per pass (built on first use,
//! rebuilt only when the material or the global sheet's layout changed); each material a
//! forward or depth pass draws gets a constant slot in the frame ring, filled by copying
//! the list's resolved block and patching the globals in. Lists are looked up and built in
//! material order on one worker, because building creates backend objects whose handles
//! are part of the command stream; the constant copies run in parallel once there are more
//! than [`PIECE_SLOTS`] of them.
//!
//! Two jobs patch a frame ([`PatchPart`]): one for the forward and depth passes (their
//! lists and the constant slots both bind) after those passes' culls, one for the shadow
//! passes after theirs and after the first (so backend objects are made in one order at
//! any thread count). A camera pass's record then waits for its own part only, not for
//! the shadow culls.

use switchyard_backend::{Backend, BindGroupId, PipelineId};

use crate::cull::MaterialSet;
use crate::error::RenderError;
use crate::material::MaterialFrame;
use crate::material::{BuildCtx, Library, ListCounts, MaterialBinding, PassKind, PropertySheet, CONSTANT_SLOT};
use crate::profile;

/// Constant slots filled per piece of the parallel fill (256 KiB). A slot is a copy of at
/// most 256 bytes and a few patches, tens of nanoseconds: a frame's few hundred slots are
/// filled by the patch job alone, since forking workers for them cost more than the copies
/// (with one piece per slot the stage took 0.046 ms a frame for 513 slots on 16 threads,
/// run 21).
const PIECE_SLOTS: usize = 1024;

/// A constant slot that no material this frame draws with holds (laid out by dense
/// material, where one of the frame's materials is indexed).
const NO_MATERIAL: u32 = u32::MAX;

/// Which passes' lists a patch job builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchPart {
    /// Forward and depth passes: their pipelines, material groups and constant slots.
    Forward = 0,
    /// Shadow passes: their pipelines (they bind no material group).
    Shadow = 1,
}

impl PatchPart {
    /// The part whose lists a pass of `kind` draws with.
    pub(crate) fn of(kind: PassKind) -> Self {
        match kind {
            PassKind::Shadow => PatchPart::Shadow,
            PassKind::Forward | PassKind::Depth => PatchPart::Forward,
        }
    }

    /// The part's name in its job's name (`patch[forward]`, `patch[shadow]`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            PatchPart::Forward => "forward",
            PatchPart::Shadow => "shadow",
        }
    }
}

/// What a material draws with this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrameList {
    /// Forward pipeline.
    pub(crate) forward: PipelineId,
    /// Material bind group.
    pub(crate) group: BindGroupId,
    /// Dynamic offset of its constant slot in the frame ring; `None` for an indexed
    /// material ([`MaterialBinding::Indexed`]), whose group binds every slot (its slot is
    /// its dense index: the frame's slots are then laid out by dense material).
    pub(crate) offset: Option<u32>,
    /// Shadow pipeline.
    pub(crate) shadow: PipelineId,
    /// Depth-prepass pipeline (it binds the material group and slot as forward does).
    pub(crate) depth: PipelineId,
}

/// One patch job's output: per dense material what it draws with in the part's passes
/// (the other part's fields stay default), and for [`PatchPart::Forward`] the constant
/// blocks of its materials in slot order.
#[derive(Debug, Default)]
pub(crate) struct PatchedLists {
    pub(crate) lists: Vec<FrameList>,
    /// Index of each material's forward list in its record's `lists`.
    list_index: Vec<u32>,
    /// Dense material of each constant slot ([`NO_MATERIAL`]: a slot no material of this
    /// frame uses, left zero).
    slot_materials: Vec<u32>,
    /// Materials seen by shadow views and by forward views (indexed by [`PassKind`]).
    used: [MaterialSet; 3],
    /// The constant ring's bytes (swapped with the frame packet's around the jobs).
    pub(crate) constants: Vec<u8>,
    pub(crate) counts: ListCounts,
    pub(crate) error: Option<RenderError>,
    /// The lists were not built this frame (this part's error, or the forward part's):
    /// the part's records record nothing and the frame fails.
    pub(crate) failed: bool,
    /// Time the job took, ms.
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

    /// Builds nothing this frame: an earlier part failed (the frame fails with its error).
    pub(crate) fn skip(&mut self) {
        (self.error, self.failed, self.ms, self.counts) = (None, true, 0.0, ListCounts::default());
    }
}

/// What the patch stage reads.
pub(crate) struct PatchCtx<'a, B: Backend> {
    pub(crate) build: BuildCtx<'a, B>,
    pub(crate) mat_frames: &'a [MaterialFrame],
}

/// Looks up or builds the `part`'s lists of every material its views saw
/// ([`PatchedLists::add_used`]) and, for [`PatchPart::Forward`], fills the constant slots.
pub(crate) fn patch_frame<B: Backend>(
    ctx: &PatchCtx<'_, B>,
    library: &mut Library,
    out: &mut PatchedLists,
    part: PatchPart,
) {
    let Library { shaders, materials } = library;
    profile::zone_text!("patch", "{} passes", part.name());
    let t = std::time::Instant::now();
    out.error = None;
    let nmat = ctx.mat_frames.len();
    let forward = part == PatchPart::Forward;
    // Batches of indexed materials draw with their batch material's lists: those are
    // built too (whether or not its own objects are drawn). Only forward and depth passes
    // batch that way, so only their part widens its sets.
    let batched = if forward { &mut out.used[PassKind::Forward as usize..] } else { &mut [] };
    for set in batched {
        for m in 0..nmat {
            if let Some(b) = ctx.mat_frames[m].batch_as.filter(|_| set.contains(m)) {
                set.insert(b as usize);
            }
        }
    }
    let [shadow, fwd, depth] = &out.used;
    out.lists.clear();
    out.lists.resize(nmat, FrameList::default());
    out.list_index.clear();
    out.list_index.resize(nmat, 0);
    out.slot_materials.clear();
    // A depth pass binds the material's slot as forward does (a vertex stage may read it).
    // Slots follow one another, or where an indexed material is drawn, each material's
    // slot is its dense index (which its shader reads it at).
    let slotted = |m: usize| forward && (fwd.contains(m) || depth.contains(m));
    let indexed = |m: usize| {
        materials[m].as_ref().is_some_and(|r| shaders[r.shader as usize].materials == MaterialBinding::Indexed)
    };
    let by_material = (0..nmat).any(|m| slotted(m) && indexed(m));
    for m in (0..nmat).filter(|&m| slotted(m)) {
        if by_material {
            out.slot_materials.resize(m, NO_MATERIAL);
        }
        let slot = out.slot_materials.len() as u32;
        out.lists[m].offset = (!indexed(m)).then_some(slot * CONSTANT_SLOT);
        out.slot_materials.push(m as u32);
    }
    let mut counts = ListCounts::default();
    for (m, (rec, list)) in materials.iter_mut().zip(out.lists.iter_mut()).enumerate() {
        let (f, s, d) = (forward && fwd.contains(m), !forward && shadow.contains(m), forward && depth.contains(m));
        let Some(rec) = rec.as_mut().filter(|_| f || s || d) else { continue };
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
            if d {
                let i = rec.list(shader, variant, PassKind::Depth, &ctx.build, &mut counts).map_err(err)?;
                list.depth = rec.lists[i].pipeline;
                if !f {
                    // Its constants come from this list (built as forward's are).
                    list.group = rec.lists[i].group.unwrap_or(rec.group);
                    out.list_index[m] = i as u32;
                }
            }
            Ok(())
        })();
        if let Err(e) = built {
            out.error = Some(e);
            break;
        }
    }
    out.counts = counts;
    out.failed = out.error.is_some();
    if !out.failed {
        let slot = CONSTANT_SLOT as usize;
        out.constants.clear();
        out.constants.resize(out.slot_materials.len() * slot, 0);
        let globals: &PropertySheet = ctx.build.globals;
        let (materials, list_index) = (&*materials, &out.list_index);
        let slot_materials = &out.slot_materials;
        switchyard_kernels::par::fill_blocks(slot * PIECE_SLOTS, &mut out.constants[..], &|p, dst: &mut [u8]| {
            for (j, dst) in dst.chunks_mut(slot).enumerate() {
                let m = slot_materials[p * PIECE_SLOTS + j];
                if m == NO_MATERIAL {
                    continue;
                }
                let rec = materials[m as usize].as_ref().expect("a used material exists");
                rec.lists[list_index[m as usize] as usize].patch_into(dst, globals.values());
            }
        });
    }
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::{MaterialRecord, ShaderDesc, ShaderRecord};
    use crate::PropertyValue;
    use switchyard_backend::null::NullBackend;

    /// Every forward-used material's slot holds its own constants, in slot order, when
    /// the slots span several pieces of the parallel fill (and when they fit one).
    #[test]
    fn constant_slots_hold_each_materials_block_across_pieces() {
        let b = NullBackend::new(true);
        let layouts = crate::renderer::gpu::standard_layouts(&b).unwrap();
        let globals = PropertySheet::new().with("_Time", PropertyValue::Float(2.5));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for n in [PIECE_SLOTS - 1, PIECE_SLOTS, 2 * PIECE_SLOTS + 1] {
            let mut library =
                Library { shaders: vec![ShaderRecord::new(&ShaderDesc::lit()).unwrap()], materials: vec![] };
            let off = |name: &str| library.shaders[0].decls.iter().find(|d| d.name == name).unwrap().offset as usize;
            let (roughness, time) = (off("_Roughness"), off("_Time"));
            // Every third material is unused and every fifth seen by shadows only: no slot.
            let forward = |m: usize| !m.is_multiple_of(3) && !m.is_multiple_of(5);
            let count = (0..).filter(|&m| forward(m)).nth(n).unwrap();
            let mut used = [MaterialSet::default(), MaterialSet::default(), MaterialSet::default()];
            used.iter_mut().for_each(|u| u.reset(count));
            for m in 0..count {
                let sheet = PropertySheet::new().with("_Roughness", PropertyValue::Float(m as f32));
                library.materials.push(Some(MaterialRecord::of_sheet(sheet)));
                if forward(m) {
                    used[PassKind::Forward as usize].insert(m);
                } else if !m.is_multiple_of(3) {
                    used[PassKind::Shadow as usize].insert(m);
                }
            }
            let mat_frames: Vec<MaterialFrame> =
                (0..count).map(|_| crate::sort::material_frame(0, 0, false, 0)).collect();
            let ctx = PatchCtx {
                build: BuildCtx { backend: &b, layouts: &layouts, globals: &globals, globals_version: 0, cache: true },
                mat_frames: &mat_frames,
            };
            let mut out = PatchedLists::default();
            out.clear_used(count);
            out.add_used(PassKind::Forward, &used[PassKind::Forward as usize]);
            out.add_used(PassKind::Shadow, &used[PassKind::Shadow as usize]);
            pool.install(|| patch_frame(&ctx, &mut library, &mut out, PatchPart::Forward));
            assert!(out.error.is_none());
            let slots: Vec<usize> = (0..count).filter(|&m| forward(m)).collect();
            assert_eq!(slots.len(), n);
            assert_eq!(out.constants.len(), n * CONSTANT_SLOT as usize);
            let f = |s: usize, o: usize| {
                let at = s * CONSTANT_SLOT as usize + o;
                f32::from_le_bytes(out.constants[at..at + 4].try_into().unwrap())
            };
            for (s, &m) in slots.iter().enumerate() {
                assert_eq!(out.lists[m].offset, Some(s as u32 * CONSTANT_SLOT), "{n} slots: material {m}'s offset");
                assert_eq!(f(s, roughness), m as f32, "{n} slots: slot {s} holds material {m}'s block");
                assert_eq!(f(s, time), 2.5, "{n} slots: slot {s} has the global patched in");
            }
        }
    }

    /// The forward part builds forward and depth lists and the slots only, the shadow part
    /// shadow lists only; a part that fails is marked failed with its error, and a skipped
    /// part is failed without one.
    #[test]
    fn each_part_builds_its_own_passes_lists() {
        let b = NullBackend::new(true);
        let layouts = crate::renderer::gpu::standard_layouts(&b).unwrap();
        let globals = PropertySheet::new();
        let shaders = vec![
            ShaderRecord::new(&ShaderDesc::lit()).unwrap(),
            ShaderRecord::new(&ShaderDesc::lit_indexed()).unwrap(),
        ];
        let mut library = Library { shaders, materials: vec![] };
        let n = 6;
        for m in 0..n {
            let sheet = PropertySheet::new().with("_Roughness", PropertyValue::Float(m as f32));
            let mut rec = MaterialRecord::of_sheet(sheet);
            rec.shader = u32::from(m == 3); // a shader nothing draws before the lost device
            library.materials.push(Some(rec));
        }
        let set = |ms: &[usize]| {
            let mut s = MaterialSet::default();
            s.reset(n);
            ms.iter().for_each(|&m| s.insert(m));
            s
        };
        let (fwd, depth, shadow) = (set(&[0, 1, 2]), set(&[1, 4]), set(&[1, 4, 5]));
        let mat_frames: Vec<MaterialFrame> = (0..n).map(|_| crate::sort::material_frame(0, 0, false, 0)).collect();
        let ctx = PatchCtx {
            build: BuildCtx { backend: &b, layouts: &layouts, globals: &globals, globals_version: 0, cache: true },
            mat_frames: &mat_frames,
        };
        let mut parts = [PatchedLists::default(), PatchedLists::default()];
        for (part, out) in [PatchPart::Forward, PatchPart::Shadow].into_iter().zip(&mut parts) {
            out.clear_used(n);
            out.add_used(PassKind::Forward, &fwd);
            out.add_used(PassKind::Depth, &depth);
            out.add_used(PassKind::Shadow, &shadow);
            patch_frame(&ctx, &mut library, out, part);
            assert!(out.error.is_none() && !out.failed, "{:?}", out.error);
        }
        let [f, s] = &parts;
        let none = PipelineId::default();
        for m in 0..n {
            assert_eq!(f.lists[m].forward != none, fwd.contains(m), "material {m}'s forward pipeline");
            assert_eq!(f.lists[m].depth != none, depth.contains(m), "material {m}'s depth pipeline");
            assert_eq!(f.lists[m].shadow, none, "the forward part builds no shadow list");
            assert_eq!(s.lists[m].shadow != none, shadow.contains(m), "material {m}'s shadow pipeline");
            assert_eq!((s.lists[m].forward, s.lists[m].depth, s.lists[m].offset), (none, none, None));
        }
        assert_eq!(f.constants.len(), 4 * CONSTANT_SLOT as usize, "a slot for each forward or depth material");
        assert!(s.constants.is_empty());
        assert_eq!((f.counts.misses, s.counts.misses), (5, 3), "{:?} {:?}", f.counts, s.counts);
        // A material first drawn by a shadow pass, on a lost device: the part fails.
        let (shadow, s) = (set(&[3]), &mut parts[1]);
        b.lose_device();
        s.clear_used(n);
        s.add_used(PassKind::Shadow, &shadow);
        patch_frame(&ctx, &mut library, s, PatchPart::Shadow);
        assert!(s.failed && matches!(s.error, Some(RenderError::DisplayList { .. })), "{:?}", s.error);
        s.skip();
        assert!(s.failed && s.error.is_none() && s.counts == ListCounts::default());
    }

    /// Where an indexed material draws, every slot is its material's dense index: indexed
    /// materials bind no offset, per-draw ones the offset of that slot, and slots of
    /// materials the frame does not draw stay zero.
    #[test]
    fn an_indexed_material_lays_the_slots_out_by_dense_material() {
        let b = NullBackend::new(true);
        let layouts = crate::renderer::gpu::standard_layouts(&b).unwrap();
        let globals = PropertySheet::new().with("_Time", PropertyValue::Float(2.5));
        let shaders = vec![
            ShaderRecord::new(&ShaderDesc::lit()).unwrap(),
            ShaderRecord::new(&ShaderDesc::lit_indexed()).unwrap(),
        ];
        let mut library = Library { shaders, materials: vec![] };
        let roughness = library.shaders[0].decls.iter().find(|d| d.name == "_Roughness").unwrap().offset as usize;
        let n = 12;
        let indexed = |m: usize| m % 3 == 1;
        let mut used = MaterialSet::default();
        used.reset(n);
        for m in 0..n {
            let sheet = PropertySheet::new().with("_Roughness", PropertyValue::Float(m as f32 + 1.0));
            let mut rec = MaterialRecord::of_sheet(sheet);
            if indexed(m) {
                rec.shader = 1; // lit_indexed
            }
            library.materials.push(Some(rec));
            // Materials 0, 5 and 11 are not drawn this frame.
            if ![0, 5, 11].contains(&m) {
                used.insert(m);
            }
        }
        let mat_frames: Vec<MaterialFrame> =
            (0..n).map(|m| crate::sort::material_frame(0, u32::from(indexed(m)), false, 0)).collect();
        let ctx = PatchCtx {
            build: BuildCtx { backend: &b, layouts: &layouts, globals: &globals, globals_version: 0, cache: true },
            mat_frames: &mat_frames,
        };
        let mut out = PatchedLists::default();
        out.clear_used(n);
        out.add_used(PassKind::Forward, &used);
        patch_frame(&ctx, &mut library, &mut out, PatchPart::Forward);
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(out.constants.len(), 11 * CONSTANT_SLOT as usize, "slots up to the last drawn material");
        let f = |m: usize| {
            let at = m * CONSTANT_SLOT as usize + roughness;
            f32::from_le_bytes(out.constants[at..at + 4].try_into().unwrap())
        };
        for m in 0..11 {
            let drawn = used.contains(m);
            let want = match (drawn, indexed(m)) {
                (false, _) | (true, true) => None,
                (true, false) => Some(m as u32 * CONSTANT_SLOT),
            };
            assert_eq!(out.lists[m].offset, want, "material {m}'s offset");
            assert_eq!(f(m), if drawn { m as f32 + 1.0 } else { 0.0 }, "slot {m}");
        }
    }
}
