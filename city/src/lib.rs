//! A procedural city: the default scene of the demo, and the workload of the benches.
//!
//! Buildings (64 box meshes of varied proportions) on a grid over a ground plane, with
//! lit materials in up to four keyword variants, a camera orbiting the center, and two
//! orthographic shadow views (near and far) following it.
//!
//! Every building's look comes from a hash of its index ([`hash`]), not from a generator:
//! building `i` is the same whatever was built before it, so the city (and the demo's
//! command-stream digests) stay fixed as the code around it changes.
//!
//! Also here: [`percentile`], the one summary statistic that the demo prints and the
//! benchmark report tabulates.

#![deny(missing_docs)]

use glam::{Mat4, Vec3};
use switchyard::backend::Backend;
use switchyard::*;

/// Building meshes (plus one ground plane).
pub const MESHES: usize = 64;
/// Distance between grid cells.
pub const SPACING: f32 = 3.0;
/// Direction the city's light travels.
pub const LIGHT: Vec3 = Vec3::new(-0.7, -0.6, -0.35);

/// Building the city failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CityError {
    /// A resource was refused.
    #[error(transparent)]
    Resource(#[from] ResourceError),
    /// The objects were refused.
    #[error(transparent)]
    Scene(#[from] SceneError),
}

/// A built city: what its views need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct City {
    /// Buildings per grid side.
    pub side: usize,
}

/// An axis-aligned box standing on y = 0, centered in x and z.
pub fn box_mesh(w: f32, h: f32, d: f32) -> MeshData {
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ];
    let half = Vec3::new(w * 0.5, h * 0.5, d * 0.5);
    for (n, u, v) in faces {
        let (n, u, v) = (Vec3::from(n), Vec3::from(u), Vec3::from(v));
        let base = vertices.len() as u32;
        for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            let p = (n + u * su + v * sv) * half + Vec3::Y * half.y;
            vertices.push(Vertex {
                position: p.to_array(),
                normal: n.to_array(),
                uv: [(su + 1.0) * 0.5, (sv + 1.0) * 0.5],
            });
        }
        indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    MeshData { vertices, indices }
}

/// The unit box of [`box_mesh`]`(1, 1, 1)` as its 8 shared corners, each with the normal
/// pointing out of the corner, and the box's 12 triangles wound alike: a third of the
/// vertices (the stress scene's cube: on the H200 the report's raster rows drew 1M of
/// them in 9.059 ms against 14.958 ms with 24 vertices). Lit with the `FLAT` keyword, its faces shade flat.
pub fn corner_cube() -> MeshData {
    box_corners(|_| true)
}

/// The triangles of [`box_mesh`]`(1, 1, 1)` whose face normal `keep` keeps, in order,
/// over shared corners (in order of first use), each corner's normal pointing out of it.
fn box_corners(keep: impl Fn([f32; 3]) -> bool) -> MeshData {
    let faces = box_mesh(1.0, 1.0, 1.0);
    let center = Vec3::new(0.0, 0.5, 0.0);
    let mut vertices: Vec<Vertex> = Vec::with_capacity(8);
    let mut indices = Vec::with_capacity(faces.indices.len());
    for tri in faces.indices.chunks(3).filter(|t| keep(faces.vertices[t[0] as usize].normal)) {
        for &i in tri {
            let p = faces.vertices[i as usize].position;
            let k = vertices.iter().position(|v| v.position == p).unwrap_or_else(|| {
                let normal = (Vec3::from(p) - center).normalize().to_array();
                vertices.push(Vertex { position: p, normal, uv: [0.0, 0.0] });
                vertices.len() - 1
            });
            indices.push(k as u32);
        }
    }
    MeshData { vertices, indices }
}

/// The +x, +y and +z faces of the unit box of [`box_mesh`]`(1, 1, 1)`: 7 shared corners
/// (each with the normal pointing out of the corner, as [`corner_cube`]'s) and 6
/// triangles, for the lit shader's `BOX_FACES` keyword, which mirrors them toward the
/// camera: the box's pixels from half its triangles (on the H100 the report's raster rows
/// drew 1M cubes this way in 5.157 ms against 9.058 ms with [`corner_cube`]).
pub fn box_faces() -> MeshData {
    box_corners(|n| n.iter().all(|&c| c >= 0.0))
}

/// Which mesh the stress scene's cubes are ([`build_cubes_as`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CubeForm {
    /// [`box_faces`] with the `BOX_FACES` keyword: 6 triangles a cube.
    #[default]
    BoxFaces,
    /// [`corner_cube`]: 8 vertices, 12 triangles a cube.
    Corners,
}

/// The hash that places and shapes building `i` (a splitmix64 finalizer).
pub fn hash(i: u64) -> u64 {
    let x = (i ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 31)
}

fn unit(i: u64) -> f32 {
    (hash(i) >> 40) as f32 / (1u64 << 24) as f32
}

/// A saturated color of hue `h` (0..1) with saturation `s`, value 0.9.
fn hue(h: f32, s: f32) -> [f32; 3] {
    let f = |n: f32| {
        let k = (n + h * 6.0) % 6.0;
        0.9 - 0.9 * s * k.min(4.0 - k).clamp(0.0, 1.0)
    };
    [f(5.0), f(3.0), f(1.0)]
}

/// A grey ground plane under a `side` x `side` grid (its own material and mesh), as an
/// object to insert.
pub fn ground<B: Backend>(r: &mut Renderer<B>, shader: ShaderHandle, side: usize) -> Result<ObjectDesc, ResourceError> {
    let material = r.create_material(&MaterialDesc {
        shader,
        properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color([0.45, 0.45, 0.42, 1.0])),
        ..MaterialDesc::default()
    })?;
    let extent = side as f32 * SPACING;
    let mesh = r.create_mesh(&box_mesh(extent + 10.0, 0.2, extent + 10.0))?;
    Ok(ObjectDesc { mesh, material, transform: Mat4::from_translation(Vec3::new(0.0, -0.2, 0.0)), layer: 0, flags: 0 })
}

/// Builds a city of `objects` objects (one is the ground) with `materials` materials in
/// `variants` keyword variants (1-4) of the lit shader in the form the adapter allows
/// (`ShaderDesc::lit_for`: materials indexed in the shader where it can), and turns on fog
/// and the city light.
pub fn build<B: Backend>(
    r: &mut Renderer<B>,
    objects: usize,
    materials: usize,
    variants: u32,
) -> Result<City, CityError> {
    build_with_glass(r, objects, materials, variants, 0)
}

/// [`build`], with one building in `glass_every` (by its hash; 0: none) of a transparent
/// glass material.
pub fn build_with_glass<B: Backend>(
    r: &mut Renderer<B>,
    objects: usize,
    materials: usize,
    variants: u32,
    glass_every: u64,
) -> Result<City, CityError> {
    let shader = r.create_shader(&ShaderDesc::lit_for(&r.backend().caps()))?;
    build_with_shader(r, shader, objects, materials, variants, glass_every)
}

/// [`build_with_glass`] with the materials of `shader` (the built-in lit shader in either
/// form, or one declaring its constants and keywords).
pub fn build_with_shader<B: Backend>(
    r: &mut Renderer<B>,
    shader: ShaderHandle,
    objects: usize,
    materials: usize,
    variants: u32,
    glass_every: u64,
) -> Result<City, CityError> {
    r.set_global_keyword("FOG", true);
    r.set_lighting(Lighting { direction: LIGHT, fog_density: 0.003, ..Lighting::default() });
    let meshes: Vec<MeshHandle> = (0..MESHES)
        .map(|m| {
            let (w, h, d) = (
                1.0 + unit(m as u64 * 3) * 1.6,
                1.0 + unit(m as u64 * 3 + 1) * 8.0,
                1.0 + unit(m as u64 * 3 + 2) * 1.6,
            );
            r.create_mesh(&box_mesh(w, h, d))
        })
        .collect::<Result<_, _>>()?;
    let keyword_sets: [&[&str]; 4] = [&[], &["SPECULAR"], &["RIM"], &["SPECULAR", "EMISSIVE"]];
    let mats: Vec<MaterialHandle> = (0..materials.max(1))
        .map(|m| {
            let [r0, g0, b0] = hue(unit(1000 + m as u64), 0.35 + 0.5 * unit(2000 + m as u64));
            let props = PropertySheet::new()
                .with("_BaseColor", PropertyValue::Color([r0, g0, b0, 1.0]))
                .with("_Emission", PropertyValue::Color([r0 * 0.3, g0 * 0.3, b0 * 0.3, 1.0]))
                .with("_Roughness", PropertyValue::Float(unit(5000 + m as u64)))
                .with("_RimStrength", PropertyValue::Float(0.4));
            let keywords = keyword_sets[m % variants as usize].iter().map(|s| s.to_string()).collect();
            r.create_material(&MaterialDesc {
                shader,
                keywords,
                properties: props,
                base_texture: None,
                transparent: false,
            })
        })
        .collect::<Result<_, _>>()?;
    let glass = if glass_every > 0 {
        Some(
            r.create_material(&MaterialDesc {
                shader,
                keywords: vec!["SPECULAR".into()],
                properties: PropertySheet::new()
                    .with("_BaseColor", PropertyValue::Color([0.55, 0.75, 0.9, 0.35]))
                    .with("_Roughness", PropertyValue::Float(0.1)),
                base_texture: None,
                transparent: true,
            })?,
        )
    } else {
        None
    };
    let side = (objects.saturating_sub(1) as f64).sqrt().ceil().max(1.0) as usize;
    let mut descs = Vec::with_capacity(objects);
    if objects > 0 {
        descs.push(ground(r, shader, side)?);
    }
    for i in 0..objects.saturating_sub(1) {
        let (gx, gz) = ((i % side) as f32, (i / side) as f32);
        let pos = Vec3::new((gx - side as f32 * 0.5) * SPACING, 0.0, (gz - side as f32 * 0.5) * SPACING);
        let rot = Mat4::from_rotation_y(unit(i as u64 * 7) * 0.5);
        descs.push(ObjectDesc {
            mesh: meshes[(hash(i as u64) % MESHES as u64) as usize],
            material: match glass {
                Some(g) if hash(i as u64 + 991).is_multiple_of(glass_every) => g,
                _ => mats[(hash(i as u64 + 77) % mats.len() as u64) as usize],
            },
            transform: Mat4::from_translation(pos) * rot,
            layer: 0,
            flags: CASTS_SHADOWS,
        });
    }
    r.insert_objects(&descs)?;
    Ok(City { side })
}

/// Distance between the cubes of [`build_cubes`] (the cubes have side 1).
pub const CUBE_SPACING: f32 = 2.0;

/// The stress scene of [`build_cubes`]: a square grid of unit cubes under a fixed camera.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cubes {
    /// Cubes per grid side.
    pub side: usize,
}

/// Colors of the stress scene's materials, linear RGB: `materials` hues round the wheel.
pub fn cube_color(m: usize, materials: usize) -> [f32; 3] {
    hue(m as f32 / materials.max(1) as f32, 0.6)
}

/// The stress scene: `objects` unit cubes (one mesh: [`box_faces`], the three faces toward
/// the camera) on a square grid, each casting shadows, with `materials` lit materials
/// (keywords `FLAT`, flat faces from shared corners, `UNTEXTURED` and `BOX_FACES`) taken
/// round-robin (cube `i` has material `i % materials`),
/// under the city's sun; no ground and no fog. The lit shader in the form the adapter
/// allows (`ShaderDesc::lit_for`).
pub fn build_cubes<B: Backend>(r: &mut Renderer<B>, objects: usize, materials: usize) -> Result<Cubes, CityError> {
    let shader = r.create_shader(&ShaderDesc::lit_for(&r.backend().caps()))?;
    build_cubes_with_shader(r, shader, objects, materials)
}

/// [`build_cubes`] with the materials of `shader` (as [`build_with_shader`]).
pub fn build_cubes_with_shader<B: Backend>(
    r: &mut Renderer<B>,
    shader: ShaderHandle,
    objects: usize,
    materials: usize,
) -> Result<Cubes, CityError> {
    build_cubes_as(r, shader, objects, materials, CubeForm::default())
}

/// [`build_cubes_with_shader`] with the cubes drawn as `form`.
pub fn build_cubes_as<B: Backend>(
    r: &mut Renderer<B>,
    shader: ShaderHandle,
    objects: usize,
    materials: usize,
    form: CubeForm,
) -> Result<Cubes, CityError> {
    r.set_lighting(Lighting { direction: LIGHT, fog_density: 0.0, ..Lighting::default() });
    let (mesh, keywords): (MeshData, &[&str]) = match form {
        CubeForm::BoxFaces => (box_faces(), &["FLAT", "UNTEXTURED", "BOX_FACES"]),
        CubeForm::Corners => (corner_cube(), &["FLAT", "UNTEXTURED"]),
    };
    let mesh = r.create_mesh(&mesh)?;
    let mats: Vec<MaterialHandle> = (0..materials.max(1))
        .map(|m| {
            let [r0, g0, b0] = cube_color(m, materials);
            r.create_material(&MaterialDesc {
                shader,
                keywords: keywords.iter().map(|k| k.to_string()).collect(),
                properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color([r0, g0, b0, 1.0])),
                ..MaterialDesc::default()
            })
        })
        .collect::<Result<_, _>>()?;
    let side = (objects as f64).sqrt().ceil().max(1.0) as usize;
    let descs: Vec<ObjectDesc> = (0..objects)
        .map(|i| ObjectDesc {
            mesh,
            material: mats[i % mats.len()],
            transform: Mat4::from_translation(cube_position(i, side)),
            layer: 0,
            flags: CASTS_SHADOWS,
        })
        .collect();
    r.insert_objects(&descs)?;
    Ok(Cubes { side })
}

/// Where cube `i` of a grid of `side` per side stands (centered on the origin, on y = 0).
pub fn cube_position(i: usize, side: usize) -> Vec3 {
    let half = (side as f32 - 1.0) * 0.5;
    Vec3::new(((i % side) as f32 - half) * CUBE_SPACING, 0.0, ((i / side) as f32 - half) * CUBE_SPACING)
}

impl Cubes {
    /// The box holding every cube of the grid (min, max corner).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let half = (self.side as f32 - 1.0) * 0.5 * CUBE_SPACING + 0.5;
        (Vec3::new(-half, 0.0, -half), Vec3::new(half, 1.0, half))
    }

    /// The fixed camera: 45° above the grid, looking at its center from the +z side, as
    /// near as keeps every cube in view at any aspect of at least 1; its near and far planes
    /// hug the grid's depth range, the far one at twice the farthest cube, so that the sun's
    /// cascades (which cover the nearer half of the view) reach every cube.
    pub fn lens(&self) -> Lens {
        let half = self.side as f32 * CUBE_SPACING * 0.5 + 1.0;
        let corners: Vec<Vec3> = [(-half, -half), (half, -half), (-half, half), (half, half)]
            .into_iter()
            .flat_map(|(x, z)| [Vec3::new(x, 0.0, z), Vec3::new(x, 1.0, z)])
            .collect();
        let dir = Vec3::new(0.0, 1.0, 1.0).normalize();
        let lens = |dist: f32| Lens {
            eye: dir * dist,
            target: Vec3::ZERO,
            fovy: 0.9,
            near: 0.5,
            far: dist * 4.0,
            up: Vec3::Y,
        };
        let inside = |l: &Lens| {
            let vp = l.view_proj(1.0);
            corners.iter().all(|&p| {
                let c = vp * p.extend(1.0);
                c.w > 0.0 && c.x.abs() <= c.w && c.y.abs() <= c.w
            })
        };
        let mut dist = half;
        while !inside(&lens(dist)) && dist < 1e7 {
            dist *= 1.05;
        }
        let l = lens(dist);
        let depth = |p: &Vec3| (*p - l.eye).dot(-dir);
        let nearest = corners.iter().map(depth).fold(f32::MAX, f32::min);
        let farthest = corners.iter().map(depth).fold(0.0, f32::max);
        Lens { near: (nearest * 0.9).max(0.5), far: farthest * 2.0, ..l }
    }
}

/// A perspective camera: where it is, what it looks at, its lens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lens {
    /// Position.
    pub eye: Vec3,
    /// The point it looks at.
    pub target: Vec3,
    /// Vertical field of view, radians.
    pub fovy: f32,
    /// Near plane distance.
    pub near: f32,
    /// Far plane distance.
    pub far: f32,
    /// The image's up direction in the world.
    pub up: Vec3,
}

impl Lens {
    /// World to clip for an image of `aspect` (width / height).
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        Mat4::perspective_rh(self.fovy, aspect, self.near, self.far) * Mat4::look_at_rh(self.eye, self.target, self.up)
    }

    /// The 8 world-space corners of the view frustum between distances `near` and `far`
    /// along the view direction.
    pub fn slice_corners(&self, aspect: f32, near: f32, far: f32) -> [Vec3; 8] {
        let forward = (self.target - self.eye).normalize();
        let right = forward.cross(self.up).normalize_or(Vec3::X);
        let up = right.cross(forward);
        let mut out = [Vec3::ZERO; 8];
        for (k, d) in [near, far].into_iter().enumerate() {
            let h = d * (self.fovy * 0.5).tan();
            let w = h * aspect;
            for (j, (sx, sy)) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)].into_iter().enumerate() {
                out[k * 4 + j] = self.eye + forward * d + right * (w * sx) + up * (h * sy);
            }
        }
        out
    }
}

impl City {
    /// The orbiting camera at `frame`.
    pub fn lens(&self, frame: u32) -> Lens {
        let t = frame as f32 * 0.02;
        let radius = (self.side as f32 * SPACING * 0.25).clamp(15.0, 150.0);
        let eye = Vec3::new(t.cos() * radius, radius * 0.35 + 6.0, t.sin() * radius);
        Lens { eye, target: Vec3::new(0.0, 2.0, 0.0), fovy: 0.9, near: 0.5, far: radius * 4.0, up: Vec3::Y }
    }

    /// A street-level camera at `frame`: eye height 1.7 between the two middle rows of
    /// buildings, looking along the row and turning slowly, as far as the city reaches.
    /// The nearest buildings hide most of the others (what occlusion culling is for).
    pub fn street_lens(&self, frame: u32) -> Lens {
        let t = frame as f32 * 0.005;
        let eye = Vec3::new(0.0, 1.7, -SPACING * 0.5);
        let far = (self.side as f32 * SPACING * 1.5).max(50.0);
        Lens { eye, target: eye + Vec3::new(t.cos(), -0.02, t.sin()), fovy: 0.9, near: 0.2, far, up: Vec3::Y }
    }

    /// The main view plus up to two shadow views (near and far).
    pub fn views(&self, frame: u32, count: u32, aspect: f32) -> Vec<View> {
        let side = self.side;
        let t = frame as f32 * 0.02;
        let radius = (side as f32 * SPACING * 0.25).clamp(15.0, 150.0);
        let eye = Vec3::new(t.cos() * radius, radius * 0.35 + 6.0, t.sin() * radius);
        let target = Vec3::new(0.0, 2.0, 0.0);
        let far = radius * 4.0;
        let mut views = vec![View {
            label: "main",
            view_proj: Mat4::perspective_rh(0.9, aspect, 0.5, far) * Mat4::look_at_rh(eye, target, Vec3::Y),
            eye,
            far,
            layer_mask: u16::MAX,
            pass: PassKind::Forward,
        }];
        let light = LIGHT.normalize();
        for (k, size) in [radius * 0.6, radius * 2.0].into_iter().enumerate().take(count as usize - 1) {
            let center = target + (eye - target) * 0.2 * (1 - k) as f32;
            let light_eye = center - light * size * 2.0;
            let proj = Mat4::orthographic_rh(-size, size, -size, size, 0.1, size * 4.0);
            views.push(View {
                label: if k == 0 { "shadow-near" } else { "shadow-far" },
                view_proj: proj * Mat4::look_at_rh(light_eye, center, Vec3::Y),
                eye: light_eye,
                far: size * 4.0,
                layer_mask: u16::MAX,
                pass: PassKind::Shadow,
            });
        }
        views
    }
}

/// Percentile `q` (0..=1) of `values`, nearest rank; 0 for no values.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(((s.len().max(1) - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corner_cube_is_the_box_with_its_8_corners_shared() {
        let (cube, faces) = (corner_cube(), box_mesh(1.0, 1.0, 1.0));
        assert_eq!((cube.vertices.len(), cube.indices.len()), (8, 36));
        // Every corner is used; every triangle is the box's, same corners, same winding.
        assert!((0..8).all(|k| cube.indices.contains(&k)));
        let at = |m: &MeshData, i: u32| Vec3::from(m.vertices[i as usize].position);
        for (t, u) in cube.indices.chunks(3).zip(faces.indices.chunks(3)) {
            for k in 0..3 {
                assert_eq!(at(&cube, t[k]), at(&faces, u[k]));
            }
        }
        // Normals are unit length and point out of their corners.
        for v in &cube.vertices {
            let n = Vec3::from(v.normal);
            assert!((n.length() - 1.0).abs() < 1e-6);
            assert!(n.dot(Vec3::from(v.position) - Vec3::new(0.0, 0.5, 0.0)) > 0.8);
        }
    }

    #[test]
    fn box_faces_are_the_boxs_three_positive_faces_with_7_corners() {
        let (half, faces) = (box_faces(), box_mesh(1.0, 1.0, 1.0));
        assert_eq!((half.vertices.len(), half.indices.len()), (7, 18));
        assert!((0..7).all(|k| half.indices.contains(&k)));
        // The corner opposite (+x, +y, +z) is not among them.
        assert!(half.vertices.iter().all(|v| v.position != [-0.5, 0.0, -0.5]));
        // Its triangles are the box's faces toward +x, +y and +z, in order, wound alike.
        let at = |m: &MeshData, i: u32| Vec3::from(m.vertices[i as usize].position);
        let positive: Vec<&[u32]> = faces
            .indices
            .chunks(3)
            .filter(|t| faces.vertices[t[0] as usize].normal.iter().all(|&c| c >= 0.0))
            .collect();
        assert_eq!(positive.len(), 6);
        for (t, u) in half.indices.chunks(3).zip(positive) {
            for k in 0..3 {
                assert_eq!(at(&half, t[k]), at(&faces, u[k]));
            }
        }
        for v in &half.vertices {
            let n = Vec3::from(v.normal);
            assert!((n.length() - 1.0).abs() < 1e-6 && n.dot(Vec3::from(v.position) - Vec3::new(0.0, 0.5, 0.0)) > 0.8);
        }
    }

    #[test]
    fn the_cube_camera_sees_every_cube_at_any_grid_size() {
        use switchyard::backend::null::NullBackend;
        for objects in [1, 7, 100, 10_000] {
            let config =
                RendererConfig { threads: 1, width: 16, height: 16, max_objects: objects, ..Default::default() };
            let mut r = Renderer::new(std::sync::Arc::new(NullBackend::new(true)), config).unwrap();
            let cubes = build_cubes(&mut r, objects, 5).unwrap();
            assert_eq!(r.scene().len(), objects);
            let lens = cubes.lens();
            for aspect in [1.0, 16.0 / 9.0] {
                let vp = lens.view_proj(aspect);
                for i in 0..objects {
                    let p = cube_position(i, cubes.side);
                    for k in 0..8 {
                        let corner = p + Vec3::new(
                            if k & 1 == 0 { -0.5 } else { 0.5 },
                            (k >> 1 & 1) as f32,
                            if k & 4 == 0 { -0.5 } else { 0.5 },
                        );
                        let c = vp * corner.extend(1.0);
                        assert!(
                            c.w > 0.0 && c.x.abs() <= c.w && c.y.abs() <= c.w && c.z >= 0.0 && c.z <= c.w,
                            "{objects} cubes: cube {i} corner {k} out of view"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let v = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!((percentile(&v, 0.0), percentile(&v, 0.5), percentile(&v, 1.0)), (1.0, 3.0, 5.0));
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
    }
}
