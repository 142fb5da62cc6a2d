//! Frustum culling over structure-of-arrays bounds.
//!
//! The input is one `f32` array per coordinate of the world AABBs (centers and half
//! extents) plus a layer and a flags byte per object ([`CullInput`]), so the loops stream
//! memory and vectorize. Two levels:
//! - [`CullBlocks`]: conservative bounds of every [`CULL_BLOCK`] consecutive objects; a
//!   block outside one plane is skipped, a block inside every plane is taken whole; a
//!   block partly inside is looked at again in fine blocks of [`CULL_FINE`] objects;
//! - the per-object test for the rest, in an AVX2 loop where the CPU has it ([`CullLoop`])
//!   and a portable one otherwise; both give bit-identical results.

mod blocks;
mod casters;
mod simd;

pub use blocks::CullBlocks;
pub use casters::center_of_projection;
pub use simd::Avx2;

use glam::{Mat4, Vec3, Vec4};

use blocks::Class;

/// Objects per culling block: the unit of the bounds hierarchy ([`CullBlocks`]) and of the
/// inner loops, which run over a block so they stream the bounds arrays and vectorize.
pub const CULL_BLOCK: usize = 256;
/// Objects per fine block: the hierarchy's second level, for blocks partly in a frustum.
pub const CULL_FINE: usize = 32;

/// Most planes a [`Frustum`] holds: a view's six and, for a view limited to the casters
/// of a region ([`Frustum::casters_of`]), up to six of the region's.
pub const MAX_PLANES: usize = 12;

/// The planes an object's bounds must touch the inside of, `n·p + d >= 0` inside: a
/// view's frustum, and where the view draws only what can cast a shadow into a region,
/// some of the region's planes ([`Frustum::casters_of`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    /// Planes as (nx, ny, nz, d), normalized; the first `len` are used.
    planes: [Vec4; MAX_PLANES],
    len: usize,
}

impl Frustum {
    /// Extracts the planes from a view-projection matrix (depth 0..1).
    pub fn from_view_proj(m: &Mat4) -> Self {
        let r0 = m.row(0);
        let r1 = m.row(1);
        let r2 = m.row(2);
        let r3 = m.row(3);
        let mut planes = [Vec4::ZERO; MAX_PLANES];
        planes[..6].copy_from_slice(&[r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2]);
        for p in &mut planes[..6] {
            let len = p.truncate().length();
            if len > 0.0 {
                *p /= len;
            }
        }
        Self { planes, len: 6 }
    }

    /// The planes in use (six for a view's frustum, up to [`MAX_PLANES`]).
    #[inline]
    pub fn planes(&self) -> &[Vec4] {
        &self.planes[..self.len]
    }

    /// Whether an AABB (center, half extents) touches the frustum.
    #[inline]
    pub fn intersects(&self, c: Vec3, e: Vec3) -> bool {
        self.planes().iter().all(|p| {
            let n = p.truncate();
            n.dot(c) + p.w >= -n.abs().dot(e)
        })
    }
}

/// What culling reads of each object, one slice per field (index `i` of every slice is
/// object `i`): world AABB centers and half extents, render layer, flags.
#[derive(Clone, Copy, Debug)]
pub struct CullInput<'a> {
    /// AABB center x.
    pub cx: &'a [f32],
    /// AABB center y.
    pub cy: &'a [f32],
    /// AABB center z.
    pub cz: &'a [f32],
    /// AABB half extent x.
    pub ex: &'a [f32],
    /// AABB half extent y.
    pub ey: &'a [f32],
    /// AABB half extent z.
    pub ez: &'a [f32],
    /// Render layer: bit `layer & 31` of the filter's layer mask must be set.
    pub layer: &'a [u8],
    /// Flags: must contain the filter's required flags.
    pub flags: &'a [u8],
}

impl CullInput<'_> {
    /// Number of objects.
    #[inline]
    pub fn len(&self) -> usize {
        self.cx.len()
    }

    /// Whether there are no objects.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.cx.is_empty()
    }

    /// Whether every slice has the same length (the loops index all of them by object).
    pub fn is_consistent(&self) -> bool {
        let n = self.len();
        [self.cy.len(), self.cz.len(), self.ex.len(), self.ey.len(), self.ez.len(), self.layer.len(), self.flags.len()]
            .iter()
            .all(|&l| l == n)
    }
}

/// Which objects a view sees besides the frustum test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CullFilter {
    /// Bit `l` set: objects on layer `l` are seen.
    pub layer_mask: u16,
    /// Flags an object must have (a shadow view sees only casters).
    pub required_flags: u8,
}

/// The per-object loop in use: AVX2 where the CPU has it (the token proves it), else the
/// portable loop. Both give bit-identical results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CullLoop {
    /// The portable loop (autovectorized by the compiler where it can).
    Portable,
    /// Eight objects per step with AVX2.
    Avx2(Avx2),
}

impl CullLoop {
    /// The fastest loop this CPU runs.
    pub fn best() -> Self {
        Avx2::detect().map_or(Self::Portable, Self::Avx2)
    }
}

/// Appends the visible indices in `range` to `out`, in ascending order: blocks classified
/// by `blocks` first (pass `&CullBlocks::default()` to test every object), then the objects
/// of partially visible blocks, with the per-object loop `kernel`.
///
/// # Panics
/// If `range` lies outside `input` or `input`'s slices differ in length.
pub fn cull_range(
    input: &CullInput<'_>,
    blocks: &CullBlocks,
    frustum: &Frustum,
    filter: CullFilter,
    kernel: CullLoop,
    range: std::ops::Range<usize>,
    out: &mut Vec<u32>,
) {
    assert!(input.is_consistent(), "cull input slices differ in length");
    assert!(range.start <= range.end && range.end <= input.len(), "cull range outside the input");
    let hierarchy = blocks.covers(input.len());
    out.reserve(range.len());
    let mut start = range.start;
    while start < range.end {
        let block = start / CULL_BLOCK;
        let end = ((block + 1) * CULL_BLOCK).min(range.end);
        let class = if hierarchy { blocks.class(block, frustum) } else { Class::Partial };
        if class == Class::Partial && hierarchy && blocks.split(block) {
            // Its fine blocks, each run of one class at once.
            let mut run = (start, Class::Outside);
            let mut s = start;
            while s < end {
                let fine = s / CULL_FINE;
                let c = blocks.fine_class(fine, frustum);
                if c != run.1 {
                    cull_class(input, frustum, filter, kernel, (run.0..s, run.1), out);
                    run = (s, c);
                }
                s = ((fine + 1) * CULL_FINE).min(end);
            }
            cull_class(input, frustum, filter, kernel, (run.0..end, run.1), out);
        } else {
            cull_class(input, frustum, filter, kernel, (start..end, class), out);
        }
        start = end;
    }
}

/// Culls the objects in a range of one class: none, all (the layer and flag checks), or
/// each against the planes.
fn cull_class(
    input: &CullInput<'_>,
    frustum: &Frustum,
    filter: CullFilter,
    kernel: CullLoop,
    (range, class): (std::ops::Range<usize>, Class),
    out: &mut Vec<u32>,
) {
    match class {
        Class::Outside => {}
        Class::Inside => cull_objects(input, &[], filter, range, kernel, out),
        Class::Partial => cull_objects(input, frustum.planes(), filter, range, kernel, out),
    }
}

/// Tests objects against all of `planes` (none: only the layer and flag checks).
fn cull_objects(
    input: &CullInput<'_>,
    planes: &[Vec4],
    filter: CullFilter,
    range: std::ops::Range<usize>,
    kernel: CullLoop,
    out: &mut Vec<u32>,
) {
    match kernel {
        CullLoop::Avx2(token) => simd::cull(token, input, planes, filter, range, out),
        CullLoop::Portable => cull_portable(input, planes, filter, range, out),
    }
}

/// The portable loop over at most [`CULL_BLOCK`] objects per step: plane by plane over a
/// byte mask, then a branch-free compaction.
fn cull_portable(
    input: &CullInput<'_>,
    planes: &[Vec4],
    filter: CullFilter,
    range: std::ops::Range<usize>,
    out: &mut Vec<u32>,
) {
    let mut vis = [0u8; CULL_BLOCK];
    let mask = u32::from(filter.layer_mask);
    let need = filter.required_flags;
    let mut start = range.start;
    while start < range.end {
        let end = (start + CULL_BLOCK).min(range.end);
        let n = end - start;
        let (layer, flags) = (&input.layer[start..end], &input.flags[start..end]);
        for i in 0..n {
            vis[i] = u8::from((mask >> (layer[i] & 31)) & 1 == 1 && flags[i] & need == need);
        }
        if !planes.is_empty() {
            let (cx, cy, cz) = (&input.cx[start..end], &input.cy[start..end], &input.cz[start..end]);
            let (ex, ey, ez) = (&input.ex[start..end], &input.ey[start..end], &input.ez[start..end]);
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

#[cfg(test)]
mod tests {
    use glam::{Mat4, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::blocks::Class;
    use super::*;

    const CASTER: u8 = 1;

    /// Owned structure-of-arrays objects for the tests.
    #[derive(Default)]
    struct Soa {
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
        fn new(list: &[(Vec3, Vec3)]) -> Self {
            let mut o = Self::default();
            for &(c, e) in list {
                o.push(c, e, 0, CASTER);
            }
            o
        }

        fn push(&mut self, c: Vec3, e: Vec3, layer: u8, flags: u8) {
            self.cx.push(c.x);
            self.cy.push(c.y);
            self.cz.push(c.z);
            self.ex.push(e.x);
            self.ey.push(e.y);
            self.ez.push(e.z);
            self.layer.push(layer);
            self.flags.push(flags);
        }

        fn len(&self) -> usize {
            self.cx.len()
        }

        fn input(&self) -> CullInput<'_> {
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
    }

    fn filter(layer_mask: u16, required_flags: u8) -> CullFilter {
        CullFilter { layer_mask, required_flags }
    }

    /// Culls every object of `o` in `range` without the hierarchy, with the best loop.
    fn cull_all(o: &Soa, f: &Frustum, flt: CullFilter, range: std::ops::Range<usize>) -> Vec<u32> {
        let mut out = Vec::new();
        cull_range(&o.input(), &CullBlocks::default(), f, flt, CullLoop::best(), range, &mut out);
        out
    }

    /// Brute force: an AABB is outside iff all 8 corners are outside one plane.
    fn brute(f: &Frustum, c: Vec3, e: Vec3) -> bool {
        f.planes().iter().all(|p| {
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

    /// A signed unit value from `rng`.
    fn signed(rng: &mut Pcg64Mcg) -> f32 {
        rng.gen_range(-1.0..1.0)
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
        // Points on each plane (the plane's closest point to the origin): within rounding of it.
        for p in f.planes() {
            list.push((-p.truncate() * p.w, Vec3::ZERO));
        }
        let mut rng = Pcg64Mcg::seed_from_u64(12345);
        let random = if cfg!(miri) { 200 } else { 20_000 };
        for _ in 0..random {
            let c = Vec3::new(signed(&mut rng) * 80.0, signed(&mut rng) * 40.0, signed(&mut rng) * 120.0);
            let e = Vec3::new(rng.gen::<f32>() * 5.0, rng.gen::<f32>() * 5.0, rng.gen::<f32>() * 5.0);
            list.push((c, e));
        }
        let o = Soa::new(&list);
        let out = cull_all(&o, &f, filter(1, 0), 0..list.len());
        let expect: Vec<u32> =
            (0..list.len() as u32).filter(|&i| brute(&f, list[i as usize].0, list[i as usize].1)).collect();
        assert_eq!(out, expect);
        assert!(out.contains(&0) && !out.contains(&1) && out.contains(&2) && !out.contains(&4));
        assert!(out.len() > 11 && out.len() < list.len(), "the random objects are partly visible: {}", out.len());
    }

    #[test]
    fn empty_scene_and_layers() {
        let f = camera();
        assert!(cull_all(&Soa::default(), &f, filter(u16::MAX, 0), 0..0).is_empty());
        let mut o = Soa::new(&[(Vec3::ZERO, Vec3::ONE), (Vec3::ZERO, Vec3::ONE)]);
        o.layer[1] = 3;
        o.flags[0] = 0;
        assert_eq!(cull_all(&o, &f, filter(1 << 3, 0), 0..2), vec![1]);
        assert_eq!(cull_all(&o, &f, filter(u16::MAX, CASTER), 0..2), vec![1], "shadow views see only casters");
    }

    fn random_objects(n: usize, seed: u64, spread: f32, coherent: bool) -> Soa {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut o = Soa::default();
        for i in 0..n {
            let c = if coherent {
                // Rows along x, like a city inserted street by street.
                let t = i as f32 / n as f32;
                Vec3::new((t * 40.0).fract() * 2.0 - 1.0, signed(&mut rng) * 0.05, t * 2.0 - 1.0) * spread
            } else {
                Vec3::new(signed(&mut rng), signed(&mut rng) * 0.5, signed(&mut rng)) * spread
            };
            let e = Vec3::new(rng.gen(), rng.gen::<f32>() * 3.0, rng.gen());
            o.push(c, e, (i % 7) as u8, if i % 5 == 0 { 0 } else { CASTER });
        }
        o
    }

    fn frustums() -> Vec<Frustum> {
        let mut v = vec![camera()];
        for k in 0..if cfg!(miri) { 1 } else { 24 } {
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
        let Some(token) = Avx2::detect() else { return };
        let mut o = random_objects(if cfg!(miri) { 203 } else { 5_003 }, 9, 100.0, false);
        // Non-finite bounds, points exactly on planes, layers past 16.
        o.cx[3] = f32::NAN;
        o.ex[4] = f32::INFINITY;
        o.cz[5] = f32::NEG_INFINITY;
        o.layer[6] = 20;
        o.layer[7] = 40;
        let f = camera();
        for (k, p) in f.planes().iter().enumerate() {
            let on = -p.truncate() * p.w;
            (o.cx[10 + k], o.cy[10 + k], o.cz[10 + k]) = (on.x, on.y, on.z);
            (o.ex[10 + k], o.ey[10 + k], o.ez[10 + k]) = (0.0, 0.0, 0.0);
        }
        let input = o.input();
        let mut kept = 0;
        for f in frustums() {
            for flt in [filter(u16::MAX, 0), filter(0b1010_0101, 0), filter(u16::MAX, CASTER)] {
                for planes in [f.planes(), &[]] {
                    for range in [0..o.len(), 1..o.len() - 3, 7..8, 0..0] {
                        let (mut a, mut b) = (vec![99], vec![99]);
                        cull_objects(&input, planes, flt, range.clone(), CullLoop::Avx2(token), &mut a);
                        cull_objects(&input, planes, flt, range, CullLoop::Portable, &mut b);
                        assert_eq!(a, b);
                        kept += a.len() - 1;
                    }
                }
            }
        }
        assert!(kept > 0, "some objects are visible");
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code over the AVX2 loop, which simd_loop_matches_portable_loop_bit_for_bit checks")]
    fn block_hierarchy_gives_exactly_the_per_object_result() {
        let n = if cfg!(miri) { 520 } else { 20_000 };
        let cases: &[(bool, f32)] = if cfg!(miri) {
            &[(true, 100.0), (false, 1e5)]
        } else {
            &[(true, 100.0), (false, 100.0), (true, 1e5), (true, 0.01)]
        };
        for &(coherent, spread) in cases {
            let mut o = random_objects(n, 3, spread, coherent);
            o.cy[n / 2] = f32::NAN; // a block with non-finite bounds: tested per object
            let blocks = CullBlocks::build(&o.input());
            assert_eq!(blocks.len(), n.div_ceil(CULL_BLOCK));
            // Rows split their blocks into fine ones; objects in no order do not (their
            // fine blocks are about as wide as the block), nor rows much narrower than
            // their objects.
            let split = (0..blocks.len()).filter(|&b| blocks.split(b)).count();
            let rows = coherent && spread >= 100.0;
            assert_eq!(split > 0, rows, "{split} of {} blocks split", blocks.len());
            // (Miri's 520 objects make three blocks: one holds the NaN, one eight objects.)
            assert!(!rows || cfg!(miri) || split > blocks.len() / 2, "{split} of {} blocks split", blocks.len());
            let (mut classes, mut fine) = ([0usize; 3], [0usize; 3]);
            for f in frustums() {
                for b in 0..blocks.len() {
                    let class = blocks.class(b, &f);
                    classes[class as usize] += 1;
                    if class == Class::Partial {
                        let fines = b * CULL_BLOCK / CULL_FINE..((b + 1) * CULL_BLOCK).min(n).div_ceil(CULL_FINE);
                        fines.for_each(|k| fine[blocks.fine_class(k, &f) as usize] += 1);
                    }
                }
                for flt in [filter(u16::MAX, 0), filter(0b0110, CASTER)] {
                    for range in [0..n, 300..n - 1] {
                        let mut a = Vec::new();
                        cull_range(&o.input(), &blocks, &f, flt, CullLoop::best(), range.clone(), &mut a);
                        assert_eq!(a, cull_all(&o, &f, flt, range));
                    }
                }
            }
            if coherent && spread == 100.0 && !cfg!(miri) {
                // The hierarchy does something on coherent data: every class occurs (the
                // few large blocks of miri's small input need not).
                assert!(classes.iter().all(|&c| c > 0), "{classes:?}");
                // And so does the second level within blocks partly in view.
                assert!(fine.iter().all(|&c| c > 0), "{fine:?}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code over the AVX2 loop, which simd_loop_matches_portable_loop_bit_for_bit checks")]
    fn block_bounds_follow_marked_changes() {
        let n = if cfg!(miri) { 600 } else { 3_000 };
        let mut o = random_objects(n, 5, 50.0, true);
        let mut blocks = CullBlocks::build(&o.input());
        let f = camera();
        // Move objects far away and into view; only marked blocks are recomputed.
        for i in (0..n).step_by(97) {
            (o.cx[i], o.cy[i], o.cz[i]) = if i % 2 == 0 { (0.0, 0.0, 0.0) } else { (1e4, 0.0, 0.0) };
            blocks.mark(i);
        }
        // Grow the arrays: a mismatched count falls back to per-object tests.
        o.push(Vec3::ZERO, Vec3::ONE, 0, 0);
        let all = filter(u16::MAX, 0);
        let mut a = Vec::new();
        cull_range(&o.input(), &blocks, &f, all, CullLoop::best(), 0..o.len(), &mut a);
        let b = cull_all(&o, &f, all, 0..o.len());
        assert_eq!(a, b, "stale count");
        assert!(!blocks.covers(o.len()));
        blocks.mark(o.len() - 1);
        blocks.refresh(&o.input());
        assert!(blocks.covers(o.len()));
        a.clear();
        cull_range(&o.input(), &blocks, &f, all, CullLoop::best(), 0..o.len(), &mut a);
        assert_eq!(a, b, "refreshed");
        assert!(a.contains(&(n as u32)) && a.contains(&0));
        // Block 0 holds object 0, moved to the origin: its refreshed bounds reach into view.
        assert_ne!(blocks.class(97 / CULL_BLOCK, &f), Class::Outside);
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code over the AVX2 loop, which simd_loop_matches_portable_loop_bit_for_bit checks")]
    fn refreshed_blocks_equal_blocks_built_anew_one_word_or_many_dirty() {
        // Three words of 64 blocks and a part (only the part under miri).
        let words = if cfg!(miri) { 0 } else { 3 };
        let n = words * 64 * CULL_BLOCK + 3 * CULL_BLOCK + 5;
        let mut o = random_objects(n, 9, 50.0, true);
        let mut blocks = CullBlocks::build(&o.input());
        let mut rng = Pcg64Mcg::seed_from_u64(4);
        // A few objects of the last word (refreshed on the calling thread), then some of
        // every word (in parallel), then one object of the first (the calling thread).
        for moved in [vec![n - 1, n - 300], (0..n).step_by(4099).collect(), vec![1]] {
            for &i in &moved {
                (o.cx[i], o.cy[i], o.cz[i]) = (signed(&mut rng) * 900.0, 0.0, signed(&mut rng) * 900.0);
                blocks.mark(i);
            }
            let dirty = blocks.dirty_words();
            assert_eq!(dirty == 1, moved.len() < 3 || words == 0, "{moved:?}: {dirty} words");
            blocks.refresh(&o.input());
            assert_eq!(blocks.dirty_words(), 0);
            assert_eq!(blocks.bounds_bits(), CullBlocks::build(&o.input()).bounds_bits(), "{moved:?}");
            assert_eq!(blocks.splits(), CullBlocks::build(&o.input()).splits(), "{moved:?}");
        }
        // Removing objects drops their blocks, marked or not.
        blocks.mark(n - 1);
        o = random_objects(n / 2, 9, 50.0, true);
        blocks.mark_range(0, n / 2);
        blocks.refresh(&o.input());
        assert_eq!(blocks.bounds_bits(), CullBlocks::build(&o.input()).bounds_bits());
        assert_eq!(blocks.splits(), CullBlocks::build(&o.input()).splits());
    }

    #[test]
    #[should_panic(expected = "cull range outside the input")]
    fn a_range_past_the_input_panics_before_reading() {
        let o = Soa::new(&[(Vec3::ZERO, Vec3::ONE)]);
        cull_all(&o, &camera(), filter(u16::MAX, 0), 0..2);
    }
}
