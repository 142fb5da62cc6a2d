//! Count buffers: a GPU-culled view's multi-draws skip their empty records.
//!
//! Every bucket of a GPU-culled view is a record of the view's indirect buffer, drawn
//! whether the cull left anything in it or not: at street level in the city most of the
//! 16k buckets of every view are empty, and the GPU's command processor still walks each
//! one. Where the backend draws with a count buffer ([`Caps::indirect_count`]) and the
//! renderer asks for it (`RendererConfig::indirect_count`), the cull compacts, per
//! multi-draw, the non-empty records into a second region of the indirect buffer, in
//! bucket order, and writes how many there are; the multi-draw reads that count
//! (`MultiDrawIndexedIndirectCount`). The recorded commands still depend only on the
//! buckets (and the chunk cuts), so the command stream is the same for any thread count;
//! the draws the GPU runs are the non-empty ones of the same records in the same order,
//! so the images are the same.
//!
//! A view's indirect buffer with `h` phases (two for an occlusion-split view) of `n`
//! buckets in `g` multi-draws: the records (`h·n`), the compacted records (`h·n`, each
//! phase's at the same offsets plus `h·n`), then the counts (`h·g` u32s). Its list buffer
//! holds, after the bucket starts and candidates, each bucket's multi-draw and each
//! multi-draw's first bucket (then `n`): what the recorder cut ([`draw_groups`]), uploaded
//! with the lists whenever it changes.
//!
//! [`Caps::indirect_count`]: switchyard_backend::Caps::indirect_count
//! [`draw_groups`]: crate::record::draw_groups

use switchyard_backend::DRAW_INDEXED_INDIRECT_SIZE;

/// Bytes of a view's indirect buffer per bucket and phase where it draws with count
/// buffers: its record, the record's compacted copy, and at most one count.
pub(crate) const COUNTED_ARGS_BYTES: u64 = 2 * DRAW_INDEXED_INDIRECT_SIZE + 4;

/// Where one phase's compacted records and counts sit in a view's indirect buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CountAt {
    /// The record index of the phase's first compacted record.
    pub(crate) compact: usize,
    /// The u32 index of the phase's first count.
    pub(crate) counts: usize,
}

impl CountAt {
    /// Phase `half` (0, or 1 for the second phase of an occlusion-split view) of a view
    /// with `buckets` buckets in `groups` multi-draws, drawn in `halves` phases.
    pub(crate) fn new(buckets: usize, groups: usize, halves: usize, half: usize) -> Self {
        let words = (DRAW_INDEXED_INDIRECT_SIZE / 4) as usize;
        Self { compact: (halves + half) * buckets, counts: 2 * halves * buckets * words + half * groups }
    }

    /// The second phase's place, this being the first's.
    pub(crate) fn second(self, buckets: usize, groups: usize) -> Self {
        Self { compact: self.compact + buckets, counts: self.counts + groups }
    }
}

/// The number of multi-draws in a list of draw groups ([`crate::record::draw_groups`]:
/// `buckets` groups, then the groups' first buckets and `buckets`).
pub(crate) fn group_count(groups: &[u32], buckets: usize) -> usize {
    groups.len().saturating_sub(buckets + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_and_counts_do_not_overlap_and_fit_the_buffer() {
        for (buckets, groups) in [(1, 1), (7, 3), (256, 256), (1000, 1)] {
            for halves in [1, 2] {
                let phases: Vec<CountAt> = (0..halves).map(|h| CountAt::new(buckets, groups, halves, h)).collect();
                if halves == 2 {
                    assert_eq!(phases[1], phases[0].second(buckets, groups));
                }
                // Records [0, h·n), compacted [h·n, 2h·n), counts after.
                for (h, p) in phases.iter().enumerate() {
                    assert_eq!(p.compact, halves * buckets + h * buckets);
                    assert!(p.counts * 4 >= 2 * halves * buckets * 20);
                    assert!((p.counts + groups) * 4 <= halves * buckets * COUNTED_ARGS_BYTES as usize);
                }
            }
        }
    }
}
