//! Stage 2, sort: a 64-bit key per visible object ([`key`]), then the stable parallel radix
//! sort of `switchyard_kernels::sort` over (key, object) pairs.
//!
//! Keys and the queue are written in one parallel pass over the cull stage's pieces. A
//! frame's queue is mostly last frame's order, so the sorter's nearly-sorted path usually
//! runs: a few changed keys are set aside, sorted and merged back.

pub mod key;

use switchyard_kernels::sort::RadixSorter;

use crate::cull::VisibleList;
use crate::material::MaterialFrame;
use crate::profile;
use crate::scene::Objects;
use crate::view::View;
use key::{SortKey, SortKeyFields};

/// The frame data of dense material `material`; its key hashes are computed here, once
/// per material and frame, not per queue item.
pub(crate) fn material_frame(
    material: u32,
    variant: u32,
    shader: u32,
    transparent: bool,
    shadow_state: u32,
) -> MaterialFrame {
    MaterialFrame {
        variant,
        shader,
        transparent,
        shadow_state,
        pipeline_hash: key::pipeline_hash(shader, variant),
        material_hash: key::material_hash(material),
        passes: 0b11,
    }
}

/// The key of one queue item of `view`.
#[inline]
pub(crate) fn item_key(view: &View, o: &Objects, i: usize, mats: &[MaterialFrame], mesh_hashes: &[u16]) -> u64 {
    let m = &mats[o.material[i] as usize];
    let forward = view.pass == crate::material::PassKind::Forward;
    SortKey::encode(&SortKeyFields {
        layer: o.layer[i],
        transparent: m.transparent && forward,
        pipeline: m.pipeline_hash,
        material: if forward { m.material_hash } else { 0 },
        mesh: mesh_hashes[o.mesh[i] as usize],
        depth: key::depth(view, o.cx[i], o.cy[i], o.cz[i]),
    })
    .0
}

/// The sort stage's output for one view: dense object indices in draw order and their
/// keys (ascending), plus the sorter's scratch memory.
#[derive(Debug, Default)]
pub(crate) struct SortedQueue {
    pub(crate) queue: Vec<u32>,
    pub(crate) keys: Vec<u64>,
    sorter: RadixSorter,
    /// Time the stage took, ms.
    pub(crate) ms: f64,
}

/// What the sort stage reads besides the view and its visible list.
#[derive(Clone, Copy)]
pub(crate) struct SortCtx<'a> {
    /// The pass's name (Tracy).
    pub(crate) label: &'a str,
    pub(crate) objects: &'a Objects,
    pub(crate) materials: &'a [MaterialFrame],
    pub(crate) mesh_hashes: &'a [u16],
}

/// Writes the queue and keys of `visible` in one parallel pass over its pieces, then sorts.
pub(crate) fn sort_view(ctx: &SortCtx<'_>, view: &View, visible: &VisibleList, out: &mut SortedQueue) {
    let _z = profile::zone_text!("sort", "view {} ({:?})", ctx.label, view.pass);
    let t = std::time::Instant::now();
    let n = visible.len();
    let keys_zone = profile::zone!("sort-keys");
    switchyard_kernels::par::set_len(&mut out.queue, n);
    switchyard_kernels::par::set_len(&mut out.keys, n);
    switchyard_kernels::par::fill_ranges(visible.offsets(), (&mut out.queue[..], &mut out.keys[..]), &|p,
                                                                                                       (
        queue,
        keys,
    ): (
        &mut [u32],
        &mut [u64],
    )| {
        let src = visible.piece(p);
        queue.copy_from_slice(src);
        for (k, &i) in keys.iter_mut().zip(src) {
            *k = item_key(view, ctx.objects, i as usize, ctx.materials, ctx.mesh_hashes);
        }
    });
    drop(keys_zone);
    let _radix = profile::zone!("radix-sort");
    out.sorter.sort(&mut out.keys, &mut out.queue);
    out.ms = t.elapsed().as_secs_f64() * 1e3;
}
