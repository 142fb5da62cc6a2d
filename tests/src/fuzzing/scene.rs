//! Scene operations: objects, meshes and transforms.

use super::*;

/// Scene operation sequences: inserts, updates, moves and removals of objects with
/// arbitrary transforms, layers and flags; meshes with arbitrary vertices and indices made
/// and removed; materials made and removed; textures; frames. A refused edit changes
/// nothing (the object count stays).
pub fn scene_ops(data: &[u8]) {
    scene_ops_on(&mut renderer(), data, &mut Log::default());
}

/// [`scene_ops`] on `r` (a fresh renderer), noting each operation in `log`.
pub fn scene_ops_on<B: Backend>(r: &mut Renderer<B>, data: &[u8], log: &mut Log) {
    let _ = run_scene_ops(r, &mut Unstructured::new(data), log);
}

fn matrix(u: &mut Unstructured<'_>) -> Result<Mat4> {
    Ok(match u.int_in_range(0..=3)? {
        0 => Mat4::from_translation(glam::Vec3::new(float(u)?, float(u)?, float(u)?)),
        1 => Mat4::from_scale(glam::Vec3::splat(float(u)?)),
        _ => {
            let mut m = [0.0; 16];
            for x in &mut m {
                *x = float(u)?;
            }
            Mat4::from_cols_array(&m)
        }
    })
}

fn run_scene_ops<B: Backend>(r: &mut Renderer<B>, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
    let shader = r.create_shader(&ShaderDesc::lit()).expect("the lit shader");
    let mut meshes = vec![r.create_mesh(&crate::cube()).expect("a cube")];
    let mut materials = vec![r.create_material(&MaterialDesc { shader, ..Default::default() }).expect("a material")];
    let mut textures = Vec::new();
    let mut ids: Vec<ObjectId> = Vec::new();
    while !u.is_empty() {
        let n = r.scene().len();
        match u.int_in_range(0..=10)? {
            0..=2 => {
                let mut descs = Vec::new();
                for _ in 0..u.int_in_range(1..=8)? {
                    descs.push(ObjectDesc {
                        mesh: *u.choose(&meshes)?,
                        material: *u.choose(&materials)?,
                        transform: matrix(u)?,
                        layer: u.int_in_range(0..=17)?,
                        flags: u.arbitrary()?,
                    });
                }
                match log.note("insert_objects", r.insert_objects(&descs)) {
                    Ok(new) => ids.extend(new),
                    Err(_) => assert_eq!(r.scene().len(), n, "a refused insert adds nothing"),
                }
            }
            3 if !ids.is_empty() => {
                let edit = (
                    *u.choose(&ids)?,
                    ObjectDesc {
                        mesh: *u.choose(&meshes)?,
                        material: *u.choose(&materials)?,
                        transform: matrix(u)?,
                        layer: u.int_in_range(0..=17)?,
                        flags: u.arbitrary()?,
                    },
                );
                let _ = log.note("update_objects", r.update_objects(&[edit]));
            }
            4 if !ids.is_empty() => {
                let _ = log.note("set_transforms", r.set_transforms(&[(*u.choose(&ids)?, matrix(u)?)]));
            }
            5 if !ids.is_empty() => {
                let mut gone = Vec::new();
                for _ in 0..u.int_in_range(1..=4)? {
                    gone.push(*u.choose(&ids)?);
                }
                if log.note("remove_objects", r.remove_objects(&gone)).is_err() {
                    assert_eq!(r.scene().len(), n, "a refused removal removes nothing");
                }
            }
            6 => {
                let mut vertices = Vec::new();
                for _ in 0..u.int_in_range(0..=12)? {
                    let p = [float(u)?, float(u)?, float(u)?];
                    vertices.push(Vertex { position: p, normal: [0.0, 1.0, 0.0], uv: [0.0, 0.0] });
                }
                let mut indices = Vec::new();
                for _ in 0..u.int_in_range(0..=18)? {
                    indices.push(u.int_in_range(0..=13)?);
                }
                if let Ok(m) = log.note("create_mesh", r.create_mesh(&MeshData { vertices, indices })) {
                    meshes.push(m);
                }
            }
            7 => {
                let m = *u.choose(&meshes)?;
                if log.note("remove_mesh", r.remove_mesh(m)).is_ok() && meshes.len() > 1 {
                    meshes.retain(|&x| x != m);
                }
            }
            8 => {
                let (w, h) = (u.int_in_range(0..=4)?, u.int_in_range(0..=4)?);
                let len = if u.arbitrary()? { (w * h * 4) as usize } else { u.int_in_range(0..=80)? };
                let texels: Vec<u8> = (0..len).map(|i| i as u8).collect();
                if let Ok(t) = log.note("create_texture", r.create_texture(w, h, &texels)) {
                    textures.push(t);
                }
                let base_texture = if textures.is_empty() { None } else { Some(*u.choose(&textures)?) };
                let desc = MaterialDesc { shader, base_texture, ..Default::default() };
                if let Ok(m) = log.note("create_material", r.create_material(&desc)) {
                    materials.push(m);
                }
            }
            9 => {
                let m = *u.choose(&materials)?;
                if log.note("remove_material", r.remove_material(m)).is_ok() && materials.len() > 1 {
                    materials.retain(|&x| x != m);
                }
                if let Some(&t) = textures.first() {
                    let _ = log.note("remove_texture", r.remove_texture(t));
                }
            }
            _ => frame(r, log),
        }
    }
    frame(r, log);
    Ok(())
}
