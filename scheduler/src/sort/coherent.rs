//! The queue merged straight from last frame's, and the tie rule that keeps it equal to
//! sorting in object order.
//!
//! A view's queue changes little from one frame to the next, but the cull stage lists the
//! visible objects in object order, which the sorted queue of a scene is far from: a radix
//! sort of them would do all its passes every frame. The cull compared each visible
//! object's key with the one it had last frame, so it knows which objects stay: visible
//! then and now with the same key. Those stand in order in last frame's queue, with last
//! frame's keys. The rest, the tail (newly visible objects and those whose key changed, a
//! few in a frame), each cull part keeps with their keys, written while the keys are in
//! its core's cache; here the parts' tails are copied out (on this worker alone below
//! [`SERIAL_TAIL`] pairs) and sorted by (key, object). Then last frame's queue is cut into
//! blocks, written in one chained fill (`kernels::par::fill_chained`): each block marks
//! its objects that stay (a bit per object looked up, once), takes room for them and for
//! the tail pairs between its first pair and the next block's first pair (a partition
//! point) right after the blocks before it, and merges the two straight into that room.
//! Every queued pair is read once and written once, in one fork: no input array, no
//! survey of it, no counting pass, no scratch copy of the merge.
//!
//! A stable sort orders equal keys by input position, which here would depend on last
//! frame, so the queue orders equal keys by object index instead (the tail's sorter with
//! `RadixSorter::ties_by_value`, the merge comparing (key, object)): the queue is the one
//! unique order by (key, object index), the order of a stable sort in object order, and
//! the command stream is the same whatever the previous frames were. Last frame's queue is
//! in that order, so a block's staying pairs lie between its first pair and the next
//! block's, no tail pair equals one of them (an object is in one or the other), and the
//! segments put side by side are the whole order.

use switchyard_kernels::par::{self, Take};
use switchyard_kernels::sort::RadixSorter;

use crate::cull::VisibleList;
use crate::profile;

/// Scratch of [`merge_from_last`].
#[derive(Debug, Default)]
pub(crate) struct MergeScratch {
    tail_q: Vec<u32>,
    tail_k: Vec<u64>,
    sorter: RadixSorter,
    /// One per block of last frame's queue: the chained fill's results, which it has
    /// none of (a zero-sized vector: no allocation).
    pieces: Vec<()>,
}

/// Most and fewest objects of last frame's queue per block (about two blocks per worker
/// between them). The order written does not depend on the block size.
pub(super) const BLOCK: usize = 8192;
pub(super) const MIN_BLOCK: usize = 2048;
/// Tails shorter than this are copied on the sorting worker alone: a fork over every cull
/// part (62 at 1M objects) for a few thousand pairs. Gathering keys by object index, such
/// a tail took the same time either way on 16 threads (RUNS.md run 104); now it copies.
const SERIAL_TAIL: usize = 8192;

/// Writes into `out` the queue of `visible` sorted by (key, object), from last frame's
/// queue `prev` (objects and keys, in that order; the previous cull's objects) and
/// `visible`'s tail. Returns `false`, with `out` of no use, when the pieces do not add up
/// to `visible.len()`, which only a `prev` whose set is not the previous cull's would
/// cause.
pub(crate) fn merge_from_last(
    (prev_queue, prev_keys): (&[u32], &[u64]),
    visible: &VisibleList,
    s: &mut MergeScratch,
    (q, k): (&mut Vec<u32>, &mut Vec<u64>),
) -> bool {
    if prev_keys.len() != prev_queue.len() {
        return false;
    }
    let n = visible.len();
    {
        profile::zone!("sort-tail");
        par::set_len(&mut s.tail_q, visible.tail_len());
        par::set_len(&mut s.tail_k, visible.tail_len());
        let tail = (&mut s.tail_q[..], &mut s.tail_k[..]);
        let gather = |p, (q, k): (&mut [u32], &mut [u64])| {
            q.iter_mut().zip(visible.tail(p)).for_each(|(q, &i)| *q = i);
            k.copy_from_slice(visible.tail_keys(p));
        };
        {
            profile::zone!("gather-tail");
            if visible.tail_len() < SERIAL_TAIL {
                // A few thousand pairs: a fork over every part would cost more than the copies.
                let (mut q, mut k) = tail;
                for (p, w) in visible.tail_offsets().windows(2).enumerate() {
                    let (pq, rq) = q.split_at_mut(w[1] - w[0]);
                    let (pk, rk) = k.split_at_mut(w[1] - w[0]);
                    gather(p, (pq, pk));
                    (q, k) = (rq, rk);
                }
            } else {
                par::fill_ranges(visible.tail_offsets(), tail, &gather);
            }
        }
        s.sorter.ties_by_value = true;
        s.sorter.sort_vecs(&mut s.tail_k, &mut s.tail_q);
    }
    profile::zone!("merge-last");
    let len = (prev_queue.len() / (2 * rayon::current_num_threads())).clamp(MIN_BLOCK, BLOCK);
    // One block at least: an empty last queue is one empty block taking the whole tail.
    let blocks = prev_queue.len().div_ceil(len).max(1);
    let block = |j: usize| (j * len).min(prev_queue.len())..((j + 1) * len).min(prev_queue.len());
    let (tk, tq) = (&s.tail_k[..], &s.tail_q[..]);
    // Tail pairs before block `j`'s first pair (all of them after the last block).
    let before = |j: usize| {
        if j == 0 {
            return 0;
        } else if j == blocks {
            return tq.len();
        }
        let at = (prev_keys[j * len], prev_queue[j * len]);
        let (mut lo, mut hi) = (0, tq.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if (tk[mid], tq[mid]) < at {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    // Room for every pair of last frame's queue staying (at most), cut to `n` after.
    let room = prev_queue.len() + tq.len();
    par::set_len(q, room);
    par::set_len(k, room);
    s.pieces.resize(blocks, ());
    type Out<'a> = (&'a mut [u32], &'a mut [u64]);
    // Each block marks its staying pairs (a bit each), takes room for them and its tail
    // slice right after the blocks before it, and merges the two into it: one fork, each
    // pair's stay bit looked up once.
    let written = par::fill_chained((&mut q[..], &mut k[..]), &mut s.pieces[..], &|j, take: Take<'_, Out<'_>>, _| {
        let b = block(j);
        let (bq, bk) = (&prev_queue[b.clone()], &prev_keys[b]);
        let mut marks = [0u64; BLOCK / 64];
        for (m, chunk) in marks.iter_mut().zip(bq.chunks(64)) {
            *m = chunk.iter().enumerate().fold(0, |m, (x, &i)| m | (u64::from(visible.stays(i)) << x));
        }
        let stays: usize = marks.iter().map(|m| m.count_ones() as usize).sum();
        let (lo, hi) = (before(j), before(j + 1));
        let (sq, sk) = (&tq[lo..hi], &tk[lo..hi]);
        let (oq, ok) = take.take(stays + sq.len());
        let (mut w, mut t) = (0, 0);
        for (word, &m) in marks.iter().enumerate() {
            let mut m = m;
            while m != 0 {
                let x = word * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let (i, key) = (bq[x], bk[x]);
                while t < sq.len() && (sk[t], sq[t]) < (key, i) {
                    (oq[w], ok[w]) = (sq[t], sk[t]);
                    (w, t) = (w + 1, t + 1);
                }
                (oq[w], ok[w]) = (i, key);
                w += 1;
            }
        }
        oq[w..].copy_from_slice(&sq[t..]);
        ok[w..].copy_from_slice(&sk[t..]);
    });
    if written != n {
        return false;
    }
    q.truncate(n);
    k.truncate(n);
    true
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use switchyard_kernels::sort::SortPath;

    use super::super::{sort_view, SortCtx, SortedQueue};
    use super::{merge_from_last, MergeScratch, BLOCK, MIN_BLOCK};
    use crate::cull::{VisibleList, MIN_CULL_PART};
    use crate::view::View;

    const VIEW: View = View {
        label: "test",
        view_proj: glam::Mat4::IDENTITY,
        eye: glam::Vec3::ZERO,
        far: 100.0,
        layer_mask: u16::MAX,
        pass: crate::PassKind::Forward,
    };

    /// Frames of `objects` objects: each frame some leave or come into view and some keys
    /// change (many to keys other objects have: ties), one frame sees nothing and the next
    /// everything; each queue must be the (key, object) order of its visible objects.
    fn frames(objects: usize, threads: usize) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9 + objects as u64);
        let mut keys: Vec<u64> = (0..objects).map(|_| rng.gen_range(0..400)).collect();
        let mut seen: Vec<bool> = (0..objects).map(|_| rng.gen_bool(0.8)).collect();
        let (mut list, mut out) = (VisibleList::default(), SortedQueue::default());
        let mut merged = 0;
        for frame in 0..10 {
            for _ in 0..objects / 40 + 1 {
                let i = rng.gen_range(0..objects);
                if rng.gen_bool(0.5) {
                    seen[i] = !seen[i];
                } else {
                    keys[i] = rng.gen_range(0..400);
                }
            }
            let visible: Vec<u32> = match frame {
                6 => Vec::new(),
                7 => (0..objects as u32).collect(),
                _ => (0..objects as u32).filter(|&i| seen[i as usize]).collect(),
            };
            list.recull(objects, MIN_CULL_PART, &visible, |i| keys[i as usize]);
            pool.install(|| sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out));
            let mut expect: Vec<(u64, u32)> = visible.iter().map(|&i| (keys[i as usize], i)).collect();
            expect.sort_unstable();
            let got: Vec<(u64, u32)> = out.keys.iter().copied().zip(out.queue.iter().copied()).collect();
            assert!(got == expect, "{objects} objects, frame {frame}, {threads} threads");
            assert_eq!(out.from_last_order, frame > 0, "{objects} objects, frame {frame}");
            merged += usize::from(out.sorter.last_path == SortPath::NearlySorted);
        }
        assert!(merged >= 8, "{objects} objects, {threads} threads: {merged} frames merged from last frame's queue");
    }

    #[test]
    fn queues_merged_from_last_are_the_key_object_order_every_frame() {
        // Last frame's queue in one block, in blocks of each size bound and one pair more
        // or less, and in many blocks (equal keys across the cuts).
        for threads in [1, 4] {
            for objects in [100, MIN_BLOCK - 1, MIN_BLOCK + 1, 2 * BLOCK + 1, 5 * MIN_CULL_PART - 100] {
                frames(objects, threads);
            }
        }
    }

    #[test]
    fn a_last_queue_that_is_not_the_previous_culls_is_refused() {
        // A last queue missing one object that stays: the counts fall short of the visible
        // list and the merge says so (the sort then sorts from object order).
        let objects = 3 * MIN_BLOCK;
        let keys: Vec<u64> = (0..objects as u64).map(|i| i % 50).collect();
        let all: Vec<u32> = (0..objects as u32).collect();
        let mut list = VisibleList::default();
        list.recull(objects, MIN_CULL_PART, &all, |i| keys[i as usize]);
        list.recull(objects, MIN_CULL_PART, &all[1..], |i| keys[i as usize]);
        let mut prev: Vec<(u64, u32)> = all.iter().map(|&i| (keys[i as usize], i)).collect();
        prev.sort_unstable();
        let (pk, pq): (Vec<u64>, Vec<u32>) = prev.iter().copied().unzip();
        let (mut q, mut k) = (Vec::new(), Vec::new());
        let mut s = MergeScratch::default();
        assert!(merge_from_last((&pq, &pk), &list, &mut s, (&mut q, &mut k)));
        let short = pq.iter().position(|&i| i == 7).unwrap();
        let (mut pq2, mut pk2) = (pq.clone(), pk.clone());
        pq2.remove(short);
        pk2.remove(short);
        assert!(!merge_from_last((&pq2, &pk2), &list, &mut s, (&mut q, &mut k)));
        assert!(!merge_from_last((&pq, &pk[1..]), &list, &mut s, (&mut q, &mut k)));
    }
}
