//! Textures beyond one RGBA8 sRGB level: linear RGBA8, BC1 and BC7 where the backend has
//! them, mip levels given or made on the GPU. On the null backend every refusal is typed
//! and leaves nothing behind, and a lost device asks for the levels the engine gave; on
//! lavapipe and llvmpipe the generated levels average the level above (sRGB on linear
//! values), and a BC1 texture draws the pixels its RGBA8 twin draws.

use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard_tests::{cube, cube_grid, wgpu_backend};

fn renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    let config = RendererConfig { threads: 2, max_objects: 64, width: 64, height: 64, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

fn data<'a>(width: u32, format: TextureFormat, levels: &'a [&'a [u8]], generate_mips: bool) -> TextureData<'a> {
    TextureData { width, height: width, format, levels, generate_mips }
}

#[test]
fn texture_formats_and_levels_are_checked_and_refusals_leave_nothing() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    let before = backend.live();
    let l8 = vec![7u8; 8 * 8 * 4];
    let (l4, l2, l1) = (vec![7u8; 64], vec![7u8; 16], vec![7u8; 4]);
    let bc7 = (vec![0u8; 64], vec![0u8; 16]);
    // (side, format, levels, generate, why)
    type Refused<'a> = (u32, TextureFormat, Vec<&'a [u8]>, bool, &'static str);
    let refused: [Refused; 9] = [
        (8, TextureFormat::Depth32Float, vec![&l8], false, "not sampled"),
        (8, TextureFormat::Rgba16Float, vec![&l8], false, "not sampled"),
        (8, TextureFormat::Rgba8Unorm, vec![], false, "no level"),
        (8, TextureFormat::Rgba8Unorm, vec![&l4], false, "level 0 of another size"),
        (8, TextureFormat::Rgba8Unorm, vec![&l8, &l4, &l2, &l1, &l1], false, "a level past 1x1"),
        (8, TextureFormat::Rgba8Unorm, vec![&l8, &l4], true, "levels given and generated"),
        (8, TextureFormat::Bc7RgbaUnorm, vec![&bc7.0], true, "compressed mips generated"),
        (8, TextureFormat::Rgba8UnormSrgb, vec![&l8, &l2], false, "level 1 of another size"),
        (6, TextureFormat::Bc1RgbaUnorm, vec![&bc7.0[..32]], false, "not whole blocks"),
    ];
    for (side, format, levels, generate, why) in refused {
        let e = r.create_texture_data(&data(side, format, &levels, generate)).unwrap_err();
        assert!(matches!(e, ResourceError::Invalid(_) | ResourceError::Backend(CreateError::Invalid(_))), "{why}: {e}");
        assert_eq!(backend.live(), before, "{why}: nothing left");
    }
    // Compressed textures where the backend has none: a typed refusal.
    let no_bc = Arc::new(NullBackend::with_caps(Caps { bc_textures: false, ..backend.caps() }));
    let mut plain = renderer(no_bc.clone());
    let plain_before = no_bc.live();
    let e = plain.create_texture_data(&data(8, TextureFormat::Bc7RgbaUnormSrgb, &[&bc7.0], false)).unwrap_err();
    assert!(matches!(e, ResourceError::Backend(CreateError::Unsupported(_))), "{e}");
    assert_eq!(no_bc.live(), plain_before);

    // Accepted: every level given, generated levels, compressed levels; memory counts
    // every level.
    let given = r.create_texture_data(&data(8, TextureFormat::Rgba8Unorm, &[&l8, &l4, &l2, &l1], false)).unwrap();
    let made = r.create_texture_data(&data(16, TextureFormat::Rgba8UnormSrgb, &[&vec![9; 16 * 16 * 4]], true)).unwrap();
    let bc = r.create_texture_data(&data(8, TextureFormat::Bc7RgbaUnormSrgb, &[&bc7.0, &bc7.1], false)).unwrap();
    let bc1 =
        r.create_texture_data(&data(4, TextureFormat::Bc1RgbaUnorm, &[&[0; 8], &[0; 8], &[0; 8]], false)).unwrap();
    let chain = |w, f: TextureFormat, n| f.mip_chain_bytes(w, w, n);
    let expected = chain(8, TextureFormat::Rgba8Unorm, 4)
        + chain(16, TextureFormat::Rgba8UnormSrgb, 5)
        + chain(8, TextureFormat::Bc7RgbaUnorm, 2)
        + chain(4, TextureFormat::Bc1RgbaUnorm, 3);
    assert_eq!(backend.live().texture_bytes, before.texture_bytes + expected);
    assert_eq!((chain(16, TextureFormat::Rgba8UnormSrgb, 5), chain(8, TextureFormat::Bc7RgbaUnorm, 2)), (1364, 80));

    // After a loss the engine gives the levels it gave (one where the rest were made) of
    // the textures that were uploaded; one still queued at the loss uploads from the queue.
    let view = View {
        label: "main",
        view_proj: glam::Mat4::IDENTITY,
        eye: glam::Vec3::ZERO,
        far: 10.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    };
    assert!(!r.is_resident(given).unwrap());
    let stats = r.render(&[view]).unwrap();
    assert_eq!((stats.uploads.resources, stats.uploads.pending), (4, 0));
    assert!(r.is_resident(given).unwrap() && r.is_resident(bc1).unwrap());
    // One upload a frame: `first` goes with the frame that meets the loss, `queued` waits.
    r.set_upload_budget(1).unwrap();
    let high = TextureOptions { priority: 1, ..Default::default() };
    let first = r.create_texture_data_with(&data(1, TextureFormat::Rgba8Unorm, &[&l1], false), high).unwrap();
    let queued = r.create_texture_data(&data(8, TextureFormat::Rgba8Unorm, &[&l8], false)).unwrap();
    // No earlier frame in flight to report the loss before this one takes its batch.
    r.flush().unwrap();
    backend.lose_device();
    // The frame meets the loss, or its submission (staging its batch) does.
    assert_eq!(r.render(&[view]).and_then(|_| r.flush()).err(), Some(RenderError::DeviceLost));
    let fresh = Arc::new(NullBackend::new(true));
    let needs = r.recover(fresh.clone()).unwrap().needs_data;
    assert_eq!(needs, [given, made, bc, bc1, first].map(NeedsData::Texture));
    assert!(matches!(r.resupply_texture(queued, &[&l8]), Err(ResourceError::HasData(_))));
    let stats = r.render(&[view]).unwrap();
    assert_eq!((stats.uploads.resources, stats.uploads.bytes), (1, l8.len() as u64));
    assert!(r.is_resident(queued).unwrap());
    r.flush().unwrap();
    assert_eq!(fresh.staged_uploads(), (l8.len() as u64, 1), "its levels reached the new backend");
    assert!(matches!(r.resupply_texture(made, &[&vec![9; 1024], &vec![9; 256]]), Err(ResourceError::Invalid(_))));
    assert!(matches!(r.resupply_texture(given, &[&l8]), Err(ResourceError::Invalid(_))));
    r.resupply_texture(made, &[&vec![9; 1024]]).unwrap();
    r.resupply_texture(given, &[&l8, &l4, &l2, &l1]).unwrap();
    r.resupply_texture(bc, &[&bc7.0, &bc7.1]).unwrap();
    r.resupply_texture(bc1, &[&[0; 8], &[0; 8], &[0; 8]]).unwrap();
    r.resupply_texture(first, &[&l1]).unwrap();
    assert_eq!(r.needs_data(), []);
}

/// A checker of black and white texels, `side` wide.
fn checker(side: u32) -> Vec<u8> {
    (0..side * side)
        .flat_map(|i| if (i % side + i / side).is_multiple_of(2) { [0, 0, 0, 255] } else { [255; 4] })
        .collect()
}

/// Written and made through the queue, or staged in one batch (the upload thread's way).
fn generated_levels_average_the_level_above(api: ::wgpu::Backends) {
    let Some(b) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let ways = [(TextureFormat::Rgba8UnormSrgb, 188), (TextureFormat::Rgba8Unorm, 128)];
    for ((format, mid), staged) in ways.into_iter().flat_map(|w| [(w, false), (w, true)]) {
        let t = b
            .create_texture(&TextureDesc {
                label: "mips".into(),
                width: 8,
                height: 8,
                format,
                usage: TextureUsage::SAMPLED
                    | TextureUsage::COPY_DST
                    | TextureUsage::COPY_SRC
                    | TextureUsage::RENDER_TARGET,
                samples: 1,
                mip_levels: 4,
            })
            .unwrap();
        if staged {
            let level = [TextureWrite { texture: t, level: 0, data: &checker(8) }];
            upload_now(&*b, &Uploads { textures: &level, mips: &[t], ..Default::default() }).unwrap();
        } else {
            b.write_texture(t, &checker(8)).unwrap();
            b.generate_mips(t).unwrap();
        }
        for level in 1..4 {
            let img = b.read_texture_level(t, level).unwrap();
            assert_eq!((img.width, img.height), (8 >> level, 8 >> level));
            for p in img.pixels.chunks_exact(4) {
                // Black and white averaged: in sRGB on linear values (0.5 encodes as 188).
                assert!(
                    p[..3].iter().all(|&c| c.abs_diff(mid) <= 2) && p[3] == 255,
                    "{api:?} {format:?} staged {staged}, level {level}: {p:?}"
                );
            }
        }
        // Level 0 keeps its texels.
        assert_eq!(b.read_texture_level(t, 0).unwrap().pixels, checker(8));
        assert!(b.read_texture_level(t, 4).is_err(), "no fifth level");
        b.destroy(Resource::Texture(t)).unwrap();
    }
}

#[test]
fn generated_levels_average_the_level_above_on_vulkan() {
    generated_levels_average_the_level_above(::wgpu::Backends::VULKAN);
}

#[test]
fn generated_levels_average_the_level_above_on_gl() {
    generated_levels_average_the_level_above(::wgpu::Backends::GL);
}

/// The sRGB encoding of a linear value, and its inverse.
fn encode_srgb(c: f32) -> f32 {
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

fn decode_srgb(c: f32) -> f32 {
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Levels 1.. of `texels` (`side` a power of two): each texel the mean of the 2 x 2 below
/// it, in linear values, rounded once (the chain a generator without rounding would make).
fn box_levels(side: usize, texels: &[u8], srgb: bool) -> Vec<Vec<u8>> {
    let linear =
        |c: u8, ch: usize| if srgb && ch < 3 { decode_srgb(f32::from(c) / 255.0) } else { f32::from(c) / 255.0 };
    let mut level: Vec<f32> = texels.iter().enumerate().map(|(i, &c)| linear(c, i % 4)).collect();
    let (mut out, mut w) = (Vec::new(), side);
    while w > 1 {
        let h = w / 2;
        let at = |x: usize, y: usize, ch: usize| level[(y * w + x) * 4 + ch];
        let next: Vec<f32> = (0..h * h * 4)
            .map(|i| {
                let (x, y, ch) = ((i / 4) % h, (i / 4) / h, i % 4);
                (at(2 * x, 2 * y, ch)
                    + at(2 * x + 1, 2 * y, ch)
                    + at(2 * x, 2 * y + 1, ch)
                    + at(2 * x + 1, 2 * y + 1, ch))
                    / 4.0
            })
            .collect();
        let encoded = next.iter().enumerate().map(|(i, &c)| {
            let c = if srgb && i % 4 < 3 { encode_srgb(c) } else { c };
            (c * 255.0).round() as u8
        });
        out.push(encoded.collect());
        (level, w) = (next, h);
    }
    out
}

/// Every generated level of a 64 x 64 texture of noise against the box filter's, at most
/// `off_by(level)` apart, written through the queue and staged; then a 100 x 36 texture
/// (sides that do not halve evenly) makes all its levels, none empty.
fn generated_levels_match_a_box_filter(api: ::wgpu::Backends, off_by: fn(u32) -> u8) {
    let Some(b) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let mut seed = 0x2545_f491_u32;
    let noise: Vec<u8> = (0..64 * 64 * 4)
        .map(|i| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            if i % 4 == 3 {
                255
            } else {
                (seed >> 24) as u8
            }
        })
        .collect();
    let usage = TextureUsage::SAMPLED | TextureUsage::COPY_DST | TextureUsage::COPY_SRC | TextureUsage::RENDER_TARGET;
    for (format, staged) in
        [TextureFormat::Rgba8UnormSrgb, TextureFormat::Rgba8Unorm].into_iter().flat_map(|f| [(f, false), (f, true)])
    {
        let desc =
            TextureDesc { label: "mips".into(), width: 64, height: 64, format, usage, samples: 1, mip_levels: 7 };
        let t = b.create_texture(&desc).unwrap();
        if staged {
            let level = [TextureWrite { texture: t, level: 0, data: &noise }];
            upload_now(&*b, &Uploads { textures: &level, mips: &[t], ..Default::default() }).unwrap();
        } else {
            b.write_texture(t, &noise).unwrap();
            b.generate_mips(t).unwrap();
        }
        let expected = box_levels(64, &noise, format == TextureFormat::Rgba8UnormSrgb);
        for (l, want) in (1..7).zip(&expected) {
            let got = b.read_texture_level(t, l).unwrap();
            let most = got.pixels.iter().zip(want).map(|(a, b)| a.abs_diff(*b)).max();
            assert!(most <= Some(off_by(l)), "{api:?} {format:?} staged {staged}, level {l}: off by {most:?}");
        }
        b.destroy(Resource::Texture(t)).unwrap();
    }
    let desc = TextureDesc {
        label: "odd".into(),
        width: 100,
        height: 36,
        format: TextureFormat::Rgba8Unorm,
        usage,
        samples: 1,
        mip_levels: 7,
    };
    let t = b.create_texture(&desc).unwrap();
    b.write_texture(t, &[200, 100, 50, 255].repeat(100 * 36)).unwrap();
    b.generate_mips(t).unwrap();
    for l in 1..7 {
        let got = b.read_texture_level(t, l).unwrap();
        assert_eq!((got.width, got.height), ((100 >> l).max(1), (36 >> l).max(1)));
        let most = got
            .pixels
            .chunks_exact(4)
            .map(|p| p.iter().zip([200, 100, 50, 255]).map(|(a, b)| a.abs_diff(b)).max())
            .max();
        assert!(most <= Some(Some(1)), "{api:?}: a plain texture's level {l} is plain: off by {most:?}");
    }
    b.destroy(Resource::Texture(t)).unwrap();
}

/// Lavapipe takes the compute path: levels 1-4 from level 0 and 5-6 from level 4, each
/// rounded once.
#[test]
fn generated_levels_match_a_box_filter_on_vulkan() {
    generated_levels_match_a_box_filter(::wgpu::Backends::VULKAN, |_| 1);
}

/// GL has no texture view formats: render passes, each level from the one above rounded
/// to 8 bits, so the error grows with the level (up to 4 at level 6 measured).
#[test]
fn generated_levels_match_a_box_filter_on_gl() {
    generated_levels_match_a_box_filter(::wgpu::Backends::GL, |l| l as u8);
}

/// Cubes textured by `texture(r)`, rendered once.
fn textured_cubes<B: Backend>(b: Arc<B>, texture: impl Fn(&mut Renderer<B>) -> TextureHandle) -> Image {
    let mut r = renderer(b);
    let shader = r.create_shader(&ShaderDesc::lit()).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let t = texture(&mut r);
    // A shader's constants are zero unless set: the texture's colors times white.
    let properties = PropertySheet::new().with("_BaseColor", PropertyValue::Color([1.0; 4]));
    let material = r.create_material(&MaterialDesc { shader, base_texture: Some(t), properties, ..Default::default() });
    let views = cube_grid(&mut r, mesh, &[material.unwrap()]);
    r.render(&views).unwrap();
    r.read_color().unwrap()
}

fn compressed_textures_draw_what_their_rgba8_twins_draw(api: ::wgpu::Backends) {
    let Some(b) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    // A BC1 block of one color: color0 = pure red in RGB565, every index 0.
    let block = [0x00, 0xF8, 0x00, 0x00, 0, 0, 0, 0];
    let bc = [block; 4].concat();
    let bc_levels: [&[u8]; 3] = [&bc, &block, &block];
    let red = [255, 0, 0, 255].repeat(64);
    let bc1 = |r: &mut Renderer<_>| r.create_texture_data(&data(8, TextureFormat::Bc1RgbaUnormSrgb, &bc_levels, false));
    if !b.caps().bc_textures {
        // Refused with a typed error where the adapter has none.
        let mut r = renderer(b.clone());
        assert!(matches!(bc1(&mut r), Err(ResourceError::Backend(CreateError::Unsupported(_)))));
        return;
    }
    let compressed = textured_cubes(b.clone(), |r| bc1(r).unwrap());
    let rgba8 = textured_cubes(b.clone(), |r| r.create_texture(8, 8, &red).unwrap());
    let most = compressed.pixels.iter().zip(&rgba8.pixels).map(|(a, b)| a.abs_diff(*b)).max();
    assert_eq!(most, Some(0), "{api:?}: the largest difference of a channel");
    let reds = (0..64 * 64).map(|i| compressed.pixel(i % 64, i / 64)).filter(|p| p[0] > 100 && p[1] < 40).count();
    assert!(reds > 100, "{api:?}: the red cubes cover {reds} pixels");
    // BC7 takes its levels too (all-zero blocks: a reserved mode, which decodes to zero).
    let bc7 = [0u8; 64];
    textured_cubes(b, |r| r.create_texture_data(&data(8, TextureFormat::Bc7RgbaUnorm, &[&bc7], false)).unwrap());
}

#[test]
fn compressed_textures_draw_what_their_rgba8_twins_draw_on_vulkan() {
    compressed_textures_draw_what_their_rgba8_twins_draw(::wgpu::Backends::VULKAN);
}

#[test]
fn compressed_textures_draw_what_their_rgba8_twins_draw_on_gl() {
    compressed_textures_draw_what_their_rgba8_twins_draw(::wgpu::Backends::GL);
}
