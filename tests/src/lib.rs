//! Shared fixtures for Switchyard's integration tests.
//!
//! [`TwoQuads`] builds the same small scene on any [`Backend`]: two overlapping quads of
//! known colors and depths over a known clear color, so tests can check exact pixels on
//! the GPU and exact digests and errors on the null backend.

use switchyard_backend::*;

#[cfg(feature = "fault-injection")]
pub mod faults;
pub mod full_graph;
pub mod fuzzing;

/// WGSL of the fixture: position per vertex, color per instance, a dynamic-offset tint.
pub const SHADER: &str = r#"
struct Tint { color: vec4<f32> };
@group(0) @binding(0) var<uniform> tint: Tint;
struct VOut { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> };
@vertex fn vs(@location(0) p: vec3<f32>, @location(1) c: vec4<f32>) -> VOut {
    var o: VOut;
    o.pos = vec4<f32>(p, 1.0);
    o.color = c * tint.color;
    return o;
}
@fragment fn fs(v: VOut) -> @location(0) vec4<f32> { return v.color; }
"#;

/// Side of the square render target.
pub const SIZE: u32 = 64;
/// Clear color (blue).
pub const CLEAR: [u8; 4] = [0, 0, 255, 255];
/// Color of the near quad A.
pub const RED: [u8; 4] = [255, 0, 0, 255];
/// Color of the far quad B.
pub const GREEN: [u8; 4] = [0, 255, 0, 255];

/// Resources of the two-quad scene.
#[derive(Debug, Clone, Copy)]
pub struct TwoQuads {
    /// Color target (RGBA8, `SIZE` squared).
    pub color: TextureId,
    /// Depth target.
    pub depth: TextureId,
    /// The pipeline.
    pub pipeline: PipelineId,
    /// Layout of group 0.
    pub layout: BindGroupLayoutId,
    /// Group 0: the tint uniform (dynamic offset 0 = white).
    pub group: BindGroupId,
    /// Vertex positions (two quads, 4 vertices each; more quads from `extra`).
    pub vertices: BufferId,
    /// Per-instance colors: instance 0 red, 1 green, then the `extra` colors.
    pub instances: BufferId,
    /// 6 u16 indices of one quad.
    pub indices: BufferId,
    /// Two indirect records, one per quad.
    pub indirect: BufferId,
    /// Uniform buffer of tints.
    pub tints: BufferId,
    /// Number of quads (2 + extra).
    pub quads: u32,
    /// The shader module.
    pub shader: ShaderId,
    /// The color target was made here (not given to `create_into`).
    pub own_color: bool,
}

fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32) -> [[f32; 3]; 4] {
    [[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]]
}

impl TwoQuads {
    /// Creates the scene. `extra` adds small quads on an 8x8 grid in front (z = 0.1) with
    /// distinct colors, so tests can split many draws into chunks.
    pub fn create<B: Backend>(b: &B, extra: u32) -> Result<Self, CreateError> {
        Self::create_into(b, extra, None)
    }

    /// [`TwoQuads::create`] rendering into `color` (an RGBA8 `SIZE` x `SIZE` render target,
    /// say an engine's texture) instead of a texture of its own.
    pub fn create_into<B: Backend>(b: &B, extra: u32, color: Option<TextureId>) -> Result<Self, CreateError> {
        let mut positions: Vec<[[f32; 3]; 4]> = vec![quad(-0.8, -0.8, 0.2, 0.8, 0.2), quad(-0.2, -0.5, 0.8, 0.5, 0.5)];
        let mut colors: Vec<[f32; 4]> = vec![[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]];
        for i in 0..extra {
            let (gx, gy) = ((i % 8) as f32, ((i / 8) % 8) as f32);
            let x0 = -1.0 + gx * 0.25;
            let y0 = -1.0 + gy * 0.25;
            positions.push(quad(x0 + 0.02, y0 + 0.02, x0 + 0.2, y0 + 0.2, 0.1 + (i / 64) as f32 * 0.001));
            colors.push([(i % 5) as f32 / 4.0, (i % 3) as f32 / 2.0, (i % 7) as f32 / 6.0, 1.0]);
        }
        let quads = positions.len() as u32;
        let target = |label: &str, format| TextureDesc {
            label: label.into(),
            width: SIZE,
            height: SIZE,
            format,
            usage: TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC,
            samples: 1,
            mip_levels: 1,
        };
        let own_color = color.is_none();
        let color = match color {
            Some(c) => c,
            None => b.create_texture(&target("color", TextureFormat::Rgba8Unorm))?,
        };
        let depth = b.create_texture(&TextureDesc {
            usage: TextureUsage::RENDER_TARGET,
            ..target("depth", TextureFormat::Depth32Float)
        })?;
        let shader = b.create_shader(&ShaderModuleDesc { label: "two-quads".into(), wgsl: SHADER.into() })?;
        let layout = b.create_bind_group_layout(&BindGroupLayoutDesc {
            label: "tint".into(),
            entries: vec![LayoutEntry {
                binding: 0,
                visibility: Stages::VERTEX,
                ty: BindingType::Uniform { dynamic: true, min_size: 16 },
            }],
        })?;
        let buffer = |label: &str, size: u64, usage| {
            b.create_buffer(&BufferDesc { label: label.into(), size, usage: usage | BufferUsage::COPY_DST })
        };
        let tints = buffer("tints", 512, BufferUsage::UNIFORM)?;
        let vertices = buffer("vertices", u64::from(quads) * 48, BufferUsage::VERTEX)?;
        let instances = buffer("instances", u64::from(quads) * 16, BufferUsage::VERTEX)?;
        let indices = buffer("indices", 12, BufferUsage::INDEX)?;
        let indirect = buffer("indirect", 40, BufferUsage::INDIRECT)?;
        let group = b.create_bind_group(&BindGroupDesc {
            label: "tint".into(),
            layout,
            entries: vec![BindEntry {
                binding: 0,
                resource: BindResource::Buffer { buffer: tints, offset: 0, size: Some(16) },
            }],
        })?;
        let pipeline = b.create_pipeline(&Self::pipeline_desc(shader, layout, TextureFormat::Rgba8Unorm))?;

        let w = |buf, data: &[u8]| b.write_buffer(buf, 0, data).map_err(|e| CreateError::Invalid(e.to_string()));
        let mut tint_bytes = vec![0u8; 512];
        tint_bytes[..16].copy_from_slice(bytemuck::cast_slice(&[1.0f32, 1.0, 1.0, 1.0]));
        tint_bytes[256..272].copy_from_slice(bytemuck::cast_slice(&[0.5f32, 0.5, 0.5, 1.0]));
        w(tints, &tint_bytes)?;
        w(vertices, bytemuck::cast_slice(&positions))?;
        w(instances, bytemuck::cast_slice(&colors))?;
        w(indices, bytemuck::cast_slice(&[0u16, 1, 2, 0, 2, 3]))?;
        let args = [
            DrawIndexedIndirectArgs {
                index_count: 6,
                instance_count: 1,
                first_index: 0,
                base_vertex: 0,
                first_instance: 0,
            },
            DrawIndexedIndirectArgs {
                index_count: 6,
                instance_count: 1,
                first_index: 0,
                base_vertex: 4,
                first_instance: 1,
            },
        ];
        w(indirect, bytemuck::cast_slice(&args))?;
        Ok(Self {
            color,
            depth,
            pipeline,
            layout,
            group,
            vertices,
            instances,
            indices,
            indirect,
            tints,
            quads,
            shader,
            own_color,
        })
    }

    /// Everything `create` made, newest first (to destroy it again).
    pub fn resources(&self) -> Vec<Resource> {
        let mut r: Vec<Resource> = vec![
            self.pipeline.into(),
            self.group.into(),
            self.indirect.into(),
            self.indices.into(),
            self.instances.into(),
            self.vertices.into(),
            self.tints.into(),
            self.layout.into(),
            self.shader.into(),
            self.depth.into(),
        ];
        if self.own_color {
            r.push(self.color.into());
        }
        r
    }

    /// The pipeline descriptor (public so tests can check the cache).
    pub fn pipeline_desc(shader: ShaderId, layout: BindGroupLayoutId, format: TextureFormat) -> PipelineDesc {
        PipelineDesc {
            label: "two-quads".into(),
            shader,
            vertex_entry: "vs".into(),
            fragment_entry: Some("fs".into()),
            bind_group_layouts: vec![layout],
            vertex_buffers: vec![
                VertexBufferLayout {
                    stride: 12,
                    step: StepMode::Vertex,
                    attributes: vec![VertexAttribute { format: VertexFormat::Float32x3, offset: 0, location: 0 }],
                },
                VertexBufferLayout {
                    stride: 16,
                    step: StepMode::Instance,
                    attributes: vec![VertexAttribute { format: VertexFormat::Float32x4, offset: 0, location: 1 }],
                },
            ],
            cull: CullMode::None,
            color: Some(ColorTargetState { format, blend: BlendMode::Replace }),
            depth: Some(DepthState {
                format: TextureFormat::Depth32Float,
                write: true,
                compare: CompareFunction::Less,
                bias: 0,
                bias_slope_scale_bits: 0,
            }),
            samples: 1,
        }
    }

    /// The pass: clear color to blue and depth to 1.
    pub fn pass(&self) -> PassDesc {
        PassDesc {
            label: "two-quads".into(),
            color: Some(ColorAttachment {
                texture: self.color,
                load: LoadOp::Clear([0.0, 0.0, 1.0, 1.0]),
                store: StoreOp::Store,
                resolve: None,
            }),
            depth: Some(DepthAttachment { texture: self.depth, load: LoadOp::Clear(1.0), store: StoreOp::Discard }),
            compute: false,
            native: None,
        }
    }

    /// State every chunk sets first.
    pub fn state(&self) -> [Command; 5] {
        [
            Command::SetPipeline(self.pipeline),
            Command::SetBindGroup { index: 0, group: self.group, offsets: DynamicOffsets::one(0) },
            Command::SetVertexBuffer { slot: 0, buffer: self.vertices, offset: 0 },
            Command::SetVertexBuffer { slot: 1, buffer: self.instances, offset: 0 },
            Command::SetIndexBuffer { buffer: self.indices, format: IndexFormat::Uint16, offset: 0 },
        ]
    }

    /// The draw of quad `q` (its own color instance).
    pub fn draw(q: u32) -> Command {
        Command::DrawIndexed {
            first_index: 0,
            index_count: 6,
            base_vertex: 4 * q as i32,
            first_instance: q,
            instance_count: 1,
        }
    }

    /// Quad A (near, red) then quad B (far, green) with direct draws.
    pub fn direct_stream(&self) -> Vec<Command> {
        let mut v = self.state().to_vec();
        v.extend([Self::draw(0), Self::draw(1)]);
        v
    }

    /// The same two draws through one multi-draw-indirect.
    pub fn indirect_stream(&self) -> Vec<Command> {
        let mut v = self.state().to_vec();
        v.push(Command::MultiDrawIndexedIndirect { buffer: self.indirect, offset: 0, count: 2 });
        v
    }

    /// All quads split into `chunks` contiguous chunks, each setting its own state.
    pub fn chunked_streams(&self, chunks: u32) -> Vec<Vec<Command>> {
        let per = self.quads.div_ceil(chunks);
        (0..chunks)
            .map(|c| {
                let mut v = self.state().to_vec();
                v.extend((c * per..((c + 1) * per).min(self.quads)).map(Self::draw));
                v
            })
            .collect()
    }
}

/// Pixel coordinates of a point in normalized device coordinates, for a `SIZE` target.
pub fn ndc_to_pixel(x: f32, y: f32) -> (u32, u32) {
    let px = ((x + 1.0) * 0.5 * SIZE as f32) as u32;
    let py = ((1.0 - y) * 0.5 * SIZE as f32) as u32;
    (px.min(SIZE - 1), py.min(SIZE - 1))
}

/// A unit box on y = 0..1 (8 vertices, normals pointing out of the corners): the scene
/// objects of the renderer-level tests.
pub fn cube() -> switchyard::MeshData {
    let v = |x: f32, y: f32, z: f32| switchyard::Vertex { position: [x, y, z], normal: [x, y, z], uv: [0.0, 0.0] };
    let vertices =
        (0..8).map(|i| v((i & 1) as f32 - 0.5, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32 - 0.5)).collect();
    let indices = vec![
        0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4, 2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5,
    ];
    switchyard::MeshData { vertices, indices }
}

/// Nine cubes of `mesh` on a 3 x 3 grid 2 units apart (cube `i` of `materials[i % len]`),
/// casting shadows, and the two views that see them: a perspective camera (`main`) and the
/// sun's orthographic shadow view (`sun`). The scene of the wgpu pixel tests.
pub fn cube_grid<B: Backend>(
    r: &mut switchyard::Renderer<B>,
    mesh: switchyard::MeshHandle,
    materials: &[switchyard::MaterialHandle],
) -> Vec<switchyard::View> {
    use glam::{Mat4, Vec3};
    use switchyard::{ObjectDesc, PassKind, View, CASTS_SHADOWS};
    let objects: Vec<ObjectDesc> = (0..9)
        .map(|i| ObjectDesc {
            mesh,
            material: materials[i % materials.len()],
            transform: Mat4::from_translation(Vec3::new((i % 3) as f32 * 2.0 - 2.0, 0.0, (i / 3) as f32 * 2.0 - 2.0)),
            layer: 0,
            flags: CASTS_SHADOWS,
        })
        .collect();
    r.insert_objects(&objects).expect("nine cubes fit");
    let (eye, sun) = (Vec3::new(4.0, 6.0, 8.0), Vec3::new(8.0, 12.0, 4.0));
    vec![
        View {
            label: "main",
            view_proj: Mat4::perspective_rh(0.9, 1.0, 0.5, 50.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y),
            eye,
            far: 50.0,
            layer_mask: u16::MAX,
            pass: PassKind::Forward,
        },
        View {
            label: "sun",
            view_proj: Mat4::orthographic_rh(-6.0, 6.0, -6.0, 6.0, 0.1, 40.0)
                * Mat4::look_at_rh(sun, Vec3::ZERO, Vec3::Y),
            eye: sun,
            far: 40.0,
            layer_mask: u16::MAX,
            pass: PassKind::Shadow,
        },
    ]
}

/// A wgpu backend on the first adapter of `api` with `encoding`, or `None` (and a note)
/// where there is none: on CI (`CI` set) a missing adapter fails the test instead.
pub fn wgpu_backend(
    api: ::wgpu::Backends,
    encoding: switchyard_backend::wgpu::Encoding,
) -> Option<std::sync::Arc<switchyard_backend::wgpu::WgpuBackend>> {
    use switchyard_backend::wgpu::WgpuBackend;
    let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI: is mesa-vulkan-drivers installed?");
        eprintln!("skipping: no {api:?} adapter here");
        return None;
    };
    Some(std::sync::Arc::new(WgpuBackend::from_adapter(adapter, encoding).expect("a device")))
}

/// The graph error `set_graph` returned (panics on success or another error).
pub fn graph_error(r: Result<(), switchyard::RenderError>) -> switchyard::GraphError {
    match r {
        Err(switchyard::RenderError::Graph(e)) => e,
        other => panic!("expected a graph error, got {other:?}"),
    }
}

/// How many pixels two images of one size differ in.
pub fn differing_pixels(a: &switchyard_backend::Image, b: &switchyard_backend::Image) -> usize {
    assert_eq!((a.width, a.height), (b.width, b.height), "images of one size");
    a.pixels.chunks_exact(4).zip(b.pixels.chunks_exact(4)).filter(|(p, q)| p != q).count()
}

/// A perspective camera at `eye` looking at `target` (y up), for an output of `aspect`,
/// from 0.5 to `far`.
pub fn look_camera(eye: glam::Vec3, target: glam::Vec3, aspect: f32, far: f32) -> switchyard::Camera {
    let proj = glam::Mat4::perspective_rh(0.9, aspect, 0.5, far);
    let view_proj = proj * glam::Mat4::look_at_rh(eye, target, glam::Vec3::Y);
    switchyard::Camera { view_proj, eye, far, layer_mask: u16::MAX, receivers: None }
}

/// A sun's orthographic camera from `from` towards the origin: a box `2 * half` wide,
/// from 1 to `far` along the light.
pub fn sun_camera(from: glam::Vec3, half: f32, far: f32) -> switchyard::Camera {
    let ortho = glam::Mat4::orthographic_rh(-half, half, -half, half, 1.0, far);
    let view_proj = ortho * glam::Mat4::look_at_rh(from, glam::Vec3::ZERO, glam::Vec3::Y);
    switchyard::Camera { view_proj, eye: from, far, layer_mask: u16::MAX, receivers: None }
}

/// A lit material of one base color.
pub fn plain_material<B: Backend>(
    r: &mut switchyard::Renderer<B>,
    shader: switchyard::ShaderHandle,
    rgba: [f32; 4],
) -> switchyard::MaterialHandle {
    use switchyard::{MaterialDesc, PropertySheet, PropertyValue};
    let properties = PropertySheet::new().with("_BaseColor", PropertyValue::Color(rgba));
    r.create_material(&MaterialDesc { shader, properties, ..Default::default() }).expect("a material")
}

/// The lit shader, `meshes` unit boxes (distinct meshes of one shape) and three plain
/// materials (orange, green, blue): the bucket-heavy scenes of the GPU-cull tests.
pub fn lit_boxes<B: Backend>(
    r: &mut switchyard::Renderer<B>,
    meshes: usize,
) -> (Vec<switchyard::MeshHandle>, [switchyard::MaterialHandle; 3]) {
    let shader = r.create_shader(&switchyard::ShaderDesc::lit()).expect("the lit shader");
    let meshes = (0..meshes).map(|_| r.create_mesh(&cube()).expect("a box")).collect();
    let materials = [
        plain_material(r, shader, [0.9, 0.6, 0.3, 1.0]),
        plain_material(r, shader, [0.3, 0.8, 0.4, 1.0]),
        plain_material(r, shader, [0.5, 0.5, 0.9, 1.0]),
    ];
    (meshes, materials)
}

/// A sun's shadow pass into a `map_side`² map (declared first: scene pass 0) over camera
/// slot 1, and an opaque forward pass over camera slot 0 that samples the map, into a
/// retained output target (returned).
pub fn shadow_and_opaque_graph(map_side: u32) -> (switchyard::FrameGraph, switchyard::TargetId) {
    use switchyard::backend::TextureFormat;
    use switchyard::{FrameGraph, LoadOp, Pass, PassKind, Queue, StoreOp, TargetKind, TargetSize};
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let sun = g.camera("sun");
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let size = TargetSize::Fixed { width: map_side, height: map_side };
    let map = g.target("map", TargetKind::Transient, TextureFormat::Depth32Float, size);
    g.pass(Pass::scene("shadow", sun, PassKind::Shadow, Queue::All).depth(map, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(
        Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
            .color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .sample(map),
    );
    (g, out)
}
