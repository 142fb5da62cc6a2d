//! What the fuzz targets (`fuzz/fuzz_targets/`) run, and what `tests/tests/corpus.rs`
//! replays from `fuzz/corpus/<target>/`: each turns arbitrary bytes into operations on a
//! renderer over the null backend (or on the backend, or the demo's glTF loader). Any
//! input must give results or typed errors: a panic, a hang or a broken invariant here is
//! a finding.
//!
//! The harnesses that touch a backend run over any backend ([`command_stream_on`],
//! [`scene_ops_on`], [`shader_material_on`], [`gltf_on`]) and write what each operation
//! gave into a [`Log`]: the differential test (`tests/tests/corpus.rs`) runs the same
//! input on the null backend and on wgpu (llvmpipe, lavapipe) and requires equal logs —
//! every backend accepts and refuses alike, with the same error kind.

use std::collections::HashMap;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use glam::Mat4;
use switchyard::backend::null::NullBackend;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, ShaderDesc, StoreOp};

/// A harness: one input in, results or typed errors out.
pub type Harness = fn(&[u8]);

/// The fuzz targets, by name (the directory of each corpus).
pub const TARGETS: [(&str, Harness); 7] = [
    ("shader_material", shader_material),
    ("property_sheet", property_sheet),
    ("scene_ops", scene_ops),
    ("command_stream", command_stream),
    ("gltf", gltf),
    ("resource_descs", resource_descs),
    ("frame_graph", frame_graph),
];

/// What each operation of a harness gave, in order: `ok`, or the error's kind (its
/// variant names, without the values they carry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log(pub Vec<String>);

impl Log {
    /// Notes `what` gave `r`; passes `r` on.
    pub fn note<T, E: std::fmt::Debug>(
        &mut self,
        what: &str,
        r: std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let outcome = match &r {
            Ok(_) => "ok".to_owned(),
            Err(e) => kind(e),
        };
        self.0.push(format!("{what}: {outcome}"));
        r
    }
}

/// An error's kind: the variant names of its `Debug` form (`Pass(InvalidClear)` of
/// `Pass(InvalidClear { role: Color })`), without the values or messages they carry.
pub fn kind(e: &impl std::fmt::Debug) -> String {
    let text = format!("{e:?}");
    if std::env::var_os("FULL_KIND").is_some() {
        return text;
    }
    let mut out = String::new();
    for c in text.chars() {
        match c {
            c if c.is_alphanumeric() || c == '_' => out.push(c),
            '(' => out.push('('),
            _ => break,
        }
    }
    out.trim_end_matches('(').to_owned()
}

fn config() -> RendererConfig {
    RendererConfig { threads: 1, width: 32, height: 32, max_objects: 256, max_materials: 32, ..Default::default() }
}

fn renderer() -> Renderer<NullBackend> {
    Renderer::new(Arc::new(NullBackend::new(true)), config()).expect("a valid configuration")
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
fn frame<B: Backend>(r: &mut Renderer<B>, log: &mut Log) {
    let sun = View { label: "sun", pass: PassKind::Shadow, ..view() };
    let _ = log.note("render", r.render(&[sun, view()]));
    let _ = log.note("flush", r.flush());
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
    shader_material_on(&mut renderer(), data, &mut Log::default());
}

/// [`shader_material`] on `r` (a fresh renderer), noting each operation in `log`.
pub fn shader_material_on<B: Backend>(r: &mut Renderer<B>, data: &[u8], log: &mut Log) {
    let _ = run_shader_material(r, &mut Unstructured::new(data), log);
}

fn run_shader_material<B: Backend>(r: &mut Renderer<B>, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
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
    let shader = match log.note("create_shader", r.create_shader(&desc)) {
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
        if let Ok(m) = log.note("create_material", r.create_material(&desc)) {
            materials.push(m);
        }
    }
    let objects: Vec<ObjectDesc> = materials
        .iter()
        .map(|&material| ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS })
        .collect();
    let _ = log.note("insert_objects", r.insert_objects(&objects));
    for _ in 0..u.int_in_range(0..=6)? {
        let Some(&m) = u.choose(&materials).ok() else { break };
        let _ = match u.int_in_range(0..=2)? {
            0 => log.note("set_material_property", r.set_material_property(m, &name(u, &PROPERTIES)?, value(u)?)),
            1 => log.note("set_material_keyword", r.set_material_keyword(m, &name(u, &KEYWORDS)?, u.arbitrary()?)),
            _ => log.note("set_global", r.set_global(&name(u, &PROPERTIES)?, value(u)?)),
        };
        frame(r, log);
    }
    frame(r, log);
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

/// Command streams through the null backend's validator: arbitrary commands over real,
/// destroyed and never-made handles, in a valid pass or a malformed one; what records is
/// submitted.
pub fn command_stream(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(multi_draw) = u.arbitrary() else { return };
    let _ = run_command_stream(&NullBackend::new(multi_draw), &mut u, &mut Log::default());
}

/// [`command_stream`] on `b` (its multi-draw capability stays what it is), noting what
/// recording and submitting gave in `log`. What it makes on `b` is destroyed again.
pub fn command_stream_on<B: Backend>(b: &B, data: &[u8], log: &mut Log) {
    let mut u = Unstructured::new(data);
    if u.arbitrary::<bool>().is_ok() {
        let _ = run_command_stream(b, &mut u, log);
    }
}

/// Counts that keep the work of a stream that passes validation small enough to run on a
/// software adapter, and the edges of what validation refuses.
fn count(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(*u.choose(&[0, 1, 2, 3, 4, 5, 6, 8, 9, 64, 255, 65_535, 65_536, 1 << 20, u32::MAX - 1, u32::MAX])?)
}

fn run_command_stream<B: Backend>(b: &B, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
    let q = crate::TwoQuads::create(b, 2).expect("the fixture");
    let made = q.resources();
    let r = run_stream(b, &q, u, log);
    for res in made {
        let _ = b.destroy(res);
    }
    r
}

fn run_stream<B: Backend>(b: &B, q: &crate::TwoQuads, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
    let gone =
        b.create_buffer(&BufferDesc { label: "gone".into(), size: 64, usage: BufferUsage::VERTEX }).expect("a buffer");
    b.destroy(Resource::Buffer(gone)).expect("destroyed");
    let Some((compute, compute_group, storage, compute_made)) = compute_fixture(b) else { return Ok(()) };
    let _destroy = Destroy(b, compute_made.to_vec());
    let groups = [q.group, compute_group, BindGroupId::default()];
    let pipelines = [q.pipeline, compute, PipelineId::default()];
    let buffers = [q.vertices, q.instances, q.indices, q.indirect, q.tints, storage, gone, BufferId::default()];
    // The pass first (an input that runs out of bytes reads zeros: the valid render pass).
    let mut pass = q.pass();
    match u.int_in_range(0..=7)? {
        4 | 5 => pass = PassDesc::compute("fuzz-compute"),
        6 => pass.depth = None,
        7 => pass.color = None,
        3 => {
            if let Some(c) = pass.color.as_mut() {
                c.store = switchyard::backend::StoreOp::Discard;
            }
        }
        _ => {}
    }
    let mut commands = Vec::new();
    // Most streams start with everything bound right for their pass, so what follows
    // reaches the draws and dispatches, and the GPU.
    if u.ratio(1, 4)? {
    } else if !pass.compute {
        commands.extend([
            Command::SetPipeline(q.pipeline),
            Command::SetBindGroup { index: 0, group: q.group, offsets: DynamicOffsets::from_slice(&[0]).expect("one") },
            Command::SetVertexBuffer { slot: 0, buffer: q.vertices, offset: 0 },
            Command::SetVertexBuffer { slot: 1, buffer: q.instances, offset: 0 },
            Command::SetIndexBuffer { buffer: q.indices, format: IndexFormat::Uint16, offset: 0 },
        ]);
    } else {
        commands.extend([
            Command::SetPipeline(compute),
            Command::SetBindGroup { index: 0, group: compute_group, offsets: DynamicOffsets::NONE },
        ]);
    }
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
                first_vertex: count(u)?,
                vertex_count: count(u)?,
                first_instance: count(u)?,
                instance_count: count(u)?,
            },
            5 => Command::DrawIndexed {
                first_index: count(u)?,
                index_count: count(u)?,
                base_vertex: *u.choose(&[0, 1, -1, 4, i32::MIN, i32::MAX])?,
                first_instance: count(u)?,
                instance_count: count(u)?,
            },
            6 => Command::MultiDrawIndexedIndirect {
                buffer: *u.choose(&buffers)?,
                offset: u64::from(count(u)?),
                count: count(u)?,
            },
            // Small enough to run (a compute pass that validates runs on the GPU).
            7 => Command::Dispatch { x: count(u)?.min(70_000), y: u.int_in_range(0..=4)?, z: u.int_in_range(0..=4)? },
            _ => Command::DispatchIndirect { buffer: *u.choose(&buffers)?, offset: u64::from(count(u)?) },
        });
    }
    if let Ok(chunk) = log.note("record", b.record(&pass, ChunkPosition::SINGLE, &commands)) {
        let _ = log.note("submit", b.submit(&[], &mut [PassSubmit { desc: pass, chunks: vec![chunk] }]));
    }
    Ok(())
}

/// Destroys what it holds when dropped.
struct Destroy<'a, B: Backend>(&'a B, Vec<Resource>);

impl<B: Backend> Drop for Destroy<'_, B> {
    fn drop(&mut self) {
        for r in self.1.drain(..).rev() {
            let _ = self.0.destroy(r);
        }
    }
}

/// A compute pipeline writing one read-write storage buffer, its bind group, and the
/// buffer (also `INDIRECT`: an indirect dispatch from it while the group is bound
/// conflicts), and what was made (`None`: the backend has no compute).
fn compute_fixture<B: Backend>(b: &B) -> Option<(PipelineId, BindGroupId, BufferId, [Resource; 5])> {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> v: array<u32>;
        @compute @workgroup_size(1) fn main() { v[0] = 1u; }";
    let desc = switchyard::backend::ShaderModuleDesc { label: "fuzz-compute".into(), wgsl: wgsl.into() };
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
    let made = |p: Option<PipelineId>| {
        let mut r = vec![shader.into(), layout.into(), buffer.into(), group.into()];
        r.extend(p.map(Resource::from));
        r
    };
    match pipeline {
        Ok(p) => {
            let m = made(Some(p));
            Some((p, group, buffer, [m[0], m[1], m[2], m[3], m[4]]))
        }
        Err(_) => {
            for r in made(None).into_iter().rev() {
                let _ = b.destroy(r);
            }
            None
        }
    }
}

/// glTF bytes through the demo's loader (`switchyard_demo::gltf_scene`), then a frame.
pub fn gltf(data: &[u8]) {
    gltf_on(&mut renderer(), data, &mut Log::default());
}

/// [`gltf`] on `r` (a fresh renderer), noting what loading and the frame gave in `log`.
pub fn gltf_on<B: Backend>(r: &mut Renderer<B>, data: &[u8], log: &mut Log) {
    if log.note("load", switchyard_demo::gltf_scene::build_from_slice(r, data, 64)).is_ok() {
        frame(r, log);
    }
}

/// A renderer on `backend` with the harnesses' configuration.
pub fn harness_renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    Renderer::new(backend, config()).expect("a valid configuration")
}

/// Resource descriptions: buffers, textures, samplers, layouts, bind groups, render and
/// compute pipelines with arbitrary sizes, formats, usages, sample counts, entries and
/// stages (at and past the limits), each created on the null backend; what was made is
/// destroyed again.
pub fn resource_descs(data: &[u8]) {
    resource_descs_on(&NullBackend::new(true), data, &mut Log::default());
}

/// [`resource_descs`] on `b`, noting each creation in `log`.
pub fn resource_descs_on<B: Backend>(b: &B, data: &[u8], log: &mut Log) {
    let mut made = Destroy(b, Vec::new());
    let _ = run_resource_descs(b, &mut Unstructured::new(data), log, &mut made.1);
}

const FORMATS: [TextureFormat; 5] = [
    TextureFormat::Rgba8Unorm,
    TextureFormat::Rgba8UnormSrgb,
    TextureFormat::Depth32Float,
    TextureFormat::Rgba16Float,
    TextureFormat::Bgra8UnormSrgb,
];

/// Shaders whose bindings and entry points the pipelines below may or may not match.
const RESOURCE_SHADERS: [&str; 3] = [
    "@group(0) @binding(0) var<uniform> u: vec4<f32>;
     @group(0) @binding(1) var t: texture_2d<f32>;
     @group(0) @binding(2) var s: sampler;
     @vertex fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> { return vec4<f32>(p, 1.0) * u.x; }
     @fragment fn fs() -> @location(0) vec4<f32> { return textureSample(t, s, vec2<f32>(0.5)); }
     @fragment fn fs_depth() -> @builtin(frag_depth) f32 { return 0.5; }",
    "@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> { return vec4<f32>(f32(i), 0.0, 0.0, 1.0); }
     @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }",
    "@group(0) @binding(0) var<storage, read_write> v: array<u32>;
     @group(0) @binding(1) var<storage, read> r: array<u32>;
     @compute @workgroup_size(1) fn main() { v[0] = r[0]; }",
];

fn side(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(*u.choose(&[0, 1, 4, 64, 2048, 8192, 8193, 16384, 16385, 1 << 20])?)
}

fn layout_entry(u: &mut Unstructured<'_>) -> Result<LayoutEntry> {
    let ty = match u.int_in_range(0..=7)? {
        0 => BindingType::Uniform { dynamic: u.arbitrary()?, min_size: *u.choose(&[0, 4, 16, 64, 1 << 20])? },
        1 => BindingType::Storage { dynamic: u.arbitrary()? },
        2 => BindingType::StorageReadWrite { dynamic: u.arbitrary()? },
        3 => BindingType::Texture(TextureSampleKind::Float),
        4 => BindingType::Texture(TextureSampleKind::Depth),
        5 => BindingType::Texture(TextureSampleKind::UnfilterableFloat),
        6 => BindingType::Sampler { comparison: u.arbitrary()? },
        _ => BindingType::NonFilteringSampler,
    };
    Ok(LayoutEntry { binding: u.int_in_range(0..=3)?, visibility: Stages(u.int_in_range(0..=7)?), ty })
}

fn run_resource_descs<B: Backend>(
    b: &B,
    u: &mut Unstructured<'_>,
    log: &mut Log,
    made: &mut Vec<Resource>,
) -> Result<()> {
    let mut buffers = Vec::new();
    let mut textures = Vec::new();
    let mut samplers = Vec::new();
    let mut layouts = Vec::new();
    let mut shaders = Vec::new();
    for wgsl in RESOURCE_SHADERS {
        let s = b.create_shader(&switchyard::backend::ShaderModuleDesc { label: "descs".into(), wgsl: wgsl.into() });
        if let Ok(s) = log.note("create_shader", s) {
            made.push(s.into());
            shaders.push(s);
        }
    }
    let keep = |r: Resource, made: &mut Vec<Resource>| made.push(r);
    while !u.is_empty() {
        match u.int_in_range(0..=6)? {
            0 => {
                let size = *u.choose(&[0, 3, 4, 64, 256, 1 << 20, 1 << 32, (1 << 32) + 4, u64::MAX - 3])?;
                let desc = BufferDesc { label: "b".into(), size, usage: BufferUsage(u.int_in_range(0..=127)?) };
                if let Ok(id) = log.note("create_buffer", b.create_buffer(&desc)) {
                    keep(id.into(), made);
                    buffers.push(id);
                }
            }
            1 => {
                let desc = TextureDesc {
                    label: "t".into(),
                    width: side(u)?,
                    height: side(u)?,
                    format: *u.choose(&FORMATS)?,
                    usage: TextureUsage(u.int_in_range(0..=31)?),
                    samples: *u.choose(&[1, 1, 2, 3, 4, 8, 16])?,
                };
                if let Ok(id) = log.note("create_texture", b.create_texture(&desc)) {
                    keep(id.into(), made);
                    textures.push(id);
                }
            }
            2 => {
                let desc = SamplerDesc {
                    label: "s".into(),
                    filter: *u.choose(&[FilterMode::Nearest, FilterMode::Linear])?,
                    address: *u.choose(&[AddressMode::ClampToEdge, AddressMode::Repeat])?,
                    compare: *u.choose(&[None, Some(CompareFunction::LessEqual), Some(CompareFunction::Always)])?,
                };
                if let Ok(id) = log.note("create_sampler", b.create_sampler(&desc)) {
                    keep(id.into(), made);
                    samplers.push(id);
                }
            }
            3 => {
                let mut entries = Vec::new();
                for _ in 0..u.int_in_range(0..=4)? {
                    entries.push(layout_entry(u)?);
                }
                let desc = BindGroupLayoutDesc { label: "l".into(), entries };
                if let Ok(id) = log.note("create_bind_group_layout", b.create_bind_group_layout(&desc)) {
                    keep(id.into(), made);
                    layouts.push(id);
                }
            }
            4 if !layouts.is_empty() => {
                let mut entries = Vec::new();
                for _ in 0..u.int_in_range(0..=4)? {
                    let resource = match u.int_in_range(0..=2)? {
                        0 if !buffers.is_empty() => BindResource::Buffer {
                            buffer: *u.choose(&buffers)?,
                            offset: *u.choose(&[0, 4, 256, 512])?,
                            size: *u.choose(&[None, Some(0), Some(16), Some(256), Some(1 << 20)])?,
                        },
                        1 if !textures.is_empty() => BindResource::Texture(*u.choose(&textures)?),
                        _ if !samplers.is_empty() => BindResource::Sampler(*u.choose(&samplers)?),
                        _ => continue,
                    };
                    entries.push(BindEntry { binding: u.int_in_range(0..=3)?, resource });
                }
                let desc = BindGroupDesc { label: "g".into(), layout: *u.choose(&layouts)?, entries };
                if let Ok(id) = log.note("create_bind_group", b.create_bind_group(&desc)) {
                    keep(id.into(), made);
                }
            }
            5 if !shaders.is_empty() => {
                let mut bind_group_layouts = Vec::new();
                for _ in 0..u.int_in_range(0..=2)? {
                    if let Ok(&l) = u.choose(&layouts) {
                        bind_group_layouts.push(l);
                    }
                }
                let color = |u: &mut Unstructured<'_>| -> Result<Option<ColorTargetState>> {
                    Ok(if u.ratio(3, 4)? {
                        let blend = *u.choose(&[BlendMode::Replace, BlendMode::Alpha])?;
                        Some(ColorTargetState { format: *u.choose(&FORMATS)?, blend })
                    } else {
                        None
                    })
                };
                let desc = PipelineDesc {
                    label: "p".into(),
                    shader: *u.choose(&shaders)?,
                    vertex_entry: (*u.choose(&["vs", "main", "fs"])?).into(),
                    fragment_entry: (*u.choose(&[None, Some("fs"), Some("fs_depth"), Some("vs")])?).map(String::from),
                    bind_group_layouts,
                    vertex_buffers: if u.arbitrary()? {
                        vec![VertexBufferLayout {
                            stride: *u.choose(&[0, 4, 12, 13, 16])?,
                            step: StepMode::Vertex,
                            attributes: vec![VertexAttribute {
                                format: *u.choose(&[VertexFormat::Float32x3, VertexFormat::Float32x4])?,
                                offset: *u.choose(&[0, 4])?,
                                location: *u.choose(&[0, 1])?,
                            }],
                        }]
                    } else {
                        Vec::new()
                    },
                    cull: CullMode::None,
                    color: color(u)?,
                    depth: if u.arbitrary()? {
                        Some(DepthState {
                            format: *u.choose(&FORMATS)?,
                            write: u.arbitrary()?,
                            compare: CompareFunction::Less,
                            bias: 0,
                            bias_slope_scale_bits: 0,
                        })
                    } else {
                        None
                    },
                    samples: *u.choose(&[1, 1, 4, 3])?,
                };
                if let Ok(id) = log.note("create_pipeline", b.create_pipeline(&desc)) {
                    keep(id.into(), made);
                }
            }
            6 if !shaders.is_empty() => {
                let mut bind_group_layouts = Vec::new();
                for _ in 0..u.int_in_range(0..=2)? {
                    if let Ok(&l) = u.choose(&layouts) {
                        bind_group_layouts.push(l);
                    }
                }
                let desc = ComputePipelineDesc {
                    label: "c".into(),
                    shader: *u.choose(&shaders)?,
                    entry: (*u.choose(&["main", "vs"])?).into(),
                    bind_group_layouts,
                };
                if let Ok(id) = log.note("create_compute_pipeline", b.create_compute_pipeline(&desc)) {
                    keep(id.into(), made);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Frame graphs: targets of arbitrary kinds, formats, sizes and sample counts; scene,
/// fullscreen, callback and compute passes over them with arbitrary attachments, load ops
/// (clear values out of range among them), resolves and samples; set on a renderer over
/// the null backend, then frames with arbitrary engine textures for the external targets.
pub fn frame_graph(data: &[u8]) {
    frame_graph_on(&mut renderer(), data, &mut Log::default());
}

/// [`frame_graph()`] on `r` (a fresh renderer with a scene or without), noting what
/// `set_graph` and each frame gave in `log`. The engine textures it makes are destroyed
/// again.
pub fn frame_graph_on<B: Backend>(r: &mut Renderer<B>, data: &[u8], log: &mut Log) {
    let backend = r.backend().clone();
    let mut made = Destroy(&*backend, Vec::new());
    let _ = run_frame_graph(r, &mut Unstructured::new(data), log, &mut made.1);
    let _ = r.flush();
}

const FLAT: &str = "@fragment fn fs_flat(v: FullscreenVertex) -> @location(0) vec4<f32> { return frame.params[0]; }";
const SAMPLES_ONE: &str = "@group(0) @binding(3) var t: texture_2d<f32>;
    @fragment fn fs_one(v: FullscreenVertex) -> @location(0) vec4<f32> { return textureSample(t, frame_sampler, v.uv); }";

/// What can be odd about a random graph (at most one thing each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Oddity {
    None,
    BadColorClear,
    BadDepthClear,
    BadScale,
    HugeTarget,
    EightSamples,
    Multisampled,
    ResolveSingle,
    SampleOwnAttachment,
    SampleUnwritten,
    LoadUnwritten,
    ColorAsDepth,
}

/// An external target and the texture that fits it: (target, format, size, samples).
type External = (TargetId, TextureFormat, (u32, u32), u32);

/// A random frame graph that compiles unless its one oddity says otherwise: scene passes
/// (shadow maps first, forward passes sampling them), fullscreen passes sampling what
/// earlier passes wrote, callback and compute passes, over targets of the output's size
/// (32 x 32), half of it, or 16 x 16.
fn random_graph(u: &mut Unstructured<'_>) -> Result<(FrameGraph, Vec<TargetId>, Vec<External>)> {
    const ODDITIES: [Oddity; 11] = [
        Oddity::BadColorClear,
        Oddity::BadDepthClear,
        Oddity::BadScale,
        Oddity::HugeTarget,
        Oddity::EightSamples,
        Oddity::Multisampled,
        Oddity::ResolveSingle,
        Oddity::SampleOwnAttachment,
        Oddity::SampleUnwritten,
        Oddity::LoadUnwritten,
        Oddity::ColorAsDepth,
    ];
    let odd = if u.ratio(1, 3)? { *u.choose(&ODDITIES)? } else { Oddity::None };
    let mut g = FrameGraph::new();
    let cameras: Vec<CameraId> = (0..u.int_in_range(1..=2)?).map(|i| g.camera(format!("c{i}"))).collect();
    let mut targets = Vec::new();
    let mut externals = Vec::new();
    let mut target = |g: &mut FrameGraph, u: &mut Unstructured<'_>, name: String, format, size| -> Result<TargetId> {
        let kind =
            *u.choose(&[TargetKind::Transient, TargetKind::Transient, TargetKind::Retained, TargetKind::External])?;
        let t = g.target(name, kind, format, size);
        targets.push(t);
        if kind == TargetKind::External {
            let side = match size {
                TargetSize::Fixed { width, height } => (width, height),
                TargetSize::Scaled(_) => (16, 16),
                TargetSize::Output => (32, 32),
            };
            externals.push((t, format, side, 1));
        }
        Ok(t)
    };
    // Shadow maps, each drawn by a shadow pass.
    let mut maps = Vec::new();
    for i in 0..u.int_in_range(0..=2)? {
        let map = target(
            &mut g,
            u,
            format!("map{i}"),
            TextureFormat::Depth32Float,
            TargetSize::Fixed { width: 16, height: 16 },
        )?;
        let clear = if odd == Oddity::BadDepthClear && i == 0 { 2.0 } else { 1.0 };
        g.pass(Pass::scene(format!("shadow{i}"), *u.choose(&cameras)?, PassKind::Shadow, Queue::All).depth(
            map,
            LoadOp::Clear(clear),
            StoreOp::Store,
        ));
        maps.push(map);
    }
    // Colour stages, each writing its own target at one size (with a depth target of that
    // size for scene passes), sampling earlier stages' targets.
    let sizes = [TargetSize::Output, TargetSize::Scaled(0.5), TargetSize::Fixed { width: 16, height: 16 }];
    let mut written: Vec<(TargetId, usize)> = Vec::new();
    for p in 0..u.int_in_range(1..=5)? {
        let s = u.int_in_range(0..=2)?;
        let format =
            *u.choose(&[TextureFormat::Rgba8UnormSrgb, TextureFormat::Rgba16Float, TextureFormat::Rgba8Unorm])?;
        let color = target(&mut g, u, format!("color{p}"), format, sizes[s])?;
        let earlier: Vec<TargetId> = written.iter().map(|w| w.0).collect();
        let clear = if odd == Oddity::BadColorClear { [f64::NAN, 0.0, 0.0, 1.0] } else { [0.1, 0.2, 0.3, 1.0] };
        let load = if u.ratio(1, 4)? { LoadOp::DontCare } else { LoadOp::Clear(clear) };
        let name = format!("p{p}");
        let pass = match u.int_in_range(0..=3)? {
            0 if format != TextureFormat::Rgba8Unorm => {
                let depth = target(&mut g, u, format!("depth{p}"), TextureFormat::Depth32Float, sizes[s])?;
                let mut pass = Pass::scene(name, *u.choose(&cameras)?, PassKind::Forward, Queue::All)
                    .color(color, LoadOp::Clear(clear), StoreOp::Store)
                    .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard);
                for &m in maps.iter().take(u.int_in_range(0..=maps.len())?) {
                    pass = pass.sample(m);
                }
                pass
            }
            1 if !earlier.is_empty() => {
                let shader = FullscreenShader {
                    name: "one".into(),
                    wgsl: SAMPLES_ONE.into(),
                    entry: "fs_one".into(),
                    params: [0.5; 8],
                };
                Pass::fullscreen(name, shader).color(color, load, StoreOp::Store).sample(*u.choose(&earlier)?)
            }
            2 => {
                let mut pass = Pass::callback(name, |_, _| {}).color(color, LoadOp::Clear(clear), StoreOp::Store);
                if let Ok(&e) = u.choose(&earlier) {
                    pass = pass.sample(e);
                }
                pass
            }
            _ => {
                let shader = FullscreenShader {
                    name: "flat".into(),
                    wgsl: FLAT.into(),
                    entry: "fs_flat".into(),
                    params: [0.5; 8],
                };
                Pass::fullscreen(name, shader).color(color, load, StoreOp::Store)
            }
        };
        g.pass(pass);
        written.push((color, s));
    }
    if u.arbitrary()? {
        g.pass(Pass::compute("compute", |_, _| {}));
    }
    let last = written.last().map(|w| w.0).unwrap_or(targets[0]);
    let fresh =
        |g: &mut FrameGraph, name: &str, format| g.target(name, TargetKind::Transient, format, TargetSize::Output);
    match odd {
        Oddity::BadScale => {
            g.target("bad-scale", TargetKind::Transient, TextureFormat::Rgba8Unorm, TargetSize::Scaled(f32::NAN));
        }
        Oddity::HugeTarget => {
            let t = g.target(
                "huge",
                TargetKind::Retained,
                TextureFormat::Rgba8Unorm,
                TargetSize::Fixed { width: 1 << 15, height: 4 },
            );
            g.pass(Pass::callback("huge", |_, _| {}).color(t, LoadOp::Clear([0.0; 4]), StoreOp::Store));
        }
        Oddity::EightSamples | Oddity::Multisampled => {
            let n = if odd == Oddity::EightSamples { 8 } else { 4 };
            let ms =
                g.target_multisampled("ms", TargetKind::Transient, TextureFormat::Rgba8Unorm, TargetSize::Output, n);
            let out = g.target("ms-out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
            g.pass(Pass::callback("ms", |_, _| {}).color(ms, LoadOp::Clear([0.0; 4]), StoreOp::Discard).resolve(out));
        }
        Oddity::ResolveSingle => {
            let out = g.target("r-out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
            let single = fresh(&mut g, "single", TextureFormat::Rgba8Unorm);
            g.pass(
                Pass::callback("resolve", |_, _| {})
                    .color(single, LoadOp::Clear([0.0; 4]), StoreOp::Store)
                    .resolve(out),
            );
        }
        Oddity::SampleOwnAttachment => {
            g.pass(Pass::callback("own", |_, _| {}).color(last, LoadOp::Load, StoreOp::Store).sample(last));
        }
        Oddity::SampleUnwritten => {
            let never = fresh(&mut g, "never", TextureFormat::Rgba8Unorm);
            let out = g.target("u-out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
            g.pass(
                Pass::callback("unwritten", |_, _| {})
                    .color(out, LoadOp::Clear([0.0; 4]), StoreOp::Store)
                    .sample(never),
            );
        }
        Oddity::LoadUnwritten => {
            let out = g.target("l-out", TargetKind::Retained, TextureFormat::Rgba8Unorm, TargetSize::Output);
            g.pass(Pass::callback("load", |_, _| {}).color(out, LoadOp::Load, StoreOp::Store));
        }
        Oddity::ColorAsDepth => {
            g.pass(Pass::callback("depth-color", |_, _| {}).depth(last, LoadOp::Clear(1.0), StoreOp::Store));
        }
        Oddity::None | Oddity::BadColorClear | Oddity::BadDepthClear => {}
    }
    Ok((g, targets, externals))
}

fn run_frame_graph<B: Backend>(
    r: &mut Renderer<B>,
    u: &mut Unstructured<'_>,
    log: &mut Log,
    made: &mut Vec<Resource>,
) -> Result<()> {
    let shader = r.create_shader(&ShaderDesc::lit()).expect("the lit shader");
    let mesh = r.create_mesh(&crate::cube()).expect("a cube");
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() }).expect("a material");
    let objects: Vec<ObjectDesc> = (0..4)
        .map(|i| ObjectDesc {
            mesh,
            material,
            transform: Mat4::from_translation(glam::Vec3::new(i as f32 * 2.0, 0.0, 0.0)),
            layer: 0,
            flags: CASTS_SHADOWS,
        })
        .collect();
    r.insert_objects(&objects).expect("four cubes");
    let (g, targets, externals) = random_graph(u)?;
    let cameras = g.cameras().len();
    if log.note("set_graph", r.set_graph(g)).is_err() {
        return Ok(());
    }
    let backend = r.backend().clone();
    for _ in 0..u.int_in_range(1..=3)? {
        let cams =
            vec![Camera { view_proj: view().view_proj, eye: view().eye, far: 200.0, layer_mask: u16::MAX }; cameras];
        // The engine's textures: mostly one that fits each external target, sometimes
        // one of another size, format or sample count, or one for a target that is not
        // external.
        let mut given = Vec::new();
        for &(t, format, side, samples) in &externals {
            let fits = u.ratio(7, 8)?;
            let (w, h) = if fits { side } else { (*u.choose(&[32, 16, 64])?, *u.choose(&[32, 16])?) };
            let format = if fits { format } else { *u.choose(&FORMATS)? };
            let samples = if fits { samples } else { *u.choose(&[1, 4])? };
            let usage = if samples > 1 {
                TextureUsage::RENDER_TARGET
            } else if format.is_depth() {
                TextureUsage::RENDER_TARGET | TextureUsage::SAMPLED
            } else {
                TextureUsage::RENDER_TARGET | TextureUsage::SAMPLED | TextureUsage::COPY_SRC
            };
            let desc = TextureDesc { label: "engine".into(), width: w, height: h, format, usage, samples };
            if let Ok(tex) = log.note("engine_texture", backend.create_texture(&desc)) {
                made.push(tex.into());
                let to = if u.ratio(1, 16)? { *u.choose(&targets)? } else { t };
                given.push((to, tex));
            }
        }
        let _ = log.note("render_graph", r.render_graph(&FrameInput { cameras: &cams, targets: &given }));
    }
    let _ = log.note("flush", r.flush());
    Ok(())
}
