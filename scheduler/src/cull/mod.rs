//! Stage 1, cull: which objects a view sees, and which materials they use.
//!
//! The scene's objects are cut into parts of [`CULL_PART`] objects, culled in parallel by
//! the kernels in `switchyard_kernels::cull` (block hierarchy first, then the AVX2 or
//! portable loop). The parts stay where they are: the sort stage reads them in order,
//! piece by piece, while it writes the queue and its keys, so the visible list is never
//! copied into one array.
//!
//! Each part also writes what the sort stage needs of its visible objects while their data
//! is in this core's cache: their sort keys ([`crate::sort::key::item_key`]) by object, in the
//! part's own range of a view-wide array, their bits in the view's visible set
//! ([`VisibleSet`]), which of them the previous cull did not see, which it saw with
//! another key (each key is compared with the one its slot held), those two lists' keys,
//! and a bit set of those that stay (seen then with the same key). The sort then starts
//! from keys instead of building them in phases of its own (no second read of the objects
//! or keys on another core): the objects that stay, read in last frame's queue with last
//! frame's keys, merged with the others, whose keys the parts kept.
//!
//! Views of one camera take the first one's frustum test ([`CullFrom`]); the first later
//! view that does is culled in the same parallel pass as its leader ([`cull_views`]), so
//! its list is ready when the leader's is rather than one stage later.

use switchyard_kernels::cull::{cull_range, CullBlocks, CullFilter, CullLoop, Frustum};
use switchyard_kernels::par::{self, ClaimOrder, Scaled};

use crate::frame_graph::Queue;
use crate::material::MaterialFrame;
use crate::material::PassKind;
use crate::profile;
use crate::scene::{Objects, CASTS_SHADOWS};
use crate::sort::key::{may_blend, write_keys};
use crate::view::View;

mod set;
mod tail;
pub(crate) use set::{MaterialSet, VisibleSet};
pub(crate) use tail::{merge_block_len, merge_blocks, MERGE_BLOCK};
use tail::{Splits, Tail};
#[cfg(test)]
pub(crate) use tail::{BLOCK_TAIL_MAX, MIN_MERGE_BLOCK, SPLIT_MIN_THREADS};

/// Most objects per culling part (one parallel task). Parts are a power of two of at
/// least [`MIN_CULL_PART`] objects (a multiple of 64, so a part owns whole words of the
/// visible set).
pub(crate) const CULL_PART: usize = 16 * 1024;
/// Fewest objects per culling part.
pub(crate) const MIN_CULL_PART: usize = 4 * 1024;

/// Objects per culling part for `n` objects on `threads` workers: about two parts per
/// worker, a power of two within `MIN_CULL_PART..=CULL_PART`. Run 30 (16 cores): parts of
/// 4k instead of 16k took the 100k-object frame from 1.04 to 0.95 ms (the main view's
/// cull 0.28 -> 0.19 ms: 25 parts instead of 7 for 16 workers), while at 1M objects (62
/// parts of 16k) smaller parts measured 5 % slower. The result does not depend on it.
pub(crate) fn part_len(n: usize, threads: usize) -> usize {
    let want = (n / (2 * threads.max(1))).clamp(MIN_CULL_PART, CULL_PART);
    1 << want.ilog2()
}
/// Most visible indices per piece: the sort stage's unit of parallel work.
pub(crate) const PIECE: usize = 4096;

/// One culling part's output.
#[derive(Debug, Default)]
struct CullPart {
    visible: Vec<u32>,
    /// The part's objects in the frustum before the queue's and the passes' filters, kept
    /// for the later views of the same camera ([`CullFrom::Keep`]).
    raw: Vec<u32>,
    /// The visible objects the previous cull did not see, ascending.
    fresh: Vec<u32>,
    /// The visible objects the previous cull saw with another key, ascending.
    moved: Vec<u32>,
    /// `fresh` and `moved` with their keys: the sort's tail, read here while the keys
    /// are in this core's cache instead of by object index on the sorting worker, and
    /// put in the order of last frame's blocks where the cull knows them (module `tail`).
    tail: Tail,
    used: MaterialSet,
    /// Whether this part's visible objects or any of their keys differ from the previous
    /// cull's.
    changed: bool,
    /// What the part took in its last cull, ns: the next cull hands the costliest parts
    /// out first ([`ClaimOrder`]).
    ns: u64,
}

impl CullPart {
    /// Writes [`CullPart::tail`] from the keys by object, cut as `splits` says.
    fn keep_tail(&mut self, key: impl Fn(u32) -> u64, splits: &Splits) {
        self.tail.fill((&self.fresh, &self.moved), self.visible.len(), key, splits);
    }
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
    /// Where each part's newly visible and moved objects start among all of them, then
    /// their count.
    tail_offsets: Vec<usize>,
    /// Where the parts cut their tails: by the blocks of the queue sorted from the
    /// previous cull, where the cull was given it.
    splits: Splits,
    /// Every part's tail is in block order (the merge takes each block's pairs from them),
    /// and no block has more than [`tail::BLOCK_TAIL_MAX`] pairs (a bound).
    tails_cut: bool,
    /// The sort key of each visible object, by object index (other entries are stale).
    keys: Vec<u64>,
    /// The order the next cull hands its parts out in: by the parts' last times.
    claim: ClaimOrder,
    /// Materials the visible objects use.
    pub(crate) used: MaterialSet,
    /// This cull's visible set, and the previous cull's.
    set: VisibleSet,
    prev_set: VisibleSet,
    /// The objects of both sets with the same key in both: where they stand in the queue
    /// sorted from the previous cull, they stand in order.
    stay: VisibleSet,
    /// Culls of this list so far: the sort stage checks that the queue it sorted last is the
    /// previous cull's (`prev_set`).
    pub(crate) generation: u64,
    /// The visible set and every visible object's key are the previous cull's: a queue
    /// sorted from that cull is this one's too.
    unchanged: bool,
    /// What the parts' `raw` lists were culled with, when the last cull kept them
    /// ([`CullFrom::Keep`]): a later view culling with the same takes them instead.
    raw_of: Option<RawKey>,
    /// The last cull took an earlier view's frustum test ([`CullFrom::View`]).
    took: bool,
    /// The frame whose earlier view's job made the last cull of this list in its own pass
    /// over the objects ([`cull_views`]); `None` when the list's last cull was its own.
    /// This view's job that frame finds the stamp and culls nothing; a later frame's
    /// does not match it.
    joined: Option<u64>,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl VisibleList {
    /// No visible objects on the CPU (the view is culled on the GPU) and the materials
    /// its buckets draw with.
    pub(crate) fn culled_on_gpu(&mut self, used: &MaterialSet, ms: f64) {
        self.next_generation(0, CULL_PART);
        self.parts.iter_mut().for_each(|p| {
            p.visible.clear();
            p.fresh.clear();
            p.moved.clear();
            p.tail.clear();
        });
        self.splits.clear();
        self.tails_cut = false;
        self.pieces.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.tail_offsets.clear();
        self.tail_offsets.push(0);
        self.used.clone_from(used);
        self.unchanged = false;
        self.raw_of = None;
        self.took = false;
        self.joined = None;
        self.ms = ms;
    }

    /// Starts the next cull: this cull's set becomes the previous one, and the new one is
    /// sized for `parts` parts of `part_len` objects (a power of two, a multiple of 64).
    fn next_generation(&mut self, parts: usize, part_len: usize) {
        std::mem::swap(&mut self.set, &mut self.prev_set);
        self.set.reset(parts * part_len / 64);
        self.stay.reset(parts * part_len / 64);
        self.generation += 1;
    }

    /// This frame keeps the last cull's output (`CullInputs` unchanged): the stage took
    /// no time.
    pub(crate) fn kept(&mut self) {
        self.ms = 0.0;
    }

    /// Whether the last cull took an earlier view's frustum test.
    pub(crate) fn took_frustum_test(&self) -> bool {
        self.took
    }

    /// Whether the last cull was made in an earlier view's pass over the objects.
    pub(crate) fn joined(&self) -> bool {
        self.joined.is_some()
    }

    /// Whether frame `frame`'s cull of this list was made in an earlier view's pass.
    pub(crate) fn joined_in(&self, frame: u64) -> bool {
        self.joined == Some(frame)
    }

    /// Whether the visible set and the visible objects' keys are the previous cull's.
    pub(crate) fn unchanged(&self) -> bool {
        self.unchanged
    }

    /// This cull's visible set (tests).
    #[cfg(test)]
    pub(crate) fn set(&self) -> &VisibleSet {
        &self.set
    }

    /// Whether object `i` is visible, was visible to the previous cull, and has the key it
    /// had then.
    #[inline]
    pub(crate) fn stays(&self, i: u32) -> bool {
        self.stay.contains(i)
    }

    /// The previous cull's visible set.
    #[cfg(test)]
    pub(crate) fn prev_set(&self) -> &VisibleSet {
        &self.prev_set
    }

    /// The sort key of visible object `i` (of another object: a stale value).
    #[inline]
    pub(crate) fn key(&self, i: u32) -> u64 {
        self.keys[i as usize]
    }

    /// Visible objects that do not stay ([`VisibleList::stays`]): newly visible, or seen
    /// by the previous cull with another key.
    pub(crate) fn tail_len(&self) -> usize {
        self.tail_offsets.last().copied().unwrap_or(0)
    }

    /// Where each part's objects that do not stay start among them all, then their count.
    pub(crate) fn tail_offsets(&self) -> &[usize] {
        &self.tail_offsets
    }

    /// Part `p`'s objects that do not stay: its newly visible ones (ascending), then those
    /// whose key changed (ascending), or those in the order of last frame's blocks
    /// ([`VisibleList::tails_cut`]).
    pub(crate) fn tail(&self, p: usize) -> &[u32] {
        self.parts[p].tail.pairs().0
    }

    /// The keys of [`VisibleList::tail`]`(p)`, in its order.
    pub(crate) fn tail_keys(&self, p: usize) -> &[u64] {
        self.parts[p].tail.pairs().1
    }

    /// Pairs per block and the length of the queue sorted from the previous cull, where
    /// every part put its tail in the order of that queue's blocks.
    pub(crate) fn tails_cut(&self) -> Option<(usize, usize)> {
        self.splits.cut().filter(|_| self.tails_cut)
    }

    /// Part `p`'s tail pairs (objects, keys) that fall in block `j` of the queue sorted
    /// from the previous cull, where [`VisibleList::tails_cut`] says the tails are cut.
    pub(crate) fn tail_block(&self, p: usize, j: usize) -> (&[u32], &[u64]) {
        self.parts[p].tail.block(j)
    }

    /// Cull parts (each with a tail).
    pub(crate) fn parts(&self) -> usize {
        self.parts.len()
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

    /// After the parts: the pieces, where each starts, and the materials used
    /// (`materials`: the size of the material sets).
    fn finish(&mut self, materials: usize) {
        self.pieces.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.tail_offsets.clear();
        self.tail_offsets.push(0);
        self.used.reset(materials);
        let mut at = 0;
        for (p, part) in self.parts.iter().enumerate() {
            self.tail_offsets.push(self.tail_offsets[p] + part.tail.len());
            for start in (0..part.visible.len()).step_by(PIECE) {
                at += PIECE.min(part.visible.len() - start);
                self.pieces.push((p as u32, start as u32));
                self.offsets.push(at);
            }
            self.used.union_with(&part.used);
        }
        // Every part's tail cut, and no block with more pairs than one should sort.
        let crowded = self.parts.iter().map(|p| p.tail.most()).sum::<usize>() > tail::BLOCK_TAIL_MAX;
        self.tails_cut = self.parts.iter().all(|p| p.tail.is_cut()) && !crowded;
        // Objects the previous cull saw past this cull's parts (the scene shrank) changed
        // the set too.
        let beyond = self.prev_set.words.get(self.set.words.len()..).unwrap_or(&[]);
        self.unchanged = self.parts.iter().all(|p| !p.changed) && beyond.iter().all(|&w| w == 0);
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
    /// Whether each dense material is transparent (for queues of one kind), and what its
    /// key needs.
    pub(crate) mat_frames: &'a [MaterialFrame],
    /// Which objects the pass draws.
    pub(crate) queue: Queue,
    /// Some material's shader lacks the view's pass kind: leave its objects out.
    pub(crate) pass_filter: bool,
}

/// What a view's frustum test keeps or takes: views of one camera (a depth prepass, the
/// opaque and the transparent pass) see the same objects in their frustum and differ only
/// in which of them their queue and passes keep, so the first one's test serves the rest.
#[derive(Clone, Copy)]
pub(crate) enum CullFrom<'a> {
    /// Test every object; keep nothing for other views.
    Objects,
    /// Test every object and keep what passed the frustum test (before the queue's filter)
    /// for later views of the same camera.
    Keep,
    /// Take what an earlier view of the same camera kept, where it was culled with the
    /// same planes, filter and parts (else test every object).
    View(&'a VisibleList),
}

/// What a frustum test's output depends on besides the objects, which a frame does not
/// change between its views' culls.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RawKey {
    frustum: Frustum,
    layer_mask: u16,
    required_flags: u8,
    objects: usize,
    part_len: usize,
}

/// One view's cull as set before its parts run.
struct Setup<'a> {
    ctx: CullCtx<'a>,
    view: &'a View,
    filter: CullFilter,
    /// Objects tested (none where no material is of the queue's kind).
    n: usize,
    part_len: usize,
    parts: usize,
    blend: bool,
    key: RawKey,
}

impl<'a> Setup<'a> {
    fn new(ctx: CullCtx<'a>, view: &'a View, frustum: &Frustum) -> Self {
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
        let n = if none_of_kind { 0 } else { ctx.objects.len() };
        let part_len = part_len(n, rayon::current_num_threads());
        let key = RawKey {
            frustum: *frustum,
            layer_mask: filter.layer_mask,
            required_flags: filter.required_flags,
            objects: n,
            part_len,
        };
        let blend = may_blend(view, ctx.queue);
        Self { ctx, view, filter, n, part_len, parts: n.div_ceil(part_len).max(1), blend, key }
    }

    /// Whether this view takes `src`'s frustum test: culled with the same planes, filter
    /// and parts (a view with nothing of its queue's kind tests nothing and takes nothing).
    fn takes(&self, src: &RawKey) -> bool {
        self.n > 0 && *src == self.key
    }

    /// Part `p`'s output from its objects in the frustum (`part.visible`, ascending):
    /// the queue's and passes' filter, the materials seen, the keys (`keys`, the part's
    /// range), its words of the visible set and of the objects that stay, its new and
    /// moved objects.
    fn fill_part(
        &self,
        p: usize,
        part: &mut CullPart,
        (words, stay, keys): (&mut [u64], &mut [u64], &mut [u64]),
        (prev, splits): (&VisibleSet, &Splits),
    ) {
        let (ctx, o) = (&self.ctx, self.ctx.objects);
        if ctx.queue != Queue::All || ctx.pass_filter {
            let want = (ctx.queue != Queue::Opaque, ctx.queue != Queue::Transparent);
            let bit = self.view.pass.bit();
            // Compacted without a branch per object: opaque and transparent objects
            // interleave, so `retain`'s branch on each mispredicts often.
            let v = &mut part.visible;
            let mut kept = 0;
            for j in 0..v.len() {
                let i = v[j];
                let m = &ctx.mat_frames[o.material[i as usize] as usize];
                let keep = (if m.transparent { want.0 } else { want.1 }) & (m.passes & bit != 0);
                v[kept] = i;
                kept += usize::from(keep);
            }
            v.truncate(kept);
        }
        // Which materials this part saw (the patch stage), and the visible objects' sort
        // keys, read while the objects' data is in this core's cache.
        part.used.reset(ctx.materials);
        part.fresh.clear();
        part.moved.clear();
        for &i in &part.visible {
            part.used.insert(o.material[i as usize] as usize);
        }
        // Each key is compared with the one its slot holds, the previous cull's where the
        // object was visible to it.
        let part_words = self.part_len / 64;
        let was = prev.words.get(p * part_words..).unwrap_or(&[]);
        let base = p * self.part_len;
        let (visible, moved) = (&part.visible, &mut part.moved);
        write_keys(self.view, o, ctx.mat_frames, (visible, self.blend), (&mut *keys, base), (was, moved));
        VisibleSet::fill_part(words, p, &part.visible);
        VisibleSet::fresh_of_part(words, prev, p, &mut part.fresh);
        VisibleSet::stay_of_part(stay, words, prev, p, &part.moved);
        part.keep_tail(|i| keys[i as usize - base], splits);
        part.changed = !part.moved.is_empty() || !VisibleSet::same_part(words, prev, p);
    }
}

/// A list's arrays as its cull's parallel parts write them: the parts, their words of the
/// visible set and of the objects that stay, their keys.
type PartsOut<'o> = (&'o mut [CullPart], (Scaled<&'o mut [u64]>, Scaled<&'o mut [u64]>), Scaled<&'o mut [u64]>);
/// What a cull's parts read of the list's last cull: its visible set, and where to cut
/// the tails.
type Prev<'o> = (&'o VisibleSet, &'o Splits);
/// Last frame's queue and keys, where it was sorted from the list's last cull (the
/// queue this frame's merge starts from): the cull cuts its tails by its blocks.
pub(crate) type LastQueue<'a> = Option<(&'a [u32], &'a [u64])>;

impl VisibleList {
    /// Starts a cull as `s` sets it (`keep_raw`: a later view takes its frustum test;
    /// `took`: it takes an earlier view's): the arrays its parts write, the previous
    /// cull's set, and the order to hand the parts out in (costliest last time first).
    fn open(
        &mut self,
        s: &Setup<'_>,
        keep_raw: bool,
        took: bool,
        last: LastQueue<'_>,
    ) -> (PartsOut<'_>, Prev<'_>, &ClaimOrder) {
        self.raw_of = keep_raw.then_some(s.key);
        self.splits.set(last, rayon::current_num_threads());
        self.took = took;
        self.joined = None;
        self.parts.resize_with(s.parts, CullPart::default);
        self.claim.set_by_cost(self.parts.iter().map(|p| p.ns));
        self.next_generation(s.parts, s.part_len);
        par::set_len(&mut self.keys, s.parts * s.part_len);
        let part_words = s.part_len / 64;
        let sets = (Scaled(&mut self.set.words[..], part_words), Scaled(&mut self.stay.words[..], part_words));
        (
            (&mut self.parts[..], sets, Scaled(&mut self.keys[..], s.part_len)),
            (&self.prev_set, &self.splits),
            &self.claim,
        )
    }
}

/// Part `p`'s objects in the frustum into `out`: `s`'s test of its range of the objects,
/// or `taken` (an earlier view's test of it).
fn test_part(s: &Setup<'_>, frustum: &Frustum, p: usize, taken: Option<&[u32]>, out: &mut Vec<u32>) {
    out.clear();
    match taken {
        Some(raw) => out.extend_from_slice(raw),
        None => {
            let range = p * s.part_len..((p + 1) * s.part_len).min(s.n);
            cull_range(&s.ctx.objects.cull_input(), s.ctx.blocks, frustum, s.filter, s.ctx.kernel, range, out);
        }
    }
}

/// Culls `view`'s frustum over every object, in parallel parts on the current pool, or
/// takes an earlier view's frustum test (`from`).
pub(crate) fn cull_view(
    ctx: &CullCtx<'_>,
    view: &View,
    frustum: &Frustum,
    from: CullFrom<'_>,
    (out, last): (&mut VisibleList, LastQueue<'_>),
) {
    let t = std::time::Instant::now();
    let s = Setup::new(*ctx, view, frustum);
    // An earlier view's frustum test, where it holds this view's.
    let taken = match from {
        CullFrom::View(src) if src.raw_of.as_ref().is_some_and(|k| s.takes(k)) && src.parts.len() == s.parts => {
            Some(src)
        }
        _ => None,
    };
    let shared = if taken.is_some() { ", an earlier view's frustum test" } else { "" };
    profile::zone_text!("cull", "view {} ({:?}){shared}", ctx.label, view.pass);
    let keep_raw = matches!(from, CullFrom::Keep) && s.n > 0;
    let (parts, prev, claim) = out.open(&s, keep_raw, taken.is_some(), last);
    par::fill_blocks_in_order(1, claim, parts, &|p, (part, (Scaled(words, _), Scaled(stay, _)), Scaled(keys, _))| {
        let (t, part) = (std::time::Instant::now(), &mut part[0]);
        test_part(&s, frustum, p, taken.map(|src| &src.parts[p].raw[..]), &mut part.visible);
        if keep_raw {
            part.raw.clone_from(&part.visible);
        }
        s.fill_part(p, part, (words, stay, keys), prev);
        part.ns = t.elapsed().as_nanos() as u64;
    });
    out.finish(ctx.materials);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

/// One view's cull: its context, its view and frustum, and its list.
pub(crate) type CullOf<'a, 'c> = (&'a CullCtx<'c>, &'a View, &'a Frustum, (&'a mut VisibleList, LastQueue<'a>));

/// Culls `lead` keeping its frustum test, as [`cull_view`] with [`CullFrom::Keep`] does,
/// and in the same parallel parts `follow`, a later view of the same camera, from that
/// test, as [`cull_view`] with [`CullFrom::View`] would after it: the follower's list is
/// the same, written while the part's objects are in the core's cache, and ready when the
/// leader's is, not one stage later. `false`, with nothing culled, where the follower
/// would not take the leader's test (other planes, filter or parts, or nothing of its
/// queue's kind): cull each on its own. The stage's time is the leader's (the
/// follower's list reports none: the frame's cull total counts it once); the follower's
/// list is stamped with `frame` ([`VisibleList::joined_in`]).
pub(crate) fn cull_views(lead: CullOf<'_, '_>, follow: CullOf<'_, '_>, frame: u64) -> bool {
    let t = std::time::Instant::now();
    let ((ctx, view, frustum, (out, last)), (f_ctx, f_view, f_frustum, (f_out, f_last))) = (lead, follow);
    let (s, f) = (Setup::new(*ctx, view, frustum), Setup::new(*f_ctx, f_view, f_frustum));
    // Equal keys: the same objects tested (none of them empty) in the same parts.
    if !f.takes(&s.key) {
        return false;
    }
    profile::zone_text!(
        "cull",
        "view {} ({:?}), and {} ({:?}) from its frustum test",
        ctx.label,
        view.pass,
        f_ctx.label,
        f_view.pass
    );
    let ((parts, prev, claim), (f_parts, f_prev, _)) =
        (out.open(&s, true, false, last), f_out.open(&f, false, true, f_last));
    par::fill_blocks_in_order(1, claim, (parts, f_parts), &|p, (lead, follow)| {
        let (part, (Scaled(words, _), Scaled(stay, _)), Scaled(keys, _)) = lead;
        let (t, part) = (std::time::Instant::now(), &mut part[0]);
        test_part(&s, frustum, p, None, &mut part.visible);
        part.raw.clone_from(&part.visible);
        s.fill_part(p, part, (words, stay, keys), prev);
        let (f_part, (Scaled(words, _), Scaled(stay, _)), Scaled(keys, _)) = follow;
        let f_part = &mut f_part[0];
        test_part(&f, f_frustum, p, Some(&part.raw), &mut f_part.visible);
        f.fill_part(p, f_part, (words, stay, keys), f_prev);
        part.ns = t.elapsed().as_nanos() as u64;
    });
    out.finish(ctx.materials);
    f_out.finish(f_ctx.materials);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
    (f_out.ms, f_out.joined) = (0.0, Some(frame));
    true
}

#[cfg(test)]
mod tests;
