//! `--churn`: a scene that never holds still. Every frame it inserts and removes objects,
//! moves some, changes some objects' mesh and material, sets a material property, and
//! replaces one mesh and one material (moving their users off first, then removing them
//! and making new ones); the demo watches the process's resident memory.

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard::backend::Backend;
use switchyard::*;
use switchyard_city as city;

/// Meshes and materials the churn keeps alive at once.
const POOL: usize = 16;

/// The churned part of the scene.
pub(crate) struct Churn {
    rng: Pcg64Mcg,
    shader: ShaderHandle,
    meshes: Vec<MeshHandle>,
    materials: Vec<MaterialHandle>,
    /// Churned objects.
    objects: Vec<Churned>,
    /// Objects the churn keeps (inserts and removes balance around it).
    target: usize,
    /// Extent of the area it scatters objects over.
    extent: f32,
    /// Edits per kind per frame.
    per_frame: usize,
}

/// A churned object: its id, the pool slots of its mesh and material, where it is.
#[derive(Clone, Copy)]
struct Churned {
    id: ObjectId,
    mesh: usize,
    material: usize,
    transform: Mat4,
}

fn mesh(rng: &mut Pcg64Mcg) -> MeshData {
    // Boxes of several sizes, some of them subdivided, so the shared mesh buffers see
    // ranges of different lengths come and go.
    let b = city::box_mesh(rng.gen_range(0.5..2.0), rng.gen_range(0.5..6.0), rng.gen_range(0.5..2.0));
    let copies = rng.gen_range(1..=4u32);
    let mut out = MeshData::default();
    for c in 0..copies {
        let base = out.vertices.len() as u32;
        out.vertices.extend(b.vertices.iter().map(|v| {
            let mut v = *v;
            v.position[1] += c as f32 * 0.1;
            v
        }));
        out.indices.extend(b.indices.iter().map(|i| i + base));
    }
    out
}

impl Churn {
    /// Adds `objects` churned objects of `shader`'s materials over an area of `extent`
    /// around the origin.
    pub(crate) fn new<B: Backend>(
        r: &mut Renderer<B>,
        shader: ShaderHandle,
        objects: usize,
        extent: f32,
    ) -> Result<Self, String> {
        let e = |e: ResourceError| e.to_string();
        let mut c = Self {
            rng: Pcg64Mcg::seed_from_u64(0xC4A2),
            shader,
            meshes: Vec::new(),
            materials: Vec::new(),
            objects: Vec::new(),
            target: objects,
            extent: extent.max(10.0),
            per_frame: (objects / 100).max(4),
        };
        for _ in 0..POOL {
            let m = r.create_mesh(&mesh(&mut c.rng)).map_err(e)?;
            c.meshes.push(m);
            let mat = c.material(r)?;
            c.materials.push(mat);
        }
        c.insert(r, objects)?;
        Ok(c)
    }

    fn material<B: Backend>(&mut self, r: &mut Renderer<B>) -> Result<MaterialHandle, String> {
        let color = [self.rng.gen(), self.rng.gen(), self.rng.gen(), 1.0];
        r.create_material(&MaterialDesc {
            shader: self.shader,
            properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color(color)),
            transparent: self.rng.gen_bool(0.1),
            ..Default::default()
        })
        .map_err(|e| e.to_string())
    }

    fn transform(&mut self) -> Mat4 {
        let h = self.extent * 0.5;
        Mat4::from_translation(Vec3::new(self.rng.gen_range(-h..h), 0.0, self.rng.gen_range(-h..h)))
            * Mat4::from_rotation_y(self.rng.gen_range(0.0..6.3))
    }

    fn insert<B: Backend>(&mut self, r: &mut Renderer<B>, n: usize) -> Result<(), String> {
        let mut new = Vec::with_capacity(n);
        for _ in 0..n {
            let (mesh, material) = (self.rng.gen_range(0..POOL), self.rng.gen_range(0..POOL));
            new.push(Churned { id: ObjectId::default(), mesh, material, transform: self.transform() });
        }
        let descs: Vec<ObjectDesc> = new.iter().map(|c| self.desc(c)).collect();
        let ids = r.insert_objects(&descs).map_err(|e| e.to_string())?;
        self.objects.extend(new.into_iter().zip(ids).map(|(c, id)| Churned { id, ..c }));
        Ok(())
    }

    /// One frame's edits.
    pub(crate) fn step<B: Backend>(&mut self, r: &mut Renderer<B>) -> Result<(), String> {
        let e = |e: SceneError| e.to_string();
        let k = self.per_frame;
        // Remove k, insert about k (the count wanders around the target).
        let mut gone = Vec::with_capacity(k);
        for _ in 0..k.min(self.objects.len()) {
            let i = self.rng.gen_range(0..self.objects.len());
            gone.push(self.objects.swap_remove(i).id);
        }
        r.remove_objects(&gone).map_err(e)?;
        // Back towards the target, give or take k: the count wanders but never drifts off.
        let want = self.target + self.rng.gen_range(0..=2 * k);
        let add = want.saturating_sub(self.objects.len() + k).min(3 * k);
        self.insert(r, add)?;
        if self.objects.is_empty() {
            return Ok(());
        }
        // Move k; give k another mesh and material.
        let mut moves = Vec::with_capacity(k);
        for _ in 0..k {
            let i = self.rng.gen_range(0..self.objects.len());
            self.objects[i].transform = self.transform();
            moves.push((self.objects[i].id, self.objects[i].transform));
        }
        r.set_transforms(&moves).map_err(e)?;
        let mut edits = Vec::with_capacity(k);
        for _ in 0..k {
            let i = self.rng.gen_range(0..self.objects.len());
            (self.objects[i].mesh, self.objects[i].material) =
                (self.rng.gen_range(0..POOL), self.rng.gen_range(0..POOL));
            edits.push((self.objects[i].id, self.desc(&self.objects[i])));
        }
        // An object may be edited twice in one batch; the last edit wins, as recorded.
        r.update_objects(&edits).map_err(e)?;
        let t = self.rng.gen_range(0..POOL);
        let color = [self.rng.gen(), self.rng.gen(), self.rng.gen(), 1.0];
        r.set_material_property(self.materials[t], "_BaseColor", PropertyValue::Color(color))
            .map_err(|e| e.to_string())?;
        // Replace one mesh and one material: their users move to others first.
        let (m, t) = (self.rng.gen_range(0..POOL), self.rng.gen_range(0..POOL));
        let new_mesh = r.create_mesh(&mesh(&mut self.rng)).map_err(|e| e.to_string())?;
        let new_material = self.material(r)?;
        let (old_mesh, old_material) = (self.meshes[m], self.materials[t]);
        (self.meshes[m], self.materials[t]) = (new_mesh, new_material);
        let moved: Vec<_> =
            self.objects.iter().filter(|c| c.mesh == m || c.material == t).map(|c| (c.id, self.desc(c))).collect();
        r.update_objects(&moved).map_err(e)?;
        r.remove_mesh(old_mesh).map_err(|e| e.to_string())?;
        r.remove_material(old_material).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn desc(&self, c: &Churned) -> ObjectDesc {
        ObjectDesc {
            mesh: self.meshes[c.mesh],
            material: self.materials[c.material],
            transform: c.transform,
            layer: 0,
            flags: CASTS_SHADOWS,
        }
    }
}

/// Resident memory of this process, bytes (Linux `/proc/self/statm`, 4 KiB pages; `None`
/// elsewhere).
pub(crate) fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
