//! egui and glyphon inside the frame graph: an engine that draws its UI with egui-wgpu
//! and its text with glyphon adds wgpu passes (`Pass::wgpu`) after the scene's passes;
//! Switchyard begins each render pass on the output and the library draws into it on the
//! submission thread, and the graph orders them like any pass.
//!
//! The egui window shows the last frame's stats and a slider bound to the sun's angle; a
//! caption along the bottom is glyphon's. Run headless, the example moves the angle itself
//! for a few frames, then renders the last frame once more without the UI, writes
//! `egui_overlay.png` (with it) and prints how many pixels the window and the caption
//! changed inside their rectangles and outside them.
//!
//! `cargo run -p switchyard --example egui_overlay`

use std::sync::{Arc, Mutex};

use glam::{Mat4, Vec3};
use switchyard::backend::wgpu::{Encoding, WgpuBackend, WgpuPassContext, WgpuPassDraw};
use switchyard::backend::{Backend, TextureFormat};
use switchyard::*;

mod common;
use common::unit_cube;

const SIZE: (u32, u32) = (640, 360);

/// What the engine's UI code produced for one frame: egui's triangles and texture changes.
struct UiFrame {
    primitives: Vec<egui::ClippedPrimitive>,
    textures: egui::TexturesDelta,
    pixels_per_point: f32,
}

/// The wgpu pass that draws the latest `UiFrame` with egui-wgpu (made on first use, on
/// the device and in the format the pass gives).
struct EguiPass {
    next: Arc<Mutex<Option<UiFrame>>>,
    renderer: Option<egui_wgpu::Renderer>,
    current: Option<UiFrame>,
}

impl EguiPass {
    fn screen(ctx: &WgpuPassContext<'_>, f: &UiFrame) -> egui_wgpu::ScreenDescriptor {
        egui_wgpu::ScreenDescriptor { size_in_pixels: [ctx.size.0, ctx.size.1], pixels_per_point: f.pixels_per_point }
    }
}

impl WgpuPassDraw for EguiPass {
    fn prepare(&mut self, ctx: &WgpuPassContext<'_>, encoder: &mut wgpu::CommandEncoder) {
        self.current = self.next.lock().expect("ui frame").take();
        let Some(f) = &self.current else { return };
        let format = ctx.color_format.expect("the overlay pass has a color attachment");
        let renderer = self
            .renderer
            .get_or_insert_with(|| egui_wgpu::Renderer::new(ctx.device, format, egui_wgpu::RendererOptions::default()));
        for (id, deltas) in &f.textures.set {
            for delta in deltas {
                renderer.update_texture(ctx.device, ctx.queue, *id, delta);
            }
        }
        let extra = renderer.update_buffers(ctx.device, ctx.queue, encoder, &f.primitives, &Self::screen(ctx, f));
        // Paint callbacks' own command buffers (none here) run before the frame's.
        if !extra.is_empty() {
            ctx.queue.submit(extra);
        }
    }

    fn draw(&mut self, ctx: &WgpuPassContext<'_>, pass: &mut wgpu::RenderPass<'static>) {
        let (Some(renderer), Some(mut f)) = (self.renderer.as_mut(), self.current.take()) else { return };
        renderer.render(pass, &f.primitives, &Self::screen(ctx, &f));
        for id in &f.textures.free {
            renderer.free_texture(id);
        }
        f.textures.clear();
    }
}

/// Where the caption goes: its top left and its box, in pixels.
const CAPTION: (f32, f32, f32, f32) = (16.0, 320.0, 600.0, 32.0);

/// A caption drawn by glyphon (its atlas and pipeline made on first use, in the pass's
/// format); `show` turns it on and off.
struct TextPass {
    show: Arc<Mutex<bool>>,
    fonts: glyphon::FontSystem,
    swash: glyphon::SwashCache,
    text: glyphon::Buffer,
    gpu: Option<(glyphon::TextAtlas, glyphon::Viewport, glyphon::TextRenderer)>,
    drawing: bool,
}

impl TextPass {
    fn new(show: Arc<Mutex<bool>>, caption: &str) -> Self {
        // The font travels with the binary (`dejavu`): no system fonts needed.
        let font = glyphon::fontdb::Source::Binary(Arc::new(dejavu::sans::regular()));
        let mut fonts = glyphon::FontSystem::new_with_fonts([font]);
        let mut text = glyphon::Buffer::new(&mut fonts, glyphon::Metrics::new(22.0, 28.0));
        text.set_size(Some(CAPTION.2), Some(CAPTION.3));
        let attrs = glyphon::Attrs::new().family(glyphon::Family::SansSerif);
        text.set_text(caption, &attrs, glyphon::Shaping::Advanced, None);
        text.shape_until_scroll(&mut fonts, false);
        Self { show, fonts, swash: glyphon::SwashCache::new(), text, gpu: None, drawing: false }
    }
}

impl WgpuPassDraw for TextPass {
    fn prepare(&mut self, ctx: &WgpuPassContext<'_>, _encoder: &mut wgpu::CommandEncoder) {
        self.drawing = *self.show.lock().expect("caption switch");
        if !self.drawing {
            return;
        }
        let format = ctx.color_format.expect("the text pass has a color attachment");
        let (atlas, viewport, renderer) = self.gpu.get_or_insert_with(|| {
            let cache = glyphon::Cache::new(ctx.device);
            let mut atlas = glyphon::TextAtlas::new(ctx.device, ctx.queue, &cache, format);
            let renderer = glyphon::TextRenderer::new(&mut atlas, ctx.device, wgpu::MultisampleState::default(), None);
            (atlas, glyphon::Viewport::new(ctx.device, &cache), renderer)
        });
        viewport.update(ctx.queue, glyphon::Resolution { width: ctx.size.0, height: ctx.size.1 });
        let (left, top, width, height) = CAPTION;
        let area = glyphon::TextArea {
            buffer: &self.text,
            left,
            top,
            scale: 1.0,
            bounds: glyphon::TextBounds {
                left: left as i32,
                top: top as i32,
                right: (left + width) as i32,
                bottom: (top + height) as i32,
            },
            default_color: glyphon::Color::rgb(255, 255, 255),
            custom_glyphs: &[],
        };
        let prepared =
            renderer.prepare(ctx.device, ctx.queue, &mut self.fonts, atlas, viewport, [area], &mut self.swash);
        self.drawing = prepared.is_ok();
    }

    fn draw(&mut self, _ctx: &WgpuPassContext<'_>, pass: &mut wgpu::RenderPass<'static>) {
        let Some((atlas, viewport, renderer)) = self.gpu.as_mut().filter(|_| self.drawing) else { return };
        renderer.render(atlas, viewport, pass).expect("glyphon draws what it prepared");
        atlas.trim();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The engine's side: its device and output texture.
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
    let backend = Arc::new(WgpuBackend::from_device(&adapter, device, queue, Encoding::RenderBundle));
    let output = backend.import_texture(&output)?;
    let config = RendererConfig { width: SIZE.0, height: SIZE.1, max_objects: 1024, ..Default::default() };
    let mut r = Renderer::new(backend.clone(), config)?;

    // A ground plane and a ring of boxes that cast shadows.
    let shader = r.create_shader(&ShaderDesc::lit())?;
    let color = |c: [f32; 4]| PropertySheet::new().with("_BaseColor", PropertyValue::Color(c));
    let stone =
        r.create_material(&MaterialDesc { shader, properties: color([0.8, 0.5, 0.3, 1.0]), ..Default::default() })?;
    let cube = r.create_mesh(&unit_cube())?;
    let mut objects = vec![ObjectDesc {
        mesh: cube,
        material: stone,
        transform: Mat4::from_scale(Vec3::new(40.0, 0.1, 40.0)),
        layer: 0,
        flags: 0,
    }];
    for i in 0..12 {
        let a = i as f32 / 12.0 * std::f32::consts::TAU;
        objects.push(ObjectDesc {
            mesh: cube,
            material: stone,
            transform: Mat4::from_translation(Vec3::new(10.0 * a.cos(), 2.0, 10.0 * a.sin()))
                * Mat4::from_scale(Vec3::new(2.0, 4.0, 2.0)),
            layer: 0,
            flags: CASTS_SHADOWS,
        });
    }
    r.insert_objects(&objects)?;

    // The graph: the sun's shadow map, the scene into the engine's output, egui over it.
    let ui_frames = Arc::new(Mutex::new(None));
    let mut g = FrameGraph::new();
    let sun = g.camera("sun");
    let main_camera = g.camera("main");
    let shadow = g.target(
        "shadow",
        TargetKind::Transient,
        TextureFormat::Depth32Float,
        TargetSize::Fixed { width: 1024, height: 1024 },
    );
    let depth = g.target("depth", TargetKind::Transient, TextureFormat::Depth32Float, TargetSize::Output);
    let out = g.target("out", TargetKind::External, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    g.pass(Pass::scene("shadow", sun, PassKind::Shadow, Queue::All).depth(shadow, LoadOp::Clear(1.0), StoreOp::Store));
    g.pass(
        Pass::scene("opaque", main_camera, PassKind::Forward, Queue::All)
            .color(out, LoadOp::Clear([0.5, 0.6, 0.75, 1.0]), StoreOp::Store)
            .depth(depth, LoadOp::Clear(1.0), StoreOp::Discard)
            .sample(shadow),
    );
    let ui = EguiPass { next: ui_frames.clone(), renderer: None, current: None };
    g.pass(Pass::wgpu("egui", ui).color(out, LoadOp::Load, StoreOp::Store));
    let caption = Arc::new(Mutex::new(true));
    let text = TextPass::new(caption.clone(), "Switchyard: egui and glyphon inside the frame graph");
    g.pass(Pass::wgpu("caption", text).color(out, LoadOp::Load, StoreOp::Store));
    r.set_graph(g)?;

    let egui = egui::Context::default();
    // Frames here are not spaced in time: no fade-in, the window at once as it stays.
    egui.all_styles_mut(|s| s.animation_time = 0.0);
    let mut sun_degrees = 30.0f32;
    let mut window = egui::Rect::NOTHING;
    let mut last = None;
    let mut render = |r: &mut Renderer<WgpuBackend>, sun_degrees: f32, with_ui: Option<String>| {
        let light = Vec3::new(sun_degrees.to_radians().cos(), -1.0, sun_degrees.to_radians().sin()).normalize();
        r.set_lighting(Lighting { direction: light, ..Lighting::default() });
        *caption.lock().expect("caption switch") = with_ui.is_some();
        *ui_frames.lock().expect("ui frame") = with_ui.map(|stats| {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(
                    egui::Pos2::ZERO,
                    egui::vec2(SIZE.0 as f32, SIZE.1 as f32),
                )),
                ..Default::default()
            };
            let mut degrees = sun_degrees;
            let out = egui.run_ui(input, |ui| {
                let shown = egui::Window::new("Switchyard").default_pos([16.0, 16.0]).show(ui.ctx(), |ui| {
                    ui.label(&stats);
                    ui.add(egui::Slider::new(&mut degrees, 0.0..=360.0).text("sun"));
                });
                // The window and its shadow.
                let shadow = ui.ctx().global_style().visuals.window_shadow.margin();
                window = shown.map_or(egui::Rect::NOTHING, |s| s.response.rect.union(s.response.rect + shadow));
            });
            UiFrame {
                primitives: egui.tessellate(out.shapes, out.pixels_per_point),
                textures: out.textures_delta,
                pixels_per_point: out.pixels_per_point,
            }
        });
        let eye = Vec3::new(22.0, 16.0, 26.0);
        let aspect = SIZE.0 as f32 / SIZE.1 as f32;
        let view = Mat4::perspective_rh(0.8, aspect, 0.5, 200.0) * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
        let sun_eye = -light * 60.0;
        let sun_view = Mat4::orthographic_rh(-30.0, 30.0, -30.0, 30.0, 1.0, 120.0)
            * Mat4::look_at_rh(sun_eye, Vec3::ZERO, Vec3::Y);
        let cameras = [
            Camera { view_proj: sun_view, eye: sun_eye, far: 120.0, layer_mask: u16::MAX, receivers: None },
            Camera { view_proj: view, eye, far: 200.0, layer_mask: u16::MAX, receivers: None },
        ];
        let stats = r.render_graph(&FrameInput { cameras: &cameras, targets: &[(out, output)] });
        r.flush()?;
        let stats = stats?;
        Ok::<_, Box<dyn std::error::Error>>((stats, r.backend().read_rgba8(output)?))
    };

    // A few frames, the sun moving as a user's drag on the slider would move it.
    let mut label = String::from("first frame");
    for _ in 0..4 {
        let (stats, image) = render(&mut r, sun_degrees, Some(label))?;
        label = format!(
            "frame {}: {:.2} ms on the CPU, {} draw calls, {} passes",
            stats.frame,
            stats.frame_ms,
            stats.draw_calls,
            r.pass_names().len()
        );
        last = Some(image);
        sun_degrees += 20.0;
    }
    sun_degrees -= 20.0;
    let with_ui = last.expect("frames ran");
    // The same frame without the window: only the window's pixels differ.
    let (_, without) = render(&mut r, sun_degrees, None)?;
    let text_box = egui::Rect::from_min_size(egui::pos2(CAPTION.0, CAPTION.1), egui::vec2(CAPTION.2, CAPTION.3));
    let (mut inside, mut outside, mut area) = ([0u32; 2], 0u32, [0u32; 2]);
    for y in 0..SIZE.1 {
        for x in 0..SIZE.0 {
            let p = egui::pos2(x as f32 + 0.5, y as f32 + 0.5);
            let within = [window.contains(p), text_box.contains(p)];
            let changed = with_ui.pixel(x, y) != without.pixel(x, y);
            for k in 0..2 {
                area[k] += u32::from(within[k]);
                inside[k] += u32::from(within[k] && changed);
            }
            outside += u32::from(changed && !within.contains(&true));
        }
    }
    image::save_buffer(
        "egui_overlay.png",
        &with_ui.pixels,
        with_ui.width,
        with_ui.height,
        image::ExtendedColorType::Rgba8,
    )?;
    println!("egui window at {window:?}: {} of its {} pixels changed", inside[0], area[0]);
    println!("glyphon caption at {text_box:?}: {} of its {} pixels changed", inside[1], area[1]);
    println!("pixels changed elsewhere: {outside}");
    println!("wrote egui_overlay.png");
    if inside.contains(&0) || outside > 0 {
        return Err("the window or the caption is not where it was put".into());
    }
    Ok(())
}
