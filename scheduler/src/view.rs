//! Views (cameras with a pass and a layer mask) and frustum culling over the bounds arrays.

use glam::{Mat4, Vec3, Vec4};

use crate::material::PassKind;
use crate::scene::{Objects, CASTS_SHADOWS};

/// One view of the frame: a camera, the pass it renders, and the layers it sees.
///
/// Forward views render into the main target; shadow views render depth into the shadow
/// maps (the i-th shadow view into map i), which forward views sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// Label (Tracy zones, stats).
    pub label: &'static str,
    /// World to clip (wgpu clip space: depth 0..1).
    pub view_proj: Mat4,
    /// Camera position (depth sorting, specular, fog).
    pub eye: Vec3,
    /// Distance that maps to the farthest quantized depth.
    pub far: f32,
    /// Bit `l` set: objects on layer `l` are seen.
    pub layer_mask: u16,
    /// The pass.
    pub pass: PassKind,
}

/// The six planes of a frustum, `n·p + d >= 0` inside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    /// Planes as (nx, ny, nz, d), normalized.
    pub planes: [Vec4; 6],
}

impl Frustum {
    /// Extracts the planes from a view-projection matrix (depth 0..1).
    pub fn from_view_proj(m: &Mat4) -> Self {
        let r0 = m.row(0);
        let r1 = m.row(1);
        let r2 = m.row(2);
        let r3 = m.row(3);
        let mut planes = [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2];
        for p in &mut planes {
            let len = p.truncate().length();
            if len > 0.0 {
                *p /= len;
            }
        }
        Self { planes }
    }

    /// Whether an AABB (center, half extents) touches the frustum.
    #[inline]
    pub fn intersects(&self, c: Vec3, e: Vec3) -> bool {
        self.planes.iter().all(|p| {
            let n = p.truncate();
            n.dot(c) + p.w >= -n.abs().dot(e)
        })
    }
}

/// Objects per culling block: the inner loops run plane by plane over a block so they
/// stream the bounds arrays and vectorize.
pub(crate) const CULL_BLOCK: usize = 256;

/// Appends the visible dense indices in `range` to `out`, in ascending order.
pub fn cull_range(
    objects: &Objects,
    frustum: &Frustum,
    layer_mask: u16,
    shadow: bool,
    range: std::ops::Range<usize>,
    out: &mut Vec<u32>,
) {
    let mut vis = [0u8; CULL_BLOCK];
    let mut start = range.start;
    while start < range.end {
        let end = (start + CULL_BLOCK).min(range.end);
        let n = end - start;
        let (cx, cy, cz) = (&objects.cx[start..end], &objects.cy[start..end], &objects.cz[start..end]);
        let (ex, ey, ez) = (&objects.ex[start..end], &objects.ey[start..end], &objects.ez[start..end]);
        let (layer, flags) = (&objects.layer[start..end], &objects.flags[start..end]);
        let need = if shadow { CASTS_SHADOWS } else { 0 };
        for i in 0..n {
            vis[i] = u8::from((layer_mask >> layer[i]) & 1 == 1 && flags[i] & need == need);
        }
        for p in &frustum.planes {
            let (nx, ny, nz, d) = (p.x, p.y, p.z, p.w);
            let (ax, ay, az) = (nx.abs(), ny.abs(), nz.abs());
            for i in 0..n {
                let s = nx * cx[i] + ny * cy[i] + nz * cz[i] + d;
                let r = ax * ex[i] + ay * ey[i] + az * ez[i];
                vis[i] &= u8::from(s >= -r);
            }
        }
        // Branch-free compaction: write every index, advance only past visible ones.
        let base = out.len();
        out.resize(base + n, 0);
        let dst = &mut out[base..];
        let mut w = 0;
        for (i, &v) in vis[..n].iter().enumerate() {
            dst[w] = (start + i) as u32;
            w += usize::from(v);
        }
        out.truncate(base + w);
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Objects;

    fn objects(list: &[(Vec3, Vec3)]) -> Objects {
        let mut o = Objects::default();
        for (c, e) in list {
            o.cx.push(c.x);
            o.cy.push(c.y);
            o.cz.push(c.z);
            o.ex.push(e.x);
            o.ey.push(e.y);
            o.ez.push(e.z);
            o.layer.push(0);
            o.flags.push(CASTS_SHADOWS);
        }
        o
    }

    /// Brute force: an AABB is outside iff all 8 corners are outside one plane.
    fn brute(f: &Frustum, c: Vec3, e: Vec3) -> bool {
        f.planes.iter().all(|p| {
            (0..8).any(|k| {
                let s = Vec3::new(
                    if k & 1 == 0 { -1.0 } else { 1.0 },
                    if k & 2 == 0 { -1.0 } else { 1.0 },
                    if k & 4 == 0 { -1.0 } else { 1.0 },
                );
                p.truncate().dot(c + s * e) + p.w >= 0.0
            })
        })
    }

    fn camera() -> Frustum {
        let proj = Mat4::perspective_rh(1.0, 1.5, 0.5, 100.0);
        let view = Mat4::look_at_rh(Vec3::new(0.0, 2.0, 10.0), Vec3::ZERO, Vec3::Y);
        Frustum::from_view_proj(&(proj * view))
    }

    #[test]
    fn matches_brute_force_including_edge_cases() {
        let f = camera();
        let mut list = vec![
            (Vec3::ZERO, Vec3::splat(1.0)),            // inside
            (Vec3::new(0.0, 0.0, 200.0), Vec3::ONE),   // behind the camera
            (Vec3::ZERO, Vec3::splat(1e6)),            // huge: contains the frustum
            (Vec3::new(3.0, 0.0, 0.0), Vec3::ZERO),    // degenerate (a point)
            (Vec3::new(0.0, 0.0, -150.0), Vec3::ZERO), // past far, degenerate
        ];
        // Objects exactly on each plane: a point placed on the plane is visible.
        for p in &f.planes {
            let n = p.truncate();
            let on = -n * p.w; // closest point of the plane to the origin
            list.push((on, Vec3::ZERO));
        }
        let mut s = 12345u64;
        let mut rnd = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        for _ in 0..20_000 {
            let c = Vec3::new(rnd() * 80.0, rnd() * 40.0, rnd() * 120.0);
            let e = Vec3::new(rnd().abs() * 5.0, rnd().abs() * 5.0, rnd().abs() * 5.0);
            list.push((c, e));
        }
        let o = objects(&list);
        let mut out = Vec::new();
        cull_range(&o, &f, 1, false, 0..list.len(), &mut out);
        let expect: Vec<u32> =
            (0..list.len() as u32).filter(|&i| brute(&f, list[i as usize].0, list[i as usize].1)).collect();
        assert_eq!(out, expect);
        assert!(out.contains(&0) && !out.contains(&1) && out.contains(&2) && !out.contains(&4));
        // The points on planes: visible within float tolerance of the plane (s >= -r, r = 0).
        let expected_on_planes = expect.iter().filter(|&&i| (5..11).contains(&i)).count();
        assert_eq!(out.iter().filter(|&&i| (5..11).contains(&i)).count(), expected_on_planes);
    }

    #[test]
    fn empty_scene_and_layers() {
        let f = camera();
        let mut out = Vec::new();
        cull_range(&Objects::default(), &f, u16::MAX, false, 0..0, &mut out);
        assert!(out.is_empty());
        let mut o = objects(&[(Vec3::ZERO, Vec3::ONE), (Vec3::ZERO, Vec3::ONE)]);
        o.layer[1] = 3;
        o.flags[0] = 0;
        cull_range(&o, &f, 1 << 3, false, 0..2, &mut out);
        assert_eq!(out, vec![1]);
        out.clear();
        cull_range(&o, &f, u16::MAX, true, 0..2, &mut out);
        assert_eq!(out, vec![1], "shadow views see only casters");
    }
}
