//! A cull part's tail (its newly visible objects and those whose key changed, with their
//! keys) and where it falls in last frame's queue.
//!
//! The sort stage merges the objects that stay, in last frame's queue, with the tail
//! sorted (`crate::sort` module `coherent`): last frame's queue is cut into blocks, and
//! each block of the merge takes the tail pairs that fall between its first pair and the
//! next block's. Where the cull knows that queue ([`Splits`]: the first pair of each
//! block), each part puts its tail in block order as it writes it, while the keys are in
//! its core's cache: each merge block then reads its few pairs from every part and sorts
//! them itself, and no worker sorts the whole tail alone between the cull and the merge
//! (on 16 threads that one-thread sort of ~2k pairs was about half the main view's sort,
//! BENCHMARKS.md, runs 104-105).

/// Fewest workers for which the cull cuts its tails by last frame's blocks. Each block
/// then sorts its share by comparing, which costs more in all than one radix sort of the
/// whole tail (the demo at 100k objects, one thread, cut: 0.8 % more instructions over
/// the run, cachegrind; two threads, cut: the sort stage 1.16x, eight paired rounds, 2-core
/// machine, docs/bench/RUNS.md run 121), so it serves where many workers share that work
/// and the one-thread sort it replaces is long on the frame's critical path (about half
/// the main view's sort on 16 threads, runs 104-105). The order written is the same
/// either way.
pub(crate) const SPLIT_MIN_THREADS: usize = 8;

/// Most and fewest pairs of last frame's queue per merge block (about two blocks per
/// worker between them). The order written does not depend on the block size.
pub(crate) const MERGE_BLOCK: usize = 8192;
pub(crate) const MIN_MERGE_BLOCK: usize = 2048;

/// Pairs of last frame's queue per merge block, for a queue of `len` pairs on `threads`
/// workers.
pub(crate) fn merge_block_len(len: usize, threads: usize) -> usize {
    (len / (2 * threads.max(1))).clamp(MIN_MERGE_BLOCK, MERGE_BLOCK)
}

/// Blocks of a merge from a queue of `len` pairs cut every `block` pairs: one at least
/// (an empty last queue is one empty block that takes the whole tail).
pub(crate) fn merge_blocks(len: usize, block: usize) -> usize {
    len.div_ceil(block).max(1)
}

/// Where this cull's tails were cut: last frame's queue in blocks of `block` pairs.
#[derive(Debug, Default)]
pub(crate) struct Splits {
    /// The first (key, object) of each block after the first, ascending.
    firsts: Vec<(u64, u32)>,
    /// Pairs per block, and the queue's length; `None` where the tails were not cut.
    cut: Option<(usize, usize)>,
}

impl Splits {
    /// Cuts by `last` (last frame's queue and keys, sorted by (key, object), where this
    /// list's previous cull is the one it was sorted from) on `threads` workers; none on
    /// fewer than [`SPLIT_MIN_THREADS`] or from an empty queue.
    pub(super) fn set(&mut self, last: Option<(&[u32], &[u64])>, threads: usize) {
        self.clear();
        let Some((queue, keys)) = last.filter(|(q, k)| !q.is_empty() && q.len() == k.len()) else { return };
        if threads < SPLIT_MIN_THREADS {
            return;
        }
        let block = merge_block_len(queue.len(), threads);
        let blocks = merge_blocks(queue.len(), block);
        self.firsts.extend((1..blocks).map(|j| (keys[j * block], queue[j * block])));
        self.cut = Some((block, queue.len()));
    }

    /// No cut (a view culled on the GPU).
    pub(super) fn clear(&mut self) {
        self.firsts.clear();
        self.cut = None;
    }

    /// Pairs per block and the queue's length, where the tails were cut.
    pub(crate) fn cut(&self) -> Option<(usize, usize)> {
        self.cut
    }

    /// The block the tail pair (`key`, `object`) falls in: how many blocks' first pairs
    /// come before it (no tail pair equals one: an object in last frame's queue with the
    /// same key stays).
    #[inline]
    fn block_of(&self, key: u64, object: u32) -> usize {
        self.firsts.partition_point(|&f| f < (key, object))
    }
}

/// Most tail pairs a merge block may have to sort (bounded from above by the sum over the
/// parts of each part's largest block): more, and the merge sorts the whole tail first
/// (a radix sort, in parallel where it is long), so that tail pairs that crowd into few
/// blocks (many objects given one new material, say) never leave one worker sorting
/// thousands by comparing. The demo's frames stay far below it (its tails spread over
/// the blocks by their state fields).
pub(crate) const BLOCK_TAIL_MAX: usize = 2048;

/// Tail pairs a part cuts by block beyond a quarter of its visible objects (a few
/// objects that change in a part that sees few is no camera cut).
const CUT_SLACK: usize = 64;

/// A cull part's tail: objects and keys, in block order where the cull cut it.
#[derive(Debug, Default)]
pub(super) struct Tail {
    objects: Vec<u32>,
    keys: Vec<u64>,
    /// Where each block's pairs end, where the tail was cut (else empty).
    ends: Vec<u32>,
    /// Each pair's block, in `fresh`-then-`moved` order (scratch).
    blocks: Vec<u32>,
    /// Whether the tail is in block order.
    cut: bool,
    /// The most pairs of any block, where it is.
    most: usize,
}

impl Tail {
    /// Empties the tail (a view culled on the GPU).
    pub(super) fn clear(&mut self) {
        self.objects.clear();
        self.keys.clear();
        self.ends.clear();
        self.cut = false;
        self.most = 0;
    }

    /// The tail of `fresh` then `moved` with `key(i)` as each object's key: in block
    /// order where `splits` cut and the tail is at most [`CUT_SLACK`] pairs more than a
    /// quarter of the part's `visible` objects (a larger one, a camera cut's, is sorted
    /// whole by the merge), else in that order.
    pub(super) fn fill(
        &mut self,
        (fresh, moved): (&[u32], &[u32]),
        visible: usize,
        key: impl Fn(u32) -> u64,
        splits: &Splits,
    ) {
        let n = fresh.len() + moved.len();
        let tail = || fresh.iter().chain(moved).copied();
        self.objects.clear();
        self.keys.clear();
        self.ends.clear();
        self.cut = splits.cut.is_some() && n <= visible / 4 + CUT_SLACK;
        self.most = 0;
        if !self.cut {
            self.objects.extend_from_slice(fresh);
            self.objects.extend_from_slice(moved);
            self.keys.extend(self.objects.iter().map(|&i| key(i)));
            return;
        }
        // A counting sort by block: each pair's block, the blocks' starts, then each pair
        // written at its block's next place.
        self.ends.resize(splits.firsts.len() + 1, 0);
        self.blocks.clear();
        for i in tail() {
            let b = splits.block_of(key(i), i);
            self.blocks.push(b as u32);
            self.ends[b] += 1;
        }
        self.most = self.ends.iter().max().map_or(0, |&m| m as usize);
        let mut at = 0;
        for e in &mut self.ends {
            (*e, at) = (at, at + *e);
        }
        self.objects.resize(n, 0);
        self.keys.resize(n, 0);
        for (i, &b) in tail().zip(&self.blocks) {
            let w = &mut self.ends[b as usize];
            (self.objects[*w as usize], self.keys[*w as usize]) = (i, key(i));
            *w += 1;
        }
    }

    /// Pairs in the tail.
    pub(super) fn len(&self) -> usize {
        self.objects.len()
    }

    /// The tail's objects and their keys.
    pub(super) fn pairs(&self) -> (&[u32], &[u64]) {
        (&self.objects, &self.keys)
    }

    /// Whether the tail is in block order ([`Tail::block`] gives each block's pairs).
    pub(super) fn is_cut(&self) -> bool {
        self.cut
    }

    /// The most pairs of any block of a tail in block order.
    pub(super) fn most(&self) -> usize {
        self.most
    }

    /// Block `j`'s pairs (objects and keys) of a tail in block order.
    pub(super) fn block(&self, j: usize) -> (&[u32], &[u64]) {
        let lo = if j == 0 { 0 } else { self.ends[j - 1] as usize };
        let hi = self.ends[j] as usize;
        (&self.objects[lo..hi], &self.keys[lo..hi])
    }
}
