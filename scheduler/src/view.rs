//! Views (cameras with a pass and a layer mask) and frustum culling over the bounds arrays.

use glam::{Mat4, Vec3, Vec4};
use rayon::prelude::*;

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

/// Objects per culling block: the unit of the bounds hierarchy ([`CullBlocks`]) and of the
/// inner loops, which run over a block so they stream the bounds arrays and vectorize.
pub const CULL_BLOCK: usize = 256;

/// Conservative bounds of every run of [`CULL_BLOCK`] consecutive objects: the first level
/// of culling. A block wholly outside one plane is skipped without reading its objects; a
/// block wholly inside every plane is taken without testing them. Both decisions keep a
/// margin far above `f32` rounding, so the visible set is exactly the one the per-object
/// test gives (the reference pipeline tests every object and must agree).
///
/// Block bounds are refreshed lazily: [`CullBlocks::mark`] when an object's bounds change,
/// [`CullBlocks::refresh`] before culling. Stale bounds only ever cost speed if they are
/// too large (a shrunk block); the scene marks every other change.
#[derive(Clone, Debug, Default)]
pub struct CullBlocks {
    /// Per block: min xyz, max xyz (f64; NaN where an object's bounds are not finite).
    bounds: Vec<[f64; 6]>,
    /// One bit per block whose bounds must be recomputed.
    dirty: Vec<u64>,
    /// Object count at the last refresh; a mismatch disables the hierarchy.
    objects: usize,
}

/// Where a block lies relative to a frustum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Outside,
    Inside,
    Partial,
}

impl CullBlocks {
    /// Bounds for `objects`, all computed now.
    pub fn build(objects: &Objects) -> Self {
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

    /// Recomputes the marked blocks' bounds (in parallel on the current rayon pool) and
    /// drops blocks past the end of `objects`.
    pub fn refresh(&mut self, objects: &Objects) {
        let n = objects.len();
        let blocks = n.div_ceil(CULL_BLOCK);
        self.bounds.resize(blocks, [f64::NAN; 6]);
        self.objects = n;
        if self.dirty.iter().all(|&w| w == 0) {
            return;
        }
        let dirty = &self.dirty;
        self.bounds.par_iter_mut().enumerate().with_min_len(16).for_each(|(b, out)| {
            if dirty.get(b / 64).is_some_and(|w| w & (1 << (b % 64)) != 0) {
                *out = block_bounds(objects, b * CULL_BLOCK..((b + 1) * CULL_BLOCK).min(n));
            }
        });
        self.dirty.iter_mut().for_each(|w| *w = 0);
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    fn class(&self, block: usize, frustum: &Frustum) -> Class {
        match self.bounds.get(block) {
            Some(b) => classify(b, &frustum.planes),
            None => Class::Partial,
        }
    }
}

fn block_bounds(o: &Objects, r: std::ops::Range<usize>) -> [f64; 6] {
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
fn classify(b: &[f64; 6], planes: &[Vec4; 6]) -> Class {
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

/// Appends the visible dense indices in `range` to `out`, in ascending order: blocks
/// classified by `blocks` first (pass `&CullBlocks::default()` to test every object),
/// then the objects of partially visible blocks. Uses AVX2 where the CPU has it; the
/// result is bit-identical to the portable loop (same operations, no FMA contraction).
pub fn cull_range(
    objects: &Objects,
    blocks: &CullBlocks,
    frustum: &Frustum,
    layer_mask: u16,
    shadow: bool,
    range: std::ops::Range<usize>,
    out: &mut Vec<u32>,
) {
    let need = if shadow { CASTS_SHADOWS } else { 0 };
    let hierarchy = blocks.objects == objects.len();
    let simd = simd_available();
    out.reserve(range.len());
    let mut start = range.start;
    while start < range.end {
        let block = start / CULL_BLOCK;
        let end = ((block + 1) * CULL_BLOCK).min(range.end);
        let class = if hierarchy { blocks.class(block, frustum) } else { Class::Partial };
        match class {
            Class::Outside => {}
            Class::Inside => cull_objects(objects, &[], layer_mask, need, start..end, simd, out),
            Class::Partial => cull_objects(objects, &frustum.planes, layer_mask, need, start..end, simd, out),
        }
        start = end;
    }
}

/// Tests objects against all of `planes` (none: only the layer and flag checks).
fn cull_objects(
    o: &Objects,
    planes: &[Vec4],
    layer_mask: u16,
    need: u8,
    range: std::ops::Range<usize>,
    simd: bool,
    out: &mut Vec<u32>,
) {
    #[cfg(target_arch = "x86_64")]
    if simd {
        // SAFETY: `simd` is true only when the CPU reports AVX2.
        unsafe { avx2::cull(o, planes, layer_mask, need, range, out) };
        return;
    }
    let _ = simd;
    cull_objects_portable(o, planes, layer_mask, need, range, out);
}

/// Whether the AVX2 loop runs on this CPU.
#[inline]
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The portable loop over at most [`CULL_BLOCK`] objects per step: plane by plane over a
/// byte mask, then a branch-free compaction.
fn cull_objects_portable(
    objects: &Objects,
    planes: &[Vec4],
    layer_mask: u16,
    need: u8,
    range: std::ops::Range<usize>,
    out: &mut Vec<u32>,
) {
    let mut vis = [0u8; CULL_BLOCK];
    let mask = u32::from(layer_mask);
    let mut start = range.start;
    while start < range.end {
        let end = (start + CULL_BLOCK).min(range.end);
        let n = end - start;
        let (layer, flags) = (&objects.layer[start..end], &objects.flags[start..end]);
        for i in 0..n {
            vis[i] = u8::from((mask >> (layer[i] & 31)) & 1 == 1 && flags[i] & need == need);
        }
        if !planes.is_empty() {
            let (cx, cy, cz) = (&objects.cx[start..end], &objects.cy[start..end], &objects.cz[start..end]);
            let (ex, ey, ez) = (&objects.ex[start..end], &objects.ey[start..end], &objects.ez[start..end]);
            for p in planes {
                let (nx, ny, nz, d) = (p.x, p.y, p.z, p.w);
                let (ax, ay, az) = (nx.abs(), ny.abs(), nz.abs());
                for i in 0..n {
                    let s = nx * cx[i] + ny * cy[i] + nz * cz[i] + d;
                    let r = ax * ex[i] + ay * ey[i] + az * ez[i];
                    vis[i] &= u8::from(s >= -r);
                }
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

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    /// For each 8-bit visibility mask, the lanes that are set, packed to the front.
    static COMPACT: [[u32; 8]; 256] = compact_table();

    const fn compact_table() -> [[u32; 8]; 256] {
        let mut t = [[0u32; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut w, mut i) = (0, 0);
            while i < 8 {
                if m & (1 << i) != 0 {
                    t[m][w] = i as u32;
                    w += 1;
                }
                i += 1;
            }
            m += 1;
        }
        t
    }

    /// Eight objects per step: the layer and flag checks and every plane in registers,
    /// then the visible lanes' indices packed with one permute and stored 8 wide (the
    /// store may run past the kept count into reserved capacity; only kept lanes count).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cull(
        o: &Objects,
        planes: &[Vec4],
        layer_mask: u16,
        need: u8,
        range: std::ops::Range<usize>,
        out: &mut Vec<u32>,
    ) {
        let n = range.len();
        let groups = n / 8;
        let r = range.start..range.start + groups * 8;
        let (cx, cy, cz) = (&o.cx[r.clone()], &o.cy[r.clone()], &o.cz[r.clone()]);
        let (ex, ey, ez) = (&o.ex[r.clone()], &o.ey[r.clone()], &o.ez[r.clone()]);
        let (layer, flags) = (&o.layer[r.clone()], &o.flags[r]);
        out.reserve(groups * 8);
        let base = out.len();
        let mut w = 0usize;
        let sign = _mm256_set1_ps(-0.0);
        let mask = _mm256_set1_epi32(i32::from(layer_mask));
        let (one, low5) = (_mm256_set1_epi32(1), _mm256_set1_epi32(31));
        let needv = _mm256_set1_epi32(i32::from(need));
        for g in 0..groups {
            let i = g * 8;
            // SAFETY: i + 8 <= groups * 8, the length of every slice above.
            let vis = unsafe {
                let lay = _mm256_cvtepu8_epi32(_mm_loadl_epi64(layer.as_ptr().add(i).cast()));
                let fl = _mm256_cvtepu8_epi32(_mm_loadl_epi64(flags.as_ptr().add(i).cast()));
                let seen = _mm256_and_si256(_mm256_srlv_epi32(mask, _mm256_and_si256(lay, low5)), one);
                let mut vis = _mm256_castsi256_ps(_mm256_and_si256(
                    _mm256_cmpeq_epi32(seen, one),
                    _mm256_cmpeq_epi32(_mm256_and_si256(fl, needv), needv),
                ));
                if !planes.is_empty() {
                    let (x, y, z) = (
                        _mm256_loadu_ps(cx.as_ptr().add(i)),
                        _mm256_loadu_ps(cy.as_ptr().add(i)),
                        _mm256_loadu_ps(cz.as_ptr().add(i)),
                    );
                    let (hx, hy, hz) = (
                        _mm256_loadu_ps(ex.as_ptr().add(i)),
                        _mm256_loadu_ps(ey.as_ptr().add(i)),
                        _mm256_loadu_ps(ez.as_ptr().add(i)),
                    );
                    for p in planes {
                        let (nx, ny, nz, d) =
                            (_mm256_set1_ps(p.x), _mm256_set1_ps(p.y), _mm256_set1_ps(p.z), _mm256_set1_ps(p.w));
                        let (ax, ay, az) =
                            (_mm256_set1_ps(p.x.abs()), _mm256_set1_ps(p.y.abs()), _mm256_set1_ps(p.z.abs()));
                        // Same operation order as the portable loop: ((x + y) + z) + d.
                        let s = _mm256_add_ps(
                            _mm256_add_ps(
                                _mm256_add_ps(_mm256_mul_ps(nx, x), _mm256_mul_ps(ny, y)),
                                _mm256_mul_ps(nz, z),
                            ),
                            d,
                        );
                        let rad = _mm256_add_ps(
                            _mm256_add_ps(_mm256_mul_ps(ax, hx), _mm256_mul_ps(ay, hy)),
                            _mm256_mul_ps(az, hz),
                        );
                        vis = _mm256_and_ps(vis, _mm256_cmp_ps::<_CMP_GE_OQ>(s, _mm256_xor_ps(rad, sign)));
                    }
                }
                vis
            };
            let m = _mm256_movemask_ps(vis) as usize;
            let idx = _mm256_add_epi32(
                _mm256_set1_epi32((range.start + i) as i32),
                // SAFETY: COMPACT rows are 8 u32 (32 bytes); unaligned load.
                unsafe { _mm256_loadu_si256(COMPACT[m].as_ptr().cast()) },
            );
            // SAFETY: capacity is at least base + groups * 8 and w <= i, so the 8 lanes
            // written at base + w stay within it.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(base + w).cast(), idx) };
            w += m.count_ones() as usize;
        }
        // SAFETY: the first w entries past base were written above.
        unsafe { out.set_len(base + w) };
        cull_objects_portable(o, planes, layer_mask, need, range.start + groups * 8..range.end, out);
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
        cull_range(&o, &CullBlocks::default(), &f, 1, false, 0..list.len(), &mut out);
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
        cull_range(&Objects::default(), &CullBlocks::default(), &f, u16::MAX, false, 0..0, &mut out);
        assert!(out.is_empty());
        let mut o = objects(&[(Vec3::ZERO, Vec3::ONE), (Vec3::ZERO, Vec3::ONE)]);
        o.layer[1] = 3;
        o.flags[0] = 0;
        cull_range(&o, &CullBlocks::default(), &f, 1 << 3, false, 0..2, &mut out);
        assert_eq!(out, vec![1]);
        out.clear();
        cull_range(&o, &CullBlocks::default(), &f, u16::MAX, true, 0..2, &mut out);
        assert_eq!(out, vec![1], "shadow views see only casters");
    }
    fn random_objects(n: usize, seed: u64, spread: f32, coherent: bool) -> Objects {
        let mut s = seed;
        let mut rnd = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            let c = if coherent {
                // Rows along x, like a city inserted street by street.
                let t = i as f32 / n as f32;
                Vec3::new((t * 40.0).fract() * 2.0 - 1.0, rnd() * 0.05, t * 2.0 - 1.0) * spread
            } else {
                Vec3::new(rnd(), rnd() * 0.5, rnd()) * spread
            };
            list.push((c, Vec3::new(rnd().abs(), rnd().abs() * 3.0, rnd().abs())));
        }
        let mut o = objects(&list);
        for i in 0..n {
            o.layer[i] = (i % 7) as u8;
            o.flags[i] = if i % 5 == 0 { 0 } else { CASTS_SHADOWS };
        }
        o
    }

    fn frustums() -> Vec<Frustum> {
        let mut v = vec![camera()];
        for k in 0..24 {
            let a = k as f32 * 0.7;
            let eye = Vec3::new(a.cos() * 60.0, 5.0 + k as f32, a.sin() * 60.0);
            let proj = Mat4::perspective_rh(0.4 + 0.05 * k as f32, 1.7, 0.5, 40.0 + 10.0 * k as f32);
            v.push(Frustum::from_view_proj(&(proj * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y))));
            let ortho = Mat4::orthographic_rh(-20.0, 15.0, -10.0, 30.0, 0.1, 200.0);
            v.push(Frustum::from_view_proj(&(ortho * Mat4::look_at_rh(eye, Vec3::new(3.0, 0.0, -4.0), Vec3::Y))));
        }
        v
    }

    #[test]
    fn simd_loop_matches_portable_loop_bit_for_bit() {
        if !simd_available() {
            return;
        }
        let mut o = random_objects(5_003, 9, 100.0, false);
        // Non-finite bounds, points exactly on planes, layers past 16.
        o.cx[3] = f32::NAN;
        o.ex[4] = f32::INFINITY;
        o.cz[5] = f32::NEG_INFINITY;
        o.layer[6] = 20;
        o.layer[7] = 40;
        let f = camera();
        for (k, p) in f.planes.iter().enumerate() {
            let on = -p.truncate() * p.w;
            (o.cx[10 + k], o.cy[10 + k], o.cz[10 + k]) = (on.x, on.y, on.z);
            (o.ex[10 + k], o.ey[10 + k], o.ez[10 + k]) = (0.0, 0.0, 0.0);
        }
        for f in frustums() {
            for (mask, need) in [(u16::MAX, 0), (0b1010_0101, 0), (u16::MAX, CASTS_SHADOWS)] {
                for planes in [&f.planes[..], &[]] {
                    for range in [0..o.len(), 1..o.len() - 3, 7..8, 0..0] {
                        let (mut a, mut b) = (vec![99], vec![99]);
                        cull_objects(&o, planes, mask, need, range.clone(), true, &mut a);
                        cull_objects_portable(&o, planes, mask, need, range, &mut b);
                        assert_eq!(a, b);
                    }
                }
            }
        }
    }

    #[test]
    fn block_hierarchy_gives_exactly_the_per_object_result() {
        for (coherent, spread) in [(true, 100.0), (false, 100.0), (true, 1e5), (true, 0.01)] {
            let mut o = random_objects(20_000, 3, spread, coherent);
            o.cy[777] = f32::NAN; // a block with non-finite bounds: tested per object
            let blocks = CullBlocks::build(&o);
            assert_eq!(blocks.len(), 20_000usize.div_ceil(CULL_BLOCK));
            let mut classes = [0usize; 3];
            for f in frustums() {
                for b in 0..blocks.len() {
                    classes[blocks.class(b, &f) as usize] += 1;
                }
                for (mask, shadow) in [(u16::MAX, false), (0b0110, true)] {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    cull_range(&o, &blocks, &f, mask, shadow, 0..o.len(), &mut a);
                    cull_range(&o, &CullBlocks::default(), &f, mask, shadow, 0..o.len(), &mut b);
                    assert_eq!(a, b);
                    // An unaligned range gives the same objects.
                    let (mut c, mut d) = (Vec::new(), Vec::new());
                    cull_range(&o, &blocks, &f, mask, shadow, 300..19_999, &mut c);
                    cull_range(&o, &CullBlocks::default(), &f, mask, shadow, 300..19_999, &mut d);
                    assert_eq!(c, d);
                }
            }
            if coherent && spread == 100.0 {
                // The hierarchy does something on coherent data: every class occurs.
                assert!(classes.iter().all(|&c| c > 0), "{classes:?}");
            }
        }
    }

    #[test]
    fn block_bounds_follow_marked_changes() {
        let mut o = random_objects(3_000, 5, 50.0, true);
        let mut blocks = CullBlocks::build(&o);
        let f = camera();
        // Move objects far away and into view; only marked blocks are recomputed.
        for i in (0..3_000).step_by(97) {
            (o.cx[i], o.cy[i], o.cz[i]) = if i % 2 == 0 { (0.0, 0.0, 0.0) } else { (1e4, 0.0, 0.0) };
            blocks.mark(i);
        }
        // Grow and shrink the array: a mismatched count falls back to per-object tests.
        o.cx.push(0.0);
        o.cy.push(0.0);
        o.cz.push(0.0);
        o.ex.push(1.0);
        o.ey.push(1.0);
        o.ez.push(1.0);
        o.layer.push(0);
        o.flags.push(0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        cull_range(&o, &blocks, &f, u16::MAX, false, 0..o.len(), &mut a);
        cull_range(&o, &CullBlocks::default(), &f, u16::MAX, false, 0..o.len(), &mut b);
        assert_eq!(a, b, "stale count");
        blocks.mark(o.len() - 1);
        blocks.refresh(&o);
        a.clear();
        cull_range(&o, &blocks, &f, u16::MAX, false, 0..o.len(), &mut a);
        assert_eq!(a, b, "refreshed");
        assert!(a.contains(&3_000) && a.contains(&0));
    }
}
