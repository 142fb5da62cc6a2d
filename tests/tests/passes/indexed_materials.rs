//! Indexed materials (`MaterialBinding::Indexed`, `ShaderDesc::lit_indexed`): the shader
//! reads its material's constants from the frame's slots at the object's dense material,
//! so a multi-draw spans the materials of one pipeline and texture. A scene of eight
//! materials (two keyword variants, two textures) drawn with the lit shader's two forms
//! gives pixel-equal images on lavapipe (command buffers, CPU and GPU culls) and llvmpipe
//! (render bundles) while objects change material, are removed (moving others' dense
//! indices), and a removed material's dense slot is taken by a new one; the indexed form
//! draws with fewer draw calls and state changes. On the null backend: digests equal at 1
//! and 3 threads, a multi-draw per pipeline and texture, and the refusals (a shader whose
//! declared binding disagrees with its WGSL, an adapter with too few storage buffers).

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard_tests::{cube, differing_pixels, look_camera, sun_camera, wgpu_backend};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;
const SIDE: usize = 16;

/// A renderer with the lit shader in one form, eight materials and a grid of boxes.
struct World<B: Backend> {
    r: Renderer<B>,
    out: TargetId,
    shader: ShaderHandle,
    materials: Vec<MaterialHandle>,
    meshes: [MeshHandle; 2],
    objects: Vec<(ObjectId, ObjectDesc)>,
    textures: [TextureHandle; 2],
}

fn color(m: usize) -> [f32; 4] {
    [(m % 3) as f32 * 0.4 + 0.1, ((m / 3) % 3) as f32 * 0.4 + 0.1, (m % 2) as f32 * 0.6 + 0.2, 1.0]
}

fn checker(a: [u8; 4], b: [u8; 4]) -> Vec<u8> {
    (0..64).flat_map(|i| if (i % 8 + i / 8) % 2 == 0 { a } else { b }).collect()
}

impl<B: Backend> World<B> {
    fn new(backend: Arc<B>, desc: &ShaderDesc, cull: CullOn, threads: usize) -> Self {
        let config = RendererConfig {
            threads,
            max_objects: SIDE * SIDE + 16,
            width: WIDTH,
            height: HEIGHT,
            cull,
            ..Default::default()
        };
        let mut r = Renderer::new(backend, config).unwrap();
        let shader = r.create_shader(desc).unwrap();
        let meshes = [r.create_mesh(&cube()).unwrap(), r.create_mesh(&cube()).unwrap()];
        let textures = [
            r.create_texture(8, 8, &checker([255, 255, 255, 255], [90, 90, 90, 255])).unwrap(),
            r.create_texture(8, 8, &checker([255, 200, 120, 255], [40, 80, 160, 255])).unwrap(),
        ];
        let (g, out) = switchyard_tests::shadow_and_opaque_graph(256);
        r.set_graph(g).unwrap();
        let mut w = Self { r, out, shader, materials: Vec::new(), meshes, objects: Vec::new(), textures };
        for m in 0..8 {
            let mat = w.material(m);
            w.materials.push(mat);
        }
        let descs: Vec<ObjectDesc> = (0..SIDE * SIDE)
            .map(|i| {
                let (x, z) = (i % SIDE, i / SIDE);
                let at = Vec3::new(x as f32 * 2.5 - 20.0, 0.0, z as f32 * 2.5 - 20.0);
                ObjectDesc {
                    mesh: w.meshes[i % 2],
                    material: w.materials[(i * 5 + i / 7) % 8],
                    transform: Mat4::from_translation(at) * Mat4::from_scale(Vec3::new(1.5, 1.0 + (i % 4) as f32, 1.5)),
                    layer: 0,
                    flags: CASTS_SHADOWS,
                }
            })
            .collect();
        let ids = w.r.insert_objects(&descs).unwrap();
        w.objects = ids.into_iter().zip(descs).collect();
        w
    }

    /// Material `m`: its color; every third with `SPECULAR` (another pipeline), materials
    /// 2 and 5 on the first texture, 6 on the second.
    fn material(&mut self, m: usize) -> MaterialHandle {
        let texture = match m % 8 {
            2 | 5 => Some(self.textures[0]),
            6 => Some(self.textures[1]),
            _ => None,
        };
        let keywords = if m.is_multiple_of(3) { vec!["SPECULAR".to_string()] } else { Vec::new() };
        let properties = PropertySheet::new()
            .with("_BaseColor", PropertyValue::Color(color(m)))
            .with("_Roughness", PropertyValue::Float(m as f32 / 10.0));
        let desc =
            MaterialDesc { shader: self.shader, keywords, properties, base_texture: texture, transparent: false };
        self.r.create_material(&desc).unwrap()
    }

    fn cameras() -> [Camera; 2] {
        let main =
            look_camera(Vec3::new(-24.0, 14.0, -26.0), Vec3::new(0.0, 0.0, 0.0), WIDTH as f32 / HEIGHT as f32, 90.0);
        [main, sun_camera(Vec3::new(-20.0, 40.0, -10.0), 30.0, 120.0)]
    }

    fn frame(&mut self) -> FrameStats {
        self.r.render_graph(&FrameInput { cameras: &Self::cameras(), targets: &[] }).unwrap()
    }

    /// Frames until both textures are resident (the upload thread's batches).
    fn settle(&mut self) {
        for _ in 0..20 {
            self.frame();
            self.r.flush().unwrap();
            if self.textures.iter().all(|&t| self.r.is_resident(t).unwrap()) {
                return;
            }
        }
        panic!("the textures became resident");
    }

    /// The scripted edits of frame `step` (the same in both worlds).
    fn edit(&mut self, step: usize) {
        match step {
            // Every fifth object takes the next material (another pipeline or texture too).
            1 => {
                let edits: Vec<(ObjectId, ObjectDesc)> = (0..self.objects.len())
                    .step_by(5)
                    .map(|k| {
                        let (id, mut d) = self.objects[k];
                        let m = self.materials.iter().position(|&h| h == d.material).unwrap();
                        d.material = self.materials[(m + 1) % 8];
                        self.objects[k].1 = d;
                        (id, d)
                    })
                    .collect();
                self.r.update_objects(&edits).unwrap();
            }
            // Every seventh object goes: the last objects move into the freed dense indices.
            2 => {
                let gone: Vec<ObjectId> = self.objects.iter().step_by(7).map(|o| o.0).collect();
                self.r.remove_objects(&gone).unwrap();
                self.objects.retain(|o| !gone.contains(&o.0));
            }
            // Material 4 goes (its objects first); a new material takes its dense slot and
            // some objects; material 1 changes color.
            3 => {
                let four = self.materials[4];
                let users: Vec<ObjectId> = self.objects.iter().filter(|o| o.1.material == four).map(|o| o.0).collect();
                self.r.remove_objects(&users).unwrap();
                self.objects.retain(|o| o.1.material != four);
                self.r.remove_material(four).unwrap();
                self.materials[4] = self.material(13);
                let edits: Vec<(ObjectId, ObjectDesc)> = (0..self.objects.len())
                    .step_by(3)
                    .map(|k| {
                        self.objects[k].1.material = self.materials[4];
                        self.objects[k]
                    })
                    .collect();
                self.r.update_objects(&edits).unwrap();
                let c = PropertyValue::Color([0.95, 0.1, 0.1, 1.0]);
                self.r.set_material_property(self.materials[1], "_BaseColor", c).unwrap();
            }
            _ => {}
        }
    }
}

/// Both forms over the script: pixel-equal images every frame; the indexed form's frame
/// makes fewer draw calls and state changes.
fn forms_draw_alike<B: Backend>(backend: Arc<B>, cull: CullOn, what: &str) {
    let mut ix = World::new(backend.clone(), &ShaderDesc::lit_indexed(), cull, 2);
    let mut pd = World::new(backend, &ShaderDesc::lit(), cull, 2);
    ix.settle();
    pd.settle();
    for step in 0..5 {
        ix.edit(step);
        pd.edit(step);
        let (a, b) = (ix.frame(), pd.frame());
        let (ia, ib) = (ix.r.read_target(ix.out).unwrap(), pd.r.read_target(pd.out).unwrap());
        assert_eq!(differing_pixels(&ia, &ib), 0, "{what}, step {step}: the two forms draw alike");
        assert!(
            a.state_changes < b.state_changes,
            "{what}, step {step}: {} vs {} state changes",
            a.state_changes,
            b.state_changes
        );
        // Batches span the materials of a state: draws fall with or without multi-draw.
        assert!(a.draw_calls < b.draw_calls, "{what}, step {step}: {} vs {} draws", a.draw_calls, b.draw_calls);
        // Something is drawn in many colors: the image is no single flat color.
        let distinct: std::collections::HashSet<&[u8]> = ia.pixels.chunks_exact(4).collect();
        assert!(distinct.len() > 50, "{what}, step {step}: {} colors", distinct.len());
    }
}

#[test]
fn indexed_and_per_draw_materials_draw_alike_on_lavapipe() {
    let Some(b) = wgpu_backend(::wgpu::Backends::VULKAN, Encoding::CommandBuffer) else { return };
    forms_draw_alike(b.clone(), CullOn::Cpu, "lavapipe, CPU cull");
    forms_draw_alike(b, CullOn::Gpu, "lavapipe, GPU cull");
}

#[test]
fn indexed_and_per_draw_materials_draw_alike_on_llvmpipe() {
    let Some(b) = wgpu_backend(::wgpu::Backends::GL, Encoding::RenderBundle) else { return };
    forms_draw_alike(b, CullOn::Cpu, "llvmpipe");
}

/// The forward view's multi-draws: one per run of one pipeline and texture (per chunk).
fn multi_draws(r: &Renderer<NullBackend>) -> usize {
    let out = r.view_output(1).expect("the forward view ran (scene pass 1)");
    out.chunks.iter().flatten().filter(|c| matches!(c, Command::MultiDrawIndexedIndirect { .. })).count()
}

#[test]
fn indexed_materials_on_the_null_backend_are_deterministic_and_draw_per_pipeline_and_texture() {
    let digest = |threads| {
        let mut w = World::new(Arc::new(NullBackend::new(true)), &ShaderDesc::lit_indexed(), CullOn::Cpu, threads);
        let mut digests = Vec::new();
        for step in 0..5 {
            w.edit(step);
            digests.push(w.frame().digest);
        }
        // Eight materials in four states of pipeline and texture: plain on white (1, 4, 7),
        // plain on texture 0 (2, 5, and 13 in 4's place), SPECULAR on white (0, 3),
        // SPECULAR on texture 1 (6).
        (digests, multi_draws(&w.r))
    };
    let (one, draws) = digest(1);
    let (three, _) = digest(3);
    assert_eq!(one, three, "digests at 1 and 3 threads");
    let mut pd = World::new(Arc::new(NullBackend::new(true)), &ShaderDesc::lit(), CullOn::Cpu, 1);
    pd.frame();
    assert!(draws <= 6, "a multi-draw per pipeline and texture: {draws}");
    assert!(multi_draws(&pd.r) >= 8, "per draw: a multi-draw per material at least: {}", multi_draws(&pd.r));
}

#[test]
fn indexed_bindings_that_disagree_with_the_wgsl_or_the_adapter_are_refused() {
    let mut r =
        Renderer::new(Arc::new(NullBackend::new(true)), RendererConfig { threads: 1, ..Default::default() }).unwrap();
    let live = r.backend().live();
    // Declared indexed, but the WGSL binds one block as a uniform (and the other way).
    for desc in [
        ShaderDesc { materials: MaterialBinding::Indexed, ..ShaderDesc::lit() },
        ShaderDesc { materials: MaterialBinding::PerDraw, ..ShaderDesc::lit_indexed() },
    ] {
        let e = r.create_shader(&desc).unwrap_err();
        assert!(matches!(e, ResourceError::Backend(_)), "{desc:?}: {e:?}");
        assert_eq!(r.backend().live(), live, "a refused shader leaves nothing");
    }
    // An adapter binding too few storage buffers per stage.
    let caps = Caps { max_storage_buffers_per_stage: INDEXED_STORAGE_BUFFERS - 1, ..NullBackend::new(true).caps() };
    let mut r =
        Renderer::new(Arc::new(NullBackend::with_caps(caps)), RendererConfig { threads: 1, ..Default::default() })
            .unwrap();
    let e = r.create_shader(&ShaderDesc::lit_indexed()).unwrap_err();
    assert!(matches!(e, ResourceError::Backend(CreateError::Unsupported(_))), "{e:?}");
    assert_eq!(ShaderDesc::lit_for(&caps), ShaderDesc::lit(), "lit_for picks the per-draw form there");
    r.create_shader(&ShaderDesc::lit_for(&caps)).unwrap();
}
