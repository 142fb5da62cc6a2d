//! Stage 2, sort: a 64-bit key per visible object ([`key`]), then the stable parallel radix
//! sort of `switchyard_kernels::sort` over (key, object) pairs.
//!
//! The cull stage built each visible object's key ([`key::item_key`], by object index), the
//! visible set, and which objects stay (visible last frame with the same key), are new, or
//! moved (another key). The queue is merged from last frame's ([`coherent`]): the new and
//! moved objects, sorted, merged with the objects that stay, read in last frame's queue's
//! order with its keys, in parallel segments, each pair read and written once. On a first
//! frame the objects are written in object order with their keys and radix sorted.
//! Equal keys end in object order, so the queue does not depend on earlier frames. Where
//! the cull found the same objects with the same keys as last frame, last frame's queue is
//! kept without a pass over it.

mod coherent;
pub mod key;

use switchyard_kernels::sort::RadixSorter;

use crate::cull::VisibleList;
use crate::material::MaterialFrame;
use crate::profile;
use crate::view::View;
use coherent::{merge_from_last, MergeScratch};

/// The frame data of a material (every pass kind; the caller narrows `passes`).
pub(crate) fn material_frame(variant: u32, shader: u32, transparent: bool, shadow_state: u32) -> MaterialFrame {
    MaterialFrame { variant, shader, transparent, shadow_state, passes: 0b11, batch_as: None }
}

/// The sort stage's output for one view: dense object indices in draw order and their
/// keys (ascending), plus what the next frame's sort starts from and scratch memory.
#[derive(Debug, Default)]
pub(crate) struct SortedQueue {
    pub(crate) queue: Vec<u32>,
    pub(crate) keys: Vec<u64>,
    sorter: RadixSorter,
    /// `queue` is the sorted queue of the visible list's cull `generation` (false at
    /// first, and after a sort that did not finish).
    coherent: bool,
    generation: u64,
    /// The next queue and its keys, merged beside `queue` and `keys` from them.
    input: Vec<u32>,
    input_keys: Vec<u64>,
    merge: MergeScratch,
    /// Whether this frame's queue was merged from last frame's (stats and tests).
    pub(crate) from_last_order: bool,
    /// Whether the cull found last frame's objects and keys, so the queue was kept as it was
    /// (stats and tests).
    pub(crate) unchanged: bool,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl SortedQueue {
    /// This frame keeps the queue as the last sort left it (its cull found last frame's
    /// objects and keys, or kept its output): counted as kept from last frame's order, the
    /// stage took no time.
    pub(crate) fn kept(&mut self) {
        (self.from_last_order, self.unchanged) = (true, true);
        self.sorter.last_path = switchyard_kernels::sort::SortPath::InOrder;
        (self.sorter.last_passes, self.sorter.last_parallel) = (0, false);
        self.ms = 0.0;
    }

    /// The queue and its keys, where they are the sorted queue of cull `generation` of
    /// the visible list (its last cull): the queue the next sort merges from, whose
    /// blocks the next cull cuts its tails by.
    pub(crate) fn last_of(&self, generation: u64) -> Option<(&[u32], &[u64])> {
        (self.coherent && self.generation == generation).then_some((&self.queue[..], &self.keys[..]))
    }

    /// Whether the last sort found its keys in order or nearly so (the full radix sort did
    /// not run).
    pub(crate) fn nearly_in_order(&self) -> bool {
        use switchyard_kernels::sort::SortPath;
        matches!(self.sorter.last_path, SortPath::InOrder | SortPath::NearlySorted)
    }
}

/// What the sort stage reads besides the view and its visible list.
#[derive(Clone, Copy)]
pub(crate) struct SortCtx<'a> {
    /// The pass's name (Tracy).
    pub(crate) label: &'a str,
}

/// Sorts `visible`'s objects by (key, object): merged from last frame's queue where the
/// list's previous cull is the one that queue was sorted from (see [`coherent`]), else
/// written in object order with their keys (the cull built them) in parallel and radix
/// sorted with equal keys ordered by object.
pub(crate) fn sort_view(ctx: &SortCtx<'_>, view: &View, visible: &VisibleList, out: &mut SortedQueue) {
    profile::zone_text!("sort", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    // Last frame's queue is the previous cull's set only if this list was culled once since.
    let coherent = std::mem::take(&mut out.coherent) && visible.generation == out.generation + 1;
    if coherent && visible.unchanged() {
        // The same objects with the same keys (a still view, the far cascade of a still
        // light): last frame's queue and keys are this frame's, nothing to write or sort.
        out.kept();
    } else {
        out.unchanged = false;
        let prev = (&out.queue[..], &out.keys[..]);
        out.from_last_order =
            coherent && merge_from_last(prev, visible, &mut out.merge, (&mut out.input, &mut out.input_keys));
        if out.from_last_order {
            std::mem::swap(&mut out.queue, &mut out.input);
            std::mem::swap(&mut out.keys, &mut out.input_keys);
            out.sorter.last_path = switchyard_kernels::sort::SortPath::NearlySorted;
            (out.sorter.last_passes, out.sorter.last_parallel) = (1, rayon::current_num_threads() > 1);
        } else {
            // (On the first frame, after a sort that did not finish, or a list culled twice.)
            sort_in_object_order(visible, out);
        }
    }
    out.generation = visible.generation;
    out.coherent = true;
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

/// The queue of `visible` written in object order with its keys, then radix sorted.
fn sort_in_object_order(visible: &VisibleList, out: &mut SortedQueue) {
    {
        profile::zone!("sort-keys");
        switchyard_kernels::par::set_len(&mut out.queue, visible.len());
        switchyard_kernels::par::set_len(&mut out.keys, visible.len());
        switchyard_kernels::par::fill_ranges(
            visible.offsets(),
            (&mut out.queue[..], &mut out.keys[..]),
            &|p, (queue, keys): (&mut [u32], &mut [u64])| {
                queue.copy_from_slice(visible.piece(p));
                keys.iter_mut().zip(queue).for_each(|(k, &mut i)| *k = visible.key(i));
            },
        );
    }
    profile::zone!("radix-sort");
    // Equal keys by object index: the queue is the unique (key, object) order, the one
    // the merge from last frame's queue keeps.
    out.sorter.ties_by_value = true;
    out.sorter.sort_vecs(&mut out.keys, &mut out.queue);
}
