//! The demo's frame, declared through Switchyard's public frame graph:
//! - `minimal`: one forward pass into the output;
//! - `full`: shadow cascades of the sun (derived from the light and the camera each
//!   frame), opaque and transparent scene passes into an intermediate target, a post pass
//!   (tone mapping and depth fog) into the output, and an overlay an engine callback draws
//!   (a frame-time bar).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use glam::{Mat2, Mat4, Vec2, Vec3, Vec4};
use switchyard::backend::{
    Backend, BlendMode, ColorTargetState, Command, CullMode, PipelineDesc, PipelineId, TextureFormat,
};
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_city::Lens;

/// The sky: the first pass's clear color (linear).
const SKY: [f64; 4] = [0.55, 0.65, 0.8, 1.0];

/// Tone mapping (exposure, then an ACES fit) and fog by distance from the depth target.
/// `params`: near, far, fog density, exposure; fog color.
const POST: &str = "
@group(0) @binding(3) var scene: texture_2d<f32>;
@group(0) @binding(4) var depth: texture_2d<f32>;
@fragment
fn fs_post(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let p = frame.params[0];
    var c = textureSample(scene, frame_sampler, v.uv).rgb;
    let z = textureSampleLevel(depth, frame_point_sampler, v.uv, 0.0).r;
    if (z < 1.0) {
        let d = p.x * p.y / (p.y - z * (p.y - p.x));
        c = mix(c, frame.params[1].rgb, 1.0 - exp(-p.z * d));
    }
    let x = c * p.w;
    let mapped = clamp(x * (2.51 * x + 0.03) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
    return vec4<f32>(mapped, 1.0);
}
";

/// The overlay: quad 0 is the bar's dark background, quad i > 0 its i-th millisecond
/// (green within 60 Hz, yellow within 30 Hz, red beyond), from the top-left corner.
const BAR: &str = "
struct Out { @builtin(position) position: vec4<f32>, @location(0) color: vec4<f32> }
@vertex
fn vs_bar(@builtin(vertex_index) v: u32) -> Out {
    let q = v / 6u;
    let x = array<f32, 6>(0.0, 1.0, 0.0, 1.0, 1.0, 0.0)[v % 6u];
    let y = array<f32, 6>(0.0, 0.0, 1.0, 0.0, 1.0, 1.0)[v % 6u];
    var o: Out;
    if (q == 0u) {
        o.position = vec4<f32>(-0.98 + x * 1.0, 0.97 - y * 0.06, 0.0, 1.0);
        o.color = vec4<f32>(0.05, 0.05, 0.05, 1.0);
    } else {
        let i = f32(q - 1u);
        o.position = vec4<f32>(-0.975 + (i + x * 0.8) * (0.99 / 64.0), 0.965 - y * 0.05, 0.0, 1.0);
        o.color = select(select(vec4<f32>(0.9, 0.1, 0.1, 1.0), vec4<f32>(0.9, 0.8, 0.1, 1.0), i < 33.0),
                         vec4<f32>(0.2, 0.85, 0.3, 1.0), i < 16.0);
    }
    return o;
}
@fragment
fn fs_bar(i: Out) -> @location(0) vec4<f32> {
    return i.color;
}
";

/// A last pass copying `out` texel for texel into a window's image (declared as an
/// external target of `format`); returns that target.
fn copy_to_window(g: &mut FrameGraph, out: TargetId, format: TextureFormat) -> TargetId {
    let window = g.target("window", TargetKind::External, format, TargetSize::Output);
    let copy = FullscreenShader {
        name: "window".into(),
        wgsl: "@group(0) @binding(3) var src: texture_2d<f32>;
@fragment fn fs(v: FullscreenVertex) -> @location(0) vec4<f32> {
    return textureLoad(src, vec2<i32>(v.position.xy), 0);
}"
        .into(),
        entry: "fs".into(),
        params: [0.0; 8],
    };
    g.pass(Pass::fullscreen("window", copy).color(window, LoadOp::DontCare, StoreOp::Store).sample(out));
    window
}

/// How the demo's cascades draw.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ShadowOptions {
    /// A depth prepass of the opaque queue before the cascades, which draw only the
    /// casters of what it holds ([`Pass::receivers`]).
    pub(crate) receivers: bool,
    /// Maps kept from frame to frame, drawn again only when they may change
    /// ([`Pass::cached`]).
    pub(crate) cached: bool,
}

impl From<&crate::Args> for ShadowOptions {
    fn from(a: &crate::Args) -> Self {
        Self { receivers: a.receivers, cached: a.cache_shadows }
    }
}

/// Which frame the demo declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GraphKind {
    /// One forward pass into the output.
    Minimal,
    /// Shadow cascades, opaque, transparent, post and an overlay.
    Full,
}

/// The demo's declared frame and what a frame fills in.
pub(crate) struct DemoFrame {
    pub(crate) cascades: usize,
    /// The retained target the frame ends in (`--out`, `--screenshot`).
    pub(crate) out: TargetId,
    /// The window's image (an external target), when the frame goes to a window.
    pub(crate) window: Option<TargetId>,
    /// Milliseconds the overlay shows (f32 bits), set by the frame loop.
    pub(crate) bar_ms: Arc<AtomicU32>,
}

impl DemoFrame {
    /// Declares the frame on `r` (`cascades`: 0 to 4 shadow maps of `shadow_side` texels,
    /// full graph only). `window`: the format of a window's images, which a last pass
    /// copies `out` into. `shadows`: how the cascades draw.
    pub(crate) fn set<B: Backend>(
        r: &mut Renderer<B>,
        kind: GraphKind,
        cascades: usize,
        shadow_side: u32,
        lens: &Lens,
        window: Option<TextureFormat>,
        shadows: ShadowOptions,
    ) -> Result<Self, String> {
        let bar_ms = Arc::new(AtomicU32::new(0));
        let mut g = FrameGraph::new();
        let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
        let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
        let cascades = if kind == GraphKind::Minimal { 0 } else { cascades.min(MAX_SHADOW_MAPS) };
        let suns: Vec<CameraId> = (0..cascades).map(|k| g.camera(format!("sun-{k}"))).collect();
        let main = g.camera("main");
        if kind == GraphKind::Minimal {
            g.pass(
                Pass::scene("main", main, PassKind::Forward, Queue::All)
                    .color(out, LoadOp::Clear(SKY), StoreOp::Store)
                    .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
            );
            let window = window.map(|format| copy_to_window(&mut g, out, format));
            r.set_graph(g).map_err(|e| format!("frame graph: {e}"))?;
            return Ok(Self { cascades, out, window, bar_ms });
        }
        let color = g.target("scene-color", TargetKind::Transient, TextureFormat::Rgba16Float, TargetSize::Output);
        // The surfaces the camera sees, before the cascades: a depth prepass.
        let prepass = (shadows.receivers && cascades > 0).then(|| {
            let depth =
                g.target("prepass-depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
            g.pass(Pass::scene("prepass", main, PassKind::Depth, Queue::Opaque).depth(
                depth,
                LoadOp::Clear(1.0),
                StoreOp::Store,
            ));
            depth
        });
        let map = TargetSize::Fixed { width: shadow_side, height: shadow_side };
        let mut maps = Vec::new();
        for (k, &sun) in suns.iter().enumerate() {
            // A cached map is kept from frame to frame.
            let kind = if shadows.cached { TargetKind::Retained } else { TargetKind::Transient };
            let t = g.target(format!("shadow-{k}"), kind, TextureFormat::Depth32Float, map);
            let mut pass = Pass::scene(format!("shadow-{k}"), sun, PassKind::Shadow, Queue::All).depth(
                t,
                LoadOp::Clear(1.0),
                StoreOp::Store,
            );
            if let Some(depth) = prepass {
                pass = pass.receivers(depth, main);
            }
            if shadows.cached {
                pass = pass.cached();
            }
            g.pass(pass);
            maps.push(t);
        }
        let with_maps = |mut p: Pass| {
            for &m in &maps {
                p = p.sample(m);
            }
            p
        };
        g.pass(with_maps(
            Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
                .color(color, LoadOp::Clear(SKY), StoreOp::Store)
                .depth(depth, LoadOp::Clear(1.0), StoreOp::Store),
        ));
        g.pass(with_maps(
            Pass::scene("transparent", main, PassKind::Forward, Queue::Transparent)
                .color(color, LoadOp::Load, StoreOp::Store)
                .depth(depth, LoadOp::Load, StoreOp::Store),
        ));
        let light = r.lighting();
        let fog = light.fog_color;
        let shader = FullscreenShader {
            name: "post".into(),
            wgsl: POST.into(),
            entry: "fs_post".into(),
            params: [lens.near, lens.far, light.fog_density, 0.6, fog.x, fog.y, fog.z, 0.0],
        };
        g.pass(
            Pass::fullscreen("post", shader).color(out, LoadOp::DontCare, StoreOp::Store).sample(color).sample(depth),
        );
        let bar = bar_pipeline(&**r.backend()).map_err(|e| format!("overlay pipeline: {e}"))?;
        let ms = bar_ms.clone();
        g.pass(
            Pass::callback("overlay", move |_ctx, cmds| {
                let segments = f32::from_bits(ms.load(Ordering::Relaxed)).round().clamp(0.0, 64.0) as u32;
                cmds.push(Command::SetPipeline(bar));
                cmds.push(Command::Draw {
                    first_vertex: 0,
                    vertex_count: 6 * (segments + 1),
                    first_instance: 0,
                    instance_count: 1,
                });
            })
            .color(out, LoadOp::Load, StoreOp::Store),
        );
        let window = window.map(|format| copy_to_window(&mut g, out, format));
        r.set_graph(g).map_err(|e| format!("frame graph: {e}"))?;
        Ok(Self { cascades, out, window, bar_ms })
    }

    /// This frame's cameras: the cascades of `light` for `lens`, then `lens`.
    /// `receivers`: the box holding every surface that can be shaded, where the scene knows
    /// it (see [`cascades`]).
    pub(crate) fn cameras(
        &self,
        lens: &Lens,
        light: Vec3,
        aspect: f32,
        shadow_side: u32,
        receivers: Option<(Vec3, Vec3)>,
    ) -> Vec<Camera> {
        let mut cams: Vec<Camera> = cascades(lens, light, aspect, self.cascades, shadow_side, receivers);
        cams.push(Camera {
            view_proj: lens.view_proj(aspect),
            eye: lens.eye,
            far: lens.far,
            layer_mask: u16::MAX,
            receivers: None,
        });
        cams
    }
}

/// The overlay's pipeline: an engine object, made through the renderer's backend.
fn bar_pipeline<B: Backend>(b: &B) -> Result<PipelineId, switchyard::backend::CreateError> {
    let shader =
        b.create_shader(&switchyard::backend::ShaderModuleDesc { label: "overlay".into(), wgsl: BAR.into() })?;
    b.create_pipeline(&PipelineDesc {
        label: "overlay".into(),
        shader,
        vertex_entry: "vs_bar".into(),
        fragment_entry: Some("fs_bar".into()),
        bind_group_layouts: Vec::new(),
        vertex_buffers: Vec::new(),
        cull: CullMode::None,
        color: Some(ColorTargetState { format: TextureFormat::Rgba8UnormSrgb, blend: BlendMode::Replace }),
        depth: None,
        samples: 1,
    })
}

/// Shadow cascades of a directional light for `lens`: the view frustum is split where a
/// log and a uniform split meet halfway (over the nearer part of the view, where shadows
/// are seen), each slice is bounded by a sphere, and each cascade is an orthographic box
/// around it, facing along the light, reaching back towards the light far enough to hold
/// every caster that can shade the slice (casters beyond are culled by the box), and
/// draws only the casters that can shade the slice ([`Camera::receivers`]: the slice). The
/// box moves in whole texels, so shadows do not shimmer as the camera moves.
///
/// `receivers`: where the scene has surfaces that can be shaded, as an axis-aligned box
/// (min, max), where the scene knows it. Only the part of each slice inside it can receive
/// a shadow, so the cascade is fitted to that part instead ([`fitted`]): fewer casters
/// drawn (the cube grid's flat slab: each cascade holds its band of the grid).
pub(crate) fn cascades(
    lens: &Lens,
    light: Vec3,
    aspect: f32,
    count: usize,
    side: u32,
    receivers: Option<(Vec3, Vec3)>,
) -> Vec<Camera> {
    let dir = light.normalize_or(Vec3::NEG_Y);
    let up = if dir.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
    let (near, far) = (lens.near, lens.far * 0.5);
    let split = |i: usize| {
        let f = i as f32 / count as f32;
        0.5 * (near * (far / near).powf(f) + near + (far - near) * f)
    };
    (0..count)
        .map(|k| {
            let (a, b) = (if k == 0 { near } else { split(k) }, if k + 1 == count { far } else { split(k + 1) });
            let corners = lens.slice_corners(aspect, a, b);
            // The map shades the slice: casters that cannot shade it are not drawn.
            let slice =
                Mat4::perspective_rh(lens.fovy, aspect, a, b) * Mat4::look_at_rh(lens.eye, lens.target, lens.up);
            // A slice that holds no receiver keeps its whole frustum (its cascade then
            // shades nothing visible either way).
            if let Some(points) = receivers.map(|(lo, hi)| slice_in_box(&corners, lo, hi)).filter(|p| !p.is_empty()) {
                return Camera { receivers: Some(slice), ..fitted(&points, lens, dir, up, side) };
            }
            let center = corners.iter().copied().sum::<Vec3>() / 8.0;
            let radius = corners.iter().map(|c| c.distance(center)).fold(0.0, f32::max).max(1.0);
            // Casters up to `reach` towards the light from the slice can shade it.
            let reach = radius * 2.0 + 40.0;
            let texel = 2.0 * radius / side as f32;
            let rotation = Mat4::look_at_rh(Vec3::ZERO, dir, up);
            let snapped = (rotation.transform_point3(center) / texel).round() * texel;
            let center = rotation.inverse().transform_point3(snapped);
            let eye = center - dir * reach;
            let proj = Mat4::orthographic_rh(-radius, radius, -radius, radius, 0.0, reach + radius);
            Camera {
                view_proj: proj * Mat4::look_at_rh(eye, center, up),
                eye,
                far: reach + radius,
                layer_mask: u16::MAX,
                receivers: Some(slice),
            }
        })
        .collect()
}

/// A cascade fitted to `points` (the receivers of a slice). Seen from the light, a slice's
/// receivers on ground-like scenes form a band across the view: the map's axes are the
/// view's right and its forward along the ground, as the light sees them (sheared where
/// the light comes from the side), so the map is the parallelogram around the band and
/// its frustum the prism of casters that can shade it. The sides are rounded up to a
/// sixteenth of a power of two (so they change in steps as the view moves), the map moves
/// in whole texels, and it reaches back towards the light as far as the sphere fit does.
fn fitted(points: &[Vec3], lens: &Lens, dir: Vec3, up: Vec3, side: u32) -> Camera {
    let rotation = Mat4::look_at_rh(Vec3::ZERO, dir, up);
    let forward = (lens.target - lens.eye).normalize_or(Vec3::NEG_Z);
    let right = forward.cross(lens.up).normalize_or(Vec3::X);
    let ground = Vec3::new(forward.x, 0.0, forward.z).normalize_or(lens.up);
    let across = |v: Vec3| rotation.transform_vector3(v).truncate();
    let (u, v) = (across(right), across(ground));
    // Same handedness as the light's own axes (a mirrored map would flip the winding).
    let v = if u.perp_dot(v) < 0.0 { -v } else { v };
    // Axes the light sees nearly edge-on make no parallelogram: the light's own axes then.
    let (u, v) = if u.perp_dot(v).abs() < 0.1 * u.length() * v.length() { (Vec2::X, Vec2::Y) } else { (u, v) };
    let to_uv = Mat2::from_cols(u, v).inverse();
    let (lo, hi) = points.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), &p| {
        let q = rotation.transform_point3(p);
        let uv = to_uv * q.truncate();
        (lo.min(uv.extend(q.z)), hi.max(uv.extend(q.z)))
    });
    let half = ((hi - lo) * 0.5).max(Vec3::splat(0.5));
    let quantized = |h: f32, of: f32| {
        let step = 2f32.powi(of.log2().ceil() as i32 - 4);
        (h / step).ceil() * step
    };
    let (ha, hb) = (quantized(half.x, half.x), quantized(half.y, half.y));
    let (ta, tb) = (2.0 * ha / side as f32, 2.0 * hb / side as f32);
    let mid = (lo + hi) * 0.5;
    let (ma, mb) = ((mid.x / ta).round() * ta, (mid.y / tb).round() * tb);
    let reach = 2.0 * (u * ha).length().max((v * hb).length()) + 40.0;
    // The eye over the light's origin, `reach` nearer the light than the nearest point
    // (the light looks down -z); the map's parallelogram is in the projection below.
    let eye = rotation.inverse().transform_point3(Vec3::new(0.0, 0.0, hi.z + reach));
    let far = reach + (hi.z - lo.z);
    let m = to_uv;
    let proj = Mat4::from_cols(
        Vec4::new(m.x_axis.x / ha, m.x_axis.y / hb, 0.0, 0.0),
        Vec4::new(m.y_axis.x / ha, m.y_axis.y / hb, 0.0, 0.0),
        Vec4::new(0.0, 0.0, -1.0 / far, 0.0),
        Vec4::new(-ma / ha, -mb / hb, 0.0, 1.0),
    );
    Camera { view_proj: proj * Mat4::look_at_rh(eye, eye + dir, up), eye, far, layer_mask: u16::MAX, receivers: None }
}

/// The vertices of the intersection of a view-frustum slice (`corners` as
/// [`Lens::slice_corners`] orders them) and the box `lo..hi`: the slice's edges clipped by
/// the box and the box's edges clipped by the slice (empty when they do not meet).
pub(crate) fn slice_in_box(corners: &[Vec3; 8], lo: Vec3, hi: Vec3) -> Vec<Vec3> {
    // Corner k of each: bit 0 x (or the slice's right side), bit 1 y (up), bit 2 z (far).
    const EDGES: [(usize, usize); 12] =
        [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)];
    // Each face as three of its corners, and the inward side from the centroid.
    const FACES: [[usize; 3]; 6] = [[0, 1, 2], [4, 5, 6], [0, 2, 4], [1, 3, 5], [0, 1, 4], [2, 3, 6]];
    let planes = |c: &[Vec3; 8]| -> [(Vec3, f32); 6] {
        let centroid = c.iter().copied().sum::<Vec3>() / 8.0;
        FACES.map(|[i, j, k]| {
            let n = (c[j] - c[i]).cross(c[k] - c[i]).normalize_or_zero();
            let n = if n.dot(centroid - c[i]) < 0.0 { -n } else { n };
            (n, -n.dot(c[i]))
        })
    };
    let cube: [Vec3; 8] = std::array::from_fn(|k| {
        Vec3::new(
            if k & 1 != 0 { hi.x } else { lo.x },
            if k & 2 != 0 { hi.y } else { lo.y },
            if k & 4 != 0 { hi.z } else { lo.z },
        )
    });
    let mut out = Vec::new();
    for (edges_of, against) in [(corners, planes(&cube)), (&cube, planes(corners))] {
        for (i, j) in EDGES {
            let (p, q) = (edges_of[i], edges_of[j]);
            let (mut t0, mut t1) = (0.0f32, 1.0f32);
            let inside = against.iter().all(|&(n, d)| {
                let (fp, fq) = (n.dot(p) + d, n.dot(q) + d);
                if fp < 0.0 && fq < 0.0 {
                    return false;
                }
                if fp < 0.0 {
                    t0 = t0.max(fp / (fp - fq));
                } else if fq < 0.0 {
                    t1 = t1.min(fp / (fp - fq));
                }
                t0 <= t1
            });
            if inside {
                out.extend([p + (q - p) * t0, p + (q - p) * t1]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip(c: &Camera, p: Vec3) -> Vec3 {
        let q = c.view_proj * p.extend(1.0);
        q.truncate() / q.w
    }

    fn bounds(points: &[Vec3]) -> (Vec3, Vec3) {
        points.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)))
    }

    #[test]
    fn a_slice_and_a_box_meet_in_their_common_part() {
        let lens = switchyard_city::Cubes { side: 10 }.lens();
        let corners = lens.slice_corners(1.0, 5.0, 20.0);
        let (lo, hi) = bounds(&corners);
        // A box around the whole slice: the slice's corners.
        let (a, b) = bounds(&slice_in_box(&corners, lo - 1.0, hi + 1.0));
        assert!(a.abs_diff_eq(lo, 1e-3) && b.abs_diff_eq(hi, 1e-3), "{a} {b} against {lo} {hi}");
        // A small box inside the slice: the box's corners.
        let mid = corners.iter().copied().sum::<Vec3>() / 8.0;
        let (a, b) = bounds(&slice_in_box(&corners, mid - 0.5, mid + 0.5));
        assert!(a.abs_diff_eq(mid - 0.5, 1e-3) && b.abs_diff_eq(mid + 0.5, 1e-3), "{a} {b}");
        // Far away: nothing.
        assert!(slice_in_box(&corners, Vec3::splat(1e4), Vec3::splat(1e4 + 1.0)).is_empty());
    }

    /// Fitted to the cube grid, each cascade holds every receiver of its slice and every
    /// caster up to 40 units towards the light from it, and the two cascades together hold
    /// little more than the grid once (the sphere fit held most of it in each).
    #[test]
    fn fitted_cascades_hold_their_receivers_and_casters_and_little_else() {
        let grid = switchyard_city::Cubes { side: 60 };
        let (lens, light, aspect) = (grid.lens(), switchyard_city::LIGHT, 16.0 / 9.0);
        let fitted = cascades(&lens, light, aspect, 2, 2048, Some(grid.bounds()));
        let loose = cascades(&lens, light, aspect, 2, 2048, None);
        let inside = |c: &Camera, p: Vec3| {
            let q = clip(c, p);
            q.x.abs() <= 1.0 + 1e-4 && q.y.abs() <= 1.0 + 1e-4 && (-1e-4..=1.0 + 1e-4).contains(&q.z)
        };
        let (near, far) = (lens.near, lens.far * 0.5);
        for (k, c) in fitted.iter().enumerate() {
            // The split is inside (near, far): take the slice from the cameras' order.
            let (a, b) = if k == 0 { (near, near + (far - near) * 0.3) } else { (near + (far - near) * 0.7, far) };
            let receivers = slice_in_box(&lens.slice_corners(aspect, a, b), grid.bounds().0, grid.bounds().1);
            assert!(!receivers.is_empty());
            for &p in &receivers {
                for t in [0.0, 10.0, 40.0] {
                    let caster = p - light.normalize() * t;
                    assert!(inside(c, caster), "cascade {k}: {caster} ({t} towards the light from {p}) outside");
                }
            }
        }
        let cubes = grid.side * grid.side;
        let held = |cams: &[Camera]| -> usize {
            cams.iter()
                .map(|c| (0..cubes).filter(|&i| inside(c, switchyard_city::cube_position(i, grid.side))).count())
                .sum()
        };
        let (tight, sphere) = (held(&fitted), held(&loose));
        assert!(tight < cubes * 6 / 5, "fitted cascades hold {tight} cube centers of {cubes}");
        assert!(sphere > cubes * 3 / 2, "the sphere fit held {sphere}: the comparison is moot");
    }
}
