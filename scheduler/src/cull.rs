//! Stage 1, cull: which objects a view sees, and which materials they use.
//!
//! The scene's objects are cut into parts of [`CULL_PART`] objects, culled in parallel by
//! the kernels in `switchyard_kernels::cull` (block hierarchy first, then the AVX2 or
//! portable loop). The parts stay where they are: the sort stage reads them in order,
//! piece by piece, while it writes the queue and its keys, so the visible list is never
//! copied into one array.

use rayon::prelude::*;
use switchyard_kernels::busy::Region;
use switchyard_kernels::cull::{cull_range, CullBlocks, CullFilter, CullLoop, Frustum};

use crate::frame_graph::Queue;
use crate::material::MaterialFrame;
use crate::material::PassKind;
use crate::profile;
use crate::scene::{Objects, CASTS_SHADOWS};
use crate::view::View;

/// Objects per culling part (one parallel task).
pub(crate) const CULL_PART: usize = 16 * 1024;
/// Most visible indices per piece: the sort stage's unit of parallel work.
pub(crate) const PIECE: usize = 4096;

/// Dense material indices as a bit set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaterialSet {
    words: Vec<u64>,
}

impl MaterialSet {
    /// Empties the set and sizes it for `materials` materials.
    pub(crate) fn reset(&mut self, materials: usize) {
        self.words.clear();
        self.words.resize(materials.div_ceil(64), 0);
    }

    #[inline]
    pub(crate) fn insert(&mut self, m: usize) {
        self.words[m / 64] |= 1 << (m % 64);
    }

    #[inline]
    pub(crate) fn contains(&self, m: usize) -> bool {
        self.words.get(m / 64).is_some_and(|w| w & (1 << (m % 64)) != 0)
    }

    /// Adds every member of `other`.
    pub(crate) fn union_with(&mut self, other: &Self) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        self.words.iter_mut().zip(&other.words).for_each(|(a, b)| *a |= b);
    }
}

/// One culling part's output.
#[derive(Debug, Default)]
struct CullPart {
    visible: Vec<u32>,
    used: MaterialSet,
}

/// The cull stage's output for one view: the visible dense object indices in ascending
/// order (held as the parts' lists, read piece by piece) and the materials they use.
#[derive(Debug, Default)]
pub(crate) struct VisibleList {
    parts: Vec<CullPart>,
    /// The parts' output cut into pieces of at most [`PIECE`] indices: (part, start).
    pieces: Vec<(u32, u32)>,
    /// Where each piece starts in the visible list, then its length.
    offsets: Vec<usize>,
    /// Materials the visible objects use.
    pub(crate) used: MaterialSet,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl VisibleList {
    /// No visible objects on the CPU (the view is culled on the GPU) and the materials
    /// its buckets draw with.
    pub(crate) fn culled_on_gpu(&mut self, used: &MaterialSet, ms: f64) {
        self.parts.iter_mut().for_each(|p| p.visible.clear());
        self.pieces.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.used.clone_from(used);
        self.ms = ms;
    }

    /// Visible objects.
    pub(crate) fn len(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Piece boundaries in the visible list (`pieces + 1` entries, from 0).
    pub(crate) fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// The indices of piece `p`.
    pub(crate) fn piece(&self, p: usize) -> &[u32] {
        let (part, start) = (self.pieces[p].0 as usize, self.pieces[p].1 as usize);
        let len = self.offsets[p + 1] - self.offsets[p];
        &self.parts[part].visible[start..start + len]
    }

    /// A list of the given parts, each one piece (tests).
    #[cfg(test)]
    pub(crate) fn from_parts(parts: &[&[u32]]) -> Self {
        let mut offsets = vec![0];
        for p in parts {
            offsets.push(offsets[offsets.len() - 1] + p.len());
        }
        Self {
            parts: parts.iter().map(|p| CullPart { visible: p.to_vec(), used: MaterialSet::default() }).collect(),
            pieces: (0..parts.len() as u32).map(|p| (p, 0)).collect(),
            offsets,
            used: MaterialSet::default(),
            ms: 0.0,
        }
    }

    #[cfg(feature = "reference")]
    /// The whole list in one array (tests and the reference comparison).
    pub(crate) fn to_vec(&self) -> Vec<u32> {
        (0..self.pieces.len()).flat_map(|p| self.piece(p).iter().copied()).collect()
    }
}

/// What the cull stage of one view reads.
#[derive(Clone, Copy)]
pub(crate) struct CullCtx<'a> {
    /// The pass's name (Tracy).
    pub(crate) label: &'a str,
    pub(crate) objects: &'a Objects,
    pub(crate) blocks: &'a CullBlocks,
    pub(crate) kernel: CullLoop,
    /// Dense material slots (live or not): the size of the material sets.
    pub(crate) materials: usize,
    /// Whether each dense material is transparent (for queues of one kind).
    pub(crate) mat_frames: &'a [MaterialFrame],
    /// Which objects the pass draws.
    pub(crate) queue: Queue,
    /// Some material's shader lacks the view's pass kind: leave its objects out.
    pub(crate) pass_filter: bool,
}

/// Culls `view`'s frustum over every object, in parallel parts on the current pool.
pub(crate) fn cull_view(ctx: &CullCtx<'_>, view: &View, frustum: &Frustum, out: &mut VisibleList) {
    let _z = profile::zone_text!("cull", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    let o = ctx.objects;
    let n = o.len();
    let input = o.cull_input();
    let filter = CullFilter {
        layer_mask: view.layer_mask,
        required_flags: if view.pass == PassKind::Shadow { CASTS_SHADOWS } else { 0 },
    };
    // A queue of one kind when no material is of that kind: nothing to test.
    let none_of_kind = match ctx.queue {
        Queue::All => false,
        Queue::Opaque => ctx.mat_frames.iter().all(|m| m.transparent),
        Queue::Transparent => !ctx.mat_frames.iter().any(|m| m.transparent),
    };
    let n = if none_of_kind { 0 } else { n };
    out.parts.resize_with(n.div_ceil(CULL_PART).max(1), CullPart::default);
    out.parts.par_iter_mut().enumerate().for_each(|(p, part)| {
        let _busy = Region::enter();
        part.visible.clear();
        let range = p * CULL_PART..((p + 1) * CULL_PART).min(n);
        cull_range(&input, ctx.blocks, frustum, filter, ctx.kernel, range, &mut part.visible);
        if ctx.queue != Queue::All || ctx.pass_filter {
            let want = (ctx.queue != Queue::Opaque, ctx.queue != Queue::Transparent);
            let bit = view.pass.bit();
            part.visible.retain(|&i| {
                let m = &ctx.mat_frames[o.material[i as usize] as usize];
                (if m.transparent { want.0 } else { want.1 }) && m.passes & bit != 0
            });
        }
        // Which materials this part saw, for the patch stage.
        part.used.reset(ctx.materials);
        for &i in &part.visible {
            part.used.insert(o.material[i as usize] as usize);
        }
    });
    out.pieces.clear();
    out.offsets.clear();
    out.offsets.push(0);
    out.used.reset(ctx.materials);
    let mut at = 0;
    for (p, part) in out.parts.iter().enumerate() {
        for start in (0..part.visible.len()).step_by(PIECE) {
            at += PIECE.min(part.visible.len() - start);
            out.pieces.push((p as u32, start as u32));
            out.offsets.push(at);
        }
        out.used.union_with(&part.used);
    }
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}
