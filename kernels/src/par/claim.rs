//! Pieces handed out costliest first: [`ClaimOrder`] and [`fill_blocks_in_order`].
//!
//! Workers claim a fork's pieces from one counter, so the fork ends when its last claimed
//! piece does. Where the pieces' costs differ by tens of times (a cull part near the
//! camera tests and keys every object, one behind it skips its blocks: 4 to 245 µs per
//! part of 16k objects in one view of the demo at 1M objects, one thread; RUNS.md run
//! 112), a costly piece claimed last keeps the fork running while every other worker
//! waits. Handing the pieces out in descending order of what they cost the last time
//! (longest first) leaves the cheap ones for the end. Which worker runs a piece never
//! changes what it writes: the order changes the timing only.

use super::{for_each_index, SplitAt};

/// A permutation of a fork's pieces, costliest first.
#[derive(Clone, Debug, Default)]
pub struct ClaimOrder {
    order: Vec<u32>,
    /// (cost, piece) while sorting, kept for its memory.
    scratch: Vec<(u64, u32)>,
}

impl ClaimOrder {
    /// Orders the pieces whose costs `costs` gives, in piece order, by descending cost
    /// (equal costs by index, so a first fork with no costs yet runs in index order).
    /// Reuses its memory: a fork has tens to hundreds of pieces, a few microseconds.
    pub fn set_by_cost(&mut self, costs: impl IntoIterator<Item = u64>) {
        self.scratch.clear();
        self.scratch.extend(costs.into_iter().zip(0u32..));
        self.scratch.sort_unstable_by_key(|&(c, i)| (std::cmp::Reverse(c), i));
        self.order.clear();
        self.order.extend(self.scratch.iter().map(|&(_, i)| i));
    }

    /// How many pieces it orders.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether it orders no piece.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The pieces in the order they are handed out.
    pub fn as_slice(&self) -> &[u32] {
        &self.order
    }
}

/// As [`super::fill_blocks`]: calls `fill(i, out[i * block..(i + 1) * block])` (the last
/// block shorter) for each block of `out`, in parallel, handing the blocks out in `order`.
/// `order` must order as many pieces as `out` has blocks (checked: else it panics; it is
/// a permutation by construction, so no two calls get the same block).
pub fn fill_blocks_in_order<S: SplitAt>(block: usize, order: &ClaimOrder, out: S, fill: &(dyn Fn(usize, S) + Sync)) {
    let (raw, len) = out.into_raw();
    let block = block.max(1);
    let n = len.div_ceil(block);
    assert_eq!(order.len(), n, "a claim order for {} pieces given to a fork of {n}", order.len());
    for_each_index(n, &|k| {
        let i = order.order[k] as usize;
        let (a, b) = (i * block, ((i + 1) * block).min(len));
        // SAFETY: `order` is a permutation of `0..n` (`set_by_cost` makes nothing else),
        // so each block is handed out once; blocks do not overlap and lie within `out`,
        // which was borrowed for longer than this call.
        fill(i, unsafe { S::range(raw, a, b) })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_a_permutation_costliest_first_ties_by_index() {
        let mut o = ClaimOrder::default();
        o.set_by_cost([5u64, 9, 0, 9, 1]);
        assert_eq!(o.as_slice(), [1, 3, 0, 4, 2]);
        o.set_by_cost([0u64; 4]);
        assert_eq!(o.as_slice(), [0, 1, 2, 3], "no costs yet: index order");
        o.set_by_cost([]);
        assert!(o.is_empty());
    }

    #[test]
    fn every_block_is_filled_once_whatever_the_order() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        for (len, block) in [(0, 3), (1, 3), (10, 3), (12, 3), (1000, 7)] {
            let n = usize::div_ceil(len, block);
            let mut o = ClaimOrder::default();
            o.set_by_cost((0..n as u64).map(|i| (i * 7919) % 13));
            let mut out = vec![usize::MAX; len];
            pool.install(|| {
                fill_blocks_in_order(block, &o, &mut out[..], &|i, s: &mut [usize]| {
                    assert!(s.len() == block || (i + 1) * block >= len);
                    s.iter_mut().enumerate().for_each(|(j, x)| *x = i * block + j);
                })
            });
            assert!(out.iter().enumerate().all(|(j, &x)| x == j), "{len} in blocks of {block}");
        }
    }

    #[test]
    #[should_panic(expected = "a claim order for 2 pieces given to a fork of 3")]
    fn an_order_of_another_length_panics() {
        let mut o = ClaimOrder::default();
        o.set_by_cost([1u64, 2]);
        fill_blocks_in_order(1, &o, &mut [0u8; 3][..], &|_, _| {});
    }
}
