//! The raster limit: how fast the GPU draws the stress scene's cube grid with the least
//! work a renderer could do, in hand-written wgpu. The yardstick for the scene passes'
//! GPU times (issue 21): one instanced draw of every cube, each instance placed from its
//! index in the vertex shader (no per-instance data at all), a one-line lit fragment, the
//! grid and camera of `--scene cubes` (`switchyard_city::Cubes`), timed with timestamp
//! queries around the render pass.
//!
//! Three meshes of the same unit box: 24 vertices with a normal per face, 8 shared corners
//! whose normal the fragment shader derives from screen-space derivatives of the position
//! (the stress scene's cube, chosen by this measurement), and 8 corners with positions only
//! and no fragment shader (the depth-only floor of a shadow pass). And the 8-corner cube
//! drawn 32 to an instance (the mesh repeated 32 times, each copy's cube found from the
//! vertex index): what a GPU's fixed cost per instance adds to a mesh this small; and the
//! box as the three faces toward the eye (`switchyard_city::box_faces`, lit and depth
//! only): the floor of the stress scene's `BOX_FACES` cubes.

use switchyard_city::{box_faces, box_mesh, corner_cube, Cubes, CUBE_SPACING};

/// Which cube the limit draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubeMesh {
    /// 24 vertices (position and face normal), 36 indices: the scene's cube.
    Faces24,
    /// 8 shared corners (position only), 36 indices; flat normals from derivatives: the
    /// scene's cube since this measurement ([`switchyard_city::corner_cube`]).
    Corners8,
    /// 8 shared corners, depth only (no color target, no fragment shader).
    DepthOnly8,
    /// [`CubeMesh::Corners8`], [`BATCH`] cubes an instance.
    Corners8Batched,
    /// [`CubeMesh::DepthOnly8`], [`BATCH`] cubes an instance.
    DepthOnly8Batched,
    /// The three faces of the box toward +x, +y and +z (7 corners, 6 triangles:
    /// [`switchyard_city::box_faces`]), mirrored per axis in the vertex shader toward the
    /// eye (no culling: mirrored faces wind the other way): the faces a convex box can
    /// show. Flat normals from derivatives.
    Visible3,
    /// [`CubeMesh::Visible3`], depth only.
    Visible3Depth,
}

/// Cubes an instance in the batched variants.
pub const BATCH: u32 = 32;

impl CubeMesh {
    /// Every variant, in the report's order.
    pub const ALL: [CubeMesh; 7] = [
        CubeMesh::Faces24,
        CubeMesh::Corners8,
        CubeMesh::DepthOnly8,
        CubeMesh::Corners8Batched,
        CubeMesh::DepthOnly8Batched,
        CubeMesh::Visible3,
        CubeMesh::Visible3Depth,
    ];

    /// What the report calls it.
    pub fn name(self) -> &'static str {
        match self {
            CubeMesh::Faces24 => "24 vertices, a normal per face",
            CubeMesh::Corners8 => "8 vertices, normals derived in the fragment shader",
            CubeMesh::DepthOnly8 => "8 vertices, depth only",
            CubeMesh::Corners8Batched => "8 vertices, normals derived, 32 cubes an instance",
            CubeMesh::DepthOnly8Batched => "8 vertices, depth only, 32 cubes an instance",
            CubeMesh::Visible3 => "the 3 faces toward the eye, 7 vertices, normals derived",
            CubeMesh::Visible3Depth => "the 3 faces toward the eye, 7 vertices, depth only",
        }
    }

    /// Whether it draws depth only.
    fn depth_only(self) -> bool {
        matches!(self, CubeMesh::DepthOnly8 | CubeMesh::DepthOnly8Batched | CubeMesh::Visible3Depth)
    }

    /// Cubes an instance.
    fn per_instance(self) -> u32 {
        match self {
            CubeMesh::Corners8Batched | CubeMesh::DepthOnly8Batched => BATCH,
            _ => 1,
        }
    }
}

const WGSL: &str = r#"
struct Grid { view_proj: mat4x4<f32>, side: u32, spacing: f32, half: f32, per: u32, total: u32, eye: vec3<f32> }
@group(0) @binding(0) var<uniform> grid: Grid;

fn place(p: vec3<f32>, i: u32) -> vec4<f32> {
    let cell = vec2<f32>(f32(i % grid.side), f32(i / grid.side)) - vec2<f32>(grid.half);
    let world = p + vec3<f32>(cell.x * grid.spacing, 0.0, cell.y * grid.spacing);
    return grid.view_proj * vec4<f32>(world, 1.0);
}

struct Lit { @builtin(position) pos: vec4<f32>, @location(0) n: vec3<f32> }
@vertex fn vs_faces(@location(0) p: vec3<f32>, @location(1) n: vec3<f32>, @builtin(instance_index) i: u32) -> Lit {
    return Lit(place(p, i), n);
}
@fragment fn fs_faces(v: Lit) -> @location(0) vec4<f32> {
    let l = max(dot(v.n, vec3<f32>(0.3, 0.8, 0.5)), 0.1);
    return vec4<f32>(l, l, l, 1.0);
}

struct Corner { @builtin(position) pos: vec4<f32>, @location(0) world: vec3<f32> }
@vertex fn vs_corners(@location(0) p: vec3<f32>, @builtin(instance_index) i: u32) -> Corner {
    return Corner(place(p, i), p);
}
@fragment fn fs_corners(v: Corner) -> @location(0) vec4<f32> {
    let n = normalize(cross(dpdx(v.world), dpdy(v.world)));
    let l = max(abs(dot(n, vec3<f32>(0.3, 0.8, 0.5))), 0.1);
    return vec4<f32>(l, l, l, 1.0);
}

@vertex fn vs_depth(@location(0) p: vec3<f32>, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {
    return place(p, i);
}

// Batched: copy k of the mesh (indices 8k..8k+7) is cube i * per + k; cubes past the
// count land outside the clip volume.
fn place_batched(p: vec3<f32>, v: u32, i: u32) -> vec4<f32> {
    let cube = i * grid.per + v / 8u;
    if cube >= grid.total { return vec4<f32>(2.0, 2.0, 2.0, 1.0); }
    return place(p, cube);
}
@vertex fn vs_batched(@location(0) p: vec3<f32>, @builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> Corner {
    return Corner(place_batched(p, v, i), p);
}
@vertex fn vs_batched_depth(@location(0) p: vec3<f32>, @builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {
    return place_batched(p, v, i);
}

// The +x, +y, +z faces mirrored on each axis where the eye is on the other side of the
// cube's center: the (up to) three faces it can see.
fn toward_eye(p: vec3<f32>, i: u32) -> vec3<f32> {
    let cell = vec2<f32>(f32(i % grid.side), f32(i / grid.side)) - vec2<f32>(grid.half);
    let center = vec3<f32>(cell.x * grid.spacing, 0.5, cell.y * grid.spacing);
    let s = select(vec3<f32>(-1.0), vec3<f32>(1.0), grid.eye >= center);
    return (p - vec3<f32>(0.0, 0.5, 0.0)) * s + vec3<f32>(0.0, 0.5, 0.0);
}
@vertex fn vs_visible(@location(0) p: vec3<f32>, @builtin(instance_index) i: u32) -> Corner {
    let q = toward_eye(p, i);
    return Corner(place(q, i), q);
}
@vertex fn vs_visible_depth(@location(0) p: vec3<f32>, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {
    return place(toward_eye(p, i), i);
}
"#;

/// A device with timestamp queries and what every measurement shares.
pub struct Raster {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: String,
    module: wgpu::ShaderModule,
    layout: wgpu::BindGroupLayout,
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

impl std::fmt::Debug for Raster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Raster").field("adapter", &self.adapter).finish_non_exhaustive()
    }
}

impl Raster {
    /// The first high-performance adapter's device; an error where there is none or it has
    /// no timestamp queries.
    pub fn new() -> Result<Self, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            apply_limit_buckets: false,
        }))
        .map_err(|e| e.to_string())?;
        if !adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(format!("{}: no timestamp queries", adapter.get_info().name));
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("raster-limit"),
            required_features: wgpu::Features::TIMESTAMP_QUERY,
            required_limits: wgpu::Limits::default(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| e.to_string())?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("raster-limit"),
            source: wgpu::ShaderSource::Wgsl(WGSL.into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("raster-limit"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("raster-limit"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("raster-limit"),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        let resolve = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let readback = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let adapter = adapter.get_info().name;
        Ok(Self { device, queue, adapter, module, layout, queries, resolve, readback })
    }

    /// The adapter's name.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// The median GPU ms of `iters` passes (after one warm-up) drawing `cubes` cubes of
    /// `mesh` on the stress scene's grid and camera into `width` x `height` color (RGBA8)
    /// and depth targets, cleared by each pass.
    pub fn measure(&self, mesh: CubeMesh, cubes: u32, width: u32, height: u32, iters: usize) -> Result<f64, String> {
        Ok(self.measure_with(mesh, mesh.per_instance(), cubes, (width, height), iters, false)?.0)
    }

    /// The RGBA8 image (rows of `width` pixels, tightly packed) of one pass drawing
    /// `cubes` cubes of `mesh` ([`Raster::measure`]'s pass); `None` for depth-only meshes.
    pub fn image(&self, mesh: CubeMesh, cubes: u32, width: u32, height: u32) -> Result<Option<Vec<u8>>, String> {
        Ok(self.measure_with(mesh, mesh.per_instance(), cubes, (width, height), 1, true)?.1)
    }

    /// [`Raster::measure`] of the 8-corner cube (lit, or depth only) drawn `per` cubes an
    /// instance (1 to 4096).
    pub fn measure_batched(
        &self,
        depth_only: bool,
        per: u32,
        cubes: u32,
        (width, height): (u32, u32),
        iters: usize,
    ) -> Result<f64, String> {
        if !(1..=4096).contains(&per) {
            return Err(format!("{per} cubes an instance: 1 to 4096"));
        }
        let mesh = if depth_only { CubeMesh::DepthOnly8Batched } else { CubeMesh::Corners8Batched };
        Ok(self.measure_with(mesh, per, cubes, (width, height), iters, false)?.0)
    }

    fn measure_with(
        &self,
        mesh: CubeMesh,
        per: u32,
        cubes: u32,
        (width, height): (u32, u32),
        iters: usize,
        read: bool,
    ) -> Result<(f64, Option<Vec<u8>>), String> {
        use wgpu::util::DeviceExt;
        let d = &self.device;
        let side = (f64::from(cubes).sqrt().ceil() as u32).max(1);
        let lens = Cubes { side: side as usize }.lens();
        let view_proj = lens.view_proj(width as f32 / height as f32);
        let mut grid = view_proj.to_cols_array().to_vec();
        grid.extend([f32::from_bits(side), CUBE_SPACING, (side as f32 - 1.0) * 0.5, f32::from_bits(per)]);
        grid.extend([f32::from_bits(cubes), 0.0, 0.0, 0.0, lens.eye.x, lens.eye.y, lens.eye.z, 0.0]);
        let uniform = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("raster-limit-grid"),
            contents: bytemuck::cast_slice(&grid),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let group = d.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &self.layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }],
        });
        let faces = box_mesh(1.0, 1.0, 1.0);
        let (vertices, indices): (Vec<f32>, Vec<u32>) = match mesh {
            CubeMesh::Faces24 => {
                (faces.vertices.iter().flat_map(|v| v.position.into_iter().chain(v.normal)).collect(), faces.indices)
            }
            CubeMesh::Corners8 | CubeMesh::DepthOnly8 => corners(),
            CubeMesh::Corners8Batched | CubeMesh::DepthOnly8Batched => {
                let (v, i) = corners();
                let copies = (0..per).flat_map(|k| i.iter().map(move |&x| x + 8 * k));
                (v.repeat(per as usize), copies.collect())
            }
            CubeMesh::Visible3 | CubeMesh::Visible3Depth => visible3(),
        };
        let vb = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("raster-limit-vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let ib = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("raster-limit-indices"),
            contents: bytemuck::cast_slice(&indices),
            usage: wgpu::BufferUsages::INDEX,
        });
        let target = |format| {
            d.create_texture(&wgpu::TextureDescriptor {
                label: Some("raster-limit-target"),
                size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            })
        };
        let color_texture = (!mesh.depth_only()).then(|| target(wgpu::TextureFormat::Rgba8Unorm));
        let color = color_texture.as_ref().map(|t| t.create_view(&Default::default()));
        let depth = target(wgpu::TextureFormat::Depth32Float).create_view(&Default::default());
        let pipeline = self.pipeline(mesh);
        let mut times = Vec::with_capacity(iters + 1);
        for _ in 0..=iters.max(1) {
            let mut enc = d.create_command_encoder(&Default::default());
            {
                let colors = [color.as_ref().map(|view| wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })];
                let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("raster-limit"),
                    color_attachments: if color.is_some() { &colors } else { &[] },
                    depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                        view: &depth,
                        depth_ops: Some(wgpu::Operations {
                            load: wgpu::LoadOp::Clear(1.0),
                            store: wgpu::StoreOp::Store,
                        }),
                        stencil_ops: None,
                    }),
                    timestamp_writes: Some(wgpu::RenderPassTimestampWrites {
                        query_set: &self.queries,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }),
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                rp.set_pipeline(&pipeline);
                rp.set_bind_group(0, Some(&group), &[]);
                rp.set_vertex_buffer(0, vb.slice(..));
                rp.set_index_buffer(ib.slice(..), wgpu::IndexFormat::Uint32);
                rp.draw_indexed(0..indices.len() as u32, 0, 0..cubes.div_ceil(per));
            }
            enc.resolve_query_set(&self.queries, 0..2, &self.resolve, 0);
            enc.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, 16);
            self.queue.submit([enc.finish()]);
            times.push(self.read_ms()?);
        }
        times.remove(0);
        times.sort_by(f64::total_cmp);
        let image = match (read, &color_texture) {
            (true, Some(t)) => Some(self.read_texture(t, width, height)?),
            _ => None,
        };
        Ok((times[times.len() / 2], image))
    }

    /// The pixels of an RGBA8 texture, rows tightly packed.
    fn read_texture(&self, texture: &wgpu::Texture, width: u32, height: u32) -> Result<Vec<u8>, String> {
        let row = (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("raster-limit-image"),
            size: u64::from(row * height),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: None },
            },
            wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        );
        self.queue.submit([enc.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).map_err(|e| e.to_string())?;
        rx.recv().map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        let view = buffer.slice(..).get_mapped_range().map_err(|e| e.to_string())?;
        Ok(view.chunks(row as usize).flat_map(|r| &r[..width as usize * 4]).copied().collect())
    }

    fn pipeline(&self, mesh: CubeMesh) -> wgpu::RenderPipeline {
        let d = &self.device;
        let layout = d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&self.layout)],
            immediate_size: 0,
        });
        let faces = [
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 0, shader_location: 0 },
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 12, shader_location: 1 },
        ];
        let (attributes, stride, vs, fs): (&[wgpu::VertexAttribute], u64, &str, Option<&str>) = match mesh {
            CubeMesh::Faces24 => (&faces, 24, "vs_faces", Some("fs_faces")),
            CubeMesh::Corners8 => (&faces[..1], 12, "vs_corners", Some("fs_corners")),
            CubeMesh::DepthOnly8 => (&faces[..1], 12, "vs_depth", None),
            CubeMesh::Corners8Batched => (&faces[..1], 12, "vs_batched", Some("fs_corners")),
            CubeMesh::DepthOnly8Batched => (&faces[..1], 12, "vs_batched_depth", None),
            CubeMesh::Visible3 => (&faces[..1], 12, "vs_visible", Some("fs_corners")),
            CubeMesh::Visible3Depth => (&faces[..1], 12, "vs_visible_depth", None),
        };
        // Mirrored faces wind the other way; every face drawn faces the eye (or is hidden).
        let visible = matches!(mesh, CubeMesh::Visible3 | CubeMesh::Visible3Depth);
        let targets = [Some(wgpu::ColorTargetState::from(wgpu::TextureFormat::Rgba8Unorm))];
        d.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("raster-limit"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &self.module,
                entry_point: Some(vs),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes,
                })],
            },
            primitive: wgpu::PrimitiveState {
                cull_mode: if visible { None } else { Some(wgpu::Face::Back) },
                ..Default::default()
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: wgpu::TextureFormat::Depth32Float,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: fs.map(|entry| wgpu::FragmentState {
                module: &self.module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                targets: &targets,
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Waits for the GPU and reads the pass's two timestamps, in ms apart.
    fn read_ms(&self) -> Result<f64, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.readback.map_async(wgpu::MapMode::Read, 0..16, move |r| {
            let _ = tx.send(r);
        });
        self.device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).map_err(|e| e.to_string())?;
        rx.recv().map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        let ticks = {
            let view = self.readback.get_mapped_range(0..16).map_err(|e| e.to_string())?;
            let t: &[u64] = bytemuck::cast_slice(&view);
            t[1].saturating_sub(t[0])
        };
        self.readback.unmap();
        Ok(ticks as f64 * f64::from(self.queue.get_timestamp_period()) / 1e6)
    }
}

/// [`box_faces`]' positions and indices.
fn visible3() -> (Vec<f32>, Vec<u32>) {
    let faces = box_faces();
    (faces.vertices.iter().flat_map(|v| v.position).collect(), faces.indices)
}

/// [`corner_cube`]'s positions and indices.
fn corners() -> (Vec<f32>, Vec<u32>) {
    let cube = corner_cube();
    (cube.vertices.iter().flat_map(|v| v.position).collect(), cube.indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adapter's device, or `None` with a note where none has timestamp queries
    /// (never on CI, where lavapipe has them).
    fn raster() -> Option<Raster> {
        Raster::new()
            .map_err(|e| {
                assert!(std::env::var_os("CI").is_none(), "no adapter with timestamps on CI: {e}");
                eprintln!("skipping: {e}");
            })
            .ok()
    }

    /// Every cube variant draws and is timed on a real adapter (lavapipe on CI; skipped
    /// with a note where no adapter has timestamp queries).
    #[test]
    fn every_cube_variant_is_timed() {
        let Some(raster) = raster() else { return };
        for mesh in CubeMesh::ALL {
            let ms = raster.measure(mesh, 100, 64, 36, 1).expect("measured");
            assert!(ms.is_finite() && (0.0..10_000.0).contains(&ms), "{mesh:?}: {ms} ms");
        }
    }

    /// The cheaper cubes draw the same picture as the 8-corner one: batched 32 to an
    /// instance (also with a last, partial instance: 100 cubes), pixel for pixel, and as
    /// the three faces toward the eye (the grid's cubes seen from above and from every
    /// side), the same pixels covered and shaded within a step.
    #[test]
    fn the_cheaper_cubes_draw_the_same_image() {
        let Some(raster) = raster() else { return };
        for cubes in [100, 1000] {
            let reference = raster.image(CubeMesh::Corners8, cubes, 160, 90).expect("drawn").expect("color");
            assert!(reference.chunks(4).any(|p| p[0] > 0), "cubes in view");
            for mesh in [CubeMesh::Corners8Batched, CubeMesh::Visible3] {
                let image = raster.image(mesh, cubes, 160, 90).expect("drawn").expect("color");
                // Every pixel covered alike; shading equal up to the rounding of the normals
                // derived from mirrored faces (one step of 255).
                let most = image.iter().zip(&reference).map(|(a, b)| a.abs_diff(*b)).max();
                assert!(most <= Some(1), "{mesh:?}, {cubes} cubes: pixels differ by up to {most:?}");
                if mesh == CubeMesh::Corners8Batched {
                    assert!(image == reference, "{mesh:?}, {cubes} cubes: the same triangles, the same pixels");
                }
            }
            assert_eq!(raster.image(CubeMesh::Visible3Depth, cubes, 160, 90).expect("drawn"), None);
        }
    }
}
