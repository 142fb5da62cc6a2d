//! The sort's input in last frame's order, and the tie rule that keeps its output equal to
//! sorting in object order.
//!
//! A view's queue changes little from one frame to the next, but the cull stage lists the
//! visible objects in object order, which the sorted queue of a scene is far from: the
//! radix sort then does all its passes every frame. Fed instead with last frame's queue
//! (the objects still visible, in last frame's draw order) followed by the newly visible
//! ones, the keys arrive nearly sorted and the sorter's nearly-sorted path runs: a few
//! changed keys set aside, sorted and merged back.
//!
//! A stable sort orders equal keys by input position, which now depends on last frame.
//! [`order_ties_by_object`] then sorts each run of equal keys by object index, so the
//! queue is the one unique order by (key, object index), the order of a stable sort in
//! object order: the command stream is the same whatever the previous frames were.

use switchyard_kernels::par;

use crate::cull::{VisibleList, VisibleSet};

/// Scratch of [`coherent_order`].
#[derive(Debug, Default)]
pub(crate) struct OrderScratch {
    offsets: Vec<usize>,
}

/// Objects of last frame's queue per block when it is filtered.
const BLOCK: usize = 4096;

/// Writes into `out` the objects of `visible` in last frame's order: the objects of
/// `prev_queue` that `now` holds, then those of `visible` that `prev` (the set of
/// `prev_queue`) lacks, in object order; `key(i)` fills `keys` alongside. Returns `false`
/// (writing nothing useful) when the counts do not add up to `visible.len()`, which only a
/// `prev` that is not the set of `prev_queue` would cause.
pub(crate) fn coherent_order(
    prev_queue: &[u32],
    prev: &VisibleSet,
    now: &VisibleSet,
    visible: &VisibleList,
    scratch: &mut OrderScratch,
    out: (&mut Vec<u32>, &mut Vec<u64>),
    key: &(dyn Fn(u32) -> u64 + Sync),
) -> bool {
    let n = visible.len();
    let kept_blocks = prev_queue.len().div_ceil(BLOCK);
    let pieces = visible.offsets().len().saturating_sub(1);
    // Count per part (kept blocks, then new pieces), then a prefix sum of the counts.
    let offsets = &mut scratch.offsets;
    offsets.clear();
    offsets.resize(kept_blocks + pieces + 1, 0);
    par::fill_blocks(1, &mut offsets[1..], &|j, c: &mut [usize]| {
        c[0] = if j < kept_blocks {
            prev_queue[j * BLOCK..((j + 1) * BLOCK).min(prev_queue.len())].iter().filter(|&&i| now.contains(i)).count()
        } else {
            visible.piece(j - kept_blocks).iter().filter(|&&i| !prev.contains(i)).count()
        };
    });
    for j in 0..kept_blocks + pieces {
        offsets[j + 1] += offsets[j];
    }
    if offsets[kept_blocks + pieces] != n {
        return false;
    }
    par::set_len(out.0, n);
    par::set_len(out.1, n);
    par::fill_ranges(offsets, (&mut out.0[..], &mut out.1[..]), &|j, (q, k): (&mut [u32], &mut [u64])| {
        let mut w = 0;
        let mut put = |i: u32| {
            q[w] = i;
            k[w] = key(i);
            w += 1;
        };
        if j < kept_blocks {
            let block = &prev_queue[j * BLOCK..((j + 1) * BLOCK).min(prev_queue.len())];
            block.iter().filter(|&&i| now.contains(i)).for_each(|&i| put(i));
        } else {
            visible.piece(j - kept_blocks).iter().filter(|&&i| !prev.contains(i)).for_each(|&i| put(i));
        }
    });
    true
}

/// Sorts each run of equal keys in `keys` (ascending) by its objects in `queue`, in
/// parallel over blocks that start where a run starts.
pub(crate) fn order_ties_by_object(keys: &[u64], queue: &mut [u32], starts: &mut Vec<usize>) {
    let n = keys.len();
    starts.clear();
    starts.push(0);
    for b in 1..n.div_ceil(BLOCK) {
        let mut s = (b * BLOCK).max(*starts.last().expect("non-empty"));
        while s < n && keys[s] == keys[s - 1] {
            s += 1;
        }
        starts.push(s);
    }
    starts.push(n);
    par::fill_ranges(starts, queue, &|b, q: &mut [u32]| {
        let k = &keys[starts[b]..starts[b + 1]];
        let mut s = 0;
        while s < k.len() {
            let mut e = s + 1;
            while e < k.len() && k[e] == k[s] {
                e += 1;
            }
            if e - s > 1 {
                q[s..e].sort_unstable();
            }
            s = e;
        }
    });
}
