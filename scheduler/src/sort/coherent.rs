//! The sort's input in last frame's order, and the tie rule that keeps its output equal to
//! sorting in object order.
//!
//! A view's queue changes little from one frame to the next, but the cull stage lists the
//! visible objects in object order, which the sorted queue of a scene is far from: the
//! radix sort then does all its passes every frame. The cull compared each visible
//! object's key with the one it had last frame, so it knows which objects stay: visible
//! then and now with the same key. Those stand in order in last frame's queue, with last
//! frame's keys; the input is them, read in that order (a bit per object looked up, the
//! keys read in order beside the queue), followed by the objects that do not stay (the
//! newly visible and those whose key changed, a few in a frame): a sorted run and a short
//! tail, which the sorter's nearly-sorted path sorts and merges in. One parallel pass
//! writes it: each piece of last frame's queue takes room for its survivors right after
//! the pieces before it.
//!
//! A stable sort orders equal keys by input position, which now depends on last frame, so
//! the sorter orders equal keys by object index instead (`RadixSorter::ties_by_value`):
//! the queue is the one unique order by (key, object index), the order of a stable sort in
//! object order, and the command stream is the same whatever the previous frames were.
//! Last frame's queue is in that order, so the run of objects that stay is too.

use switchyard_kernels::par::{self, Take};
use switchyard_kernels::sort::Survey;

use crate::cull::VisibleList;

/// Scratch of [`coherent_order`].
#[derive(Debug, Default)]
pub(crate) struct OrderScratch {
    /// The parts whose objects that do not stay each tail piece writes: tail piece `j`
    /// writes parts `groups[j]..groups[j + 1]`.
    groups: Vec<usize>,
    /// Each fill piece's survey of what it wrote.
    pieces: Vec<Survey>,
}

/// Most and fewest objects of last frame's queue per block when it is read (about two
/// blocks per worker between them), and fewest objects of the tail per piece. The order
/// written does not depend on the block size.
const BLOCK: usize = 4096;
const MIN_BLOCK: usize = 1024;

/// Writes into `out` the objects of last frame's queue `prev` (objects and keys, sorted)
/// that stay ([`VisibleList::stays`]), in that order with those keys, then `visible`'s
/// objects that do not stay (its parts' tails) with their keys (read by object index), in
/// one parallel pass ([`par::fill_chained`]): each piece of `prev` marks its survivors,
/// takes room for them right after the pieces before it, writes them, and surveys what it
/// wrote for the sort. Returns the survey of the whole input and how many pairs stay (the
/// sorted run it starts with); `None` (writing nothing useful) when the pieces do not add
/// up to `visible.len()`, which only a `prev` whose set is not the previous cull's would
/// cause.
pub(crate) fn coherent_order(
    (prev_queue, prev_keys): (&[u32], &[u64]),
    visible: &VisibleList,
    scratch: &mut OrderScratch,
    out: (&mut Vec<u32>, &mut Vec<u64>),
) -> Option<(Survey, usize)> {
    if prev_keys.len() != prev_queue.len() {
        return None;
    }
    let n = visible.len();
    let len = (prev_queue.len() / (2 * rayon::current_num_threads())).clamp(MIN_BLOCK, BLOCK);
    let blocks = prev_queue.len().div_ceil(len);
    let block = |j: usize| j * len..((j + 1) * len).min(prev_queue.len());
    // The tail in pieces of at least BLOCK objects, whole parts each.
    let tail = visible.tail_offsets();
    let groups = &mut scratch.groups;
    groups.clear();
    for (p, &at) in tail.iter().enumerate().take(tail.len().saturating_sub(1)) {
        if groups.last().is_none_or(|&g| at - tail[g] >= BLOCK) {
            groups.push(p);
        }
    }
    groups.push(tail.len().saturating_sub(1));
    let groups = &scratch.groups[..];
    // Room for every object of last frame's queue surviving (at most), cut to `n` after.
    let room = prev_queue.len() + visible.tail_len();
    par::set_len(out.0, room);
    par::set_len(out.1, room);
    let pieces = &mut scratch.pieces;
    pieces.resize_with(blocks + groups.len() - 1, Survey::default);
    type Out<'a> = (&'a mut [u32], &'a mut [u64]);
    let fill = &|j, take: Take<'_, Out<'_>>, survey: &mut Survey| {
        let (q, k) = if j < blocks {
            // Survivors marked a bit each (a block is at most BLOCK objects), counted, then
            // written from the bits with last frame's keys: each object is looked up once.
            let b = block(j);
            let (bq, bk) = (&prev_queue[b.clone()], &prev_keys[b]);
            let mut marks = [0u64; BLOCK / 64];
            for (w, chunk) in marks.iter_mut().zip(bq.chunks(64)) {
                *w = chunk.iter().enumerate().fold(0, |m, (x, &i)| m | (u64::from(visible.stays(i)) << x));
            }
            let (q, k) = take.take(marks.iter().map(|w| w.count_ones() as usize).sum());
            let mut at = 0;
            for (w, &m) in marks.iter().enumerate() {
                let mut m = m;
                while m != 0 {
                    let x = w * 64 + m.trailing_zeros() as usize;
                    (q[at], k[at]) = (bq[x], bk[x]);
                    at += 1;
                    m &= m - 1;
                }
            }
            (q, k)
        } else {
            let g = j - blocks;
            let (q, k) = take.take(tail[groups[g + 1]] - tail[groups[g]]);
            let objects = (groups[g]..groups[g + 1]).flat_map(|p| visible.tail(p));
            for ((q, k), &i) in q.iter_mut().zip(k.iter_mut()).zip(objects) {
                (*q, *k) = (i, visible.key(i));
            }
            (q, k)
        };
        // Read again while in this core's cache: the sort then need not read it all.
        *survey = Survey::of(k, q);
    };
    if par::fill_chained((&mut out.0[..], &mut out.1[..]), pieces, fill) != n {
        return None;
    }
    out.0.truncate(n);
    out.1.truncate(n);
    let survey = pieces.iter().fold(Survey::default(), |s, &p| s.then(p));
    Some((survey, n - visible.tail_len()))
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use switchyard_kernels::sort::SortPath;

    use super::super::{sort_view, SortCtx, SortedQueue};
    use crate::cull::{VisibleList, MIN_CULL_PART};
    use crate::view::View;

    #[test]
    fn queues_from_last_order_are_the_key_object_order_every_frame() {
        // Frames of a scene of a few parts: each frame some objects leave or come into
        // view and some keys change (many to keys other objects have: ties), on one and
        // several threads; each queue is the (key, object) order of its visible objects.
        let objects = 5 * MIN_CULL_PART - 100;
        let view = View {
            label: "test",
            view_proj: glam::Mat4::IDENTITY,
            eye: glam::Vec3::ZERO,
            far: 100.0,
            layer_mask: u16::MAX,
            pass: crate::PassKind::Forward,
        };
        for threads in [1, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
            let mut keys: Vec<u64> = (0..objects).map(|_| rng.gen_range(0..400)).collect();
            let mut seen: Vec<bool> = (0..objects).map(|_| rng.gen_bool(0.8)).collect();
            let (mut list, mut out) = (VisibleList::default(), SortedQueue::default());
            let mut nearly = 0;
            for frame in 0..8 {
                for _ in 0..objects / 40 {
                    let i = rng.gen_range(0..objects);
                    if rng.gen_bool(0.5) {
                        seen[i] = !seen[i];
                    } else {
                        keys[i] = rng.gen_range(0..400);
                    }
                }
                let visible: Vec<u32> = (0..objects as u32).filter(|&i| seen[i as usize]).collect();
                list.recull(objects, MIN_CULL_PART, &visible, |i| keys[i as usize]);
                pool.install(|| sort_view(&SortCtx { label: "test" }, &view, &list, &mut out));
                let mut expect: Vec<(u64, u32)> = visible.iter().map(|&i| (keys[i as usize], i)).collect();
                expect.sort_unstable();
                let got: Vec<(u64, u32)> = out.keys.iter().copied().zip(out.queue.iter().copied()).collect();
                assert!(got == expect, "frame {frame}, {threads} threads");
                assert_eq!(out.from_last_order, frame > 0, "frame {frame}");
                nearly += usize::from(out.sorter.last_path == SortPath::NearlySorted);
            }
            assert!(nearly >= 6, "{nearly} frames merged a tail into the run of objects that stay");
        }
    }
}
