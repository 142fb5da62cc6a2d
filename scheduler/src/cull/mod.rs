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
//! another key (each key is compared with the one its slot held), and a bit set of those
//! that stay (seen then with the same key). The sort then starts from keys instead of
//! building them in phases of its own (no second read of the objects on another core):
//! the objects that stay in last frame's order with last frame's keys, then the others
//! with theirs, read by object index.

use switchyard_kernels::cull::{cull_range, CullBlocks, CullFilter, CullLoop, Frustum};
use switchyard_kernels::par::{self, Scaled};

use crate::frame_graph::Queue;
use crate::material::MaterialFrame;
use crate::material::PassKind;
use crate::profile;
use crate::scene::{Objects, CASTS_SHADOWS};
use crate::sort::key::{may_blend, write_keys};
use crate::view::View;

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
    /// The part's objects in the frustum before the queue's and the passes' filters, kept
    /// for the later views of the same camera ([`CullFrom::Keep`]).
    raw: Vec<u32>,
    /// The visible objects the previous cull did not see, ascending.
    fresh: Vec<u32>,
    /// The visible objects the previous cull saw with another key, ascending.
    moved: Vec<u32>,
    used: MaterialSet,
    /// Whether this part's visible objects or any of their keys differ from the previous
    /// cull's.
    changed: bool,
}

/// A view's visible objects as a bit per object. Part `p` of the cull owns the words of its
/// objects, filled in parallel.
#[derive(Debug, Default)]
pub(crate) struct VisibleSet {
    words: Vec<u64>,
}

impl VisibleSet {
    /// Whether object `i` is a member (indices past the set's scene are not).
    #[inline]
    pub(crate) fn contains(&self, i: u32) -> bool {
        self.words.get(i as usize / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Sizes the set for `words` words, all to be written by their parts.
    fn reset(&mut self, words: usize) {
        resize(&mut self.words, words);
    }

    /// Appends to `fresh` the members of `words` (part `part`'s, parts of `words.len() * 64`
    /// objects) that `prev` lacks, ascending: a word at a time.
    fn fresh_of_part(words: &[u64], prev: &VisibleSet, part: usize, fresh: &mut Vec<u32>) {
        let base = part * words.len();
        let prev = prev.words.get(base..).unwrap_or(&[]);
        for (w, &now) in words.iter().enumerate() {
            let mut f = now & !prev.get(w).copied().unwrap_or(0);
            while f != 0 {
                fresh.push(((base + w) * 64) as u32 + f.trailing_zeros());
                f &= f - 1;
            }
        }
    }

    /// Part `part`'s words of the objects that stay: members of `words` (its words of this
    /// cull's set) and of `prev`, but not of `moved` (its objects whose key changed).
    fn stay_of_part(stay: &mut [u64], words: &[u64], prev: &VisibleSet, part: usize, moved: &[u32]) {
        let base = part * words.len();
        let prev = prev.words.get(base..).unwrap_or(&[]);
        for (w, (s, &now)) in stay.iter_mut().zip(words).enumerate() {
            *s = now & prev.get(w).copied().unwrap_or(0);
        }
        for &i in moved {
            let o = i as usize - base * 64;
            stay[o / 64] &= !(1 << (o % 64));
        }
    }

    /// Whether `words` (part `part`'s) equal `prev`'s words for the same objects (words
    /// `prev` lacks count as empty).
    fn same_part(words: &[u64], prev: &VisibleSet, part: usize) -> bool {
        let base = part * words.len();
        let prev = prev.words.get(base..).unwrap_or(&[]);
        words.iter().enumerate().all(|(w, &now)| now == prev.get(w).copied().unwrap_or(0))
    }

    /// Part `part`'s words from its visible list (ascending, within the part's objects;
    /// parts of `words.len() * 64` objects).
    fn fill_part(words: &mut [u64], part: usize, visible: &[u32]) {
        words.fill(0);
        let base = part * words.len() * 64;
        // The list ascends, so each word's members come together: gathered in a register
        // and stored once (an OR into memory per member waits on the last one's store).
        let (mut at, mut bits) = (usize::MAX, 0u64);
        for &i in visible {
            let o = i as usize - base;
            if o / 64 != at {
                if let Some(w) = words.get_mut(at) {
                    *w = bits;
                }
                (at, bits) = (o / 64, 0);
            }
            bits |= 1 << (o % 64);
        }
        if let Some(w) = words.get_mut(at) {
            *w = bits;
        }
    }
}

/// `v.resize(n, 0)` without writing what is kept (its parts overwrite it).
fn resize<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    v.truncate(n);
    v.resize(n, T::default());
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
    /// The sort key of each visible object, by object index (other entries are stale).
    keys: Vec<u64>,
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
        });
        self.pieces.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.tail_offsets.clear();
        self.tail_offsets.push(0);
        self.used.clone_from(used);
        self.unchanged = false;
        self.raw_of = None;
        self.took = false;
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
    /// whose key changed (ascending).
    pub(crate) fn tail(&self, p: usize) -> impl Iterator<Item = &u32> {
        self.parts[p].fresh.iter().chain(&self.parts[p].moved)
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

    /// The list of `visible` (ascending) in a scene of `objects` objects, cut into parts of
    /// `part_len` objects as the cull cuts it, with `key(i)` as each object's key (tests).
    #[cfg(test)]
    pub(crate) fn from_objects(objects: usize, part_len: usize, visible: &[u32], key: impl Fn(u32) -> u64) -> Self {
        let mut list = Self::default();
        list.recull(objects, part_len, visible, key);
        list
    }

    /// The next cull of this list as [`cull_view`] makes it, seeing `visible` (ascending)
    /// with `key(i)` as each object's key (tests): keys compared with the previous cull's,
    /// the objects that moved, stay, or are new.
    #[cfg(test)]
    pub(crate) fn recull(&mut self, objects: usize, part_len: usize, visible: &[u32], key: impl Fn(u32) -> u64) {
        let parts = objects.div_ceil(part_len).max(1);
        self.next_generation(parts, part_len);
        self.parts.resize_with(parts, CullPart::default);
        self.keys.resize(parts * part_len, 0);
        let part_words = part_len / 64;
        for (p, part) in self.parts.iter_mut().enumerate() {
            let range = (p * part_len) as u32..((p + 1) * part_len) as u32;
            part.visible = visible.iter().copied().filter(|i| range.contains(i)).collect();
            part.moved.clear();
            part.fresh.clear();
            for &i in &part.visible {
                let k = key(i);
                if self.prev_set.contains(i) && self.keys[i as usize] != k {
                    part.moved.push(i);
                }
                self.keys[i as usize] = k;
            }
            let words = p * part_words..(p + 1) * part_words;
            VisibleSet::fill_part(&mut self.set.words[words.clone()], p, &part.visible);
            let now = &self.set.words[words.clone()];
            VisibleSet::fresh_of_part(now, &self.prev_set, p, &mut part.fresh);
            VisibleSet::stay_of_part(&mut self.stay.words[words], now, &self.prev_set, p, &part.moved);
            part.changed = true;
        }
        self.finish(0);
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
            self.tail_offsets.push(self.tail_offsets[p] + part.fresh.len() + part.moved.len());
            for start in (0..part.visible.len()).step_by(PIECE) {
                at += PIECE.min(part.visible.len() - start);
                self.pieces.push((p as u32, start as u32));
                self.offsets.push(at);
            }
            self.used.union_with(&part.used);
        }
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

/// Culls `view`'s frustum over every object, in parallel parts on the current pool, or
/// takes an earlier view's frustum test (`from`).
pub(crate) fn cull_view(ctx: &CullCtx<'_>, view: &View, frustum: &Frustum, from: CullFrom<'_>, out: &mut VisibleList) {
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
    let blend = may_blend(view, ctx.queue);
    let part_len = part_len(n, rayon::current_num_threads());
    let parts = n.div_ceil(part_len).max(1);
    let key = RawKey {
        frustum: *frustum,
        layer_mask: filter.layer_mask,
        required_flags: filter.required_flags,
        objects: n,
        part_len,
    };
    // An earlier view's frustum test, where it holds this view's (a view with nothing of
    // its queue's kind tests nothing and keeps nothing).
    let taken = match from {
        CullFrom::View(src) if n > 0 && src.raw_of == Some(key) && src.parts.len() == parts => Some(src),
        _ => None,
    };
    let shared = if taken.is_some() { ", an earlier view's frustum test" } else { "" };
    profile::zone_text!("cull", "view {} ({:?}){shared}", ctx.label, view.pass);
    let keep_raw = matches!(from, CullFrom::Keep) && n > 0;
    out.raw_of = keep_raw.then_some(key);
    out.took = taken.is_some();
    out.parts.resize_with(parts, CullPart::default);
    out.next_generation(parts, part_len);
    par::set_len(&mut out.keys, parts * part_len);
    let (set, prev) = (&mut out.set, &out.prev_set);
    let part_words = part_len / 64;
    let parts = (
        &mut out.parts[..],
        (Scaled(&mut set.words[..], part_words), Scaled(&mut out.stay.words[..], part_words)),
        Scaled(&mut out.keys[..], part_len),
    );
    par::fill_blocks(1, parts, &|p, (part, (Scaled(words, _), Scaled(stay, _)), Scaled(keys, _))| {
        let part = &mut part[0];
        part.visible.clear();
        match taken {
            Some(src) => part.visible.clone_from(&src.parts[p].raw),
            None => {
                let range = p * part_len..((p + 1) * part_len).min(n);
                cull_range(&input, ctx.blocks, frustum, filter, ctx.kernel, range, &mut part.visible);
            }
        }
        if keep_raw {
            part.raw.clone_from(&part.visible);
        }
        if ctx.queue != Queue::All || ctx.pass_filter {
            let want = (ctx.queue != Queue::Opaque, ctx.queue != Queue::Transparent);
            let bit = view.pass.bit();
            part.visible.retain(|&i| {
                let m = &ctx.mat_frames[o.material[i as usize] as usize];
                (if m.transparent { want.0 } else { want.1 }) && m.passes & bit != 0
            });
        }
        // Which materials this part saw (the patch stage), and the visible objects' sort
        // keys, read while the objects' data is in this core's cache.
        part.used.reset(ctx.materials);
        part.fresh.clear();
        part.moved.clear();
        let base = p * part_len;
        for &i in &part.visible {
            part.used.insert(o.material[i as usize] as usize);
        }
        // Each key is compared with the one its slot holds, the previous cull's where the
        // object was visible to it.
        let was = prev.words.get(p * part_words..).unwrap_or(&[]);
        write_keys(view, o, ctx.mat_frames, (&part.visible, blend), (keys, base), (was, &mut part.moved));
        VisibleSet::fill_part(words, p, &part.visible);
        VisibleSet::fresh_of_part(words, prev, p, &mut part.fresh);
        VisibleSet::stay_of_part(stay, words, prev, p, &part.moved);
        part.changed = !part.moved.is_empty() || !VisibleSet::same_part(words, prev, p);
    });
    out.finish(ctx.materials);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

#[cfg(test)]
mod tests;
