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
//! its core's cache. Last frame's queue is cut into blocks, written in one chained fill
//! (`kernels::par::fill_chained`): each block marks its objects that stay (a bit per
//! object looked up, once), takes room for them and for the tail pairs between its first
//! pair and the next block's first pair right after the blocks before it, and merges the
//! two straight into that room. Every queued pair is read once and written once, in one
//! fork: no input array, no survey of it, no counting pass, no scratch copy of the merge.
//!
//! Which tail pairs fall in a block: on eight workers or more the cull knew last frame's
//! queue and put each part's tail in the order of its blocks (`cull` module `tail`), so
//! each block gathers its few pairs from the parts and sorts them itself, in the fork.
//! Otherwise (fewer workers, or a part whose tail is large: a camera cut), the parts'
//! tails are copied out first (on this worker alone below [`SERIAL_TAIL`] pairs) and
//! sorted by (key, object), and each block finds its slice of them (a partition point).
//! The first way takes the one-thread sort of the whole tail (~2k pairs, about half the
//! main view's sort on 16 threads: BENCHMARKS.md, runs 104-105) off the frame's critical
//! path; on one thread the whole tail's radix sort costs less than each block's.
//!
//! A stable sort orders equal keys by input position, which here would depend on last
//! frame, so the queue orders equal keys by object index instead (the tail's sorter with
//! `RadixSorter::ties_by_value`, a block's tail sorted as (key, object), the merge
//! comparing (key, object)): the queue is the one unique order by (key, object index), the
//! order of a stable sort in object order, and the command stream is the same whatever the
//! previous frames were and however the tail was cut. Last frame's queue is in that order,
//! so a block's staying pairs lie between its first pair and the next block's, no tail
//! pair equals one of them (an object is in one or the other), and the segments put side
//! by side are the whole order.

use std::sync::atomic::{AtomicBool, Ordering};

use switchyard_kernels::par::{self, Take};
use switchyard_kernels::sort::RadixSorter;

use crate::cull::{merge_block_len, merge_blocks, VisibleList};
use crate::profile;

/// Scratch of [`merge_from_last`].
#[derive(Debug, Default)]
pub(crate) struct MergeScratch {
    tail_q: Vec<u32>,
    tail_k: Vec<u64>,
    sorter: RadixSorter,
    /// One per block of last frame's queue: where the cull cut the tails by block, the
    /// block's tail pairs, gathered from the parts and sorted there.
    pieces: Vec<BlockTail>,
    /// Whether the last merge took each block's tail pairs from the cull's cut tails.
    pub(crate) by_block: bool,
}

/// A merge block's tail pairs: gathered and sorted as (key, object), then as keys and
/// objects apart, as the merge reads them.
#[derive(Debug, Default)]
struct BlockTail {
    /// (key, object) as one 96-bit number: one compare, no branch on equal keys.
    pairs: Vec<u128>,
    keys: Vec<u64>,
    objects: Vec<u32>,
}

/// A (key, object) pair.
type Pair = (u64, u32);

impl BlockTail {
    /// Block `j`'s pairs of every part's cut tail, sorted; `false` if one falls outside
    /// `bounds`, the block's first pair and the next block's (where there are such
    /// blocks). Kept out of the merge's closure, whose loop is sensitive to the code
    /// around it (RUNS.md run 121).
    #[inline(never)]
    fn gather(&mut self, visible: &VisibleList, j: usize, (low, high): (Option<Pair>, Option<Pair>)) -> bool {
        let pairs = &mut self.pairs;
        pairs.clear();
        for p in 0..visible.parts() {
            let (pq, pk) = visible.tail_block(p, j);
            pairs.extend(pk.iter().zip(pq).map(|(&k, &i)| u128::from(k) << 32 | u128::from(i)));
        }
        pairs.sort_unstable();
        let pair = |t: u128| ((t >> 32) as u64, t as u32);
        self.keys.clear();
        self.objects.clear();
        self.keys.extend(pairs.iter().map(|&t| pair(t).0));
        self.objects.extend(pairs.iter().map(|&t| pair(t).1));
        // Sorted: its ends tell whether every pair lies within the bounds.
        let above = |b: Option<Pair>| pairs.first().zip(b).is_none_or(|(&t, b)| pair(t) > b);
        let below = |b: Option<Pair>| pairs.last().zip(b).is_none_or(|(&t, b)| pair(t) < b);
        above(low) && below(high)
    }
}

/// Tails shorter than this are copied on the sorting worker alone: a fork over every cull
/// part (62 at 1M objects) for a few thousand pairs. Gathering keys by object index, such
/// a tail took the same time either way on 16 threads (RUNS.md run 104); now it copies.
const SERIAL_TAIL: usize = 8192;

/// Writes into `out` the queue of `visible` sorted by (key, object), from last frame's
/// queue `prev` (objects and keys, in that order; the previous cull's objects) and
/// `visible`'s tail. Returns `false`, with `out` of no use, when the pieces do not add up
/// to `visible.len()` or a block's tail pairs fall outside it, which only a `prev` whose
/// set is not the previous cull's (or not the queue its tails were cut by) would cause.
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
    let len = merge_block_len(prev_queue.len(), rayon::current_num_threads());
    let blocks = merge_blocks(prev_queue.len(), len);
    // The cull put each part's tail in the order of these blocks: each block gathers and
    // sorts its own tail pairs in the merge's fork. Else the whole tail is sorted first.
    let by_block = visible.tails_cut() == Some((len, prev_queue.len()));
    s.by_block = by_block;
    if !by_block {
        sort_tail(visible, s);
    }
    profile::zone!("merge-last");
    let block = |j: usize| (j * len).min(prev_queue.len())..((j + 1) * len).min(prev_queue.len());
    let first = |j: usize| (prev_keys[j * len], prev_queue[j * len]);
    let (tk, tq) = (&s.tail_k[..], &s.tail_q[..]);
    // Tail pairs before block `j`'s first pair (all of them after the last block), in the
    // whole tail sorted.
    let before = |j: usize| {
        if j == 0 {
            return 0;
        } else if j == blocks {
            return tq.len();
        }
        let at = first(j);
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
    let room = prev_queue.len() + visible.tail_len();
    par::set_len(q, room);
    par::set_len(k, room);
    s.pieces.resize_with(blocks, BlockTail::default);
    let outside = AtomicBool::new(false);
    type Out<'a> = (&'a mut [u32], &'a mut [u64]);
    // Each block marks its staying pairs (a bit each), takes room for them and its tail
    // pairs right after the blocks before it, and merges the two into it: one fork, each
    // pair's stay bit looked up once.
    let piece = |j, take: Take<'_, Out<'_>>, tail: &mut BlockTail| {
        let b = block(j);
        let (bq, bk) = (&prev_queue[b.clone()], &prev_keys[b]);
        let mut marks = [0u64; crate::cull::MERGE_BLOCK / 64];
        for (m, chunk) in marks.iter_mut().zip(bq.chunks(64)) {
            *m = chunk.iter().enumerate().fold(0, |m, (x, &i)| m | (u64::from(visible.stays(i)) << x));
        }
        let stays: usize = marks.iter().map(|m| m.count_ones() as usize).sum();
        if by_block {
            let bounds = ((j > 0).then(|| first(j)), (j + 1 < blocks).then(|| first(j + 1)));
            if !tail.gather(visible, j, bounds) {
                outside.store(true, Ordering::Relaxed);
            }
            let (sq, sk) = (&tail.objects[..], &tail.keys[..]);
            merge_block((bq, bk), &marks, (sq, &sk[..sq.len()]), take.take(stays + sq.len()));
        } else {
            let (lo, hi) = (before(j), before(j + 1));
            merge_block((bq, bk), &marks, (&tq[lo..hi], &tk[lo..hi]), take.take(stays + hi - lo));
        }
    };
    let written = par::fill_chained((&mut q[..], &mut k[..]), &mut s.pieces[..], &piece);
    if written != n || outside.into_inner() {
        return false;
    }
    q.truncate(n);
    k.truncate(n);
    true
}

/// The whole tail of `visible` into `s.tail_q`/`s.tail_k`, sorted by (key, object).
fn sort_tail(visible: &VisibleList, s: &mut MergeScratch) {
    profile::zone!("sort-tail");
    par::set_len(&mut s.tail_q, visible.tail_len());
    par::set_len(&mut s.tail_k, visible.tail_len());
    let tail = (&mut s.tail_q[..], &mut s.tail_k[..]);
    let gather = |p, (q, k): (&mut [u32], &mut [u64])| {
        q.copy_from_slice(visible.tail(p));
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

/// Merges into `out` (exactly as long as both) the pairs of a block of last frame's
/// queue (`bq`, `bk`) whose bits `marks` sets (those that stay) with the tail pairs
/// (`sq`, `sk`) that fall in it, sorted by (key, object).
#[inline(always)]
fn merge_block(
    (bq, bk): (&[u32], &[u64]),
    marks: &[u64],
    (sq, sk): (&[u32], &[u64]),
    (oq, ok): (&mut [u32], &mut [u64]),
) {
    let (mut w, mut t) = (0, 0);
    for (word, &m) in marks.iter().enumerate() {
        let mut m = m;
        while m != 0 {
            let x = word * 64 + m.trailing_zeros() as usize;
            m &= m - 1;
            let (i, key) = (bq[x], bk[x]);
            // Most staying pairs have no tail pair before them: one compare, and the
            // copying out of line (inlined in the cut tails' copy of this loop, the
            // compiler set up the copying loop before every compare: 4.9 % more
            // instructions over the demo's run, cachegrind, RUNS.md run 121).
            if t < sq.len() && (sk[t], sq[t]) < (key, i) {
                (t, w) = tail_before((sq, sk), t, (key, i), (oq, ok), w);
            }
            (oq[w], ok[w]) = (i, key);
            w += 1;
        }
    }
    oq[w..].copy_from_slice(&sq[t..]);
    ok[w..].copy_from_slice(&sk[t..]);
}

/// Copies the tail pairs from `t` on that come before `at` to `out` from `w` on; returns
/// the next tail pair and the next place.
#[inline(never)]
fn tail_before(
    (sq, sk): (&[u32], &[u64]),
    mut t: usize,
    at: (u64, u32),
    (oq, ok): (&mut [u32], &mut [u64]),
    mut w: usize,
) -> (usize, usize) {
    while t < sq.len() && (sk[t], sq[t]) < at {
        (oq[w], ok[w]) = (sq[t], sk[t]);
        (w, t) = (w + 1, t + 1);
    }
    (t, w)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use switchyard_kernels::sort::SortPath;

    use super::super::{sort_view, SortCtx, SortedQueue};
    use super::{merge_from_last, MergeScratch};
    use crate::cull::{VisibleList, BLOCK_TAIL_MAX, MIN_CULL_PART, SPLIT_MIN_THREADS};
    use crate::cull::{MERGE_BLOCK as BLOCK, MIN_MERGE_BLOCK as MIN_BLOCK};
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
        let (mut merged, mut by_block) = (0, 0);
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
            // The cull cuts its tails by the blocks of the queue it is given, as the job does.
            pool.install(|| {
                let last = out.last_of(list.generation);
                list.recull_after(objects, MIN_CULL_PART, &visible, |i| keys[i as usize], last);
                sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out)
            });
            let mut expect: Vec<(u64, u32)> = visible.iter().map(|&i| (keys[i as usize], i)).collect();
            expect.sort_unstable();
            let got: Vec<(u64, u32)> = out.keys.iter().copied().zip(out.queue.iter().copied()).collect();
            assert!(got == expect, "{objects} objects, frame {frame}, {threads} threads");
            assert_eq!(out.from_last_order, frame > 0, "{objects} objects, frame {frame}");
            merged += usize::from(out.sorter.last_path == SortPath::NearlySorted);
            by_block += usize::from(out.from_last_order && out.merge.by_block);
        }
        assert!(merged >= 8, "{objects} objects, {threads} threads: {merged} frames merged from last frame's queue");
        // Every frame merged but the one after the empty frame (no blocks to cut by), on
        // pools large enough to cut; none on smaller ones.
        let cut = if threads >= SPLIT_MIN_THREADS { merged - 1 } else { 0 };
        assert_eq!(by_block, cut, "{objects} objects, {threads} threads: merges from cut tails");
    }

    #[test]
    fn queues_merged_from_last_are_the_key_object_order_every_frame() {
        // Last frame's queue in one block, in blocks of each size bound and one pair more
        // or less, and in many blocks (equal keys across the cuts).
        for threads in [1, 3, 4, 8, 16] {
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

    #[test]
    fn tails_cut_by_another_queue_are_refused() {
        // Cut by the blocks of one queue, merged from another of the same length whose
        // blocks the tail pairs do not fall in: the merge says so instead of writing a
        // queue out of order.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(SPLIT_MIN_THREADS).build().unwrap();
        let objects = 4 * MIN_BLOCK;
        let mut keys: Vec<u64> = (0..objects as u64).map(|i| i % 50).collect();
        let all: Vec<u32> = (0..objects as u32).collect();
        let (mut list, mut out) = (VisibleList::default(), SortedQueue::default());
        pool.install(|| {
            list.recull(objects, MIN_CULL_PART, &all, |i| keys[i as usize]);
            sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out);
            // A few objects move to the middle of the queue, past its first block.
            (0..objects).step_by(97).for_each(|i| keys[i] = 25);
            list.recull_after(objects, MIN_CULL_PART, &all, |i| keys[i as usize], out.last_of(list.generation));
            assert!(list.tails_cut().is_some());
            let (mut q, mut k) = (Vec::new(), Vec::new());
            let mut s = MergeScratch::default();
            assert!(merge_from_last((&out.queue, &out.keys), &list, &mut s, (&mut q, &mut k)));
            assert!(s.by_block);
            let mut expect: Vec<(u64, u32)> = all.iter().map(|&i| (keys[i as usize], i)).collect();
            expect.sort_unstable();
            assert!(k.iter().copied().zip(q.iter().copied()).eq(expect.iter().copied()));
            // The same objects in the same order, their keys all raised: other blocks.
            let raised: Vec<u64> = out.keys.iter().map(|k| k + 10_000).collect();
            assert!(!merge_from_last((&out.queue, &raised), &list, &mut s, (&mut q, &mut k)));
            // Every key changes (a camera cut): the parts keep their tails whole and the
            // merge sorts them first.
            sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out);
            keys.iter_mut().for_each(|k| *k = 49 - *k);
            list.recull_after(objects, MIN_CULL_PART, &all, |i| keys[i as usize], out.last_of(list.generation));
            assert_eq!(list.tails_cut(), None);
            sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out);
            assert!(out.from_last_order && !out.merge.by_block);
            let mut expect: Vec<(u64, u32)> = all.iter().map(|&i| (keys[i as usize], i)).collect();
            expect.sort_unstable();
            assert!(out.keys.iter().copied().zip(out.queue.iter().copied()).eq(expect.iter().copied()));
        });
    }

    #[test]
    fn tails_crowding_into_one_block_are_sorted_whole() {
        // Thousands of objects given one new key (one new material, say) all fall in one
        // block: the cull still cuts each part's tail, but the merge sorts the whole tail
        // first rather than leave one block to sort them by comparing.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(SPLIT_MIN_THREADS).build().unwrap();
        let objects = 10 * MIN_CULL_PART;
        let mut keys: Vec<u64> = (0..objects as u64).map(|i| (i * 7919) % 1000).collect();
        let all: Vec<u32> = (0..objects as u32).collect();
        let (mut list, mut out) = (VisibleList::default(), SortedQueue::default());
        pool.install(|| {
            list.recull(objects, MIN_CULL_PART, &all, |i| keys[i as usize]);
            sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out);
            // (Objects that had the key already stay; a key's run may straddle two blocks.)
            for (crowd, key, cut) in [(100, 500, true), (3 * BLOCK_TAIL_MAX, 700, false)] {
                (0..objects).step_by(objects / crowd).take(crowd).for_each(|i| keys[i] = key);
                list.recull_after(objects, MIN_CULL_PART, &all, |i| keys[i as usize], out.last_of(list.generation));
                assert_eq!(list.tails_cut().is_some(), cut, "{crowd} objects given one key");
                sort_view(&SortCtx { label: "test" }, &VIEW, &list, &mut out);
                assert!(out.from_last_order);
                assert_eq!(out.merge.by_block, cut);
                let mut expect: Vec<(u64, u32)> = all.iter().map(|&i| (keys[i as usize], i)).collect();
                expect.sort_unstable();
                assert!(out.keys.iter().copied().zip(out.queue.iter().copied()).eq(expect.iter().copied()));
            }
        });
    }
}
