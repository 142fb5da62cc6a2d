//! Culling workloads: the same objects as Switchyard's structure of arrays and as the
//! array of structs a renderer without it keeps, and the scalar baseline loop.

use glam::{Mat4, Vec3, Vec4};
use rand::Rng;
use rayon::prelude::*;
use switchyard::CASTS_SHADOWS;
use switchyard_kernels::cull::{cull_range, CullBlocks, CullFilter, CullInput, CullLoop, Frustum};

/// One object as an array-of-structs renderer stores it.
#[derive(Clone, Copy, Debug)]
pub struct AosObject {
    /// Object-to-world transform.
    pub transform: Mat4,
    /// World AABB center.
    pub center: Vec3,
    /// World AABB half extents.
    pub extent: Vec3,
    /// Mesh index.
    pub mesh: u32,
    /// Material index.
    pub material: u32,
    /// Layer.
    pub layer: u8,
    /// Flags.
    pub flags: u8,
}

/// The culling inputs as Switchyard's scene stores them: one array per field.
#[derive(Debug, Default)]
pub struct Soa {
    cx: Vec<f32>,
    cy: Vec<f32>,
    cz: Vec<f32>,
    ex: Vec<f32>,
    ey: Vec<f32>,
    ez: Vec<f32>,
    layer: Vec<u8>,
    flags: Vec<u8>,
}

impl Soa {
    /// What the cull kernels read.
    pub fn input(&self) -> CullInput<'_> {
        CullInput {
            cx: &self.cx,
            cy: &self.cy,
            cz: &self.cz,
            ex: &self.ex,
            ey: &self.ey,
            ez: &self.ez,
            layer: &self.layer,
            flags: &self.flags,
        }
    }

    /// Objects.
    pub fn len(&self) -> usize {
        self.cx.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.cx.is_empty()
    }
}

/// Objects in both layouts and a frustum that sees about `visible` of them.
#[derive(Debug)]
pub struct CullWorkload {
    /// Structure of arrays.
    pub soa: Soa,
    /// Array of structs.
    pub aos: Vec<AosObject>,
    /// The frustum.
    pub frustum: Frustum,
    /// Its six planes, as the AoS baseline takes them.
    pub planes: [Vec4; 6],
    /// Block bounds of `soa` (the hierarchy's first level).
    pub blocks: CullBlocks,
}

/// `n` objects spread uniformly in a 200-unit cube; an orthographic frustum covering
/// `visible` (0..1) of the x range. `sorted`: objects ordered along x (spatially
/// coherent); otherwise shuffled.
pub fn workload(n: usize, visible: f32, sorted: bool, seed: u64) -> CullWorkload {
    let mut r = crate::rng(seed);
    let mut aos: Vec<AosObject> = (0..n)
        .map(|_| {
            let center = Vec3::new(r.gen(), r.gen(), r.gen()) * 200.0 - 100.0;
            let extent = Vec3::splat(0.2 + r.gen::<f32>());
            AosObject {
                transform: Mat4::from_translation(center),
                center,
                extent,
                mesh: r.gen_range(0..64),
                material: r.gen_range(0..256),
                layer: 0,
                flags: CASTS_SHADOWS,
            }
        })
        .collect();
    if sorted {
        aos.sort_by(|a, b| a.center.x.total_cmp(&b.center.x));
    }
    let mut soa = Soa::default();
    for o in &aos {
        soa.cx.push(o.center.x);
        soa.cy.push(o.center.y);
        soa.cz.push(o.center.z);
        soa.ex.push(o.extent.x);
        soa.ey.push(o.extent.y);
        soa.ez.push(o.extent.z);
        soa.layer.push(o.layer);
        soa.flags.push(o.flags);
    }
    // Visible x range [-100, -100 + 200 * visible] (objects straddling the edge count too).
    let right = -100.0 + 200.0 * visible.clamp(0.0, 1.0);
    let proj = Mat4::orthographic_rh(-101.5, right, -101.5, 101.5, 0.0, 203.0);
    let view = Mat4::look_at_rh(Vec3::new(0.0, 0.0, 101.5), Vec3::ZERO, Vec3::Y);
    let blocks = CullBlocks::build(&soa.input());
    let frustum = Frustum::from_view_proj(&(proj * view));
    let planes = std::array::from_fn(|k| frustum.planes()[k]);
    CullWorkload { soa, aos, frustum, planes, blocks }
}

/// The baseline: a scalar loop over the array of structs, early-out per plane.
pub fn cull_aos(objects: &[AosObject], planes: &[Vec4; 6], layer_mask: u16, out: &mut Vec<u32>) {
    out.clear();
    'objects: for (i, o) in objects.iter().enumerate() {
        if (layer_mask >> o.layer) & 1 == 0 {
            continue;
        }
        for p in planes {
            let n = p.truncate();
            if n.dot(o.center) + p.w < -n.abs().dot(o.extent) {
                continue 'objects;
            }
        }
        out.push(i as u32);
    }
}

/// Part size of the parallel cull (the renderer's).
pub const PART: usize = 16 * 1024;

/// Switchyard's cull of the structure of arrays as the renderer's cull job runs it: parts
/// in parallel on the current pool (block hierarchy first), then each part's place in the
/// visible list (`offsets`). The renderer's sort job reads the parts in that order while
/// it writes the keys, so the visible set is complete here. Returns the visible count.
pub fn cull_soa(w: &CullWorkload, parts: &mut Vec<Vec<u32>>, offsets: &mut Vec<usize>) -> usize {
    let n = w.soa.len();
    let (input, kernel) = (w.soa.input(), CullLoop::best());
    let filter = CullFilter { layer_mask: u16::MAX, required_flags: 0 };
    parts.resize_with(n.div_ceil(PART).max(1), Vec::new);
    parts.par_iter_mut().enumerate().for_each(|(p, v)| {
        v.clear();
        cull_range(&input, &w.blocks, &w.frustum, filter, kernel, p * PART..((p + 1) * PART).min(n), v);
    });
    offsets.clear();
    offsets.push(0);
    for p in parts.iter() {
        offsets.push(offsets[offsets.len() - 1] + p.len());
    }
    offsets[offsets.len() - 1]
}
