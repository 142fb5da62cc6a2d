//! [stale] The scene store and its resources against a plain `HashMap` model, over random
//! operation sequences: inserts, updates, moves and removals of objects, material and mesh
//! creation and removal (dense slots reused lowest first), with stale handles, repeated handles, non-finite transforms and materials
//! still in use mixed in. Every operation either does what the model does or returns a
//! typed error and changes nothing; frames keep rendering on the null backend.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Vec3};
use proptest::prelude::*;
use switchyard::backend::null::NullBackend;
use switchyard::backend::Backend;
use switchyard::*;
use switchyard_tests::cube;

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<(u8, u8, f32)>),
    Update(u16, u8, u8, f32),
    Move(u16, f32),
    Remove(Vec<u16>),
    NewMaterial,
    RemoveMaterial(u8),
    /// A mesh of `n` cubes.
    NewMesh(u8),
    RemoveMesh(u8),
    Render,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop::collection::vec((0u8..4, 0u8..8, -50.0f32..50.0), 1..6).prop_map(Op::Insert),
        2 => (any::<u16>(), 0u8..4, 0u8..8, -50.0f32..50.0).prop_map(|(a, b, c, d)| Op::Update(a, b, c, d)),
        2 => (any::<u16>(), prop_oneof![-50.0f32..50.0, Just(f32::NAN), Just(3e38)]).prop_map(|(a, b)| Op::Move(a, b)),
        2 => prop::collection::vec(any::<u16>(), 1..4).prop_map(Op::Remove),
        1 => Just(Op::NewMaterial),
        1 => (0u8..8).prop_map(Op::RemoveMaterial),
        1 => (1u8..4).prop_map(Op::NewMesh),
        1 => (0u8..8).prop_map(Op::RemoveMesh),
        1 => Just(Op::Render),
    ]
}

/// What the model holds of an object.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Obj {
    mesh: usize,
    material: usize,
    x: f32,
}

struct Harness {
    r: Renderer<NullBackend>,
    /// Every mesh handle ever made, whether it is alive, and the dense slot it got.
    meshes: Vec<MeshHandle>,
    live_meshes: Vec<bool>,
    mesh_dense: Vec<u32>,
    /// Every material handle ever made; `None` in `live` once removed.
    materials: Vec<MaterialHandle>,
    live_materials: Vec<bool>,
    shader: ShaderHandle,
    /// Every object id ever handed out (removed ones stay: stale handles to try).
    ids: Vec<ObjectId>,
    model: HashMap<ObjectId, Obj>,
}

impl Harness {
    fn new() -> Self {
        let config = RendererConfig {
            threads: 2,
            width: 16,
            height: 16,
            max_objects: 64,
            max_materials: 6,
            ..Default::default()
        };
        let mut r = Renderer::new(Arc::new(NullBackend::new(true)), config).unwrap();
        let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
        let meshes: Vec<_> = (0..4).map(|_| r.create_mesh(&cube()).unwrap()).collect();
        let materials: Vec<_> =
            (0..3).map(|_| r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap()).collect();
        Self {
            r,
            live_meshes: vec![true; meshes.len()],
            mesh_dense: (0..meshes.len() as u32).collect(),
            meshes,
            live_materials: vec![true; materials.len()],
            materials,
            shader,
            ids: Vec::new(),
            model: HashMap::new(),
        }
    }

    fn desc(&self, mesh: u8, material: u8, x: f32) -> ObjectDesc {
        let material = self.materials[material as usize % self.materials.len()];
        let transform = Mat4::from_translation(Vec3::new(x, 0.0, 0.0));
        let mesh = self.meshes[self.mesh_index(mesh)];
        ObjectDesc { mesh, material, transform, layer: 0, flags: CASTS_SHADOWS }
    }

    fn mesh_index(&self, m: u8) -> usize {
        m as usize % self.meshes.len()
    }

    fn material_index(&self, m: u8) -> usize {
        m as usize % self.materials.len()
    }

    fn id(&self, k: u16) -> Option<ObjectId> {
        (!self.ids.is_empty()).then(|| self.ids[k as usize % self.ids.len()])
    }

    fn users(&self, material: usize) -> usize {
        self.model.values().filter(|o| o.material == material).count()
    }

    fn mesh_users(&self, mesh: usize) -> usize {
        self.model.values().filter(|o| o.mesh == mesh).count()
    }

    /// The dense slot the model expects a new mesh to get: the lowest one no live mesh
    /// holds, else the next.
    fn next_mesh_slot(&self) -> u32 {
        let held = |d: u32| self.mesh_dense.iter().zip(&self.live_meshes).any(|(&s, &l)| l && s == d);
        let used = self.mesh_dense.iter().max().map_or(0, |m| m + 1);
        (0..used).find(|&d| !held(d)).unwrap_or(used)
    }

    /// The store agrees with the model: every live id resolves to its object, every removed
    /// one is stale, and nothing else is stored.
    fn check(&self, step: usize) {
        let scene = self.r.scene();
        assert_eq!(scene.len(), self.model.len(), "step {step}: object count");
        let o = scene.objects();
        let mut dense: Vec<u32> = self.model.keys().filter_map(|id| scene.dense_index(*id)).collect();
        dense.sort_unstable();
        dense.dedup();
        assert_eq!(dense.len(), self.model.len(), "step {step}: live ids own distinct slots");
        for id in &self.ids {
            match (self.model.get(id), scene.dense_index(*id)) {
                (Some(m), Some(d)) => {
                    let d = d as usize;
                    assert_eq!(o.transforms[d].w_axis.x, m.x, "step {step}: transform");
                    assert_eq!(o.mesh[d], self.mesh_dense[m.mesh], "step {step}: mesh");
                }
                (None, None) => {}
                (m, d) => panic!("step {step}: model {m:?}, store {d:?}"),
            }
        }
    }
}

fn run(ops: &[Op]) {
    let mut h = Harness::new();
    for (step, op) in ops.iter().enumerate() {
        match op {
            Op::Insert(objs) => {
                let descs: Vec<_> = objs.iter().map(|&(m, mat, x)| h.desc(m, mat, x)).collect();
                let dead = objs.iter().any(|&(_, mat, _)| !h.live_materials[h.material_index(mat)]);
                let dead_mesh = objs.iter().any(|&(m, _, _)| !h.live_meshes[h.mesh_index(m)]);
                let full = h.model.len() + descs.len() > 64;
                match h.r.insert_objects(&descs) {
                    Ok(ids) => {
                        assert!(!dead && !dead_mesh && !full, "step {step}: accepted a stale handle or too many");
                        for (id, &(m, mat, x)) in ids.iter().zip(objs) {
                            h.model.insert(*id, Obj { mesh: h.mesh_index(m), material: h.material_index(mat), x });
                            h.ids.push(*id);
                        }
                    }
                    Err(SceneError::StaleHandle { kind: HandleKind::Material, .. }) => assert!(dead, "step {step}"),
                    Err(SceneError::StaleHandle { kind: HandleKind::Mesh, .. }) => assert!(dead_mesh, "step {step}"),
                    Err(SceneError::Full { .. }) => assert!(full, "step {step}"),
                    Err(e) => panic!("step {step}: {e}"),
                }
            }
            Op::Update(k, m, mat, x) => {
                let Some(id) = h.id(*k) else { continue };
                let desc = h.desc(*m, *mat, *x);
                let live = h.model.contains_key(&id);
                let dead_material = !h.live_materials[h.material_index(*mat)];
                let dead_mesh = !h.live_meshes[h.mesh_index(*m)];
                match h.r.update_objects(&[(id, desc)]) {
                    Ok(()) => {
                        assert!(live && !dead_material && !dead_mesh, "step {step}");
                        h.model.insert(id, Obj { mesh: h.mesh_index(*m), material: h.material_index(*mat), x: *x });
                    }
                    Err(SceneError::StaleHandle { kind: HandleKind::Mesh, .. }) => {
                        assert!(live && dead_mesh, "step {step}")
                    }
                    Err(SceneError::StaleHandle { kind: HandleKind::Object, .. }) => assert!(!live, "step {step}"),
                    Err(SceneError::StaleHandle { kind: HandleKind::Material, .. }) => {
                        assert!(dead_material, "step {step}")
                    }
                    Err(e) => panic!("step {step}: {e}"),
                }
            }
            Op::Move(k, x) => {
                let Some(id) = h.id(*k) else { continue };
                let live = h.model.contains_key(&id);
                // Bounds of a translation to 3e38 overflow; NaN is not finite.
                let sane = x.abs() < 1e30;
                match h.r.set_transforms(&[(id, Mat4::from_translation(Vec3::new(*x, 0.0, 0.0)))]) {
                    Ok(()) => {
                        assert!(live && sane, "step {step}");
                        h.model.get_mut(&id).unwrap().x = *x;
                    }
                    Err(SceneError::StaleHandle { kind: HandleKind::Object, .. }) => assert!(!live, "step {step}"),
                    Err(SceneError::Invalid { .. }) => assert!(live && !sane, "step {step}"),
                    Err(e) => panic!("step {step}: {e}"),
                }
            }
            Op::Remove(ks) => {
                let ids: Vec<ObjectId> = ks.iter().filter_map(|k| h.id(*k)).collect();
                if ids.is_empty() {
                    continue;
                }
                let all_live = ids.iter().all(|id| h.model.contains_key(id));
                let distinct = ids.iter().enumerate().all(|(i, a)| ids[..i].iter().all(|b| b != a));
                match h.r.remove_objects(&ids) {
                    Ok(()) => {
                        assert!(all_live && distinct, "step {step}");
                        for id in &ids {
                            h.model.remove(id);
                        }
                    }
                    Err(SceneError::StaleHandle { .. }) => assert!(!(all_live && distinct), "step {step}"),
                    Err(e) => panic!("step {step}: {e}"),
                }
            }
            Op::NewMaterial => {
                let live = h.live_materials.iter().filter(|&&l| l).count();
                match h.r.create_material(&MaterialDesc { shader: h.shader, ..Default::default() }) {
                    Ok(m) => {
                        assert!(live < 6, "step {step}");
                        h.materials.push(m);
                        h.live_materials.push(true);
                    }
                    Err(ResourceError::Invalid(_)) => assert_eq!(live, 6, "step {step}: the cap counts live ones"),
                    Err(e) => panic!("step {step}: {e}"),
                }
            }
            Op::RemoveMaterial(m) => {
                let i = h.material_index(*m);
                let users = h.users(i);
                match h.r.remove_material(h.materials[i]) {
                    Ok(()) => {
                        assert!(h.live_materials[i] && users == 0, "step {step}");
                        h.live_materials[i] = false;
                    }
                    Err(ResourceError::StaleHandle(HandleKind::Material)) => {
                        assert!(!h.live_materials[i], "step {step}")
                    }
                    Err(ResourceError::InUse(HandleKind::Material, n)) => assert_eq!(n, users, "step {step}"),
                    Err(e) => panic!("step {step}: {e}"),
                }
            }
            Op::NewMesh(n) => {
                let one = cube();
                let mut mesh = MeshData::default();
                for k in 0..*n as u32 {
                    let base = mesh.vertices.len() as u32;
                    mesh.vertices.extend(
                        one.vertices.iter().map(|v| Vertex {
                            position: [v.position[0] + k as f32, v.position[1], v.position[2]],
                            ..*v
                        }),
                    );
                    mesh.indices.extend(one.indices.iter().map(|i| i + base));
                }
                let slot = h.next_mesh_slot();
                let m = h.r.create_mesh(&mesh).unwrap();
                h.meshes.push(m);
                h.live_meshes.push(true);
                h.mesh_dense.push(slot);
            }
            Op::RemoveMesh(m) => {
                let i = h.mesh_index(*m);
                let users = h.mesh_users(i);
                let before = h.r.mesh_memory();
                match h.r.remove_mesh(h.meshes[i]) {
                    Ok(()) => {
                        assert!(h.live_meshes[i] && users == 0, "step {step}");
                        h.live_meshes[i] = false;
                    }
                    Err(e) => {
                        match e {
                            ResourceError::StaleHandle(HandleKind::Mesh) => assert!(!h.live_meshes[i], "step {step}"),
                            ResourceError::InUse(HandleKind::Mesh, n) => assert_eq!(n, users, "step {step}"),
                            e => panic!("step {step}: {e}"),
                        }
                        assert_eq!(h.r.mesh_memory(), before, "step {step}: a refused removal changes nothing");
                    }
                }
                assert_eq!(h.r.mesh_memory().meshes, h.live_meshes.iter().filter(|&&l| l).count());
            }
            Op::Render => {
                let eye = Vec3::new(0.0, 30.0, 60.0);
                let view = View {
                    label: "main",
                    view_proj: Mat4::perspective_rh(1.2, 1.0, 0.5, 200.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
                    eye,
                    far: 200.0,
                    layer_mask: u16::MAX,
                    pass: PassKind::Forward,
                };
                let s = h.r.render(&[view]).unwrap();
                assert_eq!(s.objects as usize, h.model.len());
            }
        }
        h.check(step);
    }
    h.r.flush().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn stale_handles_and_the_scene_store_agree_with_a_hashmap_model(ops in prop::collection::vec(op(), 1..60)) {
        run(&ops);
    }
}

/// [stale] Handles of another renderer are refused like stale ones, wherever they are
/// given, even where a handle of this renderer sits in the same slot; nothing changes.
#[test]
fn foreign_handles_are_stale_here_and_change_nothing() {
    let mut a = Harness::new();
    let mut b = Harness::new();
    // Same history in both: equal slot keys.
    let desc_a = a.desc(0, 0, 1.0);
    let desc_b = b.desc(0, 0, 2.0);
    let ida = a.r.insert_objects(&[desc_a]).unwrap()[0];
    let idb = b.r.insert_objects(&[desc_b]).unwrap()[0];
    assert_ne!(ida, idb, "the same slot, told apart by the renderer that made it");
    let stale = |e: &SceneError| matches!(e, SceneError::StaleHandle { .. });
    assert!(stale(&a.r.remove_objects(&[idb]).unwrap_err()));
    assert!(stale(&a.r.set_transforms(&[(idb, Mat4::IDENTITY)]).unwrap_err()));
    assert!(stale(&a.r.update_objects(&[(idb, desc_a)]).unwrap_err()));
    assert_eq!(a.r.scene().dense_index(idb), None);
    // B's mesh, material, shader and texture handles in A's calls.
    let foreign_mesh = ObjectDesc { mesh: b.meshes[0], ..desc_a };
    let foreign_material = ObjectDesc { material: b.materials[0], ..desc_a };
    for d in [foreign_mesh, foreign_material] {
        assert!(stale(&a.r.insert_objects(&[d]).unwrap_err()));
    }
    let tex = b.r.create_texture(1, 1, &[255; 4]).unwrap();
    let foreign_shader = MaterialDesc { shader: b.shader, ..Default::default() };
    let foreign_texture = MaterialDesc { shader: a.shader, base_texture: Some(tex), ..Default::default() };
    for d in [foreign_shader, foreign_texture] {
        assert!(matches!(a.r.create_material(&d), Err(ResourceError::StaleHandle(_))));
    }
    assert!(matches!(a.r.remove_material(b.materials[0]), Err(ResourceError::StaleHandle(HandleKind::Material))));
    // A is as it was: one object, at x = 1.
    a.model.insert(ida, Obj { mesh: 0, material: 0, x: 1.0 });
    a.ids.push(ida);
    a.check(0);
    assert_eq!(b.r.scene().len(), 1);
}

/// A forward view from (5, 5, 5) at the origin.
fn corner_view() -> View {
    View {
        label: "main",
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.5, 50.0) * Mat4::look_at_rh(Vec3::splat(5.0), Vec3::ZERO, Vec3::Y),
        eye: Vec3::splat(5.0),
        far: 50.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    }
}

/// `remove_shader`: refused (`InUse`, with the count) while materials use it; once they
/// are gone it goes, its compiled variants and pipelines destroyed after the frames that
/// may use them; its handle is stale after; a new shader takes its slot; frames go on.
#[test]
fn a_shader_is_removed_once_no_material_uses_it() {
    let backend = Arc::new(NullBackend::new(false));
    let config = RendererConfig { threads: 1, max_objects: 64, width: 32, height: 32, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let keep = r.create_shader(&ShaderDesc::lit()).unwrap();
    let kept = r.create_material(&MaterialDesc { shader: keep, ..Default::default() }).unwrap();
    let live_before = backend.live();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let materials: Vec<MaterialHandle> =
        (0..2).map(|_| r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap()).collect();
    let view = corner_view();
    let object = |material| ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS };
    let ids = r.insert_objects(&[object(materials[0]), object(kept)]).unwrap();
    r.render(&[view]).unwrap();
    assert_eq!(r.remove_shader(shader), Err(ResourceError::InUse(HandleKind::Shader, 2)));
    r.remove_objects(&ids[..1]).unwrap();
    for &m in &materials {
        r.remove_material(m).unwrap();
    }
    r.remove_shader(shader).unwrap();
    assert_eq!(r.remove_shader(shader), Err(ResourceError::StaleHandle(HandleKind::Shader)));
    assert!(matches!(
        r.create_material(&MaterialDesc { shader, ..Default::default() }),
        Err(ResourceError::StaleHandle(HandleKind::Shader))
    ));
    // Frames go on; once the frames that could use it finished, its objects are gone.
    for _ in 0..8 {
        r.render(&[view]).unwrap();
    }
    r.flush().unwrap();
    r.render(&[view]).unwrap();
    let live = backend.live();
    assert_eq!((live.shaders, live.pipelines), (live_before.shaders, live_before.pipelines), "{live:?}");
    // A new shader takes the slot and works.
    let again = r.create_shader(&ShaderDesc::lit()).unwrap();
    let m = r.create_material(&MaterialDesc { shader: again, ..Default::default() }).unwrap();
    r.insert_objects(&[object(m)]).unwrap();
    assert!(r.render(&[view]).unwrap().draw_calls >= 2);
}

/// `Renderer::memory`: the backend's live bytes by kind, and the mesh and texel bytes kept
/// on the CPU, follow what is created and removed.
#[test]
fn memory_is_reported_by_kind_on_both_sides() {
    let backend = Arc::new(NullBackend::new(false));
    let config = RendererConfig { threads: 1, max_objects: 64, width: 32, height: 32, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let view = View {
        label: "main",
        view_proj: Mat4::IDENTITY,
        eye: Vec3::ZERO,
        far: 1.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    };
    let settle = |r: &mut Renderer<NullBackend>| {
        for _ in 0..8 {
            r.render(&[view]).unwrap();
        }
        r.flush().unwrap();
    };
    settle(&mut r);
    let start = r.memory();
    assert!(start.gpu.buffer_bytes > 0 && start.gpu.texture_bytes > 0, "{start:?}");
    assert_eq!((start.cpu_texture_bytes, start.gpu), (0, backend.live()));
    // One copy: a texture's texels stay on the CPU only until a frame takes them to the
    // upload thread, unless asked for.
    let t = r.create_texture_with(4, 4, &[200; 64], CpuCopy::Keep).unwrap();
    let t2 = r.create_texture(4, 4, &[100; 64]).unwrap();
    let m = r.memory();
    assert_eq!(m.cpu_texture_bytes, 64 + 2 * 64, "kept once, queued twice");
    assert_eq!(m.gpu.texture_bytes, start.gpu.texture_bytes + 128, "two RGBA8 4x4");
    // A mesh's data is queued until a frame hands it over, then gone from the CPU (a kept
    // one stays).
    let cube_bytes = (8 * 32 + 36 * 4) as u64;
    let mesh = r.create_mesh(&cube()).unwrap();
    assert_eq!(r.memory().cpu_mesh_bytes, start.cpu_mesh_bytes + cube_bytes);
    let kept = r.create_mesh_with(&cube(), CpuCopy::Keep).unwrap();
    assert_eq!(r.memory().cpu_mesh_bytes, start.cpu_mesh_bytes + 3 * cube_bytes, "staged twice, kept once");
    settle(&mut r);
    assert_eq!(r.memory().cpu_mesh_bytes, start.cpu_mesh_bytes + cube_bytes, "only the kept mesh");
    assert_eq!(r.memory().cpu_texture_bytes, 64, "only the kept texture");
    r.remove_texture(t).unwrap();
    r.remove_texture(t2).unwrap();
    r.remove_mesh(mesh).unwrap();
    r.remove_mesh(kept).unwrap();
    settle(&mut r);
    let end = r.memory();
    // The removed textures wait in the pool for textures of their shape.
    assert_eq!(end.pooled_texture_bytes, 128);
    let pooled = end.gpu.texture_bytes - end.pooled_texture_bytes;
    assert_eq!((end.cpu_texture_bytes, pooled), (0, start.gpu.texture_bytes), "{end:?}");
    assert_eq!(end.cpu_mesh_bytes, start.cpu_mesh_bytes);
}

/// Streaming's pattern: blocks of objects in and out, the oldest leaving. Removing the first
/// block moves the last one into its slots (each removed slot takes the last object, so
/// that block lands reversed); removing that block later frees its slots downward. Either
/// way the slots are one run, and the frame after writes each per-object buffer once for
/// it, as for the blocks' insertion: not once per object (each write a copy on the GPU).
#[test]
fn a_removed_block_is_written_as_one_range_either_way_round() {
    let backend = Arc::new(NullBackend::new(false));
    let config = RendererConfig { threads: 1, max_objects: 256, width: 32, height: 32, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).unwrap();
    let view = corner_view();
    let block = |r: &mut Renderer<NullBackend>, b: u32| {
        let at = |i| Mat4::from_translation(Vec3::new(b as f32, i as f32 * 0.1, 0.0));
        let objects: Vec<ObjectDesc> =
            (0..24).map(|i| ObjectDesc { mesh, material, transform: at(i), layer: 0, flags: 0 }).collect();
        r.insert_objects(&objects).unwrap()
    };
    let blocks: Vec<Vec<ObjectId>> = (0..4).map(|b| block(&mut r, b)).collect();
    r.render(&[view]).unwrap();
    r.render(&[view]).unwrap();
    // The submission thread reports a frame once it is submitted: `writes` waits for it.
    let writes = |r: &mut Renderer<NullBackend>| {
        r.render(&[view]).unwrap();
        r.flush().unwrap();
        backend.last_frame().upload_writes
    };
    let last = block(&mut r, 4);
    let inserted = writes(&mut r);
    // The last block moves into the first's slots, reversed.
    r.remove_objects(&blocks[0]).unwrap();
    let upward = writes(&mut r);
    // Its objects, in the order they were made, now stand in descending slots.
    r.remove_objects(&last).unwrap();
    let downward = writes(&mut r);
    assert_eq!((upward, downward), (inserted, inserted), "writes after the insertion, then each removal");
    // A frame with nothing changed writes fewer.
    assert!(writes(&mut r) < inserted);
}
