//! The AVX2 culling loop, reachable only through an [`Avx2`] token: proof, made by the
//! CPU-feature check alone, that the running CPU has AVX2.

use glam::Vec4;

use super::{CullFilter, CullInput};

/// Proof that the running CPU has AVX2. Only [`Avx2::detect`] makes one, so safe code can
/// never reach the AVX2 loop on a CPU without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2 {
    _proof: (),
}

impl Avx2 {
    /// The token, if this CPU has AVX2.
    pub fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Self { _proof: () });
        }
        None
    }
}

/// Culls `range` with the AVX2 loop (the tail past a multiple of eight with the portable
/// one); bit-identical to the portable loop.
pub(super) fn cull(
    token: Avx2,
    input: &CullInput<'_>,
    planes: &[Vec4],
    filter: CullFilter,
    range: std::ops::Range<usize>,
    out: &mut Vec<u32>,
) {
    let _ = token;
    #[cfg(target_arch = "x86_64")]
    {
        let groups = range.len() / 8;
        let split = range.start + groups * 8;
        // SAFETY: `token` exists, so `Avx2::detect` saw AVX2 on this CPU.
        unsafe { x86::cull(input, planes, filter, range.start, groups, out) };
        super::cull_portable(input, planes, filter, split..range.end, out);
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("no Avx2 token exists off x86_64: {:?}", (input.len(), planes.len(), filter, range, out.len()));
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use glam::Vec4;

    use super::{CullFilter, CullInput};

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

    /// Eight objects per step over `groups` groups from `start`: the layer and flag checks
    /// and every plane in registers, then the visible lanes' indices packed with a table
    /// lookup and stored 8 wide (the store may run past the kept count into reserved
    /// capacity; only kept lanes count).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    ///
    /// # Panics
    /// If `start + groups * 8` lies past the end of `input`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cull(
        input: &CullInput<'_>,
        planes: &[Vec4],
        filter: CullFilter,
        start: usize,
        groups: usize,
        out: &mut Vec<u32>,
    ) {
        let r = start..start + groups * 8;
        // Slicing checks every bound once: the loads below stay inside these slices.
        let (cx, cy, cz) = (&input.cx[r.clone()], &input.cy[r.clone()], &input.cz[r.clone()]);
        let (ex, ey, ez) = (&input.ex[r.clone()], &input.ey[r.clone()], &input.ez[r.clone()]);
        let (layer, flags) = (&input.layer[r.clone()], &input.flags[r]);
        out.reserve(groups * 8);
        let base = out.len();
        let mut w = 0usize;
        let sign = _mm256_set1_ps(-0.0);
        let mask = _mm256_set1_epi32(i32::from(filter.layer_mask));
        let (one, low5) = (_mm256_set1_epi32(1), _mm256_set1_epi32(31));
        let needv = _mm256_set1_epi32(i32::from(filter.required_flags));
        for g in 0..groups {
            let i = g * 8;
            debug_assert!(i + 8 <= cx.len() && i + 8 <= layer.len());
            // SAFETY: i + 8 <= groups * 8, the length of every slice above; the byte loads
            // read 8 bytes, the f32 loads 8 floats.
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
            // SAFETY: COMPACT rows are 8 u32 (32 bytes); unaligned load.
            let lanes = unsafe { _mm256_loadu_si256(COMPACT[m].as_ptr().cast()) };
            let idx = _mm256_add_epi32(_mm256_set1_epi32((start + i) as i32), lanes);
            debug_assert!(base + w + 8 <= out.capacity(), "8-lane store past the reserved capacity");
            // SAFETY: capacity is at least base + groups * 8 (reserved above) and w <= i,
            // so the 8 lanes written at base + w stay within it.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(base + w).cast(), idx) };
            w += m.count_ones() as usize;
        }
        debug_assert!(w <= groups * 8);
        // SAFETY: the first w entries past base were written above (each store wrote its
        // kept lanes at base + w before w advanced past them).
        unsafe { out.set_len(base + w) };
    }
}
