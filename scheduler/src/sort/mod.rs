//! Stage 2, sort: a 64-bit key per visible object ([`key`]), then the stable parallel radix
//! sort of `switchyard_kernels::sort` over (key, object) pairs.
//!
//! The cull stage built each visible object's key ([`key::item_key`], by object index), the
//! visible set, and which objects stay (visible last frame with the same key), are new, or
//! moved (another key). The queue and its keys are written in one parallel pass: the
//! objects that stay in last frame's order with last frame's keys, a sorted run, followed
//! by the new and moved ones ([`coherent`]); the sorter's nearly-sorted path sorts that
//! tail and merges it in.
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
use coherent::{coherent_order, OrderScratch};

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
    /// The next input order and its keys, built beside `queue` and `keys`.
    input: Vec<u32>,
    input_keys: Vec<u64>,
    scratch: OrderScratch,
    /// Whether this frame's input was last frame's order (stats and tests).
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

/// Writes the keys of `visible`'s objects (the cull built them) in last frame's order
/// where it has one (see [`coherent`]), else in object order, in parallel; sorts; orders
/// equal keys by object.
pub(crate) fn sort_view(ctx: &SortCtx<'_>, view: &View, visible: &VisibleList, out: &mut SortedQueue) {
    profile::zone_text!("sort", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    let n = visible.len();
    let survey;
    {
        profile::zone!("sort-keys");
        // Last frame's queue is the previous cull's set only if this list was culled once since.
        let coherent = std::mem::take(&mut out.coherent) && visible.generation == out.generation + 1;
        if coherent && visible.unchanged() {
            // The same objects with the same keys (a still view, the far cascade of a still
            // light): last frame's queue and keys are this frame's, nothing to write or sort.
            out.kept();
            out.generation = visible.generation;
            out.coherent = true;
            out.ms = t.elapsed().as_secs_f64() * 1e3;
            return;
        }
        out.unchanged = false;
        let prev = (&out.queue[..], &out.keys[..]);
        let order = (&mut out.input, &mut out.input_keys);
        survey = coherent.then(|| coherent_order(prev, visible, &mut out.scratch, order)).flatten();
        out.from_last_order = survey.is_some();
        if out.from_last_order {
            std::mem::swap(&mut out.queue, &mut out.input);
            std::mem::swap(&mut out.keys, &mut out.input_keys);
        } else {
            switchyard_kernels::par::set_len(&mut out.queue, n);
            switchyard_kernels::par::set_len(&mut out.keys, n);
            // (On the first frame, or after a sort that did not finish.)
            switchyard_kernels::par::fill_ranges(
                visible.offsets(),
                (&mut out.queue[..], &mut out.keys[..]),
                &|p, (queue, keys): (&mut [u32], &mut [u64])| {
                    queue.copy_from_slice(visible.piece(p));
                    keys.iter_mut().zip(queue).for_each(|(k, &mut i)| *k = visible.key(i));
                },
            );
        }
    }
    {
        profile::zone!("radix-sort");
        // Equal keys by object index: the queue is the unique (key, object) order, the
        // same whatever last frame's order was (the nearly-sorted path orders ties as it
        // merges; an input already in order is fixed only where its survey found ties
        // out of order).
        out.sorter.ties_by_value = true;
        match survey {
            Some((s, stay)) => {
                // The objects that stay are a sorted run; every pair out of place is in the
                // tail after it.
                let tail = [(stay, n)];
                let gaps = if stay < n { &tail[..] } else { &[] };
                out.sorter.sort_vecs_surveyed(&mut out.keys, &mut out.queue, s, Some(gaps));
            }
            None => out.sorter.sort_vecs(&mut out.keys, &mut out.queue),
        }
    }
    out.generation = visible.generation;
    out.coherent = true;
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}
