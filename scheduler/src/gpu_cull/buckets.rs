//! A GPU-culled view's buckets: the objects its pass may draw, grouped by draw state and
//! mesh in the order of the CPU's sort keys without their depth field, built again only
//! when what they depend on changes.

use rayon::prelude::*;

use crate::batch::{batch_state, Batch};
use crate::cull::MaterialSet;
use crate::frame_graph::Queue;
use crate::material::{MaterialFrame, PassKind};
use crate::profile;
use crate::scene::{Objects, CASTS_SHADOWS};
use crate::sort::key::{item_key, DEPTH_BITS};
use crate::view::View;

/// What a view's buckets were built from: when any of it changes they are built again.
#[derive(Clone, Debug, PartialEq)]
struct Stamp {
    structure: u64,
    mats: Vec<MaterialFrame>,
    layer_mask: u16,
    pass: PassKind,
    queue: Queue,
    pass_filter: bool,
}

/// One GPU-culled view's candidates in buckets.
#[derive(Debug, Default)]
pub(crate) struct Buckets {
    /// Bucket starts in the candidate list (`buckets + 1` entries), then the candidates'
    /// dense object indices: the bytes of the view's list buffer.
    pub(crate) lists: Vec<u32>,
    /// Per bucket: first candidate, candidates, mesh, and the material whose lists it
    /// draws with.
    pub(crate) buckets: Vec<Batch>,
    /// Materials the buckets draw with (for the patch stage).
    pub(crate) used: MaterialSet,
    stamp: Option<Stamp>,
    /// The buckets were built this frame.
    pub(crate) rebuilt: bool,
    scratch: Vec<(u64, u32)>,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl Buckets {
    /// The candidates' dense object indices, bucket by bucket.
    pub(crate) fn candidates(&self) -> &[u32] {
        &self.lists[self.buckets.len() + 1..]
    }
}

/// What building a view's buckets reads.
pub(crate) struct BucketCtx<'a> {
    pub(crate) label: &'a str,
    pub(crate) objects: &'a Objects,
    /// The scene's structure count (see `Scene::structure`).
    pub(crate) structure: u64,
    pub(crate) mat_frames: &'a [MaterialFrame],
    pub(crate) queue: Queue,
    /// Some material's shader lacks the view's pass kind: leave its objects out.
    pub(crate) pass_filter: bool,
}

/// Builds `out` for `view` again where what it was built from changed.
pub(crate) fn bucket_view(ctx: &BucketCtx<'_>, view: &View, out: &mut Buckets) {
    profile::zone_text!("buckets", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    // Compared field by field: a frame that builds nothing allocates nothing.
    let same = out.stamp.as_ref().is_some_and(|s| {
        s.structure == ctx.structure
            && s.mats == ctx.mat_frames
            && s.layer_mask == view.layer_mask
            && s.pass == view.pass
            && s.queue == ctx.queue
            && s.pass_filter == ctx.pass_filter
    });
    out.rebuilt = !same;
    if out.rebuilt {
        build(ctx, view, out);
        out.stamp = Some(Stamp {
            structure: ctx.structure,
            mats: ctx.mat_frames.to_vec(),
            layer_mask: view.layer_mask,
            pass: view.pass,
            queue: ctx.queue,
            pass_filter: ctx.pass_filter,
        });
    }
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

fn build(ctx: &BucketCtx<'_>, view: &View, out: &mut Buckets) {
    let o = ctx.objects;
    let mats = ctx.mat_frames;
    let mask = u32::from(view.layer_mask);
    let need = if view.pass == PassKind::Shadow { CASTS_SHADOWS } else { 0 };
    let filtered = ctx.queue != Queue::All || ctx.pass_filter;
    let want = (ctx.queue != Queue::Opaque, ctx.queue != Queue::Transparent);
    let bit = view.pass.bit();
    // The CPU cull's filters (`cull.rs`), then the key without its depth field; the
    // object index breaks ties, so the order is total and the same for any thread count.
    out.scratch.clear();
    out.scratch.par_extend((0..o.len()).into_par_iter().filter_map(|i| {
        if (mask >> (o.layer[i] & 31)) & 1 == 0 || o.flags[i] & need != need {
            return None;
        }
        if filtered {
            let m = &mats[o.material[i] as usize];
            if !((if m.transparent { want.0 } else { want.1 }) && m.passes & bit != 0) {
                return None;
            }
        }
        Some((item_key(view, o, i, mats) >> DEPTH_BITS, i as u32))
    }));
    out.scratch.par_sort_unstable();
    // Buckets: runs of equal layer, draw state and mesh (real ids, as batches compare).
    out.buckets.clear();
    out.used.reset(mats.len());
    let state = |i: u32| {
        let i = i as usize;
        (o.layer[i], batch_state(view.pass, mats, o.material[i]), o.mesh[i])
    };
    let mut prev = None;
    for (k, &(_, i)) in out.scratch.iter().enumerate() {
        let s = state(i);
        if prev != Some(s) {
            // Shadow passes draw with the first object's material; forward and depth
            // passes with the state's (an indexed material's batch material).
            let material = if view.pass == PassKind::Shadow { o.material[i as usize] } else { s.1 };
            out.buckets.push(Batch { first: k as u32, count: 0, mesh: s.2, material });
            out.used.insert(o.material[i as usize] as usize);
            prev = Some(s);
        } else if view.pass != PassKind::Shadow {
            // Every material an indexed bucket draws (it spans several): the patch stage
            // fills their slots.
            out.used.insert(o.material[i as usize] as usize);
        }
        if let Some(b) = out.buckets.last_mut() {
            b.count += 1;
        }
    }
    out.lists.clear();
    out.lists.extend(out.buckets.iter().map(|b| b.first));
    out.lists.push(out.scratch.len() as u32);
    out.lists.extend(out.scratch.iter().map(|&(_, i)| i));
}
