//! An engine that owns its wgpu device and its output texture declares a frame graph —
//! a shadow map, opaque and transparent scene passes into an intermediate target, a bloom
//! chain at half size (bright, blur, blur again: the first and last of its targets never
//! live at once, so they share memory), and a post pass (bloom, vignette and tone map)
//! into the engine's texture — renders one frame and writes `frame_graph.png`, printing
//! what each pass moves through memory and what aliasing saved.
//!
//! `cargo run -p switchyard --example frame_graph`

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::{Backend, TextureFormat};
use switchyard::*;

mod common;
use common::unit_cube;

const SIZE: (u32, u32) = (640, 360);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The engine's side: its instance, device, queue and output texture.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))?;
    let output = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("engine-output"),
        size: wgpu::Extent3d { width: SIZE.0, height: SIZE.1, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    println!("adapter: {}", adapter.get_info().name);

    // Switchyard on that device, drawing into that texture.
    let backend = Arc::new(WgpuBackend::from_device(&adapter, device, queue, Encoding::RenderBundle));
    let output = backend.import_texture(&output)?;
    let config = RendererConfig { width: SIZE.0, height: SIZE.1, max_objects: 1024, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config)?;
    let light = Vec3::new(0.7, -1.0, -0.2);
    r.set_lighting(Lighting { direction: light, ..Lighting::default() });

    // A ground plane and a grid of boxes, every fifth of glass.
    let shader = r.create_shader(&ShaderDesc::lit())?;
    let color = |c: [f32; 4]| PropertySheet::new().with("_BaseColor", PropertyValue::Color(c));
    let stone =
        r.create_material(&MaterialDesc { shader, properties: color([0.8, 0.5, 0.3, 1.0]), ..Default::default() })?;
    let glass = r.create_material(&MaterialDesc {
        shader,
        properties: color([0.5, 0.8, 1.0, 0.4]),
        transparent: true,
        ..Default::default()
    })?;
    let cube = r.create_mesh(&unit_cube())?;
    let mut objects = vec![ObjectDesc {
        mesh: cube,
        material: stone,
        transform: Mat4::from_scale(Vec3::new(40.0, 0.1, 40.0)),
        layer: 0,
        flags: 0,
    }];
    for i in 0..64 {
        let (x, z) = ((i % 8) as f32 * 4.0 - 14.0, (i / 8) as f32 * 4.0 - 14.0);
        let h = 1.0 + (i * 7 % 5) as f32;
        objects.push(ObjectDesc {
            mesh: cube,
            material: if i % 5 == 0 { glass } else { stone },
            transform: Mat4::from_translation(Vec3::new(x, h * 0.5, z)) * Mat4::from_scale(Vec3::new(2.0, h, 2.0)),
            layer: 0,
            flags: CASTS_SHADOWS,
        });
    }
    r.insert_objects(&objects)?;

    // The frame: cameras, targets and passes, declared once.
    let mut g = FrameGraph::new();
    let sun = g.camera("sun");
    let main_camera = g.camera("main");
    let shadow = g.target(
        "shadow",
        TargetKind::Transient,
        TextureFormat::Depth32Float,
        TargetSize::Fixed { width: 2048, height: 2048 },
    );
    let scene = g.target("scene", TargetKind::Transient, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let out = g.target("out", TargetKind::External, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    g.pass(Pass::scene("shadow", sun, PassKind::Shadow, Queue::All).depth(shadow, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(
        Pass::scene("opaque", main_camera, PassKind::Forward, Queue::Opaque)
            .color(scene, LoadOp::Clear([0.5, 0.6, 0.75, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Store)
            .sample(shadow),
    );
    g.pass(
        Pass::scene("transparent", main_camera, PassKind::Forward, Queue::Transparent)
            .color(scene, LoadOp::Load, StoreOp::Store)
            .depth(depth, LoadOp::Load, StoreOp::Discard)
            .sample(shadow),
    );
    // Bloom at half size: three targets of one kind; "bright" is dead before "blur-v" is
    // written, so the compiler gives both one texture.
    let half = TargetSize::Scaled(0.5);
    let [bright, blur_h, blur_v] =
        ["bright", "blur-h", "blur-v"].map(|n| g.target(n, TargetKind::Transient, TextureFormat::Rgba8Unorm, half));
    let blur = |name: &str, threshold: f32| FullscreenShader {
        name: name.into(),
        wgsl: BLUR.into(),
        entry: "fs_blur".into(),
        params: [threshold, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    };
    g.pass(
        Pass::fullscreen("bright", blur("bright", 0.7)).color(bright, LoadOp::DontCare, StoreOp::Store).sample(scene),
    );
    g.pass(
        Pass::fullscreen("blur-h", blur("blur-h", 0.0)).color(blur_h, LoadOp::DontCare, StoreOp::Store).sample(bright),
    );
    g.pass(
        Pass::fullscreen("blur-v", blur("blur-v", 0.0)).color(blur_v, LoadOp::DontCare, StoreOp::Store).sample(blur_h),
    );
    let post = FullscreenShader {
        name: "post".into(),
        wgsl: POST.into(),
        entry: "fs_post".into(),
        params: [0.8, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    };
    g.pass(Pass::fullscreen("post", post).color(out, LoadOp::DontCare, StoreOp::Store).sample(scene).sample(blur_v));
    r.set_graph(g)?;

    // One frame: the cameras of this frame, and the engine's texture as the output.
    let eye = Vec3::new(22.0, 16.0, 26.0);
    let aspect = SIZE.0 as f32 / SIZE.1 as f32;
    let view = Mat4::perspective_rh(0.8, aspect, 0.5, 200.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
    let sun_eye = -light.normalize() * 60.0;
    let sun_view =
        Mat4::orthographic_rh(-30.0, 30.0, -30.0, 30.0, 1.0, 120.0) * Mat4::look_at_rh(sun_eye, Vec3::ZERO, Vec3::Y);
    // The sun draws only the casters that can shade what the camera sees.
    let cameras = [
        Camera { view_proj: sun_view, eye: sun_eye, far: 120.0, layer_mask: u16::MAX, receivers: Some(view) },
        Camera { view_proj: view, eye, far: 200.0, layer_mask: u16::MAX, receivers: None },
    ];
    let stats = r.render_graph(&FrameInput { cameras: &cameras, targets: &[(out, output)] })?;
    r.flush()?;

    println!("| pass | loaded MB/frame | stored MB/frame |\n|---|---|---|");
    for (name, p) in r.pass_names().iter().zip(&stats.passes) {
        println!("| {name} | {:.2} | {:.2} |", p.loaded as f64 / 1e6, p.stored as f64 / 1e6);
    }
    println!(
        "graph targets: {:.2} MB, saved by aliasing: {:.2} MB",
        stats.target_bytes as f64 / 1e6,
        stats.target_bytes_saved as f64 / 1e6
    );
    let img = backend.read_rgba8(output)?;
    image::save_buffer("frame_graph.png", &img.pixels, img.width, img.height, image::ExtendedColorType::Rgba8)?;
    println!("wrote frame_graph.png ({} draw calls)", stats.draw_calls);
    Ok(())
}

/// Four taps around each texel, keeping what is brighter than `params[0].x` (0: all).
const BLUR: &str = "
@group(0) @binding(3) var src: texture_2d<f32>;
@fragment
fn fs_blur(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let d = frame.inv_size;
    let s = textureSample(src, frame_sampler, v.uv + vec2<f32>(d.x, d.y))
        + textureSample(src, frame_sampler, v.uv + vec2<f32>(-d.x, d.y))
        + textureSample(src, frame_sampler, v.uv + vec2<f32>(d.x, -d.y))
        + textureSample(src, frame_sampler, v.uv + vec2<f32>(-d.x, -d.y));
    return max(s * 0.25 - vec4<f32>(frame.params[0].x), vec4<f32>(0.0));
}
";

/// The scene plus its bloom, a vignette (`params[0].y`) and an exposure curve
/// (`params[0].x`).
const POST: &str = "
@group(0) @binding(3) var scene: texture_2d<f32>;
@group(0) @binding(4) var bloom: texture_2d<f32>;
@fragment
fn fs_post(v: FullscreenVertex) -> @location(0) vec4<f32> {
    let c = textureSample(scene, frame_sampler, v.uv).rgb + 0.6 * textureSample(bloom, frame_sampler, v.uv).rgb;
    let r = length(v.uv - vec2<f32>(0.5));
    let mapped = vec3<f32>(1.0) - exp(-c * 2.0 * frame.params[0].x);
    return vec4<f32>(mapped * (1.0 - frame.params[0].y * r * r), 1.0);
}
";
