//! Stage 2, sort: a 64-bit key per visible object ([`key`]), then the stable parallel radix
//! sort of `switchyard_kernels::sort` over (key, object) pairs.
//!
//! The cull stage built each visible object's key ([`item_key`], by object index), the
//! visible set, and the list of objects it newly sees. The queue and its keys are written
//! in one parallel pass, in last frame's order of the objects still visible followed by the
//! newly visible ones ([`coherent`]): the keys then arrive nearly sorted and the
//! sorter's nearly-sorted path runs (a few changed keys set aside, sorted and merged back).
//! Equal keys end in object order, so the queue does not depend on earlier frames.

mod coherent;
pub mod key;

use switchyard_kernels::sort::RadixSorter;

use crate::cull::VisibleList;
use crate::material::MaterialFrame;
use crate::profile;
use crate::scene::Objects;
use crate::view::View;
use coherent::{coherent_order, OrderScratch};
use key::{SortKey, SortKeyFields};

/// The frame data of a material (every pass kind; the caller narrows `passes`).
pub(crate) fn material_frame(variant: u32, shader: u32, transparent: bool, shadow_state: u32) -> MaterialFrame {
    MaterialFrame { variant, shader, transparent, shadow_state, passes: 0b11 }
}

/// The key of one queue item of `view`.
#[inline]
pub(crate) fn item_key(view: &View, o: &Objects, i: usize, mats: &[MaterialFrame]) -> u64 {
    key_with_depth(view, o, i, mats, key::depth(view, o.cx[i], o.cy[i], o.cz[i]))
}

/// [`item_key`] with its depth field given.
#[inline(always)]
fn key_with_depth(view: &View, o: &Objects, i: usize, mats: &[MaterialFrame], depth: u16) -> u64 {
    let material = o.material[i];
    let m = &mats[material as usize];
    let forward = view.pass == crate::material::PassKind::Forward;
    SortKey::encode(&SortKeyFields {
        layer: o.layer[i],
        transparent: m.transparent && forward,
        pipeline: key::pipeline_field(m.shadow_state),
        material: if forward { key::material_field(material) } else { 0 },
        mesh: key::mesh_field(o.mesh[i]),
        depth,
    })
    .0
}

/// Objects per group of [`write_keys`]: their depths are computed side by side.
const KEY_LANES: usize = 16;

/// Writes [`item_key`] of each object `i` of `visible` (ascending) to `keys[i - base]`,
/// the depths of `KEY_LANES` objects at a time in a loop without branches (the square
/// roots and divisions vectorize; one at a time they form a chain of latencies per key).
pub(crate) fn write_keys(
    view: &View,
    o: &Objects,
    mats: &[MaterialFrame],
    visible: &[u32],
    keys: &mut [u64],
    base: usize,
) {
    for group in visible.chunks(KEY_LANES) {
        let mut d2 = [0f32; KEY_LANES];
        for (d, &i) in d2.iter_mut().zip(group) {
            let i = i as usize;
            *d = key::distance_squared(view, o.cx[i], o.cy[i], o.cz[i]);
        }
        let mut depths = [0u16; KEY_LANES];
        for (q, &d) in depths.iter_mut().zip(&d2) {
            *q = key::depth_of_squared(view, d);
        }
        for (&i, &depth) in group.iter().zip(&depths) {
            keys[i as usize - base] = key_with_depth(view, o, i as usize, mats, depth);
        }
    }
}

/// The sort stage's output for one view: dense object indices in draw order and their
/// keys (ascending), plus what the next frame's sort starts from and scratch memory.
#[derive(Debug, Default)]
pub(crate) struct SortedQueue {
    pub(crate) queue: Vec<u32>,
    pub(crate) keys: Vec<u64>,
    sorter: RadixSorter,
    /// `queue` is the sorted queue of the visible list's cull `generation` (false at
    /// first, and after a sort that did not finish).
    coherent: bool,
    generation: u64,
    /// The next input order, built beside `queue`.
    input: Vec<u32>,
    scratch: OrderScratch,
    /// Whether this frame's input was last frame's order (stats and tests).
    pub(crate) from_last_order: bool,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

impl SortedQueue {
    /// Whether the last sort found its keys in order or nearly so (the full radix sort did
    /// not run).
    pub(crate) fn nearly_in_order(&self) -> bool {
        use switchyard_kernels::sort::SortPath;
        matches!(self.sorter.last_path, SortPath::InOrder | SortPath::NearlySorted)
    }
}

/// What the sort stage reads besides the view and its visible list.
#[derive(Clone, Copy)]
pub(crate) struct SortCtx<'a> {
    /// The pass's name (Tracy).
    pub(crate) label: &'a str,
}

/// Writes the keys of `visible`'s objects (the cull built them) in last frame's order
/// where it has one (see [`coherent`]), else in object order, in parallel; sorts; orders
/// equal keys by object.
pub(crate) fn sort_view(ctx: &SortCtx<'_>, view: &View, visible: &VisibleList, out: &mut SortedQueue) {
    profile::zone_text!("sort", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    let n = visible.len();
    let survey;
    {
        profile::zone!("sort-keys");
        // Last frame's queue is the previous cull's set only if this list was culled once since.
        let coherent = std::mem::take(&mut out.coherent) && visible.generation == out.generation + 1;
        survey = coherent
            .then(|| {
                coherent_order(&out.queue, visible.set(), visible, &mut out.scratch, (&mut out.input, &mut out.keys))
            })
            .flatten();
        out.from_last_order = survey.is_some();
        if out.from_last_order {
            std::mem::swap(&mut out.queue, &mut out.input);
        } else {
            switchyard_kernels::par::set_len(&mut out.queue, n);
            switchyard_kernels::par::set_len(&mut out.keys, n);
            // (On the first frame, or after a sort that did not finish.)
            switchyard_kernels::par::fill_ranges(
                visible.offsets(),
                (&mut out.queue[..], &mut out.keys[..]),
                &|p, (queue, keys): (&mut [u32], &mut [u64])| {
                    queue.copy_from_slice(visible.piece(p));
                    keys.iter_mut().zip(queue).for_each(|(k, &mut i)| *k = visible.key(i));
                },
            );
        }
    }
    {
        profile::zone!("radix-sort");
        // Equal keys by object index: the queue is the unique (key, object) order, the
        // same whatever last frame's order was (the nearly-sorted path orders ties as it
        // merges; an input already in order is fixed only where its survey found ties
        // out of order).
        out.sorter.ties_by_value = true;
        match survey {
            Some(s) => out.sorter.sort_vecs_surveyed(&mut out.keys, &mut out.queue, s, Some(&out.scratch.gaps)),
            None => out.sorter.sort_vecs(&mut out.keys, &mut out.queue),
        }
    }
    out.generation = visible.generation;
    out.coherent = true;
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::PassKind;
    use rand::{Rng, SeedableRng};

    #[test]
    fn keys_written_in_groups_equal_one_at_a_time() {
        // Objects at the eye, past the far plane and anywhere between; lists of every
        // length around the group size; both passes.
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let mut o = Objects::default();
        for i in 0..1000 {
            let p = match i % 50 {
                0 => [1.0, 2.0, 3.0],
                1 => [1e6, 0.0, 0.0],
                _ => [rng.gen_range(-300.0..300.0), rng.gen_range(-300.0..300.0), rng.gen_range(-300.0..300.0)],
            };
            o.cx.push(p[0]);
            o.cy.push(p[1]);
            o.cz.push(p[2]);
            o.layer.push(rng.gen_range(0..16));
            o.material.push(rng.gen_range(0..6));
            o.mesh.push(rng.gen_range(0..5000));
        }
        let mats: Vec<MaterialFrame> = (0..6).map(|m| material_frame(m, m / 2, m % 3 == 0, m / 2)).collect();
        for pass in [PassKind::Forward, PassKind::Shadow] {
            let view = View {
                label: "test",
                view_proj: glam::Mat4::IDENTITY,
                eye: glam::Vec3::new(1.0, 2.0, 3.0),
                far: 250.0,
                layer_mask: u16::MAX,
                pass,
            };
            for len in [0, 1, 15, 16, 17, 33, 1000 - 7] {
                let visible: Vec<u32> = (7..7 + len as u32).collect();
                let mut keys = vec![0u64; 1000];
                write_keys(&view, &o, &mats, &visible, &mut keys, 7);
                for &i in &visible {
                    assert_eq!(keys[i as usize - 7], item_key(&view, &o, i as usize, &mats), "{pass:?}, object {i}");
                }
                assert!(keys[len..].iter().all(|&k| k == 0), "nothing written past the list");
            }
        }
    }
}
