//! README's embedding snippet, compiled and run: an engine's own device, queue and texture,
//! one mesh and material, a declared frame graph (shadow, opaque, a fullscreen tone map, a
//! UI callback), one frame. A unit test keeps README's text equal to `embed` below.
//!
//! `cargo run -p switchyard --example embedding`

use glam::{Mat4, Vec3};
use switchyard::backend::Command;
use switchyard::{CallbackContext, Camera, FrameStats, FullscreenShader, Vertex};

/// The engine's UI: records nothing here; a real one records its draws.
struct EngineUi;

impl EngineUi {
    fn record(&self, _ctx: &CallbackContext<'_>, _commands: &mut Vec<Command>) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (width, height) = (320, 180);
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))?;
    let engine_texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("engine-output"),
        size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    // A quad on the ground, seen from above, and the sun straight overhead.
    let v = |x: f32, z: f32| Vertex { position: [x, 0.0, z], normal: [0.0, 1.0, 0.0], uv: [x, z] };
    let (vertices, indices) = (vec![v(-1.0, -1.0), v(1.0, -1.0), v(1.0, 1.0), v(-1.0, 1.0)], vec![0, 2, 1, 0, 3, 2]);
    let look = |eye: Vec3, up: Vec3| Mat4::look_at_rh(eye, Vec3::ZERO, up);
    let sun_camera = Camera {
        view_proj: Mat4::orthographic_rh(-2.0, 2.0, -2.0, 2.0, 0.1, 20.0) * look(Vec3::Y * 10.0, Vec3::Z),
        eye: Vec3::Y * 10.0,
        far: 20.0,
        layer_mask: u16::MAX,
        receivers: None,
    };
    let eye = Vec3::new(0.0, 3.0, 3.0);
    let main_camera = Camera {
        view_proj: Mat4::perspective_rh(0.9, width as f32 / height as f32, 0.1, 50.0) * look(eye, Vec3::Y),
        eye,
        far: 50.0,
        layer_mask: u16::MAX,
        receivers: None,
    };
    let tone_map = FullscreenShader {
        name: "tone-map".into(),
        wgsl: TONE_MAP.into(),
        entry: "fs_tone_map".into(),
        params: [0.0; 8],
    };
    let sky = [0.5, 0.6, 0.8, 1.0];
    let stats = embed(
        adapter,
        device,
        queue,
        engine_texture,
        (width, height),
        (vertices, indices),
        Mat4::IDENTITY,
        sky,
        tone_map,
        EngineUi,
        (sun_camera, main_camera),
    )?;
    println!("one frame through the README's graph: {} passes, {} draw calls", stats.pass_count, stats.draw_calls);
    Ok(())
}

/// The scene texture through unchanged (an engine's tone map goes here).
const TONE_MAP: &str = "
@group(0) @binding(3) var scene: texture_2d<f32>;
@fragment
fn fs_tone_map(v: FullscreenVertex) -> @location(0) vec4<f32> {
    return vec4<f32>(textureSample(scene, frame_sampler, v.uv).rgb, 1.0);
}
";

/// README's snippet between the markers, line for line.
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)]
fn embed(
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    engine_texture: wgpu::Texture,
    (width, height): (u32, u32),
    (vertices, indices): (Vec<Vertex>, Vec<u32>),
    transform: Mat4,
    sky: [f64; 4],
    tone_map: FullscreenShader,
    engine_ui: EngineUi,
    (sun_camera, main_camera): (Camera, Camera),
) -> Result<FrameStats, Box<dyn std::error::Error>> {
    // README: begin
    use std::sync::Arc;
    use switchyard::backend::{wgpu::{Encoding, WgpuBackend}, TextureFormat};
    use switchyard::*;

    // The engine's own device, queue and texture: Switchyard installs no callbacks on them.
    let backend = Arc::new(WgpuBackend::from_device(&adapter, device.clone(), queue.clone(), Encoding::RenderBundle));
    let viewport = backend.import_texture(&engine_texture)?; // e.g. a swapchain image
    let mut r = Renderer::new(backend, RendererConfig { width, height, ..RendererConfig::default() })?;
    let shader = r.create_shader(&ShaderDesc::lit())?;
    let mesh = r.create_mesh(&MeshData { vertices, indices })?;
    let material = r.create_material(&MaterialDesc { shader, ..Default::default() })?;
    r.insert_objects(&[ObjectDesc { mesh, material, transform, layer: 0, flags: CASTS_SHADOWS }])?;

    // The frame: cameras, targets and passes. Compiled once (order, aliasing, bytes per pass).
    let mut g = FrameGraph::new();
    let (sun, main) = (g.camera("sun"), g.camera("main"));
    let shadow = g.target("shadow", TargetKind::Transient, TextureFormat::Depth32Float,
        TargetSize::Fixed { width: 2048, height: 2048 });
    let scene = g.target("scene", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let out = g.target("out", TargetKind::External, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    g.pass(Pass::scene("shadow", sun, PassKind::Shadow, Queue::All).depth(shadow, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(Pass::scene("opaque", main, PassKind::Forward, Queue::Opaque)
        .color(scene, LoadOp::Clear(sky), StoreOp::Store).depth(depth, LoadOp::Clear(1.0), StoreOp::Store)
        .sample(shadow));
    g.pass(Pass::fullscreen("post", tone_map).color(out, LoadOp::DontCare, StoreOp::Store).sample(scene));
    g.pass(Pass::callback("ui", move |ctx, commands| engine_ui.record(ctx, commands)).color(out, LoadOp::Load, StoreOp::Store));
    r.set_graph(g)?; // a cycle, a missing input, a format or size mismatch: a typed error naming the pass

    // Every frame:
    let stats = r.render_graph(&FrameInput { cameras: &[sun_camera, main_camera], targets: &[(out, viewport)] })?;
    // stats: per-stage times; stats.passes: bytes each pass loads, stores and resolves
    // README: end
    Ok(stats)
}
