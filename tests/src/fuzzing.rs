//! What the fuzz targets (`fuzz/fuzz_targets/`) run, and what `tests/tests/corpus.rs`
//! replays from `fuzz/corpus/<target>/`: each turns arbitrary bytes into operations on a
//! renderer over the null backend (or on the backend, or the demo's glTF loader). Any
//! input must give results or typed errors: a panic, a hang or a broken invariant here is
//! a finding.

use std::collections::HashMap;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use glam::Mat4;
use switchyard::backend::null::NullBackend;
use switchyard::backend::*;
use switchyard::ShaderDesc;
use switchyard::*;

/// A harness: one input in, results or typed errors out.
pub type Harness = fn(&[u8]);

/// The fuzz targets, by name (the directory of each corpus).
pub const TARGETS: [(&str, Harness); 5] = [
    ("shader_material", shader_material),
    ("property_sheet", property_sheet),
    ("scene_ops", scene_ops),
    ("command_stream", command_stream),
    ("gltf", gltf),
];

fn renderer() -> Renderer<NullBackend> {
    let config =
        RendererConfig { threads: 1, width: 32, height: 32, max_objects: 256, max_materials: 32, ..Default::default() };
    Renderer::new(Arc::new(NullBackend::new(true)), config).expect("a valid configuration")
}

fn view() -> View {
    let eye = glam::Vec3::new(0.0, 20.0, 40.0);
    View {
        label: "main",
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.5, 200.0) * Mat4::look_at_rh(eye, glam::Vec3::ZERO, glam::Vec3::Y),
        eye,
        far: 200.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    }
}

/// Renders a frame (any error is typed; it must not panic) and flushes.
fn frame(r: &mut Renderer<NullBackend>) {
    let sun = View { label: "sun", pass: PassKind::Shadow, ..view() };
    let _ = r.render(&[sun, view()]);
    let _ = r.flush();
}

fn name(u: &mut Unstructured<'_>, known: &[&str]) -> Result<String> {
    Ok(if u.ratio(3, 4)? { (*u.choose(known)?).to_owned() } else { u.arbitrary()? })
}

fn float(u: &mut Unstructured<'_>) -> Result<f32> {
    Ok(match u.int_in_range(0..=5)? {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => 3e38,
        _ => u.int_in_range(-1000..=1000)? as f32 * 0.1,
    })
}

fn value(u: &mut Unstructured<'_>) -> Result<PropertyValue> {
    fn four(u: &mut Unstructured<'_>) -> Result<[f32; 4]> {
        Ok([float(u)?, float(u)?, float(u)?, float(u)?])
    }
    Ok(match u.int_in_range(0..=3)? {
        0 => PropertyValue::Float(float(u)?),
        1 => PropertyValue::Vec4(four(u)?),
        2 => PropertyValue::Color(four(u)?),
        _ => {
            let mut m = [0.0; 16];
            for x in &mut m {
                *x = float(u)?;
            }
            PropertyValue::Mat4(m)
        }
    })
}

fn property_type(u: &mut Unstructured<'_>) -> Result<PropertyType> {
    Ok(*u.choose(&[PropertyType::Float, PropertyType::Vec4, PropertyType::Color, PropertyType::Mat4])?)
}

const PROPERTIES: [&str; 5] = ["_BaseColor", "_Emission", "_Roughness", "_RimStrength", "_Time"];
const KEYWORDS: [&str; 4] = ["SPECULAR", "RIM", "EMISSIVE", "FOG"];
const ENTRIES: [&str; 4] = ["vs_main", "fs_main", "vs_shadow", "main"];

/// The lit shader's WGSL with a few bytes deleted, inserted or replaced.
fn mutated_wgsl(u: &mut Unstructured<'_>) -> Result<String> {
    let mut src = ShaderDesc::lit().wgsl.into_bytes();
    for _ in 0..u.int_in_range(1..=8)? {
        let at = u.int_in_range(0..=src.len().saturating_sub(1))?;
        match u.int_in_range(0..=2)? {
            0 => {
                let n = u.int_in_range(1..=16)?.min(src.len() - at);
                src.drain(at..at + n);
            }
            1 => src.insert(at, u.arbitrary()?),
            _ => src[at] = u.arbitrary()?,
        }
        if src.is_empty() {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&src).into_owned())
}

/// Shader and material descriptions: arbitrary (and mutated) WGSL, keywords, constant
/// blocks and pass entry points; then materials over the shader (or the lit one) with
/// arbitrary keywords, properties and edits; then a frame.
pub fn shader_material(data: &[u8]) {
    let _ = run_shader_material(&mut Unstructured::new(data));
}

fn run_shader_material(u: &mut Unstructured<'_>) -> Result<()> {
    let mut r = renderer();
    let lit = ShaderDesc::lit();
    let mut keywords = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        keywords.push(name(u, &KEYWORDS)?);
    }
    let mut constants = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        constants.push((name(u, &PROPERTIES)?, property_type(u)?));
    }
    let entry = |u: &mut Unstructured<'_>| name(u, &ENTRIES);
    let passes = ShaderPasses {
        shadow: if u.arbitrary()? { Some(entry(u)?) } else { None },
        forward: if u.arbitrary()? { Some((entry(u)?, entry(u)?)) } else { None },
    };
    let desc = ShaderDesc {
        name: u.arbitrary()?,
        wgsl: match u.int_in_range(0..=2)? {
            0 => lit.wgsl.clone(),
            1 => mutated_wgsl(u)?,
            _ => u.arbitrary()?,
        },
        keywords: if u.arbitrary()? { lit.keywords.clone() } else { keywords },
        constants: if u.arbitrary()? { lit.constants.clone() } else { constants },
        passes: if u.arbitrary()? { ShaderPasses::default() } else { passes },
    };
    let shader = match r.create_shader(&desc) {
        Ok(s) => s,
        Err(_) => r.create_shader(&lit).expect("the lit shader"),
    };
    let mesh = r.create_mesh(&crate::cube()).expect("a cube");
    let mut materials = Vec::new();
    for _ in 0..u.int_in_range(1..=4)? {
        let mut properties = PropertySheet::new();
        for _ in 0..u.int_in_range(0..=4)? {
            properties.set(&name(u, &PROPERTIES)?, value(u)?);
        }
        let mut keywords = Vec::new();
        for _ in 0..u.int_in_range(0..=3)? {
            keywords.push(name(u, &KEYWORDS)?);
        }
        let desc = MaterialDesc { shader, keywords, properties, base_texture: None, transparent: u.arbitrary()? };
        if let Ok(m) = r.create_material(&desc) {
            materials.push(m);
        }
    }
    let objects: Vec<ObjectDesc> = materials
        .iter()
        .map(|&material| ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS })
        .collect();
    let _ = r.insert_objects(&objects);
    for _ in 0..u.int_in_range(0..=6)? {
        let Some(&m) = u.choose(&materials).ok() else { break };
        let _ = match u.int_in_range(0..=2)? {
            0 => r.set_material_property(m, &name(u, &PROPERTIES)?, value(u)?),
            1 => r.set_material_keyword(m, &name(u, &KEYWORDS)?, u.arbitrary()?),
            _ => r.set_global(&name(u, &PROPERTIES)?, value(u)?),
        };
        frame(&mut r);
    }
    frame(&mut r);
    Ok(())
}

/// Property-sheet operations against a map of names to types: a set with the declared
/// type (or of a new name) succeeds and is found; a set with another type fails and changes
/// nothing.
pub fn property_sheet(data: &[u8]) {
    let _ = run_property_sheet(&mut Unstructured::new(data));
}

fn run_property_sheet(u: &mut Unstructured<'_>) -> Result<()> {
    let mut sheet = PropertySheet::new();
    let mut model: HashMap<String, PropertyType> = HashMap::new();
    while !u.is_empty() {
        let n = name(u, &PROPERTIES)?;
        let v = value(u)?;
        let before = sheet.values().to_vec();
        let ok = sheet.set(&n, v);
        match model.get(&n) {
            Some(&ty) if ty != v.ty() => {
                assert!(!ok, "a set of another type is refused");
                assert_eq!(sheet.values(), &before[..], "a refused set changes nothing");
            }
            _ => {
                assert!(ok, "a set of the declared type, or of a new name, succeeds");
                model.insert(n.clone(), v.ty());
            }
        }
        let i = sheet.find(&n).expect("a set property is found");
        assert_eq!(sheet.property(i), (n.as_str(), model[&n]));
        assert_eq!(sheet.bytes(i).len() as u32, model[&n].size());
        assert_eq!(sheet.len(), model.len());
    }
    Ok(())
}

/// Scene operation sequences: inserts, updates, moves and removals of objects with
/// arbitrary transforms, layers and flags; meshes with arbitrary vertices and indices made
/// and removed; materials made and removed; textures; frames. A refused edit changes
/// nothing (the object count stays).
pub fn scene_ops(data: &[u8]) {
    let _ = run_scene_ops(&mut Unstructured::new(data));
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

fn run_scene_ops(u: &mut Unstructured<'_>) -> Result<()> {
    let mut r = renderer();
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
                match r.insert_objects(&descs) {
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
                let _ = r.update_objects(&[edit]);
            }
            4 if !ids.is_empty() => {
                let _ = r.set_transforms(&[(*u.choose(&ids)?, matrix(u)?)]);
            }
            5 if !ids.is_empty() => {
                let mut gone = Vec::new();
                for _ in 0..u.int_in_range(1..=4)? {
                    gone.push(*u.choose(&ids)?);
                }
                if r.remove_objects(&gone).is_err() {
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
                if let Ok(m) = r.create_mesh(&MeshData { vertices, indices }) {
                    meshes.push(m);
                }
            }
            7 => {
                let m = *u.choose(&meshes)?;
                if r.remove_mesh(m).is_ok() && meshes.len() > 1 {
                    meshes.retain(|&x| x != m);
                }
            }
            8 => {
                let (w, h) = (u.int_in_range(0..=4)?, u.int_in_range(0..=4)?);
                let len = if u.arbitrary()? { (w * h * 4) as usize } else { u.int_in_range(0..=80)? };
                let texels: Vec<u8> = (0..len).map(|i| i as u8).collect();
                if let Ok(t) = r.create_texture(w, h, &texels) {
                    textures.push(t);
                }
                let base_texture = if textures.is_empty() { None } else { Some(*u.choose(&textures)?) };
                if let Ok(m) = r.create_material(&MaterialDesc { shader, base_texture, ..Default::default() }) {
                    materials.push(m);
                }
            }
            9 => {
                let m = *u.choose(&materials)?;
                if r.remove_material(m).is_ok() && materials.len() > 1 {
                    materials.retain(|&x| x != m);
                }
                if let Some(&t) = textures.first() {
                    let _ = r.remove_texture(t);
                }
            }
            _ => frame(&mut r),
        }
    }
    frame(&mut r);
    Ok(())
}

/// Command streams through the null backend's validator: arbitrary commands over real,
/// destroyed and never-made handles, in a valid pass or a malformed one; what records is
/// submitted.
pub fn command_stream(data: &[u8]) {
    let _ = run_command_stream(&mut Unstructured::new(data));
}

fn run_command_stream(u: &mut Unstructured<'_>) -> Result<()> {
    let b = NullBackend::new(u.arbitrary()?);
    let q = crate::TwoQuads::create(&b, 2).expect("the fixture");
    let gone =
        b.create_buffer(&BufferDesc { label: "gone".into(), size: 64, usage: BufferUsage::VERTEX }).expect("a buffer");
    b.destroy(Resource::Buffer(gone)).expect("destroyed");
    let (compute, compute_group, storage) = compute_fixture(&b);
    let groups = [q.group, compute_group, BindGroupId::default()];
    let pipelines = [q.pipeline, compute, PipelineId::default()];
    let buffers = [q.vertices, q.instances, q.indices, q.indirect, q.tints, storage, gone, BufferId::default()];
    let mut commands = Vec::new();
    for _ in 0..u.int_in_range(0..=24)? {
        commands.push(match u.int_in_range(0..=8)? {
            0 => Command::SetPipeline(*u.choose(&pipelines)?),
            1 => Command::SetBindGroup {
                index: u.int_in_range(0..=4)?,
                group: *u.choose(&groups)?,
                offsets: DynamicOffsets::from_slice(&[u.int_in_range(0..=1024)?; 2][..u.int_in_range(0..=2)?])
                    .expect("at most two"),
            },
            2 => Command::SetVertexBuffer {
                slot: u.int_in_range(0..=3)?,
                buffer: *u.choose(&buffers)?,
                offset: u.int_in_range(0..=128)?,
            },
            3 => Command::SetIndexBuffer {
                buffer: *u.choose(&buffers)?,
                format: *u.choose(&[IndexFormat::Uint16, IndexFormat::Uint32])?,
                offset: u.int_in_range(0..=16)?,
            },
            4 => Command::Draw {
                first_vertex: u.arbitrary()?,
                vertex_count: u.arbitrary()?,
                first_instance: u.arbitrary()?,
                instance_count: u.arbitrary()?,
            },
            5 => Command::DrawIndexed {
                first_index: u.arbitrary()?,
                index_count: u.arbitrary()?,
                base_vertex: u.arbitrary()?,
                first_instance: u.arbitrary()?,
                instance_count: u.arbitrary()?,
            },
            6 => Command::MultiDrawIndexedIndirect {
                buffer: *u.choose(&buffers)?,
                offset: u.arbitrary()?,
                count: u.arbitrary()?,
            },
            7 => Command::Dispatch { x: u.arbitrary()?, y: u.arbitrary()?, z: u.arbitrary()? },
            _ => Command::DispatchIndirect { buffer: *u.choose(&buffers)?, offset: u.arbitrary()? },
        });
    }
    let mut pass = q.pass();
    match u.int_in_range(0..=4)? {
        4 => pass = PassDesc::compute("fuzz-compute"),
        0 => pass.depth = None,
        1 => pass.color = None,
        2 => {
            if let Some(c) = pass.color.as_mut() {
                c.store = switchyard::backend::StoreOp::Discard;
            }
        }
        _ => {}
    }
    if let Ok(chunk) = b.record(&pass, ChunkPosition::SINGLE, &commands) {
        let _ = b.submit(&[], &mut [PassSubmit { desc: pass, chunks: vec![chunk] }]);
    }
    Ok(())
}

/// A compute pipeline writing one read-write storage buffer, its bind group, and the
/// buffer (also `INDIRECT`: an indirect dispatch from it while the group is bound
/// conflicts).
fn compute_fixture(b: &NullBackend) -> (PipelineId, BindGroupId, BufferId) {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> v: array<u32>;
        @compute @workgroup_size(1) fn main() { v[0] = 1u; }";
    let desc = switchyard::backend::ShaderDesc { label: "fuzz-compute".into(), wgsl: wgsl.into() };
    let shader = b.create_shader(&desc).expect("a shader");
    let ty = BindingType::StorageReadWrite { dynamic: false };
    let entries = vec![LayoutEntry { binding: 0, visibility: Stages::COMPUTE, ty }];
    let layout = b.create_bind_group_layout(&BindGroupLayoutDesc { label: "fuzz".into(), entries }).expect("a layout");
    let usage = BufferUsage::STORAGE | BufferUsage::INDIRECT;
    let buffer = b.create_buffer(&BufferDesc { label: "storage".into(), size: 64, usage }).expect("a buffer");
    let entries = vec![BindEntry { binding: 0, resource: BindResource::Buffer { buffer, offset: 0, size: None } }];
    let group = b.create_bind_group(&BindGroupDesc { label: "fuzz".into(), layout, entries }).expect("a group");
    let pipeline = b.create_compute_pipeline(&ComputePipelineDesc {
        label: "fuzz".into(),
        shader,
        entry: "main".into(),
        bind_group_layouts: vec![layout],
    });
    (pipeline.expect("a pipeline"), group, buffer)
}

/// glTF bytes through the demo's loader (`switchyard_demo::gltf_scene`), then a frame.
pub fn gltf(data: &[u8]) {
    let mut r = renderer();
    if switchyard_demo::gltf_scene::build_from_slice(&mut r, data, 64).is_ok() {
        frame(&mut r);
    }
}
