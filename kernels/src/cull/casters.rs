//! Shadow casters: which objects can cast a shadow into a region ([`Frustum::casters_of`])
//! from a light found in the shadow map's own matrix ([`center_of_projection`]).

use glam::{Mat4, Vec4};

use super::{Frustum, MAX_PLANES};

impl Frustum {
    /// This frustum limited to the objects that can cast a shadow into `region` from a
    /// light at `light` (homogeneous: a point light's position with `w = 1`, or the
    /// direction towards a directional light with `w = 0`, as
    /// [`center_of_projection`] gives it for the shadow map's matrix).
    ///
    /// A point shades the region only if the ray from it away from the light enters the
    /// region. Along that ray the signed distance to a plane whose inside holds the light
    /// never grows, so a point outside such a plane shades nothing inside it: those of
    /// `region`'s planes are added (planes the light lies on, within rounding, are not:
    /// leaving a plane out only keeps more objects). The test stays conservative for
    /// bounds: an AABB outside one of them holds no point that shades the region.
    pub fn casters_of(&self, region: &Frustum, light: Vec4) -> Self {
        let mut out = *self;
        let scale = if light.w == 0.0 { light.truncate().length() } else { 1.0 + light.truncate().length() };
        for p in region.planes() {
            if out.len == MAX_PLANES {
                break;
            }
            // In f64: which side of a plane the light lies on decides what is culled.
            let side = f64::from(p.x) * f64::from(light.x)
                + f64::from(p.y) * f64::from(light.y)
                + f64::from(p.z) * f64::from(light.z)
                + f64::from(p.w) * f64::from(light.w);
            if side > 1e-6 * f64::from(scale) {
                out.planes[out.len] = *p;
                out.len += 1;
            }
        }
        out
    }
}

/// Where a view-projection matrix projects from, as a homogeneous point: the camera's
/// position with `w = 1` for a perspective matrix, or for an orthographic one the
/// direction (`w = 0`, unit length) towards the side its depth starts at (a shadow map's
/// light). `None` for a matrix that projects from no point (singular in x, y and w).
pub fn center_of_projection(m: &Mat4) -> Option<Vec4> {
    // The point every plane of rows x, y and w passes through: their 4D cross product.
    let (a, b, c) = (m.row(0).as_dvec4(), m.row(1).as_dvec4(), m.row(3).as_dvec4());
    let det = |i: usize, j: usize, k: usize| {
        glam::DMat3::from_cols(
            glam::DVec3::new(a[i], b[i], c[i]),
            glam::DVec3::new(a[j], b[j], c[j]),
            glam::DVec3::new(a[k], b[k], c[k]),
        )
        .determinant()
    };
    let p = glam::DVec4::new(det(1, 2, 3), -det(0, 2, 3), det(0, 1, 3), -det(0, 1, 2));
    let xyz = p.truncate().length();
    if !p.is_finite() || p.length() == 0.0 {
        return None;
    }
    if p.w.abs() > 1e-9 * xyz {
        let q = p / p.w;
        return q.is_finite().then(|| q.as_vec4());
    }
    // Orthographic: towards decreasing depth (the light's side of the map).
    let d = if m.row(2).as_dvec4().dot(p) > 0.0 { -p.truncate() } else { p.truncate() } / xyz;
    Some(d.extend(0.0).as_vec4())
}

#[cfg(test)]
mod tests {
    use glam::{Mat4, Vec3, Vec4};
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;

    /// A frustum that holds every point the tests use (so only the added planes cull).
    fn everything() -> Frustum {
        Frustum::from_view_proj(&Mat4::orthographic_rh(-1e4, 1e4, -1e4, 1e4, -1e4, 1e4))
    }

    /// A slice of a perspective view, 4 to 30 units in front of the eye.
    fn slice() -> (Mat4, Frustum) {
        let m = Mat4::perspective_rh(1.0, 1.6, 4.0, 30.0)
            * Mat4::look_at_rh(Vec3::new(0.0, 5.0, 20.0), Vec3::new(2.0, 0.0, 0.0), Vec3::Y);
        (m, Frustum::from_view_proj(&m))
    }

    /// Exactly, in f64: whether the ray from `p` away from the light enters the frustum
    /// (the ray's parameter range inside every plane is not empty).
    fn shades(region: &Frustum, light: Vec4, p: Vec3) -> bool {
        let p = p.as_dvec3();
        let dir = if light.w == 0.0 { -light.truncate().as_dvec3() } else { p - light.truncate().as_dvec3() };
        let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
        for q in region.planes() {
            let n = q.truncate().as_dvec3();
            let (f, slope) = (n.dot(p) + f64::from(q.w), n.dot(dir));
            if slope == 0.0 {
                if f < 0.0 {
                    return false;
                }
            } else if slope > 0.0 {
                lo = lo.max(-f / slope);
            } else {
                hi = hi.min(-f / slope);
            }
        }
        lo <= hi
    }

    #[test]
    fn the_center_of_projection_is_the_eye_or_the_direction_to_the_light() {
        let eye = Vec3::new(3.0, 7.0, -2.0);
        let persp = Mat4::perspective_rh(0.9, 1.3, 0.5, 80.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
        let c = center_of_projection(&persp).unwrap();
        assert!((c - eye.extend(1.0)).abs().max_element() < 1e-3, "{c}");
        // An orthographic light looking along `dir`: the light lies towards -dir.
        let dir = Vec3::new(-0.3, -1.0, 0.4).normalize();
        let light_eye = -dir * 50.0;
        let ortho = Mat4::orthographic_rh(-20.0, 20.0, -20.0, 20.0, 0.0, 100.0)
            * Mat4::look_at_rh(light_eye, Vec3::ZERO, Vec3::Y);
        let c = center_of_projection(&ortho).unwrap();
        assert!((c - (-dir).extend(0.0)).abs().max_element() < 1e-5, "{c}");
        // Nothing to project from.
        assert_eq!(center_of_projection(&Mat4::ZERO), None);
        assert_eq!(center_of_projection(&Mat4::from_cols(Vec4::X, Vec4::X, Vec4::Z, Vec4::W)), None);
    }

    /// Every point of a kept AABB's corners and samples that shades the region is kept;
    /// objects beside the region, away from the light, are culled.
    #[test]
    #[cfg_attr(miri, ignore = "safe arithmetic only (no unsafe code, no threads), and minutes under miri")]
    fn casters_of_keeps_every_object_that_shades_the_region_and_culls_others() {
        let (_, region) = slice();
        let mut rng = Pcg64Mcg::seed_from_u64(21);
        let lights = [
            Vec3::new(-0.3, -1.0, 0.4).normalize().extend(0.0) * -1.0,
            Vec3::new(0.9, -0.2, 0.1).normalize().extend(0.0) * -1.0,
            Vec3::new(0.0, -1.0, 0.0).extend(0.0) * -1.0,
            Vec4::new(10.0, 40.0, -5.0, 1.0),
            Vec4::new(1.0, 4.0, 8.0, 1.0),
        ];
        let base = everything();
        let boxes = 4000;
        for light in lights {
            let f = base.casters_of(&region, light);
            assert!(f.planes().len() > 6, "{light}: no plane of the region added");
            let (mut culled, mut kept) = (0, 0);
            for _ in 0..boxes {
                let c = Vec3::new(rng.gen_range(-60.0..60.0), rng.gen_range(-30.0..60.0), rng.gen_range(-40.0..50.0));
                let e = Vec3::new(rng.gen_range(0.0..3.0), rng.gen_range(0.0..3.0), rng.gen_range(0.0..3.0));
                let samples = (0..8)
                    .map(|k| {
                        let s = Vec3::new(
                            (k & 1) as f32 * 2.0 - 1.0,
                            (k >> 1 & 1) as f32 * 2.0 - 1.0,
                            (k >> 2) as f32 * 2.0 - 1.0,
                        );
                        c + s * e
                    })
                    .chain((0..24).map(|_| {
                        c + e * Vec3::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))
                    }))
                    .chain([c]);
                let shading = samples.into_iter().any(|p| shades(&region, light, p));
                if f.intersects(c, e) {
                    kept += 1;
                } else {
                    assert!(!shading, "{light}: culled the box {c} ± {e}, which shades the region");
                    culled += 1;
                }
            }
            assert!(culled > boxes / 4 && kept > boxes / 40, "{light}: culled {culled}, kept {kept}");
        }
        // Beside the region, away from a light overhead: culled; above it: kept.
        let f = base.casters_of(&region, Vec4::new(0.0, 1.0, 0.0, 0.0));
        assert!(!f.intersects(Vec3::new(2.0, -20.0, 0.0), Vec3::ONE));
        assert!(f.intersects(Vec3::new(2.0, 40.0, 0.0), Vec3::ONE));
    }

    #[test]
    fn the_planes_never_exceed_the_limit() {
        let (_, region) = slice();
        // A light inside the region: all six of its planes, twice over, stop at the limit.
        let light = Vec4::new(2.0, 1.0, 2.0, 1.0);
        let f = everything().casters_of(&region, light);
        assert_eq!(f.planes().len(), MAX_PLANES);
        let g = f.casters_of(&region, light);
        assert_eq!(g.planes().len(), MAX_PLANES);
        assert_eq!(g, f);
    }
}
