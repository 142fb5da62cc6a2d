//! Declared frame graphs.

use super::*;

/// Frame graphs: targets of arbitrary kinds, formats, sizes and sample counts; scene,
/// fullscreen, callback and compute passes over them with arbitrary attachments, load ops
/// (clear values out of range among them), resolves, samples, depth prepasses, shadow
/// receivers and cached shadow passes; set on a renderer over
/// the null backend, then frames with arbitrary engine textures for the external targets.
/// The input's last byte picks where the renderer culls: on the CPU, on the GPU, or on the
/// GPU with occlusion (so receivers, split passes, count buffers and opaque passes drawing
/// a prepass's visible set run), with or without count buffers and prepass reuse.
pub fn frame_graph(data: &[u8]) {
    let pick = data.last().copied().unwrap_or(0);
    let config = RendererConfig {
        cull: if pick % 3 == 0 { CullOn::Cpu } else { CullOn::Gpu },
        occlusion: pick % 3 == 2,
        indirect_count: pick & 8 == 0,
        reuse_prepass_cull: pick & 16 == 0,
        ..config()
    };
    let mut r = Renderer::new(Arc::new(NullBackend::new(true)), config).expect("a valid configuration");
    frame_graph_on(&mut r, data, &mut Log::default());
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
/// A random graph, its targets, its external targets, and the buffers its scene passes
/// may read (uniform, storage or ordering-only).
type RandomGraph = (FrameGraph, Vec<TargetId>, Vec<External>, Vec<GraphBuffer>);

fn random_graph(u: &mut Unstructured<'_>) -> Result<RandomGraph> {
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
    let mut buffers = Vec::new();
    for i in 0..u.int_in_range(0..=2)? {
        buffers.push(match u.int_in_range(0..=2)? {
            0 => g.uniform_buffer(format!("u{i}")),
            1 => g.storage_buffer(format!("s{i}")),
            _ => g.buffer(format!("b{i}")),
        });
    }
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
        let pass = Pass::scene(format!("shadow{i}"), *u.choose(&cameras)?, PassKind::Shadow, Queue::All).depth(
            map,
            LoadOp::Clear(clear),
            StoreOp::Store,
        );
        // Cached: kept from frame to frame where the map is retained, refused elsewhere.
        g.pass(if u.ratio(1, 4)? { pass.cached() } else { pass });
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
                for &b in &buffers {
                    if u.ratio(1, 2)? {
                        pass = pass.reads(b);
                    }
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
    // A depth prepass (its depth retained, or kept alive by the receivers below).
    if u.ratio(1, 3)? {
        let queue = *u.choose(&[Queue::Opaque, Queue::All, Queue::Transparent])?;
        let samples = if u.ratio(1, 8)? { 4 } else { 1 };
        let kind = *u.choose(&[TargetKind::Transient, TargetKind::Retained])?;
        let t = g.target_multisampled("pre-depth", kind, TextureFormat::Depth32Float, TargetSize::Output, samples);
        targets.push(t);
        g.pass(Pass::scene("pre", *u.choose(&cameras)?, PassKind::Depth, queue).depth(
            t,
            LoadOp::Clear(1.0),
            StoreOp::Store,
        ));
    }
    // A shadow pass culled to the casters of any target declared so far (a scene pass's
    // depth, a shadow map, a color or external target), as some camera saw it, into a
    // retained map (so the pass is kept).
    if u.ratio(1, 3)? && !targets.is_empty() {
        let seen = *u.choose(&targets)?;
        let camera = if u.ratio(1, 8)? { CameraId::from_index(7) } else { *u.choose(&cameras)? };
        let depth = TextureFormat::Depth32Float;
        let map = g.target("recv-map", TargetKind::Retained, depth, TargetSize::Fixed { width: 16, height: 16 });
        let pass = Pass::scene("recv", *u.choose(&cameras)?, PassKind::Shadow, Queue::All);
        let pass = pass.depth(map, LoadOp::Clear(1.0), StoreOp::Store).receivers(seen, camera);
        g.pass(if u.arbitrary()? { pass.cached() } else { pass });
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
    Ok((g, targets, externals, buffers))
}

fn run_frame_graph<B: Backend>(
    r: &mut Renderer<B>,
    u: &mut Unstructured<'_>,
    log: &mut Log,
    made: &mut Vec<Resource>,
) -> Result<()> {
    // The lit shader in either form (indexed materials bind another group 1).
    let lit = if u.arbitrary()? { ShaderDesc::lit_indexed() } else { ShaderDesc::lit() };
    let shader = r.create_shader(&lit).expect("the lit shader");
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
    let (g, targets, externals, buffers) = random_graph(u)?;
    let cameras = g.cameras().len();
    if log.note("set_graph", r.set_graph(g)).is_err() {
        return Ok(());
    }
    let backend = r.backend().clone();
    for _ in 0..u.int_in_range(1..=3)? {
        // The engine's buffers: mostly one of the usage a binding needs, sometimes none.
        for &b in &buffers {
            if u.ratio(3, 4)? {
                let usage = *u.choose(&[BufferUsage::UNIFORM, BufferUsage::STORAGE, BufferUsage::VERTEX])?;
                let desc = BufferDesc { label: "engine".into(), size: *u.choose(&[16, 64, 256])?, usage };
                if let Ok(id) = log.note("engine_buffer", backend.create_buffer(&desc)) {
                    made.push(id.into());
                    let _ = log.note("bind_buffer", r.bind_buffer(b, id));
                }
            }
        }
        let cams = (0..cameras).map(|_| random_camera(u)).collect::<Result<Vec<Camera>>>()?;
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
            let desc =
                TextureDesc { label: "engine".into(), width: w, height: h, format, usage, samples, mip_levels: 1 };
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

/// Mostly the test view's camera; sometimes a sun's orthographic one, one that projects
/// from no point, and receivers (`Camera::receivers`) that fit, are singular, not finite or
/// arbitrary.
fn random_camera(u: &mut Unstructured<'_>) -> Result<Camera> {
    let sun = Mat4::orthographic_rh(-20.0, 20.0, -20.0, 20.0, 0.0, 100.0)
        * Mat4::look_at_rh(glam::Vec3::new(10.0, 40.0, 5.0), glam::Vec3::ZERO, glam::Vec3::Y);
    let view_proj = match u.int_in_range(0..=7)? {
        0 => sun,
        1 => Mat4::from_scale(glam::Vec3::new(1.0, 0.0, 1.0)),
        _ => view().view_proj,
    };
    let receivers = match u.int_in_range(0..=7)? {
        0 => Some(view().view_proj),
        1 => Some(Mat4::ZERO),
        2 => Some(Mat4::from_cols_array(&[f32::NAN; 16])),
        3 => {
            let mut m = [0.0f32; 16];
            for x in &mut m {
                *x = u.arbitrary()?;
            }
            Some(Mat4::from_cols_array(&m))
        }
        _ => None,
    };
    Ok(Camera { view_proj, eye: view().eye, far: 200.0, layer_mask: u16::MAX, receivers })
}
