//! The sort's input in last frame's order, and the tie rule that keeps its output equal to
//! sorting in object order.
//!
//! A view's queue changes little from one frame to the next, but the cull stage lists the
//! visible objects in object order, which the sorted queue of a scene is far from: the
//! radix sort then does all its passes every frame. Fed instead with last frame's queue,
//! each object with its key now, followed by the newly visible ones, the keys arrive nearly
//! sorted and the sorter's nearly-sorted path runs: a few changed keys set aside, sorted and
//! merged back. The cull wrote each visible object's key by object index and listed the
//! objects it newly sees, so the input is a count of survivors per block of last frame's
//! queue and one pass that writes them with their keys.
//!
//! A stable sort orders equal keys by input position, which now depends on last frame, so
//! the sorter orders equal keys by object index instead (`RadixSorter::ties_by_value`):
//! the queue is the one unique order by (key, object index), the order of a stable sort in
//! object order, and the command stream is the same whatever the previous frames were.

use switchyard_kernels::par::{self, Parted};
use switchyard_kernels::sort::Survey;

use crate::cull::{VisibleList, VisibleSet};

/// Scratch of [`coherent_order`].
#[derive(Debug, Default)]
pub(crate) struct OrderScratch {
    offsets: Vec<usize>,
    /// The parts whose fresh objects each fill piece writes: piece `j` writes parts
    /// `groups[j]..groups[j + 1]`.
    groups: Vec<usize>,
    /// Each fill piece's survey of what it wrote.
    surveys: Vec<Survey>,
}

/// Most and fewest objects of last frame's queue per block when it is read (about two
/// blocks per worker between them), and fewest fresh objects per piece. The order written
/// does not depend on the block size.
const BLOCK: usize = 4096;
const MIN_BLOCK: usize = 1024;

/// Writes into `out` the objects of last frame's queue `prev_queue` that `now` holds, in
/// that order, then `visible`'s newly visible objects (its parts' fresh lists, in object
/// order), with their keys (read by object index): one parallel pass counts the survivors
/// of each block of `prev_queue`, one writes, each piece surveying what it wrote for the
/// sort (the result's [`Survey`]). Returns `None` (writing nothing useful) when the counts
/// do not add up to `visible.len()`, which only a `prev_queue` whose set is not the
/// previous cull's would cause.
pub(crate) fn coherent_order(
    prev_queue: &[u32],
    now: &VisibleSet,
    visible: &VisibleList,
    scratch: &mut OrderScratch,
    out: (&mut Vec<u32>, &mut Vec<u64>),
) -> Option<Survey> {
    let n = visible.len();
    let len = (prev_queue.len() / (2 * rayon::current_num_threads())).clamp(MIN_BLOCK, BLOCK);
    let blocks = prev_queue.len().div_ceil(len);
    let block = |j: usize| &prev_queue[j * len..((j + 1) * len).min(prev_queue.len())];
    // The fresh objects in pieces of at least BLOCK objects, whole parts each.
    let fresh = visible.fresh_offsets();
    let groups = &mut scratch.groups;
    groups.clear();
    for (p, &at) in fresh.iter().enumerate().take(fresh.len().saturating_sub(1)) {
        if groups.last().is_none_or(|&g| at - fresh[g] >= BLOCK) {
            groups.push(p);
        }
    }
    groups.push(fresh.len().saturating_sub(1));
    // Survivors per block, then a prefix sum: the pieces' offsets.
    let offsets = &mut scratch.offsets;
    offsets.clear();
    offsets.resize(blocks + 1, 0);
    par::fill_blocks(1, &mut offsets[1..], &|j, c: &mut [usize]| {
        c[0] = block(j).iter().filter(|&&i| now.contains(i)).count();
    });
    for j in 0..blocks {
        offsets[j + 1] += offsets[j];
    }
    let kept = offsets[blocks];
    if kept + visible.fresh_len() != n {
        return None;
    }
    offsets.extend(groups[1..].iter().map(|&g| kept + fresh[g]));
    par::set_len(out.0, n);
    par::set_len(out.1, n);
    let groups = &scratch.groups[..];
    let surveys = &mut scratch.surveys;
    surveys.clear();
    surveys.resize(offsets.len() - 1, Survey::default());
    let pieces = (Parted(&mut out.0[..], &offsets[..]), Parted(&mut out.1[..], &offsets[..]), &mut surveys[..]);
    type Piece<'a, 'o> = (Parted<'o, &'a mut [u32]>, Parted<'o, &'a mut [u64]>, &'a mut [Survey]);
    par::fill_blocks(1, pieces, &|j, (Parted(q, _), Parted(k, _), survey): Piece<'_, '_>| {
        let mut w = 0;
        let mut put = |i: u32| {
            q[w] = i;
            k[w] = visible.key(i);
            w += 1;
        };
        if j < blocks {
            block(j).iter().filter(|&&i| now.contains(i)).for_each(|&i| put(i));
        } else {
            let g = j - blocks;
            (groups[g]..groups[g + 1]).for_each(|p| visible.fresh(p).iter().for_each(|&i| put(i)));
        }
        // Read again while in this core's cache: the sort then need not read it all.
        survey[0] = Survey::of(k, q);
    });
    Some(surveys.iter().fold(Survey::default(), |a, &b| a.then(b)))
}
