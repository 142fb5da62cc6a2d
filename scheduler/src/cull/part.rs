//! One culling part's output: its visible objects, their keys, and how they compare with
//! the part's previous cull.

use super::MaterialSet;

/// One culling part's output.
#[derive(Debug, Default)]
pub(super) struct CullPart {
    pub(super) visible: Vec<u32>,
    /// The part's objects in the frustum before the queue's and the passes' filters, kept
    /// for the later views of the same camera ([`super::CullFrom::Keep`]).
    pub(super) raw: Vec<u32>,
    /// The visible objects the previous cull did not see, ascending.
    pub(super) fresh: Vec<u32>,
    /// The visible objects the previous cull saw with another key, ascending.
    pub(super) moved: Vec<u32>,
    /// The keys of `fresh`, then of `moved`: the sort's tail, read here while the keys
    /// are in this core's cache instead of by object index on the sorting worker.
    pub(super) tail_keys: Vec<u64>,
    /// The keys of `visible`, in its order.
    pub(super) keys: Vec<u64>,
    /// The previous cull's `visible` and `keys` of this part: this cull's keys are
    /// compared with them in one pass over both lists, not by object index in a
    /// view-wide array of one key per object, whose lines were read one per visible
    /// object (in a one-thread profile at 1M objects, 35 % of the key writing's samples
    /// sat on that load).
    pub(super) last: Vec<u32>,
    pub(super) last_keys: Vec<u64>,
    /// The keys of `moved` while the part sorts its objects out.
    pub(super) moved_keys: Vec<u64>,
    pub(super) used: MaterialSet,
    /// Whether this part's visible objects or any of their keys differ from the previous
    /// cull's.
    pub(super) changed: bool,
    /// What the part took in its last cull, ns: the next cull hands the costliest parts
    /// out first ([`switchyard_kernels::par::ClaimOrder`]).
    pub(super) ns: u64,
}

impl CullPart {
    /// Starts the part's next cull: this cull's visible objects and keys become the
    /// previous ones.
    pub(super) fn turn(&mut self) {
        std::mem::swap(&mut self.visible, &mut self.last);
        std::mem::swap(&mut self.keys, &mut self.last_keys);
        self.visible.clear();
        self.keys.clear();
    }

    /// Sorts the visible objects out by the previous cull: those it did not see
    /// (`fresh`), those it saw with another key (`moved`), and the keys of both
    /// (`tail_keys`). `comparable`: the previous cull had this part's range, so `last`
    /// and `last_keys` are what it saw there; else only `was` tells what it saw (bit
    /// `i - base` of its words), and each object it saw counts as moved (its key is not
    /// at hand; the sort's result is the same either way).
    pub(super) fn sort_out(&mut self, comparable: bool, (was, base): (&[u64], usize)) {
        let Self { visible, keys, last, last_keys, fresh, moved, tail_keys, moved_keys, .. } = self;
        fresh.clear();
        moved.clear();
        tail_keys.clear();
        moved_keys.clear();
        if comparable {
            let mut j = 0;
            for (&i, &k) in visible.iter().zip(keys.iter()) {
                while last.get(j).is_some_and(|&l| l < i) {
                    j += 1;
                }
                if last.get(j) == Some(&i) {
                    if last_keys[j] != k {
                        moved.push(i);
                        moved_keys.push(k);
                    }
                    j += 1;
                } else {
                    fresh.push(i);
                    tail_keys.push(k);
                }
            }
        } else {
            for (&i, &k) in visible.iter().zip(keys.iter()) {
                let at = i as usize - base;
                if was.get(at / 64).is_some_and(|w| w & (1 << (at % 64)) != 0) {
                    moved.push(i);
                    moved_keys.push(k);
                } else {
                    fresh.push(i);
                    tail_keys.push(k);
                }
            }
        }
        tail_keys.extend_from_slice(moved_keys);
    }
}
