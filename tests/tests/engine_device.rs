//! Switchyard embedded in an engine that owns the wgpu device, the queue and the target:
//! the renderer draws into the engine's texture through `WgpuBackend::from_device`, with
//! the same pixels as into its own target.

use std::sync::Arc;

use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::backend::{Backend, TextureId};
use switchyard::*;
use switchyard_tests::{cube, cube_grid};

const SIZE: u32 = 96;

/// A renderer over `backend` with a few lit cubes, and its two views.
fn scene(backend: Arc<WgpuBackend>) -> (Renderer<WgpuBackend>, Vec<View>) {
    let config = RendererConfig {
        threads: 2,
        width: SIZE,
        height: SIZE,
        shadow_map_size: 128,
        max_objects: 64,
        ..Default::default()
    };
    let mut r = Renderer::new(backend, config).unwrap();
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let material = r
        .create_material(&MaterialDesc {
            shader,
            properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color([0.9, 0.4, 0.1, 1.0])),
            ..Default::default()
        })
        .unwrap();
    let views = cube_grid(&mut r, mesh, &[material]);
    (r, views)
}

fn engine_texture(device: &wgpu::Device, format: wgpu::TextureFormat, side: u32) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("engine-viewport"),
        size: wgpu::Extent3d { width: side, height: side, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// The engine's device on the first adapter of `api` and a backend on it (`None` where
/// there is no such adapter, which CI does not allow).
fn engine(api: wgpu::Backends) -> Option<(wgpu::Device, Arc<WgpuBackend>)> {
    let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
        return None;
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).unwrap();
    let backend = Arc::new(WgpuBackend::from_device(&adapter, device.clone(), queue, Encoding::RenderBundle));
    Some((device, backend))
}

fn on(api: wgpu::Backends) {
    let Some((device, backend)) = engine(api) else { return };
    let (mut r, views) = scene(backend.clone());
    // The renderer's own target first, then the engine's texture: the same frame, the same pixels.
    r.render(&views).unwrap();
    let own = r.read_color().unwrap();
    let texture = engine_texture(&device, wgpu::TextureFormat::Rgba8UnormSrgb, SIZE);
    let viewport: TextureId = backend.import_texture(&texture).unwrap();
    let stats = r.render_to(&views, viewport).unwrap();
    assert!(stats.visible[0] > 0 && stats.draw_calls > 0);
    r.flush().unwrap();
    let engine = backend.read_rgba8(viewport).unwrap();
    assert_eq!(engine, own, "{api:?}: the engine's texture holds the frame the renderer's own target held");
    let distinct: std::collections::HashSet<[u8; 4]> =
        (0..SIZE * SIZE).map(|i| engine.pixel(i % SIZE, i / SIZE)).collect();
    assert!(distinct.len() > 4, "a lit scene, not a clear: {} colors", distinct.len());

    // Outputs that do not fit are refused before any work, and the next frame works.
    let small = backend.import_texture(&engine_texture(&device, wgpu::TextureFormat::Rgba8UnormSrgb, 16)).unwrap();
    let linear = backend.import_texture(&engine_texture(&device, wgpu::TextureFormat::Rgba8Unorm, SIZE)).unwrap();
    for bad in [small, linear] {
        assert!(matches!(r.render_to(&views, bad), Err(RenderError::InvalidOutput { .. })));
    }
    backend.destroy(switchyard::backend::Resource::Texture(small)).unwrap();
    assert!(matches!(r.render_to(&views, small), Err(RenderError::InvalidOutput { what: "stale handle" })));
    r.render_to(&views, viewport).unwrap();
    r.flush().unwrap();
    assert_eq!(backend.read_rgba8(viewport).unwrap(), own);
}

#[test]
fn renderer_draws_into_an_engine_texture_vulkan() {
    on(wgpu::Backends::VULKAN);
}

#[test]
fn renderer_draws_into_an_engine_texture_gl() {
    on(wgpu::Backends::GL);
}

/// The full frame graph (shadow cascades, opaque, transparent, a half-resolution bloom
/// chain whose first and last targets share a texture, post, an engine overlay) on the
/// engine's device into the engine's texture: the same pixels with aliasing on and off.
fn graph_on(api: wgpu::Backends) {
    use switchyard_tests::full_graph::{bar_pipeline, full_graph};
    let Some((device, backend)) = engine(api) else { return };
    let (mut r, views) = scene(backend.clone());
    let bar = bar_pipeline(&*backend).unwrap();
    let texture = engine_texture(&device, wgpu::TextureFormat::Rgba8UnormSrgb, SIZE);
    let viewport: TextureId = backend.import_texture(&texture).unwrap();
    let camera =
        |v: &View| Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: v.layer_mask, receivers: None };
    let cameras = [camera(&views[1]), camera(&views[1]), camera(&views[0])];
    let mut images = Vec::new();
    for aliasing in [true, false] {
        let (mut g, t) = full_graph(TargetKind::External, 128, bar);
        g.set_aliasing(aliasing);
        r.set_graph(g).unwrap();
        assert_eq!(r.target_texture(t.bright) == r.target_texture(t.blur_v), aliasing);
        let stats = r.render_graph(&FrameInput { cameras: &cameras, targets: &[(t.out, viewport)] }).unwrap();
        assert!(stats.visible[2] > 0 && stats.draw_calls > 0);
        r.flush().unwrap();
        images.push(backend.read_rgba8(viewport).unwrap());
    }
    assert_eq!(images[0], images[1], "{api:?}: aliasing changes memory, not pixels");
    let img = &images[0];
    assert_eq!(img.pixel(2, 2), [255, 0, 0, 255], "the overlay's bar, drawn by the engine callback, is on top");
    assert_eq!(img.pixel(SIZE / 2 - 2, SIZE / 8 - 2), [255, 0, 0, 255]);
    let below: std::collections::HashSet<[u8; 4]> =
        (SIZE * SIZE / 4..SIZE * SIZE).map(|i| img.pixel(i % SIZE, i / SIZE)).collect();
    assert!(below.len() > 8, "{api:?}: the lit, post-processed scene under the bar: {} colors", below.len());
    assert!(!below.contains(&[255, 0, 0, 255]), "the bar stays in its corner");

    // A fullscreen pass that declares its depth input `texture_depth_2d` instead of
    // `texture_2d<f32>` (how Switchyard binds it): the pipeline is refused, and on the
    // engine's device that is a typed error (an error scope catches it), never a panic in
    // the engine's error handler. The graph before it stays.
    let (mut g, refused) = full_graph(TargetKind::External, 128, bar);
    let shader = FullscreenShader {
        name: "depth-view".into(),
        wgsl: "@group(0) @binding(3) var d: texture_depth_2d;
            @fragment fn fs_depth(v: FullscreenVertex) -> @location(0) vec4<f32> {
                return vec4<f32>(vec3<f32>(textureLoad(d, vec2<i32>(v.position.xy), 0)), 1.0);
            }"
        .into(),
        entry: "fs_depth".into(),
        params: [0.0; 8],
    };
    g.pass(
        Pass::fullscreen("depth-view", shader)
            .color(refused.out, switchyard::LoadOp::Load, switchyard::StoreOp::Store)
            .sample(refused.depth),
    );
    match r.set_graph(g) {
        Err(RenderError::Shader { pass, .. }) => assert_eq!(pass, "depth-view"),
        other => panic!("{api:?}: expected a shader error, got {other:?}"),
    }
    let out = r.graph().unwrap().find_target("out").unwrap();
    r.render_graph(&FrameInput { cameras: &cameras, targets: &[(out, viewport)] }).unwrap();
    r.flush().unwrap();
    assert_eq!(backend.read_rgba8(viewport).unwrap(), images[1], "{api:?}: the graph before renders as before");
}

#[test]
fn a_declared_graph_draws_into_an_engine_texture_vulkan() {
    graph_on(wgpu::Backends::VULKAN);
}

#[test]
fn a_declared_graph_draws_into_an_engine_texture_gl() {
    graph_on(wgpu::Backends::GL);
}

/// An engine that names wgpu and glam only through Switchyard's re-exports: the types are
/// the ones Switchyard takes (this compiles only if they are the same crates).
#[test]
fn the_reexported_wgpu_and_glam_are_the_ones_switchyard_takes() {
    let adapters: Vec<switchyard::wgpu::Adapter> = WgpuBackend::enumerate(switchyard::wgpu::Backends::all());
    let camera = Camera {
        view_proj: switchyard::glam::Mat4::IDENTITY,
        eye: switchyard::glam::Vec3::ZERO,
        far: 1.0,
        layer_mask: u16::MAX,
        receivers: None,
    };
    assert_eq!(camera.view_proj, glam::Mat4::IDENTITY);
    if let Some(adapter) = adapters.into_iter().next() {
        let b = WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).expect("a device");
        assert!(!b.name().is_empty());
    }
}

/// A retained target handed to the engine as a `wgpu::Texture`: copied by the engine's own
/// encoder on Switchyard's queue after `flush`, its bytes are the frame `read_target` reads;
/// bad targets and a graph not rendered yet are typed errors.
fn export_on(api: wgpu::Backends) {
    let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
        return;
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).unwrap();
    let backend = Arc::new(WgpuBackend::from_device(&adapter, device.clone(), queue.clone(), Encoding::RenderBundle));
    let (mut r, views) = scene(backend);
    let mut g = FrameGraph::new();
    let main = g.camera("main");
    let out =
        g.target("out", TargetKind::Retained, switchyard::backend::TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let depth =
        g.target("depth", TargetKind::Transient, switchyard::backend::TextureFormat::Depth32Float, TargetSize::Output);
    g.pass(
        Pass::scene("forward", main, PassKind::Forward, Queue::All)
            .color(out, LoadOp::Clear([0.1, 0.2, 0.4, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard),
    );
    r.set_graph(g).unwrap();
    assert!(matches!(r.export_target(out), Err(RenderError::InvalidTarget { .. })), "no frame yet");
    assert!(matches!(r.export_target(depth), Err(RenderError::InvalidTarget { .. })), "transient");
    let camera =
        |v: &View| Camera { view_proj: v.view_proj, eye: v.eye, far: v.far, layer_mask: u16::MAX, receivers: None };
    let s = r.render_graph(&FrameInput { cameras: &[camera(&views[0])], targets: &[] }).unwrap();
    let (texture, frame) = r.export_target(out).unwrap();
    assert_eq!(frame, s.frame);
    r.flush().unwrap();
    // The engine's copy, on the queue Switchyard submitted to.
    let row = (SIZE * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("engine-copy"),
        size: u64::from(row * SIZE),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    enc.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: None },
        },
        wgpu::Extent3d { width: SIZE, height: SIZE, depth_or_array_layers: 1 },
    );
    queue.submit([enc.finish()]);
    buffer.map_async(wgpu::MapMode::Read, .., |r| r.unwrap());
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).unwrap();
    let bytes = buffer.get_mapped_range(..).unwrap();
    let copied: Vec<u8> =
        (0..SIZE as usize).flat_map(|y| bytes[y * row as usize..][..SIZE as usize * 4].to_vec()).collect();
    drop(bytes);
    let read = r.read_target(out).unwrap();
    assert_eq!(copied, read.pixels, "{api:?}: the engine's copy is the frame");
    let distinct: std::collections::HashSet<&[u8]> = read.pixels.chunks(4).collect();
    assert!(distinct.len() > 4, "a scene, not a clear");
}

#[test]
fn a_retained_target_exported_to_the_engine_on_vulkan() {
    export_on(wgpu::Backends::VULKAN);
}

#[test]
fn a_retained_target_exported_to_the_engine_on_gl() {
    export_on(wgpu::Backends::GL);
}

/// The engine's device lost under the backend before its loss is reported (the engine
/// destroyed it; a driver reset looks the same until wgpu's next poll): the mip maker,
/// made on first use, is made on the dead device without a panic, generating mips and
/// preparing uploads return a typed error or nothing, and none of Switchyard's errors
/// reaches the engine's error handler (it catches its own with error scopes).
fn mips_on_a_device_lost_unreported(api: wgpu::Backends) {
    use switchyard::backend::{CreateError, PrepareUploads, TextureDesc, TextureFormat, TextureUsage, WriteError};
    let Some((device, backend)) = engine(api) else { return };
    let reached = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reached.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| sink.lock().unwrap().push(e.to_string())));
    let desc = TextureDesc {
        label: "mipped".into(),
        width: 64,
        height: 64,
        format: TextureFormat::Rgba8UnormSrgb,
        usage: TextureUsage::SAMPLED | TextureUsage::RENDER_TARGET | TextureUsage::COPY_DST,
        samples: 1,
        mip_levels: 7,
    };
    let texture = backend.create_texture(&desc).unwrap();
    device.destroy();
    assert!(!backend.is_lost(), "{api:?}: the loss is not reported before wgpu's poll");
    for _ in 0..2 {
        let made = backend.generate_mips(texture);
        assert!(matches!(made, Ok(()) | Err(WriteError::DeviceLost)), "{api:?}: {made:?}");
        let formats = [TextureFormat::Rgba8Unorm];
        let prepared = backend.prepare_uploads(&PrepareUploads { mip_formats: &formats, ..Default::default() });
        assert!(
            matches!(prepared, Ok(_) | Err(CreateError::DeviceLost | CreateError::Validation(_))),
            "{api:?}: {prepared:?}"
        );
    }
    assert_eq!(*reached.lock().unwrap(), Vec::<String>::new(), "{api:?}: errors the engine's handler saw");
}

#[test]
fn mips_on_an_unreported_lost_device_vulkan() {
    mips_on_a_device_lost_unreported(wgpu::Backends::VULKAN);
}

#[test]
fn mips_on_an_unreported_lost_device_gl() {
    mips_on_a_device_lost_unreported(wgpu::Backends::GL);
}
