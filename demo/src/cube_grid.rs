//! `--write-cube-grid FILE`: the stress scene's grid as a glTF 2.0 binary (.glb), so the
//! same cubes can be loaded by another renderer (the Bevy comparison of issue 21 loads a
//! 250 x 250 grid and places it 16 times) and by this demo (`--gltf FILE`).
//!
//! One unit cube, whole: by default [`switchyard_city::corner_cube`] (8 shared corners with
//! normals out of the corners, as `--scene cubes --whole-cubes` draws it; without the flag
//! the scene draws the three faces toward the camera, which another renderer would not
//! know to mirror; `--scene cubes` shades its faces flat from derivatives, a glTF reader
//! shades with these normals), or with [`GridCube::Faces24`] the 24-vertex box of
//! [`switchyard_city::box_mesh`] with a normal per face (the mesh of issue 21's Bevy
//! comparison, as Bevy's `Cuboid` builds it), as positions, normals and 16-bit indices in
//! one buffer; one mesh per material over the same accessors (a glTF primitive names its
//! material); a node per cube at [`switchyard_city::cube_position`], with cube `i` drawn in
//! material `i % materials` as in `--scene cubes`.

use serde_json::json;
use switchyard_city as city;

/// Most cubes per side (a million cubes per file).
pub const MAX_SIDE: usize = 1000;

/// The cube mesh a grid file holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GridCube {
    /// 8 shared corners, normals out of the corners ([`switchyard_city::corner_cube`]).
    #[default]
    #[value(name = "8")]
    Corners8,
    /// 24 vertices, a normal per face ([`switchyard_city::box_mesh`]`(1, 1, 1)`).
    #[value(name = "24")]
    Faces24,
}

/// The .glb bytes of a `side` x `side` grid of `cube`s in `materials` materials.
///
/// # Errors
/// A side of 0 or above [`MAX_SIDE`], or no materials, or more than 65,536.
pub fn glb(side: usize, materials: usize, cube: GridCube) -> Result<Vec<u8>, String> {
    if side == 0 || side > MAX_SIDE {
        return Err(format!("grid side {side}: must be 1 to {MAX_SIDE}"));
    }
    if materials == 0 || materials > 65_536 {
        return Err(format!("{materials} materials: must be 1 to 65536"));
    }
    let cube = match cube {
        GridCube::Corners8 => city::corner_cube(),
        GridCube::Faces24 => city::box_mesh(1.0, 1.0, 1.0),
    };
    let mut bin: Vec<u8> = Vec::new();
    for v in &cube.vertices {
        v.position.iter().for_each(|c| bin.extend_from_slice(&c.to_le_bytes()));
    }
    let normals_at = bin.len();
    for v in &cube.vertices {
        v.normal.iter().for_each(|c| bin.extend_from_slice(&c.to_le_bytes()));
    }
    let indices_at = bin.len();
    for &i in &cube.indices {
        let i = u16::try_from(i).map_err(|_| "the cube's indices fit 16 bits".to_string())?;
        bin.extend_from_slice(&i.to_le_bytes());
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let (lo, hi) = cube.vertices.iter().fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), v| {
        (std::array::from_fn(|k| lo[k].min(v.position[k])), std::array::from_fn(|k| hi[k].max(v.position[k])))
    });
    let verts = cube.vertices.len();
    let doc = json!({
        "asset": { "version": "2.0", "generator": "switchyard-demo --write-cube-grid" },
        "buffers": [{ "byteLength": bin.len() }],
        "bufferViews": [
            { "buffer": 0, "byteOffset": 0, "byteLength": normals_at, "target": 34962 },
            { "buffer": 0, "byteOffset": normals_at, "byteLength": indices_at - normals_at, "target": 34962 },
            { "buffer": 0, "byteOffset": indices_at, "byteLength": cube.indices.len() * 2, "target": 34963 },
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": verts, "type": "VEC3", "min": lo, "max": hi },
            { "bufferView": 1, "componentType": 5126, "count": verts, "type": "VEC3" },
            { "bufferView": 2, "componentType": 5123, "count": cube.indices.len(), "type": "SCALAR" },
        ],
        "materials": (0..materials).map(|m| {
            let [r, g, b] = city::cube_color(m, materials);
            json!({ "name": format!("cube-{m}"), "pbrMetallicRoughness": {
                "baseColorFactor": [r, g, b, 1.0], "metallicFactor": 0.0, "roughnessFactor": 0.5 } })
        }).collect::<Vec<_>>(),
        "meshes": (0..materials).map(|m| json!({ "name": format!("cube-{m}"), "primitives": [{
            "attributes": { "POSITION": 0, "NORMAL": 1 }, "indices": 2, "material": m }] })).collect::<Vec<_>>(),
        "nodes": (0..side * side).map(|i| {
            let p = city::cube_position(i, side);
            json!({ "mesh": i % materials, "translation": [p.x, p.y, p.z] })
        }).collect::<Vec<_>>(),
        "scenes": [{ "nodes": (0..side * side).collect::<Vec<_>>() }],
        "scene": 0,
    });
    let mut text = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    // GLB: a 12-byte header, then the JSON chunk and the binary chunk (glTF 2.0, section 4.4).
    let total = 12 + 8 + text.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    let word = |out: &mut Vec<u8>, w: usize| -> Result<(), String> {
        out.extend_from_slice(&u32::try_from(w).map_err(|_| "the file passes 4 GiB".to_string())?.to_le_bytes());
        Ok(())
    };
    out.extend_from_slice(b"glTF");
    word(&mut out, 2)?;
    word(&mut out, total)?;
    word(&mut out, text.len())?;
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    word(&mut out, bin.len())?;
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    Ok(out)
}
