//! The first level of culling: conservative bounds per block of objects.

use glam::Vec4;

use crate::par::Scaled;

use super::{CullInput, Frustum, CULL_BLOCK, CULL_FINE};

/// Fine blocks per block.
const FINES: usize = CULL_BLOCK / CULL_FINE;

/// Conservative bounds of every run of [`CULL_BLOCK`] consecutive objects: the first level
/// of culling. A block wholly outside one plane is skipped without reading its objects; a
/// block wholly inside every plane is taken without testing them. Both decisions keep a
/// margin far above `f32` rounding, so the visible set is exactly the one the per-object
/// test gives (the reference pipeline tests every object and must agree).
///
/// A block partly in the frustum is looked at again in [`CULL_FINE`] objects at a time
/// (the second level): the bounds of each run of that many objects.
///
/// Block bounds are refreshed lazily: [`CullBlocks::mark`] when an object's bounds change,
/// [`CullBlocks::refresh`] before culling. Stale bounds only ever cost speed if they are
/// too large (a shrunk block); the scene marks every other change.
#[derive(Clone, Debug, Default)]
pub struct CullBlocks {
    /// Per block: min xyz, max xyz (f64; NaN where an object's bounds are not finite).
    bounds: Vec<[f64; 6]>,
    /// The same per fine block, `CULL_BLOCK / CULL_FINE` per block (those past the last
    /// object: NaN).
    fine: Vec<[f64; 6]>,
    /// Per block: whether its fine blocks are much tighter than it (along some axis their
    /// mean span is under half the block's), so a block partly in a frustum is worth
    /// looking at again in them; objects in no spatial order give fine blocks as wide as
    /// their block, whose tests would only add to the per-object ones.
    split: Vec<bool>,
    /// One bit per block whose bounds must be recomputed.
    dirty: Vec<u64>,
    /// Object count at the last refresh; a mismatch disables the hierarchy.
    objects: usize,
}

/// Where a block lies relative to a frustum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Outside,
    Inside,
    Partial,
}

impl CullBlocks {
    /// Bounds for `objects`, all computed now.
    pub fn build(objects: &CullInput<'_>) -> Self {
        let mut b = Self::default();
        b.mark_range(0, objects.len());
        b.refresh(objects);
        b
    }

    /// Object `i`'s bounds changed (or it was added or moved to index `i`).
    #[inline]
    pub fn mark(&mut self, i: usize) {
        let b = i / CULL_BLOCK;
        if self.dirty.len() <= b / 64 {
            self.dirty.resize(b / 64 + 1, 0);
        }
        self.dirty[b / 64] |= 1 << (b % 64);
    }

    /// Objects `start..end` changed.
    pub fn mark_range(&mut self, start: usize, end: usize) {
        let mut i = start;
        while i < end {
            self.mark(i);
            i = (i / CULL_BLOCK + 1) * CULL_BLOCK;
        }
    }

    /// Words of 64 blocks with a block to recompute: [`CullBlocks::refresh`] runs on the
    /// calling thread, touching no pool, when this is at most 1.
    pub fn dirty_words(&self) -> usize {
        self.dirty.iter().filter(|&&w| w != 0).count()
    }

    /// Recomputes the marked blocks' bounds (in parallel on the current rayon pool where
    /// more than one word of 64 blocks changed, else on the calling thread) and drops
    /// blocks past the end of `objects`.
    pub fn refresh(&mut self, objects: &CullInput<'_>) {
        let n = objects.len();
        let blocks = n.div_ceil(CULL_BLOCK);
        self.bounds.resize(blocks, [f64::NAN; 6]);
        self.fine.resize(blocks * FINES, [f64::NAN; 6]);
        self.split.resize(blocks, false);
        self.objects = n;
        let dirty = &self.dirty;
        // 64 blocks (one dirty word) per task. A block's bounds are its fine blocks'
        // union (NaN where one is NaN), the same as over its objects.
        type Out<'a> = (&'a mut [[f64; 6]], Scaled<&'a mut [[f64; 6]]>, &'a mut [bool]);
        let fill = |w: usize, (chunk, fine, split): Out<'_>| {
            let word = dirty.get(w).copied().unwrap_or(0);
            if word == 0 {
                return;
            }
            let blocks = chunk.iter_mut().zip(fine.0.chunks_exact_mut(FINES)).zip(split);
            for (i, ((out, fine), split)) in blocks.enumerate() {
                let b = w * 64 + i;
                if word & (1 << i) != 0 {
                    for (k, f) in fine.iter_mut().enumerate() {
                        let start = b * CULL_BLOCK + k * CULL_FINE;
                        *f = if start < n {
                            block_bounds(objects, start..(start + CULL_FINE).min(n))
                        } else {
                            [f64::NAN; 6]
                        };
                    }
                    let fine = &fine[..FINES.min((n - b * CULL_BLOCK).div_ceil(CULL_FINE))];
                    *out = union(fine);
                    let span = |b: &[f64; 6], k: usize| b[3 + k] - b[k];
                    let mean = |k: usize| fine.iter().map(|f| span(f, k)).sum::<f64>() / fine.len() as f64;
                    *split = (0..3).any(|k| mean(k) < 0.5 * span(out, k));
                }
            }
        };
        match self.dirty_words() {
            0 => return,
            1 => {
                let w = dirty.iter().position(|&w| w != 0).expect("one word is dirty");
                let end = ((w + 1) * 64).min(blocks);
                if w * 64 < end {
                    let fine = Scaled(&mut self.fine[w * 64 * FINES..end * FINES], FINES);
                    fill(w, (&mut self.bounds[w * 64..end], fine, &mut self.split[w * 64..end]));
                }
            }
            _ => {
                let out = (&mut self.bounds[..], Scaled(&mut self.fine[..], FINES), &mut self.split[..]);
                crate::par::fill_blocks(64, out, &fill)
            }
        }
        self.dirty.iter_mut().for_each(|w| *w = 0);
    }

    /// Every block's and every fine block's bounds, bit for bit (NaN where not finite),
    /// for tests.
    #[cfg(test)]
    pub(super) fn bounds_bits(&self) -> Vec<[u64; 6]> {
        self.bounds.iter().chain(&self.fine).map(|b| b.map(f64::to_bits)).collect()
    }

    /// Every block's split flag, for tests.
    #[cfg(test)]
    pub(super) fn splits(&self) -> Vec<bool> {
        self.split.clone()
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    /// Whether the bounds describe `objects` objects (refreshed since the last change of
    /// the count); otherwise culling tests every object.
    pub fn covers(&self, objects: usize) -> bool {
        self.objects == objects
    }

    pub(super) fn class(&self, block: usize, frustum: &Frustum) -> Class {
        match self.bounds.get(block) {
            Some(b) => classify(b, frustum.planes()),
            None => Class::Partial,
        }
    }

    /// Whether block `block`'s fine blocks are worth classifying where it is partly in a
    /// frustum (see `split`).
    pub(super) fn split(&self, block: usize) -> bool {
        self.split.get(block).copied().unwrap_or(false)
    }

    /// The class of fine block `fine` (objects `fine * CULL_FINE..`).
    pub(super) fn fine_class(&self, fine: usize, frustum: &Frustum) -> Class {
        match self.fine.get(fine) {
            Some(b) => classify(b, frustum.planes()),
            None => Class::Partial,
        }
    }
}

/// The bounds holding all of `bounds` (NaN where one is NaN).
fn union(bounds: &[[f64; 6]]) -> [f64; 6] {
    let mut u = [f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    for b in bounds {
        if b.iter().any(|v| v.is_nan()) {
            return [f64::NAN; 6];
        }
        for k in 0..3 {
            u[k] = u[k].min(b[k]);
            u[3 + k] = u[3 + k].max(b[3 + k]);
        }
    }
    u
}

fn block_bounds(o: &CullInput<'_>, r: std::ops::Range<usize>) -> [f64; 6] {
    let mut b = [f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    let mut finite = true;
    for i in r {
        let c = [f64::from(o.cx[i]), f64::from(o.cy[i]), f64::from(o.cz[i])];
        let e = [f64::from(o.ex[i]), f64::from(o.ey[i]), f64::from(o.ez[i])];
        for k in 0..3 {
            let (lo, hi) = (c[k] - e[k], c[k] + e[k]);
            finite &= lo.is_finite() && hi.is_finite();
            b[k] = b[k].min(lo);
            b[3 + k] = b[3 + k].max(hi);
        }
    }
    if finite {
        b
    } else {
        [f64::NAN; 6]
    }
}

/// Classifies a block's AABB in `f64` with a margin of 1e-5 of the magnitudes involved:
/// some 30 times the worst rounding of the per-object `f32` test, so "outside" and
/// "inside" never disagree with it. NaN bounds classify as partial.
pub(super) fn classify(b: &[f64; 6], planes: &[Vec4]) -> Class {
    let mut inside = true;
    for p in planes {
        let n = [f64::from(p.x), f64::from(p.y), f64::from(p.z)];
        let d = f64::from(p.w);
        let (mut max, mut min, mut mag) = (d, d, d.abs());
        for k in 0..3 {
            let (a, c) = (n[k] * b[k], n[k] * b[3 + k]);
            max += a.max(c);
            min += a.min(c);
            mag += n[k].abs() * b[k].abs().max(b[3 + k].abs());
        }
        let margin = mag * 1e-5;
        if max < -margin {
            return Class::Outside;
        }
        inside &= min > margin;
    }
    if inside {
        Class::Inside
    } else {
        Class::Partial
    }
}
