//! The 64-bit sort key: one layout, each field's shift derived from the widths above it.
//!
//! Most significant first:
//!
//! ```text
//! opaque:       layer 4 | transparent 1 | pipeline 15 | material 16 | mesh 12 | depth 16 (near first)
//! transparent:  layer 4 | transparent 1 | depth 16 (far first) | pipeline 15 | material 16 | mesh 12
//! ```
//!
//! The two depths differ. A transparent item's is its distance over the view's far
//! distance in 65,536 even steps (`depth_of_squared`): blending needs the order. An opaque
//! item's is the distance in log-spaced steps, eight per doubling (each 7-12 % farther
//! than the last: `opaque_depth`): front to back where it keeps overdraw down, while objects
//! at nearly the same distance tie and keep object order. A finer field reorders a
//! state's objects every frame the camera moves (with indexed materials a state holds
//! hundreds), and the sort's input, last frame's order, then stops being nearly sorted.
//!
//! `pipeline`, `material` and `mesh` are the state's dense ids, cut to their widths: the
//! pipeline state (shader and variant: the frame's shadow-state id, numbered in material
//! order), the dense material, the dense mesh. Equal draws are adjacent and merge into
//! instanced batches. While every id fits its field (`exact`) the three fields tell
//! draw states apart exactly, so the batch stage finds batch boundaries from the sorted
//! keys alone (`state_of`); past that, ids share a field value, which only costs
//! ordering: batch boundaries then compare the real ids. A shadow pass has no material
//! binding: its material field is 0. The pass itself is not in the key: every queue holds
//! one pass.

use std::fmt;

use crate::frame_graph::Queue;
use crate::material::{MaterialFrame, PassKind};
use crate::scene::Objects;
use crate::view::View;

/// Bits of the render layer.
pub const LAYER_BITS: u32 = 4;
/// Bits of the transparency flag.
pub const TRANSPARENT_BITS: u32 = 1;
/// Bits of the pipeline state (shader and variant).
pub const PIPELINE_BITS: u32 = 15;
/// Bits of the material id.
pub const MATERIAL_BITS: u32 = 16;
/// Bits of the mesh id.
pub const MESH_BITS: u32 = 12;
/// Bits of the quantized depth.
pub const DEPTH_BITS: u32 = 16;
/// Mantissa bits of the squared distance that [`opaque_depth`] keeps: 4 steps per
/// doubling of the squared distance, 8 per doubling of the distance.
const OPAQUE_DEPTH_MANTISSA_BITS: u32 = 2;

/// One field of the key: `width` bits from bit `shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    shift: u32,
    width: u32,
}

impl Field {
    /// The field of `width` bits right below this one.
    const fn below(self, width: u32) -> Self {
        Self { shift: self.shift - width, width }
    }

    const fn mask(self) -> u64 {
        (1u64 << self.width) - 1
    }

    #[inline]
    fn put(self, value: u64) -> u64 {
        debug_assert!(value <= self.mask(), "sort-key field of {} bits overflows: {value:#x}", self.width);
        (value & self.mask()) << self.shift
    }

    #[inline]
    fn get(self, key: u64) -> u64 {
        (key >> self.shift) & self.mask()
    }
}

/// The top of the key: fields are laid out from here down.
const TOP: Field = Field { shift: 64, width: 0 };
const LAYER: Field = TOP.below(LAYER_BITS);
const TRANSPARENT: Field = LAYER.below(TRANSPARENT_BITS);

/// Opaque items: state first (batches form), then depth front to back.
mod opaque {
    use super::*;
    pub(super) const PIPELINE: Field = TRANSPARENT.below(PIPELINE_BITS);
    pub(super) const MATERIAL: Field = PIPELINE.below(MATERIAL_BITS);
    pub(super) const MESH: Field = MATERIAL.below(MESH_BITS);
    pub(super) const DEPTH: Field = MESH.below(DEPTH_BITS);
}

/// Transparent items: depth back to front first (blending needs the order), then state.
mod transparent {
    use super::*;
    pub(super) const DEPTH: Field = TRANSPARENT.below(DEPTH_BITS);
    pub(super) const PIPELINE: Field = DEPTH.below(PIPELINE_BITS);
    pub(super) const MATERIAL: Field = PIPELINE.below(MATERIAL_BITS);
    pub(super) const MESH: Field = MATERIAL.below(MESH_BITS);
}

// Both layouts fill the 64 bits exactly.
const _: () = assert!(opaque::DEPTH.shift == 0 && transparent::MESH.shift == 0);

/// The fields of a sort key, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SortKeyFields {
    /// Render layer (0..16): the most significant field.
    pub layer: u8,
    /// Alpha blended: sorted by depth back to front before state.
    pub transparent: bool,
    /// The pipeline state's id (shader and variant; the frame's shadow-state id), its low
    /// [`PIPELINE_BITS`] bits.
    pub pipeline: u16,
    /// The dense material index, its low [`MATERIAL_BITS`] bits; 0 in a shadow pass.
    pub material: u16,
    /// The dense mesh index, its low [`MESH_BITS`] bits.
    pub mesh: u16,
    /// Quantized distance from the eye, 0 = nearest ([`DEPTH_BITS`] bits): linear up to
    /// the view's far distance and stored inverted for transparent items, log-spaced for
    /// opaque ones (the module's docs).
    pub depth: u16,
}

/// A packed 64-bit sort key. Its `Debug` form shows the decoded fields.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SortKey(pub u64);

impl SortKey {
    /// Packs `f`. Debug builds check that every field fits its width.
    #[inline]
    pub fn encode(f: &SortKeyFields) -> Self {
        let top = LAYER.put(u64::from(f.layer)) | TRANSPARENT.put(u64::from(f.transparent));
        let (pipe, mat, mesh, depth) =
            (u64::from(f.pipeline), u64::from(f.material), u64::from(f.mesh), u64::from(f.depth));
        Self(if f.transparent {
            use transparent::*;
            top | DEPTH.put(DEPTH.mask() - depth) | PIPELINE.put(pipe) | MATERIAL.put(mat) | MESH.put(mesh)
        } else {
            use opaque::*;
            top | PIPELINE.put(pipe) | MATERIAL.put(mat) | MESH.put(mesh) | DEPTH.put(depth)
        })
    }

    /// Unpacks the fields ([`SortKey::encode`] of the result gives the key back).
    pub fn decode(self) -> SortKeyFields {
        let k = self.0;
        let transparent = TRANSPARENT.get(k) == 1;
        let layer = LAYER.get(k) as u8;
        if transparent {
            use transparent::*;
            SortKeyFields {
                layer,
                transparent,
                pipeline: PIPELINE.get(k) as u16,
                material: MATERIAL.get(k) as u16,
                mesh: MESH.get(k) as u16,
                depth: (DEPTH.mask() - DEPTH.get(k)) as u16,
            }
        } else {
            use opaque::*;
            SortKeyFields {
                layer,
                transparent,
                pipeline: PIPELINE.get(k) as u16,
                material: MATERIAL.get(k) as u16,
                mesh: MESH.get(k) as u16,
                depth: DEPTH.get(k) as u16,
            }
        }
    }

    /// The key with the pass it was made for, for traces: `Forward L0 opaque state
    /// 1a2b/3c4d/5e6 depth 1234`.
    pub fn display(self, pass: PassKind) -> impl fmt::Display {
        struct Shown(SortKey, PassKind);
        impl fmt::Display for Shown {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:?} {}", self.1, self.0)
            }
        }
        Shown(self, pass)
    }
}

impl fmt::Display for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.decode();
        write!(
            f,
            "L{} {} state {:04x}/{:04x}/{:03x} depth {}",
            d.layer,
            if d.transparent { "transparent" } else { "opaque" },
            d.pipeline,
            d.material,
            d.mesh,
            d.depth
        )
    }
}

impl fmt::Debug for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SortKey({self} = {:#018x})", self.0)
    }
}

/// The pipeline field of a pipeline state: its dense id (shadow-state id), cut to
/// [`PIPELINE_BITS`] bits.
pub(crate) fn pipeline_field(state: u32) -> u16 {
    (u64::from(state) & opaque::PIPELINE.mask()) as u16
}

/// The material field of a dense material index, cut to [`MATERIAL_BITS`] bits.
pub(crate) fn material_field(material: u32) -> u16 {
    (u64::from(material) & opaque::MATERIAL.mask()) as u16
}

/// The mesh field of a dense mesh index, cut to [`MESH_BITS`] bits.
#[inline]
pub(crate) fn mesh_field(mesh: u32) -> u16 {
    (u64::from(mesh) & opaque::MESH.mask()) as u16
}

/// Whether every id fits its field: with `states` pipeline states (shadow-state ids),
/// `materials` dense material slots and `meshes` dense mesh slots, two keys of one pass
/// have equal [`state_of`] exactly when their items' draw states and meshes are equal.
pub(crate) fn exact(states: usize, materials: usize, meshes: usize) -> bool {
    states <= 1 << PIPELINE_BITS && materials <= 1 << MATERIAL_BITS && meshes <= 1 << MESH_BITS
}

/// Bits of the three state fields together.
const STATE_BITS: u32 = PIPELINE_BITS + MATERIAL_BITS + MESH_BITS;
// The state fields sit right above depth in opaque keys and at the bottom of transparent ones.
const _: () = assert!(opaque::MESH.shift == DEPTH_BITS && transparent::MESH.shift == 0);

/// A key's pipeline, material and mesh fields as one value (`pipeline | material | mesh`,
/// mesh lowest), from either layout: what the batch stage compares.
#[inline]
pub(crate) fn state_of(key: u64) -> u64 {
    let opaque = (!key >> TRANSPARENT.shift) & 1;
    (key >> (opaque as u32 * DEPTH_BITS)) & ((1 << STATE_BITS) - 1)
}

/// The mesh field of a [`state_of`] value.
#[inline]
pub(crate) fn mesh_of_state(state: u64) -> u32 {
    (state & opaque::MESH.mask()) as u32
}

/// The material field of a [`state_of`] value.
#[inline]
pub(crate) fn material_of_state(state: u64) -> u32 {
    ((state >> MESH_BITS) & opaque::MATERIAL.mask()) as u32
}

/// An opaque item's depth field from its squared distance `d2`: log-spaced, 0 = nearest,
/// 8 steps per doubling of the distance (the float's exponent and top
/// [`OPAQUE_DEPTH_MANTISSA_BITS`] mantissa bits; monotonic in `d2`, 1,023 at most, a
/// NaN from a bad transform at the far end). No square root, no division, no view.
#[inline(always)]
pub(crate) fn opaque_depth(d2: f32) -> u16 {
    ((d2.to_bits() & 0x7fff_ffff) >> (f32::MANTISSA_DIGITS - 1 - OPAQUE_DEPTH_MANTISSA_BITS)) as u16
}

/// The squared distance from the eye that the depth fields quantize.
#[inline(always)]
pub(crate) fn distance_squared(view: &View, cx: f32, cy: f32, cz: f32) -> f32 {
    (cx - view.eye.x).powi(2) + (cy - view.eye.y).powi(2) + (cz - view.eye.z).powi(2)
}

/// A transparent item's depth field from its squared distance `d2`: the distance over the
/// view's far distance, [`DEPTH_BITS`] bits, 0 = nearest, the far plane and beyond the
/// largest value (branch-free, so a loop of them vectorizes).
#[inline(always)]
pub(crate) fn depth_of_squared(view: &View, d2: f32) -> u16 {
    // `max` then `min` (not `clamp`) take a NaN to 0, so the value is a finite number in
    // 0..=65535 and truncating it needs none of `as`'s saturation checks, which keep the
    // conversion scalar (a third of the keys' time, measured); the result is the same.
    #[allow(clippy::manual_clamp)] // clamp keeps a NaN, which the conversion must not see
    let t = (d2.sqrt() / view.far.max(1e-6)).max(0.0).min(1.0);
    let scaled = t * opaque::DEPTH.mask() as f32;
    // SAFETY: `scaled` is finite and within 0..=65535 (`t` is in 0..=1, never NaN), so its
    // truncation fits an i32.
    (unsafe { scaled.to_int_unchecked::<i32>() }) as u16
}

/// The key of one queue item of `view`.
#[inline]
pub(crate) fn item_key(view: &View, o: &Objects, i: usize, mats: &[MaterialFrame]) -> u64 {
    let d2 = distance_squared(view, o.cx[i], o.cy[i], o.cz[i]);
    key_with_depth(view, o, i, mats, Depths { transparent: depth_of_squared(view, d2), opaque: opaque_depth(d2) })
}

/// Both depth fields of one item; its key takes the one its blending needs.
#[derive(Clone, Copy, Default)]
struct Depths {
    transparent: u16,
    opaque: u16,
}

/// [`item_key`] with its depth fields given.
#[inline(always)]
fn key_with_depth(view: &View, o: &Objects, i: usize, mats: &[MaterialFrame], depths: Depths) -> u64 {
    let material = o.material[i];
    let m = &mats[material as usize];
    // Forward and depth passes bind materials; shadow passes share a state per shader.
    let forward = view.pass != PassKind::Shadow;
    let transparent = m.transparent && forward;
    SortKey::encode(&SortKeyFields {
        layer: o.layer[i],
        transparent,
        pipeline: pipeline_field(m.shadow_state),
        material: if forward { material_field(m.batch_material(material)) } else { 0 },
        mesh: mesh_field(o.mesh[i]),
        depth: if transparent { depths.transparent } else { depths.opaque },
    })
    .0
}

/// Objects per group of [`write_keys`]: their depths are computed side by side.
const KEY_LANES: usize = 16;

/// Whether a view's queue may hold transparent items (else [`write_keys`] skips their
/// depth field): forward and depth passes whose queue is not opaque only.
pub(crate) fn may_blend(view: &View, queue: Queue) -> bool {
    view.pass != PassKind::Shadow && queue != Queue::Opaque
}

/// Writes [`item_key`] of each object `i` of `visible` (ascending) to `keys[i - base]`,
/// the depths of `KEY_LANES` objects at a time in a loop without branches (the square
/// roots and divisions vectorize; one at a time they form a chain of latencies per key).
/// `blend`: whether an item can be transparent ([`may_blend`]); if not, only the opaque
/// depth field is computed. Appends to `moved` the objects whose bit is set in `was` (bit
/// `i - base` of the words; the previous cull saw them, so their slot holds its key)
/// whose key differs from the one it overwrote.
pub(crate) fn write_keys(
    view: &View,
    o: &Objects,
    mats: &[MaterialFrame],
    (visible, blend): (&[u32], bool),
    (keys, base): (&mut [u64], usize),
    (was, moved): (&[u64], &mut Vec<u32>),
) {
    for group in visible.chunks(KEY_LANES) {
        let mut d2 = [0f32; KEY_LANES];
        for (d, &i) in d2.iter_mut().zip(group) {
            let i = i as usize;
            *d = distance_squared(view, o.cx[i], o.cy[i], o.cz[i]);
        }
        let mut depths = [Depths::default(); KEY_LANES];
        if blend {
            for (q, &d) in depths.iter_mut().zip(&d2) {
                q.transparent = depth_of_squared(view, d);
            }
        }
        for (q, &d) in depths.iter_mut().zip(&d2) {
            q.opaque = opaque_depth(d);
        }
        for (&i, &depth) in group.iter().zip(&depths) {
            debug_assert!(
                blend || !(mats[o.material[i as usize] as usize].transparent && view.pass != PassKind::Shadow)
            );
            let key = key_with_depth(view, o, i as usize, mats, depth);
            let at = i as usize - base;
            let slot = &mut keys[at];
            if *slot != key && was.get(at / 64).is_some_and(|w| w & (1 << (at % 64)) != 0) {
                moved.push(i);
            }
            *slot = key;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn depth_is_the_saturating_conversion_of_the_clamped_distance() {
        // The branch-free conversion against the plain one, for distances at the eye, past
        // the far plane, at every scale, and NaN or infinite (a bad transform).
        let view = View {
            label: "test",
            view_proj: glam::Mat4::IDENTITY,
            eye: glam::Vec3::ZERO,
            far: 250.0,
            layer_mask: u16::MAX,
            pass: crate::material::PassKind::Forward,
        };
        let plain = |d2: f32| ((d2.sqrt() / 250.0f32).clamp(0.0, 1.0) * 65535.0) as u16;
        let mut d2s = vec![0.0, f32::MIN_POSITIVE, 1e-30, 62_500.0, 62_499.99, 1e30, f32::INFINITY, f32::NAN, -1.0];
        d2s.extend((0..100_000).map(|i| i as f32 * 0.7));
        for d2 in d2s {
            assert_eq!(depth_of_squared(&view, d2), plain(d2), "squared distance {d2}");
        }
    }

    #[test]
    fn opaque_depth_is_log_spaced_and_monotonic() {
        // Monotonic over every scale, eight steps per doubling of the distance, at most
        // 1,023; a bad transform's NaN or infinity at the far end.
        let mut last = 0;
        for e in -60..60 {
            for f in 0..64 {
                let d = 2f32.powi(e) * (1.0 + f as f32 / 64.0);
                let q = opaque_depth(d * d);
                assert!(q >= last, "distance {d}: {q} < {last}");
                last = q;
            }
            let (a, b) = (2f32.powi(e), 2f32.powi(e + 1));
            assert_eq!(opaque_depth(b * b) - opaque_depth(a * a), 8, "one doubling at 2^{e}");
        }
        assert_eq!(opaque_depth(0.0), 0);
        assert!(opaque_depth(f32::INFINITY) <= 1023 && opaque_depth(f32::NAN) <= 1023);
        assert!(opaque_depth(f32::NAN) >= opaque_depth(f32::MAX) && opaque_depth(f32::MAX) > opaque_depth(1e30));
        // Distances within a step tie (their objects keep object order); a step is at most
        // about 12 % of the distance.
        assert_eq!(opaque_depth(102.0 * 102.0), opaque_depth(105.0 * 105.0));
        for d in [0.5f32, 3.0, 100.0, 7000.0] {
            assert!(opaque_depth((d * 1.12).powi(2)) > opaque_depth(d * d), "{d}");
        }
    }

    #[test]
    fn fields_round_trip_in_both_layouts() {
        for transparent in [false, true] {
            let f = SortKeyFields { layer: 15, transparent, pipeline: 0x7fff, material: 0xffff, mesh: 0xfff, depth: 0 };
            assert_eq!(SortKey::encode(&f).decode(), f);
            let g =
                SortKeyFields { layer: 3, transparent, pipeline: 0x1234, material: 0xbeef, mesh: 0xabc, depth: 999 };
            assert_eq!(SortKey::encode(&g).decode(), g);
        }
    }

    #[test]
    fn order_is_layer_then_transparency_then_state_or_depth() {
        let base = SortKeyFields { layer: 1, pipeline: 5, material: 5, mesh: 5, depth: 5, ..Default::default() };
        let key = |f: SortKeyFields| SortKey::encode(&f);
        assert!(key(base) < key(SortKeyFields { layer: 2, pipeline: 0, ..base }));
        assert!(key(base) < key(SortKeyFields { transparent: true, pipeline: 0, ..base }));
        // Opaque: state before depth, near first.
        assert!(key(SortKeyFields { depth: 9, ..base }) < key(SortKeyFields { mesh: 6, depth: 0, ..base }));
        assert!(key(base) < key(SortKeyFields { depth: 6, ..base }));
        // Transparent: depth first, far first.
        let t = SortKeyFields { transparent: true, ..base };
        assert!(key(SortKeyFields { depth: 9, pipeline: 7, ..t }) < key(SortKeyFields { depth: 8, pipeline: 0, ..t }));
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        // Pinned bit positions (the module docs): a layout change shows up here.
        let o = SortKeyFields { layer: 1, transparent: false, pipeline: 1, material: 1, mesh: 1, depth: 1 };
        assert_eq!(SortKey::encode(&o).0, 1 << 60 | 1 << 44 | 1 << 28 | 1 << 16 | 1);
        let t = SortKeyFields { transparent: true, depth: 0xffff, ..o };
        assert_eq!(SortKey::encode(&t).0, 1 << 60 | 1 << 59 | 1 << 28 | 1 << 12 | 1);
        assert_eq!(
            format!("{}", SortKey::encode(&o).display(PassKind::Forward)),
            "Forward L1 opaque state 0001/0001/001 depth 1"
        );
    }

    #[test]
    fn state_of_reads_the_state_fields_of_both_layouts() {
        for transparent in [false, true] {
            let f =
                SortKeyFields { layer: 9, transparent, pipeline: 0x1234, material: 0xbeef, mesh: 0xabc, depth: 777 };
            let s = state_of(SortKey::encode(&f).0);
            assert_eq!(s, 0x1234 << 28 | 0xbeef << 12 | 0xabc, "transparent {transparent}");
            assert_eq!((mesh_of_state(s), material_of_state(s)), (0xabc, 0xbeef));
            // Layer and depth are not state.
            assert_eq!(state_of(SortKey::encode(&SortKeyFields { layer: 0, depth: 3, ..f }).0), s);
        }
        assert_eq!(pipeline_field(0x8001), 1);
        assert_eq!((material_field(0x1_0002), mesh_field(0x1003)), (2, 3));
        assert!(exact(1 << 15, 1 << 16, 1 << 12));
        assert!(!exact(1 << 15, 1 << 16, (1 << 12) + 1));
        assert!(!exact((1 << 15) + 1, 1, 1) && !exact(1, (1 << 16) + 1, 1));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "overflows")]
    fn an_overflowing_field_is_caught_in_debug_builds() {
        SortKey::encode(&SortKeyFields { layer: 16, ..Default::default() });
    }

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
        let mats: Vec<MaterialFrame> =
            (0..6).map(|m| crate::sort::material_frame(m, m / 2, m % 3 == 0, m / 2)).collect();
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
                let blend = pass != PassKind::Shadow;
                // Seen by no earlier cull: written, none reported as moved.
                let (none, all) = (vec![0u64; 16], vec![u64::MAX; 16]);
                let mut moved = Vec::new();
                write_keys(&view, &o, &mats, (&visible, blend), (&mut keys, 7), (&none, &mut moved));
                assert!(moved.is_empty(), "{pass:?}, {len} keys of objects no cull saw");
                for &i in &visible {
                    assert_eq!(keys[i as usize - 7], item_key(&view, &o, i as usize, &mats), "{pass:?}, object {i}");
                }
                assert!(keys[len..].iter().all(|&k| k == 0), "nothing written past the list");
                // Over zeroes every key of a seen object is a change (none of these keys is
                // 0); the same keys again are none; changed keys in any group are reported,
                // in order, where the earlier cull saw the object.
                let mut zeroes = vec![0u64; 1000];
                write_keys(&view, &o, &mats, (&visible, blend), (&mut zeroes, 7), (&all, &mut moved));
                assert_eq!(moved, visible, "{pass:?}, {len} keys over zeroes");
                moved.clear();
                write_keys(&view, &o, &mats, (&visible, blend), (&mut keys, 7), (&all, &mut moved));
                assert!(moved.is_empty(), "{pass:?}, {len} keys again");
                if len > 0 {
                    for at in [0, len / 2, len - 1] {
                        keys[at] ^= 1;
                    }
                    // The middle object unseen by the earlier cull: not reported.
                    let (mut seen, m) = (all.clone(), len / 2);
                    seen[m / 64] &= !(1 << (m % 64));
                    write_keys(&view, &o, &mats, (&visible, blend), (&mut keys, 7), (&seen, &mut moved));
                    let mut expect: Vec<u32> =
                        [0, len - 1].into_iter().filter(|&a| a != m).map(|a| a as u32 + 7).collect();
                    expect.dedup();
                    assert_eq!(moved, expect, "{pass:?}, {len} keys, three changed");
                    moved.clear();
                }
            }
        }
    }
}
