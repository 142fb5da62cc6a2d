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

use switchyard_kernels::par::{self, Take};
use switchyard_kernels::sort::nearly_sorted::{descent_gaps, push_gap};
use switchyard_kernels::sort::Survey;

use crate::cull::{VisibleList, VisibleSet};

/// Scratch of [`coherent_order`].
#[derive(Debug, Default)]
pub(crate) struct OrderScratch {
    /// The parts whose fresh objects each fill piece writes: piece `j` writes parts
    /// `groups[j]..groups[j + 1]`.
    groups: Vec<usize>,
    /// Each fill piece's survey of what it wrote, where it starts, and the descents in it.
    pieces: Vec<PieceOut>,
    /// The descents of the whole order (the pieces' and their seams').
    pub(crate) gaps: Vec<(usize, usize)>,
}

/// What one piece of [`coherent_order`] found in what it wrote.
#[derive(Debug, Default)]
struct PieceOut {
    survey: Survey,
    start: usize,
    len: usize,
    gaps: Vec<(usize, usize)>,
}

/// Most and fewest objects of last frame's queue per block when it is read (about two
/// blocks per worker between them), and fewest fresh objects per piece. The order written
/// does not depend on the block size.
const BLOCK: usize = 4096;
const MIN_BLOCK: usize = 1024;

/// Writes into `out` the objects of last frame's queue `prev_queue` that `now` holds, in
/// that order, then `visible`'s newly visible objects (its parts' fresh lists, in object
/// order), with their keys (read by object index), in one parallel pass
/// ([`par::fill_chained`]): each piece of `prev_queue` marks its survivors, takes room for
/// them right after the pieces before it, writes them, and surveys what it wrote for the
/// sort (the result's [`Survey`]). Returns `None` (writing nothing useful) when the pieces
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
    let groups = &scratch.groups[..];
    // Room for every object of last frame's queue surviving (at most), cut to `n` after.
    let room = prev_queue.len() + visible.fresh_len();
    par::set_len(out.0, room);
    par::set_len(out.1, room);
    let pieces = &mut scratch.pieces;
    pieces.resize_with(blocks + groups.len() - 1, PieceOut::default);
    type Out<'a> = (&'a mut [u32], &'a mut [u64]);
    let fill = &|j, take: Take<'_, Out<'_>>, piece: &mut PieceOut| {
        let (start, (q, k)) = if j < blocks {
            // Survivors marked a bit each (a block is at most BLOCK objects), counted, then
            // written from the bits: each object is looked up in the set once.
            let b = block(j);
            let mut marks = [0u64; BLOCK / 64];
            for (w, chunk) in marks.iter_mut().zip(b.chunks(64)) {
                *w = chunk.iter().enumerate().fold(0, |m, (x, &i)| m | (u64::from(now.contains(i)) << x));
            }
            let (start, (q, k)) = take.take_at(marks.iter().map(|w| w.count_ones() as usize).sum());
            let mut at = 0;
            for (w, &m) in marks.iter().enumerate() {
                let mut m = m;
                while m != 0 {
                    let i = b[w * 64 + m.trailing_zeros() as usize];
                    (q[at], k[at]) = (i, visible.key(i));
                    at += 1;
                    m &= m - 1;
                }
            }
            (start, (q, k))
        } else {
            let g = j - blocks;
            let (start, (q, k)) = take.take_at(fresh[groups[g + 1]] - fresh[groups[g]]);
            let objects = (groups[g]..groups[g + 1]).flat_map(|p| visible.fresh(p).iter());
            for ((q, k), &i) in q.iter_mut().zip(k.iter_mut()).zip(objects) {
                (*q, *k) = (i, visible.key(i));
            }
            (start, (q, k))
        };
        // Read again while in this core's cache: the sort then need not read it all.
        (piece.survey, piece.start, piece.len) = (Survey::of(k, q), start, k.len());
        // The descents of (key, object): the sorter orders equal keys by object.
        piece.gaps.clear();
        if piece.survey.descents > 0 || piece.survey.ties > 0 {
            descent_gaps(k, Some(q), start, &mut piece.gaps);
        }
    };
    if par::fill_chained((&mut out.0[..], &mut out.1[..]), pieces, fill) != n {
        return None;
    }
    out.0.truncate(n);
    out.1.truncate(n);
    // The pieces' descents in order, with those across their seams.
    let gaps = &mut scratch.gaps;
    gaps.clear();
    let mut survey = Survey::default();
    for p in pieces.iter().filter(|p| p.len > 0) {
        if p.start > 0 && (out.1[p.start - 1], out.0[p.start - 1]) > (out.1[p.start], out.0[p.start]) {
            push_gap(gaps, (p.start - 1, p.start + 1));
        }
        for &g in &p.gaps {
            push_gap(gaps, g);
        }
        survey = survey.then(p.survey);
    }
    Some(survey)
}
