//! `--gltf FILE`: loads a glTF 2.0 scene (.gltf or .glb) and places copies of it on a grid
//! until the requested object count is reached. Meshes become Switchyard meshes; materials
//! become lit materials with the base color factor and base color texture. A flat-shaded
//! primitive (every vertex normal its face's, as a box of 24 vertices) is welded
//! ([`MeshData::welded_flat`]) and lit with the `FLAT` keyword: the same pixels from fewer
//! vertices (the 24-vertex cube grid draws as 8-vertex cubes); `weld: false` keeps the
//! vertices as given. Any bytes give a scene or an error, never a panic or a hang (fuzzed:
//! `fuzz/fuzz_targets/gltf.rs`).

use glam::{Mat4, Vec3};
use switchyard::backend::Backend;
use switchyard::*;

use switchyard_city as city;

/// One drawable of the model: a primitive under a node transform.
struct Part {
    mesh: MeshHandle,
    material: MaterialHandle,
    transform: Mat4,
}

fn linear_to_srgb(c: f32) -> f32 {
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

fn rgba8(img: &gltf::image::Data) -> Option<Vec<u8>> {
    use gltf::image::Format;
    match img.format {
        Format::R8G8B8A8 => Some(img.pixels.clone()),
        Format::R8G8B8 => Some(img.pixels.chunks(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect()),
        Format::R8 => Some(img.pixels.iter().flat_map(|&v| [v, v, v, 255]).collect()),
        _ => None,
    }
}

/// Loads `path` and fills the scene with copies of it (plus a ground plane) up to `objects`,
/// its materials made with `shader` (the built-in lit shader, either form), its flat-shaded
/// primitives welded where `weld`.
pub fn build<B: Backend>(
    r: &mut Renderer<B>,
    path: &std::path::Path,
    objects: usize,
    shader: ShaderHandle,
    weld: bool,
) -> Result<city::City, String> {
    let at = |e: String| format!("{}: {e}", path.display());
    let bytes = std::fs::read(path).map_err(|e| at(e.to_string()))?;
    precheck(&bytes).map_err(at)?;
    let (doc, buffers, images) = guarded(|| gltf::import(path)).map_err(at)?;
    place(r, &doc, &buffers, &images, objects, shader, weld).map_err(at)
}

/// [`build`] from the bytes of a .glb or .gltf file (its buffers and images embedded or as
/// data URIs), flat-shaded primitives welded.
pub fn build_from_slice<B: Backend>(
    r: &mut Renderer<B>,
    bytes: &[u8],
    objects: usize,
    shader: ShaderHandle,
) -> Result<city::City, String> {
    precheck(bytes)?;
    let (doc, buffers, images) = guarded(|| gltf::import_slice(bytes))?;
    place(r, &doc, &buffers, &images, objects, shader, true)
}

/// A triangle primitive's mesh data, material index and bounds.
type Primitive = (MeshData, Option<usize>, Vec3, Vec3);

/// Every mesh's triangle primitives, as mesh data (other modes and primitives without
/// positions are left out).
fn read_primitives(doc: &gltf::Document, buffers: &[gltf::buffer::Data]) -> Result<Vec<Vec<Primitive>>, String> {
    use gltf::accessor::DataType;
    let mut meshes = Vec::new();
    for mesh in doc.meshes() {
        let mut prims = Vec::new();
        for p in mesh.primitives() {
            if p.mode() != gltf::mesh::Mode::Triangles {
                continue;
            }
            // The reader's `unreachable!` for other index types: an error here instead.
            if p.indices().is_some_and(|a| !matches!(a.data_type(), DataType::U8 | DataType::U16 | DataType::U32)) {
                return Err(format!("mesh {}: indices are not unsigned integers", mesh.index()));
            }
            let reader = p.reader(|b| buffers.get(b.index()).map(|d| &d.0[..]));
            let Some(positions) = reader.read_positions() else { continue };
            let positions: Vec<[f32; 3]> = positions.collect();
            let normals: Vec<[f32; 3]> =
                reader.read_normals().map_or_else(|| vec![[0.0, 1.0, 0.0]; positions.len()], |n| n.collect());
            let uvs: Vec<[f32; 2]> =
                reader.read_tex_coords(0).map_or_else(|| vec![[0.0, 0.0]; positions.len()], |t| t.into_f32().collect());
            let indices: Vec<u32> =
                reader.read_indices().map_or_else(|| (0..positions.len() as u32).collect(), |i| i.into_u32().collect());
            if normals.len() != positions.len() || uvs.len() != positions.len() {
                return Err(format!("attribute counts differ in mesh {}", mesh.index()));
            }
            let vertices = (0..positions.len())
                .map(|i| Vertex { position: positions[i], normal: normals[i], uv: uvs[i] })
                .collect();
            let (lo, hi) = positions.iter().fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
                (lo.min(Vec3::from(*p)), hi.max(Vec3::from(*p)))
            });
            prims.push((MeshData { vertices, indices }, p.material().index(), lo, hi));
        }
        meshes.push(prims);
    }
    Ok(meshes)
}

/// What gltf-json 1.4's validation assumes without checking (it indexes a primitive's
/// accessors before validating them, and panics on a file the fuzzer found): every
/// accessor a primitive names exists.
fn precheck(bytes: &[u8]) -> Result<(), String> {
    let raw = guarded(|| gltf::Gltf::from_slice_without_validation(bytes))?;
    let json = raw.as_json();
    let accessors = json.accessors.len();
    for (m, mesh) in json.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let targets = prim.targets.iter().flatten().flat_map(|t| [&t.positions, &t.normals, &t.tangents]);
            let named = prim.attributes.values().chain(&prim.indices).chain(targets.flatten());
            if named.into_iter().any(|a| a.value() >= accessors) {
                return Err(format!("mesh {m} primitive {p} names an accessor the file does not have"));
            }
        }
    }
    Ok(())
}

/// Runs the parser, turning a panic inside it (a bug of the crate on malformed input: the
/// fuzzer found an overflow in its GLB header parsing) into an error.
fn guarded<T>(parse: impl FnOnce() -> gltf::Result<T>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(parse)) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("the glTF parser failed on this file".into()),
    }
}

fn place<B: Backend>(
    r: &mut Renderer<B>,
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    images: &[gltf::image::Data],
    objects: usize,
    shader: ShaderHandle,
    weld: bool,
) -> Result<city::City, String> {
    r.set_lighting(Lighting { fog_density: 0.002, ..Lighting::default() });

    let mut textures = Vec::with_capacity(images.len());
    for img in images {
        let t = match rgba8(img) {
            Some(px) => Some(r.create_texture(img.width, img.height, &px).map_err(|e| e.to_string())?),
            None => None,
        };
        textures.push(t);
    }
    // Each glTF material, the default one last, as given and lit with `FLAT`: made for the
    // first primitive that uses it in that form (a file's unused materials are not made).
    let mut descs = Vec::with_capacity(doc.materials().len() + 1);
    for m in doc.materials() {
        let pbr = m.pbr_metallic_roughness();
        let [cr, cg, cb, ca] = pbr.base_color_factor();
        let tex = pbr.base_color_texture().and_then(|t| textures.get(t.texture().source().index()).copied().flatten());
        let props = PropertySheet::new()
            .with("_BaseColor", PropertyValue::Color([linear_to_srgb(cr), linear_to_srgb(cg), linear_to_srgb(cb), ca]))
            .with("_Roughness", PropertyValue::Float(pbr.roughness_factor()));
        // Without a base texture, no uv reaches the fragment stage.
        let keywords =
            if tex.is_some() { vec!["SPECULAR".into()] } else { vec!["SPECULAR".into(), "UNTEXTURED".into()] };
        descs.push(MaterialDesc { shader, keywords, properties: props, base_texture: tex, transparent: false });
    }
    descs.push(MaterialDesc {
        shader,
        keywords: vec!["UNTEXTURED".into()],
        properties: PropertySheet::new(),
        ..MaterialDesc::default()
    });
    let mut made: Vec<[Option<MaterialHandle>; 2]> = vec![[None; 2]; descs.len()];
    let mut material = |r: &mut Renderer<B>, k: usize, flat: bool| -> Result<MaterialHandle, String> {
        if let Some(mat) = made[k][flat as usize] {
            return Ok(mat);
        }
        let mut desc = descs[k].clone();
        if flat {
            desc.keywords.push("FLAT".into());
        }
        let mat = r.create_material(&desc).map_err(|e| e.to_string())?;
        made[k][flat as usize] = Some(mat);
        Ok(mat)
    };

    // Meshes: one Switchyard mesh per triangle primitive, read first (the crate's readers
    // can panic on malformed accessors; nothing of the renderer runs inside the guard).
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_primitives(doc, buffers)))
        .map_err(|_| "the glTF reader failed on this file's accessors".to_string())??;
    let mut meshes: Vec<Vec<(MeshHandle, MaterialHandle, Vec3, Vec3)>> = Vec::new();
    for (m, prims) in read.into_iter().enumerate() {
        let mut parts = Vec::new();
        for (data, gltf_material, lo, hi) in prims {
            let k = gltf_material.filter(|&i| i < descs.len() - 1).unwrap_or(descs.len() - 1);
            let (data, mat) = match weld.then(|| data.welded_flat()).flatten() {
                Some(welded) => (welded, material(r, k, true)?),
                None => (data, material(r, k, false)?),
            };
            let handle = r.create_mesh(&data).map_err(|e| format!("mesh {m}: {e}"))?;
            parts.push((handle, mat, lo, hi));
        }
        meshes.push(parts);
    }

    // Parts: every primitive under every node of the default scene, with world transforms.
    let mut parts = Vec::new();
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    let scene = doc.default_scene().or_else(|| doc.scenes().next()).ok_or("no scene")?;
    let mut stack: Vec<(gltf::Node<'_>, Mat4)> = scene.nodes().map(|n| (n, Mat4::IDENTITY)).collect();
    // The spec makes the node hierarchy a tree: a node met twice (a cycle, or two
    // parents) is an error, not an endless walk.
    let mut seen = vec![false; doc.nodes().len()];
    while let Some((node, parent)) = stack.pop() {
        if std::mem::replace(&mut seen[node.index()], true) {
            return Err(format!("node {} appears twice in the scene's hierarchy", node.index()));
        }
        let world = parent * Mat4::from_cols_array_2d(&node.transform().matrix());
        if let Some(m) = node.mesh() {
            for &(mesh, material, plo, phi) in &meshes[m.index()] {
                for corner in [plo, phi] {
                    let p = world.transform_point3(corner);
                    (lo, hi) = (lo.min(p), hi.max(p));
                }
                parts.push(Part { mesh, material, transform: world });
            }
        }
        stack.extend(node.children().map(|c| (c, world)));
    }
    if parts.is_empty() {
        return Err("the scene has no triangle meshes".into());
    }
    // Normalize the model to about 2.5 units, standing on the ground.
    let size = (hi - lo).max_element().max(1e-6);
    let scale = 2.5 / size;
    let base = Mat4::from_scale(Vec3::splat(scale))
        * Mat4::from_translation(Vec3::new(-(lo.x + hi.x) * 0.5, -lo.y, -(lo.z + hi.z) * 0.5));

    let copies = objects.saturating_sub(1).div_ceil(parts.len()).max(1);
    let side = (copies as f64).sqrt().ceil() as usize;
    let spacing = city::SPACING;
    let mut descs = Vec::with_capacity(objects);
    descs.push(city::ground(r, shader, side).map_err(|e| e.to_string())?);
    'grid: for c in 0..copies {
        let pos = Vec3::new(
            ((c % side) as f32 - side as f32 * 0.5) * spacing,
            0.0,
            ((c / side) as f32 - side as f32 * 0.5) * spacing,
        );
        for p in &parts {
            if descs.len() >= objects {
                break 'grid;
            }
            descs.push(ObjectDesc {
                mesh: p.mesh,
                material: p.material,
                transform: Mat4::from_translation(pos) * base * p.transform,
                layer: 0,
                flags: CASTS_SHADOWS,
            });
        }
    }
    r.insert_objects(&descs).map_err(|e| e.to_string())?;
    Ok(city::City { side })
}
