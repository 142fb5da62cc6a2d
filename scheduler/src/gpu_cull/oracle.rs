//! The oracle of the GPU cull: the same candidates culled on the CPU with the CPU cull's
//! math and compacted as the GPU compacts them, for tests to compare with what the GPU
//! wrote (`Backend::read_buffer`).

use switchyard_kernels::cull::Frustum;

use crate::scene::Objects;

/// The oracle: `candidates` (with bucket starts `starts`) culled on the CPU against
/// `frustum`, compacted as the GPU does: the visible object indices in candidate order,
/// and per bucket (first instance, instance count).
pub fn cull_on_cpu(
    objects: &Objects,
    frustum: &Frustum,
    starts: &[u32],
    candidates: &[u32],
) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut visible = Vec::new();
    let mut ranges = Vec::new();
    for w in starts.windows(2) {
        let first = visible.len() as u32;
        for &i in &candidates[w[0] as usize..w[1] as usize] {
            if touches(objects, frustum, i as usize) {
                visible.push(i);
            }
        }
        ranges.push((first, visible.len() as u32 - first));
    }
    (visible, ranges)
}

/// The CPU cull's plane test for one object, written as the portable loop writes it.
fn touches(o: &Objects, f: &Frustum, i: usize) -> bool {
    f.planes().iter().all(|p| {
        let s = p.x * o.cx[i] + p.y * o.cy[i] + p.z * o.cz[i] + p.w;
        let r = p.x.abs() * o.ex[i] + p.y.abs() * o.ey[i] + p.z.abs() * o.ez[i];
        s >= -r
    })
}

/// How far object `i`'s bounds are from the frustum's boundary, relative to their size:
/// the smallest `|s + r|` over the planes divided by the magnitude of the terms. Below
/// about 1e-5, float rounding (a fused multiply-add on the GPU) may decide the test
/// differently on the two sides.
pub fn boundary_margin(o: &Objects, f: &Frustum, i: usize) -> f32 {
    f.planes()
        .iter()
        .map(|p| {
            let s = p.x * o.cx[i] + p.y * o.cy[i] + p.z * o.cz[i] + p.w;
            let r = p.x.abs() * o.ex[i] + p.y.abs() * o.ey[i] + p.z.abs() * o.ez[i];
            let scale = (p.x * o.cx[i]).abs() + (p.y * o.cy[i]).abs() + (p.z * o.cz[i]).abs() + p.w.abs() + r;
            (s + r).abs() / scale.max(f32::MIN_POSITIVE)
        })
        .fold(f32::INFINITY, f32::min)
}
